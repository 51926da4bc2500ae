/* builtin.c: cudalab's own kernels for array operations, compiled with NVRTC the first time one
 * is needed (and then taken from the kernel cache, so later sessions pay a file read).
 *
 * Each is meant to run at the speed of a device-to-device copy of the same bytes (make bench's
 * builtin_bw_ratio rows). So every thread reads and writes 16 bytes at a time, the widest access
 * there is, in a grid-stride loop (arrays are 256-byte aligned; the few elements past the last
 * 16 bytes are done one by one), and each kernel is launched as one full wave: as many blocks
 * of 256 as the device holds at once for that kernel (the occupancy API, since compare's
 * registers allow fewer than the stores'), so that no partly filled second wave trails the
 * first. Compiled with -fmad=false so that compare's tolerance test rounds exactly as the
 * host's does, and cuda.compare gives the same verdict whichever path ran. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cache.h"

/* The kernels' source, in three literals that each stay under the 4,095 characters C11 promises
 * a string literal may hold, joined once by source(): the fills, random numbers and 16-bit
 * conversions; compare's element types, arange and compare's per-element tests; and compare's
 * kernels. */
static const char SOURCE_FILLS[] =
    "typedef unsigned long long u64;\n"
    "#define TID (blockIdx.x * (u64)blockDim.x + threadIdx.x)\n"
    "#define STRIDE ((u64)blockDim.x * gridDim.x)\n"
    "#define EACH(n) for (u64 i = TID; i < (n); i += STRIDE)\n"
    "#define GAMMA 0x9e3779b97f4a7c15ull\n"
    "#define KERNEL extern \"C\" __global__ void __launch_bounds__(256)\n"
    "KERNEL cl_fill16(ulonglong2 *p, u64 lo, u64 hi, u64 n) {\n"
    "  EACH(n) p[i] = make_ulonglong2(lo, hi);\n"
    "}\n"
    /* p[i] = f(i) for every i < n: 16 bytes (per elements) per thread and step, one store. */
    "template <typename T, typename F> __device__ __forceinline__ void cl_store16(T *p, u64 n, "
        "F f) {\n"
    "  const int per = 16 / sizeof(T);\n"
    "  union { uint4 v; T e[per]; } u;\n"
    "  u64 nv = n / per;\n"
    "  for (u64 j = TID; j < nv; j += STRIDE) {\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < per; k++) u.e[k] = f(j * per + k);\n"
    "    ((uint4 *)p)[j] = u.v;\n"
    "  }\n"
    "  for (u64 i = nv * per + TID; i < n; i += STRIDE) p[i] = f(i);\n"
    "}\n"
    "__device__ u64 cl_mix(u64 x) {\n"
    "  x += GAMMA;\n"
    "  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;\n"
    "  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;\n"
    "  return x ^ (x >> 31);\n"
    "}\n"
    /* One splitmix output r makes two f32, elements 2k and 2k + 1 (its top 24 bits and the 24
     * below): the 64-bit multiplies, not memory, bound this kernel, so halving them nearly
     * doubles its speed. A thread's 16 bytes take two outputs, the second's counter one GAMMA
     * past the first's, so one multiply by the index serves both. */
    "__device__ float cl_f32_of(u64 r, u64 i) {\n"
    "  return (float)(i & 1 ? (unsigned)(r >> 16) & 0xffffffu : (unsigned)(r >> 40)) * "
        "(1.0f / 16777216.0f);\n"
    "}\n"
    "KERNEL cl_rand_f32(float *p, u64 key, u64 n) {\n"
    "  u64 nv = n / 4;\n"
    "  for (u64 j = TID; j < nv; j += STRIDE) {\n"
    "    u64 k = key + 2 * j * GAMMA, r0 = cl_mix(k), r1 = cl_mix(k + GAMMA);\n"
    "    ((float4 *)p)[j] = make_float4(cl_f32_of(r0, 0), cl_f32_of(r0, 1), cl_f32_of(r1, 0), "
        "cl_f32_of(r1, 1));\n"
    "  }\n"
    "  for (u64 i = nv * 4 + TID; i < n; i += STRIDE) p[i] = cl_f32_of(cl_mix(key + i / 2 * "
        "GAMMA), i);\n"
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
    /* A 16-bit float for compare: a value (so NaN != NaN and 0 == -0, unlike the bits) that
     * converts to double. Equal bits are equal values unless they are a NaN (above the
     * infinity's bits once the sign is dropped), which spares the decoding of the two in the
     * common case. */
    "template <int M, int B> struct cl_soft16 { unsigned short b; "
        "__device__ operator double() const { return cl_value16(b, M, B); } };\n"
    "template <int M, int B> __device__ bool operator!=(cl_soft16<M, B> x, cl_soft16<M, B> y) {"
        " return x.b == y.b ? (x.b & 0x7fff) > ((2 * B + 1) << M) : (double)x != (double)y; }\n"
    /* The per-type kernels, instantiated for each row of dtypes.def by instances(). A float
     * type of P significant bits takes the top P bits of one splitmix output, as
     * builtin_rand_host does (f32 has its own kernel above: two to an output). */
    "#define ARANGE(name, T) KERNEL name(T *p, u64 n) { "
        "cl_store16(p, n, [](u64 i) { return (T)i; }); }\n"
    "#define ARANGE16(name, M, B) KERNEL name(unsigned short *p, u64 n) { "
        "cl_store16(p, n, [](u64 i) { return cl_round16((double)i, M, B); }); }\n"
    "#define RAND(name, T, P) KERNEL name(T *p, u64 key, u64 n) { cl_store16(p, n, [=](u64 i) { "
        "return (T)((double)(cl_mix(key + i * GAMMA) >> (64 - P)) * cl_pow2(-P)); }); }\n"
    "#define RAND16(name, M, B) KERNEL name(unsigned short *p, u64 key, u64 n) { "
        "cl_store16(p, n, [=](u64 i) { return cl_round16("
        "(double)(cl_mix(key + i * GAMMA) >> (63 - M)) * cl_pow2(-M - 1), M, B); }); }\n"
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
    /* out: [0] max |x - y| as bits, [1] max relative error as bits, [2] mismatches, [3] the
     * first mismatching index i as ~i, so that all four start at 0 (one memset) and every one
     * is a sum or a maximum. Non-negative doubles order like their bit patterns, so atomicMax
     * on the bits is a max on the values. A block sums its threads' results (warp shuffles,
     * then one slot per warp in shared memory) and its first thread makes the atomics, only
     * those that change something: arrays that match end with none. */
    "__device__ __forceinline__ void cl_cmp_flush(double ma, double mr, u64 cnt, u64 first, "
        "u64 *out) {\n"
    "  __shared__ double sma[32], smr[32];\n"
    "  __shared__ u64 scnt[32], sfirst[32];\n"
    "  for (int o = 16; o > 0; o >>= 1) {\n"
    "    ma = fmax(ma, __shfl_xor_sync(0xffffffffu, ma, o));\n"
    "    mr = fmax(mr, __shfl_xor_sync(0xffffffffu, mr, o));\n"
    "    cnt += __shfl_xor_sync(0xffffffffu, cnt, o);\n"
    "    u64 f = __shfl_xor_sync(0xffffffffu, first, o); first = f < first ? f : first;\n"
    "  }\n"
    "  unsigned w = threadIdx.x / 32;\n"
    "  if (threadIdx.x % 32 == 0) { sma[w] = ma; smr[w] = mr; scnt[w] = cnt; sfirst[w] = first; }\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x != 0) return;\n"
    "  for (unsigned k = 1; k < blockDim.x / 32; k++) {\n"
    "    ma = fmax(ma, sma[k]); mr = fmax(mr, smr[k]); cnt += scnt[k];\n"
    "    first = sfirst[k] < first ? sfirst[k] : first;\n"
    "  }\n"
    "  if (ma > 0) atomicMax(&out[0], (u64)__double_as_longlong(ma));\n"
    "  if (mr > 0) atomicMax(&out[1], (u64)__double_as_longlong(mr));\n"
    "  if (cnt) { atomicAdd(&out[2], cnt); atomicMax(&out[3], ~first); }\n"
    "}\n"
    /* Each thread has four 16-byte loads of each array in flight before it compares any: a
     * read-only kernel needs more bytes on their way than a copy to keep memory busy, and
     * compare's registers leave room for fewer threads than the stores have. */
    "template <typename T> __device__ __forceinline__ void cl_compare(const T *__restrict__ x,\n"
    "    const T *__restrict__ y, u64 n, double rtol, double atol, u64 *out) {\n"
    "  double ma = 0, mr = 0; u64 cnt = 0, first = ~0ull;\n"
    "  const int per = 16 / sizeof(T);\n"
    "  const uint4 *xv = (const uint4 *)x, *yv = (const uint4 *)y;\n"
    "  u64 nv = n / per, s = STRIDE, j = TID;\n"
    "  for (; j + 3 * s < nv; j += 4 * s) {\n"
    "    uint4 a[4], b[4];\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < 4; u++) { a[u] = xv[j + u * s]; b[u] = yv[j + u * s]; }\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < 4; u++) "
        "cl_cmp16<T>(a[u], b[u], j + u * s, rtol, atol, ma, mr, cnt, first);\n"
    "  }\n"
    "  for (; j < nv; j += s) cl_cmp16<T>(xv[j], yv[j], j, rtol, atol, ma, mr, cnt, first);\n"
    "  for (u64 i = nv * per + TID; i < n; i += s) "
        "cl_cmp1(x[i], y[i], i, rtol, atol, ma, mr, cnt, first);\n"
    "  cl_cmp_flush(ma, mr, cnt, first, out);\n"
    "}\n"
    "#define COMPARE(name, T) KERNEL name(const T *x, const T *y, u64 n, double rtol, "
        "double atol, u64 *out) { cl_compare<T>(x, y, n, rtol, atol, out); }\n";

/* The lines that instantiate dtype t's kernels, appended to out: its arange and compare, and
 * for a float type its rand (f32's is written out in SOURCE_FILLS). */
static void instances(char *out, size_t len, cl_dtype t) {
  const cl_dtype_info *d = &dtype_table[t];
  size_t at = strlen(out);
  switch (d->kind) {
    case DK_HALF:
      snprintf(out + at, len - at, "typedef cl_soft16<%d, %d> cl_t_%s;\n"
               "ARANGE16(cl_arange_%s, %d, %d) COMPARE(cl_cmp_%s, cl_t_%s) "
               "RAND16(cl_rand_%s, %d, %d)\n",
               d->mbits, d->bias, d->name, d->name, d->mbits, d->bias, d->name, d->name, d->name,
               d->mbits, d->bias);
      break;
    case DK_FLOAT:
      snprintf(out + at, len - at, "ARANGE(cl_arange_%s, %s) COMPARE(cl_cmp_%s, %s)\n", d->name,
               d->c_type, d->name, d->c_type);
      at = strlen(out);
      if (t != DT_F32)
        snprintf(out + at, len - at, "RAND(cl_rand_%s, %s, %d)\n", d->name, d->c_type,
                 d->mbits + 1);
      break;
    case DK_SINT:
    case DK_UINT:
      snprintf(out + at, len - at, "ARANGE(cl_arange_%s, %s) COMPARE(cl_cmp_%s, %s)\n", d->name,
               d->c_type, d->name, d->c_type);
      break;
  }
}

/* The three parts and every dtype's instances as one source, joined on first use into a buffer
 * sized at compile time (an instance line is well under 256 characters). */
static const char *source(void) {
  static char joined[sizeof SOURCE_FILLS + sizeof SOURCE_ELEMENTS + sizeof SOURCE_COMPARE +
                     256 * DT_COUNT];
  if (!joined[0]) {
    strcpy(joined, SOURCE_FILLS);
    strcat(joined, SOURCE_ELEMENTS);
    strcat(joined, SOURCE_COMPARE);
    for (int t = 0; t < DT_COUNT; t++) instances(joined, sizeof joined, (cl_dtype)t);
  }
  return joined;
}

/* The kernels: the fill, then each dtype's arange, compare and rand (NULL for an integer type),
 * numbered in cl_dtype's order. */
enum { K_FILL, K_ARANGE, K_CMP = K_ARANGE + DT_COUNT, K_RAND = K_CMP + DT_COUNT,
       K_COUNT = K_RAND + DT_COUNT };

/* Kernel k's name into buf, or 0 when there is no such kernel (rand of an integer type). */
static int kernel_name(int k, char *buf, size_t len) {
  if (k == K_FILL) return snprintf(buf, len, "cl_fill16"), 1;
  int t = (k - K_ARANGE) % DT_COUNT, part = (k - K_ARANGE) / DT_COUNT;
  if (part == 2 && !dtype_table[t].is_float) return 0;
  snprintf(buf, len, "cl_%s_%s", part == 0 ? "arange" : part == 1 ? "cmp" : "rand",
           dtype_table[t].name);
  return 1;
}

static struct {
  const cl_backend *be;  /* the backend the module below was loaded on */
  cl_module *mod;        /* lives until the process ends */
  cl_function *fn[K_COUNT];
  unsigned blocks[K_COUNT]; /* each kernel's full wave of blocks of 256 (full_wave) */
  void *scratch;         /* 4 x u64 of device memory for compare's results */
} B;

void builtin_rand_host(cl_dtype t, uint64_t key, uint64_t i, void *base, size_t j) {
  if (t == DT_F32) {
    ((float *)base)[j] = builtin_rand_f32(key, i);
    return;
  }
  int p = dtype_table[t].mbits + 1;
  dtype_set_f(t, base, j, ldexp((double)(builtin_mix(key + i * BUILTIN_GAMMA) >> (64 - p)), -p));
}

uint64_t builtin_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The blocks of 256 threads that the device runs at once for fn: the SMs times the blocks of fn
 * one SM holds (its registers decide: compare's allow 3, the stores' 8). A backend that cannot
 * tell (the simulator) gets 8 per SM, 2048 threads, as many as an H200's SM holds. */
static unsigned full_wave(const cl_backend *be, cl_function *fn, int sms) {
  int per_sm = 0;
  cl_err ignored;
  if (!be->occupancy || be->occupancy(fn, 256, 0, &per_sm, &ignored) != 0 || per_sm < 1)
    per_sm = 8;
  return (unsigned)(sms > 0 ? sms : 1) * (unsigned)per_sm;
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
    char name[64];
    if (!kernel_name(i, name, sizeof name)) continue;
    if (be->function(mod, name, &B.fn[i], err)) {
      be->module_unload(mod);
      return -1;
    }
    B.blocks[i] = full_wave(be, B.fn[i], d.sm_count);
  }
  if (be->alloc(&B.scratch, 32, NULL, err)) {
    be->module_unload(mod);
    return -1;
  }
  B.be = be;
  B.mod = mod;
  return 0;
}

/* Launches kernel k over bytes of memory: a thread for each 16 bytes, up to one full wave. */
static int run(const cl_backend *be, int k, size_t bytes, void **args, cl_err *err) {
  size_t need = (bytes / 16 + 255) / 256;
  unsigned blocks = need < B.blocks[k] ? (unsigned)(need ? need : 1) : B.blocks[k];
  cl_dim3 grid = {blocks, 1, 1}, block = {256, 1, 1};
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
  if (n16 && run(be, K_FILL, bytes, args, err)) return -1;
  size_t tail = bytes % 16; /* fewer than 16 bytes: the pattern still lines up (16 % psize == 0) */
  return tail ? be->htod((char *)dst + n16 * 16, p16, tail, err) : 0;
}

int builtin_arange(const cl_backend *be, void *dst, size_t n, cl_dtype t, cl_err *err) {
  if (ready(be, err)) return -1;
  unsigned long long count = n;
  void *args[] = {&dst, &count};
  return run(be, K_ARANGE + (int)t, n * dtype_table[t].size, args, err);
}

int builtin_rand(const cl_backend *be, void *dst, size_t n, cl_dtype t, uint64_t seed,
                 cl_err *err) {
  if (ready(be, err)) return -1;
  unsigned long long count = n, key = builtin_mix(seed);
  void *args[] = {&dst, &key, &count};
  if (!B.fn[K_RAND + (int)t]) {
    cl_err_set(err, "internal", "no built-in rand for %s", dtype_table[t].name);
    return -1;
  }
  return run(be, K_RAND + (int)t, n * dtype_table[t].size, args, err);
}

/* Nothing here makes the host wait but the read of the results: clearing them is queued before
 * the kernel, and dtoh waits for the kernel inside the driver. The backend's synchronize, which
 * sleeps 50 µs between its polls so that Ctrl-C can reach a kernel that never ends, may wake
 * that long (and the timer's slack) after the kernel has ended: a tenth of a 1 GiB compare's
 * half millisecond, spent before the results could be read. This kernel always ends, within
 * tens of milliseconds on the largest array. */
int builtin_compare(const cl_backend *be, const void *x, const void *y, size_t n, cl_dtype t,
                    double rtol, double atol, builtin_cmp *out, cl_err *err) {
  if (ready(be, err)) return -1;
  unsigned long long res[4], count = n;
  void *args[] = {&x, &y, &count, &rtol, &atol, &B.scratch};
  if (be->memset(B.scratch, 0, sizeof res, err) ||
      run(be, K_CMP + (int)t, n * dtype_table[t].size, args, err) ||
      be->dtoh(res, B.scratch, sizeof res, err))
    return -1;
  memcpy(&out->max_abs, &res[0], 8);
  memcpy(&out->max_rel, &res[1], 8);
  out->mismatches = res[2];
  out->first = ~res[3];
  return 0;
}

void builtin_shutdown(void) {
  if (!B.be) return;
  B.be->release(B.scratch);
  B.be->module_unload(B.mod);
  memset(&B, 0, sizeof B);
}
