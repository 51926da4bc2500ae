/* measure.c: measures on the GPU the figures that lessons 12 to 14 quote, and writes them as a
 * Lua table (lessons/data/h200.lua) with the date and the machine, so that every figure a lesson
 * cites comes from a script in the repository. Run by `make lesson-data` on a machine with a GPU.
 *
 * Each figure is the median of several tries where a try is cheap. The context is timed first,
 * before anything else touches CUDA, and the sticky-error check comes last, because it leaves
 * the process's CUDA unusable (which is the point it demonstrates). */
#include <cuda_runtime.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(call)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                                  \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define NV(call)                                                                                   \
  do {                                                                                             \
    nvrtcResult r_ = (call);                                                                       \
    if (r_ != NVRTC_SUCCESS) {                                                                     \
      fprintf(stderr, "%s: %s\n", #call, nvrtcGetErrorString(r_));                                 \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char SRC[] =
    "extern \"C\" __global__ void inc(float *a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) a[i] += 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void poke(float *a) { a[threadIdx.x + (1ll << 40)] = 1.0f; }\n";

/* Compiles SRC for arch (e.g. "sm_90" for a CUBIN, "compute_90" for PTX); returns the image
 * (malloc'd) and the time the compile took. */
static char *compile(const char *arch, int cubin, size_t *len, double *ms) {
  char opt[64];
  snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
  const char *opts[] = {opt};
  double t0 = now_ms();
  nvrtcProgram p;
  NV(nvrtcCreateProgram(&p, SRC, "measure.cu", 0, NULL, NULL));
  NV(nvrtcCompileProgram(p, 1, opts));
  char *img;
  if (cubin) {
    NV(nvrtcGetCUBINSize(p, len));
    img = malloc(*len);
    NV(nvrtcGetCUBIN(p, img));
  } else {
    NV(nvrtcGetPTXSize(p, len));
    img = malloc(*len);
    NV(nvrtcGetPTX(p, img));
  }
  NV(nvrtcDestroyProgram(&p));
  *ms = now_ms() - t0;
  return img;
}

static double load_ms(const char *img) {
  cudaLibrary_t lib;
  double t0 = now_ms();
  CK(cudaLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
  double ms = now_ms() - t0;
  CK(cudaLibraryUnload(lib));
  return ms;
}

/* Device-to-device copy bandwidth (GB/s, counting bytes read plus bytes written) of `bytes`. */
static double copy_gbs(size_t bytes) {
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  double v[7];
  for (int i = 0; i < 7; i++) {
    CK(cudaEventRecord(e0, 0));
    CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    v[i] = 2.0 * (double)bytes / (ms / 1e3) / 1e9;
  }
  CK(cudaFree(a));
  CK(cudaFree(b));
  return median(v, 7);
}

int main(void) {
  double t0 = now_ms();
  CK(cudaFree(0)); /* creates the context */
  double context_ms = now_ms() - t0;
  struct cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver, runtime, nv_major, nv_minor;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  NV(nvrtcVersion(&nv_major, &nv_minor));
  char arch[16], varch[20];
  snprintf(arch, sizeof arch, "sm_%d%d", prop.major, prop.minor);
  snprintf(varch, sizeof varch, "compute_%d%d", prop.major, prop.minor);

  size_t cubin_len, ptx_len;
  double first_ms, ms, v[7];
  char *cubin = compile(arch, 1, &cubin_len, &first_ms);
  for (int i = 0; i < 7; i++) free(compile(arch, 1, &cubin_len, &v[i]));
  double cubin_compile_ms = median(v, 7);
  char *ptx = compile(varch, 0, &ptx_len, &ms);
  for (int i = 0; i < 7; i++) v[i] = load_ms(cubin);
  double cubin_load_ms = median(v, 7);
  /* The driver caches JIT results on disk; CUDA_CACHE_DISABLE=1 (set by make lesson-data) makes
   * each load compile, as it does the first time on a fresh machine. */
  for (int i = 0; i < 5; i++) v[i] = load_ms(ptx);
  double ptx_load_ms = median(v, 5);
  double gbs_small = copy_gbs(40u << 20), gbs_large = copy_gbs((size_t)8 << 30);

  /* The sticky error: an illegal address, then a plain call, a reset, and a call 3 s later. */
  cudaLibrary_t lib;
  cudaKernel_t poke;
  CK(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
  CK(cudaLibraryGetKernel(&poke, lib, "poke"));
  float *a;
  CK(cudaMalloc((void **)&a, 1024));
  void *args[] = {&a};
  dim3 grid = {1, 1, 1}, block = {32, 1, 1};
  cudaLaunchKernel((const void *)poke, grid, block, args, 0, 0);
  cudaError_t launch = cudaDeviceSynchronize();
  void *p = NULL;
  cudaError_t after = cudaMalloc(&p, 16);
  cudaError_t reset = cudaDeviceReset();
  cudaError_t after_reset = cudaMalloc(&p, 16);
  sleep(3);
  cudaError_t after_wait = cudaMalloc(&p, 16);

  time_t t = time(NULL);
  char date[16];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
  printf("-- h200.lua: figures that lessons quote, measured by lessons/data/measure.c (make lesson-data).\n");
  printf("return {\n");
  printf("  machine = \"%s, driver %d, runtime %d, NVRTC %d.%d\",\n", prop.name, driver, runtime, nv_major,
         nv_minor);
  printf("  date = \"%s\",\n", date);
  printf("  context_ms = %.0f,          -- the first CUDA call of a process (cudaFree(0))\n", context_ms);
  printf("  nvrtc_first_ms = %.0f,      -- NVRTC, the first compile in the process, to a CUBIN\n", first_ms);
  printf("  nvrtc_cubin_ms = %.0f,      -- NVRTC, a later compile of the same small module, to a CUBIN\n",
         cubin_compile_ms);
  printf("  load_cubin_ms = %.2f,      -- cudaLibraryLoadData of that CUBIN\n", cubin_load_ms);
  printf("  load_ptx_ms = %.0f,         -- cudaLibraryLoadData of its PTX (the driver compiles it)\n", ptx_load_ms);
  printf("  copy_40mb_gbs = %.0f,     -- device-to-device copy of 40 MiB (bytes read + written)\n", gbs_small);
  printf("  copy_8gb_gbs = %.0f,      -- the same of 8 GiB\n", gbs_large);
  printf("  sticky = {                   -- after an illegal address\n");
  printf("    launch = \"%s\",\n", cudaGetErrorName(launch));
  printf("    next_call = \"%s\",\n", cudaGetErrorName(after));
  printf("    reset = \"%s\",\n", cudaGetErrorName(reset));
  printf("    after_reset = \"%s\",\n", cudaGetErrorName(after_reset));
  printf("    after_3s = \"%s\",\n", cudaGetErrorName(after_wait));
  printf("  },\n}\n");
  free(cubin);
  free(ptx);
  return 0;
}
