/* test_builtin.c: cudalab's built-in array kernels (fill, arange, rand, compare), run on the
 * simulator backend so that their logic is checked without a GPU; make test-gpu runs them on
 * the GPU through the Lua API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

#include "check.h"

#ifdef CUDALAB_HAVE_SIM
/* cuda.rand's numbers as they were first defined, written out per type: the generic generator
 * (builtin_rand_host, the kernels) must keep giving exactly these. */
static double want_f64(uint64_t key, uint64_t i) {
  return (double)(builtin_mix(key + i * BUILTIN_GAMMA) >> 11) * (1.0 / 9007199254740992.0);
}
static uint16_t want_half(cl_dtype t, uint64_t key, uint64_t i) {
  uint64_t r = builtin_mix(key + i * BUILTIN_GAMMA);
  return t == DT_F16 ? dtype_f16_bits((double)(r >> 53) * (1.0 / 2048.0))
                     : dtype_bf16_bits((double)(r >> 56) * (1.0 / 256.0));
}

/* The 16-bit kernels: arange through the rounding region (ties above 2048 in f16, above 256 in
 * bf16, overflow to inf past 65519 in f16) and rand must give the host's bits; compare must
 * decode every bit pattern as the host does (NaNs never match, the rest match themselves). */
static void sixteen_bit(const cl_backend *be) {
  cl_err err;
  size_t n = 70000;
  uint16_t *h = NULL, *g = NULL;
  int rc = be->alloc((void **)&h, 65536 * 2, "u16[65536]", &err) ||
           be->alloc((void **)&g, n * 2, "u16[n]", &err);
  if (rc) {
    printf("not ok - allocation: %s\n", err.text);
    failures++;
    return;
  }
  for (int t = DT_F16; t <= DT_BF16; t++) {
    const char *name = dtype_table[t].name;
    char what[96];
    rc = builtin_arange(be, g, n, (cl_dtype)t, &err);
    int all = rc == 0;
    for (size_t i = 0; all && i < n; i++) {
      uint16_t want;
      dtype_set_f((cl_dtype)t, &want, 0, (double)i);
      all = g[i] == want;
    }
    snprintf(what, sizeof what, "%s arange rounds as the host does (ties, overflow)", name);
    CHECK(what, all);
    rc = builtin_rand(be, g, 1001, (cl_dtype)t, 77, &err);
    all = rc == 0;
    for (size_t i = 0; all && i < 1001; i++)
      all = g[i] == want_half((cl_dtype)t, builtin_mix(77), i);
    uint16_t host;
    for (size_t i = 0; all && i < 1001; i++) {
      builtin_rand_host((cl_dtype)t, builtin_mix(77), i, &host, 0);
      all = host == want_half((cl_dtype)t, builtin_mix(77), i);
    }
    snprintf(what, sizeof what, "%s rand gives the host generator's bits", name);
    CHECK(what, all);
    size_t nans = 0;
    for (size_t i = 0; i < 65536; i++) {
      h[i] = (uint16_t)i;
      double v = dtype_get_f((cl_dtype)t, h, i);
      nans += v != v;
    }
    builtin_cmp r;
    rc = builtin_compare(be, h, h, 65536, (cl_dtype)t, 0, 0, &r, &err);
    snprintf(what, sizeof what, "%s compare: only the %zu NaN patterns mismatch", name, nans);
    CHECK(what, rc == 0 && r.mismatches == nans && r.max_abs == 0 &&
                    r.first == (t == DT_F16 ? 0x7c01u : 0x7f81u));
    memcpy(g, h, 4096 * 2);
    g[1000] = dtype_f16_bits(3.0);
    if (t == DT_BF16) g[1000] = dtype_bf16_bits(3.0);
    double want = fabs(dtype_get_f((cl_dtype)t, h, 1000) - 3.0);
    rc = builtin_compare(be, h, g, 4096, (cl_dtype)t, 0, 0, &r, &err);
    snprintf(what, sizeof what, "%s compare: the difference is decoded exactly", name);
    CHECK(what, rc == 0 && r.mismatches == 1 && r.first == 1000 && r.max_abs == want);
  }
  int8_t *c = (int8_t *)g;
  rc = builtin_arange(be, c, 300, DT_I8, &err);
  CHECK("i8 arange wraps as a C cast", rc == 0 && c[127] == 127 && c[128] == -128 && c[299] == 43);
  int16_t *s16 = (int16_t *)g;
  rc = builtin_arange(be, s16, n, DT_I16, &err);
  CHECK("i16 arange", rc == 0 && s16[32767] == 32767 && s16[32768] == -32768);
  rc = builtin_arange(be, g, n, DT_U16, &err);
  CHECK("u16 arange", rc == 0 && g[65535] == 65535 && g[65536] == 0 && g[69999] == 69999 - 65536);
  memcpy(h, g, 1000 * 2);
  h[999] = 5;
  builtin_cmp r;
  rc = builtin_compare(be, g, h, 1000, DT_U16, 0, 0, &r, &err);
  CHECK("u16 compare", rc == 0 && r.mismatches == 1 && r.first == 999 && r.max_abs == 994);
  be->release(h);
  be->release(g);
}

/* compare's loop of four 16-byte loads per array (on more than four strides of the simulator's
 * full wave, 132 x 8 blocks of 256 threads), with a mismatch in each of the four loads of a
 * step, one in the loop that finishes the rest and one in the tail past the last 16 bytes, each
 * in another block: the blocks' counts, first indices and maxima are all combined. */
static void compare_wide(const cl_backend *be) {
  const size_t s = 132 * 8 * 256, nv = 4 * s + 150000, big = 4 * nv + 3;
  float *p = NULL, *q = NULL;
  cl_err err;
  int rc = be->alloc((void **)&p, big * 4, "f32[big]", &err) ||
           be->alloc((void **)&q, big * 4, "f32[big]", &err);
  for (size_t i = 0; rc == 0 && i < big; i++) p[i] = q[i] = (float)(i % 1000) + 1.0f;
  /* vector index = thread + load x stride; the element within it varies too */
  size_t bad[] = {10 * 4, (300 + s) * 4 + 1, (70000 + 2 * s) * 4 + 2, (200000 + 3 * s) * 4 + 3,
                  (100000 + 4 * s) * 4, big - 1};
  float delta[] = {0.5f, 3.0f, 0.25f, 40.0f, 0.125f, 2.0f};
  double max_abs = 0, max_rel = 0;
  for (int k = 0; rc == 0 && k < 6; k++) {
    q[bad[k]] = p[bad[k]] + delta[k];
    double d = fabs((double)p[bad[k]] - (double)q[bad[k]]);
    max_abs = fmax(max_abs, d);
    max_rel = fmax(max_rel, d / fabs((double)q[bad[k]]));
  }
  builtin_cmp r;
  rc = rc || builtin_compare(be, p, q, big, DT_F32, 0, 0, &r, &err);
  CHECK("compare: each of four loads in flight, the rest and the tail, across blocks",
        rc == 0 && r.mismatches == 6 && r.first == bad[0]);
  CHECK("compare: the blocks' maxima combine to the host's, bit for bit",
        rc == 0 && r.max_abs == max_abs && r.max_rel == max_rel);
  if (rc == 0) memcpy(q, p, big * 4);
  rc = rc || builtin_compare(be, p, q, big, DT_F32, 0, 0, &r, &err);
  CHECK("compare: large equal arrays", rc == 0 && r.mismatches == 0 && r.max_abs == 0 &&
                                           r.max_rel == 0);
  be->release(p);
  be->release(q);
}

/* The one-by-one tails of the 16-byte stores and loads, for every length modulo 16 bytes. */
static void tails(const cl_backend *be) {
  cl_err err;
  float *f = NULL;
  double *d = NULL;
  int rc = be->alloc((void **)&f, 64 * 4, "f32[64]", &err) ||
           be->alloc((void **)&d, 64 * 8, "f64[64]", &err);
  int all = rc == 0;
  for (size_t n = 1; all && n <= 9; n++) {
    memset(f, 0xff, 64 * 4);
    all = builtin_rand(be, f, n, DT_F32, 5, &err) == 0;
    for (size_t i = 0; all && i < n; i++) {
      float want = builtin_rand_f32(builtin_mix(5), i);
      all = memcmp(&f[i], &want, 4) == 0;
    }
    uint32_t past;
    memcpy(&past, &f[n], 4);
    all = all && past == 0xffffffffu;
  }
  CHECK("f32 rand of 1 to 9 numbers: the host's bits, and nothing written past the end", all);
  all = rc == 0 && builtin_arange(be, d, 7, DT_F64, &err) == 0 && d[0] == 0 && d[6] == 6;
  int32_t *i32 = (int32_t *)f;
  all = all && builtin_arange(be, i32, 11, DT_I32, &err) == 0 && i32[4] == 4 && i32[10] == 10;
  unsigned char *u8 = (unsigned char *)f;
  all = all && builtin_arange(be, u8, 255, DT_U8, &err) == 0 && u8[17] == 17 && u8[254] == 254;
  CHECK("arange of f64, i32 and u8 with tails", all);
  builtin_cmp r;
  double *e = d + 32;
  for (int i = 0; i < 7; i++) e[i] = d[i];
  e[1] = -1.0;
  e[6] = 10.0; /* the last element, past the three 16-byte loads */
  rc = rc || builtin_compare(be, d, e, 7, DT_F64, 0, 0, &r, &err);
  CHECK("f64 compare: a 16-byte load and the tail", rc == 0 && r.mismatches == 2 &&
                                                         r.first == 1 && r.max_abs == 4.0);
  be->release(f);
  be->release(d);
}
#endif

/* u64: arange past 2^32, and compare reading the elements unsigned (2^64 - 2^40 is far from
 * 2^40, where as signed integers the two would be 2^41 apart). */
static void unsigned64(const cl_backend *be) {
  cl_err err;
  uint64_t *p = NULL, *q = NULL;
  size_t n = 37;
  int rc = be->alloc((void **)&p, n * 8, "u64[37]", &err) ||
           be->alloc((void **)&q, n * 8, "u64[37]", &err);
  rc = rc || builtin_arange(be, p, n, DT_U64, &err);
  int all = rc == 0;
  for (size_t i = 0; all && i < n; i++) all = p[i] == i;
  CHECK("u64 arange with a tail", all);
  memcpy(q, p, n * 8);
  p[36] = UINT64_MAX - (1ull << 40) + 1;
  q[36] = 1ull << 40;
  builtin_cmp r;
  rc = rc || builtin_compare(be, p, q, n, DT_U64, 0, 0, &r, &err);
  CHECK("u64 compare reads elements unsigned",
        rc == 0 && r.mismatches == 1 && r.first == 36 && r.max_abs == 18446741874686296064.0);
  if (p) be->release(p);
  if (q) be->release(q);
}

int main(void) {
#ifdef CUDALAB_HAVE_SIM
  const cl_backend *be = &cl_backend_sim;
  PLAN(31);
  cl_err err;
  size_t n = 100003;
  float *a = NULL, *b = NULL;
  if (be->alloc((void **)&a, n * 4, "f32[n]", &err) || be->alloc((void **)&b, n * 4, "f32[n]", &err)) {
    printf("not ok - allocation: %s\n", err.text);
    return 1;
  }
  float v = 2.5f;
  int rc = builtin_fill(be, a, n * 4, &v, 4, &err);
  int all = rc == 0;
  for (size_t i = 0; all && i < n; i++) all = a[i] == 2.5f;
  CHECK("fill writes every element, the 16-byte body and the tail", all);
  unsigned char one = 7, *bytes = (unsigned char *)b;
  rc = builtin_fill(be, b, 37, &one, 1, &err);
  CHECK("fill of 37 single bytes", rc == 0 && bytes[0] == 7 && bytes[36] == 7 && bytes[37] == 0);

  rc = builtin_arange(be, a, n, DT_F32, &err);
  CHECK("arange", rc == 0 && a[0] == 0 && a[12345] == 12345.0f && a[n - 1] == (float)(n - 1));

  rc = builtin_rand(be, a, n, DT_F32, 42, &err);
  all = rc == 0;
  for (size_t i = 0; all && i < n; i++) {
    float want = builtin_rand_f32(builtin_mix(42), i);
    all = memcmp(&a[i], &want, 4) == 0;
  }
  CHECK("rand gives the host generator's numbers bit for bit (odd length)", all);
  double *d = NULL;
  rc = be->alloc((void **)&d, 1001 * 8, "f64[1001]", &err) || builtin_rand(be, d, 1001, DT_F64, 9, &err);
  all = rc == 0;
  for (size_t i = 0; all && i < 1001; i++) {
    double want = want_f64(builtin_mix(9), i), host;
    builtin_rand_host(DT_F64, builtin_mix(9), i, &host, 0);
    all = memcmp(&d[i], &want, 8) == 0 && memcmp(&host, &want, 8) == 0;
  }
  CHECK("f64 rand too", all);
  be->release(d);

  memcpy(b, a, n * 4);
  builtin_cmp r;
  rc = builtin_compare(be, a, b, n, DT_F32, 1e-5, 1e-8, &r, &err);
  CHECK("compare: equal arrays", rc == 0 && r.mismatches == 0 && r.max_abs == 0);
  b[10] += 1.0f;
  b[500] = NAN;
  b[n - 1] = a[n - 1] * (1 + 1e-7f);
  rc = builtin_compare(be, a, b, n, DT_F32, 1e-5, 1e-8, &r, &err);
  CHECK("compare: counts a difference and a NaN, not a rounding", rc == 0 && r.mismatches == 2);
  CHECK("compare: first mismatch", r.first == 10);
  CHECK("compare: max abs ignores the NaN", fabs(r.max_abs - 1.0) < 1e-6);
  {
    /* Fewer than four grid strides of 16-byte loads, which the loop after the four-loads steps
     * takes one at a time: mismatches in the first, second and third stride, and in the tail
     * past the last 16 bytes. */
    size_t big = 3000001;
    float *p = NULL, *q = NULL;
    rc = be->alloc((void **)&p, big * 4, "f32[big]", &err) || be->alloc((void **)&q, big * 4, "f32[big]", &err);
    for (size_t i = 0; rc == 0 && i < big; i++) p[i] = q[i] = (float)i;
    size_t bad[] = {5, 270336 * 4 + 3, 2 * 270336 * 4 + 9, big - 1};
    for (int i = 0; rc == 0 && i < 4; i++) q[bad[i]] += 0.5f;
    rc = rc || builtin_compare(be, p, q, big, DT_F32, 0, 0, &r, &err);
    CHECK("compare: one load at a time over three strides, and the tail",
          rc == 0 && r.mismatches == 4 && r.first == 5 && r.max_abs == 0.5);
    be->release(p);
    be->release(q);
  }
  unsigned char *u = NULL, *w = NULL;
  rc = be->alloc((void **)&u, 37, "u8[37]", &err) || be->alloc((void **)&w, 37, "u8[37]", &err);
  for (int i = 0; rc == 0 && i < 37; i++) u[i] = w[i] = (unsigned char)(i * 7);
  if (rc == 0) w[3] = 1, w[20] = 2, w[36] = 3; /* one in each 16-byte load, one in the tail */
  rc = rc || builtin_compare(be, u, w, 37, DT_U8, 0, 0, &r, &err);
  CHECK("compare u8: wide loads and the tail", rc == 0 && r.mismatches == 3 && r.first == 3);
  be->release(u);
  be->release(w);
  sixteen_bit(be);
  unsigned64(be);
  compare_wide(be);
  tails(be);
  be->release(a);
  be->release(b);
#else
  PLAN(1);
  printf("ok - # SKIP built without the simulator\n");
#endif
  return failures ? 1 : 0;
}
