/* sim_run.h: run-time state of a launch (sim_run), of one host worker thread (sim_worker)
 * and of one warp (sim_warp), and the functions the executor's files call in one another; shared
 * by the executor (sim_exec.c), the memory instructions, the checkers, printf, the launcher and
 * the timing model's run-time half. Nothing outside sim/ includes it. (It is not sim_exec.h:
 * the interpreter is one of its many users, not its owner.)
 *
 * Stance: a launch is owned by one sim_run; each host thread owns a sim_worker that runs whole
 * blocks, with its own warps, shared memory, per-instruction counters and allocation cache, so
 * the hot path touches no shared state except global memory (atomics use real host atomics).
 * A block's warps and shared memory live in a sim_slot, so that a worker can hold several
 * resident blocks and switch between them (sim_sched.c); the worker's fields of the same names
 * show the running one. */
#ifndef CUDALAB_SIM_RUN_H
#define CUDALAB_SIM_RUN_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "sim_int.h"

enum { SIM_W_RUN, SIM_W_BAR, SIM_W_DONE, SIM_W_ERR = -1 };

/* LANEWISE's pragma (below): rows are 32-lane blocks, equal or disjoint, so lanes never depend on
 * each other even when D is also a source; saying so (ivdep) lets the compiler vectorise the
 * whole-warp loop at -O2, whose cost model refuses the run-time overlap check it would otherwise
 * need. GCC is also asked to unroll the vectorised loop (8 iterations of 4 lanes with AVX2):
 * its counter, compare and branch were a third of an add's host instructions. */
#if defined(__clang__)
#define SIM_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define SIM_IVDEP _Pragma("GCC ivdep") _Pragma("GCC unroll 8")
#else
#define SIM_IVDEP
#endif
/* Runs the statement for every lane l set in em: a plain 0..31 loop (after PRAGMA) when all
 * lanes are active, which the compiler can vectorise, and a walk over the set bits otherwise. */
#define SIM_EACH_LANE(PRAGMA, ...)                                    \
  do {                                                                \
    if (em == SIM_FULL) {                                             \
      PRAGMA for (int l = 0; l < SIM_WARP; l++) { __VA_ARGS__; }      \
    } else {                                                          \
      for (uint32_t mm_ = em; mm_; mm_ &= mm_ - 1) {                  \
        int l = __builtin_ctz(mm_);                                   \
        __VA_ARGS__;                                                  \
      }                                                               \
    }                                                                 \
  } while (0)
#define LANES(...) SIM_EACH_LANE(, __VA_ARGS__)
/* Register row i of the warp's rows R (lane-major, SIM_WARP values a row). The index is widened
 * before the multiply: an int product took a sign extension and a second shift per row, and
 * the interpreter finds up to four rows on every instruction. */
#define SIM_ROW(R, i) ((R) + (ptrdiff_t)(i) * SIM_WARP)
/* LANES for bodies that read and write lane l of register rows only. Not for stores to memory,
 * where two lanes may hit one address and the highest lane must win. */
#define LANEWISE(...) SIM_EACH_LANE(SIM_IVDEP, __VA_ARGS__)

/* rpc of the divergence-stack frame a stacked call pushes: never a pc, so its lanes meet only
 * at the callee's return (SIM_OP_RETS), and never -1, so no branch replaces it. */
#define SIM_RPC_CALL (-2)

typedef struct sim_frame {
  int32_t pc, rpc;   /* next instruction; reconvergence point (-1 none) */
  uint32_t mask;     /* lanes of this path */
} sim_frame;

typedef struct sim_retaddr {
  int32_t pc;        /* where RETF returns to */
  int32_t call;      /* index into sim_module.calls */
} sim_retaddr;

/* The loops of a block's warp that a probe found to change its state, remembered so that a
 * compute loop is probed once per block, not once per pass over it (sim_sched.c). */
#define SIM_CALM 4
/* The times running a warp takes one backward branch, writing nothing, before it is probed. */
#define SIM_LOOP_TURNS 3

typedef struct sim_nantags sim_nantags; /* a warp's NaN check tags (sim_nan.c) */
typedef struct sim_staletags sim_staletags; /* a warp's undefined shuffle values (sim_stale.c) */

typedef struct sim_warp {
  uint64_t *R;             /* nrows x 32 lanes, row-major: R[row*32 + lane] */
  uint32_t *P;             /* predicate masks */
  sim_frame *stack;        /* divergence stack (top = stack[sp-1]) */
  int sp, cap;
  sim_retaddr calls[64];   /* device-function return addresses */
  int ncalls;
  /* Stacked calls (sim_calls.c): saved state of the activations below the running ones. */
  unsigned char *save;     /* the save stack: activation records, each with its header last */
  size_t save_len, save_cap;
  int depth;               /* stacked activations running */
  uint64_t stack_top;      /* local offset of the first free byte of the call stack */
  uint32_t live;           /* lanes that exist and have not exited */
  int state;               /* SIM_W_* */
  int bar_pc;              /* pc of the barrier it waits at */
  int bar_id;              /* the number (0..15) of that barrier */
  int bar_named;           /* 1: it waits at a barrier with a thread count, which the arrivals
                            * release (sim_barrier.c); 2: on an mbarrier's phase (try_wait,
                            * sim_mbarrier.c); 0: at a barrier of the whole block */
  uint64_t mbar_off;       /* bar_named 2: the shared offset of the mbarrier it waits on */
  int mbar_multi;          /* bar_named 2: its lanes wait on several, any of which may end it */
  int index;               /* warp index in the block */
  unsigned char *local;    /* 32 x local_frame bytes, lane-major */
  unsigned char *fparam;   /* 32 x fparam stride bytes */
  uint64_t clock;          /* %clock64: instructions issued so far */
  uint32_t cc;             /* carry flag per lane (add.cc / addc) */
  /* Timing model only (run->lat != NULL): the warp's own time is clock + stall_mem + stall_other
   * cycles; ready[row] is when a loaded register row arrives. */
  uint64_t *ready;         /* nrows entries, in the warp's own time (see sim_lat_warp_start) */
  uint64_t clock0, mem0, other0; /* clock and stalls when the current block started */
  uint64_t stall_mem;      /* cycles waiting for global loads */
  uint64_t stall_other;    /* cycles waiting for shared loads and at barriers */
  uint32_t gseq;           /* global memory requests so far: orders the trace */
  uint32_t wsync;          /* __syncwarp() (bar.warp.sync) executed so far: race detection;
                            * under SIM_RACE_WARN its shared accesses are counted too */
  uint32_t synced;         /* wsync just after its latest __syncwarp() (SIM_RACE_WARN) */
  uint32_t conv;           /* wsync at the latest divergent branch all its live lanes ran */
  uint32_t bar_lanes;      /* SIM_SAN_SYNC: the lanes that reached bar_pc when only some of its
                            * live lanes did (bar_part set) */
  int bar_part;            /* it waits at bar_pc with only bar_lanes arrived */
  /* Spin detection (sim_sched.c): the verdict of the warp's last probe. */
  int spin;                /* 1: it runs a loop that changes nothing (state and memory unchanged) */
  int spin_pc;             /* where that loop came back to its starting state */
  int spin_ld;             /* pc of the loop's last global load or atomic (what it waits on), -1 */
  uint64_t spin_addr;      /* the address that load read (first active lane) */
  int spin_waits;          /* 1: the loop's exit test depends on what it reads (a flag); 0: on
                            * registers alone (a counter that never moves), though it reads */
  /* The early look at a loop (sim_exec.c's flow, sim_sched.c's exec_turn): a warp that takes the
   * same backward branch SIM_LOOP_TURNS times running, writing nothing, pauses so that the
   * scheduler can probe it at once, rather than at the end of its slice. */
  int loop_pc;             /* the backward branch it took last, -1 none this turn */
  int loop_n;              /* times it took loop_pc since it last wrote or took another */
  uint64_t loop_writes;    /* the worker's writes when loop_n was last reset */
  int loop_watch;          /* 1: pause at such a loop (only exec_turn's run sets it) */
  int loop_paused;         /* 1: the last run stopped early at such a loop */
  int calm[SIM_CALM];      /* backward branches of loops a probe found changing: not spins */
  int ncalm;               /* loops put in calm this block (the oldest replaced once full) */
  sim_nantags *nan;        /* SIM_SAN_NAN only: the NaNs and infinities its registers hold that
                            * the kernel made (sim_nan.c) */
  sim_staletags *stale;    /* race_check only, made when the warp first shuffles from a lane not
                            * running the shuffle: the values it got there (sim_stale.c) */
} sim_warp;

/* Per-instruction counters of one worker, folded into sim_stats at the end. */
typedef struct sim_icount {
  uint64_t warp, thread;   /* executions, active lanes summed */
  uint64_t req, sect;      /* global memory requests and 32-byte sectors */
  uint64_t wf, conf;       /* shared wavefronts and bank conflicts */
  uint64_t div;            /* divergent branch executions */
} sim_icount;

/* The last address pattern one memory instruction saw, and its shared wavefronts or global
 * sectors. Both counts depend only on where the lanes' addresses lie relative to each other and
 * on the first lane's address modulo a granule (4 bytes for banks, 32 for sectors): shifting
 * every address by a multiple of the granule only renames banks or sectors. Every warp of a
 * tiled kernel repeats the same pattern at a given instruction, so the count is computed once
 * and then confirmed by a comparison the compiler vectorises, instead of a per-lane bank
 * analysis each time (which was a third of the time of a 16x16 tiled matmul). A confirmed
 * pattern also makes bounds and alignment checks O(1): only its two ends and the OR of its
 * deltas need checking against the first lane's address. */
typedef struct sim_memo {
  uint64_t delta[SIM_WARP]; /* ad[l] - ad[first active lane]; 0 for inactive lanes */
  int64_t dmin, dmax;       /* least and greatest delta: the warp's extent, for bounds checks */
  uint64_t dor;             /* OR of the deltas: with the first address, the warp's alignment */
  uint32_t em;              /* lanes of the pattern; 0 while empty */
  uint32_t phase;           /* first active lane's address modulo the granule */
  uint32_t kind;            /* SIM_MEMO_* the count is of */
  uint32_t count;           /* wavefronts or sectors */
  uint32_t rising;          /* each lane's address above the one before: distinct words */
  uint32_t move;            /* SIM_MOVE_*: how fast_move may move a whole warp's elements */
  int32_t alloc;            /* global: the allocation (run->tab) the last warp's access lay in */
  /* shared: the bytes [win_lo, win_lo + win_n) the instruction may touch, its bound variable's
   * or all the block's (sim_mem_memo_init), set once per launch so a warp pays no lookup */
  uint64_t win_lo, win_n;
  /* What fast_access tests, folded at each fill (memo_fill): em | kind << 32 | phase << 40, one
   * compare for the three; and, shared, the window test of the whole pattern as one of its first
   * lane's address a0: every lane lies inside exactly when a0 - hit_lo <= hit_span (unsigned).
   * Bit 63 of key is set for a shared pattern wider than its window, which no warp can take
   * inside, so that fast_access never matches it. */
  uint64_t key, hit_lo, hit_span;
  /* For the timing model's trace (global only): the 128-byte lines the pattern touches, relative
   * to the first active lane's line, with the sectors of each; valid for the same address modulo
   * 128 (phase), since shifting by whole lines only renames them. Two phases, the slot lnext
   * replaced next: a tile loop's row of 16 floats moves by 64 bytes a turn, so its warps take two
   * phases in turn, and one slot had its lines worked out again at every turn. */
  struct sim_memo_lines {
    uint32_t tag;        /* the phase + 256; 0: not computed */
    uint32_t n;
    int64_t rel[SIM_WARP];
    uint8_t mask[SIM_WARP];
  } lines[2];
  uint32_t lnext;
  /* For the race check's log (shared only, sim_race.c): fills so far, and which of the log's
   * patterns holds the deltas of fill gen, as of the log's serial snap_serial. */
  uint32_t gen, snap_gen;
  int32_t snap;
  uint64_t snap_serial;
} sim_memo;

enum { SIM_MEMO_WAVEFRONTS = 1, SIM_MEMO_SECTORS = 2 };
/* The shapes of a whole warp's pattern (em full, elements of 4 or 8 bytes) that fast_move moves
 * four lanes at a time: each aligned group of four lanes reads consecutive elements (a row of a
 * coalesced access, a tile's row), or one element (a broadcast, a tile's column read by every
 * lane of a half-warp). Any other pattern moves lane by lane. */
enum { SIM_MOVE_LANES = 0, SIM_MOVE_RUNS4 = 1, SIM_MOVE_SAME4 = 2 };

/* Shadow of one shared byte, or word, for race detection (sim_race.c): who last wrote it and who
 * read it since, in the current barrier interval. Threads are numbered in the block (warp * 32 +
 * lane); the __syncwarp() counts tell whether two accesses of one warp have a warp barrier
 * between them. */
typedef struct sim_shadow {
  uint32_t epoch;          /* barrier interval it was last touched in; else the rest is stale */
  uint32_t wsync;          /* the writer's warp's __syncwarp() count at the write */
  uint32_t rsync;          /* warp rwarp's __syncwarp() count at the reads in rlanes */
  uint32_t rlanes;         /* lanes of warp rwarp that read it since then */
  int16_t writer;          /* thread that wrote it last, -1 none */
  int16_t rwarp;           /* warp whose lanes read it, -1 none */
  int16_t xreader;         /* a thread of another warp that read it too, -1 none */
  uint8_t rfirst;          /* the first lane of rlanes to read, named in messages */
  uint8_t flags;           /* SIM_SH_* */
} sim_shadow;

enum { SIM_SH_ATOMIC = 1,  /* the last write was an atomic (atomics do not race each other) */
       SIM_SH_SPLIT = 2,   /* first byte of a word: its bytes have cells of their own */
       SIM_SH_CAS = 4,     /* the last write was an atomicCAS (a plain read may race with it) */
       /* How strong the accesses were (sim_race.c's L_*, two bits each): the last write, and
        * the weakest of warp rwarp's reads; xreader's read was a plain one. */
       SIM_SH_WLEVEL = 3, SIM_SH_GLEVEL = 5, /* shifts */
       SIM_SH_XPLAIN = 128 };

/* A block's state in the race check's release/acquire model (sim_hb.c). */
typedef struct sim_hb sim_hb;

/* The clocks of the warps whose accesses a sim_shadow remembers, at those accesses: the write,
 * the latest of warp rwarp's reads, xreader's read. Kept apart, and only while the launch runs
 * the release/acquire model (sim_hb.c), which alone reads them: every other launch's cells stay
 * as they were. */
typedef struct sim_shadow_clk {
  uint32_t w, r, x;
} sim_shadow_clk;

/* Where the accesses a sim_shadow remembers were made, for messages only: kept apart so that
 * the cells the checks read stay small (24 bytes, several to a cache line). */
typedef struct sim_shadow_pc {
  int32_t wpc, rpc, xpc;   /* instructions: the write, rfirst's read, xreader's read */
} sim_shadow_pc;

/* A shared access whose race check is put off (sim_race.c says when): what the check would have
 * read of the warp, so that it runs later as it would have then. Lane l's offset is base plus
 * element l of the log's pattern pat, so that the warps of a tiled loop share one copy of their
 * common address pattern (sim_worker.rpat). */
typedef struct sim_rlog {
  uint32_t lo, hi;         /* the bytes it touches lie in [lo, hi) */
  int32_t pc;              /* the instruction */
  int32_t warp;            /* its warp's index in the block */
  uint32_t em;             /* lanes that made it */
  uint32_t wsync, synced, conv; /* the warp's __syncwarp() counts then (sim_warp) */
  uint32_t base;           /* see above */
  int32_t pat;
  uint16_t bytes;          /* per lane */
  uint8_t store;           /* a store; else a load */
} sim_rlog;

/* One sampled global access of the timing model's trace: a 128-byte line and its sectors, with
 * where it sits in the launch's order (block, the warp's request number, warp). */
typedef struct sim_trace_ent {
  uint64_t line;            /* host address / 128: identity only */
  uint32_t block, seq;
  uint32_t pc;              /* the instruction, for hit rates per instruction */
  uint8_t warp;
  uint8_t level;            /* further zero bits of the line's sampling hash: kept at rarer rates */
  uint8_t mask;             /* sectors 0..3 of the line */
  uint8_t kind;             /* SIM_TR_LOAD / STORE / ATOM */
} sim_trace_ent;

enum { SIM_TR_LOAD, SIM_TR_STORE, SIM_TR_ATOM };

/* Global atomics (sim_atomics.c): the time each L2 slice spends on them. */
/* Times are kept in integer ticks (sim_atab.tick_ns), each request's cost rounded once: a sum
 * of integers is the same in any order, so the figures do not change with which host thread ran
 * which block (floating-point sums did, in their last digits). */
typedef struct sim_aent {
  uint64_t slice;
  uint64_t ticks;
  int used;
} sim_aent;
#define SIM_ATOM_SKETCH 4096 /* buckets per row of the per-address chain sketch */
typedef struct sim_atab {
  sim_aent *e;
  size_t n, cap;
  uint64_t *chain;          /* 2 rows of SIM_ATOM_SKETCH: ticks of waits on one address, by
                             * sector hash */
  double ops;               /* lane operations that reached the L2 */
  uint32_t max_same;        /* most lanes of one request on one address */
  uint64_t nslices;         /* slices per placement (sim_atomics.c) */
  double tick_ns;           /* a tick: 2^-24 of the cheapest atomic cost of the device's, so that
                             * costs, multiples of those, are near exact in ticks at any scale */
} sim_atab;
#define SIM_ATOM_PLACES 2   /* placements of an allocation the slices are priced for */
void sim_atab_merge(sim_atab *dst, const sim_atab *src);
void sim_atab_free(sim_atab *t);
double sim_atab_request(sim_atab *t, const sim_perf *P, const sim_inst *in, const uint64_t *ad,
                        uint32_t em);
void sim_atab_price(const sim_atab *t, sim_profile *p);

/* A worker's part of the timing model's inputs, merged after the launch (sim_trace.c). */
typedef struct sim_wprof {
  sim_trace_ent *ent;                  /* sampled trace */
  size_t n, cap;
  size_t allowed;                      /* entries the launch's cap lets it hold so far */
  sim_atab atom;                       /* atomics per address */
  int atom_alloc;                      /* the allocation the last atomic lane lay in, or -1 */
  double atom_ops, atom_ops_l2, atom_sectors, l1_wavefronts, st_lines;
  double *stall_pc;                    /* per pc: cycles warps waited for that global load */
  uint64_t *spread_pc;                 /* per pc: over its load requests, the harmonic number of
                                        * the unrelated places each reads (sim_trace.c), in
                                        * SIM_SPREAD_ONE units: integers, whose sum is the same
                                        * whichever thread ran which block */
  double block_issue, block_mem, block_other; /* per-block slowest-warp cycles, summed */
} sim_wprof;

struct sim_run;

#define SIM_NBARS 16 /* barriers a block has (bar.sync 0 .. 15) */

/* One resident block of a worker: all that a block keeps between two of its instructions beyond
 * global memory, so that a worker can park a block that waits on another and resume it later
 * (sim_sched.c). The worker's warps / shared / shadow / epoch / bx.. fields are views of the slot
 * it is running, so the executor never knows there is more than one. */
typedef struct sim_slot {
  sim_warp *warps;          /* nwarps of the block */
  unsigned char *shared;    /* its shared memory */
  sim_shadow *shadow;       /* race_check only: cells in four planes (sim_race.c) */
  sim_shadow_pc *shadow_pc; /* race_check only: the instructions of the cells' accesses */
  sim_shadow_clk *shadow_clk; /* run->hb only: the clocks of the cells' accesses */
  sim_hb *hb;               /* run->hb only: its warps' releases and acquires (sim_hb.c) */
  size_t shadow_plane;      /* cells per plane */
  unsigned char *iset;      /* SIM_SAN_INIT only: a bit per shared byte the block has written */
  uint32_t epoch;           /* barrier interval, for the race check (saved when it is parked) */
  long long block;          /* linear block index; -1 when the slot holds no block */
  long long nth;            /* its place in the order blocks are handed out (sim_order.c) */
  unsigned bx, by, bz;      /* its block index */
  int stuck;                /* every warp spins, waits at a barrier or is done, as of seen_* */
  uint64_t seen_w, seen_g;  /* the worker's writes and run->wgen when it was judged stuck */
  uint64_t quiet;           /* warp instructions run since the block last wrote memory */
  /* Its barriers 0..15 with a thread count, in their current phase (sim_barrier.c): the warps
   * that arrived, how many it awaits (0: no phase open), the bar.red reduction of the phase (its
   * SIM_BAR_*; 0 for bar.sync and bar.arrive), and, for the timing model, the latest arrival's
   * time in the block. */
  uint32_t bar_warps[SIM_NBARS];  /* bit k: warp k arrived (a block has 32 warps at most) */
  uint8_t bar_expect[SIM_NBARS], bar_op[SIM_NBARS];
  uint64_t bar_tmax[SIM_NBARS];
  uint32_t bar_open;        /* bit id: barrier id has a phase open (some warp arrived) */
  uint32_t mbar_waiting;    /* bit k: warp k waits on an mbarrier's phase (sim_mbarrier.c) */
  int bar_woke;             /* such a barrier completed and released warps since the scheduler
                             * last looked (release_barrier) */
} sim_slot;

#define SIM_HITS 4 /* recently hit allocations remembered per worker */

typedef struct sim_worker {
  _Alignas(128) struct sim_run *run; /* aligned: workers sit in one array, avoid false sharing */
  sim_warp *warps;          /* nwarps of the block */
  unsigned char *shared;    /* block shared memory */
  sim_icount *ic;           /* per instruction */
  sim_shadow *shadow;       /* race_check only: 4 planes of shadow_plane cells (sim_race.c) */
  size_t shadow_plane;      /* cells per plane: one per 4-byte word of shared memory */
  sim_shadow_pc *shadow_pc; /* race_check only: beside each shadow cell, its instructions */
  sim_shadow_clk *shadow_clk; /* run->hb only: beside each shadow cell, its accesses' clocks */
  sim_hb *hb;               /* run->hb only: the running block's releases and acquires */
  unsigned char *iset;      /* SIM_SAN_INIT only: the running block's written shared bytes */
  sim_memo *memo;           /* run->nmemo patterns, one per memory instruction */
  uint32_t epoch;
  /* race_check only: the accesses whose check is put off (sim_rlog), in the order they were
   * made, and the bytes they touch ([llo, lhi)); maps of the 128-byte chunks of shared memory
   * that barrier interval lz_epoch touched (lzwords words each; lz_wrote: a store or atomic came);
   * lz_off: every access is checked at once until the next interval (sim_race.c). */
  sim_rlog *rlog;
  int nrlog, caprlog;
  uint32_t (*rpat)[SIM_WARP];   /* the log's lane offset patterns (sim_rlog.pat) */
  int npat, cappat;
  uint64_t lz_serial;       /* bumped whenever the log empties: memos' snapshots are stale */
  uint64_t llo, lhi;
  uint64_t *lzmap;
  size_t lzwords;
  uint32_t lz_epoch;
  int lz_off, lz_wrote, lz_logmap; /* lz_logmap: the map of the log's chunks is kept */
  int hits[SIM_HITS];        /* recently found allocations (indices into run->tab), -1 none */
  unsigned next_hit;        /* which hit to replace next */
  unsigned bx, by, bz;      /* current block index */
  int launcher;             /* runs on sim_launch's thread (the one progress is called on) */
  char *out;                /* printf text of the current warp instruction */
  size_t outlen, outcap;
  sim_wprof prof;           /* timing model inputs (run->lat != NULL) */
  /* Resident blocks (sim_sched.c); the views above show slots[cur]. */
  sim_slot *slots;          /* nslots, allocated as needed; slots[0] always */
  int nslots, used, cur;    /* allocated, holding a block, running */
  int quota;                /* resident blocks it may hold: its share of the device's */
  unsigned block_rows;      /* the per-block special rows the kernel reads (sim_sched.c) */
  int yielded;              /* the running block yielded: SIM_QUIET instructions without a write */
  int index;                /* in run->wks */
  long slice;               /* a warp's time slice: SIM_SLICE, shorter once blocks wait on others */
  uint64_t writes;          /* store and memory-changing atomic instructions so far (sim_mem.c) */
  uint64_t writes_told;     /* writes when it last bumped run->wgen */
  /* a probe's snapshot */
  uint64_t *snap_r;
  uint32_t *snap_p;
  sim_frame *snap_s;
  int snap_cap;
} sim_worker;

typedef struct sim_run {
  sim_device *dev;
  sim_module *m;
  sim_kernel *k;
  const sim_func *f;
  sim_dim3 grid, block;
  size_t dyn_shared, shared_total;
  size_t shared_user;     /* shared_total less the GPU's reserved bytes (k->reserved_shared) */
  unsigned char *params;    /* kernel parameter buffer */
  sim_alloc *tab;           /* allocations and module globals, sorted */
  int ntab;
  const sim_launch_opts *opts;
  int nwarps, nthreads;     /* per block */
  size_t fstride;           /* per-lane fparam bytes */
  size_t local_stride;      /* per-lane local bytes: the module's static frame, then call stack */
  size_t stack_size;        /* per-thread call stack for stacked functions (cudaLimitStackSize) */
  int32_t *memo_slot;       /* per pc: index into sim_worker.memo, -1 for non-memory instructions */
  int nmemo;                /* memory instructions of the module */
  long long nblocks;
  uint64_t gridid;          /* %gridid: this launch's number on its device */
  /* Timing model (lat 0 when off): the latency charged per global load at run time (rescaled
   * afterwards by the replayed hit rates); the trace's cap. */
  int lat;
  uint64_t lat_global, lat_shared;
  uint64_t lat_gap; /* the longer of the two, and a cycle: see sim_lat_warp_start */
  atomic_llong trace_room;  /* sampled entries still allowed in this launch */
  pthread_mutex_t lock;     /* error message, warning, printf sink */
  char *err;
  size_t errlen;
  /* Debugging (sim_sanitize.c, sim_watch.c), decided once per launch: each hook is off unless
   * asked for, so a launch without them tests one flag where a hook could be. */
  int san;                  /* SIM_SAN_* of this launch */
  int hook_nan;             /* warps run one instruction at a time under the NaN check */
  int hook_load;            /* loads go through sim_hook_ld: the init check, managed touches */
  int hook_store;           /* stores and atomics go through sim_hook_st / sim_hook_atom: the init
                             * check, marks of unset memory, watches, managed touches */
  int race_warn;            /* a race is a warning (SIM_RACE_WARN), not a failure */
  int hb;                   /* the race check follows releases and acquires (sim_hb.c): it is on
                             * and the kernel has an ordered access or a fence; then hook_load
                             * and hook_store are on too */
  int san_load;             /* the init check or managed memory want loads (sim_hook_ld) */
  int san_store;            /* the init check, unset memory, watches or managed memory want
                             * stores and atomics */
  int *unset;               /* indices into tab of the allocations with unset bytes */
  int nunset;
  int *um;                  /* indices into tab of the managed allocations (sim_managed.c), whose
                               touches the load and store hooks mark */
  int num;
  struct sim_watch_run *watch; /* the live watches' ranges, nwatch of them */
  int nwatch;
  atomic_ullong warnings;   /* races found under race_warn; the first one's message is kept */
  /* Written while workers run, each on its own cache line so that taking a block, finishing one
   * or failing never invalidates the read-mostly fields above in the other workers' caches. */
  _Alignas(64) atomic_llong next_block; /* next block index to hand out */
  _Alignas(64) atomic_llong blocks_done; /* blocks finished, for opts->progress */
  atomic_int workers_running;  /* workers still running blocks (the launching thread waits on it) */
  _Alignas(64) atomic_int failed;
  /* With several workers, the hand-out place (slot nth) of the block whose error run->err
   * holds; LLONG_MAX while none failed. See sim_fail. */
  atomic_llong fault_nth;
  atomic_llong fault_by_ns;    /* CLOCK_MONOTONIC ns by which the blocks before it must end */
  atomic_llong warn_nth;       /* the same for the warning kept (sim_warn); written under lock */
  atomic_int warn_yields;      /* the warning kept yields to any other (sim_warn_at); written
                                * under lock */
  /* Blocks that wait on one another (sim_sched.c). */
  int resident_max;            /* blocks the modelled device holds at once: SMs x occupancy */
  int occupancy;               /* of which blocks per SM */
  const char *occupancy_limit; /* what caps that ("threads per SM") */
  struct sim_worker *wks;      /* every worker, for the watchdog's report */
  int nw;
  atomic_int spin_seen;        /* some block was found waiting: slices shrink from then on */
  _Alignas(64) atomic_ullong wgen; /* bumped by a worker that wrote memory, once blocks wait */
  atomic_ullong *stamp;        /* per worker: 0 busy, g+1 all its blocks wait as of wgen g */
  double progress_next;        /* launching thread only: CLOCK_MONOTONIC time of the next call */
  int progress_calls;          /* launching thread only: progress calls made so far */
  /* Last, so that the fields the interpreter reads keep their places: putting it among them
   * slowed a tiled matmul by a few per cent. */
  struct sim_debug *dbg;       /* the debugger the launch runs under (one worker), else NULL */
  struct sim_fault *dbg_fault; /* dbg's record of the failure (sim_debug_faults), else NULL */
  /* The order blocks are handed out in (sim_order.c), fixed before workers start. */
  int order;                   /* SIM_ORDER_* */
  int order_half;              /* SHUFFLE: bits of each half of the Feistel network's domain */
  uint64_t order_key[4];       /* SHUFFLE: the round keys, from the seed */
  /* Per-lane local bytes before the region of parameter copies (the static frame and the call
   * stack): the bound of an ordinary local access. local_stride adds the region (sim_lcopy),
   * whose accesses sim_lcopy_check checks against the copy they are in. */
  size_t local_plain;
} sim_run;

#define SIM_TRACE_CAP 3000000 /* sampled trace entries per launch (72 MB); rates come from those */
#define SIM_TRACE_SHIFT 5      /* one 128-byte line in 2^5 is traced */
#define SIM_TRACE_TARGET 12000 /* entries the fold replays at most: a longer trace is thinned */
#define SIM_SPREAD_ONE 100000  /* spread_pc's units in a harmonic number of 1 */

/* Timing model hooks (sim_trace.c). */
/* alloc: the index in run->tab of the allocation every lane's address lies in, or -1. _warp: a
 * whole warp's request at a0 whose pattern the memo mo holds (fast_access). */
void sim_trace_access(sim_worker *wk, sim_warp *w, int pc, int kind, const uint64_t *ad,
                      uint32_t em, int bytes, int alloc);
void sim_trace_warp(sim_worker *wk, sim_warp *w, int pc, int kind, uint64_t a0, sim_memo *mo,
                    int bytes, int alloc);
void sim_trace_atom(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                    uint32_t em);

/* The warp's own time, which only grows, so ready times left by an earlier block never stall. */
static inline uint64_t sim_warp_time(const sim_warp *w) {
  return w->clock + w->stall_mem + w->stall_other;
}

/* A wait the inline check below found: charged to the load whose row arrived last. Inline too:
 * every product of a tiled matmul waits for the shared loads just before it. */
static inline void sim_lat_wait(sim_worker *wk, sim_warp *w, uint64_t ready,
                                const sim_inst *code) {
  uint64_t now = sim_warp_time(w), t = ready >> 24;
  int pc = (int)(ready & 0xffffff);
  if (code[pc].flags & SIM_IF_LAT_SHARED) {
    w->stall_other += t - now;
  } else {
    w->stall_mem += t - now;
    wk->prof.stall_pc[pc] += (double)(t - now);
  }
}

/* ready[row] packs when the row's load arrives (high bits) with the pc of that load (low 24 bits),
 * so that a wait can be charged to the load it waited for. Inline: these run on every load and on
 * every instruction that reads a loaded row. code: the module's instructions (run->m->code). */
static inline void sim_lat_consume(sim_worker *wk, sim_warp *w, const sim_inst *in,
                                   const sim_inst *code) {
  /* Only the sources that read a loaded row (in->latsrc): every other row's ready stays 0. */
  const uint64_t *rd = w->ready;
  uint32_t src = in->latsrc;
  uint64_t r = 0;
  if ((src & 1) && rd[in->a] > r) r = rd[in->a];
  if ((src & 2) && rd[in->b] > r) r = rd[in->b];
  if ((src & 4) && rd[in->c] > r) r = rd[in->c];
  if ((src & 8) && rd[in->e] > r) r = rd[in->e];
  for (src >>= 4; src; src &= src - 1) {
    int k = __builtin_ctz(src);
    if (rd[in->v[k]] > r) r = rd[in->v[k]];
  }
  if ((r >> 24) > sim_warp_time(w)) sim_lat_wait(wk, w, r, code);
}

static inline void sim_lat_produce(const sim_run *run, sim_warp *w, const sim_inst *in, int pc) {
  uint64_t lat = in->flags & SIM_IF_LAT_SHARED ? run->lat_shared : run->lat_global;
  uint64_t t = sim_warp_time(w) + lat;
  uint64_t v = t << 24 | (uint64_t)pc;
  if (in->op == SIM_OP_ATOM) {
    if (in->d >= 0) w->ready[in->d] = v;
    return;
  }
  if (in->vec == 1) { /* most loads */
    if (in->v[0] >= 0) w->ready[in->v[0]] = v;
    return;
  }
  for (int k = 0; k < in->vec && k < 4; k++)
    if (in->v[k] >= 0) w->ready[in->v[k]] = v;
}
/* A new block on this warp's slot: its own time goes on from where the last block left it, past
 * a gap as long as the longest load latency (run->lat_gap). A row the last block loaded and
 * never read keeps its arrival time, and would otherwise stall this block by an amount that
 * depends on which block ran here before (which host thread, which order), so the model would
 * not be deterministic; after the gap every arrival time left over has passed. The gap is not
 * the block's time (block_time starts after it). Clearing those rows instead cost a fifth of
 * the timing model's time on a vector add's short blocks. Inline: block_start calls it for
 * each warp it sets up anyway. */
static inline void sim_lat_warp_start(const sim_run *run, sim_warp *w) {
  w->stall_other += run->lat_gap;
  w->clock0 = w->clock;
  w->mem0 = w->stall_mem;
  w->other0 = w->stall_other;
  w->gseq = 0;
}
void sim_lat_block_end(sim_worker *wk);
void sim_lat_barrier(sim_worker *wk);
/* A barrier with a thread count (sim_barrier.c): the time in its block at which warp w arrives,
 * and a waiting warp held there until time t of the block. */
uint64_t sim_lat_arrival(const sim_warp *w);
void sim_lat_hold(sim_warp *w, uint64_t t);
void sim_wprof_free(sim_wprof *p);
/* Lends worker i the device's kept trace buffer, and takes it back (sim_trace.c). */
void sim_trace_borrow(sim_worker *wk, int i);
void sim_trace_return(sim_worker *wk, int i);

/* Replays the sorted trace through the L1 and L2 models (sim_cache.c). */
/* sample: the trace holds one line in `sample`; caches are scaled down to match. */
void sim_cache_replay(const sim_run *run, const sim_worker *wks, int nw, sim_trace_ent *e, size_t n,
                      int blocks_per_sm, double sample, sim_profile *p);
void sim_profile_fold(sim_run *run, sim_worker *wks, int nw, const sim_stats *st, sim_profile *out);
/* The cycles warps waited for their own arithmetic results, summed over the launch: each
 * instruction's static stall (sim_depend.c) times warp_count[i], its warp executions; cls_of
 * gives an instruction's pipe (SIM_CLS_*) and its issue slots. */
double sim_dep_stalls(const sim_module *m, const sim_perf *P, const double *warp_count,
                      int (*cls_of)(const sim_inst *, double *slots));

/* Stacked and indirect calls, their returns, and the built-in functions (sim_calls.c). Each
 * returns 0, or -1 with the launch failed. Called with the warp's top divergence frame running. */
int sim_call_stacked(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em,
                     int func);
int sim_call_indirect(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_ret_stacked(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em);
void sim_unwind_stacked(sim_worker *wk, sim_warp *w); /* a call frame whose lanes all exited */
/* For the debugger: the activation record that ends *end bytes into w's save stack (start with
 * w->save_len), which the stacked call of the divergence stack's topmost SIM_RPC_CALL frame not
 * yet read made; *end moves to the one below. func: the callee; saved: its register rows,
 * predicates and parameter slots as they were before that call (an outer activation of the same
 * function left them so); frame: the caller's SIM_SR_FRAME. -1 when none is left. */
typedef struct sim_act {
  int func;
  const unsigned char *saved;
  uint64_t frame;
} sim_act;
int sim_act_below(const sim_warp *w, size_t *end, sim_act *out);
/* Row `row` (one of a->func's) of lane `lane` as record a saved it; predicate p's lanes. */
uint64_t sim_act_row(const sim_module *m, const sim_act *a, int row, int lane);
uint32_t sim_act_pred(const sim_module *m, const sim_act *a, int p);
int sim_builtin(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em);

/* The device heap (sim_heap.c): blocks of malloc / new in kernels, shared by every block of
 * every launch on the device, each a host allocation of its own so that checks name it. */
uint64_t sim_heap_malloc(sim_device *dev, uint64_t bytes); /* 0 when the heap is exhausted */
/* by: who freed it, in words ("block (0,0,0), thread (3,0,0) at kernel.cu:6"), kept for the
 * use-after-free message. -1: not a live heap block. */
int sim_heap_release(sim_device *dev, uint64_t ptr, const char *by);
/* 1 when a lies in a recently freed block, described in buf ("byte 8 of heap block #1 (64 bytes,
 * ...), freed by block (0,0,0), thread (0,0,0) at kernel.cu:3"); 0 otherwise. */
int sim_heap_freed(sim_device *dev, uint64_t a, char *buf, size_t len);
/* 1 when a malloc in a kernel has returned NULL on the device, said in buf for the message of an
 * access through a null pointer; 0 otherwise. */
int sim_heap_refusals(sim_device *dev, char *buf, size_t len);
/* The init check's look at a kernel before it runs (sim_undef.c): 1, with the message in buf,
 * when it reads a register that no instruction writes on some way from its start. */
int sim_undef_check(const sim_module *m, const sim_func *f, char *buf, size_t len);
int sim_heap_holds(sim_device *dev, uint64_t a, uint64_t len); /* 1: inside one live block */
/* A copy of the nearest block in *out; 0 when there is none. */
int sim_heap_nearest(sim_device *dev, uint64_t a, sim_alloc *out);
/* Blocks (sim_sched.c). A worker's resident slots; sim_sched_step runs one block to its end or
 * to a wait and returns SIM_STEP_*; sim_sched_leave is called once when the worker stops. */
enum { SIM_STEP_ERR = -1, SIM_STEP_END = 0, SIM_STEP_BLOCK = 1, SIM_STEP_MORE = 2 };
int sim_sched_init(sim_worker *wk);     /* slots[0]; 0 or -1 (out of memory) */
void sim_sched_free(sim_worker *wk);
int sim_sched_step(sim_worker *wk);
void sim_sched_leave(sim_worker *wk);
#define SIM_STAMP_GONE UINT64_MAX       /* run->stamp of a worker that stopped */

/* The order blocks are handed out in (sim_order.c). sim_order_init checks opts->block_order
 * and sets run->order*: 0, or -1 with the message in run->err. sim_order_block gives the block
 * (linear index) handed out i-th, sim_order_rank the inverse: when block b is handed out. */
int sim_order_init(sim_run *run);
long long sim_order_block(const sim_run *run, long long i);
long long sim_order_rank(const sim_run *run, long long b);

/* sim_exec_warp under the debugger (run->dbg set): runs w one instruction at a time through
 * sim_exec_warp itself, stopping before any of them as the debugger decides. Returns 1 with *r
 * what sim_exec_warp returns; 0 when called from its own run, for sim_exec_warp to run the
 * instruction (sim_debugger.c). */
int sim_debug_exec(sim_worker *wk, sim_warp *w, long budget, int *r);
/* The launch's failure under the debugger, as sim_fail saw it: the warp, lane (-1: none in
 * particular) and pc at fault, for the stop the debugger makes before the launch ends. The first
 * one is kept. The debugger owns the record (sim_debug_faults gives the launch a pointer to it);
 * sim_fail notes into it, so the report (sim_report.c) calls nothing of the debugger, which runs
 * the executor that reports. */
typedef struct sim_fault {
  const sim_warp *w;
  int lane, pc;
} sim_fault;
static inline void sim_fault_note(sim_fault *f, const sim_warp *w, int lane, int pc) {
  if (f->w) return; /* the first failure is the launch's */
  f->w = w;
  f->lane = lane >= 0 && lane < SIM_WARP ? lane : -1;
  f->pc = pc;
}
sim_fault *sim_debug_faults(sim_debug *d); /* sim_debugger.c */
/* The launch can never finish and w is one of the warps that spin: the stop at the failure,
 * with w's block the worker's current one (sim_sched.c's deadlock). */
void sim_debug_hang(sim_debug *d, sim_worker *wk, const sim_warp *w);

/* A breakpoint's compiled condition (sim_dbgcond.c, sim.h's sim_debug_cond). new checks and
 * copies the program: NULL with err. eval: the lanes of m of warp w (the worker's current block)
 * at pc for which it holds, into *hold; -1 when it cannot say for some lane of m (a variable not
 * where the program expects it at pc, a division by zero), for the cond hook to decide. */
typedef struct sim_dbgcond sim_dbgcond;
typedef struct sim_dbgflow sim_dbgflow;
sim_dbgcond *sim_dbgcond_new(const sim_debug_cop *ops, int n, char *err, size_t errlen);
void sim_dbgcond_free(sim_dbgcond *c);
int sim_dbgcond_eval(sim_dbgcond *c, sim_dbgflow *flow, const sim_dbginfo *di,
                     const sim_worker *wk, const sim_warp *w, int pc, uint32_t m, uint32_t *hold);
/* Where a variable lives at a pc by the control flow, not the linear order of NVRTC's location
 * lists (sim_dbgflow.c). new: NULL for a module without debug information or out of memory,
 * which place answers -1 for. place: an index into m->debug->locs, or -1 when the flow does not
 * know (the list itself then says). The places are worked out once per variable and kept. */
sim_dbgflow *sim_dbgflow_new(const sim_module *m);
void sim_dbgflow_free(sim_dbgflow *f);
int sim_dbgflow_place(sim_dbgflow *f, const sim_dvar *v, int pc);
/* A variable by name, for the debugger and the compiled conditions (sim_dbgflow.c): lookup, the
 * innermost called name whose scope holds pc; where, its place at pc (by the flow where that
 * says, else by the location list), NULL when it has none there; var, both (di may be NULL). */
const sim_dvar *sim_dbgflow_lookup(const sim_dbginfo *di, int pc, const char *name);
const sim_dloc *sim_dbgflow_where(sim_dbgflow *f, const sim_dbginfo *di, const sim_dvar *v,
                                  int pc);
const sim_dloc *sim_dbgflow_var(sim_dbgflow *f, const sim_dbginfo *di, int pc, const char *name,
                                const sim_dvar **v);

/* A thread's calls for the debugger (sim_dbgframes.c). chain_of: the frames of lane `lane` of w,
 * which is at pc, innermost first: pc, then each caller's call instruction; n counts them all,
 * the first SIM_DBG_FRAMES are kept, each with its function and, for an activation of a stacked
 * function, the record its call saved. regs_of: where frame i's registers are: act, a record
 * holding its function's rows (an outer activation of a recursive function), or NULL for the
 * warp's own; frame, its SIM_SR_FRAME. Valid while the warp does not run. */
#define SIM_DBG_FRAMES 66
typedef struct sim_dbg_chain {
  int n;
  int pc[SIM_DBG_FRAMES], func[SIM_DBG_FRAMES];
  sim_act act[SIM_DBG_FRAMES];
} sim_dbg_chain;
typedef struct sim_dbg_regs {
  const sim_act *act;
  uint64_t frame;
} sim_dbg_regs;
int sim_dbg_func_at(const sim_module *m, int pc); /* the function pc lies in, or -1 */
void sim_dbg_chain_of(const sim_module *m, const sim_warp *w, int lane, int pc,
                      sim_dbg_chain *c);
void sim_dbg_regs_of(const sim_module *m, const sim_warp *w, const sim_dbg_chain *c, int i,
                     sim_dbg_regs *out);

/* Executes warp w until it exits, waits at a barrier, errs, or spends budget instructions.
 * Returns SIM_W_*; SIM_W_RUN means the budget ran out. _plain: without the NaN check; _interp:
 * the interpreter alone, without following what a shuffle read from a lane not running it
 * either (sim_stale.c), which returns early, SIM_W_RUN, after such a shuffle. */
int sim_exec_warp(sim_worker *wk, sim_warp *w, long budget);
int sim_exec_warp_plain(sim_worker *wk, sim_warp *w, long budget);
int sim_exec_warp_interp(sim_worker *wk, sim_warp *w, long budget);
/* The instruction w runs next, its lanes (*em) and those its guard may leave out (*active), as
 * the interpreter finds them: frames it would pop are passed over. NULL when the warp is done,
 * or when a stacked call's frame would be unwound first, which changes registers: a checker
 * that steps the warp one instruction at a time (sim_nan.c, sim_stale.c) cannot follow that
 * step. */
const sim_inst *sim_exec_next(const sim_worker *wk, const sim_warp *w, uint32_t *em,
                              uint32_t *active);

/* Memory instructions (sim_mem.c). em = lanes that execute. Return 0 or -1 (error reported). */
int sim_mem_ld(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_mem_st(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_mem_atom(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
/* For instructions other than ld/st (wmma, ldmatrix, cp.async): checks an access of `bytes`
 * bytes (aligned to align, a power of two) at ad[l] for each lane of em in space (generic
 * resolved per lane), counts it like one ld/st request at pc (pc < 0: the caller counts), and
 * sets ptr[l] to the host bytes. Nothing is read or written: the caller checks every part of an
 * instruction first, then moves the data. 0, or -1 (reported). */
int sim_mem_lanes(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, int space,
                  const uint64_t *ad, uint32_t em, int bytes, int align, int is_store,
                  unsigned char **ptr);
/* The warp-synchronous instructions with a membermask (sim_warpsync.c): SIM_OP_SHFL, _VOTE,
 * _MATCH, _REDUX and _BARWARP, each lane in the group its own mask names. 0, or -1 (reported). */
int sim_warpsync_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em);
/* SIM_OP_TEX (sim_tex.c): each lane of em fetches from the texture its handle names. 0, or -1
 * (reported: a handle that is no live texture, a geometry the texture does not have). */
int sim_tex_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
/* SIM_OP_TENSOR (sim_tensor.c): em must be the whole warp for the .sync.aligned instructions. */
int sim_tensor_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
/* Checks lanes em's access of `bytes` at .param addresses ad[] (offsets in the kernel's
 * parameter buffer; is_store: 0 load, 1 store, 2 atomic): a load must lie inside a parameter
 * whose address the kernel takes, aligned; nothing may write (sim_param_addr.c). 0, or -1
 * (reported). */
int sim_param_check(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                    uint32_t em, int bytes, int is_store);
/* Lane l's local access of `bytes` at a, which lies past the ordinary local bytes
 * (run->local_plain), when the module has a region of parameter copies: 1 when it lies inside
 * a copy, -1 (reported, naming the parameter) when not; 0 when no copy is placed there, for the
 * caller to report (sim_param_addr.c). */
int sim_lcopy_check(sim_worker *wk, sim_warp *w, const sim_inst *in, int l, uint64_t a,
                    int bytes, int is_store);
/* Reads len bytes at a generic address for printf (bounds-checked); -1 if not readable. */
int sim_mem_read_generic(sim_worker *wk, sim_warp *w, int lane, uint64_t addr, void *out,
                         size_t len);

/* Shared-memory race detection (sim_race.c), for a checked shared access when wk->shadow is
 * set: kind 0 load, 1 store, 2 atomic. Returns 0, or -1 with the race reported. _warp: a
 * whole-warp access at A[l] + off whose pattern the memo mo holds (fast_access). */
int sim_race_check(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                   uint32_t em, int bytes, int kind);
int sim_race_check_warp(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *A,
                        uint64_t off, int kind, sim_memo *mo);
#define SIM_RACE_CHUNK 7 /* log2 of the shared bytes a bit of the race log's maps stands for */

/* The common case of sim_race_check_warp, inline in fast_access: a whole warp's load in a
 * barrier interval that has written nothing, whose pattern the log already holds, logged by a
 * few stores (sim_race.c says why that suffices). Returns 1 when it did; 0, having done nothing,
 * for sim_race_check_warp to take over. */
static inline int sim_race_log_load(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc,
                                    const uint64_t *A, uint64_t off, const sim_memo *mo) {
  if (wk->lz_epoch != wk->epoch || wk->lz_off || wk->lz_wrote || wk->nrlog == wk->caprlog ||
      mo->snap_gen != mo->gen || mo->snap_serial != wk->lz_serial)
    return 0;
  if (wk->run->race_warn) w->wsync++; /* as sim_race_check does */
  uint64_t a0 = A[0] + off, lo = a0 + (uint64_t)mo->dmin, hi = a0 + (uint64_t)mo->dmax + in->size;
  sim_rlog *e = &wk->rlog[wk->nrlog++];
  e->lo = (uint32_t)lo;
  e->hi = (uint32_t)hi;
  e->pc = pc;
  e->warp = w->index;
  e->em = SIM_FULL;
  e->wsync = w->wsync;
  e->synced = w->synced;
  e->conv = w->conv;
  e->base = (uint32_t)a0;
  e->pat = mo->snap;
  e->bytes = in->size;
  e->store = 0;
  if (lo < wk->llo) wk->llo = lo;
  if (hi > wk->lhi) wk->lhi = hi;
  if (wk->lz_logmap) /* the log's chunks, when they are kept */
    for (uint64_t c = lo >> SIM_RACE_CHUNK; c <= (hi - 1) >> SIM_RACE_CHUNK; c++)
      wk->lzmap[c >> 6] |= 1ull << (c & 63);
  return 1;
}

/* Before the worker shows another of its blocks (sim_sched.c): the running block's put-off
 * checks are made, and sim_race_shown, after, checks the shown block's accesses at once until
 * its next barrier (the bytes written in its interval so far are not known). */
void sim_race_hide(sim_worker *wk);
void sim_race_shown(sim_worker *wk);
/* Makes the running block's put-off checks now, before a warp's release/acquire clock moves
 * (sim_hb.c): a put-off check records the clock its warp has when it is made. */
void sim_race_flush(sim_worker *wk);

/* Whether counter value x came before y, the counters being free to wrap. */
static inline int sim_before(uint32_t x, uint32_t y) { return (int32_t)(x - y) < 0; }

/* Under SIM_RACE_WARN: whether an access of w made when its wsync stood at `sync` is ordered
 * before all it does now by a __syncwarp() or by a branch the whole warp ran since (the
 * lockstep that legacy warp-synchronous code assumes, sim_race.c). */
static inline int sim_warp_ordered(const sim_warp *w, uint32_t sync) {
  return sim_before(sync, w->synced) || !sim_before(w->conv, sync);
}

/* The race check's release/acquire model (sim_hb.c), for a launch with run->hb set: a block's
 * state made and freed with its slot and reset at each block start; the hooks of
 * bar.warp.sync, of fences and of strong accesses (after the access is made: ad holds the lanes'
 * addresses as the instruction names them); and what sim_race.c asks: a warp's clock now, and
 * whether lane `lane` of w has learned, through releases it acquired, of thread `other`'s access
 * made at clock clk (other being of another warp). */
sim_hb *sim_hb_new(int nwarps);
void sim_hb_free(sim_hb *hb);
void sim_hb_block(sim_hb *hb);
void sim_hb_syncwarp(sim_worker *wk, sim_warp *w);
void sim_hb_fence(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em);
void sim_hb_access(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                   uint32_t em);
uint32_t sim_hb_clock(const sim_hb *hb, int warp);
int sim_hb_knows(const sim_worker *wk, const sim_warp *w, int lane, int other, uint32_t clk);
/* "element 3 of __shared__ tile (byte offset 12)" for shared offset a, reading it as elements
 * of elem bytes where the declaration allows (sim_race.c). */
void sim_shared_name(const sim_run *run, uint64_t a, int elem, char *buf, size_t len);
/* "x[5] (f32[10], parameter 0, 'x')", "element 5 of f32[10]" or "__device__ g": element of the
 * allocation run->tab[i] holding global address a (sim_mem.c). */
void sim_global_name(const sim_run *run, int i, uint64_t a, char *buf, size_t len);

/* Sets each shared load's and store's window in the worker's memos (sim_mem.c). */
void sim_mem_memo_init(sim_worker *wk);

/* The memory instructions without the debugging hooks (sim_mem.c), which the hooks call, and
 * one lane's atomic operation on the value `old`. */
int sim_mem_ld_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_mem_st_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_mem_atom_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
uint64_t sim_atom_apply(int sub, int ty, uint64_t old, uint64_t b, uint64_t c);

/* ---- Debugging hooks (sim_sanitize.c, sim_watch.c): only reached behind run->hook_* ---- */

/* The launch's checks set up from opts and the device (run->san, hook_*, unset, watch); -1 out
 * of memory, with the message in run->err. sim_san_end frees what begin made. */
int sim_san_begin(sim_run *run);
void sim_san_end(sim_run *run);
/* ld, st and atom with the hooks around them; each returns what the plain one does, or -1 with
 * a finding reported. sim_hook_lanes: an access of another instruction (sim_mem_lanes), made by
 * its caller once every part is checked. */
int sim_hook_ld(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_hook_st(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_hook_atom(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_hook_lanes(sim_worker *wk, sim_warp *w, const sim_inst *in, int space,
                   const uint64_t *ad, uint32_t em, int bytes, int is_store);
/* "thread (3,0,0) of block (1,0,0), kernel.cu:7" for lane `lane` of w running in. */
void sim_san_who(const sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in,
                 char *buf, size_t len);
/* The NaN check (sim_nan.c). sim_nan_warp is sim_exec_warp under it: the warp one instruction
 * at a time (sim_exec_warp_plain with a budget of 1), the tags of the NaNs and infinities in its
 * registers followed, a store of one the kernel made reported; returns as sim_exec_warp does,
 * SIM_W_ERR with the finding reported. A warp's tags (w->nan) are made with its registers
 * (sim_nan_alloc: NULL out of memory), cleared when a block starts, freed with sim_nan_free. */
int sim_nan_warp(sim_worker *wk, sim_warp *w, long budget);
sim_nantags *sim_nan_alloc(const sim_module *m);
void sim_nan_clear(sim_nantags *s);
void sim_nan_free(sim_nantags *s);
/* What a shuffle read from a lane not running it (sim_stale.c), under race_check: undefined on
 * a GPU, reported only where a lane uses it. sim_stale_shfl, from shfl.sync once it has written
 * its lanes em (src[l]: the lane lane l read; A: its source row as it was before): the tags of
 * the values it moved and of those it read from lanes not running it, which it returns
 * SIM_EX_STALE for, so that the interpreter stops after it, else 0. sim_stale_warp is
 * sim_exec_warp_plain for a warp holding tags: one instruction at a time while it holds some,
 * reporting a use. A warp's tags are made when first needed, cleared when a block starts and
 * freed with its registers. */
#define SIM_EX_STALE (-2)
int sim_stale_shfl(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em,
                   const uint8_t *src, const uint64_t *A);
int sim_stale_warp(sim_worker *wk, sim_warp *w, long budget);
void sim_stale_clear(sim_staletags *s);
void sim_stale_free(sim_staletags *s);
/* The init check's shared-memory bits: cleared when a block starts (sim_sched.c). */
void sim_init_block(sim_worker *wk);
/* SIM_SAN_SYNC. A warp part of whose live lanes (em) reached the barrier at pc: parks it there so
 * that the block's other warps can show where they go, and returns SIM_W_BAR. sim_sync_check,
 * when no warp of the block can run and some wait at a barrier: 0 when every thread of the block
 * is there, else -1 with a synccheck-style report of who did not come. */
int sim_sync_partial(sim_worker *wk, sim_warp *w, sim_frame *t, int pc, uint32_t em);
int sim_sync_check(sim_worker *wk);
/* Barriers (sim_barrier.c). sim_bar_arrive: the whole live warp w reached the bar.sync / bar.red
 * / bar.arrive at pc (its frame t): 0 when it goes on (an arrival, or the one that completed a
 * barrier with a thread count, whose waiting warps it releases), SIM_W_BAR when it waits (t->pc
 * past the barrier), SIM_W_ERR after sim_fail. sim_bar_stuck, when no warp of the block can run
 * and one waits at a barrier with a thread count: fails the launch naming what it awaits and
 * where the other warps are; returns -1. */
int sim_bar_arrive(sim_worker *wk, sim_warp *w, sim_frame *t, const sim_inst *in, int pc,
                   uint32_t em);
int sim_bar_stuck(sim_worker *wk, const sim_warp *w);
/* mbarrier (sim_mbarrier.c). sim_mbar_exec: init, inval, arrive, arrive_drop, pending_count and
 * cp.async.mbarrier.arrive for the lanes em; 0, or -1 after sim_fail. sim_mbar_wait: test_wait
 * and try_wait at pc (frame t): 0 with the predicate set, SIM_W_BAR when try_wait makes the warp
 * wait for a phase (it runs the wait again once released), SIM_W_ERR. sim_mbar_stuck: w waits on
 * an mbarrier and no warp of the block can run: fails the launch naming what it awaits; -1. */
int sim_mbar_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em);
int sim_mbar_wait(sim_worker *wk, sim_warp *w, sim_frame *t, const sim_inst *in, int pc,
                  uint32_t em);
int sim_mbar_stuck(sim_worker *wk, const sim_warp *w);
/* w waits at barrier id, the instruction at pc (named: one with a thread count); SIM_W_BAR. */
static inline int sim_bar_wait(sim_warp *w, sim_frame *t, int pc, int id, int named) {
  t->pc = pc + 1;
  w->state = SIM_W_BAR;
  w->bar_pc = pc;
  w->bar_id = id;
  w->bar_named = named;
  return SIM_W_BAR;
}
/* Watches (sim_watch.c). sim_watch_begin gives the launch the live watches (run->watch);
 * sim_watch_end frees that. sim_watch_before, for a store or atomic of `bytes` per lane at ad[]
 * (raw addresses, generic ones included): how many watched elements it writes; when any, it has
 * taken the watches' lock and read what they hold into hit, and sim_watch_after, which releases
 * the lock, records each lane's write once the plain instruction has run (rc its result). b and
 * c: an atomic's operand rows as they were before it ran (its result may overwrite them). */
#define SIM_WATCH_HITS 32 /* watched elements one instruction's writes are recorded for */
typedef struct sim_watch_hit {
  int n;                           /* watches it writes, at most SIM_WATCH_HITS */
  int idx[SIM_WATCH_HITS];         /* into run->watch */
  uint64_t before[SIM_WATCH_HITS]; /* their bytes before the instruction */
} sim_watch_hit;
int sim_watch_begin(sim_run *run);
void sim_watch_end(sim_run *run);
int sim_watch_before(sim_worker *wk, const sim_inst *in, const uint64_t *ad, uint32_t em,
                     int bytes, sim_watch_hit *hit);
void sim_watch_after(sim_worker *wk, const sim_warp *w, const sim_inst *in, const uint64_t *ad,
                     uint32_t em, const uint64_t *b, const uint64_t *c, const sim_watch_hit *hit,
                     int rc);
/* A warning that does not stop the launch (a race under SIM_RACE_WARN): the first one is kept,
 * worded as sim_fail words an error, the others counted (sim_report.c). sim_warn_finish writes
 * it to opts->warning at the launch's end. sim_warn_at takes the words made, and whether the
 * warning yields to any other of the launch (yields: 1; 0 is sim_warn's case). */
void sim_warn(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, const char *fmt,
              ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
void sim_warn_at(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, int yields,
                 const char *what);
void sim_warn_finish(sim_run *run);

/* vprintf (sim_printf.c). */
int sim_printf_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em);

/* Errors: the launch's error is the first of its earliest block in hand-out order (the first one
 * a launch on one host thread would meet), whatever the host threads' timing, so a learner sees
 * the same thread and line on every run and every computer. On one worker the first error
 * stops the launch at once. With several, the error ends its own block; blocks handed out
 * after it stop, and those before it run on, since one of them may fail too (sim_sched.c), for
 * SIM_FAULT_GRACE_NS at most: a block that would never end (one waiting, in a loop that writes,
 * for what the failed block was to do) must not keep the error from the learner. Always
 * returns -1. */
#define SIM_FAULT_GRACE_NS 1000000000LL
/* CLOCK_MONOTONIC in nanoseconds, for SIM_FAULT_GRACE_NS. */
static inline long long sim_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
int sim_fail(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* "block (1,0,0), thread (5,0,0)" for a lane, and "file.cu:12" for an instruction. */
void sim_where(const sim_worker *wk, const sim_warp *w, int lane, char *buf, size_t len);
void sim_srcline(const sim_module *m, const sim_inst *in, char *buf, size_t len);

#endif
