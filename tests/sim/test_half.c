/* test_half.c: the simulator's 16-bit floats and the bit, warp and barrier instructions that came
 * with them. Rounding is checked lane by lane (sim_half, sim_alu) against a reference that knows
 * nothing of the simulator: the exact result in long double (64 significant bits hold every sum
 * and fma of f16 values exactly) rounded by searching the table of every half value. Kernels
 * compiled by NVRTC check __half2 atomics, atomicCAS on unsigned short, __syncthreads_count,
 * __match_any_sync, __reduce_*_sync and the special registers; PTX that is still refused, and a
 * divergent warp reduction, are checked for their messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"
#include "sim_int.h"

static char err[4096];
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)(rng >> 16); }

/* ---- the reference ---- */

static int mbits(int bf) { return bf ? 7 : 10; }
static uint32_t maxf(int bf) { return bf ? 0x7f7fu : 0x7bffu; }

/* The value of a finite half pattern p (p <= maxf + 1, the next one standing for overflow). */
static long double val(int bf, uint32_t p) {
  int m = mbits(bf), bias = bf ? 127 : 15;
  uint32_t e = p >> m, f = p & ((1u << m) - 1);
  if (e == 0) return ldexpl((long double)f, 1 - bias - m);
  return ldexpl((long double)(f | 1u << m), (int)e - bias - m);
}

/* x rounded to a half in mode r (0 rn, 1 rz, 2 rm, 3 rp), by binary search over the patterns. */
static uint32_t ref_round(int bf, long double x, int r) {
  if (x != x) return 0x7fffu;
  uint32_t s = signbit(x) ? 0x8000u : 0;
  long double a = fabsl(x);
  uint32_t lo = 0, hi = maxf(bf) + 1;
  while (hi - lo > 1) { uint32_t mid = (lo + hi) / 2; if (val(bf, mid) <= a) lo = mid; else hi = mid; }
  if (val(bf, lo) == a) return s | lo;
  uint32_t pick;
  if (r == 0) {
    long double dl = a - val(bf, lo), dh = val(bf, hi) - a;
    pick = dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo);
  } else if (r == 1) pick = lo;
  else pick = (r == 3) == !s ? hi : lo;
  return s | pick;
}

static uint32_t rand_half(int bf, int emax) { /* a finite half with |exponent field - bias| <= emax */
  for (;;) {
    uint32_t h = rnd32() & 0xffffu;
    int m = mbits(bf), bias = bf ? 127 : 15;
    int e = (int)((h & 0x7fffu) >> m);
    if ((h & 0x7fffu) > maxf(bf)) continue;
    if ((e != 0 || bf) && (h & 0x7fffu) && abs(e - bias) > emax) continue; /* bf16: no subnormals either */
    return h;
  }
}

static uint64_t op(int sub, int ty, int mod, uint64_t a, uint64_t b, uint64_t c) {
  sim_inst in;
  memset(&in, 0, sizeof in);
  in.op = SIM_OP_HALF;
  in.sub = (uint8_t)sub;
  in.ty = (uint8_t)ty;
  in.mod = (uint8_t)mod;
  return sim_half(&in, a, b, c);
}

static uint64_t cvt(int dt, int st, int mod, int flags, uint64_t a, uint64_t b) {
  sim_inst in;
  memset(&in, 0, sizeof in);
  in.op = SIM_OP_HALF;
  in.sub = SIM_ALU_CVT;
  in.ty = (uint8_t)dt;
  in.ty2 = (uint8_t)st;
  in.mod = (uint8_t)mod;
  in.flags = (uint8_t)flags;
  return sim_half(&in, a, b, 0);
}

/* ---- arithmetic ---- */

static void test_random_arith(int bf) {
  int ty = bf ? SIM_T_BF16 : SIM_T_F16, emax = bf ? 20 : 99, bad = 0;
  const char *what = "";
  uint32_t ba = 0, bb = 0, bc = 0, got = 0, want = 0;
  for (int i = 0; i < 300000 && !bad; i++) {
    uint32_t a = rand_half(bf, emax), b = rand_half(bf, emax), c = rand_half(bf, emax);
    volatile long double x = val(bf, a & 0x7fff) * (a & 0x8000 ? -1 : 1), y = val(bf, b & 0x7fff) * (b & 0x8000 ? -1 : 1),
                         z = val(bf, c & 0x7fff) * (c & 0x8000 ? -1 : 1);
    volatile long double p = x * y, s = p + z, t = x + y, u = x - y;
    struct { const char *n; int sub; long double exact; } k[] = {
        {"add", SIM_ALU_ADD, t}, {"sub", SIM_ALU_SUB, u}, {"mul", SIM_ALU_MUL, p}, {"fma", SIM_ALU_FMA, s}};
    for (int j = 0; j < 4 && !bad; j++) {
      uint32_t g = (uint32_t)op(k[j].sub, ty, 0, a, b, c), w = ref_round(bf, k[j].exact, 0);
      if (g != w) { bad = 1; what = k[j].n; ba = a; bb = b; bc = c; got = g; want = w; }
    }
  }
  tu_check(!bad, bf ? "bf16 add/sub/mul/fma: 300000 random operands correctly rounded" :
                      "f16 add/sub/mul/fma: 300000 random operands correctly rounded",
           "%s(0x%04x, 0x%04x, 0x%04x) = 0x%04x, want 0x%04x", what, ba, bb, bc, got, want);
}

static void test_special_arith(void) {
  /* Signed zeros, infinities and NaN. */
  tu_check(op(SIM_ALU_FMA, SIM_T_F16, 0, 0x0001, 0x0001, 0x8000) == 0x0000,
           "f16 fma: a tiny positive product plus -0 rounds to +0", "got 0x%04x",
           (unsigned)op(SIM_ALU_FMA, SIM_T_F16, 0, 0x0001, 0x0001, 0x8000));
  tu_check(op(SIM_ALU_ADD, SIM_T_F16, 0, 0x7c00, 0xfc00, 0) == 0x7fff && op(SIM_ALU_MUL, SIM_T_F16, 0, 0x7e01, 0x3c00, 0) == 0x7fff,
           "f16 NaN results are the canonical 0x7fff", " ");
  tu_check(op(SIM_ALU_ADD, SIM_T_F16, 0, 0x8000, 0x8000, 0) == 0x8000 && op(SIM_ALU_ADD, SIM_T_F16, 0, 0x3c00, 0xbc00, 0) == 0,
           "f16 signed zeros: -0 + -0 = -0, 1 - 1 = +0", " ");
  /* .ftz flushes subnormal operands and results; .sat clamps to [0, 1]. */
  tu_check(op(SIM_ALU_ADD, SIM_T_F16, SIM_MOD_FTZ, 0x0200, 0x0000, 0) == 0 && op(SIM_ALU_ADD, SIM_T_F16, 0, 0x0200, 0x0000, 0) == 0x0200 &&
               op(SIM_ALU_MUL, SIM_T_F16, SIM_MOD_FTZ, 0x0400, 0x3800, 0) == 0,
           "f16 .ftz flushes subnormal operands and results", " ");
  tu_check(op(SIM_ALU_ADD, SIM_T_F16, SIM_MOD_SAT, 0x3c00, 0x3c00, 0) == 0x3c00 && op(SIM_ALU_ADD, SIM_T_F16, SIM_MOD_SAT, 0xc000, 0, 0) == 0 &&
               op(SIM_ALU_ADD, SIM_T_F16, SIM_MOD_SAT, 0x7c00, 0xfc00, 0) == 0,
           "f16 .sat clamps to [0, 1] and NaN to 0", " ");
  /* The x2 forms work on each half. */
  tu_check(op(SIM_ALU_ADD, SIM_T_F16X2, 0, 0x40003c00, 0x3c003c00, 0) == 0x42004000u,
           "f16x2 add: {1, 2} + {1, 1} = {2, 3}", "got 0x%08llx", (unsigned long long)op(SIM_ALU_ADD, SIM_T_F16X2, 0, 0x40003c00, 0x3c003c00, 0));
  tu_check(op(SIM_ALU_FMA, SIM_T_BF16X2, 0, 0x40003f80, 0x3f804000, 0x3f803f80) == 0x40404040u,
           "bf16x2 fma: {1, 2} * {2, 1} + {1, 1} = {3, 3}", "got 0x%08llx",
           (unsigned long long)op(SIM_ALU_FMA, SIM_T_BF16X2, 0, 0x40003f80, 0x3f804000, 0x3f803f80));
  /* neg and abs flip or clear the sign bit; a NaN becomes the canonical NaN (measured on the H200). */
  tu_check(op(SIM_ALU_NEG, SIM_T_F16, 0, 0x3c00, 0, 0) == 0xbc00 && op(SIM_ALU_ABS, SIM_T_BF16, 0, 0xbf80, 0, 0) == 0x3f80 &&
           op(SIM_ALU_NEG, SIM_T_F16, 0, 0x7e01, 0, 0) == 0x7fff && op(SIM_ALU_ABS, SIM_T_BF16, 0, 0xff81, 0, 0) == 0x7fff,
           "neg and abs flip the sign bit; of a NaN they give the canonical NaN", " ");
  /* min/max: one NaN gives the other operand, .NaN gives NaN; -0 is below +0. */
  sim_inst in;
  memset(&in, 0, sizeof in);
  in.op = SIM_OP_HALF; in.sub = SIM_ALU_MIN; in.ty = SIM_T_F16;
  int m1 = sim_half(&in, 0x7e00, 0x3c00, 0) == 0x3c00, m2 = sim_half(&in, 0x0000, 0x8000, 0) == 0x8000;
  in.sub = SIM_ALU_MAX;
  int m3 = sim_half(&in, 0x8000, 0x0000, 0) == 0x0000, m4 = sim_half(&in, 0x7e00, 0x7e00, 0) == 0x7fff;
  in.flags = SIM_IF_NAN;
  int m5 = sim_half(&in, 0x7e00, 0x3c00, 0) == 0x7fff;
  tu_check(m1 && m2 && m3 && m4 && m5, "f16 min/max: NaN operands, .NaN and signed zeros", "%d%d%d%d%d", m1, m2, m3, m4, m5);
  in.sub = SIM_ALU_FMA; in.flags = SIM_IF_RELU; in.ty = SIM_T_BF16;
  int r1 = sim_half(&in, 0xbf80, 0x3f80, 0x3f00) == 0, r2 = sim_half(&in, 0x3f80, 0x3f80, 0x3f00) == 0x3fc0,
      r3 = sim_half(&in, 0x7fc0, 0x3f80, 0) == 0x7fff;
  tu_check(r1 && r2 && r3, "fma.rn.relu.bf16: negative results become +0, NaN stays NaN", "%d%d%d", r1, r2, r3);
  /* set.cmp.dtype.stype: all ones or 1.0 per element. */
  memset(&in, 0, sizeof in);
  in.op = SIM_OP_HALF; in.sub = SIM_ALU_SET; in.imm = SIM_CMP_LT;
  in.ty = SIM_T_U32; in.ty2 = SIM_T_S32;
  int s1 = sim_half(&in, 0xffffffffu, 1, 0) == 0xffffffffu, s2 = sim_half(&in, 1, 0xffffffffu, 0) == 0;
  in.ty = SIM_T_F32;
  int s3 = sim_half(&in, 0xffffffffu, 1, 0) == 0x3f800000u;
  in.ty = SIM_T_U32; in.ty2 = SIM_T_F16X2;
  int s4 = sim_half(&in, 0x3c004000u, 0x40003c00u, 0) == 0xffff0000u;
  in.ty = SIM_T_F16X2; in.imm = SIM_CMP_NEU;
  int s5 = sim_half(&in, 0x7e003c00u, 0x7e003c00u, 0) == 0x3c000000u;
  tu_check(s1 && s2 && s3 && s4 && s5, "set: integer and f32 results, per half for f16x2, unordered with NaN",
           "%d%d%d%d%d", s1, s2, s3, s4, s5);
}

/* ---- conversions ---- */

static void test_cvt_f32(int bf) {
  int dt = bf ? SIM_T_BF16 : SIM_T_F16, bad = 0;
  uint32_t bu = 0, got = 0, want = 0;
  int br = 0;
  for (int i = 0; i < 200000 && !bad; i++) {
    uint32_t u = rnd32();
    if (!bf) u = (u & 0x80000000u) | (0x33000000u + (u & 0x7fffffffu) % 0x0e000000u); /* |x| in 2^-25 .. 2^17 */
    float f;
    memcpy(&f, &u, 4);
    if (f != f) continue;
    for (int r = 0; r < 4; r++) {
      uint32_t g = (uint32_t)cvt(dt, SIM_T_F32, r | SIM_MOD_HASRND, 0, u, 0), w = ref_round(bf, f, r);
      if (isinf(f)) w = (u & 0x80000000u ? 0x8000u : 0) | (maxf(bf) + 1);
      if (g != w) { bad = 1; bu = u; got = g; want = w; br = r; break; }
    }
  }
  tu_check(!bad, bf ? "cvt.{rn,rz,rm,rp}.bf16.f32: 200000 random floats" : "cvt.{rn,rz,rm,rp}.f16.f32: 200000 random floats",
           "mode %d of 0x%08x = 0x%04x, want 0x%04x", br, bu, got, want);
}

static void test_cvt_misc(void) {
  uint64_t d;
  double x = 1.0 + ldexp(1, -8) + ldexp(1, -30); /* above a bf16 tie by less than a float's precision */
  memcpy(&d, &x, 8);
  tu_check(cvt(SIM_T_BF16, SIM_T_F64, SIM_RN | SIM_MOD_HASRND, 0, d, 0) == 0x3f81,
           "cvt.rn.bf16.f64 rounds once (through f32 it would tie and round down)", "got 0x%04llx",
           (unsigned long long)cvt(SIM_T_BF16, SIM_T_F64, SIM_RN | SIM_MOD_HASRND, 0, d, 0));
  uint64_t big = (1ull << 60) + (1ull << 52) + 1; /* above a bf16 tie by less than a double's precision */
  tu_check(cvt(SIM_T_BF16, SIM_T_U64, SIM_RN | SIM_MOD_HASRND, 0, big, 0) == 0x5d81,
           "cvt.rn.bf16.u64 rounds once (through f64 it would tie and round down)", "got 0x%04llx",
           (unsigned long long)cvt(SIM_T_BF16, SIM_T_U64, SIM_RN | SIM_MOD_HASRND, 0, big, 0));
  int ok = cvt(SIM_T_F16, SIM_T_F32, SIM_RZ | SIM_MOD_HASRND, 0, 0x7f800000u, 0) == 0x7c00 &&   /* inf is exact */
           cvt(SIM_T_F16, SIM_T_F32, SIM_RZ | SIM_MOD_HASRND, 0, 0x477ff000u, 0) == 0x7bff &&   /* 65520: rz max */
           cvt(SIM_T_F16, SIM_T_F32, SIM_RN | SIM_MOD_HASRND, 0, 0x477ff000u, 0) == 0x7c00 &&   /* 65520 ties to inf */
           cvt(SIM_T_F16, SIM_T_F32, SIM_RN | SIM_MOD_HASRND, SIM_IF_SATFINITE, 0x7f800000u, 0) == 0x7bff &&
           cvt(SIM_T_F16, SIM_T_F32, SIM_RN | SIM_MOD_HASRND, SIM_IF_RELU, 0xc0000000u, 0) == 0 &&
           cvt(SIM_T_F16, SIM_T_F32, SIM_RN | SIM_MOD_HASRND, SIM_IF_RELU, 0x7fc00000u, 0) == 0x7fff &&
           cvt(SIM_T_F16, SIM_T_F32, SIM_RN | SIM_MOD_HASRND, 0, 0xffc00001u, 0) == 0x7fff;
  tu_check(ok, "cvt to f16: infinities by mode, .satfinite, .relu and NaN", " ");
  tu_check(cvt(SIM_T_F16X2, SIM_T_F32, SIM_RN | SIM_MOD_HASRND, 0, 0x40000000u, 0x3f800000u) == 0x40003c00u,
           "cvt.rn.f16x2.f32 d, a, b puts a in the high half", "got 0x%08llx",
           (unsigned long long)cvt(SIM_T_F16X2, SIM_T_F32, SIM_RN | SIM_MOD_HASRND, 0, 0x40000000u, 0x3f800000u));
  ok = cvt(SIM_T_S32, SIM_T_F16, SIM_RNI | SIM_MOD_HASRND, 0, 0x3e00, 0) == 2 &&            /* 1.5 -> 2 */
       cvt(SIM_T_S32, SIM_T_F16, SIM_RNI | SIM_MOD_HASRND, 0, 0x4100, 0) == 2 &&            /* 2.5 -> 2 */
       cvt(SIM_T_U16, SIM_T_F16, SIM_RZI | SIM_MOD_HASRND, 0, 0xc000, 0) == 0 &&            /* -2 saturates */
       cvt(SIM_T_S8, SIM_T_F16, SIM_RZI | SIM_MOD_HASRND, 0, 0x5bd0, 0) == 0x7f &&          /* 250 saturates */
       cvt(SIM_T_S32, SIM_T_F16, SIM_RZI | SIM_MOD_HASRND, 0, 0x7e00, 0) == 0 &&            /* NaN -> 0 */
       cvt(SIM_T_F32, SIM_T_F16, 0, 0, 0x0001, 0) == 0x33800000u &&                          /* 2^-24 exactly */
       cvt(SIM_T_F16, SIM_T_S32, SIM_RN | SIM_MOD_HASRND, 0, (uint32_t)-2049, 0) == 0xe800 && /* -2049 ties to -2048 */
       cvt(SIM_T_F16, SIM_T_F16, SIM_RNI | SIM_MOD_HASRND, 0, 0x3e00, 0) == 0x4000;          /* rni 1.5 = 2 */
  tu_check(ok, "cvt between f16 and integers: rounding, saturation, NaN", " ");
}

/* ---- bits ---- */

static uint64_t alu(int sub, int ty, int ty2, int64_t imm, uint64_t a, uint64_t b, uint64_t c) {
  sim_inst in;
  memset(&in, 0, sizeof in);
  in.op = SIM_OP_ALU;
  in.sub = (uint8_t)sub;
  in.ty = (uint8_t)ty;
  in.ty2 = (uint8_t)ty2;
  in.imm = imm;
  return sim_alu(&in, a, b, c, 0);
}

static void test_bits(void) {
  int ok = alu(SIM_ALU_BFIND, SIM_T_U32, 0, 0, 0x00010000, 0, 0) == 16 && alu(SIM_ALU_BFIND, SIM_T_U32, 0, 0, 0, 0, 0) == 0xffffffffu &&
           alu(SIM_ALU_BFIND, SIM_T_U32, 1, 0, 0x00010000, 0, 0) == 15 && alu(SIM_ALU_BFIND, SIM_T_S32, 0, 0, 0xfffffff0u, 0, 0) == 3 &&
           alu(SIM_ALU_BFIND, SIM_T_S32, 0, 0, 0xffffffffu, 0, 0) == 0xffffffffu &&
           alu(SIM_ALU_BFIND, SIM_T_U64, 0, 0, 1ull << 40, 0, 0) == 40 && alu(SIM_ALU_BFIND, SIM_T_S64, 1, 0, 1, 0, 0) == 63;
  tu_check(ok, "bfind: unsigned, signed, 64-bit, none, .shiftamt", " ");
  int lut_ok = 1;
  for (int lut = 0; lut < 256; lut++) lut_ok &= (alu(SIM_ALU_LOP3, SIM_T_B32, 0, lut, 0xf0, 0xcc, 0xaa) & 0xff) == (uint64_t)lut;
  tu_check(lut_ok && alu(SIM_ALU_LOP3, SIM_T_B32, 0, 0x96, 0x12345678, 0x0f0f0f0f, 0xffff0000) == (0x12345678u ^ 0x0f0f0f0fu ^ 0xffff0000u),
           "lop3: every LUT of the 0xf0/0xcc/0xaa operands gives itself; 0x96 is a three-way xor", " ");
  ok = alu(SIM_ALU_DP4A, SIM_T_S32, 0, SIM_T_S32, 0xff02ff04u, 0x01ff0302u, 10) == (uint32_t)(10 - 1 * 1 + 2 * -1 - 3 + 4 * 2) &&
       alu(SIM_ALU_DP4A, SIM_T_U32, 0, SIM_T_U32, 0xff000000u, 0xff000000u, 0) == 255u * 255u &&
       alu(SIM_ALU_DP4A, SIM_T_U32, 0, SIM_T_S32, 0x000000ffu, 0x000000ffu, 0) == (uint32_t)-255 &&
       alu(SIM_ALU_DP2A, SIM_T_S32, 0, SIM_T_S32, 0xffff0002u, 0x7f80ff03u, 1) == (uint32_t)(1 + 2 * 3 + -1 * -1) &&
       alu(SIM_ALU_DP2A, SIM_T_S32, 1, SIM_T_U32, 0xffff0002u, 0x7f80ff03u, 1) == (uint32_t)(1 + 2 * 0x80 + -1 * 0x7f);
  tu_check(ok, "dp4a and dp2a (.lo/.hi): every signedness", " ");
  ok = alu(SIM_ALU_FNS, SIM_T_B32, 0, 0, 0x0000f0f0u, 0, 1) == 4 && alu(SIM_ALU_FNS, SIM_T_B32, 0, 0, 0x0000f0f0u, 5, 3) == 7 &&
       alu(SIM_ALU_FNS, SIM_T_B32, 0, 0, 0x0000f0f0u, 12, (uint32_t)-2) == 7 && alu(SIM_ALU_FNS, SIM_T_B32, 0, 0, 0x0000f0f0u, 3, 0) == 0xffffffffu &&
       alu(SIM_ALU_FNS, SIM_T_B32, 0, 0, 0x0000f0f0u, 4, 0) == 4 && alu(SIM_ALU_FNS, SIM_T_B32, 0, 0, 0x0000f0f0u, 0, 9) == 0xffffffffu;
  tu_check(ok, "fns: n-th set bit up, down, at base, and none", " ");
  ok = alu(SIM_ALU_SZEXT, SIM_T_S32, 0, 0, 0xf8, 4, 0) == 0xfffffff8u && alu(SIM_ALU_SZEXT, SIM_T_U32, 0, 0, 0xf8, 4, 0) == 8 &&
       alu(SIM_ALU_SZEXT, SIM_T_S32, 1, 0, 0x80000000u, 40, 0) == 0x80000000u && alu(SIM_ALU_SZEXT, SIM_T_S32, 0, 0, 0xff, 32, 0) == 0 &&
       alu(SIM_ALU_BMSK, SIM_T_B32, 0, 0, 4, 8, 0) == 0xff0 && alu(SIM_ALU_BMSK, SIM_T_B32, 1, 0, 28, 40, 0) == 0xf0000000u &&
       alu(SIM_ALU_BMSK, SIM_T_B32, 0, 0, 36, 1, 0) == 0x10 && alu(SIM_ALU_BMSK, SIM_T_B32, 1, 0, 32, 1, 0) == 0;
  tu_check(ok, "szext and bmsk: .clamp and .wrap", " ");
}

/* ---- kernels ---- */

static const char *kernels =
    /* atomicAdd on __half2 as <cuda_fp16.h> writes it (the test compiles without include paths) */
    "extern \"C\" __global__ void h2add(unsigned *acc, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  unsigned v = 0x38003c00u, old;\n"
    "  if (i < n) asm volatile(\"{ atom.add.noftz.f16x2 %0,[%1],%2; }\" : \"=r\"(old) : \"l\"(acc), \"r\"(v) : \"memory\");\n"
    "}\n"
    "extern \"C\" __global__ void cas16(unsigned short *s, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  unsigned short old = s[0], seen;\n"
    "  do { seen = old; old = atomicCAS(s, seen, (unsigned short)(seen + 1)); } while (old != seen);\n"
    "}\n"
    "extern \"C\" __global__ void barred(const int *v, int *out) {\n"
    "  int t = threadIdx.x;\n"
    "  int p = v[t];\n"
    "  out[t] = __syncthreads_count(p) * 4 + __syncthreads_and(p) * 2 + __syncthreads_or(p);\n"
    "}\n"
    "extern \"C\" __global__ void warpops(const int *v, unsigned *any, int *sum, int *mn, unsigned *all) {\n"
    "  int t = threadIdx.x, pred;\n"
    "  any[t] = __match_any_sync(0xffffffffu, v[t]);\n"
    "  sum[t] = __reduce_add_sync(0xffffffffu, v[t]);\n"
    "  mn[t] = __reduce_min_sync(0xffffffffu, v[t]);\n"
    "  all[t] = __match_all_sync(0xffffffffu, v[t] & 1, &pred) + (pred ? 1000 : 0);\n"
    "}\n"
    "extern \"C\" __global__ void badredux(int *out) {\n"
    "  int v = -1;\n"  /* the other lanes stay (a lane that returns would leave the group) */
    "  if (threadIdx.x < 16) v = __reduce_add_sync(0xffffffffu, 1);\n"
    "  out[threadIdx.x] = v;\n"
    "}\n"
    "extern \"C\" __global__ void hsetp2(const unsigned *a, const unsigned *b, int *out) {\n"
    "  int t = threadIdx.x, lo, hi;\n"
    "  asm(\"{ .reg .pred p, q; setp.gt.f16x2 p|q, %2, %3; selp.s32 %0, 1, 0, p; selp.s32 %1, 1, 0, q; }\"\n"
    "      : \"=r\"(lo), \"=r\"(hi) : \"r\"(a[t]), \"r\"(b[t]));\n"
    "  int al, ah;\n"
    "  asm(\"{ .reg .pred p, q, r; setp.ne.s32 r, %4, 0; setp.lt.and.bf16x2 p|q, %2, %3, r; selp.s32 %0, 1, 0, p; selp.s32 %1, 1, 0, q; }\"\n"
    "      : \"=r\"(al), \"=r\"(ah) : \"r\"(a[t]), \"r\"(b[t]), \"r\"(t & 1));\n"
    "  out[t] = lo | hi << 1 | al << 2 | ah << 3;\n"
    "}\n"
    "extern \"C\" __global__ void badmatch(unsigned *out) {\n"
    "  unsigned v = 0;\n"
    "  if (threadIdx.x >= 4) v = __match_any_sync(0xffffffffu, threadIdx.x & 1);\n"
    "  out[threadIdx.x] = v;\n"
    "}\n"
    "extern \"C\" __global__ void clocks(unsigned *out) {\n"
    "  unsigned h, gl, gh;\n"
    "  asm volatile(\"mov.u32 %0, %%clock_hi;\" : \"=r\"(h)); asm volatile(\"mov.u32 %0, %%globaltimer_lo;\" : \"=r\"(gl));\n"
    "  asm volatile(\"mov.u32 %0, %%globaltimer_hi;\" : \"=r\"(gh));\n"
    "  unsigned long long g; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(g));\n"
    "  unsigned long long gid; asm(\"mov.u64 %0, %%gridid;\" : \"=l\"(gid));\n"
    "  out[0] = h; out[1] = gh; out[2] = (unsigned)(g >> 32); out[3] = (unsigned)gid; out[4] = gl;\n"
    "}\n"
    "extern \"C\" __global__ void sregs(unsigned *out) {\n"
    "  unsigned a, b, c, d, e, f;\n"
    "  asm(\"mov.u32 %0, %%nsmid;\" : \"=r\"(a)); asm(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(b));\n"
    "  asm(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(c)); asm(\"{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }\" : \"=r\"(d));\n"
    "  asm(\"mov.u32 %0, %%envreg31;\" : \"=r\"(e)); { unsigned long long q; asm(\"mov.u64 %0, %%pm7_64;\" : \"=l\"(q)); e += (unsigned)q; } asm(\"mov.u32 %0, %%lanemask_lt;\" : \"=r\"(f));\n"
    "  if (threadIdx.x == 5) { out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f; }\n"
    "}\n";

static void test_kernels(void) {
  sim_device *dev = sim_device_new(NULL);
  sim_module *m = tu_module("compile the half and warp kernels", kernels);
  if (!m) { sim_device_free(dev); return; }
  uint32_t *acc = sim_malloc(dev, 4096, "acc", err, sizeof err);
  int *v = sim_malloc(dev, 4096, "v", err, sizeof err), *o = sim_malloc(dev, 4096 * 4, "out", err, sizeof err);
  memset(acc, 0, 4096);
  int n = 1000;
  void *a1[] = {&acc, &n};
  int rc = tu_launch(dev, tu_kernel(m, "h2add"), 8, 128, 0, a1, 0, NULL, err, sizeof err);
  tu_check(rc == 0 && acc[0] == 0x5fd063d0u, "atomicAdd on __half2 from 1000 threads: {1000, 500} exactly", "rc=%d acc=0x%08x %s", rc, acc[0], err);
  memset(acc, 0, 8);
  rc = tu_launch(dev, tu_kernel(m, "cas16"), 4, 256, 0, a1, 0, NULL, err, sizeof err);
  tu_check(rc == 0 && ((uint16_t *)acc)[0] == 1000 && ((uint16_t *)acc)[1] == 0,
           "atomicCAS on unsigned short: 1000 increments, the neighbour untouched", "rc=%d s=%u,%u %s", rc, ((uint16_t *)acc)[0], ((uint16_t *)acc)[1], err);
  int cnt = 0, all = 1, any = 0;
  for (int t = 0; t < 70; t++) { v[t] = (t * 7) % 3 == 0 ? 0 : t; cnt += v[t] != 0; all &= v[t] != 0; any |= v[t] != 0; }
  void *a2[] = {&v, &o};
  rc = tu_launch(dev, tu_kernel(m, "barred"), 1, 70, 0, a2, 0, NULL, err, sizeof err);
  int okb = rc == 0;
  for (int t = 0; t < 70; t++) okb &= o[t] == cnt * 4 + all * 2 + any;
  tu_check(okb, "__syncthreads_count/_and/_or over a block of 70 threads (a partial last warp)", "rc=%d out[0]=%d want %d %s", rc, o[0], cnt * 4 + all * 2 + any, err);
  int want_sum = 0;
  for (int t = 0; t < 32; t++) { v[t] = t % 5; want_sum += t % 5; }
  int *sum = o + 64, *mn = o + 128;
  unsigned *anym = (unsigned *)o, *allm = (unsigned *)o + 192;
  void *a3[] = {&v, &anym, &sum, &mn, &allm};
  rc = tu_launch(dev, tu_kernel(m, "warpops"), 1, 32, 0, a3, 0, NULL, err, sizeof err);
  int okw = rc == 0;
  for (int t = 0; t < 32; t++) {
    unsigned want = 0;
    for (int j = 0; j < 32; j++) if (j % 5 == t % 5) want |= 1u << j;
    okw &= anym[t] == want && sum[t] == want_sum && mn[t] == 0 && allm[t] == 0;
  }
  tu_check(okw, "__match_any_sync, __reduce_add/min_sync, __match_all_sync over a warp", "rc=%d any[1]=0x%08x sum=%d min=%d all=%u %s",
           rc, anym[1], sum[0], mn[0], allm[0], err);
  void *a4[] = {&o};
  rc = tu_launch(dev, tu_kernel(m, "badredux"), 1, 32, 0, a4, 0, NULL, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "__reduce_add_sync with mask 0xffffffff") && strstr(err, "0xffff0000"),
           "a warp reduction that half the warp skips is an error naming the missing lanes", "rc=%d msg: %s", rc, err);
  rc = tu_launch(dev, tu_kernel(m, "sregs"), 1, 32, 0, a4, 0, NULL, err, sizeof err);
  unsigned *u = (unsigned *)o;
  tu_check(rc == 0 && u[0] == 132 && u[1] == 1 && u[2] == 0 && u[3] == 0 && u[4] == 0 && u[5] == 0x1f,
           "special registers: %nsmid, cluster registers of a launch without clusters, %envreg, %lanemask_lt",
           "rc=%d %u %u %u %u %u 0x%x %s", rc, u[0], u[1], u[2], u[3], u[4], u[5], err);
  /* setp on f16x2: d from the low halves, d2 from the high; with .and the combining predicate. */
  uint32_t *ha = (uint32_t *)v, *hb = (uint32_t *)v + 64;
  for (int t = 0; t < 32; t++) {
    ha[t] = (t & 2 ? 0x4000u : 0x3c00u) | (t & 4 ? 0x4000u : 0x3c00u) << 16; /* f16 {1 or 2, 1 or 2} */
    hb[t] = 0x3c003c00u | (t & 8 ? 0x7e00u : 0);                              /* {1 or NaN, 1} */
  }
  int *hout = o + 256;
  void *a5[] = {&ha, &hb, &hout};
  rc = tu_launch(dev, tu_kernel(m, "hsetp2"), 1, 32, 0, a5, 0, NULL, err, sizeof err);
  int okh = rc == 0;
  for (int t = 0; t < 32; t++) {
    int lo = (t & 2) && !(t & 8), hi = (t & 4) != 0;
    /* The same bits as bf16x2: 0x3c00 is 2^-7, 0x4000 is 2, 0x7e00 is 2^125 (no NaN); and with t & 1. */
    int blo = (t & 8) && (t & 1), bhi = 0;
    okh &= hout[t] == (lo | hi << 1 | blo << 2 | bhi << 3);
  }
  tu_check(okh, "setp.gt.f16x2 p|q and setp.lt.and.bf16x2: low half to p, high half to q, NaN unordered",
           "rc=%d out[2]=%d out[10]=%d %s", rc, hout[2], hout[10], err);
  rc = tu_launch(dev, tu_kernel(m, "badmatch"), 1, 32, 0, a4, 0, NULL, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "__match_any_sync with mask 0xffffffff") && strstr(err, "lanes 0x0000000f"),
           "a __match_any_sync that lanes 0-3 skip is an error naming them", "rc=%d msg: %s", rc, err);
  rc = tu_launch(dev, tu_kernel(m, "clocks"), 1, 32, 0, a4, 0, NULL, err, sizeof err);
  rc |= tu_launch(dev, tu_kernel(m, "clocks"), 1, 32, 0, a4, 0, NULL, err, sizeof err);
  tu_check(rc == 0 && u[0] == 0 && u[1] == u[2] && u[1] > 0x17000000u && u[3] > 1,
           "%clock_hi, %globaltimer_hi (the high word of %globaltimer) and %gridid (a new one per launch)",
           "rc=%d clock_hi=%u gt_hi=%u gt>>32=%u gridid=%u %s", rc, u[0], u[1], u[2], u[3], err);
  sim_free(dev, acc); sim_free(dev, v); sim_free(dev, o);
  sim_module_free(m);
  sim_device_free(dev);
}

/* ---- what is still refused ---- */

static void refused(const char *inst, const char *decl, const char *want, const char *name) {
  char ptx[1024];
  snprintf(ptx, sizeof ptx,
           ".version 9.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %%rd<3>;\n  .reg .b32 %%r<3>;\n  .reg .b16 %%rs<3>;\n"
           "  .reg .pred %%p<3>;\n%s  ld.param.u64 %%rd1, [p];\n  %s\n  ret;\n}\n", decl, inst);
  sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
  tu_check(!m && strstr(err, want), name, "msg: %s", m ? "(loaded)" : err);
  sim_module_free(m);
}

static void test_refused(void) {
  refused("add.rz.f16 %rs1, %rs2, %rs2;", "", "PTX line 11: unsupported instruction 'add.rz.f16'", "add.rz.f16 is refused: PTX has only .rn");
  refused("ex2.approx.f16 %rs1, %rs2;", "", "'ex2.approx.f16': half-precision approximations are not modelled",
          "ex2.approx.f16 is refused with a reason");
  refused("atom.global.exch.b16 %rs1, [%rd1], %rs2;", "", "the only 16-bit integer atomic is cas.b16", "atom.exch.b16 is refused");
  refused("atom.global.add.f16 %rs1, [%rd1], %rs2;", "", "16-bit floats only with atom.add.noftz", "atom.add.f16 without .noftz is refused");
  refused("lop3.b32 %r1, %r2, %r2, %r2, %r1;", "", "lop3 takes d, a, b, c and an immediate LUT", "lop3 with a register LUT is refused");
  refused("bar.red.popc.u32 %r1, 0, 100, %p1;", "", "a thread count must be a multiple of 32",
          "bar.red with a thread count that is no multiple of 32 is refused");
  refused("add.ftz.bf16 %rs1, %rs2, %rs2;", "", ".ftz and .sat do not exist for bf16", "add.ftz.bf16 is refused");
  refused("cvt.f16x2.f32 %r1, %r2, %r2;", "  .reg .f32 %f<2>;\n", "PTX line", "cvt.f16x2 from b32 registers without rounding is refused");
  refused("mov.u32 %r1, %envreg32;", "", "unknown register '%envreg32'", "%envreg32 is not a register");
  refused("redux.sync.add.b32 %r1, %r2, -1;", "", "unsupported instruction 'redux.sync.add.b32'", "redux.add on .b32 is refused");
  refused("match.any.sync.b32 %r1|%p1, %r2, -1;", "", "only match.all has a predicate", "match.any with a predicate is refused");
  refused("cvt.rn.s32.f16 %r1, %rs1;", "", "float to integer needs an integer rounding modifier",
          "cvt.rn.s32.f16 is refused: an integer destination needs .rni/.rzi/.rmi/.rpi");
  refused("cvt.f16.f32 %rs1, %r1;", "", "conversion to a half type needs a rounding modifier", "cvt.f16.f32 without rounding is refused");
  refused("cvt.rn.f16x2.f16 %r1, %rs1, %rs2;", "", "packed conversions take two .f32 sources", "cvt.rn.f16x2.f16 is refused");
  refused("dp2a.s32.s32 %r1, %r2, %r2, %r2;", "", "unsupported instruction 'dp2a.s32.s32'", "dp2a without .lo/.hi is refused");
  refused("bfind.f32 %r1, %r2;", "", "unsupported instruction 'bfind.f32'", "bfind.f32 is refused");
  refused("szext.s32 %r1, %r2, %r2;", "", "unsupported instruction 'szext.s32'", "szext without .clamp/.wrap is refused");
  refused("bar.red.popc.pred %p1, 0, %p2;", "", "unsupported instruction 'bar.red.popc.pred'", "bar.red.popc into a predicate is refused");
  refused("mov.u32 %r1, %pm8;", "", "unknown register '%pm8'", "%pm8 is not a register");
  refused("mov.u32 %r1, %envreg07;", "", "unknown register '%envreg07'", "%envreg07 is not a register");
  refused("mov.u32 %r1, %reserved_smem_offset_2;", "", "unknown register '%reserved_smem_offset_2'",
          "%reserved_smem_offset_2 is not a register (begin, end, cap, 0 and 1 are)");
  refused("setp.lt.f16x2 %p1, %r1, %r2;", "", "a packed setp writes two predicates, p|q", "setp.f16x2 with one predicate is refused");
  refused("set.lt.and.u32.f16x2 %r1, %r1, %r2, %p1;", "", "unsupported instruction 'set.lt.and.u32.f16x2'", "set with a boolean operation is refused");
  refused("cvt.rzi.relu.s32.f16 %r1, %rs1;", "", "unsupported instruction 'cvt.rzi.relu.s32.f16'", "cvt.relu to an integer is refused");
  refused("mov.pred %p1, %tid.x;", "", "not a predicate special register", "mov.pred from %tid.x is refused");
}

int main(void) {
  tu_plan(59);
  test_random_arith(0);
  test_random_arith(1);
  test_special_arith();
  test_cvt_f32(0);
  test_cvt_f32(1);
  test_cvt_misc();
  test_bits();
  test_kernels();
  test_refused();
  return tu_failures() ? 1 : 0;
}
