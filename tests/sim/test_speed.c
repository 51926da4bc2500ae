/* test_speed.c: measures simulated thread-instructions per second for a vector add and a 16x16
 * tiled matmul with checking and counters on, on one host thread and on all cores. Prints the
 * figures (# lines) and checks only that the results are right: timing is not asserted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static const char *src =
    TU_SRC_VADD
    TU_SRC_MM_TILED;

int main(void) {
  tu_plan(4);
  sim_device *dev = sim_device_new(NULL);
  sim_module *m = tu_module("compile speed kernels", src);
  if (!m) return 1;
  char err[2048];
  int n = 1 << 22, mn = 256;
  float *a = sim_malloc(dev, (size_t)n * 4, "f32[4M]", err, sizeof err), *b = sim_malloc(dev, (size_t)n * 4, "f32[4M]", err, sizeof err);
  float *c = sim_malloc(dev, (size_t)n * 4, "f32[4M]", err, sizeof err);
  for (int i = 0; i < n; i++) { a[i] = (float)i; b[i] = 2.0f; }
  for (int threads = 1; threads <= 2; threads++) {
    sim_launch_opts o = {0};
    o.threads = threads;
    sim_stats st;
    void *args[] = {&a, &b, &c, &n};
    sim_dim3 g = {(unsigned)(n / 256), 1, 1}, blk = {256, 1, 1};
    double t0 = tu_now();
    int rc = sim_launch(dev, sim_module_kernel(m, "vadd"), g, blk, 0, args, &o, &st, err, sizeof err);
    double dt = tu_now() - t0;
    int bad = 0;
    for (int i = 0; i < n; i++) bad += c[i] != (float)i + 2.0f;
    char name[96];
    snprintf(name, sizeof name, "speed vadd (%d host thread%s) computes correctly", threads, threads > 1 ? "s" : "");
    tu_check(rc == 0 && !bad, name, "rc=%d bad=%d %s", rc, bad, rc ? err : "");
    printf("# sim_thread_insts_per_s vadd threads=%d: %.3g (%llu thread insts in %.3f s)\n", threads,
           (double)st.total.thread_insts / dt, (unsigned long long)st.total.thread_insts, dt);
    float *A = a, *B = b, *C = c;
    for (int i = 0; i < mn * mn; i++) { A[i] = (float)(i % 7); B[i] = (float)(i % 5) * 0.5f; }
    void *margs[] = {&A, &B, &C, &mn};
    sim_dim3 mg = {(unsigned)mn / 16, (unsigned)mn / 16, 1}, mb = {16, 16, 1};
    t0 = tu_now();
    rc = sim_launch(dev, sim_module_kernel(m, "mm_tiled"), mg, mb, 0, margs, &o, &st, err, sizeof err);
    dt = tu_now() - t0;
    float ref = 0;
    for (int k = 0; k < mn; k++) ref += A[5 * mn + k] * B[k * mn + 7];
    snprintf(name, sizeof name, "speed tiled matmul (%d host thread%s) computes correctly", threads, threads > 1 ? "s" : "");
    tu_check(rc == 0 && C[5 * mn + 7] == ref, name, "rc=%d got %g want %g %s", rc, C[5 * mn + 7], ref, rc ? err : "");
    printf("# sim_thread_insts_per_s matmul16 threads=%d: %.3g (%llu thread insts in %.3f s)\n", threads,
           (double)st.total.thread_insts / dt, (unsigned long long)st.total.thread_insts, dt);
    for (int i = 0; i < n; i++) { a[i] = (float)i; b[i] = 2.0f; }
  }
  sim_module_free(m);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
