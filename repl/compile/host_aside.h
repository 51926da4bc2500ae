/* host_aside.h: the device part of a .cu file that holds host code too (main, cudaMalloc,
 * k<<<...>>>), for cuda.module(file, {device_only = true}): the host functions and the includes
 * of host-only headers blanked, every line kept where it was. Used by bind_kernel.c; plain C,
 * no I/O, no Lua. */
#ifndef CUDALAB_HOST_ASIDE_H
#define CUDALAB_HOST_ASIDE_H

#include <stddef.h>

#define HOST_ASIDE_WHAT 96 /* room for what one span holds: "function main", "#include <x.h>" */

/* One piece of the source set aside: lines first to last (from 1), and what it was. */
typedef struct aside_span {
  long first, last;
  char what[HOST_ASIDE_WHAT];
} aside_span;

typedef struct host_aside_result {
  char *text;        /* the source with the spans blanked: same length, same newlines; malloc'd */
  size_t len;
  aside_span *spans; /* in the order of the source; malloc'd (NULL when n is 0) */
  int n;
} host_aside_result;

/* Sets aside the host code of the len bytes of src, as CUDA reads them: every function defined
 * at namespace scope (in namespaces and extern "C" blocks too) that is neither __global__ nor
 * __device__ (unqualified functions are host functions in CUDA; __host__ __device__ ones are
 * kept), every declaration marked __host__ alone, and every #include of a header that holds
 * host code only (the C and C++ libraries' host headers, the CUDA runtime's host API and the
 * cuda-samples' helper_*.h). Directive lines inside a function set aside are kept, so #if and
 * #endif stay paired; of an #if's branches, the first is read for braces, as the others repeat
 * its shape. On success fills *out (free with host_aside_free) and returns 0. Returns -1 with
 * why (cap bytes) when the text cannot be read so (a brace never closed or closed twice, a
 * comment or string that never ends) or out of memory; *out is then empty. */
int host_aside(const char *src, size_t len, host_aside_result *out, char *why, size_t cap);
void host_aside_free(host_aside_result *r);

#endif
