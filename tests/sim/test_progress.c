/* test_progress.c: sim_launch_opts.progress, the hook a front end draws a progress bar with.
 * Its contract (sim.h): called on the launching thread only, not before 100 ms, at most every
 * 100 ms, blocks_done never decreasing, and one last call with the final count if it was called
 * at all; zero-initialised options (or a short launch) mean no call.
 *
 * The long launch must last a few hundred milliseconds on any machine, fast or slow, sanitised
 * or not: its blocks do a little work each unless a stop flag in device memory is set, and the
 * callback sets it on its third call, so the remaining blocks end at once. Another launch is
 * stopped through opts.interrupt from the callback, which must still get its final call. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static const char *src =
    "extern \"C\" __global__ void slow(volatile const int *stop, float *out, int iters) {\n"
    "  if (*stop) return;\n"
    "  float x = threadIdx.x;\n"
    "  for (int i = 0; i < iters; i++) x = x * 0.999f + 1.0f;\n"
    "  out[threadIdx.x] = x;\n"
    "}\n";

typedef struct calls {
  int n;                       /* calls so far */
  unsigned long long done[64], total[64];
  double at[64];               /* seconds since the launch began */
  int other_thread;            /* a call came from a thread other than the launching one */
  pthread_t launcher;
  double t0;
  int *stop;                   /* device flag the kernel polls; set on the third call */
  volatile sig_atomic_t *interrupt; /* or, when not NULL, this is set on the second call */
} calls;

static void on_progress(unsigned long long done, unsigned long long total, void *ud) {
  calls *c = ud;
  if (!pthread_equal(pthread_self(), c->launcher)) c->other_thread = 1;
  if (c->n < 64) {
    c->done[c->n] = done;
    c->total[c->n] = total;
    c->at[c->n] = tu_now() - c->t0;
  }
  ++c->n;
  if (c->interrupt && c->n == 2) *c->interrupt = 1;
  else if (!c->interrupt && c->n == 3) *c->stop = 1;
}

static void test_long_launch(sim_device *dev, sim_module *m, int threads) {
  char err[2048], name[160];
  int *stop = sim_malloc(dev, 4, "i32[1]", err, sizeof err);
  float *out = sim_malloc(dev, 64 * 4, "f32[64]", err, sizeof err);
  calls c;
  memset(&c, 0, sizeof c);
  c.launcher = pthread_self();
  c.stop = stop;
  *stop = 0;
  int iters = 800;
  unsigned grid = 50000; /* several seconds of work if the flag were never set */
  void *args[] = {&stop, &out, &iters};
  sim_launch_opts o = {0};
  o.threads = threads;
  o.progress = on_progress;
  o.progress_ud = &c;
  sim_dim3 g = {grid, 1, 1}, b = {64, 1, 1};
  c.t0 = tu_now();
  int rc = sim_launch(dev, sim_module_kernel(m, "slow"), g, b, 0, args, &o, NULL, err, sizeof err);
  double dt = tu_now() - c.t0;
  int n = c.n < 64 ? c.n : 64, monotone = 1, spaced = 1, totals = 1;
  for (int i = 0; i < n; i++) {
    totals &= c.total[i] == grid && c.done[i] <= grid;
    if (i > 0) monotone &= c.done[i] >= c.done[i - 1];
    if (i > 0 && i < n - 1) spaced &= c.at[i] - c.at[i - 1] >= 0.09; /* the final call may come sooner */
  }
  const char *sfx = threads > 1 ? "s" : "";
  snprintf(name, sizeof name, "progress: a long launch reports, then once more with every block done (%d host thread%s)", threads, sfx);
  tu_check(rc == 0 && n >= 4 && c.done[n - 1] == grid, name, "rc=%d %s calls %d, last done %llu of %u, %.2f s", rc,
           rc ? err : "", c.n, n ? c.done[n - 1] : 0ull, grid, dt);
  snprintf(name, sizeof name, "progress: first call after 100 ms, then at most every 100 ms (%d host thread%s)", threads, sfx);
  tu_check(n > 0 && c.at[0] >= 0.095 && spaced, name, "first at %.3f s, spaced %d", n ? c.at[0] : -1.0, spaced);
  snprintf(name, sizeof name, "progress: counts never decrease and name the grid's block count (%d host thread%s)", threads, sfx);
  tu_check(monotone && totals, name, "monotone %d totals %d", monotone, totals);
  snprintf(name, sizeof name, "progress: called on the launching thread only (%d host thread%s)", threads, sfx);
  tu_check(n > 0 && !c.other_thread, name, "calls %d", n);
  sim_free(dev, stop);
  sim_free(dev, out);
}

static void test_interrupted(sim_device *dev, sim_module *m) {
  char err[2048];
  int *stop = sim_malloc(dev, 4, "i32[1]", err, sizeof err);
  float *out = sim_malloc(dev, 64 * 4, "f32[64]", err, sizeof err);
  volatile sig_atomic_t flag = 0;
  calls c;
  memset(&c, 0, sizeof c);
  c.launcher = pthread_self();
  c.stop = stop;
  c.interrupt = &flag;
  *stop = 0;
  int iters = 800;
  void *args[] = {&stop, &out, &iters};
  sim_launch_opts o = {0};
  o.threads = 2;
  o.interrupt = &flag;
  o.progress = on_progress;
  o.progress_ud = &c;
  sim_dim3 g = {50000, 1, 1}, b = {64, 1, 1};
  int rc = sim_launch(dev, sim_module_kernel(m, "slow"), g, b, 0, args, &o, NULL, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "interrupted") && c.n == 3 && c.done[2] >= c.done[1] && c.done[2] < 50000 && !c.other_thread,
           "progress: a launch stopped from the callback gets a final call with its final count",
           "rc=%d msg '%s' calls %d done %llu", rc, err, c.n, c.n >= 3 ? c.done[2] : 0ull);
  sim_free(dev, stop);
  sim_free(dev, out);
}

static void test_short_launch(sim_device *dev, sim_module *m) {
  char err[2048];
  int *stop = sim_malloc(dev, 4, "i32[1]", err, sizeof err);
  float *out = sim_malloc(dev, 64 * 4, "f32[64]", err, sizeof err);
  calls c;
  memset(&c, 0, sizeof c);
  c.launcher = pthread_self();
  c.stop = stop;
  int iters = 10;
  void *args[] = {&stop, &out, &iters};
  sim_launch_opts o = {0};
  o.threads = 2;
  o.progress = on_progress;
  o.progress_ud = &c;
  sim_dim3 g = {16, 1, 1}, b = {64, 1, 1};
  int rc = sim_launch(dev, sim_module_kernel(m, "slow"), g, b, 0, args, &o, NULL, err, sizeof err);
  tu_check(rc == 0 && c.n == 0, "progress: a short launch never calls it", "rc=%d %s calls %d", rc, rc ? err : "", c.n);
  sim_launch_opts zero;
  memset(&zero, 0, sizeof zero);
  rc = sim_launch(dev, sim_module_kernel(m, "slow"), g, b, 0, args, &zero, NULL, err, sizeof err);
  tu_check(rc == 0 && out[63] > 0, "progress: zero-initialised options launch without a callback", "rc=%d %s", rc, rc ? err : "");
  sim_free(dev, stop);
  sim_free(dev, out);
}

int main(void) {
  tu_plan(11);
  sim_device *dev = sim_device_new(NULL);
  sim_module *m = tu_module("compile progress kernel", src);
  if (!m) return 1;
  test_long_launch(dev, m, 1);
  test_long_launch(dev, m, 2);
  test_interrupted(dev, m);
  test_short_launch(dev, m);
  sim_module_free(m);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
