/* bench_speed.c: the simulator's thread-instruction rate on test_speed's two kernels (vector add
 * and 16x16 tiled matmul; "both", the default) and on a shared-memory tree reduction ("red"; "all"
 * runs the three), best of several launches, for a range of host-thread counts. A measuring
 * tool, not a test (nothing is asserted): the machines it runs on are noisy, so compare best-of-N
 * figures, and pin CPUs (taskset) when comparing 1 and 2 threads.
 *
 * What it measures is a learner's launch at the prompt: the options repl/backend/backend_sim.c
 * starts with (the timing model on, shared-memory races warned of, a warning buffer, the
 * parameters' names) and nothing else; only the host-thread count is the benchmark's. Bounds
 * checks and counters are always on. The sixth argument can take the two checks apart: "plain"
 * turns both off (the baseline their overhead is measured against), "race" keeps only the race
 * check, "model" only the timing model.
 * Usage: bench_speed [reps=5] [vadd|mm|red|both|all] [threads_from=1] [threads_to=2] [matmul_n=256]
 *        [default|plain|race|model] (make sim-bench builds and runs it with the defaults). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

/* The shared-memory tree reduction of kernels/reduce.cu (lesson 10), its buffer static. */
#define SRC_REDUCE \
  "extern \"C\" __global__ void reduce(const float *in, float *out, int n) {\n" \
  "  __shared__ float buf[256];\n" \
  "  int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;\n" \
  "  buf[tid] = i < n ? in[i] : 0.0f;\n" \
  "  __syncthreads();\n" \
  "  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n" \
  "    if (tid < s) buf[tid] += buf[tid + s];\n" \
  "    __syncthreads();\n" \
  "  }\n" \
  "  if (tid == 0) atomicAdd(out, buf[0]);\n" \
  "}\n"

static const char *src =
    TU_SRC_VADD
    TU_SRC_MM_TILED
    SRC_REDUCE;

/* Best rate of reps launches of k, in thread instructions per second; prints the error and
 * returns a negative rate when a launch fails. */
static double best_rate(int reps, sim_device *dev, sim_kernel *k, sim_dim3 grid, sim_dim3 block,
                        void **args, const sim_launch_opts *o, double *best_s) {
  double best = 1e9, ti = 0;
  char err[2048];
  for (int r = 0; r < reps; r++) {
    sim_stats st;
    double t0 = tu_now();
    if (sim_launch(dev, k, grid, block, 0, args, o, &st, err, sizeof err)) {
      printf("%s\n", err);
      return -1;
    }
    double dt = tu_now() - t0;
    if (dt < best) best = dt;
    ti = (double)st.total.thread_insts;
  }
  *best_s = best;
  return ti / best;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  const char *which = argc > 2 ? argv[2] : "both";
  int tmin = argc > 3 ? atoi(argv[3]) : 1, tmax = argc > 4 ? atoi(argv[4]) : 2;
  int mn = argc > 5 ? atoi(argv[5]) : 256;
  const char *mode = argc > 6 ? argv[6] : "default";
  int model = !strcmp(mode, "default") || !strcmp(mode, "model");
  int race = !strcmp(mode, "default") || !strcmp(mode, "race");
  if (!model && !race && strcmp(mode, "plain")) {
    fprintf(stderr, "bench_speed: unknown mode '%s' (default, plain, race or model)\n", mode);
    return 2;
  }
  int all = !strcmp(which, "all"), both = all || !strcmp(which, "both");
  if (!both && strcmp(which, "vadd") && strcmp(which, "mm") && strcmp(which, "red")) {
    fprintf(stderr, "bench_speed: unknown kernels '%s' (vadd, mm, red, both or all)\n", which);
    return 2;
  }
  sim_device *dev = sim_device_new(NULL);
  sim_module *m = tu_module("compile", src);
  if (!m) return 1;
  char err[2048];
  int n = 1 << 22;
  float *a = sim_malloc(dev, (size_t)n * 4, "f32[4M]", err, sizeof err), *b = sim_malloc(dev, (size_t)n * 4, "f32[4M]", err, sizeof err);
  float *c = sim_malloc(dev, (size_t)n * 4, "f32[4M]", err, sizeof err);
  float *A = sim_malloc(dev, (size_t)mn*mn * 4, "A", err, sizeof err), *B = sim_malloc(dev, (size_t)mn*mn * 4, "B", err, sizeof err);
  float *C = sim_malloc(dev, (size_t)mn*mn * 4, "C", err, sizeof err);
  float *out = sim_malloc(dev, 4, "f32[1]", err, sizeof err);
  for (int i = 0; i < n; i++) { a[i] = (float)i; b[i] = 2.0f; c[i] = 0; }
  for (int i = 0; i < mn * mn; i++) { A[i] = (float)(i % 7); B[i] = (float)(i % 5) * 0.5f; C[i] = 0; }
  for (int threads = tmin; threads <= tmax; threads++) {
    /* backend_sim.c's defaults: S.opts = {.model = 1, .race_check = SIM_RACE_WARN}, and per
     * launch the parameters' names and a warning buffer (launch_stream) */
    static const char *const vnames[] = {"a", "b", "c", "n"};
    static const char *const mnames[] = {"A", "B", "C", "n"}, *const rnames[] = {"in", "out", "n"};
    char warning[1024] = "";
    sim_launch_opts o = {0};
    o.threads = threads;
    o.model = model;
    o.race_check = race ? SIM_RACE_WARN : SIM_RACE_OFF;
    o.warning = warning;
    o.warninglen = sizeof warning;
    double rate, best;
    if (both || !strcmp(which, "vadd")) {
      void *args[] = {&a, &b, &c, &n};
      o.param_names = vnames;
      sim_dim3 g = {(unsigned)(n / 256), 1, 1}, blk = {256, 1, 1};
      if ((rate = best_rate(reps, dev, sim_module_kernel(m, "vadd"), g, blk, args, &o, &best)) < 0) return 1;
      printf("vadd threads=%d best %.3g/s (%.4f s)\n", threads, rate, best);
    }
    if (both || !strcmp(which, "mm")) {
      void *margs[] = {&A, &B, &C, &mn};
      o.param_names = mnames;
      sim_dim3 mg = {(unsigned)mn / 16, (unsigned)mn / 16, 1}, mb = {16, 16, 1};
      if ((rate = best_rate(reps, dev, sim_module_kernel(m, "mm_tiled"), mg, mb, margs, &o, &best)) < 0) return 1;
      printf("mm16 threads=%d best %.3g/s (%.4f s)\n", threads, rate, best);
    }
    if (all || !strcmp(which, "red")) {
      void *rargs[] = {&a, &out, &n};
      o.param_names = rnames;
      sim_dim3 g = {(unsigned)(n / 256), 1, 1}, blk = {256, 1, 1};
      sim_kernel *k = sim_module_kernel(m, "reduce");
      if ((rate = best_rate(reps, dev, k, g, blk, rargs, &o, &best)) < 0) return 1;
      printf("red threads=%d best %.3g/s (%.4f s)\n", threads, rate, best);
    }
  }
  return 0;
}
