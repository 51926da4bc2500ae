/* test_waits.c: blocks that wait on one another (sim_sched.c). Each kernel below only finishes
 * if a block that spins can be parked while a block started after it runs: with one host thread
 * the simulator used to run each block to its end, so the first wait spun forever. Each result is
 * checked against a reference computed here, with 1 host thread and with 3. Then the two launches
 * that cannot finish on any GPU: more blocks waiting than could be resident, and a flag that no
 * block sets; the watchdog must end them within seconds with a message that names the spinning
 * warps and their source line. And a wait the probe cannot recognise (the loop counts its tries)
 * still progresses, and Ctrl-C still ends a loop that never does. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvrtc_util.h"

static const char *src =
    "extern \"C\" __global__ void reverse_chain(volatile int *flag, volatile int *val) {\n"
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
    "extern \"C\" __global__ void grid_barrier(int *count, const int *in, volatile int *part, int *out, int rounds) {\n"
    "  __shared__ int s;\n"
    "  int b = blockIdx.x, n = gridDim.x;\n"
    "  for (int r = 0; r < rounds; r++) {\n"
    "    if (threadIdx.x == 0) s = 0;\n"
    "    __syncthreads();\n"
    "    atomicAdd(&s, in[b * blockDim.x + threadIdx.x] * (r + 1));\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0) {\n"
    "      part[r * n + b] = s;\n"
    "      __threadfence();\n"
    "      atomicAdd(count, 1);\n"
    "      while (atomicAdd(count, 0) < (r + 1) * n) {}\n"
    "      int t = 0;\n"
    "      for (int j = 0; j < n; j++) t += part[r * n + j];\n"
    "      out[r * n + b] = t;\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void prodcons(volatile int *ring, volatile int *head, volatile int *tail, int *out, int n) {\n"
    "  if (threadIdx.x != 0) return;\n"
    "  if (blockIdx.x == 1) {\n"
    "    for (int i = 0; i < n; i++) {\n"
    "      while (*head - *tail == 4) {}\n"
    "      ring[*head % 4] = i * i;\n"
    "      __threadfence();\n"
    "      *head = *head + 1;\n"
    "    }\n"
    "  } else {\n"
    "    int sum = 0;\n"
    "    for (int i = 0; i < n; i++) {\n"
    "      while (*tail == *head) {}\n"
    "      sum += ring[*tail % 4];\n"
    "      __threadfence();\n"
    "      *tail = *tail + 1;\n"
    "    }\n"
    "    out[0] = sum;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void never(volatile int *flag, int *out) {\n"
    "  if (threadIdx.x == 0) while (flag[0] == 0) {}\n"
    "  __syncthreads();\n"
    "  out[blockIdx.x] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void counted(volatile int *flag, int *out) {\n"
    "  if (blockIdx.x == 1) { flag[0] = 1; return; }\n"
    "  int tries = 0;\n"
    "  if (threadIdx.x == 0) while (flag[0] == 0) tries++;\n"
    "  out[threadIdx.x] = tries > 0;\n"
    "}\n";

static sim_device *dev;
static sim_module *mod;

/* ":N," where N is the line of src holding text: how a message names that source line. */
static const char *line_of(const char *text) {
  static char buf[4][32];
  static int k;
  int line = 1;
  const char *at = strstr(src, text);
  for (const char *p = src; at && p < at; p++) line += *p == '\n';
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], ":%d,", line);
  return buf[k];
}

static int *ints(int n, const char *label) {
  char err[512];
  int *p = sim_malloc(dev, (size_t)n * sizeof *p, label, err, sizeof err);
  if (!p) { printf("not ok - allocation: %s\n", err); exit(1); }
  return p;
}

static int launch(const char *kernel, unsigned grid, unsigned block, size_t shm, void **args, int threads, char *err,
                  size_t errlen, double *secs) {
  double t0 = tu_now();
  int rc = tu_launch(dev, sim_module_kernel(mod, kernel), grid, block, shm, args, threads, NULL, err, errlen);
  *secs = tu_now() - t0;
  return rc;
}

static void test_reverse(int threads) {
  int n = 64, *flag = ints(n, "i32[64]"), *val = ints(n, "i32[64]"), bad = -1;
  char err[4096], name[128];
  double s;
  void *args[] = {&flag, &val};
  int rc = launch("reverse_chain", (unsigned)n, 64, 0, args, threads, err, sizeof err, &s);
  for (int b = n - 1, want = 0; b >= 0 && rc == 0; b--) {
    want += b;
    if (val[b] != want && bad < 0) bad = b;
  }
  snprintf(name, sizeof name, "waits: each block waits for the next one, 64 blocks (%d host threads)", threads);
  tu_check(rc == 0 && bad < 0, name, "rc=%d %s, first wrong block %d, %.2f s", rc, rc ? err : "", bad, s);
  sim_free(dev, flag);
  sim_free(dev, val);
}

static void test_barrier(int threads) {
  int n = 40, bs = 64, rounds = 3, *count = ints(1, "i32[1]"), *in = ints(n * bs, "i32[in]");
  int *part = ints(n * rounds, "i32[part]"), *out = ints(n * rounds, "i32[out]"), bad = -1;
  long long sum = 0;
  for (int i = 0; i < n * bs; i++) sum += in[i] = (i * 7) % 13 - 5;
  char err[4096], name[128];
  double s;
  void *args[] = {&count, &in, &part, &out, &rounds};
  int rc = launch("grid_barrier", (unsigned)n, (unsigned)bs, 0, args, threads, err, sizeof err, &s);
  for (int r = 0; r < rounds && rc == 0; r++)
    for (int b = 0; b < n; b++)
      if (out[r * n + b] != (r + 1) * sum && bad < 0) bad = r * n + b;
  snprintf(name, sizeof name, "waits: a grid barrier from an atomic counter, 40 blocks, 3 rounds (%d host threads)", threads);
  tu_check(rc == 0 && bad < 0 && *count == n * rounds, name, "rc=%d %s, first wrong %d, count %d, %.2f s", rc,
           rc ? err : "", bad, *count, s);
  sim_free(dev, count); sim_free(dev, in); sim_free(dev, part); sim_free(dev, out);
}

static void test_queue(int threads) {
  int items = 200, *ring = ints(4, "i32[4]"), *head = ints(1, "i32[1]"), *tail = ints(1, "i32[1]"), *out = ints(1, "i32[1]");
  int want = 0;
  for (int i = 0; i < items; i++) want += i * i;
  char err[4096], name[128];
  double s;
  void *args[] = {&ring, &head, &tail, &out, &items};
  int rc = launch("prodcons", 2, 32, 0, args, threads, err, sizeof err, &s);
  snprintf(name, sizeof name, "waits: block 0 consumes what block 1 produces through a 4-slot ring (%d host threads)", threads);
  tu_check(rc == 0 && *out == want && *head == items && *tail == items, name, "rc=%d %s, sum %d (want %d), %.2f s", rc,
           rc ? err : "", *out, want, s);
  sim_free(dev, ring); sim_free(dev, head); sim_free(dev, tail); sim_free(dev, out);
}

/* The grid barrier on one more block than the modelled device holds at once (dynamic shared
 * memory keeps that number small): hopeless on a GPU too. */
static void test_too_many(int threads) {
  size_t shm = 100 * 1024;
  const sim_device_desc *d = sim_device_info(dev);
  int per_sm = sim_occupancy(d, 64, 0, shm, NULL), L = per_sm * d->sm_count, n = L + 1, bs = 64, rounds = 1;
  int *count = ints(1, "i32[1]"), *in = ints(n * bs, "i32[in]"), *part = ints(n, "i32[part]"), *out = ints(n, "i32[out]");
  char err[4096], want[200], name[160];
  double s;
  void *args[] = {&count, &in, &part, &out, &rounds};
  int rc = launch("grid_barrier", (unsigned)n, (unsigned)bs, shm, args, threads, err, sizeof err, &s);
  snprintf(want, sizeof want, "more blocks wait than could be resident (%d resident at most on the modelled H200, %d launched)", L, n);
  snprintf(name, sizeof name, "watchdog: %d blocks wait at a grid barrier, %d can be resident: ended in seconds (%d host threads)", n, L, threads);
  tu_check(rc != 0 && strstr(err, want) && s < 30, name, "rc=%d, %.2f s: %s", rc, s, rc ? err : "");
  snprintf(name, sizeof name, "watchdog: the message names a spinning warp, its loop's line and what it reads (%d host threads)", threads);
  tu_check(rc != 0 && strstr(err, "kernel grid_barrier") && strstr(err, "warp 0 spins at") && strstr(err, line_of("atomicAdd(count, 0)")) &&
           strstr(err, "reading element 0 of i32[1] (parameter 0)") && strstr(err, "more spinning warps"),
           name, "%s", err);
  sim_free(dev, count); sim_free(dev, in); sim_free(dev, part); sim_free(dev, out);
}

static void test_never(int threads, unsigned grid) {
  int *flag = ints(1, "i32[1]"), *out = ints(4, "i32[4]");
  char err[4096], name[160];
  double s;
  void *args[] = {&flag, &out};
  int rc = launch("never", grid, 96, 0, args, threads, err, sizeof err, &s);
  snprintf(name, sizeof name, "watchdog: %u block%s wait for a flag no block sets: ended in seconds (%d host threads)", grid,
           grid == 1 ? "" : "s", threads);
  tu_check(rc != 0 && strstr(err, "kernel never can never finish: its blocks wait for a flag that is never set") && s < 30,
           name, "rc=%d, %.2f s: %s", rc, s, rc ? err : "");
  snprintf(name, sizeof name, "watchdog: the flag's message lists each block's spinning warp and its line (%d host threads)", threads);
  int listed = 1;
  for (unsigned b = 0; b < grid; b++) {
    char want[80];
    snprintf(want, sizeof want, "block (%u,0,0) warp 0 spins at ", b);
    listed &= strstr(err, want) != NULL;
  }
  tu_check(rc != 0 && listed && strstr(err, line_of("while (flag[0] == 0) {}")) &&
           strstr(err, "reading element 0 of i32[1] (parameter 0)") && !strstr(err, "warp 1 spins"),
           name, "%s", err);
  sim_free(dev, flag);
  sim_free(dev, out);
}

static void test_counted(void) {
  int *flag = ints(1, "i32[1]"), *out = ints(32, "i32[32]");
  char err[4096];
  double s;
  void *args[] = {&flag, &out};
  int rc = launch("counted", 2, 32, 0, args, 1, err, sizeof err, &s);
  tu_check(rc == 0 && out[0] == 1, "waits: a wait loop that counts its tries still lets the later block run (1 host thread)",
           "rc=%d %s, out[0]=%d, %.2f s", rc, rc ? err : "", out[0], s);
  sim_free(dev, flag);
  sim_free(dev, out);
}

typedef struct stopper {
  volatile sig_atomic_t flag;
  double after;
} stopper;

static void *stop_later(void *arg) {
  stopper *st = arg;
  struct timespec ts = {0, (long)(st->after * 1e9)};
  nanosleep(&ts, NULL);
  st->flag = 1;
  return NULL;
}

/* A loop the probe cannot recognise, waiting for a flag nobody sets: only Ctrl-C ends it. */
static void test_interrupt(void) {
  int *flag = ints(1, "i32[1]"), *out = ints(32, "i32[32]");
  char err[4096];
  stopper st = {0, 0.3};
  pthread_t t;
  pthread_create(&t, NULL, stop_later, &st);
  void *args[] = {&flag, &out};
  sim_launch_opts o = {0};
  o.threads = 1;
  o.interrupt = &st.flag;
  sim_dim3 g = {1, 1, 1}, b = {32, 1, 1};
  double t0 = tu_now();
  int rc = sim_launch(dev, sim_module_kernel(mod, "counted"), g, b, 0, args, &o, NULL, err, sizeof err);
  double s = tu_now() - t0;
  pthread_join(t, NULL);
  tu_check(rc != 0 && strstr(err, "interrupted") && s < 5, "waits: Ctrl-C ends a wait the watchdog cannot judge",
           "rc=%d, %.2f s: %s", rc, s, rc ? err : "");
  sim_free(dev, flag);
  sim_free(dev, out);
}

int main(void) {
  tu_plan(20);
  alarm(300); /* a simulator that cannot park a waiting block would spin here forever: fail instead */
  dev = sim_device_new(NULL);
  mod = tu_module("compile waiting kernels", src);
  if (!mod) return 1;
  for (int threads = 1; threads <= 3; threads += 2) {
    test_reverse(threads);
    test_barrier(threads);
    test_queue(threads);
    test_too_many(threads);
    test_never(threads, 1);
    test_never(threads, 3);
  }
  test_counted();
  test_interrupt();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
