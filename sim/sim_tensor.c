/* sim_tensor.c: runs the warp-wide matrix instructions: wmma.load / store / mma, mma.sync,
 * ldmatrix and cp.async, with the fragment layouts of the PTX ISA and the tensor cores' own
 * way of adding.
 *
 * Stance: a fragment is a map from (lane, element) to a matrix position, and every instruction
 * is written once against that map: loads and stores walk it, an mma gathers whole matrices
 * from the warp's registers, multiplies, and scatters the result. The map for mma.m16n8k* is the
 * one the PTX ISA documents element by element; wmma's (opaque to CUDA C, visible to a kernel
 * that reads fragment.x[i]) is composed of those m16n8 tiles, with f16 a and b fragments holding
 * their distinct elements more than once (sim_frag_elems). Arithmetic is not a chain of fp32
 * FMAs: tc_dot models the tensor core's fused multi-term addition, with its parameters named at
 * the top so that one GPU run of tests/corpus/tensor.lua can settle them. None of this is on the
 * hot path: the executor reaches it through one opcode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"
#include "sim_bits.h"

/* ---- how the tensor cores add ----
 *
 * Products of two inputs are exact. A group of products plus the running accumulator is added
 * in one step: every term is aligned to the largest exponent, keeping the 24 significant bits of
 * fp32 plus TC_EXTRA_BITS below them, the rest cut off (toward zero) or rounded; the exact sum of
 * the aligned terms is normalised once to fp32, truncated or rounded (an f16 result is rounded
 * to nearest once, from the exact sum). A product's exponent is the sum of its factors', taken
 * before the product is normalised. Groups of TC_GROUP products follow one another along k. The
 * published measurements (Fasi, Higham, Mikaitis and Pranesh 2021 on V100/T4/A100; Khattak and
 * Mikaitis 2025 and Xie et al. 2025 on Hopper) find truncation, a few extra bits, and groups as
 * wide as the instruction's k for 16-bit inputs on recent parts. The values below are the
 * H200's: of 97 candidates, the probes of tests/corpus/tensor.lua matched exactly one for each
 * input type on the GPU (2 extra bits, truncation, 16 products per group for f16 and bf16, 4 for
 * tf32 in wmma), and the tf32 wmma case there settled the exponent of a product. For mma.sync,
 * tests/gpu/tensor_vs_gpu.lua's random sums match the H200 bit for bit, with eight tf32 products
 * per group in m16n8k8. */
enum {
  TC_EXTRA_BITS = 2,    /* bits kept below the largest term's 24-bit significand when aligning */
  /* 0: alignment and normalisation truncate toward zero; 1: round to nearest even */
  TC_ROUND_NEAREST = 0,
  TC_GROUP_16BIT = 16,  /* products per fused addition for f16 and bf16 inputs */
  TC_GROUP_TF32_WMMA = 4, /* products per fused addition for tf32 inputs in wmma.mma */
  TC_GROUP_TF32_MMA = 8,  /* and in mma.sync (m16n8k8 adds all eight at once) */
};

/* The double nearest x toward zero with its last bit at 2^q or above (x finite). */
static double cut(double x, int q) {
  double s = ldexp(x, -q);
  s = TC_ROUND_NEAREST ? nearbyint(s) : trunc(s);
  return ldexp(s, q);
}

/* x (exact, finite) to fp32 by the normalisation rule. Past fp32's range it is infinity, as an
 * fp32 sum would be, rather than truncation's largest finite number: the GPU's choice there is
 * not measured. */
static float to_f32(double x) {
  float f = (float)x; /* round to nearest even */
  if (!TC_ROUND_NEAREST && !isinf(f) && fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);
  return f;
}

/* The exponent the tensor core aligns by: that of x's leading bit, with zeros and subnormals
 * at their format's least normal exponent (min_exp), as a biased exponent field of 0 reads. */
static int align_exp(double x, int min_exp) {
  if (x == 0) return min_exp;
  int e = ilogb(x);
  return e < min_exp ? min_exp : e;
}

/* One fused addition: acc + sum of p[0..n), p[i] aligned by pe[i]. A product's exponent is the
 * sum of its factors' (its significand, in [1, 4), is not renormalised before alignment), so a
 * product whose significands multiply to 2 or more keeps one bit more than its leading bit
 * would suggest: the H200 does that, and normalising first misses a bit in 3 of 256 tf32 sums. */
static double fused(float acc, int acc_min_exp, const double *p, const int *pe, int n) {
  int emax = align_exp(acc, acc_min_exp), all_zero = acc == 0;
  for (int i = 0; i < n; i++) {
    if (pe[i] > emax) emax = pe[i];
    if (p[i] != 0) all_zero = 0;
  }
  if (all_zero) return acc + 0.0;
  int q = emax - 23 - TC_EXTRA_BITS; /* fp32's 23 fraction bits plus the extra ones */
  double s = cut(acc, q);
  for (int i = 0; i < n; i++) s += cut(p[i], q); /* exact in a double while TC_EXTRA_BITS < 24 */
  return s;
}

/* x (exact, finite) rounded to nearest even on f16's grid, subnormals included. An f16 result
 * is rounded once from the exact sum, not truncated to fp32 first. */
static float to_f16_grid(double x) {
  if (x == 0) return (float)x;
  int e = ilogb(x);
  int q = (e < -14 ? -14 : e) - 10;
  return (float)ldexp(nearbyint(ldexp(x, -q)), q);
}

/* c + sum a[i]*b[i] as the tensor core computes it, for inputs whose format's least normal
 * exponent is min_exp[0] (c's is min_exp[1]); f16_out rounds the result for an f16 d. Non-finite
 * inputs take IEEE's rules. */
static float tc_dot(const float *a, const float *b, int k, float c, const int min_exp[2],
                    int group, int f16_out) {
  double p[16];
  int pe[16];
  int special = !isfinite(c);
  for (int i = 0; i < k; i++) {
    p[i] = (double)a[i] * (double)b[i];
    pe[i] = align_exp(a[i], min_exp[0]) + align_exp(b[i], min_exp[0]);
    if (!isfinite(p[i])) special = 1;
  }
  if (special) {
    double s = c;
    for (int i = 0; i < k; i++) s += p[i];
    return (float)s;
  }
  for (int i = 0; i < k; i += group) {
    int n = k - i < group ? k - i : group;
    double s = fused(c, min_exp[1], p + i, pe + i, n);
    if (i + n >= k && f16_out) return to_f16_grid(s);
    c = to_f32(s);
  }
  return c;
}

/* ---- element formats ---- */

static float from_f16(uint32_t h) {
  int e = (int)(h >> 10 & 31), m = (int)(h & 1023);
  float v = e == 0    ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 1024), e - 25);
  return h & 0x8000 ? -v : v;
}

/* fp32 to f16, rounded to nearest even (what an f16 accumulator keeps). */
static uint32_t to_f16(float f) {
  uint32_t u = (uint32_t)bf32(f), sign = u >> 16 & 0x8000;
  if (f != f) return 0x7fff;
  float a = fabsf(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < ldexpf(1, -14)) /* subnormal (or rounds up to the least normal) */
    return sign | (uint32_t)nearbyintf(ldexpf(a, 24));
  int e;
  frexpf(a, &e);
  uint32_t m = (uint32_t)nearbyintf(ldexpf(a, 11 - e)); /* 11 significant bits, 1024..2048 */
  return sign | (((uint32_t)(e + 14) << 10) + (m - 1024));
}

static float elem_value(int et, uint32_t bits) {
  switch (et) {
    case SIM_TE_F16: return from_f16(bits & 0xffff);
    case SIM_TE_BF16: return f32((bits & 0xffff) << 16);
    case SIM_TE_TF32: return f32(bits & 0xffffe000u); /* the low 13 bits are not read */
    default: return f32(bits);
  }
}

static int is16(int et) { return et == SIM_TE_F16 || et == SIM_TE_BF16; }

/* ---- fragment layouts ---- */

/* mma.m16n8k*: where element i of lane l's fragment lies (g = l / 4 the group, t = l % 4 its
 * thread), after the PTX ISA's tables. et: the inputs' type; k: the instruction's. */
static void mma_a(int et, int k, int i, int l, int *r, int *c) {
  int g = l >> 2, t = l & 3;
  if (et == SIM_TE_TF32) { /* k8: 4 elements, k4: 2 */
    *r = g + 8 * (i & 1);
    *c = t + 4 * (i >> 1);
    return;
  }
  *r = g + 8 * (i >> 1 & 1);
  *c = 2 * t + (i & 1) + 8 * (i >> 2); /* k16: 8 elements, k8: 4 */
  (void)k;
}
static void mma_b(int et, int k, int i, int l, int *r, int *c) {
  int g = l >> 2, t = l & 3;
  *c = g;
  if (et == SIM_TE_TF32) *r = t + 4 * i;
  else *r = 2 * t + (i & 1) + 8 * (i >> 1);
  (void)k;
}
static void mma_c(int i, int l, int *r, int *c) {
  *r = (l >> 2) + 8 * (i >> 1);
  *c = 2 * (l & 3) + (i & 1);
}

/* Matrix position of element i of lane l of a wmma or mma fragment; 1 when this slot is the
 * element's own, 0 when it repeats one held in a lower slot (read the first, write both). */
static int frag_pos(const sim_tensor *t, int which, int i, int l, int *r, int *c) {
  int et = t->et, m = t->m, n = t->n;
  if (t->kind == SIM_TC_MMA) {
    if (which == 0) mma_a(et, t->k, i, l, r, c);
    else if (which == 1) mma_b(et, t->k, i, l, r, c);
    else mma_c(i, l, r, c);
    return 1;
  }
  if (which == 2) { /* m16 x n8 tiles of four, row-major over the tiles; m8n32: two per tile */
    if (m == 8) { /* (rows g) */
      mma_c(i & 1, l, r, c);
      *c += 8 * (i >> 1);
      return 1;
    }
    int tiles_n = n / 8, tile = i >> 2;
    mma_c(i & 3, l, r, c);
    *r += 16 * (tile / tiles_n);
    *c += 8 * (tile % tiles_n);
    return 1;
  }
  int nd = sim_frag_distinct(t, which), j = i % nd;
  if (et == SIM_TE_TF32) {
    if (which == 0) {
      mma_a(et, 8, j, l, r, c);
    } else {
      mma_b(et, 8, j & 1, l, r, c);
      *c += 8 * (j >> 1);
    }
  } else if (which == 0) { /* m16 x k16 tiles stacked along m; m8: the tile's first eight rows */
    if (m == 8) {
      mma_a(et, 16, (j & 1) | (j >> 1) << 2, l, r, c);
    } else {
      mma_a(et, 16, j & 7, l, r, c);
      *r += 16 * (j >> 3);
    }
  } else { /* k16 x n8 tiles side by side along n */
    mma_b(et, 16, j & 3, l, r, c);
    *c += 8 * (j >> 2);
  }
  return i < nd;
}

/* Rows and columns of the matrix a fragment covers. */
static void dims(const sim_tensor *t, int which, int *rows, int *cols) {
  *rows = which == 1 ? t->k : t->m;
  *cols = which == 0 ? t->k : t->n;
}

/* Element i of a fragment held in registers rows[] (16-bit elements two to a register). */
static uint32_t frag_get(const uint64_t *R, const int32_t *rows, int e16, int i, int l) {
  int row = rows[e16 ? i >> 1 : i];
  if (row < 0) return 0;
  uint32_t v = (uint32_t)R[row * SIM_WARP + l];
  return e16 ? (v >> (16 * (i & 1))) & 0xffff : v;
}
static void frag_set(uint64_t *R, const int32_t *rows, int e16, int i, int l, uint32_t v) {
  int row = rows[e16 ? i >> 1 : i];
  if (row < 0) return;
  uint64_t *x = &R[row * SIM_WARP + l];
  if (!e16) {
    *x = v;
    return;
  }
  int sh = 16 * (i & 1);
  *x = (uint32_t)((*x & ~(0xffffull << sh)) | (uint64_t)(v & 0xffff) << sh);
}

/* ---- the instructions ---- */

static int whole_warp(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em,
                      const char *what) {
  if (em == SIM_FULL) return 0;
  return sim_fail(wk, w, em ? __builtin_ctz(em) : 0, in,
                  "%s needs all 32 lanes of the warp, but only lanes 0x%08x execute it (a partial "
                  "warp, or a branch around it)", what, em);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Counts a whole wmma.load / store as one request per space, its sectors (global) or
 * wavefronts (shared, 128 bytes each) those of the distinct bytes it touches: the tile as a whole
 * is what the GPU moves, not one element after another. */
static void count_tile(sim_worker *wk, int pc, int space, uint64_t *ad, int n, int es) {
  qsort(ad, (size_t)n, sizeof *ad, cmp_u64);
  uint64_t sect = 0, bytes = 0, last_s = ~0ull, last_a = ~0ull;
  for (int i = 0; i < n; i++) {
    if (ad[i] / 32 != last_s) {
      sect++;
      last_s = ad[i] / 32;
    }
    if (ad[i] != last_a) {
      bytes += (uint64_t)es;
      last_a = ad[i];
    }
  }
  wk->ic[pc].req++;
  if (space == SIM_SP_SHARED) wk->ic[pc].wf += (bytes + 127) / 128;
  else wk->ic[pc].sect += sect;
}

/* wmma.load / wmma.store: every element's address is checked before any is moved; an f16
 * fragment's repeated slots are filled from the element's own slot, not read again. */
static int wmma_ldst(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, const sim_tensor *t,
                     uint32_t em) {
  int store = t->kind == SIM_TC_WSTORE, e16 = is16(t->et), es = e16 ? 2 : 4, rows, cols;
  int n = sim_frag_elems(t, t->which), nd = sim_frag_distinct(t, t->which);
  if (nd > n) nd = n;
  unsigned char *ptr[16][SIM_WARP];
  uint64_t all[16 * SIM_WARP];
  dims(t, t->which, &rows, &cols);
  const uint64_t *A = w->R + in->a * SIM_WARP;
  for (int i = 0; i < nd; i++) {
    uint64_t *ad = all + i * SIM_WARP;
    for (int l = 0; l < SIM_WARP; l++) {
      int r, c;
      frag_pos(t, t->which, i, l, &r, &c);
      uint64_t ld = in->b >= 0 ? (uint32_t)w->R[in->b * SIM_WARP + l]
                               : (uint64_t)(t->col ? rows : cols);
      uint64_t at = t->col ? (uint64_t)c * ld + (uint64_t)r : (uint64_t)r * ld + (uint64_t)c;
      ad[l] = A[l] + (uint64_t)in->imm + at * (uint64_t)es;
    }
    if (sim_mem_lanes(wk, w, in, -1, in->space, ad, em, es, es, store, ptr[i]) < 0) return -1;
  }
  int space = in->space;
  if (space == SIM_SP_GENERIC) { /* counted as the first lane's window says */
    uint64_t a = all[0];
    space = a - SIM_SHARED_WIN < SIM_WIN_SIZE  ? SIM_SP_SHARED
            : a - SIM_LOCAL_WIN < SIM_WIN_SIZE ? SIM_SP_LOCAL
                                               : SIM_SP_GLOBAL;
  }
  if (space != SIM_SP_LOCAL) count_tile(wk, pc, space, all, nd * SIM_WARP, es);
  for (int i = 0; i < n; i++)
    for (int l = 0; l < SIM_WARP; l++) {
      unsigned char *p = ptr[i % nd][l];
      if (store) {
        if (i >= nd) continue; /* a repeated slot: its element is stored once */
        uint32_t v = frag_get(w->R, t->d, e16, i, l);
        memcpy(p, &v, (size_t)es); /* little-endian: the low bytes */
      } else {
        uint32_t v = 0;
        memcpy(&v, p, (size_t)es);
        frag_set(w->R, t->d, e16, i, l, v);
      }
    }
  return 0;
}

/* wmma.mma and mma.sync: D = A * B + C over whole matrices gathered from the warp. */
static void mma(sim_warp *w, const sim_tensor *t) {
  float A[32 * 16] = {0}, B[16 * 32] = {0}, C[32 * 32] = {0};
  int m = t->m, n = t->n, k = t->k;
  int ae16 = is16(t->et), ce16 = t->ct == SIM_TE_F16, de16 = t->dt == SIM_TE_F16;
  const int32_t *lists[3] = {t->ra, t->rb, t->rc};
  float *mats[3] = {A, B, C};
  for (int which = 0; which < 3; which++) {
    int ne = sim_frag_elems(t, which);
    int e16 = which < 2 ? ae16 : ce16, et = which < 2 ? t->et : t->ct;
    int rows, cols;
    dims(t, which, &rows, &cols);
    for (int l = 0; l < SIM_WARP; l++)
      for (int i = 0; i < ne; i++) {
        int r, c;
        if (frag_pos(t, which, i, l, &r, &c))
          mats[which][r * cols + c] = elem_value(et, frag_get(w->R, lists[which], e16, i, l));
      }
  }
  float D[32 * 32];
  int group = TC_GROUP_16BIT;
  if (t->et == SIM_TE_TF32) group = t->kind == SIM_TC_WMMA ? TC_GROUP_TF32_WMMA : TC_GROUP_TF32_MMA;
  const int min_exp[2] = {t->et == SIM_TE_F16 ? -14 : -126, ce16 ? -14 : -126};
  for (int r = 0; r < m; r++)
    for (int c = 0; c < n; c++) {
      float a[16], b[16];
      for (int j = 0; j < k; j++) {
        a[j] = A[r * k + j];
        b[j] = B[j * n + c];
      }
      D[r * n + c] = tc_dot(a, b, k, C[r * n + c], min_exp, group, de16);
    }
  int ne = sim_frag_elems(t, 2);
  for (int l = 0; l < SIM_WARP; l++)
    for (int i = 0; i < ne; i++) {
      int r, c;
      frag_pos(t, 2, i, l, &r, &c);
      float v = D[r * n + c];
      frag_set(w->R, t->d, de16, i, l, de16 ? to_f16(v) : (uint32_t)sim_f32_canon(v));
    }
}

/* ldmatrix: lanes 8j..8j+7 give the addresses of matrix j's eight 16-byte rows; lane l receives
 * row l/4, columns 2(l%4) and 2(l%4)+1 of each matrix (with .trans, that row of the transpose). */
static int ldmatrix(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, const sim_tensor *t) {
  unsigned char *ptr[SIM_WARP];
  uint64_t ad[SIM_WARP];
  const uint64_t *A = w->R + in->a * SIM_WARP;
  uint32_t em = t->k == 4 ? SIM_FULL : (1u << (8 * t->k)) - 1;
  for (int l = 0; l < SIM_WARP; l++) ad[l] = A[l] + (uint64_t)in->imm;
  if (in->space == SIM_SP_GENERIC)
    for (int l = 0; l < SIM_WARP; l++)
      if (em >> l & 1 && ad[l] - SIM_SHARED_WIN >= SIM_WIN_SIZE)
        return sim_fail(wk, w, l, in,
                        "ldmatrix reads shared memory, but address 0x%llx is not in it",
                        (unsigned long long)ad[l]);
  if (sim_mem_lanes(wk, w, in, pc, in->space, ad, em, 16, 16, 0, ptr) < 0) return -1;
  uint32_t out[4][SIM_WARP];
  for (int j = 0; j < t->k; j++)
    for (int l = 0; l < SIM_WARP; l++) {
      int r = l >> 2, c = 2 * (l & 3);
      uint16_t lo, hi;
      if (t->trans) {
        memcpy(&lo, ptr[8 * j + c] + 2 * r, 2);
        memcpy(&hi, ptr[8 * j + c + 1] + 2 * r, 2);
      } else {
        memcpy(&lo, ptr[8 * j + r] + 2 * c, 2);
        memcpy(&hi, ptr[8 * j + r] + 2 * c + 2, 2);
      }
      out[j][l] = (uint32_t)lo | (uint32_t)hi << 16;
    }
  for (int j = 0; j < t->k; j++)
    if (t->d[j] >= 0)
      for (int l = 0; l < SIM_WARP; l++) w->R[t->d[j] * SIM_WARP + l] = out[j][l];
  return 0;
}

/* cp.async: completes at once. Lanes read src-size bytes (checked as such, so the zero-fill
 * idiom at the end of an array is no error) and write cp-size bytes, zeros past src-size. */
static int cp_async(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, const sim_tensor *t,
                    uint32_t em) {
  unsigned char *dst[SIM_WARP], *src[SIM_WARP];
  uint64_t ad[SIM_WARP] = {0}, as[SIM_WARP] = {0};
  uint32_t n[SIM_WARP] = {0}, todo = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    ad[l] = w->R[in->a * SIM_WARP + l] + (uint64_t)in->imm;
    as[l] = w->R[in->b * SIM_WARP + l] + (uint64_t)t->off2;
    n[l] = in->c >= 0 ? (uint32_t)w->R[in->c * SIM_WARP + l] : t->bytes;
    if (n[l] > t->bytes)
      return sim_fail(wk, w, l, in, "cp.async src-size %u is larger than its cp-size %d", n[l],
                      t->bytes);
    if (n[l]) todo |= 1u << l;
  }
  if (sim_mem_lanes(wk, w, in, pc, SIM_SP_SHARED, ad, em, t->bytes, t->bytes, 1, dst) < 0)
    return -1;
  /* lanes with one src-size at a time: usually all of them, or all and the zero-fill ones */
  while (todo) {
    uint32_t sz = n[__builtin_ctz(todo)], same = 0;
    for (uint32_t mm = todo; mm; mm &= mm - 1)
      if (n[__builtin_ctz(mm)] == sz) same |= 1u << __builtin_ctz(mm);
    if (sim_mem_lanes(wk, w, in, pc, SIM_SP_GLOBAL, as, same, (int)sz, t->bytes, 0, src) < 0)
      return -1;
    todo &= ~same;
  }
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (n[l]) memmove(dst[l], src[l], n[l]);
    memset(dst[l] + n[l], 0, t->bytes - n[l]);
  }
  return 0;
}

/* cvt to tf32: the f32 rounded to 10 fraction bits (.rna: ties away from zero), low 13 bits 0.
 * Rounding the magnitude's bits rounds the value: a carry into the exponent is the next binade,
 * or infinity. NaN becomes the canonical NaN; .satfinite turns infinity into the largest tf32. */
static void cvt_tf32(sim_warp *w, const sim_inst *in, const sim_tensor *t, uint32_t em) {
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    uint32_t u = (uint32_t)w->R[in->a * SIM_WARP + l], sign = u & 0x80000000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) {
      w->R[in->d * SIM_WARP + l] = 0x7fffffffu;
      continue;
    }
    if (a < 0x7f800000u) {
      if (t->trans == 0) a += 0x1000;
      else if (t->trans == 1) a += 0xfff + (a >> 13 & 1);
      a &= 0xffffe000u;
    }
    if (a == 0x7f800000u && t->satfinite) a = 0x7f7fe000u;
    w->R[in->d * SIM_WARP + l] = sign | a;
  }
}

/* The timing model (run->lat on): an instruction waits for the registers it reads that a load
 * has not delivered yet (sim_lat_consume's rule, over the side record's lists), and wmma.load
 * and ldmatrix mark when theirs arrive (sim_lat_produce's). cp.async's data goes to shared
 * memory, not registers: it is not waited for. */
static void lat_consume(sim_worker *wk, sim_warp *w, const sim_tensor *t) {
  const uint64_t *rd = w->ready;
  const int32_t *lists[4] = {t->ra, t->rb, t->rc, t->d};
  uint64_t r = 0;
  for (int j = 0; j < 4; j++) {
    if (j == 3 && t->kind != SIM_TC_WSTORE) break; /* only a store reads its d list */
    for (int k = 0; k < 8; k++)
      if (lists[j][k] >= 0 && rd[lists[j][k]] > r) r = rd[lists[j][k]];
  }
  if ((r >> 24) > sim_warp_time(w)) sim_lat_wait(wk, w, r, wk->run->m->code);
}

static void lat_produce(sim_worker *wk, sim_warp *w, const sim_inst *in, const sim_tensor *t) {
  const sim_run *run = wk->run;
  uint64_t lat = in->flags & SIM_IF_LAT_SHARED ? run->lat_shared : run->lat_global;
  uint64_t at = sim_warp_time(w) + lat;
  uint64_t v = at << 24 | (uint64_t)(in - run->m->code);
  for (int k = 0; k < 8; k++)
    if (t->d[k] >= 0) w->ready[t->d[k]] = v;
}

int sim_tensor_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  const sim_tensor *t = &wk->run->m->tensor[in->aux];
  if (!em) return 0; /* guarded off in every lane */
  if (wk->run->lat) {
    lat_consume(wk, w, t);
    if (t->kind == SIM_TC_WLOAD || t->kind == SIM_TC_LDMATRIX) lat_produce(wk, w, in, t);
  }
  switch (t->kind) {
    case SIM_TC_CPASYNC: return cp_async(wk, w, in, pc, t, em);
    case SIM_TC_CVT_TF32:
      cvt_tf32(w, in, t, em);
      return 0;
    case SIM_TC_WLOAD:
    case SIM_TC_WSTORE: {
      const char *what = t->kind == SIM_TC_WLOAD ? "wmma.load (wmma::load_matrix_sync)"
                                                 : "wmma.store (wmma::store_matrix_sync)";
      if (whole_warp(wk, w, in, em, what) < 0) return -1;
      return wmma_ldst(wk, w, in, pc, t, em);
    }
    case SIM_TC_WMMA:
    case SIM_TC_MMA: {
      const char *what = t->kind == SIM_TC_WMMA ? "wmma.mma (wmma::mma_sync)" : "mma.sync";
      if (whole_warp(wk, w, in, em, what) < 0) return -1;
      mma(w, t);
      return 0;
    }
    case SIM_TC_LDMATRIX:
      if (whole_warp(wk, w, in, em, "ldmatrix") < 0) return -1;
      return ldmatrix(wk, w, in, pc, t);
    default: return sim_fail(wk, w, 0, in, "internal error: tensor instruction kind %d", t->kind);
  }
}
