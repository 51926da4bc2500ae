/* builtin.h: the array operations cudalab runs as its own GPU kernels (fill, arange, rand,
 * compare), so that filling or checking a 1 GiB array runs at device bandwidth instead of
 * crawling through a host staging buffer. Used by bind_array.c and bind_compare.c on the cuda
 * backend (engine.c shuts them down); the host paths remain for the simulator, where host memory
 * is the device memory.
 * Each returns 0, or -1 with err filled. */
#ifndef CUDALAB_BUILTIN_H
#define CUDALAB_BUILTIN_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "dtype.h"

/* Fills bytes at dst with a pattern of 1, 2, 4 or 8 bytes repeated. */
int builtin_fill(const cl_backend *be, void *dst, size_t bytes, const void *pattern, size_t psize,
                 cl_err *err);
/* dst[i] = i for n elements of type t. */
int builtin_arange(const cl_backend *be, void *dst, size_t n, cl_dtype t, cl_err *err);
/* The numbers cuda.rand makes, bit for bit as the host makes them (builtin_rand_host). */
int builtin_rand(const cl_backend *be, void *dst, size_t n, cl_dtype t, uint64_t seed, cl_err *err);

typedef struct builtin_cmp {
  double max_abs, max_rel;
  unsigned long long mismatches;
  unsigned long long first; /* index of the first mismatch (meaningful when mismatches > 0) */
} builtin_cmp;

/* Compares two device arrays of n elements of type t with compare's rule
 * (|x - y| <= atol + rtol * |y|, NaN never matches). */
int builtin_compare(const cl_backend *be, const void *x, const void *y, size_t n, cl_dtype t,
                    double rtol, double atol, builtin_cmp *out, cl_err *err);

/* Frees the built-in module and its scratch memory (they otherwise live as long as the
 * process), so that leak checkers see a clean exit. */
void builtin_shutdown(void);

/* cuda.rand's generator: splitmix64 with the element index as its counter, keyed by
 * builtin_mix(seed). A float type of P significant bits (its row's mbits + 1: 53 for f64, 11 for
 * f16, 8 for bf16) takes the top P bits of one output, as many as it holds exactly, so every
 * value is a multiple of 2^-P below 1: rounding a finer number could give 1.0 itself. Two f32
 * share one output (its top 24 bits and the 24 below), which halves the GPU kernel's 64-bit
 * multiplies. The GPU path computes the same functions. */
uint64_t builtin_mix(uint64_t x);
#define BUILTIN_GAMMA 0x9e3779b97f4a7c15ull
static inline float builtin_rand_f32(uint64_t key, uint64_t i) {
  uint64_t r = builtin_mix(key + (i >> 1) * BUILTIN_GAMMA);
  uint32_t v = (i & 1) ? (uint32_t)(r >> 16) & 0xffffffu : (uint32_t)(r >> 40);
  return (float)v * (1.0f / 16777216.0f);
}
/* Element i of cuda.rand's numbers for float type t and key, into slot j of host memory base. */
void builtin_rand_host(cl_dtype t, uint64_t key, uint64_t i, void *base, size_t j);

#endif
