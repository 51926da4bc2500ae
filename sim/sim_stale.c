/* sim_stale.c: under the race check, what a shuffle read from a lane that was not running it (a
 * lane that has returned, one on another path of a branch, one a partial last warp does not
 * have), told where a lane uses it, with the shuffle, both lanes, the reason and the use named.
 *
 * Stance: a value is followed, not the shuffle judged. The PTX ISA leaves such a read's value
 * undefined, not the shuffle, and correct kernels make it: a partial warp that sums with
 * __shfl_down_sync(__activemask(), s, o) and adds only what came from a lane in the mask. Nor
 * is the first instruction that reads the value the place to judge: NVRTC compiles `if (ok)
 * s += u;` on floats to an add of u and a select of the old s, and `if (ok && u > m) m = u;` to
 * a compare of u, an and with ok and a select, computing with the value before throwing it
 * away. So each warp keeps a tag (sim_lanetags.c) on every register lane and predicate lane
 * that holds such a value or one computed from it, and a finding is a lane's use of one.
 *
 * What carries a tag on (the result is undefined as well; no use, since computing has no effect
 * a kernel can see until the result is used): moves, conversions, arithmetic and bit operations,
 * compares into predicates and the predicate logic, pack and unpack, a select of the tagged
 * operand, or of either under a tagged predicate, a shuffle moving the value to another lane,
 * and a pure instruction guarded by a tagged predicate (its destination then holds one value or
 * the other). A result is defined again where the other operand decides it: an and of
 * predicates with a defined false, an or with a defined true, an integer and with a defined 0,
 * an or with defined ones, an integer multiply by a defined 0.
 *
 * What is a use (the finding): a lane that executes an instruction with an effect and reads a
 * tagged value for it: the address of a load, store or atomic, the value a store writes or an
 * atomic combines, the predicate of a branch or of the guard of an instruction with an effect,
 * an operand of a vote, match, reduction or __syncwarp, a shuffle's lane, width or mask, a
 * texture coordinate. A lane predicated off, a value overwritten, and a select whose predicate
 * (defined) picks the other operand use nothing. Warn and fail modes follow one rule: the
 * race check's warning at the prompt, its failure in lesson checks, both at the use.
 *
 * A value stored to memory is used there, as the list says, with one exception: a call's
 * parameters and return value, which a call not inlined passes through memory (under -G every
 * call, __shfl_down_sync's own too), are followed there (mcopy).
 *
 * A lost tag may hide a finding, never make one up (sim_lanetags.c): tags are lost where the
 * check cannot follow (the carry flag, a call parameter read back with another size), and every
 * tag of the warp is dropped where it cannot tell what an instruction writes (tensor-core
 * instructions, stacked calls and their returns).
 *
 * Cost: a warp holds tags only after a shuffle read a lane not running it, so a launch without
 * one runs the interpreter as before, one test a call. The shuffle that makes the first tags
 * stops the fetch loop after it (SIM_EX_STALE), and while the warp holds any, it runs one
 * instruction at a time here, as the NaN check does; a tag on a register that the kernel does
 * not read again is dropped (dead_at), so that the warp soon goes back to the fetch loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_bits.h"
#include "sim_lanetags.h"
#include "sim_run.h"

enum { WHY_GONE, WHY_AWAY, WHY_NONE }; /* returned; on another path; not in the block */

/* One register or predicate lane holding a value computed from what a shuffle read from a lane
 * not running it. */
typedef struct stale_tag {
  sim_lanetag at; /* its slot (register row, nrows + predicate; -1 on parameters), lane, bits */
  uint8_t reader; /* the lane the shuffle gave the undefined value */
  uint8_t src;    /* the lane it read */
  uint8_t why;    /* WHY_*: why that lane was not running it */
  int32_t pc;     /* the shuffle */
  int32_t site;   /* where the report places it: the shuffle, or, when that has no source
                   * line (__shfl_*_sync as a function of its own, under -G), its call */
  int32_t via;    /* the first instruction that computed with it; -1 when only moved */
  uint32_t ran;   /* the lanes that ran the shuffle */
  uint64_t when;  /* the warp's clock at the shuffle */
  int32_t off;    /* a call parameter's tag: its bytes [off, off + size) of the lane's slice */
  int32_t size;
} stale_tag;

/* Instructions run one at a time between two sweeps of the tags no lane will read (sweep). */
#define STALE_SWEEP 8
/* Answers of dead_at kept, by slot and pc. */
#define STALE_MEMO 256

struct sim_staletags {
  sim_lanetags tags; /* stale_tags on register and predicate lanes */
  stale_tag *mt;     /* tags on call parameters (off, size), in no order, none overlapping */
  int nm, capm;
  int nrows;         /* register rows: predicate p is slot nrows + p */
  int steps;         /* instructions run here since the last sweep */
  uint64_t *seen;    /* dead_at's walk: a bit per instruction visited (NULL until the first) */
  int *todo;         /* dead_at's walk: the branch targets still to follow */
  struct {
    int slot, pc, dead;
  } memo[STALE_MEMO]; /* dead_at's answers (slot -1: none) */
};

/* ---- the tags ---- */

/* w's tags, made at its first need; NULL out of memory (nothing is then followed). */
static sim_staletags *tags_of(const sim_worker *wk, sim_warp *w) {
  if (w->stale) return w->stale;
  const sim_module *m = wk->run->m;
  sim_staletags *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->nrows = m->nrows;
  if (sim_lanetags_init(&s->tags, m->nrows + m->npreds + 1, sizeof(stale_tag)) < 0) {
    free(s);
    return NULL;
  }
  for (int i = 0; i < STALE_MEMO; i++) s->memo[i].slot = -1;
  w->stale = s;
  return s;
}

void sim_stale_clear(sim_staletags *s) {
  sim_lanetags_clear(&s->tags);
  s->nm = 0;
  s->steps = 0;
}

void sim_stale_free(sim_staletags *s) {
  if (!s) return;
  sim_lanetags_free(&s->tags);
  free(s->mt);
  free(s->seen);
  free(s->todo);
  free(s);
}

static int pslot(const sim_staletags *s, int p) { return p < 0 ? -1 : s->nrows + p; }

/* What slot holds in lane l as its tag keeps it: a register's bits, a predicate's 0. */
static uint64_t bits_of(const sim_staletags *s, const sim_warp *w, int slot, int l) {
  return (unsigned)slot < (unsigned)s->nrows ? w->R[(size_t)slot * SIM_WARP + l] : 0;
}

/* The tag on lane l of slot (a register row, or a predicate's pslot) as w holds it now; NULL. */
static stale_tag *rtag(sim_staletags *s, const sim_warp *w, int slot, int l) {
  return sim_lanetags_find(&s->tags, slot, l, bits_of(s, w, slot, l));
}

/* The tag on lane l of predicate p; NULL. */
static stale_tag *ptag(sim_staletags *s, int p, int l) {
  return sim_lanetags_find(&s->tags, pslot(s, p), l, 0);
}

/* Tags lane l of slot with t (the list's own may move: a copy), replacing any tag there. */
static void add(sim_staletags *s, const sim_warp *w, stale_tag t, int slot, int l) {
  sim_lanetags_add(&s->tags, &t, slot, l, bits_of(s, w, slot, l));
}

/* Whether the warp holds any tag. */
static int held(const sim_staletags *s) { return s->tags.n || s->nm; }

/* ---- tags on call parameters ---- */

/* A call not inlined (NVRTC's -G makes every call one, __shfl_down_sync's too) passes its
 * arguments and its return value through each lane's slice of call-parameter memory: st.param,
 * the call's or the return's copy, ld.param. A tag follows a value there when it is read back
 * with the size it was written with; anything else loses it. */

/* The tag on bytes [off, off + size) of lane l's parameters, exactly; NULL. */
static stale_tag *mfind(sim_staletags *s, int l, int off, int size) {
  for (int i = 0; i < s->nm; i++)
    if (s->mt[i].at.lane == l && s->mt[i].off == off && s->mt[i].size == size) return &s->mt[i];
  return NULL;
}

/* Drops the tags of lane l on any of bytes [off, off + size). */
static void mclear(sim_staletags *s, int l, int off, int size) {
  for (int i = 0; i < s->nm;) {
    const stale_tag *t = &s->mt[i];
    if (t->at.lane == l && t->off < off + size && off < t->off + t->size) {
      s->mt[i] = s->mt[--s->nm];
      continue;
    }
    i++;
  }
}

/* Tags bytes [off, off + size) of lane l's parameters with t. Out of room, nothing. */
static void madd(sim_staletags *s, stale_tag t, int l, int off, int size) {
  mclear(s, l, off, size);
  stale_tag *p = sim_lanetags_room(s->mt, s->nm, &s->capm, 16, sizeof *p);
  if (!p) return;
  s->mt = p;
  t.at.slot = -1;
  t.at.lane = (uint8_t)l;
  t.off = off;
  t.size = size;
  s->mt[s->nm++] = t;
}

/* memmove(to, from, n) in the parameters of lanes em: the tags inside the bytes copied go
 * along, those on the bytes overwritten go. */
static void mcopy(sim_staletags *s, uint32_t em, int to, int from, int n) {
  if (!s->nm || n <= 0 || to == from) return;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), k = 0;
    stale_tag moving[8];
    for (int i = 0; i < s->nm && k < 8; i++) {
      const stale_tag *t = &s->mt[i];
      if (t->at.lane == l && t->off >= from && t->off + t->size <= from + n) moving[k++] = *t;
    }
    mclear(s, l, to, n);
    for (int i = 0; i < k; i++) madd(s, moving[i], l, to + moving[i].off - from, moving[i].size);
  }
}

/* Of two tags met in lane l, the one to carry on: the lane's own shuffle read before one that
 * came from another lane, then the earlier, so that a report names where the lane itself first
 * went wrong. */
static const stale_tag *pick(int l, const stale_tag *a, const stale_tag *b) {
  if (!a || !b) return a ? a : b;
  if ((a->reader == l) != (b->reader == l)) return a->reader == l ? a : b;
  return b->when < a->when ? b : a;
}

/* t carried on through the instruction at pc: computed with when `computed`. */
static stale_tag carried(const stale_tag *t, int pc, int computed) {
  stale_tag r = *t;
  if (computed && r.via < 0) r.via = pc;
  return r;
}

/* ---- what instructions do with values ---- */

enum { K_PURE, K_EFFECT, K_SHFL, K_OPAQUE };

/* K_PURE: lane-local computation into registers or predicates, which carries tags on; K_EFFECT:
 * what can be seen outside the lane's registers, whose operands are uses; K_SHFL: the shuffle,
 * whose moved value sim_stale_shfl follows and whose other operands are uses; K_OPAQUE: writes
 * that the check cannot enumerate. */
static int kind_of(int op) {
  switch (op) {
    case SIM_OP_SHFL: return K_SHFL;
    case SIM_OP_TENSOR: case SIM_OP_CALLS: case SIM_OP_CALLI: case SIM_OP_RETS: return K_OPAQUE;
    case SIM_OP_LD: case SIM_OP_ST: case SIM_OP_ATOM: case SIM_OP_BRA: case SIM_OP_EXIT:
    case SIM_OP_RETF: case SIM_OP_CALL: case SIM_OP_VPRINTF: case SIM_OP_TRAP:
    case SIM_OP_BUILTIN: case SIM_OP_BAR: case SIM_OP_BARWARP: case SIM_OP_VOTE:
    case SIM_OP_MATCH: case SIM_OP_REDUX: case SIM_OP_TEX: return K_EFFECT;
    default: return K_PURE;
  }
}

/* The slots the instruction writes in the lanes it runs, into d (at most 5); how many. Every
 * slot it writes must be here: a tag left on a rewritten register whose bits happen to match
 * would make a finding up. */
static int written(const sim_staletags *s, const sim_inst *in, int *d) {
  int n = 0, op = in->op;
  if (sim_writes_pred(op)) {
    d[n++] = pslot(s, in->d);
    if (in->d2 >= 0 && (op == SIM_OP_SETP || op == SIM_OP_HSETP)) d[n++] = pslot(s, in->d2);
    return n;
  }
  switch (op) {
    case SIM_OP_LD: case SIM_OP_LDPARAM: case SIM_OP_UNPACK: case SIM_OP_TEX:
      for (int k = 0; k < 4; k++)
        if (in->v[k] >= 0 && (op == SIM_OP_TEX || k < in->vec)) d[n++] = in->v[k];
      return n;
    case SIM_OP_VOTE: d[n++] = in->sub == SIM_VOTE_BALLOT ? in->d : pslot(s, in->d); return n;
    case SIM_OP_BAR:
      if (in->sub) d[n++] = in->sub == SIM_BAR_POPC ? in->d : pslot(s, in->d);
      return n;
    case SIM_OP_SHFL: case SIM_OP_MATCH:
      d[n++] = in->d;
      if (in->d2 >= 0) d[n++] = pslot(s, in->d2);
      return n;
    default:
      if (in->d >= 0) d[n++] = in->d;
      return n;
  }
}

/* The register rows a K_PURE instruction computes its result from (not a select, setp or the
 * predicate logic, which pure_lane and pred_lane read themselves), into r (at most 4); how
 * many. */
static int pure_reads(const sim_inst *in, int *r) {
  int n = 0, op = in->op;
  switch (op) {
    case SIM_OP_PACK:
      for (int k = 0; k < in->vec && k < 4; k++)
        if (in->v[k] >= 0) r[n++] = in->v[k];
      return n;
    case SIM_OP_ALU: case SIM_OP_HALF: case SIM_OP_CARRY: {
      const int all[4] = {in->a, in->b, in->c, op == SIM_OP_ALU ? in->e : -1};
      for (int k = 0; k < 4; k++)
        if (all[k] >= 0) r[n++] = all[k];
      return n;
    }
    case SIM_OP_UNPACK: r[n++] = in->a; return n;
    default: break;
  }
  if (op < SIM_OP_MOV32 || op > SIM_OP_CVT_F32_U32) return 0; /* NOP, LDPARAM, ACTIVEMASK ... */
  if (in->a >= 0) r[n++] = in->a;
  if (op >= SIM_OP_ADD32 && op <= SIM_OP_FMA_F64 && in->b >= 0) r[n++] = in->b;
  if ((op == SIM_OP_MAD32 || op == SIM_OP_MAD64 || op == SIM_OP_MADWIDE_S32 ||
       op == SIM_OP_MADWIDE_U32 || op == SIM_OP_FMA_F32 || op == SIM_OP_FMA_F64) && in->c >= 0)
    r[n++] = in->c;
  return n;
}

/* Whether the defined operand x decides an integer and, or or multiply alone (lane values as
 * the instruction reads them): and with 0, or with all ones, a product with 0. */
static int decides(const sim_inst *in, uint64_t x) {
  switch (in->op) {
    case SIM_OP_AND32: case SIM_OP_MUL32: case SIM_OP_MULWIDE_S32: case SIM_OP_MULWIDE_U32:
      return (uint32_t)x == 0;
    case SIM_OP_AND64: case SIM_OP_MUL64: return x == 0;
    case SIM_OP_OR32: return (uint32_t)x == 0xffffffffu;
    case SIM_OP_OR64: return x == ~0ull;
    default: return 0;
  }
}

/* The tag lane l's result of a K_PURE instruction (not setp or a predicate's logic) gets from
 * its operands; NULL when none is tagged, or a defined one decides the result. */
static const stale_tag *pure_lane(sim_staletags *s, const sim_warp *w, const sim_inst *in,
                                  int l, int *moved) {
  *moved = 0;
  if (in->op == SIM_OP_SELP32 || in->op == SIM_OP_SELP64) {
    const stale_tag *pt = ptag(s, in->c, l), *ta = rtag(s, w, in->a, l);
    const stale_tag *tb = rtag(s, w, in->b, l);
    int p = (int)(w->P[in->c] >> l & 1);
    *moved = 1;
    if (!pt) return p ? ta : tb;
    /* the choice is undefined: the result is, unless both operands are one defined value */
    if (ta || tb) return pick(l, ta, tb);
    *moved = 0;
    return w->R[(size_t)in->a * SIM_WARP + l] == w->R[(size_t)in->b * SIM_WARP + l] ? NULL : pt;
  }
  int r[4], n = pure_reads(in, r);
  const stale_tag *got = NULL;
  uint64_t other = 0;
  int others = 0;
  for (int k = 0; k < n; k++) {
    const stale_tag *t = rtag(s, w, r[k], l);
    if (t) got = pick(l, got, t);
    if (!t && k < 2) {
      other = w->R[(size_t)r[k] * SIM_WARP + l];
      others++;
    }
  }
  if (!got) return NULL;
  /* a multiply-add's product decided by a defined 0 still adds c: its tag is c's */
  int mad = in->op == SIM_OP_MAD32 || in->op == SIM_OP_MAD64 || in->op == SIM_OP_MADWIDE_S32 ||
            in->op == SIM_OP_MADWIDE_U32;
  if (others == 1 && n >= 2) {
    sim_inst as = *in;
    if (mad) as.op = in->op == SIM_OP_MAD64 ? SIM_OP_MUL64 : in->op == SIM_OP_MAD32
                     ? SIM_OP_MUL32 : SIM_OP_MULWIDE_U32;
    if (decides(&as, other)) return mad ? rtag(s, w, in->c, l) : NULL;
  }
  *moved = in->op == SIM_OP_MOV32 || in->op == SIM_OP_MOV64;
  return got;
}

/* The comparison of setp or hsetp in lane l (hsetp: the low halves, or the high ones when
 * high), as the interpreter makes it. */
static int compare_lane(const sim_inst *in, const sim_warp *w, int l, int high) {
  uint64_t a = w->R[(size_t)in->a * SIM_WARP + l];
  uint64_t b = in->b >= 0 ? w->R[(size_t)in->b * SIM_WARP + l] : 0; /* testp has no b */
  if (in->op == SIM_OP_HSETP) {
    int sh = high ? 16 : 0, ftz = (in->mod & SIM_MOD_FTZ) != 0;
    return sim_half_compare(in->sub, in->ty, ftz, (uint32_t)(a >> sh) & 0xffffu,
                            (uint32_t)(b >> sh) & 0xffffu);
  }
  if (in->ty == SIM_T_F32 && (in->mod & SIM_MOD_FTZ)) {
    float x = f32(a), y = f32(b);
    if (fpclassify(x) == FP_SUBNORMAL) x = 0;
    if (fpclassify(y) == FP_SUBNORMAL) y = 0;
    a = bf32(x);
    b = bf32(y);
  }
  return sim_compare(in->sub, in->ty, a, b);
}

/* x op y on predicate lanes (op: 1 and, 2 or, else xor) whose tags are tx and ty: the result's
 * tag, or NULL when it is defined (both are, or a defined one decides it). */
static const stale_tag *logic(int l, int op, int x, const stale_tag *tx, int y,
                              const stale_tag *ty) {
  if (!tx && !ty) return NULL;
  if (op == 1 && ((!tx && !x) || (!ty && !y))) return NULL;
  if (op == 2 && ((!tx && x) || (!ty && y))) return NULL;
  return pick(l, tx, ty);
}

/* The tags lane l's setp, hsetp or predicate logic gives its destinations: out[0] d's, out[1]
 * d2's. */
static void pred_lane(sim_staletags *s, const sim_warp *w, const sim_inst *in, int l,
                      const stale_tag **out) {
  const uint32_t *P = w->P;
  out[0] = out[1] = NULL;
  switch (in->op) {
    case SIM_OP_PAND: case SIM_OP_POR: case SIM_OP_PXOR:
      out[0] = logic(l, in->op == SIM_OP_PAND ? 1 : in->op == SIM_OP_POR ? 2 : 3,
                     (int)(P[in->a] >> l & 1), ptag(s, in->a, l), (int)(P[in->b] >> l & 1),
                     ptag(s, in->b, l));
      return;
    case SIM_OP_PNOT: case SIM_OP_PMOV: out[0] = ptag(s, in->a, l); return;
    case SIM_OP_PSETI: return;
    default: break; /* SETP, HSETP */
  }
  const stale_tag *ta = rtag(s, w, in->a, l), *tb = rtag(s, w, in->b, l);
  const stale_tag *tc = pick(l, ta, tb);
  int x2 = in->op == SIM_OP_HSETP && (in->ty == SIM_T_F16X2 || in->ty == SIM_T_BF16X2);
  if (!(in->flags & SIM_IF_BPRED)) {
    out[0] = out[1] = tc;
    return;
  }
  /* setp.op: each result combined with the predicate c (its complement when e is set) */
  int c = (int)(P[in->c] >> l & 1) ^ (in->e ? 1 : 0), op = in->ty2 == 1 ? 1 : in->ty2 == 2 ? 2 : 3;
  const stale_tag *pc = ptag(s, in->c, l);
  int t = tc ? 0 : compare_lane(in, w, l, 0);
  int f = tc ? 0 : x2 ? compare_lane(in, w, l, 1) : !t;
  out[0] = logic(l, op, t, tc, c, pc);
  out[1] = logic(l, op, f, tc, c, pc);
}

/* ---- the plan for a pure instruction ---- */

/* The tags a K_PURE instruction's destinations get, worked out before it runs (its destination
 * may be one of its operands). */
typedef struct pure_plan {
  stale_tag put[2][SIM_WARP]; /* per lane that runs it: [0] its destinations', [1] d2's (setp) */
  uint32_t has[2];            /* the lanes of each with one */
  stale_tag keep[SIM_WARP];   /* per lane a tagged guard left out: its destinations' */
  uint32_t kept;
} pure_plan;

static void plan_pure(sim_staletags *s, const sim_warp *w, const sim_inst *in, int pc,
                      uint32_t em, uint32_t active, pure_plan *pl) {
  int pred = sim_writes_pred(in->op);
  pl->has[0] = pl->has[1] = pl->kept = 0;
  for (uint32_t mm = active; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), moved = 0;
    const stale_tag *g = in->guard >= 0 ? ptag(s, in->guard, l) : NULL;
    if (!(em >> l & 1)) {
      if (g) {
        pl->keep[l] = carried(g, pc, 1);
        pl->kept |= 1u << l;
      }
      continue;
    }
    const stale_tag *out[2] = {NULL, NULL};
    if (pred) pred_lane(s, w, in, l, out);
    else out[0] = pure_lane(s, w, in, l, &moved);
    for (int k = 0; k < 1 + pred; k++) {
      const stale_tag *t = out[k] ? out[k] : g; /* a tagged guard: written or not is undefined */
      if (!t) continue;
      pl->put[k][l] = carried(t, pc, !(out[k] && moved));
      pl->has[k] |= 1u << l;
    }
  }
}

/* After lanes em of the K_PURE instruction ran: its destinations' tags as planned. */
static void apply_pure(sim_staletags *s, const sim_warp *w, const sim_inst *in, uint32_t em,
                       const pure_plan *pl) {
  int d[5], n = written(s, in, d);
  int pred = sim_writes_pred(in->op);
  for (int k = 0; k < n; k++) {
    sim_lanetags_untag(&s->tags, d[k], em);
    int which = pred && k == 1;
    for (uint32_t mm = pl->has[which]; mm; mm &= mm - 1)
      add(s, w, pl->put[which][__builtin_ctz(mm)], d[k], __builtin_ctz(mm));
    for (uint32_t mm = pl->kept; mm; mm &= mm - 1) {
      int l = __builtin_ctz(mm);
      if (!rtag(s, w, d[k], l)) add(s, w, pl->keep[l], d[k], l); /* an older tag stays */
    }
  }
}

/* ---- call parameters ---- */

/* What an effect does with tags on call parameters, found before it runs. */
typedef struct param_plan {
  stale_tag got[4][SIM_WARP]; /* ld.param: the tag each element reads, per lane */
  uint32_t has[4];
  int to, from, n;            /* ret: the copy of the return value it makes */
} param_plan;

static void params_before(sim_staletags *s, const sim_warp *w, const sim_module *m,
                          const sim_inst *in, uint32_t em, param_plan *pp) {
  pp->n = 0;
  memset(pp->has, 0, sizeof pp->has);
  if (in->op == SIM_OP_LD && in->space == SIM_SP_FPARAM && s->nm) {
    for (int k = 0; k < in->vec && k < 4; k++)
      for (uint32_t mm = em; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        const stale_tag *t = mfind(s, l, (int)in->imm + k * in->size, in->size);
        if (t) {
          pp->got[k][l] = *t;
          pp->has[k] |= 1u << l;
        }
      }
  } else if (in->op == SIM_OP_RETF && w->ncalls > 0) {
    const sim_call *c = &m->calls[w->calls[w->ncalls - 1].call];
    const sim_func *f = &m->funcs[c->func];
    if (c->ret_off >= 0 && f->ret_off >= 0) {
      pp->to = c->ret_off;
      pp->from = f->ret_off;
      pp->n = c->ret_size < f->ret_size ? c->ret_size : f->ret_size;
    }
  }
}

/* After lanes em of the effect ran (active: its frame's lanes, which a call and a return move
 * parameters for): its register destinations' tags dropped, those on parameters moved. */
static void params_after(sim_staletags *s, const sim_warp *w, const sim_module *m,
                         const sim_inst *in, uint32_t em, uint32_t active,
                         const param_plan *pp) {
  int d[5], n = written(s, in, d);
  for (int k = 0; k < n; k++) sim_lanetags_untag(&s->tags, d[k], em);
  if (in->op == SIM_OP_ST && in->space == SIM_SP_FPARAM) {
    for (int k = 0; k < in->vec && k < 4; k++)
      for (uint32_t mm = em; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm), off = (int)in->imm + k * in->size;
        const stale_tag *t = rtag(s, w, in->v[k], l);
        if (t) madd(s, *t, l, off, in->size);
        else if (s->nm) mclear(s, l, off, in->size);
      }
  } else if (in->op == SIM_OP_LD && in->space == SIM_SP_FPARAM) {
    for (int k = 0; k < in->vec && k < 4; k++)
      for (uint32_t mm = pp->has[k]; mm; mm &= mm - 1)
        add(s, w, pp->got[k][__builtin_ctz(mm)], in->v[k], __builtin_ctz(mm));
  } else if (in->op == SIM_OP_CALL) {
    const sim_call *c = &m->calls[in->imm];
    const sim_func *f = &m->funcs[c->func];
    for (int i = 0; i < c->nargs && i < f->nparams; i++) {
      int len = c->arg_size[i] < (int)f->params[i].size ? c->arg_size[i] : (int)f->params[i].size;
      mcopy(s, active, (int)f->params[i].offset, c->arg_off[i], len);
    }
  } else if (in->op == SIM_OP_RETF) {
    mcopy(s, active, pp->to, pp->from, pp->n);
  } else if ((in->op == SIM_OP_VPRINTF || in->op == SIM_OP_BUILTIN) && s->nm) {
    const sim_call *c = &m->calls[in->imm]; /* printf's and malloc's results, defined */
    for (uint32_t mm = em; mm && c->ret_off >= 0; mm &= mm - 1)
      mclear(s, __builtin_ctz(mm), c->ret_off, c->ret_size);
  }
}

/* ---- uses ---- */

enum { U_ADDR, U_STORED, U_OPERAND, U_BRANCH, U_GUARD };

typedef struct stale_use {
  int slot; /* what it reads */
  int role; /* U_* */
} stale_use;

/* The operands of an effect or a shuffle that are uses, into u (at most 8); how many. A value
 * stored as a call's parameter is not one (the callee may leave it out): its tag is lost. */
static int uses_of(const sim_staletags *s, const sim_inst *in, stale_use *u) {
  int n = 0;
#define USE(x, r)                                   \
  do {                                              \
    if ((x) >= 0) u[n++] = (stale_use){(x), (r)};   \
  } while (0)
  switch (in->op) {
    case SIM_OP_LD: USE(in->a, U_ADDR); break;
    case SIM_OP_ST:
      USE(in->a, U_ADDR);
      if (in->space != SIM_SP_PARAM && in->space != SIM_SP_FPARAM)
        for (int k = 0; k < in->vec && k < 4; k++) USE(in->v[k], U_STORED);
      break;
    case SIM_OP_ATOM:
      USE(in->a, U_ADDR);
      USE(in->b, U_OPERAND);
      USE(in->c, U_OPERAND);
      break;
    case SIM_OP_TEX: {
      const int coord[3] = {in->b, in->c, in->e};
      USE(in->a, U_OPERAND);
      for (int k = 0; k < in->sub && k < 3; k++) USE(coord[k], U_OPERAND);
      break;
    }
    case SIM_OP_VOTE:
      USE(pslot(s, in->a), U_OPERAND);
      USE(in->e, U_OPERAND);
      break;
    case SIM_OP_MATCH: case SIM_OP_REDUX:
      USE(in->a, U_OPERAND);
      USE(in->e, U_OPERAND);
      break;
    case SIM_OP_BARWARP: USE(in->a, U_OPERAND); break;
    case SIM_OP_BAR:
      if (in->sub) USE(pslot(s, (int)in->imm), U_OPERAND);
      break;
    case SIM_OP_SHFL: /* its value a is followed (sim_stale_shfl) */
      USE(in->b, U_OPERAND);
      USE(in->c, U_OPERAND);
      USE(in->e, U_OPERAND);
      break;
    default: break;
  }
#undef USE
  return n;
}

/* "st.global", "bra", "shfl.sync.down.b32": the instruction as the kernel's PTX names it; a
 * warp-wide one by its CUDA name ("__ballot_sync"). */
static void ptx_name(const sim_inst *in, char *buf, size_t len) {
  static const char *const space[] = {"", ".global", ".shared", ".local", ".const", ".param",
                                      ".param", ""};
  static const char *const mode[] = {"up", "down", "bfly", "idx"};
  static const char *const vote[] = {"__all_sync", "__any_sync", "__uni_sync", "__ballot_sync"};
  const char *sp = in->space < 8 ? space[in->space] : "";
  switch (in->op) {
    case SIM_OP_VOTE: snprintf(buf, len, "%s", vote[(in->sub - SIM_VOTE_ALL) & 3]); return;
    case SIM_OP_MATCH:
      snprintf(buf, len, in->sub == SIM_MATCH_ALL ? "__match_all_sync" : "__match_any_sync");
      return;
    case SIM_OP_REDUX: snprintf(buf, len, "a __reduce_*_sync"); return;
    case SIM_OP_BARWARP: snprintf(buf, len, "__syncwarp"); return;
    case SIM_OP_BAR: snprintf(buf, len, "__syncthreads_%s", in->sub == SIM_BAR_POPC ? "count"
                              : in->sub == SIM_BAR_AND ? "and" : "or"); return;
    case SIM_OP_LD: snprintf(buf, len, "ld%s", sp); return;
    case SIM_OP_ST: snprintf(buf, len, "st%s", sp); return;
    case SIM_OP_ATOM: snprintf(buf, len, "atom%s", sp); return;
    case SIM_OP_SHFL: snprintf(buf, len, "shfl.sync.%s.b32", mode[(in->sub - SIM_SHFL_UP) & 3]);
      return;
    case SIM_OP_BRA: snprintf(buf, len, "bra"); return;
    case SIM_OP_EXIT: snprintf(buf, len, "exit"); return;
    case SIM_OP_TEX: snprintf(buf, len, "tex"); return;
    default: snprintf(buf, len, "a call"); return; /* call, ret, printf, trap */
  }
}

/* Why the lane the shuffle read was not running it: "does not exist (the block has 8 threads:
 * its last warp, warp 0, has lanes 0-7)". */
static void why_text(const sim_worker *wk, const sim_warp *w, const stale_tag *t, char *buf,
                     size_t len) {
  if (t->why == WHY_NONE) {
    int n = wk->run->nthreads, last = n - w->index * SIM_WARP - 1;
    if (last == 0)
      snprintf(buf, len, "does not exist (the block has %d threads: its last warp, warp %d, has "
               "lane 0 alone)", n, w->index);
    else
      snprintf(buf, len, "does not exist (the block has %d threads: its last warp, warp %d, has "
               "lanes 0-%d)", n, w->index, last);
  } else if (t->why == WHY_GONE) {
    snprintf(buf, len, "had returned: it left the kernel before the shuffle (the lanes that ran "
             "it were 0x%08x)", t->ran);
  } else {
    snprintf(buf, len, "was not running the shuffle: it was on another path of a branch (the "
             "lanes that ran it were 0x%08x)", t->ran);
  }
}

/* The finding: lane `lane` of w reads the tagged t for instruction in, in the role given. Under
 * warnings (the race check's "warn") it is told and the warp's tags dropped, returning 1 (the
 * first warning of a launch is kept, so following on would only cost); else the launch fails,
 * -1. */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report(sim_worker *wk, sim_warp *w, int lane, const sim_inst *in, const stale_tag *t,
                  int role) {
  static const char *const names[] = {"__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                                      "__shfl_sync"};
  const sim_module *m = wk->run->m;
  const sim_inst *sh = &m->code[t->pc];
  char shname[32], at[300], why[200], via[340], use[32], how[80], moved[64];
  ptx_name(sh, shname, sizeof shname);
  sim_srcline(m, &m->code[t->site], at, sizeof at);
  why_text(wk, w, t, why, sizeof why);
  via[0] = moved[0] = 0;
  if (t->via >= 0) {
    char line[300];
    sim_srcline(m, &m->code[t->via], line, sizeof line);
    snprintf(via, sizeof via, ", through what %s computed from it", line);
  }
  if (t->reader != lane)
    snprintf(moved, sizeof moved, " (it came from lane %d by another shuffle)", t->reader);
  ptx_name(in, use, sizeof use);
  switch (role) {
    case U_ADDR: snprintf(how, sizeof how, "as the address of %s", use); break;
    case U_STORED: snprintf(how, sizeof how, "as the value %s writes to memory", use); break;
    case U_OPERAND: snprintf(how, sizeof how, "as an operand of %s", use); break;
    case U_BRANCH: snprintf(how, sizeof how, "to decide a branch (%s)", use); break;
    default: snprintf(how, sizeof how, "in the predicate that guards %s", use); break;
  }
#define STALE_USE                                                                              \
  "%s (%s) at %s gave lane %d the value of lane %d, which %s; on a GPU that value is "         \
  "undefined. Lane %d uses it here%s%s, %s. Use what a shuffle gets only from a lane that "    \
  "runs it (test the source lane against the mask of the lanes that run it), or keep every "   \
  "lane it reads running it"
  const char *what = names[(sh->sub - SIM_SHFL_UP) & 3];
  if (wk->run->race_warn) {
    sim_warn(wk, w, lane, in, STALE_USE, what, shname, at, t->reader, t->src, why, lane, moved,
             via, how);
    sim_stale_clear(w->stale);
    return 1;
  }
  return sim_fail(wk, w, lane, in, STALE_USE, what, shname, at, t->reader, t->src, why, lane,
                  moved, via, how);
#undef STALE_USE
}

/* Before lanes em of an effect or a shuffle run (active: the lanes its guard chose them from):
 * the first lane, in lane order, that uses a tagged value is reported. -1 when that fails the
 * launch, 1 after a warning, else 0. */
static int check_uses(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em,
                      uint32_t active) {
  sim_staletags *s = w->stale;
  stale_use u[8];
  int n = uses_of(s, in, u);
  for (uint32_t mm = active; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    const stale_tag *t = in->guard >= 0 ? ptag(s, in->guard, l) : NULL;
    if (t) return report(wk, w, l, in, t, in->op == SIM_OP_BRA ? U_BRANCH : U_GUARD);
    if (!(em >> l & 1)) continue;
    for (int k = 0; k < n; k++)
      if ((t = rtag(s, w, u[k].slot, l)) != NULL) return report(wk, w, l, in, t, u[k].role);
  }
  return 0;
}

/* ---- tags no lane will read ---- */

/* Whether in may read slot: any operand field naming it (more than it reads, which only keeps a
 * tag longer). */
static int may_read(const sim_staletags *s, const sim_inst *in, int slot) {
  if (slot >= s->nrows) {
    int p = slot - s->nrows;
    return in->guard == p || in->a == p || in->b == p || in->c == p || in->e == p ||
           in->imm == p;
  }
  if (in->a == slot || in->b == slot || in->c == slot || in->e == slot) return 1;
  for (int k = 0; k < 4; k++)
    if (in->v[k] == slot) return 1;
  return 0;
}

/* Whether slot is dead at pc: every way on from pc writes it, unguarded, before any instruction
 * that may read it, or leaves the kernel. A call, a return and the instructions whose writes are
 * not known answer no, as does running out of memory: a tag kept costs time, never a finding.
 * The last answers are kept (the code does not change during a launch). */
static int dead_at(sim_staletags *s, const sim_module *m, int slot, int pc) {
  unsigned h = ((unsigned)slot * 2654435761u ^ (unsigned)pc) % STALE_MEMO;
  if (s->memo[h].slot == slot && s->memo[h].pc == pc) return s->memo[h].dead;
  if (!s->seen) {
    s->seen = malloc(((size_t)m->ncode + 63) / 64 * sizeof *s->seen);
    s->todo = malloc(((size_t)m->ncode + 1) * sizeof *s->todo);
    if (!s->seen || !s->todo) {
      free(s->seen);
      free(s->todo);
      s->seen = NULL;
      s->todo = NULL;
      return 0;
    }
  }
  memset(s->seen, 0, ((size_t)m->ncode + 63) / 64 * sizeof *s->seen);
  int top = 0, dead = 1;
  s->todo[top++] = pc;
  while (top && dead) {
    for (int p = s->todo[--top];;) {
      if (p < 0 || p >= m->ncode) {
        dead = 0;
        break;
      }
      if (s->seen[p >> 6] >> (p & 63) & 1) break;
      s->seen[p >> 6] |= 1ull << (p & 63);
      const sim_inst *in = &m->code[p];
      int op = in->op, d[5], nd = 0, writes = 0;
      if (kind_of(op) == K_OPAQUE || op == SIM_OP_CALL || op == SIM_OP_RETF ||
          may_read(s, in, slot)) {
        dead = 0;
        break;
      }
      if (in->guard < 0) nd = written(s, in, d);
      for (int k = 0; k < nd; k++) writes |= d[k] == slot;
      if (writes || ((op == SIM_OP_EXIT || op == SIM_OP_TRAP) && in->guard < 0)) break;
      if (op == SIM_OP_BRA) {
        if (in->guard >= 0) s->todo[top++] = p + 1; /* each branch is pushed once: seen */
        p = in->target;
        continue;
      }
      p++;
    }
  }
  s->memo[h].slot = slot;
  s->memo[h].pc = pc;
  s->memo[h].dead = dead;
  return dead;
}

/* The pc lane l of w runs next: its topmost frame's; -1 inside a stacked call, or none. */
static int lane_pc(const sim_warp *w, int l) {
  for (int f = w->sp - 1; f >= 0; f--) {
    const sim_frame *t = &w->stack[f];
    if (t->rpc == SIM_RPC_CALL) return -1;
    if ((t->mask & w->live) >> l & 1) return t->pc;
  }
  return -1;
}

/* Drops the tags no lane will read: of a lane that has exited, void (their register changed),
 * or on a slot dead where the lane goes on. Those on call parameters stay until overwritten. */
static void sweep(sim_staletags *s, const sim_worker *wk, const sim_warp *w) {
  for (int i = 0; i < s->nm;) {
    if (!(w->live >> s->mt[i].at.lane & 1)) {
      s->mt[i] = s->mt[--s->nm];
      continue;
    }
    i++;
  }
  for (int i = 0; i < s->tags.n;) {
    const sim_lanetag *t = sim_lanetags_at(&s->tags, i);
    int l = t->lane, pc = lane_pc(w, l);
    int gone = !(w->live >> l & 1) || t->bits != bits_of(s, w, t->slot, l) ||
               (pc >= 0 && dead_at(s, wk->run->m, t->slot, pc));
    if (gone) sim_lanetags_untag(&s->tags, t->slot, 1u << l); /* moves another tag to i */
    else i++;
  }
}

/* ---- stepping ---- */

/* Whether a finding now could no longer be told: under warnings, one is kept already that this
 * block's would not replace (sim_warn keeps the first of the earliest block), or there is
 * nowhere to tell it. */
static int silent(const sim_worker *wk) {
  const sim_run *run = wk->run;
  if (!run->race_warn) return 0;
  if (!run->opts || !run->opts->warning || !run->opts->warninglen) return 1;
  if (run->nw <= 1) return run->opts->warning[0] != 0;
  return wk->slots[wk->cur].nth >= atomic_load(&run->warn_nth);
}

int sim_stale_shfl(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em,
                   const uint8_t *src, const uint64_t *A) {
  uint32_t outside = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1)
    if (!(em >> src[__builtin_ctz(mm)] & 1)) outside |= 1u << __builtin_ctz(mm);
  if (outside && silent(wk)) outside = 0;
  sim_staletags *s = w->stale;
  if (!s && outside) s = tags_of(wk, w);
  if (!s) return 0;
  int pc = (int)(in - wk->run->m->code), exist = wk->run->nthreads - w->index * SIM_WARP;
  stale_tag got[SIM_WARP];
  uint32_t has = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), j = src[l];
    const stale_tag *t = NULL;
    if (outside >> l & 1) {
      stale_tag f = {0};
      f.reader = (uint8_t)l;
      f.src = (uint8_t)j;
      f.why = (uint8_t)(j >= exist ? WHY_NONE : !(w->live >> j & 1) ? WHY_GONE : WHY_AWAY);
      f.pc = f.site = pc;
      if (in->line <= 0 && w->ncalls > 0) f.site = w->calls[w->ncalls - 1].pc - 1;
      f.via = -1;
      f.ran = em;
      f.when = w->clock;
      got[l] = f;
      has |= 1u << l;
    } else if ((t = sim_lanetags_find(&s->tags, in->a, j, A[j])) != NULL) {
      got[l] = *t; /* a tagged value moves with it */
      has |= 1u << l;
    }
  }
  sim_lanetags_untag(&s->tags, in->d, em);
  sim_lanetags_untag(&s->tags, pslot(s, in->d2), em); /* in range or not: from b and c */
  for (uint32_t mm = has; mm; mm &= mm - 1)
    add(s, w, got[__builtin_ctz(mm)], in->d, __builtin_ctz(mm));
  return held(s) ? SIM_EX_STALE : 0;
}

/* One instruction of w, its tags followed: SIM_W_* as the interpreter returns it, SIM_W_ERR
 * with a use reported. */
static int step(sim_worker *wk, sim_warp *w) {
  sim_staletags *s = w->stale;
  uint32_t em = 0, active = 0;
  const sim_inst *in = sim_exec_next(wk, w, &em, &active);
  if (!in || kind_of(in->op) == K_OPAQUE) { /* registers change in ways not followed */
    sim_stale_clear(s);
    return sim_exec_warp_interp(wk, w, 1);
  }
  const sim_module *m = wk->run->m;
  int kind = kind_of(in->op), pc = (int)(in - m->code);
  pure_plan pl;
  param_plan pp;
  if (kind != K_PURE && check_uses(wk, w, in, em, active) < 0) return SIM_W_ERR;
  if (kind == K_PURE) plan_pure(s, w, in, pc, em, active, &pl);
  if (kind == K_EFFECT) params_before(s, w, m, in, em, &pp);
  int r = sim_exec_warp_interp(wk, w, 1);
  if (r == SIM_W_ERR) return r;
  if (kind == K_PURE) apply_pure(s, w, in, em, &pl);
  else if (kind == K_EFFECT) params_after(s, w, m, in, em, active, &pp);
  if (held(s) && ++s->steps >= STALE_SWEEP) {
    s->steps = 0;
    sweep(s, wk, w);
  }
  return r;
}

int sim_stale_warp(sim_worker *wk, sim_warp *w, long budget) {
  sim_staletags *s = w->stale;
  const uint64_t c0 = w->clock; /* the warp's clock counts the instructions it runs */
  for (;;) {
    long left = budget - (long)(w->clock - c0);
    if (!held(s)) {
      int r = sim_exec_warp_interp(wk, w, left > 0 ? left : 0);
      if (r != SIM_W_RUN || w->loop_paused || !held(s)) return r;
      s->steps = STALE_SWEEP - 1; /* tags just made: a first sweep after one step */
      continue;
    }
    if (left <= 0) return sim_exec_warp_interp(wk, w, 0);
    int r = step(wk, w);
    if (r != SIM_W_RUN || w->loop_paused) return r;
  }
}
