/* test_patterns.c: the counters and checks of the memory fast path when one instruction sees
 * many different address patterns. The simulator remembers, per load or store, the last warp's
 * pattern and its sector or wavefront count, and reuses it when a warp repeats the pattern
 * shifted by a multiple of the granule (sim_memo in sim_run.h). These kernels give every warp
 * its own stride and shift, so a count reused when it should not be, or a bounds check skipped
 * on a repeated pattern, shows up as a wrong total or a missing error. The expected counts come
 * from a plain per-warp computation on the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static const char *src =
    "extern \"C\" {\n"
    "__global__ void shpat(float *out, const int *stride, const int *shift) {\n"
    "  __shared__ float s[2048];\n"
    "  int w = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, l = threadIdx.x % 32;\n"
    "  int st = stride[w], sh = shift[w];\n"
    "  out[blockIdx.x * blockDim.x + threadIdx.x] = s[(l * st + sh) & 2047];\n"
    "}\n"
    "__global__ void gpat(const float *a, float *out, const int *stride, const int *shift) {\n"
    "  int w = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, l = threadIdx.x % 32;\n"
    "  int st = stride[w], sh = shift[w];\n"
    "  out[blockIdx.x * blockDim.x + threadIdx.x] = a[l * st + sh];\n"
    "}\n"
    "__global__ void shift_oob(const float *a, float *out, int k) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  out[i] = a[i + k];\n"
    "}\n"
    "__global__ void sh_oob(float *out, int k) {\n"
    "  __shared__ float s[256];\n"
    "  s[threadIdx.x] = threadIdx.x;\n"
    "  __syncthreads();\n"
    "  out[threadIdx.x] = s[threadIdx.x + (threadIdx.x >= 224 ? k : 0)];\n"
    "}\n"
    "__global__ void sh_edge(float *out, int k) {\n"
    "  __shared__ float below[64], s[256], above[64];\n"
    "  below[threadIdx.x % 64] = -1; s[threadIdx.x] = threadIdx.x; above[threadIdx.x % 64] = -2;\n"
    "  __syncthreads();\n"
    "  int i = (int)threadIdx.x + (threadIdx.x >= 224 ? k : 0);\n"
    "  out[threadIdx.x] = s[i] + below[0] + above[0];\n"
    "}\n"
    "__global__ void misal(const float *a, float *out) {\n"
    "  const char *p = (const char *)a + (blockIdx.x == 3 ? 2 : 0);\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  out[i] = *(const float *)(p + 4 * i);\n"
    "}\n"
    "}\n";

enum { WARPS = 16, BLOCK = 256 }; /* two blocks of eight warps */

/* Per-warp stride and shift (in 4-byte elements): repeats, shifts by a granule and by less, a
 * broadcast, bank conflicts of degree 2 to 32. */
static const int strides[WARPS] = {1, 1, 1, 2, 2, 32, 0, 17, 1, 8, 8, 4, 3, 1, 16, 2};
static const int shifts[WARPS] = {0, 8, 4, 0, 5, 0, 7, 3, 1, 0, 32, 2, 9, 0, 1, 64};

static int has(const char *msg, const char *part) { return strstr(msg, part) != NULL; }

/* Wavefronts of one warp reading s[(l * st + sh) & 2047]: the most distinct words in one bank. */
static unsigned ref_wavefronts(int st, int sh) {
  int words[32];
  unsigned best = 0;
  for (int l = 0; l < 32; l++) words[l] = (l * st + sh) & 2047;
  for (int b = 0; b < 32; b++) {
    unsigned n = 0;
    for (int l = 0; l < 32; l++) {
      if (words[l] % 32 != b) continue;
      int seen = 0;
      for (int j = 0; j < l; j++) seen |= words[j] == words[l];
      n += !seen;
    }
    best = n > best ? n : best;
  }
  return best;
}

/* Sectors of one warp reading a[l * st + sh], a 256-byte aligned. */
static unsigned ref_sectors(int st, int sh) {
  unsigned n = 0;
  for (int l = 0; l < 32; l++) {
    int sec = (l * st + sh) * 4 / 32, seen = 0;
    for (int j = 0; j < l; j++) seen |= (j * st + sh) * 4 / 32 == sec;
    n += !seen;
  }
  return n;
}

static void test_counts(sim_device *dev, sim_module *m, int threads) {
  char err[2048], name[128];
  int *st = sim_malloc(dev, sizeof strides, "i32[16]", err, sizeof err), *sh = sim_malloc(dev, sizeof shifts, "i32[16]", err, sizeof err);
  float *a = sim_malloc(dev, 4096 * 4, "f32[4096]", err, sizeof err), *out = sim_malloc(dev, 2 * BLOCK * 4, "f32[512]", err, sizeof err);
  memcpy(st, strides, sizeof strides);
  memcpy(sh, shifts, sizeof shifts);
  unsigned long long want_wf = 0, want_sect = 0;
  for (int w = 0; w < WARPS; w++) {
    want_wf += ref_wavefronts(strides[w], shifts[w]);
    want_sect += ref_sectors(strides[w], shifts[w]);
  }
  sim_stats s;
  void *sargs[] = {&out, &st, &sh};
  int rc = tu_launch(dev, sim_module_kernel(m, "shpat"), 2, BLOCK, 0, sargs, threads, &s, err, sizeof err);
  snprintf(name, sizeof name, "a warp-dependent shared pattern counts its own wavefronts (%d host thread%s)", threads,
           threads > 1 ? "s" : "");
  tu_check(rc == 0 && s.total.shared_ld_wavefronts == want_wf && s.total.shared_ld_conflicts == want_wf - WARPS, name,
           "rc=%d %s wavefronts %llu conflicts %llu, want %llu and %llu", rc, rc ? err : "",
           (unsigned long long)s.total.shared_ld_wavefronts, (unsigned long long)s.total.shared_ld_conflicts, want_wf,
           want_wf - WARPS);
  void *gargs[] = {&a, &out, &st, &sh};
  rc = tu_launch(dev, sim_module_kernel(m, "gpat"), 2, BLOCK, 0, gargs, threads, &s, err, sizeof err);
  /* the loads of stride[w] and shift[w] are one sector each */
  snprintf(name, sizeof name, "a warp-dependent global pattern counts its own sectors (%d host thread%s)", threads,
           threads > 1 ? "s" : "");
  tu_check(rc == 0 && s.total.ld_sectors == want_sect + 2 * WARPS && s.total.ld_requests == 3 * WARPS, name,
           "rc=%d %s sectors %llu requests %llu, want %llu and %d", rc, rc ? err : "", (unsigned long long)s.total.ld_sectors,
           (unsigned long long)s.total.ld_requests, want_sect + 2 * WARPS, 3 * WARPS);
  sim_free(dev, st); sim_free(dev, sh); sim_free(dev, a); sim_free(dev, out);
}

/* The last warp repeats the others' pattern shifted by k elements, so the window test of the
 * remembered pattern (sim_memo.hit_lo) decides: shifted to the very first or the very last
 * element of s it runs; one element further, into the array declared before s or after it, it is
 * caught at the lane that left s, though the block's shared memory holds that address. */
static void test_shared_edges(sim_device *dev, sim_module *m, float *out) {
  static const struct {
    int k, ok;
    const char *what;
  } cases[] = {
      {-224, 1, "index 0 of s[256]"}, /* lanes 0..31 read s[0..31] */
      {-225, 0, "index -1 of s[256] is 1 element (4 bytes) before the start of __shared__ s"},
      {0, 1, "index 255 of s[256]"},
      {1, 0, "index 256 of s[256] (elements of 4 bytes) is 1 element (4 bytes) past the end of "
             "__shared__ s"},
  };
  char err[2048];
  int all = 1;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int k = cases[c].k;
    void *args[] = {&out, &k};
    for (int i = 0; i < 256; i++) out[i] = 0;
    int rc = tu_launch(dev, sim_module_kernel(m, "sh_edge"), 1, 256, 0, args, 1, NULL, err,
                       sizeof err);
    int lane = k < 0 ? 224 : 255; /* the lane that reads the extreme element */
    int good = cases[c].ok ? rc == 0 && out[lane] == (float)(lane + k) - 3.0f
                           : rc < 0 && has(err, cases[c].what) &&
                                 has(err, k < 0 ? "thread (224,0,0)" : "thread (255,0,0)");
    if (!good) printf("# k=%d: rc=%d out[%d]=%g %s\n", k, rc, lane, out[lane], rc ? err : "");
    all &= good;
  }
  tu_check(all, "a remembered shared pattern shifted to either end of its array runs, and one "
           "element past either end is caught", " ");
}

/* Every warp has the same pattern, so all but the first take the remembered one; the last warp
 * runs off the end and must still be caught, by the right lane, with nothing written. */
static void test_checks(sim_device *dev, sim_module *m) {
  char err[2048];
  float *a = sim_malloc(dev, 1024 * 4, "f32[1024]", err, sizeof err), *out = sim_malloc(dev, 1024 * 4, "f32[1024]", err, sizeof err);
  for (int i = 0; i < 1024; i++) out[i] = -1;
  int k = 16;
  void *args[] = {&a, &out, &k};
  int rc = tu_launch(dev, sim_module_kernel(m, "shift_oob"), 4, 256, 0, args, 1, NULL, err, sizeof err);
  tu_check(rc < 0 && has(err, "out-of-bounds global load") && has(err, "block (3,0,0), thread (240,0,0)") &&
               has(err, "index 1024 of f32[1024]"),
           "a repeated global pattern that runs off the end is caught at its first bad lane", "rc=%d msg: %s", rc, err);
  tu_check(out[1023 - 16] == -1.0f, "the warp that ran off the end wrote nothing", "out[1007] = %g", out[1023 - 16]);

  void *sargs[] = {&out, &k};
  k = 32;
  rc = tu_launch(dev, sim_module_kernel(m, "sh_oob"), 1, 256, 0, sargs, 1, NULL, err, sizeof err);
  tu_check(rc < 0 && has(err, "out-of-bounds shared load") && has(err, "thread (224,0,0)"),
           "a shifted shared pattern past the array's end is caught", "rc=%d msg: %s", rc, err);
  k = 0;
  rc = tu_launch(dev, sim_module_kernel(m, "sh_oob"), 1, 256, 0, sargs, 1, NULL, err, sizeof err);
  tu_check(rc == 0 && out[255] == 255.0f, "the same kernel in bounds runs", "rc=%d %s out[255]=%g", rc, rc ? err : "", out[255]);

  test_shared_edges(dev, m, out);

  void *margs[] = {&a, &out};
  rc = tu_launch(dev, sim_module_kernel(m, "misal"), 4, 256, 0, margs, 1, NULL, err, sizeof err);
  tu_check(rc < 0 && has(err, "misaligned global load of 4 bytes") && has(err, "block (3,0,0), thread (0,0,0)"),
           "a repeated pattern shifted off alignment is caught", "rc=%d msg: %s", rc, err);
  sim_free(dev, a);
  sim_free(dev, out);
}

int main(void) {
  tu_plan(10);
  sim_device *dev = sim_device_new(NULL);
  sim_module *m = tu_module("compile pattern kernels", src);
  if (!m) return 1;
  test_counts(dev, m, 1);
  test_counts(dev, m, 2);
  test_checks(dev, m);
  sim_module_free(m);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
