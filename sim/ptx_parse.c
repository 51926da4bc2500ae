/* ptx_parse.c: the structure of a PTX module: directives, variables, functions, declarations,
 * scopes, labels; instructions are handed to ptx_inst.c. Ends by laying the module out
 * (shared, local and parameter offsets, constant rows) and resolving labels and calls.
 *
 * Stance: a recursive-descent parser over the token array with a single error exit. Every
 * allocation hangs off the parser or the module being built, so an error anywhere longjmps to
 * ptx_parse, which frees the lot: malformed or truncated PTX can neither crash nor leak. The
 * alternative, returning error codes through every helper, doubles the code for no gain. */
#include "ptx_parse.h"
#include "ptx_bind.h"
#include "ptx_calls.h"
#include "ptx_dwarf.h"
#include "ptx_inst.h"
#include "ptx_loc.h"
#include "ptx_param_addr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ---- */

static const ptx_tok *expect(ptx_parser *p, const char *w) {
  const ptx_tok *t = ptx_next(&p->lx);
  if (!ptx_is(t, w)) {
    if (t->kind == PTX_T_EOF)
      ptx_fail(p, "PTX line %d: unexpected end of PTX, expected '%s'", t->line, w);
    ptx_fail(p, "PTX line %d: expected '%s' but found '%.*s'", t->line, w, t->len, t->s);
  }
  return t;
}

static const ptx_tok *expect_word(ptx_parser *p, const char *what) {
  const ptx_tok *t = ptx_next(&p->lx);
  if (t->kind != PTX_T_WORD) {
    if (t->kind == PTX_T_EOF)
      ptx_fail(p, "PTX line %d: unexpected end of PTX, expected %s", t->line, what);
    ptx_fail(p, "PTX line %d: expected %s but found '%.*s'", t->line, what, t->len, t->s);
  }
  return t;
}

static long long tok_int(ptx_parser *p, const ptx_tok *t) {
  char buf[64];
  if (t->kind != PTX_T_WORD || t->len >= (int)sizeof buf)
    ptx_fail(p, "PTX line %d: expected a number", t->line);
  memcpy(buf, t->s, (size_t)t->len);
  buf[t->len] = 0;
  char *end;
  long long v = strtoll(buf, &end, 0);
  if (*end == 'U') end++;
  if (*end) ptx_fail(p, "PTX line %d: bad number '%s'", t->line, buf);
  return v;
}

static char *tok_dup(ptx_parser *p, const ptx_tok *t) {
  char *s = malloc((size_t)t->len + 1);
  if (!s) ptx_fail(p, "out of memory while loading PTX");
  memcpy(s, t->s, (size_t)t->len);
  s[t->len] = 0;
  return s;
}

/* ---- symbols ---- */

static void sym_add(ptx_parser *p, const ptx_tok *name, int kind, int type, int index, int count,
                    int size) {
  p->syms = ptx_grow(p, p->syms, &p->cap_syms, p->nsyms + 1, sizeof *p->syms);
  p->syms[p->nsyms++] = (ptx_sym){name->s, name->len, kind, type, index, count, size, p->depth};
}

static void sym_pop_scope(ptx_parser *p, int depth) {
  while (p->nsyms > 0 && p->syms[p->nsyms - 1].depth >= depth) p->nsyms--;
}

/* ---- variables ---- */

static size_t align_up(size_t v, size_t a) { return a ? (v + a - 1) / a * a : v; }

/* Stores one initializer number at data[k*esz]; floats may be hex (0f/0d) or decimal. */
static void init_store(ptx_parser *p, sim_var *v, int etype, size_t k, const ptx_tok *t, int neg) {
  int esz = sim_type_size(etype);
  if ((k + 1) * (size_t)esz > v->size)
    ptx_fail(p, "PTX line %d: too many initializers for %s", t->line, v->name);
  uint64_t bits;
  if (t->kind == PTX_T_WORD && t->len > 2 && t->s[0] == '0' && (t->s[1] == 'f' || t->s[1] == 'd')) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%.*s", t->len - 2 > 20 ? 20 : t->len - 2, t->s + 2);
    bits = strtoull(buf, NULL, 16);
  } else if (sim_type_float(etype) && memchr(t->s, '.', (size_t)t->len)) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s", t->len > 60 ? 60 : t->len, t->s);
    double d = strtod(buf, NULL) * (neg ? -1 : 1);
    if (etype == SIM_T_F32) {
      float f = (float)d;
      uint32_t u;
      memcpy(&u, &f, 4);
      bits = u;
    } else {
      memcpy(&bits, &d, 8);
    }
  } else {
    bits = (uint64_t)tok_int(p, t);
    if (neg) bits = 0 - bits;
  }
  memcpy(v->data + k * (size_t)esz, &bits, (size_t)esz); /* little-endian host */
}

/* Stores the address of function fi as initializer k; marks fi as reachable by indirect calls. */
static void init_func(ptx_parser *p, sim_var *v, int etype, size_t k, const ptx_tok *t, int fi) {
  if (sim_type_size(etype) != 8)
    ptx_fail(p, "PTX line %d: the address of %.*s needs a 64-bit initializer", t->line, t->len,
             t->s);
  if ((k + 1) * 8 > v->size)
    ptx_fail(p, "PTX line %d: too many initializers for %s", t->line, v->name);
  uint64_t a = ptx_func_addr(p, fi);
  memcpy(v->data + k * 8, &a, 8);
}

static void parse_init(ptx_parser *p, sim_var *v, int etype) {
  if (v->space != SIM_SP_GLOBAL && v->space != SIM_SP_CONST)
    ptx_fail(p, "PTX line %d: initializer on a %s variable is not supported",
             ptx_peek(&p->lx, 0)->line, v->name);
  size_t k = 0;
  int braces = 0;
  do {
    while (ptx_accept(&p->lx, "{")) braces++;
    const ptx_tok *t = ptx_next(&p->lx);
    int neg = 0;
    if (ptx_is(t, "-")) {
      neg = 1;
      t = ptx_next(&p->lx);
    }
    int fi = t->kind == PTX_T_WORD && !neg ? ptx_find_func(p, t) : -1;
    if (fi >= 0) { /* a function's address: a vtable or a table of function pointers */
      init_func(p, v, etype, k++, t, fi);
    } else {
      int number = t->kind == PTX_T_WORD && ((t->s[0] >= '0' && t->s[0] <= '9') || t->s[0] == '.');
      if (!number)
        ptx_fail(p, "PTX line %d: initializer '%.*s' of %s is not supported (only numbers and "
                 "function names)", t->line, t->len, t->s, v->name);
      init_store(p, v, etype, k++, t, neg);
    }
    while (braces > 0 && ptx_accept(&p->lx, "}")) braces--;
  } while (ptx_accept(&p->lx, ","));
  if (braces)
    ptx_fail(p, "PTX line %d: unbalanced braces in initializer", ptx_peek(&p->lx, 0)->line);
}

/* `(.managed)` or `(.unified(a, b))`, the attributes of a .global variable after its
 * `.attribute` word t. Neither changes what a kernel computes: a managed variable (__managed__)
 * is one the host reaches too, and .unified gives a variable an identity the host's code can find
 * it by; here every global variable lives in the host's memory already and the REPL reads it as
 * it reads a __device__ one, so both are laid out as any other. */
static void var_attributes(ptx_parser *p, const ptx_tok *t, int space) {
  if (space != SIM_SP_GLOBAL)
    ptx_fail(p, "PTX line %d: .attribute on a variable that is not .global", t->line);
  expect(p, "(");
  do {
    const ptx_tok *a = ptx_next(&p->lx);
    if (ptx_is(a, ".managed")) continue;
    if (!ptx_is(a, ".unified"))
      ptx_fail(p, "PTX line %d: unknown variable attribute '%.*s'", a->line, a->len, a->s);
    expect(p, "(");
    tok_int(p, ptx_next(&p->lx));
    expect(p, ",");
    tok_int(p, ptx_next(&p->lx));
    expect(p, ")");
  } while (ptx_accept(&p->lx, ","));
  expect(p, ")");
}

/* The `[.attribute(...)] [.align N] [.vN] .type` words before a variable's name (of space):
 * returns the type (0 if none came) and sets *align (0 if not given) and *vecn. */
static int var_type(ptx_parser *p, int space, size_t *align, int *vecn) {
  int etype = 0;
  for (;;) {
    const ptx_tok *t = ptx_peek(&p->lx, 0);
    if (ptx_is(t, ".attribute")) {
      ptx_next(&p->lx);
      var_attributes(p, t, space);
    } else if (ptx_is(t, ".align")) {
      ptx_next(&p->lx);
      *align = (size_t)tok_int(p, ptx_next(&p->lx));
    } else if (ptx_is(t, ".v2") || ptx_is(t, ".v4")) {
      ptx_next(&p->lx);
      *vecn = t->s[2] - '0';
    } else if (t->kind == PTX_T_WORD && t->s[0] == '.' && ptx_type_of(t->s + 1, t->len - 1)) {
      etype = ptx_type_of(t->s + 1, t->len - 1);
      ptx_next(&p->lx);
    } else {
      return etype;
    }
  }
}

/* Gives variable v (of space, declared at name) its storage or its offset in its window. */
static void var_place(ptx_parser *p, sim_var *v, int space, const ptx_tok *name) {
  sim_func *cur = p->cur_func >= 0 ? &p->m->funcs[p->cur_func] : NULL;
  if ((space == SIM_SP_GLOBAL || space == SIM_SP_CONST) && !v->is_extern) {
    size_t bytes = align_up(v->size ? v->size : 1, 256);
    v->data = aligned_alloc(256, bytes);
    if (!v->data) ptx_fail(p, "out of memory while loading PTX");
    memset(v->data, 0, bytes);
    v->addr = (uint64_t)(uintptr_t)v->data;
  } else if (space == SIM_SP_LOCAL) {
    ptx_place_local(p, v);
  } else if (space == SIM_SP_SHARED && !v->is_extern && cur && cur->is_entry) {
    p->kernel_shared = align_up(p->kernel_shared, v->align);
    v->addr = p->kernel_shared; /* relative; rebased after module-scope shared is known */
    p->kernel_shared += v->size;
  } else if (space == SIM_SP_SHARED && v->is_extern && cur) {
    cur->has_dyn_shared = 1;
  } else if (space == SIM_SP_SHARED && !v->is_extern) {
    v->func = -1; /* module scope or a .func's own: laid out in the module area */
  } else if (v->is_extern && space != SIM_SP_SHARED) {
    ptx_fail(p, "PTX line %d: extern %s variable %s is not supported", name->line,
             space == SIM_SP_GLOBAL ? "global" : "const", v->name);
  }
}

/* `.global|.shared|.const|.local [.align N] [.vN] .type name[N]...[= init] ;` with the space
 * word already consumed. Module scope when p->cur_func < 0. */
static void parse_var(ptx_parser *p, int space, int is_extern) {
  size_t align = 0;
  int vecn = 1;
  int etype = var_type(p, space, &align, &vecn);
  if (!etype || etype == SIM_T_PRED)
    ptx_fail(p, "PTX line %d: variable without a type", ptx_peek(&p->lx, 0)->line);
  const ptx_tok *name = expect_word(p, "a variable name");
  size_t count = 1;
  int unsized = 0;
  while (ptx_accept(&p->lx, "[")) {
    if (ptx_accept(&p->lx, "]")) {
      unsized = 1;
      continue;
    }
    long long n = tok_int(p, ptx_next(&p->lx));
    if (n < 0 || n > (1ll << 34)) ptx_fail(p, "PTX line %d: bad array size", name->line);
    count *= (size_t)n;
    expect(p, "]");
  }
  int vi = ptx_new_var(p);
  sim_var *v = &p->m->vars[vi];
  v->name = tok_dup(p, name);
  v->space = space;
  v->elem = etype;
  v->size = count * (size_t)sim_type_size(etype) * (size_t)vecn;
  v->align = align ? align : (size_t)sim_type_size(etype) * (size_t)vecn;
  v->func = p->cur_func;
  v->is_extern = unsized || is_extern;
  if (v->size > ((size_t)1 << 32))
    ptx_fail(p, "PTX line %d: variable %s is too large", name->line, v->name);
  var_place(p, v, space, name);
  if (ptx_accept(&p->lx, "=")) parse_init(p, v, etype);
  sym_add(p, name, PTX_SYM_VAR, etype, vi, 0, 0);
  expect(p, ";");
}

/* ---- registers and parameters ---- */

/* type: the type when it came glued to the directive (.reg.b32, as hand-written inline PTX may
 * spell it), else 0. */
static void parse_reg(ptx_parser *p, int type) {
  for (;;) {
    const ptx_tok *t = ptx_next(&p->lx);
    if (t->kind == PTX_T_WORD && t->s[0] == '.' && ptx_type_of(t->s + 1, t->len - 1)) {
      type = ptx_type_of(t->s + 1, t->len - 1);
      continue;
    }
    if (ptx_is(t, ".v2") || ptx_is(t, ".v4"))
      ptx_fail(p, "PTX line %d: vector registers (.reg %.*s) are not supported", t->line, t->len,
               t->s);
    if (!type) ptx_fail(p, "PTX line %d: .reg without a type", t->line);
    if (t->kind != PTX_T_WORD) ptx_fail(p, "PTX line %d: expected a register name", t->line);
    int count = 0;
    if (ptx_accept(&p->lx, "<")) {
      long long n = tok_int(p, ptx_next(&p->lx));
      if (n <= 0 || n > 1000000) ptx_fail(p, "PTX line %d: bad register count", t->line);
      count = (int)n;
      expect(p, ">");
    }
    int n = count ? count : 1;
    if (p->dw) ptx_dwarf_reg(p, t, type, type == SIM_T_PRED ? p->m->npreds : p->m->nuser, count);
    if (type == SIM_T_PRED) {
      sym_add(p, t, PTX_SYM_PRED, type, p->m->npreds, count, 0);
      p->m->npreds += n;
      if (p->cur_func >= 0) p->m->funcs[p->cur_func].npreds += n;
    } else {
      sym_add(p, t, PTX_SYM_REG, type, p->m->nuser, count, 0);
      p->m->nuser += n;
      if (p->cur_func >= 0) p->m->funcs[p->cur_func].nregs += n;
    }
    if (p->m->nuser > 4000000 || p->m->npreds > 4000000)
      ptx_fail(p, "PTX line %d: too many registers", t->line);
    if (ptx_accept(&p->lx, ";")) return;
    expect(p, ",");
  }
}

/* One `.param [.align N] [.ptr ...] .type name[[N]]` declaration; returns its size and sets
 * *align. The `.param` word is already consumed. */
static int parse_param_decl(ptx_parser *p, const ptx_tok **name, size_t *align, int *type) {
  *align = 0;
  *type = 0;
  for (;;) {
    const ptx_tok *t = ptx_peek(&p->lx, 0);
    if (ptx_is(t, ".align")) {
      ptx_next(&p->lx);
      *align = (size_t)tok_int(p, ptx_next(&p->lx));
    } else if (ptx_is(t, ".ptr") || ptx_is(t, ".global") || ptx_is(t, ".shared") ||
               ptx_is(t, ".const") || ptx_is(t, ".local")) {
      ptx_next(&p->lx);
    } else if (t->kind == PTX_T_WORD && t->s[0] == '.' && ptx_type_of(t->s + 1, t->len - 1)) {
      *type = ptx_type_of(t->s + 1, t->len - 1);
      ptx_next(&p->lx);
    } else {
      break;
    }
  }
  if (!*type) ptx_fail(p, "PTX line %d: .param without a type", ptx_peek(&p->lx, 0)->line);
  *name = expect_word(p, "a parameter name");
  long long count = 1;
  if (ptx_accept(&p->lx, "[")) {
    count = tok_int(p, ptx_next(&p->lx));
    expect(p, "]");
    if (count <= 0 || count > 65536) ptx_fail(p, "PTX line %d: bad parameter size", (*name)->line);
  }
  int size = (int)count * sim_type_size(*type);
  if (!*align) *align = (size_t)sim_type_size(*type);
  return size;
}

/* A per-lane parameter slot (call arguments, .func params); returns its scratch offset. */
static int fparam_slot(ptx_parser *p, int size, size_t align) {
  if (align < 8) align = 8;
  p->m->fparam_bytes = align_up(p->m->fparam_bytes, align);
  int off = (int)p->m->fparam_bytes;
  p->m->fparam_bytes += (size_t)(size + 7) / 8 * 8;
  if (p->m->fparam_bytes > 65536) ptx_fail(p, "too many call parameters in this module");
  return off;
}

/* `.param` inside a body: a call-sequence slot. */
static void parse_local_param(ptx_parser *p) {
  const ptx_tok *name;
  size_t align;
  int type;
  int size = parse_param_decl(p, &name, &align, &type);
  sym_add(p, name, PTX_SYM_FPARAM, type, fparam_slot(p, size, align), 0, size);
  expect(p, ";");
}

/* ---- functions ---- */

static int new_func(ptx_parser *p) {
  sim_module *m = p->m;
  m->funcs = ptx_grow(p, m->funcs, &p->cap_funcs, m->nfuncs + 1, sizeof *m->funcs);
  m->funcs[m->nfuncs].first = m->funcs[m->nfuncs].end = -1;
  return m->nfuncs++;
}

static void emit_tail(ptx_parser *p, int op) {
  sim_module *m = p->m;
  m->code = ptx_grow(p, m->code, &p->cap_code, m->ncode + 1, sizeof *m->code);
  sim_inst *in = &m->code[m->ncode++];
  memset(in, 0, sizeof *in);
  in->op = (uint8_t)op;
  in->guard = -1;
  in->d = in->d2 = in->a = in->b = in->c = in->e = -1;
  in->file = -1;
  in->line = p->loc_line;
  int under = p->cur_loc; /* the tail is no code of a .loc's: it keeps file -1 */
  p->cur_loc = -1;
  ptx_loc_inst(p, m->ncode - 1);
  p->cur_loc = under;
  in->ptx_line = ptx_peek(&p->lx, 0)->line;
}

static void resolve_labels(ptx_parser *p) {
  for (int i = 0; i < p->nfix; i++) {
    ptx_fixup *f = &p->fix[i];
    int pc = -1;
    for (int k = 0; k < p->nlabels; k++) {
      const ptx_label *l = &p->labels[k];
      if (l->len == f->len && memcmp(l->name, f->name, (size_t)f->len) == 0) pc = l->pc;
    }
    if (pc < 0)
      ptx_fail(p, "PTX line %d: unknown label '%.*s'", p->m->code[f->inst].ptx_line, f->len,
               f->name);
    p->m->code[f->inst].target = pc;
  }
  p->nfix = p->nlabels = 0;
}

/* `.loc file line col [, function_name label [+ off], inlined_at file line col]` */
static void skip_loc(ptx_parser *p, const ptx_tok *dir) {
  const ptx_tok *f = ptx_next(&p->lx), *l = ptx_next(&p->lx);
  p->loc_file = (int)tok_int(p, f);
  p->loc_line = (int)tok_int(p, l);
  if (p->loc_line < 0 || p->loc_line > 10000000)
    ptx_fail(p, "PTX line %d: bad .loc line", dir->line);
  ptx_loc loc = {p->loc_file, p->loc_line, 0, -1, 0, 0};
  const ptx_tok *c = ptx_peek(&p->lx, 0);
  if (c->line == dir->line && c->kind == PTX_T_WORD) loc.col = (int)tok_int(p, ptx_next(&p->lx));
  while (ptx_peek(&p->lx, 0)->line == dir->line && ptx_peek(&p->lx, 0)->kind != PTX_T_EOF) {
    const ptx_tok *t = ptx_next(&p->lx);
    if (!ptx_is(t, "inlined_at")) continue;
    loc.in_file = (int)tok_int(p, ptx_next(&p->lx));
    loc.in_line = (int)tok_int(p, ptx_next(&p->lx));
    if (ptx_peek(&p->lx, 0)->line == dir->line && ptx_peek(&p->lx, 0)->kind == PTX_T_WORD)
      loc.in_col = (int)tok_int(p, ptx_next(&p->lx));
  }
  ptx_loc_add(p, &loc);
}

/* `.pragma "..." ;`, its word not yet consumed: pragmas change nothing the simulator models. */
static void skip_pragma(ptx_parser *p) {
  ptx_next(&p->lx);
  ptx_next(&p->lx);
  expect(p, ";");
}

/* A declaration or directive inside a body at t (not yet consumed): .reg, .loc, .pragma, a
 * variable or a call-sequence .param. 0 when t is none of them. */
static int body_decl(ptx_parser *p, const ptx_tok *t) {
  static const struct {
    const char *word;
    int space;
  } vars[] = {{".local", SIM_SP_LOCAL}, {".shared", SIM_SP_SHARED}, {".global", SIM_SP_GLOBAL},
              {".const", SIM_SP_CONST}};
  int glued = t->kind == PTX_T_WORD && t->len > 5 && !memcmp(t->s, ".reg.", 5)
                  ? ptx_type_of(t->s + 5, t->len - 5)
                  : 0; /* .reg.b32, as hand-written inline PTX may spell it */
  if (ptx_is(t, ".reg") || glued) {
    ptx_next(&p->lx);
    parse_reg(p, glued);
    return 1;
  }
  if (ptx_is(t, ".loc")) {
    ptx_next(&p->lx);
    skip_loc(p, t);
    return 1;
  }
  if (ptx_is(t, ".pragma")) {
    skip_pragma(p);
    return 1;
  }
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (ptx_is(t, vars[i].word)) {
      ptx_next(&p->lx);
      parse_var(p, vars[i].space, 0);
      return 1;
    }
  if (ptx_is(t, ".param")) {
    ptx_next(&p->lx);
    parse_local_param(p);
    return 1;
  }
  return 0;
}

/* Statements of a function body until its closing brace. */
static void parse_body(ptx_parser *p) {
  for (;;) {
    const ptx_tok *t = ptx_peek(&p->lx, 0);
    if (t->kind == PTX_T_EOF)
      ptx_fail(p, "PTX line %d: unexpected end of PTX inside a function body", t->line);
    if (ptx_accept(&p->lx, "{")) {
      p->depth++;
      continue;
    }
    if (ptx_accept(&p->lx, "}")) {
      sym_pop_scope(p, p->depth);
      if (--p->depth == 0) return;
      continue;
    }
    if (body_decl(p, t)) continue;
    int labelled = t->kind == PTX_T_WORD && ptx_is(ptx_peek(&p->lx, 1), ":");
    if (labelled && ptx_is(ptx_peek(&p->lx, 2), ".callprototype")) {
      /* The signature an indirect call names; the callee's own declaration is what counts. */
      while (!ptx_is(ptx_peek(&p->lx, 0), ";")) {
        if (ptx_peek(&p->lx, 0)->kind == PTX_T_EOF)
          ptx_fail(p, "PTX line %d: unexpected end of PTX in .callprototype", t->line);
        ptx_next(&p->lx);
      }
      ptx_next(&p->lx);
      continue;
    }
    if (labelled && t->s[0] != '.') {
      p->labels = ptx_grow(p, p->labels, &p->cap_labels, p->nlabels + 1, sizeof *p->labels);
      p->labels[p->nlabels++] = (ptx_label){t->s, t->len, p->m->ncode};
      if (p->dw) ptx_dwarf_label(p, t, p->m->ncode);
      ptx_next(&p->lx);
      ptx_next(&p->lx);
      continue;
    }
    if (t->kind == PTX_T_WORD && t->s[0] == '.')
      ptx_fail(p, "PTX line %d: directive '%.*s' is not supported inside a function", t->line,
               t->len, t->s);
    ptx_parse_inst(p);
  }
}

/* `(.param ..., .param ...)` of an entry (kernel param buffer) or a .func (per-lane slots). */
static void parse_params(ptx_parser *p, int fi, int is_ret) {
  expect(p, "(");
  if (ptx_accept(&p->lx, ")")) return;
  do {
    expect(p, ".param");
    const ptx_tok *name;
    size_t align;
    int type;
    int size = parse_param_decl(p, &name, &align, &type);
    sim_func *f = &p->m->funcs[fi];
    if (f->is_entry) {
      f->params = realloc(f->params, (size_t)(f->nparams + 1) * sizeof *f->params);
      if (!f->params) ptx_fail(p, "out of memory while loading PTX");
      size_t off = align_up(f->param_bytes, align);
      f->params[f->nparams++] = (sim_param){off, (size_t)size, align};
      f->param_bytes = off + (size_t)size;
      if (f->param_bytes > 32764)
        ptx_fail(p, "PTX line %d: kernel parameters exceed 32764 bytes", name->line);
      sym_add(p, name, PTX_SYM_KPARAM, type, (int)off, 0, size);
    } else {
      int off = fparam_slot(p, size, align);
      if (is_ret) {
        f->ret_off = off;
        f->ret_size = size;
      } else {
        if (f->nparams == 16)
          ptx_fail(p, "PTX line %d: more than 16 function parameters", name->line);
        f->params = realloc(f->params, (size_t)(f->nparams + 1) * sizeof *f->params);
        if (!f->params) ptx_fail(p, "out of memory while loading PTX");
        f->params[f->nparams++] = (sim_param){(size_t)off, (size_t)size, align};
      }
      sym_add(p, name, PTX_SYM_FPARAM, type, off, 0, size);
    }
  } while (ptx_accept(&p->lx, ","));
  expect(p, ")");
}

/* The function named name: a new one, or the one a prototype declared (*fresh = 0). A second
 * definition fails. */
static int func_of(ptx_parser *p, const ptx_tok *name, int is_entry, int *fresh) {
  int fi = ptx_find_func(p, name);
  if (fi >= 0 && p->m->funcs[fi].first >= 0)
    ptx_fail(p, "PTX line %d: function %.*s defined twice", name->line, name->len, name->s);
  *fresh = fi < 0;
  if (*fresh) {
    fi = new_func(p);
    p->m->funcs[fi].name = tok_dup(p, name);
    p->m->funcs[fi].is_entry = is_entry;
    p->m->funcs[fi].ret_off = -1;
    p->m->funcs[fi].reg_first = p->m->nuser;
    p->m->funcs[fi].pred_first = p->m->npreds;
  }
  return fi;
}

/* A definition after a prototype: binds the names of its parameter list to the slots the
 * prototype already gave. */
static void rebind_params(ptx_parser *p, sim_func *f) {
  expect(p, "(");
  int k = 0;
  while (!ptx_accept(&p->lx, ")")) {
    const ptx_tok *t = ptx_next(&p->lx);
    if (t->kind == PTX_T_EOF) ptx_fail(p, "PTX line %d: unexpected end of PTX", t->line);
    const ptx_tok *n = ptx_peek(&p->lx, 0);
    if (t->kind == PTX_T_WORD && t->s[0] != '.' && !ptx_is(n, "]") && k < f->nparams &&
        (ptx_is(n, ",") || ptx_is(n, ")") || ptx_is(n, "["))) {
      sym_add(p, t, PTX_SYM_FPARAM, SIM_T_B64, (int)f->params[k].offset, 0,
              (int)f->params[k].size);
      k++;
    }
  }
}

/* The same for the return list that starts at token pos; the lexer's position is kept. */
static void rebind_ret(ptx_parser *p, const sim_func *f, int pos) {
  int keep = p->lx.pos;
  p->lx.pos = pos + 1;
  const ptx_tok *t;
  while (!ptx_is(t = ptx_next(&p->lx), ")"))
    if (t->kind == PTX_T_WORD && t->s[0] != '.' &&
        (ptx_is(ptx_peek(&p->lx, 0), ")") || ptx_is(ptx_peek(&p->lx, 0), "[")))
      sym_add(p, t, PTX_SYM_FPARAM, SIM_T_B64, f->ret_off, 0, f->ret_size);
  p->lx.pos = keep;
}

/* The directives between a function's signature and its body, read by launch_bounds.h's
 * reader, the one the REPL reads an .entry's with, so that both refuse the same bad bound. The
 * launch bounds are kept in the function (sim_launch holds launches to them, as the GPU does);
 * the rest (.minnctapersm, .maxnreg, .noreturn, .pragma) change no result. */
static void parse_perf_directives(ptx_parser *p, sim_func *f) {
  const ptx_tok *t = ptx_peek(&p->lx, 0);
  if (t->kind == PTX_T_EOF) return;
  char why[160];
  const char *bad = t->s, *end = lb_read(t->s, p->text_end, &f->bounds, why, sizeof why, &bad);
  if (!end) {
    int line = t->line;
    for (const char *c = t->s; c < bad; c++) line += *c == '\n';
    ptx_fail(p, "PTX line %d: %s", line, why);
  }
  while (ptx_peek(&p->lx, 0)->kind != PTX_T_EOF && ptx_peek(&p->lx, 0)->s < end)
    ptx_next(&p->lx);
}

/* The body of function fi, from its '{': instructions, then the tail that ends it, then its
 * labels resolved. */
static void parse_func_body(ptx_parser *p, int fi, int is_entry) {
  sim_func *f = &p->m->funcs[fi];
  f->is_extern = 0;
  f->first = p->m->ncode;
  /* rows and predicates are declared in the body, whatever came before */
  f->reg_first = p->m->nuser;
  f->pred_first = p->m->npreds;
  f->nregs = f->npreds = 0;
  /* A function's lines are its own .loc's: one without any (a math function of libdevice) has
   * none, rather than the last line of the function before it. */
  p->loc_line = 0;
  p->loc_file = -1;
  p->cur_loc = -1;
  expect(p, "{");
  p->depth = 1;
  if (!is_entry) ptx_param_prologue(p, fi); /* copies of the parameters whose address it takes */
  parse_body(p);
  /* The final instruction: falling off an entry exits, a .func's `ret`s all branch here. */
  emit_tail(p, is_entry ? SIM_OP_EXIT : SIM_OP_RETF);
  f = &p->m->funcs[fi];
  f->end = p->m->ncode;
  for (int i = f->first; i < f->end - 1; i++)
    if (p->m->code[i].op == SIM_OP_RETF) {
      p->m->code[i].op = SIM_OP_BRA;
      p->m->code[i].target = f->end - 1;
    }
  f->shared_bytes = p->kernel_shared;
  resolve_labels(p);
}

/* `.entry` or `.func`, its word consumed: a prototype (ended by ';') or a definition. */
static void parse_function(ptx_parser *p, int is_entry, int is_extern) {
  int has_ret = !is_entry && ptx_is(ptx_peek(&p->lx, 0), "(");
  /* The name follows the optional return list. */
  int save = p->lx.pos;
  if (has_ret) {
    while (!ptx_is(ptx_peek(&p->lx, 0), ")") && ptx_peek(&p->lx, 0)->kind != PTX_T_EOF)
      ptx_next(&p->lx);
    expect(p, ")");
  }
  const ptx_tok *name = expect_word(p, "a function name");
  int fresh;
  int fi = func_of(p, name, is_entry, &fresh);
  p->cur_func = fi;
  p->depth = 1;
  p->kernel_shared = 0;
  int after = p->lx.pos;
  if (has_ret) {
    p->lx.pos = save;
    if (fresh)
      parse_params(p, fi, 1);
    else
      while (!ptx_accept(&p->lx, ")")) ptx_next(&p->lx);
    p->lx.pos = after;
  }
  if (ptx_is(ptx_peek(&p->lx, 0), "(")) {
    if (fresh) parse_params(p, fi, 0);
    else rebind_params(p, &p->m->funcs[fi]);
  }
  if (!fresh && has_ret) rebind_ret(p, &p->m->funcs[fi], save);
  parse_perf_directives(p, &p->m->funcs[fi]);
  if (ptx_accept(&p->lx, ";")) /* prototype */
    p->m->funcs[fi].is_extern = is_extern;
  else
    parse_func_body(p, fi, is_entry);
  sym_pop_scope(p, 1);
  p->depth = 0;
  p->cur_func = -1;
}

/* ---- module ---- */

static void parse_file(ptx_parser *p) {
  int n = (int)tok_int(p, ptx_next(&p->lx));
  const ptx_tok *s = ptx_next(&p->lx);
  if (s->kind != PTX_T_STRING || n < 0 || n > 100000)
    ptx_fail(p, "PTX line %d: bad .file", s->line);
  sim_module *m = p->m;
  if (n >= m->nfiles) {
    char **f = realloc(m->files, (size_t)(n + 1) * sizeof *f);
    if (f) m->files = f;
    char **d = f ? realloc(m->paths, (size_t)(n + 1) * sizeof *d) : NULL;
    if (d) m->paths = d;
    if (!f || !d) ptx_fail(p, "out of memory while loading PTX");
    memset(f + m->nfiles, 0, (size_t)(n + 1 - m->nfiles) * sizeof *f);
    memset(d + m->nfiles, 0, (size_t)(n + 1 - m->nfiles) * sizeof *d);
    m->nfiles = n + 1;
  }
  free(m->files[n]);
  free(m->paths[n]);
  m->files[n] = tok_dup(p, s);
  m->paths[n] = tok_dup(p, s);
  if (m->files[n]) ptx_loc_file(p, n, m->files[n]);
  /* NVRTC prefixes the working folder; the learner knows the file by the name they gave it. */
  char *slash = m->files[n] ? strrchr(m->files[n], '/') : NULL;
  if (slash) memmove(m->files[n], slash + 1, strlen(slash + 1) + 1);
  while (ptx_accept(&p->lx, ",")) ptx_next(&p->lx);
}

/* A .section: kept for the DWARF reader when the module has debug information (NVRTC's -G),
 * skipped otherwise. */
static void skip_section(ptx_parser *p) {
  if (p->dw && ptx_dwarf_section(p)) return;
  ptx_next(&p->lx); /* section name */
  expect(p, "{");
  int d = 1;
  while (d > 0) {
    const ptx_tok *t = ptx_next(&p->lx);
    if (t->kind == PTX_T_EOF)
      ptx_fail(p, "PTX line %d: unexpected end of PTX in .section", t->line);
    if (ptx_is(t, "{")) d++;
    if (ptx_is(t, "}")) d--;
  }
}

/* The module-scope directives that declare nothing: .version, .target, .address_size, .file,
 * .section, .loc, with t their word (consumed). 0 when t is none of them. */
static int module_directive(ptx_parser *p, const ptx_tok *t) {
  if (ptx_is(t, ".version")) {
    ptx_next(&p->lx);
  } else if (ptx_is(t, ".target")) {
    do ptx_next(&p->lx);
    while (ptx_accept(&p->lx, ","));
  } else if (ptx_is(t, ".address_size")) {
    if (tok_int(p, ptx_next(&p->lx)) != 64)
      ptx_fail(p, "PTX line %d: only .address_size 64 is supported", t->line);
  } else if (ptx_is(t, ".file")) {
    parse_file(p);
  } else if (ptx_is(t, ".section")) {
    skip_section(p);
  } else if (ptx_is(t, ".loc")) {
    skip_loc(p, t);
  } else {
    return 0;
  }
  return 1;
}

static void parse_module(ptx_parser *p) {
  for (;;) {
    const ptx_tok *t = ptx_next(&p->lx);
    if (t->kind == PTX_T_EOF) return;
    if (module_directive(p, t)) continue;
    int is_extern = 0;
    while (ptx_is(t, ".visible") || ptx_is(t, ".extern") || ptx_is(t, ".weak") ||
           ptx_is(t, ".common")) {
      if (ptx_is(t, ".extern")) is_extern = 1;
      t = ptx_next(&p->lx);
    }
    if (ptx_is(t, ".entry")) parse_function(p, 1, 0);
    else if (ptx_is(t, ".func")) parse_function(p, 0, is_extern);
    else if (ptx_is(t, ".global")) parse_var(p, SIM_SP_GLOBAL, is_extern);
    else if (ptx_is(t, ".shared")) parse_var(p, SIM_SP_SHARED, is_extern);
    else if (ptx_is(t, ".const")) parse_var(p, SIM_SP_CONST, is_extern);
    else if (t->kind == PTX_T_EOF) ptx_fail(p, "PTX line %d: unexpected end of PTX", t->line);
    else ptx_fail(p, "PTX line %d: '%.*s' is not supported at module scope", t->line, t->len,
                  t->s);
  }
}

/* Built-in device functions: the names NVRTC calls for assert, malloc/free and C++'s operator
 * new / delete (plain, array, and sized delete), all declared .extern without a body. */
static int builtin_of(const char *name) {
  static const struct {
    const char *name;
    int bi;
  } tab[] = {{"__assertfail", SIM_BI_ASSERT}, {"malloc", SIM_BI_MALLOC}, {"free", SIM_BI_FREE},
             {"_Znwm", SIM_BI_MALLOC}, {"_Znam", SIM_BI_MALLOC}, {"_ZdlPv", SIM_BI_FREE},
             {"_ZdaPv", SIM_BI_FREE}, {"_ZdlPvm", SIM_BI_FREE}, {"_ZdaPvm", SIM_BI_FREE},
             {NULL, 0}};
  for (int i = 0; tab[i].name; i++)
    if (!strcmp(name, tab[i].name)) return tab[i].bi;
  return -1;
}

/* A direct call: its target pc, or, for a declared-only function the simulator provides, a
 * SIM_OP_BUILTIN. Run once the whole module is known, since a definition may follow its call. */
static void resolve_call(ptx_parser *p, sim_inst *in) {
  const sim_call *c = &p->m->calls[in->imm];
  const sim_func *callee = &p->m->funcs[c->func];
  if (callee->first >= 0) {
    in->target = callee->first;
    return;
  }
  int bi = builtin_of(callee->name);
  if (bi < 0)
    ptx_fail(p, "PTX line %d: call to %s, which is declared but not defined (vprintf, "
             "__assertfail, malloc, free and operator new/delete are built in)", in->ptx_line,
             callee->name);
  static const int nargs[] = {5, 1, 1};
  /* operator delete(void *, size_t): the size is not needed */
  int sized = bi == SIM_BI_FREE && c->nargs == 2;
  int bad_ret = bi == SIM_BI_MALLOC && (c->ret_off < 0 || c->ret_size != 8);
  if ((c->nargs != nargs[bi] && !sized) || bad_ret || (bi != SIM_BI_ASSERT && c->arg_size[0] != 8))
    ptx_fail(p, "PTX line %d: call to %s with an unexpected signature", in->ptx_line, callee->name);
  in->op = SIM_OP_BUILTIN;
  in->sub = (uint8_t)bi;
}

/* In a stacked function, a local variable's address is relative to the activation's frame
 * (SIM_SR_FRAME), so its constant rows hold frame-relative offsets, and the instructions that read
 * them add the frame: mov becomes an add of the frame row, an address [var+k] gets the frame row
 * as its base. NVRTC only ever takes __local_depot's address with mov; anything else is refused
 * rather than given a static address that two activations would share. */
static void frame_relative(ptx_parser *p, sim_func *f) {
  sim_module *m = p->m;
  for (int k = 0; k < p->nconsts; k++) {
    int vi = p->consts[k].var;
    if (vi < 0 || m->vars[vi].space != SIM_SP_LOCAL || m->vars[vi].func != (int)(f - m->funcs))
      continue;
    m->consts[k] = m->vars[vi].addr - f->local_lo + p->consts[k].value;
    int bad = ptx_rebase_uses(m, f, (1 << 24) + k, SIM_SR_FRAME, (int64_t)m->consts[k]);
    if (bad >= 0)
      ptx_fail(p, "PTX line %d: this use of local variable %s in %s, which is recursive or "
               "called through a pointer, is not supported", m->code[bad].ptx_line,
               m->vars[vi].name, f->name);
  }
}

/* Lays out shared memory, resolves constants and calls, lists kernels. */
static void finish_module(ptx_parser *p) {
  sim_module *m = p->m;
  size_t sh = m->reserved_smem ? SIM_RESERVED_SMEM : 0;
  for (int i = 0; i < m->nvars; i++) {
    sim_var *v = &m->vars[i];
    if (v->space == SIM_SP_SHARED && !v->is_extern && v->func < 0) {
      sh = align_up(sh, v->align);
      v->addr = sh;
      sh += v->size;
    }
  }
  m->shared_module = align_up(sh, 16);
  for (int i = 0; i < m->nvars; i++) {
    sim_var *v = &m->vars[i];
    if (v->space == SIM_SP_SHARED && !v->is_extern && v->func >= 0) v->addr += m->shared_module;
  }
  m->local_frame = align_up(m->local_frame, 16);
  m->const_first = m->nuser;
  m->nrows = m->nuser + p->nconsts;
  m->consts = calloc((size_t)p->nconsts + 1, sizeof *m->consts);
  if (!m->consts) ptx_fail(p, "out of memory while loading PTX");
  for (int i = 0; i < m->ncode; i++)
    if (m->code[i].op == SIM_OP_CALL) resolve_call(p, &m->code[i]);
  ptx_calls_mark(m);
  for (int i = 0; i < p->nconsts; i++) {
    const ptx_const *k = &p->consts[i];
    m->consts[i] = k->var < 0 ? k->value : m->vars[k->var].addr + k->value;
  }
  for (int fi = 0; fi < m->nfuncs; fi++)
    if (m->funcs[fi].stacked && m->funcs[fi].first >= 0) frame_relative(p, &m->funcs[fi]);
  ptx_param_copies_place(p);
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    int32_t *f[] = {&in->d, &in->d2, &in->a, &in->b, &in->c,
                    &in->e, &in->v[0], &in->v[1], &in->v[2], &in->v[3]};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
      if (*f[k] >= (1 << 24)) *f[k] = m->const_first + (*f[k] - (1 << 24));
  }
  int *const_var = malloc(((size_t)p->nconsts + 1) * sizeof *const_var);
  if (!const_var) ptx_fail(p, "out of memory while loading PTX");
  for (int i = 0; i < p->nconsts; i++) const_var[i] = p->consts[i].var;
  ptx_bind_accesses(m, const_var);
  free(const_var);
  for (int i = 0; i < m->nfuncs; i++) {
    sim_func *f = &m->funcs[i];
    if (!f->is_entry || f->first < 0) continue;
    m->kernels = realloc(m->kernels, (size_t)(m->nkernels + 1) * sizeof *m->kernels);
    if (!m->kernels) ptx_fail(p, "out of memory while loading PTX");
    m->kernels[m->nkernels++] =
        (sim_kernel){m, i, m->shared_module + f->shared_bytes,
                     m->reserved_smem ? SIM_RESERVED_SMEM : 0, f->local_bytes,
                     ptx_calls_orders(m, i)};
  }
}

void sim_module_free(sim_module *m) {
  if (!m) return;
  free(m->code);
  for (int i = 0; i < m->nfuncs; i++) {
    free(m->funcs[i].name);
    free(m->funcs[i].params);
    free(m->funcs[i].param_taken);
  }
  free(m->funcs);
  for (int i = 0; i < m->nvars; i++) {
    free(m->vars[i].name);
    free(m->vars[i].data);
  }
  free(m->vars);
  free(m->kernels);
  free(m->consts);
  for (int i = 0; i < m->nfiles; i++) {
    free(m->files[i]);
    free(m->paths[i]);
  }
  free(m->files);
  free(m->paths);
  free(m->calls);
  free(m->tensor);
  free(m->lcopy);
  free(m->folded);
  free(m->dep_stall);
  sim_dbginfo_free(m->debug);
  free(m);
}

/* Parses and decodes ptx. Returns the module, or NULL with err filled; never keeps a pointer
 * into ptx. The loader (sim_load.c) runs the load-time passes after it. */
sim_module *ptx_parse(const char *ptx, size_t len, char *err, size_t errlen) {
  ptx_parser *p = calloc(1, sizeof *p);
  if (!p || !(p->m = calloc(1, sizeof *p->m))) {
    free(p);
    sim_errf(err, errlen, "out of memory while loading PTX");
    return NULL;
  }
  p->err = err;
  p->errlen = errlen;
  p->text_end = ptx + len;
  p->cur_func = -1;
  p->loc_file = -1;
  p->cur_loc = -1;
  p->m->nuser = SIM_SR_COUNT; /* user rows start after the special rows */
  int ok = 0;
  if (ptx_lex(&p->lx, ptx, len, err, errlen) == 0 && setjmp(p->fail) == 0) {
    ptx_dwarf_begin(p, ptx, len);
    parse_module(p);
    ptx_loc_settle(p);
    finish_module(p);
    ptx_dwarf_finish(p);
    ok = 1;
  }
  sim_module *m = p->m;
  ptx_dwarf_drop(p);
  ptx_lex_free(&p->lx);
  free(p->syms);
  free(p->consts);
  free(p->fix);
  free(p->labels);
  free(p->locs);
  free(p->inst_loc);
  free(p->toolkit_file);
  free(p);
  if (!ok) {
    sim_module_free(m);
    return NULL;
  }
  return m;
}
