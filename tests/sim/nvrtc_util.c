/* nvrtc_util.c: NVRTC compilation and reporting helpers for tests/sim (see nvrtc_util.h). */
#include "nvrtc_util.h"

#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

/* PTX for src compiled with opts. */
static char *compile(const char *src, const char *const *opts, int nopts) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src, "kernel.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return NULL;
  nvrtcResult r = nvrtcCompileProgram(prog, nopts, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n;
    nvrtcGetProgramLogSize(prog, &n);
    char *log = malloc(n + 1);
    if (log) { nvrtcGetProgramLog(prog, log); fprintf(stderr, "nvrtc: %s\n", log); free(log); }
    nvrtcDestroyProgram(&prog);
    return NULL;
  }
  size_t n;
  nvrtcGetPTXSize(prog, &n);
  char *ptx = malloc(n + 1);
  if (ptx) { nvrtcGetPTX(prog, ptx); ptx[n] = 0; }
  nvrtcDestroyProgram(&prog);
  return ptx;
}

char *tu_ptx(const char *src) {
  const char *opts[] = {"-arch=compute_90", "-lineinfo"};
  return compile(src, opts, 2);
}

char *tu_ptx_debug(const char *src) {
  const char *opts[] = {"-arch=compute_90", "-G"};
  return compile(src, opts, 2);
}

sim_module *tu_module(const char *test, const char *src) {
  char *ptx = tu_ptx(src);
  if (!ptx) { tu_check(0, test, "NVRTC failed"); return NULL; }
  char err[1024];
  sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
  if (!m) tu_check(0, test, "load failed: %s", err);
  free(ptx);
  return m;
}

sim_kernel *tu_kernel(sim_module *m, const char *name) {
  for (int i = 0; i < sim_module_kernel_count(m); i++) {
    const char *n = sim_module_kernel_name(m, i);
    if (strcmp(n, name) == 0 || strstr(n, name)) return sim_module_kernel(m, n);
  }
  return NULL;
}

void tu_plan(int n) {
  printf("1..%d\n", n);
  fflush(stdout);
}

int tu_check(int cond, const char *name, const char *fmt, ...) {
  if (cond) {
    printf("ok - %s\n", name);
  } else {
    char why[2048] = "";
    if (fmt) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(why, sizeof why, fmt, ap);
      va_end(ap);
    }
    printf("not ok - %s: %s\n", name, why);
    failures++;
  }
  fflush(stdout);
  return cond;
}

int tu_failures(void) { return failures; }

double tu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tu_launch(sim_device *dev, sim_kernel *k, unsigned grid, unsigned block, size_t shm, void **args, int threads,
              sim_stats *st, char *err, size_t errlen) {
  sim_launch_opts o = {0};
  o.threads = threads;
  sim_dim3 g = {grid, 1, 1}, b = {block, 1, 1};
  return sim_launch(dev, k, g, b, shm, args, &o, st, err, errlen);
}
