/* ptx_dwarf.c: the names of a kernel's variables, read from the DWARF that NVRTC writes into PTX
 * when it compiles with -G, for the debugger (sim_debugger.c).
 *
 * PTX carries DWARF as data: `.section .debug_info { .b8 2 .b32 .debug_abbrev .b64 $L__tmp3 ... }`,
 * where a label stands for an address and a section's name for an offset into it. The parser
 * hands this file each such section, each register declaration and each label as it meets them
 * (only in PTX that has debug information at all); once the module is laid out the sections are
 * read as DWARF 2 to 5: the compile unit's tree of subprograms, lexical blocks, variables and
 * parameters, their types, and where each lives. A variable's place is a DW_OP_regx whose operand
 * is the PTX register's name packed as ASCII ("%r1" is 0x257231), which the register declarations
 * turn into a row; a location list gives such a place per range of labels; DW_OP_addr of the
 * local depot plus DW_OP_plus_uconst is a place in the thread's local memory.
 *
 * Stance: debug information helps, it never stops a kernel from running. Anything unexpected in
 * it (a form not known, an offset out of range) gives a module without names and a sentence
 * saying why, never a failed load. The reader keeps nothing of the DWARF but the variables: a
 * few dozen bytes each, and nothing at all for modules compiled without -G. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_dwarf.h"

/* A word of a section that names a symbol rather than giving a number. */
typedef struct dw_reloc {
  size_t off;           /* where in the section */
  const char *sym;      /* the name (into the PTX text) */
  int len;
  int64_t addend;       /* sym+4 */
} dw_reloc;

typedef struct dw_sec {
  unsigned char *b;     /* the bytes, symbols as 0 */
  size_t n, cap;
  dw_reloc *r;
  int nr, cap_r;
} dw_sec;

typedef struct dw_reg {
  const char *name;     /* "%r" of %r<10>, or a whole name */
  int len;
  int func, type, row, count; /* count 0: not a range */
} dw_reg;

typedef struct dw_label {
  const char *name;
  int len, pc;
} dw_label;

struct ptx_dwcap {
  dw_sec info, abbrev, loc;
  dw_reg *regs;
  int nregs, cap_regs;
  dw_label *labels;
  int nlabels, cap_labels;
};

/* ---- what the parser hands over ---- */

void ptx_dwarf_begin(ptx_parser *p, const char *ptx, size_t len) {
  if (!memmem(ptx, len, ".debug_info", 11)) return;
  p->dw = calloc(1, sizeof *p->dw);
  if (!p->dw) ptx_fail(p, "out of memory while loading PTX");
}

void ptx_dwarf_reg(ptx_parser *p, const ptx_tok *name, int type, int row, int count) {
  struct ptx_dwcap *c = p->dw;
  c->regs = ptx_grow(p, c->regs, &c->cap_regs, c->nregs + 1, sizeof *c->regs);
  c->regs[c->nregs++] = (dw_reg){name->s, name->len, p->cur_func, type, row, count};
}

void ptx_dwarf_label(ptx_parser *p, const ptx_tok *name, int pc) {
  struct ptx_dwcap *c = p->dw;
  c->labels = ptx_grow(p, c->labels, &c->cap_labels, c->nlabels + 1, sizeof *c->labels);
  c->labels[c->nlabels++] = (dw_label){name->s, name->len, pc};
}

static void sec_bytes(ptx_parser *p, dw_sec *s, uint64_t v, int size) {
  if (s->n + (size_t)size > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    while (cap < s->n + (size_t)size) cap *= 2;
    unsigned char *b = realloc(s->b, cap);
    if (!b) ptx_fail(p, "out of memory while loading PTX");
    s->b = b;
    s->cap = cap;
  }
  for (int i = 0; i < size; i++) s->b[s->n++] = (unsigned char)(v >> (8 * i)); /* DWARF is LE */
}

static int is_number(const ptx_tok *t) {
  return t->kind == PTX_T_WORD && t->s[0] >= '0' && t->s[0] <= '9';
}

static uint64_t tok_number(const ptx_tok *t) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.*s", t->len < 31 ? t->len : 31, t->s);
  return strtoull(buf, NULL, 0);
}

/* One value of a .bN list: a number, or a symbol with an optional +/- offset. */
static void sec_value(ptx_parser *p, dw_sec *s, int size) {
  const ptx_tok *t = ptx_next(&p->lx);
  if (t->kind != PTX_T_WORD) ptx_fail(p, "PTX line %d: bad value in a .section", t->line);
  if (is_number(t)) {
    sec_bytes(p, s, tok_number(t), size);
    return;
  }
  int64_t addend = 0;
  if (ptx_is(ptx_peek(&p->lx, 0), "+") || ptx_is(ptx_peek(&p->lx, 0), "-")) {
    int neg = ptx_is(ptx_next(&p->lx), "-");
    const ptx_tok *n = ptx_next(&p->lx);
    if (!is_number(n)) ptx_fail(p, "PTX line %d: bad offset in a .section", n->line);
    addend = neg ? -(int64_t)tok_number(n) : (int64_t)tok_number(n);
  }
  s->r = ptx_grow(p, s->r, &s->cap_r, s->nr + 1, sizeof *s->r);
  s->r[s->nr++] = (dw_reloc){s->n, t->s, t->len, addend};
  sec_bytes(p, s, 0, size);
}

/* `.section NAME { .b8 1, 2 .b32 sym ... }` with the cursor on NAME: the three sections the
 * reader needs are kept; 0 (nothing consumed) for any other. */
int ptx_dwarf_section(ptx_parser *p) {
  const ptx_tok *name = ptx_peek(&p->lx, 0);
  dw_sec *s = ptx_is(name, ".debug_info")     ? &p->dw->info
              : ptx_is(name, ".debug_abbrev") ? &p->dw->abbrev
              : ptx_is(name, ".debug_loc")    ? &p->dw->loc
                                              : NULL;
  if (!s) return 0;
  ptx_next(&p->lx);
  if (!ptx_accept(&p->lx, "{")) ptx_fail(p, "PTX line %d: expected '{' after .section", name->line);
  for (;;) {
    const ptx_tok *t = ptx_next(&p->lx);
    if (ptx_is(t, "}")) return 1;
    int size = ptx_is(t, ".b8") ? 1 : ptx_is(t, ".b16") ? 2 : ptx_is(t, ".b32") ? 4
             : ptx_is(t, ".b64") ? 8 : 0;
    if (!size) {
      if (t->kind == PTX_T_EOF) ptx_fail(p, "PTX line %d: unexpected end of PTX in .section",
                                         t->line);
      ptx_fail(p, "PTX line %d: '%.*s' is not supported in a .section", t->line, t->len, t->s);
    }
    do sec_value(p, s, size);
    while (ptx_accept(&p->lx, ","));
  }
}

void ptx_dwarf_drop(ptx_parser *p) {
  struct ptx_dwcap *c = p->dw;
  if (!c) return;
  dw_sec *secs[] = {&c->info, &c->abbrev, &c->loc};
  for (int i = 0; i < 3; i++) {
    free(secs[i]->b);
    free(secs[i]->r);
  }
  free(c->regs);
  free(c->labels);
  free(c);
  p->dw = NULL;
}

void sim_dbginfo_free(sim_dbginfo *d) {
  if (!d) return;
  for (int i = 0; i < d->nvars; i++) {
    free(d->vars[i].name);
    free(d->vars[i].type);
  }
  free(d->vars);
  free(d->locs);
  free(d);
}

/* ---- reading DWARF ---- */

enum { /* tags */
  TAG_ARRAY = 0x01, TAG_ENUM = 0x04, TAG_PARAM = 0x05, TAG_BLOCK = 0x0b, TAG_POINTER = 0x0f,
  TAG_REFERENCE = 0x10, TAG_CU = 0x11, TAG_STRUCT = 0x13, TAG_TYPEDEF = 0x16, TAG_UNION = 0x17,
  TAG_SUBRANGE = 0x21, TAG_INLINED = 0x1d, TAG_BASE = 0x24, TAG_CONST = 0x26, TAG_SUBPROGRAM = 0x2e,
  TAG_VARIABLE = 0x34, TAG_VOLATILE = 0x35, TAG_RESTRICT = 0x37, TAG_CLASS = 0x02
};
enum { /* attributes */
  AT_LOCATION = 0x02, AT_NAME = 0x03, AT_BYTE_SIZE = 0x0b, AT_LOW_PC = 0x11, AT_HIGH_PC = 0x12,
  AT_UPPER_BOUND = 0x2f, AT_COUNT = 0x37, AT_DECL_LINE = 0x3b, AT_ENCODING = 0x3e, AT_TYPE = 0x49
};
enum { /* base type encodings */
  ATE_ADDRESS = 1, ATE_BOOLEAN = 2, ATE_FLOAT = 4, ATE_SIGNED = 5, ATE_SIGNED_CHAR = 6,
  ATE_UNSIGNED = 7, ATE_UNSIGNED_CHAR = 8, ATE_UTF = 0x10
};

/* A cursor over a section; any read past its end sets bad and returns 0. */
typedef struct cur {
  const dw_sec *s;
  size_t pos;
  int bad;
} cur;

static uint64_t rd(cur *c, int size) {
  if (c->bad || c->pos + (size_t)size > c->s->n) {
    c->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < size; i++) v |= (uint64_t)c->s->b[c->pos + (size_t)i] << (8 * i);
  c->pos += (size_t)size;
  return v;
}

static uint64_t uleb(cur *c) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    uint64_t b = rd(c, 1);
    if (shift < 64) v |= (b & 0x7f) << shift;
    if (!(b & 0x80) || c->bad) return v;
  }
}

static int64_t sleb(cur *c) {
  uint64_t v = 0;
  int shift = 0;
  uint64_t b;
  do {
    b = rd(c, 1);
    if (shift < 64) v |= (b & 0x7f) << shift;
    shift += 7;
  } while ((b & 0x80) && !c->bad);
  if (shift < 64 && (b & 0x40)) v |= ~0ull << shift;
  return (int64_t)v;
}

/* The symbol written at offset off of s, or NULL. Symbols are kept in the order they were
 * written, which is the order of their offsets. */
static const dw_reloc *reloc_at(const dw_sec *s, size_t off) {
  int lo = 0, hi = s->nr - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (s->r[mid].off == off) return &s->r[mid];
    if (s->r[mid].off < off) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* One abbreviation: a DIE's tag and the forms of its attributes. */
typedef struct abbrev {
  uint64_t code;
  int tag, children;
  size_t attrs;         /* offset of its (attribute, form) list in .debug_abbrev */
} abbrev;

/* What the reader keeps of one DIE. */
typedef struct die {
  size_t off;           /* its offset in the unit: how types refer to it */
  int tag, parent, depth;
  const char *name;     /* into .debug_info (NUL-terminated there) */
  size_t type;          /* the offset of its type's DIE, 0 none */
  int has_type;
  int lo, hi;           /* pcs of low_pc and high_pc; -1 none */
  size_t loc_pos;       /* exprloc: where the expression is in .debug_info */
  size_t loc_len;
  int loc_list;         /* the location is a list at loc_pos in .debug_loc */
  int has_loc;
  uint64_t byte_size, encoding, count, line;
} die;

typedef struct reader {
  struct ptx_dwcap *c;
  const sim_module *m;
  abbrev *ab;
  int nab;
  die *d;
  int nd, cap;
  sim_dbginfo *out;
  int cap_vars, cap_locs;
  char *why;            /* out->why: the first thing that went wrong */
  size_t whylen;
} reader;

static void fail(reader *r, const char *why) {
  if (!r->why[0]) snprintf(r->why, r->whylen, "%s", why);
}

static int label_cmp(const char *a, int alen, const char *b, int blen) {
  if (alen != blen) return alen < blen ? -1 : 1;
  return memcmp(a, b, (size_t)alen);
}

static int label_order(const void *x, const void *y) {
  const dw_label *a = x, *b = y;
  return label_cmp(a->name, a->len, b->name, b->len);
}

/* The pc a label names, or -1. The labels are sorted first (ptx_dwarf_finish): -G gives every
 * statement one, and the DWARF names most of them. */
static int label_pc(const reader *r, const char *name, int len) {
  int lo = 0, hi = r->c->nlabels - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    const dw_label *l = &r->c->labels[mid];
    int c = label_cmp(l->name, l->len, name, len);
    if (!c) return l->pc;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int read_abbrevs(reader *r, size_t off) {
  cur c = {&r->c->abbrev, off, 0};
  int cap = 0;
  for (;;) {
    uint64_t code = uleb(&c);
    if (c.bad || !code) return c.bad ? -1 : 0;
    if (r->nab == cap) {
      cap = cap ? cap * 2 : 32;
      abbrev *a = realloc(r->ab, (size_t)cap * sizeof *a);
      if (!a) return -1;
      r->ab = a;
    }
    abbrev *a = &r->ab[r->nab++];
    a->code = code;
    a->tag = (int)uleb(&c);
    a->children = (int)rd(&c, 1);
    a->attrs = c.pos;
    for (;;) {
      uint64_t at = uleb(&c), form = uleb(&c);
      if (c.bad) return -1;
      if (!at && !form) break;
      if (form == 0x21) sleb(&c); /* DW_FORM_implicit_const carries its value here */
    }
  }
}

static const abbrev *find_abbrev(const reader *r, uint64_t code) {
  for (int i = 0; i < r->nab; i++)
    if (r->ab[i].code == code) return &r->ab[i];
  return NULL;
}

/* Reads one attribute value of `form` at the cursor into v (numbers and offsets), *pos (where a
 * string or a block starts) and *len (a block's length). -1 for a form this reader does not
 * know. ofs: the unit's offset size (4). */
static int read_form(cur *c, uint64_t form, int addr_size, uint64_t *v, size_t *pos,
                     size_t *len) {
  *pos = c->pos;
  *len = 0;
  switch (form) {
    case 0x01: *v = rd(c, addr_size); break;                           /* addr */
    case 0x03: *len = rd(c, 2); *pos = c->pos; c->pos += *len; break;  /* block2 */
    case 0x04: *len = rd(c, 4); *pos = c->pos; c->pos += *len; break;  /* block4 */
    case 0x05: *v = rd(c, 2); break;                                   /* data2 */
    case 0x06: case 0x10: case 0x13: case 0x17: *v = rd(c, 4); break;  /* data4, ref_addr,
                                                                        * ref4, sec_offset */
    case 0x07: case 0x14: case 0x20: *v = rd(c, 8); break;             /* data8, ref8, sig8 */
    case 0x08:                                                          /* string */
      while (!c->bad && rd(c, 1)) continue;
      break;
    case 0x09: case 0x18: *len = uleb(c); *pos = c->pos; c->pos += *len; break; /* block,
                                                                                 * exprloc */
    case 0x0a: *len = rd(c, 1); *pos = c->pos; c->pos += *len; break;  /* block1 */
    case 0x0b: case 0x0c: case 0x11: *v = rd(c, 1); break;             /* data1, flag, ref1 */
    case 0x0d: *v = (uint64_t)sleb(c); break;                          /* sdata */
    case 0x0e: *v = rd(c, 4); break;                                   /* strp: not kept */
    case 0x0f: case 0x15: *v = uleb(c); break;                         /* udata, ref_udata */
    case 0x12: *v = rd(c, 2); break;                                   /* ref2 */
    case 0x19: *v = 1; break;                                          /* flag_present */
    default: return -1;
  }
  if (c->pos > c->s->n) c->bad = 1;
  return c->bad ? -1 : 0;
}

static int is_block_form(uint64_t form) {
  return form == 0x03 || form == 0x04 || form == 0x09 || form == 0x0a || form == 0x18;
}

/* An address attribute: the pc its label names, -1 when it names none. */
static int addr_pc(const reader *r, size_t pos) {
  const dw_reloc *rl = reloc_at(&r->c->info, pos);
  return rl ? label_pc(r, rl->sym, rl->len) : -1;
}

/* Stores attribute `at` of form `form` (value v, at pos, length len) in d. */
static void keep_attr(reader *r, die *d, uint64_t at, uint64_t form, uint64_t v, size_t pos,
                      size_t len) {
  switch (at) {
    case AT_NAME: if (form == 0x08) d->name = (const char *)r->c->info.b + pos; break;
    case AT_TYPE: d->type = v; d->has_type = 1; break;
    case AT_LOW_PC: if (form == 0x01) d->lo = addr_pc(r, pos); break;
    case AT_HIGH_PC: if (form == 0x01) d->hi = addr_pc(r, pos); break;
    case AT_BYTE_SIZE: d->byte_size = v; break;
    case AT_ENCODING: d->encoding = v; break;
    case AT_UPPER_BOUND: d->count = v + 1; break;
    case AT_COUNT: d->count = v; break;
    case AT_DECL_LINE: d->line = v; break;
    case AT_LOCATION:
      d->has_loc = 1;
      if (is_block_form(form)) {
        d->loc_pos = pos;
        d->loc_len = len;
      } else { /* an offset into .debug_loc, which the PTX writes as .debug_loc+N */
        const dw_reloc *rl = reloc_at(&r->c->info, pos);
        d->loc_pos = (size_t)(v + (uint64_t)(rl ? rl->addend : 0));
        d->loc_list = 1;
      }
      break;
    default: break;
  }
}

static die *new_die(reader *r) {
  if (r->nd == r->cap) {
    int cap = r->cap ? r->cap * 2 : 64;
    die *d = realloc(r->d, (size_t)cap * sizeof *d);
    if (!d) return NULL;
    r->d = d;
    r->cap = cap;
  }
  die *d = &r->d[r->nd++];
  memset(d, 0, sizeof *d);
  d->lo = d->hi = -1;
  return d;
}

/* The DIEs of the unit from c (just past its header) to its end, as a flat array with parents. */
static int read_dies(reader *r, cur *c, size_t unit, size_t end, int addr_size) {
  int stack[64], depth = 0;
  while (c->pos < end && !c->bad) {
    size_t off = c->pos - unit;
    uint64_t code = uleb(c);
    if (!code) {
      if (depth > 0) depth--;
      continue;
    }
    const abbrev *a = find_abbrev(r, code);
    die *d = a ? new_die(r) : NULL;
    if (!d) return -1;
    d->off = off;
    d->tag = a->tag;
    d->depth = depth;
    d->parent = depth ? stack[depth - 1] : -1;
    cur ac = {&r->c->abbrev, a->attrs, 0};
    for (;;) {
      uint64_t at = uleb(&ac), form = uleb(&ac);
      if (ac.bad) return -1;
      if (!at && !form) break;
      if (form == 0x21) { /* implicit_const: the value is in the abbreviation */
        keep_attr(r, d, at, form, (uint64_t)sleb(&ac), 0, 0);
        continue;
      }
      uint64_t v = 0;
      size_t pos, len;
      if (read_form(c, form, addr_size, &v, &pos, &len) < 0) return -1;
      keep_attr(r, d, at, form, v, pos, len);
    }
    if (a->children) {
      if (depth == 64) return -1;
      stack[depth++] = r->nd - 1;
    }
  }
  return c->bad ? -1 : 0;
}

/* The DIE at unit offset off, or NULL (they are in offset order). */
static const die *die_at(const reader *r, size_t off) {
  int lo = 0, hi = r->nd - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (r->d[mid].off == off) return &r->d[mid];
    if (r->d[mid].off < off) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* ---- types ---- */

typedef struct vtype {
  int enc, size, count;
  char text[64];
} vtype;

static void base_type(const die *d, vtype *t) {
  t->size = (int)d->byte_size;
  switch ((int)d->encoding) {
    case ATE_FLOAT: t->enc = SIM_DV_FLOAT; break;
    case ATE_BOOLEAN: t->enc = SIM_DV_BOOL; break;
    case ATE_SIGNED: t->enc = SIM_DV_SIGNED; break;
    case ATE_UNSIGNED: case ATE_UTF: t->enc = SIM_DV_UNSIGNED; break;
    case ATE_SIGNED_CHAR: case ATE_UNSIGNED_CHAR: t->enc = SIM_DV_CHAR; break;
    case ATE_ADDRESS: t->enc = SIM_DV_POINTER; break;
    default: t->enc = SIM_DV_OTHER; break;
  }
  snprintf(t->text, sizeof t->text, "%s", d->name ? d->name : "?");
}

/* The type of DIE d (through its type attribute), as C writes it and as the debugger reads it;
 * depth bounds a cycle in broken DWARF. */
static void type_of(const reader *r, const die *d, vtype *t, int depth) {
  const die *ty = d->has_type ? die_at(r, d->type) : NULL;
  if (!ty || depth > 16) {
    *t = (vtype){SIM_DV_OTHER, 0, 1, "void"};
    return;
  }
  switch (ty->tag) {
    case TAG_BASE: base_type(ty, t); t->count = 1; return;
    case TAG_POINTER: case TAG_REFERENCE: {
      vtype to;
      type_of(r, ty, &to, depth + 1);
      snprintf(t->text, sizeof t->text, "%.60s %c", to.text, ty->tag == TAG_POINTER ? '*' : '&');
      t->enc = SIM_DV_POINTER;
      t->size = 8;
      t->count = 1;
      return;
    }
    case TAG_ARRAY: { /* int m[4][5]: "int[4][5]", count 20 */
      type_of(r, ty, t, depth + 1);
      uint64_t n = 1;
      char dims[64] = "";
      size_t len = 0;
      for (int i = (int)(ty - r->d) + 1; i < r->nd && r->d[i].parent == (int)(ty - r->d); i++) {
        if (r->d[i].tag != TAG_SUBRANGE) continue;
        uint64_t k = r->d[i].count;
        if (k) n = k > (1u << 30) / n ? 1u << 30 : n * k; /* n stays within 2^30 */
        if (len < sizeof dims)
          len += (size_t)snprintf(dims + len, sizeof dims - len, "[%llu]", (unsigned long long)k);
      }
      char elem[64];
      snprintf(elem, sizeof elem, "%s", t->text);
      if (strlen(elem) + len < sizeof t->text)
        snprintf(t->text, sizeof t->text, "%s%s", elem, dims);
      else /* too long to spell in full: one dimension of them all */
        snprintf(t->text, sizeof t->text, "%.40s[%llu]", elem, (unsigned long long)n);
      t->count = (int)n;
      return;
    }
    case TAG_CONST: case TAG_VOLATILE: case TAG_TYPEDEF: case TAG_RESTRICT: {
      type_of(r, ty, t, depth + 1);
      if (ty->tag == TAG_TYPEDEF && ty->name) snprintf(t->text, sizeof t->text, "%s", ty->name);
      return;
    }
    case TAG_ENUM: /* its underlying type when DWARF names one, else int-like */
      if (ty->has_type) type_of(r, ty, t, depth + 1);
      else *t = (vtype){SIM_DV_SIGNED, (int)ty->byte_size, 1, ""};
      break;
    default: *t = (vtype){SIM_DV_OTHER, (int)ty->byte_size, 1, ""}; break;
  }
  if (ty->name && (ty->tag == TAG_STRUCT || ty->tag == TAG_CLASS || ty->tag == TAG_UNION ||
                   ty->tag == TAG_ENUM))
    snprintf(t->text, sizeof t->text, "%s", ty->name);
  t->count = 1;
}

/* ---- places ---- */

/* The register a DW_OP_regx operand names: its ASCII bytes, most significant first. */
static void reg_name(uint64_t v, char *buf, size_t len) {
  char tmp[9];
  int n = 0;
  for (; v && n < 8; v >>= 8) tmp[n++] = (char)(v & 0xff);
  size_t k = 0;
  while (n > 0 && k + 1 < len) buf[k++] = tmp[--n];
  buf[k] = 0;
}

/* The row (or predicate) of register `name` in function func: *kind SIM_DL_ROW or SIM_DL_PRED;
 * -1 when it is declared nowhere there. */
static int reg_row(const reader *r, int func, const char *name, int *kind) {
  size_t len = strlen(name);
  for (int i = r->c->nregs - 1; i >= 0; i--) {
    const dw_reg *g = &r->c->regs[i];
    if (g->func != func || (size_t)g->len > len || memcmp(g->name, name, (size_t)g->len)) continue;
    *kind = g->type == SIM_T_PRED ? SIM_DL_PRED : SIM_DL_ROW;
    if (!g->count && (size_t)g->len == len) return g->row;
    if (!g->count || (size_t)g->len == len) continue;
    const char *num = name + g->len;
    if (num[0] == '0' && num[1]) continue;
    char *end;
    long k = strtol(num, &end, 10);
    if (!*end && k >= 0 && k < g->count) return g->row + (int)k;
  }
  return -1;
}

/* The place a location expression (len bytes at pos of s) gives, for a variable of func: 0, or
 * -1 for an expression the debugger cannot follow. */
static int eval_expr(const reader *r, const dw_sec *s, size_t pos, size_t len, int func,
                     sim_dloc *out) {
  cur c = {s, pos, 0};
  size_t end = pos + len;
  uint64_t op = rd(&c, 1);
  if (op == 0x90) { /* DW_OP_regx */
    char name[16];
    reg_name(uleb(&c), name, sizeof name);
    int kind, row = reg_row(r, func, name, &kind);
    if (row < 0 || c.bad) return -1;
    out->kind = kind;
    out->where = row;
    return c.pos == end ? 0 : -1;
  }
  if (op == 0x03) { /* DW_OP_addr of a local variable, then DW_OP_plus_uconst */
    const dw_reloc *rl = reloc_at(s, c.pos);
    rd(&c, 8);
    uint64_t k = 0;
    if (c.pos < end && rd(&c, 1) == 0x23) k = uleb(&c);
    if (!rl || c.bad || c.pos != end) return -1;
    for (int i = 0; i < r->m->nvars; i++) {
      const sim_var *v = &r->m->vars[i];
      if (v->space == SIM_SP_LOCAL && (int)strlen(v->name) == rl->len &&
          !memcmp(v->name, rl->sym, (size_t)rl->len)) {
        out->kind = SIM_DL_LOCAL;
        out->where = (int64_t)(v->addr + k + (uint64_t)rl->addend);
        return 0;
      }
    }
  }
  return -1;
}

static int add_loc(reader *r, const sim_dloc *l) {
  sim_dbginfo *o = r->out;
  if (o->nlocs == r->cap_locs) {
    int cap = r->cap_locs ? r->cap_locs * 2 : 32;
    sim_dloc *n = realloc(o->locs, (size_t)cap * sizeof *n);
    if (!n) return -1;
    o->locs = n;
    r->cap_locs = cap;
  }
  o->locs[o->nlocs++] = *l;
  return 0;
}

/* The places of a location list at offset off of .debug_loc: one per range it can follow. */
static int loc_list(reader *r, size_t off, int func, int *n) {
  cur c = {&r->c->loc, off, 0};
  *n = 0;
  for (;;) {
    size_t at = c.pos;
    uint64_t b = rd(&c, 8), e = rd(&c, 8);
    if (c.bad) return -1;
    const dw_reloc *rb = reloc_at(c.s, at), *re = reloc_at(c.s, at + 8);
    if (!rb && !re && !b && !e) return 0;
    size_t len = rd(&c, 2), pos = c.pos;
    c.pos += len;
    if (c.bad || c.pos > c.s->n) return -1;
    sim_dloc l = {rb ? label_pc(r, rb->sym, rb->len) : -1, re ? label_pc(r, re->sym, re->len) : -1,
                  0, 0};
    if (l.lo < 0 || l.hi < 0 || eval_expr(r, c.s, pos, len, func, &l) < 0) continue;
    if (add_loc(r, &l) < 0) return -1;
    ++*n;
  }
}

/* ---- variables ---- */

/* The function whose code holds pc, or -1. */
static int func_at(const sim_module *m, int pc) {
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i].first >= 0 && pc >= m->funcs[i].first && pc < m->funcs[i].end) return i;
  return -1;
}

static sim_dvar *new_var(reader *r) {
  sim_dbginfo *o = r->out;
  if (o->nvars == r->cap_vars) {
    int cap = r->cap_vars ? r->cap_vars * 2 : 16;
    sim_dvar *n = realloc(o->vars, (size_t)cap * sizeof *n);
    if (!n) return NULL;
    o->vars = n;
    r->cap_vars = cap;
  }
  sim_dvar *v = &o->vars[o->nvars++];
  memset(v, 0, sizeof *v);
  return v;
}

/* The scope of DIE i: the pcs of the nearest lexical block or subprogram around it, how many
 * lexical blocks are around it, and its function. -1 when it is in no function. */
static int scope_of(const reader *r, int i, int *lo, int *hi, int *depth, int *func) {
  *depth = 0;
  *lo = *hi = -1;
  for (int p = r->d[i].parent; p >= 0; p = r->d[p].parent) {
    const die *s = &r->d[p];
    if ((s->tag == TAG_BLOCK || s->tag == TAG_INLINED) && s->lo >= 0) {
      if (*lo < 0) {
        *lo = s->lo;
        *hi = s->hi;
      }
      ++*depth;
    }
    if (s->tag == TAG_SUBPROGRAM) {
      if (s->lo < 0) return -1;
      *func = func_at(r->m, s->lo);
      if (*lo < 0) {
        *lo = s->lo;
        *hi = s->hi >= 0 ? s->hi : r->m->funcs[*func].end;
      }
      return *func < 0 ? -1 : 0;
    }
  }
  return -1;
}

/* A variable or parameter DIE with a name in a function's scope becomes a sim_dvar, with the
 * places the debugger can follow: none when the compiler kept it nowhere (a variable it computed
 * away) or somewhere this reader does not know, so that the debugger can say it has no value
 * rather than that it does not exist. 0, or -1 when out of memory. */
static int add_var(reader *r, int i) {
  const die *d = &r->d[i];
  int lo, hi, depth, func = -1;
  if (!d->name || scope_of(r, i, &lo, &hi, &depth, &func) < 0 || hi < lo) return 0;
  int first = r->out->nlocs, n = 0;
  sim_dloc l = {-1, -1, 0, 0};
  if (d->has_loc && d->loc_list) {
    if (loc_list(r, d->loc_pos, func, &n) < 0) n = r->out->nlocs - first; /* what it could read */
  } else if (d->has_loc && eval_expr(r, &r->c->info, d->loc_pos, d->loc_len, func, &l) == 0) {
    if (add_loc(r, &l) < 0) return -1;
    n = 1;
  }
  vtype t;
  type_of(r, d, &t, 0);
  sim_dvar *v = new_var(r);
  if (!v) return -1;
  *v = (sim_dvar){strdup(d->name), strdup(t.text), lo, hi, func, depth, t.enc, t.size, t.count,
                  (int)d->line, d->tag == TAG_PARAM, first, n};
  return v->name && v->type ? 0 : -1;
}

/* Reads the first compile unit of .debug_info into r->out. -1 with r->why set. */
static int read_unit(reader *r) {
  cur c = {&r->c->info, 0, 0};
  uint64_t unit_len = rd(&c, 4);
  int version = (int)rd(&c, 2);
  if (c.bad || unit_len == 0xffffffffu || unit_len + 4 > c.s->n) {
    fail(r, "its .debug_info has no compile unit that can be read");
    return -1;
  }
  if (version < 2 || version > 5) {
    fail(r, "its .debug_info is in a DWARF version other than 2 to 5");
    return -1;
  }
  size_t at = c.pos;
  int addr_size;
  uint64_t abbrev_off;
  if (version == 5) {
    rd(&c, 1); /* unit_type */
    addr_size = (int)rd(&c, 1);
    at = c.pos;
    abbrev_off = rd(&c, 4);
  } else {
    abbrev_off = rd(&c, 4);
    addr_size = (int)rd(&c, 1);
  }
  const dw_reloc *rl = reloc_at(c.s, at);
  if (rl) abbrev_off += (uint64_t)rl->addend;
  if (addr_size != 8 || read_abbrevs(r, abbrev_off) < 0 ||
      read_dies(r, &c, 0, (size_t)unit_len + 4, addr_size) < 0) {
    fail(r, "its .debug_info holds something the debugger does not read");
    return -1;
  }
  for (int i = 0; i < r->nd; i++)
    if ((r->d[i].tag == TAG_VARIABLE || r->d[i].tag == TAG_PARAM) && add_var(r, i) < 0) {
      fail(r, "out of memory reading its debug information");
      return -1;
    }
  return 0;
}

void ptx_dwarf_finish(ptx_parser *p) {
  if (!p->dw) return;
  sim_dbginfo *out = calloc(1, sizeof *out);
  if (!out) ptx_fail(p, "out of memory while loading PTX");
  reader r = {.c = p->dw, .m = p->m, .out = out, .why = out->why, .whylen = sizeof out->why};
  if (p->dw->nlabels)
    qsort(p->dw->labels, (size_t)p->dw->nlabels, sizeof *p->dw->labels, label_order);
  if (!p->dw->info.n || !p->dw->abbrev.n)
    fail(&r, "it has no .debug_info or no .debug_abbrev section");
  else
    read_unit(&r); /* on trouble, what was read before it is kept, and why says what */
  free(r.ab);
  free(r.d);
  p->m->debug = out;
  ptx_dwarf_drop(p);
}
