/* host_aside.c: a .cu file's device code without its host code, for NVRTC, which compiles
 * device code only ("host functions are not allowed in JIT mode").
 *
 * Stance: a tokenizer and a reader of namespace-scope declarations, not a C++ parser. CUDA says
 * which functions are host ones in the declaration itself (no __global__ nor __device__, or
 * __host__ alone), so a declaration's words up to its body decide, and a body is skipped by its
 * braces. Text set aside becomes blanks, newlines kept, so that NVRTC's messages name the file's
 * own lines. Turned down: preprocessing first (NVRTC's preprocessor is not callable, and macros
 * would name nothing the learner wrote), and stand-in headers for helper_cuda.h and the C
 * library on the include path (the include lines would then read files the grader's check must
 * vet, and the host functions that use them are set aside anyway). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_aside.h"

#define MAX_IF_DEPTH 64

typedef enum { T_EOF, T_IDENT, T_STRING, T_PUNCT, T_OTHER } tok_kind;

typedef struct tok {
  tok_kind kind;
  size_t at, end; /* its bytes in the source */
} tok;

/* A function declared without a body, whose declaration is set aside too when a function of
 * its name is (reduction's `template void reduce<int>(...);`). */
typedef struct proto {
  size_t at, end;
  tok name;
} proto;

typedef struct reader {
  const char *s;
  size_t n, i;
  int bol;               /* only blanks since the last newline: a '#' starts a directive */
  unsigned char *keep;   /* per byte: 0 to blank */
  unsigned char *dir;    /* per byte: 1 on a directive's line (kept whatever is blanked) */
  int if_depth;          /* #if nesting */
  int skip_from;         /* depth whose later branch is skipped, or 0 */
  host_aside_result *out;
  proto *protos;         /* unqualified declarations of functions, for host_aside's last step */
  int nprotos;
  char *why;
  size_t cap;
  int failed;
} reader;

/* Records why the text cannot be read (the first reason only); fmt takes the line. */
static void fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(reader *r, const char *fmt, ...) {
  if (!r->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, r->cap, fmt, ap);
    va_end(ap);
  }
  r->failed = 1;
}

static long line_of(const reader *r, size_t at) {
  long line = 1;
  for (size_t i = 0; i < at && i < r->n; i++) line += r->s[i] == '\n';
  return line;
}

/* Records a span set aside, blanking bytes at..end-1 but for directive lines. */
static void set_aside(reader *r, size_t at, size_t end, const char *what, size_t wlen) {
  host_aside_result *o = r->out;
  aside_span *grown = realloc(o->spans, sizeof *grown * ((size_t)o->n + 1));
  if (!grown) {
    fail(r, "out of memory at line %ld", line_of(r, at));
    return;
  }
  o->spans = grown;
  aside_span *sp = &o->spans[o->n++];
  sp->first = line_of(r, at);
  sp->last = line_of(r, end ? end - 1 : 0);
  if (wlen > HOST_ASIDE_WHAT - 1) wlen = HOST_ASIDE_WHAT - 1;
  memcpy(sp->what, what, wlen);
  sp->what[wlen] = '\0';
  for (size_t i = at; i < end; i++) r->keep[i] = 0;
}

/* The offset just past the "*" "/" that ends a block comment whose text starts at i; n + 1 when
 * none does (a NUL byte does not end the search: the text's length does). */
static size_t comment_end(const reader *r, size_t i) {
  for (; i + 1 < r->n; i++)
    if (r->s[i] == '*' && r->s[i + 1] == '/') return i + 2;
  return r->n + 1;
}

/* The offset just past a splice-aware line starting at i (its '\n', or the end). Comments in
 * a directive that run past the line end it where they end. */
static size_t line_end(const reader *r, size_t i) {
  while (i < r->n && r->s[i] != '\n') {
    if (r->s[i] == '\\' && i + 1 < r->n && r->s[i + 1] == '\n') i += 2;
    else if (r->s[i] == '\\' && i + 2 < r->n && r->s[i + 1] == '\r' && r->s[i + 2] == '\n') i += 3;
    else if (r->s[i] == '/' && i + 1 < r->n && r->s[i + 1] == '*') {
      i = comment_end(r, i + 2);
      if (i > r->n) i = r->n;
    } else i++;
  }
  return i;
}

static int word_is(const char *w, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(w, lit, n) == 0;
}

/* A directive from r->i ('#' or '%:') to its line's end: keeps its bytes and follows #if
 * nesting (the branches after an #if's first are skipped). */
static void directive(reader *r) {
  size_t at = r->i, end = line_end(r, r->i);
  const char *p = r->s + at + (r->s[at] == '%' ? 2 : 1), *e = r->s + end;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  const char *w = p;
  while (p < e && (isalnum((unsigned char)*p) || *p == '_')) p++;
  size_t wn = (size_t)(p - w);
  for (size_t i = at; i < end; i++) r->dir[i] = 1;
  r->i = end;
  if (word_is(w, wn, "if") || word_is(w, wn, "ifdef") || word_is(w, wn, "ifndef")) {
    if (++r->if_depth > MAX_IF_DEPTH) fail(r, "#if nested too deep at line %ld", line_of(r, at));
  } else if (word_is(w, wn, "elif") || word_is(w, wn, "else") || word_is(w, wn, "elifdef") ||
             word_is(w, wn, "elifndef")) {
    if (!r->skip_from) r->skip_from = r->if_depth;
  } else if (word_is(w, wn, "endif")) {
    if (r->skip_from == r->if_depth) r->skip_from = 0;
    if (r->if_depth > 0) r->if_depth--;
  }
}

/* Skips a literal opening at r->i: a string (with an encoding prefix and raw strings), or a
 * character constant. Returns 0 when it never ends. */
static int skip_literal(reader *r) {
  const char *s = r->s;
  size_t i = r->i;
  while (s[i] != '"' && s[i] != '\'') i++; /* past a prefix: u8, L, R ... */
  if (s[i] == '"' && i > r->i && s[i - 1] == 'R') { /* R"delim( ... )delim" */
    size_t d = i + 1;
    while (d < r->n && s[d] != '(' && d - i < 17) d++;
    if (d >= r->n || s[d] != '(') return 0;
    size_t dl = d - i - 1; /* the delimiter: s[i + 1 .. d - 1] */
    for (size_t j = d + 1; j + dl + 1 < r->n; j++)
      if (s[j] == ')' && memcmp(s + j + 1, s + i + 1, dl) == 0 && s[j + 1 + dl] == '"') {
        r->i = j + dl + 2;
        return 1;
      }
    return 0;
  }
  char q = s[i];
  for (i++; i < r->n && s[i] != q; i++) {
    if (s[i] == '\\') i++;
    else if (s[i] == '\n') return 0;
  }
  if (i >= r->n) return 0;
  r->i = i + 1;
  return 1;
}

/* Is there a literal at i: a quote, or an encoding prefix (u8, u, U, L, R and their raw forms)
 * followed by one? */
static int literal_at(const reader *r, size_t i) {
  const char *s = r->s;
  size_t j = i;
  while (j < r->n && j - i < 3 && (s[j] == 'u' || s[j] == '8' || s[j] == 'U' || s[j] == 'L' ||
                                   s[j] == 'R'))
    j++;
  return j < r->n && (s[j] == '"' || (s[j] == '\'' && (j == i || s[j - 1] != 'R')));
}

/* The next token, skipping blanks, comments, splices and directives (and the code of an #if's
 * later branches). */
static tok next(reader *r) {
  const char *s = r->s;
  while (r->i < r->n && !r->failed) {
    char c = s[r->i];
    if (c == '\n') { r->bol = 1; r->i++; continue; }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') { r->i++; continue; }
    if (c == '\\' && r->i + 1 < r->n && (s[r->i + 1] == '\n' || s[r->i + 1] == '\r')) {
      r->i += 2;
      continue;
    }
    if (c == '/' && r->i + 1 < r->n && s[r->i + 1] == '/') { r->i = line_end(r, r->i); continue; }
    if (c == '/' && r->i + 1 < r->n && s[r->i + 1] == '*') {
      size_t e = comment_end(r, r->i + 2);
      if (e > r->n) {
        fail(r, "a comment that begins on line %ld never ends", line_of(r, r->i));
        break;
      }
      r->i = e;
      continue;
    }
    if (r->bol && (c == '#' || (c == '%' && r->i + 1 < r->n && s[r->i + 1] == ':'))) {
      directive(r);
      continue;
    }
    r->bol = 0;
    tok t = {T_OTHER, r->i, r->i + 1};
    if (literal_at(r, r->i)) {
      if (!skip_literal(r)) { fail(r, "a string or character that begins on line %ld never "
                                      "ends", line_of(r, t.at)); break; }
      t.kind = T_STRING;
    } else if (isalpha((unsigned char)c) || c == '_') {
      while (r->i < r->n && (isalnum((unsigned char)s[r->i]) || s[r->i] == '_')) r->i++;
      t.kind = T_IDENT;
    } else if (isdigit((unsigned char)c)) { /* a number: 1'000 is one, so is 1e-5 */
      while (r->i < r->n && (isalnum((unsigned char)s[r->i]) || s[r->i] == '.' ||
                             s[r->i] == '\'' || ((s[r->i] == '-' || s[r->i] == '+') &&
                                                 strchr("eEpP", s[r->i - 1]))))
        r->i++;
    } else {
      r->i++;
      t.kind = T_PUNCT;
    }
    t.end = r->i;
    if (r->skip_from) continue; /* an #if's later branch */
    return t;
  }
  return (tok){T_EOF, r->n, r->n};
}

static int punct(const reader *r, tok t, char c) { return t.kind == T_PUNCT && r->s[t.at] == c; }

/* Skips a balanced group opened by the token just read (open), to just past its closing
 * token. Returns that token's end, or 0 when it never closes. Braces, parentheses and
 * brackets nest together, so a lambda in a default argument does not end a body early. */
static size_t skip_group(reader *r, char open) {
  char stack[256];
  int depth = 0;
  stack[depth++] = open;
  for (tok t = next(r); t.kind != T_EOF; t = next(r)) {
    if (t.kind != T_PUNCT) continue;
    char c = r->s[t.at];
    if (c == '{' || c == '(' || c == '[') {
      if (depth == (int)sizeof stack) return 0;
      stack[depth++] = c;
    } else if (c == '}' || c == ')' || c == ']') {
      char want = stack[depth - 1] == '{' ? '}' : stack[depth - 1] == '(' ? ')' : ']';
      if (c != want) return 0;
      if (--depth == 0) return t.end;
    }
  }
  return 0;
}

/* What a namespace-scope declaration has shown so far. */
typedef struct decl {
  size_t at;            /* its first token; SIZE_MAX before one */
  int ntok;             /* tokens seen */
  int global, device, host; /* __global__, __device__, __host__ among its words */
  int classkey;         /* struct, class, union or enum before any parenthesis */
  int paren;            /* a parenthesis not after '=': a function's parameters */
  int assign;           /* an '=' (an initializer follows) */
  int extern_c;         /* extern "C" alone so far */
  int is_extern;        /* extern: a variable's declaration, defined elsewhere */
  int is_namespace;     /* namespace ... */
  int space;            /* __constant__, __shared__ or __managed__: a device variable */
  int constant;         /* const or constexpr: a constant device code may read */
  int indirect;         /* a '*' or '&' (the const is the pointee's) */
  int other;            /* typedef, using, extern, friend, static_assert, asm: no definition */
  int after_word;       /* the last token was a word (not `operator`): a '<' opens arguments */
  tok name;             /* a function's: the word before its first parenthesis */
  tok var;              /* a variable's: the word before its '=', '[' or ';' */
  tok last_word;        /* the last word seen */
} decl;

static void decl_reset(decl *d) {
  memset(d, 0, sizeof *d);
  d->at = (size_t)-1;
}

static void set_aside_named(reader *r, size_t at, size_t end, const char *kind, tok name) {
  char what[HOST_ASIDE_WHAT];
  int n = snprintf(what, sizeof what, "%s %.*s", kind, (int)(name.end - name.at), r->s + name.at);
  set_aside(r, at, end, what, n < 0 ? 0 : (size_t)n);
}

/* The declaration ends with its body or its ';' at end: sets it aside when it is a host
 * function (defined: unqualified or __host__ alone; declared: __host__ alone) or a host
 * variable (no memory space, and not a constant that device code may read, as `const int N =
 * 16;` is); keeps an unqualified function's declaration for host_aside's last step. */
static void decl_end(reader *r, decl *d, size_t end, int defined) {
  int device = d->global || d->device || d->space;
  if (d->at == (size_t)-1 || d->classkey || d->other || d->is_namespace || device) {
  } else if (d->paren && !d->assign && (defined || d->host)) {
    set_aside_named(r, d->at, end, "function", d->name);
  } else if (d->paren && !d->assign) {
    proto *grown = realloc(r->protos, sizeof *grown * ((size_t)r->nprotos + 1));
    if (!grown) fail(r, "out of memory at line %ld", line_of(r, d->at));
    else (r->protos = grown)[r->nprotos++] = (proto){d->at, end, d->name};
  } else if (!defined && !d->is_extern && d->ntok > 2 && (!d->constant || d->indirect)) {
    set_aside_named(r, d->at, end, "variable", d->var.end ? d->var : d->last_word);
  }
  decl_reset(d);
}

/* Reads declarations up to the end of the text (opened 0) or the '}' closing the namespace or
 * extern "C" block whose '{' is on line `opened`. */
static void scope(reader *r, long opened, int depth) {
  int nested = opened > 0;
  decl d;
  decl_reset(&d);
  for (tok t = next(r); !r->failed; t = next(r)) {
    if (t.kind == T_EOF) {
      if (nested)
        fail(r, "the '{' of the namespace or extern \"C\" block on line %ld is never closed",
             opened);
      return;
    }
    if (d.at == (size_t)-1) d.at = t.at;
    d.ntok++;
    const char *w = r->s + t.at;
    size_t wn = t.end - t.at;
    if (punct(r, t, '}')) {
      if (nested) return;
      fail(r, "a '}' on line %ld closes nothing", line_of(r, t.at));
    } else if (punct(r, t, ';')) {
      decl_end(r, &d, t.end, 0);
    } else if (punct(r, t, '{')) {
      if (d.is_namespace || (d.extern_c && d.ntok == 3)) {
        if (depth >= MAX_IF_DEPTH) { fail(r, "namespaces nested too deep at line %ld",
                                          line_of(r, t.at)); return; }
        decl_reset(&d);
        scope(r, line_of(r, t.at), depth + 1);
        continue;
      }
      size_t end = skip_group(r, '{');
      if (!end) { fail(r, "the '{' on line %ld is never closed", line_of(r, t.at)); return; }
      if (d.paren && !d.assign && !d.classkey) decl_end(r, &d, end, 1);
    } else if (punct(r, t, '(') || punct(r, t, '[')) {
      if (punct(r, t, '(') && !d.paren && !d.assign) {
        d.paren = 1;
        d.name = d.last_word;
      }
      if (punct(r, t, '[') && !d.paren && !d.assign && !d.var.end) d.var = d.last_word;
      if (!skip_group(r, w[0])) {
        fail(r, "the bracket on line %ld is never closed", line_of(r, t.at));
        return;
      }
    } else if (punct(r, t, '=')) {
      if (!d.assign && !d.paren && !d.var.end) d.var = d.last_word;
      d.assign = 1;
    } else if (punct(r, t, '*') || punct(r, t, '&')) {
      d.indirect = 1;
    } else if (punct(r, t, '<') && d.after_word && !d.paren && !d.assign) {
      for (int a = 1; a > 0;) { /* template <class T>, reduce<int>: no class key, no name */
        tok u = next(r);
        if (u.kind == T_EOF) { fail(r, "a template's '<' on line %ld is never closed",
                                    line_of(r, t.at)); return; }
        if (punct(r, u, '<')) a++;
        else if (punct(r, u, '>')) a--;
        else if (punct(r, u, '(')) skip_group(r, '(');
      }
    } else if (t.kind == T_IDENT) {
      if (word_is(w, wn, "__global__")) d.global = 1;
      else if (word_is(w, wn, "__device__")) d.device = 1;
      else if (word_is(w, wn, "__host__")) d.host = 1;
      else if (word_is(w, wn, "namespace")) d.is_namespace = 1;
      else if (word_is(w, wn, "__constant__") || word_is(w, wn, "__shared__") ||
               word_is(w, wn, "__managed__"))
        d.space = 1;
      else if (word_is(w, wn, "const") || word_is(w, wn, "constexpr")) d.constant = 1;
      else if (word_is(w, wn, "typedef") || word_is(w, wn, "using") ||
               word_is(w, wn, "friend") || word_is(w, wn, "static_assert") ||
               word_is(w, wn, "asm"))
        d.other = 1;
      else if (word_is(w, wn, "extern")) {
        d.is_extern = 1;
        d.extern_c = d.ntok == 1;
      } else if (!d.paren && (word_is(w, wn, "struct") || word_is(w, wn, "class") ||
                              word_is(w, wn, "union") || word_is(w, wn, "enum")))
        d.classkey = 1;
      d.last_word = t;
    } else if (t.kind == T_STRING && d.extern_c && d.ntok == 2) {
      d.extern_c = 1; /* extern "C": a block may follow */
    }
    d.after_word = t.kind == T_IDENT && !word_is(w, wn, "operator");
  }
}

static int by_line(const void *a, const void *b) {
  long x = ((const aside_span *)a)->first, y = ((const aside_span *)b)->first;
  return (x > y) - (x < y);
}

int host_aside(const char *src, size_t len, host_aside_result *out, char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  reader r = {src, len, 0, 1, calloc(len + 1, 1), calloc(len + 1, 1), 0, 0, out, NULL, 0,
              why, cap, 0};
  char *text = malloc(len + 1);
  if (!r.keep || !r.dir || !text) {
    snprintf(why, cap, "out of memory");
    free(r.keep), free(r.dir), free(text);
    return -1;
  }
  memset(r.keep, 1, len);
  scope(&r, 0, 0);
  for (int i = 0; i < r.nprotos && !r.failed; i++) { /* declarations of what was set aside */
    proto *p = &r.protos[i];
    size_t nl = p->name.end - p->name.at;
    for (int j = 0, n = out->n; j < n; j++) {
      const char *w = out->spans[j].what;
      if (strncmp(w, "function ", 9) == 0 && strlen(w + 9) == nl &&
          memcmp(w + 9, src + p->name.at, nl) == 0) {
        set_aside_named(&r, p->at, p->end, "declaration of", p->name);
        break;
      }
    }
  }
  free(r.protos);
  if (out->n > 1) qsort(out->spans, (size_t)out->n, sizeof *out->spans, by_line);
  for (size_t i = 0; i < len; i++)
    text[i] = r.keep[i] || r.dir[i] || src[i] == '\n' || src[i] == '\r' ? src[i] : ' ';
  text[len] = '\0';
  free(r.keep);
  free(r.dir);
  if (r.failed) {
    free(text);
    host_aside_free(out);
    return -1;
  }
  out->text = text;
  out->len = len;
  return 0;
}

void host_aside_free(host_aside_result *r) {
  free(r->text);
  free(r->spans);
  memset(r, 0, sizeof *r);
}
