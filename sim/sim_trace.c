/* sim_trace.c: what the timing model learns while a launch runs, and what it works out after:
 * a sampled trace of global accesses replayed through L1 and L2 models, atomics per address,
 * and each warp's own time (issued instructions plus the cycles it waits for its loads).
 *
 * Stance: the model must be deterministic and must not slow the simulator by more than a fifth.
 * Blocks run on several host threads in whatever order they finish, so nothing here may depend
 * on that order:
 *   - Caches are not simulated online. Each worker appends the global accesses it makes to its
 *     own buffer, and after the launch the entries are sorted into the GPU's order (wave of
 *     resident blocks, then each warp's progress, then block and warp) and replayed through an
 *     L1 per SM and one L2, both LRU over 128-byte lines with 32-byte sector masks.
 *   - Only one line in sixteen is traced (set sampling, chosen by a hash of the line's offset in its
 *     allocation, so the same lines are chosen in every run); capacities are scaled to match.
 *     Hit rates from the sample are applied to the exact request and sector counters.
 *   - The L2 is replayed twice and counted on the second pass: the steady state of a launch that
 *     is repeated, which is what timing on a GPU measures after its warm-up.
 *   - A warp's time is charged at run time with one global-load latency (run->lat_global); the
 *     model rescales that share once the replay says how many loads hit in L1 and L2. */
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"

#define TRACE_SAMPLE_SHIFT 4 /* one line in 16 */

static int sampled(uint64_t offset_line) {
  return ((offset_line * 0x9E3779B97F4A7C15ull) >> (64 - TRACE_SAMPLE_SHIFT)) == 0;
}

static void append(sim_worker *wk, sim_warp *w, uint64_t line, uint8_t mask, int kind) {
  sim_wprof *p = &wk->prof;
  if (p->n == p->cap || p->n >= p->allowed) {
    if (p->n < p->cap) { /* a kept buffer: take room for what is already there */
      long long more = (long long)(p->cap - p->n) < 65536 ? (long long)(p->cap - p->n) : 65536;
      if (atomic_fetch_sub(&wk->run->trace_room, more) < more) return;
      p->allowed = p->n + (size_t)more;
      goto add;
    }
    long long grow = p->cap ? (long long)p->cap : 4096;
    if (atomic_fetch_sub(&wk->run->trace_room, grow) < grow) return; /* over the cap: stop tracing */
    size_t cap = p->cap + (size_t)grow;
    sim_trace_ent *e = realloc(p->ent, cap * sizeof *e);
    if (!e) return;
    p->ent = e;
    p->cap = cap;
    p->allowed = cap;
  }
add:;
  long long b = (long long)wk->bx + (long long)wk->run->grid.x * ((long long)wk->by + (long long)wk->run->grid.y * wk->bz);
  p->ent[p->n++] = (sim_trace_ent){line, (uint32_t)b, w->gseq, 0, (uint16_t)w->index, mask, (uint8_t)kind};
}

/* Distinct 128-byte lines touched by the lanes, with their sector masks; lanes usually ascend,
 * so a line equal to the previous one merges without a search. */
static int lines_of(const uint64_t *ad, uint32_t em, int bytes, uint64_t *line, uint8_t *mask) {
  int n = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    uint64_t a = ad[__builtin_ctz(mm)];
    for (uint64_t s = a >> 5; s <= (a + (uint64_t)(bytes > 0 ? bytes : 1) - 1) >> 5; s++) {
      uint64_t ln = s >> 2;
      uint8_t bit = (uint8_t)(1u << (s & 3));
      int j = n - 1;
      if (j < 0 || line[j] != ln)
        for (j = 0; j < n && line[j] != ln; j++) {}
      if (j == n) {
        if (n == 64) return n;
        line[n] = ln;
        mask[n++] = 0;
      }
      mask[j] |= bit;
    }
  }
  return n;
}

/* base: the allocation's start when the caller knows it (all lines in one allocation), else 1. */
static void trace_lines(sim_worker *wk, sim_warp *w, int kind, const uint64_t *line, const uint8_t *mask, int n,
                        uint64_t base) {
  const sim_run *run = wk->run;
  if (kind == SIM_TR_LOAD) wk->prof.l1_wavefronts += n;
  if (kind == SIM_TR_ATOM)
    for (int i = 0; i < n; i++) wk->prof.atom_sectors += (mask[i] & 1) + (mask[i] >> 1 & 1) + (mask[i] >> 2 & 1) + (mask[i] >> 3 & 1);
  for (int i = 0; i < n; i++) {
    uint64_t addr = line[i] << 7, b = base;
    if (b == 1) {
      int h = sim_alloc_find(run->tab, run->ntab, addr, 1);
      b = h >= 0 ? run->tab[h].base : 0;
    }
    if (sampled((addr - b) >> 7)) append(wk, w, line[i], mask[i], kind);
  }
  w->gseq++;
}

/* One global load (kind SIM_TR_LOAD) or store: the lanes' addresses, or (ad NULL) the memo's. */
void sim_trace_access(sim_worker *wk, sim_warp *w, int pc, int kind, const uint64_t *ad, uint32_t em, int bytes,
                      uint64_t base) {
  uint64_t line[64];
  uint8_t mask[64];
  sim_memo *mo = wk->run->memo_slot[pc] >= 0 ? &wk->memo[wk->run->memo_slot[pc]] : NULL;
  uint64_t full[SIM_WARP], a0;
  if (ad) {
    a0 = ad[__builtin_ctz(em)];
  } else { /* the memo's pattern at this warp's first address */
    if (!mo) return;
    const uint64_t *A = w->R + wk->run->m->code[pc].a * SIM_WARP;
    a0 = A[__builtin_ctz(em)] + (uint64_t)wk->run->m->code[pc].imm;
  }
  if (mo && mo->em == em && mo->nlines && mo->lphase == (a0 & 127)) {
    int n = (int)mo->nlines;
    for (int i = 0; i < n; i++) {
      line[i] = (a0 >> 7) + (uint64_t)mo->lrel[i];
      mask[i] = mo->lmask[i];
    }
    trace_lines(wk, w, kind, line, mask, n, base);
    return;
  }
  if (!ad) {
    for (int l = 0; l < SIM_WARP; l++) full[l] = a0 + mo->delta[l];
    ad = full;
  }
  int n = lines_of(ad, em, bytes, line, mask);
  if (mo && mo->em == em && n <= SIM_WARP) {
    for (int i = 0; i < n; i++) {
      mo->lrel[i] = (int64_t)(line[i] - (a0 >> 7));
      mo->lmask[i] = mask[i];
    }
    mo->nlines = (uint32_t)n;
    mo->lphase = (uint32_t)(a0 & 127);
  }
  trace_lines(wk, w, kind, line, mask, n, base);
}

/* ---- atomics: lane operations per address, for contention ---- */

static int atom_grow(sim_wprof *p) {
  size_t cap = p->atom_cap ? p->atom_cap * 2 : 1024;
  uint64_t *a = calloc(cap, sizeof *a);
  uint32_t *c = calloc(cap, sizeof *c);
  if (!a || !c) { free(a); free(c); return -1; }
  for (size_t i = 0; i < p->atom_cap; i++) {
    if (!p->atom_cnt[i]) continue;
    size_t j = (size_t)((p->atom_addr[i] * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (c[j]) j = (j + 1) & (cap - 1);
    a[j] = p->atom_addr[i];
    c[j] = p->atom_cnt[i];
  }
  free(p->atom_addr);
  free(p->atom_cnt);
  p->atom_addr = a;
  p->atom_cnt = c;
  p->atom_cap = cap;
  return 0;
}

static void atom_count(sim_wprof *p, uint64_t addr, uint32_t k) {
  if ((p->atom_n + 1) * 2 > p->atom_cap && atom_grow(p) < 0) return;
  size_t j = (size_t)((addr * 0x9E3779B97F4A7C15ull) >> 20) & (p->atom_cap - 1);
  while (p->atom_cnt[j] && p->atom_addr[j] != addr) j = (j + 1) & (p->atom_cap - 1);
  if (!p->atom_cnt[j]) { p->atom_addr[j] = addr; p->atom_n++; }
  p->atom_cnt[j] += k;
}

void sim_trace_atom(sim_worker *wk, sim_warp *w, const uint64_t *ad, uint32_t em, int bytes) {
  uint64_t line[64];
  uint8_t mask[64];
  trace_lines(wk, w, SIM_TR_ATOM, line, mask, lines_of(ad, em, bytes, line, mask), 1);
  wk->prof.atom_ops += __builtin_popcount(em);
  uint32_t left = em;
  while (left) { /* lanes on one address are counted together: one probe per distinct address */
    uint64_t a = ad[__builtin_ctz(left)];
    uint32_t same = 0;
    for (uint32_t mm = left; mm; mm &= mm - 1)
      if (ad[__builtin_ctz(mm)] == a) same |= 1u << __builtin_ctz(mm);
    atom_count(&wk->prof, a, (uint32_t)__builtin_popcount(same));
    left &= ~same;
  }
}

/* ---- each warp's own time ---- */

/* The warp's own time, which only grows, so ready times left by an earlier block never stall. */
static uint64_t warp_time(const sim_warp *w) { return w->clock + w->stall_mem + w->stall_other; }
/* Its time since the current block started. */
static uint64_t block_time(const sim_warp *w) { return warp_time(w) - (w->clock0 + w->mem0 + w->other0); }

void sim_lat_consume(sim_warp *w, const sim_inst *in) {
  uint64_t now = warp_time(w), r = 0;
  int src[8] = {in->a, in->b, in->c, in->e, in->v[0], in->v[1], in->v[2], in->v[3]};
  int n = in->op == SIM_OP_LD ? 4 : 8; /* a load's v[] are its destinations */
  for (int i = 0; i < n; i++)
    if (src[i] >= 0 && w->ready[src[i]] > r) r = w->ready[src[i]];
  if (r <= now) return;
  /* Rows loaded from shared memory are marked by an odd ready time. */
  if (r & 1) w->stall_other += r - now;
  else w->stall_mem += r - now;
}

void sim_lat_produce(const sim_run *run, sim_warp *w, const sim_inst *in) {
  uint64_t now = warp_time(w);
  uint64_t t = in->flags & SIM_IF_LAT_SHARED ? (now + run->lat_shared) | 1 : (now + run->lat_global) & ~1ull;
  if (in->op == SIM_OP_ATOM) {
    if (in->d >= 0) w->ready[in->d] = t;
    return;
  }
  for (int k = 0; k < in->vec && k < 4; k++)
    if (in->v[k] >= 0) w->ready[in->v[k]] = t;
}

void sim_lat_block_start(sim_worker *wk) {
  for (int i = 0; i < wk->run->nwarps; i++) {
    sim_warp *w = &wk->warps[i];
    w->clock0 = w->clock;
    w->mem0 = w->stall_mem;
    w->other0 = w->stall_other;
    w->gseq = 0;
  }
}

/* At a barrier every warp waits for the slowest. */
void sim_lat_barrier(sim_worker *wk) {
  uint64_t tmax = 0;
  for (int i = 0; i < wk->run->nwarps; i++)
    if (block_time(&wk->warps[i]) > tmax) tmax = block_time(&wk->warps[i]);
  for (int i = 0; i < wk->run->nwarps; i++) wk->warps[i].stall_other += tmax - block_time(&wk->warps[i]);
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
  if ((double)block_time(slow) > p->block_max) p->block_max = (double)block_time(slow);
}

/* Marks producers (loads whose result arrives late) and their consumers, statically: a row any
 * producer writes makes every reader of that row a consumer, which is conservative but cheap. */
void sim_lat_mark(sim_module *m) {
  uint8_t *loaded = calloc((size_t)m->nrows + 1, 1);
  if (!loaded) return; /* the model then sees no load latency */
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    int shared = in->space == SIM_SP_SHARED;
    int global = in->space == SIM_SP_GLOBAL || in->space == SIM_SP_GENERIC || in->space == SIM_SP_LOCAL;
    if (in->op == SIM_OP_LD && (shared || global)) {
      in->flags |= shared ? SIM_IF_LAT_SHARED : SIM_IF_LAT_PRODUCER;
      for (int k = 0; k < 4; k++) if (in->v[k] >= 0 && in->v[k] < m->nrows) loaded[in->v[k]] = 1;
    } else if (in->op == SIM_OP_ATOM && in->d >= 0 && in->d < m->nrows) {
      in->flags |= shared ? SIM_IF_LAT_SHARED : SIM_IF_LAT_PRODUCER;
      loaded[in->d] = 1;
    }
  }
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    int src[8] = {in->a, in->b, in->c, in->e, in->v[0], in->v[1], in->v[2], in->v[3]};
    int n = in->op == SIM_OP_LD ? 4 : 8;
    if (in->op == SIM_OP_LDPARAM || in->op == SIM_OP_BRA || in->op == SIM_OP_EXIT) continue;
    for (int k = 0; k < n; k++)
      if (src[k] >= 0 && src[k] < m->nrows && loaded[src[k]]) in->flags |= SIM_IF_LAT_CONSUMER;
  }
  free(loaded);
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
  free(p->atom_addr);
  free(p->atom_cnt);
  memset(p, 0, sizeof *p);
}
