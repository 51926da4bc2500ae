/* test_order.c: sim_launch_opts.block_order, the order a launch hands out its blocks in
 * (sim_order.c). The blocks record it themselves (each takes a ticket with atomicAdd and writes
 * its linear index at the ticket's place): forward and reverse are exact, a shuffle is a
 * permutation of every block (grids of awkward sizes, one past a power of two, several host
 * threads) that its seed alone decides. Blocks that wait on one another still finish in every
 * order; the counters and the timing model's time are the same in every order; a value outside
 * SIM_ORDER_* is refused with a message naming the allowed ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static const char *src =
    "extern \"C\" __global__ void record(int *ticket, int *order) {\n"
    "  if (threadIdx.x == 0) {\n"
    "    int b = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;\n"
    "    order[atomicAdd(ticket, 1)] = b;\n"
    "  }\n"
    "}\n"
    /* block b waits for block b + 1: finishes in any order only if waiting blocks are parked */
    "extern \"C\" __global__ void chain(volatile int *flag, volatile int *val) {\n"
    "  int b = blockIdx.x, n = gridDim.x;\n"
    "  if (threadIdx.x == 0) {\n"
    "    int prev = 0;\n"
    "    if (b + 1 < n) {\n"
    "      while (flag[b + 1] == 0) {}\n"
    "      prev = val[b + 1];\n"
    "    }\n"
    "    val[b] = prev + b;\n"
    "    __threadfence();\n"
    "    flag[b] = 1;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void work(const float *x, float *y, float *total, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) { float v = x[i] * 2.0f + 1.0f; y[i] = v; atomicAdd(total, v); }\n"
    "}\n";

static const char *order_name[] = {"forward", "reverse", "shuffle"};

/* Runs record over grid g with the order, seed and host threads given; the recorded order in
 * out (n ints). Returns sim_launch's result. */
static int record(sim_device *dev, sim_module *m, sim_dim3 g, int order, uint64_t seed,
                  int threads, int *out, char *err, size_t errlen) {
  long long n = (long long)g.x * g.y * g.z;
  int *ticket = sim_malloc(dev, 4, "i32[1]", err, errlen);
  int *order_arr = sim_malloc(dev, (size_t)n * 4, "i32[n]", err, errlen);
  if (!ticket || !order_arr) return -1;
  void *args[] = {&ticket, &order_arr};
  sim_launch_opts o = {0};
  o.threads = threads;
  o.block_order = order;
  o.order_seed = seed;
  sim_dim3 b = {32, 1, 1};
  int rc = sim_launch(dev, sim_module_kernel(m, "record"), g, b, 0, args, &o, NULL, err, errlen);
  if (rc == 0 && *ticket != n) {
    snprintf(err, errlen, "%d tickets taken of %lld", *ticket, n);
    rc = -1;
  }
  memcpy(out, order_arr, (size_t)n * 4);
  sim_free(dev, ticket);
  sim_free(dev, order_arr);
  return rc;
}

/* 1 when out[0 .. n-1] holds every index below n once. */
static int is_permutation(const int *out, long long n) {
  char *seen = calloc((size_t)n, 1);
  int ok = seen != NULL;
  for (long long i = 0; ok && i < n; i++) {
    ok = out[i] >= 0 && out[i] < n && !seen[out[i]];
    if (ok) seen[out[i]] = 1;
  }
  free(seen);
  return ok;
}

static void test_exact(sim_device *dev, sim_module *m) {
  char err[1024] = "";
  sim_dim3 g = {3, 4, 5};
  int out[60], fwd = 1, rev = 1;
  int rc1 = record(dev, m, g, SIM_ORDER_FORWARD, 0, 1, out, err, sizeof err);
  for (int i = 0; i < 60; i++) fwd &= out[i] == i;
  int rc2 = record(dev, m, g, SIM_ORDER_REVERSE, 0, 1, out, err, sizeof err);
  for (int i = 0; i < 60; i++) rev &= out[i] == 59 - i;
  tu_check(rc1 == 0 && fwd, "order: forward runs blocks by linear index over a 3-D grid", "%s",
           err);
  tu_check(rc2 == 0 && rev, "order: reverse runs the last block first over a 3-D grid", "%s",
           err);
}

static void test_shuffle(sim_device *dev, sim_module *m) {
  char err[1024] = "";
  static const unsigned sizes[] = {1, 2, 3, 5, 64, 65, 1000, 4097, 100003};
  int ok = 1, rc = 0;
  unsigned bad = 0;
  int *out = malloc(100003 * sizeof *out), *again = malloc(100003 * sizeof *again);
  for (size_t i = 0; ok && i < sizeof sizes / sizeof *sizes; i++) {
    sim_dim3 g = {sizes[i], 1, 1};
    rc = record(dev, m, g, SIM_ORDER_SHUFFLE, 12345, 1, out, err, sizeof err);
    ok = rc == 0 && is_permutation(out, sizes[i]);
    if (!ok) bad = sizes[i];
  }
  tu_check(ok, "order: a shuffle runs every block once, whatever the grid's size",
           "grid %u: %s", bad, err);
  sim_dim3 g = {100003, 1, 1};
  int moved = 0, same = 1, other = 0;
  rc = record(dev, m, g, SIM_ORDER_SHUFFLE, 7, 1, out, err, sizeof err);
  rc |= record(dev, m, g, SIM_ORDER_SHUFFLE, 7, 1, again, err, sizeof err);
  for (int i = 0; i < 100003; i++) {
    moved += out[i] != i;
    same &= out[i] == again[i];
  }
  rc |= record(dev, m, g, SIM_ORDER_SHUFFLE, 8, 1, again, err, sizeof err);
  for (int i = 0; i < 100003; i++) other += out[i] != again[i];
  tu_check(rc == 0 && same && other > 99000 && moved > 99000,
           "order: a shuffle moves nearly every block, the same for a seed, another for another",
           "rc %d same %d, %d of 100003 moved, %d differ with another seed: %s", rc, same, moved,
           other, err);
  /* which worker runs which block is up to the operating system: every block once is all a
   * test can ask of several host threads */
  rc = record(dev, m, g, SIM_ORDER_SHUFFLE, 7, 4, again, err, sizeof err);
  tu_check(rc == 0 && is_permutation(again, 100003),
           "order: four host threads run a shuffled launch's every block once", "rc %d: %s", rc,
           err);
  free(out);
  free(again);
}

static void test_waits(sim_device *dev, sim_module *m) {
  char err[1024] = "";
  const int n = 64;
  int ok = 1, rc = 0, which = 0, threads = 1;
  for (int order = 0; order < 3 && ok; order++)
    for (int t = 1; t <= 3 && ok; t += 2) {
      int *flag = sim_malloc(dev, n * 4, "i32[64]", err, sizeof err);
      int *val = sim_malloc(dev, n * 4, "i32[64]", err, sizeof err);
      void *args[] = {&flag, &val};
      sim_launch_opts o = {0};
      o.threads = t;
      o.block_order = order;
      o.order_seed = 3;
      sim_dim3 g = {(unsigned)n, 1, 1}, b = {32, 1, 1};
      rc = sim_launch(dev, sim_module_kernel(m, "chain"), g, b, 0, args, &o, NULL, err,
                      sizeof err);
      ok = rc == 0 && val[0] == n * (n - 1) / 2;
      which = order;
      threads = t;
      sim_free(dev, flag);
      sim_free(dev, val);
    }
  tu_check(ok, "order: blocks that wait on later ones finish in every order",
           "%s with %d threads: rc %d %s", order_name[which], threads, rc, err);
}

/* The counters and the modelled time of `work` in the given order. */
static int work(sim_device *dev, sim_module *m, int order, sim_counters *c, double *us,
                char *err, size_t errlen) {
  const int n = 1 << 16;
  float *x = sim_malloc(dev, n * 4, "f32[n]", err, errlen);
  float *y = sim_malloc(dev, n * 4, "f32[n]", err, errlen);
  float *total = sim_malloc(dev, 4, "f32[1]", err, errlen);
  for (int i = 0; i < n; i++) x[i] = (float)(i % 17);
  void *args[] = {&x, &y, &total, (void *)&n};
  sim_launch_opts o = {0};
  o.block_order = order;
  o.order_seed = 99;
  o.model = 1;
  o.threads = 1; /* several workers add their doubles up in an order of their own */
  sim_stats st;
  sim_dim3 g = {n / 256, 1, 1}, b = {256, 1, 1};
  int rc = sim_launch(dev, sim_module_kernel(m, "work"), g, b, 0, args, &o, &st, err, errlen);
  sim_model_result r;
  if (rc == 0) rc = sim_model_launch(sim_device_info(dev), g, b, 0, &st.profile, &r);
  *c = st.total;
  *us = rc == 0 ? r.time_us : -1;
  sim_free(dev, x);
  sim_free(dev, y);
  sim_free(dev, total);
  return rc;
}

static void test_model(sim_device *dev, sim_module *m) {
  char err[1024] = "";
  sim_counters c[3];
  double us[3];
  int rc = 0;
  for (int order = 0; order < 3; order++) rc |= work(dev, m, order, &c[order], &us[order], err,
                                                     sizeof err);
  int same = 1;
  for (int order = 1; order < 3; order++)
    same &= memcmp(&c[order], &c[0], sizeof c[0]) == 0 && us[order] == us[0];
  tu_check(rc == 0 && same && us[0] > 0,
           "order: the counters and the modelled time are the same in every order",
           "rc %d: %.6f / %.6f / %.6f us, %s", rc, us[0], us[1], us[2], err);
}

static void test_bad(sim_device *dev, sim_module *m) {
  char err[1024] = "";
  int out[4];
  sim_dim3 g = {4, 1, 1};
  int rc = record(dev, m, g, 7, 0, 1, out, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "block_order 7 is not one of SIM_ORDER_FORWARD, "
                                 "SIM_ORDER_REVERSE, SIM_ORDER_SHUFFLE"),
           "order: a value outside SIM_ORDER_* is refused, naming the allowed ones", "rc %d: %s",
           rc, err);
}

int main(void) {
  tu_plan(8);
  sim_device *dev = sim_device_new(NULL);
  sim_module *m = tu_module("compile order kernels", src);
  if (!m) return 1;
  test_exact(dev, m);
  test_shuffle(dev, m);
  test_waits(dev, m);
  test_model(dev, m);
  test_bad(dev, m);
  sim_module_free(m);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
