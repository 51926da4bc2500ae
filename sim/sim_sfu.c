/* sim_sfu.c: the .approx functions of PTX, computed as the H200's special-function unit does.
 *
 * Stance: PTX only bounds the error of these instructions, and the GPU's own bits come from its
 * hardware approximation (table lookup plus interpolation). What is reproduced exactly here is
 * measured exhaustively on the GPU by bench/sfu/exhaustive.cu (`make sfu-check`), which writes
 * bench/SFU.md; the README quotes what still differs. Everything else (special values, flushing,
 * the canonical NaN) follows the PTX ISA. */
#include <math.h>
#include <string.h>

#include "sim_sfu.h"

static float as_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t bits32(float f) {
  uint32_t u;
  if (f != f) return 0x7fffffffu;
  memcpy(&u, &f, 4);
  return u;
}
static int subnormal32(uint32_t u) { return (u & 0x7f800000u) == 0 && (u & 0x007fffffu) != 0; }

/* x * 1/(2 pi) rounded toward zero in f32: the GPU turns an angle into revolutions so before its
 * SFU sees it (FMUL.RZ), which is why sin.approx of a large angle is far from sin. The product of
 * two floats is exact in double, so truncating it to float gives the RZ product. */
static double revolutions(float x) {
  double p = (double)x * (double)0.15915494f;
  float r = (float)p;
  if (fabs((double)r) > fabs(p)) r = nextafterf(r, 0.0f);
  return (double)r - rint((double)r);
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
  uint32_t r = bits32(eval(fn, as_f32(x)));
  if (ftz && subnormal32(r)) r &= 0x80000000u;
  return r;
}

uint64_t sim_sfu_f64(int fn, uint64_t x) {
  double d;
  memcpy(&d, &x, 8);
  d = fn == SIM_SFU_RSQRT ? 1.0 / sqrt(d) : 1.0 / d;
  memcpy(&x, &d, 8);
  return x;
}
