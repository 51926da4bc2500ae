/* test_regions.c: freed device arrays of a megabyte or more keep their pages for the next array of
 * the same size (sim_regions.c). What must hold: an array always starts as zeros, whether its
 * pages are fresh or were another array's, filled or touched in one page only; a size that was
 * not freed gets fresh pages; no more than SIM_KEEP_REGIONS regions and 512 MiB are kept; and a
 * kernel's writes to a reused array are checked against its bounds as to any other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "nvrtc_util.h"
#include "sim_int.h"

#define MIB ((size_t)1 << 20)

static char err[1024];

/* Whether the n bytes at p are all zero. */
static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static void test_zeroed(sim_device *dev) {
  size_t n = 4 * MIB + 100; /* not a whole number of pages */
  unsigned char *a = sim_malloc(dev, n, "a", err, sizeof err);
  memset(a, 0xab, n);
  sim_free(dev, a);
  unsigned char *b = sim_malloc(dev, n, "b", err, sizeof err);
  tu_check(b == a, "a freed array's pages go to the next array of its size", "%p then %p",
           (void *)a, (void *)b);
  tu_check(b && all_zero(b, n), "an array on a filled array's pages starts as zeros", "%s", "");
  /* one page written in the middle, the rest never touched */
  b[2 * MIB + 5] = 7;
  sim_free(dev, b);
  unsigned char *c = sim_malloc(dev, n, "c", err, sizeof err);
  tu_check(c && all_zero(c, n), "an array on a partly touched array's pages starts as zeros", "%s",
           "");
  unsigned char *d = sim_malloc(dev, 6 * MIB, "d", err, sizeof err);
  tu_check(d && d != c && all_zero(d, 6 * MIB), "another size gets fresh zeroed pages", "%p",
           (void *)d);
  sim_free(dev, c);
  sim_free(dev, d);
}

static void test_bounded(sim_device *dev) {
  sim_regions_release(dev);
  void *p[12];
  for (int i = 0; i < 12; i++) p[i] = sim_malloc(dev, (size_t)(i + 1) * MIB, "p", err, sizeof err);
  for (int i = 0; i < 12; i++) sim_free(dev, p[i]);
  tu_check(dev->regions.n == SIM_KEEP_REGIONS, "at most SIM_KEEP_REGIONS regions are kept",
           "%d kept", dev->regions.n);
  /* 300 MiB then 300 MiB: the second pushes the first out (512 MiB at most) */
  void *big1 = sim_malloc(dev, 300 * MIB, "big1", err, sizeof err);
  void *big2 = sim_malloc(dev, 300 * MIB, "big2", err, sizeof err);
  sim_free(dev, big1);
  sim_free(dev, big2);
  tu_check(dev->regions.bytes <= 512 * MIB, "at most 512 MiB are kept", "%zu bytes kept",
           dev->regions.bytes);
  void *huge = sim_malloc(dev, 600 * MIB, "huge", err, sizeof err);
  sim_free(dev, huge);
  size_t before = dev->regions.bytes;
  tu_check(before <= 512 * MIB, "an array over the whole allowance is given back at once",
           "%zu bytes kept", before);
  tu_check(sim_regions_release(dev) > 0 && dev->regions.n == 0 && dev->regions.bytes == 0,
           "releasing gives every kept region back", "%d left", dev->regions.n);
}

/* Kept regions never cost an allocation: under an address-space limit that they fill, a new
 * array of another size still comes, once they have gone back. (Skipped under AddressSanitizer,
 * whose shadow memory an address-space limit breaks.) */
static void test_limit(sim_device *dev) {
#if defined(__SANITIZE_ADDRESS__)
  (void)dev;
  tu_check(1, "kept regions go back before a mapping is refused # SKIP under ASan", "%s", "");
#else
  sim_regions_release(dev);
  void *p[6];
  for (int i = 0; i < 6; i++) p[i] = sim_malloc(dev, 64 * MIB, "kept", err, sizeof err);
  for (int i = 0; i < 6; i++) sim_free(dev, p[i]);
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f && fscanf(f, "%lu", &pages) != 1) pages = 0;
  if (f) fclose(f);
  struct rlimit old, lim;
  getrlimit(RLIMIT_AS, &old);
  lim = old;
  lim.rlim_cur = (rlim_t)pages * 4096 + 128 * MIB; /* room for 128 MiB more, beside the 384 */
  setrlimit(RLIMIT_AS, &lim);
  void *q = sim_malloc(dev, 200 * MIB, "new", err, sizeof err);
  setrlimit(RLIMIT_AS, &old);
  tu_check(q != NULL && dev->regions.n == 0, "kept regions go back before a mapping is refused",
           "%p, %d kept: %s", q, dev->regions.n, q ? "" : err);
  if (q) sim_free(dev, q);
#endif
}

/* A kernel that writes one past the end of a reused array is still stopped there. */
static void test_bounds_on_reuse(sim_device *dev) {
  static const char src[] = "extern \"C\" __global__ void fill(int *a, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i <= n) a[i] = i;\n" /* one past the end */
                            "}\n";
  sim_module *m = tu_module("compile fill", src);
  if (!m) return;
  int n = (int)(MIB / sizeof(int)) * 2;
  int *a = sim_malloc(dev, (size_t)n * sizeof(int), "first", err, sizeof err);
  sim_free(dev, a);
  int *b = sim_malloc(dev, (size_t)n * sizeof(int), "second", err, sizeof err);
  void *args[] = {&b, &n};
  int rc = tu_launch(dev, tu_kernel(m, "fill"), (unsigned)(n / 256 + 1), 256, 0, args, 1, NULL,
                     err, sizeof err);
  const char *want = "of second (parameter 0) is 1 element (4 bytes) past the end";
  tu_check(b == a && rc != 0 && strstr(err, want), "a write past the end of a reused array is caught",
           "rc %d: %.200s", rc, err);
  sim_free(dev, b);
  sim_module_free(m);
}

int main(void) {
  tu_plan(10);
  sim_device *dev = sim_device_new(NULL);
  test_zeroed(dev);
  test_bounded(dev);
  test_limit(dev);
  test_bounds_on_reuse(dev);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
