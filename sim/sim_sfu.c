/* sim_sfu.c: the .approx functions of PTX, computed as the H200's special-function unit does.
 *
 * Stance: PTX only bounds the error of these instructions, and the GPU's own bits come from its
 * hardware approximation (table lookup plus interpolation), reproduced here from measurements:
 * bench/sfu/exhaustive.cu (`make sfu-check`) compares every input with the GPU and writes
 * bench/SFU.md, which the README quotes. Special values, flushing and the canonical NaN are the
 * GPU's too. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "sim_bits.h"
#include "sim_sfu.h"
#include "sim_sfu_tables.h"

/* ---- the unit's datapath ----
 *
 * For a fixed-point argument split into a segment (its top bits, which pick a table row) and an
 * offset u (the rest), the unit adds a + b*u + c*S(u) and keeps the top bits. S(u) is u squared
 * by a folded partial-product array (bit i times bit j at column i+j+1 for i < j, bit i at
 * column 2i) whose columns below `drop` are left out, with no compensation: a truncation that
 * depends on u's low bits, which is why no smooth quadratic reproduces the GPU. Tables and
 * widths were fitted to every input of a binade on the GPU (bench/sfu/fit_table.py,
 * bench/sfu/NOTES.md). */

/* The folded array's sum without its columns below `drop`, shifted right by `drop`: u*u less
 * the dropped bits, which are bit i at column 2i and bit i times bits i+1..drop-2-i at columns
 * i+j+1 (u below 2^17). */
static uint32_t folded_square_of(uint32_t u, int drop) {
  uint64_t dropped = 0;
  for (int i = 0; 2 * i < drop; i++) {
    if (!(u >> i & 1)) continue;
    dropped += 1ull << (2 * i);
    int last = drop - 2 - i; /* the highest j whose column i + j + 1 is dropped */
    if (last > i) {
      uint32_t js = u & ((2u << last) - 1) & ~((2u << i) - 1);
      dropped += (uint64_t)js << (i + 1);
    }
  }
  return (uint32_t)(((uint64_t)u * u - dropped) >> drop);
}

/* S(u) for every u of the two squarers the unit uses (16-bit u with columns from 17, 17-bit u
 * with columns from 19), filled once: a kernel may call these functions a billion times. */
static uint16_t square17[1 << 16], square19[1 << 17];
static pthread_once_t squares_once = PTHREAD_ONCE_INIT;

static void fill_squares(void) {
  for (uint32_t u = 0; u < 1u << 16; u++) square17[u] = (uint16_t)folded_square_of(u, 17);
  for (uint32_t u = 0; u < 1u << 17; u++) square19[u] = (uint16_t)folded_square_of(u, 19);
}

static uint32_t folded_square(uint32_t u, int drop) {
  pthread_once(&squares_once, fill_squares);
  return drop == 17 ? square17[u] : square19[u];
}

/* V = a + b*u + c*S(u) of a table row: the unit's sum, of which each function keeps the top. */
static int64_t interpolate(const sfu_row *r, uint32_t u, int drop) {
  return r->a + (int64_t)r->b * u + (int64_t)r->c * folded_square(u, drop);
}

/* 1/x for x = 1 + m/2^23 as g/2^24, 2^23 < g <= 2^24: 128 segments, a 16-bit offset, the
 * squarer's columns from 17. */
static uint32_t rcp_significand(uint32_t m) {
  return (uint32_t)(interpolate(&sfu_rcp_rows[m >> 16], m & 0xffffu, 17) >> 15);
}

/* mag * 2^-frac_bits, truncated to an f32 of full precision (the unit's fixed-point outputs;
 * they are never too small for a normal f32). */
static uint32_t fixed_to_f32(uint64_t mag, int frac_bits) {
  if (mag == 0) return 0;
  int top = 63 - __builtin_clzll(mag); /* the leading bit's place */
  uint64_t sig = top > 23 ? mag >> (top - 23) : mag << (23 - top);
  return (uint32_t)(top - frac_bits + 127) << 23 | (uint32_t)(sig & 0x7fffffu);
}

/* MUFU.RCP of a normal x: the significand from the table, the exponent negated; a result below
 * fp32's normal range is flushed to zero, as the unit does. */
static uint32_t mufu_rcp(uint32_t x) {
  uint32_t sign = x & 0x80000000u, g = rcp_significand(x & 0x7fffffu);
  int e = 253 - (int)(x >> 23 & 0xff); /* the exponent field of 2^-E / 2 for x's 2^E */
  if (g == 1u << 24) {
    g = 1u << 23;
    e++;
  }
  if (e <= 0) return sign;
  return sign | (uint32_t)e << 23 | (g - (1u << 23));
}

/* rcp.approx.f32: MUFU.RCP, which flushes subnormal inputs and results. Without .ftz a
 * subnormal x, or an x whose reciprocal is subnormal, is scaled by 2^24 around the unit and the
 * result rounded back by an fp32 multiply. */
static uint32_t rcp_f32(uint32_t x, int ftz) {
  uint32_t sign = x & 0x80000000u, ex = x >> 23 & 0xff;
  if (ex == 0xff) return x & 0x7fffffu ? 0x7fffffffu : sign; /* NaN; 1/inf = 0 */
  if (ex == 0 && (ftz || !(x & 0x7fffffu))) return sign | 0x7f800000u;
  if (ex == 0) /* subnormal: 1/x = 2^24 / (x * 2^24) */
    return (uint32_t)bf32(f32(mufu_rcp((uint32_t)bf32(f32(x) * 0x1p24f))) * 0x1p24f);
  if (!ftz && ex >= 253) /* a subnormal result: 1/x = 2^-24 / (x * 2^-24) */
    return (uint32_t)bf32(f32(mufu_rcp((uint32_t)bf32(f32(x) * 0x1p-24f))) * 0x1p-24f);
  return mufu_rcp(x);
}

/* MUFU.EX2: x becomes fixed point with 23 fraction bits, truncated (a negative x's fraction is
 * complemented, so that 2^x = 2^n * 2^f with 0 <= f < 1); 2^f's fraction comes from 64
 * segments, a 17-bit offset and the squarer's columns from 19; n is the exponent. Subnormal
 * results are flushed, |x| >= 128 saturates, and a zero or subnormal x (flushed) gives 1. */
static uint32_t mufu_ex2(uint32_t x) {
  uint32_t ex = x >> 23 & 0xff, neg = x >> 31;
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffffffu;
  if (ex == 0) return 0x3f800000u;
  if (ex >= 134) return neg ? 0 : 0x7f800000u; /* |x| >= 128, infinities included */
  uint64_t sig = (x & 0x7fffffu) | 0x800000u;
  int shift = (int)ex - 127; /* |x| * 2^23 = sig * 2^shift */
  uint64_t fixed = shift >= 0 ? sig << shift : shift > -25 ? sig >> -shift : 0;
  int64_t f = neg ? -(int64_t)fixed - ((fixed & 0x7fffffu) != 0) : (int64_t)fixed;
  int64_t n = f >> 23; /* floor: the integer part, toward minus infinity */
  if (n >= 128) return 0x7f800000u;
  if (n <= -127) return 0;
  uint32_t frac = (uint32_t)(f & 0x7fffff);
  int64_t v = interpolate(&sfu_ex2_rows[frac >> 17], frac & 0x1ffffu, 19);
  return (uint32_t)(n + 127) << 23 | (uint32_t)(v >> 15);
}

/* ex2.approx.f32: MUFU.EX2, except that without .ftz a subnormal result (x < -126) is made as
 * the GPU's code makes it: MUFU.EX2 of x/2, squared by an fp32 multiply. */
static uint32_t ex2_f32(uint32_t x, int ftz) {
  float v = f32(x);
  if (ftz || !(v < -126.0f)) return mufu_ex2(x);
  float half = f32(mufu_ex2((uint32_t)bf32(v * 0.5f)));
  return (uint32_t)bf32(half * half);
}

/* MUFU.RSQ and MUFU.SQRT of a positive normal x = 1.m * 2^e: the row is picked by e's parity
 * and m's top 6 bits (64 segments per binade), the offset is m's other 17 bits, the squarer's
 * columns from 19; V's bits from 16 up (rsqrt) or 17 up (sqrt) are the significand, and e/2
 * (rounded down) the exponent, negated for rsqrt. A power of 4 has an exact reciprocal square
 * root, which the unit gives as such. */
static uint32_t mufu_root(uint32_t x, int reciprocal) {
  uint32_t m = x & 0x7fffffu;
  int e = (int)(x >> 23 & 0xff) - 127, odd = e & 1, half = (e - odd) / 2;
  if (reciprocal && !m && !odd) return (uint32_t)(127 - half) << 23;
  const sfu_row *rows = reciprocal ? sfu_rsqrt_rows : sfu_sqrt_rows;
  int64_t v = interpolate(&rows[(uint32_t)odd << 6 | m >> 17], m & 0x1ffffu, 19);
  uint32_t sig = (uint32_t)(v >> (reciprocal ? 16 : 17)) - (1u << 23);
  return (uint32_t)(reciprocal ? 126 - half : 127 + half) << 23 | sig;
}

/* rsqrt.approx.f32 and sqrt.approx.f32. Without .ftz a subnormal x is scaled by 2^24 around the
 * unit (the result by 2^12 or 2^-12), as the GPU's code does. */
static uint32_t root_f32(uint32_t x, int ftz, int reciprocal) {
  uint32_t sign = x & 0x80000000u, mag = x & 0x7fffffffu;
  if (mag == 0 || (ftz && mag < 0x00800000u)) return reciprocal ? sign | 0x7f800000u : sign;
  if (mag == 0x7f800000u && !sign) return reciprocal ? 0 : 0x7f800000u;
  if (sign || mag > 0x7f800000u) return 0x7fffffffu; /* negative or NaN */
  if (mag >= 0x00800000u) return mufu_root(x, reciprocal);
  float r = f32(mufu_root((uint32_t)bf32(f32(x) * 0x1p24f), reciprocal));
  return (uint32_t)bf32(r * (reciprocal ? 0x1p12f : 0x1p-12f));
}

/* MUFU.LG2 of a positive normal x = 1.m * 2^e: lg2(1.m) from 64 segments, a 17-bit offset and
 * the squarer's columns from 19, in units of 2^-38, cut to 36 fraction bits; e is added in that
 * fixed point, and the sum is truncated to an f32 of full precision (hence the GPU's absolute
 * error near 1). A negative sum's magnitude is its ones' complement, one unit short, as on the
 * GPU; lg2(1) is exactly +0. */
static uint32_t mufu_lg2(uint32_t x) {
  if (x == 0x3f800000u) return 0;
  uint32_t m = x & 0x7fffffu;
  int64_t v = interpolate(&sfu_lg2_rows[m >> 17], m & 0x1ffffu, 19);
  int64_t sum = (int64_t)((int)(x >> 23 & 0xff) - 127) * ((int64_t)1 << 36) + (v >> 2);
  if (sum < 0) return 0x80000000u | fixed_to_f32((uint64_t)~sum, 36);
  return fixed_to_f32((uint64_t)sum, 36);
}

/* lg2.approx.f32: zeros give -inf, negatives NaN, +inf itself; without .ftz a subnormal x is
 * scaled by 2^24 and 24 taken from the result, as the GPU's code does. */
static uint32_t lg2_f32(uint32_t x, int ftz) {
  uint32_t mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return 0x7fffffffu;
  if (mag == 0 || (ftz && mag < 0x00800000u)) return 0xff800000u;
  if (x >> 31) return 0x7fffffffu;
  if (mag == 0x7f800000u) return x;
  if (mag >= 0x00800000u) return mufu_lg2(x);
  return (uint32_t)bf32(f32(mufu_lg2((uint32_t)bf32(f32(x) * 0x1p24f))) - 24.0f);
}

/* The angle MUFU.SIN and MUFU.COS read: t = x / 2pi in revolutions, rounded toward zero (the
 * FMUL.RZ the compiler puts before them), then the fraction of |t| to 25 bits, truncated (so
 * |t| < 2^-25 is an angle of 0: the GPU's sin is absolutely, not relatively, accurate). In
 * integers: the product of the significands (1/2pi's is 0xa2f983 * 2^-26) cut to 24 bits. */
static uint32_t angle(uint32_t x) {
  int e = (int)(x >> 23 & 0xff);
  if (e == 0) return 0; /* zero or subnormal: t is 0 */
  uint64_t p = (uint64_t)((x & 0x7fffffu) | 0x800000u) * 0xa2f983u; /* 47 or 48 bits */
  int wide = (int)(p >> 47);
  p >>= 23 + wide; /* t = p * 2^(e - 153 + wide), 24 bits, truncated */
  int shift = e - 128 + wide; /* where t's bits sit against the 25-bit fraction */
  if (shift >= 25 || shift <= -24) return 0;
  return (uint32_t)(shift >= 0 ? p << shift : p >> -shift) & 0x1ffffffu;
}

/* MUFU.SIN of a 25-bit angle q (cos is q a quarter turn on): the quadrant folded away, odd
 * quadrants reflected by complementing the angle's bits, 64 segments of a quarter turn with a
 * 17-bit offset and the squarer's columns from 19; V, in units of 2^-37, is truncated to an f32
 * of full precision. The sign is the quadrant's. */
static uint32_t mufu_sin(uint32_t q) {
  uint32_t quad = q >> 23 & 3, r = q & 0x7fffffu;
  if (quad & 1) r = ~r & 0x7fffffu;
  int64_t v = interpolate(&sfu_sin_rows[r >> 17], r & 0x1ffffu, 19);
  uint32_t sign = quad >= 2 ? 0x80000000u : 0;
  return sign | (v > 0 ? fixed_to_f32((uint64_t)v, 37) : 0);
}

/* sin.approx and cos.approx, both forms (a subnormal x is an angle of 0 either way). */
static uint32_t sincos_f32(uint32_t x, int cos) {
  if ((x & 0x7fffffffu) >= 0x7f800000u) return 0x7fffffffu; /* NaN and infinities */
  uint32_t q = angle(x);
  if (cos) return mufu_sin((q + (1u << 23)) & 0x1ffffffu);
  return mufu_sin(q) ^ (x & 0x80000000u);
}

/* MUFU.TANH, which has no .ftz form: x itself below 2^-8 (zeros and subnormals too), 1 from 8
 * up, odd. Between, per binade of |x| (sfu_tanh_binades): the significand's low bits are
 * ignored, 1 to 16 segments, a 17-bit offset and the squarer's columns from 19, and V * 2^-place
 * truncated to an f32 of full precision. */
static uint32_t tanh_f32(uint32_t x) {
  uint32_t sign = x & 0x80000000u, mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return 0x7fffffffu;
  if (mag < 0x3b800000u) return x;
  if (mag >= 0x41000000u) return sign | 0x3f800000u;
  const struct sfu_tanh_binade *b = &sfu_tanh_binades[(mag >> 23) - 127 + 8];
  uint32_t m = (mag & 0x7fffffu) >> b->ignored;
  int64_t v = interpolate(&sfu_tanh_rows[b->first + (m >> 17)], m & 0x1ffffu, 19);
  return sign | (v > 0 ? fixed_to_f32((uint64_t)v, b->place) : 0);
}

uint32_t sim_sfu_f32(int fn, int ftz, uint32_t x) {
  if (fn == SIM_SFU_RCP) return rcp_f32(x, ftz);
  if (fn == SIM_SFU_EX2) return ex2_f32(x, ftz);
  if (fn == SIM_SFU_SIN || fn == SIM_SFU_COS) return sincos_f32(x, fn == SIM_SFU_COS);
  if (fn == SIM_SFU_RSQRT || fn == SIM_SFU_SQRT) return root_f32(x, ftz, fn == SIM_SFU_RSQRT);
  if (fn == SIM_SFU_LG2) return lg2_f32(x, ftz);
  return tanh_f32(x);
}

/* rcp.approx.ftz.f64 is MUFU.RCP64H: it reads the input's high word alone (sign, exponent, 20
 * significand bits), flushes subnormals, and writes the result's high word; the low word is 0.
 * The significand is MUFU.RCP's for the same 20 bits, less its last 3: the same datapath, for
 * all 2^20 significands on the H200. */
static uint64_t rcp64(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32), sign = hi & 0x80000000u;
  int e = (int)(hi >> 20 & 0x7ff);
  uint32_t m = hi & 0xfffffu;
  if (e == 0x7ff) /* 1/inf is 0; a NaN stays the canonical NaN */
    return m ? 0x7fffffff00000000ull : (uint64_t)sign << 32;
  if (e == 0) return (uint64_t)(sign | 0x7ff00000u) << 32; /* zero or flushed subnormal */
  uint32_t t = rcp_significand(m << 3) >> 3; /* 1/(1 + m/2^20) in units of 2^-21 */
  int re = 2045 - e; /* the result's exponent field when t < 2^21 */
  if (t >= 0x200000u) {
    t = 0x100000u;
    re++;
  }
  if (re <= 0) return (uint64_t)sign << 32; /* a subnormal result is flushed */
  return (uint64_t)(sign | (uint32_t)re << 20 | (t - 0x100000u)) << 32;
}

/* MUFU.RSQ64H for a positive normal x: 1/sqrt of its high word's value to 20 bits. It is taken
 * as MUFU.RSQ's f32 result for the significand (doubled for an odd exponent) less its last 3
 * bits, with the exponent halved, as MUFU.RCP64H is MUFU.RCP's; the GPU's seeds give exactly the
 * H200's rsqrt.approx.f64 results below. */
static double rsq64h(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32);
  int e = (int)(hi >> 20 & 0x7ff) - 1023, odd = e & 1;
  uint32_t v = (odd ? 0x40000000u : 0x3f800000u) | (hi & 0xfffffu) << 3; /* in [1, 4) */
  float g = f32(mufu_root(v, 1));
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

/* rsqrt.approx.ftz.f64 is MUFU.RSQ64H alone, unrefined (libdevice's hypot refines it itself): 20
 * bits in the high word, the low word 0; a subnormal input is flushed to a zero of its sign. */
static uint64_t rsqrt64_ftz(uint64_t x) {
  uint32_t hi = (uint32_t)(x >> 32);
  if (hi - 0x00100000u < 0x7fe00000u) return bf64(rsq64h(x));
  if ((hi & 0x7ff00000u) == 0) return (uint64_t)((hi & 0x80000000u) | 0x7ff00000u) << 32;
  return rsqrt64(x);
}

uint64_t sim_sfu_f64(int fn, int ftz, uint64_t x) {
  if (fn == SIM_SFU_RCP) return rcp64(x);
  return ftz ? rsqrt64_ftz(x) : rsqrt64(x);
}
