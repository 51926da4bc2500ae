/* test_model.c: the timing model (sim_model.c and the inputs sim_trace/sim_profile/sim_cache
 * gather). It must be deterministic, whatever the number of host threads, and name the limit a
 * kernel is known to hit on a GPU: DRAM for a large vector add, block dispatch for blocks of 32,
 * atomics on one address, FP64 for a double-precision loop, the tail for one block too many.
 * How close its times are to an H200's is measured on the GPU (make model-check, bench/MODEL.md),
 * not here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static const char *src =
    TU_SRC_VADD
    "extern \"C\" __global__ void strided(const float *a, float *b, int s, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) b[i] = a[(long)i * s % n];\n"
    "}\n"
    "extern \"C\" __global__ void saxpy_gs(int n, float a, const float *x, float *y) {\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n"
    "extern \"C\" __global__ void one_sum(const float *a, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) atomicAdd(out, a[i]);\n"
    "}\n"
    "extern \"C\" __global__ void poly64(double *a, int iters) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; double x = a[i], y = x + 1, z = x + 2, w = x + 3;\n"
    "  for (int k = 0; k < iters; k++) { x = x * 0.999 + 0.5; y = y * 0.999 + 0.5; z = z * 0.999 + 0.5; w = w * 0.999 + 0.5; }\n"
    "  a[i] = x + y + z + w;\n"
    "}\n";

static sim_device *dev;
static sim_module *mod;

/* Launches kernel `name` with the model on; fills r. Returns sim_launch's result. */
static int run(const char *name, unsigned grid, unsigned block, void **args, int threads, sim_stats *st,
               sim_model_result *r) {
  char err[1024];
  sim_launch_opts o = {0};
  o.threads = threads;
  o.model = 1;
  o.regs_per_thread = 16;
  sim_kernel *k = tu_kernel(mod, name);
  sim_dim3 g = {grid, 1, 1}, b = {block, 1, 1};
  int rc = sim_launch(dev, k, g, b, 0, args, &o, st, err, sizeof err);
  if (rc != 0) printf("# %s: %s\n", name, err);
  else sim_model_launch(sim_device_info(dev), g, b, 0, &st->profile, r);
  return rc;
}

static void *dalloc(size_t bytes, float fill) {
  char err[256];
  float *p = sim_malloc(dev, bytes, "f32", err, sizeof err);
  for (size_t i = 0; p && i < bytes / 4; i++) p[i] = fill;
  return p;
}

static void test_determinism(void) {
  int n = 1 << 20;
  float *a = dalloc((size_t)n * 4, 1), *b = dalloc((size_t)n * 4, 2), *c = dalloc((size_t)n * 4, 0);
  void *args[] = {&a, &b, &c, &n};
  sim_stats s1, s2, s3;
  sim_model_result r1, r2, r3;
  run("vadd", (unsigned)n / 256, 256, args, 1, &s1, &r1);
  run("vadd", (unsigned)n / 256, 256, args, 1, &s2, &r2);
  run("vadd", (unsigned)n / 256, 256, args, 2, &s3, &r3);
  tu_check(r1.time_us == r2.time_us, "model: the same launch gives the same time", "%g vs %g", r1.time_us, r2.time_us);
  tu_check(r1.time_us == r3.time_us && memcmp(&s1.profile, &s3.profile, sizeof s1.profile) == 0,
           "model: one or two host threads give the same profile and time", "%g vs %g", r1.time_us, r3.time_us);
  tu_check(c[12345] == 3.0f, "model: the kernel still computes", "c = %g", c[12345]);
  /* A grid-stride loop: each host thread runs many blocks in turn on the same warps, so state
   * one block leaves (a row loaded and never read) must not reach the next. */
  float alpha = 2;
  void *gs[] = {&n, &alpha, &a, &c};
  sim_model_result g1, g3;
  run("saxpy_gs", 300, 256, gs, 1, &s1, &g1);
  run("saxpy_gs", 300, 256, gs, 3, &s3, &g3);
  tu_check(g1.time_us == g3.time_us, "model: a grid-stride loop, one or three host threads: the same time",
           "%.17g vs %.17g us", g1.time_us, g3.time_us);
  sim_free(dev, a); sim_free(dev, b); sim_free(dev, c);
}

static void test_limits(void) {
  int n = 1 << 24; /* 192 MB of arrays: far past the L2, so DRAM streams them */
  float *a = dalloc((size_t)n * 4, 1), *b = dalloc((size_t)n * 4, 2), *c = dalloc((size_t)n * 4, 0);
  void *args[] = {&a, &b, &c, &n};
  sim_stats st;
  sim_model_result big, tiny;
  run("vadd", (unsigned)n / 256, 256, args, 0, &st, &big);
  tu_check((big.limit == SIM_LIM_DRAM || big.limit == SIM_LIM_LATENCY) && big.achieved_gbs > 0.6 * big.peak_gbs,
           "model: a 16M-element vector add is bound by memory (bandwidth, or latency with the warps in flight)",
           "limit %s, %.0f of %.0f GB/s", sim_limit_key(big.limit), big.achieved_gbs, big.peak_gbs);
  double mb = big.dram_bytes / 1e6;
  tu_check(mb > 0.95 * 3 * n * 4 / 1e6 && mb < 1.05 * 3 * n * 4 / 1e6, "model: it moves its three arrays through DRAM once",
           "%.1f MB", mb);
  run("vadd", (unsigned)n / 32, 32, args, 0, &st, &tiny);
  tu_check(tiny.limit == SIM_LIM_BLOCKS && tiny.time_us > 2 * big.time_us,
           "model: blocks of 32 threads are bound by block dispatch, and slower", "%s, %g vs %g us",
           sim_limit_key(tiny.limit), tiny.time_us, big.time_us);
  int s1 = 1, s32 = 32;
  sim_model_result r1, r32;
  void *a1[] = {&a, &c, &s1, &n}, *a32[] = {&a, &c, &s32, &n};
  run("strided", (unsigned)n / 256, 256, a1, 0, &st, &r1);
  unsigned long long sect1 = st.total.ld_sectors;
  run("strided", (unsigned)n / 256, 256, a32, 0, &st, &r32);
  tu_check(st.total.ld_sectors == 8 * sect1 && r32.time_us > 3 * r1.time_us,
           "model: stride 32 reads 8x the sectors and takes several times as long", "%g vs %g us", r32.time_us, r1.time_us);
  float *out = dalloc(4, 0);
  void *aa[] = {&a, &out, &n};
  sim_model_result at;
  run("one_sum", (unsigned)n / 256, 256, aa, 0, &st, &at);
  tu_check(at.limit == SIM_LIM_ATOMIC && st.profile.atom_max_same == 32 && at.time_us > n * 1e-3,
           "model: one float atomic per element on one address is bound by atomic contention, a ns each",
           "%s, %g lanes on one address, %g us", sim_limit_key(at.limit), st.profile.atom_max_same, at.time_us);
  tu_check(*out == (float)n, "model: the atomic sum is still right", "%g", *out);
  sim_free(dev, a); sim_free(dev, b); sim_free(dev, c); sim_free(dev, out);
}

static void test_compute_and_tail(void) {
  int wave = sim_device_info(dev)->sm_count * 2; /* blocks of 1024 threads: two per SM at once */
  int n = wave * 1024 + 1024, iters = 400;
  double *x = sim_malloc(dev, (size_t)n * 8, "f64", NULL, 0);
  memset(x, 0, (size_t)n * 8);
  void *args[] = {&x, &iters};
  sim_stats st;
  sim_model_result full, tail;
  run("poly64", (unsigned)wave, 1024, args, 0, &st, &full);
  tu_check(full.limit == SIM_LIM_FP64, "model: a double-precision loop is bound by FP64 throughput", "limit %s",
           sim_limit_key(full.limit));
  run("poly64", (unsigned)wave + 1, 1024, args, 0, &st, &tail);
  tu_check(tail.limit == SIM_LIM_TAIL && tail.time_us > 1.3 * full.time_us,
           "model: one block past a full wave costs 30% more, bound by the tail", "%s, %g vs %g us",
           sim_limit_key(tail.limit), tail.time_us, full.time_us);
  sim_free(dev, x);
}

static void test_occupancy_and_copies(void) {
  const sim_device_desc *d = sim_device_info(dev);
  /* Expected values as NVIDIA's occupancy calculator gives them for compute capability 9.0. */
  tu_check(sim_occupancy(d, 256, 32, 0, NULL) == 8, "occupancy: 256 threads, 32 registers: 8 blocks", "%d",
           sim_occupancy(d, 256, 32, 0, NULL));
  tu_check(sim_occupancy(d, 256, 64, 0, NULL) == 4, "occupancy: 64 registers: 4 blocks", "%d", sim_occupancy(d, 256, 64, 0, NULL));
  tu_check(sim_occupancy(d, 32, 32, 0, NULL) == 32, "occupancy: blocks of 32: the 32-block limit", "%d",
           sim_occupancy(d, 32, 32, 0, NULL));
  tu_check(sim_occupancy(d, 128, 32, 48 * 1024, NULL) == 4, "occupancy: 48 KiB of shared memory: 4 blocks", "%d",
           sim_occupancy(d, 128, 32, 48 * 1024, NULL));
  size_t mb40 = 40u << 20;
  double page = sim_model_copy_us(d, SIM_COPY_H2D, mb40, 0), pin = sim_model_copy_us(d, SIM_COPY_H2D, mb40, 1);
  tu_check(pin < page / 3, "copies: pinned host memory copies several times faster than pageable", "%g vs %g us", pin, page);
  tu_check(sim_model_copy_us(d, SIM_COPY_H2D, 4, 1) >= d->perf.copy_us, "copies: even 4 bytes pay the fixed cost", "%g",
           sim_model_copy_us(d, SIM_COPY_H2D, 4, 1));
}

/* The parameters come from perf_params.def's rows and h200_params.h's values: every row is a
 * field with a value (a row marked MEASURED that h200_params.h lacks would be NaN), inside the
 * bounds cuda.simopts enforces, and the rows name every double of sim_perf once. */
static void test_params(void) {
  sim_device_desc d;
  sim_default_desc(&d);
  int n = 0, bad = -1;
  for (; sim_perf_fields[n].name; n++) {
    const sim_perf_field *f = &sim_perf_fields[n];
    double v = *(const double *)(const void *)((const char *)&d.perf + f->offset);
    int ok = v == v && (v == 0 ? f->zero : v >= SIM_PERF_MIN && v <= f->hi) && f->unit[0] &&
             f->doc[0];
    if (!ok && bad < 0) bad = n;
  }
  tu_check(bad < 0, "params: every row of perf_params.def has a value in its bounds, a unit and a doc",
           "%s", bad < 0 ? "" : sim_perf_fields[bad].name);
  tu_check(n * sizeof(double) == sizeof(sim_perf), "params: the rows are sim_perf's fields, each once",
           "%d rows, %zu bytes", n, sizeof(sim_perf));
}

int main(void) {
  tu_plan(20);
  test_params();
  dev = sim_device_new(NULL);
  mod = tu_module("model", src);
  if (!dev || !mod) return 1;
  test_determinism();
  test_limits();
  test_compute_and_tail();
  test_occupancy_and_copies();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
