/* backend_sim.c: the backend that runs NVRTC's PTX on the built-in simulator (sim/). Device
 * memory is host memory registered with the simulator, so copies are memmove and every access a
 * kernel makes is checked. Launches are synchronous: when launch returns, the kernel has run,
 * and a fault is reported at the launch that caused it, with thread, array and source line.
 *
 * Time: the backend keeps the modelled device's clock. Each launch advances it by the timing
 * model's time for that launch (sim/sim_model.c), each copy by the transfer model's (pinned or
 * pageable, by direction), and events read it, so cuda.time on the simulator gives modelled GPU
 * time through the same events as on a GPU. With the model off (cuda.simopts{model = false})
 * events read the host clock instead, as the simulator's own time.
 *
 * Streams: the work itself still runs at once, in the order the host queues it, but its
 * modelled time is scheduled as an H200 would run it. There are three engines, a copy engine
 * per direction and the compute engine, each running one operation at a time in the order it
 * was queued. An operation starts when its stream's earlier work is done, its engine is free,
 * the host has queued it (the host is modelled as infinitely quick except where it waits) and
 * any event its stream waits on has happened. So copies overlap kernels and copies the other
 * way, but kernels never overlap one another: two kernels run side by side on a GPU only when
 * the device has room for both, which the model does not try to decide. A copy from or to
 * pageable memory makes the host wait for it, as CUDA's staged copies do; a pinned one does not.
 * The default stream is CUDA's legacy stream: its work waits for all other streams, and theirs
 * for it. With no stream in use this reduces to the one clock that adds every operation's time.
 *
 * Race checking is on by default: a missing __syncthreads() or __syncwarp() often gives the right
 * numbers on the simulator, whose warps run in lockstep, and wrong ones on a GPU, and a learner
 * should hear of it at the launch. At the prompt a race is a warning on stderr and the launch's
 * results are kept (cuda.simopts{race_check = "warn"}, the default): a learner exploring should
 * see what the kernel computed and why it may differ on a GPU, not lose the launch. Lesson
 * checks and grading make it a failure ("fail"). It costs kernels without shared memory nothing
 * and shared-memory kernels a modest factor (`make bench`: sim_race_overhead_*), which only the
 * wait shows: cuda.time reports the model's time. cuda.simopts{race_check = false} turns it off.
 *
 * The debugging checks of cuda.sanitize (NaN origin, reads of memory never written, barriers
 * not every thread reaches) and element watches (cuda.watch) are the simulator's own
 * (sim_sanitize.c, sim_watch.c); this file only hands them over.
 *
 * The kernel time limit (cuda.limits{kernel_time}) stops a launch that runs longer, in host
 * time, the way Ctrl-C does: the simulator polls a flag. Under a limit the launch polls a flag
 * of its own, which a watcher thread raises at the deadline or when Ctrl-C's flag is raised, so
 * that the two stops say different things; without a limit launches poll Ctrl-C's flag directly
 * and no thread is made. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "sim.h"
#include "blas.h"
#include "h200.h"
#include "features.h"
#include "sim_module_memo.h"

static struct {
  sim_device *dev;                    /* created on first use */
  volatile sig_atomic_t *interrupt;   /* the engine's Ctrl-C flag */
  sim_stats last;                     /* counters of the last launch */
  int have_last;
  sim_launch_opts opts;               /* race checking (on), host threads, model (on), block
                                         order (forward) and its seed: cuda.simopts */
  int bar_drawn;                      /* a progress bar is on the terminal's current line */
  double clock_us;                    /* the modelled clock when all work queued so far ends */
  double host_us;                     /* where the host stands on that clock: it moves on only
                                         when the host waits (a sync, a pageable copy) */
  double engine_free[3];              /* when each engine (ENG_*) finishes its queued work */
  double default_ready;               /* when the default stream's latest work ends */
  double last_start, last_end;        /* the latest operation's modelled span, for timelines */
  sim_model_result model;             /* the last launch's modelled time and why */
  unsigned long long launches;        /* launches modelled so far; model is the latest's */
  sim_dim3 last_grid, last_block;     /* the latest modelled launch's shape, to price it again */
  size_t last_shared;
  struct pinned {                     /* a pinned host buffer, for the copy model */
    char *p;
    size_t n;
  } *pinned;                          /* all of them, npinned of pinned_cap */
  int npinned, pinned_cap;
  double time_limit_s;                /* cuda.limits{kernel_time}; 0: no limit */
  cl_um_stats um_last, um_total;      /* what managed memory moved: in the last launch, and since
                                         the session began */
  struct cl_graph *capture;           /* the graph being captured (graph_begin .. graph_end) */
  int replaying;                      /* a graph's launches run: each is priced as a node */
} S = {.opts = {.model = 1, .race_check = SIM_RACE_WARN}};

struct cl_function {
  sim_kernel *k;
  int registers;            /* ptxas's figure, for occupancy in the model; 0 unknown */
  size_t stack_bytes;       /* ptxas's per-thread stack frame and spill traffic (stores and */
  size_t spill_bytes;       /* loads), for the model's local memory */
  char **names;             /* parameter names for fault messages, or NULL */
  char *entry, *display;    /* the mangled .entry name and the name the learner wrote (malloc'd,
                               any length: a C++ name has no limit); display may be NULL */
  char *warned;             /* the last warning printed for it (malloc'd), or NULL */
  char *noted;              /* the last note printed for it (malloc'd), or NULL */
  sim_extent *extents;      /* what its arguments point at when one is a view (malloc'd), */
  int nextents;             /* or NULL and 0: every array checked whole */
  struct cl_function *next;
};
struct cl_module {
  sim_module *mod;
  struct cl_function *fns; /* freed with the module */
};
struct cl_event {
  struct timespec t;
  double model_us;          /* the modelled clock when recorded */
};
struct cl_stream {
  double ready_us;          /* when the stream's latest work ends on the modelled clock */
};
struct cl_span {
  double start_us, end_us;  /* the operation's modelled start and end */
};

/* One launch a graph holds: what the binding passed, copied (the arguments' bytes, and the
 * extents of views that the binding set for that launch), so that a replay runs it as captured. */
typedef struct graph_node {
  struct cl_function *f;   /* kept alive by the graph's owner (the binding anchors the kernel) */
  cl_dim3 grid, block;
  size_t shared;
  unsigned char *bytes;    /* the parameters' values, each 8-aligned (malloc'd) */
  void **argv;             /* argv[i] points at parameter i in bytes (malloc'd) */
  sim_extent *extents;     /* malloc'd copy, or NULL */
  int nextents;
} graph_node;
struct cl_graph {
  graph_node *node;
  int n, cap;
};

/* The engines a modelled operation occupies: one at a time on each. */
enum { ENG_H2D, ENG_D2H, ENG_COMPUTE };

static double later(double a, double b) { return a > b ? a : b; }

/* Places one operation of dur_us on the modelled clock (see the header): on stream s (NULL:
 * the legacy default stream) and engine eng; host_waits when the host cannot go on until it
 * ends. Leaves its span in S.last_start / S.last_end. */
static void schedule(struct cl_stream *s, int eng, double dur_us, int host_waits) {
  double start = s ? later(s->ready_us, S.default_ready) : S.clock_us;
  start = later(later(start, S.host_us), S.engine_free[eng]);
  double end = start + dur_us;
  S.engine_free[eng] = end;
  if (s) s->ready_us = end;
  else S.default_ready = end;
  S.clock_us = later(S.clock_us, end);
  if (host_waits) S.host_us = end;
  S.last_start = start;
  S.last_end = end;
}

static void free_names(struct cl_function *f) {
  if (!f->names) return;
  for (char **n = f->names; *n; n++) free(*n);
  free(f->names);
  f->names = NULL;
}

static void sim_source_names(cl_function *f, const char *kernel, const char *const *names, int n) {
  free(f->display);
  f->display = strdup(kernel); /* NULL: messages keep the .entry name */
  free_names(f);
  char **copy = calloc((size_t)n + 1, sizeof *copy);
  if (!copy) return; /* messages then name parameters by index */
  for (int i = 0; i < n; i++) copy[i] = strdup(names[i] ? names[i] : "");
  f->names = copy;
}

/* cl_sim_ops.arg_extents: the extents the bindings recorded, kept for fn's launches. */
static int sim_arg_extents(cl_function *f, const cl_extent *ext, int n, cl_err *err) {
  sim_extent *e = n > 0 ? malloc(sizeof *e * (size_t)n) : NULL;
  if (n > 0 && !e) {
    cl_err_set(err, "out of memory", "out of host memory for the launch's array extents");
    return -1;
  }
  for (int i = 0; i < n; i++)
    e[i] = (sim_extent){ext[i].param, ext[i].view, (uint64_t)(uintptr_t)ext[i].base, ext[i].bytes};
  free(f->extents);
  f->extents = e;
  f->nextents = n;
  return 0;
}

/* Work that reaches the device while a graph is being captured: refused, as CUDA refuses it
 * in a capture (cudaErrorStreamCaptureUnsupported), with the operation named. */
static int refuse_in_capture(const char *what, cl_err *err) {
  if (!S.capture) return 0;
  cl_err_set(err, "cannot be captured",
             "%s cannot be captured in cuda.graph: a graph holds kernel launches only; "
             "do it before or after cuda.graph(...)", what);
  return -1;
}

static void printf_sink(const char *text, size_t len, void *ud);
/* the progress bar's line and device printf's text, which workers write at once */
static pthread_mutex_t terminal_lock = PTHREAD_MUTEX_INITIALIZER;

static int dev_ready(cl_err *err) {
  if (S.dev) return 0;
  S.dev = sim_device_new(NULL);
  if (!S.dev) {
    cl_err_set(err, "simulator", "cannot start the simulator: out of host memory");
    return -1;
  }
  sim_set_printf_sink(S.dev, printf_sink, NULL);
  return 0;
}

/* ---- cuda.stats, cuda.simopts and the timing model (cl_sim_ops): the one place that turns
 * the simulator's structs into cudalab's ---- */

static void to_counters(const sim_counters *c, cl_counters *out) {
  out->warp_insts = c->warp_insts;
  out->thread_insts = c->thread_insts;
  out->ld_requests = c->ld_requests;
  out->ld_sectors = c->ld_sectors;
  out->st_requests = c->st_requests;
  out->st_sectors = c->st_sectors;
  out->shared_wavefronts = c->shared_wavefronts;
  out->bank_conflicts = c->bank_conflicts;
  out->divergent_branches = c->divergent_branches;
}

_Static_assert(SIM_LIM_COUNT <= CL_MODEL_TERMS, "cl_model has room for every limit");

static void to_model(const sim_model_result *r, cl_model *out) {
  out->time_us = r->time_us;
  out->launch_us = r->launch_us;
  out->limit_key = sim_limit_key(r->limit);
  out->limit_text = sim_limit_text(r->limit);
  out->nterms = 0;
  for (int i = 0; i < SIM_LIM_COUNT; i++) {
    if (r->term_us[i] <= 0) continue;
    cl_model_term *t = &out->term[out->nterms++];
    t->key = sim_limit_key(i);
    t->what = sim_limit_text(i);
    t->us = r->term_us[i];
  }
  out->dram_bytes = r->dram_bytes;
  out->l2_bytes = r->l2_bytes;
  out->flops = r->flops;
  out->achieved_gbs = r->achieved_gbs;
  out->peak_gbs = r->peak_gbs;
  out->achieved_gflops = r->achieved_gflops;
  out->peak_gflops = r->peak_gflops;
  out->blocks_per_sm = r->blocks_per_sm;
  out->warps_per_sm = r->warps_per_sm;
  out->occupancy = r->occupancy;
  out->waves = r->waves;
  out->l1_hit_rate = r->l1_hit_rate;
  out->l2_hit_rate = r->l2_hit_rate;
  snprintf(out->why, sizeof out->why, "%s", r->why);
}

/* sim_perf is doubles only, listed by sim_perf_fields; cl_perf holds them in that order. */
_Static_assert(sizeof(sim_perf) / sizeof(double) <= CL_PERF_MAX, "cl_perf has room for sim_perf");

static double *perf_at(sim_perf *p, const sim_perf_field *f) {
  return (double *)(void *)((char *)p + f->offset);
}

static void to_perf(const sim_perf *p, cl_perf *out) {
  sim_perf copy = *p;
  memset(out, 0, sizeof *out);
  for (int i = 0; sim_perf_fields[i].name; i++)
    out->value[i] = *perf_at(&copy, &sim_perf_fields[i]);
}

static sim_perf from_perf(const cl_perf *p) {
  sim_perf out = sim_device_info(S.dev)->perf;
  for (int i = 0; sim_perf_fields[i].name; i++)
    *perf_at(&out, &sim_perf_fields[i]) = p->value[i];
  return out;
}

static void sim_attach(volatile sig_atomic_t *interrupt) { S.interrupt = interrupt; }

static int sim_last_stats(cl_stats *out) {
  if (!S.have_last) return -1;
  to_counters(&S.last.total, &out->total);
  out->nlines = S.last.nlines;
  snprintf(out->source_file, sizeof out->source_file, "%s", S.last.source_file);
  return 0;
}

static void sim_line_counters(int line, cl_counters *out) { to_counters(&S.last.lines[line], out); }

static unsigned long long sim_launches(void) { return S.launches; }

static int sim_last_model(cl_model *out) {
  if (!S.launches) return -1;
  to_model(&S.model, out);
  return 0;
}

static int sim_remodel(const cl_perf *perf, cl_model *out) {
  if (!S.launches || !S.have_last) return -1;
  sim_device_desc d = *sim_device_info(S.dev);
  d.perf = from_perf(perf);
  sim_model_result r;
  if (sim_model_launch(&d, S.last_grid, S.last_block, S.last_shared, &S.last.profile, &r) != 0)
    return -1;
  to_model(&r, out);
  return 0;
}

/* sim_perf_fields in cudalab's type, made once. */
static const cl_perf_param *sim_perf_param(int i) {
  static cl_perf_param params[CL_PERF_MAX];
  static int count = -1;
  if (count < 0)
    for (count = 0; sim_perf_fields[count].name && count < CL_PERF_MAX; count++) {
      const sim_perf_field *f = &sim_perf_fields[count];
      params[count] = (cl_perf_param){f->name, f->unit, f->doc, f->zero, SIM_PERF_MIN, f->hi};
    }
  return i >= 0 && i < count ? &params[i] : NULL;
}

static int sim_perf_get(cl_perf *out) {
  cl_err err;
  if (dev_ready(&err) == 0) {
    to_perf(&sim_device_info(S.dev)->perf, out);
    return 0;
  }
  sim_device_desc def; /* the defaults if the simulator cannot start */
  sim_default_desc(&def);
  to_perf(&def.perf, out);
  return -1;
}

static int sim_set_perf(const cl_perf *perf) {
  cl_err err;
  if (dev_ready(&err)) return -1;
  sim_perf p = from_perf(perf);
  sim_device_set_perf(S.dev, &p);
  return 0;
}

/* The two headers number race modes, checks and block orders alike, so options pass through
 * unconverted. */
_Static_assert((int)CL_RACE_FAIL == (int)SIM_RACE_FAIL && (int)CL_RACE_WARN == (int)SIM_RACE_WARN,
               "race modes are numbered alike");
_Static_assert((int)CL_ORDER_REVERSE == (int)SIM_ORDER_REVERSE &&
                   (int)CL_ORDER_SHUFFLE == (int)SIM_ORDER_SHUFFLE,
               "block orders are numbered alike");
_Static_assert((int)CL_SAN_NAN == (int)SIM_SAN_NAN && (int)CL_SAN_INIT == (int)SIM_SAN_INIT &&
                   (int)CL_SAN_SYNC == (int)SIM_SAN_SYNC &&
                   (int)CL_SAN_NAN_MADE == (int)SIM_SAN_NAN_MADE,
               "sanitizer checks are numbered alike");

static void sim_options(cl_sim_opts *out) {
  out->race_check = S.opts.race_check;
  out->threads = S.opts.threads;
  out->model = S.opts.model;
  out->stack_size = S.opts.stack_size;
  out->sanitize = S.opts.sanitize;
  out->block_order = S.opts.block_order;
  out->seed = S.opts.order_seed;
}

static void sim_set_options(const cl_sim_opts *o) {
  S.opts.race_check = o->race_check;
  S.opts.threads = o->threads;
  S.opts.model = o->model;
  S.opts.stack_size = o->stack_size;
  S.opts.sanitize = o->sanitize;
  S.opts.block_order = o->block_order;
  S.opts.order_seed = o->seed;
}

/* ---- debugging: never-written arrays and watches ---- */

static int sim_mark_unset_(void *dptr, size_t bytes) {
  cl_err err;
  return dev_ready(&err) ? -1 : sim_mark_unset(S.dev, dptr, bytes);
}

static int sim_watch_add_(void *dptr, size_t bytes) {
  cl_err err;
  return dev_ready(&err) ? -1 : sim_watch_add(S.dev, dptr, bytes);
}

static void sim_watch_remove_(int id) {
  if (S.dev) sim_watch_remove(S.dev, id);
}

static void sim_watch_clear_(int id) {
  if (S.dev) sim_watch_clear(S.dev, id);
}

static int sim_watch_write_(int id, size_t i, cl_watch_write *out, uint64_t *total) {
  *total = 0;
  const sim_watch_write *w = S.dev ? sim_watch_get(S.dev, id, i, total) : NULL;
  if (!w) return -1;
  memcpy(out->thread, w->thread, sizeof out->thread);
  memcpy(out->block, w->block, sizeof out->block);
  out->line = w->line;
  snprintf(out->where, sizeof out->where, "%s", w->where);
  snprintf(out->kernel, sizeof out->kernel, "%s", w->kernel);
  out->op = w->op;
  out->old = w->old;
  out->nv = w->nv;
  return 0;
}

/* The name the simulator gives its device, "NVIDIA H200 (simulated)": what cuda.device() says,
 * so that a timing's device (t.device) never names a real GPU the learner does not have. */
static const char *sim_device_name(void) {
  cl_err err;
  return dev_ready(&err) == 0 ? sim_device_info(S.dev)->name : CL_H200_NAME " (simulated)";
}

static const cl_debug_ops debug_ops; /* the debugger's, below */
static int sim_launch_aside(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                            int cooperative, cl_err *err);

static void sim_managed_stats(cl_um_stats *last, cl_um_stats *total);
static void sim_managed_where_(const void *p, size_t bytes, uint64_t counts[3], size_t *group);

static const cl_sim_ops sim_ops = {
    .last_stats = sim_last_stats,
    .line_counters = sim_line_counters,
    .launches = sim_launches,
    .last_model = sim_last_model,
    .remodel = sim_remodel,
    .perf_param = sim_perf_param,
    .perf = sim_perf_get,
    .set_perf = sim_set_perf,
    .options = sim_options,
    .set_options = sim_set_options,
    .stack_default = SIM_STACK_DEFAULT,
    .stack_max = SIM_STACK_MAX,
    .device_name = sim_device_name,
    .mark_unset = sim_mark_unset_,
    .watch_add = sim_watch_add_,
    .watch_remove = sim_watch_remove_,
    .watch_clear = sim_watch_clear_,
    .watch_write = sim_watch_write_,
    .debug = &debug_ops,
    .launch_aside = sim_launch_aside,
    .arg_extents = sim_arg_extents,
    .managed_stats = sim_managed_stats,
    .managed_where = sim_managed_where_,
};

/* cuda.device() on the simulator: the modelled device's limits as the simulator holds them, and
 * the clocks only cuda.device() shows, both from the one description (include/h200.h). */
static int sim_device_props(cl_device *d, cl_err *err) {
  if (dev_ready(err)) return -1;
  const sim_device_desc *s = sim_device_info(S.dev);
  device_default_h200(d);
  snprintf(d->name, sizeof d->name, "%s", s->name);
  strcpy(d->backend, "sim");
#define FROM_SIM(field, value) d->field = s->field;
  CL_H200_LIMITS(FROM_SIM)
#undef FROM_SIM
  return 0;
}

/* A real architecture: the CUBIN is unused, but ptxas's report gives launch checks the same
 * register counts as on the GPU. */
static const char *sim_target_arch(void) { return CL_H200_ARCH; }

/* Out of memory either way, so a garbage collection may help; but when the modelled device had
 * room and this computer did not, the learner must hear that the limit is the host's. */
static int sim_alloc(void **p, size_t bytes, const char *label, cl_err *err) {
  if (refuse_in_capture("making an array (cudaMalloc)", err)) return -1;
  if (dev_ready(err)) return -1;
  size_t free_b = 0;
  sim_mem_info(S.dev, &free_b, NULL);
  char msg[512];
  *p = sim_malloc(S.dev, bytes, label, msg, sizeof msg);
  if (*p) return 0;
  cl_err_set(err, "out of memory", "%s", msg);
  err->oom = 1;
  err->host_limited = bytes <= free_b;
  return -1;
}

static void sim_release(void *p) {
  if (p && S.dev) sim_free(S.dev, p);
}

/* ---- the copy model: which host memory is pinned ---- */

static int is_pinned(const void *p, size_t n) {
  for (int i = 0; i < S.npinned; i++)
    if ((const char *)p >= S.pinned[i].p &&
        (size_t)((const char *)p - S.pinned[i].p) + n <= S.pinned[i].n)
      return 1;
  return 0;
}

static int sim_host_alloc(void **p, size_t bytes, cl_err *err) {
  if (S.npinned == S.pinned_cap) {
    int cap = S.pinned_cap ? S.pinned_cap * 2 : 16;
    struct pinned *t = realloc(S.pinned, (size_t)cap * sizeof *t);
    if (!t) {
      cl_err_set(err, "out of memory", "out of host memory");
      err->oom = 1;
      return -1;
    }
    S.pinned = t;
    S.pinned_cap = cap;
  }
  if (host_mem_alloc(p, bytes, err) != 0) return -1;
  S.pinned[S.npinned++] = (struct pinned){*p, bytes};
  return 0;
}

static void sim_host_release(void *p) {
  for (int i = 0; i < S.npinned; i++)
    if (S.pinned[i].p == p) {
      S.pinned[i] = S.pinned[--S.npinned];
      break;
    }
  free(p);
}

/* A copy's modelled time; 0 with the model off. */
static double copy_us(int kind, size_t bytes, int pinned) {
  return S.opts.model && S.dev ? sim_model_copy_us(sim_device_info(S.dev), kind, bytes, pinned) : 0;
}

/* A copy on the default stream: cudaMemcpy, which the host waits for; memset and device-to-
 * device copies run on the compute engine, as CUDA runs them as kernels. */
static void model_copy(int kind, size_t bytes, int pinned) {
  int eng = kind == SIM_COPY_H2D ? ENG_H2D : kind == SIM_COPY_D2H ? ENG_D2H : ENG_COMPUTE;
  schedule(NULL, eng, copy_us(kind, bytes, pinned), kind == SIM_COPY_H2D || kind == SIM_COPY_D2H);
}

/* Every write the host makes to device memory clears the init check's never-written marks. */
static void written(void *dst, size_t bytes) {
  if (S.dev) sim_mark_written(S.dev, dst, bytes);
}

static int sim_htod(void *dst, const void *src, size_t bytes, cl_err *err) {
  if (refuse_in_capture("a copy to the device", err)) return -1;
  model_copy(SIM_COPY_H2D, bytes, is_pinned(src, bytes));
  written(dst, bytes);
  return host_mem_copy(dst, src, bytes, err);
}

static int sim_dtoh(void *dst, const void *src, size_t bytes, cl_err *err) {
  if (refuse_in_capture("a copy from the device (reading an array on the host)", err)) return -1;
  model_copy(SIM_COPY_D2H, bytes, is_pinned(dst, bytes));
  return host_mem_copy(dst, src, bytes, err);
}

static int sim_dtod(void *dst, const void *src, size_t bytes, cl_err *err) {
  if (refuse_in_capture("a copy between arrays", err)) return -1;
  model_copy(SIM_COPY_D2D, bytes, 0);
  written(dst, bytes);
  return host_mem_copy(dst, src, bytes, err);
}

/* A texture object: the simulator copies the texels into an allocation of the texture's own, as
 * cudaMemcpy2DToArray copies them into a CUDA array, timed as that device-to-device copy. The
 * CL_TEXF_ and CL_TEXA_ numbers are the simulator's SIM_TEXF_ and SIM_TEXA_ (checked below). */
_Static_assert((int)CL_TEXF_U8 == (int)SIM_TEXF_U8 && (int)CL_TEXF_S16 == (int)SIM_TEXF_S16 &&
               (int)CL_TEXA_BORDER == (int)SIM_TEXA_BORDER &&
               (int)CL_TEXA_MIRROR == (int)SIM_TEXA_MIRROR,
               "texture formats and address modes are numbered alike");
static int sim_texture_create_(const void *src, const cl_texture_desc *d, uint64_t *handle,
                               cl_err *err) {
  if (refuse_in_capture("making a texture (cudaCreateTextureObject)", err)) return -1;
  if (dev_ready(err)) return -1;
  sim_tex_desc sd = {.format = d->format, .channels = d->channels, .dims = d->dims,
                     .width = d->width, .height = d->height, .depth = d->depth,
                     .linear = d->linear, .normalized = d->normalized,
                     .read_normalized = d->read_normalized};
  for (int k = 0; k < 3; k++) sd.address[k] = d->address[k];
  char msg[512];
  *handle = sim_texture_create(S.dev, &sd, src, msg, sizeof msg);
  if (!*handle) {
    cl_err_set(err, "texture", "cannot make the texture: %s", msg);
    return -1;
  }
  static const int esize[] = {4, 4, 4, 2, 2, 1, 1};
  model_copy(SIM_COPY_D2D, d->width * d->height * d->depth * (size_t)d->channels *
                               (size_t)esize[d->format], 0);
  return 0;
}

static void sim_texture_destroy_(uint64_t handle) {
  if (S.dev) sim_texture_destroy(S.dev, handle);
}

static int sim_memset_(void *dst, int byte, size_t bytes, cl_err *err) {
  if (refuse_in_capture("a memset (filling an array)", err)) return -1;
  model_copy(SIM_COPY_MEMSET, bytes, 0);
  written(dst, bytes);
  return host_mem_set(dst, byte, bytes, err);
}

/* Written by the host as cudalab's fill kernel writes it on a GPU: timed as a memset. */
static void sim_device_wrote(void *dst, size_t bytes) {
  model_copy(SIM_COPY_MEMSET, bytes, 0);
  written(dst, bytes);
}

static int sim_meminfo(size_t *free_b, size_t *total, cl_err *err) {
  if (dev_ready(err)) return -1;
  sim_mem_info(S.dev, free_b, total);
  return 0;
}

static int sim_module_load_(const cl_image *img, cl_module **out, cl_err *err) {
  if (dev_ready(err)) return -1;
  char msg[1024];
  sim_module *m = sim_memo_acquire(img->ptx, img->ptx_len, msg, sizeof msg);
  if (!m) {
    const char *note = feature_note(msg);
    cl_err_set(err, "simulator", "the simulator cannot run this module: %s%s%s", msg,
               note ? "\n" : "", note ? note : "");
    return -1;
  }
  cl_module *cm = calloc(1, sizeof *cm);
  if (!cm) {
    sim_memo_release(m);
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  cm->mod = m;
  *out = cm;
  return 0;
}

static void sim_module_unload_(cl_module *m) {
  if (!m) return;
  while (m->fns) {
    struct cl_function *f = m->fns;
    m->fns = f->next;
    free_names(f);
    free(f->entry);
    free(f->display);
    free(f->warned);
    free(f->noted);
    free(f->extents);
    free(f);
  }
  sim_memo_release(m->mod);
  free(m);
}

static int sim_function(cl_module *m, const char *name, cl_function **out, cl_err *err) {
  sim_kernel *k = sim_module_kernel(m->mod, name);
  if (!k) {
    cl_err_set(err, "simulator", "kernel '%s' is not in the module", name);
    return -1;
  }
  cl_function *f = calloc(1, sizeof *f);
  if (!f) {
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  f->k = k;
  if (!(f->entry = strdup(name))) {
    free(f);
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  f->next = m->fns;
  m->fns = f;
  *out = f;
  return 0;
}

/* Unknown here: the bindings fall back on ptxas's report, the same numbers the GPU reports. */
static int sim_func_attrs(cl_function *f, cl_func_attrs *out, cl_err *err) {
  (void)err;
  out->registers = -1;
  out->max_threads_per_block = -1;
  out->shared_static = sim_kernel_static_shared(f->k);
  out->local_bytes = sim_kernel_local_bytes(f->k);
  out->const_bytes = 0;
  return 0;
}

/* The simulator names kernels by their .entry (mangled) name; learners know "inc", not
 * "_Z3incPfi". Rewrites "kernel <entry>" in a message in place. */
static void name_kernel(char *text, size_t len, const cl_function *f) {
  if (!f->display || !f->display[0]) return;
  char *at = strstr(text, "kernel ");
  while (at && strncmp(at + 7, f->entry, strlen(f->entry)) != 0) at = strstr(at + 7, "kernel ");
  if (!at) return;
  char *rest = strdup(at + 7 + strlen(f->entry));
  if (!rest) return;
  snprintf(at, len - (size_t)(at - text), "kernel %s%s", f->display, rest);
  free(rest);
}

/* A long simulated launch draws a bar on the terminal (never into a pipe or a file), so a
 * learner knows the simulator is working. The simulator calls this from the launching thread,
 * first after 100 ms, then at most ten times a second, and once more at the end. */
static void draw_progress(unsigned long long done, unsigned long long total, void *ud) {
  (void)ud;
  const int width = 30;
  int filled = total ? (int)(done * (unsigned long long)width / total) : width;
  char bar[64];
  for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
  bar[width] = '\0';
  pthread_mutex_lock(&terminal_lock);
  fflush(stdout);
  fprintf(stderr, "\rsimulating [%s] %3d%%  block %llu of %llu", bar,
          total ? (int)(done * 100 / total) : 100, done, total);
  fflush(stderr);
  S.bar_drawn = 1;
  pthread_mutex_unlock(&terminal_lock);
}

/* Device printf's text: the progress bar, when one is on the line, is wiped first, so that the
 * kernel's lines never start after a bar's text (the lock: a bar drawn by another worker while
 * this text is written would be). */
static void printf_sink(const char *text, size_t len, void *ud) {
  (void)ud;
  pthread_mutex_lock(&terminal_lock);
  if (S.bar_drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
    S.bar_drawn = 0;
  }
  fwrite(text, 1, len, stdout);
  fflush(stdout);
  pthread_mutex_unlock(&terminal_lock);
}

/* A launch that completed with a warning (a race, under race_check = "warn"): stderr, as the
 * progress bar, since the launch itself succeeds and returns nothing to raise. The same race of
 * the same kernel is told once, not at each of cuda.time's twenty launches: the count of other
 * racing accesses at its end is left out of the comparison. */
static void warn(cl_function *f, char *text, size_t len) {
  name_kernel(text, len, f);
  size_t same = strlen(text);
  const char *more = strstr(text, "\n  (and ");
  if (more) same = (size_t)(more - text);
  if (f->warned && strlen(f->warned) == same && !strncmp(f->warned, text, same)) return;
  free(f->warned);
  f->warned = strndup(text, same);
  char line[1536];
  snprintf(line, sizeof line, "warning: %s\n  The launch completed and its results are kept, but "
           "a GPU may give others. A lesson's check() fails on a race; "
           "cuda.simopts{race_check = \"fail\"} makes it an error here too, race_check = false "
           "silences it.", text);
  cl_print_fitted(stderr, line);
  fflush(stderr);
}

/* A note of the launch's (sim_launch_opts.note: what may be a bug and may not), told once for a
 * kernel while it stays the same. Never a failure: a lesson's check goes on as if none came. */
static void note(cl_function *f, char *text, size_t len) {
  name_kernel(text, len, f);
  if (f->noted && !strcmp(f->noted, text)) return;
  free(f->noted);
  f->noted = strdup(text);
  char line[1536];
  snprintf(line, sizeof line, "note: %s.", text);
  cl_print_fitted(stderr, line);
  fflush(stderr);
}

/* ---- the kernel time limit ---- */

/* One launch's watcher: polls Ctrl-C's flag and the clock until the launch returns. */
typedef struct watcher {
  pthread_mutex_t lock;
  pthread_cond_t wake;          /* signalled when the launch returns */
  int done;                     /* it has returned */
  int timed_out;                /* the deadline stopped it */
  struct timespec deadline;     /* CLOCK_MONOTONIC */
  volatile sig_atomic_t stop;   /* what the simulator polls in place of Ctrl-C's flag */
} watcher;

#define WATCH_POLL_NS 5000000L /* how soon Ctrl-C's flag is passed on */

static void add_ns(struct timespec *t, long long ns) {
  ns += t->tv_nsec;
  t->tv_sec += (time_t)(ns / 1000000000LL);
  t->tv_nsec = (long)(ns % 1000000000LL);
}

static int reached(const struct timespec *now, const struct timespec *t) {
  return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

static void *watcher_main(void *arg) {
  watcher *w = arg;
  pthread_mutex_lock(&w->lock);
  while (!w->done) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (S.interrupt && *S.interrupt) w->stop = 1;
    if (!w->stop && reached(&now, &w->deadline)) {
      w->timed_out = 1;
      w->stop = 1;
    }
    add_ns(&now, WATCH_POLL_NS);
    pthread_cond_timedwait(&w->wake, &w->lock, &now);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* Starts w for a launch beginning now; 0, or -1 (no thread: the launch runs unlimited, as it
 * would without a limit, rather than fail). Signals are blocked in the thread: SIGINT is the
 * Lua thread's. The condition waits on CLOCK_MONOTONIC, which a change of the date leaves
 * alone. */
static int watcher_start(watcher *w, pthread_t *t) {
  memset(w, 0, sizeof *w);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w->wake, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&w->lock, NULL);
  clock_gettime(CLOCK_MONOTONIC, &w->deadline);
  add_ns(&w->deadline, (long long)(S.time_limit_s * 1e9));
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(t, NULL, watcher_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0) return 0;
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  return -1;
}

/* The launch has returned: the watcher ends. Returns whether the deadline stopped it. */
static int watcher_finish(watcher *w, pthread_t t) {
  pthread_mutex_lock(&w->lock);
  w->done = 1;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
  pthread_join(t, NULL);
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  return w->timed_out;
}

/* The limit is 0 or a number of seconds the bindings checked; abandon is for a GPU. */
static void sim_set_kernel_time_limit(double seconds, cl_abandon_fn abandon) {
  (void)abandon;
  S.time_limit_s = seconds > 0 ? seconds : 0;
}

static int capture_launch(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                          struct cl_stream *s, cl_err *err);
static void settle_managed(void);

/* A launch on stream s (NULL: the default one); grid_ws the grid workspace of a cooperative one
 * (0: none). An aside launch (launch_aside) keeps to memory: it leaves the counters, the model's
 * clock, the watches and the terminal as they were. */
static int launch_stream(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                         struct cl_stream *s, uint64_t grid_ws, int aside, cl_err *err) {
  if (dev_ready(err)) return -1;
  if (S.capture && aside) return refuse_in_capture("a launch aside", err);
  if (S.capture) return capture_launch(f, g, b, shared, args, s, err);
  sim_launch_opts o = S.opts;
  o.grid_workspace = grid_ws;
  o.interrupt = S.interrupt;
  watcher w;
  pthread_t wt;
  int watched = S.time_limit_s > 0 && watcher_start(&w, &wt) == 0;
  if (watched) o.interrupt = &w.stop;
  o.param_names = (const char *const *)f->names;
  o.extents = f->extents;
  o.nextents = f->nextents;
  o.regs_per_thread = f->registers;
  o.spill_bytes = f->spill_bytes;
  o.local_frame_bytes = f->stack_bytes;
  if (isatty(STDERR_FILENO) && !aside) o.progress = draw_progress;
  if (aside) {
    o.model = 0;
    o.unwatched = 1;
  }
  sim_dim3 grid = {g.x, g.y, g.z}, block = {b.x, b.y, b.z};
  char msg[1024], warning[1024] = "", noted[1024] = "";
  o.warning = warning;
  o.warninglen = sizeof warning;
  o.note = noted;
  o.notelen = sizeof noted;
  if (!aside) S.have_last = 0;
  int rc = sim_launch(S.dev, f->k, grid, block, shared, args, &o, aside ? NULL : &S.last, msg,
                      sizeof msg);
  int timed_out = watched && watcher_finish(&w, wt);
  if (aside) { /* the pages move, uncounted */
    sim_um_moves moved = {0};
    sim_managed_settle(S.dev, &moved);
  } else {
    settle_managed(); /* what the kernel touched moved, whether or not it completed */
  }
  if (S.bar_drawn) { /* leave the line clean for the result or the error */
    fputs("\r\033[K", stderr);
    S.bar_drawn = 0;
  }
  if (rc != 0 && timed_out && strstr(msg, " interrupted")) { /* the stop, not a fault meanwhile */
    cl_err_set(err, "kernel time limit", "%s",
               cl_kernel_time_message(msg, sizeof msg, f->display ? f->display : f->entry,
                                      S.time_limit_s));
    return -1;
  }
  if (rc != 0) {
    cl_err_set(err, "kernel fault", "%s", msg);
    name_kernel(err->text, sizeof err->text, f);
    return -1;
  }
  if (aside) return 0;
  if (warning[0]) warn(f, warning, sizeof warning);
  if (noted[0]) note(f, noted, sizeof noted);
  S.have_last = 1;
  if (S.last.profile.valid) {
    S.last_grid = grid;
    S.last_block = block;
    S.last_shared = sim_kernel_static_shared(f->k) + shared;
    const sim_device_desc *d = sim_device_info(S.dev);
    sim_model_launch(d, grid, block, S.last_shared, &S.last.profile, &S.model);
    /* in a replayed graph a kernel costs graph_node_us of overhead instead of launch_us */
    double node = S.replaying ? d->perf.graph_node_us - S.model.launch_us : 0;
    schedule(s, ENG_COMPUTE, S.model.time_us + node + S.um_last.fault_us, 0);
    S.launches++;
  }
  return 0;
}

static int sim_launch_(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                       cl_err *err) {
  return launch_stream(f, g, b, shared, args, NULL, 0, 0, err);
}

static int sim_launch_on(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                         cl_stream *s, cl_err *err) {
  return launch_stream(f, g, b, shared, args, s, 0, 0, err);
}

/* A cooperative launch: the grid workspace the driver makes for one ({size, barrier}, zeroed)
 * is device memory of this launch alone, so that a grid sync's counter starts from 0 every
 * time; sim_launch refuses a grid whose blocks cannot all be resident. aside as launch_stream. */
static int launch_coop(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                       int aside, cl_err *err) {
  if (dev_ready(err)) return -1;
  /* its grid workspace would be freed before the graph replays it */
  if (refuse_in_capture("a cooperative launch", err)) return -1;
  char msg[256];
  void *ws = sim_malloc(S.dev, 8, "grid workspace", msg, sizeof msg);
  if (!ws) {
    cl_err_set(err, "out of memory", "no room for a cooperative launch's grid workspace: %s",
               msg);
    return -1;
  }
  int rc = launch_stream(f, g, b, shared, args, NULL, (uint64_t)(uintptr_t)ws, aside, err);
  sim_free(S.dev, ws);
  return rc;
}

static int sim_launch_coop(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                           cl_err *err) {
  return launch_coop(f, g, b, shared, args, 0, err);
}

static int sim_launch_aside(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                            int cooperative, cl_err *err) {
  if (cooperative) return launch_coop(f, g, b, shared, args, 1, err);
  return launch_stream(f, g, b, shared, args, NULL, 0, 1, err);
}

static int sim_global(cl_module *m, const char *name, void **dptr, size_t *bytes, cl_err *err) {
  if (sim_module_global(m->mod, name, dptr, bytes) == 0) return 0;
  cl_err_set(err, "no such symbol", "the module has no __constant__ or __device__ variable %s",
             name);
  return -1;
}

static int sim_global_at(cl_module *m, int i, const char **name, void **dptr, size_t *bytes) {
  return sim_module_global_at(m->mod, i, name, dptr, bytes);
}

/* ---- managed memory: the simulator's record of where pages are (sim_managed.c), priced ---- */

static double um_us(const sim_um_moves *m, int prefetch) {
  return S.opts.model && S.dev ? sim_model_um_us(sim_device_info(S.dev), m, prefetch) : 0;
}

/* Adds what moved to t, with its modelled time. */
static void um_add(cl_um_stats *t, const sim_um_moves *m, double us) {
  t->gpu_faults += m->gpu_faults;
  t->gpu_groups += m->gpu_groups;
  t->cpu_faults += m->cpu_faults;
  t->htod_bytes += m->htod_bytes;
  t->dtoh_bytes += m->dtoh_bytes;
  t->remote_bytes += m->remote_bytes;
  t->fault_us += us;
}

/* After a launch: the groups its kernel touched move; um_last says what that cost. */
static void settle_managed(void) {
  sim_um_moves m = {0};
  sim_managed_settle(S.dev, &m);
  double us = um_us(&m, 0);
  memset(&S.um_last, 0, sizeof S.um_last);
  um_add(&S.um_last, &m, us);
  um_add(&S.um_total, &m, us);
  S.um_last.launches = us > 0 || m.gpu_faults || m.remote_bytes;
  S.um_total.launches += S.um_last.launches;
}

static int sim_alloc_managed(void **p, size_t bytes, const char *label, cl_err *err) {
  if (refuse_in_capture("making a managed array", err)) return -1;
  if (sim_alloc(p, bytes, label, err) != 0) return -1;
  if (bytes == 0 || sim_managed_make(S.dev, *p) == 0) return 0;
  sim_release(*p);
  *p = NULL;
  cl_err_set(err, "out of memory", "out of host memory for the managed array's page record");
  err->oom = 1;
  return -1;
}

/* The host reads or writes managed memory: pages on the device fault back, and the host waits
 * for them (a fault stalls the thread that took it). */
static int sim_managed_host_(void *p, size_t bytes, int write, cl_err *err) {
  if (refuse_in_capture("reading or writing a managed array on the host", err)) return -1;
  if (dev_ready(err)) return -1;
  sim_um_moves m = {0};
  sim_managed_host(S.dev, p, bytes, write, &m);
  if (write) written(p, bytes);
  if (!m.cpu_faults) return 0;
  double us = um_us(&m, 0);
  um_add(&S.um_total, &m, us);
  schedule(NULL, ENG_D2H, us, 1);
  return 0;
}

/* cudaMemPrefetchAsync: the pages move on a copy engine, on stream s, without faults; the host
 * does not wait. */
static int sim_prefetch_(void *p, size_t bytes, int to_device, cl_stream *s, cl_err *err) {
  if (refuse_in_capture("a prefetch", err)) return -1;
  if (dev_ready(err)) return -1;
  sim_um_moves m = {0};
  sim_managed_prefetch(S.dev, p, bytes, to_device, &m);
  double us = um_us(&m, 1);
  S.um_total.prefetch_bytes += m.htod_bytes + m.dtoh_bytes;
  S.um_total.prefetch_us += us;
  schedule(s, to_device ? ENG_H2D : ENG_D2H, us, 0);
  return 0;
}

static int sim_advise_(void *p, size_t bytes, int advice, int set, cl_err *err) {
  if (refuse_in_capture("advice on a managed array", err)) return -1;
  if (dev_ready(err)) return -1;
  int bit = 0;
  switch (advice) {
    case CL_ADVISE_READ_MOSTLY: bit = SIM_UM_READ_MOSTLY; break;
    case CL_ADVISE_PREFER_GPU: bit = SIM_UM_PREFER_GPU; break;
    case CL_ADVISE_PREFER_CPU: bit = SIM_UM_PREFER_CPU; break;
    default:
      cl_err_set(err, "invalid advice", "unknown advice %d", advice);
      return -1;
  }
  sim_managed_advise(S.dev, p, bytes, bit, set);
  return 0;
}

static void sim_managed_stats(cl_um_stats *last, cl_um_stats *total) {
  if (last) *last = S.um_last;
  if (total) *total = S.um_total;
}

static void sim_managed_where_(const void *p, size_t bytes, uint64_t counts[3], size_t *group) {
  counts[0] = counts[1] = counts[2] = 0;
  if (S.dev) sim_managed_where(S.dev, p, bytes, counts);
  if (group) *group = (size_t)SIM_UM_GROUP;
}

/* ---- CUDA graphs: captured launches, replayed with a graph's launch overhead ----
 *
 * Capture records each launch (its arguments' bytes and its views' extents copied) instead of
 * running it, as stream capture does on a GPU. A replay runs the launches in order and prices
 * each as the model prices a launch, but with graph_node_us of overhead in place of launch_us,
 * after one graph_launch_us for the graph: a GPU that knows the whole sequence ahead submits it
 * as one piece, and each kernel costs only its own start. Both figures are estimates (no
 * measurement of graphs on the H200 exists yet): NVIDIA's "Getting Started with CUDA Graphs"
 * found a graph of short kernels running each in well under the time of a separate launch, and
 * cudalab's measured launch_us (5.4 us, an isolated empty kernel between events) is the figure
 * each kernel costs outside one. */

static void graph_free_(cl_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n; i++) {
    free(g->node[i].bytes);
    free(g->node[i].argv);
    free(g->node[i].extents);
  }
  free(g->node);
  free(g);
}

static int oom(cl_err *err, const char *what) {
  cl_err_set(err, "out of memory", "out of host memory %s", what);
  err->oom = 1;
  return -1;
}

/* Copies one launch into the graph being captured. */
static int capture_launch(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                          struct cl_stream *s, cl_err *err) {
  cl_graph *gr = S.capture;
  if (s) return refuse_in_capture("a launch on a cuda.Stream", err);
  if (gr->n == gr->cap) {
    int cap = gr->cap ? gr->cap * 2 : 16;
    graph_node *t = realloc(gr->node, (size_t)cap * sizeof *t);
    if (!t) return oom(err, "recording a launch in cuda.graph");
    gr->node = t;
    gr->cap = cap;
  }
  int np = sim_kernel_param_count(f->k);
  size_t total = 0;
  for (int i = 0; i < np; i++) total += (sim_kernel_param_size(f->k, i) + 7) / 8 * 8;
  graph_node nd = {f, g, b, shared, malloc(total ? total : 1),
                   malloc((size_t)(np ? np : 1) * sizeof(void *)), NULL, 0};
  if (f->nextents) nd.extents = malloc((size_t)f->nextents * sizeof *nd.extents);
  if (!nd.bytes || !nd.argv || (f->nextents && !nd.extents)) {
    free(nd.bytes);
    free(nd.argv);
    free(nd.extents);
    return oom(err, "recording a launch in cuda.graph");
  }
  size_t off = 0;
  for (int i = 0; i < np; i++) {
    size_t sz = sim_kernel_param_size(f->k, i);
    memcpy(nd.bytes + off, args[i], sz);
    nd.argv[i] = nd.bytes + off;
    off += (sz + 7) / 8 * 8;
  }
  if (f->nextents) memcpy(nd.extents, f->extents, (size_t)f->nextents * sizeof *nd.extents);
  nd.nextents = f->nextents;
  gr->node[gr->n++] = nd;
  return 0;
}

static int sim_graph_begin(cl_err *err) {
  if (S.capture) {
    cl_err_set(err, "already capturing", "a graph is being captured already: cuda.graph "
               "cannot be called inside cuda.graph");
    return -1;
  }
  if (dev_ready(err)) return -1;
  S.capture = calloc(1, sizeof *S.capture);
  return S.capture ? 0 : oom(err, "starting cuda.graph");
}

static int sim_graph_end(cl_graph **out, cl_err *err) {
  (void)err;
  cl_graph *g = S.capture;
  S.capture = NULL;
  if (out) *out = g;
  else graph_free_(g);
  return 0;
}

/* Runs node nd with the extents it was captured with (f's own are put back afterwards). */
static int replay_node(graph_node *nd, cl_err *err) {
  cl_function *f = nd->f;
  sim_extent *keep = f->extents;
  int nkeep = f->nextents;
  f->extents = nd->extents;
  f->nextents = nd->nextents;
  int rc = launch_stream(f, nd->grid, nd->block, nd->shared, nd->argv, NULL, 0, 0, err);
  f->extents = keep;
  f->nextents = nkeep;
  return rc;
}

static int sim_graph_launch(cl_graph *g, cl_err *err) {
  if (refuse_in_capture("launching a graph", err)) return -1;
  if (dev_ready(err)) return -1;
  schedule(NULL, ENG_COMPUTE, S.opts.model ? sim_device_info(S.dev)->perf.graph_launch_us : 0, 0);
  S.replaying = 1;
  int rc = 0;
  for (int i = 0; i < g->n && rc == 0; i++) rc = replay_node(&g->node[i], err);
  S.replaying = 0;
  return rc;
}

/* ---- the debugger (k:debug): sim_debug behind cl_debug_ops ---- */

struct cl_debug {
  sim_debug *sd;
  cl_function *fn;
  cl_debug_hooks hooks;    /* the bindings' */
  char fault[1024];        /* the failure a stop shows, with the kernel's own name in it */
};

/* The codes are passed through as they are (ints: the two enums are different types). */
_Static_assert((int)CL_DBG_START == (int)SIM_DBG_START &&
               (int)CL_DBG_FAULT == (int)SIM_DBG_FAULT &&
               (int)CL_DV_OTHER == (int)SIM_DV_OTHER && (int)CL_DV_CHAR == (int)SIM_DV_CHAR &&
               (int)CL_DBG_W_DONE == (int)SIM_DBG_W_DONE && CL_DEBUG_ELEMS == SIM_DEBUG_ELEMS,
               "the debugger's codes are the simulator's");

static int dbg_stop(sim_debug *sd, void *ud) {
  (void)sd;
  cl_debug *d = ud;
  return d->hooks.stop(d, d->hooks.ud);
}

static uint32_t dbg_cond(sim_debug *sd, int bp, long long block, int warp, uint32_t lanes,
                         void *ud) {
  (void)sd;
  cl_debug *d = ud;
  return d->hooks.cond ? d->hooks.cond(d, bp, block, warp, lanes, d->hooks.ud) : lanes;
}

static void dbg_progress(sim_debug *sd, long long block, int warp, int line, void *ud) {
  (void)sd;
  cl_debug *d = ud;
  if (d->hooks.progress) d->hooks.progress(d, block, warp, line, d->hooks.ud);
}

static cl_debug *dbg_open(cl_function *fn, const cl_debug_hooks *hooks, cl_err *err) {
  if (dev_ready(err)) return NULL;
  cl_debug *d = calloc(1, sizeof *d);
  if (d) {
    d->fn = fn;
    d->hooks = *hooks;
    sim_debug_hooks h = {dbg_stop, dbg_cond, d, S.interrupt, dbg_progress};
    d->sd = sim_debug_new(fn->k, &h);
  }
  if (d && d->sd) return d;
  free(d);
  cl_err_set(err, "out of memory", "out of host memory for the debugger");
  return NULL;
}

static void dbg_close(cl_debug *d) {
  if (!d) return;
  sim_debug_free(d->sd);
  free(d);
}

/* One host thread, Ctrl-C through the debugger (a stop, not the end), no progress bar over its
 * prompt, no time limit on a learner who reads, and the counters and the modelled clock left as
 * the last ordinary launch left them. A cooperative one has a grid workspace of its own, as
 * launch_coop gives one. */
static int dbg_launch(cl_debug *d, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                      int cooperative, cl_err *err) {
  if (refuse_in_capture("a launch under the debugger", err)) return -1;
  if (dev_ready(err)) return -1;
  char msg[1024], warning[1024] = "", noted[1024] = "";
  void *ws = NULL;
  if (cooperative && !(ws = sim_malloc(S.dev, 8, "grid workspace", msg, sizeof msg))) {
    cl_err_set(err, "out of memory", "no room for a cooperative launch's grid workspace: %s",
               msg);
    return -1;
  }
  cl_function *f = d->fn;
  sim_launch_opts o = S.opts;
  o.grid_workspace = (uint64_t)(uintptr_t)ws;
  o.threads = 1;
  o.interrupt = NULL;
  o.progress = NULL;
  o.model = 0;
  o.debug = d->sd;
  o.param_names = (const char *const *)f->names;
  o.regs_per_thread = f->registers;
  sim_dim3 grid = {g.x, g.y, g.z}, block = {b.x, b.y, b.z};
  o.warning = warning; /* a race is told as a plain launch tells it */
  o.warninglen = sizeof warning;
  o.note = noted;
  o.notelen = sizeof noted;
  int rc = sim_launch(S.dev, f->k, grid, block, shared, args, &o, NULL, msg, sizeof msg);
  if (ws) sim_free(S.dev, ws);
  settle_managed(); /* the pages it touched moved; its time is not modelled */
  if (rc == 0) {
    if (warning[0]) warn(f, warning, sizeof warning);
    if (noted[0]) note(f, noted, sizeof noted);
    return 0;
  }
  cl_err_set(err, "kernel fault", "%s", msg);
  name_kernel(err->text, sizeof err->text, f);
  return -1;
}

static const char *dbg_file(cl_debug *d) { return sim_debug_file(d->sd); }

static int dbg_set_break(cl_debug *d, int line, int has_cond, cl_err *err) {
  char msg[512];
  int id = sim_debug_break(d->sd, line, has_cond, msg, sizeof msg);
  if (id < 0) cl_err_set(err, "debugger", "%s", msg);
  return id;
}

static int dbg_delete_break(cl_debug *d, int id) { return sim_debug_delete(d->sd, id); }

_Static_assert((int)CL_DBG_RUN == (int)SIM_DBG_RUN && (int)CL_DBG_UNTIL == (int)SIM_DBG_UNTIL &&
               (int)CL_DBG_STEP_IN == (int)SIM_DBG_STEP_IN, "the ways to go on are the same");

static void dbg_resume(cl_debug *d, int how) { sim_debug_resume(d->sd, how); }

static int dbg_frames(cl_debug *d, long long block, int thread, cl_debug_frame *out, int max) {
  sim_debug_frame f[66];
  int n = sim_debug_frames(d->sd, block, thread, f, 66);
  for (int i = 0; i < n && i < max && i < 66; i++) {
    _Static_assert(sizeof out[i].func == sizeof f[i].func, "the same names");
    memcpy(out[i].func, f[i].func, sizeof out[i].func);
    out[i].line = f[i].line;
    out[i].file = f[i].file;
    out[i].is_kernel = f[i].is_kernel;
  }
  return n;
}

static int dbg_select(cl_debug *d, int n, cl_err *err) {
  char msg[256];
  if (sim_debug_select(d->sd, n, msg, sizeof msg) == 0) return 0;
  cl_err_set(err, "debugger", "%s", msg);
  return -1;
}

static int dbg_func_line(cl_debug *d, const char *name, int *line) {
  return sim_debug_func_line(d->sd, name, line);
}

static void dbg_where(cl_debug *d, cl_debug_stop *out) {
  sim_debug_stop st;
  sim_debug_where(d->sd, &st);
  *out = (cl_debug_stop){st.reason, st.bp, st.lanes, st.line, st.block, st.thread,
                         st.focus_line, st.file, st.focus_file, st.focus_state, st.blocks_done,
                         st.blocks_started, st.blocks_total, NULL};
  if (st.fault) {
    snprintf(d->fault, sizeof d->fault, "%s", st.fault);
    name_kernel(d->fault, sizeof d->fault, d->fn);
    out->fault = d->fault;
  }
}

static int dbg_warps(cl_debug *d, cl_debug_warp *out, int max) {
  sim_debug_warp *w = max > 0 ? calloc((size_t)max, sizeof *w) : NULL;
  int n = sim_debug_warps(d->sd, w, w ? max : 0);
  for (int i = 0; w && i < n && i < max; i++) {
    out[i] = (cl_debug_warp){w[i].block, w[i].warp, w[i].state, w[i].live, w[i].ngroups, {{0}}};
    for (int g = 0; g < w[i].ngroups; g++)
      out[i].group[g] = (cl_debug_group){w[i].group[g].line, w[i].group[g].file,
                                         w[i].group[g].mask, w[i].group[g].running};
  }
  free(w);
  return max > 0 && !w ? 0 : n;
}

static int dbg_focus(cl_debug *d, cl_dim3 block, cl_dim3 thread, cl_err *err) {
  char msg[512];
  sim_dim3 b = {block.x, block.y, block.z}, t = {thread.x, thread.y, thread.z};
  if (sim_debug_focus(d->sd, b, t, msg, sizeof msg) == 0) return 0;
  cl_err_set(err, "debugger", "%s", msg);
  return -1;
}

static int dbg_read(cl_debug *d, long long block, int thread, const char *name,
                    cl_debug_value *out, cl_err *err) {
  sim_debug_value v;
  char msg[512];
  if (sim_debug_read(d->sd, block, thread, name, &v, msg, sizeof msg) < 0) {
    cl_err_set(err, "debugger", "%s", msg);
    return -1;
  }
  out->enc = v.enc;
  out->size = v.size;
  out->count = v.count;
  out->shown = v.shown;
  out->addr = v.addr;
  memcpy(out->bits, v.bits, sizeof out->bits);
  snprintf(out->type, sizeof out->type, "%s", v.type);
  return 0;
}

static int dbg_names(cl_debug *d, long long block, int thread, const char **out, int max) {
  return sim_debug_names(d->sd, block, thread, out, max);
}

static int dbg_mem(cl_debug *d, long long block, int thread, uint64_t a, void *out, size_t n,
                   cl_err *err) {
  char msg[512];
  if (sim_debug_mem(d->sd, block, thread, a, out, n, msg, sizeof msg) == 0) return 0;
  cl_err_set(err, "debugger", "%s", msg);
  return -1;
}

static int dbg_shared(cl_debug *d, const char *name, uint64_t *addr, uint64_t *size) {
  return sim_debug_shared(d->sd, name, addr, size);
}

static int dbg_global(cl_debug *d, const char *name, uint64_t *addr, uint64_t *size,
                      int *is_const) {
  return sim_debug_global(d->sd, name, addr, size, is_const);
}

_Static_assert((int)CL_DC_NOPS == (int)SIM_DC_NOPS && (int)CL_DC_SEL == (int)SIM_DC_SEL &&
               (int)CL_DC_LT == (int)SIM_DC_LT && (int)CL_DC_CVT == (int)SIM_DC_CVT,
               "the compiled conditions' operations are the simulator's");

static int dbg_set_cond(cl_debug *d, int bp, const cl_debug_cop *ops, int n, cl_err *err) {
  sim_debug_cop *p = n > 0 ? calloc((size_t)n, sizeof *p) : NULL;
  char msg[512];
  if (n > 0 && !p) {
    cl_err_set(err, "out of memory", "out of host memory for a condition");
    return -1;
  }
  for (int k = 0; k < n; k++) {
    const cl_debug_cop *o = &ops[k];
    p[k] = (sim_debug_cop){o->op, {o->t.k, o->t.size, o->t.sgn},
                           {o->from.k, o->from.size, o->from.sgn}, o->which, o->i, o->f, "", ""};
    snprintf(p[k].name, sizeof p[k].name, "%s", o->name);
    snprintf(p[k].type, sizeof p[k].type, "%s", o->type);
  }
  int rc = sim_debug_cond(d->sd, bp, p, n, msg, sizeof msg);
  free(p);
  if (rc < 0) cl_err_set(err, "debugger", "%s", msg);
  return rc;
}

static const cl_debug_ops debug_ops = {
    .set_cond = dbg_set_cond,
    .frames = dbg_frames,
    .select = dbg_select,
    .func_line = dbg_func_line,
    .mem = dbg_mem,
    .shared = dbg_shared,
    .global = dbg_global,
    .open = dbg_open,
    .close = dbg_close,
    .launch = dbg_launch,
    .file = dbg_file,
    .set_break = dbg_set_break,
    .delete_break = dbg_delete_break,
    .resume = dbg_resume,
    .where = dbg_where,
    .warps = dbg_warps,
    .focus = dbg_focus,
    .read = dbg_read,
    .names = dbg_names,
};

/* ---- streams on the modelled clock ---- */

static int sim_stream_create(cl_stream **out, cl_err *err) {
  if (dev_ready(err)) return -1;
  *out = calloc(1, sizeof **out);
  if (*out) return 0;
  cl_err_set(err, "out of memory", "out of host memory");
  return -1;
}

static void sim_stream_destroy(cl_stream *s) { free(s); }

/* The stream's work has run already; the host's place on the clock moves to its end. */
static int sim_stream_sync(cl_stream *s, volatile sig_atomic_t *interrupt, cl_err *err) {
  (void)interrupt;
  if (refuse_in_capture("waiting for a stream", err)) return -1;
  S.host_us = later(S.host_us, s ? later(s->ready_us, S.default_ready) : S.clock_us);
  return 0;
}

static int sim_stream_wait(cl_stream *s, cl_event *ev, cl_err *err) {
  (void)err;
  if (s) s->ready_us = later(s->ready_us, ev->model_us);
  else S.default_ready = later(S.default_ready, ev->model_us);
  return 0;
}

static int sim_copy_async(void *dst, const void *src, size_t bytes, int dir, cl_stream *s,
                          cl_err *err) {
  if (refuse_in_capture("a copy on a stream", err)) return -1;
  int h2d = dir == CL_COPY_H2D;
  int pinned = is_pinned(h2d ? src : dst, bytes);
  double us = copy_us(h2d ? SIM_COPY_H2D : SIM_COPY_D2H, bytes, pinned);
  schedule(s, h2d ? ENG_H2D : ENG_D2H, us, !pinned);
  if (h2d) written(dst, bytes);
  return host_mem_copy(dst, src, bytes, err);
}

static int sim_span_open(cl_span **out, cl_stream *s, cl_err *err) {
  (void)s;
  *out = calloc(1, sizeof **out);
  if (*out) return 0;
  cl_err_set(err, "out of memory", "out of host memory");
  return -1;
}

/* The operation just queued is the latest one scheduled. */
static int sim_span_close(cl_span *sp, cl_stream *s, cl_err *err) {
  (void)s;
  (void)err;
  sp->start_us = S.last_start;
  sp->end_us = S.last_end;
  return 0;
}

static int sim_span_read(cl_event *origin, cl_span *sp, double *start, double *end, cl_err *err) {
  (void)err;
  *start = (sp->start_us - origin->model_us) / 1e3;
  *end = (sp->end_us - origin->model_us) / 1e3;
  return 0;
}

static void sim_span_free(cl_span *sp) { free(sp); }

static void sim_set_resources(cl_function *f, int registers, size_t stack_bytes,
                              size_t spill_bytes) {
  f->registers = registers > 0 ? registers : 0;
  f->stack_bytes = stack_bytes;
  f->spill_bytes = spill_bytes;
}

static int sim_event_clock(void) { return S.opts.model ? CL_CLOCK_MODEL : CL_CLOCK_HOST; }

static int sim_event_create(cl_event **out, cl_err *err) {
  *out = calloc(1, sizeof **out);
  if (*out) return 0;
  cl_err_set(err, "out of memory", "out of host memory");
  return -1;
}

static void sim_event_destroy(cl_event *e) { free(e); }

/* An event happens when its stream's work queued before it ends, and not before the host
 * records it. On the default stream that is all work queued so far. */
static int sim_event_record_on(cl_event *e, cl_stream *s, cl_err *err) {
  if (refuse_in_capture("recording an event (cuda.time, a timeline)", err)) return -1;
  clock_gettime(CLOCK_MONOTONIC, &e->t);
  e->model_us = s ? later(later(s->ready_us, S.default_ready), S.host_us) : S.clock_us;
  return 0;
}

static int sim_event_record(cl_event *e, cl_err *err) { return sim_event_record_on(e, NULL, err); }

static int sim_event_elapsed(cl_event *a, cl_event *b, float *ms, cl_err *err) {
  (void)err;
  if (S.opts.model) *ms = (float)((b->model_us - a->model_us) / 1e3);
  else *ms = (float)((b->t.tv_sec - a->t.tv_sec) * 1e3 + (b->t.tv_nsec - a->t.tv_nsec) / 1e6);
  return 0;
}

static int sim_synchronize(volatile sig_atomic_t *interrupt, cl_err *err) {
  (void)interrupt;
  if (refuse_in_capture("a synchronize (cuda.sync, or a wait for the device)", err)) return -1;
  S.host_us = S.clock_us;
  return 0;
}

/* cuda.blas: the host's BLAS computes the product (device memory is host memory here), and the
 * modelled clock advances by what cuBLAS takes on the modelled H200 (blas_model.c). */
static int sim_gemm(const cl_gemm *g, cl_err *err) {
  if (refuse_in_capture("cuda.blas", err)) return -1;
  if (blas_host_gemm(g, err) != 0) return -1;
  schedule(NULL, ENG_COMPUTE, S.opts.model ? blas_model_us(g) : 0, 0);
  return 0;
}

static const char *sim_blas_name(void) {
  static char name[96];
  const char *host = blas_host_name();
  if (!host) return NULL;
  snprintf(name, sizeof name, "host BLAS (%s), timed as cuBLAS on an H200", host);
  return name;
}

const cl_backend cl_backend_sim = {
    .name = "sim",
    .alloc_zeroes = 1,
    .device = sim_device_props,
    .target_arch = sim_target_arch,
    .alloc = sim_alloc,
    .release = sim_release,
    .host_alloc_pinned = sim_host_alloc,
    .host_release_pinned = sim_host_release,
    .htod = sim_htod,
    .dtoh = sim_dtoh,
    .dtod = sim_dtod,
    .memset = sim_memset_,
    .device_wrote = sim_device_wrote,
    .meminfo = sim_meminfo,
    .host_available = sim_host_available,
    .module_load = sim_module_load_,
    .module_unload = sim_module_unload_,
    .function = sim_function,
    .module_global = sim_global,
    .module_global_at = sim_global_at,
    .func_attrs = sim_func_attrs,
    .source_names = sim_source_names,
    .set_resources = sim_set_resources,
    .launch = sim_launch_,
    .launch_cooperative = sim_launch_coop,
    .event_clock = sim_event_clock,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .event_elapsed_ms = sim_event_elapsed,
    .synchronize = sim_synchronize,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_sync = sim_stream_sync,
    .stream_wait = sim_stream_wait,
    .event_record_on = sim_event_record_on,
    .copy_async = sim_copy_async,
    .launch_on = sim_launch_on,
    .span_open = sim_span_open,
    .span_close = sim_span_close,
    .span_read = sim_span_read,
    .span_free = sim_span_free,
    .gemm = sim_gemm,
    .blas_name = sim_blas_name,
    .attach_interrupt = sim_attach,
    .set_kernel_time_limit = sim_set_kernel_time_limit,
    .alloc_managed = sim_alloc_managed,
    .managed_host = sim_managed_host_,
    .prefetch = sim_prefetch_,
    .advise = sim_advise_,
    .graph_begin = sim_graph_begin,
    .graph_end = sim_graph_end,
    .graph_launch = sim_graph_launch,
    .graph_free = graph_free_,
    .texture_create = sim_texture_create_,
    .texture_destroy = sim_texture_destroy_,
    .sim = &sim_ops,
};
