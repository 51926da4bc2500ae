/* backend.h: the one interface between the Lua bindings and whatever runs kernels.
 * Implemented by repl/backend/backend_cuda.c (cudart), repl/backend/backend_sim.c (the PTX
 * simulator) and repl/backend/backend_none.c (no GPU: compile and check only). The bindings never
 * call CUDA directly.
 *
 * Every operation returns 0 on success or -1 with `err` filled in. Pointers returned as device
 * memory are opaque to the bindings: they are passed back to the backend, never dereferenced. */
#ifndef CUDALAB_BACKEND_H
#define CUDALAB_BACKEND_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "device.h"

/* A failed backend call: the CUDA error's name, one readable paragraph, and what it implies. */
typedef struct cl_err {
  char name[48];   /* "cudaErrorMemoryAllocation", "launch limit", ... */
  char text[1024]; /* what happened and what to try */
  int sticky;      /* the context is poisoned: the process must be replaced */
  int oom;         /* out of device memory: a garbage collection may help */
  int host_limited; /* with oom: the device had room but the host memory that backs it (the
                       simulator's) did not, and text says how much there is */
} cl_err;

void cl_err_set(cl_err *err, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sizes and durations for messages, shared by every layer that words one: a byte count in
 * binary units as cudaMalloc and nvidia-smi count, exact when it is one ("2 GiB") else three
 * significant digits ("1.50 GiB"), never the fourteen of lua_pushfstring's %f; a duration in s
 * or ms ("2 s", "500 ms", "1.5 s"). Both return buf. */
const char *cl_bytes_text(char *buf, size_t cap, double bytes);
const char *cl_seconds_text(char *buf, size_t cap, double seconds);

/* The message of a launch stopped by the kernel time limit (cuda.limits{kernel_time}), the same
 * on every backend; `kernel` is the name the source gives it. Returns buf. Its words say who set
 * the limit: a class (cl_kernel_time_by_class(1), before the limit is set) or this session. */
const char *cl_kernel_time_message(char *buf, size_t cap, const char *kernel, double limit_s);
void cl_kernel_time_by_class(int by_class);

/* What a backend calls, from a thread of its own, when a kernel has outrun the time limit on a
 * device where nothing short of ending the process stops it (a GPU): prints message (NULL: says
 * nothing) and ends the engine as poisoned, so that the console starts a fresh one. The engine
 * provides it (runtime.c); it never returns. */
typedef void (*cl_abandon_fn)(const char *message);

/* Zero-filled host memory aligned to 256 bytes, as cudaMalloc aligns device memory: what the
 * backends without a GPU hand out as device memory, and what host buffers use. free() frees it.
 * NULL (with err set, err->oom) when the host is out of memory. */
void *host_alloc_zeroed(size_t bytes, cl_err *err);
/* text on out, each line longer than the terminal (COLUMNS, else 80) broken at spaces, so that
 * the terminal never splits a word of a warning. */
void cl_print_fitted(FILE *out, const char *text);

/* The operations of a backend whose device memory is host memory (sim, none): copies of every
 * direction are memmove, memset is memset, "pinned" buffers are ordinary aligned ones. */
int host_mem_alloc(void **p, size_t bytes, cl_err *err);
int host_mem_copy(void *dst, const void *src, size_t bytes, cl_err *err);
int host_mem_set(void *dst, int byte, size_t bytes, cl_err *err);

typedef struct cl_dim3 {
  unsigned x, y, z;
} cl_dim3;

/* What NVRTC produced for one module: the backend takes what it can run. */
typedef struct cl_image {
  const char *ptx;     /* NUL-terminated */
  size_t ptx_len;
  const void *cubin;   /* may be NULL when compiled for a virtual architecture */
  size_t cubin_len;
} cl_image;

typedef struct cl_module cl_module;     /* backend-owned */
typedef struct cl_function cl_function; /* owned by its module */
typedef struct cl_event cl_event;
typedef struct cl_stream cl_stream; /* NULL is the default (legacy) stream */
typedef struct cl_span cl_span;     /* one operation's place on the device's timeline */
typedef struct cl_graph cl_graph;   /* captured launches, ready to replay; the backend's */

/* The direction of an asynchronous copy. */
enum { CL_COPY_H2D, CL_COPY_D2H };

/* Resource use of one kernel as the backend sees it (-1 where unknown). */
typedef struct cl_func_attrs {
  int registers;
  int max_threads_per_block;
  size_t shared_static, local_bytes, const_bytes;
} cl_func_attrs;

/* One matrix multiply, C = alpha * op(A) * op(B) + beta * C, row-major as Lua arrays are:
 * op(A) is m x k, op(B) k x n, C m x n; op(X) is X, or its transpose when trans_x is set (X is
 * then stored k x m, or n x k). The pointers are device memory of the backend. */
typedef struct cl_gemm {
  int f64;              /* doubles, else floats */
  int trans_a, trans_b;
  int m, n, k;
  double alpha, beta;
  const void *a, *b;
  void *c;
} cl_gemm;

/* What a backend's events measure. */
enum { CL_CLOCK_GPU, CL_CLOCK_MODEL, CL_CLOCK_HOST };

/* ---- What a simulating backend shows that a GPU keeps to itself: cuda.stats, cuda.simopts and
 * the timing model's explanation. These are cudalab's own types: the bindings see them, never
 * the simulator's structs, and only the backend that simulates converts between the two. */

/* Counters of one launch or one source line, as Nsight Compute defines them: a request is one
 * warp-level memory instruction, a sector an aligned 32-byte piece of memory its active lanes
 * touch, a shared wavefront one pass through the 32 banks. */
typedef struct cl_counters {
  uint64_t warp_insts, thread_insts;
  uint64_t ld_requests, ld_sectors, st_requests, st_sectors; /* global memory */
  uint64_t shared_wavefronts, bank_conflicts;                /* shared memory */
  uint64_t divergent_branches;
} cl_counters;

/* The counters of the last completed launch. Lines 1 .. nlines-1 of source_file may have
 * counters of their own (line_counters); line 0 is unused. */
typedef struct cl_stats {
  cl_counters total;
  int nlines;
  char source_file[256]; /* from the PTX's .file directive */
} cl_stats;

/* The most limits a launch's modelled time can be bound by. */
#define CL_MODEL_TERMS 16

/* One limit's share of a modelled launch: what that limit alone would take. */
typedef struct cl_model_term {
  const char *key;  /* "dram"; a static string */
  const char *what; /* "DRAM bandwidth"; a static string */
  double us;
} cl_model_term;

/* The timing model's figures for one launch, and why it takes as long as it does. */
typedef struct cl_model {
  double time_us;     /* the launch, start event to stop event */
  double launch_us;   /* of which fixed launch overhead */
  const char *limit_key, *limit_text; /* the limit that binds (static strings) */
  int nterms;         /* the limits that apply, in the model's order (not sorted by time) */
  cl_model_term term[CL_MODEL_TERMS];
  double dram_bytes, l2_bytes, flops;
  double achieved_gbs, peak_gbs, achieved_gflops, peak_gflops;
  double blocks_per_sm, warps_per_sm, occupancy, waves;
  double l1_hit_rate, l2_hit_rate;
  char why[400];      /* one sentence: why that limit binds, with figures */
} cl_model;

/* The most timing-model parameters a simulating backend may have. */
#define CL_PERF_MAX 64

/* The timing model's parameters: value[i] is the one perf_param(i) describes. */
typedef struct cl_perf {
  double value[CL_PERF_MAX];
} cl_perf;

/* One timing-model parameter as the simulator describes it (sim/perf_params.def's row): what
 * cuda.simopts and cuda.stats accept for it, and what help says of it. */
typedef struct cl_perf_param {
  const char *name; /* "dram_gbs" */
  const char *unit; /* "GB/s" */
  const char *doc;  /* what it means */
  int zero;         /* 0 is allowed (an effect that may be absent) */
  double lo, hi;    /* the range of a nonzero value */
} cl_perf_param;

/* What a shared-memory race does to a simulated launch: nothing (not checked), fail it, or let
 * it complete with a warning on stderr (the prompt's default). */
enum { CL_RACE_OFF, CL_RACE_FAIL, CL_RACE_WARN };
/* The checks of cuda.sanitize, bits of cl_sim_opts.sanitize: a NaN or infinity the kernel made
 * and stores (with CL_SAN_NAN_MADE as well: made, stored or not), a read of memory nothing has
 * written, a __syncthreads() not every thread reaches. */
enum { CL_SAN_NAN = 1, CL_SAN_INIT = 2, CL_SAN_SYNC = 4, CL_SAN_NAN_MADE = 8 };

/* The order a simulated launch hands out its blocks in (cuda.simopts{block_order =}): by linear
 * index, the last first, or a permutation the seed decides. */
enum { CL_ORDER_FORWARD, CL_ORDER_REVERSE, CL_ORDER_SHUFFLE };

/* The launch options a learner can change with cuda.simopts and cuda.sanitize. */
typedef struct cl_sim_opts {
  int race_check;    /* CL_RACE_*: report shared-memory races between threads */
  int threads;       /* host threads to spread blocks over; 0 = all cores, 1 = deterministic */
  int model;         /* price launches and copies with the timing model (events give its clock) */
  size_t stack_size; /* per-thread call stack in bytes; 0 = stack_default */
  int sanitize;      /* CL_SAN_* bits */
  int block_order;   /* CL_ORDER_*: the order a launch's blocks are handed out in */
  unsigned long long seed; /* CL_ORDER_SHUFFLE's permutation */
} cl_sim_opts;

/* One write to a watched element (cuda.watch), as the simulator recorded it. */
typedef struct cl_watch_write {
  unsigned thread[3], block[3];
  int line;          /* source line, or the PTX line when the kernel has no line information */
  char where[160];   /* "kernel.cu:7", or "PTX line 45" */
  char kernel[96];   /* the kernel's name as the source writes it */
  const char *op;    /* "store", "atomicAdd", ... (a static string) */
  uint64_t old, nv;  /* the element's bytes before and after, little-endian */
} cl_watch_write;
/* ---- The debugger (k:debug): a launch on a simulator that stops where the learner asks, so that
 * its warps and variables can be looked at. These mirror the simulator's own (sim.h's sim_debug_*),
 * which only the simulating backend sees. */
typedef struct cl_debug cl_debug; /* one launch under the debugger; the backend's */

/* Why it stopped; how a value reads; where a warp is; how to go on (resume). */
enum { CL_DBG_RUN, CL_DBG_STEP_IN, CL_DBG_NEXT, CL_DBG_FINISH, CL_DBG_UNTIL };
enum { CL_DBG_START, CL_DBG_BREAK, CL_DBG_STEP, CL_DBG_EXITED, CL_DBG_INTERRUPT, CL_DBG_FAULT };
enum { CL_DV_NONE, CL_DV_SIGNED, CL_DV_UNSIGNED, CL_DV_FLOAT, CL_DV_BOOL, CL_DV_CHAR,
       CL_DV_POINTER, CL_DV_OTHER };
enum { CL_DBG_W_RUNS, CL_DBG_W_BARRIER, CL_DBG_W_DONE };

typedef struct cl_debug_hooks {
  /* The launch is paused (on the thread that launched it): look at it through cl_debug_ops,
   * then return 0 to go on as resume last said, or -1 to abandon the launch. */
  int (*stop)(cl_debug *d, void *ud);
  /* Of `lanes` of warp `warp` of block `block` (linear index), which reached breakpoint bp (set
   * with a condition): those for which its condition holds. */
  uint32_t (*cond)(cl_debug *d, int bp, long long block, int warp, uint32_t lanes, void *ud);
  /* About once a second while the launch runs between stops (may be NULL): the warp running
   * (block, warp, line), for a progress line; where() gives the blocks done. */
  void (*progress)(cl_debug *d, long long block, int warp, int line, void *ud);
  void *ud;
} cl_debug_hooks;

/* The stop: why, and where the thread in focus (the one commands mean) is. */
typedef struct cl_debug_stop {
  int reason;             /* CL_DBG_* */
  int bp;                 /* CL_DBG_BREAK: which breakpoint */
  uint32_t lanes;         /* the lanes of the warp that stopped that are there */
  int line;               /* the line that warp is at; 0 unknown */
  long long block;        /* the block in focus (linear) */
  int thread;             /* the thread in focus (linear in its block) */
  int focus_line;         /* where that thread is; 0 unknown or exited */
  const char *file, *focus_file; /* the files of line and focus_line when not the kernel's own
                           * (an #include'd header's path), NULL for the kernel's; valid
                           * during the stop */
  int focus_state;        /* CL_DBG_W_* of that thread (DONE: exited) */
  long long blocks_done, blocks_started, blocks_total;
  const char *fault;      /* CL_DBG_FAULT: why the launch failed (valid during the stop) */
} cl_debug_stop;

/* A warp of a block in flight, its lanes grouped by where they are. */
typedef struct cl_debug_group {
  int line;
  const char *file;       /* as cl_debug_stop's */
  uint32_t mask;
  int running;            /* the path the warp runs now; the others wait for it */
} cl_debug_group;
typedef struct cl_debug_warp {
  long long block;        /* linear */
  int warp;               /* index in the block */
  int state;              /* CL_DBG_W_* */
  uint32_t live;          /* lanes that have not exited */
  int ngroups;
  cl_debug_group group[32];
} cl_debug_warp;

#define CL_DEBUG_ELEMS 16 /* elements of an array one read gives */
typedef struct cl_debug_value {
  int enc;                /* CL_DV_* */
  int size;               /* bytes of one element */
  int count;              /* elements: 1 for a scalar */
  int shown;              /* how many of them bits holds */
  uint64_t bits[CL_DEBUG_ELEMS];
  uint64_t addr;          /* where it lies in the thread's memory, for mem; 0 in a register */
  char type[64];          /* as C writes it: "float *" */
} cl_debug_value;

/* A frame of a thread's call stack: its function and line there (a caller's: its call's). */
typedef struct cl_debug_frame {
  char func[128];
  int line;               /* 0: the function has no line information (a math function's) */
  const char *file;       /* as cl_debug_stop's */
  int is_kernel;
} cl_debug_frame;

/* A breakpoint's condition compiled for a whole warp: sim.h's sim_debug_cop, which says what
 * each operation does; the front end types it, the simulator computes it. */
enum { CL_DC_INT, CL_DC_FLOAT, CL_DC_VAR, CL_DC_TID, CL_DC_BID, CL_DC_CVT, CL_DC_NEG, CL_DC_BNOT,
       CL_DC_LNOT, CL_DC_ADD, CL_DC_SUB, CL_DC_MUL, CL_DC_DIV, CL_DC_MOD, CL_DC_AND, CL_DC_OR,
       CL_DC_XOR, CL_DC_SHL, CL_DC_SHR, CL_DC_LT, CL_DC_LE, CL_DC_GT, CL_DC_GE, CL_DC_EQ,
       CL_DC_NE, CL_DC_LAND, CL_DC_LOR, CL_DC_SEL, CL_DC_NOPS };
typedef struct cl_debug_ty {
  char k;                 /* 'i' integer, 'b' bool, 'f' floating */
  char size;              /* bytes */
  char sgn;               /* an integer: signed */
} cl_debug_ty;
typedef struct cl_debug_cop {
  int op;                 /* CL_DC_* */
  cl_debug_ty t;          /* the type it gives (a comparison: the type it compares in) */
  cl_debug_ty from;       /* CVT: the type converted from */
  int which;              /* TID, BID: 0 x, 1 y, 2 z */
  int64_t i;              /* INT */
  double f;               /* FLOAT */
  char name[64];          /* VAR: the variable's source name */
  char type[64];          /* VAR: its type as the debug information spells it */
} cl_debug_cop;

/* What a simulating backend offers the debugger. open and close surround one launch; the other
 * calls but set_break and delete_break may only be made from inside the hooks. */
typedef struct cl_debug_ops {
  /* A debugger for fn (of a module loaded on this backend); NULL with err. */
  cl_debug *(*open)(cl_function *fn, const cl_debug_hooks *hooks, cl_err *err);
  void (*close)(cl_debug *d); /* NULL is ignored */
  /* Runs the launch under d, on one host thread, stopping first before its first instruction;
   * cooperative as launch_cooperative (a grid sync works). Fails as a launch fails, and with
   * "abandoned in the debugger" when a stop returned -1; memory keeps what the kernel wrote
   * either way. */
  int (*launch)(cl_debug *d, cl_dim3 grid, cl_dim3 block, size_t shared, void **args,
                int cooperative, cl_err *err);
  const char *(*file)(cl_debug *d);  /* the kernel's source file name, "" when unknown */
  /* A breakpoint at a line of that file: its number, or -1 with err (no code there). */
  int (*set_break)(cl_debug *d, int line, int has_cond, cl_err *err);
  int (*delete_break)(cl_debug *d, int id); /* -1: no such breakpoint */
  /* After this stop: run to the next breakpoint, or step, next, finish or until (CL_DBG_*). */
  void (*resume)(cl_debug *d, int how);
  void (*where)(cl_debug *d, cl_debug_stop *out);
  /* The warps of the blocks in flight, at most max into out; returns how many there are. */
  int (*warps)(cl_debug *d, cl_debug_warp *out, int max);
  /* Moves the focus; -1 with err when the block is not in flight or the thread does not exist. */
  int (*focus)(cl_debug *d, cl_dim3 block, cl_dim3 thread, cl_err *err);
  /* A variable by its source name, for one thread where it is now; -1 with err. */
  int (*read)(cl_debug *d, long long block, int thread, const char *name, cl_debug_value *out,
              cl_err *err);
  /* The names in scope for that thread, at most max into out (the backend owns the strings);
   * returns how many there are. */
  int (*names)(cl_debug *d, long long block, int thread, const char **out, int max);
  /* n bytes at device address a as that thread sees it (global, its block's shared memory, its
   * local memory); -1 with err when a is in none of them. */
  int (*mem)(cl_debug *d, long long block, int thread, uint64_t a, void *out, size_t n,
             cl_err *err);
  /* A __shared__ variable of the kernel by its source name: its address and size; -1: none. */
  int (*shared)(cl_debug *d, const char *name, uint64_t *addr, uint64_t *size);
  /* A module-scope __constant__ or __device__ variable by its source name: its address, size
   * and whether it is __constant__; -1: none. */
  int (*global)(cl_debug *d, const char *name, uint64_t *addr, uint64_t *size, int *is_const);
  /* That thread's call stack, innermost first, at most max into out; returns how many frames. */
  int (*frames)(cl_debug *d, long long block, int thread, cl_debug_frame *out, int max);
  /* Selects frame n of the thread in focus for read, names and finish; -1 with err. */
  int (*select)(cl_debug *d, int n, cl_err *err);
  /* The first line of the body of the function called name (0: no line information); -1: no
   * such function. */
  int (*func_line)(cl_debug *d, const char *name, int *line);
  /* Gives breakpoint bp (set with a condition) its condition compiled for a warp, n operations
   * (0 takes it away); -1 with err when the program is not well formed. The cond hook is asked
   * wherever the program cannot say. */
  int (*set_cond)(cl_debug *d, int bp, const cl_debug_cop *ops, int n, cl_err *err);
} cl_debug_ops;

/* The memory one launch argument reaches, for a simulator's bounds checks: parameter `param`
 * (from 0; a struct's pointer fields count as their parameter) points at [base, base + bytes)
 * of one allocation; `view` when that is part of an array only (a:view), which narrows the
 * checks of that allocation to its views unless the whole of it is an argument too. */
typedef struct cl_extent {
  int param;
  int view;
  const void *base;
  size_t bytes;
} cl_extent;

/* Advice on managed memory (cudaMemAdvise): data read far more than written (the device keeps
 * a copy, the host keeps its own), and the place it should stay. */
enum { CL_ADVISE_READ_MOSTLY, CL_ADVISE_PREFER_GPU, CL_ADVISE_PREFER_CPU };

/* What managed memory moved, as a simulator models it (cuda.stats().managed). */
typedef struct cl_um_stats {
  uint64_t gpu_faults;    /* fault batches kernels took (one per 2 MiB block with faults) */
  uint64_t gpu_groups;    /* 64 KiB groups those faults moved or duplicated to the device */
  uint64_t cpu_faults;    /* 64 KiB groups the host faulted back */
  uint64_t htod_bytes, dtoh_bytes; /* migrated by faults */
  uint64_t remote_bytes;  /* read by kernels in place on the host (preferred location cpu) */
  uint64_t prefetch_bytes; /* moved by prefetches, either way */
  double fault_us;        /* modelled time of the faults, migrations and remote reads */
  double prefetch_us;     /* modelled time of the prefetches */
  int launches;           /* kernel launches that took faults */
} cl_um_stats;

/* The operations of a backend that simulates the device (cl_backend.sim). Launches of any
 * backend go through cl_backend; these only show and tune what the simulation keeps. */
typedef struct cl_sim_ops {
  /* Counters of the last completed launch; -1 before the first (or after a failed one). */
  int (*last_stats)(cl_stats *out);
  /* Counters of source line `line` (1 .. nlines-1) of that launch. */
  void (*line_counters)(int line, cl_counters *out);
  /* How many launches the model has priced: a caller compares it before and after some work
   * to learn whether a launch happened in between. */
  unsigned long long (*launches)(void);
  /* The model's figures for the latest priced launch; -1 before the first. */
  int (*last_model)(cl_model *out);
  /* The latest launch priced again with other parameters (what-if); -1 before a launch.
   * Parameters that shape the profile itself (cache sizes, atomic costs) keep their old effect. */
  int (*remodel)(const cl_perf *perf, cl_model *out);
  /* Parameter i, or NULL past the last. */
  const cl_perf_param *(*perf_param)(int i);
  /* The parameters in force; -1 when the simulator cannot start, with the defaults in *out. */
  int (*perf)(cl_perf *out);
  /* Replaces the parameters; -1 when the simulator cannot start. */
  int (*set_perf)(const cl_perf *perf);
  void (*options)(cl_sim_opts *out);
  void (*set_options)(const cl_sim_opts *opts);
  size_t stack_default, stack_max; /* bytes per thread: what stack_size 0 means, the most */
  /* The simulated device's name, as cuda.device() gives it: "NVIDIA H200 (simulated)". */
  const char *(*device_name)(void);
  /* Debugging (cuda.empty, cuda.watch). mark_unset: the bytes of an array made without filling
   * it count as never written, for the init check; -1 when out of memory. watch_add: records
   * every kernel write to [dptr, dptr + bytes), one element of 1 to 8 bytes, from now on;
   * returns an id > 0, or -1 when out of memory. watch_write: write i (0-based, in order) of
   * watch id into *out, -1 past the writes kept; *total, all the writes counted. */
  int (*mark_unset)(void *dptr, size_t bytes);
  int (*watch_add)(void *dptr, size_t bytes);
  void (*watch_remove)(int id);
  void (*watch_clear)(int id);
  int (*watch_write)(int id, size_t i, cl_watch_write *out, uint64_t *total);
  /* The debugger (k:debug). */
  const cl_debug_ops *debug;
  /* A launch of fn that leaves no trace the learner could take for theirs: no counters
   * (last_stats keeps the last ordinary launch's), no modelled time, no watch records, no
   * warning or note printed; memory changes as any launch changes it. cooperative: as
   * launch_cooperative. The debugger's check of the plain build runs so (bind_debug_check.c).
   * Fails as launch does. */
  int (*launch_aside)(cl_function *fn, cl_dim3 grid, cl_dim3 block, size_t shared, void **args,
                      int cooperative, cl_err *err);
  /* The extents of the arrays fn's launches from now on are given (n 0: none, every array
   * checked whole): copied; -1 with err when out of memory. */
  int (*arg_extents)(cl_function *fn, const cl_extent *ext, int n, cl_err *err);
  /* Managed memory in the model: what the last launch moved (*last: zero when it moved
   * nothing) and everything since the session began (*total: host faults and prefetches too). */
  void (*managed_stats)(cl_um_stats *last, cl_um_stats *total);
  /* How many 64 KiB groups of managed [p, p + bytes) are on the host, on the device, and on
   * both (read-mostly copies): counts[0], [1], [2]; the group's size in *group. */
  void (*managed_where)(const void *p, size_t bytes, uint64_t counts[3], size_t *group);
} cl_sim_ops;

/* A texture object's description (cuda.texture): what cudaCreateTextureObject takes of a CUDA
 * array and its sampling options, in cudalab's own words. */
enum { CL_TEXF_F32, CL_TEXF_S32, CL_TEXF_U32, CL_TEXF_S16, CL_TEXF_U16, CL_TEXF_S8, CL_TEXF_U8 };
enum { CL_TEXA_CLAMP, CL_TEXA_WRAP, CL_TEXA_MIRROR, CL_TEXA_BORDER };
typedef struct cl_texture_desc {
  int format;              /* CL_TEXF_* of each channel */
  int channels;            /* 1, 2 or 4 */
  int dims;                /* 1, 2 or 3 */
  size_t width, height, depth; /* texels; 1 for a dimension it does not have */
  int linear;              /* linear filtering, else point */
  int address[3];          /* CL_TEXA_* per dimension */
  int normalized;          /* coordinates in [0, 1) */
  int read_normalized;     /* 8- and 16-bit integers read as floats */
} cl_texture_desc;

typedef struct cl_backend {
  const char *name; /* "cuda", "sim", "none" */
  int alloc_zeroes; /* alloc hands out zero-filled memory already (host-memory backends) */

  /* Properties of device 0; may wait for a background initialisation to finish. */
  int (*device)(cl_device *out, cl_err *err);
  /* The architecture NVRTC should target: "sm_90" (real, gives a CUBIN) or "compute_90". */
  const char *(*target_arch)(void);

  int (*alloc)(void **dptr, size_t bytes, const char *label, cl_err *err);
  void (*release)(void *dptr); /* never fails; NULL is ignored */
  int (*host_alloc_pinned)(void **ptr, size_t bytes, cl_err *err);
  void (*host_release_pinned)(void *ptr);
  int (*htod)(void *dst, const void *src, size_t bytes, cl_err *err);
  int (*dtoh)(void *dst, const void *src, size_t bytes, cl_err *err);
  int (*dtod)(void *dst, const void *src, size_t bytes, cl_err *err);
  int (*memset)(void *dst, int byte, size_t bytes, cl_err *err);
  int (*meminfo)(size_t *free_bytes, size_t *total_bytes, cl_err *err);
  /* Optional (may be NULL): for a backend whose device memory is this computer's memory (the
   * simulator), how much of that is available now; 0 when unknown. */
  size_t (*host_available)(void);

  int (*module_load)(const cl_image *img, cl_module **out, cl_err *err);
  void (*module_unload)(cl_module *mod);
  int (*function)(cl_module *mod, const char *lowered_name, cl_function **out, cl_err *err);
  int (*func_attrs)(cl_function *fn, cl_func_attrs *out, cl_err *err);
  /* Optional (may be NULL): a module-scope __constant__ or __device__ variable by its PTX name:
   * its device address, which htod and dtoh take, and its size in bytes (what
   * cudaGetSymbolAddress and cudaGetSymbolSize give). -1 with err when the module has none. */
  int (*module_global)(cl_module *mod, const char *name, void **dptr, size_t *bytes,
                       cl_err *err);
  /* Optional (may be NULL): the module's i-th such variable (from 0), with its PTX name, which
   * the module owns; -1 past the last. The debugger copies them between a kernel's module and
   * its -G build. */
  int (*module_global_at)(cl_module *mod, int i, const char **name, void **dptr, size_t *bytes);
  /* Optional (may be NULL): the kernel's and its parameters' names as the source spells them,
   * for fault messages. The backend copies them. */
  void (*source_names)(cl_function *fn, const char *kernel, const char *const *params, int n);
  /* Optional (may be NULL): what ptxas reported for the kernel (registers per thread, its
   * per-thread stack frame and the bytes its spill stores and loads move), for a backend that
   * models the device's occupancy and local-memory traffic rather than asking a driver. */
  void (*set_resources)(cl_function *fn, int registers, size_t stack_bytes, size_t spill_bytes);
  /* Optional (may be NULL): active blocks per SM for this block size, as the runtime computes
   * it (cudaOccupancyMaxActiveBlocksPerMultiprocessor). */
  int (*occupancy)(cl_function *fn, int block_threads, size_t dyn_shared, int *blocks, cl_err *err);
  /* Asynchronous where the device is. args[i] points at parameter i's value. */
  int (*launch)(cl_function *fn, cl_dim3 grid, cl_dim3 block, size_t shared, void **args,
                cl_err *err);
  /* Optional (may be NULL): a cooperative launch (cudaLaunchCooperativeKernel), whose blocks
   * are all resident at once so that cg::this_grid().sync() can work: refused, with the
   * numbers, when the device cannot hold them all. */
  int (*launch_cooperative)(cl_function *fn, cl_dim3 grid, cl_dim3 block, size_t shared,
                            void **args, cl_err *err);
  /* What events measure (NULL: CL_CLOCK_GPU). With CL_CLOCK_MODEL they give the modelled
   * device's time of the work between them, and the host clock measures the backend itself. */
  int (*event_clock)(void);

  int (*event_create)(cl_event **out, cl_err *err);
  void (*event_destroy)(cl_event *ev);
  int (*event_record)(cl_event *ev, cl_err *err);
  int (*event_elapsed_ms)(cl_event *start, cl_event *stop, float *ms, cl_err *err);

  /* Streams (all optional: NULL where the backend has none, and the bindings then say so).
   * A stream is a queue of work that runs in order; work on different streams may overlap.
   * Streams made here synchronise with the default stream, as CUDA's legacy default stream
   * does: default-stream work waits for all of them, and they for it. */
  int (*stream_create)(cl_stream **out, cl_err *err);
  void (*stream_destroy)(cl_stream *s); /* waits for the stream's work first; NULL ignored */
  /* Waits for the stream's work; polls *interrupt as synchronize does. */
  int (*stream_sync)(cl_stream *s, volatile sig_atomic_t *interrupt, cl_err *err);
  /* Later work on s waits until ev (recorded on any stream) has happened. */
  int (*stream_wait)(cl_stream *s, cl_event *ev, cl_err *err);
  /* Records ev on stream s (NULL: the default stream, as event_record). */
  int (*event_record_on)(cl_event *ev, cl_stream *s, cl_err *err);
  /* A copy of `dir` (CL_COPY_H2D, CL_COPY_D2H) queued on s: asynchronous when the host memory
   * is pinned; from pageable memory the host waits for it, as CUDA stages such copies. */
  int (*copy_async)(void *dst, const void *src, size_t bytes, int dir, cl_stream *s, cl_err *err);
  /* launch, queued on stream s. */
  int (*launch_on)(cl_function *fn, cl_dim3 grid, cl_dim3 block, size_t shared, void **args,
                   cl_stream *s, cl_err *err);
  /* Timeline spans: span_open before an operation queued on s, span_close after it; span_read,
   * once the device has finished, gives its start and end in ms after the event `origin`.
   * The span belongs to the caller, who frees it with span_free (NULL ignored). */
  int (*span_open)(cl_span **out, cl_stream *s, cl_err *err);
  int (*span_close)(cl_span *sp, cl_stream *s, cl_err *err);
  int (*span_read)(cl_event *origin, cl_span *sp, double *start_ms, double *end_ms, cl_err *err);
  void (*span_free)(cl_span *sp);

  /* Optional (may be NULL): a library matrix multiply (cuBLAS on the GPU), and one line naming
   * the library and, where its time is modelled, where the model's figures come from. */
  int (*gemm)(const cl_gemm *g, cl_err *err);
  const char *(*blas_name)(void);
  /* Waits for all device work; polls *interrupt and gives up with an error when it is set. */
  int (*synchronize)(volatile sig_atomic_t *interrupt, cl_err *err);
  /* Optional (may be NULL): prints what kernels that have finished wrote with printf, without
   * waiting for one that has not. The GPU keeps device printf's output in a buffer that only a
   * blocking synchronize empties, so a prompt or a script's end would otherwise lose it. */
  void (*flush_output)(void);
  /* Optional (may be NULL): the flag launches poll so that Ctrl-C can stop one that runs on
   * this host (a simulated launch). Set once at start-up, through backend_attach_interrupt. */
  void (*attach_interrupt)(volatile sig_atomic_t *interrupt);
  /* Optional (may be NULL, for a backend that runs no launches): limits every launch to
   * `seconds` of wall time from when it can start (0: no limit, and launches cost nothing
   * extra). Set for every backend at once through backend_set_kernel_time_limit. A launch that
   * runs on this host (the simulator) is stopped and fails with cl_kernel_time_message; on a GPU
   * a watchdog thread calls `abandon` for a kernel that runs too long, and a wait for it fails
   * meanwhile with the same message, as a sticky error. */
  void (*set_kernel_time_limit)(double seconds, cl_abandon_fn abandon);
  /* Optional (may be NULL): where device memory is host memory (the simulator), the host writes
   * what cudalab's own kernels make on a GPU (fill, arange, rand) straight into it and then calls
   * this, which charges the time that kernel takes on the device (not a copy over PCIe) and
   * marks the bytes written. */
  void (*device_wrote)(void *dst, size_t bytes);
  /* Managed (unified) memory, all optional (NULL: the backend has none, and the bindings say
   * so). alloc_managed: memory both the host and kernels address (cudaMallocManaged), freed by
   * release; it starts on the host. managed_host: the host is about to read (write 0) or write
   * [p, p + bytes) of it, the device being idle: a simulator moves its record of the pages and
   * charges the faults; NULL where the hardware faults by itself. prefetch: moves the pages of
   * the range to the device (to_device) or the host, queued on s (NULL: the default stream).
   * advise: sets (set) or clears CL_ADVISE_* on the range. */
  int (*alloc_managed)(void **p, size_t bytes, const char *label, cl_err *err);
  int (*managed_host)(void *p, size_t bytes, int write, cl_err *err);
  int (*prefetch)(void *p, size_t bytes, int to_device, cl_stream *s, cl_err *err);
  int (*advise)(void *p, size_t bytes, int advice, int set, cl_err *err);
  /* CUDA graphs (optional, NULL: none). graph_begin starts capturing: until graph_end, launch
   * (on the default stream) records a launch instead of running it, and the other operations
   * that reach the device fail ("cannot be captured"). graph_end stops capturing and hands the
   * launches over as a graph ready to replay, or with out NULL throws them away (a capture that
   * failed half-way); it ends the capture even when it fails. graph_launch replays g on the
   * default stream, asynchronously where the device is; graph_free frees it (NULL ignored). */
  int (*graph_begin)(cl_err *err);
  int (*graph_end)(cl_graph **out, cl_err *err);
  int (*graph_launch)(cl_graph *g, cl_err *err);
  void (*graph_free)(cl_graph *g);
  /* Texture objects (optional, NULL: the backend has none, and the bindings say so).
   * texture_create copies the texels at device address src (width x height x depth x channels
   * elements, row by row) into memory of the texture's own (a CUDA array on the GPU), so that
   * later writes to src change nothing it reads, and gives the handle a kernel's
   * cudaTextureObject_t parameter takes (the GPU's own; the simulator's are never device
   * addresses). texture_destroy frees it all; a handle is destroyed once (the bindings see to
   * that). */
  int (*texture_create)(const void *src, const cl_texture_desc *d, uint64_t *handle, cl_err *err);
  void (*texture_destroy)(uint64_t handle);
  /* Optional (NULL for a backend on real hardware): what a simulated device shows besides. A
   * backend is a simulator exactly when this is set. */
  const cl_sim_ops *sim;
} cl_backend;

extern const cl_backend cl_backend_cuda;
extern const cl_backend cl_backend_none;
#ifdef CUDALAB_HAVE_SIM
extern const cl_backend cl_backend_sim;
#endif

/* "cuda" (or "gpu"), "sim", "none"; NULL for an unknown name. */
const cl_backend *backend_by_name(const char *name);
/* What runs when the GPU cannot: the simulator where it is built in, else none. */
const cl_backend *backend_fallback(void);
/* The backend that simulates the device (its `sim` is set); NULL when none is built in. */
const cl_backend *backend_simulator(void);
/* Hands every backend that runs launches on this host the flag they poll (Ctrl-C). */
void backend_attach_interrupt(volatile sig_atomic_t *interrupt);
/* Hands every backend the kernel time limit (seconds, 0 for none) and what to call when a GPU
 * kernel outruns it; see cl_backend.set_kernel_time_limit. */
void backend_set_kernel_time_limit(double seconds, cl_abandon_fn abandon);

/* What a session asks of the machine's GPUs when a class shares them (cuda.gpu_admit). */
typedef struct cl_gpu_request {
  const char *key;      /* names the class: its sessions share one set of slots per GPU */
  int sessions_max;     /* sessions one GPU takes; 0: no limit but its free memory */
  size_t memory_needed; /* device memory one session may hold (its limit); 0: none given */
} cl_gpu_request;

/* What it gets: a GPU and a slot on it, held until the process ends, or the reason why not. */
typedef struct cl_gpu_admission {
  int ok;          /* a slot was taken and the GPU selected for the context to come */
  int device;      /* the CUDA device index (as CUDA_VISIBLE_DEVICES numbers them) */
  int slot;        /* which of the GPU's slots this session holds */
  int sessions;    /* sessions holding a slot on that GPU now, this one included */
  int free_known;  /* NVML answered: free and total are the GPU's */
  size_t free, total;
  char pci[32];    /* the GPU's PCI bus id, "0000:65:00.0" */
  char why[400];   /* without ok: one sentence on why; with ok: a note (free memory unknown)
                      or "" */
} cl_gpu_admission;

/* Chooses a GPU for this session without creating a CUDA context (see backend_cuda.c): the one
 * with the most free memory that has room for memory_needed and the context, and a free slot.
 * Fills *out either way; never fails otherwise. */
void backend_gpu_admit(const cl_gpu_request *req, cl_gpu_admission *out);

/* The GPU's name as the driver lists it in /proc, without creating a context; "" if unknown. */
void backend_gpu_name(char *out, size_t len);

/* Chooses at start-up, without a CUDA context: cuda when a GPU driver is present, else the
 * simulator (or none). The cuda backend creates its context at the first call that needs it. */
const cl_backend *backend_choose(const char *forced, char *why, size_t whylen);

#endif
