/* test_builtin.c: cudalab's built-in array kernels (fill, arange, rand, compare), run on the
 * simulator backend so that their logic is checked without a GPU; make test-gpu runs them on
 * the GPU through the Lua API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

#include "check.h"

int main(void) {
#ifdef CUDALAB_HAVE_SIM
  const cl_backend *be = &cl_backend_sim;
  PLAN(11);
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
    double want = builtin_rand_f64(builtin_mix(9), i);
    all = memcmp(&d[i], &want, 8) == 0;
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
    /* Large enough that each thread's loop takes its two-loads-at-once path (more than two
     * grid strides of 16-byte loads), with mismatches in the first and second load of a pair
     * and in the tail past the last 16 bytes. */
    size_t big = 3000001;
    float *p = NULL, *q = NULL;
    rc = be->alloc((void **)&p, big * 4, "f32[big]", &err) || be->alloc((void **)&q, big * 4, "f32[big]", &err);
    for (size_t i = 0; rc == 0 && i < big; i++) p[i] = q[i] = (float)i;
    size_t bad[] = {5, 270336 * 4 + 3, 2 * 270336 * 4 + 9, big - 1};
    for (int i = 0; rc == 0 && i < 4; i++) q[bad[i]] += 0.5f;
    rc = rc || builtin_compare(be, p, q, big, DT_F32, 0, 0, &r, &err);
    CHECK("compare: paired loads, second of a pair, and the tail", rc == 0 && r.mismatches == 4 && r.first == 5 &&
                                                                       r.max_abs == 0.5);
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
  be->release(a);
  be->release(b);
#else
  PLAN(1);
  printf("ok - # SKIP built without the simulator\n");
#endif
  return failures ? 1 : 0;
}
