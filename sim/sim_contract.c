/* sim_contract.c: what the GPU's compiler does to PTX where PTX leaves it free, so that the
 * simulator gives the bits the GPU gives.
 *
 * PTX lets ptxas contract a mul (or an add or sub) without a rounding modifier into an fma, and
 * ptxas evaluates some instructions of compile-time constants itself. NVRTC's own front end
 * already emits fma.rn for most products that feed a sum, so what reaches ptxas uncontracted is
 * what it left alone: a product with five or more uses, a product feeding a sum in f16 or bf16
 * (__hmul then __hadd), and under -use_fast_math every x / y followed by an add, since the
 * front end sees a division there and ptxas a multiply by the reciprocal. The rules below were
 * read off the SASS that ptxas 13.0 writes for sm_90 and checked on an H200
 * (tests/gpu/contract_vs_gpu.lua):
 *
 * - Contraction. A product t = a * b (mul.f32, mul.f64, mul.f16, mul.bf16 and their x2 forms,
 *   without .rn and without .sat; mul.ftz is fine) becomes part of every add or sub that uses it
 *   (fma(a, b, x), fma(-a, b, x) for x - t), when all of these hold:
 *     - every use of t is an add or sub without a rounding modifier, of the same type and the
 *       same .ftz, with t as one operand only (.sat and a guard on the add are fine);
 *     - every use is in t's basic block (t is not live at its end), a block as ptxas sees it
 *       when it contracts: after it has expanded the instructions it implements with branches
 *       of its own, which split the block they are in, and dropped branches to the next
 *       instruction. Those that split it: div, rcp and sqrt of f32 with IEEE rounding (.rn, .rz,
 *       .rm, .rp; not .approx or .full) and of f64, rsqrt.approx.f64 without .ftz, integer div
 *       and rem except on .u32, and membar and fence except fence.proxy and
 *       fence.mbarrier_init. bar.sync, loads, stores, atomics, shfl and the .approx functions
 *       do not split it, and the distance from product to sum does not matter;
 *     - the mul has no guard.
 *   An add whose two operands are both such products takes the first one; the second is then a
 *   product with a use it is not contracted into, so it is contracted nowhere.
 *   div.approx.f32 and div.full.f32 (a times the reciprocal, sim_alu.c) are contracted by the same
 *   rules: an add becomes fma(a, rcp(b), x), with the operands scaled as the division scales them.
 * - Folding. An .approx special function of a constant (an immediate, a register every
 *   definition of which moves the same immediate into it, or one computed from constants) is
 *   evaluated by ptxas, rounded to nearest (.ftz flushing), except tanh, the f64 ones, and results
 *   that are NaN. A division by such a constant multiplies by its reciprocal rounded to nearest
 *   (flushed when subnormal), not the unit's. A product of two constants is folded, never
 *   contracted. The simulator computes these values when the instruction runs (SIM_IF_FOLDED):
 *   the same bits, without constant rows added at load time.
 * A product with more than 64 uses is left alone (a bound of this pass, not of ptxas's). Two
 * things ptxas does before it contracts are not modelled: it unrolls a short loop of constant
 * trip count, joining the blocks before and after it, and it sees through a product's operand
 * that is overwritten before the sum (its SSA form); NVRTC's PTX rarely has either. All of
 * these are checked against ptxas's own SASS by tests/sim/test_contract_ptxas.c.
 *
 * Stance: a load-time pass over the decoded instructions that only rewrites, never adds rows: a
 * contracted add becomes an fma (SIM_OP_FMA_F32 and friends where no operand is negated) or the
 * division-plus-add SIM_ALU_DIV_ADD, and the product it no longer needs becomes a NOP, as on
 * the GPU. Where this pass cannot tell what ptxas would do (a product whose operands are
 * overwritten before a use, which ptxas's SSA form sees through), it leaves the PTX as written. */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* Rows an instruction may read or write. Over-approximate: a field that names a predicate or is
 * unused for this opcode may be listed, which only makes the pass more cautious. */
static int rows_read(const sim_module *m, const sim_inst *in, int out[40]) {
  int n = 0;
  const int32_t f[] = {in->a, in->b, in->c, in->e, in->v[0], in->v[1], in->v[2], in->v[3]};
  for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
    if (f[k] >= 0) out[n++] = f[k];
  if (in->op == SIM_OP_TENSOR && in->aux >= 0 && in->aux < m->ntensor) {
    const sim_tensor *t = &m->tensor[in->aux];
    for (int k = 0; k < 8; k++) {
      const int32_t g[] = {t->ra[k], t->rb[k], t->rc[k], t->d[k]};
      for (int j = 0; j < 4; j++)
        if (g[j] >= 0) out[n++] = g[j];
    }
  }
  return n;
}

static int rows_written(const sim_module *m, const sim_inst *in, int out[16]) {
  int n = 0;
  const int32_t f[] = {in->d, in->d2, in->v[0], in->v[1], in->v[2], in->v[3]};
  for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
    if (f[k] >= 0) out[n++] = f[k];
  if (in->op == SIM_OP_TENSOR && in->aux >= 0 && in->aux < m->ntensor)
    for (int k = 0; k < 8; k++)
      if (m->tensor[in->aux].d[k] >= 0) out[n++] = m->tensor[in->aux].d[k];
  return n;
}

static int writes(const sim_module *m, const sim_inst *in, int row) {
  int w[16], n = rows_written(m, in, w);
  for (int k = 0; k < n; k++)
    if (w[k] == row) return 1;
  return 0;
}

/* The arithmetic kind of an instruction, for matching products with sums. */
enum { K_OTHER, K_MUL, K_DIV, K_ADD, K_SUB };

static int kind(const sim_inst *in) {
  int no_rnd = !(in->mod & SIM_MOD_HASRND);
  switch (in->op) {
    case SIM_OP_MUL_F32: case SIM_OP_MUL_F64: return no_rnd ? K_MUL : K_OTHER;
    case SIM_OP_ADD_F32: case SIM_OP_ADD_F64: return no_rnd ? K_ADD : K_OTHER;
    case SIM_OP_SUB_F32: case SIM_OP_SUB_F64: return no_rnd ? K_SUB : K_OTHER;
    case SIM_OP_ALU: case SIM_OP_HALF:
      if (in->op == SIM_OP_ALU && in->ty != SIM_T_F32 && in->ty != SIM_T_F64) return K_OTHER;
      if (in->op == SIM_OP_HALF && in->flags) return K_OTHER; /* .relu and the like */
      switch (in->sub) {
        case SIM_ALU_MUL: return no_rnd ? K_MUL : K_OTHER;
        case SIM_ALU_ADD: return no_rnd ? K_ADD : K_OTHER;
        case SIM_ALU_SUB: return no_rnd ? K_SUB : K_OTHER;
        case SIM_ALU_DIV: /* div.approx.f32 and div.full.f32: a times the reciprocal */
          return in->op == SIM_OP_ALU && in->ty == SIM_T_F32 && (in->mod & SIM_MOD_APPROX)
                     ? K_DIV
                     : K_OTHER;
        default: return K_OTHER;
      }
    default: return K_OTHER;
  }
}

static int is_half_op(const sim_inst *in) { return in->op == SIM_OP_HALF; }

/* Can the sum s take the product p (whose result is row t) into an fma? */
static int fits(const sim_inst *p, const sim_inst *s, int t) {
  int k = kind(s);
  if (k != K_ADD && k != K_SUB) return 0;
  if ((s->a == t) == (s->b == t)) return 0; /* t in neither, or in both */
  if (s->ty != p->ty || is_half_op(s) != is_half_op(p)) return 0;
  return (s->mod & SIM_MOD_FTZ) == (p->mod & SIM_MOD_FTZ);
}

/* Does ptxas implement this instruction with branches of its own (div.rn.f32 takes a slow path
 * through a subroutine, for one), or keep it as a memory fence, so that a product before it
 * and a sum after it end up in different blocks of its code? Read off ptxas's SASS for sm_90:
 * each of these between a mul and its add leaves them apart, whatever the distance; .approx
 * forms, div.u32 and rem.u32 (an inline sequence) and everything else leave them fused. */
static int splits_block(const sim_inst *in) {
  if (in->op == SIM_OP_FENCE) return 1;
  if (in->op != SIM_OP_ALU) return 0;
  int ieee = !(in->mod & SIM_MOD_APPROX) && (in->ty == SIM_T_F32 || in->ty == SIM_T_F64);
  switch (in->sub) {
    case SIM_ALU_DIV: case SIM_ALU_REM:
      if (!sim_type_float(in->ty)) return in->ty != SIM_T_U32;
      return in->sub == SIM_ALU_DIV && ieee;
    case SIM_ALU_RCP: case SIM_ALU_SQRT: return ieee;
    case SIM_ALU_RSQRT: return in->ty == SIM_T_F64 && !(in->mod & SIM_MOD_FTZ);
    default: return 0;
  }
}

/* A branch to the instruction after it, which ptxas drops: it ends no block for contraction. */
static int branch_to_next(const sim_inst *in, int pc) {
  return in->op == SIM_OP_BRA && in->target == pc + 1;
}

/* Per function: the pc after each pc's basic block, and what defines each of its registers.
 * A function writes only its own register rows [reg_first, reg_first + nregs), so the per-row
 * arrays cover those alone. */
typedef struct fn_info {
  const sim_func *f;
  int *block_end;          /* indexed by pc - f->first */
  int *visit, *stack, gen; /* live_out's walk: visit[pc - first] == gen once seen */
  /* indexed by row - f->reg_first: */
  int *ndefs, *def_pc; /* definitions, and the pc of the last one */
  int *moved;          /* the immediate every definition moves into it, -1 when some definition
                        * is not such a move, or they move different ones */
  char *known;         /* constant_row's memo */
} fn_info;

/* The index of row among f's own registers, or -1. */
static int own(const sim_func *f, int row) {
  return row >= f->reg_first && row < f->reg_first + f->nregs ? row - f->reg_first : -1;
}

static int info_build(const sim_module *m, const sim_func *f, fn_info *fi) {
  int len = f->end - f->first;
  size_t regs = (size_t)f->nregs + 1;
  memset(fi, 0, sizeof *fi);
  fi->f = f;
  fi->block_end = malloc((size_t)len * sizeof *fi->block_end);
  fi->visit = calloc((size_t)len, sizeof *fi->visit);
  fi->stack = malloc((size_t)len * sizeof *fi->stack);
  char *lead = calloc((size_t)len + 1, 1);
  fi->ndefs = calloc(regs, sizeof *fi->ndefs);
  fi->def_pc = calloc(regs, sizeof *fi->def_pc);
  fi->known = calloc(regs, 1);
  fi->moved = malloc(regs * sizeof *fi->moved);
  if (!fi->block_end || !fi->visit || !fi->stack || !lead || !fi->ndefs || !fi->def_pc ||
      !fi->known || !fi->moved) {
    free(lead);
    return -1;
  }
  lead[0] = 1;
  for (int i = 0; i < len; i++) {
    const sim_inst *in = &m->code[f->first + i];
    int to_next = branch_to_next(in, f->first + i);
    if (in->op == SIM_OP_BRA && in->target >= f->first && in->target < f->end && !to_next)
      lead[in->target - f->first] = 1;
    if ((sim_ends_block(in) && !to_next) || splits_block(in)) lead[i + 1] = 1;
    int r[16], n = rows_written(m, in, r);
    for (int k = 0; k < n; k++) {
      int j = own(f, r[k]);
      if (j < 0) continue;
      int is_mov = (in->op == SIM_OP_MOV32 || in->op == SIM_OP_MOV64) && in->d == r[k];
      int imm = is_mov && in->a >= m->const_first ? in->a : -1;
      fi->moved[j] = !fi->ndefs[j] || fi->moved[j] == imm ? imm : -1;
      fi->ndefs[j]++;
      fi->def_pc[j] = f->first + i;
    }
  }
  for (int i = len - 1, end = f->end; i >= 0; i--) {
    fi->block_end[i] = end;
    if (lead[i]) end = f->first + i;
  }
  free(lead);
  return 0;
}

static void info_free(fn_info *fi) {
  free(fi->block_end);
  free(fi->visit);
  free(fi->stack);
  free(fi->ndefs);
  free(fi->def_pc);
  free(fi->known);
  free(fi->moved);
}

/* Does this instruction compute its result from its operands alone (so that ptxas folds it when
 * they are constants)? */
static int pure(const sim_inst *in) {
  switch (in->op) {
    case SIM_OP_MOV32: case SIM_OP_MOV64:
    case SIM_OP_ADD_F32: case SIM_OP_SUB_F32: case SIM_OP_MUL_F32: case SIM_OP_FMA_F32:
    case SIM_OP_ADD_F64: case SIM_OP_SUB_F64: case SIM_OP_MUL_F64: case SIM_OP_FMA_F64:
    case SIM_OP_CVT_F64_F32: case SIM_OP_CVT_F32_S32: case SIM_OP_CVT_F32_U32:
      return 1;
    case SIM_OP_ALU:
      if (!sim_type_float(in->ty)) return 0;
      switch (in->sub) {
        case SIM_ALU_ADD: case SIM_ALU_SUB: case SIM_ALU_MUL: case SIM_ALU_FMA: case SIM_ALU_DIV:
        case SIM_ALU_RCP: case SIM_ALU_SQRT: case SIM_ALU_RSQRT: case SIM_ALU_EX2:
        case SIM_ALU_LG2: case SIM_ALU_SIN: case SIM_ALU_COS: case SIM_ALU_NEG: case SIM_ALU_ABS:
        case SIM_ALU_MIN: case SIM_ALU_MAX: case SIM_ALU_CVT:
          return 1;
        default: return 0;
      }
    default: return 0;
  }
}

/* Is row a compile-time constant for ptxas: an immediate, a register whose every definition
 * moves the same immediate into it, or one whose one definition computes it from constants?
 * fi->known memoises: 0 not yet asked, 1 constant, 2 not, 3 being asked (a cycle: not). */
static int constant_row(const sim_module *m, fn_info *fi, int row) {
  if (row >= m->const_first) return 1;
  int j = own(fi->f, row);
  if (j < 0 || !fi->ndefs[j]) return 0;
  if (fi->moved[j] >= 0) return 1;
  if (fi->ndefs[j] != 1) return 0;
  if (fi->known[j]) return fi->known[j] == 1;
  fi->known[j] = 3;
  const sim_inst *d = &m->code[fi->def_pc[j]];
  int yes = d->guard < 0 && pure(d) && d->d == row && d->a >= 0;
  const int32_t src[] = {d->a, d->b, d->c};
  for (int k = 0; k < 3 && yes; k++)
    if (src[k] >= 0) yes = constant_row(m, fi, src[k]);
  fi->known[j] = (char)(yes ? 1 : 2);
  return yes;
}

static void fold_constants(sim_module *m, fn_info *fi) {
  for (int pc = fi->f->first; pc < fi->f->end; pc++) {
    sim_inst *in = &m->code[pc];
    if (in->op != SIM_OP_ALU || in->ty != SIM_T_F32 || !(in->mod & SIM_MOD_APPROX)) continue;
    switch (in->sub) {
      case SIM_ALU_RCP: case SIM_ALU_SQRT: case SIM_ALU_RSQRT: case SIM_ALU_EX2:
      case SIM_ALU_LG2: case SIM_ALU_SIN: case SIM_ALU_COS:
        if (constant_row(m, fi, in->a)) in->flags |= SIM_IF_FOLDED;
        break;
      case SIM_ALU_DIV:
        if (constant_row(m, fi, in->b)) in->flags |= SIM_IF_FOLDED;
        break;
      default: break;
    }
  }
}

static int reads_row(const sim_module *m, const sim_inst *in, int row) {
  int r[40], n = rows_read(m, in, r), times = 0;
  for (int k = 0; k < n; k++) times += r[k] == row;
  return times;
}

/* Is the value that row t holds when the block ending before pc end is left read anywhere
 * before it is overwritten? A walk over the blocks that may follow. */
static int live_out(const sim_module *m, fn_info *fi, int t, int end) {
  const sim_func *f = fi->f;
  int top = 0;
  fi->gen++;
  for (int b = end;;) {
    /* the successors of the block that ends before b */
    const sim_inst *last = &m->code[b - 1];
    int next[2], nn = 0;
    int falls = !sim_ends_block(last) || last->guard >= 0;
    if (last->op == SIM_OP_BRA && last->target >= f->first && last->target < f->end)
      next[nn++] = last->target;
    if (falls && b < f->end) next[nn++] = b;
    for (int k = 0; k < nn; k++)
      if (fi->visit[next[k] - f->first] != fi->gen) {
        fi->visit[next[k] - f->first] = fi->gen;
        fi->stack[top++] = next[k];
      }
    int killed = 1;
    while (killed) {
      if (!top) return 0;
      int s = fi->stack[--top], e = fi->block_end[s - f->first];
      killed = 0;
      for (int q = s; q < e && !killed; q++) {
        if (reads_row(m, &m->code[q], t)) return 1;
        killed = writes(m, &m->code[q], t) && m->code[q].guard < 0;
      }
      b = e;
    }
  }
}

/* The sums the product at pc p can be contracted into (written to uses, at most max), or -1
 * when it cannot be contracted. */
static int product_uses(const sim_module *m, fn_info *fi, int p, int *uses, int max) {
  const sim_inst *pi = &m->code[p];
  int t = pi->d, end = fi->block_end[p - fi->f->first];
  if (pi->guard >= 0 || own(fi->f, t) < 0 || t == pi->a || t == pi->b) return -1;
  if (kind(pi) == K_MUL && (pi->mod & SIM_MOD_SAT)) return -1;
  /* a product of constants is folded, not contracted */
  if (constant_row(m, fi, pi->a) && constant_row(m, fi, pi->b)) return -1;
  int n = 0, clobbered = 0, redefined = 0;
  for (int q = p + 1; q < end; q++) {
    const sim_inst *in = &m->code[q];
    if (reads_row(m, in, t)) {
      if (clobbered || !fits(pi, in, t) || n == max) return -1;
      uses[n++] = q;
    }
    if (writes(m, in, t)) {
      if (in->guard >= 0) return -1; /* our value may survive it */
      redefined = 1;
      break;
    }
    if (writes(m, in, pi->a) || writes(m, in, pi->b)) clobbered = 1;
  }
  /* Every read that our value reaches must be one of these sums. */
  if (!redefined && live_out(m, fi, t, end)) return -1;
  return n ? n : -1;
}

typedef struct product {
  int pc, nuses, live;
  int uses[64];
} product;

/* Rewrites the sum at pc s to take the product p into an fma. */
static void contract(const sim_inst *p, sim_inst *s) {
  int t = p->d, second = s->b == t;
  int is_sub = kind(s) == K_SUB;
  int neg_product = is_sub && second, neg_addend = is_sub && !second;
  int addend = second ? s->a : s->b;
  uint8_t flags = (uint8_t)(s->flags & SIM_IF_LAT);
  if (neg_product) flags |= SIM_IF_NEG_PRODUCT;
  if (neg_addend) flags |= SIM_IF_NEG_ADDEND;
  s->a = p->a;
  s->b = p->b;
  s->c = addend;
  if (kind(p) == K_DIV) {
    s->op = SIM_OP_ALU;
    s->sub = SIM_ALU_DIV_ADD;
    s->mod = (uint8_t)(p->mod | (s->mod & SIM_MOD_SAT));
    s->flags = (uint8_t)(flags | (p->flags & SIM_IF_FOLDED));
    return;
  }
  s->flags = flags;
  if (s->op == SIM_OP_HALF) {
    s->sub = SIM_ALU_FMA;
    return;
  }
  int plain = !(s->mod & (SIM_MOD_FTZ | SIM_MOD_SAT)) && !neg_product && !neg_addend;
  if (plain) {
    s->op = s->ty == SIM_T_F64 ? SIM_OP_FMA_F64 : SIM_OP_FMA_F32;
    s->sub = 0;
  } else {
    s->op = SIM_OP_ALU;
    s->sub = SIM_ALU_FMA;
  }
}

static int contract_function(sim_module *m, fn_info *fi) {
  const sim_func *f = fi->f;
  int len = f->end - f->first, np = 0, cap = 0;
  product *ps = NULL;
  int *prod_of = malloc((size_t)len * 2 * sizeof *prod_of); /* per sum: product index of a, b */
  if (!prod_of) return -1;
  for (int i = 0; i < 2 * len; i++) prod_of[i] = -1;
  for (int pc = f->first; pc < f->end; pc++) {
    int k = kind(&m->code[pc]);
    if (k != K_MUL && k != K_DIV) continue;
    product pr = {pc, 0, 1, {0}};
    pr.nuses = product_uses(m, fi, pc, pr.uses, 64);
    if (pr.nuses < 0) continue;
    if (np == cap) {
      cap = cap ? 2 * cap : 16;
      product *grown = realloc(ps, (size_t)cap * sizeof *ps);
      if (!grown) {
        free(ps);
        free(prod_of);
        return -1;
      }
      ps = grown;
    }
    ps[np] = pr;
    for (int u = 0; u < pr.nuses; u++) {
      const sim_inst *s = &m->code[pr.uses[u]];
      prod_of[2 * (pr.uses[u] - f->first) + (s->b == m->code[pc].d)] = np;
    }
    np++;
  }
  /* A sum of two products takes the first: the second is not contracted anywhere. One pass in
   * program order settles it, since a product once dropped never comes back. */
  for (int i = 0; i < len; i++) {
    int pa = prod_of[2 * i], pb = prod_of[2 * i + 1];
    if (pa >= 0 && pb >= 0 && ps[pa].live) ps[pb].live = 0;
  }
  for (int i = 0; i < np; i++) {
    if (!ps[i].live) continue;
    sim_inst *p = &m->code[ps[i].pc];
    for (int u = 0; u < ps[i].nuses; u++) contract(p, &m->code[ps[i].uses[u]]);
    /* the product is gone, as on the GPU; its source position stays for reports */
    *p = (sim_inst){.op = SIM_OP_NOP, .guard = -1, .d = -1, .d2 = -1, .a = -1, .b = -1,
                    .c = -1, .e = -1, .v = {-1, -1, -1, -1}, .target = -1, .rpc = -1, .aux = -1,
                    .line = p->line, .file = p->file, .ptx_line = p->ptx_line};
  }
  free(ps);
  free(prod_of);
  return 0;
}

int sim_contract(sim_module *m, char *err, size_t errlen) {
  for (int i = 0; i < m->nfuncs; i++) {
    const sim_func *f = &m->funcs[i];
    if (f->first < 0 || f->end <= f->first) continue;
    fn_info fi;
    int rc = info_build(m, f, &fi);
    if (rc == 0) {
      fold_constants(m, &fi);
      rc = contract_function(m, &fi);
    }
    info_free(&fi);
    if (rc < 0) {
      sim_errf(err, errlen, "out of memory while loading PTX");
      return -1;
    }
  }
  return 0;
}
