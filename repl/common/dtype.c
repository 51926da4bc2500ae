/* dtype.c: element types, derived from the rows of dtypes.def. Integers are read and written as
 * int64_t so that i64 and u32 values keep every bit through Lua's integers, and u64 keeps its
 * bits as the int64_t that has them (Lua's own convention: math.ult compares such integers,
 * string.format("%u") prints them, string.unpack("J") reads them); floats go through double.
 *
 * The 16-bit floats are converted here in integer arithmetic rather than with the compiler's
 * _Float16 or a float intermediate: _Float16 is not on every C compiler cudalab builds with,
 * and going through float would round twice (double -> float -> half), which differs from the
 * GPU's single rounding for some values. builtin.c's kernels carry the same algorithm. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"

/* An integer type's range from its size and signedness: the row states no number twice. */
#define BITS(host) (8 * (int)sizeof(host))
#define LO(host, kind) ((kind) == DK_SINT ? (int64_t)(UINT64_MAX << (BITS(host) - 1)) : 0)
#define HI(host, kind)                                                                             \
  ((kind) == DK_SINT ? UINT64_MAX >> (65 - BITS(host))                                             \
                     : (kind) == DK_UINT ? UINT64_MAX >> (64 - BITS(host)) : 0)

const cl_dtype_info dtype_table[DT_COUNT] = {
#define DTYPE(id, nm, host, kd, dg, mb, bi, rt, ct, sp)                                            \
  [DT_##id] = {.name = nm, .c_type = ct, .spellings = sp, .size = sizeof(host), .kind = kd,        \
               .is_float = kd == DK_FLOAT || kd == DK_HALF, .digits = dg, .mbits = mb,            \
               .bias = bi, .rtol = rt, .lo = LO(host, kd), .hi = HI(host, kd)},
#include "dtypes.def"
#undef DTYPE
};

int dtype_parse(const char *name) {
  for (int t = 0; t < DT_COUNT; t++)
    if (strcmp(name, dtype_table[t].name) == 0) return t;
  return dtype_from_c_type(name);
}

/* Whether `name` is one of the '|'-separated spellings in list. */
static int spelt(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p; p += strcspn(p, "|"), p += *p == '|')
    if (strncmp(p, name, n) == 0 && (p[n] == '|' || p[n] == '\0')) return 1;
  return 0;
}

int dtype_from_c_type(const char *c_type) {
  if (!c_type[0]) return -1;
  for (int t = 0; t < DT_COUNT; t++)
    if (strcmp(c_type, dtype_table[t].c_type) == 0 || spelt(dtype_table[t].spellings, c_type))
      return t;
  return -1;
}

/* The names joined by ", ", the last by `last` (", " or " or "), of the float types only or all,
 * into out. Built once per list: every name is short, so 16 bytes a type is room enough. */
static const char *join_names(char *out, size_t len, int floats_only, const char *last) {
  if (out[0]) return out;
  int count = 0, done = 0;
  for (int t = 0; t < DT_COUNT; t++) count += !floats_only || dtype_table[t].is_float;
  for (int t = 0; t < DT_COUNT; t++) {
    if (floats_only && !dtype_table[t].is_float) continue;
    size_t at = strlen(out);
    snprintf(out + at, len - at, "%s%s", done == 0 ? "" : done == count - 1 ? last : ", ",
             dtype_table[t].name);
    done++;
  }
  return out;
}

const char *dtype_names(void) {
  static char all[16 * DT_COUNT];
  return join_names(all, sizeof all, 0, ", ");
}

const char *dtype_float_names(void) {
  static char floats[16 * DT_COUNT];
  return join_names(floats, sizeof floats, 1, " or ");
}

/* ---- integer ranges ------------------------------------------------------------------------ */

int dtype_holds_int(cl_dtype t, int64_t v) {
  const cl_dtype_info *d = &dtype_table[t];
  if (d->size >= sizeof v) return 1;
  return v >= d->lo && (v < 0 || (uint64_t)v <= d->hi);
}

/* The doubles compared with are powers of two, or a range's ends rounded to the nearest double:
 * a u64's 2^64 - 1 rounds up to 2^64, hence `<` there and `<=` for the narrower types, whose
 * ends are exact doubles. */
int dtype_holds_whole(cl_dtype t, double v) {
  const cl_dtype_info *d = &dtype_table[t];
  if (v != floor(v) || d->is_float) return 0;
  if (d->size < sizeof(int64_t)) return v >= (double)d->lo && v <= (double)d->hi;
  return d->kind == DK_UINT ? v >= 0 && v < 18446744073709551616.0
                            : v >= -9223372036854775808.0 && v < 9223372036854775808.0;
}

const char *dtype_range_text(cl_dtype t, char *buf, size_t len) {
  snprintf(buf, len, "%lld..%llu", (long long)dtype_table[t].lo,
           (unsigned long long)dtype_table[t].hi);
  return buf;
}

double dtype_int_value(cl_dtype t, int64_t v) {
  if (dtype_table[t].kind == DK_UINT && dtype_table[t].size >= sizeof v) return (double)(uint64_t)v;
  return (double)v;
}

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

uint16_t dtype_half_bits(cl_dtype t, double v) {
  return round_to16(v, dtype_table[t].mbits, dtype_table[t].bias);
}
uint16_t dtype_f16_bits(double v) { return dtype_half_bits(DT_F16, v); }
uint16_t dtype_bf16_bits(double v) { return dtype_half_bits(DT_BF16, v); }
double dtype_f16_value(uint16_t bits) {
  return value_of16(bits, dtype_table[DT_F16].mbits, dtype_table[DT_F16].bias);
}
double dtype_bf16_value(uint16_t bits) {
  return value_of16(bits, dtype_table[DT_BF16].mbits, dtype_table[DT_BF16].bias);
}

/* ---- element access ------------------------------------------------------------------------ */

/* A double as an integer's bits, without C's undefined conversion of one out of range: whole
 * numbers up to 2^64 - 1 keep their value (mod 2^64), the rest (NaN, infinities, beyond) give 0
 * or the nearest end. Only a float written to an integer element comes here. */
static int64_t bits_of_double(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0)
    return v < 18446744073709551616.0 ? (int64_t)(uint64_t)v : (int64_t)UINT64_MAX;
  return v < -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
}

/* Each kind's way with one element of C type `host` at p, for the switches below, which the
 * rows of dtypes.def write: every dtype has its case, and none hides behind a default. */
#define GET_F_DK_FLOAT(host, d, p) ((double)*(const host *)(p))
#define GET_F_DK_HALF(host, d, p) value_of16(*(const host *)(p), (d)->mbits, (d)->bias)
#define GET_F_DK_SINT(host, d, p) ((double)*(const host *)(p))
#define GET_F_DK_UINT(host, d, p) ((double)*(const host *)(p))
#define GET_I_DK_FLOAT(host, d, p) bits_of_double(GET_F_DK_FLOAT(host, d, p))
#define GET_I_DK_HALF(host, d, p) bits_of_double(GET_F_DK_HALF(host, d, p))
#define GET_I_DK_SINT(host, d, p) ((int64_t)*(const host *)(p))
#define GET_I_DK_UINT(host, d, p) ((int64_t)*(const host *)(p))
#define SET_F_DK_FLOAT(host, d, p, v) (*(host *)(p) = (host)(v))
#define SET_F_DK_HALF(host, d, p, v) (*(host *)(p) = round_to16((v), (d)->mbits, (d)->bias))
#define SET_F_DK_SINT(host, d, p, v) (*(host *)(p) = (host)bits_of_double(v))
#define SET_F_DK_UINT(host, d, p, v) (*(host *)(p) = (host)(uint64_t)bits_of_double(v))
#define SET_I_DK_FLOAT(host, d, p, v) (*(host *)(p) = (host)(double)(v))
#define SET_I_DK_HALF(host, d, p, v) (*(host *)(p) = round_to16((double)(v), (d)->mbits, (d)->bias))
#define SET_I_DK_SINT(host, d, p, v) (*(host *)(p) = (host)(v))
#define SET_I_DK_UINT(host, d, p, v) (*(host *)(p) = (host)(uint64_t)(v))

#define AT(base, i, host) ((const char *)(base) + (i) * sizeof(host))
#define AT_W(base, i, host) ((char *)(base) + (i) * sizeof(host))

/* DT_COUNT is not a dtype: it reads as 0 and writes nothing. */
double dtype_get_f(cl_dtype t, const void *base, size_t i) {
  const cl_dtype_info *d = &dtype_table[t];
  (void)d;
  switch (t) {
#define DTYPE(id, nm, host, kd, dg, mb, bi, rt, ct, sp)                                            \
  case DT_##id: return GET_F_##kd(host, d, AT(base, i, host));
#include "dtypes.def"
#undef DTYPE
    case DT_COUNT: break;
  }
  return 0;
}

int64_t dtype_get_i(cl_dtype t, const void *base, size_t i) {
  const cl_dtype_info *d = &dtype_table[t];
  (void)d;
  switch (t) {
#define DTYPE(id, nm, host, kd, dg, mb, bi, rt, ct, sp)                                            \
  case DT_##id: return GET_I_##kd(host, d, AT(base, i, host));
#include "dtypes.def"
#undef DTYPE
    case DT_COUNT: break;
  }
  return 0;
}

void dtype_set_f(cl_dtype t, void *base, size_t i, double v) {
  const cl_dtype_info *d = &dtype_table[t];
  (void)d;
  switch (t) {
#define DTYPE(id, nm, host, kd, dg, mb, bi, rt, ct, sp)                                            \
  case DT_##id: SET_F_##kd(host, d, AT_W(base, i, host), v); break;
#include "dtypes.def"
#undef DTYPE
    case DT_COUNT: break;
  }
}

void dtype_set_i(cl_dtype t, void *base, size_t i, int64_t v) {
  const cl_dtype_info *d = &dtype_table[t];
  (void)d;
  switch (t) {
#define DTYPE(id, nm, host, kd, dg, mb, bi, rt, ct, sp)                                            \
  case DT_##id: SET_I_##kd(host, d, AT_W(base, i, host), v); break;
#include "dtypes.def"
#undef DTYPE
    case DT_COUNT: break;
  }
}
