/* test_sanitize.c: the simulator's debugging aids through sim.h: races under SIM_RACE_WARN (the
 * launch completes, opts->warning says why), the checks of sim_launch_opts.sanitize (NaN origin,
 * never-written memory, barriers not every thread reaches), and element watches, each with its
 * message or record asserted, and each silent on a correct kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static sim_module *mod;
static char err[4096], warning[2048];

static const char *src =
    "extern \"C\" __global__ void racy(float *p) {\n"
    "  __shared__ float s[64];\n"
    "  s[threadIdx.x] = p[threadIdx.x];\n"
    "  p[threadIdx.x] = s[(threadIdx.x + 32) & 63];\n"
    "}\n"
    "extern \"C\" __global__ void lockstep(float *p) {\n"
    "  volatile __shared__ float s[64];\n"
    "  int t = threadIdx.x;\n"
    "  s[t] = p[t]; s[t + 32] = p[t + 32];\n"
    "  s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8];\n"
    "  s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];\n"
    "  if (t == 0) p[0] = s[0];\n"
    "}\n"
    "extern \"C\" __global__ void divide(const float *x, const float *y, float *z) {\n"
    "  int i = threadIdx.x;\n"
    "  z[i] = x[i] / y[i];\n"
    "}\n"
    "extern \"C\" __global__ void copy(const float *x, float *y, int n) {\n"
    "  int i = threadIdx.x;\n"
    "  if (i < n) y[i] = x[i];\n"
    "}\n"
    "extern \"C\" __global__ void halo(float *p) {\n"
    "  __shared__ float s[33];\n"
    "  s[threadIdx.x] = 1.0f;\n"
    "  __syncthreads();\n"
    "  p[threadIdx.x] = s[threadIdx.x + 1];\n"
    "}\n"
    "extern \"C\" __global__ void partbar(float *p) {\n"
    "  if (threadIdx.x < 40) {\n"
    "    p[threadIdx.x] = 1.0f;\n"
    "    __syncthreads();\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void bump(int *c) { atomicAdd(c, 2); c[1] = threadIdx.x; }\n";

static sim_dim3 d3(unsigned x) { sim_dim3 d = {x, 1, 1}; return d; }

static int run(const char *k, unsigned block, void **args, int sanitize, int race) {
  sim_launch_opts o = {0};
  o.threads = 1;
  o.sanitize = sanitize;
  o.race_check = race;
  o.warning = warning;
  o.warninglen = sizeof warning;
  err[0] = 0;
  strcpy(warning, "stale");
  return sim_launch(dev, tu_kernel(mod, k), d3(1), d3(block), 0, args, &o, NULL, err, sizeof err);
}

static float *floats(int n, float v) {
  float *p = sim_malloc(dev, (size_t)n * 4, "f32[64]", err, sizeof err);
  for (int i = 0; i < n; i++) p[i] = v;
  return p;
}

static void test_race_warn(void) {
  float *p = floats(64, 1.0f);
  void *args[] = {&p};
  int rc = run("racy", 64, args, 0, SIM_RACE_WARN);
  tu_check(rc == 0 && strstr(warning, "shared-memory race between warps") &&
               strstr(warning, "kernel.cu:3") && strstr(warning, "more racing accesses"),
           "under SIM_RACE_WARN a race completes the launch with a warning", "rc=%d warning: %s",
           rc, warning);
  rc = run("racy", 64, args, 0, SIM_RACE_FAIL);
  tu_check(rc < 0 && strstr(err, "shared-memory race between warps") && !warning[0],
           "under SIM_RACE_FAIL the same race fails it", "rc=%d msg: %s", rc, err);
  rc = run("lockstep", 32, args, 0, SIM_RACE_WARN);
  tu_check(rc == 0 && !warning[0], "a warp's lockstep accesses do not warn", "rc=%d w: %s", rc,
           warning);
  rc = run("lockstep", 32, args, 0, SIM_RACE_FAIL);
  tu_check(rc < 0 && strstr(err, "between lanes of one warp"), "and fail the strict check",
           "rc=%d msg: %s", rc, err);
  sim_free(dev, p);
}

static void test_nan(void) {
  float *x = floats(32, 1.0f), *y = floats(32, 2.0f), *z = floats(32, 0.0f);
  y[5] = 0.0f;
  void *args[] = {&x, &y, &z};
  int rc = run("divide", 32, args, SIM_SAN_NAN, 0);
  tu_check(rc < 0 && strstr(err, "thread (5,0,0) of block (0,0,0), kernel.cu:16") &&
               strstr(err, "div.rn.f32 of 1.0 by 0.0 gave inf"),
           "the NaN check names the first infinity", "rc=%d msg: %s", rc, err);
  y[5] = 4.0f;
  rc = run("divide", 32, args, SIM_SAN_NAN, 0);
  tu_check(rc == 0 && z[5] == 0.25f, "and nothing on finite results", "rc=%d msg: %s", rc, err);
  sim_free(dev, x);
  sim_free(dev, y);
  sim_free(dev, z);
}

static void test_init(void) {
  float *x = floats(32, 3.0f), *y = floats(32, 0.0f);
  int n = 32;
  void *args[] = {&x, &y, &n};
  sim_mark_unset(dev, x, 32 * 4);
  sim_mark_written(dev, x, 16 * 4);
  int rc = run("copy", 32, args, SIM_SAN_INIT, 0);
  tu_check(rc < 0 && strstr(err, "thread (16,0,0)") && strstr(err, "element 16 of f32[64]") &&
               strstr(err, "kernel.cu:20"),
           "the init check names the first unwritten element", "rc=%d msg: %s", rc, err);
  n = 16;
  rc = run("copy", 32, args, SIM_SAN_INIT, 0);
  tu_check(rc == 0, "what the host wrote may be read", "rc=%d msg: %s", rc, err);
  void *back[] = {&y, &x, &n}; /* a kernel writes x[0..15] again: still fine */
  n = 32;
  rc = run("copy", 32, back, 0, 0);
  void *again[] = {&x, &y, &n};
  rc = run("copy", 32, again, SIM_SAN_INIT, 0);
  tu_check(rc == 0, "a kernel's writes, made with the check off, count", "rc=%d msg: %s", rc, err);
  void *h[] = {&y};
  rc = run("halo", 32, h, SIM_SAN_INIT, 0);
  tu_check(rc < 0 && strstr(err, "thread (31,0,0)") && strstr(err, "element 32 of __shared__ s"),
           "a shared element no thread wrote", "rc=%d msg: %s", rc, err);
  sim_free(dev, x);
  sim_free(dev, y);
}

static void test_sync(void) {
  float *p = floats(64, 0.0f);
  void *args[] = {&p};
  int rc = run("partbar", 64, args, SIM_SAN_SYNC, 0);
  tu_check(rc < 0 && strstr(err, "was reached by 40 of the 64 threads") &&
               strstr(err, "24 exited before reaching it") && strstr(err, "kernel.cu:31"),
           "the sync check counts who came and who did not", "rc=%d msg: %s", rc, err);
  sim_free(dev, p);
}

static void test_watch(void) {
  int *c = sim_malloc(dev, 8, "i32[2]", err, sizeof err);
  c[0] = c[1] = 0;
  void *args[] = {&c};
  int id = sim_watch_add(dev, c, 4), id1 = sim_watch_add(dev, c + 1, 4);
  int rc = run("bump", 32, args, 0, 0);
  uint64_t total = 0, total1 = 0;
  const sim_watch_write *w0 = sim_watch_get(dev, id, 0, &total);
  const sim_watch_write *w31 = sim_watch_get(dev, id, 31, NULL);
  const sim_watch_write *s = sim_watch_get(dev, id1, 31, &total1);
  tu_check(rc == 0 && total == 32 && w0 && w31 && !strcmp(w0->op, "atomicAdd") &&
               w0->old == 0 && w0->nv == 2 && w31->old == 62 && w31->nv == 64 &&
               !strcmp(w31->where, "kernel.cu:34") && !strcmp(w31->kernel, "bump"),
           "a watch records each lane's atomic", "rc=%d total=%llu", rc, (unsigned long long)total);
  tu_check(total1 == 32 && s && !strcmp(s->op, "store") && s->thread[0] == 31 && s->old == 30 &&
               s->nv == 31,
           "and each lane's store, in lane order", "total=%llu", (unsigned long long)total1);
  sim_watch_clear(dev, id);
  sim_free(dev, c); /* ends the watches on it */
  int *d = sim_malloc(dev, 8, "i32[2]", err, sizeof err);
  void *a2[] = {&d};
  run("bump", 32, a2, 0, 0);
  sim_watch_get(dev, id, 0, &total);
  tu_check(total == 0 && !sim_watch_get(dev, id, 0, NULL),
           "a cleared watch on a freed array records nothing more", "total=%llu",
           (unsigned long long)total);
  sim_watch_remove(dev, id);
  sim_watch_remove(dev, id1);
  tu_check(sim_watch_add(dev, d, 9) < 0, "a watch is one element of 1 to 8 bytes", "accepted 9");
  sim_free(dev, d);
}

int main(void) {
  tu_plan(15);
  dev = sim_device_new(NULL);
  mod = tu_module("compile", src);
  if (!mod) return 1;
  test_race_warn();
  test_nan();
  test_init();
  test_sync();
  test_watch();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
