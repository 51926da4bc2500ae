/* kernel_sig.c: a small scanner over CUDA C source, not a parser: it blanks out comments,
 * strings and preprocessor lines, then reads the declarator after each __global__. That is
 * enough for the kernels learners write; anything it cannot read leaves nparams at -1 and the
 * launch falls back to the sizes in the PTX, so a scanner miss costs a check, never a launch.
 *
 * Names are the ones NVRTC's name expressions take, so that a kernel is found whatever C++ does
 * to its symbol: "ns::k" inside a namespace, "k<int>" for an explicit instantiation, and for
 * overloads the signature, "(void(*)(float *))k", which the learner writes "k(float *)". */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctype_attr.h"
#include "dtype.h"
#include "kernel_sig.h"
#include "src_words.h"
#include "tmpl_args.h"

/* A copy of src with comments, string/char literals and # lines replaced by spaces (same
 * length, so offsets agree), but for #pragma pack, which becomes lay_pack_mark's mark. Caller
 * frees. */
static char *blank_noise(const char *src) {
  size_t n = strlen(src);
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, src, n + 1);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '/' && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') s[i++] = ' ';
    } else if (s[i] == '/' && s[i + 1] == '*') {
      size_t j = i;
      while (j < n && !(s[j] == '*' && s[j + 1] == '/')) j++;
      for (size_t k = i; k < n && k < j + 2; k++)
        if (s[k] != '\n') s[k] = ' ';
      i = j + 1;
    } else if (s[i] == '"' || s[i] == '\'') {
      char q = s[i];
      s[i++] = ' ';
      while (i < n && s[i] != q && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n) s[i++] = ' ';
        s[i++] = ' ';
      }
      if (i < n && s[i] == q) s[i] = ' ';
    } else if (s[i] == '#' && (i == 0 || s[i - 1] == '\n' || isspace((unsigned char)s[i - 1]))) {
      size_t end = i; /* a #pragma pack stays, as a mark the struct layouts read */
      while (end < n && s[end] != '\n') end += s[end] == '\\' && s[end + 1] == '\n' ? 2 : 1;
      if (lay_pack_mark(s + i, end - i)) {
        i = end;
        continue;
      }
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && s[i + 1] == '\n') s[i++] = ' ';
        s[i++] = ' ';
      }
    }
  }
  return s;
}

/* Removes qualifiers that do not change what a pointer points at, squeezes spaces. */
static void tidy_type(char *t, int *is_const) {
  static const char *drop[] = {"__restrict__", "__restrict", "restrict", "volatile", "const",
                               "__global__", "struct", "__grid_constant__", NULL};
  char out[128] = "";
  *is_const = 0;
  for (char *tok = strtok(t, " \t\n\r"); tok; tok = strtok(NULL, " \t\n\r")) {
    int skip = 0;
    for (int i = 0; drop[i]; i++) {
      if (strcmp(tok, drop[i]) == 0) {
        skip = 1;
        *is_const |= strcmp(tok, "const") == 0;
      }
    }
    if (skip) continue;
    if (out[0] && strlen(out) + strlen(tok) + 2 < sizeof out) strcat(out, " ");
    if (strlen(out) + strlen(tok) + 1 < sizeof out) strcat(out, tok);
  }
  strcpy(t, out);
}

/* Whether base is a C integer type no dtype names (a dtype's row knows its own spellings):
 * every word one of C's integer keywords ("char", "unsigned long"), or one of <stdint.h>'s and
 * <stddef.h>'s integer names. A rule rather than a list, so that a new dtype changes nothing
 * here. */
static int is_c_integer(const char *base) {
  static const char *const typedefs[] = {"size_t", "ptrdiff_t", "intptr_t", "uintptr_t", NULL};
  for (int i = 0; typedefs[i]; i++)
    if (strcmp(base, typedefs[i]) == 0) return 1;
  const char *std = base + (base[0] == 'u');
  int bits = 0, used = 0;
  if (sscanf(std, "int%d_t%n", &bits, &used) == 1 && std[used] == '\0') return 1;
  char words[96], word[32];
  snprintf(words, sizeof words, "%s", base);
  int n = 0;
  for (char *w = strtok(words, " "); w; w = strtok(NULL, " "), n++) {
    snprintf(word, sizeof word, " %s ", w);
    if (!strstr(" signed unsigned char short int long ", word)) return 0;
  }
  return n > 0;
}

static sig_kind scalar_kind(const char *base, int *dtype) {
  *dtype = -1;
  if (strcmp(base, "cudaTextureObject_t") == 0) return SIG_TEXTURE; /* a handle, not a number */
  *dtype = dtype_from_c_type(base);
  if (*dtype >= 0) return dtype_table[*dtype].is_float ? SIG_FLOAT : SIG_INT; /* a __half too */
  if (strcmp(base, "bool") == 0) return SIG_BOOL;
  return is_c_integer(base) ? SIG_INT : SIG_UNKNOWN;
}

/* The dtype of the array a pointer to `type` takes. A __half2 * walks an f16 array two elements
 * at a time, so it takes f16 (and __nv_bfloat162 * bf16); these are kept out of dtype.c's
 * names because cuda.array(n, "__half2") would then make n halves, not n pairs. */
static int pointee_dtype(const char *type) {
  if (strcmp(type, "__half2") == 0 || strcmp(type, "half2") == 0) return DT_F16;
  if (strcmp(type, "__nv_bfloat162") == 0 || strcmp(type, "nv_bfloat162") == 0) return DT_BF16;
  return dtype_from_c_type(type);
}

/* Array syntax in a parameter, as C++ reads it: `float a[]` and `const int b[8]` are pointers
 * (the first size is dropped), `float m[][4]` and `float (*m)[4]` point at rows of float[4].
 * Cuts the sizes (and a "(*m)") off buf, which keeps the element type and the name; the rows'
 * sizes go to rows ("[4]", "" for a plain pointer), the stars it adds are returned, and the
 * name of a "(*m)" goes to name. Also reads a function pointer, `void (*f)(int)`: then *fn is
 * set and buf keeps its text less the name. */
static int array_syntax(char *buf, char *rows, size_t cap, char *name, size_t ncap, int *fn) {
  char *end = buf + strlen(buf), *dims = end;
  rows[0] = '\0';
  *fn = 0;
  while (dims > buf && dims[-1] == ']') {
    char *o = dims - 1;
    while (o > buf && *o != '[') o--;
    if (*o != '[') break;
    dims = o;
    while (dims > buf && isspace((unsigned char)dims[-1])) dims--;
  }
  char *close = dims;
  while (close > buf && isspace((unsigned char)close[-1])) close--;
  char *open = NULL;
  if (close > buf && close[-1] == ')') { /* "(*m)" before the sizes, or a function's "(int)" */
    int depth = 0;
    for (char *c = close - 1; c >= buf && !open; c--) {
      if (*c == ')') depth++;
      else if (*c == '(' && --depth == 0) open = c;
    }
  }
  int stars = 0, is_fn = open && dims == end && open > buf;
  if (is_fn) { /* void (*f)(int): the group before the arguments holds the name */
    char *q = open;
    while (q > buf && isspace((unsigned char)q[-1])) q--;
    close = q;
    open = NULL;
    int depth = 0;
    for (char *c = close - 1; close > buf && close[-1] == ')' && c >= buf && !open; c--) {
      if (*c == ')') depth++;
      else if (*c == '(' && --depth == 0) open = c;
    }
    *fn = open != NULL;
  }
  if (open && (dims < end || is_fn) && memchr(open, '*', (size_t)(close - open))) {
    char *n = close - 1, *nb;
    while (n > open && !is_ident(n[-1])) n--;
    for (nb = n; nb > open && is_ident(nb[-1]); nb--) {}
    snprintf(name, ncap, "%.*s", (int)(n - nb), nb);
    for (char *c = open; c < close; c++) stars += *c == '*';
    if (is_fn) { /* keep "void (*)(int)" as its type */
      memmove(nb, n, strlen(n) + 1);
      return stars;
    }
    snprintf(rows, cap, "%s", strchr(dims, '[') ? strchr(dims, '[') : "");
    *open = '\0';
    return stars;
  }
  *fn = 0;
  if (dims == end) return 0;
  char *first = strchr(dims, ']'); /* the first size: the pointer C++ makes of it */
  snprintf(rows, cap, "%s", first ? first + 1 : "");
  *dims = '\0';
  return 1;
}

/* The elements in one row of rows ("[4][2]": 8), 1 for none, 0 when a size is not a number. */
static int row_elems(const char *rows) {
  long n = 1;
  for (const char *c = strchr(rows, '['); c && n; c = strchr(c + 1, '[')) {
    char *end;
    long v = strtol(c + 1, &end, 10);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
    n = *end == ']' && v > 0 && v <= 1 << 20 && n * v <= 1 << 20 ? n * v : 0;
  }
  return (int)n;
}

/* Parses one parameter declaration such as "const float * __restrict__ a". */
static void parse_param(const char *decl, size_t len, sig_param *p) {
  char buf[256];
  if (len >= sizeof buf) len = sizeof buf - 1;
  memcpy(buf, decl, len);
  buf[len] = '\0';
  char *eq = strchr(buf, '=');
  if (eq) *eq = '\0'; /* default argument */
  char *end = buf + strlen(buf);
  while (end > buf && isspace((unsigned char)end[-1])) *--end = '\0';
  memset(p, 0, sizeof *p);
  p->dtype = -1;
  p->lay = -1;
  p->row = 1;
  char rows[64], inner[64] = "";
  int fn, stars = array_syntax(buf, rows, sizeof rows, inner, sizeof inner, &fn);
  if (fn) { /* a function pointer: its type as written, no array it could be checked against */
    char type[128];
    snprintf(type, sizeof type, "%s", buf);
    int is_const;
    tidy_type(type, &is_const);
    snprintf(p->type, sizeof p->type, "%.*s", (int)sizeof p->type - 1, type);
    snprintf(p->name, sizeof p->name, "%s", inner);
    snprintf(p->base, sizeof p->base, "void");
    p->kind = SIG_POINTER;
    p->stars = stars;
    return;
  }
  end = buf + strlen(buf);
  while (end > buf && isspace((unsigned char)end[-1])) *--end = '\0';
  char *name = end;
  while (name > buf && is_ident(name[-1])) name--;
  for (char *c = buf; *c; c++)
    if (*c == '*' || *c == '&') stars++;
  /* A trailing identifier that is part of the type (an unnamed "float *" has none). */
  int named = !inner[0] && name < end && name > buf &&
              (isspace((unsigned char)name[-1]) || name[-1] == '*' || name[-1] == '&');
  if (named) {
    snprintf(p->name, sizeof p->name, "%s", name);
    *name = '\0';
  } else if (inner[0]) {
    snprintf(p->name, sizeof p->name, "%s", inner);
  }
  char type[128];
  snprintf(type, sizeof type, "%s", buf);
  for (char *c = type; *c; c++)
    if (*c == '*' || *c == '&') *c = ' ';
  int is_const = 0;
  tidy_type(type, &is_const);
  /* A type longer than p->type, which only names the parameter in messages and overloads, is
   * cut to fit: the dtype is read from the whole of type. A pointer to rows is spelt as C++
   * spells it, "float (*)[4]", and sig_param_text puts the name inside. */
  int w = rows[0] ? snprintf(p->type, sizeof p->type, "%s%s (%.*s)%s", is_const ? "const " : "",
                             type, stars < 8 ? stars : 8, "********", rows)
                  : snprintf(p->type, sizeof p->type, "%s%s%s%.*s", is_const ? "const " : "",
                             type, stars ? " " : "", stars < 8 ? stars : 8, "********");
  if (w < 0) p->type[0] = '\0'; /* an encoding error leaves no promise about the buffer */
  const char *ns = strrchr(type, ':'); /* "ns::Params": structs are looked up as "Params" */
  snprintf(p->base, sizeof p->base, "%s", ns ? ns + 1 : type);
  p->stars = stars;
  if (rows[0]) p->row = row_elems(rows);
  if (stars) {
    p->kind = SIG_POINTER;
    p->dtype = stars == 1 ? pointee_dtype(type) : -1; /* float **: an array of addresses */
    p->is_const = is_const;
  } else {
    p->kind = scalar_kind(type, &p->dtype);
  }
}

/* Reads the parameter list between open and close into k (params malloc'd); -1 out of memory. */
static int parse_params(const char *open, const char *close, sig_kernel *k) {
  k->nparams = 0;
  const char *p = open + 1;
  while (isspace((unsigned char)*p)) p++;
  if (p == close || (strncmp(p, "void", 4) == 0 && !is_ident(p[4]))) {
    const char *q = p + (p == close ? 0 : 4);
    while (isspace((unsigned char)*q)) q++;
    if (q == close) return 0;
  }
  int depth = 0, count = 1;
  for (const char *c = open + 1; c < close; c++) { /* count first: one allocation */
    if (*c == '(' || *c == '<' || *c == '[') depth++;
    else if (*c == ')' || *c == '>' || *c == ']') depth--;
    else if (*c == ',' && depth == 0) count++;
  }
  if (!(k->params = calloc((size_t)count, sizeof *k->params))) return -1;
  depth = 0;
  const char *start = open + 1;
  for (const char *c = open + 1; c <= close && k->nparams < count; c++) {
    if (*c == '(' || *c == '<' || *c == '[') depth++;
    else if ((*c == ')' || *c == '>' || *c == ']') && c != close) depth--;
    if ((*c == ',' && depth == 0) || c == close) {
      parse_param(start, (size_t)(c - start), &k->params[k->nparams++]);
      start = c + 1;
    }
  }
  return 0;
}

static const char *match_paren(const char *open) {
  int depth = 0;
  for (const char *c = open; *c; c++) {
    if (*c == '(') depth++;
    else if (*c == ')' && --depth == 0) return c;
  }
  return NULL;
}

/* Attributes a kernel's declaration may carry before or after `__global__`, or between its
 * return type and its name, each followed by a parenthesised argument: none of them is the
 * kernel's name or its parameter list. */
static const char *const attr_words[] = {"__launch_bounds__", "__cluster_dims__", "__maxnreg__",
                                         "__attribute__", "__declspec", "__align__", "alignas",
                                         NULL};

/* Is the '(' at open the argument of one of attr_words (blanks may come between)? */
static int is_attr_paren(const char *s, const char *open) {
  const char *e = open;
  while (e > s && isspace((unsigned char)e[-1])) e--;
  const char *b = e;
  while (b > s && is_ident(b[-1])) b--;
  size_t n = (size_t)(e - b);
  for (int i = 0; attr_words[i]; i++)
    if (n == strlen(attr_words[i]) && strncmp(b, attr_words[i], n) == 0) return 1;
  return 0;
}

/* The ']' closing the C++ attribute "[[...]]" that opens at p, balanced; NULL if unclosed. */
static const char *match_brackets(const char *p) {
  int depth = 0;
  for (const char *c = p; *c; c++) {
    if (*c == '[') depth++;
    else if (*c == ']' && --depth == 0) return c;
  }
  return NULL;
}

/* Words that may come between "template <...>" and __global__ without changing what it
 * declares. */
static const char *const spec_words[] = {"static", "inline", "__inline__", "__forceinline__",
                                         "__noinline__", "extern", NULL};

/* Steps back from q over blanks, attributes (attr_words with their argument, [[...]]) and
 * spec_words; where the declaration's own words begin. */
static const char *skip_back_attrs(const char *s, const char *q) {
  for (;;) {
    while (q > s && isspace((unsigned char)q[-1])) q--;
    if (q > s && (q[-1] == ')' || q[-1] == ']')) {
      char open = q[-1] == ')' ? '(' : '[', shut = q[-1];
      int depth = 0;
      const char *c = q - 1;
      for (; c >= s; c--) {
        if (*c == shut) depth++;
        else if (*c == open && --depth == 0) break;
      }
      if (c < s || (open == '(' && !is_attr_paren(s, c))) return q;
      if (open == '[' && c[1] != '[') return q; /* an array's size, not [[...]] */
      q = c;
      if (open == '(') {
        while (q > s && isspace((unsigned char)q[-1])) q--;
        while (q > s && is_ident(q[-1])) q--;
      }
      continue;
    }
    const char *w = q;
    while (w > s && is_ident(w[-1])) w--;
    int spec = 0;
    for (int i = 0; spec_words[i] && w < q && !spec; i++)
      spec = (size_t)(q - w) == strlen(spec_words[i]) &&
             strncmp(w, spec_words[i], (size_t)(q - w)) == 0;
    if (!spec) return q;
    q = w;
  }
}

/* Is there a "template <...>" just before the __global__ at p (past attributes such as
 * __launch_bounds__(N), [[...]], static, inline, and whitespace)? */
static int preceded_by_template(const char *s, const char *p) {
  const char *q = skip_back_attrs(s, p);
  if (q > s && q[-1] == '>') {
    int depth = 0;
    for (q--; q >= s; q--) {
      if (*q == '>') depth++;
      else if (*q == '<' && --depth == 0) break;
    }
    while (q > s && isspace((unsigned char)q[-1])) q--;
    return q - 8 >= s && word_at(s, q - 8, "template");
  }
  return 0;
}

/* The namespaces open at position upto of the blanked source s, as a prefix "a::b::" in out
 * (anonymous namespaces add nothing: their kernels are named without one). Nesting deeper than
 * 16 namespaces is not followed; such a kernel's name then fails in NVRTC with a message. */
static void ns_prefix(const char *s, const char *upto, char *out, size_t cap) {
  struct { size_t len; int depth; } open[16];
  int top = 0, depth = 0;
  out[0] = '\0';
  for (const char *c = s; c < upto; c++) {
    if (*c == '{') {
      depth++;
    } else if (*c == '}') {
      depth--;
      while (top > 0 && open[top - 1].depth > depth) out[open[--top].len] = '\0';
    } else if (word_at(s, c, "namespace")) {
      const char *q = c + 9, *name;
      while (isspace((unsigned char)*q)) q++;
      name = q;
      while (is_ident(*q) || (q[0] == ':' && q[1] == ':')) q++;
      const char *name_end = q;
      while (isspace((unsigned char)*q)) q++;
      if (*q != '{' || top == 16) continue; /* an alias (namespace x = y;) or too deep */
      size_t len = strlen(out);
      open[top].len = len;
      open[top++].depth = depth + 1;
      if (name_end > name && len + (size_t)(name_end - name) + 3 < cap)
        snprintf(out + len, cap - len, "%.*s::", (int)(name_end - name), name);
      c = q - 1; /* the '{' is counted next */
    }
  }
}

/* The identifier, with template arguments when they follow it ("k<int>"), that ends at e
 * (exclusive), not before p; its start in *b, or NULL when there is none. Whitespace inside
 * the arguments is squeezed to one space. */
static char *kernel_word(const char *p, const char *e, const char **b) {
  const char *id_end = e;
  if (e > p && e[-1] == '>') {
    int depth = 0;
    const char *q = e - 1;
    for (; q >= p; q--) {
      if (*q == '>') depth++;
      else if (*q == '<' && --depth == 0) break;
    }
    if (q < p) return NULL;
    id_end = q;
    while (id_end > p && isspace((unsigned char)id_end[-1])) id_end--;
  }
  const char *id = id_end;
  while (id > p && is_ident(id[-1])) id--;
  if (id == id_end) return NULL;
  *b = id;
  char *w = malloc((size_t)(e - id) + 1), *o = w;
  if (!w) return NULL;
  for (const char *c = id; c < e; c++) {
    if (c >= id_end && isspace((unsigned char)*c)) {
      if (o > w && o[-1] != ' ' && o[-1] != '<' && c + 1 < e && c[1] != '>' &&
          !isspace((unsigned char)c[1]))
        *o++ = ' ';
      continue;
    }
    *o++ = *c;
  }
  *o = '\0';
  return w;
}

/* The parameter types joined by ", ": what tells overloads apart. Caller frees. */
static char *param_types(const sig_kernel *k) {
  size_t n = 1;
  for (int i = 0; i < k->nparams; i++) n += strlen(k->params[i].type) + 2;
  char *t = malloc(n);
  if (!t) return NULL;
  t[0] = '\0';
  for (int i = 0; i < k->nparams; i++) {
    if (i) strcat(t, ", ");
    strcat(t, k->params[i].type);
  }
  return t;
}

/* fmt and its arguments formatted into a new string; NULL out of memory. Caller frees. */
static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s) {
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  return s;
}

/* Kernels that share a qualified name are overloads: each is renamed "k(float *)" and looked
 * up as "(void(*)(float *))k", since NVRTC cannot resolve a bare overloaded name. One whose
 * parameters could not be read keeps its name, and NVRTC's failure to find it is reported. */
static int name_overloads(sig_kernel *k, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j && !k[i].is_template && strcmp(k[i].name, k[j].name) == 0) k[i].overloaded = 1;
  for (int i = 0; i < n; i++) {
    if (!k[i].overloaded || k[i].nparams < 0) continue;
    char *types = param_types(&k[i]);
    if (!types) return -1;
    char *name = str_printf("%s(%s)", k[i].name, types);
    char *expr = str_printf("(void(*)(%s))%s", types, k[i].name);
    free(types);
    if (!name || !expr) {
      free(name);
      free(expr);
      return -1;
    }
    free(k[i].name);
    free(k[i].expr);
    k[i].name = name;
    k[i].expr = expr;
  }
  return 0;
}

/* Is k the same kernel as one already in out[0..n) (a declaration, then its definition)? */
static int seen_before(const sig_kernel *out, int n, const sig_kernel *k) {
  for (int i = 0; i < n; i++) {
    if (strcmp(out[i].name, k->name) != 0 || out[i].nparams != k->nparams) continue;
    int same = 1;
    for (int j = 0; j < k->nparams && same; j++)
      same = strcmp(out[i].params[j].type, k->params[j].type) == 0;
    if (same) return 1;
  }
  return 0;
}

/* The '(' that opens the parameter list of the __global__ at p: past the attributes written
 * between __global__ and the name, each with its balanced argument: __launch_bounds__(...),
 * __cluster_dims__(...), __maxnreg__(N), __attribute__((...)), [[...]]. */
static const char *params_open(const char *s, const char *p) {
  for (const char *c = p; *c; c++) {
    if (c[0] == '[' && c[1] == '[') {
      const char *shut = match_brackets(c);
      if (!shut) return NULL;
      c = shut;
    } else if (*c == '(') {
      if (!is_attr_paren(s, c)) return c;
      const char *shut = match_paren(c);
      if (!shut) return NULL;
      c = shut;
    } else if (*c == ';' || *c == '{') {
      return NULL; /* "__global__" used some other way: no parameter list follows */
    }
  }
  return NULL;
}

static void sig_free_fields(sig_kernel *k) {
  free(k->name);
  free(k->expr);
  free(k->params);
  lay_table_free(&k->lay);
}

/* Is p's type one the element types already say everything about? */
static int fully_typed(const sig_param *p) {
  if (p->kind == SIG_POINTER) /* void * and char *: any bytes, as C allows */
    return p->dtype >= 0 || p->stars > 1 || !strcmp(p->base, "void") || !strcmp(p->base, "char");
  return p->kind != SIG_UNKNOWN;
}

/* What the source s (blanked) says of each parameter's type beyond the element types: a typedef
 * or `using` alias followed ("real *" is "float *"), and the layout of a struct or vector type
 * taken by value or pointed at (p->lay), or why there is none. -1 out of memory. */
static int resolve_types(const char *s, sig_kernel *k) {
  for (int i = 0; i < k->nparams; i++) {
    sig_param *p = &k->params[i];
    if (fully_typed(p)) continue;
    char real[64];
    int more = 0;
    if (lay_alias(s, p->base, real, sizeof real, &more)) {
      snprintf(p->base, sizeof p->base, "%s", real);
      p->stars += more;
      if (p->stars) {
        p->kind = SIG_POINTER;
        p->dtype = p->stars == 1 ? pointee_dtype(real) : -1;
      } else {
        p->kind = scalar_kind(real, &p->dtype);
      }
      if (fully_typed(p)) continue;
    }
    p->lay = lay_type(s, p->base, &k->lay, p->lay_why, sizeof p->lay_why);
    if (p->lay < 0 && strstr(p->lay_why, "out of host memory")) return -1;
    const lay_node *root = p->lay >= 0 ? &k->lay.nodes[p->lay] : NULL;
    if (root && (root->kind == LAY_SCALAR || root->kind == LAY_BOOL)) { /* an enum: its integer */
      if (p->stars == 1) p->dtype = root->kind == LAY_SCALAR ? root->dtype : DT_U8;
      if (!p->stars) p->kind = root->kind == LAY_BOOL ? SIG_BOOL : SIG_INT;
      if (!p->stars && root->kind == LAY_SCALAR) p->dtype = root->dtype;
    } else if (p->kind == SIG_UNKNOWN && p->lay >= 0) {
      p->kind = SIG_AGGREGATE;
    }
  }
  return 0;
}

/* Reads the kernel whose __global__ is at p into k, its types looked up in `types` (s, then the
 * headers'); 1 read, 0 not a kernel, -1 out of memory. */
static int read_kernel(const char *s, const char *types, const char *p, sig_kernel *k) {
  memset(k, 0, sizeof *k);
  const char *open = params_open(s, p);
  if (!open) return 0;
  const char *e = open, *b = NULL;
  while (e > p && isspace((unsigned char)e[-1])) e--;
  char *word = kernel_word(p, e, &b);
  if (!word) return b ? -1 : 0;
  char ns[512];
  ns_prefix(s, p, ns, sizeof ns);
  k->name = str_printf("%s%s", ns, word);
  free(word);
  if (!k->name || !(k->expr = strdup(k->name))) return -1;
  k->is_template = preceded_by_template(s, p);
  const char *close = match_paren(open);
  k->nparams = -1;
  if (close && parse_params(open, close, k)) return -1;
  if (close && resolve_types(types, k)) return -1;
  return 1;
}

int sig_same_name(const char *a, const char *b) {
  for (;; a++, b++) {
    while (*a == ' ') a++;
    while (*b == ' ') b++;
    if (*a != *b) return 0;
    if (!*a) return 1;
  }
}

void sig_free(sig_kernel *k, int n) {
  for (int i = 0; k && i < n; i++) sig_free_fields(&k[i]);
  free(k);
}

/* The text types are looked up in: the blanked source s, then the blanked headers (so that the
 * source's own definition of a name is the one found first). s itself when there are none. */
static char *type_text(const char *s, const char *headers) {
  if (!headers || !*headers) return (char *)s;
  char *h = blank_noise(headers);
  size_t ns = strlen(s), nh = h ? strlen(h) : 0;
  char *t = h ? malloc(ns + nh + 2) : NULL;
  if (t) {
    memcpy(t, s, ns);
    t[ns] = '\n';
    memcpy(t + ns + 1, h, nh + 1);
  }
  free(h);
  return t;
}

int sig_find_kernels(const char *src, sig_kernel **out) {
  return sig_find_kernels_with(src, NULL, out);
}

int sig_find_kernels_with(const char *src, const char *headers, sig_kernel **out) {
  *out = NULL;
  char *s = blank_noise(src);
  char *types = s ? type_text(s, headers) : NULL;
  int n = 0, cap = 8, rc = 0;
  sig_kernel *ks = types ? malloc(sizeof *ks * (size_t)cap) : NULL;
  if (!ks) rc = -1;
  for (const char *p = s; rc >= 0 && (p = strstr(p, "__global__")); p += 10) {
    if (!word_at(s, p, "__global__")) continue;
    if (n == cap) {
      sig_kernel *grown = realloc(ks, sizeof *ks * (size_t)(cap *= 2));
      if (!grown) {
        rc = -1;
        break;
      }
      ks = grown;
    }
    rc = read_kernel(s, types, p, &ks[n]);
    /* not a kernel, a failure, or a declaration of one already read: drop what was read */
    if (rc <= 0 || seen_before(ks, n, &ks[n])) sig_free_fields(&ks[n]);
    else n++;
  }
  if (types != s) free(types);
  free(s);
  if (rc < 0 || name_overloads(ks, n) < 0) {
    sig_free(ks, n);
    return -1;
  }
  *out = ks;
  return n;
}

const char *sig_param_text(const sig_param *p, char *buf, size_t len) {
  const char *in = strstr(p->type, "(*"); /* float (*)[4] is float (*m)[4] */
  const char *shut = in ? strchr(in, ')') : NULL;
  if (shut && p->name[0]) {
    snprintf(buf, len, "%.*s%s%s", (int)(shut - p->type), p->type, p->name, shut);
    return buf;
  }
  size_t n = strlen(p->type);
  int glued = n == 0 || p->type[n - 1] == '*' || !p->name[0]; /* "float *a", "int" */
  snprintf(buf, len, "%s%s%s", p->type, glued ? "" : " ", p->name);
  return buf;
}

/* A signature longer than buf (a kernel of 300 parameters) ends in "...)" to say so. */
void sig_format(const sig_kernel *k, char *buf, unsigned len) {
  /* an overload's name carries its parameter types: "over(int *)" shows as "over(int *a)" */
  const char *paren = k->overloaded ? strchr(k->name, '(') : NULL;
  int base = paren ? (int)(paren - k->name) : (int)strlen(k->name);
  int w = snprintf(buf, len, "%.*s(", base, k->name);
  for (int i = 0; i < k->nparams && w > 0 && (unsigned)w < len; i++) {
    char param[SIG_PARAM_TEXT];
    w += snprintf(buf + w, len - (unsigned)w, "%s%s", i ? ", " : "",
                  sig_param_text(&k->params[i], param, sizeof param));
  }
  if (w > 0 && (unsigned)w < len) w += snprintf(buf + w, len - (unsigned)w, ")");
  if ((w < 0 || (unsigned)w >= len) && len > 5) memcpy(buf + len - 5, "...)", 5);
}

/* One template parameter's text (n bytes at p), as an argument that fits it. */
static const char *template_arg(const char *p, size_t n) {
  while (n && isspace((unsigned char)*p)) p++, n--;
  if ((n >= 8 && strncmp(p, "typename", 8) == 0) || (n >= 5 && strncmp(p, "class", 5) == 0))
    return "float";
  if (n >= 4 && strncmp(p, "bool", 4) == 0) return "true";
  return "16";
}

/* The "template <...>" that ends just before `at` (only blanks between), its '<' in *open and
 * its closing '>' returned; NULL when there is none. */
static const char *template_before(const char *src, const char *at, const char **open) {
  const char *p = at;
  while (p > src && isspace((unsigned char)p[-1])) p--;
  if (p == src || p[-1] != '>') return NULL;
  const char *close = p - 1;
  int depth = 0;
  for (const char *q = close; q >= src; q--) {
    if (*q == '>') depth++;
    else if (*q == '<' && --depth == 0) {
      const char *t = q;
      while (t > src && isspace((unsigned char)t[-1])) t--;
      if (t - src >= 8 && strncmp(t - 8, "template", 8) == 0) {
        *open = q;
        return close;
      }
      return NULL;
    }
  }
  return NULL;
}

void sig_template_example(const char *src, const char *name, char *out, size_t cap) {
  snprintf(out, cap, "float");
  size_t nl = strlen(name);
  for (const char *g = src; (g = strstr(g, "__global__")); g += 10) {
    const char *q = g + 10;
    const char *paren = strchr(q, '(');
    if (!paren) return;
    const char *e = paren;
    while (e > q && isspace((unsigned char)e[-1])) e--;
    if ((size_t)(e - q) < nl || strncmp(e - nl, name, nl) != 0) continue;
    const char *open, *close = template_before(src, g, &open);
    if (!close) continue;
    size_t o = 0;
    out[0] = '\0';
    int depth = 0;
    const char *start = open + 1;
    for (const char *p = open + 1; p <= close; p++) {
      if (*p == '<' || *p == '(') depth++;
      else if ((*p == '>' || *p == ')') && p != close) depth--;
      if ((*p == ',' && depth == 0) || p == close) {
        const char *a = template_arg(start, (size_t)(p - start));
        o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, "%s%s", o ? ", " : "", a);
        start = p + 1;
      }
    }
    return;
  }
}

/* ---- instantiating a template by name -------------------------------------------------- */

#define TPARAM_NAME 64

/* Words that can end an unnamed template parameter's declaration: never its name. */
static int is_type_keyword(const char *w) {
  static const char *const kw[] = {"typename", "class", "int", "unsigned", "signed", "char",
                                   "short", "long", "bool", "size_t", "auto", NULL};
  for (int i = 0; kw[i]; i++)
    if (strcmp(w, kw[i]) == 0) return 1;
  return 0;
}

/* The names of the parameters of the "template <...>" before the __global__ at p in the
 * blanked source s, into names (at most max; "" for an unnamed one). Their count; -1 when
 * there is no such list, or it holds a pack or a template template parameter, whose arguments
 * this reader does not substitute. */
static int template_params(const char *s, const char *p, char names[][TPARAM_NAME], int max) {
  const char *close = skip_back_attrs(s, p);
  if (close == s || close[-1] != '>') return -1;
  const char *open = --close;
  for (int depth = 0; open >= s; open--) {
    if (*open == '>') depth++;
    else if (*open == '<' && --depth == 0) break;
  }
  if (open < s) return -1;
  int n = 0, depth = 0;
  const char *start = open + 1, *eq = NULL;
  for (const char *c = open + 1; c <= close; c++) {
    if (c < close && (*c == '<' || *c == '(' || *c == '[')) depth++;
    else if (c < close && (*c == '>' || *c == ')' || *c == ']')) depth--;
    else if (*c == '=' && depth == 0 && !eq) eq = c;
    if ((*c != ',' || depth != 0) && c != close) continue;
    const char *e = eq ? eq : c;
    while (e > start && isspace((unsigned char)e[-1])) e--;
    const char *w = e;
    while (w > start && is_ident(w[-1])) w--;
    const char *first = skip_space(start, e);
    if (first == e) break; /* "template <>": a specialization, no parameters */
    for (const char *q = start; q + 3 <= e; q++)
      if (strncmp(q, "...", 3) == 0) return -1;
    if (word_at(s, first, "template") || n == max || (size_t)(e - w) >= TPARAM_NAME) return -1;
    snprintf(names[n], TPARAM_NAME, "%.*s", (int)(e - w), w);
    if (w == first || is_type_keyword(names[n])) names[n][0] = '\0'; /* unnamed */
    n++;
    start = c + 1;
    eq = NULL;
  }
  return n;
}

/* text with each whole identifier that names a template parameter replaced by its argument,
 * into out (cap bytes); -1 when it does not fit. A name after "::" or "." is a member's, kept. */
static int substitute(const char *text, char names[][TPARAM_NAME], char args[][TMPL_ARG_CAP],
                      int n, char *out, size_t cap) {
  size_t o = 0;
  for (const char *c = text; *c;) {
    const char *w = c;
    while (is_ident(*c)) c++;
    const char *put = w;
    size_t len = (size_t)(c - w);
    if (len == 0) {
      len = 1;
      c++;
    } else if (!isdigit((unsigned char)*w) && !(w > text && (w[-1] == ':' || w[-1] == '.'))) {
      for (int i = 0; i < n; i++)
        if (names[i][0] && strlen(names[i]) == len && strncmp(w, names[i], len) == 0) {
          put = args[i];
          len = strlen(args[i]);
          break;
        }
    }
    if (o + len + 3 >= cap) return -1;
    int spaced = put != w; /* kept apart from a word beside it: "unsigned int n", not "intn" */
    if (spaced && o && is_ident(out[o - 1])) out[o++] = ' ';
    memcpy(out + o, put, len);
    o += len;
    if (spaced && is_ident(*c)) out[o++] = ' ';
  }
  out[o] = '\0';
  return 0;
}

/* Fills out from the template tk (read from s, its __global__ at p) for args. 1, 0, -1. */
static int instantiate(const char *s, const char *types, const char *p, const sig_kernel *tk,
                       char args[][TMPL_ARG_CAP], int nargs, const char *name, sig_kernel *out) {
  char names[TMPL_MAX_ARGS][TPARAM_NAME];
  if (template_params(s, p, names, TMPL_MAX_ARGS) != nargs) return 0;
  memset(out, 0, sizeof *out);
  out->nparams = tk->nparams;
  out->name = strdup(name);
  out->expr = strdup(name);
  out->params = calloc((size_t)tk->nparams + 1, sizeof *out->params);
  if (!out->name || !out->expr || !out->params) return -1;
  for (int i = 0; i < tk->nparams; i++) {
    char text[SIG_PARAM_TEXT], real[256];
    sig_param_text(&tk->params[i], text, sizeof text);
    if (substitute(text, names, args, nargs, real, sizeof real) != 0) return 0;
    parse_param(real, strlen(real), &out->params[i]);
  }
  return resolve_types(types, out) ? -1 : 1;
}

void sig_free_one(sig_kernel *k) {
  sig_free_fields(k);
  memset(k, 0, sizeof *k);
}

int sig_instantiate(const char *src, const char *headers, const char *name, const char *lowered,
                    int nparams, sig_kernel *out) {
  char args[TMPL_MAX_ARGS][TMPL_ARG_CAP], base[512];
  memset(out, 0, sizeof *out);
  int nargs = tmpl_args_decode(lowered, args, TMPL_MAX_ARGS);
  size_t bl = strcspn(name, "<");
  if (nargs < 0 || bl >= sizeof base || !name[bl]) return 0;
  snprintf(base, sizeof base, "%.*s", (int)bl, name);
  char *s = blank_noise(src);
  char *types = s ? type_text(s, headers) : NULL;
  int rc = types ? 0 : -1;
  for (const char *p = s; rc == 0 && p && (p = strstr(p, "__global__")); p += 10) {
    sig_kernel tk;
    if (!word_at(s, p, "__global__")) continue;
    int r = read_kernel(s, types, p, &tk);
    if (r < 0) rc = -1;
    if (r == 1 && tk.is_template && tk.nparams >= 0 && sig_same_name(tk.name, base) &&
        (nparams < 0 || tk.nparams == nparams)) {
      rc = instantiate(s, types, p, &tk, args, nargs, name, out);
      if (rc == 0) sig_free_one(out);
    }
    sig_free_fields(&tk); /* what a read that stopped half-way allocated too */
  }
  if (rc < 0) sig_free_one(out);
  if (types != s) free(types);
  free(s);
  return rc;
}

/* ---- one instantiation, spelt two ways --------------------------------------------------- */

#define INSTANCE_MAX 1024 /* longer names are compared as they are spelt */

/* The value of an integer literal or bool (n bytes at p) in *v: 1, or 0 when it is none. */
static int int_literal(const char *p, size_t n, long long *v) {
  char t[64], *end;
  if (n == 0 || n >= sizeof t) return 0;
  memcpy(t, p, n);
  t[n] = '\0';
  if (!strcmp(t, "true") || !strcmp(t, "false")) return *v = t[0] == 't', 1;
  if (!isdigit((unsigned char)t[t[0] == '-']) ) return 0;
  *v = strtoll(t, &end, 0);
  while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
  return *end == '\0';
}

/* C's integer keywords met so far in a type, in whatever order they came. */
typedef struct int_words { int longs, is_unsigned, is_signed, is_short, is_char, any; } int_words;

/* The one spelling of the integer type w names ("long unsigned int": "unsigned long"). */
static const char *int_name(const int_words *w) {
  if (w->is_char) return w->is_unsigned ? "unsigned char" : w->is_signed ? "signed char" : "char";
  if (w->is_short) return w->is_unsigned ? "unsigned short" : "short";
  if (w->longs >= 2) return w->is_unsigned ? "unsigned long long" : "long long";
  if (w->longs) return w->is_unsigned ? "unsigned long" : "long";
  return w->is_unsigned ? "unsigned int" : "int";
}

/* Appends len bytes of w to out (o bytes used, cap), a space before it only between two
 * words. -1 when it does not fit. */
static int put_word(char *out, size_t *o, size_t cap, const char *w, size_t len) {
  if (*o + len + 2 >= cap) return -1;
  if (*o && is_ident(out[*o - 1]) && is_ident(*w)) out[(*o)++] = ' ';
  memcpy(out + *o, w, len);
  *o += len;
  out[*o] = '\0';
  return 0;
}

/* A type's text (n bytes at p) in one spelling: C's integer keywords in one order
 * ("unsigned long long int" and "long long unsigned" are "unsigned long long"), no spaces but
 * between two words. Into out (cap); -1 when it does not fit. */
static int canonical_type(const char *p, size_t n, char *out, size_t cap) {
  size_t o = 0;
  int_words iw = {0};
  out[0] = '\0';
  for (const char *c = p, *e = p + n; c <= e;) {
    if (c < e && isspace((unsigned char)*c)) {
      c++;
      continue;
    }
    const char *w = c;
    while (c < e && is_ident(*c)) c++;
    size_t len = (size_t)(c - w);
    if (len == 0 && c < e) c++, len = 1;
    int *flag = len == 4 && !strncmp(w, "long", 4)       ? &iw.longs
                : len == 8 && !strncmp(w, "unsigned", 8) ? &iw.is_unsigned
                : len == 6 && !strncmp(w, "signed", 6)   ? &iw.is_signed
                : len == 5 && !strncmp(w, "short", 5)    ? &iw.is_short
                : len == 4 && !strncmp(w, "char", 4)     ? &iw.is_char
                : len == 3 && !strncmp(w, "int", 3)      ? &iw.any
                                                         : NULL;
    if (flag) {
      *flag += 1;
      iw.any = 1;
      continue;
    }
    if (iw.any) { /* the integer type these words made, before this word */
      const char *t = int_name(&iw);
      if (put_word(out, &o, cap, t, strlen(t))) return -1;
      memset(&iw, 0, sizeof iw);
    }
    if (c >= e && len == 0) break;
    if (put_word(out, &o, cap, w, len)) return -1;
  }
  return 0;
}

/* The template arguments of name, after its first '<': each one's start and length, at most
 * max; their count, or -1 when name has no balanced <...> ending it. *base_len: the bytes
 * before the '<'. */
static int split_args(const char *name, const char **at, size_t *len, int max, size_t *base_len) {
  const char *lt = strchr(name, '<');
  if (!lt) return -1;
  *base_len = (size_t)(lt - name);
  int n = 0, depth = 0;
  const char *start = lt + 1;
  for (const char *c = lt; *c; c++) {
    if (*c == '<' || *c == '(') depth++;
    else if (*c == '>' || *c == ')') depth--;
    if ((*c == ',' && depth == 1) || (*c == '>' && depth == 0)) {
      if (n == max) return -1;
      at[n] = start;
      len[n++] = (size_t)(c - start);
      start = c + 1;
      if (*c == '>') return *skip_space(c + 1, c + 1 + strlen(c + 1)) ? -1 : n;
    }
  }
  return -1;
}

int sig_same_instance(const char *a, const char *b) {
  const char *aa[TMPL_MAX_ARGS], *ba[TMPL_MAX_ARGS];
  size_t al[TMPL_MAX_ARGS], bl[TMPL_MAX_ARGS], abase, bbase;
  if (strlen(a) > INSTANCE_MAX || strlen(b) > INSTANCE_MAX) return 0;
  int n = split_args(a, aa, al, TMPL_MAX_ARGS, &abase);
  if (n < 0 || split_args(b, ba, bl, TMPL_MAX_ARGS, &bbase) != n) return 0;
  char x[INSTANCE_MAX + 1], y[INSTANCE_MAX + 1];
  snprintf(x, sizeof x, "%.*s", (int)abase, a);
  snprintf(y, sizeof y, "%.*s", (int)bbase, b);
  if (!sig_same_name(x, y)) return 0;
  for (int i = 0; i < n; i++) {
    const char *p = skip_space(aa[i], aa[i] + al[i]), *q = skip_space(ba[i], ba[i] + bl[i]);
    size_t pl = al[i] - (size_t)(p - aa[i]), ql = bl[i] - (size_t)(q - ba[i]);
    while (pl && isspace((unsigned char)p[pl - 1])) pl--;
    while (ql && isspace((unsigned char)q[ql - 1])) ql--;
    long long u, v;
    int pi = int_literal(p, pl, &u), qi = int_literal(q, ql, &v);
    if (pi || qi) {
      if (!pi || !qi || u != v) return 0;
      continue;
    }
    if (canonical_type(p, pl, x, sizeof x) || canonical_type(q, ql, y, sizeof y) ||
        strcmp(x, y) != 0)
      return 0;
  }
  return 1;
}
