/* sim_dbgcond.c: a breakpoint's condition compiled for a whole warp (sim.h's sim_debug_cond).
 *
 * A condition on a line a loop runs is asked for every warp that reaches it, every turn. Asking
 * the front end lane by lane (a call into Lua and a read of each variable per lane) costs
 * hundreds of times the launch itself; this runs a small postfix program over the warp's 32
 * lanes at once, with each variable's place worked out once per pc where the breakpoint stops.
 *
 * Stance: the front end types the expression (C's usual conversions, written out as CVT) and
 * this file only computes, with exactly the front end's evaluator's arithmetic
 * (lua/debug/cexpr.lua, lua/debug/ctype.lua): integers in 64 bits wrapped to their type after every
 * operation, Lua's shifts, / and % truncating toward zero (an unsigned type's unsigned), floats
 * as doubles rounded to single precision where the type is float (an integer rounded straight
 * to it). It never guesses: a variable whose type or place at a pc is
 * not the one the program was typed for, or a lane whose operation cannot be done (a division by
 * zero, a float too large for its integer), makes the whole warp go to the cond hook, which
 * evaluates it the slow way and says what is wrong. An error in a part of && || ?: that C would not
 * evaluate for that lane does not count: errors travel as a mask per value and the branches mask
 * them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

#define DC_STACK 16 /* values on the stack at once: a condition a learner types needs a few */
#define DC_VARS 8   /* distinct variables a program may read */
#define DC_PCS 4    /* pcs whose places are kept (a breakpoint stops at one pc per function) */

/* One value per lane. */
typedef struct dc_val {
  union {
    int64_t i[SIM_WARP];
    double f[SIM_WARP];
  } u;
  int isf;      /* the lanes hold doubles */
  uint32_t err; /* lanes where it could not be computed */
} dc_val;

/* The places of the program's variables at one pc. */
typedef struct dc_at {
  int pc;                     /* -1: unused */
  int ok;                     /* every variable is there, with the program's type */
  const sim_dloc *loc[DC_VARS];
} dc_at;

struct sim_dbgcond {
  sim_debug_cop *ops;         /* the program, n of them (VAR's `which` is its variable's slot) */
  int n;
  const char *var[DC_VARS];   /* the names read, into ops[].name */
  sim_debug_ty vty[DC_VARS];  /* and the types the program reads them as */
  const char *vtype[DC_VARS]; /* as the debug information spells them */
  int nvars;
  dc_at at[DC_PCS];
  int next_at;                /* the slot of at[] the next pc replaces */
};

/* ---- checking a program ---- */

static int ty_ok(sim_debug_ty t) {
  if (t.k == 'i') return t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8;
  if (t.k == 'f') return t.size == 4 || t.size == 8;
  return t.k == 'b' && t.size == 1;
}

/* How the operation changes the stack's depth: what it takes and gives. */
static int takes(int op) {
  switch (op) {
  case SIM_DC_INT: case SIM_DC_FLOAT: case SIM_DC_VAR: case SIM_DC_TID: case SIM_DC_BID:
    return 0;
  case SIM_DC_CVT: case SIM_DC_NEG: case SIM_DC_BNOT: case SIM_DC_LNOT: return 1;
  case SIM_DC_SEL: return 3;
  default: return 2;
  }
}

/* The slot of variable name in c, added when new; -1 when the program reads too many. */
static int var_slot(sim_dbgcond *c, const sim_debug_cop *op) {
  for (int k = 0; k < c->nvars; k++)
    if (!strcmp(c->var[k], op->name)) {
      if (strcmp(c->vtype[k], op->type) || memcmp(&c->vty[k], &op->t, sizeof op->t)) return -1;
      return k;
    }
  if (c->nvars == DC_VARS) return -1;
  c->var[c->nvars] = op->name;
  c->vtype[c->nvars] = op->type;
  c->vty[c->nvars] = op->t;
  return c->nvars++;
}

static int check(sim_dbgcond *c, char *err, size_t errlen) {
  int depth = 0;
  for (int k = 0; k < c->n; k++) {
    sim_debug_cop *op = &c->ops[k];
    op->name[sizeof op->name - 1] = op->type[sizeof op->type - 1] = 0;
    if (op->op < 0 || op->op >= SIM_DC_NOPS || !ty_ok(op->t) ||
        (op->op == SIM_DC_CVT && !ty_ok(op->from))) {
      sim_errf(err, errlen, "operation %d of the condition is not known", k + 1);
      return -1;
    }
    if ((op->op == SIM_DC_TID || op->op == SIM_DC_BID) && (op->which < 0 || op->which > 2)) {
      sim_errf(err, errlen, "operation %d reads a coordinate other than x, y or z", k + 1);
      return -1;
    }
    if (op->op == SIM_DC_VAR && (!op->name[0] || (op->which = var_slot(c, op)) < 0)) {
      sim_errf(err, errlen, "operation %d reads a variable the program cannot hold", k + 1);
      return -1;
    }
    if (depth < takes(op->op)) {
      sim_errf(err, errlen, "operation %d of the condition has too few operands", k + 1);
      return -1;
    }
    depth += 1 - takes(op->op);
    if (depth > DC_STACK) {
      sim_errf(err, errlen, "the condition needs more than %d values at once", DC_STACK);
      return -1;
    }
  }
  if (depth != 1) {
    sim_errf(err, errlen, "the condition leaves %d values, not one", depth);
    return -1;
  }
  return 0;
}

sim_dbgcond *sim_dbgcond_new(const sim_debug_cop *ops, int n, char *err, size_t errlen) {
  sim_dbgcond *c = calloc(1, sizeof *c);
  if (c && n > 0 && n <= 4096) c->ops = malloc((size_t)n * sizeof *ops);
  if (!c || !c->ops) {
    sim_errf(err, errlen, n > 0 && n <= 4096 ? "out of memory for a condition"
                                             : "a condition has 1 to 4096 operations");
    free(c);
    return NULL;
  }
  memcpy(c->ops, ops, (size_t)n * sizeof *ops);
  c->n = n;
  for (int k = 0; k < DC_PCS; k++) c->at[k].pc = -1;
  if (check(c, err, errlen) < 0) {
    sim_dbgcond_free(c);
    return NULL;
  }
  return c;
}

void sim_dbgcond_free(sim_dbgcond *c) {
  if (!c) return;
  free(c->ops);
  free(c);
}

/* ---- the variables' places at a pc ---- */

/* A variable read as the program's type t says: its debug information agrees. */
static int same_type(const sim_dvar *v, const char *type, sim_debug_ty t) {
  if (v->count != 1 || v->size != t.size || strcmp(v->type, type)) return 0;
  switch (v->enc) {
  case SIM_DV_SIGNED: case SIM_DV_UNSIGNED: case SIM_DV_CHAR: return t.k == 'i';
  case SIM_DV_BOOL: return t.k == 'b';
  case SIM_DV_FLOAT: return t.k == 'f';
  default: return 0;
  }
}

static const dc_at *places(sim_dbgcond *c, sim_dbgflow *flow, const sim_dbginfo *di,
                          const sim_run *run, int pc) {
  for (int k = 0; k < DC_PCS; k++)
    if (c->at[k].pc == pc) return &c->at[k];
  dc_at *a = &c->at[c->next_at];
  c->next_at = (c->next_at + 1) % DC_PCS;
  a->pc = pc;
  a->ok = 1;
  for (int k = 0; k < c->nvars && a->ok; k++) {
    const sim_dvar *v;
    const sim_dloc *l = sim_dbgflow_var(flow, di, pc, c->var[k], &v);
    a->loc[k] = l;
    /* a recursive function's locals move with its activation: the cond hook reads those */
    a->ok = l && same_type(v, c->vtype[k], c->vty[k]) &&
            (l->kind != SIM_DL_LOCAL ||
             (l->where >= 0 && (size_t)l->where + (size_t)v->size <= run->local_stride &&
              !(v->func >= 0 && v->func < run->m->nfuncs && run->m->funcs[v->func].stacked)));
  }
  return a;
}

/* ---- the arithmetic: lua/debug/cexpr.lua's and lua/debug/ctype.lua's, for each lane ---- */

static int64_t wrap(int64_t v, sim_debug_ty t) {
  if (t.k == 'b') return v != 0;
  if (t.size >= 8) return v;
  int bits = 8 * t.size;
  uint64_t mask = (1ull << bits) - 1, u = (uint64_t)v & mask;
  if (t.sgn && (u >> (bits - 1) & 1)) u |= ~mask;
  return (int64_t)u;
}

static double f32(double x) { return (double)(float)x; }

/* Lua's x << y: a negative y shifts right, and 64 places or more give 0. */
static int64_t lua_shl(int64_t x, int64_t y) {
  if (y < 0) return y <= -64 ? 0 : (int64_t)((uint64_t)x >> (uint64_t)(-y));
  return y >= 64 ? 0 : (int64_t)((uint64_t)x << y);
}

/* A lane's value in place as C converts it from `from` to `to` (ctype.convert); 0 when it
 * cannot be (a NaN or a float out of the range of a 64-bit integer). */
static int convert(dc_val *x, int l, sim_debug_ty from, sim_debug_ty to) {
  if (to.k == 'f') {
    double v; /* an integer is rounded once, straight to the type, as C converts it */
    int64_t i = x->u.i[l];
    if (from.k == 'f') v = to.size == 4 ? f32(x->u.f[l]) : x->u.f[l];
    else if (from.k == 'i' && !from.sgn && from.size == 8)
      v = to.size == 4 ? (double)(float)(uint64_t)i : (double)(uint64_t)i;
    else v = to.size == 4 ? (double)(float)i : (double)i;
    x->u.f[l] = v;
    return 1;
  }
  if (from.k == 'f') {
    double v = x->u.f[l];
    if (to.k == 'b') {
      x->u.i[l] = v != 0;
      return 1;
    }
    if (isnan(v) || isinf(v)) return 0;
    v = trunc(v);
    if (to.k == 'i' && !to.sgn && to.size == 8 && v >= 9223372036854775808.0 &&
        v < 18446744073709551616.0) {
      x->u.i[l] = (int64_t)(uint64_t)v; /* an unsigned long long's upper half */
      return 1;
    }
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return 0;
    x->u.i[l] = wrap((int64_t)v, to);
    return 1;
  }
  x->u.i[l] = wrap(x->u.i[l], to);
  return 1;
}

static uint32_t truth(const dc_val *x) {
  uint32_t m = 0;
  for (int l = 0; l < SIM_WARP; l++)
    if (x->isf ? x->u.f[l] != 0 : x->u.i[l] != 0) m |= 1u << l;
  return m;
}

/* Integer a op b in type t for one lane; 0 when it cannot be done (cexpr raises there). */
static int int_op(int op, int64_t a, int64_t b, sim_debug_ty t, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case SIM_DC_ADD: *r = (int64_t)(ua + ub); break;
  case SIM_DC_SUB: *r = (int64_t)(ua - ub); break;
  case SIM_DC_MUL: *r = (int64_t)(ua * ub); break;
  case SIM_DC_AND: *r = a & b; break;
  case SIM_DC_OR: *r = a | b; break;
  case SIM_DC_XOR: *r = a ^ b; break;
  case SIM_DC_DIV: /* C's, truncated toward zero; unsigned ones as unsigned */
    if (b == 0) return 0;
    if (!t.sgn) *r = (int64_t)(ua / ub);
    else *r = b == -1 ? (int64_t)(0 - ua) : a / b;
    break;
  case SIM_DC_MOD:
    if (b == 0) return 0;
    if (!t.sgn) *r = (int64_t)(ua % ub);
    else *r = b == -1 ? 0 : a % b;
    break;
  case SIM_DC_SHL: *r = lua_shl(a, b); break;
  case SIM_DC_SHR: {
    int64_t nb = (int64_t)(0 - ub);
    if (t.sgn) *r = lua_shl(a, nb) | (a < 0 ? ~lua_shl(-1, nb) : 0);
    else *r = lua_shl(t.size == 4 ? (a & 0xffffffff) : a, nb);
    break;
  }
  default: return 0;
  }
  *r = wrap(*r, t);
  return 1;
}

static int cmp_lane(int op, const dc_val *a, const dc_val *b, int l, sim_debug_ty t) {
  if (t.k == 'f') {
    double x = a->u.f[l], y = b->u.f[l];
    switch (op) {
    case SIM_DC_LT: return x < y;
    case SIM_DC_LE: return x <= y;
    case SIM_DC_GT: return x > y;
    case SIM_DC_GE: return x >= y;
    case SIM_DC_EQ: return x == y;
    default: return x != y;
    }
  }
  int64_t x = a->u.i[l], y = b->u.i[l];
  int lt = !t.sgn && t.size == 8 ? (uint64_t)x < (uint64_t)y : x < y, eq = x == y;
  switch (op) {
  case SIM_DC_LT: return lt;
  case SIM_DC_LE: return lt || eq;
  case SIM_DC_GT: return !lt && !eq;
  case SIM_DC_GE: return !lt;
  case SIM_DC_EQ: return eq;
  default: return !eq;
  }
}

/* a = a op b, two values of type t (a comparison gives an int). */
static void binary(int op, dc_val *a, const dc_val *b, sim_debug_ty t) {
  uint32_t err = a->err | b->err;
  if (op >= SIM_DC_LT && op <= SIM_DC_NE) {
    for (int l = 0; l < SIM_WARP; l++) a->u.i[l] = cmp_lane(op, a, b, l, t);
    a->isf = 0;
  } else if (op == SIM_DC_LAND || op == SIM_DC_LOR) {
    uint32_t ta = truth(a), tb = truth(b);
    err = a->err | (b->err & (op == SIM_DC_LAND ? ta : ~ta));
    uint32_t r = op == SIM_DC_LAND ? ta & tb : ta | tb;
    for (int l = 0; l < SIM_WARP; l++) a->u.i[l] = r >> l & 1;
    a->isf = 0;
  } else if (t.k == 'f') {
    for (int l = 0; l < SIM_WARP; l++) {
      double x = a->u.f[l], y = b->u.f[l], r;
      switch (op) {
      case SIM_DC_ADD: r = x + y; break;
      case SIM_DC_SUB: r = x - y; break;
      case SIM_DC_MUL: r = x * y; break;
      case SIM_DC_DIV: r = x / y; break;
      default: r = 0; err |= 1u << l; break; /* the front end never types these in floats */
      }
      a->u.f[l] = t.size == 4 ? f32(r) : r;
    }
  } else {
    for (int l = 0; l < SIM_WARP; l++)
      if (!int_op(op, a->u.i[l], b->u.i[l], t, &a->u.i[l])) err |= 1u << l;
  }
  a->err = err;
}

static void unary(const sim_debug_cop *op, dc_val *a) {
  for (int l = 0; l < SIM_WARP; l++) {
    switch (op->op) {
    case SIM_DC_CVT:
      if (!convert(a, l, op->from, op->t)) a->err |= 1u << l;
      break;
    case SIM_DC_NEG:
      if (op->t.k == 'f') a->u.f[l] = -a->u.f[l];
      else a->u.i[l] = wrap((int64_t)(0 - (uint64_t)a->u.i[l]), op->t);
      break;
    case SIM_DC_BNOT: a->u.i[l] = wrap(~a->u.i[l], op->t); break;
    default: break;
    }
  }
  if (op->op == SIM_DC_CVT) a->isf = op->t.k == 'f';
  if (op->op == SIM_DC_LNOT) {
    uint32_t m = truth(a);
    for (int l = 0; l < SIM_WARP; l++) a->u.i[l] = !(m >> l & 1);
    a->isf = 0;
  }
}

/* ---- pushing values ---- */

static void load_var(dc_val *x, const sim_run *run, const sim_warp *w, const sim_dloc *loc,
                     sim_debug_ty t) {
  for (int l = 0; l < SIM_WARP; l++) {
    uint64_t bits = 0;
    if (loc->kind == SIM_DL_PRED) bits = w->P[loc->where] >> l & 1;
    else if (loc->kind == SIM_DL_ROW) bits = w->R[loc->where * SIM_WARP + l];
    else memcpy(&bits, w->local + (size_t)l * run->local_stride + (size_t)loc->where,
                (size_t)t.size); /* little-endian host */
    if (t.size < 8) bits &= (1ull << (8 * t.size)) - 1;
    if (t.k == 'f' && t.size == 4) {
      float f;
      uint32_t u = (uint32_t)bits;
      memcpy(&f, &u, 4);
      x->u.f[l] = f;
    } else if (t.k == 'f') {
      memcpy(&x->u.f[l], &bits, 8);
    } else {
      x->u.i[l] = wrap((int64_t)bits, t);
    }
  }
  x->isf = t.k == 'f';
}

/* threadIdx (the lane's thread) or blockIdx (the worker's block), coordinate `which`. */
static void load_coord(dc_val *x, const sim_worker *wk, const sim_warp *w, int op, int which) {
  const sim_run *run = wk->run;
  sim_dim3 dim = op == SIM_DC_TID ? run->block : run->grid;
  unsigned long long b = (unsigned long long)wk->slots[wk->cur].block;
  unsigned long long xy = (unsigned long long)dim.x * dim.y;
  for (int l = 0; l < SIM_WARP; l++) {
    unsigned long long t = (unsigned long long)w->index * SIM_WARP + (unsigned)l;
    unsigned long long i = op == SIM_DC_TID ? t : b;
    x->u.i[l] = (int64_t)(which == 0 ? i % dim.x : which == 1 ? i / dim.x % dim.y : i / xy);
  }
  x->isf = 0;
}

int sim_dbgcond_eval(sim_dbgcond *c, sim_dbgflow *flow, const sim_dbginfo *di,
                     const sim_worker *wk, const sim_warp *w, int pc, uint32_t m, uint32_t *hold) {
  const dc_at *at = c->nvars ? places(c, flow, di, wk->run, pc) : NULL;
  if (at && !at->ok) return -1;
  dc_val st[DC_STACK];
  int sp = 0;
  for (int k = 0; k < c->n; k++) {
    const sim_debug_cop *op = &c->ops[k];
    dc_val *x = &st[sp];
    switch (op->op) {
    case SIM_DC_INT: case SIM_DC_FLOAT:
      for (int l = 0; l < SIM_WARP; l++) {
        if (op->op == SIM_DC_INT) x->u.i[l] = op->i;
        else x->u.f[l] = op->f;
      }
      x->isf = op->op == SIM_DC_FLOAT;
      x->err = 0;
      sp++;
      break;
    case SIM_DC_VAR:
      load_var(x, wk->run, w, at->loc[op->which], c->vty[op->which]);
      x->err = 0;
      sp++;
      break;
    case SIM_DC_TID: case SIM_DC_BID:
      load_coord(x, wk, w, op->op, op->which);
      x->err = 0;
      sp++;
      break;
    case SIM_DC_CVT: case SIM_DC_NEG: case SIM_DC_BNOT: case SIM_DC_LNOT:
      unary(op, &st[sp - 1]);
      break;
    case SIM_DC_SEL: {
      dc_val *cv = &st[sp - 3], *a = &st[sp - 2], *b = &st[sp - 1];
      uint32_t tm = truth(cv);
      for (int l = 0; l < SIM_WARP; l++) cv->u.i[l] = tm >> l & 1 ? a->u.i[l] : b->u.i[l];
      cv->err |= (a->err & tm) | (b->err & ~tm);
      cv->isf = a->isf;
      sp -= 2;
      break;
    }
    default:
      binary(op->op, &st[sp - 2], &st[sp - 1], op->t);
      sp--;
      break;
    }
  }
  if (st[0].err & m) return -1;
  *hold = truth(&st[0]) & m;
  return 0;
}
