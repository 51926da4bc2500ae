/* ctype_layout.c: lays out the C types a kernel takes by value (a struct of parameters, a float4)
 * or points at (uint4 *, Particle *), so that a launch can build a struct's bytes from a Lua
 * table field by field and check an array against what a pointer's element is.
 *
 * Stance: the layout is read from the learner's own source, as the compiler reads it, and laid
 * out by C's rules (each field at a multiple of its alignment, the struct's size a multiple of
 * its largest); the caller then checks the result against the size and alignment the PTX
 * gives the parameter. That check cannot see a member left out whose bytes padding would have
 * taken anyway, nor anything about a pointer's element, so every member is either laid out or
 * the struct refused: a member the reader does not understand is never skipped.
 * The reader is a scanner like kernel_sig.c, not a C++ parser: it follows typedefs, `using`
 * aliases, nested structs, fixed-size arrays, enums (ctype_enum.c), alignment and packing
 * (ctype_attr.c), skips member functions and static members, and refuses with a reason what it
 * cannot lay out exactly (bit-fields, unions, base classes, virtual functions, templates).
 * Turned down: asking NVRTC for offsetof() of each field, which would cost a compile per struct
 * and still need this reader to know the fields' names. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctype_attr.h"
#include "ctype_enum.h"
#include "ctype_layout.h"
#include "dtype.h"
#include "src_words.h"

#define MAX_DEPTH 8      /* nested structs and aliases followed */
#define MAX_FIELDS 256   /* fields of one struct */
#define MAX_ELEMS 32768  /* elements of an array field: kernel parameters are at most 32 KiB */
#define MAX_NODES 4096   /* nodes one type may take, nested ones counted: bounds a hostile source */

/* The ')' or '}' matching the opener at p, before e; NULL when unbalanced. */
static const char *match(const char *p, const char *e) {
  char open = *p, shut = open == '(' ? ')' : open == '[' ? ']' : '}';
  int depth = 0;
  for (; p < e; p++) {
    if (*p == open) depth++;
    else if (*p == shut && --depth == 0) return p;
  }
  return NULL;
}

/* The text [b, e) with qualifiers that do not change a type's layout dropped and spaces
 * squeezed, into out: "const unsigned  int" is "unsigned int". A namespace prefix goes too
 * ("ns::Params" is "Params"): structs are looked up by their own name. */
static void tidy(const char *b, const char *e, char *out, size_t cap) {
  static const char *const drop[] = {"const", "volatile", "__restrict__", "__restrict",
                                     "restrict", "struct", "class", "typename", "mutable", "enum",
                                     "__grid_constant__", NULL};
  size_t n = 0;
  out[0] = '\0';
  for (const char *p = skip_space(b, e); p < e; p = skip_space(p, e)) {
    const char *w = p;
    if (is_ident(*p) || *p == ':') {
      while (p < e && (is_ident(*p) || *p == ':')) p++;
    } else {
      p++;
    }
    int skip = 0;
    for (int i = 0; drop[i] && !skip; i++)
      skip = (size_t)(p - w) == strlen(drop[i]) && strncmp(w, drop[i], (size_t)(p - w)) == 0;
    if (skip) continue;
    const char *ns = w;
    for (const char *c = w; c + 1 < p; c++)
      if (c[0] == ':' && c[1] == ':') ns = c + 2;
    size_t len = (size_t)(p - ns);
    if (n + len + 2 >= cap) break;
    if (n && is_ident(out[n - 1]) && is_ident(*ns)) out[n++] = ' ';
    memcpy(out + n, ns, len);
    n += len;
    out[n] = '\0';
  }
}

/* ---- the types the compiler knows -------------------------------------------------------- */

/* CUDA's vector types are name + count (vector_types.h); their alignment is the component's for
 * 1 and 3 components, twice it for 2, four times it (at most 16) for 4. __half2 and
 * __nv_bfloat162 are two 2-byte halves aligned to 4. */
static const struct { const char *name; int dtype; } vector_bases[] = {
    {"char", DT_I8},   {"uchar", DT_U8},  {"short", DT_I16},       {"ushort", DT_U16},
    {"int", DT_I32},   {"uint", DT_U32},  {"long", DT_I64},        {"ulong", DT_U64},
    {"longlong", DT_I64}, {"ulonglong", DT_U64}, {"float", DT_F32}, {"double", DT_F64},
    {NULL, 0}};

int lay_vector(const char *type, int *count) {
  if (!strcmp(type, "__half2") || !strcmp(type, "half2")) return *count = 2, DT_F16;
  if (!strcmp(type, "__nv_bfloat162") || !strcmp(type, "nv_bfloat162")) return *count = 2, DT_BF16;
  size_t len = strlen(type);
  if (len < 2 || type[len - 1] < '1' || type[len - 1] > '4') return -1;
  for (int i = 0; vector_bases[i].name; i++)
    if (strlen(vector_bases[i].name) == len - 1 && !strncmp(type, vector_bases[i].name, len - 1))
      return *count = type[len - 1] - '0', vector_bases[i].dtype;
  return -1;
}

/* The dtype of a scalar type: the dtype table's spellings, and C's integer names it leaves out. */
static int scalar_dtype(const char *type) {
  int t = dtype_from_c_type(type);
  if (t >= 0) return t;
  static const struct { const char *name; int dtype; } more[] = {
      {"char", DT_I8},         {"signed char", DT_I8},       {"int8_t", DT_I8},
      {"ptrdiff_t", DT_I64},   {"intptr_t", DT_I64},         {"uintptr_t", DT_U64},
      {"long unsigned int", DT_U64}, {"unsigned long long", DT_U64},
      {"long long unsigned int", DT_U64},
      {"short unsigned int", DT_U16}, {"unsigned char", DT_U8}, {NULL, 0}};
  for (int i = 0; more[i].name; i++)
    if (!strcmp(type, more[i].name)) return more[i].dtype;
  return -1;
}

/* ---- reading the source ------------------------------------------------------------------ */

/* Room for k more nodes, zeroed; the index of the first, or -1 out of memory. */
static int grow(lay_table *t, int k) {
  if (t->n + k > t->cap) {
    int cap = t->cap ? t->cap : 16;
    while (cap < t->n + k) cap *= 2;
    lay_node *g = realloc(t->nodes, sizeof *g * (size_t)cap);
    if (!g) return -1;
    t->nodes = g;
    t->cap = cap;
  }
  memset(t->nodes + t->n, 0, sizeof *t->nodes * (size_t)k);
  t->n += k;
  return t->n - k;
}


/* The end of the statement that starts at p: the ';' at depth 0, or e. */
static const char *statement_end(const char *p, const char *e) {
  int depth = 0;
  for (; p < e; p++) {
    if (*p == '(' || *p == '{' || *p == '[') depth++;
    else if (*p == ')' || *p == '}' || *p == ']') depth--;
    else if (*p == ';' && depth <= 0) return p;
  }
  return e;
}

/* The identifier that ends at e (past blanks and array sizes "[N]"), start in *b; 0 if none. */
static size_t last_ident(const char *s, const char *e, const char **b) {
  while (e > s && (isspace((unsigned char)e[-1]) || e[-1] == ']')) {
    if (e[-1] == ']') {
      while (e > s && e[-1] != '[') e--;
      if (e > s) e--;
    } else {
      e--;
    }
  }
  const char *w = e;
  while (w > s && is_ident(w[-1])) w--;
  *b = w;
  return w < e && !isdigit((unsigned char)*w) ? (size_t)(e - w) : 0;
}

int lay_alias(const char *src, const char *type, char *out, size_t cap, int *stars) {
  char cur[64];
  int found = 0;
  snprintf(cur, sizeof cur, "%s", type);
  for (int depth = 0; depth < MAX_DEPTH; depth++) {
    const char *def = NULL, *def_end = NULL;
    size_t tl = strlen(cur);
    for (const char *p = src; !def && (p = strstr(p, "typedef")); p += 7) {
      if (!word_at(src, p, "typedef")) continue;
      const char *end = statement_end(p, p + strlen(p)), *name;
      if (memchr(p, '{', (size_t)(end - p)) || memchr(p, '(', (size_t)(end - p))) continue;
      if (last_ident(p, end, &name) == tl && !strncmp(name, cur, tl)) {
        def = p + 7;
        def_end = name;
      }
    }
    for (const char *p = src; !def && (p = strstr(p, "using")); p += 5) {
      if (!word_at(src, p, "using")) continue;
      const char *q = skip_space(p + 5, p + strlen(p));
      if (strncmp(q, cur, tl) || is_ident(q[tl])) continue;
      q = skip_space(q + tl, q + strlen(q));
      if (*q != '=') continue;
      def = q + 1;
      def_end = statement_end(def, def + strlen(def));
    }
    if (!def) break;
    for (const char *c = def; c < def_end; c++) *stars += *c == '*';
    char t[64];
    char plain[64];
    size_t n = 0;
    for (const char *c = def; c < def_end && n + 1 < sizeof plain; c++)
      if (*c != '*' && *c != '&') plain[n++] = *c;
    plain[n] = '\0';
    tidy(plain, plain + n, t, sizeof t);
    if (!t[0] || !strcmp(t, cur)) break; /* typedef struct P P; names itself */
    snprintf(cur, sizeof cur, "%s", t);
    found = 1;
  }
  if (found) snprintf(out, cap, "%s", cur);
  return found;
}

/* Is p just after the word typedef (blanks between)? */
static int after_typedef(const char *s, const char *p) {
  while (p > s && isspace((unsigned char)p[-1])) p--;
  return p - s >= 7 && word_at(s, p - 7, "typedef");
}

/* Is the struct or class at p the second word of `enum class` or `enum struct`? */
static int after_enum(const char *s, const char *p) {
  while (p > s && isspace((unsigned char)p[-1])) p--;
  return p - s >= 4 && word_at(s, p - 4, "enum");
}

/* What laying out one type shares: the text, the table, a bound on the work, the reason. */
typedef struct lay_ctx {
  const char *src; /* the blanked source (and headers) the types are read from */
  lay_table *t;    /* where the nodes go */
  int limit;       /* t->n may not pass it: a hostile source's nesting costs a refusal */
  char *why;       /* the reason a type could not be laid out */
  size_t wl;
} lay_ctx;

static int fill(lay_ctx *c, const char *type, int stars, const size_t *dims, int ndims,
                int slot, int depth);

/* For alignas(type): the type's alignment, laid out into the table like any other (nodes no
 * field points at, bounded by the table's limit). ud is an align_ref. */
typedef struct align_ref {
  lay_ctx *c;
  int depth; /* of the declaration the alignas is in */
} align_ref;

static size_t align_of_type(void *ud, const char *type, char *why, size_t wl) {
  align_ref *r = ud;
  if (strchr(type, '*')) return 8; /* alignas(float *) */
  char t[64];
  tidy(type, type + strlen(type), t, sizeof t);
  int slot = grow(r->c->t, 1);
  if (slot < 0) return snprintf(why, wl, "out of host memory"), 0;
  if (fill(r->c, t, 0, NULL, 0, slot, r->depth + 1)) return 0;
  return r->c->t->nodes[slot].align;
}

/* A struct's definition as found in the source. */
typedef struct struct_def {
  const char *open, *close; /* its braces */
  lay_attrs attrs;          /* alignas, __align__ or __attribute__ written after the keyword */
  int pack;                 /* the #pragma pack in force where it is defined: 0 none */
} struct_def;

/* Reads what the struct whose keyword is at p, named `name`, says of its layout besides its
 * body: the attributes between keyword and name (attrs, up to tag), none after its closing
 * brace, and the #pragma pack in force. 0, or -1 with why. */
static int struct_extras(lay_ctx *c, const char *p, const char *attrs, const char *tag,
                         const char *name, struct_def *d, int depth) {
  const char *src = c->src, *e = p + strlen(p);
  char owner[80];
  snprintf(owner, sizeof owner, "struct '%s'", name);
  align_ref r = {c, depth};
  for (const char *q = attrs; q < tag;) {
    const char *nx = lay_attr_read(src, q, tag, &d->attrs, align_of_type, &r, owner, c->why,
                                   c->wl);
    if (!nx) return -1;
    q = skip_space(nx == q ? q + 1 : nx, tag);
  }
  const char *after = skip_space(d->close + 1, e);
  if (lay_attr_skip(src, after, e) != after) {
    snprintf(c->why, c->wl, "struct '%s' has an attribute after its closing brace, which the "
             "compiler ignores: write it after the keyword, as in struct __attribute__((packed)) "
             "%s", name, name);
    return -1;
  }
  char why[LAY_WHY];
  d->pack = lay_pack_at(src, p, why, sizeof why);
  if (d->pack < 0) snprintf(c->why, c->wl, "struct '%s': %s", name, why);
  return d->pack < 0 ? -1 : 0;
}

/* The definition of `struct name { ... }` (or class, or typedef struct { ... } name;) in the
 * source. 0 found, -1 not found, -2 found but not laid out here (why says: a union, a base
 * class, an attribute refused). */
static int find_struct(lay_ctx *c, const char *name, struct_def *d, int depth) {
  const char *src = c->src;
  size_t nl = strlen(name);
  static const char *const keys[] = {"struct", "class", "union", NULL};
  for (int k = 0; keys[k]; k++) {
    for (const char *p = src; (p = strstr(p, keys[k])); p++) {
      if (!word_at(src, p, keys[k]) || (k < 2 && after_enum(src, p))) continue;
      const char *attrs = skip_space(p + strlen(keys[k]), p + strlen(p)), *e = p + strlen(p);
      const char *q = attrs, *nx;
      while ((nx = lay_attr_skip(src, q, e)) && nx != q) q = skip_space(nx, e);
      if (!nx) continue;
      const char *tag = q;
      while (is_ident(*q)) q++;
      int tagged = (size_t)(q - tag) == nl && !strncmp(tag, name, nl);
      const char *b = skip_space(q, e);
      if (word_at(src, b, "final")) b = skip_space(b + 5, e);
      if (*b != '{' && !(tagged && *b == ':' && b[1] != ':')) continue;
      const char *shut = *b == '{' ? match(b, e) : NULL;
      if (!tagged) { /* typedef struct [tag] { ... } name; */
        const char *n;
        if (!shut || !after_typedef(src, p)) continue;
        const char *end = statement_end(shut + 1, e);
        if (last_ident(shut + 1, end, &n) != nl || strncmp(n, name, nl)) continue;
      }
      if (k == 2) {
        snprintf(c->why, c->wl, "'%s' is a union, whose fields share their bytes", name);
        return -2;
      }
      if (*b == ':') {
        snprintf(c->why, c->wl, "struct '%s' derives from another type", name);
        return -2;
      }
      if (!shut) continue;
      memset(d, 0, sizeof *d);
      d->open = b;
      d->close = shut;
      return struct_extras(c, p, attrs, tag, name, d, depth) ? -2 : 0;
    }
  }
  return -1;
}

/* One field declarator as read from a struct body. */
typedef struct field_decl {
  char type[64];    /* tidied, without the stars */
  char name[48];
  int stars;
  size_t dims[4];
  int ndims;
  lay_attrs attrs;  /* its own alignas, __align__, __attribute__((aligned, packed)) */
} field_decl;

/* Reads declarator [b, e) ("*a[3]", or for the first one with its type "float *a[3]") into f;
 * the type comes from base when it is not NULL. Where its name starts into *at. 0, or -1 with
 * why. */
static int read_declarator(const char *b, const char *e, const char *base, field_decl *f,
                           const char *sname, const char **at, char *why, size_t wl) {
  memset(f, 0, sizeof *f);
  b = skip_space(b, e);
  while (e > b && isspace((unsigned char)e[-1])) e--;
  while (e > b && e[-1] == ']') { /* array sizes, last first */
    const char *o = e - 1;
    while (o > b && *o != '[') o--;
    if (f->ndims == 4) {
      snprintf(why, wl, "a field of '%s' has more than 4 array dimensions", sname);
      return -1;
    }
    char *end;
    unsigned long n = strtoul(o + 1, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
    if (o == b || n == 0 || n > MAX_ELEMS || *skip_space(end, e) != ']') {
      snprintf(why, wl, "an array size in '%s' is not a number (%.*s): a macro or a constant "
               "this reader does not evaluate", sname, (int)(e - o), o);
      return -1;
    }
    memmove(f->dims + 1, f->dims, sizeof f->dims[0] * (size_t)f->ndims);
    f->dims[0] = n;
    f->ndims++;
    e = o;
    while (e > b && isspace((unsigned char)e[-1])) e--;
  }
  const char *n;
  size_t len = last_ident(b, e, &n);
  if (!len || len >= sizeof f->name || (!base && n == b) || n + len != e) {
    snprintf(why, wl, "a field of '%s' could not be read (%.*s)", sname, (int)(e - b), b);
    return -1;
  }
  memcpy(f->name, n, len);
  *at = n;
  for (const char *c = b; c < n; c++) f->stars += *c == '*' || *c == '&';
  if (base) {
    snprintf(f->type, sizeof f->type, "%s", base);
    return 0;
  }
  char plain[128];
  size_t k = 0;
  for (const char *c = b; c < n && k + 1 < sizeof plain; c++)
    if (*c != '*' && *c != '&') plain[k++] = *c;
  plain[k] = '\0';
  tidy(plain, plain + k, f->type, sizeof f->type);
  return 0;
}

/* Words that open a member declaration with no storage in each object. */
static int no_storage(const char *b, const char *e) {
  static const char *const words[] = {"static", "typedef", "using", "friend", "static_assert",
                                      "template", NULL};
  for (const char *p = b; p < e; p++)
    for (int i = 0; words[i] && (p == b || !is_ident(p[-1])); i++)
      if (word_at(b, p, words[i])) return 1;
  return 0;
}

/* Where the declarator [b, e) ends before its initializer (`= 1`, `{1}`). */
static const char *before_init(const char *b, const char *e) {
  int depth = 0;
  for (const char *c = b; c < e; c++) {
    if (*c == '(' || *c == '[') depth++;
    else if (*c == ')' || *c == ']') depth--;
    else if ((*c == '=' || *c == '{') && depth == 0) return c;
  }
  return e;
}

/* Refuses, with why, a declarator head [b, e) this reader cannot lay out: 1 when it does. */
static int odd_head(const char *b, const char *e, const char *sname, char *why, size_t wl) {
  for (const char *c = b; c < e; c++) {
    if (*c == ':' && (c + 1 == e || c[1] != ':') && (c == b || c[-1] != ':')) {
      snprintf(why, wl, "struct '%s' has a bit-field, whose layout the compiler decides", sname);
      return 1;
    }
    if (*c == '<') {
      snprintf(why, wl, "struct '%s' has a member of a template type", sname);
      return 1;
    }
    if (*c == '(' || *c == ')') {
      snprintf(why, wl, "struct '%s' has a member declared with parentheses (%.*s), such as a "
               "pointer to a function or to an array, which this reader does not lay out",
               sname, (int)(e - b < 60 ? e - b : 60), skip_space(b, e));
      return 1;
    }
  }
  return 0;
}

static void merge_attrs(lay_attrs *to, const lay_attrs *a) {
  if (a->aligned > to->aligned) to->aligned = a->aligned;
  if (a->alignas > to->alignas) to->alignas = a->alignas;
  to->packed |= a->packed;
}

#define MAX_MARKS 8 /* attributes one member declaration may carry */

/* The attributes of member declaration buf (len bytes), each read, recorded with where it is
 * and blanked, so that what is left is a plain declaration. Count, or -1 with why. */
static int take_attrs(lay_ctx *c, char *buf, size_t len, const char *sname, int depth,
                      size_t *at, lay_attrs *marks) {
  char owner[80];
  snprintf(owner, sizeof owner, "a member of '%s'", sname);
  align_ref r = {c, depth};
  int n = 0;
  for (size_t i = 0; i < len;) {
    lay_attrs a = {0};
    const char *p = buf + i;
    const char *nx = lay_attr_read(buf, p, buf + len, &a, align_of_type, &r, owner, c->why,
                                   c->wl);
    if (!nx) return -1;
    if (nx == p) {
      i++;
      while (i < len && is_ident(p[0]) && is_ident(buf[i])) i++;
      continue;
    }
    if (n == MAX_MARKS) {
      snprintf(c->why, c->wl, "a member of '%s' has more than %d attributes", sname, MAX_MARKS);
      return -1;
    }
    at[n] = i;
    marks[n++] = a;
    memset(buf + i, ' ', (size_t)(nx - p));
    i = (size_t)(nx - buf);
  }
  return n;
}

/* Adds the declarators of one data member declaration [b, e) to fields, each with the
 * attributes that apply to it: those before the first declarator's name apply to all, those
 * after a name to that declarator alone (NVRTC's reading). Count added, or -1 with why. */
static int read_member(lay_ctx *c, const char *b, const char *e, field_decl *fields, int have,
                       const char *sname, int depth) {
  b = skip_space(b, e);
  if (b == e || no_storage(b, e)) return 0;
  if (word_at(b, b, "union")) {
    snprintf(c->why, c->wl, "struct '%s' has a union member, which this reader does not lay out",
             sname);
    return -1;
  }
  size_t len = (size_t)(e - b), at[MAX_MARKS];
  lay_attrs marks[MAX_MARKS], shared = {0};
  char *buf = malloc(len + 1);
  if (!buf) return snprintf(c->why, c->wl, "out of host memory"), -1;
  memcpy(buf, b, len);
  buf[len] = '\0';
  int nmarks = take_attrs(c, buf, len, sname, depth, at, marks);
  int added = 0, nest = 0;
  const char *start = buf, *end = buf + len, *base = NULL;
  for (const char *q = buf; nmarks >= 0 && q <= end; q++) {
    if (q < end && (*q == '(' || *q == '[' || *q == '{')) nest++;
    else if (q < end && (*q == ')' || *q == ']' || *q == '}')) nest--;
    if (q < end && (*q != ',' || nest)) continue;
    const char *head = before_init(start, q), *name;
    field_decl *f = &fields[have + added];
    if (have + added == MAX_FIELDS) {
      snprintf(c->why, c->wl, "struct '%s' has more than %d fields", sname, MAX_FIELDS);
      nmarks = -1;
    } else if (odd_head(start, head, sname, c->why, c->wl) ||
               read_declarator(start, head, base, f, sname, &name, c->why, c->wl)) {
      nmarks = -1;
    } else {
      for (int m = 0; m < nmarks; m++) {
        const char *a = buf + at[m];
        if (!base && a < name) merge_attrs(&shared, &marks[m]);
        else if (a >= start && a < q) merge_attrs(&f->attrs, &marks[m]);
      }
      merge_attrs(&f->attrs, &shared);
      base = fields[have].type;
      added++;
    }
    start = q + 1;
  }
  free(buf);
  return nmarks < 0 ? -1 : added;
}

/* Does the member [b, e) define a type (struct, class, union or enum) in place? */
static int defines_type(const char *b, const char *e) {
  static const char *const words[] = {"struct", "class", "union", "enum", NULL};
  for (const char *p = b; p < e; p++)
    for (int i = 0; words[i]; i++)
      if (word_at(b, p, words[i])) return 1;
  return 0;
}

/* Is the '(' at open, first of its member [b, open), a function's parameter list? It is when
 * a name comes before it (f(, S(, operator+(), unless that name is a type's keyword or an
 * operator on types: `float (*fp)(int)`, `int (x)`, `decltype(x) y` declare data. */
static int function_paren(const char *b, const char *open, int op) {
  static const char *const not_names[] = {"decltype", "__decltype", "typeof", "__typeof__",
                                          "sizeof", "alignof", "char", "short", "int", "long",
                                          "float", "double", "void", "bool", "signed",
                                          "unsigned", "auto", "const", "volatile", NULL};
  if (op) return 1;
  const char *e = open;
  while (e > b && isspace((unsigned char)e[-1])) e--;
  const char *w = e;
  while (w > b && is_ident(w[-1])) w--;
  if (w == e) return 0;
  for (int i = 0; not_names[i]; i++)
    if ((size_t)(e - w) == strlen(not_names[i]) && !strncmp(w, not_names[i], (size_t)(e - w)))
      return 0;
  return 1;
}

/* Is the '{' at q a member initializer's (`S() : v{1} {}`), not the body? */
static int member_init_brace(const char *b, const char *q) {
  while (q > b && isspace((unsigned char)q[-1])) q--;
  return q > b && (is_ident(q[-1]) || q[-1] == '>');
}

/* One member of a struct body, from p: where it ends (past its ';' or its function body) into
 * *next, and whether it is data (1), a member function or a declaration without storage (0),
 * or one this reader refuses (-1, why set). [p, *data_end) is the data member's text. */
static int scan_member(lay_ctx *c, const char *p, const char *close, const char *sname,
                       const char **data_end, const char **next) {
  const char *q = p, *fn = NULL;
  int op = 0, init = 0, init_list = 0, body = 0;
  while (q < close && *q != ';' && !body) {
    const char *a = lay_attr_skip(c->src, q, close);
    const char *shut = NULL;
    if (a && a != q) {
      q = a;
    } else if (a && is_ident(*q)) {
      op |= word_at(c->src, q, "operator");
      while (q < close && is_ident(*q)) q++;
    } else if (a && (*q == '(' || *q == '[' || *q == '{') && (shut = match(q, close + 1))) {
      if (*q == '(' && !fn && (!init || op)) fn = q;
      if (*q == '{' && fn && !(init_list && member_init_brace(p, q))) body = 1;
      if (*q == '{' && !fn && defines_type(p, q)) {
        snprintf(c->why, c->wl, "struct '%s' defines a type (a struct, union or enum) inside it, "
                 "which this reader does not lay out", sname);
        return -1;
      }
      q = shut + 1;
    } else if (a && *q == '@') { /* a #pragma pack's mark (kernel_sig.c) */
      snprintf(c->why, c->wl, "struct '%s' has a #pragma pack inside its body, which this "
               "reader does not follow", sname);
      return -1;
    } else if (a && *q != '(' && *q != '[' && *q != '{') {
      if (*q == '=' && !fn) init = 1;
      if (*q == ':' && fn && q[1] != ':' && q[-1] != ':') init_list = 1;
      q++;
    } else {
      snprintf(c->why, c->wl, "struct '%s' has a member this reader cannot read (an unclosed "
               "bracket or attribute)", sname);
      return -1;
    }
  }
  *data_end = q;
  *next = q < close && *q == ';' ? q + 1 : q;
  if (!fn) return 1;
  for (const char *w = p; w < q; w++)
    if (word_at(c->src, w, "virtual")) {
      snprintf(c->why, c->wl, "struct '%s' has a virtual function, and so a hidden pointer to "
               "its table, which this reader does not lay out", sname);
      return -1;
    }
  if (!function_paren(p, fn, op)) return 1; /* a data member: odd_head refuses the parentheses */
  const char *comma = memchr(p, ',', (size_t)(fn - p));
  if (comma) {
    snprintf(c->why, c->wl, "struct '%s' declares fields and a function in one declaration, "
             "which this reader does not lay out", sname);
    return -1;
  }
  const char *semi = skip_space(*next, close); /* `void f() {};` */
  if (body && semi < close && *semi == ';') *next = semi + 1;
  return 0;
}

/* The fields of the struct body between the braces open and close, into *out (malloc'd; the
 * caller frees). Every member is either laid out or refused: one this reader does not follow
 * is never left out, since leaving it out would move every field after it. Count, or -1. */
static int read_body(lay_ctx *c, const char *open, const char *close, const char *sname,
                     field_decl **out, int depth) {
  field_decl *fields = malloc(sizeof *fields * MAX_FIELDS);
  int n = 0;
  *out = fields;
  if (!fields) {
    snprintf(c->why, c->wl, "out of host memory");
    return -1;
  }
  for (const char *p = open + 1; p < close;) {
    p = skip_space(p, close);
    static const char *const labels[] = {"public", "private", "protected", NULL};
    int label = 0;
    for (int i = 0; labels[i] && !label; i++)
      if (word_at(p, p, labels[i]) && *skip_space(p + strlen(labels[i]), close) == ':')
        label = 1, p = skip_space(p + strlen(labels[i]), close) + 1;
    if (label || p >= close) continue;
    const char *data_end, *next;
    int kind = scan_member(c, p, close, sname, &data_end, &next);
    if (kind < 0) return -1;
    if (kind > 0) {
      if (*data_end != ';' && skip_space(p, data_end) != data_end) {
        snprintf(c->why, c->wl, "struct '%s' has a member without its ';' (%.*s)", sname,
                 (int)(data_end - p < 60 ? data_end - p : 60), p);
        return -1;
      }
      int got = read_member(c, p, data_end, fields, n, sname, depth);
      if (got < 0) return -1;
      n += got;
    }
    p = next;
  }
  return n;
}

/* ---- laying out -------------------------------------------------------------------------- */

/* Where field f goes, by NVRTC's rules: the alignment its type brings, lowered to 1 by packed
 * (its own or the struct's) and capped by #pragma pack, then raised by an aligned attribute
 * (itself capped by the pragma) and by alignas (which nothing caps). */
static size_t field_align(size_t natural, const lay_attrs *f, const struct_def *d) {
  size_t a = f->packed || d->attrs.packed ? 1 : natural;
  size_t aligned = f->aligned;
  if (d->pack && a > (size_t)d->pack) a = (size_t)d->pack;
  if (d->pack && aligned > (size_t)d->pack) aligned = (size_t)d->pack;
  if (aligned > a) a = aligned;
  return f->alignas > a ? f->alignas : a;
}

/* Node slot as the struct d: its fields as children, placed by the rules above; the struct's
 * alignment its largest field's, raised by its own alignas or aligned attribute. */
static int fill_struct(lay_ctx *c, const struct_def *d, int slot, int depth) {
  char sname[64]; /* a copy: filling the fields may move the table */
  snprintf(sname, sizeof sname, "%s", c->t->nodes[slot].type);
  field_decl *f;
  int n = read_body(c, d->open, d->close, sname, &f, depth);
  int first = n > 0 ? grow(c->t, n) : c->t->n;
  if (n >= 0 && first < 0) snprintf(c->why, c->wl, "out of host memory");
  for (int i = 0; n >= 0 && first >= 0 && i < n; i++) {
    snprintf(c->t->nodes[first + i].name, sizeof c->t->nodes[0].name, "%s", f[i].name);
    if (fill(c, f[i].type, f[i].stars, f[i].dims, f[i].ndims, first + i, depth + 1)) n = -1;
  }
  size_t off = 0, align = 1;
  for (int i = 0; n >= 0 && first >= 0 && i < n; i++) {
    lay_node *ch = &c->t->nodes[first + i];
    ch->align = field_align(ch->align, &f[i].attrs, d);
    off = (off + ch->align - 1) / ch->align * ch->align;
    ch->offset = off;
    off += ch->size;
    if (ch->align > align) align = ch->align;
  }
  free(f);
  if (n < 0 || first < 0) return -1;
  if (d->attrs.aligned > align) align = d->attrs.aligned;
  if (d->attrs.alignas > align) align = d->attrs.alignas;
  lay_node *s = &c->t->nodes[slot];
  s->kind = LAY_STRUCT;
  s->first = first;
  s->count = n;
  s->align = align;
  off = n ? off : 1; /* an empty C++ struct takes one byte */
  s->size = (off + align - 1) / align * align;
  return 0;
}

/* Node slot as the enum `type` stored as `base` (its underlying integer): a scalar that keeps
 * the enum's name for messages. */
static int fill_enum(lay_ctx *c, const char *type, const char *base, int slot, int depth) {
  char real[64];
  tidy(base, base + strlen(base), real, sizeof real);
  if (fill(c, real, 0, NULL, 0, slot, depth + 1)) return -1;
  lay_node *nd = &c->t->nodes[slot];
  if (nd->kind != LAY_SCALAR && nd->kind != LAY_BOOL) {
    snprintf(c->why, c->wl, "enum '%s' is stored as '%s', which is not an integer type", type,
             real);
    return -1;
  }
  snprintf(nd->type, sizeof nd->type, "%s", type);
  return 0;
}

/* Fills node `slot` (its name set by the caller) as `type` with `stars` and array dims. */
static int fill(lay_ctx *c, const char *type, int stars, const size_t *dims, int ndims,
                int slot, int depth) {
  lay_table *t = c->t;
  if (depth > MAX_DEPTH) {
    snprintf(c->why, c->wl, "'%s' nests structs more than %d deep", type, MAX_DEPTH);
    return -1;
  }
  if (t->n > c->limit) {
    snprintf(c->why, c->wl, "'%s' has more than %d fields in all, nested ones counted", type,
             MAX_NODES);
    return -1;
  }
  snprintf(t->nodes[slot].type, sizeof t->nodes[0].type, "%s%s", type, stars ? " *" : "");
  if (ndims > 0) {
    int e = grow(t, 1);
    if (e < 0 || fill(c, type, stars, dims + 1, ndims - 1, e, depth)) {
      if (e < 0) snprintf(c->why, c->wl, "out of host memory");
      return -1;
    }
    lay_node *a = &t->nodes[slot];
    a->kind = LAY_ARRAY;
    a->first = e;
    a->count = (int)dims[0];
    a->size = t->nodes[e].size * dims[0];
    a->align = t->nodes[e].align;
    if (a->size > (size_t)MAX_ELEMS) {
      snprintf(c->why, c->wl, "array field '%s' is larger than any kernel parameter", a->name);
      return -1;
    }
    return 0;
  }
  lay_node *nd = &t->nodes[slot];
  int count, dt;
  if (stars) {
    nd->kind = LAY_POINTER;
    nd->stars = stars;
    nd->size = nd->align = 8;
    nd->dtype = stars == 1 ? scalar_dtype(type) : -1;
    return 0;
  }
  if (!strcmp(type, "bool")) {
    nd->kind = LAY_BOOL;
    nd->size = nd->align = 1;
    return 0;
  }
  if ((dt = scalar_dtype(type)) >= 0) {
    nd->kind = LAY_SCALAR;
    nd->dtype = dt;
    nd->size = nd->align = dtype_table[dt].size;
    return 0;
  }
  if ((dt = lay_vector(type, &count)) >= 0) {
    int first = grow(t, count);
    if (first < 0) {
      snprintf(c->why, c->wl, "out of host memory");
      return -1;
    }
    size_t cs = dtype_table[dt].size;
    for (int i = 0; i < count; i++) {
      lay_node *ch = &t->nodes[first + i];
      ch->name[0] = "xyzw"[i];
      snprintf(ch->type, sizeof ch->type, "%s", dtype_table[dt].c_type);
      ch->kind = LAY_SCALAR;
      ch->dtype = dt;
      ch->offset = cs * (size_t)i;
      ch->size = ch->align = cs;
    }
    nd = &t->nodes[slot];
    nd->kind = LAY_VECTOR;
    nd->dtype = dt;
    nd->first = first;
    nd->count = count;
    nd->size = cs * (size_t)count;
    nd->align = count == 3 || count == 1 ? cs : count == 2 ? 2 * cs : (4 * cs > 16 ? 16 : 4 * cs);
    return 0;
  }
  char real[64];
  int more = 0;
  if (lay_alias(c->src, type, real, sizeof real, &more))
    return fill(c, real, more, dims, 0, slot, depth + 1);
  int en = lay_enum(c->src, type, real, sizeof real, c->why, c->wl);
  if (en) return en < 0 ? -1 : fill_enum(c, type, real, slot, depth);
  struct_def d;
  int found = find_struct(c, type, &d, depth);
  if (found == -2) return -1;
  if (found < 0) {
    snprintf(c->why, c->wl,
             "type '%s' is not defined in the kernel's source or its own headers "
             "(a toolkit header's type?)", type);
    return -1;
  }
  return fill_struct(c, &d, slot, depth);
}

int lay_type(const char *src, const char *type, lay_table *t, char *why, size_t whylen) {
  int root = grow(t, 1);
  if (root < 0) {
    snprintf(why, whylen, "out of host memory");
    return -1;
  }
  if (strchr(type, '<')) {
    snprintf(why, whylen, "'%s' is a template type, which this reader does not lay out", type);
    return -1;
  }
  lay_ctx c = {src, t, t->n + MAX_NODES, why, whylen};
  return fill(&c, type, 0, NULL, 0, root, 0) ? -1 : root;
}

void lay_table_free(lay_table *t) {
  free(t->nodes);
  t->nodes = NULL;
  t->n = t->cap = 0;
}
