/* test_basic.c: beginner kernels compiled with NVRTC and run in the simulator, checked against
 * CPU references: vector add, saxpy, f64 math, 2D indexing, grid-stride loops, naive and tiled
 * matmul, transpose, reductions (shared memory, shuffles, atomics), divergence, device
 * functions, local arrays, printf, 3D grids, votes, integer bit operations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static sim_module *mod;
static char err[4096];

/* The test kernels, in two literals that each stay under the 4,095 characters C11 promises a
 * string literal may hold, joined in main. */
static const char KERNELS_A[] =
    TU_SRC_VADD
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "extern \"C\" __global__ void f64math(const double *x, double *s, double *c, double *q, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) { s[i] = sin(x[i]); c[i] = cos(x[i]); q[i] = sqrt(x[i]); }\n"
    "}\n"
    "extern \"C\" __global__ void idx2d(int *out, int w, int h) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < w && y < h) out[y * w + x] = x * 1000 + y;\n"
    "}\n"
    "extern \"C\" __global__ void idx3d(int *out) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z * blockDim.z + threadIdx.z;\n"
    "  int w = gridDim.x * blockDim.x, h = gridDim.y * blockDim.y;\n"
    "  out[(z * h + y) * w + x] = x + 100 * y + 10000 * z;\n"
    "}\n"
    "extern \"C\" __global__ void mm_naive(const float *A, const float *B, float *C, int n) {\n"
    "  int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r < n && c < n) { float s = 0; for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c]; C[r * n + c] = s; }\n"
    "}\n"
    TU_SRC_MM_TILED
    "extern \"C\" __global__ void transpose(const float *in, float *out, int n) {\n"
    "  __shared__ float t[32][33];\n"
    "  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;\n"
    "  t[threadIdx.y][threadIdx.x] = in[y * n + x];\n"
    "  __syncthreads();\n"
    "  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;\n"
    "  out[y * n + x] = t[threadIdx.x][threadIdx.y];\n"
    "}\n"
    "extern \"C\" __global__ void reduce_shared(const float *in, float *out, int n) {\n"
    "  extern __shared__ float sdata[];\n"
    "  int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  sdata[tid] = i < n ? in[i] : 0.0f;\n"
    "  __syncthreads();\n"
    "  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) sdata[tid] += sdata[tid + s]; __syncthreads(); }\n"
    "  if (tid == 0) out[blockIdx.x] = sdata[0];\n"
    "}\n";

static const char KERNELS_B[] =
    "extern \"C\" __global__ void reduce_shfl(const int *in, int *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int v = i < n ? in[i] : 0;\n"
    "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);\n"
    "  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);\n"
    "}\n"
    "extern \"C\" __global__ void atomics(int *ctr, unsigned *u, unsigned long long *ull, float *f, double *d, int *mn, int *mx) {\n"
    "  atomicAdd(ctr, 1); atomicInc(u, 1000u); atomicAdd(ull, 3ull); atomicAdd(f, 0.5f); atomicAdd(d, 0.25);\n"
    "  int id = blockIdx.x * blockDim.x + threadIdx.x; atomicMin(mn, id - 5000); atomicMax(mx, id);\n"
    "  atomicOr((int *)u + 1, 1 << (id & 31)); atomicXor((int *)u + 2, id); atomicAnd((int *)u + 3, ~(1 << (id & 15)));\n"
    "  atomicCAS((int *)u + 4, 0, id + 1); atomicExch((int *)u + 5, 7);\n"
    "}\n"
    "extern \"C\" __global__ void diverge(int *out) {\n"
    "  int t = threadIdx.x, r;\n"
    "  if (t % 3 == 0) { r = 0; for (int k = 0; k < t; k++) r += k; }\n"
    "  else if (t % 3 == 1) { r = -t; if (t & 4) r *= 2; }\n"
    "  else { r = t * t; while (r > 50) r -= 7; }\n"
    "  out[blockIdx.x * blockDim.x + t] = r;\n"
    "}\n"
    "__device__ __noinline__ float poly(float x, int k) { float r = 0; for (int i = 0; i < k; i++) r = r * x + 1.0f; return r; }\n"
    "extern \"C\" __global__ void devfunc(float *out) { int t = threadIdx.x; out[t] = t & 1 ? poly(0.5f, t) : -1.0f; }\n"
    "extern \"C\" __global__ void localarr(int *out, int k) {\n"
    "  int a[16]; for (int i = 0; i < 16; i++) a[i] = i * threadIdx.x; out[threadIdx.x] = a[(threadIdx.x + k) & 15];\n"
    "}\n"
    "extern \"C\" __global__ void votes(unsigned *out) {\n"
    "  int t = threadIdx.x;\n"
    "  out[t] = __ballot_sync(0xffffffff, t & 1) ^ (__any_sync(0xffffffff, t == 7) << 1) ^ (__all_sync(0xffffffff, t < 32) << 2);\n"
    "  out[32 + t] = __shfl_sync(0xffffffff, t * 10, 31 - t) + __shfl_up_sync(0xffffffff, t, 3) * 1000 + __shfl_xor_sync(0xffffffff, t, 5, 16) * 100000;\n"
    "  if (t < 20) out[64 + t] = __activemask();\n"
    "}\n"
    "extern \"C\" __global__ void bits(const unsigned *in, unsigned *out) {\n"
    "  int t = threadIdx.x; unsigned x = in[t];\n"
    "  out[t * 8 + 0] = __popc(x); out[t * 8 + 1] = __clz(x); out[t * 8 + 2] = __brev(x);\n"
    "  out[t * 8 + 3] = __byte_perm(x, 0x12345678u, 0x5140); out[t * 8 + 4] = (x >> 5) & 0x3f;\n"
    "  out[t * 8 + 5] = __umulhi(x, 0x9e3779b9u); out[t * 8 + 6] = (unsigned)((int)x >> 3) / (t + 1); out[t * 8 + 7] = (int)x % 7;\n"
    "}\n"
    "extern \"C\" __global__ void conv(const float *in, int *oi, float *of, double *od, unsigned char *ob) {\n"
    "  int t = threadIdx.x; float x = in[t];\n"
    "  oi[t * 4 + 0] = (int)x; oi[t * 4 + 1] = __float2int_rn(x); oi[t * 4 + 2] = (int)floorf(x); oi[t * 4 + 3] = (unsigned)x;\n"
    "  of[t * 4 + 0] = x / 3.0f; of[t * 4 + 1] = sqrtf(fabsf(x)); of[t * 4 + 2] = fmaxf(x, 1.0f) - fminf(x, -1.0f); of[t * 4 + 3] = __saturatef(x);\n"
    "  od[t] = (double)x * 1e-3 / 7.0; ob[t] = (unsigned char)(t * 37);\n"
    "}\n"
    "extern \"C\" __global__ void hello(int n) { if (threadIdx.x < n) printf(\"hi %d from %d: %5.2f %s %c %lld\\n\", threadIdx.x, blockIdx.x, threadIdx.x * 0.5, \"str\", 'A' + threadIdx.x, (long long)threadIdx.x << 40); }\n";

static void *dalloc(size_t n, const char *label) {
  void *p = sim_malloc(dev, n, label, err, sizeof err);
  if (!p) { fprintf(stderr, "sim_malloc: %s\n", err); exit(1); }
  return p;
}

static int launch(const char *name, sim_dim3 g, sim_dim3 b, size_t shm, void **args, int threads) {
  sim_kernel *k = sim_module_kernel(mod, name);
  if (!k) { snprintf(err, sizeof err, "no kernel %s", name); return -1; }
  sim_launch_opts o = {0};
  o.threads = threads;
  return sim_launch(dev, k, g, b, shm, args, &o, NULL, err, sizeof err);
}

static sim_dim3 d3(unsigned x, unsigned y, unsigned z) { sim_dim3 d = {x, y, z}; return d; }

static void test_vadd(void) {
  int n = 1000;
  float *a = dalloc(n * 4, "f32[1000]"), *b = dalloc(n * 4, "f32[1000]"), *c = dalloc(n * 4, "f32[1000]");
  for (int i = 0; i < n; i++) { a[i] = (float)i * 0.5f; b[i] = 1.0f / (float)(i + 1); }
  void *args[] = {&a, &b, &c, &n};
  int rc = launch("vadd", d3((n + 255) / 256, 1, 1), d3(256, 1, 1), 0, args, 0);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += c[i] != a[i] + b[i];
  tu_check(rc == 0 && !bad, "vector add", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, a); sim_free(dev, b); sim_free(dev, c);
}

static void test_saxpy(void) {
  int n = 5000;
  float a = 2.5f, *x = dalloc(n * 4, "f32[5000]"), *y = dalloc(n * 4, "f32[5000]"), *ref = malloc(n * 4);
  for (int i = 0; i < n; i++) { x[i] = (float)i / 7.0f; y[i] = (float)(n - i) / 3.0f; ref[i] = fmaf(a, x[i], y[i]); }
  void *args[] = {&a, &x, &y, &n};
  int rc = launch("saxpy", d3(4, 1, 1), d3(128, 1, 1), 0, args, 0);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += memcmp(&y[i], &ref[i], 4) != 0;
  tu_check(rc == 0 && !bad, "saxpy grid-stride (fma bit-exact)", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, x); sim_free(dev, y); free(ref);
}

static void test_f64(void) {
  int n = 777;
  double *x = dalloc(n * 8, "f64[777]"), *s = dalloc(n * 8, "f64[777]"), *c = dalloc(n * 8, "f64[777]"), *q = dalloc(n * 8, "f64[777]");
  for (int i = 0; i < n; i++) x[i] = i * 0.37 + 1e-3;
  x[5] = 1e6; x[6] = 12345.678;
  void *args[] = {&x, &s, &c, &q, &n};
  int rc = launch("f64math", d3(7, 1, 1), d3(128, 1, 1), 0, args, 0);
  int bad = 0;
  double worst = 0;
  for (int i = 0; i < n; i++) {
    double es = fabs(s[i] - sin(x[i])), ec = fabs(c[i] - cos(x[i]));
    if (es > worst) worst = es;
    if (ec > worst) worst = ec;
    bad += es > 1e-15 || ec > 1e-15 || q[i] != sqrt(x[i]);
  }
  tu_check(rc == 0 && !bad, "f64 sin/cos/sqrt", "rc=%d bad=%d worst=%g %s", rc, bad, worst, rc ? err : "");
  sim_free(dev, x); sim_free(dev, s); sim_free(dev, c); sim_free(dev, q);
}

static void test_idx(void) {
  int w = 70, h = 45;
  int *o = dalloc(w * h * 4, "i32[3150]");
  void *args[] = {&o, &w, &h};
  int rc = launch("idx2d", d3(5, 3, 1), d3(16, 16, 1), 0, args, 0);
  int bad = 0;
  for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) bad += o[y * w + x] != x * 1000 + y;
  tu_check(rc == 0 && !bad, "2D grid and block", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, o);
  int W = 2 * 4, H = 3 * 2, D = 2 * 3;
  int *p = dalloc(W * H * D * 4, "i32[288]");
  void *args3[] = {&p};
  rc = launch("idx3d", d3(2, 3, 2), d3(4, 2, 3), 0, args3, 0);
  bad = 0;
  for (int z = 0; z < D; z++) for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) bad += p[(z * H + y) * W + x] != x + 100 * y + 10000 * z;
  tu_check(rc == 0 && !bad, "3D grid and block", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, p);
}

static void test_matmul(void) {
  int n = 64;
  float *A = dalloc(n * n * 4, "f32[4096]"), *B = dalloc(n * n * 4, "f32[4096]"), *C = dalloc(n * n * 4, "f32[4096]");
  float *ref = malloc(n * n * 4);
  for (int i = 0; i < n * n; i++) { A[i] = (float)((i * 7) % 13) - 6.0f; B[i] = (float)((i * 5) % 11) * 0.25f; }
  for (int r = 0; r < n; r++) for (int c = 0; c < n; c++) {
    float s = 0;
    for (int k = 0; k < n; k++) s = fmaf(A[r * n + k], B[k * n + c], s);
    ref[r * n + c] = s;
  }
  void *args[] = {&A, &B, &C, &n};
  int rc = launch("mm_naive", d3(n / 16, n / 16, 1), d3(16, 16, 1), 0, args, 0);
  int bad = 0;
  for (int i = 0; i < n * n; i++) bad += C[i] != ref[i];
  tu_check(rc == 0 && !bad, "naive matmul", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  memset(C, 0, n * n * 4);
  rc = launch("mm_tiled", d3(n / 16, n / 16, 1), d3(16, 16, 1), 0, args, 0);
  bad = 0;
  for (int i = 0; i < n * n; i++) bad += C[i] != ref[i];
  tu_check(rc == 0 && !bad, "16x16 tiled matmul with shared memory", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, A); sim_free(dev, B); sim_free(dev, C); free(ref);
}

static void test_transpose(void) {
  int n = 96;
  float *in = dalloc(n * n * 4, "f32[9216]"), *out = dalloc(n * n * 4, "f32[9216]");
  for (int i = 0; i < n * n; i++) in[i] = (float)i;
  void *args[] = {&in, &out, &n};
  int rc = launch("transpose", d3(3, 3, 1), d3(32, 32, 1), 0, args, 0);
  int bad = 0;
  for (int y = 0; y < n; y++) for (int x = 0; x < n; x++) bad += out[y * n + x] != in[x * n + y];
  tu_check(rc == 0 && !bad, "shared-memory transpose", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, in); sim_free(dev, out);
}

static void test_reduce(void) {
  int n = 10000, nb = (n + 255) / 256;
  float *in = dalloc(n * 4, "f32[10000]"), *out = dalloc(nb * 4, "f32[40]");
  for (int i = 0; i < n; i++) in[i] = (float)(i % 17);
  void *args[] = {&in, &out, &n};
  int rc = launch("reduce_shared", d3(nb, 1, 1), d3(256, 1, 1), 256 * 4, args, 0);
  double s = 0;
  for (int b = 0; b < nb; b++) s += out[b];
  double ref = 0;
  for (int i = 0; i < n; i++) ref += in[i];
  tu_check(rc == 0 && s == ref, "reduction in shared memory (extern __shared__)", "rc=%d sum=%g ref=%g %s", rc, s, ref, rc ? err : "");
  int *iv = dalloc(n * 4, "i32[10000]"), *sum = dalloc(4, "i32[1]");
  long long r2 = 0;
  for (int i = 0; i < n; i++) { iv[i] = i * 3 - 7; r2 += iv[i]; }
  void *a2[] = {&iv, &sum, &n};
  rc = launch("reduce_shfl", d3(nb, 1, 1), d3(256, 1, 1), 0, a2, 0);
  tu_check(rc == 0 && *sum == (int)r2, "reduction with __shfl_down_sync and atomicAdd", "rc=%d sum=%d ref=%lld %s", rc, *sum, r2, rc ? err : "");
  sim_free(dev, in); sim_free(dev, out); sim_free(dev, iv); sim_free(dev, sum);
}

static void test_atomics(int threads) {
  int *ctr = dalloc(4, "i32[1]"), *mn = dalloc(4, "i32[1]"), *mx = dalloc(4, "i32[1]");
  unsigned *u = dalloc(6 * 4, "u32[6]");
  unsigned long long *ull = dalloc(8, "u64[1]");
  float *f = dalloc(4, "f32[1]");
  double *d = dalloc(8, "f64[1]");
  *mn = 1 << 30; *mx = -1; u[3] = 0xffffffffu;
  void *args[] = {&ctr, &u, &ull, &f, &d, &mn, &mx};
  int nb = 64, bs = 256, n = nb * bs;
  int rc = launch("atomics", d3(nb, 1, 1), d3(bs, 1, 1), 0, args, threads);
  unsigned x = 0;
  for (int i = 0; i < n; i++) x ^= (unsigned)i;
  int ok = rc == 0 && *ctr == n && u[0] == (unsigned)(n % 1001) && *ull == 3ull * n && *f == 0.5f * n && *d == 0.25 * n &&
           *mn == -5000 && *mx == n - 1 && u[1] == 0xffffffffu && u[2] == x && u[3] == 0xffff0000u && u[4] >= 1 &&
           u[4] <= (unsigned)n && u[5] == 7;
  char name[80];
  snprintf(name, sizeof name, "atomics under contention (%d host threads)", threads);
  tu_check(ok, name, "rc=%d ctr=%d inc=%u ull=%llu f=%g d=%g min=%d max=%d or=%x xor=%x/%x and=%x cas=%u exch=%u %s", rc,
           *ctr, u[0], *ull, *f, *d, *mn, *mx, u[1], u[2], x, u[3], u[4], u[5], rc ? err : "");
  sim_free(dev, ctr); sim_free(dev, mn); sim_free(dev, mx); sim_free(dev, u); sim_free(dev, ull); sim_free(dev, f); sim_free(dev, d);
}

static void test_diverge(void) {
  int n = 2 * 96;
  int *o = dalloc(n * 4, "i32[192]");
  void *args[] = {&o};
  int rc = launch("diverge", d3(2, 1, 1), d3(96, 1, 1), 0, args, 0);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int t = i % 96, r;
    if (t % 3 == 0) { r = 0; for (int k = 0; k < t; k++) r += k; }
    else if (t % 3 == 1) { r = -t; if (t & 4) r *= 2; }
    else { r = t * t; while (r > 50) r -= 7; }
    bad += o[i] != r;
  }
  tu_check(rc == 0 && !bad, "divergent branches and loops", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, o);
  float *f = dalloc(64 * 4, "f32[64]");
  void *a2[] = {&f};
  rc = launch("devfunc", d3(1, 1, 1), d3(64, 1, 1), 0, a2, 0);
  bad = 0;
  for (int t = 0; t < 64; t++) {
    float r = 0;
    for (int i = 0; i < t; i++) r = r * 0.5f + 1.0f;
    bad += f[t] != ((t & 1) ? r : -1.0f);
  }
  tu_check(rc == 0 && !bad, "device function call (noinline) in divergent code", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, f);
  int *l = dalloc(64 * 4, "i32[64]"), k = 5;
  void *a3[] = {&l, &k};
  rc = launch("localarr", d3(1, 1, 1), d3(64, 1, 1), 0, a3, 0);
  bad = 0;
  for (int t = 0; t < 64; t++) bad += l[t] != ((t + k) & 15) * t;
  tu_check(rc == 0 && !bad, "local memory array", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, l);
}

static void test_votes(void) {
  unsigned *o = dalloc(96 * 4, "u32[96]");
  void *args[] = {&o};
  int rc = launch("votes", d3(1, 1, 1), d3(32, 1, 1), 0, args, 0);
  int bad = 0;
  for (int t = 0; t < 32; t++) {
    bad += o[t] != (0xaaaaaaaau ^ 2u ^ 4u);
    unsigned up = t >= 3 ? t - 3 : t;
    int xl = (t & 16) | ((t & 15) ^ 5);
    bad += o[32 + t] != (31 - t) * 10 + up * 1000 + xl * 100000;
    if (t < 20) bad += o[64 + t] != 0xfffffu;
  }
  tu_check(rc == 0 && !bad, "vote (ballot/any/all), shfl (idx/up/xor with width), activemask", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, o);
}

static unsigned brev32(unsigned x) { unsigned r = 0; for (int i = 0; i < 32; i++) r |= ((x >> i) & 1) << (31 - i); return r; }
static unsigned perm(unsigned a, unsigned b, unsigned s) {
  unsigned long long t = ((unsigned long long)b << 32) | a; unsigned r = 0;
  for (int i = 0; i < 4; i++) r |= (unsigned)((t >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}

static void test_bits(void) {
  unsigned *in = dalloc(64 * 4, "u32[64]"), *o = dalloc(64 * 8 * 4, "u32[512]");
  for (int t = 0; t < 64; t++) in[t] = (unsigned)(t * 2654435761u) ^ (t == 0 ? 0 : 1u << (t & 31));
  in[0] = 0;
  void *args[] = {&in, &o};
  int rc = launch("bits", d3(1, 1, 1), d3(64, 1, 1), 0, args, 0);
  int bad = 0;
  for (int t = 0; t < 64; t++) {
    unsigned x = in[t];
    unsigned e[8] = {(unsigned)__builtin_popcount(x), x ? (unsigned)__builtin_clz(x) : 32, brev32(x), perm(x, 0x12345678u, 0x5140),
                     (x >> 5) & 0x3f, (unsigned)(((unsigned long long)x * 0x9e3779b9u) >> 32), (unsigned)((int)x >> 3) / (t + 1), (unsigned)((int)x % 7)};
    for (int k = 0; k < 8; k++) bad += o[t * 8 + k] != e[k];
  }
  tu_check(rc == 0 && !bad, "popc clz brev prmt bfe mul.hi div rem", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, in); sim_free(dev, o);
}

static void test_conv(void) {
  int n = 64;
  float *in = dalloc(n * 4, "f32[64]"), *of = dalloc(n * 16, "f32[256]");
  int *oi = dalloc(n * 16, "i32[256]");
  double *od = dalloc(n * 8, "f64[64]");
  unsigned char *ob = dalloc(n, "u8[64]");
  for (int t = 0; t < n; t++) in[t] = (t - 32) * 0.75f + (t % 5 == 0 ? 0.5f : 0.0f);
  in[1] = 3e9f; in[2] = -3e9f; in[3] = NAN; in[4] = 2.5f; in[6] = -2.5f;
  void *args[] = {&in, &oi, &of, &od, &ob};
  int rc = launch("conv", d3(1, 1, 1), d3(n, 1, 1), 0, args, 0);
  int bad = 0;
  for (int t = 0; t < n; t++) {
    float x = in[t];
    int ei0 = x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x < -2147483648.0f ? (int)0x80000000 : (int)x;
    int ei1 = x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x < -2147483648.0f ? (int)0x80000000 : (int)nearbyintf(x);
    int ei2 = x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x < -2147483648.0f ? (int)0x80000000 : (int)floorf(x);
    unsigned eu = x != x || x <= 0 ? 0 : x >= 4294967296.0f ? 0xffffffffu : (unsigned)x;
    bad += oi[t * 4] != ei0; bad += oi[t * 4 + 1] != ei1; bad += oi[t * 4 + 2] != ei2; bad += (unsigned)oi[t * 4 + 3] != eu;
    float f0 = x / 3.0f, f1 = sqrtf(fabsf(x)), f2 = fmaxf(x, 1.0f) - fminf(x, -1.0f), f3 = x != x ? 0 : x < 0 ? 0 : x > 1 ? 1 : x;
    float ef[4] = {f0, f1, f2, f3};
    for (int k = 0; k < 4; k++) bad += !(of[t * 4 + k] == ef[k] || (of[t * 4 + k] != of[t * 4 + k] && ef[k] != ef[k]));
    double ed = (double)x * 1e-3 / 7.0;
    bad += !(od[t] == ed || (od[t] != od[t] && ed != ed));
    bad += ob[t] != (unsigned char)(t * 37);
  }
  tu_check(rc == 0 && !bad, "conversions, saturation, float min/max/div/sqrt", "rc=%d bad=%d %s", rc, bad, rc ? err : "");
  sim_free(dev, in); sim_free(dev, of); sim_free(dev, oi); sim_free(dev, od); sim_free(dev, ob);
}

static char pbuf[8192];
static size_t plen;
static void sink(const char *text, size_t len, void *ud) {
  (void)ud;
  if (plen + len < sizeof pbuf) { memcpy(pbuf + plen, text, len); plen += len; pbuf[plen] = 0; }
}

static void test_printf(void) {
  sim_set_printf_sink(dev, sink, NULL);
  int n = 3;
  void *args[] = {&n};
  int rc = launch("hello", d3(2, 1, 1), d3(32, 1, 1), 0, args, 1);
  const char *want = "hi 0 from 0:  0.00 str A 0\nhi 1 from 0:  0.50 str B 1099511627776\nhi 2 from 0:  1.00 str C 2199023255552\n"
                     "hi 0 from 1:  0.00 str A 0\nhi 1 from 1:  0.50 str B 1099511627776\nhi 2 from 1:  1.00 str C 2199023255552\n";
  tu_check(rc == 0 && strcmp(pbuf, want) == 0, "device printf (deterministic order, 1 thread)", "rc=%d got [%s] %s", rc, pbuf, rc ? err : "");
  sim_set_printf_sink(dev, NULL, NULL);
}

/* A conversion of 700 characters, a %s of 2,000 and a format of 3,000: the GPU prints them
 * whole (its limit is the 1 MiB printf buffer), so the simulator must too. */
static void test_printf_long(void) {
  static char src[4096], want[8192];
  int n = snprintf(src, sizeof src, "extern \"C\" __global__ void longpr(const char *s) { printf(\"%%700d|%%s|");
  for (int i = 0; i < 3000; i++) src[n++] = 'f';
  snprintf(src + n, sizeof src - (size_t)n, "#\\n\", 7, s); }\n");
  n = snprintf(want, sizeof want, "%700d|", 7);
  memset(want + n, 'x', 2000), n += 2000;
  want[n++] = '|';
  memset(want + n, 'f', 3000), n += 3000;
  snprintf(want + n, sizeof want - (size_t)n, "#\n");
  sim_module *m = tu_module("compile the long printf kernel", src);
  if (!m) return;
  char *s = dalloc(2001, "u8[2001]");
  memset(s, 'x', 2000), s[2000] = 0;
  void *args[] = {&s};
  plen = 0, pbuf[0] = 0;
  sim_set_printf_sink(dev, sink, NULL);
  int rc = tu_launch(dev, tu_kernel(m, "longpr"), 1, 1, 0, args, 1, NULL, err, sizeof err);
  sim_set_printf_sink(dev, NULL, NULL);
  tu_check(rc == 0 && strcmp(pbuf, want) == 0, "device printf: long conversion, string and format are whole",
           "rc=%d got %zu characters, want %zu %s", rc, plen, strlen(want), rc ? err : "");
  sim_free(dev, s);
  /* a %s with no NUL in 2 MiB: a clear error, not a read to the end of memory */
  s = dalloc(2 << 20, "u8[2M]");
  memset(s, 'x', 2 << 20);
  rc = tu_launch(dev, tu_kernel(m, "longpr"), 1, 1, 0, args, 1, NULL, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "printf: the string argument 2 at 0x") && strstr(err, "has no end within 1 MiB"),
           "device printf: a string with no end is an error", "rc=%d %s", rc, err);
  sim_free(dev, s);
  sim_module_free(m);
}

/* The other conversions a kernel may use, against the host's printf of the same values, and a
 * conversion printf cannot make (%n) refused with its name. */
static void test_printf_conversions(void) {
  sim_module *m = tu_module("compile the printf conversions kernel",
      "extern \"C\" __global__ void conv(const int *p) {\n"
      "  printf(\"%% %x %u %i %-4d| %08.3e %lx %hd %p\\n\", 255u, 4000000000u, -7, 12, 1234.5,\n"
      "         0x123456789abcull, (short)-3, (const void *)0);\n"
      "}\n"
      "extern \"C\" __global__ void bad(int *p) { printf(\"%n\", p); }\n");
  if (!m) return;
  char want[256];
  snprintf(want, sizeof want, "%% %x %u %i %-4d| %08.3e %lx %hd 0x0\n", 255u, 4000000000u, -7, 12,
           1234.5, 0x123456789abcul, (short)-3);
  plen = 0;
  pbuf[0] = 0;
  sim_set_printf_sink(dev, sink, NULL);
  void *np = NULL;
  void *args[] = {&np};
  int rc = tu_launch(dev, tu_kernel(m, "conv"), 1, 1, 0, args, 1, NULL, err, sizeof err);
  tu_check(rc == 0 && strcmp(pbuf, want) == 0, "device printf: %%, %x, %u, %i, flags, %e, %lx, %hd, %p",
           "rc=%d got [%s] want [%s] %s", rc, pbuf, want, rc ? err : "");
  rc = tu_launch(dev, tu_kernel(m, "bad"), 1, 1, 0, args, 1, NULL, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "printf: unsupported conversion '%n'"),
           "device printf: %n is refused with its name", "rc=%d %s", rc, err);
  sim_set_printf_sink(dev, NULL, NULL);
  sim_module_free(m);
}

int main(void) {
  tu_plan(23);
  dev = sim_device_new(NULL);
  static char kernels[sizeof KERNELS_A + sizeof KERNELS_B - 1];
  snprintf(kernels, sizeof kernels, "%s%s", KERNELS_A, KERNELS_B);
  mod = tu_module("compile test kernels", kernels);
  if (!mod) return 1;
  test_vadd();
  test_saxpy();
  test_f64();
  test_idx();
  test_matmul();
  test_transpose();
  test_reduce();
  test_atomics(1);
  test_atomics(2);
  test_diverge();
  test_votes();
  test_bits();
  test_conv();
  test_printf();
  test_printf_long();
  test_printf_conversions();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
