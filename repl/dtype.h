/* dtype.h: the element types of arrays and host buffers (f32 f64 i32 u32 i64 u8), their sizes,
 * and conversion between a Lua number and one element in memory. Used by the array bindings,
 * compare and launch checks. */
#ifndef CUDALAB_DTYPE_H
#define CUDALAB_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum cl_dtype { DT_F32, DT_F64, DT_I32, DT_U32, DT_I64, DT_U8, DT_COUNT } cl_dtype;

typedef struct cl_dtype_info {
  const char *name;   /* "f32" */
  const char *c_type; /* "float": what a kernel parameter points at */
  size_t size;
  int is_float;
} cl_dtype_info;

extern const cl_dtype_info dtype_table[DT_COUNT];

/* Index of the dtype called `name`, or -1. Accepts the C names too ("float", "int"). */
int dtype_parse(const char *name);
/* The dtype a C pointee type names ("float", "const double", "unsigned int"), or -1. */
int dtype_from_c_type(const char *c_type);
/* The comma-separated list of names, for error messages. */
const char *dtype_names(void);

double dtype_get_f(cl_dtype t, const void *base, size_t i);
int64_t dtype_get_i(cl_dtype t, const void *base, size_t i);
void dtype_set_f(cl_dtype t, void *base, size_t i, double v);
void dtype_set_i(cl_dtype t, void *base, size_t i, int64_t v);

#endif
