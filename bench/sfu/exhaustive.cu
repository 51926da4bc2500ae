// exhaustive.cu: compares the simulator's .approx functions (sim/sim_sfu.c) with the GPU's on
// every one of the 2^32 inputs of each f32 function, and on every high word of the f64 ones.
// Run on a GPU by `make sfu-check`, which writes bench/SFU.md from its table.
//
//   exhaustive [--dump DIR]   DIR: per-function tables of the GPU's results on one binade (two
//                             for ex2), as int8 differences from the correctly rounded result,
//                             in DIR/<ptx>.<first input in hex>.i8
//   exhaustive --vectors FILE writes FILE, a C header of inputs and the GPU's results for each
//                             instruction (special values, then a fixed pseudo-random sample),
//                             which tests/sim/test_sfu.c checks the simulator against in CI
//
// Each function is computed by a kernel holding the PTX instruction alone (inline asm), so what
// is measured is the instruction, not a library sequence around it.
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "sim_sfu.h"
}

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                            \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

#define CHUNK (1u << 28)

#define F32_KERNEL(name, ptx)                                                                \
  __global__ void k_##name(uint32_t base, uint32_t *out) {                                   \
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;                                      \
    float x = __uint_as_float(base + i), r;                                                  \
    asm(ptx " %0, %1;" : "=f"(r) : "f"(x));                                                  \
    out[i] = __float_as_uint(r);                                                             \
  }
F32_KERNEL(rcp_ftz, "rcp.approx.ftz.f32")
F32_KERNEL(rcp, "rcp.approx.f32")
F32_KERNEL(rsqrt_ftz, "rsqrt.approx.ftz.f32")
F32_KERNEL(rsqrt, "rsqrt.approx.f32")
F32_KERNEL(sqrt_ftz, "sqrt.approx.ftz.f32")
F32_KERNEL(sqrt, "sqrt.approx.f32")
F32_KERNEL(ex2_ftz, "ex2.approx.ftz.f32")
F32_KERNEL(ex2, "ex2.approx.f32")
F32_KERNEL(lg2_ftz, "lg2.approx.ftz.f32")
F32_KERNEL(lg2, "lg2.approx.f32")
F32_KERNEL(sin_ftz, "sin.approx.ftz.f32")
F32_KERNEL(sin, "sin.approx.f32")
F32_KERNEL(cos_ftz, "cos.approx.ftz.f32")
F32_KERNEL(cos, "cos.approx.f32")
F32_KERNEL(tanh, "tanh.approx.f32")

// f64: the input's high word is i, its low word lo (the SFU reads the high word alone; the
// low word is varied to confirm that).
#define F64_KERNEL(name, ptx)                                                                \
  __global__ void k_##name(uint32_t base, uint32_t lo, uint32_t *out) {                      \
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;                                      \
    double x = __hiloint2double((int)(base + i), (int)lo), r;                                \
    asm(ptx " %0, %1;" : "=d"(r) : "d"(x));                                                  \
    out[2 * i] = (uint32_t)__double2loint(r);                                                \
    out[2 * i + 1] = (uint32_t)__double2hiint(r);                                            \
  }
F64_KERNEL(rcp64, "rcp.approx.ftz.f64")
F64_KERNEL(rsqrt64, "rsqrt.approx.f64")
F64_KERNEL(rsqrt64_ftz, "rsqrt.approx.ftz.f64")

typedef void (*f32_kernel)(uint32_t, uint32_t *);
typedef void (*f64_kernel)(uint32_t, uint32_t, uint32_t *);

struct variant {
  const char *ptx;
  int fn, ftz;
  f32_kernel k32;
  f64_kernel k64;
  uint32_t dump_lo, dump_n;   // one binade of inputs to dump (bits), 0 for none
  uint32_t dump2_lo, dump2_n; // a second one, where one binade does not reach every segment
};

static const variant variants[] = {
    {"rcp.approx.ftz.f32", SIM_SFU_RCP, 1, k_rcp_ftz, 0, 0x3f800000u, 1u << 23},
    {"rcp.approx.f32", SIM_SFU_RCP, 0, k_rcp, 0, 0, 0},
    {"rsqrt.approx.ftz.f32", SIM_SFU_RSQRT, 1, k_rsqrt_ftz, 0, 0x3f800000u, 1u << 24},
    {"rsqrt.approx.f32", SIM_SFU_RSQRT, 0, k_rsqrt, 0, 0, 0},
    {"sqrt.approx.ftz.f32", SIM_SFU_SQRT, 1, k_sqrt_ftz, 0, 0x3f800000u, 1u << 24},
    {"sqrt.approx.f32", SIM_SFU_SQRT, 0, k_sqrt, 0, 0, 0},
    // [0.5, 1) holds the upper half of ex2's segments with every fraction bit, [-1, -0.5) the
    // lower half (a negative input's fraction is complemented)
    {"ex2.approx.ftz.f32", SIM_SFU_EX2, 1, k_ex2_ftz, 0, 0x3f000000u, 1u << 23, 0xbf000000u, 1u << 23},
    {"ex2.approx.f32", SIM_SFU_EX2, 0, k_ex2, 0, 0, 0},
    {"lg2.approx.ftz.f32", SIM_SFU_LG2, 1, k_lg2_ftz, 0, 0x3f800000u, 1u << 23},
    {"lg2.approx.f32", SIM_SFU_LG2, 0, k_lg2, 0, 0, 0},
    // sin and cos: x in [1, 4) holds every angle of [1/4, 1/2) turn (x in [pi/2, pi)) at the
    // unit's resolution, which reaches every segment of the table
    {"sin.approx.ftz.f32", SIM_SFU_SIN, 1, k_sin_ftz, 0, 0x3f800000u, 1u << 24},
    {"sin.approx.f32", SIM_SFU_SIN, 0, k_sin, 0, 0, 0},
    {"cos.approx.ftz.f32", SIM_SFU_COS, 1, k_cos_ftz, 0, 0x3f800000u, 1u << 24},
    {"cos.approx.f32", SIM_SFU_COS, 0, k_cos, 0, 0, 0},
    // tanh: [2^-8, 8), where the unit computes (below it returns x, above 1)
    {"tanh.approx.f32", SIM_SFU_TANH, 0, k_tanh, 0, 0x3b800000u, 11u << 23},
    {"rcp.approx.ftz.f64", SIM_SFU_RCP, 1, 0, k_rcp64, 0x3ff00000u, 1u << 20},
    {"rsqrt.approx.f64", SIM_SFU_RSQRT, 0, 0, k_rsqrt64, 0x3ff00000u, 1u << 21},
    {"rsqrt.approx.ftz.f64", SIM_SFU_RSQRT, 1, 0, k_rsqrt64_ftz, 0, 0},
};

// ---- comparison on the host, in parallel ----

struct tally {
  uint64_t differ, nan_differ, within1, within2;
  uint64_t max_ulp;
  uint64_t worst_input, worst_gpu, worst_sim;
};

static int64_t ordered(uint64_t u, int wide) {
  uint64_t sign = wide ? 0x8000000000000000ull : 0x80000000u;
  return (u & sign) ? -(int64_t)(u & (sign - 1)) : (int64_t)u;
}
static int is_nan(uint64_t u, int wide) {
  return wide ? (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull
              : (u & 0x7fffffffu) > 0x7f800000u;
}

static void tally_one(tally *t, uint64_t in, uint64_t gpu, uint64_t sim, int wide) {
  if (gpu == sim) return;
  t->differ++;
  if (is_nan(gpu, wide) || is_nan(sim, wide)) {
    t->nan_differ++;
    return;
  }
  int64_t d = ordered(gpu, wide) - ordered(sim, wide);
  uint64_t ulp = (uint64_t)(d < 0 ? -d : d);
  if (ulp <= 1) t->within1++;
  if (ulp <= 2) t->within2++;
  if (ulp > t->max_ulp) {
    t->max_ulp = ulp;
    t->worst_input = in;
    t->worst_gpu = gpu;
    t->worst_sim = sim;
  }
}

struct job {
  const variant *v;
  const uint32_t *out;
  uint32_t base, first, count, lo;
  tally t;
};

static void *compare_range(void *arg) {
  job *j = (job *)arg;
  memset(&j->t, 0, sizeof j->t);
  for (uint32_t i = j->first; i < j->first + j->count; i++) {
    uint32_t in = j->base + i;
    if (j->v->k32) {
      tally_one(&j->t, in, j->out[i], sim_sfu_f32(j->v->fn, j->v->ftz, in), 0);
    } else {
      uint64_t x = (uint64_t)in << 32 | j->lo;
      uint64_t gpu = (uint64_t)j->out[2 * i + 1] << 32 | j->out[2 * i];
      tally_one(&j->t, x, gpu, sim_sfu_f64(j->v->fn, j->v->ftz, x), 1);
    }
  }
  return NULL;
}

static void merge(tally *into, const tally *t) {
  into->differ += t->differ;
  into->nan_differ += t->nan_differ;
  into->within1 += t->within1;
  into->within2 += t->within2;
  if (t->max_ulp > into->max_ulp) {
    into->max_ulp = t->max_ulp;
    into->worst_input = t->worst_input;
    into->worst_gpu = t->worst_gpu;
    into->worst_sim = t->worst_sim;
  }
}

#define THREADS 16
static void compare_chunk(const variant *v, const uint32_t *out, uint32_t base, uint32_t n,
                          uint32_t lo, tally *total) {
  pthread_t th[THREADS];
  job jobs[THREADS];
  for (int k = 0; k < THREADS; k++) {
    jobs[k].v = v;
    jobs[k].out = out;
    jobs[k].base = base;
    jobs[k].lo = lo;
    jobs[k].first = n / THREADS * k;
    jobs[k].count = k == THREADS - 1 ? n - jobs[k].first : n / THREADS;
    pthread_create(&th[k], NULL, compare_range, &jobs[k]);
  }
  for (int k = 0; k < THREADS; k++) {
    pthread_join(th[k], NULL);
    merge(total, &jobs[k].t);
  }
}

// ---- dumps: the GPU's result minus the correctly rounded one, in ulps ----

static double exact(int fn, double x) {
  switch (fn) {
    case SIM_SFU_RCP: return 1.0 / x;
    case SIM_SFU_RSQRT: return 1.0 / sqrt(x);
    case SIM_SFU_SQRT: return sqrt(x);
    case SIM_SFU_EX2: return exp2(x);
    case SIM_SFU_LG2: return log2(x);
    case SIM_SFU_SIN: return sin(x);
    case SIM_SFU_COS: return cos(x);
    default: return tanh(x);
  }
}

// One range of inputs [lo, lo + count) into DIR/<ptx>.<lo in hex>.i8.
static void dump_range(const char *dir, const variant *v, const uint32_t *out, uint32_t base,
                       uint32_t n, uint32_t lo, uint32_t count) {
  uint32_t hi = lo + count;
  if (!dir || !count || hi <= base || lo >= base + n) return;
  char path[512];
  snprintf(path, sizeof path, "%s/%s.%08x.i8", dir, v->ptx, lo);
  FILE *f = fopen(path, lo >= base ? "wb" : "ab");
  if (!f) { perror(path); exit(1); }
  uint32_t from = lo > base ? lo : base, to = hi < base + n ? hi : base + n;
  for (uint32_t in = from; in < to; in++) {
    int64_t d;
    if (v->k32) {
      float x;
      memcpy(&x, &in, 4);
      float cr = (float)exact(v->fn, x);
      uint32_t crb;
      memcpy(&crb, &cr, 4);
      d = ordered(out[in - base], 0) - ordered(crb, 0);
    } else { // the high word against the correctly rounded result's high word
      uint64_t xb = (uint64_t)in << 32;
      double x, cr;
      memcpy(&x, &xb, 8);
      cr = exact(v->fn, x);
      uint64_t crb;
      memcpy(&crb, &cr, 8);
      d = (int64_t)out[2 * (in - base) + 1] - (int64_t)(crb >> 32);
    }
    signed char c = (signed char)(d > 127 ? 127 : d < -127 ? -127 : d);
    fputc(c, f);
  }
  fclose(f);
}

static void run_variant(const variant *v, uint32_t *dev, uint32_t *host, const char *dir) {
  tally total;
  memset(&total, 0, sizeof total);
  uint64_t inputs = 0;
  // f64: every high word with the low word 0, then a second pass with a low word of all ones
  int passes = v->k64 ? 2 : 1;
  uint32_t chunk = v->k64 ? CHUNK / 2 : CHUNK;
  for (int pass = 0; pass < passes; pass++) {
    uint32_t lo = pass ? 0xffffffffu : 0;
    for (uint64_t base = 0; base < (1ull << 32); base += chunk) {
      if (v->k32)
        v->k32<<<chunk / 256, 256>>>((uint32_t)base, dev);
      else
        v->k64<<<chunk / 256, 256>>>((uint32_t)base, lo, dev);
      CHECK(cudaGetLastError());
      size_t bytes = (size_t)chunk * 4 * (v->k64 ? 2 : 1);
      CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
      compare_chunk(v, host, (uint32_t)base, chunk, lo, &total);
      if (pass == 0) {
        dump_range(dir, v, host, (uint32_t)base, chunk, v->dump_lo, v->dump_n);
        dump_range(dir, v, host, (uint32_t)base, chunk, v->dump2_lo, v->dump2_n);
      }
      inputs += chunk;
    }
  }
  int wide = v->k64 != 0;
  printf("| `%s` | %llu | %.6f%% | %llu | %llu | %llu | 0x%0*llx: GPU 0x%0*llx, sim 0x%0*llx |\n",
         v->ptx, (unsigned long long)inputs, 100.0 * (double)total.differ / (double)inputs,
         (unsigned long long)total.max_ulp, (unsigned long long)(total.differ - total.within1 - total.nan_differ),
         (unsigned long long)total.nan_differ, wide ? 16 : 8, (unsigned long long)total.worst_input,
         wide ? 16 : 8, (unsigned long long)total.worst_gpu, wide ? 16 : 8,
         (unsigned long long)total.worst_sim);
  fflush(stdout);
}

// Whether the instruction's name starts with one of the comma-separated names in `only`.
static int selected(const char *ptx, const char *only) {
  if (!only || !*only) return 1;
  for (const char *p = only; *p;) {
    size_t n = strcspn(p, ",");
    if (n && !strncmp(ptx, p, n) && ptx[n] == '.') return 1;
    p += n + (p[n] == ',');
  }
  return 0;
}


// ---- test vectors: chosen inputs and the GPU's results, as a C header ----

// Inputs every f32 function sees: zeros, subnormals, the normal range's edges, infinities,
// NaNs (quiet, signalling, negative), and values where the functions have landmarks.
static const uint32_t special32[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x007fffffu, 0x00800000u, 0x80800000u,
    0x3f800000u, 0xbf800000u, 0x3f000000u, 0x40000000u, 0x3f7fffffu, 0x3f800001u, 0x7f7fffffu,
    0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffc00001u, 0x7fffffffu,
    0x40490fdbu, 0xc0490fdbu, 0x3fc90fdbu, 0x40c90fdbu, 0x42c80000u, 0xc2c80000u, 0x43000000u,
    0xc3000000u, 0xc2fe0000u, 0x3c23d70au, 0x2edbe6ffu, 0x4b800000u, 0x5f000000u, 0x3e800000u,
};
// High words every f64 function sees (each with a low word of 0 and of all ones).
static const uint32_t special64[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x000fffffu, 0x00100000u, 0x3ff00000u, 0xbff00000u,
    0x3fe00000u, 0x40000000u, 0x3fefffffu, 0x3ff00001u, 0x7fefffffu, 0xffefffffu, 0x7ff00000u,
    0xfff00000u, 0x7ff80000u, 0x7ff00001u, 0xfff80001u, 0x7fffffffu, 0x40091eb8u, 0x7fd00000u,
    0x00200000u,
};
#define RANDOM_VECTORS 256

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 16;
}

// Runs one f32 or f64 kernel on n chosen inputs (via its base/offset form: one launch each).
static uint64_t gpu_f32(const variant *v, uint32_t x, uint32_t *dev) {
  v->k32<<<1, 1>>>(x, dev);
  CHECK(cudaGetLastError());
  uint32_t r;
  CHECK(cudaMemcpy(&r, dev, 4, cudaMemcpyDeviceToHost));
  return r;
}
static uint64_t gpu_f64(const variant *v, uint64_t x, uint32_t *dev) {
  v->k64<<<1, 1>>>((uint32_t)(x >> 32), (uint32_t)x, dev);
  CHECK(cudaGetLastError());
  uint32_t r[2];
  CHECK(cudaMemcpy(r, dev, 8, cudaMemcpyDeviceToHost));
  return (uint64_t)r[1] << 32 | r[0];
}

static void vector_line(FILE *f, const variant *v, uint64_t x, uint64_t r) {
  int wide = v->k64 != 0;
  fprintf(f, "    {\"%s\", %d, %d, %d, 0x%0*llxull, 0x%0*llxull},\n", v->ptx, v->fn, v->ftz, wide,
          wide ? 16 : 8, (unsigned long long)x, wide ? 16 : 8, (unsigned long long)r);
}

static void write_vectors(const char *path, const char *gpu, uint32_t *dev) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f, "/* sfu_vectors.h: inputs of each .approx instruction and the GPU's results, written\n"
             " * by bench/sfu/exhaustive.cu --vectors (make sfu-vectors) on %s.\n"
             " * Do not edit: tests/sim/test_sfu.c checks the simulator against them. */\n"
             "static const sfu_vector sfu_vectors[] = {\n", gpu);
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
    const variant *v = &variants[i];
    uint64_t seed = 0x5f0 + i;
    if (v->k32) {
      for (size_t j = 0; j < sizeof special32 / sizeof special32[0]; j++)
        vector_line(f, v, special32[j], gpu_f32(v, special32[j], dev));
      for (int j = 0; j < RANDOM_VECTORS; j++) {
        // half over every bit pattern, half inside the binade the function works on most
        uint32_t x = (uint32_t)lcg(&seed);
        if (j % 2 && v->dump_n) x = v->dump_lo + x % v->dump_n;
        vector_line(f, v, x, gpu_f32(v, x, dev));
      }
    } else {
      for (size_t j = 0; j < sizeof special64 / sizeof special64[0]; j++)
        for (int lo = 0; lo < 2; lo++) {
          uint64_t x = (uint64_t)special64[j] << 32 | (lo ? 0xffffffffu : 0);
          vector_line(f, v, x, gpu_f64(v, x, dev));
        }
      for (int j = 0; j < RANDOM_VECTORS; j++) {
        uint64_t x = lcg(&seed) << 32 ^ lcg(&seed);
        if (j % 2) x = (0x3ff0000000000000ull | (x & 0x000fffffffffffffull));
        vector_line(f, v, x, gpu_f64(v, x, dev));
      }
    }
  }
  fprintf(f, "};\n");
  fclose(f);
}

int main(int argc, char **argv) {
  const char *dir = argc > 2 && !strcmp(argv[1], "--dump") ? argv[2] : NULL;
  const char *only = getenv("SFU_ONLY"); // names to run, for quick checks: "sin,cos"
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  uint32_t *dev, *host;
  CHECK(cudaMalloc(&dev, (size_t)CHUNK * 4));
  CHECK(cudaMallocHost(&host, (size_t)CHUNK * 4));
  if (argc > 2 && !strcmp(argv[1], "--vectors")) {
    char gpu[320], day[16];
    time_t now = time(NULL);
    strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
    snprintf(gpu, sizeof gpu, "an %s, %s", prop.name, day);
    write_vectors(argv[2], gpu, dev);
    return 0;
  }
  printf("Measured on an %s.\n\n", prop.name);
  printf("| instruction | inputs | differ | max ulp | differ by > 1 ulp | NaN bits differ | worst input |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    if (selected(variants[i].ptx, only)) run_variant(&variants[i], dev, host, dir);
  return 0;
}
