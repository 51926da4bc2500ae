/* nvrtc_util.h: helpers shared by the simulator's test programs: compile CUDA C with NVRTC to
 * PTX, load it into the simulator, and print TAP-like "ok - name" / "not ok - name: why" lines. */
#ifndef CUDALAB_TESTS_SIM_NVRTC_UTIL_H
#define CUDALAB_TESTS_SIM_NVRTC_UTIL_H

#include <stddef.h>

#include "sim.h"

/* Kernels several test programs run: the vector add and the 16x16 tiled matmul that the speed
 * goal names. String literals, so that a test can splice them into a larger source. */
#define TU_SRC_VADD \
  "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n" \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" \
  "  if (i < n) c[i] = a[i] + b[i];\n" \
  "}\n"

#define TU_SRC_MM_TILED \
  "#define T 16\n" \
  "extern \"C\" __global__ void mm_tiled(const float *A, const float *B, float *C, int n) {\n" \
  "  __shared__ float As[T][T], Bs[T][T];\n" \
  "  int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x; float s = 0;\n" \
  "  for (int t = 0; t < n / T; t++) {\n" \
  "    As[threadIdx.y][threadIdx.x] = A[r * n + t * T + threadIdx.x];\n" \
  "    Bs[threadIdx.y][threadIdx.x] = B[(t * T + threadIdx.y) * n + c];\n" \
  "    __syncthreads();\n" \
  "    for (int k = 0; k < T; k++) s += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n" \
  "    __syncthreads();\n" \
  "  }\n" \
  "  C[r * n + c] = s;\n" \
  "}\n"

/* PTX for src (malloc'd, caller frees), compiled with -arch=compute_90 -lineinfo; NULL on a
 * compile error, after printing the log. */
char *tu_ptx(const char *src);
/* The same with -G in place of -lineinfo: debug information (DWARF) for the debugger. */
char *tu_ptx_debug(const char *src);
/* tu_ptx + sim_module_load; NULL (and a "not ok" line) on failure. */
sim_module *tu_module(const char *test, const char *src);
sim_kernel *tu_kernel(sim_module *m, const char *name); /* by unmangled-substring */

/* Declares how many checks the program makes ("1..n"), first thing in main: tests/run.sh fails a
 * program that makes another number, so one that stops early cannot pass. */
void tu_plan(int n);

/* Reports one check; returns cond. */
int tu_check(int cond, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int tu_failures(void);

/* Seconds on the monotonic clock, for timing launches. */
double tu_now(void);

/* Launches with 1D dims, threads = host threads (0 = all), returns sim_launch's result. */
int tu_launch(sim_device *dev, sim_kernel *k, unsigned grid, unsigned block, size_t shm, void **args, int threads,
              sim_stats *st, char *err, size_t errlen);

#endif
