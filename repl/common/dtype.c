/* dtype.c: element types. Integers are read and written as int64_t so that i64 and u32 values
 * keep every bit through Lua's integers; floats go through double.
 *
 * The 16-bit floats are converted here in integer arithmetic rather than with the compiler's
 * _Float16 or a float intermediate: _Float16 is not on every C compiler cudalab builds with,
 * and going through float would round twice (double -> float -> half), which differs from the
 * GPU's single rounding for some values. builtin.c's kernels carry the same algorithm. */
#include <math.h>
#include <string.h>

#include "dtype.h"

const cl_dtype_info dtype_table[DT_COUNT] = {
    [DT_F32] = {"f32", "float", 4, 1, 0, 0},
    [DT_F64] = {"f64", "double", 8, 1, 0, 0},
    [DT_I32] = {"i32", "int", 4, 0, INT32_MIN, INT32_MAX},
    [DT_U32] = {"u32", "unsigned int", 4, 0, 0, UINT32_MAX},
    [DT_I64] = {"i64", "long long", 8, 0, INT64_MIN, INT64_MAX},
    [DT_U8] = {"u8", "unsigned char", 1, 0, 0, UINT8_MAX},
    [DT_F16] = {"f16", "__half", 2, 1, 0, 0},
    [DT_BF16] = {"bf16", "__nv_bfloat16", 2, 1, 0, 0},
    [DT_I16] = {"i16", "short", 2, 0, INT16_MIN, INT16_MAX},
    [DT_U16] = {"u16", "unsigned short", 2, 0, 0, UINT16_MAX},
    [DT_I8] = {"i8", "signed char", 1, 0, INT8_MIN, INT8_MAX},
};

int dtype_parse(const char *name) {
  for (int t = 0; t < DT_COUNT; t++)
    if (strcmp(name, dtype_table[t].name) == 0) return t;
  return dtype_from_c_type(name);
}

/* C spellings a kernel's signature may use for each dtype, qualifiers already removed. Plain
 * "char" is left out on purpose: whether it is signed is the platform's choice, and kernels use
 * char * for raw bytes of any type, so a check there would refuse correct launches. */
static const struct {
  const char *c;
  cl_dtype t;
} c_names[] = {
    {"float", DT_F32},              {"double", DT_F64},
    {"int", DT_I32},                {"signed int", DT_I32},
    {"signed", DT_I32},             {"int32_t", DT_I32},
    {"unsigned", DT_U32},           {"unsigned int", DT_U32},
    {"uint32_t", DT_U32},           {"long long", DT_I64},
    {"long", DT_I64},               {"int64_t", DT_I64},
    {"long long int", DT_I64},      {"unsigned char", DT_U8},
    {"uint8_t", DT_U8},             {"uchar", DT_U8},
    {"__half", DT_F16},             {"half", DT_F16},
    {"__nv_bfloat16", DT_BF16},     {"nv_bfloat16", DT_BF16},
    {"short", DT_I16},              {"short int", DT_I16},
    {"signed short", DT_I16},       {"signed short int", DT_I16},
    {"int16_t", DT_I16},            {"unsigned short", DT_U16},
    {"unsigned short int", DT_U16}, {"uint16_t", DT_U16},
    {"ushort", DT_U16},             {"signed char", DT_I8},
    {"int8_t", DT_I8},
};

int dtype_from_c_type(const char *c_type) {
  for (size_t i = 0; i < sizeof c_names / sizeof c_names[0]; i++)
    if (strcmp(c_type, c_names[i].c) == 0) return c_names[i].t;
  return -1;
}

const char *dtype_names(void) { return "f32, f64, i32, u32, i64, u8, f16, bf16, i16, u16, i8"; }

/* ---- 16-bit floats ------------------------------------------------------------------------- */

/* v rounded to nearest even into a binary format with `mbits` stored mantissa bits and an
 * exponent bias of `bias` (its exponent field is all ones at 2 * bias + 1). */
static uint16_t round_to16(double v, int mbits, int bias) {
  uint64_t b;
  memcpy(&b, &v, 8);
  uint16_t sign = (uint16_t)((b >> 63) << 15);
  int e = (int)((b >> 52) & 0x7ff);
  uint64_t frac = b & 0xfffffffffffffull;
  uint16_t inf = (uint16_t)((2 * bias + 1) << mbits);
  if (e == 0x7ff) return frac ? 0x7fff : (uint16_t)(sign | inf);
  if (e == 0) return sign; /* a double subnormal is far below half the smallest 16-bit one */
  int x = e - 1023;
  if (x > bias) return sign | inf;
  uint64_t m = frac | (1ull << 52); /* 1.frac, 53 significant bits */
  int shift = 52 - mbits + (x < 1 - bias ? 1 - bias - x : 0);
  if (shift > 54) return sign; /* below half the smallest subnormal */
  uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  /* A normal result adds its biased exponent less one: q's leading 1 adds the one back, and a
   * carry out of the mantissa moves up the exponent (to infinity at the top) by itself. */
  uint64_t out = x < 1 - bias ? q : ((uint64_t)(x + bias - 1) << mbits) + q;
  return (uint16_t)(sign | (out >= inf ? inf : out));
}

static double value_of16(uint16_t bits, int mbits, int bias) {
  int e = (bits >> mbits) & (2 * bias + 1);
  double m = (double)(bits & ((1u << mbits) - 1));
  double v;
  if (e == 2 * bias + 1) v = m != 0 ? (double)NAN : (double)INFINITY;
  else if (e == 0) v = ldexp(m, 1 - bias - mbits);
  else v = ldexp(m + (double)(1u << mbits), e - bias - mbits);
  return (bits & 0x8000) ? -v : v;
}

uint16_t dtype_f16_bits(double v) { return round_to16(v, 10, 15); }
uint16_t dtype_bf16_bits(double v) { return round_to16(v, 7, 127); }
double dtype_f16_value(uint16_t bits) { return value_of16(bits, 10, 15); }
double dtype_bf16_value(uint16_t bits) { return value_of16(bits, 7, 127); }

/* ---- element access ------------------------------------------------------------------------ */

/* Each switch names every dtype and has no default: a new dtype is a compiler warning (-Wswitch)
 * in each of them, never a silent fall into the other family's function. DT_COUNT is not a
 * dtype; it reads as 0 and writes nothing. */
#define INT_DTYPES                                                                                 \
  case DT_I32:                                                                                     \
  case DT_U32:                                                                                     \
  case DT_I64:                                                                                     \
  case DT_U8:                                                                                      \
  case DT_I16:                                                                                     \
  case DT_U16:                                                                                     \
  case DT_I8
#define FLOAT_DTYPES                                                                               \
  case DT_F32:                                                                                     \
  case DT_F64:                                                                                     \
  case DT_F16:                                                                                     \
  case DT_BF16

double dtype_get_f(cl_dtype t, const void *base, size_t i) {
  switch (t) {
    case DT_F32: return ((const float *)base)[i];
    case DT_F64: return ((const double *)base)[i];
    case DT_F16: return dtype_f16_value(((const uint16_t *)base)[i]);
    case DT_BF16: return dtype_bf16_value(((const uint16_t *)base)[i]);
    INT_DTYPES: return (double)dtype_get_i(t, base, i);
    case DT_COUNT: break;
  }
  return 0;
}

int64_t dtype_get_i(cl_dtype t, const void *base, size_t i) {
  switch (t) {
    case DT_I32: return ((const int32_t *)base)[i];
    case DT_U32: return ((const uint32_t *)base)[i];
    case DT_I64: return ((const int64_t *)base)[i];
    case DT_U8: return ((const uint8_t *)base)[i];
    case DT_I16: return ((const int16_t *)base)[i];
    case DT_U16: return ((const uint16_t *)base)[i];
    case DT_I8: return ((const int8_t *)base)[i];
    FLOAT_DTYPES: return (int64_t)dtype_get_f(t, base, i);
    case DT_COUNT: break;
  }
  return 0;
}

void dtype_set_f(cl_dtype t, void *base, size_t i, double v) {
  switch (t) {
    case DT_F32: ((float *)base)[i] = (float)v; break;
    case DT_F64: ((double *)base)[i] = v; break;
    case DT_F16: ((uint16_t *)base)[i] = dtype_f16_bits(v); break;
    case DT_BF16: ((uint16_t *)base)[i] = dtype_bf16_bits(v); break;
    INT_DTYPES: dtype_set_i(t, base, i, (int64_t)v); break;
    case DT_COUNT: break;
  }
}

void dtype_set_i(cl_dtype t, void *base, size_t i, int64_t v) {
  switch (t) {
    case DT_I32: ((int32_t *)base)[i] = (int32_t)v; break;
    case DT_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case DT_I64: ((int64_t *)base)[i] = v; break;
    case DT_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case DT_I16: ((int16_t *)base)[i] = (int16_t)v; break;
    case DT_U16: ((uint16_t *)base)[i] = (uint16_t)v; break;
    case DT_I8: ((int8_t *)base)[i] = (int8_t)v; break;
    FLOAT_DTYPES: dtype_set_f(t, base, i, (double)v); break;
    case DT_COUNT: break;
  }
}
