/* test_race_log.c: the race checker's put-off checks (sim_race.c). Shared accesses that cannot
 * race when they are made (a load of bytes nothing of the barrier interval wrote, a store to
 * bytes nothing touched, a store over the words its own lanes just loaded) are logged and checked
 * only when a later access of the interval overlaps them; a barrier forgets them unchecked. Each
 * kernel here makes such an access and then one that races with it, in the ways the log can get
 * it wrong: checked too late, in the wrong order, lost when the log fills or when the worker
 * parks the block to run another. Every race must be found as checking at once finds it: the same
 * first race, worded the same, and the same count of them. The messages and counts asserted are
 * what the checker gave before accesses were ever put off. */
#include <stdio.h>
#include <string.h>

#include "nvrtc_util.h"

static const char *src =
    "extern \"C\" {\n"
    /* a store over the words each lane just loaded (the log turns the load into the store), then a
     * read of the other warp's words */
    "__global__ void update_then_peek(float *a) {\n"
    "  __shared__ float buf[64];\n"
    "  int t = threadIdx.x;\n"
    "  buf[t] = a[t];\n"
    "  __syncthreads();\n"
    "  buf[t] += 1.0f;\n"
    "  a[t] = buf[t ^ 32];\n"
    "}\n"
    /* byte loads of the other warp's words, which that warp then writes whole */
    "__global__ void bytes_then_words(float *a) {\n"
    "  __shared__ float buf[64];\n"
    "  int t = threadIdx.x;\n"
    "  buf[t] = a[t];\n"
    "  __syncthreads();\n"
    "  float v = ((volatile unsigned char *)buf)[(t ^ 32) * 4 + (t & 3)];\n"
    "  buf[t] = v;\n"
    "  a[t] = v;\n"
    "}\n"
    /* warp 0 reads row 0 first, then more rows than the log holds; warp 1 writes row 0 */
    "__global__ void long_log(float *a, int n) {\n"
    "  __shared__ float buf[2048];\n"
    "  int t = threadIdx.x;\n"
    "  for (int i = t; i < 2048; i += blockDim.x) buf[i] = a[i];\n"
    "  __syncthreads();\n"
    "  float v = 0;\n"
    "  if (t < 32) for (int i = 0; i < n; i++) v += buf[i == 0 ? t : 32 + (i * 32 + t) % 2016];\n"
    "  else buf[t - 32] = 2.0f;\n"
    "  a[t] = v;\n"
    "}\n"
    /* loads before a barrier, stores after: no race */
    "__global__ void across_barrier(float *a) {\n"
    "  __shared__ float buf[64];\n"
    "  int t = threadIdx.x;\n"
    "  buf[t] = a[t];\n"
    "  __syncthreads();\n"
    "  float v = buf[63 - t];\n"
    "  __syncthreads();\n"
    "  buf[t] = v * 2.0f;\n"
    "  __syncthreads();\n"
    "  a[t] = buf[t];\n"
    "}\n"
    /* block 0's warps read each other's words, then wait for block 1, then write their own: the
     * reads are still unchecked when block 0 is parked */
    "__global__ void parked(float *a, volatile int *flag) {\n"
    "  __shared__ float buf[64];\n"
    "  int t = threadIdx.x;\n"
    "  buf[t] = a[t];\n"
    "  __syncthreads();\n"
    "  float v = buf[t ^ 32];\n"
    "  if (blockIdx.x == 0 && (t & 31) == 0) while (flag[0] == 0) {}\n"
    "  if (blockIdx.x == 1 && t == 0) flag[0] = 1;\n"
    "  buf[t] = v + 1.0f;\n"
    "  a[blockIdx.x * 64 + t] = v;\n"
    "}\n"
    /* stores to words the interval has not touched, then each warp reads the other's */
    "__global__ void store_then_swap(float *a) {\n"
    "  __shared__ float buf[64];\n"
    "  int t = threadIdx.x;\n"
    "  buf[t] = a[t];\n"
    "  a[t] = buf[t ^ 32];\n"
    "}\n"
    "}\n";

static sim_device *dev;
static sim_module *mod;
static char err[4096], warning[4096];
static float *a;
static int *flag;

/* Runs kernel k on a fresh a (a[i] = i) with 64 threads a block, race checking in mode. */
static int run(const char *k, unsigned grid, void **args, int mode, int threads) {
  for (int i = 0; i < 4096; i++) a[i] = (float)i;
  flag[0] = 0;
  warning[0] = err[0] = 0;
  sim_launch_opts o = {0};
  o.threads = threads;
  o.race_check = mode;
  o.warning = warning;
  o.warninglen = sizeof warning;
  sim_stats st;
  sim_dim3 g = {grid, 1, 1}, b = {64, 1, 1};
  return sim_launch(dev, tu_kernel(mod, k), g, b, 0, args, &o, &st, err, sizeof err);
}

/* The race is found as checking at once finds it: `first` words the first one, and under
 * warnings `more` counts the others ("(and 63 more racing accesses"); with 2 host threads only
 * the count is held to, the first race of several blocks being whichever a worker met first. */
static void races(const char *k, unsigned grid, void **args, const char *first,
                  const char *more) {
  char name[160];
  int rc = run(k, grid, args, SIM_RACE_FAIL, 1);
  snprintf(name, sizeof name, "%s: the strict check fails on the first race", k);
  tu_check(rc < 0 && strstr(err, first), name, "rc=%d msg: %s", rc, err);
  rc = run(k, grid, args, SIM_RACE_WARN, 1);
  snprintf(name, sizeof name, "%s: a warning names the same race and counts the others", k);
  tu_check(rc == 0 && strstr(warning, first) && strstr(warning, more), name, "rc=%d w: %s", rc,
           warning);
  rc = run(k, grid, args, SIM_RACE_WARN, 2);
  snprintf(name, sizeof name, "%s: the same count with 2 host threads", k);
  tu_check(rc == 0 && strstr(warning, more), name, "rc=%d w: %s", rc, warning);
}

int main(void) {
  tu_plan(17);
  dev = sim_device_new(NULL);
  mod = tu_module("compile", src);
  if (!mod) return 1;
  a = sim_malloc(dev, 4096 * 4, "f32[4096]", err, sizeof err);
  flag = sim_malloc(dev, 4, "i32[1]", err, sizeof err);
  int n = 1100; /* loads of long_log's warp 0: more than the log's 1024 entries */
  void *args[] = {&a}, *nargs[] = {&a, &n}, *fargs[] = {&a, &flag};
  races("update_then_peek", 1, args,
        "thread (32,0,0) (warp 1, lane 0) writes element 32 of __shared__ buf (byte offset 128) "
        "at kernel.cu:7, which thread (0,0,0) (warp 0, lane 0) read at kernel.cu:8",
        "(and 63 more racing accesses");
  races("bytes_then_words", 1, args,
        "thread (32,0,0) (warp 1, lane 0) reads byte offset 0 of __shared__ buf at kernel.cu:15, "
        "which thread (0,0,0) (warp 0, lane 0) wrote at kernel.cu:16",
        "(and 63 more racing accesses");
  races("long_log", 1, nargs,
        "thread (32,0,0) (warp 1, lane 0) writes element 0 of __shared__ buf (byte offset 0) at "
        "kernel.cu:26, which thread (0,0,0) (warp 0, lane 0) read at kernel.cu:25",
        "(and 31 more racing accesses");
  races("parked", 2, fargs,
        "thread (32,0,0) (warp 1, lane 0) reads element 0 of __shared__ buf (byte offset 0) at "
        "kernel.cu:45, which thread (0,0,0) (warp 0, lane 0) wrote at kernel.cu:48",
        "(and 127 more racing accesses");
  races("store_then_swap", 1, args,
        "thread (32,0,0) (warp 1, lane 0) writes element 32 of __shared__ buf (byte offset 128) "
        "at kernel.cu:54, which thread (0,0,0) (warp 0, lane 0) read at kernel.cu:55",
        "(and 63 more racing accesses");
  for (int mode = SIM_RACE_FAIL; mode <= SIM_RACE_WARN; mode++) {
    int rc = run("across_barrier", 1, args, mode, 1), right = 1;
    for (int t = 0; t < 64; t++) right &= a[t] == 2.0f * (float)(63 - t);
    tu_check(rc == 0 && !warning[0] && right,
             mode == SIM_RACE_FAIL ? "loads, a barrier, then stores: no race (strict)"
                                   : "loads, a barrier, then stores: no warning",
             "rc=%d msg: %s w: %s", rc, err, warning);
  }
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
