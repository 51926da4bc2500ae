/* kernel_sig.c: a small scanner over CUDA C source, not a parser: it blanks out comments,
 * strings and preprocessor lines, then reads the declarator after each __global__. That is
 * enough for the kernels learners write; anything it cannot read leaves nparams at -1 and the
 * launch falls back to the sizes in the PTX, so a scanner miss costs a check, never a launch. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernel_sig.h"

/* A copy of src with comments, string/char literals and # lines replaced by spaces (same
 * length, so offsets agree). Caller frees. */
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
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && s[i + 1] == '\n') s[i++] = ' ';
        s[i++] = ' ';
      }
    }
  }
  return s;
}

static int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Is the word at p (of length len) a whole identifier? */
static int word_at(const char *s, const char *p, const char *w) {
  size_t len = strlen(w);
  return strncmp(p, w, len) == 0 && !is_ident(p[len]) && (p == s || !is_ident(p[-1]));
}

/* Removes qualifiers that do not change what a pointer points at, squeezes spaces. */
static void tidy_type(char *t, int *is_const) {
  static const char *drop[] = {"__restrict__", "__restrict", "restrict", "volatile", "const",
                               "__global__", "struct", NULL};
  char out[128] = "";
  *is_const = 0;
  for (char *tok = strtok(t, " \t\n\r"); tok; tok = strtok(NULL, " \t\n\r")) {
    int skip = 0;
    for (int i = 0; drop[i]; i++)
      if (strcmp(tok, drop[i]) == 0) skip = 1, *is_const |= strcmp(tok, "const") == 0;
    if (skip) continue;
    if (out[0] && strlen(out) + strlen(tok) + 2 < sizeof out) strcat(out, " ");
    if (strlen(out) + strlen(tok) + 1 < sizeof out) strcat(out, tok);
  }
  strcpy(t, out);
}

static sig_kind scalar_kind(const char *base, int *dtype) {
  static const char *ints[] = {"int", "unsigned", "unsigned int", "long", "long long",
                               "unsigned long", "unsigned long long", "size_t", "short",
                               "unsigned short", "char", "unsigned char", "signed char",
                               "int32_t", "uint32_t", "int64_t", "uint64_t", "uint8_t",
                               "int8_t", "long int", "long long int", "int16_t", "uint16_t",
                               "short int", "unsigned short int", NULL};
  *dtype = dtype_from_c_type(base);
  if (strcmp(base, "float") == 0 || strcmp(base, "double") == 0) return SIG_FLOAT;
  if (*dtype == DT_F16 || *dtype == DT_BF16) return SIG_FLOAT; /* a __half passed by value */
  if (strcmp(base, "bool") == 0) return SIG_BOOL;
  for (int i = 0; ints[i]; i++)
    if (strcmp(base, ints[i]) == 0) return SIG_INT;
  return SIG_UNKNOWN;
}

/* The dtype of the array a pointer to `type` takes. A __half2 * walks an f16 array two elements
 * at a time, so it takes f16 (and __nv_bfloat162 * bf16); these are kept out of dtype.c's
 * names because cuda.array(n, "__half2") would then make n halves, not n pairs. */
static int pointee_dtype(const char *type) {
  if (strcmp(type, "__half2") == 0 || strcmp(type, "half2") == 0) return DT_F16;
  if (strcmp(type, "__nv_bfloat162") == 0 || strcmp(type, "nv_bfloat162") == 0) return DT_BF16;
  return dtype_from_c_type(type);
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
  char *name = end;
  while (name > buf && is_ident(name[-1])) name--;
  memset(p, 0, sizeof *p);
  p->dtype = -1;
  int stars = 0;
  for (char *c = buf; *c; c++)
    if (*c == '*' || *c == '&') stars++;
  /* A trailing identifier that is part of the type (an unnamed "float *" has none). */
  int named = name < end && name > buf && (isspace((unsigned char)name[-1]) || name[-1] == '*' || name[-1] == '&');
  if (named) {
    snprintf(p->name, sizeof p->name, "%s", name);
    *name = '\0';
  }
  char type[128];
  snprintf(type, sizeof type, "%s", buf);
  for (char *c = type; *c; c++)
    if (*c == '*' || *c == '&') *c = ' ';
  int is_const = 0;
  tidy_type(type, &is_const);
  snprintf(p->type, sizeof p->type, "%s%s%s", is_const ? "const " : "", type, stars ? " *" : "");
  if (stars) {
    p->kind = SIG_POINTER;
    p->dtype = pointee_dtype(type);
    p->is_const = is_const;
  } else {
    p->kind = scalar_kind(type, &p->dtype);
  }
}

static void parse_params(const char *open, const char *close, sig_kernel *k) {
  k->nparams = 0;
  const char *p = open + 1;
  while (isspace((unsigned char)*p)) p++;
  if (p == close || (strncmp(p, "void", 4) == 0 && !is_ident(p[4]))) {
    const char *q = p + (p == close ? 0 : 4);
    while (isspace((unsigned char)*q)) q++;
    if (q == close) return;
  }
  int depth = 0;
  const char *start = open + 1;
  for (const char *c = open + 1; c <= close; c++) {
    if (*c == '(' || *c == '<' || *c == '[') depth++;
    else if ((*c == ')' || *c == '>' || *c == ']') && c != close) depth--;
    if ((*c == ',' && depth == 0) || c == close) {
      if (k->nparams == SIG_MAX_PARAMS) {
        k->nparams = -1;
        return;
      }
      parse_param(start, (size_t)(c - start), &k->params[k->nparams++]);
      start = c + 1;
    }
  }
}

static const char *match_paren(const char *open) {
  int depth = 0;
  for (const char *c = open; *c; c++) {
    if (*c == '(') depth++;
    else if (*c == ')' && --depth == 0) return c;
  }
  return NULL;
}

/* Is there a "template <...>" just before position p (ignoring extern "C" and whitespace)? */
static int preceded_by_template(const char *s, const char *p) {
  const char *q = p;
  while (q > s && isspace((unsigned char)q[-1])) q--;
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

int sig_find_kernels(const char *src, sig_kernel *out, int max) {
  char *s = blank_noise(src);
  if (!s) return 0;
  int n = 0;
  for (const char *p = s; (p = strstr(p, "__global__")) && n < max; p += 10) {
    if (!word_at(s, p, "__global__")) continue;
    /* The name is the identifier before the first '(' that is not __launch_bounds__'s. */
    const char *open = strchr(p, '(');
    while (open) {
      const char *id = open;
      while (id > p && isspace((unsigned char)id[-1])) id--;
      if (id - 17 < p || !word_at(s, id - 17, "__launch_bounds__")) break;
      const char *lb_close = match_paren(open);
      open = lb_close ? strchr(lb_close + 1, '(') : NULL;
    }
    if (!open) break;
    const char *e = open;
    while (e > p && isspace((unsigned char)e[-1])) e--;
    const char *b = e;
    while (b > p && is_ident(b[-1])) b--;
    if (b == e) continue;
    sig_kernel *k = &out[n];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%.*s", (int)(e - b), b);
    const char *g = p;
    k->is_template = preceded_by_template(s, g);
    const char *close = match_paren(open);
    if (!close) {
      k->nparams = -1;
    } else {
      parse_params(open, close, k);
    }
    /* A declaration followed by its definition names the same kernel twice: keep one. */
    int dup = 0;
    for (int i = 0; i < n; i++) dup |= strcmp(out[i].name, k->name) == 0;
    if (!dup) n++;
  }
  free(s);
  return n;
}

void sig_format(const sig_kernel *k, char *buf, unsigned len) {
  int w = snprintf(buf, len, "%s(", k->name);
  for (int i = 0; i < k->nparams && w > 0 && (unsigned)w < len; i++)
    w += snprintf(buf + w, len - (unsigned)w, "%s%s%s%s", i ? ", " : "", k->params[i].type,
                  k->params[i].type[strlen(k->params[i].type) - 1] == '*' ? "" : " ",
                  k->params[i].name);
  if (w > 0 && (unsigned)w < len) snprintf(buf + w, len - (unsigned)w, ")");
}
