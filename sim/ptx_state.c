/* ptx_state.c: what the parser's files share: the error exit, growable arrays, type names, the
 * symbol table's lookup, constant rows, call sites and functions by name or address.
 *
 * Stance: one provider below the parser's files, so that ptx_parse.c (structure), ptx_inst.c and
 * ptx_tensor.c (instructions) and ptx_dwarf.c (debug information) each use it and none of them
 * provides for another. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_state.h"

void ptx_fail(ptx_parser *p, const char *fmt, ...) {
  if (p->err && p->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, p->errlen, fmt, ap);
    va_end(ap);
    size_t n = strlen(p->err);
    if (p->inst && !strstr(p->err, "unsupported instruction") && n < p->errlen)
      snprintf(p->err + n, p->errlen - n, " (in '%.*s')", p->inst->len > 60 ? 60 : p->inst->len,
               p->inst->s);
  }
  longjmp(p->fail, 1);
}

/* Grows arr (of elem-sized items, capacity *cap) to hold need items; fails the parse on OOM. */
void *ptx_grow(ptx_parser *p, void *arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return arr;
  int c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *n = realloc(arr, (size_t)c * elem);
  if (!n) ptx_fail(p, "out of memory while loading PTX");
  memset((char *)n + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
  *cap = c;
  return n;
}

int ptx_type_of(const char *s, int len) {
  for (int t = 1; t < SIM_T_COUNT; t++)
    if ((int)strlen(sim_type_name(t)) == len && memcmp(sim_type_name(t), s, (size_t)len) == 0)
      return t;
  return 0;
}

/* Finds name; for a register range %r<N> also matches %rK, K < N, and sets *row to the row or
 * predicate index (otherwise *row = sym->index). NULL when unknown. */
const ptx_sym *ptx_lookup(ptx_parser *p, const char *name, int len, int *row) {
  for (int i = p->nsyms - 1; i >= 0; i--) {
    const ptx_sym *s = &p->syms[i];
    if (s->count == 0 && s->len == len && memcmp(s->name, name, (size_t)len) == 0) {
      *row = s->index;
      return s;
    }
  }
  int k = len;
  while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9') k--;
  if (k == len || k == 0 || len - k > 9) return NULL;
  if (name[k] == '0' && len - k > 1) return NULL;
  int num = atoi(name + k);
  for (int i = p->nsyms - 1; i >= 0; i--) {
    const ptx_sym *s = &p->syms[i];
    if (s->count > 0 && s->len == k && memcmp(s->name, name, (size_t)k) == 0 && num < s->count) {
      *row = s->index + num;
      return s;
    }
  }
  return NULL;
}

/* Row of a constant (plain value when var < 0, else address of var + value), deduplicated.
 * Rows are encoded as SIM_CONST_TAG + k until the module's layout is known. */
int ptx_const_row(ptx_parser *p, int var, uint64_t value) {
  for (int i = 0; i < p->nconsts; i++)
    if (p->consts[i].var == var && p->consts[i].value == value) return (1 << 24) + i;
  p->consts = ptx_grow(p, p->consts, &p->cap_consts, p->nconsts + 1, sizeof *p->consts);
  p->consts[p->nconsts] = (ptx_const){var, value};
  return (1 << 24) + p->nconsts++;
}

int ptx_new_call(ptx_parser *p) {
  sim_module *m = p->m;
  m->calls = ptx_grow(p, m->calls, &p->cap_calls, m->ncalls + 1, sizeof *m->calls);
  return m->ncalls++;
}

int ptx_find_func(ptx_parser *p, const ptx_tok *name) {
  for (int i = 0; i < p->m->nfuncs; i++) {
    const char *s = p->m->funcs[i].name;
    if ((int)strlen(s) == name->len && memcmp(s, name->s, (size_t)name->len) == 0) return i;
  }
  return -1;
}

uint64_t ptx_func_addr(ptx_parser *p, int fi) {
  if (p->m->funcs[fi].is_entry)
    ptx_fail(p, "taking the address of kernel %s is not supported", p->m->funcs[fi].name);
  p->m->funcs[fi].addr_taken = 1;
  return SIM_FUNC_WIN + 16 * (uint64_t)fi;
}

int ptx_new_var(ptx_parser *p) {
  sim_module *m = p->m;
  m->vars = ptx_grow(p, m->vars, &p->cap_vars, m->nvars + 1, sizeof *m->vars);
  return m->nvars++;
}

void ptx_place_local(ptx_parser *p, sim_var *v) {
  size_t a = v->align ? v->align : 1;
  p->m->local_frame = (p->m->local_frame + a - 1) / a * a;
  v->addr = p->m->local_frame;
  p->m->local_frame += v->size;
  if (p->cur_func >= 0) p->m->funcs[p->cur_func].local_bytes += v->size;
}

int ptx_rebase_uses(sim_module *m, const sim_func *f, int row, int base_row, int64_t off) {
  for (int i = f->first; i < f->end; i++) {
    sim_inst *in = &m->code[i];
    int uses = (in->a == row) + (in->b == row) + (in->c == row) + (in->e == row);
    for (int v = 0; v < 4; v++) uses += in->v[v] == row && in->op != SIM_OP_LD;
    if (!uses) continue;
    if (in->op == SIM_OP_MOV64 && in->a == row && uses == 1) {
      in->op = SIM_OP_ADD64;
      in->a = base_row;
      in->b = row;
    } else if ((in->op == SIM_OP_LD || in->op == SIM_OP_ST) && in->a == row && uses == 1) {
      in->a = base_row;
      in->imm += off;
    } else {
      return i;
    }
  }
  return -1;
}
