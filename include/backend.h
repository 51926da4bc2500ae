/* backend.h: the one interface between the Lua bindings and whatever runs kernels.
 * Implemented by repl/backend_cuda.c (cudart), repl/backend_sim.c (the PTX simulator) and
 * repl/backend_none.c (no GPU: compile and check only). The bindings never call CUDA directly.
 *
 * Every operation returns 0 on success or -1 with `err` filled in. Pointers returned as device
 * memory are opaque to the bindings: they are passed back to the backend, never dereferenced. */
#ifndef CUDALAB_BACKEND_H
#define CUDALAB_BACKEND_H

#include <signal.h>
#include <stddef.h>
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

/* Zero-filled host memory aligned to 256 bytes, as cudaMalloc aligns device memory: what the
 * backends without a GPU hand out as device memory, and what host buffers use. free() frees it.
 * NULL (with err set, err->oom) when the host is out of memory. */
void *host_alloc_zeroed(size_t bytes, cl_err *err);

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
  /* Optional (may be NULL): the kernel's and its parameters' names as the source spells them,
   * for fault messages. The backend copies them. */
  void (*source_names)(cl_function *fn, const char *kernel, const char *const *params, int n);
  /* Optional (may be NULL): the registers per thread ptxas reported for the kernel, for a
   * backend that models the device's occupancy rather than asking a driver. */
  void (*set_registers)(cl_function *fn, int registers);
  /* Optional (may be NULL): active blocks per SM for this block size, as the runtime computes
   * it (cudaOccupancyMaxActiveBlocksPerMultiprocessor). */
  int (*occupancy)(cl_function *fn, int block_threads, size_t dyn_shared, int *blocks, cl_err *err);
  /* Asynchronous where the device is. args[i] points at parameter i's value. */
  int (*launch)(cl_function *fn, cl_dim3 grid, cl_dim3 block, size_t shared, void **args,
                cl_err *err);
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
/* The GPU's name as the driver lists it in /proc, without creating a context; "" if unknown. */
void backend_gpu_name(char *out, size_t len);

/* Chooses at start-up, without waiting for a CUDA context: cuda when a GPU driver is present,
 * else the simulator (or none). The cuda backend starts its context in a background thread. */
const cl_backend *backend_choose(const char *forced, char *why, size_t whylen);

#endif
