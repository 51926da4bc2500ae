/* dtype.c: element types. Integers are read and written as int64_t so that i64 and u32 values
 * keep every bit through Lua's integers; floats go through double. */
#include <string.h>

#include "dtype.h"

const cl_dtype_info dtype_table[DT_COUNT] = {
    [DT_F32] = {"f32", "float", 4, 1},        [DT_F64] = {"f64", "double", 8, 1},
    [DT_I32] = {"i32", "int", 4, 0},          [DT_U32] = {"u32", "unsigned int", 4, 0},
    [DT_I64] = {"i64", "long long", 8, 0},    [DT_U8] = {"u8", "unsigned char", 1, 0},
};

int dtype_parse(const char *name) {
  for (int t = 0; t < DT_COUNT; t++)
    if (strcmp(name, dtype_table[t].name) == 0) return t;
  return dtype_from_c_type(name);
}

/* C spellings a kernel's signature may use for each dtype, qualifiers already removed. */
static const struct {
  const char *c;
  cl_dtype t;
} c_names[] = {
    {"float", DT_F32},         {"double", DT_F64},        {"int", DT_I32},
    {"signed int", DT_I32},    {"int32_t", DT_I32},       {"unsigned", DT_U32},
    {"unsigned int", DT_U32},  {"uint32_t", DT_U32},      {"long long", DT_I64},
    {"long", DT_I64},          {"int64_t", DT_I64},       {"long long int", DT_I64},
    {"unsigned char", DT_U8},  {"uint8_t", DT_U8},        {"uchar", DT_U8},
};

int dtype_from_c_type(const char *c_type) {
  for (size_t i = 0; i < sizeof c_names / sizeof c_names[0]; i++)
    if (strcmp(c_type, c_names[i].c) == 0) return c_names[i].t;
  return -1;
}

const char *dtype_names(void) { return "f32, f64, i32, u32, i64, u8"; }

double dtype_get_f(cl_dtype t, const void *base, size_t i) {
  switch (t) {
    case DT_F32: return ((const float *)base)[i];
    case DT_F64: return ((const double *)base)[i];
    default: return (double)dtype_get_i(t, base, i);
  }
}

int64_t dtype_get_i(cl_dtype t, const void *base, size_t i) {
  switch (t) {
    case DT_I32: return ((const int32_t *)base)[i];
    case DT_U32: return ((const uint32_t *)base)[i];
    case DT_I64: return ((const int64_t *)base)[i];
    case DT_U8: return ((const uint8_t *)base)[i];
    default: return (int64_t)dtype_get_f(t, base, i);
  }
}

void dtype_set_f(cl_dtype t, void *base, size_t i, double v) {
  switch (t) {
    case DT_F32: ((float *)base)[i] = (float)v; break;
    case DT_F64: ((double *)base)[i] = v; break;
    default: dtype_set_i(t, base, i, (int64_t)v); break;
  }
}

void dtype_set_i(cl_dtype t, void *base, size_t i, int64_t v) {
  switch (t) {
    case DT_I32: ((int32_t *)base)[i] = (int32_t)v; break;
    case DT_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case DT_I64: ((int64_t *)base)[i] = v; break;
    case DT_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    default: dtype_set_f(t, base, i, (double)v); break;
  }
}
