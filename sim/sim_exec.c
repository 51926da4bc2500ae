/* sim_exec.c: the warp interpreter: fetch, predicate, count, execute one pre-decoded
 * instruction for the 32 lanes of a warp, and the divergence stack.
 *
 * Stance: speed comes from doing per instruction only what must be done per instruction: one
 * switch on a type-specialised opcode, then a tight loop over the active lanes of lane-major
 * register rows (a plain 0..31 loop the compiler can vectorise when all lanes are active).
 * Divergence uses an immediate-post-dominator stack (GPGPU-Sim style): a divergent branch turns
 * the top entry into the reconvergence entry and pushes one entry per path; an entry whose pc
 * reaches its rpc pops. Exited lanes leave `live` and are dropped from entries lazily. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_run.h"
#include "sim_bits.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* The fetch loop and what it runs on every instruction: inlined into both of its copies (see
 * sim_exec_warp_plain), so that the AVX2 one is AVX2 throughout. */
#define SIM_HOT inline __attribute__((always_inline))

/* fma over the active lanes; a variant compiled for the FMA instruction set is used when the
 * CPU has it (glibc's fmaf is exact too, but a call per lane). With AVX2 as well, the whole-warp
 * loop is written so that it vectorises (NaN canonicalised by a select, not a branch): fma.f32 is
 * a quarter of a tiled matmul's instructions. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma")))
static void fma32_hw(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                     uint32_t em) {
  LANES(D[l] = bf32(__builtin_fmaf(f32(A[l]), f32(B[l]), f32(C[l]))));
}
/* Eight lanes an iteration: the low words of two 4-lane loads, picked by one shuffle, come in
 * the order 0 1 4 5 2 3 6 7, the same for every operand, and unpacking the result with zeros
 * puts lanes 0..3 and 4..7 back as two zero-extended rows. Each iteration reads its lanes of
 * every source before it writes them, so D may be a source too. A NaN becomes the canonical
 * 0x7fffffff, as the scalar loop has it. */
__attribute__((target("avx2,fma")))
static inline void fma32_warp(uint64_t *D, const uint64_t *A, const uint64_t *B,
                              const uint64_t *C) {
#define ROW4(X, k) _mm256_loadu_ps((const float *)(const void *)((X) + (k)))
#define LOW8(X, k) _mm256_shuffle_ps(ROW4(X, k), ROW4(X, (k) + 4), 0x88)
  const __m256 canon = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int k = 0; k < SIM_WARP; k += 8) {
    __m256 r = _mm256_fmadd_ps(LOW8(A, k), LOW8(B, k), LOW8(C, k));
    r = _mm256_blendv_ps(r, canon, _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
    _mm256_storeu_ps((float *)(void *)(D + k), _mm256_unpacklo_ps(r, zero));
    _mm256_storeu_ps((float *)(void *)(D + k + 4), _mm256_unpackhi_ps(r, zero));
  }
#undef LOW8
#undef ROW4
}
/* libgcc detects the CPU in a constructor at start-up, so these ask it each time rather than
 * keep a lazily set flag, which workers on several threads would race to set. Both AVX2 and FMA:
 * the fast paths it guards are compiled for both (sim_mem.c's have_avx2 asks for AVX2 alone). */
static int have_avx2_fma(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
__attribute__((target("fma")))
static void fma64_hw(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                     uint32_t em) {
  LANES(D[l] = bf64(__builtin_fma(f64(A[l]), f64(B[l]), f64(C[l]))));
}
static int have_fma(void) { return __builtin_cpu_supports("fma"); }
#else
static int have_fma(void) { return 0; }
static int have_avx2_fma(void) { return 0; }
/* Never called: have_fma() and have_avx2_fma() say no. */
static void fma32_warp(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C) {
  (void)D;
  (void)A;
  (void)B;
  (void)C;
}
static void fma32_hw(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                     uint32_t em) {
  (void)D;
  (void)A;
  (void)B;
  (void)C;
  (void)em;
}
static void fma64_hw(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                     uint32_t em) {
  (void)D;
  (void)A;
  (void)B;
  (void)C;
  (void)em;
}
#endif

/* Inline, so that in the AVX2 interpreter (compiled for FMA too) fma32_warp inlines as well. */
static SIM_HOT void fma32(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                          uint32_t em) {
  if (em == SIM_FULL && have_avx2_fma())
    fma32_warp(D, A, B, C);
  else if (have_fma())
    fma32_hw(D, A, B, C, em);
  else
    LANES(D[l] = bf32(fmaf(f32(A[l]), f32(B[l]), f32(C[l]))));
}
static void fma64(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                  uint32_t em) {
  if (have_fma())
    fma64_hw(D, A, B, C, em);
  else
    LANES(D[l] = bf64(fma(f64(A[l]), f64(B[l]), f64(C[l]))));
}

/* setp's whole-warp comparisons with AVX2, 8 lanes an instruction and their results gathered
 * by a movemask, for the CPUs that have it: the scalar loops below cost a reduction kernel, which
 * mostly tests its loop counter, a fifth of its time. Inactive lanes are compared too (their
 * rows hold old values; a comparison has no side effect) and masked off by the caller. */
#if defined(__x86_64__) && defined(__GNUC__)
/* The low 32 bits of lanes 0..7 of a row. */
__attribute__((target("avx2"))) static inline __m256i low_words(const uint64_t *A) {
  const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  __m256i x0 = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(const void *)A),
                                           pick);
  __m256i x1 = _mm256_permutevar8x32_epi32(
      _mm256_loadu_si256((const __m256i *)(const void *)(A + 4)), pick);
  return _mm256_permute2x128_si256(x0, x1, 0x20);
}

/* 32-bit integers, sub one of SIM_CMP_EQ .. SIM_CMP_HS (lo .. hs unsigned, lt .. ge signed). */
__attribute__((target("avx2"))) static inline uint32_t cmp_int_avx2(const uint64_t *A,
                                                                    const uint64_t *B, int sub) {
  int uns = sub >= SIM_CMP_LO;
  if (uns) sub -= SIM_CMP_LO - SIM_CMP_LT;
  int eq = sub == SIM_CMP_EQ || sub == SIM_CMP_NE;
  int swap = sub == SIM_CMP_LT || sub == SIM_CMP_GE; /* a < b is b > a; a >= b is !(b > a) */
  int neg = sub == SIM_CMP_NE || sub == SIM_CMP_LE || sub == SIM_CMP_GE;
  const __m256i flip = _mm256_set1_epi32(uns ? INT32_MIN : 0); /* unsigned order as signed */
  uint32_t r = 0;
  for (int k = 0; k < SIM_WARP / 8; k++) {
    __m256i a = _mm256_xor_si256(low_words(A + 8 * k), flip);
    __m256i b = _mm256_xor_si256(low_words(B + 8 * k), flip);
    __m256i m = eq ? _mm256_cmpeq_epi32(a, b) : swap ? _mm256_cmpgt_epi32(b, a)
                                                     : _mm256_cmpgt_epi32(a, b);
    r |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(m)) << (8 * k);
  }
  return neg ? ~r : r;
}

/* f32 without .ftz: each PTX comparison is one of AVX's predicates, ordered ones false and
 * unordered ones true on a NaN, as sim_compare has them. Returns 0 with *ok cleared for the
 * others. */
#define CMP_PS(P)                                                                      \
  for (int k = 0; k < SIM_WARP / 8; k++)                                               \
    r |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(                                   \
             _mm256_castsi256_ps(low_words(A + 8 * k)),                                \
             _mm256_castsi256_ps(low_words(B + 8 * k)), P)) << (8 * k);                \
  return r
__attribute__((target("avx2"))) static uint32_t cmp_f32_avx2(const uint64_t *A, const uint64_t *B,
                                                             int sub, int *ok) {
  uint32_t r = 0;
  switch (sub) {
    case SIM_CMP_EQ: CMP_PS(_CMP_EQ_OQ);
    case SIM_CMP_NE: CMP_PS(_CMP_NEQ_OQ);
    case SIM_CMP_LT: CMP_PS(_CMP_LT_OQ);
    case SIM_CMP_LE: CMP_PS(_CMP_LE_OQ);
    case SIM_CMP_GT: CMP_PS(_CMP_GT_OQ);
    case SIM_CMP_GE: CMP_PS(_CMP_GE_OQ);
    case SIM_CMP_EQU: CMP_PS(_CMP_EQ_UQ);
    case SIM_CMP_NEU: CMP_PS(_CMP_NEQ_UQ);
    case SIM_CMP_LTU: CMP_PS(_CMP_NGE_UQ);
    case SIM_CMP_LEU: CMP_PS(_CMP_NGT_UQ);
    case SIM_CMP_GTU: CMP_PS(_CMP_NLE_UQ);
    case SIM_CMP_GEU: CMP_PS(_CMP_NLT_UQ);
    case SIM_CMP_NUM: CMP_PS(_CMP_ORD_Q);
    case SIM_CMP_NAN: CMP_PS(_CMP_UNORD_Q);
    default: *ok = 0; return 0;
  }
}
#undef CMP_PS
#else
static uint32_t cmp_int_avx2(const uint64_t *A, const uint64_t *B, int sub) {
  (void)A;
  (void)B;
  (void)sub;
  return 0;
}
static uint32_t cmp_f32_avx2(const uint64_t *A, const uint64_t *B, int sub, int *ok) {
  (void)A;
  (void)B;
  (void)sub;
  *ok = 0;
  return 0;
}
#endif

/* A setp on 32-bit integers as one of SIM_CMP_EQ .. SIM_CMP_HS, the comparisons the
 * specialised loops take; -1 for other types and comparisons. */
static SIM_HOT int int32_compare(const sim_inst *in) {
  int ty = in->ty, sub = in->sub;
  if (ty != SIM_T_S32 && ty != SIM_T_U32 && ty != SIM_T_B32) return -1;
  if (ty != SIM_T_S32 && sub >= SIM_CMP_LT && sub <= SIM_CMP_GE)
    sub += SIM_CMP_LO - SIM_CMP_LT; /* unsigned lt, le, gt, ge are lo, ls, hi, hs */
  return sub <= SIM_CMP_HS ? sub : -1;
}

/* setp: mask of lanes where the comparison holds. Specialised loops for the common types. */
static uint32_t compare_lanes(const sim_inst *in, const uint64_t *A, const uint64_t *B,
                              uint32_t em) {
  uint32_t r = 0;
  int ty = in->ty, sub = int32_compare(in);
#define CMPL(T, CONV, OP) LANES(r |= (uint32_t)((T)(CONV A[l]) OP (T)(CONV B[l])) << l)
  if (sub >= 0) {
    if (have_avx2_fma()) return cmp_int_avx2(A, B, sub) & em;
    switch (sub) {
      case SIM_CMP_EQ: CMPL(uint32_t, , ==); return r;
      case SIM_CMP_NE: CMPL(uint32_t, , !=); return r;
      case SIM_CMP_LT: CMPL(int32_t, (uint32_t), <); return r;
      case SIM_CMP_LE: CMPL(int32_t, (uint32_t), <=); return r;
      case SIM_CMP_GT: CMPL(int32_t, (uint32_t), >); return r;
      case SIM_CMP_GE: CMPL(int32_t, (uint32_t), >=); return r;
      case SIM_CMP_LO: CMPL(uint32_t, , <); return r;
      case SIM_CMP_LS: CMPL(uint32_t, , <=); return r;
      case SIM_CMP_HI: CMPL(uint32_t, , >); return r;
      case SIM_CMP_HS: CMPL(uint32_t, , >=); return r;
      default: break;
    }
  }
#undef CMPL
  if (ty == SIM_T_F32 && !(in->mod & SIM_MOD_FTZ) && have_avx2_fma()) {
    int ok = 1;
    r = cmp_f32_avx2(A, B, in->sub, &ok);
    if (ok) return r & em;
  }
  if (ty == SIM_T_F32 && !(in->mod & SIM_MOD_FTZ)) {
    switch (in->sub) {
      case SIM_CMP_LT: LANES(r |= (uint32_t)(f32(A[l]) < f32(B[l])) << l); return r;
      case SIM_CMP_GT: LANES(r |= (uint32_t)(f32(A[l]) > f32(B[l])) << l); return r;
      case SIM_CMP_LE: LANES(r |= (uint32_t)(f32(A[l]) <= f32(B[l])) << l); return r;
      case SIM_CMP_GE: LANES(r |= (uint32_t)(f32(A[l]) >= f32(B[l])) << l); return r;
      default: break;
    }
  }
  if (ty == SIM_T_F32 && (in->mod & SIM_MOD_FTZ)) {
    LANES({
      float x = f32(A[l]), y = f32(B[l]);
      if (fpclassify(x) == FP_SUBNORMAL) x = 0;
      if (fpclassify(y) == FP_SUBNORMAL) y = 0;
      r |= (uint32_t)sim_compare(in->sub, ty, bf32(x), bf32(y)) << l;
    });
    return r;
  }
  LANES(r |= (uint32_t)sim_compare(in->sub, ty, A[l], B[l]) << l);
  return r;
}

/* setp's boolean operation (ty2: 1 and, 2 or, else xor) with predicate c, or its complement
 * when e is set, applied to both results. */
static void combine_pred(const sim_warp *w, const sim_inst *in, uint32_t *t, uint32_t *f) {
  uint32_t c = w->P[in->c];
  if (in->e) c = ~c;
  if (in->ty2 == 1) {
    *t &= c;
    *f &= c;
  } else if (in->ty2 == 2) {
    *t |= c;
    *f |= c;
  } else {
    *t ^= c;
    *f ^= c;
  }
}

/* The loop bounds' integer comparison compares inline (in the AVX2 interpreter, cmp_int_avx2
 * inlines too); every other goes through compare_lanes. */
static SIM_HOT void setp(sim_warp *w, const sim_inst *in, const uint64_t *R, uint32_t em) {
  const uint64_t *A = SIM_ROW(R, in->a), *B = SIM_ROW(R, in->b);
  int sub = int32_compare(in);
  uint32_t t = sub >= 0 && have_avx2_fma() ? cmp_int_avx2(A, B, sub) & em
                                           : compare_lanes(in, A, B, em);
  uint32_t f = ~t & em;
  if (in->flags & SIM_IF_BPRED) {
    combine_pred(w, in, &t, &f);
    t &= em;
    f &= em;
  }
  w->P[in->d] = (w->P[in->d] & ~em) | t;
  if (in->d2 >= 0) w->P[in->d2] = (w->P[in->d2] & ~em) | f;
}

/* Divergence-stack helpers. */
static int push(sim_worker *wk, sim_warp *w, int pc, int rpc, uint32_t mask, const sim_inst *in) {
  if (w->sp == w->cap) {
    int cap = w->cap * 2;
    if (cap > 1 << 16)
      return sim_fail(wk, w, 0, in, "control flow nests too deeply (divergence stack overflow)");
    sim_frame *s = realloc(w->stack, (size_t)cap * sizeof *s);
    if (!s) return sim_fail(wk, w, 0, in, "out of memory");
    w->stack = s;
    w->cap = cap;
  }
  w->stack[w->sp++] = (sim_frame){pc, rpc, mask};
  return 0;
}

/* A branch at pc with active lanes em taken by lanes `tk`. */
static int branch(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t m,
                  uint32_t tk) {
  sim_frame *t = &w->stack[w->sp - 1];
  uint32_t nt = m & ~tk;
  if (!nt || !tk) {
    t->pc = nt ? pc + 1 : in->target;
    return 0;
  }
  wk->ic[pc].div++;
  if (m == w->live) w->conv = w->wsync; /* the warp ran in lockstep up to here (sim_race.c) */
  int r = in->rpc >= 0 ? in->rpc : t->rpc;
  if (r == t->rpc) w->sp--;       /* same meeting point as the enclosing entry: replace it */
  else t->pc = r;                 /* the top entry waits at the meeting point */
  if (pc + 1 != r && push(wk, w, pc + 1, r, nt, in) < 0) return -1;
  if (in->target != r && push(wk, w, in->target, r, tk, in) < 0) return -1;
  return 0;
}

static int call(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  const sim_module *m = wk->run->m;
  const sim_call *c = &m->calls[in->imm];
  const sim_func *f = &m->funcs[c->func];
  if (w->ncalls == 64)
    return sim_fail(wk, w, __builtin_ctz(em), in, "device functions nest more than 64 deep");
  size_t st = wk->run->fstride;
  LANES({
    unsigned char *fp = w->fparam + (size_t)l * st;
    for (int i = 0; i < c->nargs; i++) {
      size_t n = (size_t)c->arg_size[i] < f->params[i].size ? (size_t)c->arg_size[i]
                                                             : f->params[i].size;
      memmove(fp + f->params[i].offset, fp + c->arg_off[i], n);
    }
  });
  w->calls[w->ncalls++] = (sim_retaddr){pc + 1, (int32_t)in->imm};
  return 0;
}

static int retf(sim_warp *w, const sim_module *m, size_t st, uint32_t em) {
  sim_retaddr ra = w->calls[--w->ncalls];
  const sim_call *c = &m->calls[ra.call];
  const sim_func *f = &m->funcs[c->func];
  if (c->ret_off >= 0 && f->ret_off >= 0) {
    size_t n = (size_t)(c->ret_size < f->ret_size ? c->ret_size : f->ret_size);
    LANES({
      unsigned char *fp = w->fparam + (size_t)l * st;
      memmove(fp + c->ret_off, fp + f->ret_off, n);
    });
  }
  return ra.pc;
}

/* Carry-chain arithmetic: the flag lives in w->cc. The PTX manual words subtraction with a
 * borrow (subc: a - (b + CC.CF)), but the GPU keeps one carry flag for both: a subtraction is
 * a + ~b + carry-in, sub.cc's carry-in is 1, and the flag it leaves is a carry, set when nothing
 * was borrowed. A chain of subtractions alone gives the same bits either way; a mixed one does
 * not (NVRTC's 128-bit division follows subc.cc with addc), and only this reading gives what the
 * GPU gives (tests/gpu/carry_vs_gpu.lua compares them). */
static void carry(sim_warp *w, const sim_inst *in, uint64_t *R, uint32_t em) {
  uint64_t *D = R + in->d * SIM_WARP;
  const uint64_t *A = R + in->a * SIM_WARP, *B = R + in->b * SIM_WARP;
  const uint64_t *C = R + (in->c >= 0 ? in->c : SIM_SR_ZERO) * SIM_WARP;
  int w64 = sim_type_size(in->ty) == 8;
  uint32_t out = 0;
  LANES({
    sim_u128 ci = (in->flags & SIM_IF_CIN) ? (w->cc >> l & 1) : 0, r;
    sim_u128 a = w64 ? A[l] : (uint32_t)A[l], b = w64 ? B[l] : (uint32_t)B[l];
    sim_u128 c = w64 ? C[l] : (uint32_t)C[l];
    int bits = w64 ? 64 : 32;
    uint64_t lo;
    int co;
    if (in->sub == SIM_ALU_SUB) {
      sim_u128 nb = ~b & (w64 ? ~0ull : 0xffffffffull);
      r = a + nb + ((in->flags & SIM_IF_CIN) ? ci : 1);
      co = (int)(r >> bits) & 1;
    } else {
      if (in->sub == SIM_ALU_MAD) {
        sim_u128 p = a * b;
        a = (in->flags & SIM_IF_HI) ? p >> bits : p & (w64 ? ~0ull : 0xffffffffull);
        b = c;
      }
      r = a + b + ci;
      co = (int)(r >> bits) & 1;
    }
    lo = w64 ? (uint64_t)r : (uint32_t)r;
    D[l] = lo;
    out |= (uint32_t)co << l;
  });
  if (in->flags & SIM_IF_COUT) w->cc = (w->cc & ~em) | out;
}

static uint64_t clock_value(sim_warp *w, int sub) {
  if (sub == SIM_CLK_GLOBALTIMER || sub == SIM_CLK_GT_LO || sub == SIM_CLK_GT_HI) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return sub == SIM_CLK_GLOBALTIMER ? t : sub == SIM_CLK_GT_LO ? (uint32_t)t : t >> 32;
  }
  uint64_t c = w->clock * 4; /* a few cycles per instruction */
  return sub == SIM_CLK_32 ? (uint32_t)c : sub == SIM_CLK_HI ? c >> 32 : c;
}

/* f16 / bf16 instructions, lane by lane (sim_half.c). */
static void half_lanes(const sim_inst *in, uint64_t *R, uint32_t em) {
  uint64_t *D = R + in->d * SIM_WARP;
  const uint64_t *Z = R + SIM_SR_ZERO * SIM_WARP;
  const uint64_t *A = in->a >= 0 ? R + in->a * SIM_WARP : Z;
  const uint64_t *B = in->b >= 0 ? R + in->b * SIM_WARP : Z;
  const uint64_t *C = in->c >= 0 ? R + in->c * SIM_WARP : Z;
  LANES(D[l] = sim_half(in, A[l], B[l], C[l]));
}

/* setp on half types. A packed compare sets d from the low halves and d2 from the high ones,
 * each combined with c by the boolean operation; a scalar one sets d2 to the complement. */
static void hsetp(sim_warp *w, const sim_inst *in, const uint64_t *R, uint32_t em) {
  const uint64_t *A = R + in->a * SIM_WARP, *B = R + in->b * SIM_WARP;
  int x2 = in->ty == SIM_T_F16X2 || in->ty == SIM_T_BF16X2, ftz = (in->mod & SIM_MOD_FTZ) != 0;
  uint32_t t = 0, f = 0;
  LANES({
    uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l];
    t |= (uint32_t)sim_half_compare(in->sub, in->ty, ftz, a & 0xffffu, b & 0xffffu) << l;
    if (x2) f |= (uint32_t)sim_half_compare(in->sub, in->ty, ftz, a >> 16, b >> 16) << l;
  });
  if (!x2) f = ~t;
  if (in->flags & SIM_IF_BPRED) combine_pred(w, in, &t, &f);
  t &= em;
  f &= em;
  w->P[in->d] = (w->P[in->d] & ~em) | t;
  if (in->d2 >= 0) w->P[in->d2] = (w->P[in->d2] & ~em) | f;
}

static void pack(const sim_inst *in, uint64_t *R, uint32_t em) {
  uint64_t *D = R + in->d * SIM_WARP;
  int bits = 8 * in->size;
  uint64_t msk = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  if (in->op == SIM_OP_PACK) {
    LANES({
      uint64_t v = 0;
      for (int k = 0; k < in->vec; k++) v |= (R[in->v[k] * SIM_WARP + l] & msk) << (bits * k);
      D[l] = v;
    });
  } else {
    const uint64_t *A = R + in->a * SIM_WARP;
    LANES({
      uint64_t v = A[l];
      for (int k = 0; k < in->vec; k++)
        if (in->v[k] >= 0) R[in->v[k] * SIM_WARP + l] = (v >> (bits * k)) & msk;
    });
  }
}

/* The lanes of the top entry that execute `in`: its mask under the guard predicate. */
static SIM_HOT uint32_t guard_lanes(const sim_warp *w, const sim_inst *in, uint32_t m) {
  if (in->guard < 0) return m;
  uint32_t g = w->P[in->guard];
  return m & (in->gneg ? ~g : g);
}

/* Per-instruction counters (ic: code[pc]'s), the warp clock and, when the timing model is on, its
 * latencies. */
static SIM_HOT void count_inst(sim_worker *wk, sim_warp *w, const sim_inst *code,
                               const sim_inst *in, sim_icount *ic, int pc, uint64_t mpop,
                               uint32_t em, int lat) {
  ic->warp++;
  ic->thread += mpop;
  w->clock++;
  if (!(in->flags & SIM_IF_LAT) || !lat) return;
  if (in->flags & SIM_IF_LAT_CONSUMER) sim_lat_consume(wk, w, in, code);
  if ((in->flags & (SIM_IF_LAT_PRODUCER | SIM_IF_LAT_SHARED)) && em)
    sim_lat_produce(wk->run, w, in, pc);
}

/* Integer opcodes SIM_OP_NOP .. SIM_OP_SHR_S64, whole rows at a time. Shift counts past the
 * width give 0 (or the sign) as PTX says, not C's undefined result. */
static SIM_HOT void int_lanes(const sim_inst *in, uint64_t *R, uint32_t em) {
  uint64_t *D = SIM_ROW(R, in->d);
  const uint64_t *A = SIM_ROW(R, in->a), *B = SIM_ROW(R, in->b);
  const uint64_t *C = SIM_ROW(R, in->c);
#define SX32(x) ((int64_t)(int32_t)(x))
#define SHCOUNT(x, max) ((uint32_t)(x) > (max) ? (max) : (uint32_t)(x))
  switch (in->op) {
    case SIM_OP_MOV32: LANEWISE(D[l] = (uint32_t)A[l]); break;
    case SIM_OP_MOV64: LANEWISE(D[l] = A[l]); break;
    case SIM_OP_ADD32: LANEWISE(D[l] = (uint32_t)(A[l] + B[l])); break;
    case SIM_OP_ADD64: LANEWISE(D[l] = A[l] + B[l]); break;
    case SIM_OP_SUB32: LANEWISE(D[l] = (uint32_t)(A[l] - B[l])); break;
    case SIM_OP_SUB64: LANEWISE(D[l] = A[l] - B[l]); break;
    case SIM_OP_MUL32: LANEWISE(D[l] = (uint32_t)(A[l] * B[l])); break;
    case SIM_OP_MUL64: LANEWISE(D[l] = A[l] * B[l]); break;
    case SIM_OP_MAD32: LANEWISE(D[l] = (uint32_t)(A[l] * B[l] + C[l])); break;
    case SIM_OP_MAD64: LANEWISE(D[l] = A[l] * B[l] + C[l]); break;
    case SIM_OP_MULWIDE_S32: LANEWISE(D[l] = (uint64_t)(SX32(A[l]) * SX32(B[l]))); break;
    case SIM_OP_MULWIDE_U32: LANEWISE(D[l] = (uint64_t)(uint32_t)A[l] * (uint32_t)B[l]); break;
    case SIM_OP_MADWIDE_S32: LANEWISE(D[l] = (uint64_t)(SX32(A[l]) * SX32(B[l])) + C[l]); break;
    case SIM_OP_MADWIDE_U32:
      LANEWISE(D[l] = (uint64_t)(uint32_t)A[l] * (uint32_t)B[l] + C[l]);
      break;
    case SIM_OP_AND32: LANEWISE(D[l] = (uint32_t)(A[l] & B[l])); break;
    case SIM_OP_AND64: LANEWISE(D[l] = A[l] & B[l]); break;
    case SIM_OP_OR32: LANEWISE(D[l] = (uint32_t)(A[l] | B[l])); break;
    case SIM_OP_OR64: LANEWISE(D[l] = A[l] | B[l]); break;
    case SIM_OP_XOR32: LANEWISE(D[l] = (uint32_t)(A[l] ^ B[l])); break;
    case SIM_OP_XOR64: LANEWISE(D[l] = A[l] ^ B[l]); break;
    case SIM_OP_SHL32:
      LANEWISE(D[l] = (uint32_t)B[l] > 31 ? 0 : (uint32_t)((uint32_t)A[l] << (uint32_t)B[l]));
      break;
    case SIM_OP_SHL64: LANEWISE(D[l] = (uint32_t)B[l] > 63 ? 0 : A[l] << (uint32_t)B[l]); break;
    case SIM_OP_SHR_U32:
      LANEWISE(D[l] = (uint32_t)B[l] > 31 ? 0 : (uint32_t)A[l] >> (uint32_t)B[l]);
      break;
    case SIM_OP_SHR_U64: LANEWISE(D[l] = (uint32_t)B[l] > 63 ? 0 : A[l] >> (uint32_t)B[l]); break;
    case SIM_OP_SHR_S32: LANEWISE(D[l] = (uint32_t)((int32_t)A[l] >> SHCOUNT(B[l], 31))); break;
    case SIM_OP_SHR_S64: LANEWISE(D[l] = (uint64_t)((int64_t)A[l] >> SHCOUNT(B[l], 63))); break;
    default: break; /* SIM_OP_NOP */
  }
#undef SHCOUNT
#undef SX32
}

/* Floating-point opcodes and conversions, SIM_OP_ADD_F32 .. SIM_OP_CVT_F32_U32. */
static SIM_HOT void float_lanes(const sim_inst *in, uint64_t *R, uint32_t em) {
  uint64_t *D = SIM_ROW(R, in->d);
  const uint64_t *A = SIM_ROW(R, in->a), *B = SIM_ROW(R, in->b);
  const uint64_t *C = SIM_ROW(R, in->c);
  switch (in->op) {
    case SIM_OP_ADD_F32: LANEWISE(D[l] = bf32(f32(A[l]) + f32(B[l]))); break;
    case SIM_OP_SUB_F32: LANEWISE(D[l] = bf32(f32(A[l]) - f32(B[l]))); break;
    case SIM_OP_MUL_F32: LANEWISE(D[l] = bf32(f32(A[l]) * f32(B[l]))); break;
    case SIM_OP_FMA_F32: fma32(D, A, B, C, em); break;
    case SIM_OP_ADD_F64: LANEWISE(D[l] = bf64(f64(A[l]) + f64(B[l]))); break;
    case SIM_OP_SUB_F64: LANEWISE(D[l] = bf64(f64(A[l]) - f64(B[l]))); break;
    case SIM_OP_MUL_F64: LANEWISE(D[l] = bf64(f64(A[l]) * f64(B[l]))); break;
    case SIM_OP_FMA_F64: fma64(D, A, B, C, em); break;
    case SIM_OP_CVT_U64_U32: LANEWISE(D[l] = (uint32_t)A[l]); break;
    case SIM_OP_CVT_S64_S32: LANEWISE(D[l] = (uint64_t)(int64_t)(int32_t)A[l]); break;
    case SIM_OP_CVT_F64_F32: LANEWISE(D[l] = bf64((double)f32(A[l]))); break;
    case SIM_OP_CVT_F32_S32: LANEWISE(D[l] = bf32((float)(int32_t)A[l])); break;
    default: LANEWISE(D[l] = bf32((float)(uint32_t)A[l])); break; /* SIM_OP_CVT_F32_U32 */
  }
}

/* Predicate opcodes, SIM_OP_SELP32 .. SIM_OP_PSETI: each writes only the lanes in em. */
static SIM_HOT void pred_lanes(sim_warp *w, const sim_inst *in, uint64_t *R, uint32_t em) {
  uint32_t *P = w->P;
  uint64_t *D = SIM_ROW(R, in->d);
  const uint64_t *A = SIM_ROW(R, in->a), *B = SIM_ROW(R, in->b);
  uint32_t p;
  switch (in->op) {
    case SIM_OP_SELP32:
      p = P[in->c];
      LANES(D[l] = (uint32_t)((p >> l & 1) ? A[l] : B[l]));
      break;
    case SIM_OP_SELP64:
      p = P[in->c];
      LANES(D[l] = (p >> l & 1) ? A[l] : B[l]);
      break;
    case SIM_OP_SETP: setp(w, in, R, em); break;
    case SIM_OP_PAND: P[in->d] = (P[in->d] & ~em) | (P[in->a] & P[in->b] & em); break;
    case SIM_OP_POR: P[in->d] = (P[in->d] & ~em) | ((P[in->a] | P[in->b]) & em); break;
    case SIM_OP_PXOR: P[in->d] = (P[in->d] & ~em) | ((P[in->a] ^ P[in->b]) & em); break;
    case SIM_OP_PNOT: P[in->d] = (P[in->d] & ~em) | (~P[in->a] & em); break;
    case SIM_OP_PMOV: P[in->d] = (P[in->d] & ~em) | (P[in->a] & em); break;
    default: P[in->d] = (P[in->d] & ~em) | (in->a ? em : 0); break; /* SIM_OP_PSETI */
  }
}

/* SIM_OP_ALU: the long tail of integer and float operations, a call into sim_alu() per lane;
 * absent operands read the zero row. */
static void alu_lanes(const sim_inst *in, uint64_t *R, uint32_t em) {
  const uint64_t *Z = R + SIM_SR_ZERO * SIM_WARP;
  uint64_t *D = R + in->d * SIM_WARP;
  const uint64_t *A = in->a >= 0 ? R + in->a * SIM_WARP : Z;
  const uint64_t *B = in->b >= 0 ? R + in->b * SIM_WARP : Z;
  const uint64_t *C = in->c >= 0 ? R + in->c * SIM_WARP : Z;
  const uint64_t *E = in->e >= 0 ? R + in->e * SIM_WARP : Z;
  LANES(D[l] = sim_alu(in, A[l], B[l], C[l], E[l]));
}

/* One parameter element of size bytes at p, zero- or sign-extended. Each case copies a constant
 * size, one host load: a memcpy of in->size bytes was a library call, and ld.param a fifth of a
 * vector add's time. */
static SIM_HOT uint64_t param_elem(const unsigned char *p, int size, int sgn) {
  uint64_t v = 0;
  switch (size) {
    case 8: memcpy(&v, p, 8); return v;
    case 4: {
      uint32_t x;
      memcpy(&x, p, 4);
      return sgn ? (uint64_t)(int64_t)(int32_t)x : x;
    }
    case 2: {
      uint16_t x;
      memcpy(&x, p, 2);
      return sgn ? (uint64_t)(int64_t)(int16_t)x : x;
    }
    case 1: return sgn ? (uint64_t)(int64_t)(int8_t)p[0] : p[0];
    default:
      memcpy(&v, p, (size_t)size);
      if (sgn && size < 8) v = (uint64_t)((int64_t)(v << (64 - 8 * size)) >> (64 - 8 * size));
      return v;
  }
}

/* ld.param: the kernel's parameters are the same for every lane, so each value is read once. */
static SIM_HOT void ldparam(const sim_worker *wk, const sim_inst *in, uint64_t *R, uint32_t em) {
  const unsigned char *p = wk->run->params + in->imm;
  int sgn = in->ty >= SIM_T_S8 && in->ty <= SIM_T_S64; /* sim_type_signed, inline */
  for (int k = 0; k < in->vec; k++) {
    uint64_t v = param_elem(p + k * in->size, in->size, sgn);
    uint64_t *Dk = SIM_ROW(R, in->v[k]);
    LANEWISE(Dk[l] = v);
  }
}

/* What the executors tell the fetch loop, besides 0 (next instruction), SIM_W_ERR and
 * SIM_W_BAR: a control-flow opcode (misc_op), go on at the new pc (flow), go on at it unless it
 * is the entry's reconvergence point, re-read the top of the stack, or stop at the new pc for
 * the scheduler to probe a loop (looped). */
enum { EX_FLOW = 8, EX_JUMP, EX_CHECK, EX_RELOAD, EX_PAUSE };

/* The remaining opcodes that leave the pc alone: memory, warp-wide operations, the tensor
 * cores, printf and the built-ins. Most need some lane active; a fully guarded-off instruction
 * does nothing. Returns >= 0, -1 after sim_fail, or EX_FLOW for the opcodes flow() runs. */
static SIM_HOT int misc_op(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t m,
                           uint32_t em) {
  uint64_t *R = w->R;
  uint64_t *D = SIM_ROW(R, in->d);
  uint64_t v;
  switch (in->op) {
    case SIM_OP_LD: return em ? sim_mem_ld(wk, w, in, pc, em) : 0;
    case SIM_OP_ST: return em ? sim_mem_st(wk, w, in, pc, em) : 0;
    case SIM_OP_LDPARAM: ldparam(wk, in, R, em); return 0;
    case SIM_OP_ATOM: return em ? sim_mem_atom(wk, w, in, pc, em) : 0;
    case SIM_OP_ALU: alu_lanes(in, R, em); return 0;
    case SIM_OP_PACK: case SIM_OP_UNPACK: pack(in, R, em); return 0;
    case SIM_OP_CARRY: carry(w, in, R, em); return 0;
    case SIM_OP_HALF: half_lanes(in, R, em); return 0;
    case SIM_OP_HSETP: hsetp(w, in, R, em); return 0;
    case SIM_OP_SHFL: case SIM_OP_VOTE: case SIM_OP_MATCH: case SIM_OP_REDUX: case SIM_OP_BARWARP:
      return sim_warpsync_exec(wk, w, in, em);
    case SIM_OP_TENSOR: return sim_tensor_exec(wk, w, in, pc, em);
    case SIM_OP_TEX: return em ? sim_tex_exec(wk, w, in, pc, em) : 0;
    case SIM_OP_MBAR: return em ? sim_mbar_exec(wk, w, in, em) : 0;
    case SIM_OP_FENCE: /* orders memory for the race check's release/acquire model alone */
      if (wk->hb && em) sim_hb_fence(wk, w, in, em);
      return 0;
    case SIM_OP_ACTIVEMASK: LANES(D[l] = m); return 0;
    case SIM_OP_CLOCK:
      v = clock_value(w, in->sub);
      LANES(D[l] = v);
      return 0;
    case SIM_OP_VPRINTF: return em ? sim_printf_exec(wk, w, in, em) : 0;
    case SIM_OP_BUILTIN: return sim_builtin(wk, w, in, em);
    case SIM_OP_BRA: case SIM_OP_EXIT: case SIM_OP_CALL: case SIM_OP_RETF: case SIM_OP_BAR:
    case SIM_OP_TRAP: case SIM_OP_CALLS: case SIM_OP_CALLI: case SIM_OP_RETS: case SIM_OP_MBARWAIT:
      return EX_FLOW;
    default: return sim_fail(wk, w, 0, in, "internal error: opcode %d not implemented", in->op);
  }
}

/* Opcodes that leave the pc alone, by family: the hot type-specialised families by their
 * opcode ranges (sim_int.h keeps each family together), the rest through misc_op's switch. */
static SIM_HOT int exec_data(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc,
                             uint32_t m, uint32_t em) {
  uint64_t *R = w->R;
  if (in->op <= SIM_OP_SHR_S64) int_lanes(in, R, em);
  else if (in->op <= SIM_OP_CVT_F32_U32) float_lanes(in, R, em);
  else if (in->op <= SIM_OP_PSETI) pred_lanes(w, in, R, em);
  else return misc_op(wk, w, in, pc, m, em);
  return 0;
}

/* The lanes of w missing from a barrier that em reached, when every one of them waits on the
 * kernel's exit path (sim_on_exit_path) for the rest of its warp; else 0. A divergent branch onto
 * the exit path lets its lanes leave at once (flow), but a path that ends there, having done
 * some work, waits at the final ret where its branch's paths meet again. A lane of the top entry
 * that its guard kept from the barrier goes on, and is no such lane. */
static uint32_t at_exit(const sim_worker *wk, const sim_warp *w, uint32_t em) {
  uint32_t missing = w->live & ~em, seen = 0;
  if (!missing || (w->stack[w->sp - 1].mask & missing)) return 0;
  const sim_module *m = wk->run->m;
  for (int k = w->sp - 2; k >= 0 && seen != missing; k--) {
    const sim_frame *f = &w->stack[k];
    uint32_t lanes = f->mask & missing & ~seen;
    if (!lanes) continue;
    if (f->pc < 0 || f->pc >= m->ncode || !sim_on_exit_path(&m->code[f->pc])) return 0;
    seen |= lanes;
  }
  return seen == missing ? missing : 0;
}

/* A barrier that part of a warp reached while the rest waits on the other side of the branch
 * that split them, with work to do before it ends (`if (t >= n) { o[t] = -1; return; }`): that
 * side runs first, and the barrier's lanes wait at it, 1. A GPU since Volta schedules the two
 * sides apart and its barrier awaits only the threads that have not exited, so this kernel runs
 * there; the divergence stack ran the barrier's side first and refused it. The other side is the
 * entry directly below with the same meeting point, its lanes missing from the barrier, not
 * already on its way out (at_exit's case) and not stopped at a barrier itself, so the two never
 * hand over to each other twice. Where it then goes on past the meeting point rather than out,
 * the barrier is refused as before. The barrier instruction is counted again when it runs. */
static int defer_to_other_side(const sim_worker *wk, sim_warp *w, int pc, uint32_t em) {
  if (w->sp < 2) return 0;
  sim_frame *top = &w->stack[w->sp - 1], *other = &w->stack[w->sp - 2];
  const sim_module *m = wk->run->m;
  uint32_t missing = w->live & ~em, lanes = other->mask & w->live;
  if ((top->mask & missing) || !lanes || (lanes & ~missing) || other->rpc != top->rpc ||
      other->rpc == SIM_RPC_CALL || other->pc == other->rpc || other->pc < 0 ||
      other->pc >= m->ncode)
    return 0;
  const sim_inst *next = &m->code[other->pc];
  if (sim_on_exit_path(next) || next->op == SIM_OP_BAR || next->op == SIM_OP_MBARWAIT) return 0;
  sim_frame waits = *top;
  waits.pc = pc;
  *top = *other;
  *other = waits;
  return 1;
}

/* __syncthreads() and the other barriers: the whole live warp must arrive; it then waits at
 * pc + 1 for the block, or for the warps of a barrier with a thread count, or goes on after a
 * bar.arrive (sim_barrier.c). Under the sync check a warp only part of which arrives waits too,
 * so that the report can say where the rest of the block went (sim_sanitize.c). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int barrier_checked(sim_worker *wk, sim_warp *w, sim_frame *t, const sim_inst *in, int pc,
                           uint32_t em) {
  if (em != w->live && defer_to_other_side(wk, w, pc, em)) return EX_RELOAD;
  if (em != w->live && (wk->run->san & SIM_SAN_SYNC)) return sim_sync_partial(wk, w, t, pc, em);
  /* lanes on the exit path have as good as exited, and leave now: a barrier awaits only the
   * threads that have not exited (PTX ISA, bar.sync), as the GPU's lanes of a predicated exit
   * have (to_exit) */
  if (em != w->live) w->live &= ~at_exit(wk, w, em);
  if (em != w->live) {
    sim_fail(wk, w, __builtin_ctz(em), in,
             "__syncthreads() reached by only part of a warp (lanes 0x%08x of 0x%08x): a barrier "
             "inside a branch that not all threads of the block take", em, w->live);
    return SIM_W_ERR;
  }
  return sim_bar_arrive(wk, w, t, in, pc, em); /* sim_barrier.c: 0 goes on, SIM_W_BAR waits */
}

/* __syncthreads() as most kernels reach it, a whole warp at a bar.sync with a number and no
 * count (SIM_IF_BAR_PLAIN: the number in imm) whose barrier has no phase of a counted one open,
 * waits in a few instructions: a reduction pays this at every turn of its loop. The rest, and
 * every message, are barrier_checked's. */
static inline int barrier(sim_worker *wk, sim_warp *w, sim_frame *t, const sim_inst *in, int pc,
                          uint32_t em) {
  if (em == w->live && (in->flags & SIM_IF_BAR_PLAIN) &&
      !(wk->slots[wk->cur].bar_open >> in->imm & 1))
    return sim_bar_wait(w, t, pc, (int)in->imm, 0);
  return barrier_checked(wk, w, t, in, pc, em);
}

/* Recursive and indirect calls and their returns (sim_calls.c): off the hot path. Each changes
 * the stack, so the fetch loop reloads. */
static int stacked(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t m) {
  int r;
  if (in->op == SIM_OP_CALLS)
    r = sim_call_stacked(wk, w, in, pc, m, (int)wk->run->m->calls[in->imm].func);
  else if (in->op == SIM_OP_CALLI)
    r = sim_call_indirect(wk, w, in, pc, m);
  else
    r = sim_ret_stacked(wk, w, in, m);
  return r < 0 ? SIM_W_ERR : EX_RELOAD;
}

/* Lanes em of the entry's *m leave the kernel. 1 when none of *m is left (the stack changes),
 * else 0, with *m and its count *mpop updated. */
static SIM_HOT int leave(sim_warp *w, uint32_t *m, uint64_t *mpop, uint32_t em) {
  w->live &= ~em;
  if (em == *m) return 1;
  *m &= ~em;
  *mpop = (uint64_t)sim_popcount(*m);
  return 0;
}

/* Whether a branch goes straight to the kernel's exit, as `if (i >= n) return;` and the bounds
 * check `if (i < n) {...}` do. ptxas makes it a predicated EXIT, so the lanes that take it are
 * gone at once on the GPU: they leave every membermask and every __syncthreads() then, rather
 * than wait at the exit for the rest of the warp as a divergent branch's lanes would. Straight
 * means onto the exit path (sim_on_exit_path): a -G build reaches its one final ret through
 * unguarded branches. Tested only when the branch diverges. */
static int to_exit(const sim_inst *code, const sim_inst *in) {
  return sim_on_exit_path(&code[in->target]);
}

/* w takes the backward branch at pc: 1 when it should pause for the scheduler's probe, having
 * taken this branch SIM_LOOP_TURNS times running with nothing written since, in a loop no probe
 * of this block found changing. A GPU's warp that polls a flag another warp of its block will
 * set gives the others the issue slots after an iteration or two; the simulator's slices are far
 * longer, and a warp left to poll for a whole one would count 200,000 instructions a wait. The
 * cost on every other loop is this test per iteration and, once per block, one probed pass. */
static inline int looped(const sim_worker *wk, sim_warp *w, int pc) {
  if (!w->loop_watch) return 0;
  if (pc != w->loop_pc || wk->writes != w->loop_writes) {
    w->loop_pc = pc;
    w->loop_writes = wk->writes;
    w->loop_n = 1;
    return 0;
  }
  if (++w->loop_n < SIM_LOOP_TURNS) return 0;
  w->loop_n = 0;
  for (int i = 0; i < w->ncalm && i < SIM_CALM; i++)
    if (w->calm[i] == pc) return 0;
  /* a loop that reads no memory waits on nothing another warp writes: calm without a probe,
   * which would cost a compute loop of a small block (a snapshot, a pass one instruction at a
   * time) several times its own work */
  const sim_inst *code = wk->run->m->code;
  int reads = 0;
  for (int i = code[pc].target; i <= pc && !reads; i++) {
    int op = code[i].op;
    reads = op == SIM_OP_LD || op == SIM_OP_ATOM || op == SIM_OP_MBAR || op == SIM_OP_MBARWAIT;
  }
  if (!reads) {
    w->calm[w->ncalm++ % SIM_CALM] = pc;
    return 0;
  }
  w->loop_paused = 1;
  return 1;
}

/* Control flow at *pc for the top entry t, whose live lanes are *m (an exit removes lanes, and
 * *mpop follows). A branch all of *m takes, a call and a return stay in the fetch loop; a
 * divergent branch and the stacked calls change the stack, so the loop reloads. */
static SIM_HOT int flow(sim_worker *wk, sim_warp *w, sim_frame *t, const sim_inst *in, int *pc,
                        uint32_t *m, uint64_t *mpop, uint32_t em) {
  switch (in->op) {
    case SIM_OP_BRA:
      if (em == *m) {
        int pause = in->target <= *pc && looped(wk, w, *pc);
        *pc = in->target;
        return pause ? EX_PAUSE : EX_CHECK;
      }
      if (!em) break;
      if (to_exit(wk->run->m->code, in)) {
        wk->ic[*pc].div++; /* still a divergent branch of the source, as the lessons count them */
        if (*m == w->live) w->conv = w->wsync; /* one the whole warp ran (sim_race.c) */
        if (leave(w, m, mpop, em)) return EX_RELOAD;
        break;
      }
      if (sim_on_exit_path(in + 1)) { /* the lanes that do not take it leave: -G's returns */
        wk->ic[*pc].div++;
        if (*m == w->live) w->conv = w->wsync;
        leave(w, m, mpop, *m & ~em); /* em stays */
        int pause = in->target <= *pc && looped(wk, w, *pc);
        *pc = in->target;
        return pause ? EX_PAUSE : EX_CHECK;
      }
      t->pc = *pc;
      return branch(wk, w, in, *pc, *m, em) < 0 ? SIM_W_ERR : EX_RELOAD;
    case SIM_OP_EXIT:
      if (leave(w, m, mpop, em)) return EX_RELOAD;
      break;
    case SIM_OP_CALL:
      if (call(wk, w, in, *pc, *m) < 0) return SIM_W_ERR;
      *pc = in->target;
      return EX_JUMP;
    case SIM_OP_RETF:
      *pc = retf(w, wk->run->m, wk->run->fstride, *m);
      return EX_CHECK;
    case SIM_OP_BAR:
      if (em) {
        int r = barrier(wk, w, t, in, *pc, em);
        if (r) return r;
      }
      break;
    case SIM_OP_MBARWAIT: /* may wait for a phase, and run again (sim_mbarrier.c) */
      if (em) {
        int r = sim_mbar_wait(wk, w, t, in, *pc, em);
        if (r) return r;
      }
      break;
    case SIM_OP_TRAP:
      if (!em) break;
      sim_fail(wk, w, __builtin_ctz(em), in,
               "the kernel executed a trap (__trap() or asm(\"trap;\"))");
      return SIM_W_ERR;
    default: return stacked(wk, w, in, *pc, *m); /* SIM_OP_CALLS, CALLI, RETS */
  }
  ++*pc;
  return EX_CHECK;
}

/* The fetch loop over the top entry t, whose live lanes are m: runs until its pc reaches its
 * rpc or the stack changes (EX_RELOAD), the budget runs out or a loop is to be probed
 * (SIM_W_RUN, t->pc saved; w->loop_paused tells the two apart), or the warp stops at a barrier
 * or an error. */
static SIM_HOT int run_entry(sim_worker *wk, sim_warp *w, sim_frame *t, uint32_t m,
                             uint64_t stop) {
  const sim_inst *code = wk->run->m->code;
  sim_icount *const ic0 = wk->ic;
  const int lat = wk->run->lat; /* timing model on */
  const int rpc = t->rpc;
  int pc = t->pc, r;
  /* The instruction and its counters, stepped beside pc: indexing both from pc took a multiply
   * by each one's size on every instruction. */
  const sim_inst *in = &code[pc];
  sim_icount *ic = &ic0[pc];
  uint64_t mpop = (uint64_t)sim_popcount(m); /* m changes only through exits */
  for (;;) {
    if (w->clock >= stop) {
      t->pc = pc;
      r = SIM_W_RUN;
      break;
    }
    uint32_t em = guard_lanes(w, in, m);
    count_inst(wk, w, code, in, ic, pc, mpop, em, lat);
    r = exec_data(wk, w, in, pc, m, em);
    if (r == EX_FLOW) {
      r = flow(wk, w, t, in, &pc, &m, &mpop, em);
      in = &code[pc];
      ic = &ic0[pc];
      if (r == EX_JUMP) continue;
      if (r != EX_CHECK) {
        if (r == EX_PAUSE) t->pc = pc;
        r = r == EX_PAUSE ? SIM_W_RUN : r;
        break;
      }
    } else if (r < 0) {
      /* SIM_EX_STALE: a shuffle read a lane not running it, and the warp goes on one
       * instruction at a time (sim_stale.c) from the next. Told apart here, on the error path,
       * so that the loop tests r as it did */
      if (r == SIM_EX_STALE) t->pc = pc + 1;
      r = r == SIM_EX_STALE ? SIM_W_RUN : SIM_W_ERR;
      break;
    } else {
      pc++;
      in++;
      ic++;
    }
    if (pc == rpc) {
      t->pc = pc;
      r = EX_RELOAD;
      break;
    }
  }
  return r;
}

/* The budget is spent when the warp's clock, which counts its instructions (count_inst), reaches
 * stop: a second counter, decremented beside it, took its own load, subtract and store on every
 * instruction. */
static SIM_HOT int exec_plain(sim_worker *wk, sim_warp *w, long budget) {
  const uint64_t stop = w->clock + (uint64_t)(budget > 0 ? budget : 0);
  int r;
  for (;;) {
    if (w->sp == 0) {
      w->state = SIM_W_DONE;
      return SIM_W_DONE;
    }
    sim_frame *t = &w->stack[w->sp - 1];
    uint32_t m = t->mask & w->live;
    if (!m || t->pc == t->rpc) {
      /* every lane of a stacked call's activation exited */
      if (t->rpc == SIM_RPC_CALL) sim_unwind_stacked(wk, w);
      w->sp--;
      continue;
    }
    r = run_entry(wk, w, t, m, stop);
    if (r != EX_RELOAD) return r;
  }
}

/* The interpreter twice: for the baseline instruction set, and, chosen at run time when the CPU
 * has it, for AVX2, in which the whole-warp loops of the hot opcodes take 4 lanes an
 * instruction instead of 2. The AVX2 copy runs only where FMA is there too (have_avx2_fma), so
 * it is compiled for both, and fma.f32's whole-warp loop inlines into it. (C11 mode keeps GCC
 * from contracting a * b + c on its own: -ffp-contract=off.) */
static int exec_base(sim_worker *wk, sim_warp *w, long budget) {
  return exec_plain(wk, w, budget);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma")))
static int exec_avx2(sim_worker *wk, sim_warp *w, long budget) {
  return exec_plain(wk, w, budget);
}
#else
static int exec_avx2(sim_worker *wk, sim_warp *w, long budget) {
  return exec_plain(wk, w, budget);
}
#endif

int sim_exec_warp_interp(sim_worker *wk, sim_warp *w, long budget) {
  return have_avx2_fma() ? exec_avx2(wk, w, budget) : exec_base(wk, w, budget);
}

/* A warp that has never read a lane not running a shuffle has no tags (w->stale NULL): one test
 * a call, not one an instruction. */
int sim_exec_warp_plain(sim_worker *wk, sim_warp *w, long budget) {
  if (__builtin_expect(w->stale == NULL, 1)) return sim_exec_warp_interp(wk, w, budget);
  return sim_stale_warp(wk, w, budget);
}

const sim_inst *sim_exec_next(const sim_worker *wk, const sim_warp *w, uint32_t *em,
                              uint32_t *active) {
  for (int f = w->sp - 1; f >= 0; f--) {
    const sim_frame *t = &w->stack[f];
    uint32_t m = t->mask & w->live;
    if (m && t->pc != t->rpc) {
      const sim_inst *in = &wk->run->m->code[t->pc];
      *em = guard_lanes(w, in, m);
      *active = m;
      return in;
    }
    if (t->rpc == SIM_RPC_CALL) return NULL;
  }
  return NULL;
}

/* The NaN check (cuda.sanitize{nan}) steps the warp one instruction at a time from outside the
 * fetch loop (sim_sanitize.c), so that the loop itself is the same with the check off: a test of
 * its flag per instruction, predictable as it was, cost the tiled matmul 4% of its speed, and a
 * second copy of the loop more than that. */
int sim_exec_warp(sim_worker *wk, sim_warp *w, long budget) {
  int r;
  /* under the debugger, which runs the warp one instruction at a time (sim_debugger.c) */
  if (__builtin_expect(wk->run->dbg != NULL, 0) && sim_debug_exec(wk, w, budget, &r)) return r;
  if (wk->run->hook_nan) return sim_nan_warp(wk, w, budget);
  return sim_exec_warp_plain(wk, w, budget);
}
