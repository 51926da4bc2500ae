/* sim_watch.c: watched elements. Every store or atomic a kernel makes to one element of device
 * memory is recorded, in order, with the thread, the block, the source line and the element's
 * value before and after: what a learner asks of a debugger when an output is wrong ("who wrote
 * c[17], and what?").
 *
 * Stance: a launch without a watch pays nothing (run->hook_store stays off). With one, a store
 * pays a comparison of the warp's address span with each watched element, and only a store that
 * hits takes the watches' lock and reads the element. The lock is held across the hitting
 * instruction itself (sim_mem.c does the plain store or atomic meanwhile), so that two host
 * workers writing one element are recorded in the order they wrote it, and each record's old
 * value is what that write replaced. Each lane's write is a record of its own, rebuilt from the
 * lane's data in lane order, which is the order the executor writes in: a warp whose 32 lanes
 * store to one word shows 32 writes and the last one winning, which is what a learner chasing
 * that race needs to see. An atomic's lanes are replayed the same way with sim_atom_apply from
 * the value before. A watch keeps SIM_WATCH_KEEP records and counts the rest, so an element every
 * thread updates (a global counter) costs no memory. Writes by tensor-core stores (wmma.store)
 * are not seen: they do not go through ld/st/atom. */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "sim_run.h"

typedef struct watch {
  int id;                 /* > 0; 0 marks a free entry */
  int gone;               /* its allocation was freed: it records nothing more */
  uint64_t lo, hi;        /* the element's bytes [lo, hi) */
  sim_watch_write *rec;   /* the writes kept, n of cap */
  size_t n, cap;
  uint64_t total;         /* writes counted, kept or not */
} watch;

struct sim_watches {
  watch *v;               /* n entries, some free */
  int n, cap;
  int next_id;
  pthread_mutex_t lock;   /* held from sim_watch_before to sim_watch_after */
};

/* One live watch as a launch sees it. */
struct sim_watch_run {
  uint64_t lo, hi;
  watch *w;
};

/* ---- the device's table (host side, between launches) ---- */

static struct sim_watches *table(sim_device *dev) {
  if (dev->watches) return dev->watches;
  struct sim_watches *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  pthread_mutex_init(&t->lock, NULL);
  dev->watches = t;
  return t;
}

static watch *find(const sim_device *dev, int id) {
  const struct sim_watches *t = dev->watches;
  for (int i = 0; t && id > 0 && i < t->n; i++)
    if (t->v[i].id == id) return &t->v[i];
  return NULL;
}

/* A free entry of t, growing it when there is none; NULL when out of memory. */
static watch *free_entry(struct sim_watches *t) {
  for (int i = 0; i < t->n; i++)
    if (!t->v[i].id) return &t->v[i];
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 4;
    watch *v = realloc(t->v, (size_t)cap * sizeof *v);
    if (!v) return NULL;
    t->v = v;
    t->cap = cap;
  }
  return &t->v[t->n++];
}

int sim_watch_add(sim_device *dev, const void *addr, size_t bytes) {
  struct sim_watches *t = table(dev);
  watch *w = t && bytes >= 1 && bytes <= 8 ? free_entry(t) : NULL;
  if (!w) return -1;
  memset(w, 0, sizeof *w);
  w->id = ++t->next_id;
  w->lo = (uint64_t)(uintptr_t)addr;
  w->hi = w->lo + bytes;
  return w->id;
}

void sim_watch_remove(sim_device *dev, int id) {
  watch *w = find(dev, id);
  if (!w) return;
  free(w->rec);
  memset(w, 0, sizeof *w);
}

void sim_watch_clear(sim_device *dev, int id) {
  watch *w = find(dev, id);
  if (!w) return;
  w->n = 0;
  w->total = 0;
}

const sim_watch_write *sim_watch_get(const sim_device *dev, int id, size_t i, uint64_t *total) {
  const watch *w = find(dev, id);
  if (total) *total = w ? w->total : 0;
  return w && i < w->n ? &w->rec[i] : NULL;
}

void sim_watch_forget(sim_device *dev, uint64_t base, uint64_t size) {
  struct sim_watches *t = dev->watches;
  for (int i = 0; t && i < t->n; i++)
    if (t->v[i].id && t->v[i].lo >= base && t->v[i].lo - base < size) t->v[i].gone = 1;
}

void sim_watches_free(struct sim_watches *t) {
  if (!t) return;
  for (int i = 0; i < t->n; i++) free(t->v[i].rec);
  free(t->v);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

/* ---- a launch ---- */

int sim_watch_begin(sim_run *run) {
  struct sim_watches *t = run->dev->watches;
  int n = 0;
  for (int i = 0; t && i < t->n; i++) n += t->v[i].id && !t->v[i].gone;
  run->nwatch = 0;
  if (run->opts && run->opts->unwatched) return 0;
  if (!n) return 0;
  run->watch = malloc((size_t)n * sizeof *run->watch);
  if (!run->watch) return -1;
  for (int i = 0; i < t->n; i++)
    if (t->v[i].id && !t->v[i].gone)
      run->watch[run->nwatch++] = (struct sim_watch_run){t->v[i].lo, t->v[i].hi, &t->v[i]};
  return 0;
}

void sim_watch_end(sim_run *run) {
  free(run->watch);
  run->watch = NULL;
  run->nwatch = 0;
}

/* Whether a lane's bytes [a, a + bytes) meet [lo, hi). */
static inline int meets(uint64_t a, uint64_t bytes, uint64_t lo, uint64_t hi) {
  return a < hi && lo < a + bytes;
}

static uint64_t element(const struct sim_watch_run *r) {
  uint64_t v = 0;
  memcpy(&v, (const void *)(uintptr_t)r->lo, (size_t)(r->hi - r->lo));
  return v;
}

/* The watches the lanes' accesses meet, into hit. The warp's address span is compared first, so a
 * warp nowhere near a watched element (nearly all of them) costs one pass over its lanes. */
static int hits(const sim_run *run, const uint64_t *ad, uint32_t em, uint64_t bytes,
                sim_watch_hit *hit) {
  uint64_t lo = ~0ull, hi = 0;
  LANES({
    lo = ad[l] < lo ? ad[l] : lo;
    hi = ad[l] > hi ? ad[l] : hi;
  });
  hit->n = 0;
  for (int i = 0; i < run->nwatch && hit->n < SIM_WATCH_HITS; i++) {
    const struct sim_watch_run *r = &run->watch[i];
    if (!meets(lo, hi - lo + bytes, r->lo, r->hi)) continue;
    int any = 0;
    LANES(any |= meets(ad[l], bytes, r->lo, r->hi));
    if (any) hit->idx[hit->n++] = i;
  }
  return hit->n;
}

int sim_watch_before(sim_worker *wk, const sim_inst *in, const uint64_t *ad, uint32_t em,
                     int bytes, sim_watch_hit *hit) {
  const sim_run *run = wk->run;
  hit->n = 0;
  if (!em || (in->space != SIM_SP_GLOBAL && in->space != SIM_SP_GENERIC)) return 0;
  if (!hits(run, ad, em, (uint64_t)bytes, hit)) return 0;
  pthread_mutex_lock(&run->dev->watches->lock);
  for (int k = 0; k < hit->n; k++) hit->before[k] = element(&run->watch[hit->idx[k]]);
  return hit->n;
}

/* ---- records ---- */

static const char *op_name(const sim_inst *in) {
  static const char *const names[] = {"atomicAdd", "atomicMin", "atomicMax", "atomicInc",
                                      "atomicDec", "atomicAnd", "atomicOr",  "atomicXor",
                                      "atomicExch", "atomicCAS"};
  if (in->op != SIM_OP_ATOM) return "store";
  int i = in->sub - SIM_ATOM_ADD;
  return i >= 0 && i < (int)(sizeof names / sizeof *names) ? names[i] : "atomic";
}

/* Where lane `lane` of w is and what it ran, into r (everything but the values). */
static void describe(const sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in,
                     sim_watch_write *r) {
  const sim_run *run = wk->run;
  const sim_module *m = run->m;
  unsigned lin = (unsigned)(w->index * SIM_WARP + lane), bx = run->block.x, by = run->block.y;
  r->thread[0] = lin % bx;
  r->thread[1] = (lin / bx) % by;
  r->thread[2] = lin / (bx * by);
  r->block[0] = wk->bx;
  r->block[1] = wk->by;
  r->block[2] = wk->bz;
  int known = in->line > 0 && in->file >= 0 && in->file < m->nfiles && m->files[in->file];
  r->line = known ? in->line : in->ptx_line;
  if (known) snprintf(r->where, sizeof r->where, "%s:%d", m->files[in->file], in->line);
  else snprintf(r->where, sizeof r->where, "PTX line %d", in->ptx_line);
  char fn[8];
  sim_demangle(run->f->name, r->kernel, sizeof r->kernel, fn, sizeof fn);
  r->op = op_name(in);
}

/* Appends one write to w: kept while there is room, counted always. Under the lock. */
static void record(const sim_worker *wk, const sim_warp *sw, int lane, const sim_inst *in,
                   watch *w, uint64_t old, uint64_t nv) {
  w->total++;
  if (w->n >= SIM_WATCH_KEEP) return;
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 16;
    sim_watch_write *rec = realloc(w->rec, cap * sizeof *rec);
    if (!rec) return; /* out of memory: the write is still counted */
    w->rec = rec;
    w->cap = cap;
  }
  sim_watch_write *r = &w->rec[w->n++];
  describe(wk, sw, lane, in, r);
  r->old = old;
  r->nv = nv;
}

/* cur with the bytes of lane data v stored at [a, a + sz) laid over the element at lo. */
static uint64_t overlay(uint64_t cur, uint64_t lo, uint64_t hi, uint64_t a, int sz, uint64_t v) {
  unsigned char e[8], d[8];
  memcpy(e, &cur, 8);
  memcpy(d, &v, 8);
  for (int i = 0; i < sz; i++)
    if (a + (uint64_t)i >= lo && a + (uint64_t)i < hi) e[a + (uint64_t)i - lo] = d[i];
  memcpy(&cur, e, 8);
  return cur;
}

/* A store's writes to one watch, lane by lane in the executor's order (element k of every lane
 * before element k + 1). */
static void replay_store(const sim_worker *wk, const sim_warp *w, const sim_inst *in,
                         const uint64_t *ad, uint32_t em, const struct sim_watch_run *r,
                         uint64_t cur) {
  int sz = in->size;
  for (int k = 0; k < in->vec; k++) {
    const uint64_t *V = w->R + in->v[k] * SIM_WARP;
    for (uint32_t mm = em; mm; mm &= mm - 1) {
      int l = __builtin_ctz(mm);
      uint64_t a = ad[l] + (uint64_t)(k * sz);
      if (!meets(a, (uint64_t)sz, r->lo, r->hi)) continue;
      uint64_t nv = overlay(cur, r->lo, r->hi, a, sz, V[l]);
      record(wk, w, l, in, r->w, cur, nv);
      cur = nv;
    }
  }
}

/* An atomic's writes to one watch. One exactly on the element is replayed lane by lane; one that
 * covers only part of it (a 4-byte atomic on an 8-byte element) is recorded once, for its last
 * lane, from the element before and after. */
static void replay_atom(const sim_worker *wk, const sim_warp *w, const sim_inst *in,
                        const uint64_t *ad, uint32_t em, const uint64_t *b, const uint64_t *c,
                        const struct sim_watch_run *r, uint64_t cur) {
  int sz = in->size, last = -1;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (!meets(ad[l], (uint64_t)sz, r->lo, r->hi)) continue;
    last = l;
    if (ad[l] != r->lo || (uint64_t)sz != r->hi - r->lo) continue;
    uint64_t nv = sim_atom_apply(in->sub, in->ty, cur, b[l], c[l]);
    record(wk, w, l, in, r->w, cur, nv);
    cur = nv;
  }
  uint64_t after = element(r);
  if (last >= 0 && (ad[last] != r->lo || (uint64_t)sz != r->hi - r->lo))
    record(wk, w, last, in, r->w, cur, after);
}

void sim_watch_after(sim_worker *wk, const sim_warp *w, const sim_inst *in, const uint64_t *ad,
                     uint32_t em, const uint64_t *b, const uint64_t *c, const sim_watch_hit *hit,
                     int rc) {
  const sim_run *run = wk->run;
  for (int k = 0; rc == 0 && k < hit->n; k++) {
    const struct sim_watch_run *r = &run->watch[hit->idx[k]];
    if (in->op == SIM_OP_ATOM) replay_atom(wk, w, in, ad, em, b, c, r, hit->before[k]);
    else replay_store(wk, w, in, ad, em, r, hit->before[k]);
  }
  pthread_mutex_unlock(&run->dev->watches->lock);
}
