/* ptx_emit.c: what every decoder does with an instruction's operands: refuse it, naming the
 * instruction and its line (ptx_unsupported), turn an operand into a register row (immediates and
 * variable addresses become constant rows) or an address, and append the sim_inst. Shared by the
 * instruction decoder (ptx_inst.c) and the tensor decoder (ptx_tensor.c).
 *
 * Reading one operand (ptx_opnd: a register, number, special register, vector, address or name)
 * is here too, for the decoders that read their own operand lists (call in ptx_inst.c, tex in
 * ptx_texture.c).
 *
 * Stance: a provider below the decoders, so that the tensor and texture decoders do not reach
 * back into ptx_inst.c, which dispatches to them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_emit.h"
#include "ptx_loc.h"

/* ---- operands ---- */

static const struct { const char *name; int row; } sregs[] = {
    {"%tid.x", SIM_SR_TID_X}, {"%tid.y", SIM_SR_TID_Y}, {"%tid.z", SIM_SR_TID_Z},
    {"%ntid.x", SIM_SR_NTID_X}, {"%ntid.y", SIM_SR_NTID_Y}, {"%ntid.z", SIM_SR_NTID_Z},
    {"%ctaid.x", SIM_SR_CTAID_X}, {"%ctaid.y", SIM_SR_CTAID_Y}, {"%ctaid.z", SIM_SR_CTAID_Z},
    {"%nctaid.x", SIM_SR_NCTAID_X}, {"%nctaid.y", SIM_SR_NCTAID_Y}, {"%nctaid.z", SIM_SR_NCTAID_Z},
    {"%laneid", SIM_SR_LANEID}, {"%warpid", SIM_SR_WARPID}, {"%nwarpid", SIM_SR_NWARPID},
    {"%lanemask_eq", SIM_SR_LANEMASK_EQ}, {"%lanemask_lt", SIM_SR_LANEMASK_LT},
    {"%lanemask_le", SIM_SR_LANEMASK_LE}, {"%lanemask_gt", SIM_SR_LANEMASK_GT},
    {"%lanemask_ge", SIM_SR_LANEMASK_GE}, {"%dynamic_smem_size", SIM_SR_DYNSMEM_SIZE},
    {"%total_smem_size", SIM_SR_TOTAL_SMEM}, {"%smid", SIM_SR_SMID}, {"%nsmid", SIM_SR_NSMID},
    {"%aggr_smem_size", SIM_SR_AGGR_SMEM}, {"%gridid", SIM_SR_GRIDID},
    /* A launch without clusters is a grid of one-block clusters (sim_sched.c fills them). */
    {"%clusterid.x", SIM_SR_CLUSTERID_X}, {"%clusterid.y", SIM_SR_CLUSTERID_Y},
    {"%clusterid.z", SIM_SR_CLUSTERID_Z}, {"%nclusterid.x", SIM_SR_NCLUSTERID_X},
    {"%nclusterid.y", SIM_SR_NCLUSTERID_Y}, {"%nclusterid.z", SIM_SR_NCLUSTERID_Z},
    {"%cluster_ctarank", SIM_SR_CLUSTER_CTARANK}, {"%cluster_nctarank", SIM_SR_CLUSTER_NCTARANK},
    {"%cluster_ctaid.x", SIM_SR_CLUSTER_CTAID_X}, {"%cluster_ctaid.y", SIM_SR_CLUSTER_CTAID_Y},
    {"%cluster_ctaid.z", SIM_SR_CLUSTER_CTAID_Z}, {"%cluster_nctaid.x", SIM_SR_CLUSTER_NCTAID_X},
    {"%cluster_nctaid.y", SIM_SR_CLUSTER_NCTAID_Y},
    {"%cluster_nctaid.z", SIM_SR_CLUSTER_NCTAID_Z},
    {"%is_explicit_cluster", SIM_SR_IS_EXPLICIT_CLUSTER}, {"%current_graph_exec", SIM_SR_ZERO},
    {"%envreg1", SIM_SR_ENVREG1}, {"%envreg2", SIM_SR_ENVREG2},
    {"%clock", -1}, {"%clock64", -2}, {"%globaltimer", -3}, {"%clock_hi", -4},
    {"%globaltimer_lo", -5}, {"%globaltimer_hi", -6}, {NULL, 0}};

/* Special registers the driver fills that no modelled state stands behind (%envregN,
 * performance-monitor counters %pmN), which read as 0. -1 if name is none of them. */
static int64_t const_sreg(const char *s, int n) {
  /* %envreg0..31, %pm0..7 and %pm0_64..%pm7_64: a prefix, a number without leading zeros, a
   * suffix */
  int k = 0, d = 0;
  const char *digits = NULL, *rest = NULL;
  if (n > 7 && !memcmp(s, "%envreg", 7)) digits = s + 7;
  else if (n > 3 && !memcmp(s, "%pm", 3)) digits = s + 3;
  if (!digits) return -1;
  for (rest = digits; rest < s + n && *rest >= '0' && *rest <= '9' && d < 3; rest++, d++)
    k = k * 10 + (*rest - '0');
  if (d == 0 || (d > 1 && *digits == '0')) return -1;
  if (digits == s + 7) return rest == s + n && k < 32 ? 0 : -1;
  if (k > 7) return -1;
  return rest == s + n || (s + n - rest == 3 && !memcmp(rest, "_64", 3)) ? 0 : -1;
}

static void parse_number(ptx_parser *p, const ptx_tok *t, opnd *o, int neg) {
  char buf[72];
  if (t->len >= 70) ptx_fail(p, "PTX line %d: bad number", t->line);
  o->kind = O_IMM;
  char k = t->len > 2 && t->s[0] == '0' ? t->s[1] : 0; /* 0f: 32-bit hex float, 0d: 64-bit */
  if (k == 'f' || k == 'F' || k == 'd' || k == 'D') {
    int hexf = k == 'f' || k == 'F';
    snprintf(buf, sizeof buf, "%.*s", t->len - 2, t->s + 2);
    char *end;
    o->bits = strtoull(buf, &end, 16);
    if (*end || t->len != (hexf ? 10 : 18))
      ptx_fail(p, "PTX line %d: bad float literal '%.*s'", t->line, t->len, t->s);
    o->fkind = hexf ? 1 : 2;
    if (neg) o->bits ^= o->fkind == 1 ? 0x80000000ull : 0x8000000000000000ull;
    return;
  }
  snprintf(buf, sizeof buf, "%.*s", t->len, t->s);
  int hex = buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
  int isf = !hex && (strchr(buf, '.') || strchr(buf, 'e') || strchr(buf, 'E'));
  char *end;
  if (isf) {
    o->fkind = 3;
    o->fval = strtod(buf, &end) * (neg ? -1 : 1);
  } else {
    o->bits = strtoull(buf, &end, (buf[0] == '0' && buf[1] && !hex) ? 8 : 0);
    if (*end == 'U') end++;
    if (neg) o->bits = 0 - o->bits;
  }
  if (*end) ptx_fail(p, "PTX line %d: bad number '%s'", t->line, buf);
}

/* The value of %reserved_smem_offset_begin, _end, _cap, _0 or _1 (offsets in the shared window
 * of the region the GPU reserves at its start, sim_int.h), or -1 for another name. */
static int64_t reserved_sreg(const char *s, int n) {
  static const struct { const char *suffix; int64_t value; } regs[] = {
      {"begin", 0}, {"end", SIM_RESERVED_SMEM_END}, {"cap", SIM_RESERVED_SMEM},
      {"0", 0}, {"1", 0}};
  if (n <= 22 || memcmp(s, "%reserved_smem_offset_", 22)) return -1;
  for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
    if (ptx_word_eq(s + 22, n - 22, regs[i].suffix)) return regs[i].value;
  return -1;
}

void ptx_opnd_name(ptx_parser *p, const ptx_tok *t, opnd *o) {
  int row;
  const ptx_sym *s = ptx_lookup(p, t->s, t->len, &row);
  if (s) {
    o->row = row;
    o->type = s->type;
    switch (s->kind) {
      case PTX_SYM_REG: o->kind = O_REG; return;
      case PTX_SYM_PRED: o->kind = O_PRED; return;
      case PTX_SYM_VAR: o->kind = O_VAR; return;
      case PTX_SYM_KPARAM: o->kind = O_KPARAM; return;
      case PTX_SYM_FPARAM: o->kind = O_FPARAM; return;
      default: break;
    }
  }
  for (int i = 0; sregs[i].name; i++)
    if (ptx_word_eq(t->s, t->len, sregs[i].name)) {
      o->kind = O_SREG;
      o->row = sregs[i].row;
      return;
    }
  int64_t cv = t->s[0] == '%' ? const_sreg(t->s, t->len) : -1;
  if (cv >= 0) {
    o->kind = O_SREG;
    o->row = ptx_const_row(p, -1, (uint64_t)cv);
    return;
  }
  cv = reserved_sreg(t->s, t->len);
  if (cv >= 0) {
    p->m->reserved_smem = 1; /* the module's shared memory moves past the region */
    o->kind = O_SREG;
    o->row = ptx_const_row(p, -1, (uint64_t)cv);
    return;
  }
  if (t->s[0] == '%') ptx_fail(p, "PTX line %d: unknown register '%.*s'", t->line, t->len, t->s);
  /* PTX's one predefined constant (<cuda_fp16.h> shuffles use it) */
  if (ptx_word_eq(t->s, t->len, "WARP_SZ")) {
    o->kind = O_IMM;
    o->bits = SIM_WARP;
    return;
  }
  o->kind = O_NAME;
  o->tok = t;
}

static void parse_addr(ptx_parser *p, opnd *o) {
  const ptx_tok *t = ptx_next(&p->lx);
  o->kind = O_ADDR;
  if (t->kind != PTX_T_WORD) ptx_fail(p, "PTX line %d: bad address", t->line);
  opnd b;
  memset(&b, 0, sizeof b);
  if ((t->s[0] >= '0' && t->s[0] <= '9')) parse_number(p, t, &b, 0);
  else ptx_opnd_name(p, t, &b);
  o->base = b.kind;
  o->row = b.row;
  if (b.kind == O_IMM)
    o->off = (int64_t)b.bits;
  else if (b.kind != O_REG && b.kind != O_VAR && b.kind != O_KPARAM && b.kind != O_FPARAM)
    ptx_fail(p, "PTX line %d: unsupported address '[%.*s]'", t->line, t->len, t->s);
  if (b.kind == O_REG && sim_type_size(b.type) < 4)
    ptx_fail(p, "PTX line %d: address register too narrow", t->line);
  while (ptx_is(ptx_peek(&p->lx, 0), "+") || ptx_is(ptx_peek(&p->lx, 0), "-")) {
    int neg = ptx_is(ptx_next(&p->lx), "-");
    if (ptx_accept(&p->lx, "-")) neg = !neg;
    opnd n;
    memset(&n, 0, sizeof n);
    parse_number(p, ptx_next(&p->lx), &n, neg);
    if (n.fkind) ptx_fail(p, "PTX line %d: bad address offset", t->line);
    o->off += (int64_t)n.bits;
  }
  const ptx_tok *c = ptx_next(&p->lx);
  if (!ptx_is(c, "]")) ptx_fail(p, "PTX line %d: expected ']' in address", c->line);
}

/* A vector operand {a, b, ...} after its '{' (token t): registers, sinks ('_', -1) and
 * numbers (constant rows r, encoded -2 - r), 8 at most. */
static void parse_vec(ptx_parser *p, const ptx_tok *t, opnd *o) {
  o->kind = O_VEC;
  do {
    if (o->n == 8) ptx_fail(p, "PTX line %d: vector of more than 8", t->line);
    const ptx_tok *r = ptx_next(&p->lx);
    if (ptx_is(r, "_")) {
      o->vec[o->n++] = -1;
      continue;
    }
    opnd e;
    memset(&e, 0, sizeof e);
    if (r->kind == PTX_T_WORD && r->s[0] >= '0' && r->s[0] <= '9') {
      parse_number(p, r, &e, 0);
      o->vec[o->n++] = -2 - ptx_const_row(p, -1, e.bits); /* encoded constant */
      continue;
    }
    if (r->kind != PTX_T_WORD) ptx_fail(p, "PTX line %d: bad vector operand", r->line);
    ptx_opnd_name(p, r, &e);
    if (e.kind != O_REG) ptx_fail(p, "PTX line %d: vector elements must be registers", r->line);
    o->vec[o->n++] = e.row;
  } while (ptx_accept(&p->lx, ","));
  if (!ptx_accept(&p->lx, "}")) ptx_fail(p, "PTX line %d: expected '}'", t->line);
}

void ptx_opnd(ptx_parser *p, opnd *o) {
  memset(o, 0, sizeof *o);
  const ptx_tok *t = ptx_next(&p->lx);
  if (ptx_is(t, "[")) {
    parse_addr(p, o);
    return;
  }
  if (ptx_is(t, "{")) {
    parse_vec(p, t, o);
    return;
  }
  if (ptx_is(t, "!")) {
    ptx_opnd(p, o);
    if (o->kind != O_PRED) ptx_fail(p, "PTX line %d: '!' needs a predicate", t->line);
    o->neg = 1;
    return;
  }
  if (ptx_is(t, "-")) {
    const ptx_tok *n = ptx_next(&p->lx);
    if (n->kind != PTX_T_WORD) ptx_fail(p, "PTX line %d: bad operand", t->line);
    parse_number(p, n, o, 1);
    return;
  }
  if (ptx_is(t, "_")) {
    o->kind = O_SINK;
    return;
  }
  if (t->kind != PTX_T_WORD) {
    if (t->kind == PTX_T_EOF)
      ptx_fail(p, "PTX line %d: unexpected end of PTX in an instruction", t->line);
    ptx_fail(p, "PTX line %d: unexpected '%.*s' in operands", t->line, t->len, t->s);
  }
  if (t->s[0] >= '0' && t->s[0] <= '9') {
    parse_number(p, t, o, 0);
    return;
  }
  ptx_opnd_name(p, t, o);
}

int ptx_word_eq(const char *s, int n, const char *w) {
  return (int)strlen(w) == n && memcmp(s, w, (size_t)n) == 0;
}

int ptx_has(const mods *md, const char *w) {
  for (int i = 0; i < md->nwords; i++)
    if (ptx_word_eq(md->words[i], md->wlen[i], w)) return 1;
  return 0;
}

static int op_is(const ptx_tok *t, const char *w) {
  int n = (int)strlen(w);
  return t->len >= n && !memcmp(t->s, w, (size_t)n) && (t->len == n || t->s[n] == '.');
}

static int op_has(const ptx_tok *t, const char *part) {
  int n = (int)strlen(part);
  for (int i = 0; i + n <= t->len; i++)
    if (!memcmp(t->s + i, part, (size_t)n)) return 1;
  return 0;
}

/* Why an instruction by which the blocks of a cluster work together cannot run, or "" for any
 * other: the simulator runs a cluster's blocks like any others, so a cluster barrier, or one
 * block reaching another's shared memory (mapa, getctarank, ld/st/atom on .shared::cluster),
 * has nothing to act on. Fences at cluster scope order nothing the simulator does not already,
 * and run; bulk copies into .shared::cluster keep their own messages (ptx_tensor.c). */
const char *ptx_cluster_why(const ptx_tok *t) {
  static const char why[] = ": the simulator does not model the blocks of a cluster working "
                            "together (cluster barriers, one block reaching another's shared "
                            "memory); __cluster_dims__ and the cluster's indices work, but run "
                            "this kernel on a GPU";
  if (op_is(t, "mapa") || op_is(t, "getctarank")) return why;
  if ((op_is(t, "barrier") || op_is(t, "bar")) && op_has(t, ".cluster")) return why;
  if ((op_is(t, "ld") || op_is(t, "st") || op_is(t, "atom") || op_is(t, "red")) &&
      op_has(t, ".shared::cluster"))
    return why;
  return "";
}

/* The policy changes nothing the simulator computes: PTX calls it "a performance hint only", and
 * the timing model's L2 takes no priorities. */
int ptx_cache_hint(ictx *c, int want) {
  if (!ptx_has(&c->md, "L2::cache_hint")) return 0;
  if (c->md.space && c->md.space != SIM_SP_GLOBAL)
    ptx_unsupported(c, ".L2::cache_hint is for global memory");
  if (c->n == want + 1) {
    const opnd *o = &c->o[want];
    if (o->kind != O_IMM && (o->kind != O_REG || sim_type_size(o->type) != 8))
      ptx_unsupported(c, "the cache policy must be a 64-bit register");
    c->n = want;
  }
  return 1;
}

void ptx_unsupported(ictx *c, const char *why) {
  const char *cluster = ptx_cluster_why(c->op);
  if (*cluster) why = NULL; /* what the instruction lacks matters less than why it cannot be */
  ptx_fail(c->p, "PTX line %d: unsupported instruction '%.*s'%s%s%s", c->line, c->op->len,
           c->op->s, why ? ": " : "", why ? why : "", cluster);
}

sim_inst *ptx_emit(ictx *c, int op) {
  sim_module *m = c->p->m;
  m->code = ptx_grow(c->p, m->code, &c->p->cap_code, m->ncode + 1, sizeof *m->code);
  sim_inst *in = &m->code[m->ncode++];
  memset(in, 0, sizeof *in);
  in->op = (uint8_t)op;
  in->guard = c->guard;
  in->gneg = (uint8_t)c->gneg;
  in->d = in->d2 = in->a = in->b = in->c = in->e = -1;
  in->v[0] = in->v[1] = in->v[2] = in->v[3] = -1;
  in->target = in->rpc = -1;
  in->line = c->p->loc_line;
  in->file = (int16_t)c->p->loc_file;
  ptx_loc_inst(c->p, m->ncode - 1);
  in->ptx_line = c->line;
  return in;
}

/* Normalises an immediate to the bits of type ty. */
static uint64_t imm_bits(const opnd *o, int ty) {
  if (ty == SIM_T_F32) {
    float f;
    if (o->fkind == 1) return o->bits & 0xffffffffu;
    if (o->fkind == 2) {
      double d;
      memcpy(&d, &o->bits, 8);
      f = (float)d;
    } else if (o->fkind == 3) {
      f = (float)o->fval;
    } else {
      f = (float)(int64_t)o->bits;
    }
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  if (ty == SIM_T_F64) {
    double d;
    if (o->fkind == 2) return o->bits;
    if (o->fkind == 1) {
      float f;
      uint32_t u = (uint32_t)o->bits;
      memcpy(&f, &u, 4);
      d = f;
    } else if (o->fkind == 3) {
      d = o->fval;
    } else {
      d = (double)(int64_t)o->bits;
    }
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
  }
  uint64_t v = o->fkind == 3 ? (uint64_t)(int64_t)o->fval : o->bits;
  int sz = sim_type_size(ty);
  if (sz >= 8 || sz == 0) return v;
  return v & ((1ull << (8 * sz)) - 1);
}

/* A source operand as a row: registers, immediates (constant rows), special registers and
 * variable addresses. */
int ptx_src(ictx *c, int i, int ty) {
  opnd *o = &c->o[i];
  switch (o->kind) {
    case O_REG: return o->row;
    case O_IMM: return ptx_const_row(c->p, -1, imm_bits(o, ty));
    case O_SREG:
      if (o->row < 0) ptx_unsupported(c, "clock registers only with mov");
      return o->row;
    case O_VAR: {
      const sim_var *v = &c->p->m->vars[o->row];
      if (v->is_extern && v->space == SIM_SP_SHARED) return SIM_SR_DYNSMEM;
      return ptx_const_row(c->p, o->row, 0);
    }
    default: ptx_unsupported(c, "operand kind not supported here");
  }
  return -1;
}

/* Address operand i: base row and immediate offset into in->a / in->imm. Params set space. */
void ptx_addr(ictx *c, sim_inst *in, int i) {
  opnd *o = &c->o[i];
  if (o->kind != O_ADDR) ptx_unsupported(c, "expected an address");
  in->imm = o->off;
  switch (o->base) {
    case O_REG: in->a = o->row; break;
    case O_IMM: in->a = SIM_SR_ZERO; break;
    case O_VAR: {
      const sim_var *v = &c->p->m->vars[o->row];
      int dyn = v->is_extern && v->space == SIM_SP_SHARED;
      in->a = dyn ? SIM_SR_DYNSMEM : ptx_const_row(c->p, o->row, 0);
      if (in->space == SIM_SP_PARAM) ptx_unsupported(c, NULL);
      break;
    }
    case O_KPARAM:
      if (in->space != SIM_SP_PARAM) ptx_unsupported(c, "parameter used outside ld.param");
      in->op = SIM_OP_LDPARAM;
      in->imm += o->row;
      in->a = SIM_SR_ZERO;
      break;
    case O_FPARAM:
      if (in->space != SIM_SP_PARAM) ptx_unsupported(c, "parameter used outside ld/st.param");
      in->space = SIM_SP_FPARAM;
      in->imm += o->row;
      in->a = SIM_SR_ZERO;
      break;
    default: ptx_unsupported(c, NULL);
  }
  if (in->space != SIM_SP_PARAM || in->op == SIM_OP_LDPARAM) return;
  /* ld.param through a register: a kernel parameter whose address the kernel took (mov), read
   * as a load of the .param space (sim_param_addr.c checks where it lands) */
  if (o->base != O_REG) ptx_unsupported(c, "parameter address in a register");
  if (in->op == SIM_OP_ST)
    ptx_unsupported(c, "a store through a parameter's address: a kernel's parameters are "
                    "read-only");
  if (in->op != SIM_OP_LD) ptx_unsupported(c, "parameter address in a register");
}
