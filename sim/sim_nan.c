/* sim_nan.c: the NaN check (cuda.sanitize{nan}): when a kernel writes a NaN or an infinity to
 * memory, where that value was made, with the thread, the block, the source line and the
 * instruction with its operands ("div.rn.f32 of 1.0 by 0.0 gave inf").
 *
 * Stance: a value is followed, not an instruction judged. Reporting the first instruction that
 * makes a NaN or an infinity from finite operands is wrong both ways. The math library computes
 * with infinities on finite arguments and throws them away (tanhf(100.0f) overflows an exp2 on
 * its way to 1.0, atan2f divides 0 by 0 and picks pi/2, logf(1e38f) scales its argument past
 * the largest float), so that rule stops correct kernels; and it makes its own NaNs and
 * infinities from constants (logf(-0.5f) is fma(x, +inf, +inf), logf(0.0f) the constant -inf
 * chosen by a test x == 0), which that rule never sees. So each warp keeps, beside its
 * registers, a tag on every register lane that holds a NaN or an infinity the kernel made itself
 * (K_ARITH, K_PICK) or copied from a constant (K_CONST); a NaN or an infinity without a tag came
 * from memory or a parameter, and whatever is computed from it is the input's fault, never
 * reported. Tags follow moves, selects, min / max, sign changes, shuffles and the arithmetic
 * that keeps a value non-finite; the report comes when a store or an atomic writes a made value
 * to memory (other than a call's parameters), naming the instruction that made it. A copied
 * constant is never reported: a learner's `float m = -INFINITY;`, or `i < n ? x[i] : -INFINITY`
 * as a reduction's fill, is meant. A constant becomes a made value (K_PICK) when a select or a
 * predicated move picks it under a test of finite floats (the library's answer at a pole), or
 * when arithmetic on it makes a NaN from no NaN (inf - inf, 0 * inf).
 *
 * The tags are register-lane tags (sim_lanetags.c), void once a write the check does not follow
 * (a stacked call's return restores rows) changes their register: a lost tag can hide a finding,
 * never make one up. What a branch rather than a select picks (if (x == 0) r = -INFINITY;) is
 * not followed, nor values through shared or local memory, which count as input when read back.
 *
 * The strict check (SIM_SAN_NAN_MADE, cuda.sanitize{nan = "made"}) reports a made value where it
 * is made (K_ARITH, K_PICK), stored or not: a lesson that asks for a kernel making no NaN at all
 * must fail `isnan(v) ? 0.0f : v`. Its price is the old rule's: the math library's infinities
 * made on the way to a finite answer are reported too. The check runs on its own path
 * (sim_exec_warp), one instruction at a time, so a launch without it pays nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_bits.h"
#include "sim_lanetags.h"
#include "sim_run.h"

enum { K_CONST, K_ARITH, K_PICK }; /* a copy of a constant; made by arithmetic; a constant picked */

/* One register lane holding a NaN or an infinity that did not come in as input. */
typedef struct nan_tag {
  sim_lanetag at;  /* its register row, lane and bits */
  uint8_t blane;   /* the lane that made it (a shuffle moves values between lanes) */
  uint8_t kind;    /* K_* */
  uint8_t n;       /* operands in v: K_ARITH the instruction's, K_PICK the test's two */
  int32_t pc;      /* K_ARITH, K_PICK: the instruction that made it */
  int32_t spc;     /* K_PICK: the setp whose test picked it */
  double v[3];     /* the operands, for the report */
  double result;   /* the value made */
} nan_tag;

/* The float test that last set one predicate lane: a constant picked by it counts as made. */
typedef struct nan_test {
  int32_t pc;  /* the setp, -1 when the lane was set otherwise */
  double a, b; /* what it compared */
} nan_test;

/* A warp's tags. */
struct sim_nantags {
  sim_lanetags tags; /* nan_tags, on register rows */
  nan_test *test;    /* npreds x 32: each predicate lane's test */
  int npreds;
  /* Per lane, the float test of the innermost conditional branch it is still inside (between
   * the branch and its reconvergence point br_rpc; -1 none): a constant moved there is picked by
   * that test, as powf(-0.5f, 0.5f) moves its NaN past a branch on x >= 0. */
  nan_test br[SIM_WARP];
  int32_t br_rpc[SIM_WARP];
};

sim_nantags *sim_nan_alloc(const sim_module *m) {
  sim_nantags *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->npreds = m->npreds + 1;
  s->test = malloc((size_t)s->npreds * SIM_WARP * sizeof *s->test);
  if (sim_lanetags_init(&s->tags, m->nrows, sizeof(nan_tag)) < 0 || !s->test) {
    sim_nan_free(s);
    return NULL;
  }
  sim_nan_clear(s);
  return s;
}

void sim_nan_free(sim_nantags *s) {
  if (!s) return;
  sim_lanetags_free(&s->tags);
  free(s->test);
  free(s);
}

void sim_nan_clear(sim_nantags *s) {
  sim_lanetags_clear(&s->tags);
  for (int i = 0; i < s->npreds * SIM_WARP; i++) s->test[i].pc = -1;
  for (int l = 0; l < SIM_WARP; l++) s->br_rpc[l] = -1;
}

/* Tags lane l of row, which holds bits, with t (the list's own may move: a copy). */
static void add(sim_nantags *s, nan_tag t, int row, int l, uint64_t bits) {
  sim_lanetags_add(&s->tags, &t, row, l, bits);
}

/* ---- what an instruction does to them ---- */

/* How many f32 / f64 operands the instruction has when it is arithmetic that can make a NaN or
 * an infinity, else 0. */
static int arith_operands(const sim_inst *in) {
  switch (in->op) {
    case SIM_OP_ADD_F32: case SIM_OP_SUB_F32: case SIM_OP_MUL_F32:
    case SIM_OP_ADD_F64: case SIM_OP_SUB_F64: case SIM_OP_MUL_F64: return 2;
    case SIM_OP_FMA_F32: case SIM_OP_FMA_F64: return 3;
    case SIM_OP_ALU: break;
    default: return 0;
  }
  if (in->ty != SIM_T_F32 && in->ty != SIM_T_F64) return 0;
  switch (in->sub) {
    case SIM_ALU_ADD: case SIM_ALU_SUB: case SIM_ALU_MUL: case SIM_ALU_DIV: return 2;
    case SIM_ALU_FMA: case SIM_ALU_DIV_ADD: return 3;
    case SIM_ALU_SQRT: case SIM_ALU_RCP: case SIM_ALU_RSQRT: case SIM_ALU_EX2: case SIM_ALU_LG2:
    case SIM_ALU_SIN: case SIM_ALU_COS: case SIM_ALU_CVT: return 1;
    default: return 0;
  }
}

/* Bits of the value the instruction moves when it only moves, selects or changes the sign of a
 * value (32 or 64; its result is one of its operands, maybe with another sign bit), else 0. */
static int move_width(const sim_inst *in) {
  switch (in->op) {
    case SIM_OP_MOV32: case SIM_OP_SELP32: return 32;
    case SIM_OP_MOV64: case SIM_OP_SELP64: return 64;
    case SIM_OP_ALU: break;
    default: return 0;
  }
  switch (in->sub) {
    case SIM_ALU_MOV: case SIM_ALU_MIN: case SIM_ALU_MAX: case SIM_ALU_NEG: case SIM_ALU_ABS:
    case SIM_ALU_AND: case SIM_ALU_OR: case SIM_ALU_XOR: case SIM_ALU_COPYSIGN: break;
    default: return 0;
  }
  int size = sim_type_size(in->ty);
  return size == 4 ? 32 : size == 8 ? 64 : 0;
}

/* Whether bits, read as a float of `width` bits, are a NaN or an infinity. */
static int nonfinite(uint64_t bits, int width) {
  return width == 64 ? (bits >> 52 & 0x7ff) == 0x7ff : (bits >> 23 & 0xff) == 0xff;
}

/* The value in a register of type ty, as a double (integers of a cvt's source too). */
static double value_of(int ty, uint64_t x) {
  switch (ty) {
    case SIM_T_F32: return (double)f32(x);
    case SIM_T_F64: return f64(x);
    case SIM_T_S8: return (double)(int8_t)x;
    case SIM_T_S16: return (double)(int16_t)x;
    case SIM_T_S32: return (double)(int32_t)x;
    case SIM_T_S64: return (double)(int64_t)x;
    case SIM_T_U8: case SIM_T_B8: return (double)(uint8_t)x;
    case SIM_T_U16: case SIM_T_B16: return (double)(uint16_t)x;
    case SIM_T_U32: case SIM_T_B32: return (double)(uint32_t)x;
    default: return (double)x;
  }
}

/* The type of an arithmetic instruction's result and of its operands. */
static void arith_types(const sim_inst *in, int *dty, int *sty) {
  *dty = in->op == SIM_OP_ALU ? in->ty : in->op >= SIM_OP_ADD_F64 ? SIM_T_F64 : SIM_T_F32;
  *sty = in->op == SIM_OP_ALU && in->sub == SIM_ALU_CVT ? in->ty2 : *dty;
}

/* The float test of predicate p in lane l, or of nothing (pc -1). */
static nan_test test_of(const sim_nantags *s, int p, int l) {
  nan_test none = {-1, 0, 0};
  return p >= 0 && p < s->npreds ? s->test[p * SIM_WARP + l] : none;
}

enum { C_FINITE, C_INPUT, C_CONST, C_MADE };

/* What operand `row` held in lane l (bits, before the instruction ran): a finite number, a
 * NaN or an infinity from input, a copied constant, or one the kernel made (*made). */
static int classify(sim_nantags *s, const sim_module *m, int row, int l, uint64_t bits, int nf,
                    nan_tag **made) {
  if (!nf) return C_FINITE;
  if (row >= m->const_first) return C_CONST;
  nan_tag *t = sim_lanetags_find(&s->tags, row, l, bits);
  if (!t) return C_INPUT;
  if (t->kind == K_CONST) return C_CONST;
  *made = t;
  return C_MADE;
}

/* Lane l of an arithmetic instruction gave the non-finite r from operands ops (n rows): 1 with
 * the tag in *fresh when the value is made here (K_ARITH), else 0. */
static int arith_lane(sim_nantags *s, const sim_module *m, const sim_inst *in, int pc, int l,
                      const uint64_t *ops, int n, double r, uint64_t bits, nan_tag *fresh) {
  const int rows[3] = {in->a, in->b, in->c};
  int dty, sty, konst = 0, nan_in = 0;
  arith_types(in, &dty, &sty);
  nan_tag *made = NULL, t = {0};
  for (int k = 0; k < n; k++) {
    t.v[k] = value_of(sty, ops[k * SIM_WARP + l]);
    int c = classify(s, m, rows[k] >= 0 ? rows[k] : SIM_SR_ZERO, l, ops[k * SIM_WARP + l],
                     !isfinite(t.v[k]), &made);
    if (c == C_INPUT) return 0; /* the input's NaN or infinity, carried on */
    konst |= c == C_CONST;
    nan_in |= isnan(t.v[k]) != 0;
  }
  if (made) {
    add(s, *made, in->d, l, bits);
    return 0;
  }
  t.kind = K_ARITH;
  /* an infinity carried on from a constant (-inf * 2) is still the constant; a NaN made from
   * one (inf - inf, 0 * inf) is made here */
  if (konst && !(isnan(r) && !nan_in)) t.kind = K_CONST;
  t.blane = (uint8_t)l;
  t.n = (uint8_t)n;
  t.pc = pc;
  t.result = r;
  add(s, t, in->d, l, bits);
  *fresh = t;
  return t.kind != K_CONST;
}

/* The float test that chose lane l's operand: a selp's predicate's, else the instruction's
 * guard's, else the branch it is inside; pc -1 none. */
static nan_test chooser(const sim_nantags *s, const sim_inst *in, int l) {
  if (in->op == SIM_OP_SELP32 || in->op == SIM_OP_SELP64) return test_of(s, in->c, l);
  if (in->guard >= 0) return test_of(s, in->guard, l);
  nan_test none = {-1, 0, 0};
  return s->br_rpc[l] >= 0 ? s->br[l] : none;
}

/* Lane l of a move gave the non-finite bits, one of its operands (ops, rows a b) maybe with
 * another sign: that operand's tag goes on; a constant picked by a float test is made here
 * (K_PICK): 1 with its tag in *fresh, else 0. */
static int move_lane(sim_nantags *s, const sim_module *m, const sim_warp *w, const sim_inst *in,
                     int pc, int l, const uint64_t *ops, int width, uint64_t bits,
                     nan_tag *fresh) {
  uint64_t sign = width == 64 ? 1ull << 63 : 1ull << 31;
  int rows[2] = {in->a, in->b}, n = in->b >= 0 && in->op != SIM_OP_MOV32 &&
                                        in->op != SIM_OP_MOV64 ? 2 : 1;
  if (in->op == SIM_OP_SELP32 || in->op == SIM_OP_SELP64) { /* the one chosen */
    int second = !(w->P[in->c] >> l & 1);
    rows[0] = rows[second];
    ops += second * SIM_WARP;
    n = 1;
  }
  for (int k = 0; k < n; k++) {
    uint64_t x = ops[k * SIM_WARP + l];
    if (rows[k] < 0 || ((x ^ bits) & ~sign & (width == 64 ? ~0ull : 0xffffffffull))) continue;
    nan_tag *made = NULL;
    int c = classify(s, m, rows[k], l, x, 1, &made);
    if (c == C_INPUT) return 0;
    if (c == C_MADE) {
      add(s, *made, in->d, l, bits);
      return 0;
    }
    nan_test q = chooser(s, in, l);
    nan_tag t = {0};
    t.kind = q.pc >= 0 ? K_PICK : K_CONST;
    t.blane = (uint8_t)l;
    t.pc = pc;
    t.spc = q.pc;
    t.n = 2;
    t.v[0] = q.a;
    t.v[1] = q.b;
    t.result = width == 64 ? f64(bits) : (double)f32(bits);
    add(s, t, in->d, l, bits);
    *fresh = t;
    return t.kind != K_CONST;
  }
  return 0;
}

/* A shuffle moved lane values: a tag goes with its value to the lanes that got it. */
static void shfl_lanes(sim_nantags *s, const sim_warp *w, const sim_inst *in, uint32_t em,
                       const uint64_t *ops) {
  if (!s->tags.n) return;
  const uint64_t *D = w->R + in->d * SIM_WARP;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (!nonfinite(D[l], 32)) continue;
    for (int i = 0; i < s->tags.n; i++) {
      nan_tag *t = (nan_tag *)sim_lanetags_at(&s->tags, i);
      if (t->at.slot == in->a && t->at.bits == ops[t->at.lane] && t->at.bits == D[l]) {
        add(s, *t, in->d, l, D[l]);
        break;
      }
    }
  }
}

/* The register rows an instruction writes, into rows (at most 4); how many. Predicates, and
 * what tensor instructions write, are not among them. */
static int written(const sim_inst *in, int *rows) {
  int n = 0;
  if (sim_writes_pred(in->op)) return 0;
  switch (in->op) {
    case SIM_OP_ST: case SIM_OP_BRA: case SIM_OP_EXIT: case SIM_OP_RETF: case SIM_OP_RETS:
    case SIM_OP_CALL: case SIM_OP_CALLS: case SIM_OP_CALLI: case SIM_OP_TRAP: case SIM_OP_NOP:
    case SIM_OP_FENCE:
    case SIM_OP_BARWARP: case SIM_OP_TENSOR: case SIM_OP_VPRINTF: return 0;
    case SIM_OP_BAR: return in->sub == SIM_BAR_POPC ? (rows[0] = in->d, 1) : 0;
    case SIM_OP_VOTE: return in->sub == SIM_VOTE_BALLOT ? (rows[0] = in->d, 1) : 0;
    case SIM_OP_LD: case SIM_OP_UNPACK: case SIM_OP_TEX:
      for (int k = 0; k < 4; k++)
        if (in->v[k] >= 0 && (in->op == SIM_OP_TEX || k < in->vec)) rows[n++] = in->v[k];
      return n;
    default: break;
  }
  if (in->d >= 0) rows[n++] = in->d;
  return n;
}

/* Keeps, per predicate lane, the float test that set it, for the selects that read it: a setp
 * of f32 / f64 operands neither of which came in as a NaN or an infinity; and/or/not of
 * predicates pass the first operand's test on. */
static void tests_after(sim_nantags *s, const sim_module *m, const sim_warp *w,
                        const sim_inst *in, uint32_t em) {
  int d[2] = {-1, -1};
  if (sim_writes_pred(in->op) || in->op == SIM_OP_HSETP) d[0] = in->d;
  if (in->op == SIM_OP_SETP || in->op == SIM_OP_HSETP || in->op == SIM_OP_SHFL ||
      in->op == SIM_OP_MATCH) d[1] = in->d2;
  if ((in->op == SIM_OP_VOTE && in->sub != SIM_VOTE_BALLOT) ||
      (in->op == SIM_OP_BAR && in->sub != SIM_BAR_POPC && in->sub != 0)) d[0] = in->d;
  if (d[0] < 0 && d[1] < 0) return;
  int fl = in->op == SIM_OP_SETP && (in->ty == SIM_T_F32 || in->ty == SIM_T_F64);
  int width = in->ty == SIM_T_F64 ? 64 : 32;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    nan_test t = {-1, 0, 0};
    if (fl) {
      uint64_t a = w->R[in->a * SIM_WARP + l], b = w->R[in->b * SIM_WARP + l];
      nan_tag *made = NULL;
      if (classify(s, m, in->a, l, a, nonfinite(a, width), &made) != C_INPUT &&
          classify(s, m, in->b, l, b, nonfinite(b, width), &made) != C_INPUT)
        t = (nan_test){(int32_t)(in - m->code), value_of(in->ty, a), value_of(in->ty, b)};
    }
    if (t.pc < 0 && in->op == SIM_OP_SETP && (in->flags & SIM_IF_BPRED)) t = test_of(s, in->c, l);
    if (in->op >= SIM_OP_PAND && in->op <= SIM_OP_PMOV) {
      t = test_of(s, in->a, l);
      if (t.pc < 0 && in->op <= SIM_OP_PXOR) t = test_of(s, in->b, l);
    }
    for (int k = 0; k < 2; k++)
      if (d[k] >= 0 && d[k] < s->npreds) s->test[d[k] * SIM_WARP + l] = t;
  }
}

static int report(sim_worker *wk, sim_warp *w, const nan_tag *t, const sim_inst *store);

/* After lanes em of the instruction at pc ran, with its a, b, c operand rows as they were
 * before in ops: tags of what it wrote dropped, and put on what it made or carried on. Under
 * the strict check (SIM_SAN_NAN_MADE) a value made here is the finding: -1 with it reported,
 * else 0. */
static int tags_after(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em,
                      uint32_t active, const uint64_t *ops) {
  sim_nantags *s = w->nan;
  const sim_module *m = wk->run->m;
  if (in->op == SIM_OP_BRA && in->guard >= 0 && in->rpc >= 0)
    for (uint32_t mm = active; mm; mm &= mm - 1) {
      int l = __builtin_ctz(mm);
      s->br[l] = test_of(s, in->guard, l);
      s->br_rpc[l] = s->br[l].pc >= 0 ? in->rpc : -1;
    }
  int rows[4], nw = written(in, rows);
  for (int k = 0; k < nw; k++) sim_lanetags_untag(&s->tags, rows[k], em);
  tests_after(s, m, w, in, em);
  int n = arith_operands(in), width = move_width(in);
  if (!n && !width && in->op != SIM_OP_SHFL) return 0;
  if (in->op == SIM_OP_SHFL) {
    shfl_lanes(s, w, in, em, ops);
    return 0;
  }
  int strict = (wk->run->san & SIM_SAN_NAN_MADE) != 0;
  int dty, sty;
  arith_types(in, &dty, &sty);
  const uint64_t *D = w->R + in->d * SIM_WARP;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), made = 0;
    nan_tag t;
    if (n) {
      double r = value_of(dty, D[l]);
      if (!isfinite(r)) made = arith_lane(s, m, in, pc, l, ops, n, r, D[l], &t);
    } else if (nonfinite(D[l], width)) {
      made = move_lane(s, m, w, in, pc, l, ops, width, D[l], &t);
    }
    if (made && strict) return report(wk, w, &t, NULL);
  }
  return 0;
}

/* ---- the report ---- */

/* A value as the report shows it: "1.0", "0.1", "3.40282347e+38", "inf", "nan". */
static void value_text(double v, int wide, char *buf, size_t len) {
  if (isnan(v)) snprintf(buf, len, "nan");
  else if (isinf(v)) snprintf(buf, len, v > 0 ? "inf" : "-inf");
  else if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, len, "%.1f", v);
  else snprintf(buf, len, wide ? "%.17g" : "%.9g", v);
}

/* The operation's PTX name without types, as the kernel's PTX spells it. */
static const char *op_word(const sim_inst *in) {
  switch (in->op) {
    case SIM_OP_ADD_F32: case SIM_OP_ADD_F64: return "add";
    case SIM_OP_SUB_F32: case SIM_OP_SUB_F64: return "sub";
    case SIM_OP_MUL_F32: case SIM_OP_MUL_F64: return "mul";
    case SIM_OP_FMA_F32: case SIM_OP_FMA_F64: return "fma.rn";
    case SIM_OP_SELP32: case SIM_OP_SELP64: return "selp";
    case SIM_OP_MOV32: case SIM_OP_MOV64: return "mov";
    default: break;
  }
  switch (in->sub) {
    case SIM_ALU_ADD: return "add";
    case SIM_ALU_SUB: return "sub";
    case SIM_ALU_MUL: return "mul";
    case SIM_ALU_DIV: case SIM_ALU_DIV_ADD: return "div";
    case SIM_ALU_FMA: return "fma";
    case SIM_ALU_SQRT: return "sqrt";
    case SIM_ALU_RCP: return "rcp";
    case SIM_ALU_RSQRT: return "rsqrt";
    case SIM_ALU_EX2: return "ex2";
    case SIM_ALU_LG2: return "lg2";
    case SIM_ALU_SIN: return "sin";
    case SIM_ALU_COS: return "cos";
    case SIM_ALU_CVT: return "cvt";
    case SIM_ALU_MIN: return "min";
    case SIM_ALU_MAX: return "max";
    case SIM_ALU_NEG: return "neg";
    case SIM_ALU_ABS: return "abs";
    default: return "mov";
  }
}

/* "div.rn.f32", "sqrt.approx.ftz.f32", "cvt.rn.f32.f64", "selp.f32". */
static void mnemonic(const sim_inst *in, char *buf, size_t len) {
  static const char *const rnd[] = {".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi"};
  const char *mod = "";
  int ty = in->op == SIM_OP_ALU ? in->ty : in->op >= SIM_OP_ADD_F64 && in->op <= SIM_OP_FMA_F64
                                               ? SIM_T_F64 : in->op >= SIM_OP_ADD_F32 &&
                                               in->op <= SIM_OP_FMA_F32 ? SIM_T_F32 : in->ty;
  if (in->op == SIM_OP_ALU && (in->mod & SIM_MOD_APPROX))
    mod = in->mod & SIM_MOD_FULL ? ".full" : ".approx";
  else if (in->op == SIM_OP_ALU && (in->mod & SIM_MOD_HASRND))
    mod = rnd[in->mod & SIM_RND_MASK];
  int cvt = in->op == SIM_OP_ALU && in->sub == SIM_ALU_CVT;
  snprintf(buf, len, "%s%s%s%s.%s%s%s", op_word(in), mod,
           in->op == SIM_OP_ALU && (in->mod & SIM_MOD_FTZ) ? ".ftz" : "",
           in->op == SIM_OP_ALU && (in->mod & SIM_MOD_SAT) ? ".sat" : "", sim_type_name(ty),
           cvt ? "." : "", cvt ? sim_type_name(in->ty2) : "");
}

/* "setp.eq.f32" for the test at setp. */
static void test_name(const sim_inst *setp, char *buf, size_t len) {
  static const char *const cmp[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                    "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  snprintf(buf, len, "setp.%s.%s", setp->sub < 18 ? cmp[setp->sub] : "?", sim_type_name(setp->ty));
}

/* "of 1.0 by 0.0", "of 3.0 and 4.0", "of 1.0, 2.0 and 3.0", "of -1.0". */
static void operands_text(const sim_inst *in, const double *v, int n, int wide, char *buf,
                          size_t len) {
  char t[3][40];
  for (int k = 0; k < n; k++) value_text(v[k], wide, t[k], sizeof t[k]);
  int div = in->op == SIM_OP_ALU && in->sub == SIM_ALU_DIV;
  if (n == 1) snprintf(buf, len, "of %s", t[0]);
  else if (n == 2) snprintf(buf, len, "of %s %s %s", t[0], div ? "by" : "and", t[1]);
  else snprintf(buf, len, "of %s, %s and %s", t[0], t[1], t[2]);
}

/* What made the value: "div.rn.f32 of 1.0 by 0.0 gave inf, made from finite numbers". */
static void origin_text(const sim_module *m, const nan_tag *t, char *buf, size_t len) {
  const sim_inst *in = &m->code[t->pc];
  char name[48], ops[160], res[40];
  mnemonic(in, name, sizeof name);
  value_text(t->result, 1, res, sizeof res);
  if (t->kind == K_PICK) {
    const sim_inst *setp = &m->code[t->spc];
    char test[32];
    test_name(setp, test, sizeof test);
    operands_text(setp, t->v, 2, setp->ty == SIM_T_F64, ops, sizeof ops);
    snprintf(buf, len, "%s gave the constant %s, chosen by the test %s %s: how a math function "
             "answers at a pole or outside its domain (logf(0.0f) is -inf)", name, res, test, ops);
    return;
  }
  int dty, sty, konst = 0;
  arith_types(in, &dty, &sty);
  operands_text(in, t->v, t->n, sty == SIM_T_F64, ops, sizeof ops);
  for (int k = 0; k < t->n; k++) konst |= !isfinite(t->v[k]);
  snprintf(buf, len, "%s %s gave %s, made from finite numbers%s", name, ops, res,
           konst ? " and a constant infinity, as a math function such as logf or powf does for "
                   "an argument outside its domain" : "");
}

/* The finding: lane l of w is about to store (or send to an atomic) the made value t, or, under
 * the strict check (store NULL), has just made it. The strict check's words are the ones the
 * check had when it judged instructions ("the first NaN the kernel made"), which lesson checks
 * look for. */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report(sim_worker *wk, sim_warp *w, const nan_tag *t, const sim_inst *store) {
  const sim_module *m = wk->run->m;
  const sim_inst *in = &m->code[t->pc];
  /* a constant the compiler moved for several lines at once has line 0: the test's is the
   * learner's */
  if (in->line <= 0 && t->kind == K_PICK && m->code[t->spc].line > 0) in = &m->code[t->spc];
  char at[400], what[600], where[300];
  sim_san_who(wk, w, t->blane, in, at, sizeof at);
  origin_text(m, t, what, sizeof what);
  int nan = isnan(t->result);
  if (!store)
    return sim_fail(wk, w, t->blane, in,
                    "NaN check: %s: %s. This is the first %s the kernel made; everything "
                    "computed from it is %s too", at, what, nan ? "NaN" : "infinity",
                    nan ? "NaN" : "inf or NaN");
  sim_srcline(m, store, where, sizeof where);
  return sim_fail(wk, w, t->blane, in,
                  "NaN check: %s: %s. The kernel writes this %s to memory at %s; everything "
                  "computed from it is %s too", at, what, nan ? "NaN" : "infinity", where,
                  nan ? "NaN" : "inf or NaN");
}

/* Before a store or an atomic of lanes em runs: -1 with the first lane that would write a made
 * value reported, else 0. A call's parameters are not memory the learner sees. */
static int store_check(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  sim_nantags *s = w->nan;
  int rows[4], n = 0;
  if (in->space == SIM_SP_PARAM || in->space == SIM_SP_FPARAM) return 0;
  if (in->op == SIM_OP_ST)
    for (int k = 0; k < in->vec && k < 4; k++) rows[n++] = in->v[k];
  else if (in->op == SIM_OP_ATOM) {
    rows[n++] = in->b;
    rows[n++] = in->c;
  }
  int width = in->size == 8 ? 64 : in->size == 4 ? 32 : 0;
  if (!width) return 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    for (int k = 0; k < n; k++) {
      if (rows[k] < 0) continue;
      uint64_t x = w->R[rows[k] * SIM_WARP + l];
      nan_tag *t = nonfinite(x, width) ? sim_lanetags_find(&s->tags, rows[k], l, x) : NULL;
      if (t && t->kind != K_CONST) return report(wk, w, t, in);
    }
  }
  return 0;
}

/* ---- stepping ---- */

/* Lanes `active` reach pc: those for which it is where their branch reconverges are out of it. */
static void leave_branches(sim_nantags *s, int pc, uint32_t active) {
  for (uint32_t mm = active; mm; mm &= mm - 1)
    if (s->br_rpc[__builtin_ctz(mm)] == pc) s->br_rpc[__builtin_ctz(mm)] = -1;
}

/* Keeps the a, b, c operand rows of the instruction about to run into ops (3 rows), since its
 * destination may be one of them. */
static void keep_operands(const sim_warp *w, const sim_inst *in, uint64_t *ops) {
  const int rows[3] = {in->a, in->b, in->c};
  int n = in->op == SIM_OP_SELP32 || in->op == SIM_OP_SELP64 ? 2 : 3;
  for (int k = 0; k < n; k++) {
    const uint64_t *S = w->R + (rows[k] >= 0 ? rows[k] : SIM_SR_ZERO) * SIM_WARP;
    memcpy(ops + k * SIM_WARP, S, SIM_WARP * sizeof *S);
  }
}

int sim_nan_warp(sim_worker *wk, sim_warp *w, long budget) {
  uint64_t ops[3 * SIM_WARP];
  for (long used = 0; used < budget; used++) {
    uint32_t em = 0, active = 0;
    const sim_inst *in = sim_exec_next(wk, w, &em, &active);
    int pc = in ? (int)(in - wk->run->m->code) : -1;
    if (in) leave_branches(w->nan, pc, active);
    if (in && em && (in->op == SIM_OP_ST || in->op == SIM_OP_ATOM) &&
        store_check(wk, w, in, em) < 0)
      return SIM_W_ERR;
    if (in && active) keep_operands(w, in, ops);
    int r = sim_exec_warp_plain(wk, w, 1);
    if (in && active && r != SIM_W_ERR && tags_after(wk, w, in, pc, em, active, ops) < 0)
      return SIM_W_ERR;
    if (r != SIM_W_RUN || w->loop_paused) return r; /* a loop to probe (sim_sched.c) */
  }
  return SIM_W_RUN;
}
