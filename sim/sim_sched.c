/* sim_sched.c: the blocks a host worker holds. It runs one block at a time, to its end as long as
 * it can; a block whose warps all wait on memory that only another block can change is parked,
 * so that blocks which wait on one another (a decoupled look-back, a grid barrier built from an
 * atomic counter, a queue between blocks) make progress as on a GPU, as long as the modelled
 * device could hold all of them at once. A watchdog ends a launch that can no longer progress.
 *
 * Stance: nothing is paid until a warp spends a whole time slice without finishing. Then, if it
 * wrote no memory in that slice, the last instructions of the slice run one at a time (a probe)
 * from a snapshot of its state: a warp that comes back to the same pc with the same registers,
 * predicates and divergence stack, having written no memory, runs a loop that changes nothing
 * and can only leave it once some other warp changes memory. That verdict is exact, where "a
 * backward branch taken many times" is not (a compute loop takes it too): a long compute block is
 * never parked, and the one-thread mode keeps its order. A block whose running warps all spin so
 * is parked; the worker resumes another of its blocks, or starts a new one while its share of the
 * device's resident blocks (SMs x occupancy, split evenly between workers) allows, as a GPU
 * dispatches a block when a slot frees. A loop that changes registers while it waits (it counts
 * its tries, reads the clock) is not recognised; a block that runs SIM_QUIET warp instructions
 * without writing memory yields instead, so such waiting still progresses, but the watchdog
 * never ends it (Ctrl-C does).
 *
 * The watchdog. A parked block is probed again only when memory may have changed: this worker
 * wrote (wk->writes, counted in sim_mem.c), or another did, which it announces by bumping
 * run->wgen once blocks wait. A worker whose blocks all wait, and which may take no other,
 * publishes the wgen it verified them against (run->stamp). When every worker has published the
 * current wgen, or stopped, no warp can ever write again: the launch ends, and the message names
 * the warps that spin and where. A worker announces its writes before it publishes and clears its
 * stamp before it runs anything, so a published stamp always covers every write made before it.
 *
 * Workers take blocks from one counter, run->next_block; the n-th block handed out is the one
 * the launch's block order puts n-th (sim_order.c), forward unless the options say otherwise. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_run.h"

/* instructions a warp runs before the others of its block get a turn; the same once blocks
 * wait on others, so that a waiting one is found sooner */
#define SIM_SLICE 200000
#define SIM_SLICE_WAIT 4096
#define SIM_PROBE 256          /* the end of a slice a probe may run one instruction at a time */
#define SIM_QUIET (1ull << 26) /* warp instructions without a write after which a block yields */

enum { BLOCK_ERR = -1, BLOCK_DONE, BLOCK_WAITS, BLOCK_QUIET };

static int interrupted(const sim_run *run) {
  return run->opts && run->opts->interrupt && *run->opts->interrupt;
}

/* Whether a block handed out nth comes after the block whose error the launch reports: it stops
 * (sim_fail says why). */
static int past_error(const sim_run *run, long long nth) {
  return nth > atomic_load_explicit(&run->fault_nth, memory_order_relaxed);
}

/* Whether an error is waiting for the blocks before it and they have had their time: then the
 * launch stops with the earliest error found so far (sim_fail). */
static int error_overdue(sim_run *run) {
  if (atomic_load_explicit(&run->fault_nth, memory_order_relaxed) == LLONG_MAX) return 0;
  if (sim_mono_ns() < atomic_load(&run->fault_by_ns)) return 0;
  atomic_store(&run->failed, 1);
  return 1;
}

/* ---- slots ---- */

/* The launch's cluster shape in blocks: the kernel's __cluster_dims__, else one-block
 * clusters. */
static void cluster_shape(const sim_run *run, unsigned c[3]) {
  for (int i = 0; i < 3; i++) c[i] = run->f->bounds.cluster[0] ? run->f->bounds.cluster[i] : 1;
}

/* The cluster rows that do not change within a launch (the grid divides into clusters:
 * sim_launch checked it). */
static void cluster_rows(const sim_run *run, uint64_t *R) {
  unsigned c[3];
  cluster_shape(run, c);
  const unsigned g[3] = {run->grid.x, run->grid.y, run->grid.z};
  for (int l = 0; l < SIM_WARP; l++) {
    for (int i = 0; i < 3; i++) {
      R[(SIM_SR_CLUSTER_NCTAID_X + i) * SIM_WARP + l] = c[i];
      R[(SIM_SR_NCLUSTERID_X + i) * SIM_WARP + l] = g[i] / c[i];
    }
    R[SIM_SR_CLUSTER_NCTARANK * SIM_WARP + l] = (uint64_t)c[0] * c[1] * c[2];
    R[SIM_SR_IS_EXPLICIT_CLUSTER * SIM_WARP + l] = run->f->bounds.explicit_cluster;
    uint64_t ws = run->opts ? run->opts->grid_workspace : 0;
    R[SIM_SR_ENVREG1 * SIM_WARP + l] = ws >> 32;
    R[SIM_SR_ENVREG2 * SIM_WARP + l] = ws & 0xffffffffu;
  }
}

/* The rows that change from block to block: its index, which cluster, and where in it. Their
 * values are worked out once per block, then copied into each warp's rows (divisions per lane
 * cost a vector add a fifth of its time). */
enum { BLOCK_ROWS = 10 };
static const int block_row_ids[BLOCK_ROWS] = {
    SIM_SR_CTAID_X,         SIM_SR_CTAID_Y,         SIM_SR_CTAID_Z,
    SIM_SR_CLUSTER_CTAID_X, SIM_SR_CLUSTER_CTAID_Y, SIM_SR_CLUSTER_CTAID_Z,
    SIM_SR_CLUSTERID_X,     SIM_SR_CLUSTERID_Y,     SIM_SR_CLUSTERID_Z,
    SIM_SR_CLUSTER_CTARANK};

/* The values of block_row_ids' rows for the block at b. */
static void block_values(const sim_run *run, const unsigned b[3], uint64_t v[BLOCK_ROWS]) {
  unsigned c[3];
  cluster_shape(run, c);
  for (int i = 0; i < 3; i++) {
    v[i] = b[i];
    v[3 + i] = b[i] % c[i];
    v[6 + i] = b[i] / c[i];
  }
  v[9] = b[0] % c[0] + (uint64_t)(b[1] % c[1]) * c[0] + (uint64_t)(b[2] % c[2]) * c[0] * c[1];
}

/* Adds to *used the rows of block_row_ids among rows[0 .. n-1]. */
static void note_rows(const int32_t *rows, int n, unsigned *used) {
  for (int j = 0; j < n; j++)
    for (int k = 0; k < BLOCK_ROWS; k++)
      if (rows[j] == block_row_ids[k]) *used |= 1u << k;
}

/* The rows of block_row_ids (bit k for row k) that an instruction of the module may read: only
 * those are filled per block, most kernels reading %ctaid.x alone. A field that names a
 * predicate, not a row, can only add a row. Under the debugger, which may show any row, all. */
static unsigned used_block_rows(const sim_run *run) {
  if (run->dbg) return (1u << BLOCK_ROWS) - 1;
  const sim_module *m = run->m;
  unsigned used = 0;
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    const int32_t rows[] = {in->a, in->b, in->c, in->e, in->d};
    note_rows(rows, 5, &used);
    note_rows(in->v, 4, &used);
    if (in->op == SIM_OP_TENSOR) {
      const sim_tensor *t = &m->tensor[in->aux];
      note_rows(t->d, 8, &used);
      note_rows(t->ra, 8, &used);
      note_rows(t->rb, 8, &used);
      note_rows(t->rc, 8, &used);
    }
  }
  return used;
}

/* Each row by doubling copies of constant sizes, which compile to a few vector moves: the plain
 * loop stayed scalar at -O2, 140 host instructions a row, 3% of a vector add's time. */
static void block_fill(uint64_t *R, const uint64_t v[BLOCK_ROWS], unsigned used) {
  for (; used; used &= used - 1) {
    int k = __builtin_ctz(used);
    uint64_t *row = R + block_row_ids[k] * SIM_WARP;
    row[0] = row[1] = v[k];
    memcpy(row + 2, row, 2 * sizeof *row);
    memcpy(row + 4, row, 4 * sizeof *row);
    memcpy(row + 8, row, 8 * sizeof *row);
    memcpy(row + 16, row, 16 * sizeof *row);
  }
}

/* Fills the rows that do not change within a launch for warp wi. */
static void warp_rows(const sim_run *run, sim_warp *w, int wi) {
  const sim_module *m = run->m;
  uint64_t *R = w->R;
  for (int c = 0; c < m->nrows - m->const_first; c++)
    for (int l = 0; l < SIM_WARP; l++) R[(m->const_first + c) * SIM_WARP + l] = m->consts[c];
  unsigned bx = run->block.x, by = run->block.y;
  for (int l = 0; l < SIM_WARP; l++) {
    unsigned lin = (unsigned)(wi * SIM_WARP + l);
    R[SIM_SR_TID_X * SIM_WARP + l] = lin % bx;
    R[SIM_SR_TID_Y * SIM_WARP + l] = (lin / bx) % by;
    R[SIM_SR_TID_Z * SIM_WARP + l] = lin / (bx * by);
    R[SIM_SR_NTID_X * SIM_WARP + l] = run->block.x;
    R[SIM_SR_NTID_Y * SIM_WARP + l] = run->block.y;
    R[SIM_SR_NTID_Z * SIM_WARP + l] = run->block.z;
    R[SIM_SR_NCTAID_X * SIM_WARP + l] = run->grid.x;
    R[SIM_SR_NCTAID_Y * SIM_WARP + l] = run->grid.y;
    R[SIM_SR_NCTAID_Z * SIM_WARP + l] = run->grid.z;
    R[SIM_SR_LANEID * SIM_WARP + l] = (uint64_t)l;
    R[SIM_SR_WARPID * SIM_WARP + l] = (uint64_t)wi;
    R[SIM_SR_NWARPID * SIM_WARP + l] = 64;
    R[SIM_SR_LANEMASK_EQ * SIM_WARP + l] = 1u << l;
    R[SIM_SR_LANEMASK_LT * SIM_WARP + l] = (1u << l) - 1;
    R[SIM_SR_LANEMASK_LE * SIM_WARP + l] = (uint32_t)((2ull << l) - 1);
    R[SIM_SR_LANEMASK_GT * SIM_WARP + l] = (uint32_t)~((2ull << l) - 1);
    R[SIM_SR_LANEMASK_GE * SIM_WARP + l] = (uint32_t)~((1u << l) - 1);
    R[SIM_SR_DYNSMEM * SIM_WARP + l] = (run->k->static_shared + 15) / 16 * 16;
    R[SIM_SR_DYNSMEM_SIZE * SIM_WARP + l] = run->dyn_shared;
    /* in the units the H200 allocates shared memory in, 128 bytes (measured: 1,520 bytes of
     * static and dynamic shared memory read as 1,536) */
    R[SIM_SR_TOTAL_SMEM * SIM_WARP + l] = (run->shared_user + 127) / 128 * 128;
    R[SIM_SR_SMID * SIM_WARP + l] = 0;
    R[SIM_SR_NSMID * SIM_WARP + l] = (uint64_t)run->dev->desc.sm_count;
    /* The GPU reserves 1 KiB of shared memory per block (for the system) on top of what the
     * kernel uses; %aggr_smem_size counts it, %total_smem_size does not. */
    R[SIM_SR_AGGR_SMEM * SIM_WARP + l] = run->shared_user + SIM_RESERVED_SMEM;
    R[SIM_SR_GRIDID * SIM_WARP + l] = run->gridid;
    R[SIM_SR_ZERO * SIM_WARP + l] = 0;
    R[SIM_SR_LCOPY * SIM_WARP + l] = run->local_plain;
  }
  cluster_rows(run, w->R);
}

static void slot_free(const sim_run *run, sim_slot *s) {
  if (s->warps)
    for (int i = 0; i < run->nwarps; i++) {
      sim_warp *w = &s->warps[i];
      free(w->R);
      free(w->P);
      free(w->stack);
      free(w->local);
      free(w->fparam);
      free(w->ready);
      free(w->save);
      sim_nan_free(w->nan);
      sim_stale_free(w->stale);
    }
  free(s->warps);
  free(s->shared);
  free(s->shadow);
  free(s->shadow_pc);
  free(s->shadow_clk);
  sim_hb_free(s->hb);
  free(s->iset);
  memset(s, 0, sizeof *s);
  s->block = -1;
}

/* The warps, shared memory and shadow of one resident block. -1 when out of memory, with what
 * was allocated left for slot_free. */
static int slot_alloc(const sim_run *run, sim_slot *s) {
  const sim_module *m = run->m;
  memset(s, 0, sizeof *s);
  s->block = -1;
  s->warps = calloc((size_t)run->nwarps, sizeof *s->warps);
  s->shared = calloc(run->shared_total + 16, 1);
  if (!s->warps || !s->shared) return -1;
  if (run->opts && run->opts->race_check) {
    /* four planes of cells, one per byte of a word (sim_race.c) */
    s->shadow_plane = (run->shared_total + 16) / 4;
    s->shadow = calloc(4 * s->shadow_plane, sizeof *s->shadow);
    s->shadow_pc = calloc(4 * s->shadow_plane, sizeof *s->shadow_pc);
    if (!s->shadow || !s->shadow_pc) return -1;
    if (run->hb) { /* the release/acquire model (sim_hb.c) */
      s->shadow_clk = calloc(4 * s->shadow_plane, sizeof *s->shadow_clk);
      s->hb = sim_hb_new(run->nwarps);
      if (!s->shadow_clk || !s->hb) return -1;
    }
  }
  if ((run->san & SIM_SAN_INIT) && !(s->iset = calloc(run->shared_total / 8 + 1, 1))) return -1;
  for (int i = 0; i < run->nwarps; i++) {
    sim_warp *w = &s->warps[i];
    w->index = i;
    w->R = calloc((size_t)m->nrows * SIM_WARP, sizeof *w->R);
    w->P = calloc((size_t)m->npreds + 1, sizeof *w->P);
    w->cap = 16;
    w->stack = malloc((size_t)w->cap * sizeof *w->stack);
    w->local = calloc((size_t)SIM_WARP * run->local_stride + 16, 1);
    w->fparam = calloc((size_t)SIM_WARP * run->fstride + 16, 1);
    if (!w->R || !w->P || !w->stack || !w->local || !w->fparam) return -1;
    if (run->lat && !(w->ready = calloc((size_t)m->nrows + 1, sizeof *w->ready))) return -1;
    if ((run->san & SIM_SAN_NAN) && !(w->nan = sim_nan_alloc(m))) return -1;
    warp_rows(run, w, i);
  }
  return 0;
}

/* Points the worker's views at slot i, saving the running slot's barrier epoch first. */
static inline void show(sim_worker *wk, int i) {
  int other = i != wk->cur; /* the race check's put-off accesses are the running block's */
  if (other) sim_race_hide(wk);
  wk->slots[wk->cur].epoch = wk->epoch;
  sim_slot *s = &wk->slots[i];
  wk->cur = i;
  wk->warps = s->warps;
  wk->shared = s->shared;
  wk->shadow = s->shadow;
  wk->shadow_pc = s->shadow_pc;
  wk->shadow_clk = s->shadow_clk;
  wk->hb = s->hb;
  wk->shadow_plane = s->shadow_plane;
  wk->iset = s->iset;
  wk->epoch = s->epoch;
  wk->bx = s->bx;
  wk->by = s->by;
  wk->bz = s->bz;
  if (other) sim_race_shown(wk);
}

int sim_sched_init(sim_worker *wk) {
  wk->slots = calloc(1, sizeof *wk->slots);
  if (!wk->slots) return -1;
  wk->nslots = 1;
  wk->slice = SIM_SLICE;
  wk->block_rows = used_block_rows(wk->run);
  if (slot_alloc(wk->run, &wk->slots[0]) < 0) return -1;
  show(wk, 0);
  return 0;
}

void sim_sched_free(sim_worker *wk) {
  for (int i = 0; wk->slots && i < wk->nslots; i++) slot_free(wk->run, &wk->slots[i]);
  free(wk->slots);
  free(wk->snap_r);
  free(wk->snap_p);
  free(wk->snap_s);
  wk->slots = NULL;
  wk->snap_r = NULL;
  wk->snap_p = NULL;
  wk->snap_s = NULL;
}

/* A slot holding no block, allocated when all are in use; -1 when out of memory. */
static int free_slot(sim_worker *wk) {
  for (int i = 0; i < wk->nslots; i++)
    if (wk->slots[i].block < 0) return i;
  sim_slot *s = realloc(wk->slots, (size_t)(wk->nslots + 1) * sizeof *s);
  if (!s) return -1;
  wk->slots = s;
  if (slot_alloc(wk->run, &s[wk->nslots]) < 0) {
    slot_free(wk->run, &s[wk->nslots]);
    return -1;
  }
  return wk->nslots++;
}

/* Under the init check a block's shared memory, and each thread's registers and local memory,
 * start as SIM_POISON bytes rather than zero (or what the slot's last block left), so that an
 * unzeroed accumulator or an uninitialised local gives a result that is visibly wrong
 * (0xcbcbcbcb: -875836469 as an int, about -2.67e7 as a float) instead of one that happens to
 * be right. The reserved region stays zero: the GPU hands it over zeroed and cooperative_groups
 * reads its barriers there unwritten. Turned down: poisoning always, which would change every
 * launch's results from the GPU's (whose registers of a fresh launch mostly read zero). */
static void poison_shared(sim_worker *wk) {
  size_t res = wk->run->k->reserved_shared, total = wk->run->shared_total;
  if (res < total) memset(wk->shared + res, SIM_POISON, total - res);
}

static void poison_warp(const sim_run *run, sim_warp *w) {
  const sim_module *m = run->m;
  if (m->nuser > SIM_SR_COUNT)
    memset(w->R + (size_t)SIM_SR_COUNT * SIM_WARP, SIM_POISON,
           (size_t)(m->nuser - SIM_SR_COUNT) * SIM_WARP * sizeof *w->R);
  memset(w->local, SIM_POISON, (size_t)SIM_WARP * run->local_stride);
}

/* The block handed out nth (sim_order.c) starts in slot i, which becomes the running one. */
static void block_start(sim_worker *wk, int i, long long nth) {
  sim_run *run = wk->run;
  sim_slot *s = &wk->slots[i];
  long long b = sim_order_block(run, nth);
  s->block = b;
  s->nth = nth;
  s->stuck = 0;
  s->quiet = 0;
  if (s->bar_open) { /* a phase the last block left open (a barrier's record is zero when shut) */
    memset(s->bar_warps, 0, sizeof s->bar_warps);
    memset(s->bar_expect, 0, sizeof s->bar_expect);
    memset(s->bar_op, 0, sizeof s->bar_op);
    memset(s->bar_tmax, 0, sizeof s->bar_tmax);
    s->bar_open = 0;
  }
  s->mbar_waiting = 0;
  s->bar_woke = 0;
  s->bx = (unsigned)(b % run->grid.x);
  s->by = (unsigned)((b / run->grid.x) % run->grid.y);
  s->bz = (unsigned)(b / ((long long)run->grid.x * run->grid.y));
  wk->used++;
  show(wk, i);
  wk->epoch++;
  /* As on a GPU, a block's shared memory holds what the slot's last block left (zero for the
   * first): an unzeroed accumulator is then wrong from the second block on, as it is there,
   * rather than right by the simulator's grace. The reserved region is zeroed (see below). */
  memset(wk->shared, 0, wk->run->k->reserved_shared < run->shared_total
                            ? wk->run->k->reserved_shared : run->shared_total);
  if (wk->iset) sim_init_block(wk);
  if (wk->hb) sim_hb_block(wk->hb);
  if (run->san & SIM_SAN_INIT) poison_shared(wk);
  uint64_t rows[BLOCK_ROWS];
  block_values(run, (const unsigned[3]){s->bx, s->by, s->bz}, rows);
  for (int k = 0; k < run->nwarps; k++) {
    sim_warp *w = &wk->warps[k];
    int n = run->nthreads - k * SIM_WARP;
    w->live = n >= SIM_WARP ? SIM_FULL : (1u << n) - 1;
    w->sp = 1;
    w->stack[0] = (sim_frame){run->f->first, -1, w->live};
    w->ncalls = 0;
    w->depth = 0;
    w->bar_part = 0;
    w->bar_named = 0;
    w->save_len = 0;
    w->stack_top = run->m->local_frame; /* the call stack follows the static locals */
    w->state = SIM_W_RUN;
    w->ncalm = 0; /* what a probe learnt of the last block's loops: each block learns its own */
    if (run->san & SIM_SAN_INIT) poison_warp(run, w);
    if (w->nan) sim_nan_clear(w->nan);
    if (w->stale) sim_stale_clear(w->stale);
    block_fill(w->R, rows, wk->block_rows);
    if (run->lat) sim_lat_warp_start(run, w);
  }
  if (wk->slice != SIM_SLICE_WAIT && atomic_load_explicit(&run->spin_seen, memory_order_relaxed))
    wk->slice = SIM_SLICE_WAIT;
}

/* ---- spin detection ---- */

/* What one loop iteration could change of a warp, besides its memory (a write ends a probe). */
typedef struct snap {
  int sp, ncalls;
  uint32_t live, cc;
  sim_retaddr calls[64];
} snap;

static int snapshot(sim_worker *wk, const sim_warp *w, snap *ps) {
  const sim_module *m = wk->run->m;
  size_t rows = (size_t)(m->nuser - SIM_SR_COUNT) * SIM_WARP;
  if (!wk->snap_r) {
    wk->snap_r = malloc((rows + 1) * sizeof *wk->snap_r);
    wk->snap_p = malloc(((size_t)m->npreds + 1) * sizeof *wk->snap_p);
    if (!wk->snap_r || !wk->snap_p) return -1;
  }
  if (w->sp > wk->snap_cap) {
    sim_frame *f = realloc(wk->snap_s, (size_t)w->cap * sizeof *f);
    if (!f) return -1;
    wk->snap_s = f;
    wk->snap_cap = w->cap;
  }
  memcpy(wk->snap_r, w->R + SIM_SR_COUNT * SIM_WARP, rows * sizeof *wk->snap_r);
  memcpy(wk->snap_p, w->P, ((size_t)m->npreds + 1) * sizeof *wk->snap_p);
  memcpy(wk->snap_s, w->stack, (size_t)w->sp * sizeof *w->stack);
  ps->sp = w->sp;
  ps->ncalls = w->ncalls;
  ps->live = w->live;
  ps->cc = w->cc;
  memcpy(ps->calls, w->calls, (size_t)w->ncalls * sizeof *w->calls);
  return 0;
}

static int same_state(const sim_worker *wk, const sim_warp *w, const snap *ps) {
  const sim_module *m = wk->run->m;
  size_t rows = (size_t)(m->nuser - SIM_SR_COUNT) * SIM_WARP;
  return w->sp == ps->sp && w->ncalls == ps->ncalls && w->live == ps->live && w->cc == ps->cc &&
         !memcmp(wk->snap_s, w->stack, (size_t)w->sp * sizeof *w->stack) &&
         !memcmp(ps->calls, w->calls, (size_t)w->ncalls * sizeof *w->calls) &&
         !memcmp(wk->snap_p, w->P, ((size_t)m->npreds + 1) * sizeof *wk->snap_p) &&
         !memcmp(wk->snap_r, w->R + SIM_SR_COUNT * SIM_WARP, rows * sizeof *wk->snap_r);
}

/* Before w runs the instruction at the top of its stack: when it reads memory another block
 * could write, remember where and what, to say what a spinning warp waits on. */
static void note_read(const sim_module *m, sim_warp *w, int *ld, uint64_t *addr) {
  const sim_frame *t = &w->stack[w->sp - 1];
  if (t->pc < 0 || t->pc >= m->ncode) return;
  const sim_inst *in = &m->code[t->pc];
  uint32_t em = t->mask & w->live;
  if ((in->op != SIM_OP_LD && in->op != SIM_OP_ATOM) || !em || in->a < 0) return;
  int sp = in->space;
  if (sp != SIM_SP_GLOBAL && sp != SIM_SP_GENERIC && sp != SIM_SP_SHARED) return;
  *ld = t->pc;
  *addr = w->R[in->a * SIM_WARP + __builtin_ctz(em)] + (uint64_t)in->imm;
}

/* A loop pass of at most TRAIL instructions is looked at for what its exit test reads. */
#define TRAIL 512

/* Whether the loop pass trail[0..n) (the pcs one turn ran) decides to go on or leave by
 * something it read from memory, a flag: a register a load or atomic writes is followed through
 * whatever reads it, over the pass and again for values carried from one turn to the next, to
 * the guard of a branch. Rows and predicates are followed in one set each, and an operand is
 * taken as tainted if its index is tainted in either, so the answer errs toward a flag, the
 * message that was given before; an instruction whose operands are not all in a sim_inst (a
 * call, a tensor core's) makes the answer a flag outright. */
static int exit_reads_memory(const sim_module *m, const int *trail, int n) {
  if (n < 0 || n > TRAIL) return 1;
  size_t rows = (size_t)m->nuser + 1, preds = (size_t)m->npreds + 1;
  unsigned char *tr = calloc(rows + preds, 1), *tp = tr ? tr + rows : NULL;
  if (!tr) return 1;
#define TAINTED(x) ((x) >= 0 && (((size_t)(x) < rows && tr[x]) || ((size_t)(x) < preds && tp[x])))
  int flag = 0, changed = 1;
  for (int pass = 0; pass < 8 && changed && !flag; pass++) {
    changed = 0;
    for (int k = 0; k < n && !flag; k++) {
      const sim_inst *in = &m->code[trail[k]];
      int op = in->op, src = 0;
      if (op == SIM_OP_TENSOR || op == SIM_OP_CALL || op == SIM_OP_CALLS || op == SIM_OP_CALLI ||
          op == SIM_OP_TEX) {
        flag = 1;
        break;
      }
      if (op == SIM_OP_BRA) {
        if (in->guard >= 0 && (size_t)in->guard < preds && tp[in->guard]) flag = 1;
        continue;
      }
      if (op == SIM_OP_LD || op == SIM_OP_ATOM || op == SIM_OP_MBAR || op == SIM_OP_MBARWAIT)
        src = 1;
      else {
        src = TAINTED(in->a) || TAINTED(in->b) || TAINTED(in->c) || TAINTED(in->e);
        for (int v = 0; v < 4 && op != SIM_OP_ST; v++) src |= TAINTED(in->v[v]);
      }
      if (!src) continue;
      unsigned char *set = sim_writes_pred(op) ? tp : tr;
      size_t lim = sim_writes_pred(op) ? preds : rows;
      int dst[6] = {in->d, in->d2, -1, -1, -1, -1};
      if (op == SIM_OP_LD)
        for (int v = 0; v < 4; v++) dst[2 + v] = in->v[v];
      for (int j = 0; j < 6; j++) {
        int x = dst[j];
        if (x < 0) continue;
        unsigned char *s2 = j == 1 ? tp : set; /* d2: setp's and shfl's second predicate */
        size_t l2 = j == 1 ? preds : lim;
        if ((size_t)x < l2 && !s2[x]) {
          s2[x] = 1;
          changed = 1;
        }
      }
    }
  }
#undef TAINTED
  free(tr);
  return flag;
}

/* Runs w one instruction at a time, at most max, from a snapshot of its state, until it comes
 * back to the snapshot's pc (then it stops there, *back set). Returns SIM_W_* as sim_exec_warp
 * does, with w->spin set when it came back with its state unchanged, having written nothing;
 * *used counts the instructions run. Out of memory for the snapshot, it runs max unprobed. */
static int probe(sim_worker *wk, sim_warp *w, long max, long *used, int *back) {
  const sim_module *m = wk->run->m;
  snap ps;
  w->spin = 0;
  *used = 0;
  *back = 0;
  if (w->sp == 0 || snapshot(wk, w, &ps) < 0) {
    *used = max;
    return sim_exec_warp(wk, w, max);
  }
  int pc0 = w->stack[w->sp - 1].pc, ld = -1, trail[TRAIL], nt = 0;
  uint64_t w0 = wk->writes, addr = 0;
  while (*used < max) {
    note_read(m, w, &ld, &addr);
    if (nt < TRAIL) trail[nt] = w->stack[w->sp - 1].pc;
    nt++;
    int r = sim_exec_warp(wk, w, 1);
    ++*used;
    if (r != SIM_W_RUN || wk->writes != w0) return r;
    if (w->sp && w->stack[w->sp - 1].pc == pc0) {
      *back = 1;
      if (!same_state(wk, w, &ps)) return r;
      w->spin = 1;
      w->spin_pc = pc0;
      w->spin_ld = ld;
      w->spin_addr = addr;
      w->spin_waits = ld >= 0 && exit_reads_memory(m, trail, nt);
      return r;
    }
  }
  return SIM_W_RUN;
}

/* Probes w, which has just taken the same backward branch SIM_LOOP_TURNS times writing
 * nothing: one pass of the loop decides. A loop that changed something (a compute loop) is
 * remembered as calm, so that the block's warp is not probed there again. */
static int probe_loop(sim_worker *wk, sim_warp *w, uint64_t *g) {
  uint64_t g0 = atomic_load(&wk->run->wgen);
  long used;
  int back;
  int r = probe(wk, w, SIM_PROBE, &used, &back);
  if (w->spin && *g == UINT64_MAX) *g = g0;
  if (r == SIM_W_RUN && !w->spin) {
    w->calm[w->ncalm++ % SIM_CALM] = w->loop_pc;
    w->loop_pc = -1;
  }
  return r;
}

/* The first part of a turn: at most max instructions, during which a warp that takes a backward
 * branch SIM_LOOP_TURNS times without writing is probed at once (probe_loop), and its turn ends
 * there when it spins. So a warp that waits for another of its block polls a few times a turn,
 * as on a GPU, where it used to poll for the whole slice; the count depends on the warp's own
 * instructions and its block's memory alone, so it is the same for any number of host threads.
 * Under the debugger or the NaN check, which run the warp in pieces, the pause is seen at the
 * end of the piece. */
static int run_watched(sim_worker *wk, sim_warp *w, long max, uint64_t *g) {
  const uint64_t c0 = w->clock; /* the warp's clock counts the instructions it ran */
  w->loop_pc = -1;
  for (;;) {
    long left = max - (long)(w->clock - c0);
    if (left <= 0) return SIM_W_RUN;
    w->loop_watch = 1;
    w->loop_paused = 0;
    int r = sim_exec_warp(wk, w, left);
    w->loop_watch = 0;
    if (r != SIM_W_RUN || !w->loop_paused) return r;
    r = probe_loop(wk, w, g);
    if (r != SIM_W_RUN || w->spin) return r;
  }
}

/* One turn of warp w: its slice, loops probed as run_watched says, the last SIM_PROBE
 * instructions probed when it wrote nothing before them (a loop the early look cannot see: one
 * whose backward branch diverges, or whose body writes to no effect). The warp runs exactly the
 * instructions that one sim_exec_warp call for the whole slice would, unless a probe finds it
 * spinning, which ends the turn at once. w->spin is only meaningful when the turn returns
 * SIM_W_RUN. *g receives run->wgen as it was before the first probe of the round that found a
 * warp spinning. */
static inline int exec_turn(sim_worker *wk, sim_warp *w, uint64_t *g) {
  uint64_t w0 = wk->writes, c0 = w->clock;
  w->spin = 0;
  int r = run_watched(wk, w, wk->slice - SIM_PROBE, g);
  if (r != SIM_W_RUN || w->spin) return r;
  long rest = wk->slice - (long)(w->clock - c0); /* SIM_PROBE, less after an early probe */
  if (wk->writes != w0) return sim_exec_warp(wk, w, rest);
  uint64_t g0 = atomic_load(&wk->run->wgen);
  long used;
  int back;
  r = probe(wk, w, rest, &used, &back);
  if (w->spin && *g == UINT64_MAX) *g = g0;
  if (r != SIM_W_RUN || w->spin || used >= rest) return r;
  return sim_exec_warp(wk, w, rest - used);
}

/* ---- one block ---- */

/* bar.red: every live thread of the block waits at it; its predicate, counted (popc) or combined
 * (and, or) over the whole block, is every thread's result. */
static void bar_reduce(sim_worker *wk, const sim_inst *in) {
  sim_run *run = wk->run;
  long count = 0, live = 0;
  for (int i = 0; i < run->nwarps; i++) {
    sim_warp *w = &wk->warps[i];
    if (w->state != SIM_W_BAR) continue;
    uint32_t p = w->P[in->imm];
    if (in->flags & SIM_IF_NEG_PRED) p = ~p;
    count += sim_popcount(p & w->live);
    live += sim_popcount(w->live);
  }
  int v = in->sub == SIM_BAR_AND ? count == live : count != 0;
  for (int i = 0; i < run->nwarps; i++) {
    sim_warp *w = &wk->warps[i];
    if (w->state != SIM_W_BAR) continue;
    if (in->sub == SIM_BAR_POPC)
      for (int l = 0; l < SIM_WARP; l++) {
        if (w->live >> l & 1) w->R[in->d * SIM_WARP + l] = (uint64_t)count;
      }
    else
      w->P[in->d] = (w->P[in->d] & ~w->live) | (v ? w->live : 0);
  }
}

/* No warp of the block could run at its turn and some wait at a barrier: the whole-block barrier
 * they all wait at completes; warps at different barriers, or one waiting at a barrier with a
 * thread count (which only arrivals complete, sim_barrier.c), can never go on, and fail the
 * launch. A warp that a later warp's arrival released in the same round runs first. */
static int release_barrier(sim_worker *wk) {
  sim_run *run = wk->run;
  sim_slot *s = &wk->slots[wk->cur];
  sim_warp *first = NULL;
  if (s->bar_woke) { /* a barrier with a count released warps this round: they run first */
    s->bar_woke = 0;
    return 0;
  }
  for (int i = 0; (s->bar_open || s->mbar_waiting) && i < run->nwarps; i++)
    if (wk->warps[i].state == SIM_W_BAR && wk->warps[i].bar_named)
      return sim_bar_stuck(wk, &wk->warps[i]);
  if ((run->san & SIM_SAN_SYNC) && sim_sync_check(wk) < 0) return -1;
  for (int i = 0; i < run->nwarps; i++) {
    sim_warp *w = &wk->warps[i];
    if (w->state != SIM_W_BAR) continue;
    if (!first) {
      first = w;
      continue;
    }
    if (w->bar_pc != first->bar_pc ||
        (w->bar_id != first->bar_id && !w->bar_part && !first->bar_part)) {
      char a[300], b[300];
      sim_srcline(run->m, &run->m->code[first->bar_pc], a, sizeof a);
      sim_srcline(run->m, &run->m->code[w->bar_pc], b, sizeof b);
      return sim_fail(wk, w, __builtin_ctz(w->live), &run->m->code[w->bar_pc],
                      "threads of one block wait at different __syncthreads() (warp %d at %s, "
                      "warp %d at %s): every thread of a block must reach the same barrier",
                      first->index, a, w->index, b);
    }
  }
  if (first && run->m->code[first->bar_pc].sub) bar_reduce(wk, &run->m->code[first->bar_pc]);
  if (run->lat) sim_lat_barrier(wk);
  for (int i = 0; i < run->nwarps; i++)
    if (wk->warps[i].state == SIM_W_BAR) wk->warps[i].state = SIM_W_RUN;
  wk->epoch++;
  return 0;
}

/* Tells the other workers this one wrote memory since it last said so. */
static void tell(sim_worker *wk) {
  if (wk->writes == wk->writes_told) return;
  wk->writes_told = wk->writes;
  atomic_fetch_add(&wk->run->wgen, 1);
}

/* Runs the block in the running slot, its warps round-robin between barriers: until it ends,
 * fails, has every running warp spinning (BLOCK_WAITS; the others wait at a barrier or are
 * done) or has run SIM_QUIET instructions without writing (BLOCK_QUIET). When no warp can run,
 * the barrier is released if every waiting warp waits at the same bar.sync, and an error names
 * the lines otherwise, so a mismatched barrier ends the launch with a message, not a hang. */
static int block_run(sim_worker *wk) {
  sim_run *run = wk->run;
  sim_slot *s = &wk->slots[wk->cur];
  for (;;) {
    int running = 0, waiting = 0, spinning = 0;
    uint64_t w0 = wk->writes, g = UINT64_MAX, w_first = 0;
    for (int i = 0; i < run->nwarps; i++) {
      sim_warp *w = &wk->warps[i];
      if (w->state == SIM_W_RUN) {
        int r = exec_turn(wk, w, &g);
        if (r == SIM_W_ERR) return BLOCK_ERR;
        if (r == SIM_W_RUN && w->spin && !spinning++) w_first = wk->writes;
      }
      running += w->state == SIM_W_RUN;
      waiting += w->state == SIM_W_BAR;
    }
    if (atomic_load(&run->failed) || interrupted(run) || past_error(run, s->nth) ||
        error_overdue(run))
      return BLOCK_ERR;
    if (running) {
      if (spinning == running && wk->writes == w_first) {
        s->stuck = 1;
        s->seen_w = wk->writes;
        s->seen_g = g;
        return BLOCK_WAITS;
      }
      /* another worker's blocks wait: tell them of writes from now on */
      if (wk->slice != SIM_SLICE_WAIT
          && atomic_load_explicit(&run->spin_seen, memory_order_relaxed))
        wk->slice = SIM_SLICE_WAIT;
      if (wk->slice == SIM_SLICE_WAIT) tell(wk);
      if (wk->writes != w0) {
        s->quiet = 0;
        continue;
      }
      s->quiet += (uint64_t)running * (uint64_t)wk->slice; /* each ran a whole slice */
      if (s->quiet >= SIM_QUIET) {
        s->quiet = 0;
        return BLOCK_QUIET;
      }
      continue;
    }
    if (!waiting) {
      if (run->lat) sim_lat_block_end(wk);
      return BLOCK_DONE;
    }
    if (release_barrier(wk) < 0) return BLOCK_ERR;
  }
}

static void slot_release(sim_worker *wk, int i) {
  wk->slots[i].block = -1;
  wk->used--;
}

/* After block_run: frees the slot of a block that ended; from the first block found waiting on,
 * every worker uses short slices. A block that failed, or stopped for an earlier block's error,
 * frees its slot too while the launch goes on (several workers, sim_fail). */
static int finish(sim_worker *wk, int r) {
  sim_run *run = wk->run;
  wk->yielded = r == BLOCK_QUIET;
  if (r == BLOCK_ERR && (atomic_load(&run->failed) || interrupted(run))) return SIM_STEP_ERR;
  if (r == BLOCK_ERR) {
    slot_release(wk, wk->cur);
    return SIM_STEP_MORE;
  }
  if (r == BLOCK_DONE) {
    slot_release(wk, wk->cur);
    if (wk->slice == SIM_SLICE_WAIT) tell(wk);
    return SIM_STEP_BLOCK;
  }
  if (r == BLOCK_WAITS && wk->slice != SIM_SLICE_WAIT) {
    wk->slice = SIM_SLICE_WAIT;
    atomic_store(&run->spin_seen, 1);
  }
  return SIM_STEP_MORE;
}

static int run_slot(sim_worker *wk, int i) {
  show(wk, i);
  wk->slots[i].stuck = 0;
  return finish(wk, block_run(wk));
}

/* Probes the spinning warps of the parked block in slot i again: 1 when one of them has moved
 * on (the block can run), 0 when all still spin, -1 on an error. A warp whose loop came back
 * changed (it read a new value, say a counter that went up but not far enough) gets a second
 * probe: all the blocks at a grid barrier see the counter move as each one arrives, and running
 * each of them for a slice every time would cost the square of their number in slices. */
static int reprobe(sim_worker *wk, int i) {
  sim_slot *s = &wk->slots[i];
  show(wk, i);
  uint64_t g = atomic_load(&wk->run->wgen);
  for (int k = 0; k < wk->run->nwarps; k++) {
    sim_warp *w = &wk->warps[k];
    if (w->state != SIM_W_RUN) continue;
    long used;
    int back = 0;
    w->spin = 0;
    for (int tries = 0; tries < 2 && !w->spin; tries++) {
      if (probe(wk, w, SIM_PROBE, &used, &back) == SIM_W_ERR) return -1;
      if (!back || w->state != SIM_W_RUN) break;
    }
    if (!w->spin) return 1;
  }
  s->seen_w = wk->writes;
  s->seen_g = g;
  return 0;
}

/* ---- the watchdog ---- */

static long long min_ll(long long a, long long b) { return a < b ? a : b; }

/* ", reading flags[3] (i32[64], parameter 'flags')": what a spinning warp's loop reads; or why it
 * reads nothing. */
static void describe_wait(const sim_run *run, const sim_warp *w, char *buf, size_t len) {
  if (w->spin_ld < 0) { /* a loop of registers alone: a numeric one, or a flag's load hoisted */
    snprintf(buf, len, ", in a loop that reads no memory at all and whose every turn leaves its "
             "registers as they were, so its condition can never change (if it waits for a "
             "value another thread writes, the compiler read it once, before the loop: read it "
             "through a volatile pointer or with an atomic)");
    return;
  }
  if (!w->spin_waits) { /* it reads, but leaves or stays by its registers alone */
    snprintf(buf, len, ", in a loop whose exit test reads only registers, and every turn "
             "leaves them as they were: a counter that never moves (a step of 0, or an increment "
             "left out)");
    return;
  }
  buf[0] = 0;
  const sim_inst *in = &run->m->code[w->spin_ld];
  uint64_t a = w->spin_addr, es = in->size ? in->size : 1;
  if (in->space == SIM_SP_SHARED || a - SIM_SHARED_WIN < SIM_WIN_SIZE) {
    snprintf(buf, len, ", reading shared memory at byte %llu",
             (unsigned long long)(in->space == SIM_SP_SHARED ? a : a - SIM_SHARED_WIN));
    return;
  }
  int i = sim_alloc_find(run->tab, run->ntab, a, 1);
  if (i < 0) return;
  const sim_alloc *t = &run->tab[i];
  unsigned long long idx = (unsigned long long)((a - t->base) / es);
  const char *nm = NULL;
  if (t->param >= 0 && run->opts && run->opts->param_names) nm = run->opts->param_names[t->param];
  if (nm)
    snprintf(buf, len, ", reading %s[%llu] (%s, parameter '%s')", nm, idx, t->label, nm);
  else if (t->param >= 0)
    snprintf(buf, len, ", reading element %llu of %s (parameter %d)", idx, t->label, t->param);
  else
    snprintf(buf, len, ", reading element %llu of %s", idx, t->label);
}

/* A walk over the warps still running (SIM_W_RUN) of every worker's resident blocks, in worker,
 * slot and warp order, for the deadlock's message: start from {0}, call next_spinner until it
 * gives NULL; slot is the block of the warp it gave. */
typedef struct spin_walk {
  int k, i, j;
  const sim_slot *slot;
} spin_walk;

static const sim_warp *next_spinner(const sim_run *run, spin_walk *c) {
  for (; c->k < run->nw; c->k++, c->i = 0) {
    const sim_worker *o = &run->wks[c->k];
    for (; o->slots && c->i < o->nslots; c->i++, c->j = 0) {
      const sim_slot *s = &o->slots[c->i];
      if (s->block < 0) continue;
      while (c->j < run->nwarps) {
        const sim_warp *w = &s->warps[c->j++];
        if (w->state != SIM_W_RUN) continue;
        c->slot = s;
        return w;
      }
    }
  }
  return NULL;
}

/* Appends one line per spinning warp of every worker's resident blocks (the first few). */
static void list_spinners(const sim_run *run, char *buf, size_t len) {
  int shown = 0, more = 0;
  size_t n = strlen(buf);
  spin_walk c = {0};
  for (const sim_warp *w; (w = next_spinner(run, &c));) {
    if (shown == 6 || n + 1 >= len) {
      more++;
      continue;
    }
    char src[300], what[300];
    int pc = w->spin_ld >= 0 && w->spin_waits ? w->spin_ld : w->spin_pc;
    sim_srcline(run->m, &run->m->code[pc], src, sizeof src);
    describe_wait(run, w, what, sizeof what);
    snprintf(buf + n, len - n, "\n  block (%u,%u,%u) warp %d spins at %s%s", c.slot->bx,
             c.slot->by, c.slot->bz, w->index, src, what);
    n = strlen(buf);
    shown++;
  }
  if (more && n + 1 < len)
    snprintf(buf + n, len - n, "\n  ... and %d more spinning warp%s", more, more == 1 ? "" : "s");
}

/* No spinning warp's loop leaves by what it reads from memory: what they wait for is no flag but
 * a value of their own registers that their loop never changes (a numeric loop, a counter that
 * never moves, or a flag's load the compiler hoisted out of it). 2 when some loop reads memory
 * all the same (whose exit test does not look at it), 1 when none reads any, 0: a flag. */
static int registers_only(const sim_run *run) {
  int reads = 0;
  spin_walk c = {0};
  for (const sim_warp *w; (w = next_spinner(run, &c));) {
    if (w->spin_ld >= 0 && w->spin_waits) return 0;
    if (w->spin_ld >= 0) reads = 1;
  }
  return reads ? 2 : 1;
}

/* Whether a warp spins on an atomic (a lock's acquire) with live lanes off the path it runs,
 * parked until that path reaches its reconvergence point: one of them may hold the lock (a lock
 * taken per thread, the other lanes of the winner's warp spinning on it), which a GPU since
 * Volta, scheduling a warp's lanes apart, would run on to its release. The simulator runs one
 * path of a diverged warp at a time and cannot tell whether one does, so the message gives both
 * cases. A wait on a plain load by some lanes (thread 0 polling a flag) is no lock: its parked
 * lanes never took anything. */
static int spins_diverged(const sim_run *run) {
  spin_walk c = {0};
  for (const sim_warp *w; (w = next_spinner(run, &c));)
    if (w->sp > 0 && (w->live & ~w->stack[w->sp - 1].mask) && w->spin_ld >= 0 &&
        run->m->code[w->spin_ld].op == SIM_OP_ATOM)
      return 1;
  return 0;
}

/* "H200" of "NVIDIA H200 (simulated)", into buf: the message says "the modelled" itself. */
static const char *short_name(const char *name, char *buf, size_t len) {
  const char *p = strstr(name, "NVIDIA ");
  snprintf(buf, len, "%s", p ? p + 7 : name);
  char *tag = strstr(buf, " (simulated)");
  if (tag) *tag = '\0';
  return buf;
}

/* Under the debugger: a stop at the first spinning warp of the worker's blocks (it has them
 * all), so that the learner can look at what it waits for. */
static void debug_hang(sim_worker *wk) {
  for (int i = 0; i < wk->nslots; i++) {
    if (wk->slots[i].block < 0) continue;
    for (int k = 0; k < wk->run->nwarps; k++) {
      if (wk->slots[i].warps[k].state != SIM_W_RUN) continue;
      show(wk, i);
      sim_debug_hang(wk->run->dbg, wk, &wk->slots[i].warps[k]);
      return;
    }
  }
}

/* Every warp that could write has stopped for good: ends the launch with a message that says
 * which of the two ways a launch gets here it was, and which warps spin where. */
static int deadlock(sim_worker *wk) {
  sim_run *run = wk->run;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&run->failed, &expected, 1)) return SIM_STEP_ERR;
  if (atomic_load(&run->fault_nth) != LLONG_MAX) return SIM_STEP_ERR; /* the error stands */
  long long started = min_ll(atomic_load(&run->next_block), run->nblocks), resident = 0;
  int regs;
  for (int k = 0; k < run->nw; k++) resident += run->wks[k].used;
  char msg[3000], dev[64];
  if (started < run->nblocks)
    snprintf(msg, sizeof msg,
             "kernel %s can never finish: more blocks wait than could be resident (%d resident "
             "at most on the modelled %s, %lld launched). The %lld resident blocks all spin, "
             "waiting for memory that no running warp will write, and the other %lld cannot "
             "start until one of them ends; a GPU would hang too. Launch at most %d blocks (%d "
             "SMs x %d blocks of %d threads, a limit set by %s), or do not make a block wait for "
             "one that may start after it.",
             run->f->name, run->resident_max, short_name(run->dev->desc.name, dev, sizeof dev),
             run->nblocks, resident, run->nblocks - started, run->resident_max,
             run->dev->desc.sm_count, run->occupancy, run->nthreads, run->occupancy_limit);
  else if (spins_diverged(run))
    snprintf(msg, sizeof msg,
             "kernel %s can never finish on the simulator: lanes of a warp spin on an atomic "
             "while other lanes of the same warp are parked until the loop ends. If one of those "
             "holds what the spinning ones wait for (a lock taken per thread), a GPU since "
             "Volta, which schedules a warp's lanes apart, may finish it, but the simulator runs "
             "one path of a diverged warp at a time and cannot: let one lane of each warp take "
             "the lock, or use atomics that need no lock. If none does, a GPU would hang too.",
             run->f->name);
  else if ((regs = registers_only(run)) != 0)
    snprintf(msg, sizeof msg,
             "kernel %s can never finish: every warp still running repeats a loop that %s and "
             "comes back to the very values it started from, so it can never end "
             "(the others wait at __syncthreads() or have exited); every block launched has "
             "started and %lld of the %lld %s still resident; a GPU would hang too.",
             run->f->name,
             regs == 1 ? "reads no memory" : "leaves by no value it reads from memory",
             resident, run->nblocks, resident == 1 ? "is" : "are");
  else
    snprintf(msg, sizeof msg,
             "kernel %s can never finish: its blocks wait for a flag that is never set. Every "
             "warp still running spins in a loop that reads memory no warp will write any more "
             "(the others wait at __syncthreads() or have exited); every block launched has "
             "started and %lld of the %lld %s still resident; a GPU would hang too.",
             run->f->name, resident, run->nblocks, resident == 1 ? "is" : "are");
  list_spinners(run, msg, sizeof msg);
  pthread_mutex_lock(&run->lock);
  sim_errf(run->err, run->errlen, "%s", msg);
  pthread_mutex_unlock(&run->lock);
  if (run->dbg) debug_hang(wk);
  return SIM_STEP_ERR;
}

static int everyone_waits(sim_run *run, uint64_t g) {
  for (int i = 0; i < run->nw; i++) {
    uint64_t s = atomic_load(&run->stamp[i]);
    if (s != g + 1 && s != SIM_STAMP_GONE) return 0;
  }
  return atomic_load(&run->wgen) == g;
}

/* This worker's blocks all wait, verified against wgen g: the launch is over if every other
 * worker's are too; otherwise give the others the CPU for a while, or until memory changes. */
static int wait_all(sim_worker *wk, uint64_t g) {
  sim_run *run = wk->run;
  if (everyone_waits(run, g)) return deadlock(wk);
  struct timespec ts = {0, 200000};
  for (int k = 0; k < 5; k++) {
    if (atomic_load(&run->wgen) != g || atomic_load(&run->failed) || interrupted(run)) break;
    nanosleep(&ts, NULL);
  }
  return SIM_STEP_MORE;
}

/* ---- the worker's step ---- */

/* Some block is parked: run one that can go on (a parked block is probed again when memory may
 * have changed since it was judged waiting), newest first, which is the order in which a chain
 * of blocks each waiting for the next unwinds; else start a new block if the worker's share
 * allows, before going back to a block that yielded after a long time without writing (it may
 * wait, in a loop the probe cannot recognise, for that very block); else every block waits:
 * publish that, and see whether the whole launch does. */
static int sched_resident(sim_worker *wk) {
  sim_run *run = wk->run;
  atomic_ullong *me = &run->stamp[wk->index];
  uint64_t st = atomic_load(me);
  if (st && st - 1 == atomic_load(&run->wgen)) return wait_all(wk, st - 1);
  atomic_store(me, 0);
  int n = wk->nslots, later = -1;
  uint64_t g = atomic_load(&run->wgen);
  for (int k = 1; k <= n; k++) {
    int i = ((wk->cur - k) % n + n) % n;
    sim_slot *s = &wk->slots[i];
    if (s->block >= 0 && past_error(run, s->nth)) slot_release(wk, i);
    if (s->block < 0) continue;
    if (!s->stuck && i == wk->cur && wk->yielded) later = i;
    else if (!s->stuck) return run_slot(wk, i);
    else if (s->seen_w != wk->writes || s->seen_g != g) {
      int r = reprobe(wk, i);
      if (r < 0) return SIM_STEP_ERR;
      if (r) return run_slot(wk, i);
    }
  }
  if (wk->used < wk->quota && !past_error(run, atomic_load(&run->next_block))) {
    long long b = atomic_fetch_add(&run->next_block, 1);
    if (b < run->nblocks && !past_error(run, b)) {
      int i = free_slot(wk);
      if (i < 0) {
        sim_fail(wk, &wk->warps[0], 0, &run->m->code[run->f->first],
                 "out of memory for the simulator's resident blocks (%d held by one host thread)",
                 wk->used);
        atomic_store(&run->failed, 1); /* no block's error: the whole launch stops */
        return SIM_STEP_ERR;
      }
      block_start(wk, i, b);
      return finish(wk, block_run(wk));
    }
  }
  if (later >= 0) return run_slot(wk, later);
  if (!wk->used) return SIM_STEP_END;
  tell(wk);
  g = atomic_load(&run->wgen);
  for (int i = 0; i < n; i++) {
    const sim_slot *s = &wk->slots[i];
    if (s->block >= 0 && (s->seen_w != wk->writes || s->seen_g != g)) return SIM_STEP_MORE;
  }
  atomic_store(me, g + 1);
  return wait_all(wk, g);
}

/* Runs one block to its end or to a wait: SIM_STEP_BLOCK when a block ended, SIM_STEP_MORE when
 * none did but there is more to do, SIM_STEP_END when the worker has nothing left, SIM_STEP_ERR
 * when the launch failed. With nothing parked, as in any launch whose blocks never wait on
 * others, this is: take the next block, run it. */
int sim_sched_step(sim_worker *wk) {
  if (wk->used) return sched_resident(wk);
  if (past_error(wk->run, atomic_load(&wk->run->next_block))) return SIM_STEP_END;
  long long b = atomic_fetch_add(&wk->run->next_block, 1);
  if (b >= wk->run->nblocks || past_error(wk->run, b)) return SIM_STEP_END;
  block_start(wk, 0, b);
  return finish(wk, block_run(wk));
}

void sim_sched_leave(sim_worker *wk) {
  tell(wk);
  atomic_store(&wk->run->stamp[wk->index], SIM_STAMP_GONE);
}
