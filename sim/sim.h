/* sim.h: a warp-level interpreter for the PTX that NVRTC emits, with bounds checking and the
 * counters a GPU hides. Used by repl/backend/backend_sim.c; a plain C library with no Lua in it.
 *
 * Stance: device memory is ordinary host memory obtained through sim_malloc, so copies are
 * memcpy and a device pointer is a host address. Every access a kernel makes is checked against
 * the table of live allocations, which is how an out-of-bounds access can name the array it
 * missed. Functions return 0 / -1 (or a pointer / NULL) and, on failure, write one readable
 * paragraph into the caller's `err` buffer (always NUL-terminated, truncated to errlen). */
#ifndef CUDALAB_SIM_H
#define CUDALAB_SIM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_device sim_device; /* memory table, modelled device, last launch's counters */
typedef struct sim_module sim_module; /* one parsed PTX module (may hold several kernels) */
typedef struct sim_kernel sim_kernel; /* an .entry of a module; owned by the module */

typedef struct sim_dim3 {
  unsigned x, y, z;
} sim_dim3;

/* How fast the modelled device is: the parameters of the timing model (sim_model.c), one
 * double per row of perf_params.def, which says what each means and in what unit. Their H200
 * values are fitted on the real GPU by bench/model/calibrate.lua and kept, with their date and
 * machine, in sim/h200_params.h. Rates are for the whole chip unless they say "per SM". */
#define SIM_PERF_MIN 1e-6 /* the smallest nonzero value of any: the model's times stay finite */
#define SIM_PERF_MAX 1e15 /* the largest of most (a row may say less) */
typedef struct sim_perf {
#define PERF(name, h200, unit, zero, hi, doc) double name;
#include "perf_params.def"
#undef PERF
} sim_perf;

/* The device the simulator pretends to be; launch limits and occupancy follow it. The default
 * (sim_default_desc) is include/h200.h's H200, whose comments give the figures. */
typedef struct sim_device_desc {
  char name[64];                  /* "NVIDIA H200 (simulated)" */
  int cc_major, cc_minor;         /* 9, 0 */
  int sm_count;                   /* 132 */
  int max_threads_per_block;      /* 1024 */
  int max_block_dim[3];           /* 1024, 1024, 64 */
  int max_grid_dim[3];            /* 2^31-1, 65535, 65535 */
  size_t shared_per_block;        /* 48 KiB, static + dynamic without opt-in */
  size_t shared_per_block_optin;  /* 227 KiB */
  size_t shared_per_sm;           /* 228 KiB */
  int regs_per_block, regs_per_sm;/* 65536, 65536 */
  int max_threads_per_sm;         /* 2048 */
  int max_blocks_per_sm;          /* 32 */
  int warp_size;                  /* 32 */
  size_t memory_total;            /* the device's memory; the host's memory may hold less */
  sim_perf perf;                  /* the timing model's parameters */
} sim_device_desc;

/* One kernel parameter as the PTX .entry declares it. */
typedef struct sim_param {
  size_t offset, size, align; /* bytes; offsets follow PTX/C layout rules */
} sim_param;

/* Counters for one launch (totals) or one source line. Definitions match Nsight Compute's:
 * a request is one warp-level memory instruction; a sector is an aligned 32-byte piece of memory
 * touched by the warp's active lanes; a shared wavefront is one pass through the 32 banks. */
typedef struct sim_counters {
  uint64_t warp_insts, thread_insts;
  uint64_t ld_requests, ld_sectors, st_requests, st_sectors; /* global (and generic to global) */
  uint64_t shared_wavefronts, bank_conflicts;                /* shared loads and stores */
  uint64_t divergent_branches;
  /* Added by the simulator: the shared-load part of the two shared counters above, which is what
   * Nsight Compute's ..._mem_shared_op_ld metrics report. */
  uint64_t shared_ld_wavefronts, shared_ld_conflicts;
} sim_counters;

/* Instruction classes of the timing model: which pipe of an SM a PTX instruction keeps busy. */
enum { SIM_CLS_ALU, SIM_CLS_FP32, SIM_CLS_FP64, SIM_CLS_INT, SIM_CLS_SFU, SIM_CLS_GLOBAL,
       SIM_CLS_SHARED, SIM_CLS_LOCAL, SIM_CLS_ATOM, SIM_CLS_BAR, SIM_CLS_BRANCH, SIM_CLS_COUNT };

/* What the timing model needs of one launch, beyond sim_counters. Filled by sim_launch when
 * the model is on (sim_launch_opts.model). Memory traffic past L1 and L2 comes from a sampled
 * trace replayed through cache models after the launch (sim_trace.c). */
typedef struct sim_profile {
  int valid;                       /* 0 when the model was off */
  double cls[SIM_CLS_COUNT];       /* warp instructions per class, SASS-weighted */
  double thread_flops32, thread_flops64; /* FLOPs (an FMA is 2) */
  double l1_wavefronts;            /* 128-byte lines touched per global load request, summed */
  double ld_sectors, st_sectors, atom_sectors; /* global sectors requested (exact) */
  double shared_wavefronts;        /* shared-memory passes, bank conflicts included */
  double l2_sectors;               /* 32-byte sectors L2 served (L1 misses, stores, atomics) */
  double dram_read_sectors, dram_write_sectors; /* steady state: as if the launch were repeated */
  double l1_hit_rate, l2_hit_rate; /* of global load sectors */
  double atom_ops;                 /* global atomic lane operations */
  double atom_max_same;            /* most lanes of one request on one address */
  double atom_ops_l2;              /* operations that reach the L2 (after the compiler combines) */
  double atom_chain_ns;            /* the busiest L2 slice's requests one after another */
  double atom_slice_sum_ns;        /* all slices' time together */
  double st_lines;                 /* 128-byte lines per store request, summed */
  /* Each block alone on an SM, its slowest warp: instructions it issued, cycles it waited for
   * global loads (charged at lat_ref cycles each) and for shared loads and barriers. Sums over
   * blocks. */
  double block_issue, block_mem, block_other, lat_ref;
  /* How the global-load waits split by where the data came from, from each load instruction's
   * waits and hit rates: shares of block_mem to rescale to L1, L2 and DRAM latency. */
  double wait_l1, wait_l2, wait_dram;
  double wait_l2_more, wait_dram_more; /* the L2's and DRAM's shares, each wait weighted by how
                                        * far its request's places' harmonic number is past 1 */
  /* Cycles warps waited for their own arithmetic results per instruction issued (sim_depend.c) */
  double dep_stall_ratio;
  int regs_per_thread;             /* as given in sim_launch_opts (0 unknown) */
  /* Register spills (ptxas's, which PTX does not show): the bytes a thread's spill code moves
   * per run of the launch, estimated as the static bytes times how often an executed instruction
   * ran on average; and each thread's stack frame, which decides whether they stay in L1. */
  double spill_bytes_thread, local_frame_bytes;
} sim_profile;

/* Per launch statistics: totals and, indexed by source line (from .loc), per line counts. */
typedef struct sim_stats {
  sim_counters total;
  int nlines;             /* lines[0 .. nlines-1]; lines[k] is source line k (line 0 unused) */
  sim_counters *lines;    /* owned by the sim_device; valid until the next launch */
  char source_file[256];  /* file name from the .file directive the lines refer to */
  sim_profile profile;    /* the timing model's inputs (valid when opts->model was set) */
} sim_stats;

/* Options of one launch; all-zero means one host thread per core, no race check, no callback.
 * Fields are only ever appended, so a zero-initialised struct stays valid across versions.
 *
 * progress (may be NULL) lets a front end draw a progress bar for a long launch. It is called on
 * the thread that called sim_launch, never on a worker, between two blocks that thread runs or
 * while it waits for the others: first once the launch has run for 100 ms (a short launch never
 * calls it), then at most every 100 ms, and, if it was called at all, once more after the last
 * block ends or the launch stops, with the final count (blocks_total unless the launch failed or
 * was interrupted). blocks_done never decreases. Workers keep running during the call, so it
 * should be quick, and it must return (no longjmp out of it); to stop a launch set *interrupt. */
typedef struct sim_launch_opts {
  int threads;                         /* host threads to spread blocks over; 0 = all
                                        * cores, 1 = deterministic */
  int race_check;                      /* SIM_RACE_*: report shared-memory races between
                                        * threads, lanes of a warp too (any other non-zero
                                        * value is SIM_RACE_FAIL) */
  volatile sig_atomic_t *interrupt;    /* polled; when it becomes non-zero the launch stops */
  const char *const *param_names;      /* optional, for messages: names of the kernel's params */
  void (*progress)(unsigned long long blocks_done, unsigned long long blocks_total, void *ud);
  void *progress_ud;                   /* passed to progress */
  int model;                           /* collect the timing model's inputs (stats->profile) */
  int regs_per_thread;                 /* from ptxas, for occupancy in the model; 0 unknown */
  size_t stack_size;                   /* per-thread call stack of recursive and indirectly called
                                        * functions (cudaLimitStackSize); 0 = SIM_STACK_DEFAULT */
  int sanitize;                        /* SIM_SAN_* bits: checks that stop the launch at the
                                        * first bad instruction (sim_sanitize.c) */
  char *warning;                       /* may be NULL: a launch that succeeds writes here what it
                                        * warns of (a race under SIM_RACE_WARN), "" for nothing */
  size_t warninglen;                   /* bytes at warning */
  char *note;                          /* may be NULL: what may be a bug and may not, told and
                                        * never a failure (the init check's read of a register
                                        * that some way from the start leaves unassigned); "" */
  size_t notelen;                      /* bytes at note */
  struct sim_debug *debug;             /* run under this debugger (see below): one host thread,
                                        * no progress calls; NULL for every other launch */
  size_t spill_bytes;                  /* from ptxas: the bytes a thread's spill stores and loads
                                        * move, as the code stands (static), for the model */
  size_t local_frame_bytes;            /* from ptxas: a thread's stack frame (local memory) */
  int block_order;                     /* SIM_ORDER_*: the order blocks are handed out in */
  uint64_t order_seed;                 /* SIM_ORDER_SHUFFLE: which permutation */
  const struct sim_extent *extents;    /* may be NULL: what the arguments point at (below) */
  int nextents;
  uint64_t grid_workspace;             /* a cooperative launch: the address of 8 zeroed bytes
                                        * of device memory, the driver's grid workspace, which
                                        * %envreg1 (high half) and %envreg2 (low half) give the
                                        * kernel, as cg::this_grid().sync() reads them; the
                                        * launch is refused when its blocks cannot all be
                                        * resident at once. 0 for any other launch */
  int unwatched;                       /* 1: the device's watches (sim_watch_add) record none of
                                        * this launch's writes: a launch the learner did not
                                        * make, such as the debugger's check of the plain build */
} sim_launch_opts;

/* The memory one argument reaches: parameter `param` points at [base, base + size) of an
 * allocation, all of it or (view) a part. An allocation that only views reach is checked as
 * those views for the launch: an access outside them fails, reported against the view it
 * missed ("index 256 of f32[256] at 256 in f32[1024]"), as an access past an array's end is.
 * One that some argument reaches whole stays whole. */
typedef struct sim_extent {
  int param;
  int view;
  uint64_t base, size;
} sim_extent;

/* The order in which a launch hands out its blocks (sim_launch_opts.block_order), by linear
 * index x + y * grid.x + z * grid.x * grid.y. FORWARD, the default, is 0, 1, 2, ...; REVERSE
 * the last block first; SHUFFLE a permutation that order_seed alone decides, the same on every
 * run and machine. A GPU promises no order at all, so a kernel whose result depends on it (one
 * block clears an accumulator the others add to, one reads what a later block writes) is wrong
 * even when the fixed order hides it: running it in the other orders shows it. With one host
 * thread blocks run one after another in this order (a block that waits on another is parked
 * and resumed later, as always), so device printf comes out in it too; with several, the workers
 * take blocks in this order. The timing model prices each block alone and sorts its sampled
 * memory trace by block index, so its figures do not depend on the order nor on the number of
 * host threads (its sums are of integers), unless the trace outgrows its cap (SIM_TRACE_CAP in
 * sim_run.h): the blocks run last then go unsampled. */
enum { SIM_ORDER_FORWARD, SIM_ORDER_REVERSE, SIM_ORDER_SHUFFLE };

/* What a shared-memory race does to a launch. FAIL ends it with the race's message; WARN lets
 * it complete and writes the first race's message (and how many more there were) to
 * opts->warning, and leaves unwarned what a warp ran in lockstep, which only legacy
 * warp-synchronous code relies on (sim_race.c says what that means). */
enum { SIM_RACE_OFF, SIM_RACE_FAIL, SIM_RACE_WARN };

/* The checks of sim_launch_opts.sanitize, each of which fails the launch with a message naming
 * the thread, the block and the source line:
 *   NAN   a NaN or an infinity the kernel made (from finite numbers, or from a constant
 *         infinity by arithmetic or a float test) is written to memory: the report names where
 *         it was made (sim_nan.c);
 *   NAN_MADE  with NAN, the strict check: such a value is reported where it is made, stored or
 *         not;
 *   INIT  a read of shared memory no thread of the block has written in this launch, or of
 *         device memory marked with sim_mark_unset that nothing has written since;
 *   SYNC  a __syncthreads() some threads of the block never reach (they exited, or wait on
 *         another path), worded as compute-sanitizer's synccheck words it. */
enum { SIM_SAN_NAN = 1, SIM_SAN_INIT = 2, SIM_SAN_SYNC = 4, SIM_SAN_NAN_MADE = 8 };
/* The byte that registers, local and shared memory start as under SIM_SAN_INIT (sim_sched.c):
 * 0xcbcbcbcb reads -875836469 as an int, about -2.67e7 as a float. */
#define SIM_POISON 0xcb

#define SIM_STACK_DEFAULT 1024          /* cudaLimitStackSize's default on the GPU, bytes */
#define SIM_STACK_MAX (128 << 10)       /* the most sim_launch accepts per thread (host memory) */

/* Device: create with the default H200-class description (desc may be NULL) */
sim_device *sim_device_new(const sim_device_desc *desc);
void sim_device_free(sim_device *dev); /* frees every allocation still live, the device heap too */
const sim_device_desc *sim_device_info(const sim_device *dev);
void sim_default_desc(sim_device_desc *out);

/* Memory: 256-byte aligned like cudaMalloc, zero-filled; label (may be NULL) names it in messages
 * ("f32[1000]"). Returns NULL with err filled when memory_total would be exceeded, or
 * when this computer's available memory cannot back the allocation. */
void *sim_malloc(sim_device *dev, size_t bytes, const char *label, char *err, size_t errlen);
int sim_free(sim_device *dev, void *ptr); /* -1 for a pointer that is not a live allocation */
void sim_mem_info(const sim_device *dev, size_t *free_bytes, size_t *total_bytes);

/* Texture objects (sim_texture.c), as cudaCreateTextureObject makes them from a CUDA array: the
 * texture holds its own copy of the texels, in an allocation of the device (so it counts as
 * device memory, as the array does on the GPU), and a kernel names it by a handle that is not a
 * device address. tex instructions look the handle up in the device's table; one that is not
 * live fails the launch, naming the thread and the line. */
enum { SIM_TEXF_F32, SIM_TEXF_S32, SIM_TEXF_U32, SIM_TEXF_S16, SIM_TEXF_U16, SIM_TEXF_S8,
       SIM_TEXF_U8 };                                       /* element formats */
enum { SIM_TEXA_CLAMP, SIM_TEXA_WRAP, SIM_TEXA_MIRROR, SIM_TEXA_BORDER }; /* address modes */
typedef struct sim_tex_desc {
  int format;              /* SIM_TEXF_* of each channel */
  int channels;            /* 1, 2 or 4 */
  int dims;                /* 1, 2 or 3 */
  uint64_t width, height, depth; /* texels; 1 for a dimension it does not have */
  int linear;              /* linear filtering (else point) */
  int address[3];          /* SIM_TEXA_* per dimension */
  int normalized;          /* coordinates in [0, 1) */
  int read_normalized;     /* 8- and 16-bit integers read as floats in [0, 1] or [-1, 1] */
} sim_tex_desc;
/* Makes a texture from the texels at src (width x height x depth x channels elements, row by
 * row, as the description says), copying them. Returns its handle, never 0; 0 with err filled
 * for a description that is not valid or memory the device does not have. */
uint64_t sim_texture_create(sim_device *dev, const sim_tex_desc *d, const void *src, char *err,
                            size_t errlen);
/* 0, or -1 for a handle that is not a live texture (never made, or destroyed already). */
int sim_texture_destroy(sim_device *dev, uint64_t handle);
/* Bytes of this computer's memory a new allocation can have without pushing anything out: the
 * kernel's MemAvailable, else (no /proc) the free pages; 0 when neither can be read. Device
 * memory is host memory here, so this, not memory_total, is what a learner can fill. */
size_t sim_host_available(void);

/* Modules: parse and pre-decode. An unsupported instruction or directive fails here, naming it
 * and its PTX line. The module keeps no pointer into ptx. */
sim_module *sim_module_load(const char *ptx, size_t len, char *err, size_t errlen);
void sim_module_free(sim_module *mod);
/* 1 when the module holds no state a kernel can write (no .global variables): then one parsed
 * module can serve several loads of the same PTX, as a cache of parsed modules does. */
int sim_module_is_shareable(const sim_module *mod);
int sim_module_kernel_count(const sim_module *mod);
const char *sim_module_kernel_name(const sim_module *mod, int i); /* the .entry name (mangled) */
sim_kernel *sim_module_kernel(sim_module *mod, const char *entry_name); /* NULL if absent */
/* A module-scope .const or .global variable by its PTX name (a __constant__ or __device__
 * variable): its storage, which kernels of this module read at that address, and its size in
 * bytes. 0, or -1 when the module has none by that name (an extern one has no storage). The
 * host may write it between launches, as cudaMemcpyToSymbol does. */
int sim_module_global(sim_module *mod, const char *name, void **ptr, size_t *bytes);
/* The module's i-th such variable (from 0), as sim_module_global gives it, with its PTX name:
 * 0, or -1 past the last. The debugger's build of a kernel takes the values of these from the
 * kernel's own module, and gives them back. */
int sim_module_global_at(sim_module *mod, int i, const char **name, void **ptr, size_t *bytes);
size_t sim_kernel_static_shared(const sim_kernel *k);
size_t sim_kernel_local_bytes(const sim_kernel *k); /* per thread */
/* The kernel's parameters: how many, and the bytes of parameter i (0 past the last). */
int sim_kernel_param_count(const sim_kernel *k);
size_t sim_kernel_param_size(const sim_kernel *k, int i);

/* Launch: runs to completion (the simulator is synchronous). args[i] points at the value of
 * parameter i, as with cudaLaunchKernel. Fails with a readable message for launch-limit errors,
 * out-of-bounds or misaligned accesses (kernel, block, thread, address, the array missed and by
 * how many elements, the source line), a barrier that cannot complete, interruption, a trap, a
 * failed assert (the GPU's cudaErrorAssert line), a call stack overflow, a call through a bad
 * function pointer, a free of something that is not a live device-heap block, blocks that
 * wait on one another forever (the spinning warps, their line and what they read), a race under
 * SIM_RACE_FAIL, or a finding of the checks in opts->sanitize. Blocks that
 * kernels get from malloc / new stay on the device's heap until a kernel frees them or
 * sim_device_free. Blocks may wait on one another (a flag another block sets) as on the GPU: a
 * waiting block is parked while others run, up to as many resident blocks as the modelled
 * device holds.
 * On failure no memory outside the kernel's own bad write is touched (the bad access is not made).
 * stats (may be NULL) receives the counters of this launch. */
int sim_launch(sim_device *dev, sim_kernel *k, sim_dim3 grid, sim_dim3 block, size_t dyn_shared,
               void **args, const sim_launch_opts *opts, sim_stats *stats, char *err,
               size_t errlen);

/* ---- Debugging: memory never written, and watched elements (sim_sanitize.c, sim_watch.c) ---- */

/* Marks bytes [ptr, ptr + bytes) of a live allocation as never written, for SIM_SAN_INIT (an
 * array made without filling it). Writes clear the mark byte by byte: a kernel's stores and
 * atomics, and the host's through sim_mark_written. -1 when ptr is not a live allocation or
 * this computer is out of memory. */
int sim_mark_unset(sim_device *dev, const void *ptr, size_t bytes);
/* The host wrote [ptr, ptr + bytes) (a copy, a fill): nothing there is unset any more. */
void sim_mark_written(sim_device *dev, const void *ptr, size_t bytes);

/* ---- Managed (unified) memory: sim_managed.c ---- */

/* The unit pages move in. The driver (nvidia-uvm) manages managed memory in 2 MiB "VA blocks"
 * and, on a fault from a Pascal or later GPU, migrates the faulting 64 KiB big pages of one VA
 * block in one batch; so a group is 64 KiB and the faults of one 2 MiB block are serviced
 * together (one fault batch). The CPU faults 4 KiB pages, but the driver migrates back at
 * least the group, which is what is counted. */
#define SIM_UM_GROUP ((uint64_t)64 << 10)
#define SIM_UM_VABLOCK ((uint64_t)2 << 20)
/* Where a group's data is: on the host, on the device, or both (read-mostly duplicates). */
enum { SIM_UM_HOST, SIM_UM_DEVICE, SIM_UM_BOTH };
/* Advice (cudaMemAdvise), bits per group. */
enum { SIM_UM_READ_MOSTLY = 1, SIM_UM_PREFER_GPU = 2, SIM_UM_PREFER_CPU = 4 };

/* What one operation on managed memory moved, for the timing model and cuda.stats. */
typedef struct sim_um_moves {
  uint64_t gpu_faults;   /* fault batches the GPU took: one per 2 MiB block with faulting groups */
  uint64_t gpu_groups;   /* 64 KiB groups those faults brought over (or duplicated) */
  uint64_t cpu_faults;   /* groups the host faulted on (reads or writes from Lua) */
  uint64_t htod_bytes;   /* migrated to the device (faults or a prefetch) */
  uint64_t dtoh_bytes;   /* migrated to the host */
  uint64_t remote_bytes; /* groups a kernel read in place over the link (preferred on the CPU) */
} sim_um_moves;

/* Makes the live allocation at ptr managed: every group starts on the host, as a host-filled
 * array does. -1 when ptr is not a live allocation or the host is out of memory. */
int sim_managed_make(sim_device *dev, const void *ptr);
/* 1 when [ptr, ptr + bytes) lies in one managed allocation. */
int sim_managed_is(sim_device *dev, const void *ptr, size_t bytes);
/* After a launch: the groups its kernel touched move to the device (or are read in place, or
 * duplicated, as their advice says); adds what moved to *out and forgets the touches. */
void sim_managed_settle(sim_device *dev, sim_um_moves *out);
/* The host touched [ptr, ptr + bytes) (write: it wrote): groups on the device come back. */
void sim_managed_host(sim_device *dev, const void *ptr, size_t bytes, int write,
                      sim_um_moves *out);
/* cudaMemPrefetchAsync: the groups of the range move to the device (to_device) or the host. */
void sim_managed_prefetch(sim_device *dev, const void *ptr, size_t bytes, int to_device,
                          sim_um_moves *out);
/* cudaMemAdvise: sets (set) or clears the advice bit on the range's groups; setting one
 * preferred location clears the other. */
void sim_managed_advise(sim_device *dev, const void *ptr, size_t bytes, int bit, int set);
/* How many groups of the range are where: counts[SIM_UM_HOST .. SIM_UM_BOTH]. */
void sim_managed_where(sim_device *dev, const void *ptr, size_t bytes, uint64_t counts[3]);
/* The modelled time of what moved: faults and migrations, or a prefetch (no faults). */
double sim_model_um_us(const sim_device_desc *d, const sim_um_moves *m, int prefetch);

/* One write to a watched element, in the order the launches made them. */
typedef struct sim_watch_write {
  unsigned thread[3], block[3];
  int line;              /* source line from .loc, or the PTX line when the kernel has none */
  char where[160];       /* "kernel.cu:7", or "PTX line 45" */
  char kernel[96];       /* the kernel's name as the source writes it */
  const char *op;        /* "store", or the atomic: "atomicAdd", "atomicCAS", ... (static) */
  uint64_t old, nv;      /* the element's bytes before and after, little-endian */
} sim_watch_write;

#define SIM_WATCH_KEEP 1000 /* writes a watch keeps; it counts the rest */

/* Watches bytes [addr, addr + bytes) (one element, at most 8 bytes) of device memory: every
 * kernel store or atomic that writes any of them is recorded from then on (the device's
 * allocation being freed ends that). Returns the watch's
 * id (> 0), or -1 when bytes is not 1 to 8 or this computer is out of memory. Launches with no
 * watch pay nothing for watching. */
int sim_watch_add(sim_device *dev, const void *addr, size_t bytes);
void sim_watch_remove(sim_device *dev, int id); /* unknown ids are ignored */
void sim_watch_clear(sim_device *dev, int id);  /* forgets what it recorded */
/* Write i (0-based) of watch id, or NULL past the kept ones or for an unknown id; *total (may
 * be NULL) receives how many writes it has counted, kept or not. Valid until the next launch or
 * watch call. */
const sim_watch_write *sim_watch_get(const sim_device *dev, int id, size_t i, uint64_t *total);
/* ---- The debugger (sim_debugger.c): a launch that stops where the learner asks ----
 *
 * A launch whose options name a sim_debug runs on one host thread and asks it before every
 * instruction whether to stop: at the very first instruction, where a breakpoint's line is
 * reached by lanes for which its condition holds, when a step is over, or on Ctrl-C. At a stop
 * it calls hooks->stop, which looks at the paused launch through the functions below (they may
 * only be called from inside a hook, except new, free, break and delete) and returns. The thread
 * in focus is the one commands refer to, as in cuda-gdb; a stop moves it to the thread that
 * stopped. Variables are known by their source names when the kernel was compiled with -G
 * (NVRTC's debug information, read by ptx_dwarf.c); lines come from .loc in any case. */
typedef struct sim_debug sim_debug;

/* Why the launch stopped. */
enum { SIM_DBG_START, SIM_DBG_BREAK, SIM_DBG_STEP, SIM_DBG_EXITED, SIM_DBG_INTERRUPT,
       SIM_DBG_FAULT /* the launch has failed (a fault, a check, never finishing): the focus is
                      * on the thread at fault, and going on in any way ends the launch */ };
/* How a value reads (sim_debug_value.enc). */
enum { SIM_DV_NONE, SIM_DV_SIGNED, SIM_DV_UNSIGNED, SIM_DV_FLOAT, SIM_DV_BOOL, SIM_DV_CHAR,
       SIM_DV_POINTER, SIM_DV_OTHER };
/* Where a warp is (sim_debug_warp.state). */
enum { SIM_DBG_W_RUNS, SIM_DBG_W_BARRIER, SIM_DBG_W_DONE };

typedef struct sim_debug_hooks {
  /* The launch is paused. Returns 0 to go on (as sim_debug_resume last said: to the next
   * breakpoint unless it asked for a step), or -1 to abandon the launch, which then fails with
   * "abandoned in the debugger" and leaves memory as the kernel had written it so far. */
  int (*stop)(sim_debug *d, void *ud);
  /* Breakpoint bp, set with a condition, was reached by `lanes` of warp `warp` of block `block`
   * (linear index): returns the lanes for which the condition holds. */
  uint32_t (*cond)(sim_debug *d, int bp, long long block, int warp, uint32_t lanes, void *ud);
  void *ud;                            /* passed to both */
  volatile sig_atomic_t *interrupt;    /* Ctrl-C's flag (may be NULL): when it is set the launch
                                        * stops (SIM_DBG_INTERRUPT) rather than ends; the hook
                                        * clears it */
  /* About once a second of host time while the launch runs between stops (may be NULL): the
   * warp running now (block, warp, line) for a progress line; sim_debug_where gives the blocks
   * done. It may not resume or read variables. */
  void (*progress)(sim_debug *d, long long block, int warp, int line, void *ud);
} sim_debug_hooks;

/* One debugging of kernel k (its module must outlive it); NULL when out of memory. */
sim_debug *sim_debug_new(sim_kernel *k, const sim_debug_hooks *hooks);
void sim_debug_free(sim_debug *d);
/* The name of the kernel's source file, as .file gives it ("kernel.cu"); "" when unknown. */
const char *sim_debug_file(const sim_debug *d);
/* A breakpoint at a line of that file: its number (1, 2, ...), or -1 with err saying why (no
 * code at that line, and the nearest lines that have some). */
int sim_debug_break(sim_debug *d, int line, int has_cond, char *err, size_t errlen);
int sim_debug_delete(sim_debug *d, int id); /* 0, or -1 when there is no such breakpoint */
/* What the launch does when the stop returns (sim_debug_resume): run to the next breakpoint;
 * step (run the warp in focus until it reaches another source line, into a call or out of a
 * return); next (the same, but a call runs to its end); finish (until the selected frame
 * returns); until (next, but a jump back to an earlier line of the same frame, a loop's, does
 * not stop). Run is what a stop does unless it says otherwise; a breakpoint or Ctrl-C stops any
 * of them. */
enum { SIM_DBG_RUN, SIM_DBG_STEP_IN, SIM_DBG_NEXT, SIM_DBG_FINISH, SIM_DBG_UNTIL };
void sim_debug_resume(sim_debug *d, int how);

/* The call stack of one thread: frame 0 is where it is, the last one the kernel. A caller's line
 * is that of its call. A function without line information (libdevice's __nv_sinf) has line 0:
 * it has no source to show. A recursive function (sim_calls.c's stacked ones) has a frame for
 * each of its activations, whose variables a selected frame reads (sim_dbgframes.c). */
typedef struct sim_debug_frame {
  char func[128];           /* the function's source name: "helper", "__nv_sinf" */
  int line;                 /* 0: the function has no line information */
  const char *file;         /* the file of line when it is not the kernel's own (a header's path,
                             * as the PTX's .file gives it), NULL for the kernel's; the module's */
  int is_kernel;
} sim_debug_frame;
/* At most max frames of that thread into out; returns how many there are (0: it has exited). */
int sim_debug_frames(const sim_debug *d, long long block, int thread, sim_debug_frame *out,
                     int max);
/* Selects frame n of the thread in focus: reads and names then see that frame's variables, and
 * finish runs until it returns. A stop or a change of focus selects frame 0 again. -1 with err
 * when there is no frame n. */
int sim_debug_select(sim_debug *d, int n, char *err, size_t errlen);
/* The line a breakpoint on the function called name (its source name) stops at, into *line: the
 * first of its body, past the prologue that loads its parameters (0 when it has no line
 * information); -1 when the module has no such function. */
int sim_debug_func_line(const sim_debug *d, const char *name, int *line);

/* The stop: why, and where the thread in focus is. */
typedef struct sim_debug_stop {
  int reason;               /* SIM_DBG_* */
  int bp;                   /* SIM_DBG_BREAK: which breakpoint */
  uint32_t lanes;           /* the lanes of the warp that stopped that are there (a breakpoint:
                             * those for which its condition holds) */
  int line;                 /* the line the warp that stopped is at; 0 unknown */
  long long block;          /* the block in focus (linear index) */
  int thread;               /* the thread in focus (linear index in its block) */
  int focus_line;           /* where the thread in focus is; 0 unknown or exited */
  const char *file, *focus_file; /* the files of line and focus_line, as sim_debug_frame's */
  int focus_state;          /* SIM_DBG_W_*: of the thread in focus (DONE: it has exited) */
  long long blocks_done, blocks_started, blocks_total;
  const char *fault;        /* SIM_DBG_FAULT: the launch's error message (valid during the stop) */
} sim_debug_stop;
void sim_debug_where(const sim_debug *d, sim_debug_stop *out);

/* A warp of a block in flight: its lanes grouped by where they are. Lanes that took different
 * sides of a branch are at different lines until they meet again. */
typedef struct sim_debug_group {
  int line;                 /* source line; 0 unknown */
  const char *file;         /* its file, as sim_debug_frame's */
  uint32_t mask;            /* its lanes */
  int running;              /* the path the warp runs now (the others wait for it) */
} sim_debug_group;
typedef struct sim_debug_warp {
  long long block;          /* linear index */
  int warp;                 /* index in the block */
  int state;                /* SIM_DBG_W_* */
  uint32_t live;            /* lanes that have not exited */
  int ngroups;
  sim_debug_group group[32];
} sim_debug_warp;
/* The warps of every block in flight, at most max of them into out; returns how many there are
 * (out may be NULL to count). */
int sim_debug_warps(const sim_debug *d, sim_debug_warp *out, int max);
/* Moves the focus: the block must be in flight and the thread must exist. -1 with err. */
int sim_debug_focus(sim_debug *d, sim_dim3 block, sim_dim3 thread, char *err, size_t errlen);

#define SIM_DEBUG_ELEMS 16 /* elements of an array a read returns */
typedef struct sim_debug_value {
  int enc;                  /* SIM_DV_* */
  int size;                 /* bytes of one element */
  int count;                /* elements: 1 for a scalar */
  int shown;                /* how many of them bits holds (the first ones) */
  uint64_t bits[SIM_DEBUG_ELEMS];
  uint64_t addr;            /* in local memory: its generic address, which sim_debug_mem reads
                             * (a structure's or an array's whole); 0 in a register */
  char type[64];            /* as C writes it: "float *" */
} sim_debug_value;
/* The value of the variable `name` (its source name) for one thread of a block in flight, where
 * that thread is now. -1 with err: no such variable there, no value there, an exited thread. */
int sim_debug_read(const sim_debug *d, long long block, int thread, const char *name,
                   sim_debug_value *out, char *err, size_t errlen);
/* The names of the variables in scope for that thread, at most max into out (strings the module
 * owns); returns how many there are. */
int sim_debug_names(const sim_debug *d, long long block, int thread, const char **out, int max);
/* n bytes of memory at address a as thread `thread` of block `block` sees it: an array of the
 * launch (a global address), the block's shared memory or the thread's local memory (their
 * generic windows); 0, or -1 with err when a is in none of them. */
int sim_debug_mem(const sim_debug *d, long long block, int thread, uint64_t a, void *out,
                  size_t n, char *err, size_t errlen);
/* The __shared__ variable of the kernel called name (as the source spells it; NVRTC's -G
 * information leaves them out): its generic address and size in bytes; -1 when there is none.
 * An extern __shared__ array's size is the launch's dynamic shared memory. */
int sim_debug_shared(const sim_debug *d, const char *name, uint64_t *addr, uint64_t *size);
/* The module-scope __constant__ or __device__ variable called name (as the source spells it):
 * its address, which sim_debug_mem reads, its size in bytes, and whether it is __constant__
 * (*is_const); -1 when there is none. */
int sim_debug_global(const sim_debug *d, const char *name, uint64_t *addr, uint64_t *size,
                     int *is_const);

/* A breakpoint's condition compiled for a whole warp (sim_dbgcond.c), so that a condition on a
 * hot line costs a few operations over 32 lanes in C rather than a call into the front end per
 * lane. The program is postfix, for a stack machine whose every value is one per lane: the front
 * end types it as C does (the usual conversions written out as CVT) and the simulator only
 * computes. Integers are held in 64 bits, wrapped to their type after every operation, floats as
 * doubles rounded to single precision where the type is float. A variable is found by its name
 * once per pc where the breakpoint stops; one whose place or type there is not what the program
 * says, and any lane where an operation cannot be done (a division by zero, a float too large for
 * an integer), make the launch ask the cond hook instead, which is always right. */
enum { SIM_DC_INT, SIM_DC_FLOAT, SIM_DC_VAR, SIM_DC_TID, SIM_DC_BID, SIM_DC_CVT, SIM_DC_NEG,
       SIM_DC_BNOT, SIM_DC_LNOT, SIM_DC_ADD, SIM_DC_SUB, SIM_DC_MUL, SIM_DC_DIV, SIM_DC_MOD,
       SIM_DC_AND, SIM_DC_OR, SIM_DC_XOR, SIM_DC_SHL, SIM_DC_SHR, SIM_DC_LT, SIM_DC_LE,
       SIM_DC_GT, SIM_DC_GE, SIM_DC_EQ, SIM_DC_NE, SIM_DC_LAND, SIM_DC_LOR, SIM_DC_SEL,
       SIM_DC_NOPS };
/* A C type as the program computes in it: k 'i' (integer), 'b' (bool) or 'f' (floating). */
typedef struct sim_debug_ty {
  char k;
  char size;                /* bytes: 1, 2, 4, 8 (a float 4 or 8, a bool 1) */
  char sgn;                 /* an integer: signed */
} sim_debug_ty;
typedef struct sim_debug_cop {
  int op;                   /* SIM_DC_* */
  sim_debug_ty t;           /* the type it gives (a comparison: the type it compares in) */
  sim_debug_ty from;        /* CVT: the type converted from */
  int which;                /* TID, BID: 0 x, 1 y, 2 z */
  int64_t i;                /* INT: the constant */
  double f;                 /* FLOAT: the constant */
  char name[64];            /* VAR: the variable's source name */
  char type[64];            /* VAR: its type as the debug information spells it ("int") */
} sim_debug_cop;
/* Gives breakpoint bp the compiled form of its condition (n operations, copied); n == 0 takes it
 * away. -1 with err when there is no such breakpoint or the program is not well formed (an
 * unknown operation or type, a stack that underflows, goes past 32 or does not end with one
 * value): the front end's hook then goes on deciding alone. */
int sim_debug_cond(sim_debug *d, int bp, const sim_debug_cop *ops, int n, char *err,
                   size_t errlen);

/* ---- The timing model (sim_model.c): modelled time of a launch or a copy on the device ---- */

/* The limits a launch's time can be bound by. */
enum { SIM_LIM_LAUNCH, SIM_LIM_BLOCKS, SIM_LIM_TAIL, SIM_LIM_LATENCY, SIM_LIM_ISSUE, SIM_LIM_FP32,
       SIM_LIM_FP64, SIM_LIM_SFU, SIM_LIM_INT, SIM_LIM_SHARED, SIM_LIM_L1, SIM_LIM_L2, SIM_LIM_DRAM,
       SIM_LIM_ATOMIC, SIM_LIM_COUNT };
const char *sim_limit_key(int limit);  /* "dram" */
const char *sim_limit_text(int limit); /* "DRAM bandwidth" */

typedef struct sim_model_result {
  double time_us;                /* the launch, start event to stop event */
  double launch_us;              /* of which fixed launch overhead */
  double term_us[SIM_LIM_COUNT]; /* what each limit alone would take (0: does not apply) */
  int limit;                     /* the one that binds */
  double dram_bytes, l2_bytes, flops;
  double achieved_gbs, peak_gbs, achieved_gflops, peak_gflops;
  double blocks_per_sm, warps_per_sm, occupancy, waves;
  double l1_hit_rate, l2_hit_rate;
  char why[400];                 /* one sentence: why that limit binds, with figures */
} sim_model_result;

/* The parameters by name, for cuda.simopts{perf = ...} and the fitting scripts. */
/* The rows of perf_params.def, in order, ending with a NULL name. */
typedef struct sim_perf_field {
  const char *name;
  size_t offset;   /* of a double in sim_perf */
  const char *unit;
  int zero;        /* 0 is allowed */
  double hi;       /* the largest value allowed; the smallest nonzero is SIM_PERF_MIN */
  const char *doc;
} sim_perf_field;
extern const sim_perf_field sim_perf_fields[];
/* Replaces the modelled device's timing parameters (what-if experiments, fitting). */
void sim_device_set_perf(sim_device *dev, const sim_perf *perf);

/* Resident blocks per SM for this block size, registers per thread (0: unknown, taken as 32)
 * and shared memory per block; *limit (may be NULL) names what caps it. */
int sim_occupancy(const sim_device_desc *d, int threads, int regs, size_t shared,
                  const char **limit);
/* Modelled time of a launch from its profile (stats->profile). 0, or -1 when p is not valid. */
int sim_model_launch(const sim_device_desc *d, sim_dim3 grid, sim_dim3 block, size_t shared,
                     const sim_profile *p, sim_model_result *out);
enum { SIM_COPY_H2D, SIM_COPY_D2H, SIM_COPY_D2D, SIM_COPY_MEMSET };
/* Modelled time of a copy (or memset) of `bytes`; pinned applies to host memory. */
double sim_model_copy_us(const sim_device_desc *d, int kind, size_t bytes, int pinned);

/* Device printf output goes here (default: stdout). */
void sim_set_printf_sink(sim_device *dev, void (*sink)(const char *text, size_t len, void *ud),
                         void *ud);

#endif
