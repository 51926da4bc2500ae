/* launch_c.c: the anchors cudalab is measured against from a C program of its own: NVRTC
 * compile time, device-to-device and pinned copy bandwidth, and the launch loop of the same
 * kernels, compiled the same way (NVRTC to a CUBIN, cudaLibraryLoadData). The launch ratio
 * itself uses the same loop inside cudalab (cudalab_bench.c_launch_loop), which sees the same machine
 * state as the Lua loop; this program's figure is the cross-check from a separate process.
 * Prints "name: value unit" lines for bench/run.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nvrtc.h>

#define CK(call)                                                                   \
  do {                                                                             \
    int e_ = (int)(call);                                                          \
    if (e_) {                                                                      \
      fprintf(stderr, "launch_c: %s failed (%d)\n", #call, e_);                    \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static const char *SRC =
    "extern \"C\" __global__ void empty() {}\n"
    "extern \"C\" __global__ void three(float *a, float *b, float *c, int n) {\n"
    "  if (n < 0) a[0] = b[0] + c[0];\n"
    "}\n";

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Median of `rounds` timings of `n` back-to-back launches, per launch, in microseconds. */
static double time_launches(cudaKernel_t k, void **args, int n, int rounds) {
  double best[32];
  for (int r = 0; r < rounds; r++) {
    CK(cudaDeviceSynchronize());
    double t0 = now_us();
    for (int i = 0; i < n; i++) CK(cudaLaunchKernel((const void *)k, (dim3){1, 1, 1}, (dim3){32, 1, 1}, args, 0, 0));
    CK(cudaDeviceSynchronize());
    best[r] = (now_us() - t0) / n;
  }
  for (int i = 0; i < rounds; i++)
    for (int j = i + 1; j < rounds; j++)
      if (best[j] < best[i]) { double t = best[i]; best[i] = best[j]; best[j] = t; }
  return best[rounds / 2];
}

static double median5(double *v) {
  for (int i = 0; i < 5; i++)
    for (int j = i + 1; j < 5; j++)
      if (v[j] < v[i]) { double t = v[i]; v[i] = v[j]; v[j] = t; }
  return v[2];
}

/* launch_c [N]: N launches per timed loop. */
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  CK(cudaFree(0));
  int major, minor;
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=sm_%d%d", major, minor);
  nvrtcProgram p;
  CK(nvrtcCreateProgram(&p, SRC, "bench.cu", 0, NULL, NULL));
  const char *opts[] = {arch, "-lineinfo"};
  double t0 = now_us();
  CK(nvrtcCompileProgram(p, 2, opts));
  printf("c_nvrtc_compile_ms: %.2f ms\n", (now_us() - t0) / 1e3);
  size_t size;
  CK(nvrtcGetCUBINSize(p, &size));
  char *cubin = malloc(size);
  CK(nvrtcGetCUBIN(p, cubin));
  cudaLibrary_t lib;
  CK(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
  cudaKernel_t empty, three;
  CK(cudaLibraryGetKernel(&empty, lib, "empty"));
  CK(cudaLibraryGetKernel(&three, lib, "three"));
  float *a, *b, *c;
  CK(cudaMalloc((void **)&a, 1024));
  CK(cudaMalloc((void **)&b, 1024));
  CK(cudaMalloc((void **)&c, 1024));
  int count = 1024;
  void *args3[] = {&a, &b, &c, &count};
  time_launches(empty, NULL, 1000, 1); /* warm-up */
  {
    /* Bandwidth anchors: a 1 GiB device-to-device copy (bytes read + written) and a 1 GiB copy
     * from pinned host memory, each the median of 5 timed with events. */
    size_t bytes = (size_t)1 << 30;
    void *d1, *d2, *h;
    CK(cudaMalloc(&d1, bytes));
    CK(cudaMalloc(&d2, bytes));
    CK(cudaMallocHost(&h, bytes));
    memset(h, 1, bytes);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    double d2d[5], h2d[5];
    for (int r = 0; r < 6; r++) {
      float ms;
      CK(cudaEventRecord(e0, 0));
      CK(cudaMemcpyAsync(d2, d1, bytes, cudaMemcpyDeviceToDevice, 0));
      CK(cudaEventRecord(e1, 0));
      CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r) d2d[r - 1] = 2.0 * bytes / (ms * 1e6);
      CK(cudaEventRecord(e0, 0));
      CK(cudaMemcpy(d1, h, bytes, cudaMemcpyHostToDevice));
      CK(cudaEventRecord(e1, 0));
      CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r) h2d[r - 1] = bytes / (ms * 1e6);
    }
    printf("c_d2d_copy_GBps: %.1f GB/s\n", median5(d2d));
    printf("c_pinned_h2d_GBps: %.2f GB/s\n", median5(h2d));
    CK(cudaFree(d1));
    CK(cudaFree(d2));
    CK(cudaFreeHost(h));
  }
  printf("c_program_launch_empty_us: %.3f us\n", time_launches(empty, NULL, n, 5));
  printf("c_program_launch_3arrays_us: %.3f us\n", time_launches(three, args3, n, 5));
  return 0;
}
