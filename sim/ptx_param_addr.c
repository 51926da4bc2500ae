/* ptx_param_addr.c: what the decoder does when code takes the address of a parameter. NVRTC
 * does so for a struct parameter whose array is indexed with a value it cannot fold: in a
 * kernel `mov.b64 %rd, k_param_0;` then `ld.param.f32 %f, [%rd+8];`, and for a
 * __grid_constant__ parameter used through a pointer (then `cvta.param` makes the address
 * generic); in a device function NVRTC does not inline, `mov.b64 %rd, f_param_0;` then
 * `cvta.local` and ld.local. The PTX ISA's rules: mov gives a kernel parameter's address in the
 * .param space, which ld.param reads and nothing writes; it gives a device function parameter's
 * address in the .local space, the parameter having been copied onto the stack, where the
 * function may also write it.
 *
 * Stance: a kernel parameter's address is its offset in the launch's parameter buffer, a
 * constant row like a variable's address, and the parameter is marked as taken: a load through
 * a register may read the parameters so marked and nothing else (sim_param_addr.c checks it at
 * run time), so an index that runs past the struct, into the next parameter or past the buffer,
 * is an out-of-bounds access rather than a read of whatever lies there.
 *
 * A device function's parameter gets a copy: a local variable of the function, filled by a
 * prologue of ld.param / st.local pairs that is the function's first code, so that every call
 * copies its own arguments, and a recursive function's copy lies in each activation's frame
 * like its other locals (the turned-down alternative, pointing the address at the parameter's
 * slot itself, would let a recursive call's arguments overwrite what a caller's pointer reads).
 * The body is scanned for the parameters it takes the address of before it is decoded, since
 * the prologue must come first. A function that is not stacked has its copies moved, once the
 * module is laid out, to a region after the call stack where guard bytes surround each one, so
 * that an index past the struct there is told as one (sim_param_addr.c). */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ptx_param_addr.h"

/* Index of the parameter of f at offset off, or -1. */
static int param_at(const sim_func *f, int off) {
  for (int k = 0; k < f->nparams; k++)
    if ((int)f->params[k].offset == off) return k;
  return -1;
}

/* A kernel parameter's address: its offset, the parameter marked as taken. */
static int kernel_param_addr(ictx *c, const opnd *o) {
  ptx_parser *p = c->p;
  sim_func *f = p->cur_func >= 0 ? &p->m->funcs[p->cur_func] : NULL;
  int k = f && f->is_entry ? param_at(f, o->row) : -1;
  if (k < 0) ptx_unsupported(c, "not a parameter of this kernel");
  if (!f->param_taken && !(f->param_taken = calloc((size_t)f->nparams, 1)))
    ptx_fail(p, "out of memory while loading PTX");
  f->param_taken[k] = 1;
  return ptx_const_row(p, -1, (uint64_t)o->row);
}

/* A device function's own parameter's address: its copy's, a local one (64 bits, as a mov of a
 * local variable's address must be for a stacked function: ptx_rebase_uses). */
static int func_param_addr(ictx *c, const opnd *o) {
  ptx_parser *p = c->p;
  const sim_func *f = p->cur_func >= 0 ? &p->m->funcs[p->cur_func] : NULL;
  int k = f && !f->is_entry ? param_at(f, o->row) : -1;
  if (k < 0) ptx_unsupported(c, "only a function's own parameters have an address");
  if (c->md.ntypes != 1 || sim_type_size(c->md.types[0]) != 8)
    ptx_unsupported(c, "a device function parameter's address is 64 bits");
  for (int i = 0; i < p->m->nlcopy; i++)
    if (p->m->lcopy[i].func == p->cur_func && p->m->lcopy[i].param == k)
      return ptx_const_row(p, p->m->lcopy[i].var, 0);
  ptx_unsupported(c, "taking a parameter's address in this form");
}

int ptx_param_addr(ictx *c, int i) {
  const opnd *o = &c->o[i];
  if (o->kind == O_KPARAM) return kernel_param_addr(c, o);
  if (o->kind == O_FPARAM) return func_param_addr(c, o);
  ptx_unsupported(c, "taking the address of a parameter");
}

/* ---- a device function's prologue ---- */

/* Is t an instruction that reads an address from its source operand, mov or cvta? */
static int takes_address(const ptx_tok *t) {
  return t->kind == PTX_T_WORD && ((t->len > 4 && !memcmp(t->s, "mov.", 4)) ||
                                   (t->len > 5 && !memcmp(t->s, "cvta.", 5)));
}

/* The parameters of f whose address the body at the cursor (after its '{') takes: named as the
 * source of a mov or cvta (`mov.b64 %rd1, f_param_0;`), each one's name into names[k]
 * (NULL for the others). The body's own .param slots are not declared yet, so a name found is
 * one of f's. */
static void scan_taken(ptx_parser *p, const sim_func *f, const ptx_tok **names) {
  const ptx_tok *tk = p->lx.toks;
  int depth = 1;
  for (int i = p->lx.pos; i < p->lx.n && depth > 0; i++) {
    const ptx_tok *t = &tk[i];
    if (ptx_is(t, "{")) {
      depth++;
    } else if (ptx_is(t, "}")) {
      depth--;
    } else if (i - 3 >= p->lx.pos && t->kind == PTX_T_WORD && ptx_is(&tk[i - 1], ",") &&
               takes_address(&tk[i - 3])) {
      int row;
      const ptx_sym *s = ptx_lookup(p, t->s, t->len, &row);
      int k = s && s->kind == PTX_SYM_FPARAM ? param_at(f, row) : -1;
      if (k >= 0) names[k] = t;
    }
  }
}

/* The local variable that holds the copy of f's parameter k, named for it (with a space, so
 * that no PTX name, which the debugger looks locals up by, is the same). */
static int copy_var(ptx_parser *p, const sim_func *f, int k, const ptx_tok *name) {
  int vi = ptx_new_var(p);
  sim_var *v = &p->m->vars[vi];
  v->name = malloc((size_t)name->len + 8);
  if (!v->name) ptx_fail(p, "out of memory while loading PTX");
  snprintf(v->name, (size_t)name->len + 8, "%.*s (copy)", name->len, name->s);
  v->space = SIM_SP_LOCAL;
  v->elem = SIM_T_B8;
  v->size = f->params[k].size;
  v->align = f->params[k].align < 8 ? 8 : f->params[k].align; /* the prologue moves 8 bytes */
  v->func = p->cur_func;
  ptx_place_local(p, v);
  return vi;
}

/* The prologue's copy of bytes [off, off + n) of parameter k into variable vi, through row tmp:
 * an ld of the parameter's slot, an st.local of the copy. */
static void copy_chunk(ictx *c, const sim_func *f, int k, int vi, int tmp, int off, int n) {
  static const int types[9] = {0, SIM_T_B8, SIM_T_B16, 0, SIM_T_B32, 0, 0, 0, SIM_T_B64};
  sim_inst *ld = ptx_emit(c, SIM_OP_LD);
  ld->ty = (uint8_t)types[n];
  ld->size = (uint8_t)n;
  ld->vec = 1;
  ld->space = SIM_SP_FPARAM;
  ld->a = SIM_SR_ZERO;
  ld->imm = (int64_t)f->params[k].offset + off;
  ld->v[0] = tmp;
  sim_inst *st = ptx_emit(c, SIM_OP_ST);
  st->ty = (uint8_t)types[n];
  st->size = (uint8_t)n;
  st->vec = 1;
  st->space = SIM_SP_LOCAL;
  st->a = ptx_const_row(c->p, vi, 0);
  st->imm = off;
  st->v[0] = tmp;
}

void ptx_param_prologue(ptx_parser *p, int fi) {
  const ptx_tok *names[16] = {NULL};
  const sim_func *f = &p->m->funcs[fi];
  if (f->is_entry || f->nparams > 16) return;
  scan_taken(p, f, names);
  int tmp = -1;
  for (int k = 0; k < f->nparams; k++) {
    if (!names[k]) continue;
    if (tmp < 0) { /* one row to move the bytes through, the function's own */
      tmp = p->m->nuser++;
      p->m->funcs[fi].nregs++;
    }
    int vi = copy_var(p, f, k, names[k]);
    sim_module *m = p->m;
    m->lcopy = ptx_grow(p, m->lcopy, &p->cap_lcopy, m->nlcopy + 1, sizeof *m->lcopy);
    m->lcopy[m->nlcopy++] = (sim_lcopy){fi, k, vi, f->params[k].size, -1};
    ictx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.op = names[k];
    c.line = names[k]->line;
    c.guard = -1;
    int size = (int)f->params[k].size;
    for (int off = 0; off < size;) {
      int n = size - off >= 8 ? 8 : size - off >= 4 ? 4 : size - off >= 2 ? 2 : 1;
      copy_chunk(&c, f, k, vi, tmp, off, n);
      off += n;
    }
  }
}

/* ---- the region of copies ---- */

void ptx_param_copies_place(ptx_parser *p) {
  sim_module *m = p->m;
  size_t end = 0;
  for (int i = 0; i < m->nlcopy; i++) {
    sim_lcopy *lc = &m->lcopy[i];
    const sim_func *f = &m->funcs[lc->func];
    if (f->stacked) continue; /* in its frame (frame-relative already) */
    size_t a = m->vars[lc->var].align, at = (end + SIM_LCOPY_GUARD + a - 1) / a * a;
    lc->at = (int64_t)at;
    end = at + lc->size;
    for (int k = 0; k < p->nconsts; k++) {
      if (p->consts[k].var != lc->var) continue;
      m->consts[k] = at + p->consts[k].value;
      int bad = ptx_rebase_uses(m, f, (1 << 24) + k, SIM_SR_LCOPY, (int64_t)m->consts[k]);
      if (bad >= 0)
        ptx_fail(p, "PTX line %d: this use of the address of a parameter of %s is not supported",
                 m->code[bad].ptx_line, f->name);
    }
  }
  m->lcopy_bytes = end ? (end + SIM_LCOPY_GUARD + 15) / 16 * 16 : 0;
}
