/* sim_exec.h: run-time state of a launch (sim_run), of one host worker thread (sim_worker)
 * and of one warp (sim_warp); shared by the executor, the memory checker, printf and the
 * launcher. Nothing outside sim/ includes it.
 *
 * Stance: a launch is owned by one sim_run; each host thread owns a sim_worker that runs whole
 * blocks, with its own warps, shared memory, per-instruction counters and allocation cache, so
 * the hot path touches no shared state except global memory (atomics use real host atomics). */
#ifndef CUDALAB_SIM_EXEC_H
#define CUDALAB_SIM_EXEC_H

#include <pthread.h>
#include <stdatomic.h>

#include "sim_int.h"

enum { SIM_W_RUN, SIM_W_BAR, SIM_W_DONE, SIM_W_ERR = -1 };

typedef struct sim_frame {
  int32_t pc, rpc;   /* next instruction; reconvergence point (-1 none) */
  uint32_t mask;     /* lanes of this path */
} sim_frame;

typedef struct sim_retaddr {
  int32_t pc;        /* where RETF returns to */
  int32_t call;      /* index into sim_module.calls */
} sim_retaddr;

typedef struct sim_warp {
  uint64_t *R;             /* nrows x 32 lanes, row-major: R[row*32 + lane] */
  uint32_t *P;             /* predicate masks */
  sim_frame *stack;        /* divergence stack (top = stack[sp-1]) */
  int sp, cap;
  sim_retaddr calls[64];   /* device-function return addresses */
  int ncalls;
  uint32_t live;           /* lanes that exist and have not exited */
  int state;               /* SIM_W_* */
  int bar_pc;              /* pc of the barrier it waits at */
  int index;               /* warp index in the block */
  unsigned char *local;    /* 32 x local_frame bytes, lane-major */
  unsigned char *fparam;   /* 32 x fparam stride bytes */
  uint64_t clock;          /* %clock64: instructions issued so far */
  uint32_t cc;             /* carry flag per lane (add.cc / addc) */
} sim_warp;

/* Per-instruction counters of one worker, folded into sim_stats at the end. */
typedef struct sim_icount {
  uint64_t warp, thread;   /* executions, active lanes summed */
  uint64_t req, sect;      /* global memory requests and 32-byte sectors */
  uint64_t wf, conf;       /* shared wavefronts and bank conflicts */
  uint64_t div;            /* divergent branch executions */
} sim_icount;

/* Shadow of one shared byte for race detection. */
typedef struct sim_shadow {
  uint32_t epoch;          /* barrier interval it was last touched in */
  int16_t writer, reader;  /* warp, -1 none; reader -2: several warps */
} sim_shadow;

struct sim_run;

#define SIM_HITS 4 /* recently hit allocations remembered per worker */

typedef struct sim_worker {
  _Alignas(128) struct sim_run *run; /* aligned: workers sit in one array, avoid false sharing */
  sim_warp *warps;          /* nwarps of the block */
  unsigned char *shared;    /* block shared memory */
  sim_icount *ic;           /* per instruction */
  sim_shadow *shadow;       /* race_check only */
  uint32_t epoch;
  int hits[SIM_HITS];        /* recently found allocations (indices into run->tab), -1 none */
  unsigned next_hit;        /* which hit to replace next */
  unsigned bx, by, bz;      /* current block index */
  char *out; size_t outlen, outcap; /* printf text of the current warp instruction */
} sim_worker;

typedef struct sim_run {
  sim_device *dev;
  sim_module *m;
  sim_kernel *k;
  const sim_func *f;
  sim_dim3 grid, block;
  size_t dyn_shared, shared_total;
  unsigned char *params;    /* kernel parameter buffer */
  sim_alloc *tab; int ntab; /* allocations and module globals, sorted */
  const sim_launch_opts *opts;
  int nwarps, nthreads;     /* per block */
  size_t fstride;           /* per-lane fparam bytes */
  long long nblocks;
  atomic_llong next_block;
  atomic_int failed;
  pthread_mutex_t lock;     /* error message, printf sink */
  char *err; size_t errlen;
} sim_run;

/* Executes warp w until it exits, waits at a barrier, errs, or spends budget instructions.
 * Returns SIM_W_*; SIM_W_RUN means the budget ran out. */
int sim_exec_warp(sim_worker *wk, sim_warp *w, long budget);

/* Memory instructions (sim_mem.c). em = lanes that execute. Return 0 or -1 (error reported). */
int sim_mem_ld(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_mem_st(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
int sim_mem_atom(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em);
/* Reads len bytes at a generic address for printf (bounds-checked); -1 if not readable. */
int sim_mem_read_generic(sim_worker *wk, sim_warp *w, int lane, uint64_t addr, void *out, size_t len);

/* vprintf (sim_printf.c). */
int sim_printf_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em);

/* Errors: the first failure of a launch wins; later ones are dropped. Always returns -1. */
int sim_fail(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* "block (1,0,0), thread (5,0,0)" for a lane, and "file.cu:12" for an instruction. */
void sim_where(const sim_worker *wk, const sim_warp *w, int lane, char *buf, size_t len);
void sim_srcline(const sim_module *m, const sim_inst *in, char *buf, size_t len);

#endif
