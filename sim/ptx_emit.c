/* ptx_emit.c: what every decoder does with an instruction's operands: refuse it, naming the
 * instruction and its line (ptx_unsupported), turn an operand into a register row (immediates and
 * variable addresses become constant rows) or an address, and append the sim_inst. Shared by the
 * instruction decoder (ptx_inst.c) and the tensor decoder (ptx_tensor.c).
 *
 * Stance: a provider below both decoders, so that the tensor decoder does not reach back into
 * ptx_inst.c, which dispatches to it. */
#include <stdlib.h>
#include <string.h>

#include "ptx_emit.h"

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
  if (in->space == SIM_SP_PARAM && in->op != SIM_OP_LDPARAM)
    ptx_unsupported(c, "parameter address in a register");
}
