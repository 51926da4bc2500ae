/* test_errors.c: every failure the simulator promises to report, with its message asserted:
 * out-of-bounds and misaligned accesses, barriers reached by part of a block, shared-memory races,
 * divergent shuffles, traps, bad launch configurations, interruption, unsupported instructions,
 * recursion, and truncated / garbage / mutated PTX (clean errors, no crash). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvrtc_util.h"

static sim_device *dev;
static char err[4096];

static const char *src =
    "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "extern \"C\" __global__ void misal(int *p) {\n"
    "  int *q = (int *)((char *)p + 2);\n"
    "  q[threadIdx.x] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void halfbar(float *p) {\n"
    "  __shared__ float s[64];\n"
    "  s[threadIdx.x] = p[threadIdx.x];\n"
    "  if (threadIdx.x < 16) __syncthreads();\n"
    "  p[threadIdx.x] = s[63 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void twobars(float *p) {\n"
    "  __shared__ float s[64];\n"
    "  if (threadIdx.x < 32) { s[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = s[63 - threadIdx.x]; }\n"
    "  else { s[threadIdx.x] = 2 * p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = s[threadIdx.x ^ 1] + 1; }\n"
    "}\n"
    "extern \"C\" __global__ void exited(float *p) {\n"
    "  __shared__ float s[64];\n"
    "  if (threadIdx.x >= 32) return;\n"
    "  s[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = s[31 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void racy(float *p) {\n"
    "  __shared__ float s[64];\n"
    "  s[threadIdx.x] = p[threadIdx.x];\n"
    "  p[threadIdx.x] = s[(threadIdx.x + 32) & 63];\n"
    "}\n"
    "extern \"C\" __global__ void shoob(float *p, int k) {\n"
    "  __shared__ float s[64];\n"
    "  s[threadIdx.x + k] = 1.0f; __syncthreads(); p[threadIdx.x] = s[threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void divshfl(int *p) {\n"
    "  int v = p[threadIdx.x];\n"
    "  if (threadIdx.x < 16) v = __shfl_sync(0xffffffff, v, 0);\n"
    "  p[threadIdx.x] = v;\n"
    "}\n"
    "extern \"C\" __global__ void trapper(int *p) { if (p[threadIdx.x] == 3) __trap(); }\n"
    /* counts its tries, so the watchdog (which ends a loop that changes nothing) cannot judge it */
    "extern \"C\" __global__ void spin(volatile int *p) { p[1] = 1; int n = 0; while (p[0] == 0) n++; p[0] = n; }\n"
    "extern \"C\" __global__ void localoob(int *p, int k) { int a[8]; for (int i = 0; i < 8; i++) a[i] = p[i]; p[0] = a[k]; }\n"
    "extern \"C\" __global__ void halfmask(int *p) {\n"
    "  int v = p[threadIdx.x];\n"
    "  v += __shfl_down_sync(0xffff, v, 1);\n"
    "  p[threadIdx.x] = v;\n"
    "}\n"
    "extern \"C\" __global__ void tiled(int *p) {\n"
    "  int v = p[threadIdx.x];\n"
    "  unsigned m = threadIdx.x < 16 ? 0xffffu : 0xffff0000u;\n"
    "  v += __shfl_xor_sync(m, v, 1);\n"
    "  p[threadIdx.x] = v;\n"
    "}\n";

static sim_module *mod;

static int run(const char *k, sim_dim3 g, sim_dim3 b, void **args, const sim_launch_opts *o) {
  sim_launch_opts d = {0};
  d.threads = 1;
  err[0] = 0;
  return sim_launch(dev, sim_module_kernel(mod, k), g, b, 0, args, o ? o : &d, NULL, err, sizeof err);
}

static int has_all(const char *s, const char *const *subs) {
  for (; *subs; subs++)
    if (!strstr(s, *subs)) return 0;
  return 1;
}

static sim_dim3 d3(unsigned x, unsigned y, unsigned z) { sim_dim3 d = {x, y, z}; return d; }

static void test_oob(void) {
  int n = 1000, big = 1024;
  float *a = sim_malloc(dev, n * 4, "f32[1000]", err, sizeof err), *b = sim_malloc(dev, n * 4, "f32[1000]", err, sizeof err);
  float *c = sim_malloc(dev, n * 4, "f32[1000]", err, sizeof err);
  float *guard = sim_malloc(dev, 4096, "f32[1024]", err, sizeof err);
  for (int i = 0; i < 1024; i++) guard[i] = -1.0f;
  void *args[] = {&a, &b, &c, &big};
  const char *names[] = {"a", "b", "c", "n"};
  sim_launch_opts o = {0};
  o.threads = 1;
  o.param_names = names;
  int rc = run("vadd", d3(4, 1, 1), d3(256, 1, 1), args, &o);
  const char *want[] = {"out-of-bounds global load", "vadd", "block (3,0,0)", "thread (232,0,0)", "f32[1000]",
                        "index 1000 of f32[1000]", "is 1 element (4 bytes) past the end", "kernel.cu:3", "parameter 1, 'b'", NULL};
  tu_check(rc < 0 && has_all(err, want), "out-of-bounds load names kernel, block, thread, array, parameter, line", "rc=%d msg: %s", rc, err);
  int untouched = 1;
  for (int i = 0; i < 1024; i++) untouched &= guard[i] == -1.0f;
  for (int i = 744; i < 1000; i++) untouched &= c[i] == 0.0f; /* the failing warp wrote nothing */
  tu_check(untouched, "the bad access (and its warp) is not performed", "memory was modified");
  sim_free(dev, a); sim_free(dev, b); sim_free(dev, c); sim_free(dev, guard);
}

static void test_misaligned(void) {
  int *p = sim_malloc(dev, 1024, "i32[256]", err, sizeof err);
  void *args[] = {&p};
  int rc = run("misal", d3(1, 1, 1), d3(32, 1, 1), args, NULL);
  const char *want[] = {"misaligned global store of 4 bytes", "multiple of 4", "i32[256]", "kernel.cu:7", "thread (0,0,0)", NULL};
  tu_check(rc < 0 && has_all(err, want), "misaligned store is reported", "rc=%d msg: %s", rc, err);
  sim_free(dev, p);
}

static void test_barriers(void) {
  float *p = sim_malloc(dev, 256, "f32[64]", err, sizeof err);
  void *args[] = {&p};
  int rc = run("halfbar", d3(1, 1, 1), d3(64, 1, 1), args, NULL);
  const char *want[] = {"__syncthreads()", "only part", "kernel.cu:12", "block (0,0,0)", NULL};
  tu_check(rc < 0 && has_all(err, want), "barrier reached by part of a block is an error, not a hang", "rc=%d msg: %s", rc, err);
  rc = run("twobars", d3(1, 1, 1), d3(64, 1, 1), args, NULL);
  const char *want2[] = {"different __syncthreads()", "kernel.cu:17", "kernel.cu:18", NULL};
  tu_check(rc < 0 && has_all(err, want2), "warps at different barriers are reported", "rc=%d msg: %s", rc, err);
  for (int i = 0; i < 64; i++) p[i] = (float)i;
  rc = run("exited", d3(1, 1, 1), d3(64, 1, 1), args, NULL);
  tu_check(rc == 0 && p[0] == 31.0f && p[31] == 0.0f && p[40] == 40.0f, "barrier waits only for threads that have not exited", "rc=%d %s", rc, err);
  sim_free(dev, p);
}

/* A path of a branch that does its work and ends at the kernel's final ret, before the other
 * path reaches a __syncthreads(): its lanes wait there for the rest of the warp, and count as
 * exited, so the barrier completes (the order ptxas may give `if (i >= n) { o[i] = -1; return;
 * }`). Lanes 40..63 store -1; the others pass s[(i + 1) % 40] on. Also a loop of branches with no
 * exit, which the exit-path pass follows without end unless it notes where it has been. */
static const char *ended_ptx =
    ".version 9.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry ended(.param .u64 p)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n"
    "  .shared .align 4 .b8 s[256];\n"
    "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd4, %rd2, %rd3;\n"
    "  setp.ge.u32 %p1, %r1, 40;\n  @%p1 bra DONE;\n"
    "  mov.u64 %rd5, s;\n  add.s64 %rd6, %rd5, %rd3;\n  st.shared.u32 [%rd6], %r1;\n"
    "  bar.sync 0;\n"
    "  add.u32 %r2, %r1, 1;\n  rem.u32 %r3, %r2, 40;\n  mul.wide.u32 %rd7, %r3, 4;\n"
    "  add.s64 %rd7, %rd5, %rd7;\n  ld.shared.u32 %r4, [%rd7];\n  st.global.u32 [%rd4], %r4;\n"
    "  bra.uni END;\n"
    "DONE:\n  mov.u32 %r5, -1;\n  st.global.u32 [%rd4], %r5;\n  bra.uni END;\n"
    "END:\n  ret;\n}\n"
    ".visible .entry spin()\n{\nA:\n  bra.uni B;\nB:\n  bra.uni A;\n}\n";

static void test_path_ended(void) {
  sim_module *m = sim_module_load(ended_ptx, strlen(ended_ptx), err, sizeof err);
  tu_check(m != NULL, "a loop of branches loads", "%s", err);
  if (!m) return;
  int *p = sim_malloc(dev, 256, "i32[64]", err, sizeof err);
  void *args[] = {&p};
  sim_launch_opts o = {0};
  o.threads = 1;
  err[0] = 0;
  int rc = sim_launch(dev, sim_module_kernel(m, "ended"), d3(1, 1, 1), d3(64, 1, 1), 0, args,
                      &o, NULL, err, sizeof err);
  int bad = 0;
  for (int i = 0; i < 64; i++) bad += p[i] != (i < 40 ? (i + 1) % 40 : -1);
  tu_check(rc == 0 && bad == 0, "lanes that ended their path at the final ret leave a barrier",
           "rc=%d, %d elements differ: %s", rc, bad, err);
  sim_free(dev, p);
  sim_module_free(m);
}

static void test_race(void) {
  float *p = sim_malloc(dev, 256, "f32[64]", err, sizeof err);
  void *args[] = {&p};
  sim_launch_opts o = {0};
  o.threads = 1;
  o.race_check = 1;
  int rc = run("racy", d3(1, 1, 1), d3(64, 1, 1), args, &o);
  const char *want[] = {"shared-memory race", "warp 1", "warp 0", "kernel.cu:27", NULL};
  tu_check(rc < 0 && has_all(err, want), "shared-memory race between warps is detected", "rc=%d msg: %s", rc, err);
  o.race_check = 0;
  rc = run("racy", d3(1, 1, 1), d3(64, 1, 1), args, &o);
  tu_check(rc == 0, "race check is off by default", "rc=%d %s", rc, err);
  o.race_check = 1;
  rc = run("exited", d3(1, 1, 1), d3(64, 1, 1), args, &o);
  tu_check(rc == 0, "race check: no false positive across a barrier", "rc=%d %s", rc, err);
  int k = 40;
  void *a2[] = {&p, &k};
  rc = run("shoob", d3(1, 1, 1), d3(64, 1, 1), a2, NULL);
  const char *want2[] = {"out-of-bounds shared store", "__shared__ s (256 bytes)", "kernel.cu:32", "thread (24,0,0)", NULL};
  tu_check(rc < 0 && has_all(err, want2), "out-of-bounds shared store names the array", "rc=%d msg: %s", rc, err);
  k = 9;
  rc = run("localoob", d3(1, 1, 1), d3(1, 1, 1), a2, NULL);
  tu_check(rc < 0 && strstr(err, "out-of-bounds local load") && strstr(err, "kernel.cu:41"), "out-of-bounds local array read is reported", "rc=%d msg: %s", rc, err);
  sim_free(dev, p);
}

static void test_misc(void) {
  int *p = sim_malloc(dev, 256, "i32[64]", err, sizeof err);
  void *args[] = {&p};
  int rc = run("divshfl", d3(1, 1, 1), d3(32, 1, 1), args, NULL);
  tu_check(rc < 0 && strstr(err, "divergent shuffle"), "shuffle in divergent code with a full mask is reported", "rc=%d msg: %s", rc, err);
  rc = run("halfmask", d3(1, 1, 1), d3(32, 1, 1), args, NULL);
  tu_check(rc < 0 && strstr(err, "lanes 0xffff0000 run it without their own bit in the mask") &&
               strstr(err, "thread (16,0,0)"),
           "a full warp shuffling with mask 0xffff is reported", "rc=%d msg: %s", rc, err);
  for (int i = 0; i < 64; i++) p[i] = i;
  rc = run("tiled", d3(1, 1, 1), d3(32, 1, 1), args, NULL);
  tu_check(rc == 0 && p[0] == 1 && p[1] == 1 && p[16] == 33 && p[17] == 33,
           "two half-warps, each shuffling with its own mask, are fine", "rc=%d p0=%d p16=%d msg: %s", rc, p[0], p[16], err);
  for (int i = 0; i < 64; i++) p[i] = i;
  rc = run("trapper", d3(1, 1, 1), d3(32, 1, 1), args, NULL);
  tu_check(rc < 0 && strstr(err, "trap") && strstr(err, "thread (3,0,0)"), "trap ends the launch", "rc=%d msg: %s", rc, err);
  rc = run("trapper", d3(1, 1, 1), d3(2048, 1, 1), args, NULL);
  tu_check(rc < 0 && strstr(err, "invalid launch configuration") && strstr(err, "1024"), "too many threads per block", "rc=%d msg: %s", rc, err);
  rc = run("trapper", d3(0, 1, 1), d3(32, 1, 1), args, NULL);
  tu_check(rc < 0 && strstr(err, "invalid launch configuration"), "empty grid", "rc=%d msg: %s", rc, err);
  sim_free(dev, p);
}

/* Interrupts the spin kernel once it runs (it sets p[1]), polling for that every millisecond
 * for 10 s at most: a fixed delay would test the flag before the launch on a busy machine. */
static volatile sig_atomic_t stop;
static void *stopper(void *arg) {
  int *p = arg;
  struct timespec ms = {0, 1000 * 1000};
  for (int i = 0; i < 10000 && !__atomic_load_n(&p[1], __ATOMIC_ACQUIRE); i++) nanosleep(&ms, NULL);
  stop = 1;
  return NULL;
}

static void test_interrupt(void) {
  int *p = sim_malloc(dev, 8, "i32[2]", err, sizeof err);
  p[0] = p[1] = 0;
  void *args[] = {&p};
  sim_launch_opts o = {0};
  o.threads = 1;
  o.interrupt = &stop;
  pthread_t t;
  pthread_create(&t, NULL, stopper, p);
  int rc = run("spin", d3(1, 1, 1), d3(32, 1, 1), args, &o);
  pthread_join(t, NULL);
  tu_check(rc < 0 && strstr(err, "interrupted"), "an endless kernel stops on interrupt", "rc=%d msg: %s", rc, err);
  sim_free(dev, p);
}

static void test_unsupported(void) {
  const char *ptx =
      ".version 9.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<3>;\n  .reg .b32 %r<3>;\n"
      "  ld.param.u64 %rd1, [p];\n"
      "  tex.a1d.v4.s32.s32 {%r1, %r2, %r1, %r2}, [%rd1, {%r1, %r2}];\n"
      "  ret;\n}\n";
  sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
  tu_check(!m && strstr(err, "PTX line 9") && strstr(err, "tex.a1d.v4.s32.s32"),
           "unsupported instruction fails at load, naming it and its line", "msg: %s", err);
  sim_module_free(m);
  const char *rec = "__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
                    "extern \"C\" __global__ void k(int *p) { p[0] = fib(p[1]); }\n";
  char *r = tu_ptx(rec);
  m = r ? sim_module_load(r, strlen(r), err, sizeof err) : NULL;
  tu_check(r && m, "a recursive function loads (test_calls.c runs it)", "msg: %s", err);
  sim_module_free(m);
  free(r);
}

/* Loads a kernel of one instruction (with %r, %rd, %f and %p registers declared); the load must
 * fail with `want` in its message. */
static void refused(const char *inst, const char *want, const char *name) {
  char ptx[1024];
  snprintf(ptx, sizeof ptx,
           ".version 9.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %%rd<3>;\n  .reg .b32 %%r<3>;\n"
           "  .reg .f32 %%f<3>;\n  .reg .pred %%p<3>;\n  ld.param.u64 %%rd1, [p];\n"
           "$L1:\n  %s\n  ret;\n}\n", inst);
  sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
  tu_check(!m && strstr(err, want), name, "msg: %s", m ? "(loaded)" : err);
  sim_module_free(m);
}

/* The packed half-word forms the PTX ISA does not have (add, min and max are all it has on
 * .u16x2 / .s16x2, .relu only on min and max of .s16x2 and .s32), and vabsdiff4 / vabsdiff2
 * without their three .u32 / .s32 types or with both .sat and .add: refused, not computed as
 * some neighbouring form. */
static void test_packed_refused(void) {
  refused("sub.u16x2 %r1, %r2, %r2;", "'sub.u16x2': the simulator's sub takes no .u16x2",
          "sub on half-word pairs is refused (the ISA has none)");
  refused("mul.lo.s16x2 %r1, %r2, %r2;", "mul takes no .s16x2", "mul on half-word pairs is refused");
  refused("add.sat.s16x2 %r1, %r2, %r2;", "'add.sat.s16x2'",
          "add.sat on half-word pairs is refused");
  refused("add.cc.u16x2 %r1, %r2, %r2;", "'add.cc.u16x2'", "add.cc on half-word pairs is refused");
  refused("max.relu.u16x2 %r1, %r2, %r2;", ".relu is for min and max on .s16x2",
          ".relu on unsigned half-words is refused with a reason");
  refused("min.NaN.s16x2 %r1, %r2, %r2;", "'min.NaN.s16x2'", ".NaN on integer halves is refused");
  refused("max.relu.u32 %r1, %r2, %r2;", ".relu is for min and max on .s32 and .s16x2",
          ".relu on an unsigned integer is refused with a reason");
  refused("max.relu.s64 %rd1, %rd2, %rd2;", ".relu is for min and max on .s32 and .s16x2",
          ".relu on a 64-bit integer is refused with a reason");
  refused("vabsdiff2.u32 %r1, %r2, %r2, %r2;", "expected .dtype.atype.btype",
          "vabsdiff2 with one type is refused");
  refused("vabsdiff4.u32.u16.u32 %r1, %r2, %r2, %r2;", "each type must be .u32 or .s32",
          "vabsdiff4 on a 16-bit type is refused");
  refused("vabsdiff2.s32.s32.s32.sat.add %r1, %r2, %r2, %r2;", ".sat and .add together",
          "vabsdiff2 with both .sat and .add is refused");
  refused("vabsdiff2.u32.u32.u32.bogus %r1, %r2, %r2, %r2;", "vabsdiff2 takes no .bogus",
          "vabsdiff2 with an unknown modifier is refused by name");
}

/* The 8-bit float conversions the ISA does not have: refused with what it does have. */
static void test_fp8_refused(void) {
  refused("cvt.rn.e4m3x2.f32 %r1, %f1, %f2;", "a conversion to 8-bit floats needs .satfinite",
          "a conversion to e4m3x2 without .satfinite is refused");
  refused("cvt.rn.satfinite.e4m3x2.f64 %r1, %rd1;",
          "8-bit floats convert from .f32 or .f16x2, and to .f16x2",
          "a conversion to e4m3x2 from f64 is refused");
  refused("cvt.rz.satfinite.e5m2x2.f32 %r1, %f1, %f2;",
          "a conversion of 8-bit floats takes .rn and .relu only",
          "a conversion to e5m2x2 rounding towards zero is refused");
  refused("cvt.rn.satfinite.f16x2.e4m3x2 %r1, %r2;",
          "a conversion from 8-bit floats takes no .satfinite",
          "a widening of e4m3x2 with .satfinite is refused");
  refused("cvt.rn.f32.e5m2x2 %f1, %r2;",
          "8-bit floats convert from .f32 or .f16x2, and to .f16x2",
          "a widening of e5m2x2 to f32 is refused");
}

/* A modifier, type or rounding that an instruction does not take fails the load, naming the
 * instruction and the modifier (ptx_opcodes.def's rows say what each takes). Before the table,
 * most of these loaded: the modifier was ignored, or the instruction computed 0 for a type it
 * has no meaning on, or became a no-op. */
static void test_modifiers(void) {
  refused("add.bogus.s32 %r1, %r2, %r2;", "PTX line 12: unsupported instruction 'add.bogus.s32': "
          "the simulator's add takes no .bogus", "an unknown modifier is refused by name");
  refused("mov.bogus.u32 %r1, %r2;", "'mov.bogus.u32': the simulator's mov takes no .bogus",
          "mov with an unknown modifier is refused, not ignored");
  refused("and.rn.b32 %r1, %r2, %r2;", "'and.rn.b32': the simulator's and takes no .rn",
          "a rounding on a logic operation is refused, not ignored");
  refused("popc.f32 %r1, %f1;", "'popc.f32': the simulator's popc takes no .f32",
          "popc on a float is refused, not computed as 0");
  refused("sqrt.rn.s32 %r1, %r2;", "'sqrt.rn.s32': the simulator's sqrt takes no .s32",
          "sqrt on an integer is refused, not computed as 0");
  refused("fma.rn.s32 %r1, %r2, %r2, %r2;", "fma takes no .s32", "fma on integers is refused");
  /* the forms of tex that texture objects do not give (sim_texture.c runs the rest) */
  refused("tex.2d.v4.f32.f32 {%f1, %f2, %f1, %f2}, [%rd1, %rd2, {%f1, %f2}];",
          "an explicit sampler is not supported", "tex with a sampler is refused");
  refused("tex.1d.v4.f32.f32 {%f1, %f2, %f1, %f2}, [%r1, {%f1}];",
          "the texture must be a 64-bit register holding a texture object",
          "tex on a 32-bit register is refused");
  refused("tex.1d.v4.f16.f32 {%f1, %f2, %f1, %f2}, [%rd1, {%f1}];", "tex takes no .f16",
          "tex with f16 results is refused");
  refused("tex.2d.v4.f32.f32 {%f1, %f2, %f1, %f2}, [%rd1, {%f1}];", "wrong number of coordinates",
          "tex.2d with one coordinate is refused");
  refused("tex.1d.v2.f32.f32 {%f1, %f2}, [%rd1, {%f1}];", "only the .v4 form",
          "tex.v2 is refused");
  refused("tex.1d.v4.f32.f32 {%f1, %f2, %f1, %f2}|%p1, [%rd1, {%f1}];",
          "the residency predicate", "tex with a residency predicate is refused");
  refused("tex.2d.v4.f32.s32 {%f1, %f2, %f1, %f2}, [%rd1, {%r1, %r2}], {%r1, %r2};",
          "coordinate offsets and depth compares are not supported", "tex offsets are refused");
  refused("copysign.s32 %r1, %r2, %r2;", "copysign takes no .s32", "copysign on integers is refused");
  refused("membar.bogus;", "'membar.bogus': the simulator's membar takes no .bogus",
          "an unknown ordering is refused, not a no-op");
  refused("fence.acq_rel.bogus;", "fence takes no .bogus", "fence with an unknown modifier is refused");
  refused("bra.bogus $L1;", "bra takes no .bogus", "a branch with an unknown modifier is refused");
  refused("exit.sync;", "exit takes no .sync", "exit takes no modifier");
  refused("ld.global.bogus.u32 %r1, [%rd1];", "ld takes no .bogus", "ld with an unknown modifier");
  refused("add.rz.s32 %r1, %r2, %r2;", "'add.rz.s32': rounding, .ftz and .approx are for "
          "floating-point types", "a rounding on integer arithmetic is refused with a reason");
  refused("frobnicate.u32 %r1;", "unsupported instruction 'frobnicate.u32'",
          "an unknown instruction is refused by name");
  test_packed_refused();
  test_fp8_refused();
}

/* The vector atomics the PTX ISA has (add on .f32; add, min and max .noftz on 16-bit floats; on
 * global memory) load; the forms it lacks, and a destination a later element would read (each
 * element runs as an atomic of its own), are refused with the reason. */
static void test_vector_atomics(void) {
  refused("atom.shared.add.v2.f32 {%f1, %f2}, [%rd1], {%f1, %f2};",
          "vector atomics are on global memory only", "a vector atomic on .shared is refused");
  refused("atom.global.min.v2.f32 {%f1, %f2}, [%rd1], {%f1, %f2};",
          "the vector atomics are add on .v2 / .v4 .f32", "min on a vector of f32 is refused");
  refused("red.global.add.v8.f32 [%rd1], {%f1, %f2, %f1, %f2, %f1, %f2, %f1, %f2};",
          "the vector atomics are add on", "a .v8 of f32 is refused");
  refused("atom.global.add.v2.f32 {%f1, %f2}, [%rd1], {%f2, %f1};",
          "a destination register that a later element reads",
          "a destination that a later element reads is refused");
  refused("atom.global.add.v4.f32 {%f1, %f2}, [%rd1], {%f1, %f2};", "vector operand does not match",
          "a vector operand of the wrong length is refused");
  const char *ok = ".version 9.0\n.target sm_90\n.address_size 64\n"
                   ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<3>;\n"
                   "  .reg .f32 %f<3>;\n  .reg .b16 %h<3>;\n  ld.param.u64 %rd1, [p];\n"
                   "  atom.global.add.v2.f32 {%f1, %f2}, [%rd1], {%f1, %f2};\n"
                   "  red.global.v2.bf16.max.noftz [%rd1], {%h1, %h2};\n  ret;\n}\n";
  sim_module *m = sim_module_load(ok, strlen(ok), err, sizeof err);
  tu_check(m != NULL, "the ISA's own vector atomics load, d and b the same registers", "%s", err);
  sim_module_free(m);
}

/* A variable's .attribute: .managed (__managed__) and .unified load as a plain .global
 * variable; an attribute the PTX ISA lacks, or one on another space, is refused by name. */
static void var_loads(const char *decl, const char *want, const char *name) {
  char ptx[512];
  snprintf(ptx, sizeof ptx, ".version 9.0\n.target sm_90\n.address_size 64\n%s\n"
           ".visible .entry k()\n{\n  ret;\n}\n", decl);
  sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
  if (!want) tu_check(m != NULL, name, "%s", err);
  else tu_check(!m && strstr(err, want), name, "msg: %s", m ? "(loaded)" : err);
  sim_module_free(m);
}

static void test_attributes(void) {
  var_loads(".global .attribute(.managed) .align 4 .u32 mcount;", NULL,
            "a __managed__ variable loads");
  var_loads(".global .attribute(.unified(0x1234, 77)) .align 8 .b8 u[16] = {1};", NULL,
            "a .unified variable with an initializer loads");
  var_loads(".global .attribute(.bogus) .u32 x;", "unknown variable attribute '.bogus'",
            "an unknown attribute is refused by name");
  var_loads(".const .attribute(.managed) .u32 x;", ".attribute on a variable that is not .global",
            "an attribute on a .const variable is refused");
}

/* isspacep takes one state space, as the PTX ISA writes it. */
static void test_isspacep(void) {
  refused("isspacep.global.shared %p1, %rd1;", "expected one state space",
          "isspacep with two spaces is refused");
  refused("isspacep %p1, %rd1;", "expected one state space", "isspacep without a space is refused");
  refused("isspacep.global %r1, %rd1;", "expected a predicate operand",
          "isspacep into a register is refused");
}

/* inst, in refused()'s kernel, loads. */
static void loads(const char *inst, const char *name) {
  char ptx[1024];
  snprintf(ptx, sizeof ptx,
           ".version 9.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %%rd<3>;\n  .reg .b32 %%r<3>;\n"
           "  .reg .f32 %%f<3>;\n  .reg .pred %%p<3>;\n  ld.param.u64 %%rd1, [p];\n"
           "$L1:\n  %s\n  ret;\n}\n", inst);
  sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
  tu_check(m != NULL, name, "%s", err);
  sim_module_free(m);
}

/* Cache hints change no result and load; a hint where the PTX ISA has none (on shared memory, a
 * store's prefetch size) or malformed is refused with the reason. */
static void test_cache_hints(void) {
  loads("createpolicy.cvt.L2.b64 %rd2, %rd1;", "createpolicy.cvt loads");
  loads("createpolicy.range.L2::evict_first.b64 %rd2, [%rd1], 128, 256;",
        "createpolicy.range loads");
  loads("red.global.add.L2::cache_hint.u32 [%rd1], %r1, %rd2;", "red with a policy loads");
  refused("ld.shared.L2::cache_hint.u32 %r1, [%rd1], %rd2;", ".L2::cache_hint is for global memory",
          "a cache policy on shared memory is refused");
  refused("ld.global.L2::cache_hint.u32 %r1, [%rd1], %r2;",
          "the cache policy must be a 64-bit register", "a 32-bit policy is refused");
  refused("st.global.L2::128B.u32 [%rd1], %r1;", "the simulator's st takes no .L2::128B",
          "a prefetch size on a store is refused");
  refused("ld.shared.L2::128B.u32 %r1, [%rd1];", "a prefetch size is for global memory",
          "a prefetch size on shared memory is refused");
  refused("createpolicy.fractional.b64 %rd1, 1.0;", "expected one or two L2 priorities",
          "createpolicy without a priority is refused");
  refused("createpolicy.fractional.L2::evict_last.b32 %r1;", "the policy is a .b64",
          "a 32-bit policy register is refused");
  refused("discard.global.L2 [%rd1], 64;", "expected [a], 128", "discard of 64 bytes is refused");
}

/* elect.sync writes a lane and a predicate. */
static void test_elect(void) {
  loads("elect.sync _|%p1, %r1;", "elect.sync with a sink for the lane loads");
  refused("elect.sync %r1, %r2;", "elect.sync writes a lane and a predicate, d|p",
          "elect.sync without its predicate is refused");
  refused("elect.any %r1|%p1, %r2;", "the simulator's elect takes no .any",
          "elect without .sync is refused");
}

/* Barriers: a number outside 0..15 or a thread count that is no multiple of 32 given as a
 * number is refused at load; bar.arrive needs a count; the ISA's forms load. */
static void test_barriers_named(void) {
  loads("bar.sync 1, 64;", "bar.sync with a thread count loads");
  loads("barrier.sync.aligned %r1, %r2;", "barrier.sync with registers loads");
  loads("barrier.arrive 15, 1024;", "barrier.arrive loads");
  loads("bar.red.and.pred %p1, 2, 64, !%p2;", "bar.red with a thread count loads");
  refused("bar.sync 16;", "barriers are numbered 0 to 15", "barrier 16 is refused");
  refused("bar.sync 1, 48;", "a thread count must be a multiple of 32, from 32 to 1024",
          "a count of 48 threads is refused");
  refused("bar.arrive 1;", "bar.arrive needs a thread count", "bar.arrive without a count");
}

/* mbarrier: the forms of a block's own barrier load; those of the tensor memory accelerator and
 * of clusters are refused naming cuda::barrier and what to use instead. */
static void test_mbarrier(void) {
  loads("mbarrier.init.shared::cta.b64 [%rd1], %r1;", "mbarrier.init loads");
  loads("mbarrier.arrive.release.cta.shared::cta.b64 _, [%rd1], 2;", "mbarrier.arrive loads");
  loads("mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%rd1], %r1, 1000;",
        "mbarrier.try_wait.parity with a time hint loads");
  loads("cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];", "cp.async.mbarrier.arrive loads");
  refused("mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%rd1], 64;",
          "the simulator runs cuda::barrier in a block's shared memory, not with the tensor "
          "memory accelerator's byte counts", "expect_tx is refused naming cuda::barrier");
  refused("mbarrier.arrive.shared::cluster.b64 _, [%r1];", "or across a cluster",
          "a cluster's mbarrier is refused");
  refused("mbarrier.init.global.b64 [%rd1], 32;", "an mbarrier is in shared memory",
          "an mbarrier in global memory is refused");
  refused("mbarrier.test_wait.shared.b64 %p1, [%rd1], %r1;", "the state must be a 64-bit register",
          "a 32-bit state is refused");
  refused("cp.async.ca.shared.global.b32 [%r1], [%rd1], 4;", "unsupported instruction",
          "cp.async with a type is refused");
}

static unsigned rng = 12345;
static unsigned next_rand(void) { rng = rng * 1103515245u + 12345u; return rng >> 8; }

static void test_malformed(void) {
  char *ptx = tu_ptx(src);
  if (!ptx) return;
  size_t len = strlen(ptx);
  int crashes_avoided = 0, loaded = 0, clean = 1;
  for (size_t cut = 0; cut < len; cut += 97) {
    char *t = malloc(cut + 1);
    memcpy(t, ptx, cut);
    t[cut] = 0;
    err[0] = 0;
    sim_module *m = sim_module_load(t, cut, err, sizeof err);
    if (m) loaded++;
    else if (!err[0]) clean = 0;
    sim_module_free(m);
    free(t);
    crashes_avoided++;
  }
  /* a cut that happens to fall between two complete kernels is valid PTX and may load */
  tu_check(clean && loaded < crashes_avoided / 4, "truncated PTX gives a clean error", "%d cuts, %d loaded, clean=%d", crashes_avoided, loaded, clean);
  char garbage[4096];
  for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (char)(next_rand() & 0xff);
  sim_module *m = sim_module_load(garbage, sizeof garbage, err, sizeof err);
  tu_check(!m && err[0], "garbage PTX gives a clean error", "msg: %s", err);
  sim_module_free(m);
  int ok = 0, total = 300;
  for (int it = 0; it < total; it++) {
    char *t = malloc(len + 1);
    memcpy(t, ptx, len + 1);
    int muts = 1 + (int)(next_rand() % 4);
    for (int k = 0; k < muts; k++) {
      size_t pos = next_rand() % len;
      switch (next_rand() % 4) {
        case 0: t[pos] = (char)(next_rand() & 0x7f); break;
        case 1: t[pos] = "0123456789%[]{},;.-"[next_rand() % 19]; break;
        case 2: memmove(t + pos, t + pos + 1, len - pos); break;
        default: t[pos] = ' '; break;
      }
    }
    err[0] = 0;
    sim_module *mm = sim_module_load(t, strlen(t), err, sizeof err);
    if (mm || err[0]) ok++;
    sim_module_free(mm);
    free(t);
  }
  tu_check(ok == total, "mutated PTX: load succeeds or fails cleanly (fuzz, run under ASan)", "%d of %d", ok, total);
  free(ptx);
}

int main(void) {
  tu_plan(105);
  dev = sim_device_new(NULL);
  mod = tu_module("compile error kernels", src);
  if (!mod) return 1;
  test_oob();
  test_misaligned();
  test_barriers();
  test_path_ended();
  test_race();
  test_misc();
  test_interrupt();
  test_unsupported();
  test_modifiers();
  test_vector_atomics();
  test_attributes();
  test_isspacep();
  test_cache_hints();
  test_elect();
  test_barriers_named();
  test_mbarrier();
  test_malformed();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
