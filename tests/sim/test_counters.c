/* test_counters.c: the simulator's counters against the Nsight Compute measurements in
 * shared/reference/h200-ncu-counters.md, on the same kernels compiled with NVRTC.
 *
 * The reference launches <<<1024, 256>>>; here the grid is 64 blocks and every count of the
 * table is divided by 16 (requests = warps launched), so per-request ratios are compared exactly.
 * The tr rows use the reference's own <<<1, (32,32)>>> and must match as they are. ncu's shared
 * metrics are op_ld only, so they are compared with shared_ld_wavefronts / shared_ld_conflicts;
 * the sim's shared_wavefronts / bank_conflicts also count stores (checked separately).
 * thr/inst of `odd` is 21 on the GPU, measured on SASS after ptxas; counting PTX instructions
 * gives a different ratio (24), so it is printed, not asserted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static const char *src =
    "#define I int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "extern \"C\" {\n"
    "__global__ void cp(const float *a, float *b, int s) { I b[i] = a[(long)i * s]; }\n"
    "__global__ void bc(const float *a, float *b)        { I b[i] = a[0]; }\n"
    "__global__ void odd(const float *a, float *b)       { I if (threadIdx.x & 1) b[i] = a[i]; }\n"
    "__global__ void d2(const double *a, double *b)      { I b[i] = a[i]; }\n"
    "__global__ void v4(const float4 *a, float4 *b)      { I b[i] = a[i]; }\n"
    "__global__ void tr(const float *a, float *b, int p) {\n"
    "    __shared__ float t[32 * 33]; int x = threadIdx.x, y = threadIdx.y, w = 32 + p;\n"
    "    t[y * w + x] = a[y * 32 + x]; __syncthreads(); b[y * 32 + x] = t[x * w + y]; }\n"
    "__global__ void dv(float *b) { I float v = b[i]; if (threadIdx.x & 1) v = v * v + 1.f; else v = v * 0.5f - 2.f; b[i] = v; }\n"
    "}\n";

static sim_device *dev;
static sim_module *mod;

typedef struct row {
  const char *name, *kernel;
  int s;                   /* cp stride / tr padding */
  unsigned long long ldr, lds, str, sts, wf, conf;
  int thr;                 /* 0: do not assert */
} row;

static const row table[] = {
    {"cp s=1", "cp", 1, 8192, 32768, 8192, 32768, 0, 0, 32},
    {"cp s=2", "cp", 2, 8192, 65536, 8192, 32768, 0, 0, 32},
    {"cp s=32", "cp", 32, 8192, 262144, 8192, 32768, 0, 0, 32},
    {"bc", "bc", 0, 8192, 8192, 8192, 32768, 0, 0, 32},
    {"odd", "odd", 0, 8192, 32768, 8192, 32768, 0, 0, 0},
    {"d2", "d2", 0, 8192, 65536, 8192, 65536, 0, 0, 32},
    {"v4", "v4", 0, 8192, 131072, 8192, 131072, 0, 0, 32},
    {"tr p=0", "tr", 0, 32, 128, 32, 128, 1024, 992, 32},
    {"tr p=1", "tr", 1, 32, 128, 32, 128, 32, 0, 32},
    {"dv", "dv", 0, 8192, 32768, 8192, 32768, 0, 0, 32},
};

static void run_row(const row *r) {
  char err[2048];
  int is_tr = strcmp(r->kernel, "tr") == 0;
  unsigned grid = is_tr ? 1 : 64, threads = is_tr ? 1024 : grid * 256;
  unsigned long long div = is_tr ? 1 : 16;
  size_t elem = strcmp(r->kernel, "d2") == 0 ? 8 : strcmp(r->kernel, "v4") == 0 ? 16 : 4;
  size_t n_in = (size_t)threads * (r->s > 1 && !is_tr ? (size_t)r->s : 1);
  void *a = sim_malloc(dev, n_in * elem, "in", err, sizeof err), *b = sim_malloc(dev, threads * elem, "out", err, sizeof err);
  int p = r->s;
  void *args3[] = {&a, &b, &p}, *args2[] = {&a, &b}, *args1[] = {&b};
  void **args = !strcmp(r->kernel, "cp") || is_tr ? args3 : !strcmp(r->kernel, "dv") ? args1 : args2;
  sim_stats st;
  sim_launch_opts o = {0};
  sim_dim3 g = {grid, 1, 1}, blk = {is_tr ? 32u : 256u, is_tr ? 32u : 1u, 1};
  int rc = sim_launch(dev, sim_module_kernel(mod, r->kernel), g, blk, 0, args, &o, &st, err, sizeof err);
  const sim_counters *c = &st.total;
  char name[128];
  snprintf(name, sizeof name, "counters %s", r->name);
  double thr = c->warp_insts ? (double)c->thread_insts / (double)c->warp_insts : 0;
  int ok = rc == 0 && c->ld_requests * div == r->ldr && c->ld_sectors * div == r->lds && c->st_requests * div == r->str &&
           c->st_sectors * div == r->sts && c->shared_ld_wavefronts == r->wf && c->shared_ld_conflicts == r->conf &&
           (!r->thr || thr == r->thr);
  tu_check(ok, name,
           "rc=%d %s ld %llu/%llu st %llu/%llu (x%llu) sh_ld wf %llu conf %llu thr/inst %.2f; want ld %llu/%llu st %llu/%llu wf %llu conf %llu",
           rc, rc ? err : "", (unsigned long long)c->ld_requests, (unsigned long long)c->ld_sectors,
           (unsigned long long)c->st_requests, (unsigned long long)c->st_sectors, div,
           (unsigned long long)c->shared_ld_wavefronts, (unsigned long long)c->shared_ld_conflicts, thr, r->ldr, r->lds,
           r->str, r->sts, r->wf, r->conf);
  if (!r->thr) printf("# %s: thr/inst %.2f in PTX (ncu on SASS: 21), divergent branches %llu\n", r->name, thr,
                      (unsigned long long)c->divergent_branches);
  if (is_tr) {
    /* stores: t[y*w+x] is a row write, one conflict-free wavefront per warp */
    snprintf(name, sizeof name, "counters %s: loads + stores in shared_wavefronts", r->name);
    tu_check(rc == 0 && c->shared_wavefronts == r->wf + 32 && c->bank_conflicts == r->conf, name, "wf %llu conf %llu",
             (unsigned long long)c->shared_wavefronts, (unsigned long long)c->bank_conflicts);
    /* per-line: everything is on line 10 of the source */
    snprintf(name, sizeof name, "counters %s: per-line", r->name);
    tu_check(rc == 0 && st.nlines > 10 && st.lines[10].shared_ld_wavefronts == r->wf && st.lines[10].ld_requests == 32 &&
                 strstr(st.source_file, "kernel.cu") != NULL,
             name, "nlines %d file '%s'", st.nlines, st.source_file);
  }
  if (!strcmp(r->kernel, "dv")) tu_check(c->divergent_branches == 0, "counters dv: no divergent branch", "%llu", (unsigned long long)c->divergent_branches);
  if (!strcmp(r->kernel, "odd")) tu_check(c->divergent_branches * div == 8192, "counters odd: one divergent branch per warp", "%llu", (unsigned long long)c->divergent_branches);
  sim_free(dev, a);
  sim_free(dev, b);
}

int main(void) {
  tu_plan(16);
  dev = sim_device_new(NULL);
  mod = tu_module("compile reference kernels", src);
  if (!mod) return 1;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) run_row(&table[i]);
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
