/* sim_trace.c: what the timing model learns while a launch runs, and what it works out after:
 * a sampled trace of global accesses replayed through L1 and L2 models (sim_cache.c), atomics
 * (priced in sim_atomics.c), and each warp's own time (issued instructions plus the cycles it
 * waits for its loads).
 *
 * Stance: the model must be deterministic and must not slow the simulator by more than a fifth.
 * Blocks run on several host threads in whatever order they finish, so nothing here may depend
 * on that order:
 *   - Caches are not simulated online. Each worker appends the global accesses it makes to its
 *     own buffer, and after the launch the entries are sorted into the GPU's order (wave of
 *     resident blocks, then each warp's progress, then block and warp) and replayed through an
 *     L1 per SM and one L2, set-associative with LRU sets, over 128-byte lines with 32-byte
 *     sector masks.
 *   - Only one line in 32 is traced (set sampling, chosen by a hash of the line's offset in its
 *     allocation, so the same lines are chosen in every run), and a long trace is thinned further
 *     after the launch the same way; capacities are scaled to match.
 *     Hit rates from the sample are applied to the exact request and sector counters.
 *   - The L2 is replayed twice and counted on the second pass: the steady state of a launch that
 *     is repeated, which is what timing on a GPU measures after its warm-up.
 *   - A warp's time is charged at run time with one global-load latency (run->lat_global); the
 *     model rescales that share once the replay says how many loads hit in L1 and L2. */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

/* The line's sampling level: -1 when it is not traced; else how many more leading bits of its
 * hash are zero, so that the fold can thin a long trace to a rarer rate deterministically. */
static int sample_level(uint64_t offset_line) {
  uint64_t h = offset_line * 0x9E3779B97F4A7C15ull;
  if (h >> (64 - SIM_TRACE_SHIFT)) return -1;
  uint64_t rest = h << SIM_TRACE_SHIFT;
  int lz = rest ? __builtin_clzll(rest) : 64 - SIM_TRACE_SHIFT;
  return lz > 255 ? 255 : lz;
}

static void append(sim_worker *wk, sim_warp *w, int pc, uint64_t line, uint8_t mask, int kind,
                   int level) {
  sim_wprof *p = &wk->prof;
  if (p->n == p->cap || p->n >= p->allowed) {
    if (p->n < p->cap) { /* a kept buffer: take room for what is already there */
      long long more = (long long)(p->cap - p->n) < 65536 ? (long long)(p->cap - p->n) : 65536;
      if (atomic_fetch_sub(&wk->run->trace_room, more) < more) return;
      p->allowed = p->n + (size_t)more;
      goto add;
    }
    long long grow = p->cap ? (long long)p->cap : 4096;
    if (atomic_fetch_sub(&wk->run->trace_room, grow) < grow)
      return; /* over the cap: stop tracing */
    size_t cap = p->cap + (size_t)grow;
    sim_trace_ent *e = realloc(p->ent, cap * sizeof *e);
    if (!e) return;
    p->ent = e;
    p->cap = cap;
    p->allowed = cap;
  }
add:;
  long long b = (long long)wk->bx + (long long)wk->run->grid.x *
                                        ((long long)wk->by + (long long)wk->run->grid.y * wk->bz);
  p->ent[p->n++] =
      (sim_trace_ent){line,           (uint32_t)b, w->gseq,      (uint32_t)pc, (uint8_t)w->index,
                      (uint8_t)level, mask,        (uint8_t)kind};
}

/* Distinct 128-byte lines touched by the lanes, with their sector masks; lanes usually ascend,
 * so a line equal to the previous one merges without a search. The high half of each mask marks
 * the sectors the lanes cover only in part (fewer than 32 of their bytes): a store there makes
 * the L2 read the line first (sim_cache.c). */
static int lines_of(const uint64_t *ad, uint32_t em, int bytes, uint64_t *line, uint8_t *mask) {
  int n = 0;
  uint8_t cov[64][4];
  uint64_t len = (uint64_t)(bytes > 0 ? bytes : 1);
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    uint64_t a = ad[__builtin_ctz(mm)];
    for (uint64_t s = a >> 5; s <= (a + len - 1) >> 5; s++) {
      uint64_t ln = s >> 2;
      uint8_t bit = (uint8_t)(1u << (s & 3));
      int j = n - 1;
      if (j < 0 || line[j] != ln)
        for (j = 0; j < n && line[j] != ln; j++) {
        }
      if (j == n) {
        if (n == 64) goto done;
        line[n] = ln;
        mask[n] = 0;
        memset(cov[n++], 0, 4);
      }
      mask[j] |= bit;
      uint64_t from = a > s << 5 ? a : s << 5, to = a + len < (s + 1) << 5 ? a + len : (s + 1) << 5;
      unsigned c = cov[j][s & 3] + (unsigned)(to - from);
      cov[j][s & 3] = (uint8_t)(c < 32 ? c : 32);
    }
  }
done:
  for (int j = 0; j < n; j++)
    for (int q = 0; q < 4; q++)
      if ((mask[j] >> q & 1) && cov[j][q] < 32) mask[j] |= (uint8_t)(0x10u << q);
  return n;
}

/* A load waits for the slowest of the places it reads, and places far apart are served by
 * different DRAM banks and L2 slices, whose queues differ: for n of them the expected slowest is
 * (1 + spread * H_n) / (1 + spread) times one's latency (sim_cache.c), H_n the n-th harmonic
 * number, here in SIM_SPREAD_ONE units. A place is a kilobyte: a coalesced request, even of
 * float4s, reads one or two. Places are counted from the allocation's start, as if it began at a
 * kilobyte (the driver puts a large array at 2 MiB), never on host addresses: those are aligned
 * to 256 bytes and no more, and a request of float4s read one place or two as the host's
 * allocator happened to put the array. */
#define PLACE_SHIFT 3 /* lines per place: 2^3 lines of 128 bytes */
static const uint32_t harmonic[65] = {
    0,      100000, 150000, 183333, 208333, 228333, 245000, 259286, 271786, 282897,
    292897, 301988, 310321, 318013, 325156, 331823, 338073, 343955, 349511, 354774,
    359774, 364536, 369081, 373429, 377596, 381596, 385442, 389146, 392717, 396165,
    399499, 402725, 405850, 408880, 411821, 414678, 417456, 420159, 422790, 425354,
    427854, 430293, 432674, 435000, 437273, 439495, 441669, 443796, 445880, 447921,
    449921, 451882, 453805, 455692, 457544, 459362, 461148, 462902, 464626, 466321,
    467988, 469627, 471240, 472827, 474389};

/* The places of n lines, counted as runs of lines in one place (lanes mostly ascend); line i
 * lies in allocation h[i] (-1: none of the table's, a device-heap block, named by its address)
 * at line off[i] of it. */
static inline int places_of(const int *h, const uint64_t *off, int n) {
  int places = 0, prev_h = -2;
  uint64_t prev = 0;
  for (int i = 0; i < n; i++) {
    uint64_t place = off[i] >> PLACE_SHIFT;
    places += place != prev || h[i] != prev_h;
    prev = place;
    prev_h = h[i];
  }
  return places;
}

/* A request's lines, counted (kind SIM_TR_LOAD, STORE or ATOM); places: a load's places. */
static inline void count_lines(sim_worker *wk, int pc, int kind, const uint8_t *mask, int n,
                               int places) {
  if (kind == SIM_TR_LOAD) {
    wk->prof.l1_wavefronts += n;
    wk->prof.spread_pc[pc] += harmonic[places < 64 ? places : 64];
  } else if (kind == SIM_TR_STORE)
    wk->prof.st_lines += n;
  if (kind == SIM_TR_ATOM)
    for (int i = 0; i < n; i++)
      wk->prof.atom_sectors +=
          (mask[i] & 1) + (mask[i] >> 1 & 1) + (mask[i] >> 2 & 1) + (mask[i] >> 3 & 1);
}

/* An allocation's name for the timing model: the kernel parameter that points to it, else its
 * serial, never its address, so that the model behaves the same wherever the host put the
 * arrays, and for any arrays of the same sizes. */
static inline uint64_t alloc_name(const sim_alloc *al) {
  return al->param >= 0 ? (uint64_t)al->param : ((uint64_t)1 << 20) + al->serial;
}

/* The allocation line lies in (an index in run->tab; alloc when the caller knows it, -1 when no
 * allocation of the table holds it) and in *off the line's offset in lines from its origin, or
 * the line itself when there is none. */
static inline int line_place(const sim_run *run, uint64_t line, int alloc, uint64_t *off) {
  uint64_t addr = line << 7;
  int h = alloc >= 0 ? alloc : sim_alloc_find(run->tab, run->ntab, addr, 1);
  *off = h >= 0 ? (addr - run->tab[h].origin) >> 7 : line;
  return h;
}

/* Line off of allocation h, traced when it is sampled: named by its offset above the
 * allocation's name (alloc_name). */
static inline void trace_line(sim_worker *wk, sim_warp *w, int pc, int kind, int h, uint64_t off,
                              uint8_t mask) {
  if (h < 0) return; /* checked accesses lie in an allocation; device-heap blocks go untraced */
  int level = sample_level(off);
  if (level < 0) return;
  append(wk, w, pc, alloc_name(&wk->run->tab[h]) << 36 | off, mask, kind, level);
}

/* A request's n lines with their sector masks. alloc: the index in run->tab of the allocation
 * every line lies in when the caller knows it, else -1. */
static inline __attribute__((always_inline)) void trace_lines(
    sim_worker *wk, sim_warp *w, int pc, int kind, const uint64_t *line, const uint8_t *mask,
    int n, int alloc) {
  int h[64];
  uint64_t off[64];
  for (int i = 0; i < n; i++) h[i] = line_place(wk->run, line[i], alloc, &off[i]);
  count_lines(wk, pc, kind, mask, n, kind == SIM_TR_LOAD ? places_of(h, off, n) : 0);
  for (int i = 0; i < n; i++) trace_line(wk, w, pc, kind, h[i], off[i], mask[i]);
  w->gseq++;
}

/* The lines of a request whose pattern the memo mo holds, with its lines (mo->lines) for the
 * first lane's address a0 modulo 128: no pass over the lanes. NULL when it holds none for them. */
static inline const struct sim_memo_lines *memo_lines(const sim_memo *mo, uint32_t em,
                                                      uint64_t a0) {
  uint32_t tag = (uint32_t)(a0 & 127) + 256;
  if (!mo || mo->em != em) return NULL;
  if (mo->lines[0].tag == tag) return &mo->lines[0];
  return mo->lines[1].tag == tag ? &mo->lines[1] : NULL;
}
/* Inline in sim_trace_warp, which runs on every whole-warp global access: called, it cost a
 * vector add about 1% of its host instructions in arguments, saves and restores. */
static inline __attribute__((always_inline)) void trace_memo_lines(
    sim_worker *wk, sim_warp *w, int pc, int kind, uint64_t a0,
    const struct sim_memo_lines *ml, int alloc) {
  int n = (int)ml->n;
  if (alloc >= 0) {
    /* The one allocation known: each line's offset is the first's plus its rel (an origin is a
     * multiple of 256 bytes), and the places are runs of offsets, with no lookup per line. */
    uint64_t off0 = (a0 >> 7) - (wk->run->tab[alloc].origin >> 7);
    int places = 0;
    uint64_t prev = ~0ull;
    for (int i = 0; i < n; i++) {
      uint64_t place = (off0 + (uint64_t)ml->rel[i]) >> PLACE_SHIFT;
      places += place != prev;
      prev = place;
    }
    count_lines(wk, pc, kind, ml->mask, n, kind == SIM_TR_LOAD ? places : 0);
    for (int i = 0; i < n; i++)
      trace_line(wk, w, pc, kind, alloc, off0 + (uint64_t)ml->rel[i], ml->mask[i]);
    w->gseq++;
    return;
  }
  uint64_t line[SIM_WARP];
  for (int i = 0; i < n; i++) line[i] = (a0 >> 7) + (uint64_t)ml->rel[i];
  trace_lines(wk, w, pc, kind, line, ml->mask, n, alloc);
}

/* The lines of the lanes' addresses ad, worked out and, when the memo holds this pattern (em),
 * kept in it for the next warps. */
static void trace_lanes(sim_worker *wk, sim_warp *w, int pc, int kind, const uint64_t *ad,
                        uint32_t em, int bytes, int alloc, sim_memo *mo, uint64_t a0) {
  uint64_t line[64];
  uint8_t mask[64];
  int n = lines_of(ad, em, bytes, line, mask);
  if (mo && mo->em == em && n <= SIM_WARP) {
    struct sim_memo_lines *ml = &mo->lines[mo->lnext];
    mo->lnext ^= 1;
    for (int i = 0; i < n; i++) {
      ml->rel[i] = (int64_t)(line[i] - (a0 >> 7));
      ml->mask[i] = mask[i];
    }
    ml->n = (uint32_t)n;
    ml->tag = (uint32_t)(a0 & 127) + 256;
  }
  trace_lines(wk, w, pc, kind, line, mask, n, alloc);
}

void sim_trace_warp(sim_worker *wk, sim_warp *w, int pc, int kind, uint64_t a0, sim_memo *mo,
                    int bytes, int alloc) {
  const struct sim_memo_lines *ml = memo_lines(mo, SIM_FULL, a0);
  if (ml) {
    trace_memo_lines(wk, w, pc, kind, a0, ml, alloc);
    return;
  }
  uint64_t full[SIM_WARP];
  for (int l = 0; l < SIM_WARP; l++) full[l] = a0 + mo->delta[l];
  trace_lanes(wk, w, pc, kind, full, SIM_FULL, bytes, alloc, mo, a0);
}

void sim_trace_access(sim_worker *wk, sim_warp *w, int pc, int kind, const uint64_t *ad,
                      uint32_t em, int bytes, int alloc) {
  sim_memo *mo = wk->run->memo_slot[pc] >= 0 ? &wk->memo[wk->run->memo_slot[pc]] : NULL;
  uint64_t a0 = ad[__builtin_ctz(em)];
  const struct sim_memo_lines *ml = memo_lines(mo, em, a0);
  if (ml)
    trace_memo_lines(wk, w, pc, kind, a0, ml, alloc);
  else
    trace_lanes(wk, w, pc, kind, ad, em, bytes, alloc, mo, a0);
}

/* ---- atomics: their lines for the trace, their addresses for contention ---- */

/* Lane l's address as the atomics' slices see it (sim_atomics.c): its offset in its allocation,
 * above the allocation's name (alloc_name, as the trace names lines), so that where the host put
 * the array changes nothing. The last allocation found is remembered: a request's lanes share
 * one. */
static uint64_t placed(sim_worker *wk, uint64_t a) {
  const sim_run *run = wk->run;
  int h = wk->prof.atom_alloc;
  if (h < 0 || h >= run->ntab || a - run->tab[h].base >= run->tab[h].size) {
    h = sim_alloc_find(run->tab, run->ntab, a, 1);
    if (h < 0) return a; /* checked accesses always lie in an allocation */
    wk->prof.atom_alloc = h;
  }
  return alloc_name(&run->tab[h]) << 40 | (a - run->tab[h].origin);
}

void sim_trace_atom(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                    uint32_t em) {
  uint64_t line[64];
  uint8_t mask[64];
  trace_lines(wk, w, (int)(in - wk->run->m->code), SIM_TR_ATOM, line, mask,
              lines_of(ad, em, in->size, line, mask), -1);
  uint64_t at[SIM_WARP];
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    at[l] = placed(wk, ad[l]);
  }
  wk->prof.atom_ops += sim_popcount(em);
  wk->prof.atom_ops_l2 += sim_atab_request(&wk->prof.atom, &wk->run->dev->desc.perf, in, at, em);
}

/* ---- each warp's own time ---- */

/* The warp's time since the current block started. */
static uint64_t block_time(const sim_warp *w) {
  return sim_warp_time(w) - (w->clock0 + w->mem0 + w->other0);
}

/* At a barrier every warp waits for the slowest. */
void sim_lat_barrier(sim_worker *wk) {
  uint64_t tmax = 0;
  for (int i = 0; i < wk->run->nwarps; i++)
    if (block_time(&wk->warps[i]) > tmax) tmax = block_time(&wk->warps[i]);
  for (int i = 0; i < wk->run->nwarps; i++)
    wk->warps[i].stall_other += tmax - block_time(&wk->warps[i]);
}

uint64_t sim_lat_arrival(const sim_warp *w) { return block_time(w); }

void sim_lat_hold(sim_warp *w, uint64_t t) {
  uint64_t b = block_time(w);
  if (t > b) w->stall_other += t - b;
}

/* A block holds its SM slot until its slowest warp ends. */
void sim_lat_block_end(sim_worker *wk) {
  const sim_warp *slow = NULL;
  for (int i = 0; i < wk->run->nwarps; i++)
    if (!slow || block_time(&wk->warps[i]) > block_time(slow)) slow = &wk->warps[i];
  if (!slow) return;
  sim_wprof *p = &wk->prof;
  p->block_issue += (double)(slow->clock - slow->clock0);
  p->block_mem += (double)(slow->stall_mem - slow->mem0);
  p->block_other += (double)(slow->stall_other - slow->other0);
}

void sim_trace_borrow(sim_worker *wk, int i) {
  sim_device *dev = wk->run->dev;
  wk->prof.ent = dev->trace_buf[i];
  wk->prof.cap = dev->trace_cap[i];
  dev->trace_buf[i] = NULL;
  dev->trace_cap[i] = 0;
}

void sim_trace_return(sim_worker *wk, int i) {
  sim_device *dev = wk->run->dev;
  free(dev->trace_buf[i]);
  dev->trace_buf[i] = wk->prof.ent;
  dev->trace_cap[i] = wk->prof.cap;
  wk->prof.ent = NULL;
  wk->prof.cap = wk->prof.n = 0;
}

void sim_wprof_free(sim_wprof *p) {
  free(p->ent);
  free(p->stall_pc);
  free(p->spread_pc);
  sim_atab_free(&p->atom);
  memset(p, 0, sizeof *p);
}
