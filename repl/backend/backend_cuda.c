/* backend_cuda.c: the backend that runs on a real GPU through cudart (never linked to libcuda:
 * cudart loads the driver at run time, so this file costs nothing on a machine without one).
 *
 * Launches are the exception to "through cudart": they call the driver's cuLaunchKernel, whose
 * address cudart hands out, with a CUfunction looked up once per kernel. That skips the
 * runtime's per-launch work of finding the kernel's function in the current context, about
 * 0.2 us of a 4.5 us launch on an H200 machine: more than everything the Lua side of a launch
 * costs. Where the driver does not offer it, launches fall back to cudaLaunchKernel.
 *
 * The CUDA context is made at the first operation that needs it (ready()), on the engine's Lua
 * thread: it takes about 0.4 s and some 500 MiB of the GPU's memory, which a session that never
 * touches the GPU should not hold, and thirty learners sharing one GPU certainly should not.
 * Turned down: creating it in a background thread at start-up, which hid the 0.4 s but held the
 * memory from the banner on. Nothing else made at start-up (banner, completion) reaches CUDA.
 * The device it is made on is 0, or the one cuda.gpu_admit chose before (see the end of this
 * file). Modules are CUBINs for the device's own architecture, loaded with cudaLibraryLoadData
 * (0.1 ms, against 160 ms to JIT PTX). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>         /* driver types only: the functions come from cudart */
#include <cudaTypedefs.h> /* their pointer types */
#include <cuda_runtime.h>

#include "backend.h"
#include "backend_cuda.h"
#include "blas.h"
#include "dl_sym.h"
#include "gpu_slots.h"
#include "h200.h"

static struct {
  pthread_once_t once;    /* creates the context exactly once */
  int made;               /* creating it has been tried (init_error says how it went) */
  int device;             /* the device it is (to be) made on: 0, or gpu_admit's choice */
  cudaError_t init_error; /* what context creation returned */
  char arch[16];          /* "sm_90", from the device's compute capability */
  char name[128];         /* "NVIDIA H200", for messages */
  int smem_block;         /* shared memory per block without an opt-in (48 KiB) */
  int smem_optin;         /* and with one (227 KiB on the H200) */
} cu = {PTHREAD_ONCE_INIT, 0, 0, cudaSuccess, CL_H200_ARCH, CL_H200_NAME, 48 << 10, 227 << 10};

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
  size_t static_shared;      /* the kernel's static shared memory, from its attributes */
  char name[64];             /* as the source spells it (else the lowered name), for messages */
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

/* On the calling thread, which is the engine's Lua thread: the device set here is current for
 * that thread, where every operation but the watchdog's runs. */
static void init_context(void) {
  int dev = cu.device;
  cudaError_t e = cudaSetDevice(dev);
  if (e == cudaSuccess) e = cudaFree(0); /* forces the primary context into existence */
  int major = 0, minor = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (e == cudaSuccess) snprintf(cu.arch, sizeof cu.arch, "sm_%d%d", major, minor);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&cu.smem_block, cudaDevAttrMaxSharedMemoryPerBlock, dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&cu.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  struct cudaDeviceProp prop;
  if (e == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    snprintf(cu.name, sizeof cu.name, "%.127s", prop.name);
  if (e == cudaSuccess) resolve_driver();
  if (e != cudaSuccess) cudaGetLastError();
  cu.init_error = e;
  cu.made = 1;
}

/* Makes the context the first time; every operation that needs one begins here. */
static int ready(cl_err *err) {
  pthread_once(&cu.once, init_context);
  if (cu.init_error != cudaSuccess) return fail(cu.init_error, "creating the CUDA context", err);
  return 0;
}

static int attr(int *v, enum cudaDeviceAttr a) {
  return cudaDeviceGetAttribute(v, a, cu.device) == cudaSuccess ? 0 : -1;
}

static int cuda_device(cl_device *d, cl_err *err) {
  if (ready(err)) return -1;
  struct cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, cu.device));
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
  attr(&d->max_texture_1d, cudaDevAttrMaxTexture1DWidth);
  attr(&d->max_texture_2d[0], cudaDevAttrMaxTexture2DWidth);
  attr(&d->max_texture_2d[1], cudaDevAttrMaxTexture2DHeight);
  attr(&d->max_texture_3d[0], cudaDevAttrMaxTexture3DWidth);
  attr(&d->max_texture_3d[1], cudaDevAttrMaxTexture3DHeight);
  attr(&d->max_texture_3d[2], cudaDevAttrMaxTexture3DDepth);
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

/* The graph capture in progress (cuda.graph): on a stream of its own, non-blocking so that
 * nothing on the legacy stream joins it by implicit synchronisation, in thread-local mode so
 * that the kernel time limit's watchdog thread stays free to query its events. */
static struct {
  cudaStream_t s; /* the capturing stream, while on */
  int on;
} cap;

/* Refuses what cannot go into a graph while one is captured, naming it; CUDA itself would
 * return cudaErrorStreamCaptureUnsupported and invalidate the capture. */
static int refuse_in_capture(const char *what, cl_err *err) {
  if (!cap.on) return 0;
  cl_err_set(err, "cannot be captured",
             "%s cannot be captured in cuda.graph: a graph holds kernel launches only; "
             "do it before or after cuda.graph(...)", what);
  return -1;
}

static int cuda_alloc(void **p, size_t bytes, const char *label, cl_err *err) {
  (void)label;
  if (refuse_in_capture("making an array (cudaMalloc)", err)) return -1;
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
  if (refuse_in_capture("a copy to the device", err)) return -1;
  CK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
  return 0;
}

static int cuda_dtoh(void *dst, const void *src, size_t n, cl_err *err) {
  if (refuse_in_capture("a copy from the device (reading an array on the host)", err)) return -1;
  CK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
  return 0;
}

static int cuda_dtod(void *dst, const void *src, size_t n, cl_err *err) {
  if (refuse_in_capture("a copy between arrays", err)) return -1;
  CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, 0));
  return 0;
}

static int cuda_memset(void *dst, int byte, size_t n, cl_err *err) {
  if (refuse_in_capture("a memset (filling an array)", err)) return -1;
  CK(cudaMemsetAsync(dst, byte, n, 0));
  return 0;
}

/* ---- texture objects ----
 *
 * As CUDA's samples make them: a CUDA array of the texels' channel format, filled from the
 * device array by a device-to-device copy (so the texture holds its own copy), and a texture
 * object over it. The arrays are kept by handle, to be freed with their texture. */
static struct {
  struct tex_held {
    cudaTextureObject_t obj;
    cudaArray_t array;
  } *t;
  int n, cap;
} texs;

static const struct {
  int bits;
  enum cudaChannelFormatKind kind;
} tex_formats[] = { /* by CL_TEXF_* */
    [CL_TEXF_F32] = {32, cudaChannelFormatKindFloat},
    [CL_TEXF_S32] = {32, cudaChannelFormatKindSigned},
    [CL_TEXF_U32] = {32, cudaChannelFormatKindUnsigned},
    [CL_TEXF_S16] = {16, cudaChannelFormatKindSigned},
    [CL_TEXF_U16] = {16, cudaChannelFormatKindUnsigned},
    [CL_TEXF_S8] = {8, cudaChannelFormatKindSigned},
    [CL_TEXF_U8] = {8, cudaChannelFormatKindUnsigned}};

static const enum cudaTextureAddressMode tex_modes[] = {
    [CL_TEXA_CLAMP] = cudaAddressModeClamp, [CL_TEXA_WRAP] = cudaAddressModeWrap,
    [CL_TEXA_MIRROR] = cudaAddressModeMirror, [CL_TEXA_BORDER] = cudaAddressModeBorder};

/* The CUDA array for d, filled from src: cudaMallocArray and cudaMemcpy2DToArray for 1-D and
 * 2-D (a 1-D array has height 0 and is copied as one row), cudaMalloc3DArray and cudaMemcpy3D
 * for 3-D. On failure *out is NULL and nothing is held. */
static int tex_array(const void *src, const cl_texture_desc *d, cudaArray_t *out, cl_err *err) {
  int b = tex_formats[d->format].bits, ch = d->channels;
  struct cudaChannelFormatDesc cf = cudaCreateChannelDesc(b, ch > 1 ? b : 0, ch > 2 ? b : 0,
                                                   ch > 2 ? b : 0, tex_formats[d->format].kind);
  size_t row = d->width * (size_t)ch * (size_t)(b / 8);
  cudaError_t e;
  const char *call;
  *out = NULL;
  if (d->dims == 3) {
    struct cudaExtent ext = make_cudaExtent(d->width, d->height, d->depth);
    call = "cudaMalloc3DArray";
    e = cudaMalloc3DArray(out, &cf, ext, 0);
    if (e == cudaSuccess) {
      struct cudaMemcpy3DParms p;
      memset(&p, 0, sizeof p);
      p.srcPtr = make_cudaPitchedPtr((void *)src, row, d->width, d->height);
      p.dstArray = *out;
      p.extent = ext;
      p.kind = cudaMemcpyDeviceToDevice;
      call = "cudaMemcpy3D";
      e = cudaMemcpy3D(&p);
    }
  } else {
    size_t h = d->dims == 1 ? 1 : d->height;
    call = "cudaMallocArray";
    e = cudaMallocArray(out, &cf, d->width, d->dims == 1 ? 0 : d->height, 0);
    if (e == cudaSuccess) {
      call = "cudaMemcpy2DToArray";
      e = cudaMemcpy2DToArray(*out, 0, 0, src, row, row, h, cudaMemcpyDeviceToDevice);
    }
  }
  if (e == cudaSuccess) return 0;
  if (*out) cudaFreeArray(*out);
  *out = NULL;
  return fail(e, call, err);
}

static int cuda_texture_create(const void *src, const cl_texture_desc *d, uint64_t *handle,
                               cl_err *err) {
  if (refuse_in_capture("making a texture (cudaCreateTextureObject)", err)) return -1;
  if (ready(err)) return -1;
  if (texs.n == texs.cap) {
    int more = texs.cap ? texs.cap * 2 : 16;
    struct tex_held *g = realloc(texs.t, (size_t)more * sizeof *g);
    if (!g) {
      cl_err_set(err, "out of memory", "out of host memory for the texture table");
      return -1;
    }
    texs.t = g;
    texs.cap = more;
  }
  cudaArray_t arr;
  if (tex_array(src, d, &arr, err)) return -1;
  struct cudaResourceDesc rd;
  memset(&rd, 0, sizeof rd);
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr;
  struct cudaTextureDesc td; /* zeroed: border colour 0, no mipmaps, no anisotropy */
  memset(&td, 0, sizeof td);
  /* A dimension the texture does not have is clamped: a 1-D texture's fetch reads as one at
   * y = 0, and under linear filtering with border in y it blended in the border's zeros (an
   * NVIDIA H100 returned half of every value, where the Programming Guide's formula and the
   * simulator give the value) */
  for (int k = 0; k < 3; k++)
    td.addressMode[k] = k < d->dims ? tex_modes[d->address[k]] : cudaAddressModeClamp;
  td.filterMode = d->linear ? cudaFilterModeLinear : cudaFilterModePoint;
  td.readMode = d->read_normalized ? cudaReadModeNormalizedFloat : cudaReadModeElementType;
  td.normalizedCoords = d->normalized;
  cudaTextureObject_t obj = 0;
  cudaError_t e = cudaCreateTextureObject(&obj, &rd, &td, NULL);
  if (e != cudaSuccess) {
    cudaFreeArray(arr);
    return fail(e, "cudaCreateTextureObject", err);
  }
  texs.t[texs.n].obj = obj;
  texs.t[texs.n++].array = arr;
  *handle = (uint64_t)obj;
  return 0;
}

static void cuda_texture_destroy(uint64_t handle) {
  for (int i = 0; i < texs.n; i++) {
    if ((uint64_t)texs.t[i].obj != handle) continue;
    cudaDestroyTextureObject(texs.t[i].obj);
    cudaFreeArray(texs.t[i].array);
    texs.t[i] = texs.t[--texs.n];
    return;
  }
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
  snprintf(f->name, sizeof f->name, "%s", name);
  /* The function in the primary context, made current on this thread first: libraries and
   * kernels are context-free, so this must not rely on the context being current on the
   * thread launches come from. Without it, launches go through cudaLaunchKernel. */
  if (drv.get_function && (cudaSetDevice(cu.device) != cudaSuccess ||
                           drv.get_function(&f->fn, (CUkernel)k) != CUDA_SUCCESS)) {
    cudaGetLastError();
    f->fn = NULL;
  }
  /* Its static shared memory, which with the dynamic size decides the opt-in (allow_shared) */
  struct cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, (const void *)k) == cudaSuccess)
    f->static_shared = a.sharedSizeBytes;
  else
    cudaGetLastError(); /* unknown: taken as none, and the launch says what is wrong */
  f->next = m->functions;
  m->functions = f;
  *out = f;
  return 0;
}

/* Only the kernel's name is kept: the watchdog's message names it. */
static void cuda_source_names(cl_function *f, const char *kernel, const char *const *params,
                              int n) {
  (void)params;
  (void)n;
  if (kernel && kernel[0]) snprintf(f->name, sizeof f->name, "%s", kernel);
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

/* A block's shared memory over 48 KiB, static and dynamic together, needs an opt-in per
 * function, for occupancy queries as for launches: without it the runtime refuses such a block
 * with a bare cudaErrorInvalidValue. The opt-in names the dynamic size
 * (cudaFuncAttributeMaxDynamicSharedMemorySize), which with the static size must stay within
 * the opt-in limit, 227 KiB on the H200. Looking at the dynamic size alone, as this once did,
 * left 1 KiB static + 48 KiB dynamic refused. The driver's function handle gets the same
 * opt-in, since launches use it. Every launch passes here: the common case is two compares. */
static int allow_shared(cl_function *f, size_t shared, cl_err *err) {
  size_t total = f->static_shared + shared;
  if (shared <= f->dyn_shared_allowed || total <= (size_t)cu.smem_block) return 0;
  if (total > (size_t)cu.smem_optin) { /* the bindings say this first; here for completeness */
    cl_err_set(err, "too much shared memory", "the launch needs %zu bytes of shared memory per "
               "block (%zu static + %zu dynamic); the %s allows at most %d (%d KiB) per block, "
               "static and dynamic together", total, f->static_shared, shared, cu.name,
               cu.smem_optin, cu.smem_optin >> 10);
    return -1;
  }
  CK(cudaFuncSetAttribute((const void *)f->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          (int)shared));
  if (f->fn)
    CK(drv.set_attribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared));
  f->dyn_shared_allowed = shared;
  return 0;
}

static int cuda_occupancy(cl_function *f, int threads, size_t shared, int *blocks, cl_err *err) {
  if (allow_shared(f, shared, err)) return -1;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, (const void *)f->kernel, threads,
                                                   shared));
  return 0;
}

static void watch(const cl_function *f, cudaStream_t s);

/* One launch on stream s (0: the legacy default stream; cudaStream_t and CUstream are the same
 * handle): through the driver's cuLaunchKernel where the kernel has its function (see the top
 * of this file), else through cudart. Then, only under a kernel time limit, the watchdog is
 * told of it. */
static int launch_stream(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                         cudaStream_t s, cl_err *err) {
  if (cap.on && s) return refuse_in_capture("a launch on a cuda.Stream", err);
  if (cap.on) s = cap.s; /* the default stream's launches are what a graph captures */
  if (allow_shared(f, shared, err)) return -1;
  if (f->fn) {
    CK(drv.launch(f->fn, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shared, (CUstream)s, args,
                  NULL));
  } else {
    dim3 grid = {g.x, g.y, g.z}, block = {b.x, b.y, b.z};
    CK(cudaLaunchKernel((const void *)f->kernel, grid, block, args, shared, s));
  }
  if (!cap.on) watch(f, s); /* a captured launch runs when its graph does */
  return 0;
}

static int cuda_launch(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                       cl_err *err) {
  return launch_stream(f, g, b, shared, args, 0, err);
}

/* A cooperative launch through cudart. The grid is checked against what the device holds at
 * once first, so that the refusal says the numbers (cudaLaunchCooperativeKernel would only
 * say cudaErrorCooperativeLaunchTooLarge). */
static int cuda_launch_coop(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                            cl_err *err) {
  int per_sm = 0, sms = 0, coop = 0;
  if (cuda_occupancy(f, (int)(b.x * b.y * b.z), shared, &per_sm, err)) return -1;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, cu.device));
  CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, cu.device));
  if (!coop) {
    cl_err_set(err, "cooperative launch", "the %s does not support cooperative launches",
               cu.name);
    return -1;
  }
  unsigned long long blocks = (unsigned long long)g.x * g.y * g.z;
  if (blocks > (unsigned long long)per_sm * (unsigned long long)sms) {
    cl_err_set(err, "cooperative launch",
               "a cooperative launch needs all its blocks resident at once: the grid has %llu "
               "blocks, but the %s holds at most %d blocks of %u threads (%d SMs x %d blocks "
               "per SM); launch at most %d blocks and have each loop over the data (a "
               "grid-stride loop)",
               blocks, cu.name, per_sm * sms, b.x * b.y * b.z, sms, per_sm, per_sm * sms);
    return -1;
  }
  dim3 grid = {g.x, g.y, g.z}, block = {b.x, b.y, b.z};
  CK(cudaLaunchCooperativeKernel((const void *)f->kernel, grid, block, args, shared, 0));
  watch(f, 0);
  return 0;
}

static int cuda_global(cl_module *m, const char *name, void **dptr, size_t *bytes, cl_err *err) {
  if (ready(err)) return -1;
  cudaError_t e = cudaLibraryGetGlobal(dptr, bytes, m->lib, name);
  if (e == cudaSuccess) return 0;
  cudaGetLastError();
  cl_err_set(err, "no such symbol", "the module has no __constant__ or __device__ variable %s "
             "(%s)", name, cudaGetErrorName(e));
  return -1;
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
  if (refuse_in_capture("recording an event (cuda.time, a timeline)", err)) return -1;
  CK(cudaEventRecord(e->ev, 0));
  return 0;
}

static int cuda_event_elapsed(cl_event *a, cl_event *b, float *ms, cl_err *err) {
  CK(cudaEventSynchronize(b->ev));
  CK(cudaEventElapsedTime(ms, a->ev, b->ev));
  return 0;
}

static int time_limit_passed(cl_err *err);

/* Polls instead of blocking so that Ctrl-C reaches a learner whose kernel never ends: spins for
 * the first 200 µs (a short kernel is waited for without a sleep's latency), then sleeps 50 µs
 * between polls. An interrupted wait leaves a kernel running that nothing can stop short of
 * ending the process, so it is reported as sticky: the console then replaces the engine. So is
 * a wait for a kernel the watchdog found past the time limit. */
static int wait_stream(cudaStream_t s, volatile sig_atomic_t *interrupt, cl_err *err) {
  if (ready(err)) return -1;
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return 0;
    if (e != cudaErrorNotReady) return fail(e, "waiting for the GPU", err);
    if (time_limit_passed(err)) return -1;
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
  if (refuse_in_capture("a synchronize (cuda.sync, or a wait for the device)", err)) return -1;
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
  if (refuse_in_capture("waiting for a stream", err)) return -1;
  return wait_stream(raw(st), interrupt, err);
}

static int cuda_stream_wait(cl_stream *st, cl_event *ev, cl_err *err) {
  CK(cudaStreamWaitEvent(raw(st), ev->ev, 0));
  return 0;
}

static int cuda_event_record_on(cl_event *e, cl_stream *st, cl_err *err) {
  if (refuse_in_capture("recording an event (cuda.time, a timeline)", err)) return -1;
  CK(cudaEventRecord(e->ev, raw(st)));
  return 0;
}

static int cuda_copy_async(void *dst, const void *src, size_t n, int dir, cl_stream *st,
                           cl_err *err) {
  if (refuse_in_capture("a copy on a stream", err)) return -1;
  CK(cudaMemcpyAsync(dst, src, n,
                     dir == CL_COPY_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                     raw(st)));
  return 0;
}

static int cuda_launch_on(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                          cl_stream *st, cl_err *err) {
  return launch_stream(f, g, b, shared, args, raw(st), err);
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
  if (refuse_in_capture("cuda.blas", err)) return -1;
  if (ready(err)) return -1;
  return blas_cublas_gemm(g, err);
}

/* ---- the kernel time limit (cuda.limits{kernel_time}) ----
 *
 * A kernel on the GPU runs until it ends: nothing stops one short of ending the process that
 * owns its context. So under a limit each launch records an event behind it, and two threads
 * watch those events. The poller asks CUDA which have happened; the judge, which makes no CUDA
 * call at all, ends the engine (through `abandon`, runtime.c) once the oldest launch not seen to
 * finish has run longer than the limit. Two threads, so that a CUDA call that blocks (the
 * poller's query, should it wait on a lock a blocking cudaFree on the Lua thread holds) cannot
 * keep the judge from acting: the judge acts on what has not been seen to finish. A launch
 * runs from when it was queued or, when launches queue behind one another, from when the one
 * before it was seen to finish (within the poller's 50 ms), so that a queue of short kernels
 * does not add up to one long one. Before ending the engine the judge gives a wait on the Lua
 * thread a second to report it as a sticky error (wait_stream), so that the learner reads the
 * message where the error appears and the engine leaves as after any sticky error; a Lua thread
 * blocked elsewhere (a cudaMemcpy behind the kernel) is ended all the same.
 *
 * Without a limit nothing is recorded and no thread exists: unlimited launches cost nothing
 * extra. The threads start at the first watched launch, when the context exists: a thread's
 * first CUDA call would otherwise create one, on device 0. The benchmark loop
 * (backend_cuda_launch_loop) is not watched. */

#define WATCH_MAX 2048   /* launches watched at once; CUDA's own launch queue holds fewer */
#define POLL_MS 50       /* the poller's period */
#define JUDGE_MS 100     /* the judge's */

typedef struct watched {
  cudaEvent_t ev;        /* recorded behind the launch */
  double queued;         /* when the host queued it (CLOCK_MONOTONIC, in s) */
  char name[64];         /* the kernel's, for the message */
} watched;

static struct {
  pthread_mutex_t lock;         /* guards the fields up to nspare; no CUDA call is made under it */
  double limit_s;               /* 0: no limit; written only by the Lua thread */
  cl_abandon_fn abandon;        /* ends the engine; set with the limit */
  int tried;                    /* starting the threads has been tried */
  int started;                  /* they run */
  watched ring[WATCH_MAX];      /* launches not yet seen to finish, oldest at head */
  int head, count;
  double front_since;           /* when the one before head was seen to finish */
  cudaEvent_t spare[WATCH_MAX]; /* events of finished launches, for the next ones */
  int nspare;
  atomic_int expired;           /* a kernel outran the limit; message says which */
  atomic_int claimed;           /* a wait on the Lua thread has reported it */
  char message[600];            /* written once, before expired is set */
} wd = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) continue;
}

/* Pops the launches at the front that have finished (or failed: either way they no longer
 * run), querying outside the lock: only this thread pops, so the front stays put meanwhile. */
static void *poller_main(void *arg) {
  (void)arg;
  cudaSetDevice(cu.device); /* the engine's context, current on this thread too */
  for (;;) {
    nap_ms(POLL_MS);
    for (;;) {
      pthread_mutex_lock(&wd.lock);
      cudaEvent_t ev = wd.count ? wd.ring[wd.head].ev : NULL;
      pthread_mutex_unlock(&wd.lock);
      if (!ev || cudaEventQuery(ev) == cudaErrorNotReady) break;
      pthread_mutex_lock(&wd.lock);
      wd.spare[wd.nspare++] = ev;
      wd.head = (wd.head + 1) % WATCH_MAX;
      wd.count--;
      wd.front_since = now_s();
      pthread_mutex_unlock(&wd.lock);
    }
  }
  return NULL;
}

/* The kernel `name` has outrun limit_s: say so where the learner will read it, and end the
 * engine. Never returns (unless no abandon was given, when waits fail from now on). */
static void give_up(const char *name, double limit_s) {
  size_t n = strlen(cl_kernel_time_message(wd.message, sizeof wd.message, name, limit_s));
  snprintf(wd.message + n, sizeof wd.message - n,
           " A kernel on the GPU stops only when the engine that launched it ends.");
  atomic_store(&wd.expired, 1);
  for (int i = 0; i < 10 && !atomic_load(&wd.claimed); i++) nap_ms(100);
  if (!wd.abandon) return;
  if (!atomic_load(&wd.claimed)) wd.abandon(wd.message);
  nap_ms(5000); /* the engine leaves after the request that reported it; if it has not... */
  wd.abandon(NULL);
}

static void *judge_main(void *arg) {
  (void)arg;
  for (;;) {
    nap_ms(JUDGE_MS);
    char name[sizeof wd.ring[0].name];
    pthread_mutex_lock(&wd.lock);
    double limit = wd.limit_s, since = 0;
    int late = 0;
    if (wd.count && limit > 0) {
      const watched *w = &wd.ring[wd.head];
      since = w->queued > wd.front_since ? w->queued : wd.front_since;
      late = now_s() - since > limit;
      memcpy(name, w->name, sizeof name);
    }
    pthread_mutex_unlock(&wd.lock);
    if (late) {
      give_up(name, limit);
      return NULL;
    }
  }
}

/* Both threads, with every signal blocked in them: SIGINT is the Lua thread's to handle. */
static void start_watchdog(void) {
  wd.tried = 1;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int rc = pthread_create(&t, &a, poller_main, NULL);
  if (rc == 0) rc = pthread_create(&t, &a, judge_main, NULL);
  pthread_attr_destroy(&a);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0)
    fprintf(stderr, "cudalab: cannot watch launches for the kernel time limit: %s\n",
            strerror(rc));
  wd.started = rc == 0;
}

/* Records an event behind the launch just queued on s, for the watchdog; nothing without a
 * limit. No CUDA call is made under the lock: cudaEventRecord blocks when CUDA's queue is full
 * behind a kernel that never ends, and the judge must still get the lock then. A launch the
 * ring has no room for goes unwatched (a later one still shows the stream stuck). */
static void watch(const cl_function *f, cudaStream_t s) {
  if (wd.limit_s <= 0) return;
  if (!wd.tried) start_watchdog();
  if (!wd.started) return;
  double queued = now_s();
  pthread_mutex_lock(&wd.lock); /* only this thread pushes: the room seen here stays */
  int room = wd.count < WATCH_MAX;
  cudaEvent_t ev = room && wd.nspare ? wd.spare[--wd.nspare] : NULL;
  pthread_mutex_unlock(&wd.lock);
  if (!room) return;
  if (!ev && cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  int ok = cudaEventRecord(ev, s) == cudaSuccess;
  if (!ok) cudaGetLastError();
  pthread_mutex_lock(&wd.lock);
  if (ok) {
    watched *w = &wd.ring[(wd.head + wd.count) % WATCH_MAX];
    w->ev = ev;
    w->queued = queued;
    snprintf(w->name, sizeof w->name, "%s", f->name);
    wd.count++;
  } else {
    wd.spare[wd.nspare++] = ev;
  }
  pthread_mutex_unlock(&wd.lock);
}

/* For waits on the Lua thread: once the judge has found a kernel past the limit, every wait
 * fails with its message, as a sticky error. */
static int time_limit_passed(cl_err *err) {
  if (!atomic_load(&wd.expired)) return 0;
  atomic_store(&wd.claimed, 1);
  cl_err_set(err, "kernel time limit", "%s", wd.message);
  err->sticky = 1;
  return -1;
}

/* Touches no CUDA: the threads start at the first launch it applies to. */
static void cuda_set_kernel_time_limit(double seconds, cl_abandon_fn abandon) {
  pthread_mutex_lock(&wd.lock);
  wd.limit_s = seconds > 0 ? seconds : 0;
  wd.abandon = abandon;
  pthread_mutex_unlock(&wd.lock);
}

/* ---- choosing a GPU for a session (cuda.gpu_admit) ----
 *
 * Without a context, which would hold 500 MiB of a GPU the session may not get: the devices
 * are counted with cudaGetDeviceCount (which honours CUDA_VISIBLE_DEVICES) and named by their
 * PCI bus id, and their free memory is NVML's, found by that id (NVML numbers devices its own
 * way, ignoring CUDA_VISIBLE_DEVICES). NVML is opened with dlopen, never linked, so that
 * cudalab starts where it is missing; free memory is then unknown, and said to be. Sessions
 * are counted with slots (gpu_slots.c), per class key and GPU: sessions_max each, or, where the
 * class gives none, as many as the GPU's memory holds up to the contexts one GPU makes
 * (gpu_slots_default). The count is taken before any context exists: a room of 200 logging in
 * at once were all admitted by free memory alone, and 179 then failed to make a context
 * (bench/class/H200.md). A session first takes one of its learner's own few slots, so one learner
 * cannot fill the room. The chosen device is where ready() later makes the context; once a
 * context exists, only its device can be chosen. */

#define CONTEXT_RESERVE ((size_t)600 << 20) /* a session's context, with room to spare */
#define SLOTS_COUNTED 4096                   /* the most slots a count looks at */
#define GPUS_MAX 64

typedef struct nvml_memory { unsigned long long total, free, used; } nvml_memory; /* nvmlMemory_t */
typedef int (*nvml_init_fn)(void);                          /* nvmlInit_v2 */
typedef int (*nvml_by_pci_fn)(const char *bus_id, void **device); /* ..ByPciBusId_v2 */
typedef int (*nvml_memory_fn)(void *device, nvml_memory *out);    /* ..GetMemoryInfo */

static struct {
  int tried;               /* loading was attempted (once per process) */
  nvml_by_pci_fn by_pci;   /* NULL when NVML is missing or would not start */
  nvml_memory_fn memory;
  char why[160];           /* why it is missing */
} nvml;

/* A session's admission, held for the life of the process. */
static struct {
  int fd;                  /* the slot's socket; -1 before one is taken */
  int learner_fd;          /* the learner's own slot, held with it; -1 likewise */
  int device, slot, max;
  char key[4096];          /* the class key as given (a long one is hashed when named) */
} adm = {.fd = -1, .learner_fd = -1};

typedef struct gpu_info {
  int index;               /* CUDA's device index */
  char pci[32];
  int free_known;
  size_t free, total;
} gpu_info;

static void nvml_load(void) {
  if (nvml.tried) return;
  nvml.tried = 1;
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(nvml.why, sizeof nvml.why, "NVML (libnvidia-ml.so.1) could not be loaded");
    return;
  }
  nvml_init_fn init_fn;
  nvml_by_pci_fn by_pci;
  nvml_memory_fn memory;
  if (!dl_sym(lib, "nvmlInit_v2", &init_fn) ||
      !dl_sym(lib, "nvmlDeviceGetHandleByPciBusId_v2", &by_pci) ||
      !dl_sym(lib, "nvmlDeviceGetMemoryInfo", &memory)) {
    snprintf(nvml.why, sizeof nvml.why, "this NVML lacks the functions cudalab needs");
    return;
  }
  int rc = init_fn();
  if (rc != 0) {
    snprintf(nvml.why, sizeof nvml.why, "NVML would not start (nvmlInit_v2 returned %d)", rc);
    return;
  }
  nvml.by_pci = by_pci;
  nvml.memory = memory;
}

/* g->index's PCI bus id and, where NVML answers, its memory; -1 when CUDA cannot name it. */
static int gpu_describe(gpu_info *g) {
  if (cudaDeviceGetPCIBusId(g->pci, (int)sizeof g->pci, g->index) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  g->free_known = 0;
  nvml_load();
  void *h = NULL;
  nvml_memory m;
  if (nvml.by_pci && nvml.by_pci(g->pci, &h) == 0 && nvml.memory(h, &m) == 0) {
    g->free_known = 1;
    g->free = (size_t)m.free;
    g->total = (size_t)m.total;
  }
  return 0;
}

/* The devices that may be chosen, most free memory first (unknown last, in CUDA's order);
 * 0 with why filled when there are none. */
static int gpu_candidates(gpu_info *g, char *why, size_t whylen) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n <= 0) {
    if (e != cudaSuccess) cudaGetLastError();
    if (e != cudaSuccess)
      snprintf(why, whylen, "no GPU found: CUDA reports %s (%s)", cudaGetErrorName(e),
               cudaGetErrorString(e));
    else
      snprintf(why, whylen, "no GPU found: CUDA lists no device");
    return 0;
  }
  if (cu.made && cu.init_error != cudaSuccess) {
    snprintf(why, whylen, "no GPU found: the GPU would not start a context (%s)",
             cudaGetErrorName(cu.init_error));
    return 0;
  }
  int count = 0;
  for (int i = 0; i < n && count < GPUS_MAX; i++) {
    if (cu.made && i != cu.device) continue; /* the context is there already */
    g[count].index = i;
    if (gpu_describe(&g[count]) == 0) count++;
  }
  for (int i = 1; i < count; i++) /* insertion sort: stable, and count is small */
    for (int j = i; j > 0; j--) {
      const gpu_info *a = &g[j - 1], *b = &g[j];
      int before = b->free_known && (!a->free_known || b->free > a->free);
      if (!before) break;
      gpu_info t = g[j - 1];
      g[j - 1] = g[j];
      g[j] = t;
    }
  if (!count) snprintf(why, whylen, "no GPU found: CUDA cannot name the GPUs it lists");
  return count;
}

/* Fills out for the session's slot on g. */
static void admitted(const gpu_info *g, cl_gpu_admission *out) {
  out->ok = 1;
  out->device = g->index;
  out->slot = adm.slot;
  snprintf(out->pci, sizeof out->pci, "%s", g->pci);
  out->free_known = g->free_known;
  out->free = g->free;
  out->total = g->total;
  int max = adm.max < SLOTS_COUNTED ? adm.max : SLOTS_COUNTED;
  out->sessions = gpu_slot_count(adm.key, g->pci, max);
  if (!g->free_known)
    snprintf(out->why, sizeof out->why, "the GPU's free memory is unknown: %s", nvml.why);
}

/* Why no GPU had room: the most free memory any had, against what a session needs. */
static void no_room(cl_gpu_admission *out, const cl_gpu_request *req, int ngpus,
                    size_t most_free) {
  char fr[32], need[32], ctx[32];
  cl_bytes_text(fr, sizeof fr, (double)most_free);
  cl_bytes_text(ctx, sizeof ctx, (double)CONTEXT_RESERVE);
  int len = ngpus == 1 ? snprintf(out->why, sizeof out->why, "the GPU has %s free", fr)
                       : snprintf(out->why, sizeof out->why, "the %d GPUs have at most %s free",
                                  ngpus, fr);
  if (len < 0 || (size_t)len >= sizeof out->why) return;
  if (req->memory_needed)
    snprintf(out->why + len, sizeof out->why - (size_t)len,
             ", less than this class's %s per learner (and the %s a session's CUDA context "
             "takes)", cl_bytes_text(need, sizeof need, (double)req->memory_needed), ctx);
  else
    snprintf(out->why + len, sizeof out->why - (size_t)len,
             ", less than the %s a session's CUDA context takes", ctx);
}

void backend_cuda_admit(const cl_gpu_request *req, cl_gpu_admission *out) {
  memset(out, 0, sizeof *out);
  out->device = out->slot = -1;
  gpu_info g[GPUS_MAX];
  if (adm.fd >= 0) { /* asked again: the slot taken before, with today's figures */
    g[0].index = adm.device;
    if (gpu_describe(&g[0]) == 0) admitted(&g[0], out);
    else snprintf(out->why, sizeof out->why, "the GPU this session was given cannot be named");
    return;
  }
  int n = gpu_candidates(g, out->why, sizeof out->why);
  if (!n) return;
  if (adm.learner_fd < 0 &&
      gpu_slot_take_learner(req->key, (unsigned)getuid(), GPU_SLOTS_PER_LEARNER, &adm.learner_fd,
                            out->why, sizeof out->why) != 0)
    return;
  size_t need = req->memory_needed + CONTEXT_RESERVE, most_free = 0;
  int roomy = 0, full = 0, last_max = 0;
  char slot_err[200] = "";
  for (int i = 0; i < n; i++) {
    if (g[i].free_known && g[i].free < need) {
      if (g[i].free > most_free) most_free = g[i].free;
      continue;
    }
    roomy++;
    int fd, max = req->sessions_max > 0 ? req->sessions_max
                                       : gpu_slots_default(g[i].free_known ? g[i].total : 0,
                                                           CONTEXT_RESERVE, req->memory_needed);
    int slot = gpu_slot_take(req->key, g[i].pci, max, &fd, slot_err, sizeof slot_err);
    if (slot >= 0) {
      adm.fd = fd;
      adm.device = g[i].index;
      adm.slot = slot;
      adm.max = max;
      snprintf(adm.key, sizeof adm.key, "%s", req->key);
      if (!cu.made) cu.device = g[i].index; /* where ready() will make the context */
      admitted(&g[i], out);
      return;
    }
    if (slot == -1) full++;
    last_max = max;
  }
  gpu_slot_release(adm.learner_fd); /* no GPU: a later retry takes it again */
  adm.learner_fd = -1;
  int max = last_max;
  if (full && roomy == 1)
    snprintf(out->why, sizeof out->why, "all %d GPU sessions of this class are taken", max);
  else if (full == roomy && full)
    snprintf(out->why, sizeof out->why,
             "all %d GPU sessions of this class are taken on each of the %d GPUs with room",
             max, full);
  else if (roomy)
    snprintf(out->why, sizeof out->why, "cannot count this class's GPU sessions: %s", slot_err);
  else
    no_room(out, req, n, most_free);
}

/* ---- managed memory ---- */

/* cudaMallocManaged, attached globally (any stream's kernels may use it). The pages are filled
 * by the host (bind_array.c), so they start on the host as the simulator models them. */
static int cuda_alloc_managed(void **p, size_t bytes, const char *label, cl_err *err) {
  (void)label;
  if (refuse_in_capture("making a managed array", err)) return -1;
  if (ready(err)) return -1;
  CK(cudaMallocManaged(p, bytes ? bytes : 1, cudaMemAttachGlobal));
  return 0;
}

/* CUDA 13's location form: the device by its ordinal, or the host. */
static struct cudaMemLocation location(int to_device) {
  struct cudaMemLocation loc;
  memset(&loc, 0, sizeof loc);
  loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  loc.id = to_device ? cu.device : 0;
  return loc;
}

static int cuda_prefetch(void *p, size_t bytes, int to_device, cl_stream *st, cl_err *err) {
  if (refuse_in_capture("a prefetch", err)) return -1;
  if (ready(err)) return -1;
  if (!bytes) return 0;
  CK(cudaMemPrefetchAsync(p, bytes, location(to_device), 0, raw(st)));
  return 0;
}

/* CL_ADVISE_* as cudaMemAdvise's advice and location (the location matters for the preferred
 * location only). */
static int cuda_advise(void *p, size_t bytes, int advice, int set, cl_err *err) {
  if (refuse_in_capture("advice on a managed array", err)) return -1;
  if (ready(err)) return -1;
  if (!bytes) return 0;
  enum cudaMemoryAdvise a;
  int to_device = 1;
  switch (advice) {
    case CL_ADVISE_READ_MOSTLY:
      a = set ? cudaMemAdviseSetReadMostly : cudaMemAdviseUnsetReadMostly;
      break;
    case CL_ADVISE_PREFER_GPU:
    case CL_ADVISE_PREFER_CPU:
      a = set ? cudaMemAdviseSetPreferredLocation : cudaMemAdviseUnsetPreferredLocation;
      to_device = advice == CL_ADVISE_PREFER_GPU;
      break;
    default:
      cl_err_set(err, "invalid advice", "unknown advice %d", advice);
      return -1;
  }
  CK(cudaMemAdvise(p, bytes, a, location(to_device)));
  return 0;
}

/* ---- CUDA graphs: stream capture ---- */

struct cl_graph {
  cudaGraphExec_t exec;
};

static int cuda_graph_begin(cl_err *err) {
  if (cap.on) {
    cl_err_set(err, "already capturing", "a graph is being captured already: cuda.graph "
               "cannot be called inside cuda.graph");
    return -1;
  }
  if (ready(err)) return -1;
  CK(cudaStreamCreateWithFlags(&cap.s, cudaStreamNonBlocking));
  cudaError_t r = cudaStreamBeginCapture(cap.s, cudaStreamCaptureModeThreadLocal);
  if (r != cudaSuccess) {
    cudaStreamDestroy(cap.s);
    cap.s = NULL;
    return fail(r, "cudaStreamBeginCapture", err);
  }
  cap.on = 1;
  return 0;
}

/* Ends the capture whatever happens; then instantiates the graph, unless it is thrown away. */
static int cuda_graph_end(cl_graph **out, cl_err *err) {
  if (!cap.on) {
    cl_err_set(err, "not capturing", "no graph is being captured");
    return -1;
  }
  cudaGraph_t graph = NULL;
  cudaError_t r = cudaStreamEndCapture(cap.s, &graph);
  cap.on = 0;
  cudaStreamDestroy(cap.s);
  cap.s = NULL;
  if (r != cudaSuccess || !out) {
    if (graph) cudaGraphDestroy(graph);
    if (!out) {
      cudaGetLastError();
      return 0;
    }
    return fail(r, "cudaStreamEndCapture", err);
  }
  cl_graph *g = calloc(1, sizeof *g);
  if (!g) {
    cudaGraphDestroy(graph);
    cl_err_set(err, "out of memory", "out of host memory");
    return -1;
  }
  r = cudaGraphInstantiate(&g->exec, graph, 0);
  cudaGraphDestroy(graph);
  if (r != cudaSuccess) {
    free(g);
    return fail(r, "cudaGraphInstantiate", err);
  }
  *out = g;
  return 0;
}

/* Replays on the legacy default stream, as a launch without a stream runs; watched under a
 * kernel time limit as one launch named after the graph. */
static int cuda_graph_launch(cl_graph *g, cl_err *err) {
  static const cl_function graph_fn = {.name = "a cuda.graph"};
  if (refuse_in_capture("launching a graph", err)) return -1;
  CK(cudaGraphLaunch(g->exec, 0));
  watch(&graph_fn, 0);
  return 0;
}

static void cuda_graph_free(cl_graph *g) {
  if (!g) return;
  cudaGraphExecDestroy(g->exec);
  free(g);
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
    .module_global = cuda_global,
    .func_attrs = cuda_func_attrs,
    .source_names = cuda_source_names,
    .occupancy = cuda_occupancy,
    .launch = cuda_launch,
    .launch_cooperative = cuda_launch_coop,
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
    .set_kernel_time_limit = cuda_set_kernel_time_limit,
    .alloc_managed = cuda_alloc_managed,
    .prefetch = cuda_prefetch,
    .advise = cuda_advise,
    .graph_begin = cuda_graph_begin,
    .graph_end = cuda_graph_end,
    .graph_launch = cuda_graph_launch,
    .graph_free = cuda_graph_free,
    .texture_create = cuda_texture_create,
    .texture_destroy = cuda_texture_destroy,
};
