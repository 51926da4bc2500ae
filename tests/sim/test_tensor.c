/* test_tensor.c: the tensor-core, ldmatrix and cp.async instructions' failures, with their
 * messages asserted: combinations the simulator does not model are refused at load time naming
 * the instruction, its PTX line and the part refused; out-of-bounds, misaligned and partial-warp
 * executions are launch errors that leave memory as it was. (Their results are checked against
 * CPU references in tests/corpus/tensor.lua.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static char err[4096];

/* A module of one kernel whose 9th PTX line is `inst`. */
static sim_module *load_one(const char *inst) {
  char ptx[2048];
  snprintf(ptx, sizeof ptx,
           ".version 9.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %%rd<3>;\n  .reg .b32 %%r<40>;\n  .reg .f32 %%f<40>;\n"
           "  %s\n  ret;\n}\n",
           inst);
  err[0] = 0;
  return sim_module_load(ptx, strlen(ptx), err, sizeof err);
}

static unsigned rng = 2024;
static unsigned next_rand(void) { rng = rng * 1103515245u + 12345u; return rng >> 8; }

/* Mutated tensor PTX (the kernels of this file, compiled) loads or fails with a message, never
 * crashes (run under ASan). */
static const char *src;
static void fuzz(void) {
  char *ptx = tu_ptx(src);
  if (!ptx) return;
  size_t len = strlen(ptx);
  int ok = 0, total = 400;
  for (int it = 0; it < total; it++) {
    char *t = malloc(len + 1);
    memcpy(t, ptx, len + 1);
    for (int k = 0, muts = 1 + (int)(next_rand() % 3); k < muts; k++) {
      size_t pos = next_rand() % len;
      const char *hot = strstr(ptx + pos, "mma") ? strstr(ptx + pos, "mma") : strstr(ptx, "ldmatrix");
      if (hot && next_rand() % 2) pos = (size_t)(hot - ptx) + next_rand() % 40; /* near a tensor instruction */
      if (pos >= len) pos = len - 1;
      switch (next_rand() % 4) {
        case 0: t[pos] = (char)(next_rand() & 0x7f); break;
        case 1: t[pos] = "0123456789%[]{},;.-_"[next_rand() % 20]; break;
        case 2: memmove(t + pos, t + pos + 1, len - pos); break;
        default: t[pos] = ' '; break;
      }
    }
    err[0] = 0;
    sim_module *m = sim_module_load(t, strlen(t), err, sizeof err);
    if (m || err[0]) ok++;
    sim_module_free(m);
    free(t);
  }
  tu_check(ok == total, "mutated tensor PTX loads or fails cleanly (fuzz, run under ASan)", "%d of %d", ok, total);
  free(ptx);
}

/* Each bad instruction must fail the load with its line, its name and the reason. */
static void test_refused(void) {
  static const struct { const char *inst, *why, *name; } bad[] = {
      {"wmma.load.a.sync.aligned.row.m16n16k32.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;",
       "shape m16n16k32 is not supported", "wmma: an unknown shape is refused by name"},
      {"wmma.load.a.sync.aligned.row.m8n8k32.s4 {%r1}, [%rd1], %r9;", "modifier .s4 is not supported",
       "wmma: integer sub-byte types are refused"},
      {"wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1, %r2, %r3, %r4}, [%rd1], %r9;",
       "the fragment needs a list of 8 registers", "wmma: a fragment of the wrong length is refused"},
      {"wmma.load.a.sync.aligned.row.m16n16k8.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;",
       "shape m16n16k8 is not supported for wmma", "wmma: a shape of another type is refused"},
      {"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32.satfinite {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, "
       "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, "
       "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};",
       "modifier .satfinite is not supported", "wmma.mma: .satfinite is refused"},
      {"wmma.mma.sync.aligned.row.col.m16n16k16.f16.bf16.bf16.f16 {%r1, %r2, %r3, %r4}, "
       "{%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4};",
       "bf16 and tf32 accumulate in f32 only", "wmma.mma: bf16 with f16 accumulators is refused"},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
       "{%r5, %r6}, {%r1, %r2};",
       "d and c must both be f32 or both be f16", "mma: mixed accumulator types are refused"},
      {"mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2}, "
       "{%r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};",
       "shape m8n8k4 is not supported for mma", "mma: the Volta shape is refused by name"},
      {"mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
       "{%r5, %r6}, {%f1, %f2, %f3, %f4};",
       "shape m16n8k16 is not supported for tf32 mma", "mma: tf32 at k16 is refused"},
      {"mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
       "{%r5, %r6}, {%f1, %f2, %f3, %f4};",
       "this shape needs .row.col", "mma: layouts other than .row.col are refused"},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, "
       "{%f1, %f2, %f3, %f4};",
       "d needs a list of 4 registers", "mma: a short destination list is refused"},
      {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, "
       "{%r1, %r2, %r3, %r4};",
       "shape m16n8k32 is not supported for mma", "mma: integer shapes are refused"},
      {"ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%r1, %r2, %r3}, [%r4];", "modifier .x3 is not supported",
       "ldmatrix: .x3 is refused"},
      {"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1}, [%r4];", "shape m16n16k0 is not supported for ldmatrix",
       "ldmatrix: the sm_100 shapes are refused"},
      {"cp.async.ca.shared.global [%r1], [%rd1], 32;", "cp-size must be 4, 8 or 16", "cp.async: a cp-size of 32 is refused"},
      {"cp.async.ca.shared.global [%r1], [%rd1], 8, 12;", "src-size is larger than cp-size",
       "cp.async: a constant src-size above cp-size is refused"},
      {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];",
       "is not supported", "cp.async.bulk is refused"},
      {"cvt.rm.tf32.f32 %r1, %f1;", "needs one of .rna, .rn, .rz", "cvt to tf32: .rm is refused"},
      {"mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r1, %r2}, {%r5}, {%r1, %r2, %r3, %r4};",
       "element types not supported", "mma: integer inputs are refused as a type"},
      {"mma.sync.aligned.m16n8k8.row.col.bf16.bf16 {%r1, %r2}, {%r1, %r2}, {%r5}, {%r1, %r2};",
       "d and c must both be f32 or both be f16", "mma: a type list without accumulator types is refused"},
      {"wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9, %r10;",
       "wrong number of operands", "wmma: an extra operand is refused"},
      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, 7}, {%r5, %r6}, "
       "{%f1, %f2, %f3, %f4};",
       "a register list holds a constant", "mma: a constant inside a register list is refused"},
      {"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2}, [%r4];", "the destination needs a list of 4 registers",
       "ldmatrix: a short destination list is refused"},
      {"wmma.store.d.sync.aligned.row.m16n16k16.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, _}, %r9;",
       "a stored fragment holds a sink", "wmma.store: a sink among the stored registers is refused"},
      {"wmma.load.c.sync.aligned.row.m16n16k16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8, %f9}, [%rd1];",
       "vector of more than 8", "a register list of 9 is refused"},
      {"cp.async.ca.shared.global [%r1], [%rd1], %r2;", "cp-size must be 4, 8 or 16", "cp.async: a cp-size in a register is refused"},
      {"ldmatrix.sync.aligned.m8n8.x1.global.b16 {%r1}, [%rd1];", "only shared memory", "ldmatrix: global memory is refused"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sim_module *m = load_one(bad[i].inst);
    char head[64];
    int n = (int)(strchr(bad[i].inst, ' ') - bad[i].inst);
    snprintf(head, sizeof head, "'%.*s'", n, bad[i].inst);
    tu_check(!m && strstr(err, "PTX line 9") && strstr(err, head) && strstr(err, bad[i].why), bad[i].name, "msg: %s", err);
    sim_module_free(m);
  }
  fuzz();
  sim_module *m = load_one("cp.async.wait_group 1;");
  tu_check(m != NULL, "cp.async.wait_group with an immediate loads", "msg: %s", err);
  sim_module_free(m);
  m = load_one("cp.async.cg.shared::cta.global.L2::128B [%r1], [%rd1], 16;");
  tu_check(m != NULL, "cp.async with .shared::cta and an L2 prefetch hint loads", "msg: %s", err);
  sim_module_free(m);
}

static const char *src =
    "extern \"C\" __global__ void wload(const float *c, int off, float *out) {\n"
    "  float x[8];\n"
    "  asm volatile(\"wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;\"\n"
    "      : \"=f\"(x[0]), \"=f\"(x[1]), \"=f\"(x[2]), \"=f\"(x[3]), \"=f\"(x[4]), \"=f\"(x[5]), \"=f\"(x[6]), \"=f\"(x[7])\n"
    "      : \"l\"(c + off), \"r\"(16));\n"
    "  asm volatile(\"wmma.store.d.sync.aligned.col.m16n16k16.global.f32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;\"\n"
    "      :: \"l\"(out + 2 * off), \"f\"(x[0]), \"f\"(x[1]), \"f\"(x[2]), \"f\"(x[3]), \"f\"(x[4]), \"f\"(x[5]),\n"
    "         \"f\"(x[6]), \"f\"(x[7]), \"r\"(16) : \"memory\");\n"
    "}\n"
    "extern \"C\" __global__ void wdiv(const float *c, float *out) {\n"
    "  float x[8] = {0};\n"
    "  if (threadIdx.x < 16)\n"
    "    asm volatile(\"wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;\"\n"
    "        : \"=f\"(x[0]), \"=f\"(x[1]), \"=f\"(x[2]), \"=f\"(x[3]), \"=f\"(x[4]), \"=f\"(x[5]), \"=f\"(x[6]), \"=f\"(x[7])\n"
    "        : \"l\"(c), \"r\"(16));\n"
    "  out[threadIdx.x] = x[0];\n"
    "}\n"
    "extern \"C\" __global__ void cpa(const float *in, float *out, int off, int srcsize) {\n"
    "  __shared__ __align__(16) float s[128];\n"
    "  unsigned d = (unsigned)__cvta_generic_to_shared(&s[4 * threadIdx.x]);\n"
    "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(d), \"l\"(in + off + 4 * threadIdx.x), \"r\"(srcsize));\n"
    "  asm volatile(\"cp.async.wait_all;\" ::: \"memory\");\n"
    "  out[threadIdx.x] = s[threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void ldm(unsigned *out, int off) {\n"
    "  __shared__ __align__(16) unsigned short s[256];\n"
    "  unsigned a = (unsigned)__cvta_generic_to_shared(&s[8 * (threadIdx.x & 7) + off]), r;\n"
    "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\" : \"=r\"(r) : \"r\"(a));\n"
    "  out[threadIdx.x] = r;\n"
    "}\n"
    "extern \"C\" __global__ void ldgen(unsigned *out, const unsigned short *g, int use_global) {\n"
    "  __shared__ __align__(16) unsigned short s[64];\n"
    "  for (int i = threadIdx.x; i < 64; i += 32) s[i] = (unsigned short)(i + 1);\n"
    "  __syncwarp();\n"
    "  const unsigned short *p = use_global ? g : s;\n"
    "  unsigned r;\n"
    "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x1.b16 {%0}, [%1];\" : \"=r\"(r) : \"l\"(p + 8 * (threadIdx.x & 7)));\n"
    "  out[threadIdx.x] = r;\n"
    "}\n";

static sim_module *mod;

static sim_stats st;

static int run(const char *k, unsigned threads, void **args) {
  sim_launch_opts o = {0};
  o.threads = 1;
  err[0] = 0;
  sim_dim3 g = {1, 1, 1}, b = {threads, 1, 1};
  return sim_launch(dev, sim_module_kernel(mod, k), g, b, 0, args, &o, &st, err, sizeof err);
}

static void test_runtime(void) {
  float *c = sim_malloc(dev, 256 * 4, "f32[256]", err, sizeof err), *out = sim_malloc(dev, 512 * 4, "f32[512]", err, sizeof err);
  for (int i = 0; i < 256; i++) c[i] = (float)i;
  for (int i = 0; i < 512; i++) out[i] = -1.0f;
  int off = 0;
  void *args[] = {&c, &off, &out};
  int rc = run("wload", 32, args);
  int ok = rc == 0;
  for (int r = 0; r < 16; r++)
    for (int k = 0; k < 16; k++) ok &= out[k * 16 + r] == c[r * 16 + k]; /* stored col-major: transposed */
  tu_check(ok, "wmma.load then a col-major wmma.store transposes a 16x16 tile", "rc=%d %s", rc, err);
  tu_check(st.total.ld_requests == 1 && st.total.ld_sectors == 32 && st.total.st_requests == 1 && st.total.st_sectors == 32,
           "a 16x16 f32 tile counts as one request of 32 sectors each way",
           "ld %llu/%llu st %llu/%llu", (unsigned long long)st.total.ld_requests, (unsigned long long)st.total.ld_sectors,
           (unsigned long long)st.total.st_requests, (unsigned long long)st.total.st_sectors);
  for (int i = 0; i < 512; i++) out[i] = -1.0f;
  off = 8;
  rc = run("wload", 32, args);
  tu_check(rc < 0 && strstr(err, "out-of-bounds global load") && strstr(err, "f32[256]"),
           "wmma.load past the end of an array is reported", "rc=%d msg: %s", rc, err);
  int untouched = 1;
  for (int i = 0; i < 512; i++) untouched &= out[i] == -1.0f;
  tu_check(untouched, "the failing wmma instruction's warp stores nothing", "memory was modified");
  off = 0;
  rc = run("wload", 16, args);
  tu_check(rc < 0 && strstr(err, "needs all 32 lanes") && strstr(err, "0x0000ffff"),
           "wmma in a warp of 16 threads is an error naming the lanes", "rc=%d msg: %s", rc, err);
  void *args2[] = {&c, &out};
  rc = run("wdiv", 32, args2);
  tu_check(rc < 0 && strstr(err, "needs all 32 lanes") && strstr(err, "wmma.load (wmma::load_matrix_sync)") && strstr(err, "kernel.cu:15"),
           "wmma inside a divergent branch is an error at its line", "rc=%d msg: %s", rc, err);

  int coff = 0, srcsize = 8;
  void *args3[] = {&c, &out, &coff, &srcsize};
  rc = run("cpa", 32, args3);
  ok = rc == 0;
  for (int i = 0; i < 32; i++) ok &= out[i] == ((i & 3) < 2 ? c[i] : 0.0f);
  tu_check(ok, "cp.async copies src-size bytes and zero-fills the rest", "rc=%d %s", rc, err);
  srcsize = 20;
  rc = run("cpa", 32, args3);
  tu_check(rc < 0 && strstr(err, "src-size 20 is larger than its cp-size 16"), "cp.async src-size above cp-size is an error",
           "rc=%d msg: %s", rc, err);
  srcsize = 16;
  coff = 160;
  rc = run("cpa", 32, args3);
  tu_check(rc < 0 && strstr(err, "out-of-bounds global load of 16 bytes") && strstr(err, "f32[256]"),
           "cp.async reading past the end of an array is reported", "rc=%d msg: %s", rc, err);
  srcsize = 0;
  rc = run("cpa", 32, args3);
  tu_check(rc == 0, "cp.async with src-size 0 reads nothing, so no bounds error", "rc=%d msg: %s", rc, err);

  int loff = 0;
  void *args4[] = {&out, &loff};
  rc = run("ldm", 32, args4);
  tu_check(rc == 0, "ldmatrix on 16-byte aligned rows runs", "rc=%d msg: %s", rc, err);
  loff = 1;
  rc = run("ldm", 32, args4);
  tu_check(rc < 0 && strstr(err, "misaligned shared load of 16 bytes"), "ldmatrix on a misaligned row is reported",
           "rc=%d msg: %s", rc, err);
  loff = 200;
  rc = run("ldm", 32, args4);
  tu_check(rc < 0 && strstr(err, "out-of-bounds shared load"), "ldmatrix past the end of shared memory is reported",
           "rc=%d msg: %s", rc, err);
  int useg = 0;
  void *args5[] = {&out, &c, &useg};
  rc = run("ldgen", 32, args5);
  unsigned *u = (unsigned *)out;
  tu_check(rc == 0 && u[0] == (1u | 2u << 16) && u[5] == (11u | 12u << 16),
           "ldmatrix without .shared takes a generic address into shared memory", "rc=%d %s u0=%x u5=%x", rc, err, u[0], u[5]);
  useg = 1;
  rc = run("ldgen", 32, args5);
  tu_check(rc < 0 && strstr(err, "ldmatrix reads shared memory"), "ldmatrix on a generic address outside shared memory is reported",
           "rc=%d msg: %s", rc, err);
  sim_free(dev, c);
  sim_free(dev, out);
}

int main(void) {
  tu_plan(45);
  sim_device_desc d;
  sim_default_desc(&d);
  dev = sim_device_new(&d);
  test_refused();
  mod = tu_module("tensor kernels load", src);
  if (mod) test_runtime();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
