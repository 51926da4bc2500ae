/* sim_hb.c: the race check's model of release and acquire, so that warps that hand data to one
 * another through a flag, as the PTX memory model allows, are not reported (sim_race.c asks it
 * whether an access of another warp happened before).
 *
 * The model is the PTX ISA's memory consistency model. A release pattern is a st.release, an
 * atom or red with .release or .acq_rel, or a fence (membar, fence.sc, fence.acq_rel:
 * __threadfence_block() is membar.cta) followed in the same thread by a strong write (an atomic,
 * or a .relaxed or .volatile store). An acquire pattern is a ld.acquire, an atom with .acquire or
 * .acq_rel, or a strong read (an atomic, or a .relaxed or .volatile load) followed in the same
 * thread by a fence. A release synchronises with an acquire whose read observes its write: reads
 * the value it wrote, or one that a chain of atomic read-modify-writes made from it (the barrier
 * of a multi-warp cooperative_groups tile is such a chain). Then what the releasing thread did
 * before the release, and what it had learned so, happens before what the acquiring thread does
 * after the acquire, whatever warps they are in, and two accesses so ordered do not race.
 *
 * Vector clocks, a clock per warp. A warp's clock moves at its releases, its fences and its
 * __syncwarp()s, and every shared access is stamped with its warp's clock then (sim_shadow_clk).
 * What one warp knows of another is one entry (sim_hbent): the other's accesses made below clock
 * `full` by any lane, and those made up to clock `part` by the lanes of `mask`. A release makes
 * its warp's view, that warp's knowledge and an entry of its own, whose `part` is the clock now
 * and whose `mask` is the releasing lanes, with `full` the clock of the warp's last __syncwarp():
 * the other lanes' accesses count only up to there, since a release by lane 0 orders nothing
 * that lane 5 did after the last __syncwarp(). The view goes to the word the release writes (a
 * sync location, shared or global, found by address in a small table per block), which an
 * acquire that reads the word joins into its warp's knowledge. Lanes of one warp keep the
 * checker's own rules here too: what some lanes acquire is pending, theirs alone, until a
 * __syncwarp() (under warnings, what lockstep orders: sim_warp_ordered) makes it the warp's.
 *
 * It errs only towards reporting: a race it reports may be none by the model, never the other
 * way, but for these simplifications, each rarer than the idioms it serves:
 *  - a sync location knows only its block's writes: a value another block wrote is told apart by
 *    its bits (then the read learns nothing), one with the same bits is not;
 *  - the lanes of one warp that acquire pool what they learn until the next __syncwarp(), so
 *    lanes that wait on different flags each count as having waited on all of them;
 *  - a plain store to a sync location leaves its view in place when it leaves the same bits (it
 *    races with the location's strong accesses, which sim_race.c reports, unless something else
 *    orders them, which then orders the view's accesses too);
 *  - clocks are 32 bits, which a warp would need four billion releases, fences and
 *    __syncwarp()s in one block to wrap.
 * Simplifications that err towards reporting: joining two entries keeps one `part` and its
 * lanes (the other's lanes fall back to `full`); a relaxed store after a release to the same
 * word by the same thread, which the model counts as part of the release, ends it here; a table
 * past SIM_HB_LOCS words forgets them all.
 *
 * Cost: nothing at all unless the launch checks races and its kernel has an acquire, a release
 * or a fence (sim_kernel.orders, sim_run.hb). Then its loads and stores go through the hooks
 * (sim_sanitize.c), a plain one leaving at once; its fences, __syncwarp()s and strong accesses
 * do the work here, each in time linear in the warps of a block. */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

/* What one warp knows of another's accesses: see the top of the file. */
typedef struct sim_hbent {
  uint32_t full, part, mask;
} sim_hbent;

/* One warp's state; each vector has an entry per warp of the block (its own unused). */
typedef struct hb_warp {
  uint32_t clk;       /* its clock: an access is stamped with it */
  uint32_t synced;    /* clk just after its latest __syncwarp() */
  sim_hbent *known;   /* what all its lanes know */
  sim_hbent *pend;    /* what lanes pmask acquired since, pending until a __syncwarp() ... */
  uint32_t pmask;
  uint32_t pstamp;    /* ... after wsync stood at pstamp (the warp's count, sim_warp) */
  sim_hbent *fenced;  /* what its latest releasing fence, by lanes fmask, lets a strong write
                       * that follows it release */
  uint32_t fmask;
  sim_hbent *seen;    /* what strong reads by lanes smask saw since its latest acquiring fence,
                       * which the next one acquires */
  uint32_t smask;
} hb_warp;

/* A sync location: a word some release wrote. */
typedef struct hb_loc {
  uint64_t key;       /* its generic address; 0: a free slot of the table */
  uint64_t value;     /* the bits the block's last strong write to it left (size bytes) */
  int size;
} hb_loc;

enum { SIM_HB_LOCS = 4096, LOCS_FIRST = 16 }; /* sync locations kept at most; the first table */

struct sim_hb {
  int nwarps;
  hb_warp *warps;
  sim_hbent *ents;    /* the warps' four vectors, then `view` */
  sim_hbent *view;    /* a release's view, being made */
  hb_loc *locs;       /* cap slots (a power of two, at most half full), nlocs used */
  sim_hbent *lview;   /* cap views of nwarps entries, one per slot of locs */
  size_t nlocs, cap;
};

sim_hb *sim_hb_new(int nwarps) {
  sim_hb *hb = calloc(1, sizeof *hb);
  if (!hb) return NULL;
  size_t n = (size_t)nwarps;
  hb->nwarps = nwarps;
  hb->warps = calloc(n, sizeof *hb->warps);
  hb->ents = calloc(4 * n * n + n, sizeof *hb->ents);
  if (!hb->warps || !hb->ents) {
    sim_hb_free(hb);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    hb_warp *h = &hb->warps[i];
    h->known = hb->ents + 4 * i * n;
    h->pend = h->known + n;
    h->fenced = h->pend + n;
    h->seen = h->fenced + n;
  }
  hb->view = hb->ents + 4 * n * n;
  sim_hb_block(hb);
  return hb;
}

void sim_hb_free(sim_hb *hb) {
  if (!hb) return;
  free(hb->warps);
  free(hb->ents);
  free(hb->locs);
  free(hb->lview);
  free(hb);
}

/* Clocks start at 1, so that an empty entry (all zero) covers no access. */
void sim_hb_block(sim_hb *hb) {
  size_t n = (size_t)hb->nwarps;
  memset(hb->ents, 0, (4 * n * n + n) * sizeof *hb->ents);
  for (size_t i = 0; i < n; i++) {
    hb_warp *h = &hb->warps[i];
    h->clk = h->synced = 1;
    h->pmask = h->pstamp = h->fmask = h->smask = 0;
  }
  if (hb->locs) memset(hb->locs, 0, hb->cap * sizeof *hb->locs);
  hb->nlocs = 0;
}

uint32_t sim_hb_clock(const sim_hb *hb, int warp) { return hb->warps[warp].clk; }

/* ---- entries and views ---- */

static inline int covers(const sim_hbent *e, int lane, uint32_t clk) {
  return clk < e->full || (clk <= e->part && (e->mask >> lane & 1));
}

/* a := a joined with b, knowing no more than both did (see the top); whether a changed. */
static int join(sim_hbent *a, const sim_hbent *b) {
  sim_hbent was = *a;
  if (b->full > a->full) a->full = b->full;
  if (b->part > a->part) {
    a->part = b->part;
    a->mask = b->mask;
  } else if (b->part == a->part) {
    a->mask |= b->mask;
  }
  return memcmp(&was, a, sizeof was) != 0;
}

/* dst := dst joined with src, entry by entry, but for warp `skip`'s; whether dst changed. */
static int join_view(sim_hbent *dst, const sim_hbent *src, int n, int skip) {
  int changed = 0;
  for (int j = 0; j < n; j++)
    if (j != skip) changed |= join(&dst[j], &src[j]);
  return changed;
}

/* Whether entry a covers every access that b does (covers(), lane by lane): for each lane, the
 * latest clock b reaches (`full` - 1, or `part` for its mask's lanes) is no later than a's. */
static int entry_knows(const sim_hbent *a, const sim_hbent *b) {
  int64_t a_any = (int64_t)a->full - 1, a_lanes = a->part > a_any ? a->part : a_any;
  int64_t b_any = (int64_t)b->full - 1, b_lanes = b->part > b_any ? b->part : b_any;
  if (b_any > a_lanes || (b_any > a_any && a->mask != ~0u)) return 0;
  if (!b->mask) return 1;
  return b_lanes <= a_lanes && (b_lanes <= a_any || !(b->mask & ~a->mask));
}

/* Whether dst already knows all that src says, but for warp `skip`'s entry. */
static int knows_all(const sim_hbent *dst, const sim_hbent *src, int n, int skip) {
  for (int j = 0; j < n; j++)
    if (j != skip && !entry_knows(&dst[j], &src[j])) return 0;
  return 1;
}

/* Whether what w's lanes acquired (pend) is theirs all now: a __syncwarp() came since, or,
 * under warnings, lockstep orders it (sim_race.c's rule for two lanes of one warp). */
static int settled(const sim_worker *wk, const sim_warp *w, const hb_warp *h) {
  return wk->run->race_warn ? sim_warp_ordered(w, h->pstamp) : h->pstamp != w->wsync;
}

/* The view a release by lanes `lanes` of w makes (see the top), into out. */
static void make_view(const sim_worker *wk, const sim_warp *w, uint32_t lanes, sim_hbent *out) {
  const sim_hb *hb = wk->hb;
  const hb_warp *h = &hb->warps[w->index];
  memcpy(out, h->known, (size_t)hb->nwarps * sizeof *out);
  if (h->pmask && (settled(wk, w, h) || !(lanes & ~h->pmask)))
    join_view(out, h->pend, hb->nwarps, w->index);
  out[w->index] = (sim_hbent){h->synced, h->clk, lanes};
}

/* Moves w's clock on: what it does from now on is not what it released. The race check's
 * put-off accesses are checked first, with the clock they were made at. */
static void advance(sim_worker *wk, hb_warp *h) {
  sim_race_flush(wk);
  h->clk++;
}

/* Lanes `lanes` of w acquire view v. */
static void acquire(sim_worker *wk, sim_warp *w, uint32_t lanes, const sim_hbent *v) {
  sim_hb *hb = wk->hb;
  hb_warp *h = &hb->warps[w->index];
  int n = hb->nwarps;
  if (knows_all(h->known, v, n, w->index)) return;
  if (h->pmask && settled(wk, w, h)) {
    join_view(h->known, h->pend, n, w->index);
    memset(h->pend, 0, (size_t)n * sizeof *h->pend);
    h->pmask = 0;
  }
  if (!join_view(h->pend, v, n, w->index) && !(lanes & ~h->pmask)) return;
  h->pmask |= lanes;
  if (wk->run->race_warn) w->wsync++; /* tells what lockstep ran before from what runs after */
  h->pstamp = w->wsync;
}

int sim_hb_knows(const sim_worker *wk, const sim_warp *w, int lane, int other, uint32_t clk) {
  const sim_hb *hb = wk->hb;
  const hb_warp *h = &hb->warps[w->index];
  int ow = other >> 5, ol = other & 31;
  if (ow < 0 || ow >= hb->nwarps) return 0;
  if (covers(&h->known[ow], ol, clk)) return 1;
  return h->pmask && ((h->pmask >> lane & 1) || settled(wk, w, h)) &&
         covers(&h->pend[ow], ol, clk);
}

/* ---- __syncwarp() and fences ---- */

void sim_hb_syncwarp(sim_worker *wk, sim_warp *w) {
  hb_warp *h = &wk->hb->warps[w->index];
  advance(wk, h);
  h->synced = h->clk;
}

/* A fence's acquire side acquires what the lanes that run it saw by strong reads since the
 * last one; its release side keeps the view a strong write by one of its lanes will release. */
void sim_hb_fence(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  sim_hb *hb = wk->hb;
  hb_warp *h = &hb->warps[w->index];
  if (in->flags & SIM_IF_ACQUIRE) {
    if (em & h->smask) acquire(wk, w, em & h->smask, h->seen);
    memset(h->seen, 0, (size_t)hb->nwarps * sizeof *h->seen);
    h->smask = 0;
  }
  if (in->flags & SIM_IF_RELEASE) {
    make_view(wk, w, em, h->fenced);
    h->fmask = em;
    advance(wk, h);
  }
}

/* ---- sync locations ---- */

static inline sim_hbent *loc_view(const sim_hb *hb, size_t i) {
  return hb->lview + i * (size_t)hb->nwarps;
}

static inline size_t slot_of(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The slot of key, or -1 when it is not in the table. */
static long loc_find(const sim_hb *hb, uint64_t key) {
  if (!hb->cap) return -1;
  for (size_t i = slot_of(key, hb->cap);; i = (i + 1) & (hb->cap - 1)) {
    if (hb->locs[i].key == key) return (long)i;
    if (!hb->locs[i].key) return -1;
  }
}

/* A table of cap slots holding the old one's locations; -1 when out of memory. */
static int loc_grow(sim_hb *hb, size_t cap) {
  size_t n = (size_t)hb->nwarps;
  hb_loc *locs = calloc(cap, sizeof *locs);
  sim_hbent *lview = calloc(cap * n, sizeof *lview);
  if (!locs || !lview) {
    free(locs);
    free(lview);
    return -1;
  }
  for (size_t k = 0; k < hb->cap; k++) {
    if (!hb->locs[k].key) continue;
    size_t i = slot_of(hb->locs[k].key, cap);
    while (locs[i].key) i = (i + 1) & (cap - 1);
    locs[i] = hb->locs[k];
    memcpy(lview + i * n, loc_view(hb, k), n * sizeof *lview);
  }
  free(hb->locs);
  free(hb->lview);
  hb->locs = locs;
  hb->lview = lview;
  hb->cap = cap;
  return 0;
}

/* The slot of key, added (its view empty) if it was not there; -1 when out of memory. A full
 * table forgets every location first. */
static long loc_add(sim_hb *hb, uint64_t key) {
  long i = loc_find(hb, key);
  if (i >= 0) return i;
  if (hb->nlocs >= SIM_HB_LOCS) {
    memset(hb->locs, 0, hb->cap * sizeof *hb->locs);
    hb->nlocs = 0;
  }
  if (2 * (hb->nlocs + 1) > hb->cap && loc_grow(hb, hb->cap ? 2 * hb->cap : LOCS_FIRST) < 0)
    return -1;
  size_t k = slot_of(key, hb->cap);
  while (hb->locs[k].key) k = (k + 1) & (hb->cap - 1);
  hb->locs[k] = (hb_loc){key, 0, 0};
  memset(loc_view(hb, k), 0, (size_t)hb->nwarps * sizeof(sim_hbent));
  hb->nlocs++;
  return (long)k;
}

/* The generic address of an access of lane address a in space, or 0 for one that cannot be a
 * sync location (local memory). */
static uint64_t loc_key(int space, uint64_t a) {
  switch (space) {
    case SIM_SP_SHARED: return SIM_SHARED_WIN + a;
    case SIM_SP_GLOBAL: return a;
    case SIM_SP_GENERIC: return a - SIM_LOCAL_WIN < SIM_WIN_SIZE ? 0 : a;
    default: return 0;
  }
}

/* The first `size` bytes (at most 8) at generic address key, as memory holds them now. */
static uint64_t bits_at(sim_worker *wk, sim_warp *w, int lane, uint64_t key, int size) {
  uint64_t v = 0;
  if (sim_mem_read_generic(wk, w, lane, key, &v, (size_t)size) < 0) return ~0ull;
  return v;
}

static inline uint64_t size_mask(int size) { return size >= 8 ? ~0ull : (1ull << 8 * size) - 1; }

/* Whether location i still holds what the block's last strong write left, by the bits `now`. */
static int unchanged(const sim_hb *hb, long i, int size, uint64_t now) {
  const hb_loc *L = &hb->locs[i];
  return L->size == size && ((L->value ^ now) & size_mask(size)) == 0;
}

/* After a strong write of lanes at key: its view is src, the write's release (NULL: none). */
static void wrote(sim_worker *wk, sim_warp *w, int lane, uint64_t key, int size,
                  const sim_hbent *src, int joins) {
  sim_hb *hb = wk->hb;
  long i = src ? loc_add(hb, key) : loc_find(hb, key);
  if (i < 0) return;
  size_t bytes = (size_t)hb->nwarps * sizeof(sim_hbent);
  if (!src) memset(loc_view(hb, (size_t)i), 0, bytes);
  else if (joins) join_view(loc_view(hb, (size_t)i), src, hb->nwarps, -1);
  else memcpy(loc_view(hb, (size_t)i), src, bytes);
  hb->locs[i].size = size;
  hb->locs[i].value = bits_at(wk, w, lane, key, size);
}

/* A strong read by lanes `lanes` of location i: an acquire, or a read a later fence may make
 * one. */
static void read_loc(sim_worker *wk, sim_warp *w, uint32_t lanes, long i, int acq) {
  sim_hb *hb = wk->hb;
  hb_warp *h = &hb->warps[w->index];
  if (acq) {
    acquire(wk, w, lanes, loc_view(hb, (size_t)i));
  } else {
    join_view(h->seen, loc_view(hb, (size_t)i), hb->nwarps, w->index);
    h->smask |= lanes;
  }
}

/* The lanes of em after lane l whose address is key's: l's word, once each. */
static uint32_t same_word(int space, const uint64_t *ad, uint32_t em, int l, uint64_t key) {
  uint32_t m = 1u << l;
  for (uint32_t mm = em & ~((2u << l) - 1); mm; mm &= mm - 1) {
    int k = __builtin_ctz(mm);
    if (loc_key(space, ad[k]) == key) m |= 1u << k;
  }
  return m;
}

/* ---- the access hook ---- */

/* A strong load or store (one view per word, however many lanes name it). */
static void load_store(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                       uint32_t em, int size, const sim_hbent *rel) {
  sim_hb *hb = wk->hb;
  const hb_warp *h = &hb->warps[w->index];
  uint32_t left = em;
  while (left) {
    int l = __builtin_ctz(left);
    uint64_t key = loc_key(in->space, ad[l]);
    uint32_t lanes = key ? same_word(in->space, ad, left, l, key) : 1u << l;
    left &= ~lanes;
    if (!key) continue;
    if (in->op == SIM_OP_ST) {
      wrote(wk, w, l, key, size, rel ? rel : (h->fmask & lanes) ? h->fenced : NULL, 0);
      continue;
    }
    long i = loc_find(hb, key);
    if (i >= 0 && unchanged(hb, i, size, bits_at(wk, w, l, key, size)))
      read_loc(wk, w, lanes, i, (in->flags & SIM_IF_ACQUIRE) != 0);
  }
}

/* An atomic, lane by lane in the order the simulator applies them: each reads what the one
 * before left, so only the first lane on a word reads what the table knows of. Its old value
 * (the destination register) tells whether that was the block's last strong write; a red, which
 * returns none, is taken at its word on shared memory (only the block writes it) and not on
 * global memory. */
static void rmw(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad, uint32_t em,
                int size, const sim_hbent *rel) {
  sim_hb *hb = wk->hb;
  const hb_warp *h = &hb->warps[w->index];
  uint64_t done[SIM_WARP];
  int ndone = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), first = 1;
    uint64_t key = loc_key(in->space, ad[l]);
    if (!key) continue;
    for (int k = 0; k < ndone && first; k++) first = done[k] != key;
    if (first) done[ndone++] = key;
    long i = loc_find(hb, key);
    int chained = i >= 0 && !first;
    if (i >= 0 && first) {
      int shared = key - SIM_SHARED_WIN < SIM_WIN_SIZE;
      chained = in->d >= 0 ? unchanged(hb, i, size, w->R[(size_t)in->d * SIM_WARP + l])
                           : shared && hb->locs[i].size == size;
    }
    if (chained) read_loc(wk, w, 1u << l, i, (in->flags & SIM_IF_ACQUIRE) != 0);
    const sim_hbent *src = rel ? rel : (h->fmask >> l & 1) ? h->fenced : NULL;
    /* a read-modify-write continues the chain it read from (a release's view stays) */
    if (src || !chained) wrote(wk, w, l, key, size, src, chained);
    else if (i >= 0) hb->locs[i].value = bits_at(wk, w, l, key, size);
  }
}

void sim_hb_access(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                   uint32_t em) {
  int atom = in->op == SIM_OP_ATOM;
  if (!atom && !(in->flags & SIM_IF_VOLATILE)) return; /* a plain access plays no part */
  sim_hb *hb = wk->hb;
  int size = atom ? in->size : in->size * in->vec;
  if (size > 8) size = 8;
  const sim_hbent *rel = NULL;
  if (in->flags & SIM_IF_RELEASE) {
    make_view(wk, w, em, hb->view);
    rel = hb->view;
  }
  if (atom) rmw(wk, w, in, ad, em, size, rel);
  else load_store(wk, w, in, ad, em, size, rel);
  if (rel) advance(wk, &hb->warps[w->index]);
}
