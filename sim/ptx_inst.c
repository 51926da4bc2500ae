/* ptx_inst.c: decodes one PTX instruction into a sim_inst record.
 *
 * Stance: the opcode word is split on dots into a base name and modifiers; the base name finds
 * the instruction's row of ptx_opcodes.def, and each modifier is classified once against it
 * (type, state space, rounding, comparison, flags, the row's own words), so that a type or a
 * modifier the row does not take fails here, for every instruction alike. Then the row's handler
 * reads the operands and picks the most specialised executor opcode it can (ADD32 rather than
 * ALU/ADD). Immediates and variable addresses become constant rows, so the executor sees
 * registers only. Anything not understood fails the load with the instruction and its PTX line:
 * refusing early beats computing something subtly different from the GPU, or nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_emit.h"
#include "ptx_inst.h"
#include "ptx_mbarrier.h"
#include "ptx_param_addr.h"
#include "ptx_tensor.h"
#include "ptx_texture.h"

/* ---- the table ----
 *
 * ptx_opcodes.def's INST rows: what each instruction takes and which function decodes it. The
 * classes its types and mods columns name: */
#define TY(t) (1u << SIM_T_##t)
#define TB (TY(B8) | TY(B16) | TY(B32) | TY(B64))
#define TU (TY(U8) | TY(U16) | TY(U32) | TY(U64))
#define TS (TY(S8) | TY(S16) | TY(S32) | TY(S64))
#define TI (TB | TU | TS)
#define TF (TY(F32) | TY(F64))
#define TH (TY(F16) | TY(BF16) | TY(F16X2) | TY(BF16X2))
#define TX (TY(U16X2) | TY(S16X2))
#define T8 (TY(E4M3X2) | TY(E5M2X2))
#define TP TY(PRED)
#define TN 0u
enum {
  MD_RND = 1 << 0, MD_RNDI = 1 << 1, MD_FTZ = 1 << 2, MD_SAT = 1 << 3, MD_APPROX = 1 << 4,
  MD_CC = 1 << 5, MD_VEC = 1 << 6, MD_SPACE = 1 << 7, MD_CMP = 1 << 8, MD_ORDER = 1 << 9,
  MD_CACHE = 1 << 10, MD_SYNC = 1 << 11, MD_UNI = 1 << 12,
  MD_OWN = 1 << 13 /* not a modifier: the decoder reads its own operand list (call) */
};

typedef void (*decoder)(ictx *c, int arg);
typedef struct inst_row {
  const char *name;
  decoder decode; /* reads the operands (parsed into c, but for MD_OWN) and emits */
  int arg;        /* decode's argument */
  unsigned types; /* the SIM_T_* it takes, one bit each */
  unsigned mods;  /* the MD_* it takes */
  const char *words; /* the other modifier words, '|' between them; "*": decode checks them */
} inst_row;

static const inst_row *find_row(const char *base); /* the row of base, or NULL */

/* ---- modifiers ---- */

static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                                        "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const rnd_names[] = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"};
/* Words of one meaning wherever they appear, which change nothing the simulator computes (its
 * memory is coherent, its caches a model): the instructions whose rows take their class. */
static const struct {
  const char *name;
  unsigned md; /* MD_* */
} class_words[] = {
    {"volatile", MD_ORDER}, {"relaxed", MD_ORDER}, {"acquire", MD_ORDER}, {"release", MD_ORDER},
    {"acq_rel", MD_ORDER},  {"sc", MD_ORDER},      {"weak", MD_ORDER},    {"cta", MD_ORDER},
    {"gpu", MD_ORDER},      {"sys", MD_ORDER},     {"cluster", MD_ORDER}, {"ca", MD_CACHE},
    {"cg", MD_CACHE},       {"cs", MD_CACHE},      {"lu", MD_CACHE},      {"cv", MD_CACHE},
    {"wb", MD_CACHE},       {"wt", MD_CACHE},      {"nc", MD_CACHE},      {"aligned", MD_SYNC},
    {"sync", MD_SYNC},      {"uni", MD_UNI},       {"cc", MD_CC},         {NULL, 0}};

/* The ordering word s[0..n) gives an access or a fence (ptx_emit.h's MO_*), 0 for any other. */
static int order_of(const char *s, int n) {
  static const struct {
    const char *name;
    int mo;
  } orders[] = {{"relaxed", MO_SEM}, {"acquire", MO_SEM | MO_ACQ}, {"release", MO_SEM | MO_REL},
                {"acq_rel", MO_SEM | MO_ACQ | MO_REL}, {"sc", MO_SEM | MO_ACQ | MO_REL}};
  for (size_t k = 0; k < sizeof orders / sizeof orders[0]; k++)
    if (ptx_word_eq(s, n, orders[k].name)) return orders[k].mo;
  return 0;
}

/* Is s[0..n) one of the '|'-separated words of list? */
static int in_list(const char *list, const char *s, int n) {
  for (const char *p = list; *p; p += strcspn(p, "|"), p += *p == '|')
    if ((int)strcspn(p, "|") == n && !memcmp(p, s, (size_t)n)) return 1;
  return 0;
}

/* Modifier words that set one field of mods: a state space, a flag or a vector width. */
enum { MF_SPACE, MF_FTZ, MF_SAT, MF_APPROX, MF_FULL, MF_VEC };
static const struct {
  const char *name;
  int field; /* which field of mods: MF_* */
  int value;
} flag_mods[] = {
    {"global", MF_SPACE, SIM_SP_GLOBAL}, {"shared", MF_SPACE, SIM_SP_SHARED},
    {"local", MF_SPACE, SIM_SP_LOCAL}, {"const", MF_SPACE, SIM_SP_CONST},
    {"param", MF_SPACE, SIM_SP_PARAM}, {"ftz", MF_FTZ, 1}, {"sat", MF_SAT, 1},
    {"approx", MF_APPROX, 1}, {"full", MF_FULL, 1}, {"v2", MF_VEC, 2}, {"v4", MF_VEC, 4},
    {NULL, 0, 0}};

/* Index of word s[0..n) among the first count names (a NULL ends them early), or -1. */
static int word_index(const char *s, int n, const char *const *names, int count) {
  for (int k = 0; k < count && names[k]; k++)
    if (ptx_word_eq(s, n, names[k])) return k;
  return -1;
}

/* Sets the field of md that the flag word s[0..n) names and returns its MD_* class; 0 if it is
 * no such word. */
static unsigned flag_mod(mods *md, const char *s, int n) {
  int k = 0;
  while (flag_mods[k].name && !ptx_word_eq(s, n, flag_mods[k].name)) k++;
  if (!flag_mods[k].name) return 0;
  int v = flag_mods[k].value;
  switch (flag_mods[k].field) {
    case MF_SPACE: md->space = v; return MD_SPACE;
    case MF_FTZ: md->ftz = v; return MD_FTZ;
    case MF_SAT: md->sat = v; return MD_SAT;
    case MF_APPROX: md->approx = v; return MD_APPROX;
    case MF_FULL: md->full = v; return MD_APPROX;
    default: md->vec = v; return MD_VEC;
  }
}

/* The MD_* class of a modifier of fixed meaning, s[0..n), recorded in md; 0 if it has none. */
static unsigned class_mod(mods *md, const inst_row *row, const char *s, int n) {
  unsigned f = flag_mod(md, s, n);
  if (f) return f;
  int k = word_index(s, n, rnd_names, 8);
  if (k >= 0) {
    md->rnd = k;
    md->has_rnd = 1;
    return k < SIM_RNI ? MD_RND : MD_RNDI;
  }
  k = word_index(s, n, cmp_names, 18);
  if (k >= 0 && (row->mods & MD_CMP)) {
    md->cmp = k;
    md->has_cmp = 1;
    return MD_CMP;
  }
  for (k = 0; class_words[k].name; k++)
    if (ptx_word_eq(s, n, class_words[k].name)) {
      if (class_words[k].md == MD_CC) md->cc = 1;
      /* any ordering but .weak makes the access one the compiler may not keep in a register */
      if (class_words[k].md == MD_ORDER && !ptx_word_eq(s, n, "weak")) md->vol = 1;
      md->sem |= order_of(s, n);
      return class_words[k].md;
    }
  return 0;
}

/* Classifies one modifier word s[0..n) of row's instruction into md: a type, one of the row's
 * words (first, so that vote's .uni is vote's and not bra's), a modifier of fixed meaning. NULL
 * when row takes it, else why not (into why). The reason speaks of the simulator's instruction,
 * not of PTX's: a word PTX has but no row lists (a form of a later GPU's) is refused as well. */
static const char *add_mod(mods *md, const inst_row *row, const char *s, int n, char *why,
                           size_t len) {
  int ty = ptx_type_of(s, n);
  if (ty) {
    if (md->ntypes == 4) return "more than four types";
    if (!(row->types & (1u << ty))) {
      snprintf(why, len, "the simulator's %s takes no .%.*s", row->name, n, s);
      return why;
    }
    md->types[md->ntypes++] = ty;
    return NULL;
  }
  int own = !strcmp(row->words, "*"); /* the decoder checks the words */
  if (own || !in_list(row->words, s, n)) {
    unsigned md_class = class_mod(md, row, s, n);
    if (md_class && (row->mods & md_class)) return NULL;
    if (md_class || !own) {
      snprintf(why, len, "the simulator's %s takes no .%.*s", row->name, n, s);
      return why;
    }
  }
  if (md->nwords == 12) return "more than 12 modifiers";
  md->words[md->nwords] = s;
  md->wlen[md->nwords++] = n;
  return NULL;
}

/* Does the instruction t begin with word w, followed by a '.' or its end? */
/* The instruction t's row, its base name and modifiers into md; fails the load, naming t, for an
 * instruction without a row or a modifier its row does not take. */
static const inst_row *split_mods(ptx_parser *p, const ptx_tok *t, mods *md) {
  memset(md, 0, sizeof *md);
  char why[96] = "";
  const char *bad = NULL;
  int i = 0;
  while (i < t->len && t->s[i] != '.') i++;
  const inst_row *row = NULL;
  if (i < (int)sizeof md->base) {
    memcpy(md->base, t->s, (size_t)i);
    row = find_row(md->base);
  }
  while (row && !bad && i < t->len) {
    int j = ++i;
    while (j < t->len && t->s[j] != '.') j++;
    bad = add_mod(md, row, t->s + i, j - i, why, sizeof why);
    i = j;
  }
  if (row && !bad) return row;
  const char *cluster = ptx_cluster_why(t);
  if (*cluster) bad = NULL; /* why it cannot run at all matters more */
  ptx_fail(p, "PTX line %d: unsupported instruction '%.*s'%s%s%s", t->line, t->len, t->s,
           bad ? ": " : "", bad ? bad : "", cluster);
}

/* ---- operands (one at a time: ptx_opnd, ptx_emit.c) ---- */

/* Reads comma-separated operands up to ';' (a|b dual destinations count as one with row2). */
static int parse_opnds(ptx_parser *p, opnd *o, int max, int *second) {
  int n = 0;
  *second = -1;
  if (ptx_accept(&p->lx, ";")) return 0;
  for (;;) {
    if (n == max) ptx_fail(p, "PTX line %d: too many operands", ptx_peek(&p->lx, 0)->line);
    ptx_opnd(p, &o[n]);
    if (n == 0 && ptx_accept(&p->lx, "|")) {
      opnd q;
      ptx_opnd(p, &q);
      if (q.kind != O_PRED)
        ptx_fail(p, "PTX line %d: expected a predicate after '|'", ptx_peek(&p->lx, 0)->line);
      *second = q.row;
    }
    n++;
    if (ptx_accept(&p->lx, ";")) return n;
    const ptx_tok *t = ptx_next(&p->lx);
    if (!ptx_is(t, ",")) {
      if (t->kind == PTX_T_EOF)
        ptx_fail(p, "PTX line %d: unexpected end of PTX in an instruction", t->line);
      ptx_fail(p, "PTX line %d: expected ',' or ';' but found '%.*s'", t->line, t->len, t->s);
    }
  }
}

/* ---- emission ---- */

/* SIM_IF_ACQUIRE and SIM_IF_RELEASE for the instruction's ordering words (sim_hb.c reads them). */
static uint8_t order_flags(const ictx *c) {
  return (uint8_t)((c->md.sem & MO_ACQ ? SIM_IF_ACQUIRE : 0) |
                   (c->md.sem & MO_REL ? SIM_IF_RELEASE : 0));
}

/* This file's short names for ptx_emit.c's helpers, which it calls everywhere. */
static void unsupported(ictx *c, const char *why) { ptx_unsupported(c, why); }
static sim_inst *emit(ictx *c, int op) { return ptx_emit(c, op); }
static int src(ictx *c, int i, int ty) { return ptx_src(c, i, ty); }
static void addr(ictx *c, sim_inst *in, int i) { ptx_addr(c, in, i); }
static int has(const mods *md, const char *w) { return ptx_has(md, w); }

static void need(ictx *c, int n) {
  if (c->n != n) unsupported(c, "wrong number of operands");
}

static int type1(ictx *c) {
  if (c->md.ntypes < 1) unsupported(c, "no type");
  return c->md.types[c->md.ntypes - 1];
}

static int dst(ictx *c, int i) {
  if (c->o[i].kind == O_SINK) return -1;
  if (c->o[i].kind != O_REG) unsupported(c, "destination must be a register");
  return c->o[i].row;
}

static int pred(ictx *c, int i, int *neg) {
  if (c->o[i].kind != O_PRED) unsupported(c, "expected a predicate operand");
  if (neg) *neg = c->o[i].neg;
  else if (c->o[i].neg) unsupported(c, "negated predicate not allowed here");
  return c->o[i].row;
}

static int fmod_bits(ictx *c) {
  int m = c->md.rnd;
  if (c->md.has_rnd) m |= SIM_MOD_HASRND;
  if (c->md.ftz) m |= SIM_MOD_FTZ;
  if (c->md.sat) m |= SIM_MOD_SAT;
  if (c->md.approx || c->md.full) m |= SIM_MOD_APPROX;
  if (c->md.full) m |= SIM_MOD_FULL;
  return m;
}

static sim_inst *alu(ictx *c, int sub, int ty, int nsrc) {
  need(c, nsrc + 1);
  sim_inst *in = emit(c, SIM_OP_ALU);
  in->sub = (uint8_t)sub;
  in->ty = (uint8_t)ty;
  in->mod = (uint8_t)fmod_bits(c);
  in->d = dst(c, 0);
  int32_t *s[] = {&in->a, &in->b, &in->c, &in->e};
  for (int i = 0; i < nsrc; i++) *s[i] = src(c, i + 1, ty);
  return in;
}

static sim_inst *fast(ictx *c, int op, int ty, int nsrc) {
  sim_inst *in = alu(c, 0, ty, nsrc);
  in->op = (uint8_t)op;
  return in;
}

/* ---- handlers ---- */

static int plain_float(ictx *c) {
  return !c->md.ftz && !c->md.sat && (!c->md.has_rnd || c->md.rnd == SIM_RN);
}

/* add.cc, addc, sub.cc, subc, mad.lo.cc, madc.hi ...: integer ops on the per-lane carry flag. */
static void h_carry(ictx *c, int sub, int cin) {
  int ty = type1(c);
  int sz = sim_type_size(ty);
  if (sim_type_float(ty) || (sz != 4 && sz != 8)) unsupported(c, NULL);
  int hi = has(&c->md, "hi");
  if (c->md.nwords > (hi || has(&c->md, "lo"))) unsupported(c, NULL);
  sim_inst *in = alu(c, sub, ty, sub == SIM_ALU_MAD ? 3 : 2);
  in->op = SIM_OP_CARRY;
  in->flags =
      (uint8_t)((cin ? SIM_IF_CIN : 0) | (c->md.cc ? SIM_IF_COUT : 0) | (hi ? SIM_IF_HI : 0));
}

/* add, sub, mul, fma, min, max, neg, abs on f16 / bf16 / f16x2 / bf16x2: SIM_OP_HALF. PTX allows
 * only round-to-nearest here; .ftz and .sat exist for f16 only, .NaN for min/max, .relu for fma,
 * min and max. */
static void h_half(ictx *c, int sub) {
  int ty = type1(c), bf = ty == SIM_T_BF16 || ty == SIM_T_BF16X2;
  int nan = has(&c->md, "NaN"), relu = has(&c->md, "relu");
  if (c->md.nwords != nan + relu || (c->md.has_rnd && c->md.rnd != SIM_RN) || c->md.approx)
    unsupported(c, NULL);
  if (nan && sub != SIM_ALU_MIN && sub != SIM_ALU_MAX) unsupported(c, NULL);
  if (relu && sub != SIM_ALU_FMA && sub != SIM_ALU_MIN && sub != SIM_ALU_MAX) unsupported(c, NULL);
  if (bf && (c->md.ftz || c->md.sat)) unsupported(c, ".ftz and .sat do not exist for bf16");
  if (sub == SIM_ALU_MAD || sub == SIM_ALU_DIV || sub == SIM_ALU_REM) unsupported(c, NULL);
  int nsrc = sub == SIM_ALU_FMA ? 3 : sub == SIM_ALU_NEG || sub == SIM_ALU_ABS ? 1 : 2;
  sim_inst *in = alu(c, sub, ty, nsrc);
  in->op = SIM_OP_HALF;
  in->flags = (uint8_t)((nan ? SIM_IF_NAN : 0) | (relu ? SIM_IF_RELU : 0));
}

/* add, sub, mul, fma, mad, ... on f32 / f64: the plain round-to-nearest forms get their own
 * executor opcodes, the rest (and mad, which is fma for floats) go through SIM_OP_ALU. */
static void h_float(ictx *c, int sub, int ty) {
  if (plain_float(c) && !c->md.nwords) {
    int f64 = ty == SIM_T_F64;
    switch (sub) {
      case SIM_ALU_ADD: fast(c, f64 ? SIM_OP_ADD_F64 : SIM_OP_ADD_F32, ty, 2); return;
      case SIM_ALU_SUB: fast(c, f64 ? SIM_OP_SUB_F64 : SIM_OP_SUB_F32, ty, 2); return;
      case SIM_ALU_MUL: fast(c, f64 ? SIM_OP_MUL_F64 : SIM_OP_MUL_F32, ty, 2); return;
      case SIM_ALU_FMA:
      case SIM_ALU_MAD: fast(c, f64 ? SIM_OP_FMA_F64 : SIM_OP_FMA_F32, ty, 3); return;
      default: break;
    }
  }
  if (sub == SIM_ALU_MAD) sub = SIM_ALU_FMA;
  if (c->md.nwords) unsupported(c, NULL);
  alu(c, sub, ty, sub == SIM_ALU_FMA ? 3 : 2);
}

/* add, min and max on .u16x2 / .s16x2 (__vadd2, __vmaxs2, __vimax3_s16x2_relu ...): the PTX
 * ISA has no other packed integer arithmetic (NVRTC writes __vsub2 as neg.s16 and add.s16x2)
 * and no .sat, .cc or rounding here; .relu is for min and max on .s16x2 only. */
static void h_x2(ictx *c, int sub) {
  int relu = has(&c->md, "relu"), ty = type1(c);
  if (sub != SIM_ALU_ADD && sub != SIM_ALU_MIN && sub != SIM_ALU_MAX) unsupported(c, NULL);
  if (c->md.nwords != relu || c->md.sat || c->md.cc || c->md.ftz || c->md.has_rnd)
    unsupported(c, NULL);
  if (relu && (sub == SIM_ALU_ADD || ty != SIM_T_S16X2))
    unsupported(c, ".relu is for min and max on .s16x2");
  int x2 = sub == SIM_ALU_ADD   ? SIM_ALU_ADD16X2
           : sub == SIM_ALU_MIN ? SIM_ALU_MIN16X2
                                : SIM_ALU_MAX16X2;
  alu(c, x2, ty, 2)->ty2 = (uint8_t)relu;
}

/* min.relu / max.relu .s32 (__vimax_s32_relu ...): ty2 says a negative result becomes 0. */
static void h_relu32(ictx *c, int sub) {
  if (c->md.nwords != 1 || type1(c) != SIM_T_S32 || (sub != SIM_ALU_MIN && sub != SIM_ALU_MAX))
    unsupported(c, ".relu is for min and max on .s32 and .s16x2");
  alu(c, sub, SIM_T_S32, 2)->ty2 = 1;
}

static void h_arith(ictx *c, int sub) {
  int ty = type1(c);
  if (ty == SIM_T_U16X2 || ty == SIM_T_S16X2) {
    h_x2(c, sub);
    return;
  }
  if (c->md.cc) {
    h_carry(c, sub, 0);
    return;
  }
  int sz = sim_type_size(ty);
  if (ty == SIM_T_PRED) unsupported(c, NULL);
  if (sim_type_half(ty)) {
    h_half(c, sub);
    return;
  }
  if (sim_type_float(ty)) {
    h_float(c, sub, ty);
    return;
  }
  if (has(&c->md, "relu")) {
    h_relu32(c, sub);
    return;
  }
  int wide = has(&c->md, "wide"), hi = has(&c->md, "hi");
  if (c->md.nwords > (wide || hi || has(&c->md, "lo"))) unsupported(c, NULL);
  if (c->md.ftz || c->md.has_rnd || c->md.approx)
    unsupported(c, "rounding, .ftz and .approx are for floating-point types");
  int s = sim_type_signed(ty);
  if (sub == SIM_ALU_MUL && wide) {
    if (sz == 4) {
      c->md.sat = 0;
      fast(c, s ? SIM_OP_MULWIDE_S32 : SIM_OP_MULWIDE_U32, ty, 2);
    } else {
      alu(c, SIM_ALU_MULWIDE, ty, 2);
    }
    return;
  }
  if (sub == SIM_ALU_MAD && wide) {
    if (sz == 4) fast(c, s ? SIM_OP_MADWIDE_S32 : SIM_OP_MADWIDE_U32, ty, 3);
    else alu(c, SIM_ALU_MADWIDE, ty, 3);
    return;
  }
  if (hi) {
    alu(c, sub == SIM_ALU_MUL ? SIM_ALU_MULHI : SIM_ALU_MADHI, ty, sub == SIM_ALU_MUL ? 2 : 3);
    return;
  }
  if (!c->md.sat && (sz == 4 || sz == 8)) {
    int o64 = sz == 8;
    switch (sub) {
      case SIM_ALU_ADD: fast(c, o64 ? SIM_OP_ADD64 : SIM_OP_ADD32, ty, 2); return;
      case SIM_ALU_SUB: fast(c, o64 ? SIM_OP_SUB64 : SIM_OP_SUB32, ty, 2); return;
      case SIM_ALU_MUL: fast(c, o64 ? SIM_OP_MUL64 : SIM_OP_MUL32, ty, 2); return;
      case SIM_ALU_MAD: fast(c, o64 ? SIM_OP_MAD64 : SIM_OP_MAD32, ty, 3); return;
      default: break;
    }
  }
  alu(c, sub, ty, sub == SIM_ALU_MAD ? 3 : 2);
}

static void h_logic(ictx *c, int sub) {
  int ty = type1(c);
  int sz = sim_type_size(ty);
  if (ty == SIM_T_PRED) {
    int op = sub == SIM_ALU_AND ? SIM_OP_PAND
             : sub == SIM_ALU_OR ? SIM_OP_POR
             : sub == SIM_ALU_XOR ? SIM_OP_PXOR
                                  : SIM_OP_PNOT;
    need(c, op == SIM_OP_PNOT ? 2 : 3);
    sim_inst *in = emit(c, op);
    in->d = pred(c, 0, NULL);
    in->a = pred(c, 1, NULL);
    if (op != SIM_OP_PNOT) in->b = pred(c, 2, NULL);
    return;
  }
  if (c->md.nwords) unsupported(c, NULL);
  int o64 = sz == 8;
  switch (sub) {
    case SIM_ALU_AND: fast(c, o64 ? SIM_OP_AND64 : SIM_OP_AND32, ty, 2); return;
    case SIM_ALU_OR: fast(c, o64 ? SIM_OP_OR64 : SIM_OP_OR32, ty, 2); return;
    case SIM_ALU_XOR: fast(c, o64 ? SIM_OP_XOR64 : SIM_OP_XOR32, ty, 2); return;
    case SIM_ALU_SHL:
      if (sz >= 4) {
        sim_inst *in = fast(c, o64 ? SIM_OP_SHL64 : SIM_OP_SHL32, ty, 2);
        in->b = src(c, 2, SIM_T_U32);
        return;
      }
      break;
    case SIM_ALU_SHR:
      if (sz >= 4) {
        int s = sim_type_signed(ty);
        int op64 = s ? SIM_OP_SHR_S64 : SIM_OP_SHR_U64, op32 = s ? SIM_OP_SHR_S32 : SIM_OP_SHR_U32;
        sim_inst *in = fast(c, o64 ? op64 : op32, ty, 2);
        in->b = src(c, 2, SIM_T_U32);
        return;
      }
      break;
    default: break;
  }
  if (sub == SIM_ALU_NOT || sub == SIM_ALU_CNOT) {
    alu(c, sub, ty, 1);
    return;
  }
  sim_inst *in = alu(c, sub, ty, 2);
  if (sub == SIM_ALU_SHL || sub == SIM_ALU_SHR) in->b = src(c, 2, SIM_T_U32);
}

static void h_unary(ictx *c, int sub) {
  int ty = type1(c);
  if (sim_type_half(ty) && (sub == SIM_ALU_NEG || sub == SIM_ALU_ABS)) {
    h_half(c, sub);
    return;
  }
  if (sim_type_half(ty)) unsupported(c, "half-precision approximations are not modelled");
  if (ty == SIM_T_PRED) unsupported(c, NULL);
  if (c->md.nwords) unsupported(c, NULL);
  alu(c, sub, ty, 1);
}

/* mov.pred: from a predicate, an immediate, or the one .pred special register
 * (%is_explicit_cluster), which is a setp of its row against zero. */
static void h_mov_pred(ictx *c) {
  if (c->o[1].kind == O_SREG && c->o[1].row == SIM_SR_IS_EXPLICIT_CLUSTER) {
    sim_inst *in = emit(c, SIM_OP_SETP);
    in->sub = SIM_CMP_NE;
    in->ty = SIM_T_U32;
    in->d = pred(c, 0, NULL);
    in->a = SIM_SR_IS_EXPLICIT_CLUSTER;
    in->b = SIM_SR_ZERO;
    return;
  }
  if (c->o[1].kind == O_IMM || c->o[1].kind == O_SREG) {
    if (c->o[1].kind == O_SREG && c->o[1].row != SIM_SR_ZERO)
      unsupported(c, "not a predicate special register");
    sim_inst *in = emit(c, SIM_OP_PSETI);
    in->d = pred(c, 0, NULL);
    in->a = c->o[1].kind == O_IMM && c->o[1].bits ? 1 : 0;
    return;
  }
  sim_inst *in = emit(c, SIM_OP_PMOV);
  in->d = pred(c, 0, NULL);
  in->a = pred(c, 1, NULL);
}

static void h_mov(ictx *c) {
  int ty = type1(c);
  need(c, 2);
  if (ty == SIM_T_PRED) {
    h_mov_pred(c);
    return;
  }
  if (c->o[1].kind == O_SREG && c->o[1].row < 0) {
    sim_inst *in = emit(c, SIM_OP_CLOCK);
    static const uint8_t clk[] = {SIM_CLK_32, SIM_CLK_64, SIM_CLK_GLOBALTIMER,
                                  SIM_CLK_HI, SIM_CLK_GT_LO, SIM_CLK_GT_HI};
    in->sub = clk[-1 - c->o[1].row];
    in->d = dst(c, 0);
    return;
  }
  if (c->o[1].kind == O_VEC) { /* pack: mov.b64 %rd, {%r1, %r2} */
    if (c->o[1].n > 4) unsupported(c, "vector of more than 4");
    sim_inst *in = emit(c, SIM_OP_PACK);
    in->d = dst(c, 0);
    in->vec = (uint8_t)c->o[1].n;
    in->size = (uint8_t)(sim_type_size(ty) / c->o[1].n);
    for (int i = 0; i < c->o[1].n; i++) {
      if (c->o[1].vec[i] < 0) unsupported(c, NULL);
      in->v[i] = c->o[1].vec[i];
    }
    return;
  }
  if (c->o[0].kind == O_VEC) { /* unpack: mov.b64 {%r1, %r2}, %rd */
    if (c->o[0].n > 4) unsupported(c, "vector of more than 4");
    sim_inst *in = emit(c, SIM_OP_UNPACK);
    in->a = src(c, 1, ty);
    in->vec = (uint8_t)c->o[0].n;
    in->size = (uint8_t)(sim_type_size(ty) / c->o[0].n);
    for (int i = 0; i < c->o[0].n; i++) in->v[i] = c->o[0].vec[i] < -1 ? -1 : c->o[0].vec[i];
    return;
  }
  if (c->o[1].kind == O_KPARAM || c->o[1].kind == O_FPARAM) { /* mov.b64 %rd, k_param_0 */
    if (sim_type_size(ty) < 4) unsupported(c, "an address needs 32 or 64 bits");
    sim_inst *in = emit(c, sim_type_size(ty) == 8 ? SIM_OP_MOV64 : SIM_OP_MOV32);
    in->ty = (uint8_t)ty;
    in->d = dst(c, 0);
    in->a = ptx_param_addr(c, 1);
    return;
  }
  if (c->o[1].kind == O_NAME) { /* mov.u64 %rd, func: a function pointer */
    int fi = ptx_find_func(c->p, c->o[1].tok);
    if (fi < 0) unsupported(c, "unknown symbol");
    if (sim_type_size(ty) != 8) unsupported(c, "a function's address needs 64 bits");
    sim_inst *in = emit(c, SIM_OP_MOV64);
    in->ty = (uint8_t)ty;
    in->d = dst(c, 0);
    in->a = ptx_const_row(c->p, -1, ptx_func_addr(c->p, fi));
    return;
  }
  fast(c, sim_type_size(ty) == 8 ? SIM_OP_MOV64 : SIM_OP_MOV32, ty, 1);
}

static void h_setp(ictx *c) {
  if (!c->md.has_cmp) unsupported(c, "no comparison");
  int ty = type1(c);
  if (ty == SIM_T_PRED) unsupported(c, NULL);
  int bop = 0;
  if (has(&c->md, "and")) bop = 1;
  else if (has(&c->md, "or")) bop = 2;
  else if (has(&c->md, "xor")) bop = 3;
  if (c->md.nwords > (bop != 0)) unsupported(c, NULL);
  need(c, bop ? 4 : 3);
  if ((ty == SIM_T_F16X2 || ty == SIM_T_BF16X2) && c->second < 0)
    unsupported(c, "a packed setp writes two predicates, p|q");
  sim_inst *in = emit(c, sim_type_half(ty) ? SIM_OP_HSETP : SIM_OP_SETP);
  in->sub = (uint8_t)c->md.cmp;
  in->ty = (uint8_t)ty;
  in->ty2 = (uint8_t)bop;
  in->mod = (uint8_t)(c->md.ftz ? SIM_MOD_FTZ : 0);
  in->d = pred(c, 0, NULL);
  in->d2 = c->second;
  in->a = src(c, 1, ty);
  in->b = src(c, 2, ty);
  if (bop) {
    int neg;
    in->c = pred(c, 3, &neg);
    in->e = neg;
    in->flags |= SIM_IF_BPRED;
  }
}

/* set.cmp.dtype.stype d, a, b: 1.0 or all ones where the comparison holds (per half of an x2
 * stype), through SIM_OP_HALF, which knows every stype. */
static void h_set(ictx *c) {
  if (!c->md.has_cmp || c->md.ntypes != 2 || c->md.nwords) unsupported(c, NULL);
  int dt = c->md.types[0], st = c->md.types[1];
  if (st == SIM_T_PRED || dt == SIM_T_PRED || dt == SIM_T_F64) unsupported(c, NULL);
  need(c, 3);
  sim_inst *in = emit(c, SIM_OP_HALF);
  in->sub = SIM_ALU_SET;
  in->ty = (uint8_t)dt;
  in->mod = (uint8_t)(c->md.ftz ? SIM_MOD_FTZ : 0);
  in->d = dst(c, 0);
  in->a = src(c, 1, st);
  in->b = src(c, 2, st);
  in->ty2 = (uint8_t)st;
  in->imm = c->md.cmp;
}

static void h_selp(ictx *c) {
  int ty = type1(c);
  need(c, 4);
  sim_inst *in = emit(c, sim_type_size(ty) == 8 ? SIM_OP_SELP64 : SIM_OP_SELP32);
  in->ty = (uint8_t)ty;
  in->d = dst(c, 0);
  in->a = src(c, 1, ty);
  in->b = src(c, 2, ty);
  in->c = pred(c, 3, NULL);
}

/* cvt to or from a half type: SIM_OP_HALF. cvt.frnd.f16x2.f32 d, a, b packs two conversions
 * (a into the high half); .relu and .satfinite apply to half destinations. */
static void h_cvt_half(ictx *c, int dt, int st) {
  int relu = has(&c->md, "relu"), satf = has(&c->md, "satfinite");
  if (c->md.nwords != relu + satf || st == SIM_T_PRED || dt == SIM_T_PRED) unsupported(c, NULL);
  if ((relu || satf) && !sim_type_half(dt)) unsupported(c, NULL);
  if (sim_type_size(st) == 4 && (st == SIM_T_F16X2 || st == SIM_T_BF16X2))
    unsupported(c, "packed source");
  int x2 = dt == SIM_T_F16X2 || dt == SIM_T_BF16X2;
  if (x2 && st != SIM_T_F32) unsupported(c, "packed conversions take two .f32 sources");
  int fd = sim_type_float(dt) || sim_type_half(dt), fs = sim_type_float(st) || sim_type_half(st);
  if (fs && !fd && (!c->md.has_rnd || c->md.rnd < SIM_RNI))
    unsupported(c, "float to integer needs an integer rounding modifier");
  if (fd && !fs && c->md.rnd >= SIM_RNI) unsupported(c, NULL);
  int narrowing = sim_type_half(dt) && !sim_type_half(st);
  if (narrowing && fs && !c->md.has_rnd)
    unsupported(c, "conversion to a half type needs a rounding modifier");
  sim_inst *in = alu(c, SIM_ALU_CVT, dt, x2 ? 2 : 1);
  in->op = SIM_OP_HALF;
  in->a = src(c, 1, st);
  if (x2) in->b = src(c, 2, st);
  in->ty2 = (uint8_t)st;
  in->flags = (uint8_t)((relu ? SIM_IF_RELU : 0) | (satf ? SIM_IF_SATFINITE : 0));
}

/* cvt to or from a pair of 8-bit floats (sim_fp8.c): cvt.rn.satfinite{.relu}.e4m3x2.f32 d, a, b
 * and .e4m3x2.f16x2 d, a; cvt.rn{.relu}.f16x2.e4m3x2 d, a; the same with .e5m2x2. */
static void h_cvt_fp8(ictx *c, int dt, int st) {
  int relu = has(&c->md, "relu"), satf = has(&c->md, "satfinite");
  int to8 = sim_type_fp8(dt);
  if (to8 ? st != SIM_T_F32 && st != SIM_T_F16X2 : dt != SIM_T_F16X2 || !sim_type_fp8(st))
    unsupported(c, "8-bit floats convert from .f32 or .f16x2, and to .f16x2");
  if (!c->md.has_rnd || c->md.rnd != SIM_RN || c->md.ftz || c->md.sat ||
      c->md.nwords != relu + satf)
    unsupported(c, "a conversion of 8-bit floats takes .rn and .relu only");
  if (to8 && !satf) unsupported(c, "a conversion to 8-bit floats needs .satfinite");
  if (!to8 && satf) unsupported(c, "a conversion from 8-bit floats takes no .satfinite");
  int two = to8 && st == SIM_T_F32;
  sim_inst *in = alu(c, SIM_ALU_CVT, dt, two ? 2 : 1);
  in->op = SIM_OP_HALF;
  in->a = src(c, 1, st);
  if (two) in->b = src(c, 2, st);
  in->ty2 = (uint8_t)st;
  in->flags = (uint8_t)(relu ? SIM_IF_RELU : 0);
}

/* The conversions with an executor opcode of their own: 0 if cvt.dt.st with these modifiers has
 * none and needs SIM_OP_ALU. */
static int fast_cvt_op(const mods *md, int dt, int st) {
  int fd = sim_type_float(dt), fs = sim_type_float(st);
  if (!md->sat && !md->ftz && !md->has_rnd) {
    if (dt == SIM_T_U64 && (st == SIM_T_U32 || st == SIM_T_B32)) return SIM_OP_CVT_U64_U32;
    if ((dt == SIM_T_S64 || dt == SIM_T_U64) && st == SIM_T_S32) return SIM_OP_CVT_S64_S32;
    if (dt == SIM_T_F64 && st == SIM_T_F32) return SIM_OP_CVT_F64_F32;
    if (!fd && !fs && sim_type_size(dt) == 4 && sim_type_size(st) >= 4) return SIM_OP_MOV32;
  }
  if (!md->sat && !md->ftz && md->rnd == SIM_RN && dt == SIM_T_F32) {
    if (st == SIM_T_S32) return SIM_OP_CVT_F32_S32;
    if (st == SIM_T_U32) return SIM_OP_CVT_F32_U32;
  }
  return 0;
}

static void h_cvt(ictx *c) {
  if (has(&c->md, "tf32")) { /* cvt.rna.tf32.f32 (ptx_tensor.c) */
    ptx_tensor_inst(c);
    return;
  }
  if (c->md.ntypes == 2 && (sim_type_fp8(c->md.types[0]) || sim_type_fp8(c->md.types[1]))) {
    h_cvt_fp8(c, c->md.types[0], c->md.types[1]);
    return;
  }
  if (c->md.ntypes == 2 && (sim_type_half(c->md.types[0]) || sim_type_half(c->md.types[1]))) {
    h_cvt_half(c, c->md.types[0], c->md.types[1]);
    return;
  }
  if (c->md.ntypes != 2 || c->md.nwords) unsupported(c, NULL);
  int dt = c->md.types[0], st = c->md.types[1];
  if (dt == SIM_T_PRED || st == SIM_T_PRED) unsupported(c, NULL);
  need(c, 2);
  int mod = fmod_bits(c);
  int fd = sim_type_float(dt), fs = sim_type_float(st);
  if (fd && fs && dt != st && c->md.rnd >= SIM_RNI)
    unsupported(c, "integer rounding between float types");
  if ((fd != fs) && fd && c->md.rnd >= SIM_RNI) unsupported(c, NULL);
  if (fs && !fd && !c->md.has_rnd) unsupported(c, "float to integer needs a rounding modifier");
  int op = fast_cvt_op(&c->md, dt, st);
  /* a signed result is sign-extended into a register wider than its type (inline PTX's
   * cvt.s32.s64 into a .b64): not the 32-bit move, which zero-extends */
  if (op == SIM_OP_MOV32 && sim_type_signed(dt) && c->o[0].kind == O_REG &&
      sim_type_size(c->o[0].type) > 4)
    op = 0;
  if (op) {
    sim_inst *in = fast(c, op, dt, 1);
    /* an immediate source means a different bit pattern as st than as dt: encode it as st */
    if (op == SIM_OP_CVT_F64_F32 || op == SIM_OP_CVT_F32_S32 || op == SIM_OP_CVT_F32_U32)
      in->a = src(c, 1, st);
    return;
  }
  sim_inst *in = alu(c, SIM_ALU_CVT, dt, 1);
  in->a = src(c, 1, st);
  in->ty2 = (uint8_t)st;
  in->mod = (uint8_t)mod;
}

/* cvta.param (PTX 7.7): a kernel parameter's generic address, from its .param address in a
 * register or from its name; cvta.to.param the way back. */
static void h_cvta_param(ictx *c, int to, int ty) {
  int sub = to ? SIM_ALU_CVTA_TO_PARAM : SIM_ALU_CVTA_PARAM;
  if (sim_type_size(ty) < 4) unsupported(c, NULL);
  if (c->o[1].kind == O_FPARAM) unsupported(c, "cvta.param takes a kernel's parameter");
  if (c->o[1].kind != O_KPARAM) {
    alu(c, sub, ty, 1);
    return;
  }
  if (to) unsupported(c, NULL);
  sim_inst *in = emit(c, SIM_OP_ALU);
  in->sub = (uint8_t)sub;
  in->ty = (uint8_t)ty;
  in->d = dst(c, 0);
  in->a = ptx_param_addr(c, 1);
}

static void h_cvta(ictx *c) {
  int to = has(&c->md, "to"), entry = has(&c->md, "param::entry");
  if (c->md.nwords != to + entry) unsupported(c, NULL);
  int ty = type1(c);
  need(c, 2);
  switch (entry ? SIM_SP_PARAM : c->md.space) {
    case SIM_SP_GLOBAL:
    case SIM_SP_CONST: fast(c, sim_type_size(ty) == 8 ? SIM_OP_MOV64 : SIM_OP_MOV32, ty, 1); return;
    case SIM_SP_SHARED: alu(c, to ? SIM_ALU_CVTA_TO_SHARED : SIM_ALU_CVTA_SHARED, ty, 1); return;
    case SIM_SP_LOCAL: alu(c, to ? SIM_ALU_CVTA_TO_LOCAL : SIM_ALU_CVTA_LOCAL, ty, 1); return;
    case SIM_SP_PARAM: h_cvta_param(c, to, ty); return;
    default: unsupported(c, NULL);
  }
}

/* ld, ldu and st. Their words (ptx_opcodes.def) are cache hints, which change no result: L1 and
 * L2 eviction priorities, a load's prefetch size into the L2, and .L2::cache_hint with its
 * policy operand; the timing model's caches take none of them. */
static void h_ldst(ictx *c, int is_st) {
  int ty = type1(c);
  if (sim_type_half(ty)) ty = sim_type_size(ty) == 2 ? SIM_T_B16 : SIM_T_B32; /* bits are bits */
  if (ty == SIM_T_PRED) unsupported(c, NULL);
  int prefetch = has(&c->md, "L2::64B") || has(&c->md, "L2::128B") || has(&c->md, "L2::256B");
  if (prefetch && c->md.space && c->md.space != SIM_SP_GLOBAL)
    unsupported(c, "a prefetch size is for global memory");
  ptx_cache_hint(c, 2);
  need(c, 2);
  sim_inst *in = emit(c, is_st ? SIM_OP_ST : SIM_OP_LD);
  if (c->md.vol) in->flags |= SIM_IF_VOLATILE; /* strong, for the race check (sim_race.c) */
  if (c->md.sem & MO_SEM) in->flags |= SIM_IF_SEM;
  in->flags |= order_flags(c);
  in->ty = (uint8_t)ty;
  in->space = (uint8_t)(c->md.space ? c->md.space : SIM_SP_GENERIC);
  in->size = (uint8_t)sim_type_size(ty);
  in->vec = (uint8_t)(c->md.vec ? c->md.vec : 1);
  addr(c, in, is_st ? 0 : 1);
  if (is_st && in->op == SIM_OP_LDPARAM) unsupported(c, "store to a kernel parameter");
  opnd *v = &c->o[is_st ? 1 : 0];
  if (in->vec > 1) {
    if (v->kind != O_VEC || v->n != in->vec) unsupported(c, "vector operand does not match");
    for (int k = 0; k < v->n; k++) {
      if (v->vec[k] <= -2) {
        if (!is_st) unsupported(c, NULL);
        in->v[k] = -2 - v->vec[k];
      } else {
        in->v[k] = v->vec[k];
        if (is_st && in->v[k] < 0) unsupported(c, NULL);
      }
    }
  } else if (is_st) {
    in->v[0] = src(c, 1, ty);
  } else {
    in->v[0] = dst(c, 0);
  }
}

/* The registers of vector operand i of a vector atomic, n of them: sources (is_src; a number is
 * a constant row) or destinations (a sink '_' is -1). */
static void atom_vec_rows(ictx *c, int i, int n, int is_src, int32_t *rows) {
  const opnd *o = &c->o[i];
  if (o->kind != O_VEC || o->n != n) unsupported(c, "vector operand does not match");
  for (int k = 0; k < n; k++) {
    int r = o->vec[k];
    if (r == -1 && is_src) unsupported(c, "a sink as a source");
    if (r <= -2 && !is_src) unsupported(c, "destination must be a register");
    rows[k] = r <= -2 ? -2 - r : r;
  }
}

/* atom / red .global .add .v2 / .v4 .f32 (atomicAdd on float2 and float4, sm_90), and .add
 * .min .max .noftz on .v2 / .v4 / .v8 .f16 and .bf16 or .v2 / .v4 .f16x2 and .bf16x2, the vector
 * forms the PTX ISA has. It guarantees atomicity "separately for each of the individual scalar
 * elements", so each element is an atomic of its own here, one instruction each at the address
 * plus its offset: every check, hook and count of scalar atomics serves them unchanged (the
 * counters see an instruction and a request per element where the GPU issues one). The first
 * element carries the vector's bytes in ty2, for the checks of the whole vector (sim_mem.c). An
 * element runs after the one before has written its destination, so a destination that a later
 * element reads (its source or the address) is refused; d and b may be the same vector. */
static void h_atom_vec(ictx *c, int is_red, int sub, int n) {
  int ty = type1(c), noftz = has(&c->md, "noftz");
  int half = ty == SIM_T_F16 || ty == SIM_T_BF16, pair = ty == SIM_T_F16X2 || ty == SIM_T_BF16X2;
  int minmax = sub == SIM_ATOM_MIN || sub == SIM_ATOM_MAX;
  int ok = ty == SIM_T_F32 ? sub == SIM_ATOM_ADD && !noftz && n != 8
                           : (half || (pair && n != 8)) && noftz && (sub == SIM_ATOM_ADD || minmax);
  int hint = ptx_cache_hint(c, is_red ? 2 : 3);
  if (c->md.nwords != 1 + noftz + (n == 8) + hint || !ok)
    unsupported(c, "the vector atomics are add on .v2 / .v4 .f32, and add, min or max .noftz on "
                "16-bit floats (.v2 / .v4 / .v8 .f16 or .bf16, .v2 / .v4 .f16x2 or .bf16x2)");
  int space = c->md.space ? c->md.space : SIM_SP_GENERIC;
  if (space != SIM_SP_GLOBAL && space != SIM_SP_GENERIC)
    unsupported(c, "vector atomics are on global memory only");
  need(c, is_red ? 2 : 3);
  int32_t d[8], b[8];
  if (!is_red) atom_vec_rows(c, 0, n, 0, d);
  atom_vec_rows(c, is_red ? 1 : 2, n, 1, b);
  const opnd *a = &c->o[is_red ? 0 : 1];
  for (int j = 0; j < n && !is_red; j++)
    for (int k = j + 1; k < n; k++)
      if (d[j] >= 0 && (d[j] == b[k] || (a->kind == O_ADDR && a->base == O_REG && d[j] == a->row)))
        unsupported(c, "a destination register that a later element reads");
  int sz = sim_type_size(ty);
  for (int k = 0; k < n; k++) {
    sim_inst *in = emit(c, SIM_OP_ATOM);
    in->sub = (uint8_t)sub;
    in->ty = (uint8_t)ty;
    in->size = (uint8_t)sz;
    in->vec = 1;
    in->ty2 = (uint8_t)(k ? 0 : n * sz);
    in->space = (uint8_t)space;
    in->d = is_red ? -1 : d[k];
    addr(c, in, is_red ? 0 : 1);
    in->imm += (int64_t)k * sz;
    in->b = b[k];
  }
}

static void h_atom(ictx *c, int is_red) {
  static const char *const names[] = {"add", "min", "max", "inc", "dec",
                                      "and", "or", "xor", "exch", "cas"};
  int sub = -1;
  for (int i = 0; i < 10; i++)
    if (has(&c->md, names[i])) sub = SIM_ATOM_ADD + i;
  if (sub < 0) unsupported(c, NULL);
  if (c->md.vec || has(&c->md, "v8")) {
    h_atom_vec(c, is_red, sub, has(&c->md, "v8") ? 8 : c->md.vec);
    return;
  }
  int ty = type1(c);
  int sz = sim_type_size(ty);
  int noftz = has(&c->md, "noftz");
  int nsrc = sub == SIM_ATOM_CAS ? 2 : 1;
  int hint = ptx_cache_hint(c, nsrc + (is_red ? 1 : 2));
  if (c->md.nwords != 1 + noftz + hint || (hint && nsrc == 2)) unsupported(c, NULL);
  if (sim_type_half(ty) && (sub != SIM_ATOM_ADD || !noftz))
    unsupported(c, "16-bit floats only with atom.add.noftz");
  if (sz == 2 && !sim_type_half(ty) && (sub != SIM_ATOM_CAS || ty != SIM_T_B16))
    unsupported(c, "the only 16-bit integer atomic is cas.b16");
  if (sz != 2 && sz != 4 && sz != 8) unsupported(c, "only 16-, 32- and 64-bit atomics");
  if (sim_type_float(ty) && !sim_type_half(ty) && sub != SIM_ATOM_ADD && sub != SIM_ATOM_EXCH)
    unsupported(c, NULL);
  need(c, nsrc + (is_red ? 1 : 2));
  sim_inst *in = emit(c, SIM_OP_ATOM);
  in->flags = order_flags(c);
  in->sub = (uint8_t)sub;
  in->ty = (uint8_t)ty;
  in->size = (uint8_t)sz;
  in->vec = 1;
  in->space = (uint8_t)(c->md.space ? c->md.space : SIM_SP_GENERIC);
  if (in->space != SIM_SP_GLOBAL && in->space != SIM_SP_SHARED && in->space != SIM_SP_GENERIC)
    unsupported(c, NULL);
  int k = 0;
  if (!is_red) in->d = dst(c, k++);
  addr(c, in, k++);
  in->b = src(c, k++, ty);
  if (nsrc == 2) in->c = src(c, k, ty);
}

static void h_branch(ictx *c) {
  need(c, 1);
  if (c->o[0].kind != O_NAME) unsupported(c, "indirect branches");
  emit(c, SIM_OP_BRA);
  ptx_parser *p = c->p;
  p->fix = ptx_grow(p, p->fix, &p->cap_fix, p->nfix + 1, sizeof *p->fix);
  p->fix[p->nfix++] = (ptx_fixup){p->m->ncode - 1, c->o[0].tok->s, c->o[0].tok->len};
}

/* The optional "(ret)," of a call: the .param the callee's return value lands in. */
static void call_ret(ictx *c, sim_call *call) {
  ptx_parser *p = c->p;
  call->ret_off = -1;
  if (ptx_accept(&p->lx, "(")) {
    opnd r;
    ptx_opnd(p, &r);
    if (r.kind != O_FPARAM) unsupported(c, "return value must be a .param");
    const ptx_sym *s = NULL;
    int row;
    s = ptx_lookup(p, ptx_peek(&p->lx, -1)->s, ptx_peek(&p->lx, -1)->len, &row);
    call->ret_off = r.row;
    call->ret_size = s ? s->size : 8;
    if (!ptx_accept(&p->lx, ")") || !ptx_accept(&p->lx, ",")) unsupported(c, NULL);
  }
}

/* The callee of a call: sets call->func to the function's index and returns -1, or for an
 * indirect call through a 64-bit register leaves func -1 and returns the register's row. */
static int call_target(ictx *c, sim_call *call) {
  ptx_parser *p = c->p;
  const ptx_tok *name = ptx_next(&p->lx);
  int fi = -1, via = -1; /* callee, or the register an indirect call goes through */
  for (int i = 0; i < p->m->nfuncs; i++)
    if (ptx_word_eq(name->s, name->len, p->m->funcs[i].name)) fi = i;
  if (fi < 0 && name->kind == PTX_T_WORD && name->s[0] == '%') {
    opnd r;
    memset(&r, 0, sizeof r);
    ptx_opnd_name(p, name, &r);
    if (r.kind != O_REG || sim_type_size(r.type) != 8)
      unsupported(c, "an indirect call needs a 64-bit register");
    via = r.row;
  } else if (fi < 0) {
    ptx_fail(p, "PTX line %d: call to unknown function '%.*s'", c->line, name->len, name->s);
  }
  call->func = fi;
  return via;
}

/* The argument list "a, b, ...)" after its '(': each a .param variable, 16 at most. */
static void call_args(ictx *c, sim_call *call) {
  ptx_parser *p = c->p;
  if (ptx_accept(&p->lx, ")")) return;
  do {
    const ptx_tok *a = ptx_next(&p->lx);
    opnd o;
    memset(&o, 0, sizeof o);
    if (a->kind != PTX_T_WORD) unsupported(c, NULL);
    ptx_opnd_name(p, a, &o);
    if (o.kind != O_FPARAM) unsupported(c, "arguments must be .param variables");
    if (call->nargs == 16) unsupported(c, "more than 16 arguments");
    int row;
    const ptx_sym *s = ptx_lookup(p, a->s, a->len, &row);
    call->arg_off[call->nargs] = o.row;
    call->arg_size[call->nargs++] = s ? s->size : 8;
  } while (ptx_accept(&p->lx, ","));
  if (!ptx_accept(&p->lx, ")")) unsupported(c, NULL);
}

/* call[.uni] [(ret),] func[, (args)]; */
static void h_call(ictx *c) {
  ptx_parser *p = c->p;
  int ci = ptx_new_call(p);
  sim_call *call = &p->m->calls[ci];
  call_ret(c, call);
  int via = call_target(c, call);
  int args = 0;
  if (ptx_accept(&p->lx, ",")) {
    if (ptx_accept(&p->lx, "(")) args = 1;
    else if (via < 0) unsupported(c, NULL);
    else ptx_next(&p->lx); /* the prototype of an indirect call without arguments */
  }
  if (args) {
    call_args(c, call);
    if (via >= 0 && ptx_accept(&p->lx, ",")) ptx_next(&p->lx); /* the .callprototype's label */
  }
  if (!ptx_accept(&p->lx, ";")) unsupported(c, NULL);
  if (via >= 0) { /* checked against the callee at run time, when it is known */
    sim_inst *in = emit(c, SIM_OP_CALLI);
    in->a = via;
    in->imm = ci;
    return;
  }
  const sim_func *f = &p->m->funcs[call->func];
  int is_vprintf = strcmp(f->name, "vprintf") == 0 && f->first < 0;
  if (!is_vprintf && f->is_entry) unsupported(c, "calling a kernel");
  if (!is_vprintf && call->nargs != f->nparams) unsupported(c, "argument count does not match");
  sim_inst *in = emit(c, is_vprintf ? SIM_OP_VPRINTF : SIM_OP_CALL);
  in->imm = ci;
  if (is_vprintf && call->nargs != 2) unsupported(c, "vprintf takes 2 arguments");
}

static void h_shfl(ictx *c) {
  static const char *const modes[] = {"up", "down", "bfly", "idx"};
  int sub = -1;
  for (int i = 0; i < 4; i++)
    if (has(&c->md, modes[i])) sub = SIM_SHFL_UP + i;
  if (sub < 0 || c->md.nwords != 1 || type1(c) != SIM_T_B32) unsupported(c, NULL);
  if (c->n != 4 && c->n != 5) unsupported(c, "wrong number of operands");
  sim_inst *in = emit(c, SIM_OP_SHFL);
  in->sub = (uint8_t)sub;
  in->d = dst(c, 0);
  in->d2 = c->second;
  in->a = src(c, 1, SIM_T_B32);
  in->b = src(c, 2, SIM_T_B32);
  in->c = src(c, 3, SIM_T_B32);
  in->e = c->n == 5 ? src(c, 4, SIM_T_B32) : ptx_const_row(c->p, -1, 0xffffffffu);
}

static void h_vote(ictx *c) {
  static const char *const modes[] = {"all", "any", "uni", "ballot"};
  int sub = -1;
  for (int i = 0; i < 4; i++)
    if (has(&c->md, modes[i])) sub = SIM_VOTE_ALL + i;
  if (sub < 0 || c->md.nwords != 1) unsupported(c, NULL);
  if (c->n != 2 && c->n != 3) unsupported(c, "wrong number of operands");
  sim_inst *in = emit(c, SIM_OP_VOTE);
  in->sub = (uint8_t)sub;
  int neg;
  in->a = pred(c, 1, &neg);
  in->flags = (uint8_t)(neg ? SIM_IF_NEG_PRED : 0);
  in->d = sub == SIM_VOTE_BALLOT ? dst(c, 0) : pred(c, 0, NULL);
  in->e = c->n == 3 ? src(c, 2, SIM_T_B32) : ptx_const_row(c->p, -1, 0xffffffffu);
}

/* The barrier number (operand i) and, when given, the thread count (operand i + 1) of a
 * barrier into a and c: registers or numbers, checked when the barrier runs (sim_barrier.c); a
 * number is checked here too. c is -1 without a count. */
static void bar_operands(ictx *c, sim_inst *in, int i, int counted) {
  if (c->o[i].kind == O_IMM && c->o[i].bits > 15) unsupported(c, "barriers are numbered 0 to 15");
  if (counted && c->o[i + 1].kind == O_IMM &&
      (c->o[i + 1].bits == 0 || c->o[i + 1].bits % SIM_WARP || c->o[i + 1].bits > 1024))
    unsupported(c, "a thread count must be a multiple of 32, from 32 to 1024");
  in->a = src(c, i, SIM_T_U32);
  in->c = counted ? src(c, i + 1, SIM_T_U32) : -1;
}

/* bar.red.popc.u32 d, a{, b}, {!}c and bar.red.and/or.pred p, a{, b}, {!}c: a barrier that also
 * reduces a predicate over the threads taking part (__syncthreads_count/_and/_or). SIM_OP_BAR
 * with the reduction in sub; the barrier's release computes it (sim_sched.c, sim_barrier.c). */
static void h_bar_red(ictx *c) {
  const mods *md = &c->md;
  int popc = has(md, "popc"), and = has(md, "and"), or = has(md, "or");
  if (md->nwords != 2 || popc + and + or != 1) unsupported(c, NULL);
  if (popc != (type1(c) == SIM_T_U32) || (!popc && type1(c) != SIM_T_PRED)) unsupported(c, NULL);
  if (c->n != 3 && c->n != 4) unsupported(c, "wrong number of operands");
  sim_inst *in = emit(c, SIM_OP_BAR);
  in->sub = (uint8_t)(popc ? SIM_BAR_POPC : and ? SIM_BAR_AND : SIM_BAR_OR);
  in->d = popc ? dst(c, 0) : pred(c, 0, NULL);
  bar_operands(c, in, 1, c->n == 4);
  int neg; /* the predicate in imm, not b: b is a register row for the timing model's analyses */
  in->imm = pred(c, c->n - 1, &neg);
  in->flags = (uint8_t)(neg ? SIM_IF_NEG_PRED : 0);
}

/* bar.sync a{, b}, barrier.sync a{, b}, bar.arrive a, b and barrier.arrive a, b: SIM_OP_BAR with
 * the barrier number in a, the thread count in c (-1: every thread of the block), ty2 1 for an
 * arrival that does not wait (sim_barrier.c); bar.warp.sync: SIM_OP_BARWARP. */
static void h_bar(ictx *c) {
  const mods *md = &c->md;
  if (has(md, "warp")) {
    sim_inst *in = emit(c, SIM_OP_BARWARP);
    need(c, 1);
    in->a = src(c, 0, SIM_T_B32);
    return;
  }
  if (has(md, "red")) {
    h_bar_red(c);
    return;
  }
  int arrive = has(md, "arrive");
  if (md->nwords != arrive || c->md.ntypes) unsupported(c, NULL);
  if (arrive && c->n != 2) unsupported(c, "bar.arrive needs a thread count: bar.arrive a, b");
  if (c->n != 1 && c->n != 2) unsupported(c, "wrong number of operands");
  sim_inst *in = emit(c, SIM_OP_BAR);
  in->ty2 = (uint8_t)arrive;
  bar_operands(c, in, 0, c->n == 2);
  if (!arrive && c->n == 1 && c->o[0].kind == O_IMM) {
    in->flags |= SIM_IF_BAR_PLAIN;
    in->imm = (int64_t)c->o[0].bits;
  }
}

/* bfind, lop3, dp4a, dp2a, fns, szext, bmsk: bit and byte arithmetic through SIM_OP_ALU, the
 * variant in ty2 (bfind: .shiftamt; dp2a: .hi; szext/bmsk: .clamp) and the b operand's type of
 * dp4a/dp2a in imm (its signedness may differ from a's). */
static void h_bits(ictx *c, const char *b) {
  const mods *md = &c->md;
  int ty = type1(c);
  sim_inst *in;
  if (!strcmp(b, "bfind")) {
    int sh = has(md, "shiftamt");
    int sz = sim_type_size(ty);
    if (md->nwords != sh || (sz != 4 && sz != 8) || sim_type_float(ty)) unsupported(c, NULL);
    alu(c, SIM_ALU_BFIND, ty, 1)->ty2 = (uint8_t)sh;
  } else if (!strcmp(b, "lop3")) {
    if (md->nwords || ty != SIM_T_B32) unsupported(c, NULL);
    if (c->n != 5 || c->o[4].kind != O_IMM)
      unsupported(c, "lop3 takes d, a, b, c and an immediate LUT");
    c->n = 4; /* the LUT is no operand row */
    in = alu(c, SIM_ALU_LOP3, ty, 3);
    in->imm = (int64_t)(c->o[4].bits & 0xff);
  } else if (!strcmp(b, "dp4a") || !strcmp(b, "dp2a")) {
    int two = b[2] == '2', hi = has(md, "hi");
    if (md->ntypes != 2 || md->nwords != (two ? hi + has(md, "lo") : 0) || (two && md->nwords != 1))
      unsupported(c, NULL);
    for (int k = 0; k < 2; k++)
      if (md->types[k] != SIM_T_U32 && md->types[k] != SIM_T_S32) unsupported(c, NULL);
    in = alu(c, two ? SIM_ALU_DP2A : SIM_ALU_DP4A, md->types[0], 3);
    in->ty2 = (uint8_t)hi;
    in->imm = md->types[1];
  } else if (!strcmp(b, "fns")) {
    if (md->nwords || ty != SIM_T_B32) unsupported(c, NULL);
    in = alu(c, SIM_ALU_FNS, ty, 3);
    in->b = src(c, 2, SIM_T_U32);
    in->c = src(c, 3, SIM_T_S32);
  } else {
    int cl = has(md, "clamp");
    if (md->nwords != 1 || (!cl && !has(md, "wrap"))) unsupported(c, NULL);
    int bm = !strcmp(b, "bmsk");
    if (bm ? ty != SIM_T_B32 : (ty != SIM_T_U32 && ty != SIM_T_S32)) unsupported(c, NULL);
    alu(c, bm ? SIM_ALU_BMSK : SIM_ALU_SZEXT, ty, 2)->ty2 = (uint8_t)cl;
  }
}

/* match.any / match.all .sync.b32/.b64 d[|p], a, membermask. */
static void h_match(ictx *c) {
  int all = has(&c->md, "all");
  int ty = type1(c);
  if (c->md.nwords != 1 || (!all && !has(&c->md, "any")) || (ty != SIM_T_B32 && ty != SIM_T_B64))
    unsupported(c, NULL);
  if (!all && c->second >= 0) unsupported(c, "only match.all has a predicate");
  need(c, 3);
  sim_inst *in = emit(c, SIM_OP_MATCH);
  in->sub = (uint8_t)(all ? SIM_MATCH_ALL : SIM_MATCH_ANY);
  in->ty = (uint8_t)ty;
  in->d = dst(c, 0);
  in->d2 = c->second;
  in->a = src(c, 1, ty);
  in->e = src(c, 2, SIM_T_B32);
}

/* elect.sync d|p, membermask (cg::invoke_one): the leader's lane in d (or a sink '_'), and p
 * true in the leader alone. A SIM_OP_MATCH, whose shape it has (sim_warpsync.c runs it). */
static void d_elect(ictx *c, int unused) {
  (void)unused;
  if (!ptx_word_eq(c->op->s, c->op->len, "elect.sync")) unsupported(c, "expected elect.sync");
  if (c->second < 0) unsupported(c, "elect.sync writes a lane and a predicate, d|p");
  need(c, 2);
  sim_inst *in = emit(c, SIM_OP_MATCH);
  in->sub = SIM_MATCH_ELECT;
  in->ty = SIM_T_B32;
  in->d = dst(c, 0);
  in->d2 = c->second;
  in->e = src(c, 1, SIM_T_B32);
}

/* redux.sync.op.type d, a, membermask: add/min/max on .u32/.s32, and/or/xor on .b32. */
static void h_redux(ictx *c) {
  static const char *const ops[] = {"add", "min", "max", "and", "or", "xor"};
  static const int subs[] = {SIM_ALU_ADD, SIM_ALU_MIN, SIM_ALU_MAX,
                             SIM_ALU_AND, SIM_ALU_OR, SIM_ALU_XOR};
  int sub = -1, ty = type1(c);
  for (int i = 0; i < 6; i++)
    if (has(&c->md, ops[i])) sub = subs[i];
  if (sub < 0 || c->md.nwords != 1) unsupported(c, NULL);
  int logic = sub == SIM_ALU_AND || sub == SIM_ALU_OR || sub == SIM_ALU_XOR;
  if (logic ? ty != SIM_T_B32 : (ty != SIM_T_U32 && ty != SIM_T_S32)) unsupported(c, NULL);
  need(c, 3);
  sim_inst *in = emit(c, SIM_OP_REDUX);
  in->sub = (uint8_t)sub;
  in->ty = (uint8_t)ty;
  in->d = dst(c, 0);
  in->a = src(c, 1, ty);
  in->e = src(c, 2, SIM_T_B32);
}

/* ---- the decoders the table names ----
 *
 * Each takes the argument of its row (a SIM_ALU_* sub-operation, a flag, an executor opcode);
 * handlers whose own signature differs are adapted by the small d_* functions below. */

static void d_carry(ictx *c, int sub) { h_carry(c, sub, 1); }
static void d_ldst(ictx *c, int is_st) { h_ldst(c, is_st); }
static void d_atom(ictx *c, int is_red) { h_atom(c, is_red); }
/* The plain per-lane instructions, sub-operation sub of d and nsrc sources, which need no
 * decoder of their own: the first type modifier is the instruction's (ty; immediates are read as
 * it), a second and third (a source's own signedness: dp4a, vabsdiff4) go to imm, 8 bits each,
 * and bit k of ty2 says the row's k-th word is present (vabsdiff4.add). */
static void plain_alu(ictx *c, int sub, int nsrc) {
  if (c->md.ntypes < 1) unsupported(c, "no type");
  sim_inst *in = alu(c, sub, c->md.types[0], nsrc);
  for (int k = 1; k < c->md.ntypes; k++) in->imm |= (int64_t)c->md.types[k] << 8 * (k - 1);
  in->ty2 = (uint8_t)c->words;
}
static void d_alu1(ictx *c, int sub) { plain_alu(c, sub, 1); }
static void d_alu2(ictx *c, int sub) { plain_alu(c, sub, 2); }
static void d_alu3(ictx *c, int sub) { plain_alu(c, sub, 3); }
/* vabsdiff4 and vabsdiff2 .dtype.atype.btype d, a, b, c: each type .u32 or .s32, as the PTX ISA
 * has them, and .sat only without .add (the ISA forbids both: a sum is never clamped). */
static void d_video(ictx *c, int sub) {
  if (c->md.ntypes != 3) unsupported(c, "expected .dtype.atype.btype");
  for (int k = 0; k < 3; k++)
    if (c->md.types[k] != SIM_T_U32 && c->md.types[k] != SIM_T_S32)
      unsupported(c, "each type must be .u32 or .s32");
  if (c->md.sat && c->words) unsupported(c, ".sat and .add together");
  plain_alu(c, sub, 3);
}
static void d_bits(ictx *c, int unused) {
  (void)unused;
  h_bits(c, c->md.base);
}
static void d_tensor(ictx *c, int unused) {
  (void)unused;
  ptx_tensor_inst(c);
}
static void d_mbarrier(ictx *c, int unused) {
  (void)unused;
  ptx_mbarrier_inst(c);
}
static void d_tex(ictx *c, int unused) {
  (void)unused;
  ptx_tex_inst(c);
}
#define D_PLAIN(name, fn)                 \
  static void name(ictx *c, int unused) { \
    (void)unused;                         \
    fn(c);                                \
  }
D_PLAIN(d_mov, h_mov)
D_PLAIN(d_setp, h_setp)
D_PLAIN(d_set, h_set)
D_PLAIN(d_match, h_match)
D_PLAIN(d_redux, h_redux)
D_PLAIN(d_selp, h_selp)
D_PLAIN(d_cvt, h_cvt)
D_PLAIN(d_cvta, h_cvta)
D_PLAIN(d_branch, h_branch)
D_PLAIN(d_bar, h_bar)
D_PLAIN(d_shfl, h_shfl)
D_PLAIN(d_vote, h_vote)
#undef D_PLAIN

/* mul24 / mad24 .lo or .hi */
static void d_mul24(ictx *c, int sub) {
  if (!has(&c->md, "lo") && !has(&c->md, "hi")) unsupported(c, NULL);
  alu(c, sub, type1(c), sub == SIM_ALU_MAD24 ? 3 : 2)->ty2 = (uint8_t)has(&c->md, "hi");
}

static void d_bfe(ictx *c, int sub) {
  sim_inst *in = alu(c, sub, type1(c), 3);
  in->b = src(c, 2, SIM_T_U32);
  in->c = src(c, 3, SIM_T_U32);
}

static void d_bfi(ictx *c, int sub) {
  sim_inst *in = alu(c, sub, type1(c), 4);
  in->c = src(c, 3, SIM_T_U32);
  in->e = src(c, 4, SIM_T_U32);
}

static void d_prmt(ictx *c, int sub) {
  static const char *const pm[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
  int mode = 0;
  for (int i = 0; i < 6; i++)
    if (has(&c->md, pm[i])) mode = i + 1;
  if (c->md.nwords > (mode != 0)) unsupported(c, NULL);
  alu(c, sub, SIM_T_B32, 3)->ty2 = (uint8_t)mode;
}

static void d_shf(ictx *c, int sub) {
  int r = has(&c->md, "r"), cl = has(&c->md, "clamp");
  if ((!r && !has(&c->md, "l")) || (!cl && !has(&c->md, "wrap")) || c->md.nwords != 2)
    unsupported(c, NULL);
  alu(c, sub, SIM_T_B32, 3)->ty2 = (uint8_t)(r | cl << 1);
}

/* testp.kind: a setp whose comparison codes follow SIM_CMP_NAN, in the order of `kinds`. */
static void d_testp(ictx *c, int unused) {
  static const char *const kinds[] = {"finite", "infinite", "number", "notanumber", "normal",
                                      "subnormal"};
  (void)unused;
  int k = -1;
  for (int i = 0; i < 6; i++)
    if (has(&c->md, kinds[i])) k = i;
  if (k < 0) unsupported(c, NULL);
  need(c, 2);
  sim_inst *in = emit(c, SIM_OP_SETP);
  in->sub = SIM_CMP_NAN + 1 + (uint8_t)k;
  in->ty = (uint8_t)type1(c);
  in->d = pred(c, 0, NULL);
  in->a = in->b = src(c, 1, in->ty);
}

/* isspacep.space p, a (__isGlobal, __isShared, __isLocal, __isConstant in a function that cannot
 * see where its pointer came from): a setp whose comparison code asks whether generic address a
 * lies in the space's window, the windows cvta converts to and from (sim_alu.c); for .const and
 * .global its b is a constant row holding the module's address, whose __constant__ variables
 * are constant and not global, as on an H100.
 * .shared::cluster is the block's own window: the simulator makes no address of another block's
 * shared memory. */
static void d_isspacep(ictx *c, int unused) {
  (void)unused;
  int words = c->words; /* bit 0 shared::cta, 1 shared::cluster, 2 param::entry */
  int sp = words & 3 ? SIM_SP_SHARED : words & 4 ? SIM_SP_PARAM : c->md.space;
  int dots = 0; /* isspacep takes its space and nothing else: one modifier */
  for (int i = 0; i < c->op->len; i++) dots += c->op->s[i] == '.';
  if (dots != 1) unsupported(c, "expected one state space");
  int sub = sp == SIM_SP_GLOBAL ? SIM_CMP_ISGLOBAL
            : sp == SIM_SP_SHARED ? SIM_CMP_ISSHARED
            : sp == SIM_SP_LOCAL ? SIM_CMP_ISLOCAL
            : sp == SIM_SP_PARAM ? SIM_CMP_ISPARAM
                                 : SIM_CMP_ISCONST;
  need(c, 2);
  sim_inst *in = emit(c, SIM_OP_SETP);
  in->sub = (uint8_t)sub;
  in->ty = SIM_T_U64;
  in->d = pred(c, 0, NULL);
  in->a = in->b = src(c, 1, SIM_T_U64);
  if (sub == SIM_CMP_ISCONST || sub == SIM_CMP_ISGLOBAL)
    in->b = ptx_const_row(c->p, -1, (uint64_t)(uintptr_t)c->p->m);
}

/* ret leaves a kernel (exit) or returns from a device function. */
static void d_ret(ictx *c, int unused) {
  (void)unused;
  need(c, 0);
  emit(c, c->p->m->funcs[c->p->cur_func].is_entry ? SIM_OP_EXIT : SIM_OP_RETF);
}

static void d_op0(ictx *c, int op) {
  need(c, 0);
  emit(c, op);
}

static void d_activemask(ictx *c, int op) {
  need(c, 1);
  emit(c, op)->d = dst(c, 0);
}

/* Memory ordering and hints: the simulator's memory is coherent, and these change no result. */
static void d_nop(ictx *c, int unused) {
  (void)unused;
  emit(c, SIM_OP_NOP);
}

/* createpolicy.fractional / .range / .cvt ... .b64 d, ...: an L2 eviction policy for the
 * .L2::cache_hint of later accesses to carry. The PTX ISA makes the policy an opaque value that
 * only hints, and the simulator takes no hint, so any value serves: d gets 0. The forms are
 * checked as the ISA writes them. Words (the row's order): bit 0 fractional, 1 range, 2 cvt,
 * 3 L2, 4..7 the L2 priorities evict_last, evict_normal, evict_first, evict_unchanged. */
static void d_policy(ictx *c, int unused) {
  (void)unused;
  unsigned w = c->words, kind = w & 7, prio = w >> 4 & 15;
  int nprio = sim_popcount(prio), cvt = kind == 4;
  if (kind != 1 && kind != 2 && kind != 4) unsupported(c, "expected .fractional, .range or .cvt");
  if (c->md.ntypes != 1 || type1(c) != SIM_T_B64) unsupported(c, "the policy is a .b64");
  if (cvt ? w != (4 | 8) : (w & 8) || nprio < 1 || nprio > 2)
    unsupported(c, cvt ? "createpolicy.cvt takes .L2 alone"
                       : "expected one or two L2 priorities (.L2::evict_last ...)");
  if (c->md.space && (kind != 2 || c->md.space != SIM_SP_GLOBAL)) unsupported(c, NULL);
  if (kind == 1 && (c->n < 1 || c->n > 2 || (c->n == 2 && c->o[1].kind != O_IMM)))
    unsupported(c, "createpolicy.fractional takes the policy and an optional fraction");
  if (kind == 2 && (c->n != 4 || c->o[1].kind != O_ADDR))
    unsupported(c, "createpolicy.range takes the policy, [a], primary-size and total-size");
  if (cvt) {
    need(c, 2);
    src(c, 1, SIM_T_B64);
  }
  c->n = 1;
  sim_inst *in = emit(c, SIM_OP_MOV64);
  in->ty = SIM_T_B64;
  in->d = dst(c, 0);
  in->a = ptx_const_row(c->p, -1, 0);
}

/* applypriority.L2::evict_normal [a], 128 and discard.L2 [a], 128 (is_discard) on global memory:
 * hints to the L2 about a 128-byte line, which the timing model does not take. discard leaves the
 * line's contents undefined as the PTX ISA has it; keeping them, as here, is one of the outcomes
 * it allows (a later read that wants the old values is wrong on a GPU all the same). */
static void d_hint(ictx *c, int is_discard) {
  (void)is_discard;
  if (c->md.nwords != 1 || (c->md.space && c->md.space != SIM_SP_GLOBAL)) unsupported(c, NULL);
  need(c, 2);
  if (c->o[0].kind != O_ADDR || c->o[1].kind != O_IMM || c->o[1].bits != 128)
    unsupported(c, "expected [a], 128");
  emit(c, SIM_OP_NOP);
}

/* membar and fence: they change no value here, but the ones that order memory become
 * SIM_OP_FENCE, since ptxas does not contract a product into a sum on their other side
 * (sim_contract.c) and the race check's release/acquire model reads them (sim_hb.c). fence's
 * row lists proxy first, then mbarrier_init and op_restrict as its fifth and sixth words: those
 * forms order one kind of operation only, and ptxas contracts across .proxy and .mbarrier_init
 * (ptxas 13.0 refuses .op_restrict, which goes with them): they stay SIM_OP_NOP. A membar, and a
 * fence that names no ordering (.acq_rel is its default), orders both ways. */
static void d_fence(ictx *c, int unused) {
  (void)unused;
  int narrow = !strcmp(c->md.base, "fence") && (c->words & (1u | 1u << 4 | 1u << 5));
  if (narrow) {
    emit(c, SIM_OP_NOP);
    return;
  }
  int f = order_flags(c);
  emit(c, SIM_OP_FENCE)->flags = (uint8_t)(f ? f : SIM_IF_ACQUIRE | SIM_IF_RELEASE);
}

/* call reads its own operand lists (MD_OWN). */
static void d_call(ictx *c, int unused) {
  (void)unused;
  h_call(c);
}

static const inst_row ROWS[] = {
#define INST(name, decode, arg, types, mods, words) {#name, decode, arg, types, mods, words},
#include "ptx_opcodes.def"
};

/* A linear scan: once per instruction at load time, and the table stays in the ISA's order. */
static const inst_row *find_row(const char *base) {
  for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++)
    if (!strcmp(base, ROWS[i].name)) return &ROWS[i];
  return NULL;
}

/* Every SIM_OP_ALU the decoder emitted has a function for its type (ptx_opcodes.def's ALU row):
 * sqrt.s32 or popc.f32 would otherwise reach none. From instruction `from` on. */
static void check_alu(ictx *c, int from) {
  const sim_module *m = c->p->m;
  for (int i = from; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    if (in->op != SIM_OP_ALU || sim_alu_has(in->sub, in->ty)) continue;
    char why[64];
    snprintf(why, sizeof why, "%s has no %s form", c->md.base,
             sim_type_float(in->ty) ? "floating-point" : "integer");
    unsupported(c, why);
  }
}

/* Bit k for each of the row's words that the instruction has, the k-th of its list. */
static unsigned word_bits(const ictx *c, const inst_row *row) {
  unsigned bits = 0;
  if (!strcmp(row->words, "*")) return 0;
  const char *w = row->words;
  for (int k = 0; *w; k++) {
    int n = (int)strcspn(w, "|");
    for (int i = 0; i < c->md.nwords; i++)
      if (c->md.wlen[i] == n && !memcmp(w, c->md.words[i], (size_t)n)) bits |= 1u << k;
    w += n + (w[n] == '|');
  }
  return bits;
}

static void decode(ictx *c, const inst_row *row) {
  int first = c->p->m->ncode;
  c->words = word_bits(c, row);
  if (!(row->mods & MD_OWN)) c->n = parse_opnds(c->p, c->o, 8, &c->second);
  row->decode(c, row->arg);
  check_alu(c, first);
}

void ptx_parse_inst(ptx_parser *p) {
  ictx local; /* on the stack: a failed decode longjmps out and must leave nothing behind */
  memset(&local, 0, sizeof local);
  ictx *c = &local;
  c->p = p;
  c->guard = -1;
  if (ptx_accept(&p->lx, "@")) {
    if (ptx_accept(&p->lx, "!")) c->gneg = 1;
    const ptx_tok *g = ptx_next(&p->lx);
    opnd o;
    memset(&o, 0, sizeof o);
    if (g->kind != PTX_T_WORD) ptx_fail(p, "PTX line %d: bad guard predicate", g->line);
    ptx_opnd_name(p, g, &o);
    if (o.kind != O_PRED)
      ptx_fail(p, "PTX line %d: guard '%.*s' is not a predicate", g->line, g->len, g->s);
    c->guard = o.row;
  }
  c->op = ptx_next(&p->lx);
  c->line = c->op->line;
  if (c->op->kind != PTX_T_WORD || c->op->s[0] == '%' || c->op->s[0] == '.') {
    if (c->op->kind == PTX_T_EOF) ptx_fail(p, "PTX line %d: unexpected end of PTX", c->line);
    ptx_fail(p, "PTX line %d: expected an instruction but found '%.*s'", c->line, c->op->len,
             c->op->s);
  }
  const inst_row *row = split_mods(p, c->op, &c->md);
  p->inst = c->op;
  decode(c, row);
  p->inst = NULL;
}
