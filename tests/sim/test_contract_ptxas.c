/* test_contract_ptxas.c: the simulator's contraction (sim/sim_contract.c) against ptxas itself.
 * Each kernel below is compiled by NVRTC for sm_90, which runs ptxas and returns the cubin; the
 * test reads the fused multiply-adds out of the SASS in it and holds the simulator to the same
 * number of contracted pairs, kernel by kernel. So the rule is checked against the compiler
 * whose decisions the GPU's bits follow, on any machine with the CUDA toolkit, without a GPU
 * (tests/gpu/contract_vs_gpu.lua and tests/gpu/samples_vs_gpu.lua compare the bits on one).
 *
 * Counting, not matching instruction by instruction: ptxas renames and reorders everything, but
 * every fma the PTX spells out and every pair it contracts becomes one FFMA, DFMA or HFMA2, and
 * nothing else does except in the code it writes for some instructions (div.rn.f32's fast path
 * is a few FFMAs). That part is measured by compiling the kernel again with -fmad=false, which
 * makes ptxas contract nothing while writing the same expansions:
 *   pairs ptxas contracted = (SASS fmas - PTX fmas) with -fmad=true - the same with -fmad=false
 *   pairs the simulator contracted = its fma rows after loading - PTX fmas.
 * Each kernel is built so that the count tells the decision apart (one candidate pair, or pairs
 * that all go the same way); the inline PTX ones put one instruction between a product and its
 * sum. Loops are left out: ptxas unrolls them, which multiplies the FFMAs of their bodies.
 *
 * The SASS reader knows only what it needs: a cubin is an ELF file with a section .text.<kernel>
 * per kernel, of 16-byte instructions whose first 9 bits are the opcode on Hopper (0x023 FFMA,
 * 0x02b DFMA, 0x031 HFMA2; ptxas also moves constants with HFMA2.MMA, 0x035, which is no fma).
 * The first check holds the reader to a kernel whose fmas are all spelt out. */
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"
#include "sim_int.h"

/* One kernel of inline PTX: %1 %2 %3 are per-thread floats x y z, %4 a parameter k (never a
 * constant to ptxas), %5 the address of a scratch float; t u v w are f32 scratch registers,
 * e g q c f64, a b 32-bit, l 64-bit, h j o m 16-bit, p a predicate (a product's operands are
 * never overwritten before its sum: the simulator then leaves the pair alone, sim_contract.c). The result w feeds the output
 * too, so that what lies between the product and its sum is not dead code. */
#define ASM_KERNEL(name, body) \
  "extern \"C\" __global__ void " name "(const float *x, const float *y, const float *z, float *d,\n" \
  "                                      float *s, float k, int n) {\n" \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" \
  "  if (i >= n) return;\n" \
  "  float r;\n" \
  "  asm volatile(\"{ .reg .f32 t, u, v, w; .reg .f64 e, g, q, c; .reg .b32 a, b; .reg .b64 l;\"\n" \
  "               \" .reg .b16 h, j, o, m; .reg .pred p; " body " mul.rn.f32 %0, %0, w; }\"\n" \
  "               : \"=f\"(r) : \"f\"(x[i]), \"f\"(y[i]), \"f\"(z[i]), \"f\"(k), \"l\"(s + i) : \"memory\");\n" \
  "  d[i] = r;\n" \
  "}\n"

/* 100 multiplies between a product and its sum (1,000 fuse as well). */
#define R1 " mul.rn.f32 w, w, %4;"
#define R10 R1 R1 R1 R1 R1 R1 R1 R1 R1 R1
#define R100 R10 R10 R10 R10 R10 R10 R10 R10 R10 R10

/* mul t = x * y; then what lies between; then add x*y + z. */
#define BETWEEN(name, mid) ASM_KERNEL(name, "mul.f32 t, %1, %2; " mid " add.f32 %0, t, %3;")

static const char *const CASES[] = {
    /* the reader's calibration: three fma.rn.f32, two fma.rn.f64, one fma.rn.f16, nothing to
     * contract (contracted mul/add pairs are counted as fma rows by the simulator) */
    ASM_KERNEL("calibrate",
               "fma.rn.f32 u, %1, %2, %3; fma.rn.f32 u, u, %2, %1; fma.rn.f32 %0, u, %3, %4;"
               " cvt.f64.f32 e, %1; cvt.f64.f32 g, %2; fma.rn.f64 q, e, g, e; fma.rn.f64 q, q, g, g;"
               " cvt.rn.f32.f64 w, q; cvt.rn.f16.f32 h, %3; cvt.rn.f16.f32 j, %4;"
               " fma.rn.f16 o, h, j, h; cvt.f32.f16 v, o; add.rn.f32 w, w, v;"),
    /* distance alone never keeps a pair apart */
    BETWEEN("near", "mov.f32 w, %3;"),
    BETWEEN("far_100", "mov.f32 w, %1;" R100),
    /* what lies between: the instructions ptxas expands with branches of its own, or keeps as
     * memory fences, split the block */
    BETWEEN("div_rn_f32", "div.rn.f32 w, %3, %4;"),
    BETWEEN("div_rz_f32", "div.rz.f32 w, %3, %4;"),
    BETWEEN("rcp_rn_f32", "rcp.rn.f32 w, %3;"),
    BETWEEN("sqrt_rn_ftz_f32", "sqrt.rn.ftz.f32 w, %3;"),
    BETWEEN("div_rn_f64", "cvt.f64.f32 e, %3; cvt.f64.f32 g, %4; div.rn.f64 e, e, g; cvt.rn.f32.f64 w, e;"),
    BETWEEN("sqrt_rn_f64", "cvt.f64.f32 e, %3; sqrt.rn.f64 e, e; cvt.rn.f32.f64 w, e;"),
    BETWEEN("rsqrt_approx_f64", "cvt.f64.f32 e, %3; rsqrt.approx.f64 e, e; cvt.rn.f32.f64 w, e;"),
    BETWEEN("div_s32", "cvt.rzi.s32.f32 a, %3; cvt.rzi.s32.f32 b, %4; div.s32 a, a, b; cvt.rn.f32.s32 w, a;"),
    BETWEEN("rem_s32", "cvt.rzi.s32.f32 a, %3; cvt.rzi.s32.f32 b, %4; rem.s32 a, a, b; cvt.rn.f32.s32 w, a;"),
    BETWEEN("div_u64", "cvt.rzi.u64.f32 l, %3; div.u64 l, l, 7; cvt.rn.f32.u64 w, l;"),
    BETWEEN("membar_gl", "mov.f32 w, %3; membar.gl;"),
    BETWEEN("fence_sc_gpu", "mov.f32 w, %3; fence.sc.gpu;"),
    BETWEEN("fence_acq_rel_cta", "mov.f32 w, %3; fence.acq_rel.cta;"),
    /* and those that do not */
    BETWEEN("div_full_f32", "div.full.f32 w, %3, %4;"),
    BETWEEN("div_approx_f32", "div.approx.f32 w, %3, %4;"),
    BETWEEN("sqrt_approx_f32", "sqrt.approx.f32 w, %3;"),
    BETWEEN("rsqrt_approx_f32", "rsqrt.approx.f32 w, %3;"),
    BETWEEN("ex2_approx_f32", "ex2.approx.f32 w, %3;"),
    BETWEEN("lg2_approx_f32", "lg2.approx.f32 w, %3;"),
    BETWEEN("rcp_approx_ftz_f64", "cvt.f64.f32 e, %3; rcp.approx.ftz.f64 e, e; cvt.rn.f32.f64 w, e;"),
    BETWEEN("rsqrt_approx_ftz_f64", "cvt.f64.f32 e, %3; rsqrt.approx.ftz.f64 e, e; cvt.rn.f32.f64 w, e;"),
    BETWEEN("div_u32", "cvt.rzi.u32.f32 a, %3; cvt.rzi.u32.f32 b, %4; div.u32 a, a, b; cvt.rn.f32.u32 w, a;"),
    BETWEEN("rem_u32", "cvt.rzi.u32.f32 a, %3; cvt.rzi.u32.f32 b, %4; rem.u32 a, a, b; cvt.rn.f32.u32 w, a;"),
    BETWEEN("bar_sync", "mov.f32 w, %3; bar.sync 0;"),
    BETWEEN("load", "ld.global.f32 w, [%5];"),
    BETWEEN("store", "mov.f32 w, %3; st.global.f32 [%5], w;"),
    BETWEEN("atomic", "atom.global.add.f32 w, [%5], %3;"),
    BETWEEN("shfl", "mov.b32 a, %3; shfl.sync.bfly.b32 a, a, 1, 31, -1; mov.b32 w, a;"),
    BETWEEN("fence_proxy", "mov.f32 w, %3; fence.proxy.async;"),
    BETWEEN("fence_mbarrier_init", "mov.f32 w, %3; fence.mbarrier_init.release.cluster;"),
    BETWEEN("branch_to_next", "mov.f32 w, %3; setp.gt.f32 p, %3, 0f00000000; @p bra L1; L1:"),
    /* a branch around code does split it */
    BETWEEN("branch_around", "mov.f32 w, %3; setp.gt.f32 p, %3, 0f00000000; @p bra L1; mul.rn.f32 w, w, w; L1:"),
    /* the division before both, or after both */
    ASM_KERNEL("div_rn_before", "div.rn.f32 w, %3, %4; mul.f32 t, %1, %2; add.f32 %0, t, %3;"),
    ASM_KERNEL("div_rn_after", "mul.f32 t, %1, %2; add.f32 %0, t, %3; div.rn.f32 w, %3, %4;"),
    /* two products, one before a division and one after: the one in the sum's block is taken,
     * though the sum names the other first; so it goes into its second sum too (were the first
     * taken, the second product would have a use it is not in, and go nowhere: 1 pair, not 2) */
    ASM_KERNEL("two_products_div_between",
               "mul.f32 t, %1, %2; div.rn.f32 w, %3, %4; mul.f32 u, %3, %1; sub.f32 v, t, u;"
               " add.f32 %0, u, v;"),
    /* the same a long way apart, nothing splitting: the sum's first product is taken, and the
     * second, with a use it is not in, goes nowhere (1 pair) */
    ASM_KERNEL("two_products_far",
               "mov.f32 w, %1; mul.f32 t, %1, %2;" R100 " mul.f32 u, %3, %1; sub.f32 v, t, u;"
               " add.f32 %0, u, v;"),
    /* uses: two sums, a sum in another block, a mul, a store */
    ASM_KERNEL("uses_add_and_sub",
               "mul.f32 t, %1, %2; add.f32 u, t, %3; sub.f32 v, %1, t; mul.rn.f32 %0, u, v; mov.f32 w, %1;"),
    ASM_KERNEL("uses_split_by_div",
               "mul.f32 t, %1, %2; add.f32 u, t, %3; div.rn.f32 w, %3, %4; add.f32 v, t, %1; mul.rn.f32 %0, u, v;"),
    ASM_KERNEL("uses_mul", "mul.f32 t, %1, %2; add.f32 u, t, %3; mul.rn.f32 %0, u, t; mov.f32 w, %1;"),
    ASM_KERNEL("uses_store", "mul.f32 t, %1, %2; st.global.f32 [%5], t; add.f32 %0, t, %3; mov.f32 w, %1;"),
    /* f64 and f16 follow the same blocks */
    ASM_KERNEL("f64_div_rn_between",
               "cvt.f64.f32 e, %1; cvt.f64.f32 g, %2; mul.f64 q, e, g; div.rn.f32 w, %3, %4;"
               " cvt.f64.f32 c, %3; add.f64 g, q, c; cvt.rn.f32.f64 %0, g;"),
    ASM_KERNEL("f64_near",
               "cvt.f64.f32 e, %1; cvt.f64.f32 g, %2; mul.f64 q, e, g; mov.f32 w, %4;"
               " cvt.f64.f32 c, %3; add.f64 g, q, c; cvt.rn.f32.f64 %0, g;"),
    ASM_KERNEL("f16_div_rn_between",
               "cvt.rn.f16.f32 h, %1; cvt.rn.f16.f32 j, %2; mul.f16 o, h, j; div.rn.f32 w, %3, %4;"
               " cvt.rn.f16.f32 m, %3; add.f16 j, o, m; cvt.f32.f16 %0, j;"),
    ASM_KERNEL("f16_near",
               "cvt.rn.f16.f32 h, %1; cvt.rn.f16.f32 j, %2; mul.f16 o, h, j; mov.f32 w, %4;"
               " cvt.rn.f16.f32 m, %3; add.f16 j, o, m; cvt.f32.f16 %0, j;"),
    /* CUDA C: NVRTC leaves these pairs to ptxas (six uses, a store, a block apart) */
    "extern \"C\" __global__ void six_uses_div_between(const float *a, const float *w, float *d, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float t = a[i] * a[n + i], s = 0;\n"
    "  s += (t + w[0]) * w[6]; s += (t + w[1]) * w[7]; s += (t + w[2]) * w[8];\n"
    "  s = s / a[2 * n + i];\n"
    "  s += (t + w[3]) * w[9]; s += (t + w[4]) * w[10]; s += (t + w[5]) * w[11];\n"
    "  d[i] = s;\n"
    "}\n",
    "extern \"C\" __global__ void six_uses(const float *a, const float *w, float *d, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float t = a[i] * a[n + i], s = 0;\n"
    "  s += (t + w[0]) * w[6]; s += (t + w[1]) * w[7]; s += (t + w[2]) * w[8];\n"
    "  s += (t + w[3]) * w[9]; s += (t + w[4]) * w[10]; s += (t + w[5]) * w[11];\n"
    "  d[i] = s;\n"
    "}\n",
    "extern \"C\" __global__ void stored_product(const float *a, float *d, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float t = a[i] * a[n + i];\n"
    "  d[i] = t;\n"
    "  d[n + i] = t + a[2 * n + i];\n"
    "}\n",
    "extern \"C\" __global__ void across_if(const float *a, float *d, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float t = a[i] * a[n + i], s = a[2 * n + i];\n"
    "  if (s > 0) s = __fsqrt_rn(s) * 3.0f;\n"
    "  d[i] = t - s;\n"
    "  d[n + i] = t + a[2 * n + i];\n"
    "}\n",
    "extern \"C\" __global__ void f64_div_between(const double *a, double *d, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  double t = a[i] * a[n + i], u = a[2 * n + i] * a[3 * n + i];\n"
    "  double q = a[i] / a[4 * n + i];\n"
    "  d[i] = t - u + q;\n"
    "  d[n + i] = t + u;\n"
    "}\n",
    "extern \"C\" __global__ void fence_between(const float *a, float *d, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float t = a[i] * a[n + i], u = a[2 * n + i] * a[3 * n + i];\n"
    "  d[2 * n + i] = 1.0f;\n"
    "  __threadfence();\n"
    "  d[i] = t - u;\n"
    "  d[n + i] = t + u;\n"
    "}\n",
};

/* One kernel an element, each under the 4,095 characters C promises a string literal; the first
 * is calibrate. */
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))
static const char BLACKSCHOLES[] = "tests/samples/BlackScholes/BlackScholes_kernel.cuh";

/* What NVRTC gives for one compilation: the PTX and the cubin ptxas made of it. */
typedef struct build {
  char *ptx;
  unsigned char *cubin;
  size_t cubin_len;
} build;

static void build_free(build *b) {
  free(b->ptx);
  free(b->cubin);
  memset(b, 0, sizeof *b);
}

/* Compiles src for sm_90 with -fmad=true or false into b; -1 (and the log on stderr) on failure. */
static int compile(const char *src, int fmad, build *b) {
  const char *opts[] = {"-arch=sm_90", fmad ? "-fmad=true" : "-fmad=false"};
  nvrtcProgram prog;
  memset(b, 0, sizeof *b);
  if (nvrtcCreateProgram(&prog, src, "contract.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return -1;
  int rc = -1;
  size_t n = 0;
  if (nvrtcCompileProgram(prog, 2, opts) != NVRTC_SUCCESS) {
    char *log = nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS ? malloc(n + 1) : NULL;
    if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) fprintf(stderr, "nvrtc: %s\n", log);
    free(log);
  } else if (nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && (b->ptx = malloc(n + 1)) &&
             nvrtcGetPTX(prog, b->ptx) == NVRTC_SUCCESS &&
             nvrtcGetCUBINSize(prog, &b->cubin_len) == NVRTC_SUCCESS &&
             (b->cubin = malloc(b->cubin_len)) && nvrtcGetCUBIN(prog, (char *)b->cubin) == NVRTC_SUCCESS) {
    b->ptx[n] = '\0';
    rc = 0;
  }
  nvrtcDestroyProgram(&prog);
  if (rc < 0) build_free(b);
  return rc;
}

static uint64_t le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The fused multiply-adds (FFMA, DFMA, HFMA2) in the SASS of kernel name, or -1 when the cubin
 * has no section .text.<name> or is not a 64-bit ELF file this reader follows. */
static int sass_fmas(const build *b, const char *name) {
  const unsigned char *e = b->cubin;
  size_t len = b->cubin_len;
  if (len < 64 || memcmp(e, "\177ELF\2\1", 6)) return -1;
  uint64_t shoff = le(e + 0x28, 8), shentsize = le(e + 0x3a, 2), shnum = le(e + 0x3c, 2);
  uint64_t shstrndx = le(e + 0x3e, 2);
  if (shentsize < 64 || shstrndx >= shnum || shoff > len || shnum * shentsize > len - shoff) return -1;
  const unsigned char *strtab = e + shoff + shstrndx * shentsize;
  uint64_t stroff = le(strtab + 0x18, 8), strsize = le(strtab + 0x20, 8);
  if (stroff > len || strsize > len - stroff) return -1;
  for (uint64_t i = 0; i < shnum; i++) {
    const unsigned char *sh = e + shoff + i * shentsize;
    uint64_t nm = le(sh, 4), off = le(sh + 0x18, 8), size = le(sh + 0x20, 8);
    if (nm >= strsize || off > len || size > len - off) continue;
    const char *sn = (const char *)e + stroff + nm;
    if (!memchr(sn, '\0', strsize - nm) || strncmp(sn, ".text.", 6) || strcmp(sn + 6, name)) continue;
    int n = 0;
    for (uint64_t k = 0; k + 16 <= size; k += 16) {
      unsigned op = (unsigned)(le(e + off + k, 2) & 0x1ff);
      n += op == 0x023 || op == 0x02b || op == 0x031;
    }
    return n;
  }
  return -1;
}

/* The fma instructions the PTX of kernel name spells out (fma.*, and mad.* of floats), counted in
 * its text from ".entry name(" to the closing brace at the start of a line. */
static int ptx_fmas(const char *ptx, const char *name) {
  char head[512];
  snprintf(head, sizeof head, ".entry %s(", name);
  const char *p = strstr(ptx, head), *end = p ? strstr(p, "\n}") : NULL;
  if (!end) return -1;
  int n = 0;
  for (const char *q = p; q < end; q++)
    if (strchr(" \t;{", q[-1]) &&
        (!strncmp(q, "fma.", 4) || !strncmp(q, "mad.rn.f", 8) || !strncmp(q, "mad.f", 5)))
      n++;
  return n;
}

/* The fma rows of the simulator's code for function f: those the PTX spells out and the sums it
 * contracted (SIM_ALU_DIV_ADD, a division contracted into an add, is one FFMA after MUFU.RCP). */
static int sim_fmas(const sim_module *m, const sim_func *f) {
  int n = 0;
  for (int pc = f->first; pc < f->end; pc++) {
    const sim_inst *in = &m->code[pc];
    n += in->op == SIM_OP_FMA_F32 || in->op == SIM_OP_FMA_F64 ||
         ((in->op == SIM_OP_ALU || in->op == SIM_OP_HALF) &&
          (in->sub == SIM_ALU_FMA || in->sub == SIM_ALU_DIV_ADD));
  }
  return n;
}

/* One source compiled both ways, and the simulator's module of the -fmad=true PTX. */
typedef struct subject {
  build on, off;
  sim_module *m;
} subject;

static int subject_load(const char *test, const char *src, subject *s) {
  char err[1024];
  memset(s, 0, sizeof *s);
  if (compile(src, 1, &s->on) < 0 || compile(src, 0, &s->off) < 0) {
    tu_check(0, test, "NVRTC could not compile it for sm_90");
    return -1;
  }
  if (!(s->m = sim_module_load(s->on.ptx, strlen(s->on.ptx), err, sizeof err))) {
    tu_check(0, test, "the simulator refused its PTX: %s", err);
    return -1;
  }
  return 0;
}

static void subject_free(subject *s) {
  build_free(&s->on);
  build_free(&s->off);
  if (s->m) sim_module_free(s->m);
}

/* Checks one kernel: ptxas's contracted pairs and the simulator's. Returns ptxas's count, or -1
 * when it could not be read. */
static int check_kernel(const subject *s, const sim_func *f, const char *test) {
  int sass_on = sass_fmas(&s->on, f->name), sass_off = sass_fmas(&s->off, f->name);
  int ptx_on = ptx_fmas(s->on.ptx, f->name), ptx_off = ptx_fmas(s->off.ptx, f->name);
  if (sass_on < 0 || sass_off < 0 || ptx_on < 0 || ptx_off < 0) {
    tu_check(0, test, "kernel %s not found in the cubin or the PTX", f->name);
    return -1;
  }
  int ptxas = (sass_on - ptx_on) - (sass_off - ptx_off), sim = sim_fmas(s->m, f) - ptx_on;
  tu_check(ptxas == sim, test, "ptxas contracted %d pairs, the simulator %d (SASS fmas %d, PTX %d; "
           "with -fmad=false %d, %d)", ptxas, sim, sass_on, ptx_on, sass_off, ptx_off);
  return ptxas;
}

/* The reader against a kernel whose six fmas the PTX spells out: 3 FFMA, 2 DFMA, 1 HFMA2. */
static void check_reader(const subject *s) {
  const sim_func *f = NULL;
  for (int i = 0; i < s->m->nfuncs; i++)
    if (!strcmp(s->m->funcs[i].name, "calibrate")) f = &s->m->funcs[i];
  int sass = f ? sass_fmas(&s->on, f->name) : -1, ptx = f ? ptx_fmas(s->on.ptx, f->name) : -1;
  tu_check(f && sass == 6 && ptx == 6 && sim_fmas(s->m, f) == 6,
           "the SASS reader finds the 6 fmas the PTX spells out",
           "SASS %d, PTX %d, simulator %d", sass, ptx, f ? sim_fmas(s->m, f) : -1);
}

static char *read_file(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  char *buf = NULL;
  long n = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
  if (n >= 0 && fseek(fp, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
    if (fread(buf, 1, (size_t)n, fp) == (size_t)n) buf[n] = '\0';
    else { free(buf); buf = NULL; }
  }
  fclose(fp);
  return buf;
}

/* NVIDIA's BlackScholes sample as it is: two options a thread through two inlined copies of the
 * body; the first copy's products come before the second copy's S / X (div.rn.f32) and its
 * final subtractions after it, so ptxas contracts those of the second copy only. */
static void check_blackscholes(void) {
  const char *test = "BlackScholes sample: the pairs ptxas contracts across two inlined bodies";
  char *src = read_file(BLACKSCHOLES);
  subject s;
  if (!src) {
    tu_check(0, test, "cannot read %s", BLACKSCHOLES);
    return;
  }
  if (subject_load(test, src, &s) == 0) {
    int found = 0;
    for (int i = 0; i < s.m->nfuncs; i++)
      if (s.m->funcs[i].is_entry && strstr(s.m->funcs[i].name, "BlackScholesGPU")) {
        found = 1;
        check_kernel(&s, &s.m->funcs[i], test);
      }
    if (!found) tu_check(0, test, "no kernel BlackScholesGPU in the module");
  }
  subject_free(&s);
  free(src);
}

/* CASES as one source (malloc'd), or NULL. */
static char *cases_source(void) {
  size_t n = 1;
  for (int i = 0; i < NCASES; i++) n += strlen(CASES[i]);
  char *src = malloc(n), *p = src;
  for (int i = 0; src && i < NCASES; i++) p = stpcpy(p, CASES[i]);
  return src;
}

int main(void) {
  tu_plan(NCASES - 1 + 3);
  subject s;
  int kernels = 0, fused = 0, apart = 0;
  char *src = cases_source();
  if (!src) return 1;
  if (subject_load("the contraction cases compile and load", src, &s) == 0) {
    check_reader(&s);
    for (int i = 0; i < s.m->nfuncs; i++) {
      const sim_func *f = &s.m->funcs[i];
      if (!f->is_entry || !strcmp(f->name, "calibrate")) continue;
      char test[160];
      snprintf(test, sizeof test, "%s: the simulator contracts the pairs ptxas contracts", f->name);
      int n = check_kernel(&s, f, test);
      kernels++;
      fused += n > 0;
      apart += n == 0;
    }
  }
  subject_free(&s);
  free(src);
  /* so that a reader that saw no fma, or a rule that fused everything, could not pass */
  tu_check(kernels == NCASES - 1 && fused >= 10 && apart >= 10,
           "the cases hold both decisions, on every kernel", "%d kernels (want %d): %d with pairs "
           "contracted, %d with none", kernels, NCASES - 1, fused, apart);
  check_blackscholes();
  return tu_failures() ? 1 : 0;
}
