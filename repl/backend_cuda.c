/* backend_cuda.c: the backend that runs on a real GPU through cudart (never linked to libcuda:
 * cudart loads the driver at run time, so this file costs nothing on a machine without one).
 *
 * Launches are the exception to "through cudart": they call the driver's cuLaunchKernel, whose
 * address cudart hands out, with a CUfunction looked up once per kernel. That skips the
 * runtime's per-launch work of finding the kernel's function in the current context, about
 * 0.2 us of a 4.5 us launch on an H200 machine: more than everything the Lua side of a launch
 * costs. Where the driver does not offer it, launches fall back to cudaLaunchKernel.
 *
 * The CUDA context takes about 0.4 s to create, so it is made in a background thread started at
 * start-up (backend_cuda_start); every operation first waits for that thread, which by the time
 * a learner has typed a line has usually finished. Modules are CUBINs for the device's own
 * architecture, loaded with cudaLibraryLoadData (0.1 ms, against 160 ms to JIT PTX). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>         /* driver types only: the functions come from cudart */
#include <cudaTypedefs.h> /* their pointer types */
#include <cuda_runtime.h>

#include "backend.h"
#include "backend_cuda.h"
#include "blas.h"
#include "h200.h"

static struct {
  pthread_once_t once;    /* starts the init thread exactly once */
  pthread_t thread;       /* creates the context */
  pthread_mutex_t lock;   /* guards joined */
  int joined;             /* the init thread has been waited for */
  cudaError_t init_error; /* what context creation returned */
  char arch[16];          /* "sm_90", from the device's compute capability */
} cu = {PTHREAD_ONCE_INIT, 0, PTHREAD_MUTEX_INITIALIZER, 0, cudaSuccess, CL_H200_ARCH};

/* Driver functions, from cudaGetDriverEntryPointByVersion; NULL where the driver lacks one. */
static struct {
  PFN_cuLaunchKernel_v4000 launch;
  PFN_cuKernelGetFunction_v12000 get_function;
  PFN_cuFuncSetAttribute_v9000 set_attribute;
} drv;

struct cl_function {
  cudaKernel_t kernel;
  CUfunction fn;             /* the kernel in the current context, for cuLaunchKernel; or NULL */
  size_t dyn_shared_allowed; /* largest dynamic shared size already opted in to */
  struct cl_function *next;  /* module's list, freed on unload */
};
struct cl_module {
  cudaLibrary_t lib;
  struct cl_function *functions; /* looked up so far; freed with the module */
};
struct cl_event { cudaEvent_t ev; };
struct cl_stream { cudaStream_t s; };      /* blocking: synchronises with the legacy stream */
struct cl_span { cudaEvent_t start, end; }; /* recorded around one operation on its stream */

/* Errors after which the context is unusable for the rest of the process. */
static int is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress: case cudaErrorLaunchFailure: case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction: case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace: case cudaErrorInvalidPc: case cudaErrorAssert:
    case cudaErrorLaunchTimeout: case cudaErrorECCUncorrectable: case cudaErrorDevicesUnavailable:
    case cudaErrorUnknown:
      return 1;
    default:
      return 0;
  }
}

/* One sentence on what to do, for the errors a learner meets. */
static const char *advice(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return "Free arrays you no longer need (a = nil; collectgarbage()) or use smaller ones; "
             "cuda.meminfo() shows what is free.";
    case cudaErrorIllegalAddress:
      return "A kernel read or wrote outside its arrays; check the index and its bounds test. "
             "To find the thread, array and source line, run the launch on the simulator "
             "(cudalab --sim).";
    case cudaErrorMisalignedAddress:
      return "A kernel accessed memory at an address not aligned to the access size.";
    case cudaErrorLaunchOutOfResources:
      return "The kernel needs more registers than the block size allows: use fewer threads per "
             "block or __launch_bounds__.";
    case cudaErrorInvalidConfiguration:
      return "Check the grid and block sizes against cuda.device()'s limits.";
    case cudaErrorNoDevice: case cudaErrorInsufficientDriver:
      return "No usable GPU: run on the simulator instead (cudalab --sim).";
    case cudaErrorAssert:
      return "A device-side assert() failed in the kernel.";
    default:
      return is_sticky(e) ? "The GPU context is lost; the engine restarts." : "";
  }
}

/* The runtime's error codes equal the driver's for every error a launch can return, so one
 * table of names and advice serves both; these pin the ones the advice above relies on. */
_Static_assert((int)CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES == (int)cudaErrorLaunchOutOfResources,
               "codes");
_Static_assert((int)CUDA_ERROR_ILLEGAL_ADDRESS == (int)cudaErrorIllegalAddress, "codes");
_Static_assert((int)CUDA_ERROR_LAUNCH_FAILED == (int)cudaErrorLaunchFailure, "codes");
_Static_assert((int)CUDA_ERROR_INVALID_VALUE == (int)cudaErrorInvalidValue, "codes");
_Static_assert((int)CUDA_ERROR_OUT_OF_MEMORY == (int)cudaErrorMemoryAllocation, "codes");
_Static_assert((int)CUDA_SUCCESS == (int)cudaSuccess, "codes");

/* Turns a failed call into err, naming the call. */
static int fail(cudaError_t e, const char *call, cl_err *err) {
  cl_err_set(err, cudaGetErrorName(e), "%s: %s (in %s). %s", cudaGetErrorName(e),
             cudaGetErrorString(e), call, advice(e));
  err->sticky = is_sticky(e);
  err->oom = e == cudaErrorMemoryAllocation;
  cudaGetLastError(); /* clear the non-sticky error so the next call starts clean */
  return -1;
}

/* The one check macro of this file, for runtime and driver calls alike (their codes agree, as
 * pinned above): a failure returns -1 from the caller with err naming the call. */
#define CK(call)                                                          \
  do {                                                                    \
    int e_ = (int)(call);                                                 \
    if (e_ != (int)cudaSuccess) return fail((cudaError_t)e_, #call, err); \
  } while (0)

/* One driver function by name, as the CUDA 12.0 ABI defines it; NULL where it is missing. */
static void *driver_entry(const char *name) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult found;
  cudaError_t rc = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found);
  if (rc != cudaSuccess || found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return fn;
}

/* Fetches the driver functions launches use; any missing one leaves launches on cudart. */
static void resolve_driver(void) {
  void *launch = driver_entry("cuLaunchKernel");
  void *get_function = driver_entry("cuKernelGetFunction");
  void *set_attribute = driver_entry("cuFuncSetAttribute");
  if (!launch || !get_function || !set_attribute) return;
  /* ISO C has no conversion from void * to a function pointer; POSIX (dlsym) and the driver's
   * entry points rely on the two having one representation, so the pointers' bytes are copied. */
  memcpy(&drv.launch, &launch, sizeof drv.launch);
  memcpy(&drv.get_function, &get_function, sizeof drv.get_function);
  memcpy(&drv.set_attribute, &set_attribute, sizeof drv.set_attribute);
}

static void *init_thread(void *arg) {
  (void)arg;
  cudaError_t e = cudaSetDevice(0);
  if (e == cudaSuccess) e = cudaFree(0); /* forces the primary context into existence */
  int major = 0, minor = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (e == cudaSuccess) snprintf(cu.arch, sizeof cu.arch, "sm_%d%d", major, minor);
  if (e == cudaSuccess) resolve_driver();
  cu.init_error = e;
  return NULL;
}

static void start_once(void) {
  if (pthread_create(&cu.thread, NULL, init_thread, NULL) != 0) {
    init_thread(NULL);
    cu.joined = 1;
  }
}

void backend_cuda_start(void) { pthread_once(&cu.once, start_once); }

/* Waits for the context; every operation begins here. */
static int ready(cl_err *err) {
  backend_cuda_start();
  pthread_mutex_lock(&cu.lock);
  if (!cu.joined) {
    pthread_join(cu.thread, NULL);
    cu.joined = 1;
  }
  pthread_mutex_unlock(&cu.lock);
  if (cu.init_error != cudaSuccess) return fail(cu.init_error, "creating the CUDA context", err);
  return 0;
}

int backend_cuda_usable(cl_err *err) { return ready(err); }

static int attr(int *v, enum cudaDeviceAttr a) {
  return cudaDeviceGetAttribute(v, a, 0) == cudaSuccess ? 0 : -1;
}

static int cuda_device(cl_device *d, cl_err *err) {
  if (ready(err)) return -1;
  struct cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  memset(d, 0, sizeof *d);
  snprintf(d->name, sizeof d->name, "%.127s", p.name);
  strcpy(d->backend, "cuda");
  int l2 = 0, smem = 0, smem_optin = 0, smem_sm = 0;
  attr(&d->cc_major, cudaDevAttrComputeCapabilityMajor);
  attr(&d->cc_minor, cudaDevAttrComputeCapabilityMinor);
  attr(&d->sm_count, cudaDevAttrMultiProcessorCount);
  attr(&d->clock_khz, cudaDevAttrClockRate);
  attr(&d->memory_clock_khz, cudaDevAttrMemoryClockRate);
  attr(&d->bus_width_bits, cudaDevAttrGlobalMemoryBusWidth);
  attr(&l2, cudaDevAttrL2CacheSize);
  attr(&d->max_threads_per_block, cudaDevAttrMaxThreadsPerBlock);
  attr(&d->max_block_dim[0], cudaDevAttrMaxBlockDimX);
  attr(&d->max_block_dim[1], cudaDevAttrMaxBlockDimY);
  attr(&d->max_block_dim[2], cudaDevAttrMaxBlockDimZ);
  attr(&d->max_grid_dim[0], cudaDevAttrMaxGridDimX);
  attr(&d->max_grid_dim[1], cudaDevAttrMaxGridDimY);
  attr(&d->max_grid_dim[2], cudaDevAttrMaxGridDimZ);
  attr(&d->max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor);
  attr(&d->max_blocks_per_sm, cudaDevAttrMaxBlocksPerMultiprocessor);
  attr(&smem, cudaDevAttrMaxSharedMemoryPerBlock);
  attr(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin);
  attr(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  attr(&d->regs_per_block, cudaDevAttrMaxRegistersPerBlock);
  attr(&d->regs_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor);
  attr(&d->warp_size, cudaDevAttrWarpSize);
  d->l2_bytes = (size_t)l2;
  d->shared_per_block = (size_t)smem;
  d->shared_per_block_optin = (size_t)smem_optin;
  d->shared_per_sm = (size_t)smem_sm;
  d->memory_total = p.totalGlobalMem;
  cudaDriverGetVersion(&d->driver_version);
  cudaRuntimeGetVersion(&d->runtime_version);
  return 0;
}

static const char *cuda_target_arch(void) {
  cl_err err;
  return ready(&err) == 0 ? cu.arch : CL_H200_ARCH; /* no GPU: the modelled device's */
}

static int cuda_alloc(void **p, size_t bytes, const char *label, cl_err *err) {
  (void)label;
  if (ready(err)) return -1;
  CK(cudaMalloc(p, bytes ? bytes : 1));
  return 0;
}

static void cuda_release(void *p) {
  if (p) cudaFree(p);
}

static int cuda_host_alloc_pinned(void **p, size_t bytes, cl_err *err) {
  if (ready(err)) return -1;
  CK(cudaMallocHost(p, bytes ? bytes : 1));
  return 0;
}

static void cuda_host_release_pinned(void *p) {
  if (p) cudaFreeHost(p);
}

static int cuda_htod(void *dst, const void *src, size_t n, cl_err *err) {
  CK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
  return 0;
}

static int cuda_dtoh(void *dst, const void *src, size_t n, cl_err *err) {
  CK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
  return 0;
}

static int cuda_dtod(void *dst, const void *src, size_t n, cl_err *err) {
  CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, 0));
  return 0;
}

static int cuda_memset(void *dst, int byte, size_t n, cl_err *err) {
  CK(cudaMemsetAsync(dst, byte, n, 0));
  return 0;
}

static int cuda_meminfo(size_t *free_bytes, size_t *total, cl_err *err) {
  if (ready(err)) return -1;
  CK(cudaMemGetInfo(free_bytes, total));
  return 0;
}

static int cuda_module_load(const cl_image *img, cl_module **out, cl_err *err) {
  if (ready(err)) return -1;
  if (!img->cubin) {
    cl_err_set(err, "no CUBIN", "internal: the cuda backend needs a CUBIN for %s", cu.arch);
    return -1;
  }
  cudaLibrary_t lib;
  CK(cudaLibraryLoadData(&lib, img->cubin, NULL, NULL, 0, NULL, NULL, 0));
  cl_module *m = calloc(1, sizeof *m);
  if (!m) {
    cudaLibraryUnload(lib);
    cl_err_set(err, "out of memory", "out of host memory loading a module");
    return -1;
  }
  m->lib = lib;
  *out = m;
  return 0;
}

static void cuda_module_unload(cl_module *m) {
  if (!m) return;
  while (m->functions) {
    cl_function *f = m->functions;
    m->functions = f->next;
    free(f);
  }
  cudaLibraryUnload(m->lib);
  free(m);
}

/* The function belongs to the module and is freed with it; the bindings keep the module alive
 * as long as any of its kernels is reachable from Lua. */
static int cuda_function(cl_module *m, const char *name, cl_function **out, cl_err *err) {
  cudaKernel_t k;
  CK(cudaLibraryGetKernel(&k, m->lib, name));
  cl_function *f = calloc(1, sizeof *f);
  if (!f) {
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  f->kernel = k;
  /* The function in the primary context, made current on this thread first: libraries and
   * kernels are context-free, so nothing so far may have done it on the engine's Lua thread,
   * which is where launches come from. Without it, launches go through cudaLaunchKernel. */
  if (drv.get_function &&
      (cudaSetDevice(0) != cudaSuccess || drv.get_function(&f->fn, (CUkernel)k) != CUDA_SUCCESS)) {
    cudaGetLastError();
    f->fn = NULL;
  }
  f->next = m->functions;
  m->functions = f;
  *out = f;
  return 0;
}

static int cuda_func_attrs(cl_function *f, cl_func_attrs *out, cl_err *err) {
  struct cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, (const void *)f->kernel));
  out->registers = a.numRegs;
  out->max_threads_per_block = a.maxThreadsPerBlock;
  out->shared_static = a.sharedSizeBytes;
  out->local_bytes = a.localSizeBytes;
  out->const_bytes = a.constSizeBytes;
  return 0;
}

/* Dynamic shared memory over 48 KiB needs an opt-in per function, for occupancy queries as for
 * launches: without it the runtime reports that such a block cannot run at all. The driver's
 * function handle gets the same opt-in, since launches use it. */
static int allow_shared(cl_function *f, size_t shared, cl_err *err) {
  if (shared > 48 * 1024 && shared > f->dyn_shared_allowed) {
    CK(cudaFuncSetAttribute((const void *)f->kernel,
                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
    if (f->fn)
      CK(drv.set_attribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared));
    f->dyn_shared_allowed = shared;
  }
  return 0;
}

static int cuda_occupancy(cl_function *f, int threads, size_t shared, int *blocks, cl_err *err) {
  if (allow_shared(f, shared, err)) return -1;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, (const void *)f->kernel, threads,
                                                   shared));
  return 0;
}

/* One launch: through the driver's cuLaunchKernel where the kernel has its function (see the
 * top of this file), else through cudart. */
static int cuda_launch(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                       cl_err *err) {
  if (allow_shared(f, shared, err)) return -1;
  if (f->fn) {
    CK(drv.launch(f->fn, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shared, NULL, args, NULL));
    return 0;
  }
  dim3 grid = {g.x, g.y, g.z}, block = {b.x, b.y, b.z};
  CK(cudaLaunchKernel((const void *)f->kernel, grid, block, args, shared, 0));
  return 0;
}

/* Nothing but the launch call in a loop, as a C program would write it: cudaLaunchKernel, or
 * the driver's cuLaunchKernel that cuda_launch makes. For benchmarks only (bench_hooks.c). */
int backend_cuda_launch_loop(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                             long times, backend_cuda_api api, cl_err *err) {
  if (allow_shared(f, shared, err)) return -1;
  if (api == BACKEND_CUDA_DRIVER) {
    if (!f->fn) {
      cl_err_set(err, "no cuLaunchKernel", "cuLaunchKernel is not available from this driver: "
                 "launches use cudaLaunchKernel");
      return -1;
    }
    for (long i = 0; i < times; i++)
      CK(drv.launch(f->fn, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shared, NULL, args, NULL));
    return 0;
  }
  dim3 grid = {g.x, g.y, g.z}, block = {b.x, b.y, b.z};
  for (long i = 0; i < times; i++)
    CK(cudaLaunchKernel((const void *)f->kernel, grid, block, args, shared, 0));
  return 0;
}

static int cuda_event_create(cl_event **out, cl_err *err) {
  if (ready(err)) return -1;
  cl_event *e = calloc(1, sizeof *e);
  if (!e) {
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  cudaError_t r = cudaEventCreate(&e->ev);
  if (r != cudaSuccess) {
    free(e);
    return fail(r, "cudaEventCreate", err);
  }
  *out = e;
  return 0;
}

static void cuda_event_destroy(cl_event *e) {
  if (!e) return;
  cudaEventDestroy(e->ev);
  free(e);
}

static int cuda_event_record(cl_event *e, cl_err *err) {
  CK(cudaEventRecord(e->ev, 0));
  return 0;
}

static int cuda_event_elapsed(cl_event *a, cl_event *b, float *ms, cl_err *err) {
  CK(cudaEventSynchronize(b->ev));
  CK(cudaEventElapsedTime(ms, a->ev, b->ev));
  return 0;
}

/* Polls instead of blocking so that Ctrl-C reaches a learner whose kernel never ends: spins for
 * the first 200 µs (a short kernel is waited for without a sleep's latency), then sleeps 50 µs
 * between polls. An interrupted wait leaves a kernel running that nothing can stop short of
 * ending the process, so it is reported as sticky: the console then replaces the engine. */
static int wait_stream(cudaStream_t s, volatile sig_atomic_t *interrupt, cl_err *err) {
  if (ready(err)) return -1;
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return 0;
    if (e != cudaErrorNotReady) return fail(e, "waiting for the GPU", err);
    if (interrupt && *interrupt) {
      cl_err_set(err, "interrupted",
                 "interrupted while waiting for the GPU: the kernel is still running and only "
                 "ending the engine process stops it.");
      err->sticky = 1;
      return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    long us = (now.tv_sec - t0.tv_sec) * 1000000L + (now.tv_nsec - t0.tv_nsec) / 1000;
    if (us > 200) nanosleep(&(struct timespec){0, 50000}, NULL);
  }
}

/* The legacy default stream waits for every blocking stream, so waiting for it waits for all. */
static int cuda_synchronize(volatile sig_atomic_t *interrupt, cl_err *err) {
  return wait_stream(0, interrupt, err);
}

/* ---- streams ---- */

static int cuda_stream_create(cl_stream **out, cl_err *err) {
  if (ready(err)) return -1;
  cl_stream *st = calloc(1, sizeof *st);
  if (!st) {
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  cudaError_t r = cudaStreamCreateWithFlags(&st->s, cudaStreamDefault);
  if (r != cudaSuccess) {
    free(st);
    return fail(r, "cudaStreamCreateWithFlags", err);
  }
  *out = st;
  return 0;
}

/* cudaStreamDestroy returns at once and releases the stream when its work is done. */
static void cuda_stream_destroy(cl_stream *st) {
  if (!st) return;
  cudaStreamDestroy(st->s);
  free(st);
}

static cudaStream_t raw(cl_stream *st) { return st ? st->s : 0; }

static int cuda_stream_sync(cl_stream *st, volatile sig_atomic_t *interrupt, cl_err *err) {
  return wait_stream(raw(st), interrupt, err);
}

static int cuda_stream_wait(cl_stream *st, cl_event *ev, cl_err *err) {
  CK(cudaStreamWaitEvent(raw(st), ev->ev, 0));
  return 0;
}

static int cuda_event_record_on(cl_event *e, cl_stream *st, cl_err *err) {
  CK(cudaEventRecord(e->ev, raw(st)));
  return 0;
}

static int cuda_copy_async(void *dst, const void *src, size_t n, int dir, cl_stream *st,
                           cl_err *err) {
  CK(cudaMemcpyAsync(dst, src, n,
                     dir == CL_COPY_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                     raw(st)));
  return 0;
}

/* As cuda_launch, on a stream; cudaStream_t and CUstream are the same handle. */
static int cuda_launch_on(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                          cl_stream *st, cl_err *err) {
  if (allow_shared(f, shared, err)) return -1;
  if (f->fn) {
    CK(drv.launch(f->fn, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shared, (CUstream)raw(st), args,
                  NULL));
    return 0;
  }
  dim3 grid = {g.x, g.y, g.z}, block = {b.x, b.y, b.z};
  CK(cudaLaunchKernel((const void *)f->kernel, grid, block, args, shared, raw(st)));
  return 0;
}

static void cuda_span_free(cl_span *sp) {
  if (!sp) return;
  if (sp->start) cudaEventDestroy(sp->start);
  if (sp->end) cudaEventDestroy(sp->end);
  free(sp);
}

/* Two events, the first recorded at once: it happens when the stream reaches the operation. */
static int cuda_span_open(cl_span **out, cl_stream *st, cl_err *err) {
  if (ready(err)) return -1;
  cl_span *sp = calloc(1, sizeof *sp);
  if (!sp) {
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  cudaError_t r = cudaEventCreate(&sp->start);
  if (r == cudaSuccess) r = cudaEventCreate(&sp->end);
  if (r == cudaSuccess) r = cudaEventRecord(sp->start, raw(st));
  if (r != cudaSuccess) {
    cuda_span_free(sp);
    return fail(r, "cudaEventRecord", err);
  }
  *out = sp;
  return 0;
}

static int cuda_span_close(cl_span *sp, cl_stream *st, cl_err *err) {
  CK(cudaEventRecord(sp->end, raw(st)));
  return 0;
}

static int cuda_span_read(cl_event *origin, cl_span *sp, double *start, double *end, cl_err *err) {
  float a = 0, b = 0;
  CK(cudaEventSynchronize(sp->end));
  CK(cudaEventElapsedTime(&a, origin->ev, sp->start));
  CK(cudaEventElapsedTime(&b, origin->ev, sp->end));
  *start = a;
  *end = b;
  return 0;
}

/* cuBLAS (blas_cublas.c) uses the context this backend made, so it waits for it. */
static int cuda_gemm(const cl_gemm *g, cl_err *err) {
  if (ready(err)) return -1;
  return blas_cublas_gemm(g, err);
}

const cl_backend cl_backend_cuda = {
    .name = "cuda",
    .device = cuda_device,
    .target_arch = cuda_target_arch,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .host_alloc_pinned = cuda_host_alloc_pinned,
    .host_release_pinned = cuda_host_release_pinned,
    .htod = cuda_htod,
    .dtoh = cuda_dtoh,
    .dtod = cuda_dtod,
    .memset = cuda_memset,
    .meminfo = cuda_meminfo,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .function = cuda_function,
    .func_attrs = cuda_func_attrs,
    .occupancy = cuda_occupancy,
    .launch = cuda_launch,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_elapsed_ms = cuda_event_elapsed,
    .synchronize = cuda_synchronize,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_wait = cuda_stream_wait,
    .event_record_on = cuda_event_record_on,
    .copy_async = cuda_copy_async,
    .launch_on = cuda_launch_on,
    .span_open = cuda_span_open,
    .span_close = cuda_span_close,
    .span_read = cuda_span_read,
    .span_free = cuda_span_free,
    .gemm = cuda_gemm,
    .blas_name = blas_cublas_name,
};
