/* sim_fp8.c: the two 8-bit float formats of sm_89 and later, E4M3 and E5M2 (cuda_fp8.h's
 * __nv_fp8_e4m3 and __nv_fp8_e5m2), as cvt converts them: two at a time into a .b16, from two
 * f32 (cvt.rn.satfinite{.relu}.e4m3x2.f32 d, a, b: a into the high byte) or from an f16x2, and
 * back to an f16x2 (cvt.rn{.relu}.f16x2.e4m3x2 d, a: the high byte into the high half).
 *
 * Stance: E5M2 is IEEE-like (bias 15, infinities and NaNs), the top byte of an f16. E4M3 (bias
 * 7) gives up infinities and all but one NaN per sign (S.1111.111) for a larger range: 448 is
 * its largest value. The ISA requires .satfinite on a conversion to them, so a value past the
 * largest finite one, an infinity included, becomes that value with its sign; a NaN becomes the
 * canonical 0x7f, as cuda_fp8.h's own fallback gives for the canonical f32 NaN. Rounding is to
 * nearest even, in integers, from the source's exact value as a double (f32 and f16 values are
 * exact there). Widening to f16 is exact for every value; a NaN becomes the canonical 0x7fff.
 * .relu makes a negative result +0 and keeps a NaN. */
#include <math.h>

#include "sim_bits.h"
#include "sim_int.h"

typedef struct fp8fmt {
  int mbits, bias, emax; /* mantissa bits, exponent bias, the largest finite value's exponent */
  uint32_t maxf;         /* the largest finite value's bits */
  int has_inf;           /* E5M2: exponent field all ones is infinity or NaN */
} fp8fmt;
static const fp8fmt E4M3 = {3, 7, 8, 0x7e, 0}, E5M2 = {2, 15, 15, 0x7b, 1};

static fp8fmt fmt_of(int ty) { return ty == SIM_T_E5M2X2 ? E5M2 : E4M3; }

int sim_type_fp8(int t) { return t == SIM_T_E4M3X2 || t == SIM_T_E5M2X2; }

/* x to 8-bit bits of format f, rounded to nearest even, saturated to the largest finite. */
static uint32_t to_fp8(fp8fmt f, double x, int relu) {
  if (x != x) return 0x7f;
  uint32_t s = signbit(x) ? 0x80u : 0;
  if (relu && s) return 0;
  double a = fabs(x);
  if (a == 0) return s;
  int e;
  frexp(a, &e);
  e -= 1; /* a = 1.m * 2^e */
  if (isinf(a) || e > f.emax) return s | f.maxf;
  int emin = 1 - f.bias, q = (e < emin ? emin : e) - f.mbits; /* q: one unit in the last place */
  double sc = ldexp(a, -q), n = floor(sc), frac = sc - n;      /* exact: below 2^(mbits+1) */
  int up = frac > 0.5 || (frac == 0.5 && fmod(n, 2.0) != 0);
  uint32_t mant = (uint32_t)n + (uint32_t)up; /* a carry moves into the exponent */
  uint32_t bits = e < emin ? mant : ((uint32_t)(e + f.bias) << f.mbits) + mant - (1u << f.mbits);
  return s | (bits > f.maxf ? f.maxf : bits);
}

/* The exact value of 8-bit bits b of format f (NaN for its NaNs). */
static double from_fp8(fp8fmt f, uint32_t b) {
  uint32_t e = (b >> f.mbits) & ((1u << (7 - f.mbits)) - 1), m = b & ((1u << f.mbits) - 1);
  double v;
  if (f.has_inf && e == (1u << (7 - f.mbits)) - 1) v = m ? NAN : INFINITY;
  else if (!f.has_inf && (b & 0x7f) == 0x7f) v = NAN;
  else if (e == 0) v = ldexp((double)m, 1 - f.bias - f.mbits);
  else v = ldexp((double)(m | 1u << f.mbits), (int)e - f.bias - f.mbits);
  return (b & 0x80) ? -v : v;
}

/* The f16 bits of x, which is exact in f16 (every 8-bit float is). */
static uint32_t exact_f16(double x, int relu) {
  if (x != x) return 0x7fff;
  uint32_t s = signbit(x) ? 0x8000u : 0;
  if (relu && s) return 0;
  double a = fabs(x);
  if (a == 0) return s;
  if (isinf(a)) return s | 0x7c00u;
  int e;
  frexp(a, &e);
  e -= 1;
  if (e < -14) return s | (uint32_t)ldexp(a, 24); /* an f16 subnormal: units of 2^-24 */
  return s | (uint32_t)(e + 15) << 10 | ((uint32_t)ldexp(a, 10 - e) & 0x3ffu);
}

/* An f16's exact value. */
static double f16_value(uint32_t h) {
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 31 ? (m ? NAN : INFINITY)
           : e == 0  ? ldexp((double)m, -24)
                     : ldexp((double)(m | 0x400u), (int)e - 25);
  return (h & 0x8000u) ? -v : v;
}

uint64_t sim_fp8_cvt(int dt, int st, int flags, uint64_t a, uint64_t b) {
  int relu = (flags & SIM_IF_RELU) != 0;
  if (sim_type_fp8(dt)) {
    fp8fmt f = fmt_of(dt);
    double hi, lo;
    if (st == SIM_T_F16X2) {
      hi = f16_value((uint32_t)(a >> 16) & 0xffffu);
      lo = f16_value((uint32_t)a & 0xffffu);
    } else { /* two f32: a into the high byte, b into the low */
      hi = (double)f32(a);
      lo = (double)f32(b);
    }
    return (uint64_t)(to_fp8(f, hi, relu) << 8 | to_fp8(f, lo, relu));
  }
  fp8fmt f = fmt_of(st); /* to f16x2: the high byte into the high half */
  uint32_t hi = exact_f16(from_fp8(f, (uint32_t)(a >> 8) & 0xffu), relu);
  uint32_t lo = exact_f16(from_fp8(f, (uint32_t)a & 0xffu), relu);
  return (uint64_t)(hi << 16 | lo);
}
