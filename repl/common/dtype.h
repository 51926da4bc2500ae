/* dtype.h: the element types of arrays and host buffers, their sizes, names and C spellings,
 * and conversion between a Lua number and one element in memory. The types themselves are the
 * rows of dtypes.def; this header and dtype.c derive everything else from them. Used by the
 * array bindings, compare, launch checks and builtin.c's kernels. */
#ifndef CUDALAB_DTYPE_H
#define CUDALAB_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum cl_dtype {
#define DTYPE(id, name, host, kind, digits, mbits, bias, rtol, c_type, spellings) DT_##id,
#include "dtypes.def"
#undef DTYPE
  DT_COUNT
} cl_dtype;

/* How an element converts to and from a Lua number (dtypes.def says more). */
typedef enum cl_dtype_kind { DK_FLOAT, DK_HALF, DK_SINT, DK_UINT } cl_dtype_kind;

typedef struct cl_dtype_info {
  const char *name;      /* "f32" */
  const char *c_type;    /* "float": what a kernel parameter points at */
  const char *spellings; /* other C names, '|' between them ("" for none) */
  size_t size;           /* bytes */
  cl_dtype_kind kind;
  int is_float;          /* DK_FLOAT or DK_HALF: read into Lua as a float */
  int digits;            /* significant digits printed (floats) */
  int mbits, bias;       /* a DK_HALF's format */
  double rtol;           /* cuda.compare's default for the type, 0 for compare's own */
  int64_t lo;            /* an integer type's range (0, 0 for floats) */
  uint64_t hi;
} cl_dtype_info;

extern const cl_dtype_info dtype_table[DT_COUNT];

/* Room for one element of any dtype, aligned for each: a buffer for one value in transit. */
typedef union cl_element {
#define DTYPE(id, name, host, kind, digits, mbits, bias, rtol, c_type, spellings) host id;
#include "dtypes.def"
#undef DTYPE
} cl_element;

/* Index of the dtype called `name`, or -1. Accepts the C names too ("float", "int", "__half"). */
int dtype_parse(const char *name);
/* The dtype a C pointee type names ("float", "const double", "unsigned int"), or -1. */
int dtype_from_c_type(const char *c_type);
/* The comma-separated list of names ("f32, f64, ..."), for error messages. */
const char *dtype_names(void);
/* The float types' names as a sentence ("f32, f64, f16 or bf16"), for error messages. */
const char *dtype_float_names(void);

/* Whether an integer type holds the Lua integer v: within its range, or any v at all for a type
 * as wide as a Lua integer (an unsigned one takes v's bits, as C's conversion does). */
int dtype_holds_int(cl_dtype t, int64_t v);
/* Whether an integer type holds the whole number v given as a float: within its range, which
 * for u64 reaches past what a Lua integer holds (2^63 .. 2^64 - 1). */
int dtype_holds_whole(cl_dtype t, double v);
/* "lo..hi" of an integer type into buf ("0..18446744073709551615"), for messages. */
const char *dtype_range_text(cl_dtype t, char *buf, size_t len);
/* The number an integer read from an element of t stands for: v itself, or for an unsigned type
 * as wide as a Lua integer, the unsigned value of v's bits. */
double dtype_int_value(cl_dtype t, int64_t v);

/* Element i of the array at base. Integers are read as int64_t (an unsigned 64-bit one as the
 * int64_t with the same bits), floats as double; each converts to the other as C does. */
double dtype_get_f(cl_dtype t, const void *base, size_t i);
int64_t dtype_get_i(cl_dtype t, const void *base, size_t i);
void dtype_set_f(cl_dtype t, void *base, size_t i, double v);
void dtype_set_i(cl_dtype t, void *base, size_t i, int64_t v);

/* A DK_HALF's bits from a double, rounded once to nearest even as the GPU's cvt.rn does: too
 * large a magnitude gives an infinity, a NaN gives 0x7fff (the GPU's canonical NaN). */
uint16_t dtype_half_bits(cl_dtype t, double v);
/* IEEE binary16 (__half) and bfloat16 (__nv_bfloat16) bits from a double, and back (exactly). */
uint16_t dtype_f16_bits(double v);
uint16_t dtype_bf16_bits(double v);
double dtype_f16_value(uint16_t bits);
double dtype_bf16_value(uint16_t bits);

#endif
