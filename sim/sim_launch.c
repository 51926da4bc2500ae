/* sim_launch.c: sim_launch: validates a launch, spreads its blocks over host threads (which run
 * them through sim_sched.c) and folds the counters into sim_stats.
 *
 * Stance: a block never migrates between host threads, so its shared memory and barriers need no
 * locking; host threads take blocks from one atomic counter (dynamic load balance, and with
 * threads = 1 a deterministic block order that keeps printf output in order). How a worker runs
 * its blocks, parks one that waits on another and ends a launch that cannot progress is
 * sim_sched.c's; here a worker only asks it for one step at a time. Host threads are at most as
 * many as the blocks the modelled device holds at once, and each worker may keep its share of
 * those resident.
 *
 * The launching thread is worker 0, so a one-thread launch starts no thread. It alone calls
 * opts->progress (between its blocks, then while it waits for the others), so a front end's
 * callback never runs concurrently with itself or off its own thread. Everything a worker writes
 * while running is its own (sim_worker) except atomics on separate cache lines: the next block,
 * blocks done (only with a progress callback), the failure flag, and, only once blocks wait on
 * others, the write generation and the workers' stamps (sim_sched.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "h200.h"
#include "sim_run.h"

/* ---- per-worker state ---- */

static void worker_free(sim_worker *wk) {
  sim_sched_free(wk);
  sim_wprof_free(&wk->prof);
  free(wk->ic);
  free(wk->memo);
  free(wk->out);
  free(wk->rlog);
  free(wk->rpat);
  free(wk->lzmap);
  memset(wk, 0, sizeof *wk);
}

static int worker_init(sim_worker *wk, sim_run *run, int index) {
  const sim_module *m = run->m;
  memset(wk, 0, sizeof *wk);
  wk->run = run;
  wk->index = index;
  for (int i = 0; i < SIM_HITS; i++) wk->hits[i] = -1;
  wk->ic = calloc((size_t)m->ncode, sizeof *wk->ic);
  wk->memo = calloc((size_t)run->nmemo + 1, sizeof *wk->memo);
  if (!wk->ic || !wk->memo) return -1;
  sim_mem_memo_init(wk);
  wk->prof.atom_alloc = -1;
  if (run->lat) {
    wk->prof.stall_pc = calloc((size_t)m->ncode + 1, sizeof *wk->prof.stall_pc);
    wk->prof.spread_pc = calloc((size_t)m->ncode + 1, sizeof *wk->prof.spread_pc);
    if (!wk->prof.stall_pc || !wk->prof.spread_pc) return -1;
  }
  return sim_sched_init(wk);
}

static int interrupted(const sim_run *run) {
  return run->opts && run->opts->interrupt && *run->opts->interrupt;
}

/* ---- progress ---- */

#define SIM_PROGRESS_PERIOD 0.1 /* seconds between progress calls, and before the first */

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Not under the debugger, whose prompt a progress bar would draw over. */
static int wants_progress(const sim_run *run) {
  return run->opts && run->opts->progress && !run->dbg;
}

/* On the launching thread only: calls opts->progress when its period has passed, or, with final,
 * once more at the end if it was called before (so a progress bar can finish or go away). */
static void progress_tick(sim_run *run, int final) {
  if (!wants_progress(run)) return;
  if (final ? run->progress_calls == 0 : mono_now() < run->progress_next) return;
  run->progress_calls++;
  long long done = atomic_load_explicit(&run->blocks_done, memory_order_relaxed);
  run->opts->progress((unsigned long long)done, (unsigned long long)run->nblocks,
                      run->opts->progress_ud);
  run->progress_next = mono_now() + SIM_PROGRESS_PERIOD;
}

/* On the launching thread, once it is out of blocks: keep calling progress while the other
 * workers finish theirs. Polls every millisecond rather than waiting on a condition variable,
 * which would cost every worker a lock per block; without a callback it returns at once. */
static void progress_wait(sim_run *run) {
  if (!wants_progress(run)) return;
  struct timespec ms = {0, 1000000};
  while (atomic_load(&run->workers_running) > 0) {
    nanosleep(&ms, NULL);
    progress_tick(run, 0);
  }
}

static void *worker_main(void *arg) {
  sim_worker *wk = arg;
  sim_run *run = wk->run;
  int counting = wants_progress(run);
  for (;;) {
    if (atomic_load(&run->failed) || interrupted(run)) break;
    int r = sim_sched_step(wk);
    if (r == SIM_STEP_ERR || r == SIM_STEP_END) break;
    if (counting && r == SIM_STEP_BLOCK)
      atomic_fetch_add_explicit(&run->blocks_done, 1, memory_order_relaxed);
    if (wk->launcher) progress_tick(run, 0);
  }
  sim_sched_leave(wk);
  atomic_fetch_sub(&run->workers_running, 1);
  return NULL;
}

/* ---- launch ---- */

static int check_dims(const sim_device *dev, sim_dim3 g, sim_dim3 b, char *err, size_t errlen) {
  const sim_device_desc *d = &dev->desc;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z) {
    sim_errf(err, errlen,
             "invalid launch configuration: grid (%u,%u,%u) and block (%u,%u,%u) must not be zero",
             g.x, g.y, g.z, b.x, b.y, b.z);
    return -1;
  }
  unsigned long long t = (unsigned long long)b.x * b.y * b.z;
  if (t > (unsigned long long)d->max_threads_per_block || b.x > (unsigned)d->max_block_dim[0] ||
      b.y > (unsigned)d->max_block_dim[1] || b.z > (unsigned)d->max_block_dim[2]) {
    sim_errf(err, errlen,
             "invalid launch configuration: block (%u,%u,%u) has %llu threads; the limit is %d per "
             "block (and %d x %d x %d per dimension)",
             b.x, b.y, b.z, t, d->max_threads_per_block, d->max_block_dim[0], d->max_block_dim[1],
             d->max_block_dim[2]);
    return -1;
  }
  if (g.x > (unsigned)d->max_grid_dim[0] || g.y > (unsigned)d->max_grid_dim[1] ||
      g.z > (unsigned)d->max_grid_dim[2]) {
    sim_errf(err, errlen, "invalid launch configuration: grid (%u,%u,%u) exceeds (%d,%d,%d)",
             g.x, g.y, g.z, d->max_grid_dim[0], d->max_grid_dim[1], d->max_grid_dim[2]);
    return -1;
  }
  return 0;
}

/* The launch against the bounds the kernel declares: __launch_bounds__ (.maxntid), the block
 * shape of __block_size__ (.reqntid), and the cluster shape of __cluster_dims__
 * (.reqnctapercluster, .explicitcluster). The GPU refuses a launch outside them; these are its
 * refusals in words a learner can act on, launch_bounds.h's, which the bindings use too, since a
 * learner may meet either first. */
static int check_bounds(const sim_func *f, sim_dim3 g, sim_dim3 b, char *err, size_t errlen) {
  if (f->bounds.blocks_are_clusters) {
    sim_errf(err, errlen, "kernel %s was declared with __block_size__ and a cluster shape "
             "(.blocksareclusters): the simulator does not model such launches; run it on a GPU",
             f->name);
    return -1;
  }
  char why[512];
  if (lb_check(&f->bounds, f->name, (lb_dim3){g.x, g.y, g.z}, (lb_dim3){b.x, b.y, b.z},
               CL_H200_MAX_CLUSTER_BLOCKS, why, sizeof why) == 0)
    return 0;
  sim_errf(err, errlen, "%s", why);
  return -1;
}

static int cmp_alloc(const void *a, const void *b) {
  const sim_alloc *x = a, *y = b;
  return x->base < y->base ? -1 : x->base > y->base;
}

/* Does extent e lie in allocation t (a view of no elements may sit at its very end)? */
static int extent_in(const sim_extent *e, const sim_alloc *t) {
  return e->base - t->base < t->size || (e->size == 0 && e->base == t->base + t->size);
}

static int cmp_extent(const void *a, const void *b) {
  const sim_extent *x = a, *y = b;
  if (x->base != y->base) return x->base < y->base ? -1 : 1;
  return x->size < y->size ? -1 : x->size > y->size;
}

/* Writes into out the entries of allocation t as the views v[0..n) (sorted) reach it: one per
 * view, overlapping ones merged, each labelled by what it is ("f32[256] at 256 in f32[1024]").
 * Returns how many. */
static int view_entries(const sim_alloc *t, const sim_extent *v, int n, sim_alloc *out) {
  int k = 0;
  char c;
  int bits, es = 0;
  if (sscanf(t->label, "%c%d[", &c, &bits) == 2 && bits % 8 == 0 && bits > 0) es = bits / 8;
  size_t prefix = strcspn(t->label, "[");
  for (int i = 0; i < n; i++) {
    uint64_t end = v[i].base + v[i].size;
    if (k > 0 && v[i].base < out[k - 1].base + out[k - 1].size) {
      if (end > out[k - 1].base + out[k - 1].size) out[k - 1].size = end - out[k - 1].base;
      continue;
    }
    out[k] = *t;
    out[k].base = v[i].base;
    out[k].size = end > t->base + t->size ? t->base + t->size - v[i].base : v[i].size;
    out[k].param = v[i].param;
    k++;
  }
  for (int i = 0; i < k; i++) {
    unsigned long long off = out[i].base - t->base, sz = out[i].size;
    int w = es ? snprintf(out[i].label, sizeof out[i].label, "%.*s[%llu] at %llu in %s",
                          (int)prefix, t->label, sz / (unsigned)es, off / (unsigned)es, t->label)
               : snprintf(out[i].label, sizeof out[i].label, "bytes %llu..%llu of %s", off,
                          off + sz, t->label);
    if (w < 0) out[i].label[0] = '\0'; /* a label cut short still names the array */
  }
  return k;
}

/* Narrows each allocation of run->tab that only views reach (opts->extents) to those views, so
 * that an access past a view is reported against it. An allocation any argument reaches whole
 * stays as it is. 0, or -1 out of memory. */
static int apply_views(sim_run *run) {
  const sim_launch_opts *o = run->opts;
  int nv = 0;
  for (int i = 0; o && o->extents && i < o->nextents; i++) nv += o->extents[i].view != 0;
  if (!nv) return 0;
  sim_alloc *out = malloc((size_t)(run->ntab + nv + 1) * sizeof *out);
  sim_extent *v = malloc((size_t)nv * sizeof *v);
  if (!out || !v) {
    free(out);
    free(v);
    return -1;
  }
  int n = 0;
  for (int i = 0; i < run->ntab; i++) {
    const sim_alloc *t = &run->tab[i];
    int k = 0, whole = 0;
    for (int j = 0; j < o->nextents; j++) {
      const sim_extent *e = &o->extents[j];
      if (!extent_in(e, t)) continue;
      if (!e->view || (e->base == t->base && e->size >= t->size)) whole = 1;
      else v[k++] = *e;
    }
    if (!k || whole) {
      out[n++] = *t;
      continue;
    }
    qsort(v, (size_t)k, sizeof *v, cmp_extent);
    n += view_entries(t, v, k, out + n);
  }
  free(v);
  free(run->tab);
  run->tab = out;
  run->ntab = n;
  return 0;
}

/* The lookup table for this launch: device allocations plus the module's global variables,
 * with the kernel parameter that points into each. */
static int build_table(sim_run *run, void **args) {
  const sim_device *dev = run->dev;
  const sim_module *m = run->m;
  int n = dev->nallocs;
  for (int i = 0; i < m->nvars; i++) n += m->vars[i].data != NULL;
  run->tab = malloc((size_t)(n + 1) * sizeof *run->tab);
  if (!run->tab) return -1;
  if (dev->nallocs) /* allocs may be NULL */
    memcpy(run->tab, dev->allocs, (size_t)dev->nallocs * sizeof *run->tab);
  int k = dev->nallocs;
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if (!v->data) continue;
    sim_alloc *a = &run->tab[k++];
    memset(a, 0, sizeof *a);
    a->base = a->origin = v->addr;
    a->size = v->size ? v->size : 1;
    snprintf(a->label, sizeof a->label, "%s %s",
             v->space == SIM_SP_CONST ? "__constant__" : "__device__", v->name);
    a->serial = 0xffff0000u + (uint32_t)i; /* module variables: by their place in the module */
  }
  run->ntab = k;
  qsort(run->tab, (size_t)k, sizeof *run->tab, cmp_alloc);
  for (int i = 0; i < k; i++) run->tab[i].param = -1;
  if (apply_views(run) < 0) return -1;
  k = run->ntab;
  for (int p = 0; p < run->f->nparams; p++) {
    if (run->f->params[p].size != 8 || !args) continue;
    uint64_t v;
    memcpy(&v, args[p], 8);
    int i = sim_alloc_find(run->tab, k, v, 1);
    if (i >= 0 && run->tab[i].param < 0) run->tab[i].param = p;
  }
  return 0;
}

/* The source file most of the executed instructions come from (-1 when none is known): the
 * per-line counters are for that file. */
static int main_file(const sim_module *m, const sim_worker *wks, int nw) {
  int file = -1;
  int *hits = calloc((size_t)m->nfiles + 1, sizeof *hits);
  for (int i = 0; i < m->ncode; i++) {
    uint64_t ex = 0;
    for (int w = 0; w < nw; w++) ex += wks[w].ic[i].warp;
    if (!ex) continue;
    const sim_inst *in = &m->code[i];
    if (in->file >= 0 && in->file < m->nfiles && hits) hits[in->file]++;
  }
  for (int f = 0; hits && f < m->nfiles; f++)
    if (file < 0 || hits[f] > hits[file]) file = hits[f] ? f : file;
  free(hits);
  return file;
}

/* Makes dev->lines hold a counter per line of the file, cleared, as far as memory allows;
 * returns how many lines it holds (0 when it could not grow). */
static int line_counters(sim_device *dev, const sim_module *m, int file) {
  int maxline = 0;
  for (int i = 0; i < m->ncode; i++)
    if (m->code[i].file == file && m->code[i].line > maxline) maxline = m->code[i].line;
  if (maxline + 1 > dev->nlines_cap) {
    sim_counters *l = realloc(dev->lines, (size_t)(maxline + 1) * sizeof *l);
    if (l) {
      dev->lines = l;
      dev->nlines_cap = maxline + 1;
    }
  }
  if (dev->lines) memset(dev->lines, 0, (size_t)dev->nlines_cap * sizeof *dev->lines);
  return dev->nlines_cap >= maxline + 1 ? maxline + 1 : 0;
}

/* Instruction i's counts summed over the workers. */
static sim_icount sum_icount(const sim_worker *wks, int nw, int i) {
  sim_icount s = {0};
  for (int w = 0; w < nw; w++) {
    const sim_icount *c = &wks[w].ic[i];
    s.warp += c->warp;
    s.thread += c->thread;
    s.req += c->req;
    s.sect += c->sect;
    s.wf += c->wf;
    s.conf += c->conf;
    s.div += c->div;
  }
  return s;
}

/* An instruction's counts as Nsight Compute's counters name them: memory traffic goes to the
 * load or the store counters by what the instruction does. */
static sim_counters inst_counters(const sim_module *m, const sim_inst *in, const sim_icount *s) {
  sim_counters c = {0};
  c.warp_insts = s->warp;
  c.thread_insts = s->thread;
  /* wmma.store stores; cp.async reads global */
  int kind = in->op == SIM_OP_TENSOR ? m->tensor[in->aux].kind : -1;
  int ld = in->op == SIM_OP_LD || kind == SIM_TC_WLOAD || kind == SIM_TC_LDMATRIX
        || kind == SIM_TC_CPASYNC;
  if (ld) {
    c.ld_requests = s->req;
    c.ld_sectors = s->sect;
  }
  if (ld && kind != SIM_TC_CPASYNC) {
    c.shared_ld_wavefronts = s->wf;
    c.shared_ld_conflicts = s->conf;
  }
  if (in->op == SIM_OP_ST || kind == SIM_TC_WSTORE) {
    c.st_requests = s->req;
    c.st_sectors = s->sect;
  }
  c.shared_wavefronts = s->wf;
  c.bank_conflicts = s->conf;
  c.divergent_branches = s->div;
  return c;
}

static void add_counters(sim_counters *t, const sim_counters *c) {
  t->warp_insts += c->warp_insts;
  t->thread_insts += c->thread_insts;
  t->ld_requests += c->ld_requests;
  t->ld_sectors += c->ld_sectors;
  t->st_requests += c->st_requests;
  t->st_sectors += c->st_sectors;
  t->shared_wavefronts += c->shared_wavefronts;
  t->bank_conflicts += c->bank_conflicts;
  t->shared_ld_wavefronts += c->shared_ld_wavefronts;
  t->shared_ld_conflicts += c->shared_ld_conflicts;
  t->divergent_branches += c->divergent_branches;
}

/* The workers' per-instruction counts folded into the launch's totals and into per-line
 * counters for the main source file (dev->lines, which stats->lines then points to). */
static void fold_stats(sim_run *run, sim_worker *wks, int nw, sim_stats *stats) {
  const sim_module *m = run->m;
  sim_device *dev = run->dev;
  int file = main_file(m, wks, nw);
  int nlines = line_counters(dev, m, file);
  memset(stats, 0, sizeof *stats);
  for (int i = 0; i < m->ncode; i++) {
    sim_icount s = sum_icount(wks, nw, i);
    if (!s.warp) continue;
    const sim_inst *in = &m->code[i];
    sim_counters c = inst_counters(m, in, &s);
    add_counters(&stats->total, &c);
    if (in->file == file && in->line < nlines && in->line > 0)
      add_counters(&dev->lines[in->line], &c);
  }
  stats->nlines = nlines;
  stats->lines = dev->lines;
  snprintf(stats->source_file, sizeof stats->source_file, "%s",
           file >= 0 && m->files[file] ? m->files[file] : "");
}

/* Numbers the module's loads and stores, which count sectors or wavefronts, so each worker keeps
 * one sim_memo per memory instruction rather than one per instruction. */
static int number_memo_slots(sim_run *run) {
  const sim_module *m = run->m;
  run->memo_slot = malloc((size_t)(m->ncode + 1) * sizeof *run->memo_slot);
  if (!run->memo_slot) return -1;
  run->nmemo = 0;
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    int sp = in->space;
    int counted = (in->op == SIM_OP_LD || in->op == SIM_OP_ST) &&
                  (sp == SIM_SP_GLOBAL || sp == SIM_SP_SHARED || sp == SIM_SP_GENERIC);
    run->memo_slot[i] = counted ? run->nmemo++ : -1;
  }
  return 0;
}

/* How many blocks of this launch the modelled device holds at once: the most that may wait on
 * one another and still progress (sim_sched.c). */
static void resident_blocks(sim_run *run) {
  const sim_device_desc *d = &run->dev->desc;
  int regs = run->opts ? run->opts->regs_per_thread : 0;
  run->occupancy = sim_occupancy(d, run->nthreads, regs, run->shared_user, &run->occupancy_limit);
  if (run->occupancy < 1) run->occupancy = 1;
  run->resident_max = run->occupancy * (d->sm_count > 0 ? d->sm_count : 1);
}

/* A cooperative launch's blocks must all be resident at once, or a grid-wide sync would wait
 * for a block that can never start: refused as cudaLaunchCooperativeKernel refuses it
 * (cudaErrorCooperativeLaunchTooLarge), with the numbers. -1 with the message in run->err. */
static int coresident_check(sim_run *run) {
  resident_blocks(run);
  if (run->nblocks <= run->resident_max) return 0;
  const sim_device_desc *d = &run->dev->desc;
  sim_errf(run->err, run->errlen,
           "a cooperative launch needs all its blocks resident at once: the grid has %lld "
           "blocks, but the modelled %s holds at most %d blocks of %d threads (%d SMs x %d "
           "blocks per SM, limited by %s); launch at most %d blocks and have each loop over the "
           "data (a grid-stride loop)", (long long)run->nblocks, d->name, run->resident_max,
           run->nthreads, d->sm_count, run->occupancy,
           run->occupancy_limit ? run->occupancy_limit : "the device", run->resident_max);
  return -1;
}

/* One under the debugger: a stop pauses the whole launch, and a step is a step of one warp. */
static int host_threads(const sim_launch_opts *opts, long long nblocks) {
  if (opts && opts->debug) return 1;
  long n = opts && opts->threads > 0 ? opts->threads : sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (n > 256) n = 256;
  if (n > nblocks) n = (long)nblocks;
  return (int)n;
}

/* A zeroed sim_run for one launch, its fields set from the arguments; NULL when out of
 * memory. */
static sim_run *run_new(sim_device *dev, sim_kernel *k, sim_dim3 grid, sim_dim3 block,
                        size_t dyn_shared, const sim_launch_opts *opts, char *err, size_t errlen) {
  /* its atomics sit on their own lines */
  sim_run *run = aligned_alloc(64, (sizeof(sim_run) + 63) / 64 * 64);
  if (!run) return NULL;
  memset(run, 0, sizeof *run);
  run->dev = dev;
  run->m = k->mod;
  run->k = k;
  run->f = &k->mod->funcs[k->func];
  run->grid = grid;
  run->block = block;
  run->dyn_shared = dyn_shared;
  run->shared_total = (k->static_shared + 15) / 16 * 16 + dyn_shared;
  run->shared_user = run->shared_total - k->reserved_shared;
  run->opts = opts;
  run->dbg = opts ? opts->debug : NULL;
  run->dbg_fault = run->dbg ? sim_debug_faults(run->dbg) : NULL;
  run->err = err;
  run->errlen = errlen;
  run->nthreads = (int)(block.x * block.y * block.z);
  run->nwarps = (run->nthreads + SIM_WARP - 1) / SIM_WARP;
  run->fstride = (run->m->fparam_bytes + 15) / 16 * 16;
  run->stack_size = opts && opts->stack_size ? opts->stack_size : SIM_STACK_DEFAULT;
  run->local_plain = run->m->local_frame
                    + (run->m->has_stacked ? (run->stack_size + 15) / 16 * 16 : 0);
  run->local_stride = run->local_plain + run->m->lcopy_bytes;
  run->nblocks = (long long)grid.x * grid.y * grid.z;
  run->gridid = ++dev->launches;
  atomic_init(&run->next_block, 0);
  atomic_init(&run->blocks_done, 0);
  atomic_init(&run->workers_running, 0);
  atomic_init(&run->failed, 0);
  atomic_init(&run->fault_nth, LLONG_MAX);
  atomic_init(&run->fault_by_ns, LLONG_MAX);
  atomic_init(&run->warn_nth, LLONG_MAX);
  atomic_init(&run->warn_yields, 0);
  atomic_init(&run->spin_seen, 0);
  atomic_init(&run->wgen, 0);
  atomic_init(&run->warnings, 0);
  run->progress_next = mono_now() + SIM_PROGRESS_PERIOD;
  pthread_mutex_init(&run->lock, NULL);
  return run;
}

/* Checks the launch against the device's limits, then copies in the parameters and builds the
 * allocation table and the memo slots. Returns -1 with the message in run->err. */
static int run_prepare(sim_run *run, void **args) {
  const sim_device *dev = run->dev;
  const sim_kernel *k = run->k;
  const sim_func *f = run->f;
  const sim_launch_opts *opts = run->opts;
  char *err = run->err;
  size_t errlen = run->errlen;
  /* Up to the opt-in limit, static and dynamic together, as cudalab's launches opt in to
   * shared memory above 48 KiB; the bindings say the same (bind_kernel.c). */
  size_t shared = k->static_shared - k->reserved_shared + run->dyn_shared;
  if (shared > dev->desc.shared_per_block_optin) {
    sim_errf(err, errlen,
             "the launch needs %zu bytes of shared memory per block (%zu static + %zu dynamic); "
             "the %s allows at most %zu (%zu KiB) per block, static and dynamic together",
             shared, k->static_shared - k->reserved_shared, run->dyn_shared, dev->desc.name,
             dev->desc.shared_per_block_optin, dev->desc.shared_per_block_optin >> 10);
    return -1;
  }
  if (run->stack_size > SIM_STACK_MAX) {
    sim_errf(err, errlen,
             "a call stack of %zu bytes per thread is more than the simulator allows (%d)",
             run->stack_size, SIM_STACK_MAX);
    return -1;
  }
  if (f->nparams && !args) {
    sim_errf(err, errlen, "kernel %s takes %d parameters but none were given", f->name,
             f->nparams);
    return -1;
  }
  if (opts && opts->grid_workspace && coresident_check(run) < 0) return -1;
  if (sim_order_init(run) < 0) return -1;
  run->params = calloc(f->param_bytes + 16, 1);
  if (!run->params || build_table(run, args) < 0 || number_memo_slots(run) < 0 ||
      sim_san_begin(run) < 0) {
    sim_errf(err, errlen, "out of memory");
    return -1;
  }
  /* a may-be, never a refusal: correct code (a value set under the same test it is read under,
   * a running maximum with a "found" flag) leaves a register unassigned on some way the
   * analysis cannot rule out */
  if ((run->san & SIM_SAN_INIT) && opts && opts->note && opts->notelen)
    sim_undef_check(run->m, f, opts->note, opts->notelen);
  if (opts && opts->model) {
    run->lat_global = (uint64_t)dev->desc.perf.lat_l2;
    run->lat_shared = (uint64_t)dev->desc.perf.lat_shared;
    run->lat_gap = (run->lat_global > run->lat_shared ? run->lat_global : run->lat_shared) + 1;
    atomic_init(&run->trace_room, SIM_TRACE_CAP);
    run->lat = 1;
  }
  for (int p = 0; p < f->nparams; p++)
    memcpy(run->params + f->params[p].offset, args[p], f->params[p].size);
  return 0;
}

/* The launch's host workers, allocated and initialised, in *wks (and their thread ids in
 * *tids). Returns -1 with the message in run->err; *nw then says how many workers to free, and
 * *inited is cleared when one failed to initialise. */
static int workers_new(sim_run *run, sim_worker **wks, pthread_t **tids, int *nw, int *inited) {
  resident_blocks(run);
  int n = host_threads(run->opts, run->nblocks < run->resident_max ? run->nblocks
                                                                    : run->resident_max);
  *nw = n;
  *wks = aligned_alloc(128, (size_t)n * sizeof **wks);
  if (*wks) memset(*wks, 0, (size_t)n * sizeof **wks);
  *tids = calloc((size_t)n, sizeof **tids);
  run->stamp = calloc((size_t)n, sizeof *run->stamp);
  if (!*wks || !*tids || !run->stamp) {
    sim_errf(run->err, run->errlen, "out of memory");
    return -1;
  }
  run->wks = *wks;
  run->nw = n;
  for (int i = 0; i < n; i++) {
    sim_worker *wk = &(*wks)[i];
    atomic_init(&run->stamp[i], 0);
    if (worker_init(wk, run, i) < 0) {
      *nw = i + 1;
      *inited = 0;
      sim_errf(run->err, run->errlen, "out of memory for the simulator's warps");
      return -1;
    }
    wk->quota = run->resident_max / n + (i < run->resident_max % n);
    if (run->lat) sim_trace_borrow(wk, i);
  }
  return 0;
}

/* Runs the launch to its end: worker 0 on this thread, the others on threads of their own
 * (fewer, should some fail to start). */
static void run_workers(sim_run *run, sim_worker *wks, pthread_t *tids, int nw) {
  int started = 1;
  wks[0].launcher = 1;
  atomic_store(&run->workers_running, nw);
  for (int i = 1; i < nw; i++) {
    if (pthread_create(&tids[i], NULL, worker_main, &wks[i]) != 0) break;
    started++;
  }
  atomic_fetch_sub(&run->workers_running, nw - started); /* those never run */
  for (int i = started; i < nw; i++) atomic_store(&run->stamp[i], SIM_STAMP_GONE);
  worker_main(&wks[0]);
  progress_wait(run);
  for (int i = 1; i < started; i++) pthread_join(tids[i], NULL);
  progress_tick(run, 1);
}

static void run_free(sim_run *run, sim_worker *wks, pthread_t *tids, int nw) {
  for (int i = 0; wks && i < nw; i++) {
    if (run->lat && wks[i].run) sim_trace_return(&wks[i], i);
    worker_free(&wks[i]);
  }
  free(wks);
  free(tids);
  free(run->stamp);
  free(run->params);
  free(run->tab);
  free(run->memo_slot);
  sim_san_end(run);
  pthread_mutex_destroy(&run->lock);
  free(run);
}

int sim_launch(sim_device *dev, sim_kernel *k, sim_dim3 grid, sim_dim3 block, size_t dyn_shared,
               void **args, const sim_launch_opts *opts, sim_stats *stats, char *err,
               size_t errlen) {
  if (!dev || !k) {
    sim_errf(err, errlen, "sim_launch: no device or kernel");
    return -1;
  }
  if (check_dims(dev, grid, block, err, errlen) < 0 ||
      check_bounds(&k->mod->funcs[k->func], grid, block, err, errlen) < 0)
    return -1;
  sim_run *run = run_new(dev, k, grid, block, dyn_shared, opts, err, errlen);
  if (!run) {
    sim_errf(err, errlen, "out of memory");
    return -1;
  }
  int rc = -1, nw = 0, inited = 1;
  sim_worker *wks = NULL;
  pthread_t *tids = NULL;
  if (run_prepare(run, args) < 0 || workers_new(run, &wks, &tids, &nw, &inited) < 0) goto out;
  run_workers(run, wks, tids, nw);
  if (atomic_load(&run->failed) || atomic_load(&run->fault_nth) != LLONG_MAX) goto out;
  if (interrupted(run)) {
    sim_errf(err, errlen, "kernel %s interrupted", run->f->name);
    goto out;
  }
  rc = 0;
  sim_warn_finish(run);
  if (stats) fold_stats(run, wks, nw, stats);
  if (stats && run->lat) sim_profile_fold(run, wks, nw, stats, &stats->profile);
out:
  if (rc < 0 && stats && wks && nw && inited) fold_stats(run, wks, nw, stats);
  run_free(run, wks, tids, nw);
  return rc;
}
