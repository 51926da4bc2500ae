/* sim_sfu.c: the .approx functions of PTX, computed as the H200's special-function unit does.
 *
 * Stance: PTX only bounds the error of these instructions, and the GPU's own bits come from its
 * hardware approximation (table lookup plus interpolation). What is reproduced exactly here is
 * measured exhaustively on the GPU by bench/sfu/exhaustive.cu (`make sfu-check`), which writes
 * bench/SFU.md; the README quotes what still differs. Everything else (special values, flushing,
 * the canonical NaN) follows the PTX ISA. */
#include <math.h>
#include <string.h>

#include "sim_bits.h"
#include "sim_sfu.h"

static int subnormal32(uint32_t u) { return (u & 0x7f800000u) == 0 && (u & 0x007fffffu) != 0; }

/* x * 1/(2 pi) rounded toward zero in f32: the GPU turns an angle into revolutions so before its
 * SFU sees it (FMUL.RZ), which is why sin.approx of a large angle is far from sin. The product of
 * two floats is exact in double, so truncating it to float gives the RZ product. */
static double revolutions(float x) {
  double p = (double)x * (double)0.15915494f;
  float r = (float)p;
  if (fabs((double)r) > fabs(p)) r = nextafterf(r, 0.0f);
  /* a whole number of turns keeps x's sign, as the GPU's sin does: sin(-0) and sin(-2 pi) are
   * -0, where r - rint(r) alone would make them +0 */
  double turns = (double)r - rint((double)r);
  return turns == 0 ? copysign(0.0, (double)r) : turns;
}

static float eval(int fn, float x) {
  const double two_pi = 6.283185307179586;
  switch (fn) {
    case SIM_SFU_RCP: return 1.0f / x;
    case SIM_SFU_RSQRT: return 1.0f / sqrtf(x);
    case SIM_SFU_SQRT: return sqrtf(x);
    case SIM_SFU_EX2: return exp2f(x);
    case SIM_SFU_LG2: return log2f(x);
    case SIM_SFU_SIN: return isinf(x) ? NAN : (float)sin(two_pi * revolutions(x));
    case SIM_SFU_COS: return isinf(x) ? NAN : (float)cos(two_pi * revolutions(x));
    default: return tanhf(x);
  }
}

uint32_t sim_sfu_f32(int fn, int ftz, uint32_t x) {
  if (ftz && subnormal32(x)) x &= 0x80000000u;
  uint32_t r = (uint32_t)bf32(eval(fn, f32(x)));
  if (ftz && subnormal32(r)) r &= 0x80000000u;
  return r;
}

/* Bias of the GPU's reciprocal before it truncates, in units of the result's last high-word
 * bit: truncating 1/x + 0.07 ulp gives the H200's bits for 98.4% of the significands in
 * [1, 2) (plain truncation: 93.1%), fitted to every one of them (bench/sfu/NOTES.md). */
#define RCP64_BIAS 0.07

/* rcp.approx.ftz.f64 is MUFU.RCP64H: it reads the input's high word alone (sign, exponent, 20
 * significand bits), flushes subnormals, and writes the result's high word; the low word is 0. */
static uint64_t rcp64(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32), sign = hi & 0x80000000u;
  int e = (int)(hi >> 20 & 0x7ff);
  uint32_t m = hi & 0xfffffu;
  if (e == 0x7ff) /* 1/inf is 0; a NaN stays the canonical NaN */
    return m ? 0x7fffffff00000000ull : (uint64_t)sign << 32;
  if (e == 0) return (uint64_t)(sign | 0x7ff00000u) << 32; /* zero or flushed subnormal */
  /* 1/(1 + m/2^20) in units of 2^-21: in (2^20, 2^21] */
  double q = 2199023255552.0 / (double)(0x100000u + m); /* 2^41 / (2^20 + m) */
  uint32_t t = m ? (uint32_t)(q + RCP64_BIAS) : 0x200000u;
  int re = 2045 - e; /* the result's exponent field when t < 2^21 */
  if (t >= 0x200000u) {
    t = 0x100000u;
    re++;
  }
  if (re <= 0) return (uint64_t)sign << 32; /* a subnormal result is flushed */
  return (uint64_t)(sign | (uint32_t)re << 20 | (t - 0x100000u)) << 32;
}

/* MUFU.RSQ64H for a positive normal x: 1/sqrt of its high word's value to 20 bits. It is the f32
 * reciprocal square root of the significand (doubled for an odd exponent), truncated, with the
 * exponent halved; the GPU's seeds give exactly the H200's rsqrt.approx.f64 results below. */
static double rsq64h(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32);
  int e = (int)(hi >> 20 & 0x7ff) - 1023, odd = e & 1;
  uint32_t v = (odd ? 0x40000000u : 0x3f800000u) | (hi & 0xfffffu) << 3; /* in [1, 4) */
  float g = eval(SIM_SFU_RSQRT, f32(v));
  double seed = f64(bf64((double)g) & 0xffffffff00000000ull);
  return ldexp(seed, -(e - odd) / 2);
}

/* The one refinement rsqrt.approx.f64 compiles to (DMUL, DFMA, DFMA, DMUL, DFMA on sm_90):
 * y0 + y0 e (1/2 + 3/8 e) with e = 1 - x y0^2, each step rounded as the GPU rounds it. */
static double rsqrt_refine(double x, double y0) {
  double sq = y0 * y0;
  double e = fma(-sq, x, 1.0);
  double c = fma(e, 0.375, 0.5);
  double ye = y0 * e;
  return fma(c, ye, y0);
}

/* rsqrt.approx.f64: the fast path for positive normal inputs, and the GPU's slow path for the
 * rest (zeros, NaNs, negatives, infinity, and subnormals scaled by 2^54 and back by 2^27). */
static uint64_t rsqrt64(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32);
  double d = f64(x);
  if (hi - 0x00100000u < 0x7fe00000u) return bf64(rsqrt_refine(d, rsq64h(x)));
  if (d == 0) return (uint64_t)((hi & 0x80000000u) | 0x7ff00000u) << 32;
  if (d != d) return bf64(d + d); /* quieted, payload kept */
  if (hi & 0x80000000u) return 0xfff8000000000000ull;
  if (isinf(d)) return 0;
  double scaled = d * 0x1p54;
  return bf64(rsqrt_refine(scaled, rsq64h(bf64(scaled))) * 0x1p27);
}

uint64_t sim_sfu_f64(int fn, uint64_t x) {
  return fn == SIM_SFU_RCP ? rcp64(x) : rsqrt64(x);
}
