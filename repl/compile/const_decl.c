/* const_decl.c: a __constant__ variable's element type, read from the source.
 *
 * Stance: a small tokenizer, not a C++ parser. A declaration runs from the token after the
 * previous ';', '{' or '}' (or a directive's line end) to the next ';', '=' or '['; within it
 * the words other than qualifiers are the type followed by the name. That reads every form a
 * table of numbers or structs takes (`static __constant__ float c[16];`, `__constant__ const
 * int n = 4;`, `float __constant__ k[R * 2 + 1];`) and gives up, rather than guess, on the
 * rest (several names in one declaration with a pointer, a template type): the caller then
 * checks sizes only. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "const_decl.h"

#define MAX_WORDS 16

typedef struct decl {
  const char *w[MAX_WORDS]; /* the declaration's words so far */
  size_t len[MAX_WORDS];
  int n;
  int constant;             /* one of them is __constant__ */
  int other;                /* it holds a token that no such declaration holds ('*', '(', ...) */
} decl;

static int word_is(const char *w, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(w, lit, n) == 0;
}

/* Qualifiers and storage classes: neither the type nor the name. */
static int is_qualifier(const char *w, size_t n) {
  static const char *const q[] = {"__constant__", "__device__", "static", "const", "volatile",
                                  "extern", "constexpr", "__managed__", "inline", NULL};
  for (int i = 0; q[i]; i++)
    if (word_is(w, n, q[i])) return 1;
  return 0;
}

/* The declaration ended: if it is a __constant__ named `name`, its type into type. 1 found. */
static int finish(const decl *d, const char *name, char *type, size_t cap) {
  if (!d->constant || d->other || d->n < 2) return 0;
  if (!word_is(d->w[d->n - 1], d->len[d->n - 1], name)) return 0;
  size_t o = 0;
  type[0] = '\0';
  for (int i = 0; i < d->n - 1; i++) {
    if (is_qualifier(d->w[i], d->len[i])) continue;
    if (o + d->len[i] + 2 > cap) return 0;
    if (o) type[o++] = ' ';
    memcpy(type + o, d->w[i], d->len[i]);
    o += d->len[i];
    type[o] = '\0';
  }
  return o > 0;
}

/* Skips a comment, string or character literal at p; returns the character after it (p when
 * none is there). */
static const char *skip_literal(const char *p) {
  if (p[0] == '/' && p[1] == '/') {
    while (*p && *p != '\n') p++;
    return p;
  }
  if (p[0] == '/' && p[1] == '*') {
    const char *e = strstr(p + 2, "*/");
    return e ? e + 2 : p + strlen(p);
  }
  if (*p == '"' || *p == '\'') {
    char q = *p++;
    while (*p && *p != q && *p != '\n') p += (*p == '\\' && p[1]) ? 2 : 1;
    return *p == q ? p + 1 : p;
  }
  return p;
}

int const_decl_type(const char *src, const char *name, char *type, size_t cap) {
  decl d = {0};
  int skipping = 0; /* after '=' or '[': the rest is no part of the type, up to ';' */
  int bol = 1;
  for (const char *p = src; *p;) {
    const char *q = skip_literal(p);
    if (q != p) {
      p = q;
      continue;
    }
    char c = *p;
    if (bol && c == '#') { /* a directive: its line is no declaration */
      while (*p && *p != '\n') p += (*p == '\\' && p[1] == '\n') ? 2 : 1;
      memset(&d, 0, sizeof d);
      continue;
    }
    if (c == '\n') bol = 1;
    else if (!isspace((unsigned char)c)) bol = 0;
    if (isalpha((unsigned char)c) || c == '_') {
      const char *w = p;
      while (isalnum((unsigned char)*p) || *p == '_') p++;
      if (skipping) continue;
      if (word_is(w, (size_t)(p - w), "__constant__")) d.constant = 1;
      if (d.n < MAX_WORDS) {
        d.w[d.n] = w;
        d.len[d.n++] = (size_t)(p - w);
      } else {
        d.other = 1;
      }
      continue;
    }
    if (c == ';' || c == '{' || c == '}') {
      if (!skipping || c == ';') {
        if (finish(&d, name, type, cap)) return 0;
        memset(&d, 0, sizeof d);
        skipping = 0;
      }
    } else if ((c == '=' || c == '[') && !skipping) {
      if (finish(&d, name, type, cap)) return 0;
      skipping = 1;
    } else if (!isspace((unsigned char)c) && !skipping && c != ':') {
      d.other = 1; /* '*', '(', '<', ',', a number ...: not a plain declaration */
    }
    p++;
  }
  return -1;
}
