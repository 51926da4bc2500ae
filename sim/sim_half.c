/* sim_half.c: 16-bit floating point (f16, bf16 and their packed x2 forms), one lane at a time:
 * arithmetic, min/max, set, conversions to and from every other type, comparisons, and the
 * additions of the 16-bit atomics.
 *
 * Stance: every result is the exact result rounded once, as the GPU computes it. A half value
 * is exact in a double, and so are the sum of two f16 values and the product of any two halves;
 * a sum of bf16 values or an fma is not, so those are computed in double rounded to odd (the
 * round-to-nearest sum corrected by its exact error, which TwoSum gives), which is 53 bits:
 * more than twice a half's 11 bits plus two, so rounding that to the half's precision gives the
 * correctly rounded result in every mode. The turned-down alternative, computing in float or
 * double and converting, rounds twice and is wrong in rare ties (an f16 fma, a bf16 add).
 * Rounding to a half is done in integers from the double, so it does not depend on the host's
 * rounding mode. NaN results are the canonical 0x7fff, as the GPU gives; neg and abs flip bits. */
#include <math.h>
#include <string.h>

#include "sim_int.h"
#include "sim_bits.h"

/* The two formats: mantissa bits and exponent bias (f16: 10, 15; bf16: 7, 127). */
typedef struct hfmt {
  int mbits, bias;
} hfmt;
static const hfmt F16 = {10, 15}, BF16 = {7, 127};

static hfmt fmt_of(int ty) { return ty == SIM_T_BF16 || ty == SIM_T_BF16X2 ? BF16 : F16; }
static int is_x2(int ty) { return ty == SIM_T_F16X2 || ty == SIM_T_BF16X2; }
static uint32_t inf_bits(hfmt f) { return (uint32_t)(2 * f.bias + 1) << f.mbits; }

static int h_isnan(hfmt f, uint32_t h) { return (h & 0x7fffu) > inf_bits(f); }
static int h_subnormal(hfmt f, uint32_t h) {
  return (h & 0x7fffu) != 0 && (h & 0x7fffu) < (1u << f.mbits);
}

/* The exact value of half bits h. */
static double h_to_d(hfmt f, uint32_t h) {
  uint32_t e = (h >> f.mbits) & (uint32_t)(2 * f.bias + 1), m = h & ((1u << f.mbits) - 1);
  double v;
  if (e == (uint32_t)(2 * f.bias + 1)) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - f.bias - f.mbits);
  else v = ldexp((double)(m | 1u << f.mbits), (int)e - f.bias - f.mbits);
  return (h & 0x8000u) ? -v : v;
}

/* Rounds x (exact, or rounded to odd at 53 bits) to half bits with rounding mode rnd (SIM_RN ..
 * SIM_RP), overflowing to infinity or the largest finite value as the mode says. */
static uint32_t d_to_h(hfmt f, double x, int rnd) {
  if (x != x) return 0x7fffu;
  uint32_t s = signbit(x) ? 0x8000u : 0;
  double a = fabs(x);
  if (a == 0) return s;
  int up_dir = s ? rnd == SIM_RM : rnd == SIM_RP; /* the mode rounds away from zero */
  uint32_t maxf = inf_bits(f) - 1;
  int e;
  frexp(a, &e);
  e -= 1; /* a = 1.m * 2^e */
  if (isinf(a)) return s | inf_bits(f); /* exact in every mode (measured on the H200) */
  if (e > f.bias) return s | ((rnd == SIM_RN || up_dir) ? inf_bits(f) : maxf);
  /* q: exponent of one unit in the last place */
  int emin = 1 - f.bias, q = (e < emin ? emin : e) - f.mbits;
  double sc = ldexp(a, -q), n = floor(sc), frac = sc - n;     /* exact: a has at most 53 bits */
  int up;
  switch (rnd & 3) {
    case SIM_RN: up = frac > 0.5 || (frac == 0.5 && fmod(n, 2.0) != 0); break;
    case SIM_RZ: up = 0; break;
    default: up = frac > 0 && up_dir; break;
  }
  uint32_t mant = (uint32_t)n + (uint32_t)up; /* up to 2^(mbits+1): a carry moves the exponent */
  uint32_t bits = e < emin ? mant : ((uint32_t)(e + f.bias) << f.mbits) + mant - (1u << f.mbits);
  if (bits >= inf_bits(f)) bits = (rnd == SIM_RN || up_dir) ? inf_bits(f) : maxf;
  return s | bits;
}

/* a + b rounded to odd: the round-to-nearest sum, moved towards zero when that overshot the exact
 * sum, with its last bit set when inexact (Knuth's TwoSum gives the exact error). */
static double add_odd(double a, double b) {
  double s = a + b;
  if (!isfinite(s)) return s;
  double bb = s - a, err = (a - (s - bb)) + (b - bb);
  if (err == 0) return s;
  if ((err < 0) != (s < 0)) s = nextafter(s, 0.0);
  return f64(bf64(s) | 1);
}

/* Result modifiers in order: .sat clamps to [0, 1] (NaN to +0), .relu clamps negatives to +0,
 * .satfinite turns infinities into the largest finite value, .ftz flushes a subnormal result. */
static uint32_t finish(hfmt f, uint32_t h, int mod, int flags) {
  if (mod & SIM_MOD_SAT) { /* -0 stays -0, as .sat on f32 leaves it */
    if (h_isnan(f, h) || (h & 0x8000u && h != 0x8000u)) h = 0;
    else if (!(h & 0x8000u) && h > (uint32_t)f.bias << f.mbits) h = (uint32_t)f.bias << f.mbits;
  }
  if ((flags & SIM_IF_RELU) && !h_isnan(f, h) && (h & 0x8000u)) h = 0;
  if ((flags & SIM_IF_SATFINITE) && (h & 0x7fffu) == inf_bits(f))
    h = (h & 0x8000u) | (inf_bits(f) - 1);
  if ((mod & SIM_MOD_FTZ) && h_subnormal(f, h)) h &= 0x8000u;
  return h;
}

static uint32_t ftz_in(hfmt f, uint32_t h, int mod) {
  return (mod & SIM_MOD_FTZ) && h_subnormal(f, h) ? h & 0x8000u : h;
}

static double cvt_src(int st, int mod, uint64_t x);

static uint32_t minmax(hfmt f, int sub, int nan, uint32_t a, uint32_t b) {
  int na = h_isnan(f, a), nb = h_isnan(f, b);
  if (na || nb) return nan || (na && nb) ? 0x7fffu : na ? b : a;
  double x = h_to_d(f, a), y = h_to_d(f, b);
  if (x == y) return (sub == SIM_ALU_MIN) == !!(a & 0x8000u) ? a : b; /* -0 below +0 */
  return (sub == SIM_ALU_MIN) == (x < y) ? a : b;
}

/* One 16-bit element of an arithmetic instruction. */
static uint32_t arith1(const sim_inst *in, hfmt f, uint32_t a, uint32_t b, uint32_t c) {
  int mod = in->mod, rnd = mod & 3;
  a = ftz_in(f, a, mod);
  b = ftz_in(f, b, mod);
  c = ftz_in(f, c, mod);
  double x = h_to_d(f, a), y = h_to_d(f, b), r;
  switch (in->sub) {
    /* a NaN comes out as the canonical NaN, whatever its sign and payload (measured on the H200) */
    case SIM_ALU_NEG: return h_isnan(f, a) ? 0x7fffu : finish(f, a ^ 0x8000u, mod & SIM_MOD_FTZ, 0);
    case SIM_ALU_ABS: return h_isnan(f, a) ? 0x7fffu : finish(f, a & 0x7fffu, mod & SIM_MOD_FTZ, 0);
    case SIM_ALU_MIN: case SIM_ALU_MAX:
      return finish(f, minmax(f, in->sub, in->flags & SIM_IF_NAN, a, b), mod, in->flags);
    case SIM_ALU_ADD: r = add_odd(x, y); break;
    case SIM_ALU_SUB: r = add_odd(x, -y); break;
    case SIM_ALU_MUL: r = x * y; break; /* exact: at most 22 significant bits */
    default: { /* fma: the product is exact; a contracted sub negates one side (sim_contract.c) */
      double z = h_to_d(f, c);
      if (in->flags & SIM_IF_NEG_PRODUCT) x = -x;
      if (in->flags & SIM_IF_NEG_ADDEND) z = -z;
      r = add_odd(x * y, z);
      break;
    }
  }
  return finish(f, d_to_h(f, r, rnd), mod, in->flags);
}

/* set.cmp.dtype.stype: all ones (an integer dtype) or 1.0 (a float dtype) per element, or 0;
 * an x2 stype compares each half and fills that half of d. */
static uint64_t set_half(const sim_inst *in, uint64_t a, uint64_t b) {
  int st = in->ty2, dt = in->ty, ftz = (in->mod & SIM_MOD_FTZ) != 0, cmp = (int)in->imm;
  int n = is_x2(st) ? 2 : 1;
  uint64_t r = 0;
  for (int k = 0; k < n; k++) {
    int t;
    uint32_t ha = (uint32_t)(a >> 16 * k) & 0xffffu, hb = (uint32_t)(b >> 16 * k) & 0xffffu;
    if (sim_type_half(st))
      t = sim_half_compare(cmp, st, ftz, ha, hb);
    else if (st == SIM_T_F32 && ftz)
      t = sim_compare(cmp, SIM_T_F64, bf64(cvt_src(st, SIM_MOD_FTZ, a)),
                      bf64(cvt_src(st, SIM_MOD_FTZ, b)));
    else
      t = sim_compare(cmp, st, a, b);
    uint32_t one = dt == SIM_T_F16X2 || dt == SIM_T_F16 ? 0x3c00u
                 : dt == SIM_T_BF16 || dt == SIM_T_BF16X2 ? 0x3f80u
                 : dt == SIM_T_F32 ? 0x3f800000u : 0xffffffffu;
    if (n == 2 && one == 0xffffffffu) one = 0xffffu;
    if (t) r |= (uint64_t)one << 16 * k;
  }
  return sim_type_size(dt) == 2 ? r & 0xffffu : r & 0xffffffffu;
}

/* An integer as a double rounded to odd (exact below 2^53), so that rounding it to a half
 * afterwards rounds once. */
static double int_odd(uint64_t mag, int neg) {
  double d;
  if (mag >> 53 == 0) d = (double)mag;
  else {
    int sh = 64 - __builtin_clzll(mag) - 53;
    uint64_t t = mag >> sh;
    if (mag & ((1ull << sh) - 1)) t |= 1;
    d = ldexp((double)t, sh);
  }
  return neg ? -d : d;
}

/* Any source of cvt as an exact (or rounded-to-odd) double; half sources honour .ftz. */
static double cvt_src(int st, int mod, uint64_t x) {
  if (sim_type_half(st)) return h_to_d(fmt_of(st), ftz_in(fmt_of(st), (uint32_t)x & 0xffffu, mod));
  if (st == SIM_T_F32) {
    float v = f32(x);
    if ((mod & SIM_MOD_FTZ) && fpclassify(v) == FP_SUBNORMAL) v = copysignf(0.0f, v);
    return v;
  }
  if (st == SIM_T_F64) return f64(x);
  int n = sim_type_size(st);
  if (sim_type_signed(st)) {
    int64_t v = n >= 8 ? (int64_t)x : (int64_t)(x << (64 - 8 * n)) >> (64 - 8 * n);
    return int_odd(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
  }
  return int_odd(n >= 8 ? x : x & ((1ull << 8 * n) - 1), 0);
}

static double round_integral(double v, int rnd) {
  switch (rnd) {
    case SIM_RZI: return trunc(v);
    case SIM_RMI: return floor(v);
    case SIM_RPI: return ceil(v);
    default: return nearbyint(v);
  }
}

/* cvt with a half destination or source. Half to integer goes through sim_cvt from the exact
 * float, so it saturates, and treats NaN, as a conversion from f32 does (the GPU widens a half to
 * f32 before converting it to an integer). */
static uint64_t cvt_half(const sim_inst *in, uint64_t a, uint64_t b) {
  int dt = in->ty, st = in->ty2, mod = in->mod, rnd = mod & SIM_RND_MASK;
  if (sim_type_fp8(dt) || sim_type_fp8(st)) return sim_fp8_cvt(dt, st, in->flags, a, b);
  if (!sim_type_half(dt)) {
    /* bf16 to f32 is a shift on the H200: a NaN keeps its payload (measured) */
    if (st == SIM_T_BF16 && dt == SIM_T_F32 && h_isnan(BF16, (uint32_t)a & 0xffffu))
      return ((uint64_t)a & 0xffffu) << 16;
    /* a half's NaN widened to f64 keeps its sign and payload, quieted (measured on an H100:
     * 0x7e55 gives 0x7ff9540000000000), as the GPU's F2F.F64 does; to f32 it is canonical */
    if (dt == SIM_T_F64 && h_isnan(fmt_of(st), (uint32_t)a & 0xffffu)) {
      hfmt f = fmt_of(st);
      uint64_t h = a & 0xffffu, m = h & ((1u << f.mbits) - 1);
      return (h >> 15) << 63 | 0x7ffull << 52 | 1ull << 51 | m << (52 - f.mbits);
    }
    double v = cvt_src(st, mod, a);
    if (sim_type_float(dt)) {
      if (rnd >= SIM_RNI && (mod & SIM_MOD_HASRND)) v = round_integral(v, rnd);
      if (dt == SIM_T_F64) return sim_cvt(SIM_T_F64, SIM_T_F64, mod & ~SIM_MOD_HASRND, bf64(v));
      /* (float)v is exact: a half fits in a float */
      return sim_cvt(SIM_T_F32, SIM_T_F32, mod & ~SIM_MOD_HASRND, bf32((float)v));
    }
    return sim_cvt(dt, SIM_T_F32, rnd, bf32((float)v));
  }
  hfmt f = fmt_of(dt);
  int n = is_x2(dt) ? 2 : 1;
  uint64_t r = 0;
  for (int k = 0; k < n; k++) { /* x2: a goes to the high half, b to the low */
    double v = cvt_src(st, mod, n == 2 ? (k ? a : b) : a);
    uint32_t h;
    if (st == SIM_T_F64 && v != v) /* from f64 a NaN keeps its sign and the top of its payload */
      h = (uint32_t)(a >> 48 & 0x8000u) | inf_bits(f) | 1u << (f.mbits - 1) |
          (uint32_t)((a & ((1ull << 52) - 1)) >> (52 - f.mbits));
    else if (rnd >= SIM_RNI) h = d_to_h(f, round_integral(v, rnd), SIM_RN);
    else h = d_to_h(f, v, rnd);
    h = finish(f, h, sim_type_half(st) ? mod : mod & ~SIM_MOD_FTZ, in->flags);
    r |= (uint64_t)h << 16 * k;
  }
  return r;
}

uint64_t sim_half(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c) {
  if (in->sub == SIM_ALU_CVT) return cvt_half(in, a, b);
  if (in->sub == SIM_ALU_SET) return set_half(in, a, b);
  hfmt f = fmt_of(in->ty);
  uint64_t r = arith1(in, f, (uint32_t)a & 0xffffu, (uint32_t)b & 0xffffu, (uint32_t)c & 0xffffu);
  if (is_x2(in->ty))
    r |= (uint64_t)arith1(in, f, (uint32_t)(a >> 16) & 0xffffu, (uint32_t)(b >> 16) & 0xffffu,
                          (uint32_t)(c >> 16) & 0xffffu) << 16;
  return r;
}

int sim_half_compare(int cmp, int ty, int ftz, uint32_t a, uint32_t b) {
  hfmt f = fmt_of(ty);
  int mod = ftz ? SIM_MOD_FTZ : 0;
  double x = h_to_d(f, ftz_in(f, a, mod)), y = h_to_d(f, ftz_in(f, b, mod));
  return sim_compare(cmp, SIM_T_F64, bf64(x), bf64(y));
}

/* atom.add/min/max.noftz on f16 / bf16 / f16x2 / bf16x2 (sub SIM_ALU_ADD, MIN or MAX): round to
 * nearest, subnormals kept. The PTX ISA says nothing more of an atomic min or max, so they are
 * min and max's own: a NaN loses to a number. */
uint32_t sim_half_atom(int sub, int ty, uint32_t a, uint32_t b) {
  sim_inst in;
  memset(&in, 0, sizeof in);
  in.op = SIM_OP_HALF;
  in.sub = (uint8_t)sub;
  in.ty = (uint8_t)ty;
  return (uint32_t)sim_half(&in, a, b, 0);
}
