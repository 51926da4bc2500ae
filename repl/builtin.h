/* builtin.h: the array operations cudalab runs as its own GPU kernels (fill, arange, rand,
 * compare), so that filling or checking a 1 GiB array runs at device bandwidth instead of
 * crawling through a host staging buffer. Used by bind_array.c and bind_compare.c on the cuda
 * backend; the host paths remain for the simulator, where host memory is the device memory.
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
/* The numbers cuda.rand makes on the host, bit for bit: element i is the output of splitmix64
 * at counter i, keyed by mix(seed) (builtin_rand_bits). */
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

/* The host's side of that generator, shared so that both paths give the same numbers. */
uint64_t builtin_mix(uint64_t x);
static inline uint64_t builtin_rand_bits(uint64_t key, uint64_t i) {
  return builtin_mix(key + i * 0x9e3779b97f4a7c15ull);
}

#endif
