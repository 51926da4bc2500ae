/* ctype_layout.c: lays out the C types a kernel takes by value (a struct of parameters, a float4)
 * or points at (uint4 *, Particle *), so that a launch can build a struct's bytes from a Lua
 * table field by field and check an array against what a pointer's element is.
 *
 * Stance: the layout is read from the learner's own source, as the compiler reads it, and laid
 * out by C's rules (each field at a multiple of its alignment, the struct's size a multiple of
 * its largest); the caller then checks the result against the size and alignment the PTX
 * gives the parameter, so a layout this reader gets wrong is an error, never wrong bytes.
 * The reader is a scanner like kernel_sig.c, not a C++ parser: it follows typedefs, `using`
 * aliases, nested structs, fixed-size arrays and __align__/alignas, skips member functions and
 * static members, and refuses with a reason what it cannot lay out exactly (bit-fields, unions,
 * enums, base classes, templates). Turned down: asking NVRTC for offsetof() of each field, which
 * would cost a compile per struct and still need this reader to know the fields' names. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctype_layout.h"
#include "dtype.h"

#define MAX_DEPTH 8      /* nested structs and aliases followed */
#define MAX_FIELDS 256   /* fields of one struct */
#define MAX_ELEMS 32768  /* elements of an array field: kernel parameters are at most 32 KiB */

static int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Is there the whole word w at p in s? */
static int word_at(const char *s, const char *p, const char *w) {
  size_t len = strlen(w);
  return strncmp(p, w, len) == 0 && !is_ident(p[len]) && (p == s || !is_ident(p[-1]));
}

static const char *skip_space(const char *p, const char *e) {
  while (p < e && isspace((unsigned char)*p)) p++;
  return p;
}

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
                                     "restrict", "struct", "class", "typename", "mutable",
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

/* The body of `struct name { ... }` (or class, or typedef struct { ... } name;) in src:
 * [*open, *close] are its braces. *align gets an __align__(N) or alignas(N) written with it.
 * 0 found, -1 not found, -2 found but not laid out here (why says: a union, a base class). */
static int find_struct(const char *src, const char *name, const char **open, const char **close,
                       size_t *align, char *why, size_t wl) {
  size_t nl = strlen(name);
  static const char *const keys[] = {"struct", "class", "union", NULL};
  for (int k = 0; keys[k]; k++) {
    for (const char *p = src; (p = strstr(p, keys[k])); p++) {
      if (!word_at(src, p, keys[k])) continue;
      const char *q = skip_space(p + strlen(keys[k]), p + strlen(p)), *e = q + strlen(q);
      size_t al = 0;
      while (word_at(src, q, "__align__") || word_at(src, q, "alignas") ||
             word_at(src, q, "__attribute__")) {
        const char *paren = strchr(q, '(');
        const char *shut = paren ? match(paren, e) : NULL;
        if (!shut) break;
        const char *d = paren;
        while (d < shut && !isdigit((unsigned char)*d)) d++;
        if (d < shut) al = (size_t)strtoul(d, NULL, 10);
        q = skip_space(shut + 1, e);
      }
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
        snprintf(why, wl, "'%s' is a union, whose fields share their bytes", name);
        return -2;
      }
      if (*b == ':') {
        snprintf(why, wl, "struct '%s' derives from another type", name);
        return -2;
      }
      if (!shut) continue;
      *open = b;
      *close = shut;
      *align = al;
      return 0;
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
} field_decl;

/* Reads declarator [b, e) ("*a[3]", or for the first one with its type "float *a[3]") into f;
 * the type comes from base when it is not NULL. 0, or -1 with why. */
static int read_declarator(const char *b, const char *e, const char *base, field_decl *f,
                           const char *sname, char *why, size_t wl) {
  memset(f, 0, sizeof *f);
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
  if (!len || len >= sizeof f->name || (!base && n == b)) {
    snprintf(why, wl, "a field of '%s' could not be read (%.*s)", sname, (int)(e - b), b);
    return -1;
  }
  memcpy(f->name, n, len);
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
static int no_storage(const char *s, const char *p) {
  static const char *const words[] = {"static", "typedef", "using", "friend", "static_assert",
                                      "template", NULL};
  for (int i = 0; words[i]; i++)
    if (word_at(s, p, words[i])) return 1;
  return 0;
}

/* Adds the declarators of one member declaration [b, e) to fields. Count added, or -1. */
static int read_member(const char *b, const char *e, field_decl *fields, int have,
                       const char *sname, char *why, size_t wl) {
  b = skip_space(b, e);
  if (b == e || no_storage(b, b)) return 0;
  if (word_at(b, b, "enum") || word_at(b, b, "union")) {
    snprintf(why, wl, "struct '%s' has an %s member, which this reader does not lay out", sname,
             word_at(b, b, "enum") ? "enum" : "union");
    return -1;
  }
  const char *paren = memchr(b, '(', (size_t)(e - b));
  if (paren) { /* a member function, a constructor, or a function pointer */
    if (paren[1] == '*' || skip_space(paren + 1, e)[0] == '*') {
      snprintf(why, wl, "struct '%s' has a function pointer member", sname);
      return -1;
    }
    return 0;
  }
  for (const char *c = b; c < e; c++) {
    if (*c == ':' && c[1] != ':' && (c == b || c[-1] != ':')) {
      snprintf(why, wl, "struct '%s' has a bit-field, whose layout the compiler decides", sname);
      return -1;
    }
    if (*c == '<') {
      snprintf(why, wl, "struct '%s' has a member of a template type", sname);
      return -1;
    }
  }
  const char *eq = memchr(b, '=', (size_t)(e - b));
  if (eq) e = eq; /* a default member initializer */
  int added = 0;
  const char *start = b, *base = NULL;
  int depth = 0;
  for (const char *c = b; c <= e; c++) {
    if (c < e && *c == '[') depth++;
    else if (c < e && *c == ']') depth--;
    if (c < e && (*c != ',' || depth)) continue;
    if (have + added == MAX_FIELDS) {
      snprintf(why, wl, "struct '%s' has more than %d fields", sname, MAX_FIELDS);
      return -1;
    }
    field_decl *f = &fields[have + added];
    if (read_declarator(start, c, base, f, sname, why, wl)) return -1;
    base = fields[have].type;
    added++;
    start = c + 1;
  }
  return added;
}

/* The fields of the struct body between the braces open and close, into *out (malloc'd; the
 * caller frees). Count, or -1 with why. */
static int read_body(const char *open, const char *close, const char *sname, field_decl **out,
                     char *why, size_t wl) {
  field_decl *fields = malloc(sizeof *fields * MAX_FIELDS);
  int n = 0;
  *out = fields;
  if (!fields) {
    snprintf(why, wl, "out of host memory");
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
    const char *q = p;
    int paren = 0;
    while (q < close && !(paren == 0 && (*q == ';' || *q == '{'))) {
      paren += (*q == '(') - (*q == ')');
      q++;
    }
    if (q < close && *q == '{') {
      const char *shut = match(q, close + 1);
      if (!memchr(p, '(', (size_t)(q - p)) || !shut) { /* not a member function's body */
        snprintf(why, wl, "struct '%s' defines a struct or union inside it, or initialises a "
                 "member with braces: this reader does not lay those out", sname);
        return -1;
      }
      p = skip_space(shut + 1, close);
      if (p < close && *p == ';') p++;
      continue;
    }
    int got = read_member(p, q, fields, n, sname, why, wl);
    if (got < 0) return -1;
    n += got;
    p = q + 1;
  }
  return n;
}

/* ---- laying out -------------------------------------------------------------------------- */

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

static int fill(const char *src, const char *type, int stars, const size_t *dims, int ndims,
                lay_table *t, int slot, int depth, char *why, size_t wl);

/* Node slot as the struct whose body is [open, close]: its fields as children, placed by C's
 * rules. */
static int fill_struct(const char *src, const char *open, const char *close, size_t min_align,
                       lay_table *t, int slot, int depth, char *why, size_t wl) {
  field_decl *f;
  int n = read_body(open, close, t->nodes[slot].type, &f, why, wl);
  int first = n > 0 ? grow(t, n) : t->n;
  if (n >= 0 && first < 0) snprintf(why, wl, "out of host memory");
  for (int i = 0; n >= 0 && first >= 0 && i < n; i++) {
    snprintf(t->nodes[first + i].name, sizeof t->nodes[0].name, "%s", f[i].name);
    if (fill(src, f[i].type, f[i].stars, f[i].dims, f[i].ndims, t, first + i, depth + 1, why, wl))
      n = -1;
  }
  free(f);
  if (n < 0 || first < 0) return -1;
  size_t off = 0, align = min_align ? min_align : 1;
  for (int i = 0; i < n; i++) {
    lay_node *c = &t->nodes[first + i];
    off = (off + c->align - 1) / c->align * c->align;
    c->offset = off;
    off += c->size;
    if (c->align > align) align = c->align;
  }
  lay_node *s = &t->nodes[slot];
  s->kind = LAY_STRUCT;
  s->first = first;
  s->count = n;
  s->align = align;
  s->size = n ? (off + align - 1) / align * align : 1; /* an empty C++ struct takes one byte */
  return 0;
}

/* Fills node `slot` (its name set by the caller) as `type` with `stars` and array dims. */
static int fill(const char *src, const char *type, int stars, const size_t *dims, int ndims,
                lay_table *t, int slot, int depth, char *why, size_t wl) {
  if (depth > MAX_DEPTH) {
    snprintf(why, wl, "'%s' nests structs more than %d deep", type, MAX_DEPTH);
    return -1;
  }
  snprintf(t->nodes[slot].type, sizeof t->nodes[0].type, "%s%s", type, stars ? " *" : "");
  if (ndims > 0) {
    int e = grow(t, 1);
    if (e < 0 || fill(src, type, stars, dims + 1, ndims - 1, t, e, depth, why, wl)) {
      if (e < 0) snprintf(why, wl, "out of host memory");
      return -1;
    }
    lay_node *a = &t->nodes[slot];
    a->kind = LAY_ARRAY;
    a->first = e;
    a->count = (int)dims[0];
    a->size = t->nodes[e].size * dims[0];
    a->align = t->nodes[e].align;
    if (a->size > (size_t)MAX_ELEMS) {
      snprintf(why, wl, "array field '%s' is larger than any kernel parameter", a->name);
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
      snprintf(why, wl, "out of host memory");
      return -1;
    }
    size_t cs = dtype_table[dt].size;
    for (int i = 0; i < count; i++) {
      lay_node *c = &t->nodes[first + i];
      c->name[0] = "xyzw"[i];
      snprintf(c->type, sizeof c->type, "%s", dtype_table[dt].c_type);
      c->kind = LAY_SCALAR;
      c->dtype = dt;
      c->offset = cs * (size_t)i;
      c->size = c->align = cs;
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
  if (lay_alias(src, type, real, sizeof real, &more))
    return fill(src, real, more, dims, 0, t, slot, depth + 1, why, wl);
  const char *open, *close;
  size_t align = 0;
  int found = find_struct(src, type, &open, &close, &align, why, wl);
  if (found == -2) return -1;
  if (found < 0) {
    snprintf(why, wl,
             "type '%s' is not defined in the kernel's source or its own headers "
             "(a toolkit header's type?)", type);
    return -1;
  }
  return fill_struct(src, open, close, align, t, slot, depth, why, wl);
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
  return fill(src, type, 0, NULL, 0, t, root, 0, why, whylen) ? -1 : root;
}

void lay_table_free(lay_table *t) {
  free(t->nodes);
  t->nodes = NULL;
  t->n = t->cap = 0;
}
