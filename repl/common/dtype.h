/* dtype.h: the element types of arrays and host buffers (f32 f64 i32 u32 i64 u8 f16 bf16 i16
 * u16 i8), their sizes, and conversion between a Lua number and one element in memory. Used by
 * the array bindings, compare and launch checks. */
#ifndef CUDALAB_DTYPE_H
#define CUDALAB_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* New dtypes go at the end: builtin.c numbers its per-dtype kernels in this order. */
typedef enum cl_dtype {
  DT_F32, DT_F64, DT_I32, DT_U32, DT_I64, DT_U8, DT_F16, DT_BF16, DT_I16, DT_U16, DT_I8, DT_COUNT
} cl_dtype;

typedef struct cl_dtype_info {
  const char *name;   /* "f32" */
  const char *c_type; /* "float": what a kernel parameter points at */
  size_t size;
  int is_float;
  int64_t lo, hi;     /* the range of an integer dtype (0, 0 for floats) */
} cl_dtype_info;

extern const cl_dtype_info dtype_table[DT_COUNT];

/* Index of the dtype called `name`, or -1. Accepts the C names too ("float", "int", "__half"). */
int dtype_parse(const char *name);
/* The dtype a C pointee type names ("float", "const double", "unsigned int"), or -1. */
int dtype_from_c_type(const char *c_type);
/* The comma-separated list of names, for error messages. */
const char *dtype_names(void);

double dtype_get_f(cl_dtype t, const void *base, size_t i);
int64_t dtype_get_i(cl_dtype t, const void *base, size_t i);
void dtype_set_f(cl_dtype t, void *base, size_t i, double v);
void dtype_set_i(cl_dtype t, void *base, size_t i, int64_t v);

/* IEEE binary16 (__half) and bfloat16 (__nv_bfloat16) bits from a double, rounded once to
 * nearest even as the GPU's cvt.rn does: too large a magnitude gives an infinity, a NaN gives
 * 0x7fff (the GPU's canonical NaN). The reverse conversions are exact. */
uint16_t dtype_f16_bits(double v);
uint16_t dtype_bf16_bits(double v);
double dtype_f16_value(uint16_t bits);
double dtype_bf16_value(uint16_t bits);

#endif
