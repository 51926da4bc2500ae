/* sim_alu.c: the long tail of arithmetic, one lane at a time: everything the executor does not
 * have a specialised opcode for (division, min/max, bit tricks such as bfind, lop3, fns, szext and
 * bmsk, the byte dot products dp4a and dp2a, transcendental approximations, conversions with
 * rounding modes, saturation, flush-to-zero), plus comparisons. 16-bit floats are sim_half.c's.
 *
 * Stance: exactness over speed. Results must match the GPU bit for bit where PTX defines them
 * exactly (.rn arithmetic, integer ops, conversions); the host's IEEE arithmetic gives that for
 * round-to-nearest, and directed roundings are done by switching the host rounding mode around a
 * single operation, which is slow but rare in NVRTC output. .approx functions run sim_sfu.c's
 * model of the H200's special-function unit, and div.approx and div.full multiply by its
 * reciprocal, as the GPU does. f32 NaN results are canonicalised to 0x7fffffff as the GPU does.
 * Division by zero and INT_MIN / -1 never trap the host. Which function computes a sub-operation,
 * for integers and for floats, is its ALU row's in ptx_opcodes.def: sim_alu looks it up, and a
 * sub-operation has no semantics it does not name (the decoder refuses that type at load). */
#include <fenv.h>
#include <math.h>
#include <string.h>

#include "sim_int.h"
#include "sim_bits.h"
#include "sim_sfu.h"

static float ftz32(float f) {
  if (fpclassify(f) == FP_SUBNORMAL) return copysignf(0.0f, f);
  return f;
}

static uint64_t fin32(float r, int mod) {
  if (mod & SIM_MOD_SAT) r = r != r ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
  if (mod & SIM_MOD_FTZ) r = ftz32(r);
  return sim_f32_canon(r);
}

static uint64_t fin64(double r, int mod) {
  if (mod & SIM_MOD_SAT) r = r != r ? 0.0 : r < 0.0 ? 0.0 : r > 1.0 ? 1.0 : r;
  return bf64(r);
}

static int host_round(int rnd) {
  switch (rnd & 3) {
    case SIM_RZ: return FE_TOWARDZERO;
    case SIM_RM: return FE_DOWNWARD;
    case SIM_RP: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

/* Integer helpers: sign-extend or zero-extend the low `bits` of x. */
static inline int64_t sx(uint64_t x, int bytes) {
  int sh = 64 - 8 * bytes;
  return sh ? (int64_t)(x << sh) >> sh : (int64_t)x;
}
static inline uint64_t zx(uint64_t x, int bytes) {
  return bytes >= 8 ? x : x & ((1ull << (8 * bytes)) - 1);
}

/* Float binary/ternary operation honouring the rounding mode. volatile stops the compiler from
 * moving the operation across the rounding-mode switch. */
/* The special-function unit's operation for an .approx instruction, or -1 when it has none. */
static int sfu_fn(const sim_inst *in) {
  if (!(in->mod & SIM_MOD_APPROX)) return -1;
  switch (in->sub) {
    case SIM_ALU_RCP: return SIM_SFU_RCP;
    case SIM_ALU_SQRT: return in->ty == SIM_T_F32 ? SIM_SFU_SQRT : -1;
    case SIM_ALU_RSQRT: return SIM_SFU_RSQRT;
    case SIM_ALU_EX2: return SIM_SFU_EX2;
    case SIM_ALU_LG2: return SIM_SFU_LG2;
    case SIM_ALU_SIN: return SIM_SFU_SIN;
    case SIM_ALU_COS: return SIM_SFU_COS;
    case SIM_ALU_TANH: return SIM_SFU_TANH;
    default: return -1;
  }
}

/* A special function of a constant, as ptxas evaluates it (sim_contract.c marks it
 * SIM_IF_FOLDED): the exact value rounded to nearest, .ftz flushing the input and the result;
 * sin and cos flush a subnormal input even without .ftz. A NaN result is left to the unit, which
 * gives the canonical NaN. (tanh and the f64 functions, which ptxas does not fold, are never
 * marked.) */
static uint64_t sfu_folded(const sim_inst *in, int fn, uint64_t a) {
  int ftz = (in->mod & SIM_MOD_FTZ) != 0;
  float x = f32(a);
  if (ftz || fn == SIM_SFU_SIN || fn == SIM_SFU_COS) x = ftz32(x);
  double v = x, r;
  switch (fn) {
    case SIM_SFU_RCP: r = 1.0 / v; break;
    case SIM_SFU_SQRT: r = sqrt(v); break;
    case SIM_SFU_RSQRT: r = 1.0 / sqrt(v); break;
    case SIM_SFU_EX2: r = exp2(v); break;
    case SIM_SFU_LG2: r = log2(v); break;
    case SIM_SFU_SIN: r = sin(v); break;
    case SIM_SFU_COS: r = cos(v); break;
    default: r = NAN; break;
  }
  if (r != r) return sim_sfu_f32(fn, ftz, (uint32_t)a);
  return fin32((float)r, in->mod & SIM_MOD_FTZ);
}

static uint64_t sfu(const sim_inst *in, int fn, uint64_t a) {
  if (in->ty != SIM_T_F32) return sim_sfu_f64(fn, (in->mod & SIM_MOD_FTZ) != 0, a);
  if (in->flags & SIM_IF_FOLDED) return sfu_folded(in, fn, a);
  return sim_sfu_f32(fn, (in->mod & SIM_MOD_FTZ) != 0, (uint32_t)a);
}

/* div.approx.f32 and div.full.f32 as the GPU's code computes them: a times MUFU.RCP(b), one
 * fp32 multiply. Without .ftz a subnormal b is first scaled by 2^24, and a with it; div.full
 * also scales a b beyond 2^126 by 1/4 (so that its reciprocal is not flushed to 0), and a with
 * it. With .ftz the multiplies flush their subnormal inputs and results. A constant divisor's
 * reciprocal is ptxas's, rounded to nearest (SIM_IF_FOLDED), and flushed as the unit's is.
 * div_operands gives the scaled a and the reciprocal; div_approx multiplies them, and div_add,
 * the division that ptxas contracted with an add (sim_contract.c), adds c in the same fma. */
static void div_operands(uint64_t a, uint64_t b, int mod, int folded, float *x_out, float *inv) {
  int ftz = mod & SIM_MOD_FTZ;
  volatile float x = ftz ? ftz32(f32(a)) : f32(a), y = f32(b);
  if ((mod & SIM_MOD_FULL) && fabsf(y) > 0x1p126f) {
    y = y * 0.25f;
    x = x * 0.25f; /* flushed below, as FMUL.FTZ flushes its result */
  } else if (!ftz && fabsf(y) < 0x1p-126f) {
    y = y * 0x1p24f;
    x = x * 0x1p24f;
  }
  if (folded && y == y) *inv = ftz32(1.0f / y);
  else *inv = f32(sim_sfu_f32(SIM_SFU_RCP, 1, (uint32_t)bf32(y)));
  *x_out = ftz ? ftz32(x) : x;
}

static uint64_t div_approx(const sim_inst *in, uint64_t a, uint64_t b) {
  float x, inv;
  div_operands(a, b, in->mod, in->flags & SIM_IF_FOLDED, &x, &inv);
  volatile float r = x * inv;
  return fin32(r, in->mod);
}

static uint64_t div_add(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c) {
  float x, inv, z = f32(c);
  div_operands(a, b, in->mod, in->flags & SIM_IF_FOLDED, &x, &inv);
  if (in->mod & SIM_MOD_FTZ) z = ftz32(z);
  if (in->flags & SIM_IF_NEG_PRODUCT) x = -x;
  if (in->flags & SIM_IF_NEG_ADDEND) z = -z;
  return fin32(fmaf(x, inv, z), in->mod);
}

static uint64_t float_op(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c) {
  int rnd = in->mod & SIM_RND_MASK, mod = in->mod;
  int fn = sfu_fn(in);
  if (fn >= 0) return sfu(in, fn, a);
  if (in->sub == SIM_ALU_DIV && in->ty == SIM_T_F32 && (mod & SIM_MOD_APPROX))
    return div_approx(in, a, b);
  if (in->sub == SIM_ALU_DIV_ADD) return div_add(in, a, b, c);
  int old = 0;
  if (rnd != SIM_RN) {
    old = fegetround();
    fesetround(host_round(rnd));
  }
  uint64_t out;
  if (in->ty == SIM_T_F32) {
    volatile float x = f32(a), y = f32(b), z = f32(c), r = 0;
    if (mod & SIM_MOD_FTZ) {
      x = ftz32(x);
      y = ftz32(y);
      z = ftz32(z);
    }
    if (in->flags & SIM_IF_NEG_PRODUCT) x = -x; /* a contracted sub (sim_contract.c) */
    if (in->flags & SIM_IF_NEG_ADDEND) z = -z;
    switch (in->sub) {
      case SIM_ALU_ADD: r = x + y; break;
      case SIM_ALU_SUB: r = x - y; break;
      case SIM_ALU_MUL: r = x * y; break;
      case SIM_ALU_FMA: r = fmaf(x, y, z); break;
      case SIM_ALU_DIV: r = x / y; break;
      case SIM_ALU_SQRT: r = sqrtf(x); break;
      case SIM_ALU_RCP: r = 1.0f / x; break;
      default: break;
    }
    out = fin32(r, mod);
  } else {
    volatile double x = f64(a), y = f64(b), z = f64(c), r = 0;
    if (in->flags & SIM_IF_NEG_PRODUCT) x = -x;
    if (in->flags & SIM_IF_NEG_ADDEND) z = -z;
    switch (in->sub) {
      case SIM_ALU_ADD: r = x + y; break;
      case SIM_ALU_SUB: r = x - y; break;
      case SIM_ALU_MUL: r = x * y; break;
      case SIM_ALU_FMA: r = fma(x, y, z); break;
      case SIM_ALU_DIV: r = x / y; break;
      case SIM_ALU_SQRT: r = sqrt(x); break;
      case SIM_ALU_RCP: r = 1.0 / x; break;
      default: break;
    }
    out = fin64(r, mod);
  }
  if (rnd != SIM_RN) fesetround(old);
  return out;
}

/* min and max as PTX has them: a NaN operand gives the other one, and -0 is below +0. */
static float minmax32(float x, float y, int max) {
  if (x != x) return y;
  if (y != y) return x;
  if (max) return (x > y || (x == y && !signbit(x))) ? x : y;
  return (x < y || (x == y && signbit(x))) ? x : y;
}
static double minmax64(double x, double y, int max) {
  if (x != x) return y;
  if (y != y) return x;
  if (max) return (x > y || (x == y && !signbit(x))) ? x : y;
  return (x < y || (x == y && signbit(x))) ? x : y;
}

static uint64_t float_misc32(const sim_inst *in, uint64_t a, uint64_t b) {
  float x = f32(a), y = f32(b), r;
  if (in->mod & SIM_MOD_FTZ) {
    x = ftz32(x);
    y = ftz32(y);
  }
  uint32_t u;
  memcpy(&u, &x, 4);
  switch (in->sub) {
    case SIM_ALU_ABS: return u & 0x7fffffffu;
    case SIM_ALU_NEG: return u ^ 0x80000000u;
    case SIM_ALU_MIN: r = minmax32(x, y, 0); break;
    case SIM_ALU_MAX: r = minmax32(x, y, 1); break;
    case SIM_ALU_RSQRT: r = 1.0f / sqrtf(x); break;
    case SIM_ALU_EX2: r = exp2f(x); break;
    case SIM_ALU_LG2: r = log2f(x); break;
    case SIM_ALU_SIN: r = sinf(x); break;
    case SIM_ALU_COS: r = cosf(x); break;
    case SIM_ALU_TANH: r = tanhf(x); break;
    case SIM_ALU_COPYSIGN: r = copysignf(y, x); break;
    default: r = 0; break;
  }
  return fin32(r, in->mod);
}

static uint64_t float_misc64(const sim_inst *in, uint64_t a, uint64_t b) {
  double x = f64(a), y = f64(b), r;
  switch (in->sub) {
    case SIM_ALU_ABS: return a & 0x7fffffffffffffffull;
    case SIM_ALU_NEG: return a ^ 0x8000000000000000ull;
    case SIM_ALU_MIN: r = minmax64(x, y, 0); break;
    case SIM_ALU_MAX: r = minmax64(x, y, 1); break;
    case SIM_ALU_RSQRT: r = 1.0 / sqrt(x); break;
    case SIM_ALU_EX2: r = exp2(x); break;
    case SIM_ALU_LG2: r = log2(x); break;
    case SIM_ALU_SIN: r = sin(x); break;
    case SIM_ALU_COS: r = cos(x); break;
    case SIM_ALU_TANH: r = tanh(x); break;
    case SIM_ALU_COPYSIGN: r = copysign(y, x); break;
    default: r = 0; break;
  }
  return fin64(r, in->mod);
}

/* The float operations that need no rounding mode: the special functions, abs, neg, min, max,
 * copysign. */
static uint64_t float_misc(const sim_inst *in, uint64_t a, uint64_t b) {
  int fn = sfu_fn(in);
  if (fn >= 0) return sfu(in, fn, a);
  if (in->ty == SIM_T_F32) return float_misc32(in, a, b);
  return float_misc64(in, a, b);
}

static uint64_t int_sat(int64_t v, int bytes, int sgn) {
  if (sgn) {
    int64_t hi = bytes >= 8 ? INT64_MAX : (int64_t)((1ull << (8 * bytes - 1)) - 1), lo = -hi - 1;
    return (uint64_t)(v > hi ? hi : v < lo ? lo : v);
  }
  return (uint64_t)v;
}

static uint64_t int_div(const sim_inst *in, uint64_t a, uint64_t b, int bytes, int sgn) {
  if (sgn) {
    int64_t x = sx(a, bytes), y = sx(b, bytes);
    int64_t min = bytes >= 8 ? INT64_MIN : -(int64_t)(1ull << (8 * bytes - 1));
    if (in->sub == SIM_ALU_DIV) {
      if (y == 0) return (uint64_t)-1;
      if (x == min && y == -1) return (uint64_t)min;
      return (uint64_t)(x / y);
    }
    if (y == 0) return (uint64_t)x;
    if (y == -1) return 0;
    return (uint64_t)(x % y);
  }
  uint64_t x = zx(a, bytes), y = zx(b, bytes);
  if (in->sub == SIM_ALU_DIV) return y ? x / y : ~0ull;
  return y ? x % y : x;
}

static uint64_t mul_hi(uint64_t a, uint64_t b, int bytes, int sgn) {
  if (bytes == 8) {
    if (sgn) return (uint64_t)(((sim_i128)(int64_t)a * (sim_i128)(int64_t)b) >> 64);
    return (uint64_t)(((sim_u128)a * b) >> 64);
  }
  if (sgn) return (uint64_t)((sx(a, bytes) * sx(b, bytes)) >> (8 * bytes));
  return (zx(a, bytes) * zx(b, bytes)) >> (8 * bytes);
}

static uint64_t bfe(uint64_t a, uint32_t pos, uint32_t len, int bytes, int sgn) {
  int bits = 8 * bytes;
  pos &= 0xff;
  len &= 0xff;
  uint64_t x = zx(a, bytes);
  int sbit;
  uint32_t top = (uint32_t)bits - 1; /* the sign is the field's last bit inside the value */
  if (!sgn || len == 0) sbit = 0;
  else sbit = (int)((x >> (pos + len - 1 < top ? pos + len - 1 : top)) & 1);
  uint64_t r = 0;
  for (int i = 0; i < bits; i++) {
    uint64_t bit;
    uint32_t at = pos + (uint32_t)i;
    if ((uint32_t)i < len && at < (uint32_t)bits) bit = (x >> at) & 1;
    else bit = (uint64_t)sbit;
    r |= bit << i;
  }
  return r;
}

static uint64_t bfi(uint64_t a, uint64_t b, uint32_t pos, uint32_t len, int bytes) {
  int bits = 8 * bytes;
  pos &= 0xff;
  len &= 0xff;
  uint64_t r = zx(b, bytes);
  for (uint32_t i = 0; i < len && pos + i < (uint32_t)bits; i++) {
    uint64_t bit = (a >> i) & 1;
    r = (r & ~(1ull << (pos + i))) | (bit << (pos + i));
  }
  return r;
}

static uint64_t prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
  uint64_t tmp = ((uint64_t)b << 32) | a;
  uint8_t byte[8];
  for (int i = 0; i < 8; i++) byte[i] = (uint8_t)(tmp >> (8 * i));
  uint32_t r = 0;
  if (mode == 0) {
    for (int i = 0; i < 4; i++) {
      uint32_t sel = (c >> (4 * i)) & 0xf;
      uint8_t v = byte[sel & 7];
      if (sel & 8) v = (v & 0x80) ? 0xff : 0;
      r |= (uint32_t)v << (8 * i);
    }
    return r;
  }
  static const uint8_t tab[6][4][4] = {
      {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},   /* f4e */
      {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},   /* b4e */
      {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},   /* rc8 */
      {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},   /* ecl */
      {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},   /* ecr */
      {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}};  /* rc16 */
  int s = c & 3;
  for (int i = 0; i < 4; i++) r |= (uint32_t)byte[tab[mode - 1][s][i]] << (8 * i);
  return r;
}

/* cvta between generic and shared/local/parameter windows. */
static uint64_t cvta(int sub, uint64_t a, int ty) {
  uint64_t r;
  switch (sub) {
    case SIM_ALU_CVTA_SHARED: r = a + SIM_SHARED_WIN; break;
    case SIM_ALU_CVTA_LOCAL: r = a + SIM_LOCAL_WIN; break;
    case SIM_ALU_CVTA_PARAM: r = a + SIM_PARAM_WIN; break;
    case SIM_ALU_CVTA_TO_SHARED: r = a - SIM_SHARED_WIN; break;
    case SIM_ALU_CVTA_TO_PARAM: r = a - SIM_PARAM_WIN; break;
    default: r = a - SIM_LOCAL_WIN; break;
  }
  return sim_type_size(ty) == 4 ? (uint32_t)r : r;
}

/* bfind: the position of the most significant bit that differs from the sign (a set bit for
 * unsigned types), or all ones when there is none; .shiftamt gives the left shift that would
 * bring it to the top instead. */
static uint64_t bfind(uint64_t a, int bytes, int sgn, int shiftamt) {
  int bits = 8 * bytes;
  uint64_t x = zx(a, bytes);
  if (sgn && (x >> (bits - 1) & 1)) x = zx(~x, bytes);
  if (!x) return 0xffffffffu;
  int msb = 63 - __builtin_clzll(x);
  return (uint32_t)(shiftamt ? bits - 1 - msb : msb);
}

/* lop3: each result bit is the LUT's bit at index (a << 2 | b << 1 | c) of the operand bits. */
static uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  uint32_t r = 0;
  for (int k = 0; k < 8; k++) {
    if (!(lut >> k & 1)) continue;
    r |= (k & 4 ? a : ~a) & (k & 2 ? b : ~b) & (k & 1 ? c : ~c);
  }
  return r;
}

/* dp4a: c plus the four byte products of a and b; dp2a: c plus a's two 16-bit halves times two
 * bytes of b (the low two, or with .hi the high two). Each operand's signedness is its own. */
static uint32_t dot(int four, int hi, int sa, int sb, uint32_t a, uint32_t b, uint32_t c) {
  int64_t acc = (int32_t)c;
  for (int k = 0; k < (four ? 4 : 2); k++) {
    int64_t x;
    if (four) x = sa ? (int8_t)(a >> 8 * k) : (uint8_t)(a >> 8 * k);
    else x = sa ? (int16_t)(a >> 16 * k) : (uint16_t)(a >> 16 * k);
    int kb = four ? k : k + 2 * hi;
    int64_t y = sb ? (int8_t)(b >> 8 * kb) : (uint8_t)(b >> 8 * kb);
    acc += x * y;
  }
  return (uint32_t)acc;
}

/* fns: the position of the offset-th set bit of mask counted from base, upwards for a positive
 * offset and downwards for a negative one (offset 0: base itself if set), or all ones. */
static uint32_t fns(uint32_t mask, uint32_t base, int32_t offset) {
  if (offset == 0) return base < 32 && (mask >> base & 1) ? base : 0xffffffffu;
  int64_t count = (offset < 0 ? -(int64_t)offset : offset) - 1, inc = offset > 0 ? 1 : -1;
  for (int64_t pos = base; pos >= 0 && pos < 32; pos += inc)
    if (mask >> pos & 1) {
      if (count == 0) return (uint32_t)pos;
      count--;
    }
  return 0xffffffffu;
}

/* szext: extends the low n bits of a (n from b: clamped to 32 or taken modulo 32). */
static uint32_t szext(uint32_t a, uint32_t b, int clamp, int sgn) {
  uint32_t n = clamp ? (b > 32 ? 32 : b) : b & 31;
  if (n == 0) return 0;
  if (n == 32) return a;
  uint32_t v = a & ((1u << n) - 1);
  if (sgn && (v >> (n - 1) & 1)) v |= ~((1u << n) - 1);
  return v;
}

/* bmsk: b one bits starting at bit a (each clamped to 32 or taken modulo 32). */
static uint32_t bmsk(uint32_t a, uint32_t b, int clamp) {
  if (clamp) {
    a = a > 32 ? 32 : a;
    b = b > 32 ? 32 : b;
  } else {
    a &= 31;
    b &= 31;
  }
  if (a >= 32) return 0;
  uint64_t m = b >= 32 ? 0xffffffffull : (1ull << b) - 1;
  return (uint32_t)(m << a);
}

/* mul24 / mad24: the low 24 bits of each operand, the low (or, with .hi, the middle) 32 bits
 * of the 48-bit product. */
static uint64_t mul24(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c, int sgn) {
  int64_t x = sgn ? sx(a, 3) : (int64_t)zx(a, 3), y = sgn ? sx(b, 3) : (int64_t)zx(b, 3);
  uint64_t p = (uint64_t)(x * y);
  uint64_t r = in->ty2 ? p >> 16 : p;
  /* .sat (mad24.hi.s32 only, the ISA says) clamps the sum, not the product, to 32 bits */
  if (in->sub == SIM_ALU_MAD24 && (in->mod & SIM_MOD_SAT) && sgn)
    return zx(int_sat(sx(r, 4) + sx(c, 4), 4, 1), 4);
  if (in->sub == SIM_ALU_MAD24) r += c;
  return zx(r, 4);
}

/* mul.wide: the full product of two 16- or 32-bit operands. */
static uint64_t mul_wide(uint64_t a, uint64_t b, int bytes, int sgn) {
  return sgn ? (uint64_t)(sx(a, bytes) * sx(b, bytes)) : zx(a, bytes) * zx(b, bytes);
}

/* sad: |a - b| + c. */
static uint64_t sad(uint64_t a, uint64_t b, uint64_t c, int bytes, int sgn) {
  uint64_t d;
  if (sgn) {
    int64_t x = sx(a, bytes), y = sx(b, bytes);
    d = (uint64_t)(x > y ? x - y : y - x);
  } else {
    uint64_t x = zx(a, bytes), y = zx(b, bytes);
    d = x > y ? x - y : y - x;
  }
  return zx(d + c, bytes);
}

/* shl and shr: counts past the width give 0, or the sign for a signed shr. */
static uint64_t shift(const sim_inst *in, uint64_t a, uint64_t b, int bytes, int sgn) {
  uint32_t s = (uint32_t)b, bits = 8 * (uint32_t)bytes;
  if (in->sub == SIM_ALU_SHL) return s >= bits ? 0 : zx(a << s, bytes);
  if (sgn) return zx((uint64_t)(sx(a, bytes) >> (s >= bits ? bits - 1 : s)), bytes);
  return s >= bits ? 0 : zx(a, bytes) >> s;
}

static uint64_t clz(uint64_t a, int bytes) {
  uint64_t x = zx(a, bytes);
  int bits = 8 * bytes;
  return x ? (uint64_t)(__builtin_clzll(x) - (64 - bits)) : (uint64_t)bits;
}

static uint64_t brev(uint64_t a, int bytes) {
  uint64_t x = zx(a, bytes), r = 0;
  int bits = 8 * bytes;
  for (int i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

/* shf.l / shf.r: a funnel shift of b:a, the count clamped to 32 (.clamp) or taken mod 32. */
static uint64_t shf(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c) {
  uint32_t n = (uint32_t)c;
  n = (in->ty2 & 2) ? (n > 32 ? 32 : n) : n & 31;
  uint64_t v = ((uint64_t)(uint32_t)b << 32) | (uint32_t)a;
  return (in->ty2 & 1) ? (uint32_t)(v >> n) : (uint32_t)((v << n) >> 32);
}

/* .relu on a 32-bit signed result r (ty2 set): a negative r becomes 0. */
static uint64_t relu_int(const sim_inst *in, uint64_t r) {
  return in->ty2 && (int32_t)r < 0 ? 0 : r;
}

/* ---- one lane of each sub-operation ----
 *
 * The functions ptx_opcodes.def's ALU rows name, all of one signature so that sim_alu is a
 * lookup: the operands already read (b, c, e unused by most), the instruction for its type,
 * modifiers and variant. Integer results are zero-extended to the type's width. */
#define SEM(name)                                                                                \
  static uint64_t name(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c, uint64_t e)
#define UNUSED() ((void)(in), (void)(a), (void)(b), (void)(c), (void)(e))
#define BYTES sim_type_size(in->ty)
#define SGN sim_type_signed(in->ty)

SEM(sem_add) {
  UNUSED();
  if (in->mod & SIM_MOD_SAT) return zx(int_sat(sx(a, BYTES) + sx(b, BYTES), BYTES, 1), BYTES);
  return zx(a + b, BYTES);
}
SEM(sem_sub) {
  UNUSED();
  if (in->mod & SIM_MOD_SAT) return zx(int_sat(sx(a, BYTES) - sx(b, BYTES), BYTES, 1), BYTES);
  return zx(a - b, BYTES);
}
SEM(sem_mul) { UNUSED(); return zx(a * b, BYTES); }
SEM(sem_mad) { UNUSED(); return zx(a * b + c, BYTES); }
SEM(sem_mulhi) { UNUSED(); return zx(mul_hi(a, b, BYTES, SGN), BYTES); }
SEM(sem_madhi) {
  UNUSED();
  /* .sat (mad.hi.s32 only, the ISA says): the high half plus c, clamped to the s32 range */
  if ((in->mod & SIM_MOD_SAT) && SGN && BYTES == 4)
    return zx(int_sat(sx(mul_hi(a, b, 4, 1), 4) + sx(c, 4), 4, 1), 4);
  return zx(mul_hi(a, b, BYTES, SGN) + c, BYTES);
}
SEM(sem_mulwide) { UNUSED(); return zx(mul_wide(a, b, BYTES, SGN), 2 * BYTES); }
SEM(sem_madwide) { UNUSED(); return zx(mul_wide(a, b, BYTES, SGN) + c, 2 * BYTES); }
SEM(sem_mul24) { UNUSED(); return mul24(in, a, b, c, SGN); } /* and mad24 */
SEM(sem_divrem) { UNUSED(); return zx(int_div(in, a, b, BYTES, SGN), BYTES); }
SEM(sem_abs) {
  UNUSED();
  return zx((uint64_t)(sx(a, BYTES) < 0 ? -sx(a, BYTES) : sx(a, BYTES)), BYTES);
}
SEM(sem_neg) { UNUSED(); return zx(-a, BYTES); }
/* min and max; ty2 is .relu (.s32 only): a negative result becomes 0. */
SEM(sem_min) {
  UNUSED();
  if (SGN) return relu_int(in, zx(sx(a, BYTES) < sx(b, BYTES) ? a : b, BYTES));
  return zx(zx(a, BYTES) < zx(b, BYTES) ? a : b, BYTES);
}
SEM(sem_max) {
  UNUSED();
  if (SGN) return relu_int(in, zx(sx(a, BYTES) > sx(b, BYTES) ? a : b, BYTES));
  return zx(zx(a, BYTES) > zx(b, BYTES) ? a : b, BYTES);
}
/* add, min and max on .u16x2 / .s16x2 (sub ADD16X2, MIN16X2, MAX16X2): each half-word alone, a
 * sum wrapping within its half; with .relu (ty2, .s16x2 only) a negative half becomes 0. */
SEM(sem_x2) {
  UNUSED();
  int sgn = in->ty == SIM_T_S16X2;
  uint32_t d = 0;
  for (int i = 0; i < 32; i += 16) {
    int32_t x = sgn ? (int16_t)(a >> i) : (uint16_t)(a >> i);
    int32_t y = sgn ? (int16_t)(b >> i) : (uint16_t)(b >> i);
    int32_t r = x + y;
    if (in->sub != SIM_ALU_ADD16X2) r = (in->sub == SIM_ALU_MIN16X2) == (x < y) ? x : y;
    if (in->ty2 && r < 0) r = 0;
    d |= (uint32_t)(r & 0xffff) << i;
  }
  return d;
}
SEM(sem_sad) { UNUSED(); return sad(a, b, c, BYTES, SGN); }
SEM(sem_mov) { UNUSED(); return zx(a, BYTES); }
SEM(sem_dot) { /* dp4a and dp2a: imm is b's type */
  UNUSED();
  return dot(in->sub == SIM_ALU_DP4A, in->ty2, SGN, sim_type_signed((int)in->imm), (uint32_t)a,
             (uint32_t)b, (uint32_t)c);
}
SEM(sem_and) { UNUSED(); return zx(a & b, BYTES); }
SEM(sem_or) { UNUSED(); return zx(a | b, BYTES); }
SEM(sem_xor) { UNUSED(); return zx(a ^ b, BYTES); }
SEM(sem_not) { UNUSED(); return zx(~a, BYTES); }
SEM(sem_cnot) { UNUSED(); return zx(a, BYTES) == 0; }
SEM(sem_shift) { UNUSED(); return shift(in, a, b, BYTES, SGN); } /* shl and shr */
SEM(sem_popc) { UNUSED(); return (uint64_t)__builtin_popcountll(zx(a, BYTES)); }
SEM(sem_clz) { UNUSED(); return clz(a, BYTES); }
SEM(sem_brev) { UNUSED(); return brev(a, BYTES); }
SEM(sem_bfe) { UNUSED(); return zx(bfe(a, (uint32_t)b, (uint32_t)c, BYTES, SGN), BYTES); }
SEM(sem_bfi) { UNUSED(); return bfi(a, b, (uint32_t)c, (uint32_t)e, BYTES); }
SEM(sem_prmt) { UNUSED(); return prmt((uint32_t)a, (uint32_t)b, (uint32_t)c, in->ty2); }
SEM(sem_bfind) { UNUSED(); return bfind(a, BYTES, SGN, in->ty2); }
SEM(sem_lop3) { UNUSED(); return lop3((uint32_t)a, (uint32_t)b, (uint32_t)c, (uint32_t)in->imm); }
SEM(sem_fns) { UNUSED(); return fns((uint32_t)a, (uint32_t)b, (int32_t)c); }
SEM(sem_szext) { UNUSED(); return szext((uint32_t)a, (uint32_t)b, in->ty2, SGN); }
SEM(sem_bmsk) { UNUSED(); return bmsk((uint32_t)a, (uint32_t)b, in->ty2); }
SEM(sem_shf) { UNUSED(); return shf(in, a, b, c); }
/* vabsdiff4 and vabsdiff2 .dtype.atype.btype: |a_i - b_i| for each byte (vabsdiff4) or
 * half-word (vabsdiff2) i, the elements signed as atype and btype say; with .add (ty2 bit 0) c
 * plus all of them, else the elements side by side (clamped to the signed or unsigned element
 * range of dtype with .sat). The operands' selectors and the destination mask are PTX's defaults
 * (.b3210 / .h10 for a, .b7654 / .h32 for b, every element of d), which are all a register
 * operand can have here. One function for both: they differ only in the element's width. */
SEM(sem_vabsdiff) {
  UNUSED();
  int sa = sim_type_signed((int)(in->imm & 0xff)), sb = sim_type_signed((int)(in->imm >> 8 & 0xff));
  int bits = in->sub == SIM_ALU_VABSDIFF2 ? 16 : 8;
  int64_t half = 1ll << (bits - 1), top = SGN ? half - 1 : 2 * half - 1;
  uint32_t sum = (uint32_t)c, out = 0;
  for (int i = 0; i < 32; i += bits) {
    int64_t x = (int64_t)(a >> i & (2 * half - 1)), y = (int64_t)(b >> i & (2 * half - 1));
    if (sa && x >= half) x -= 2 * half;
    if (sb && y >= half) y -= 2 * half;
    int64_t t = x > y ? x - y : y - x;
    sum += (uint32_t)t;
    if ((in->mod & SIM_MOD_SAT) && t > top) t = top;
    out |= (uint32_t)(t & (2 * half - 1)) << i;
  }
  return in->ty2 & 1 ? sum : out;
}
SEM(sem_cvt) { UNUSED(); return sim_cvt(in->ty, in->ty2, in->mod, a); }
SEM(sem_cvta) { UNUSED(); return cvta(in->sub, a, in->ty); }
/* f32 and f64: the operations that honour a rounding mode, and the rest */
SEM(sem_fop) { UNUSED(); return float_op(in, a, b, c); }
SEM(sem_fmisc) { UNUSED(); return float_misc(in, a, b); }

typedef uint64_t (*alu_fn)(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c, uint64_t e);

static const struct {
  alu_fn ints, floats; /* one lane on integer types, on .f32 / .f64; NULL where PTX has none */
  int pipe;            /* PIPE_* */
} ALU_ROWS[] = {
#define ALU(id, pipe, ints, floats) [SIM_ALU_##id] = {ints, floats, pipe},
#include "ptx_opcodes.def"
};
#define NALU ((int)(sizeof ALU_ROWS / sizeof ALU_ROWS[0]))

uint64_t sim_alu(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c, uint64_t e) {
  const alu_fn f = sim_type_float(in->ty) ? ALU_ROWS[in->sub].floats : ALU_ROWS[in->sub].ints;
  return f(in, a, b, c, e);
}

int sim_alu_has(int sub, int ty) {
  if (sub < 0 || sub >= NALU) return 0;
  return (sim_type_float(ty) ? ALU_ROWS[sub].floats : ALU_ROWS[sub].ints) != NULL;
}

int sim_alu_pipe(int sub) { return sub >= 0 && sub < NALU ? ALU_ROWS[sub].pipe : PIPE_ALU; }

/* ---- comparisons ---- */

/* Whether address a lies in one of m's __constant__ variables (isspacep.const). */
static int in_const_var(const sim_module *m, uint64_t a) {
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if (v->space == SIM_SP_CONST && v->data && a - v->addr < v->size) return 1;
  }
  return 0;
}

int sim_compare(int cmp, int ty, uint64_t a, uint64_t b) {
  if (sim_type_float(ty)) {
    double x = ty == SIM_T_F32 ? (double)f32(a) : f64(a);
    double y = ty == SIM_T_F32 ? (double)f32(b) : f64(b);
    int un = x != x || y != y;
    switch (cmp) {
      case SIM_CMP_EQ: return !un && x == y;
      case SIM_CMP_NE: return !un && x != y;
      case SIM_CMP_LT: return !un && x < y;
      case SIM_CMP_LE: return !un && x <= y;
      case SIM_CMP_GT: return !un && x > y;
      case SIM_CMP_GE: return !un && x >= y;
      case SIM_CMP_EQU: return un || x == y;
      case SIM_CMP_NEU: return un || x != y;
      case SIM_CMP_LTU: return un || x < y;
      case SIM_CMP_LEU: return un || x <= y;
      case SIM_CMP_GTU: return un || x > y;
      case SIM_CMP_GEU: return un || x >= y;
      case SIM_CMP_NUM: return !un;
      case SIM_CMP_NAN: return un;
      /* the classification macros promise only non-zero for true (glibc's isinf(-inf) is -1),
       * and the caller shifts the answer into a lane's bit: each is made 0 or 1 */
      case SIM_CMP_NAN + 1: return isfinite(x) != 0;              /* testp.finite */
      case SIM_CMP_NAN + 2: return isinf(x) != 0;                 /* testp.infinite */
      case SIM_CMP_NAN + 3: return x == x;                        /* testp.number */
      case SIM_CMP_NAN + 4: return x != x;                        /* testp.notanumber */
      case SIM_CMP_NAN + 5: return (ty == SIM_T_F32 ? isnormal(f32(a)) : isnormal(x)) != 0;
      case SIM_CMP_NAN + 6: /* testp.subnormal */
        if (ty == SIM_T_F32) return fpclassify(f32(a)) == FP_SUBNORMAL;
        return fpclassify(x) == FP_SUBNORMAL;
      default: return 0;
    }
  }
  int bytes = sim_type_size(ty);
  if (sim_type_signed(ty) && cmp >= SIM_CMP_LT && cmp <= SIM_CMP_GE) {
    int64_t x = sx(a, bytes), y = sx(b, bytes);
    switch (cmp) {
      case SIM_CMP_LT: return x < y;
      case SIM_CMP_LE: return x <= y;
      case SIM_CMP_GT: return x > y;
      default: return x >= y;
    }
  }
  uint64_t x = zx(a, bytes), y = zx(b, bytes);
  switch (cmp) {
    case SIM_CMP_EQ: return x == y;
    case SIM_CMP_NE: return x != y;
    case SIM_CMP_LT: case SIM_CMP_LO: return x < y;
    case SIM_CMP_LE: case SIM_CMP_LS: return x <= y;
    case SIM_CMP_GT: case SIM_CMP_HI: return x > y;
    case SIM_CMP_GE: case SIM_CMP_HS: return x >= y;
    /* isspacep on generic address x: the windows of shared and local memory (sim_int.h); a
     * constant address lies in one of the module's __constant__ variables (the module is y); a
     * global address is any other: a host pointer, a __device__ or __managed__ variable's, NULL
     * (as an H100 answers, tests/simulator/opcodes.lua). No generic address of a kernel parameter
     * is ever made here: taking one is refused at load (NVRTC copies a parameter whose address
     * is taken to local memory, where an H100's isspacep.local finds it too). */
    case SIM_CMP_ISCONST: return in_const_var((const sim_module *)(uintptr_t)y, x);
    case SIM_CMP_ISSHARED: return x - SIM_SHARED_WIN < SIM_WIN_SIZE;
    case SIM_CMP_ISLOCAL: return x - SIM_LOCAL_WIN < SIM_WIN_SIZE;
    case SIM_CMP_ISGLOBAL:
      return x - SIM_SHARED_WIN >= SIM_WIN_SIZE && x - SIM_LOCAL_WIN >= SIM_WIN_SIZE &&
             !in_const_var((const sim_module *)(uintptr_t)y, x);
    default: return 0; /* SIM_CMP_ISPARAM */
  }
}
