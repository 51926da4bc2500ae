/* builtin.c: cudalab's own kernels for array operations, compiled with NVRTC the first time one
 * is needed (and then taken from the kernel cache, so later sessions pay a file read).
 *
 * All are grid-stride loops launched with a few blocks per SM: enough resident warps to keep
 * the memory system busy at any array size, and one launch configuration for every size.
 * Compiled with -fmad=false so that compare's tolerance test rounds exactly as the host's
 * does, and cuda.compare gives the same verdict whichever path ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cache.h"

/* The kernels' source, in three literals that each stay under the 4,095 characters C11 promises
 * a string literal may hold (the whole is about 6,700), joined once by source(): the fills,
 * random numbers and 16-bit conversions; compare's element types and per-element tests; and
 * compare's kernels. */
static const char SOURCE_FILLS[] =
    "typedef unsigned long long u64;\n"
    "#define TID (blockIdx.x * (u64)blockDim.x + threadIdx.x)\n"
    "#define STRIDE ((u64)blockDim.x * gridDim.x)\n"
    "#define EACH(n) for (u64 i = TID; i < (n); i += STRIDE)\n"
    "#define GAMMA 0x9e3779b97f4a7c15ull\n"
    "extern \"C\" __global__ void cl_fill16(ulonglong2 *p, u64 lo, u64 hi, u64 n) {\n"
    "  EACH(n) p[i] = make_ulonglong2(lo, hi);\n"
    "}\n"
    "__device__ u64 cl_mix(u64 x) {\n"
    "  x += GAMMA;\n"
    "  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;\n"
    "  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;\n"
    "  return x ^ (x >> 31);\n"
    "}\n"
    "__device__ float cl_u24(unsigned v) { return (float)v * (1.0f / 16777216.0f); }\n"
    /* One splitmix output makes two f32 (its top 24 bits and the 24 below): the 64-bit
     * multiplies, not memory, bound this kernel, so halving them nearly doubles its speed. */
    "extern \"C\" __global__ void cl_rand_f32(float *p, u64 key, u64 n) {\n"
    "  u64 pairs = n / 2;\n"
    "  for (u64 k = TID; k < pairs; k += STRIDE) {\n"
    "    u64 r = cl_mix(key + k * GAMMA);\n"
    "    ((float2 *)p)[k] = make_float2(cl_u24((unsigned)(r >> 40)), "
        "cl_u24((unsigned)(r >> 16) & 0xffffffu));\n"
    "  }\n"
    "  if ((n & 1) && TID == 0) p[n - 1] = cl_u24((unsigned)(cl_mix(key + pairs * GAMMA) >> 40));\n"
    "}\n"
    "extern \"C\" __global__ void cl_rand_f64(double *p, u64 key, u64 n) {\n"
    "  EACH(n) p[i] = (double)(cl_mix(key + i * GAMMA) >> 11) * (1.0 / 9007199254740992.0);\n"
    "}\n"
    /* The 16-bit floats without cuda_fp16.h, so that these kernels never depend on finding the
     * toolkit's headers: dtype.c's round_to16 and value_of16, line for line. */
    "__device__ double cl_pow2(int k) { "
        "return __longlong_as_double((long long)(k + 1023) << 52); }\n"
    "__device__ unsigned short cl_round16(double v, int mbits, int bias) {\n"
    "  u64 b = (u64)__double_as_longlong(v);\n"
    "  unsigned sign = (unsigned)(b >> 63) << 15, inf = (unsigned)(2 * bias + 1) << mbits;\n"
    "  int e = (int)((b >> 52) & 0x7ff);\n"
    "  u64 frac = b & 0xfffffffffffffull;\n"
    "  if (e == 0x7ff) return frac ? 0x7fff : sign | inf;\n"
    "  if (e == 0) return sign;\n"
    "  int x = e - 1023;\n"
    "  if (x > bias) return sign | inf;\n"
    "  u64 m = frac | (1ull << 52);\n"
    "  int shift = 52 - mbits + (x < 1 - bias ? 1 - bias - x : 0);\n"
    "  if (shift > 54) return sign;\n"
    "  u64 q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);\n"
    "  if (rem > half || (rem == half && (q & 1))) q++;\n"
    "  u64 out = x < 1 - bias ? q : ((u64)(x + bias - 1) << mbits) + q;\n"
    "  return sign | (out >= inf ? inf : (unsigned)out);\n"
    "}\n"
    "__device__ double cl_value16(unsigned short b, int mbits, int bias) {\n"
    "  int e = (b >> mbits) & (2 * bias + 1);\n"
    "  double m = (double)(b & ((1u << mbits) - 1)), v;\n"
    "  if (e == 2 * bias + 1) v = __longlong_as_double(m != 0 ? 0x7ff8000000000000ll : "
        "0x7ff0000000000000ll);\n"
    "  else if (e == 0) v = m * cl_pow2(1 - bias - mbits);\n"
    "  else v = (m + (double)(1u << mbits)) * cl_pow2(e - bias - mbits);\n"
    "  return (b & 0x8000) ? -v : v;\n"
    "}\n";

static const char SOURCE_ELEMENTS[] =
    /* Element types for compare: a value (so NaN != NaN and 0 == -0, unlike the bits) that
     * converts to double. */
    "struct cl_h16 { unsigned short b; __device__ operator double() const { return "
        "cl_value16(b, 10, 15); } };\n"
    "struct cl_b16 { unsigned short b; __device__ operator double() const { return "
        "cl_value16(b, 7, 127); } };\n"
    "__device__ bool operator!=(cl_h16 x, cl_h16 y) { return (double)x != (double)y; }\n"
    "__device__ bool operator!=(cl_b16 x, cl_b16 y) { return (double)x != (double)y; }\n"
    "extern \"C\" __global__ void cl_rand_f16(unsigned short *p, u64 key, u64 n) {\n"
    "  EACH(n) p[i] = "
        "cl_round16((double)(cl_mix(key + i * GAMMA) >> 53) * (1.0 / 2048.0), 10, 15);\n"
    "}\n"
    "extern \"C\" __global__ void cl_rand_bf16(unsigned short *p, u64 key, u64 n) {\n"
    "  EACH(n) p[i] = "
        "cl_round16((double)(cl_mix(key + i * GAMMA) >> 56) * (1.0 / 256.0), 7, 127);\n"
    "}\n"
    "#define ARANGE(name, T) extern \"C\" __global__ void name(T *p, u64 n) { "
        "EACH(n) p[i] = (T)i; }\n"
    "ARANGE(cl_arange_f32, float) ARANGE(cl_arange_f64, double) ARANGE(cl_arange_i32, int)\n"
    "ARANGE(cl_arange_u32, unsigned) ARANGE(cl_arange_i64, long long) "
        "ARANGE(cl_arange_u8, unsigned char)\n"
    "ARANGE(cl_arange_i16, short) ARANGE(cl_arange_u16, unsigned short) "
        "ARANGE(cl_arange_i8, signed char)\n"
    "extern \"C\" __global__ void cl_arange_f16(unsigned short *p, u64 n) { EACH(n) p[i] = "
        "cl_round16((double)i, 10, 15); }\n"
    "extern \"C\" __global__ void cl_arange_bf16(unsigned short *p, u64 n) { EACH(n) p[i] = "
        "cl_round16((double)i, 7, 127); }\n"
    "__device__ __forceinline__ void cl_cmp1(double a, double b, u64 i, double rtol, double atol,\n"
    "    double &ma, double &mr, u64 &cnt, u64 &first) {\n"
    "  double d = fabs(a - b);\n"
    "  if (isinf(a) && a == b) d = 0;\n"
    "  bool bad = isnan(d) || d > atol + rtol * fabs(b);\n"
    /* The division (the costliest step) only where it may raise the maximum: mr * |b| is
     * scaled down by far more than its rounding error, so no quotient that would win is skipped. */
    "  if (!isnan(d)) {\n"
    "    ma = fmax(ma, d);\n"
    "    if (b != 0 && d != 0 && d >= mr * fabs(b) * (1.0 - 1e-12)) mr = fmax(mr, d / fabs(b));\n"
    "  }\n"
    "  if (bad) { cnt++; if (i < first) first = i; }\n"
    "}\n"
    /* cl_cmp1 for elements known to differ: d is then positive or NaN, never 0, and an infinity
     * cannot equal its partner, so the tests for those cases go; fmax already ignores a NaN.
     * This is the arithmetic-bound path (every element of a result that differs by rounding). */
    "__device__ __forceinline__ void cl_cmp_ne(double a, double b, u64 i, "
        "double rtol, double atol,\n"
    "    double &ma, double &mr, u64 &cnt, u64 &first) {\n"
    "  double d = fabs(a - b), fb = fabs(b);\n"
    "  bool bad = !(d <= atol + rtol * fb);  /* true for NaN too */\n"
    "  ma = fmax(ma, d);\n"
    "  if (d >= mr * fb * (1.0 - 1e-12) && fb != 0) mr = fmax(mr, d / fb);\n"
    "  if (bad) { cnt++; if (i < first) first = i; }\n"
    "}\n"
    "template <typename T> __device__ __forceinline__ void cl_cmp16(uint4 av, uint4 bv, u64 j,\n"
    "    double rtol, double atol, double &ma, double &mr, u64 &cnt, u64 &first) {\n"
    "  const int per = 16 / sizeof(T);\n"
    "  const T *a = (const T *)&av, *b = (const T *)&bv;\n"
    "#pragma unroll\n"
    "  for (int k = 0; k < per; k++)  "
        "/* equal values match and move no maximum (NaN never equals) */\n"
    "    if (a[k] != b[k]) cl_cmp_ne(a[k], b[k], j * per + k, rtol, atol, ma, mr, cnt, first);\n"
    "}\n";

static const char SOURCE_COMPARE[] =
    /* Each thread reads 16 bytes of each array at a time (arrays are 256-byte aligned), the
     * widest load there is; the few elements past the last 16 bytes are read one by one.
     * out: [0] max |x - y| as bits, [1] max relative error as bits, [2] mismatches, [3] first
     * mismatching index. Non-negative doubles order like their bit patterns, so atomicMax on
     * the bits is a max on the values. One set of atomics per warp. */
    "#define COMPARE(name, T) \\\n"
    "extern \"C\" __global__ void name(const T *x, const T *y, u64 n, double rtol, double "
        "atol, u64 *out) {\\\n"
    "  double ma = 0, mr = 0; u64 cnt = 0, first = ~0ull;\\\n"
    "  const int per = 16 / sizeof(T);\\\n"
    "  const uint4 *xv = (const uint4 *)x, *yv = (const uint4 *)y;\\\n"
    "  u64 nv = n / per, j = TID;\\\n"
    "  for (; j + STRIDE < nv; j += 2 * STRIDE) {  /* two 16-byte loads per array in flight */\\\n"
    "    uint4 a0 = xv[j], b0 = yv[j], a1 = xv[j + STRIDE], b1 = yv[j + STRIDE];\\\n"
    "    cl_cmp16<T>(a0, b0, j, rtol, atol, ma, mr, cnt, first);\\\n"
    "    cl_cmp16<T>(a1, b1, j + STRIDE, rtol, atol, ma, mr, cnt, first);\\\n"
    "  }\\\n"
    "  if (j < nv) cl_cmp16<T>(xv[j], yv[j], j, rtol, atol, ma, mr, cnt, first);\\\n"
    "  for (u64 i = nv * per + TID; i < n; i += STRIDE) "
        "cl_cmp1(x[i], y[i], i, rtol, atol, ma, mr, cnt, first);\\\n"
    "  for (int o = 16; o > 0; o >>= 1) {\\\n"
    "    ma = fmax(ma, __shfl_xor_sync(0xffffffffu, ma, o));\\\n"
    "    mr = fmax(mr, __shfl_xor_sync(0xffffffffu, mr, o));\\\n"
    "    cnt += __shfl_xor_sync(0xffffffffu, cnt, o);\\\n"
    "    u64 f = __shfl_xor_sync(0xffffffffu, first, o); first = f < first ? f : first;\\\n"
    "  }\\\n"
    "  if ((threadIdx.x & 31) == 0) {\\\n"
    "    atomicMax(&out[0], (u64)__double_as_longlong(ma));\\\n"
    "    atomicMax(&out[1], (u64)__double_as_longlong(mr));\\\n"
    "    if (cnt) { atomicAdd(&out[2], cnt); atomicMin(&out[3], first); }\\\n"
    "  }\\\n"
    "}\n"
    "COMPARE(cl_cmp_f32, float) COMPARE(cl_cmp_f64, double) COMPARE(cl_cmp_i32, int)\n"
    "COMPARE(cl_cmp_u32, unsigned) COMPARE(cl_cmp_i64, long long) "
        "COMPARE(cl_cmp_u8, unsigned char)\n"
    "COMPARE(cl_cmp_f16, cl_h16) COMPARE(cl_cmp_bf16, cl_b16) COMPARE(cl_cmp_i16, short)\n"
    "COMPARE(cl_cmp_u16, unsigned short) COMPARE(cl_cmp_i8, signed char)\n";

/* The three parts as one source, joined on first use into a buffer sized at compile time. */
static const char *source(void) {
  static char joined[sizeof SOURCE_FILLS + sizeof SOURCE_ELEMENTS + sizeof SOURCE_COMPARE - 2];
  if (!joined[0]) {
    strcpy(joined, SOURCE_FILLS);
    strcat(joined, SOURCE_ELEMENTS);
    strcat(joined, SOURCE_COMPARE);
  }
  return joined;
}

enum { K_FILL, K_RAND_F32, K_RAND_F64, K_RAND_F16, K_RAND_BF16, K_ARANGE,
       K_CMP = K_ARANGE + DT_COUNT, K_COUNT = K_CMP + DT_COUNT };

/* Per-dtype kernels in cl_dtype's order. */
static const char *const kernel_names[K_COUNT] = {
    "cl_fill16",      "cl_rand_f32",    "cl_rand_f64",    "cl_rand_f16",    "cl_rand_bf16",
    "cl_arange_f32",  "cl_arange_f64",  "cl_arange_i32",  "cl_arange_u32",  "cl_arange_i64",
    "cl_arange_u8",   "cl_arange_f16",  "cl_arange_bf16", "cl_arange_i16",  "cl_arange_u16",
    "cl_arange_i8",   "cl_cmp_f32",     "cl_cmp_f64",     "cl_cmp_i32",     "cl_cmp_u32",
    "cl_cmp_i64",     "cl_cmp_u8",      "cl_cmp_f16",     "cl_cmp_bf16",    "cl_cmp_i16",
    "cl_cmp_u16",     "cl_cmp_i8",
};

static struct {
  const cl_backend *be;  /* the backend the module below was loaded on */
  cl_module *mod;        /* lives until the process ends */
  cl_function *fn[K_COUNT];
  unsigned blocks;       /* SMs x 8: 2048 resident threads per SM in blocks of 256 */
  void *scratch;         /* 4 x u64 of device memory for compare's results */
} B;

uint64_t builtin_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Compiles (or takes from the cache) and loads the module on be, once. */
static int ready(const cl_backend *be, cl_err *err) {
  if (B.be == be && B.mod) return 0;
  cl_device d;
  if (be->device(&d, err)) return -1;
  static const char *const opts[] = {"-fmad=false"};
  nvrtc_output out;
  char *msg = NULL;
  if (cache_compile(source(), "cudalab_builtin.cu", be->target_arch(), opts, 1, NULL, 0, &out,
                    &msg)) {
    cl_err_set(err, "internal", "compiling cudalab's built-in kernels failed: %s", msg ? msg : "?");
    free(msg);
    return -1;
  }
  cl_image img = {out.ptx, out.ptx_len, out.cubin, out.cubin_len};
  cl_module *mod = NULL;
  int rc = be->module_load(&img, &mod, err);
  nvrtc_output_free(&out);
  if (rc) return -1;
  for (int i = 0; i < K_COUNT; i++) {
    if (be->function(mod, kernel_names[i], &B.fn[i], err)) {
      be->module_unload(mod);
      return -1;
    }
  }
  if (be->alloc(&B.scratch, 32, NULL, err)) {
    be->module_unload(mod);
    return -1;
  }
  B.be = be;
  B.mod = mod;
  B.blocks = (unsigned)(d.sm_count > 0 ? d.sm_count : 1) * 8;
  return 0;
}

static int run(const cl_backend *be, int k, size_t n, void **args, cl_err *err) {
  unsigned need = (unsigned)((n + 255) / 256);
  cl_dim3 grid = {need < B.blocks ? (need ? need : 1) : B.blocks, 1, 1}, block = {256, 1, 1};
  return be->launch(B.fn[k], grid, block, 0, args, err);
}

int builtin_fill(const cl_backend *be, void *dst, size_t bytes, const void *pattern, size_t psize,
                 cl_err *err) {
  if (ready(be, err)) return -1;
  unsigned char p16[16];
  for (size_t i = 0; i < 16; i++) p16[i] = ((const unsigned char *)pattern)[i % psize];
  unsigned long long lo, hi, n16 = bytes / 16;
  memcpy(&lo, p16, 8);
  memcpy(&hi, p16 + 8, 8);
  void *args[] = {&dst, &lo, &hi, &n16};
  if (n16 && run(be, K_FILL, n16, args, err)) return -1;
  size_t tail = bytes % 16; /* fewer than 16 bytes: the pattern still lines up (16 % psize == 0) */
  return tail ? be->htod((char *)dst + n16 * 16, p16, tail, err) : 0;
}

int builtin_arange(const cl_backend *be, void *dst, size_t n, cl_dtype t, cl_err *err) {
  if (ready(be, err)) return -1;
  unsigned long long count = n;
  void *args[] = {&dst, &count};
  return run(be, K_ARANGE + (int)t, n, args, err);
}

int builtin_rand(const cl_backend *be, void *dst, size_t n, cl_dtype t, uint64_t seed,
                 cl_err *err) {
  if (ready(be, err)) return -1;
  unsigned long long count = n, key = builtin_mix(seed);
  void *args[] = {&dst, &key, &count};
  int k = t == DT_F32   ? K_RAND_F32
          : t == DT_F64 ? K_RAND_F64
          : t == DT_F16 ? K_RAND_F16
                        : K_RAND_BF16;
  return run(be, k, t == DT_F32 ? n / 2 + 1 : n, args, err);
}

int builtin_compare(const cl_backend *be, const void *x, const void *y, size_t n, cl_dtype t,
                    double rtol, double atol, builtin_cmp *out, cl_err *err) {
  if (ready(be, err)) return -1;
  unsigned long long init[4] = {0, 0, 0, ~0ull}, res[4], count = n;
  if (be->htod(B.scratch, init, sizeof init, err)) return -1;
  void *args[] = {&x, &y, &count, &rtol, &atol, &B.scratch};
  if (run(be, K_CMP + (int)t, n, args, err)) return -1;
  if (be->synchronize(NULL, err) || be->dtoh(res, B.scratch, sizeof res, err)) return -1;
  memcpy(&out->max_abs, &res[0], 8);
  memcpy(&out->max_rel, &res[1], 8);
  out->mismatches = res[2];
  out->first = res[3];
  return 0;
}

void builtin_shutdown(void) {
  if (!B.be) return;
  B.be->release(B.scratch);
  B.be->module_unload(B.mod);
  memset(&B, 0, sizeof B);
}
