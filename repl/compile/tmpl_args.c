/* tmpl_args.c: a kernel template instantiation's template arguments, decoded from its
 * Itanium-mangled name.
 *
 * Stance: the smallest demangler that serves launch checks, not a general one. It reads the
 * function's name (`_Z` then a plain or nested name, `N2ns7combineE`) and the template
 * argument list that follows it, and stops there: the parameter types after it are the
 * template's, which the source gives. Types it reads: the built-in ones, class names (CUDA's
 * float4 and __half are classes), names in namespaces, class templates with their arguments,
 * pointers, references and const/volatile, and substitutions (S_, S0_, St) of those; integer
 * and bool literals for non-type parameters. Anything else (a pack, an expression, an array
 * or function type, a name longer than TMPL_ARG_CAP) makes it answer -1: the caller then
 * leaves the parameters unchecked rather than check them against a guess. Every read is
 * bounded by the name's own NUL. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tmpl_args.h"

#define MAX_SUBS 64     /* substitution candidates kept; a reference past them fails */
#define MAX_DEPTH 16    /* template arguments nested in template arguments, at most */
#define MAX_TYPE_DEPTH 64 /* a type inside a type (pointer to, const of, ...), at most */

/* The decoder's state: where it is, and the substitution candidates seen so far. */
typedef struct dm {
  const char *p;                     /* the next character of the mangled name */
  char subs[MAX_SUBS][TMPL_ARG_CAP]; /* candidates for S_, S0_, ..., in order */
  int nsubs;
  int depth;                         /* template argument lists open */
  int type_depth;                    /* types open: each a stack frame of type_of's */
} dm;

static int type(dm *d, char *out);

/* Adds a substitution candidate; past MAX_SUBS it is dropped (a reference to it fails). */
static void add_sub(dm *d, const char *t) {
  if (d->nsubs < MAX_SUBS) snprintf(d->subs[d->nsubs++], TMPL_ARG_CAP, "%s", t);
}

/* out = a b c, or -1 when it does not fit. */
static int join(char *out, const char *a, const char *b, const char *c) {
  char t[TMPL_ARG_CAP];
  int n = snprintf(t, sizeof t, "%s%s%s", a, b, c);
  if (n < 0 || n >= (int)sizeof t) return -1;
  memcpy(out, t, (size_t)n + 1);
  return 0;
}

static const char *builtin(char c) {
  switch (c) {
  case 'v': return "void";
  case 'w': return "wchar_t";
  case 'b': return "bool";
  case 'c': return "char";
  case 'a': return "signed char";
  case 'h': return "unsigned char";
  case 's': return "short";
  case 't': return "unsigned short";
  case 'i': return "int";
  case 'j': return "unsigned int";
  case 'l': return "long";
  case 'm': return "unsigned long";
  case 'x': return "long long";
  case 'y': return "unsigned long long";
  case 'n': return "__int128";
  case 'o': return "unsigned __int128";
  case 'f': return "float";
  case 'd': return "double";
  case 'e': return "long double";
  case 'g': return "__float128";
  default: return NULL;
  }
}

/* <length><identifier>, as "6float4". */
static int source_name(dm *d, char *out) {
  if (!isdigit((unsigned char)*d->p)) return -1;
  size_t n = 0;
  while (isdigit((unsigned char)*d->p) && n < TMPL_ARG_CAP) n = n * 10 + (size_t)(*d->p++ - '0');
  if (n == 0 || n >= TMPL_ARG_CAP || strnlen(d->p, n) < n) return -1;
  memcpy(out, d->p, n);
  out[n] = '\0';
  d->p += n;
  return 0;
}

/* S_ (the first candidate), S<base 36>_ (candidate n + 1): its text into out. */
static int substitution(dm *d, char *out) {
  d->p++; /* 'S' */
  size_t i = 0;
  if (*d->p != '_') {
    size_t v = 0;
    while (isdigit((unsigned char)*d->p) || isupper((unsigned char)*d->p)) {
      v = v * 36 + (size_t)(isdigit((unsigned char)*d->p) ? *d->p - '0' : *d->p - 'A' + 10);
      if (v > MAX_SUBS) return -1;
      d->p++;
    }
    i = v + 1;
  }
  if (*d->p != '_' || i >= (size_t)d->nsubs) return -1; /* Sa, Ss, ... or one not kept */
  d->p++;
  memcpy(out, d->subs[i], strlen(d->subs[i]) + 1);
  return 0;
}

/* An integer or bool literal, L<type><value>E, as "3", "-1", "true". */
static int literal(dm *d, char *out) {
  d->p++; /* 'L' */
  char t = *d->p;
  if (!builtin(t) || t == 'v' || t == 'f' || t == 'd' || t == 'e' || t == 'g') return -1;
  d->p++;
  int neg = *d->p == 'n';
  d->p += neg;
  const char *v = d->p;
  while (isdigit((unsigned char)*d->p)) d->p++;
  size_t n = (size_t)(d->p - v);
  if (n == 0 || n > 40 || *d->p != 'E') return -1;
  d->p++;
  if (t == 'b') return join(out, v[0] == '0' ? "false" : "true", "", "");
  return snprintf(out, TMPL_ARG_CAP, "%s%.*s", neg ? "-" : "", (int)n, v) < TMPL_ARG_CAP ? 0 : -1;
}

/* A template argument list I...E: each argument's text into list (n of them, at most max), or
 * with list NULL joined as "<a, b>" into out. */
static int arg_list(dm *d, char (*list)[TMPL_ARG_CAP], int max, char *out) {
  if (*d->p != 'I' || ++d->depth > MAX_DEPTH) return -1;
  d->p++;
  int n = 0;
  char joined[TMPL_ARG_CAP] = "<";
  while (*d->p != 'E') {
    char a[TMPL_ARG_CAP];
    if (*d->p == 'L' ? literal(d, a) : (*d->p == 'X' || *d->p == 'J') ? -1 : type(d, a))
      return -1;
    if (list && n == max) return -1;
    if (list) memcpy(list[n], a, strlen(a) + 1);
    else if (join(joined, joined, n ? ", " : "", a)) return -1;
    n++;
  }
  d->p++;
  d->depth--;
  if (list) return n;
  size_t l = strlen(joined);
  return join(out, joined, l && joined[l - 1] == '>' ? " >" : ">", "");
}

/* A name in namespaces (or a class), N...E: "ns::Vec<float>". Each prefix is a candidate. */
static int nested(dm *d, char *out) {
  d->p++; /* 'N' */
  char prefix[TMPL_ARG_CAP] = "";
  while (*d->p != 'E') {
    char part[TMPL_ARG_CAP];
    if (isdigit((unsigned char)*d->p)) {
      if (source_name(d, part) || join(prefix, prefix, prefix[0] ? "::" : "", part)) return -1;
    } else if (*d->p == 'S' && !prefix[0]) {
      if (d->p[1] == 't') {
        d->p += 2;
        if (source_name(d, part) || join(prefix, "std::", part, "")) return -1;
      } else if (substitution(d, prefix)) {
        return -1;
      }
      if (*d->p != 'I') continue; /* a substitution is no new candidate */
    } else if (*d->p == 'I' && prefix[0]) {
      if (arg_list(d, NULL, 0, part) || join(prefix, prefix, part, "")) return -1;
    } else {
      return -1; /* CV-qualified members, operators, constructors: no argument of a kernel's */
    }
    add_sub(d, prefix);
  }
  d->p++;
  return join(out, prefix, "", "");
}

/* One type, as C spells it, into out (type below bounds how deep they nest). */
static int type_of(dm *d, char *out) {
  const char *b = builtin(*d->p);
  char inner[TMPL_ARG_CAP];
  if (b) {
    d->p++;
    return join(out, b, "", "");
  }
  switch (*d->p) {
  case 'P': case 'R': case 'O': {
    const char *how = *d->p == 'P' ? " *" : *d->p == 'R' ? " &" : " &&";
    d->p++;
    if (type(d, inner) || join(out, inner, how, "")) return -1;
    break;
  }
  case 'K': case 'V': case 'r': {
    int is_const = 0, is_volatile = 0;
    for (;; d->p++) {
      if (*d->p == 'K') is_const = 1;
      else if (*d->p == 'V') is_volatile = 1;
      else if (*d->p != 'r') break;
    }
    if (type(d, inner)) return -1;
    const char *q = is_const && is_volatile ? "const volatile" : is_const ? "const" : "volatile";
    size_t n = strlen(inner);
    int ptr = n && (inner[n - 1] == '*' || inner[n - 1] == '&'); /* float *const */
    if (ptr ? join(out, inner, "", q) : join(out, q, " ", inner)) return -1;
    break;
  }
  case 'N':
    return nested(d, out);
  case 'S':
    if (d->p[1] == 't') {
      d->p += 2;
      if (source_name(d, inner) || join(out, "std::", inner, "")) return -1;
    } else if (substitution(d, out)) {
      return -1;
    } else if (*d->p != 'I') {
      return 0; /* a substitution is no new candidate */
    }
    if (*d->p == 'I') {
      add_sub(d, out);
      if (arg_list(d, NULL, 0, inner) || join(out, out, inner, "")) return -1;
    }
    break;
  default:
    if (!isdigit((unsigned char)*d->p) || source_name(d, out)) return -1; /* D, A, F, T, ... */
    if (*d->p == 'I') {
      add_sub(d, out);
      if (arg_list(d, NULL, 0, inner) || join(out, out, inner, "")) return -1;
    }
  }
  add_sub(d, out);
  return 0;
}

/* type_of, no deeper than MAX_TYPE_DEPTH: a name of a million 'P's (a pointer to a pointer
 * to ...) is refused, not a million stack frames. */
static int type(dm *d, char *out) {
  if (++d->type_depth > MAX_TYPE_DEPTH) return -1;
  int rc = type_of(d, out);
  d->type_depth--;
  return rc;
}

int tmpl_args_decode(const char *mangled, char args[][TMPL_ARG_CAP], int max) {
  static dm zero;
  dm d = zero;
  if (strncmp(mangled, "_Z", 2) != 0) return -1;
  d.p = mangled + 2;
  if (*d.p == 'L') d.p++; /* internal linkage: a static kernel */
  char name[TMPL_ARG_CAP], part[TMPL_ARG_CAP];
  if (isdigit((unsigned char)*d.p)) { /* an unscoped template: its name is a candidate */
    if (source_name(&d, name)) return -1;
    add_sub(&d, name);
    return arg_list(&d, args, max, NULL);
  }
  if (*d.p != 'N') return -1;
  d.p++;
  name[0] = '\0';
  while (isdigit((unsigned char)*d.p)) { /* ns::...::kernel, each prefix a candidate */
    if (source_name(&d, part) || join(name, name, name[0] ? "::" : "", part)) return -1;
    add_sub(&d, name);
  }
  int n = name[0] ? arg_list(&d, args, max, NULL) : -1;
  return n >= 0 && *d.p == 'E' ? n : -1; /* a kernel's arguments end its nested name */
}
