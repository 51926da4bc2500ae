/* test_bounds.c: the launch bounds a kernel declares, held by sim_launch as the GPU holds them:
 * __launch_bounds__ (.maxntid), a required block shape (.reqntid), __cluster_dims__
 * (.reqnctapercluster, .explicitcluster), with the messages asserted; the cluster special
 * registers of a launch in clusters against their definitions; shared memory per block, static
 * and dynamic together; and the decode error of what clusters do that the simulator does not
 * model. The same refusals as the REPL words them are in tests/simulator/launch_bounds.lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static char err[4096];

static const char *src =
    "extern \"C\" __global__ void __launch_bounds__(128) bounded(int *p) { p[threadIdx.x] = 1; }\n"
    "extern \"C\" __global__ void __cluster_dims__(2, 2, 1) clustered(unsigned *o) {\n"
    "  unsigned r[16];\n"
    "  asm(\"mov.u32 %0, %%cluster_ctaid.x;\" : \"=r\"(r[0]));\n"
    "  asm(\"mov.u32 %0, %%cluster_ctaid.y;\" : \"=r\"(r[1]));\n"
    "  asm(\"mov.u32 %0, %%cluster_ctaid.z;\" : \"=r\"(r[2]));\n"
    "  asm(\"mov.u32 %0, %%cluster_nctaid.x;\" : \"=r\"(r[3]));\n"
    "  asm(\"mov.u32 %0, %%cluster_nctaid.y;\" : \"=r\"(r[4]));\n"
    "  asm(\"mov.u32 %0, %%cluster_nctaid.z;\" : \"=r\"(r[5]));\n"
    "  asm(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(r[6]));\n"
    "  asm(\"mov.u32 %0, %%clusterid.y;\" : \"=r\"(r[7]));\n"
    "  asm(\"mov.u32 %0, %%clusterid.z;\" : \"=r\"(r[8]));\n"
    "  asm(\"mov.u32 %0, %%nclusterid.x;\" : \"=r\"(r[9]));\n"
    "  asm(\"mov.u32 %0, %%nclusterid.y;\" : \"=r\"(r[10]));\n"
    "  asm(\"mov.u32 %0, %%nclusterid.z;\" : \"=r\"(r[11]));\n"
    "  asm(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(r[12]));\n"
    "  asm(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(r[13]));\n"
    "  asm(\"{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }\""
    " : \"=r\"(r[14]));\n"
    "  r[15] = 0;\n"
    "  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n"
    "  if (threadIdx.x == 0) for (int i = 0; i < 16; i++) o[b * 16 + i] = r[i];\n"
    "}\n"
    "extern \"C\" __global__ void __cluster_dims__(16, 1, 1) wide(int *p) { p[0] = 1; }\n"
    "extern \"C\" __global__ void __cluster_dims__() unshaped(int *p) { p[0] = 1; }\n"
    "extern \"C\" __global__ void staticshared(float *p, int n) {\n"
    "  __shared__ float s[256];\n"
    "  extern __shared__ float d[];\n"
    "  s[threadIdx.x] = threadIdx.x;\n"
    "  for (int i = threadIdx.x; i < n; i += blockDim.x) d[i] = 2.0f * i;\n"
    "  __syncthreads();\n"
    "  p[threadIdx.x] = s[255 - threadIdx.x] + d[n - 1 - threadIdx.x];\n"
    "}\n";

/* A kernel whose block shape is required (.reqntid): written as PTX, since C++ gives it only
 * with __block_size__, which also makes blocks clusters. */
static const char *reqntid_ptx =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry shaped(.param .u64 p)\n.reqntid 64, 2, 1\n{\n  ret;\n}\n";

static sim_module *mod;

static int run(const char *k, sim_dim3 g, sim_dim3 b, size_t dyn, void **args) {
  sim_launch_opts o = {0};
  o.threads = 1;
  err[0] = 0;
  return sim_launch(dev, tu_kernel(mod, k), g, b, dyn, args, &o, NULL, err, sizeof err);
}

static sim_dim3 d3(unsigned x, unsigned y, unsigned z) { return (sim_dim3){x, y, z}; }

static void test_block_bounds(void) {
  int *p = sim_malloc(dev, 4096, "i32[1024]", err, sizeof err);
  void *args[] = {&p};
  int rc = run("bounded", d3(1, 1, 1), d3(128, 1, 1), 0, args);
  tu_check(rc == 0 && p[127] == 1, "a block at the __launch_bounds__ runs", "rc=%d %s", rc, err);
  rc = run("bounded", d3(1, 1, 1), d3(64, 4, 1), 0, args);
  tu_check(rc < 0 && strstr(err, "kernel bounded was declared with __launch_bounds__(128): a "
                                  "block of 256 threads (64 x 4 x 1) is over that bound") &&
               strstr(err, "too many resources requested for launch") &&
               strstr(err, "use at most 128 threads per block"),
           "a block over the __launch_bounds__ is refused, naming both", "rc=%d %s", rc, err);
  char perr[512];
  sim_module *m = sim_module_load(reqntid_ptx, strlen(reqntid_ptx), perr, sizeof perr);
  tu_check(m != NULL, "a kernel with .reqntid loads", "%s", perr);
  if (!m) return;
  sim_kernel *k = sim_module_kernel(m, "shaped");
  sim_launch_opts o = {0};
  rc = sim_launch(dev, k, d3(1, 1, 1), d3(64, 2, 1), 0, args, &o, NULL, err, sizeof err);
  tu_check(rc == 0, "the required block shape runs", "rc=%d %s", rc, err);
  rc = sim_launch(dev, k, d3(1, 1, 1), d3(128, 1, 1), 0, args, &o, NULL, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "kernel shaped was declared with __block_size__((64, 2, 1)): it "
                                  "runs only with blocks of exactly 64 x 2 x 1 threads, not "
                                  "128 x 1 x 1"),
           "another shape, of as many threads, is refused", "rc=%d %s", rc, err);
  sim_module_free(m);
  sim_free(dev, p);
}

/* Each block's cluster registers against their definitions, for a 4 x 6 x 2 grid of 2 x 2 x 1
 * clusters. */
static void test_cluster_registers(void) {
  unsigned gx = 4, gy = 6, gz = 2, n = gx * gy * gz;
  unsigned *o = sim_malloc(dev, n * 16 * 4, "u32[]", err, sizeof err);
  void *args[] = {&o};
  int rc = run("clustered", d3(gx, gy, gz), d3(32, 1, 1), 0, args);
  int wrong = 0;
  for (unsigned z = 0; z < gz; z++)
    for (unsigned y = 0; y < gy; y++)
      for (unsigned x = 0; x < gx; x++) {
        const unsigned *r = o + ((z * gy + y) * gx + x) * 16;
        unsigned want[15] = {x % 2, y % 2, 0, 2, 2, 1, x / 2, y / 2, z, gx / 2, gy / 2, gz,
                             x % 2 + (y % 2) * 2, 4, 1};
        for (int i = 0; i < 15; i++)
          if (r[i] != want[i] && wrong++ < 4)
            printf("# block (%u,%u,%u) register %d: %u, want %u\n", x, y, z, i, r[i], want[i]);
      }
  tu_check(rc == 0 && wrong == 0, "cluster registers of a launch in 2 x 2 x 1 clusters",
           "rc=%d wrong=%d %s", rc, wrong, err);
  rc = run("clustered", d3(3, 2, 1), d3(32, 1, 1), 0, args);
  tu_check(rc < 0 && strstr(err, "kernel clustered was declared with __cluster_dims__(2, 2, 1): "
                                  "the grid must be a whole number of clusters, but grid.x = 3 "
                                  "is not a multiple of 2"),
           "a grid that is not a whole number of clusters is refused", "rc=%d %s", rc, err);
  rc = run("wide", d3(16, 1, 1), d3(32, 1, 1), 0, args);
  tu_check(rc < 0 && strstr(err, "a cluster of 16 blocks is over the 8 the GPU allows"),
           "a cluster over the portable size is refused", "rc=%d %s", rc, err);
  rc = run("unshaped", d3(2, 1, 1), d3(32, 1, 1), 0, args);
  tu_check(rc < 0 && strstr(err, "kernel unshaped was declared with __cluster_dims__() and no "
                                  "shape: its launch must give the cluster shape"),
           "a cluster kernel without a shape is refused", "rc=%d %s", rc, err);
  sim_free(dev, o);
}

/* 1 KiB of static shared memory and 48 KiB dynamic: over the 48 KiB a block has without an
 * opt-in, within the 227 KiB with one, which cudalab's launches take. */
static void test_shared(void) {
  int n = 48 * 1024 / 4;
  float *p = sim_malloc(dev, 256 * 4, "f32[256]", err, sizeof err);
  void *args[] = {&p, &n};
  int rc = run("staticshared", d3(1, 1, 1), d3(256, 1, 1), (size_t)n * 4, args);
  int wrong = 0;
  for (int t = 0; t < 256; t++) wrong += p[t] != (float)(255 - t) + 2.0f * (float)(n - 1 - t);
  tu_check(rc == 0 && wrong == 0, "1 KiB static + 48 KiB dynamic shared memory runs right",
           "rc=%d wrong=%d %s", rc, wrong, err);
  rc = run("staticshared", d3(1, 1, 1), d3(256, 1, 1), 227 * 1024, args);
  tu_check(rc < 0 && strstr(err, "the launch needs 233472 bytes of shared memory per block "
                                  "(1024 static + 232448 dynamic); the NVIDIA H200 (simulated) "
                                  "allows at most 232448 (227 KiB) per block"),
           "1 KiB static + 227 KiB dynamic is refused, naming both", "rc=%d %s", rc, err);
  sim_free(dev, p);
}

/* What the blocks of a cluster do together is not modelled: loading says so. */
static void test_not_modelled(void) {
  static const char *const bodies[] = {
      "asm volatile(\"barrier.cluster.arrive;\"); asm volatile(\"barrier.cluster.wait;\");",
      "unsigned r; asm volatile(\"mapa.u32 %0, %1, 1;\" : \"=r\"(r) : \"r\"(0u)); p[0] = r;",
      "unsigned r; asm volatile(\"ld.shared::cluster.u32 %0, [%1];\" : \"=r\"(r) : \"r\"(0u)); "
      "p[0] = r;",
  };
  int all = 1;
  for (int i = 0; i < 3; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) k(unsigned *p) { %s }\n",
             bodies[i]);
    char *ptx = tu_ptx(text);
    char perr[1024] = "";
    sim_module *m = ptx ? sim_module_load(ptx, strlen(ptx), perr, sizeof perr) : NULL;
    int ok = ptx && !m && strstr(perr, "does not model the blocks of a cluster working together");
    if (!ok) printf("# %s\n#   %s\n", bodies[i], perr);
    all &= ok;
    sim_module_free(m);
    free(ptx);
  }
  tu_check(all, "cluster barriers and another block's shared memory are refused, saying why", " ");
  char *ptx = tu_ptx("extern \"C\" __global__ void __block_size__((32, 1, 1), (2, 1, 1)) "
                     "bs(int *p) { p[blockIdx.x] = 1; }\n");
  char perr[512];
  sim_module *m = ptx ? sim_module_load(ptx, strlen(ptx), perr, sizeof perr) : NULL;
  int *p = sim_malloc(dev, 64, "i32[16]", err, sizeof err);
  void *args[] = {&p};
  sim_launch_opts o = {0};
  int rc = m ? sim_launch(dev, sim_module_kernel(m, "bs"), d3(2, 1, 1), d3(32, 1, 1), 0, args,
                          &o, NULL, err, sizeof err)
             : 0;
  tu_check(m && rc < 0 && strstr(err, "kernel bs was declared with __block_size__ and a cluster "
                                      "shape (.blocksareclusters): the simulator does not model"),
           "a kernel whose blocks are clusters loads, and its launch says it is not modelled",
           "load: %s launch: %s", m ? "ok" : perr, err);
  sim_free(dev, p);
  sim_module_free(m);
  free(ptx);
}

/* A bad bound in the PTX refuses the module with the line and the bound, as the REPL refuses it
 * (both read with launch_bounds.h: tests/unit/test_parsers.c holds the REPL's reader to the same
 * message); before, the two disagreed, and a bound of 0 loaded here as nothing at all. */
static void test_bad_bounds(void) {
  static const struct {
    const char *dirs, *says, *name;
  } bad[] = {
      {".maxntid 0", "PTX line 5: bad launch bound '0' after .maxntid: each of its numbers must "
       "be a whole number from 1 to 2147483647", "a bound of 0 threads is refused, naming it"},
      {".maxntid 128, 1, 1, 1", "PTX line 5: bad launch bound: .maxntid takes 3 numbers, not more",
       "a fourth dimension is refused"},
      {".minnctapersm 3000000000", "PTX line 5: bad launch bound '3000000000' after .minnctapersm",
       "blocks per SM past 2^31 are refused"},
      {".maxntid 64\n.maxnreg x", "PTX line 6: bad launch bound 'x' after .maxnreg",
       "registers that are not a number are refused, on the directive's own line"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char ptx[512];
    snprintf(ptx, sizeof ptx, ".version 8.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry k(.param .u64 p)\n%s\n{\n  ret;\n}\n", bad[i].dirs);
    char perr[512] = "";
    sim_module *m = sim_module_load(ptx, strlen(ptx), perr, sizeof perr);
    tu_check(!m && strstr(perr, bad[i].says), bad[i].name, "got '%s'", m ? "loaded" : perr);
    sim_module_free(m);
  }
  /* every directive a kernel may carry, with a pragma and comments among them, still loads, and
   * a number in a comment is no bound */
  const char *good = ".version 8.0\n.target sm_90\n.address_size 64\n"
                     ".visible .entry k(.param .u64 p)\n.maxntid 96 // .maxntid 0\n"
                     ".minnctapersm 2 /* .maxnreg 0 */ .maxnreg 0x40\n.pragma \"nounroll;\";\n"
                     "{\n  ret;\n}\n";
  char perr[512] = "";
  sim_module *m = sim_module_load(good, strlen(good), perr, sizeof perr);
  int *p = sim_malloc(dev, 4096, "i32[1024]", err, sizeof err);
  void *args[] = {&p};
  sim_launch_opts o = {0};
  int rc = m ? sim_launch(dev, sim_module_kernel(m, "k"), d3(1, 1, 1), d3(128, 1, 1), 0, args, &o,
                          NULL, err, sizeof err)
             : 0;
  tu_check(m && rc < 0 && strstr(err, "kernel k was declared with __launch_bounds__(96): a block "
                                      "of 128 threads"),
           "bounds among a pragma and comments are read, and held to", "load: %s launch: %s",
           m ? "ok" : perr, err);
  sim_free(dev, p);
  sim_module_free(m);
}

int main(void) {
  tu_plan(18);
  dev = sim_device_new(NULL);
  mod = tu_module("launch bounds kernels", src);
  if (!mod) return 1;
  test_block_bounds();
  test_cluster_registers();
  test_shared();
  test_not_modelled();
  test_bad_bounds();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
