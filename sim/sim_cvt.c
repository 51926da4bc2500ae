/* sim_cvt.c: the PTX cvt instruction for every pair of scalar types, rounding mode, .sat and
 * .ftz, one lane at a time.
 *
 * Stance: follow the PTX ISA's rules literally: integer narrowing truncates unless .sat clamps;
 * float-to-integer always saturates and maps NaN to 0 (except where the H200 does otherwise: see
 * nan_to_int); an f32 NaN result is the canonical 0x7fffffff, except one narrowed from f64, which
 * keeps its sign and payload as the GPU does; float-to-float rounds with the requested
 * mode (the host's rounding mode is switched around the single conversion, so the result is
 * correctly rounded in every mode, as on the GPU). */
#include <fenv.h>
#include <math.h>
#include <string.h>

#include "sim_int.h"
#include "sim_bits.h"

static uint64_t put_f32(float f, int mod) {
  if (mod & SIM_MOD_SAT) f = f != f ? 0.0f : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;
  if ((mod & SIM_MOD_FTZ) && fpclassify(f) == FP_SUBNORMAL) f = copysignf(0.0f, f);
  return sim_f32_canon(f);
}

static uint64_t put_f64(double d, int mod) {
  if (mod & SIM_MOD_SAT) d = d != d ? 0.0 : d < 0.0 ? 0.0 : d > 1.0 ? 1.0 : d;
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static int host_mode(int rnd) {
  switch (rnd & 3) {
    case SIM_RZ: return FE_TOWARDZERO;
    case SIM_RM: return FE_DOWNWARD;
    case SIM_RP: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

static double round_int(double v, int rnd) {
  switch (rnd) {
    case SIM_RZI: return trunc(v);
    case SIM_RMI: return floor(v);
    case SIM_RPI: return ceil(v);
    default: return nearbyint(v); /* ties to even in the default mode */
  }
}

static uint64_t int_from(int st, uint64_t x, sim_i128 *v) {
  int n = sim_type_size(st);
  if (sim_type_signed(st)) {
    int sh = 64 - 8 * n;
    *v = sh ? (int64_t)(x << sh) >> sh : (int64_t)x;
  } else {
    *v = n >= 8 ? x : x & ((1ull << (8 * n)) - 1);
  }
  return 0;
}

static uint64_t int_to(int dt, sim_i128 v, int sat) {
  int n = sim_type_size(dt);
  if (sat) {
    sim_i128 lo, hi;
    if (sim_type_signed(dt)) {
      hi = ((sim_i128)1 << (8 * n - 1)) - 1;
      lo = -hi - 1;
    } else {
      lo = 0;
      hi = ((sim_i128)1 << (8 * n)) - 1;
    }
    v = v < lo ? lo : v > hi ? hi : v;
  }
  uint64_t u = (uint64_t)v;
  return n >= 8 ? u : u & ((1ull << (8 * n)) - 1);
}

/* A NaN converted to integer type dt from float type st, as the H200 converts it (measured by
 * tests/gpu/bits_vs_gpu.lua): the PTX ISA says 0, which holds for an f32 or f16 source into 32
 * bits or fewer; but from an f64 the result is the destination's sign bit alone, whatever its
 * width and signedness (INT_MIN, 0x80000000 for u32, 0x80 for u8), and into 64 bits it is the
 * sign bit from any source. */
static uint64_t nan_to_int(int dt, int st) {
  int n = sim_type_size(dt);
  if (n == 8 || st == SIM_T_F64) return 1ull << (8 * n - 1);
  return 0;
}

/* A signed result narrower than the register that receives it is sign-extended, as the PTX ISA
 * says and the H200 does (cvt.rzi.s8.f32 of -1.5 into a 16-bit register is 0xffff). */
static uint64_t widen_signed(int dt, uint64_t u) {
  int n = sim_type_size(dt);
  if (!sim_type_signed(dt) || n >= 8) return u;
  int sh = 64 - 8 * n;
  return (uint64_t)((int64_t)(u << sh) >> sh);
}

/* Float (as double, not NaN) to integer type dt: round with rnd, saturate. */
static uint64_t float_to_int(int dt, double v, int rnd) {
  v = round_int(v, rnd);
  int n = sim_type_size(dt);
  sim_i128 r;
  if (sim_type_signed(dt)) {
    double hi = ldexp(1.0, 8 * n - 1);
    if (v >= hi) r = ((sim_i128)1 << (8 * n - 1)) - 1;
    else if (v < -hi) r = -((sim_i128)1 << (8 * n - 1));
    else r = (sim_i128)v;
  } else {
    double hi = ldexp(1.0, 8 * n);
    if (v >= hi) r = ((sim_i128)1 << (8 * n)) - 1;
    else if (v <= 0) r = 0;
    else r = (sim_i128)v;
  }
  return int_to(dt, r, 0);
}

static uint64_t int_to_float(int dt, int st, uint64_t x, int mod) {
  sim_i128 v;
  int_from(st, x, &v);
  int rnd = mod & 3, old = 0;
  if (rnd != SIM_RN) {
    old = fegetround();
    fesetround(host_mode(rnd));
  }
  uint64_t out;
  if (dt == SIM_T_F32) {
    volatile float f = sim_type_signed(st) ? (float)(int64_t)v : (float)(uint64_t)v;
    out = put_f32(f, mod);
  } else {
    volatile double d = sim_type_signed(st) ? (double)(int64_t)v : (double)(uint64_t)v;
    out = put_f64(d, mod);
  }
  if (rnd != SIM_RN) fesetround(old);
  return out;
}

static uint64_t float_to_float(int dt, int st, uint64_t x, int mod) {
  int rnd = mod & SIM_RND_MASK;
  int has = mod & SIM_MOD_HASRND;
  if (st == SIM_T_F32) {
    float f = f32(x);
    if ((mod & SIM_MOD_FTZ) && fpclassify(f) == FP_SUBNORMAL) f = copysignf(0.0f, f);
    if (dt == SIM_T_F64) return put_f64((double)f, mod);
    if (has && rnd >= SIM_RNI) f = (float)round_int(f, rnd);
    return put_f32(f, mod);
  }
  double d = f64(x);
  if (dt == SIM_T_F64) {
    if (has && rnd >= SIM_RNI) d = round_int(d, rnd);
    return put_f64(d, mod);
  }
  /* a NaN narrowed from f64 keeps its sign and the top of its payload, quieted, in every mode
   * (measured on an H100: 0x7ff80000deadbeef gives 0x7fc00006, 0xfff8... 0xffc00000), unlike
   * the canonical NaN of an f32 result; .sat makes it 0 */
  if (d != d && !(mod & SIM_MOD_SAT))
    return (x >> 32 & 0x80000000u) | 0x7fc00000u | ((x & ((1ull << 52) - 1)) >> 29);
  int old = 0;
  if (rnd != SIM_RN) {
    old = fegetround();
    fesetround(host_mode(rnd));
  }
  volatile float f = (float)d;
  if (rnd != SIM_RN) fesetround(old);
  return put_f32(f, mod);
}

uint64_t sim_cvt(int dt, int st, int mod, uint64_t x) {
  int fd = sim_type_float(dt), fs = sim_type_float(st);
  if (!fd && !fs) {
    sim_i128 v;
    int_from(st, x, &v);
    return widen_signed(dt, int_to(dt, v, mod & SIM_MOD_SAT));
  }
  if (fd && !fs) return int_to_float(dt, st, x, mod);
  if (!fd && fs) {
    double v;
    if (st == SIM_T_F32) {
      float f = f32(x);
      if ((mod & SIM_MOD_FTZ) && fpclassify(f) == FP_SUBNORMAL) f = copysignf(0.0f, f);
      v = f;
    } else {
      v = f64(x);
    }
    return widen_signed(dt, v != v ? nan_to_int(dt, st) : float_to_int(dt, v, mod & SIM_RND_MASK));
  }
  return float_to_float(dt, st, x, mod);
}
