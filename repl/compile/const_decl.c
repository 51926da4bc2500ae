/* const_decl.c: a module-scope __constant__ or __device__ variable's element type, read from
 * the source.
 *
 * Stance: a small tokenizer, not a C++ parser. A declaration runs from the token after the
 * previous ';', '{' or '}' (or a directive's line end) to the next ';'. Its words up to the
 * first declarator's name, less qualifiers, are the type; each declarator after a ',' shares
 * it. A declarator's name is the word before its '=', '[', '{', ',' or ';', and what follows
 * that up to the next ',' outside brackets is its initializer or dimensions, never read. A '('
 * before the name makes the whole declaration a function's (or something else this reader
 * does not take); a '*' or '&' makes the declarator a pointer, whose type is answered as
 * unreadable ("int *"): neither is ever taken for a table of numbers. Braces are followed so
 * that only declarations at namespace scope count and "ns::x" finds the x of namespace ns,
 * not another x. A type word the source #defines, aliases with `using` or declares as a struct
 * is reported as unreadable rather than guessed at (`struct int32_t` is no i32); a typedef of
 * one word to a plain type is followed. On anything else this reader gives up rather than
 * guess, and the caller then checks sizes only. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "const_decl.h"

#define MAX_WORDS 16
#define MAX_SCOPES 64   /* braces deeper than this are followed by count only */
#define PATH_CAP 256    /* "a::b" of the enclosing namespaces */
#define TYPEDEF_HOPS 4  /* typedefs followed from one type to the next, at most */
#define LIST_TYPES 256  /* distinct types a listing follows typedefs of; the rest: unreadable */

/* What a scan looks for: a device variable, a typedef (or `using` alias) of a name, or every
 * device variable at namespace scope. */
enum { FIND_VAR, FIND_TYPEDEF, FIND_ALL };

/* The memory-space words, as bits of decl.space. */
enum { SPACE_CONSTANT = 1, SPACE_DEVICE = 2, SPACE_MANAGED = 4 };

/* What lies between braces, as far as namespace scope goes. */
enum { SCOPE_NS, SCOPE_LINKAGE, SCOPE_OTHER };

typedef struct decl {
  const char *w[MAX_WORDS]; /* the declaration's words so far, qualifiers included */
  size_t len[MAX_WORDS];
  int n;
  int space;                /* which of __constant__, __device__, __managed__ are among them:
                               SPACE_* bits */
  int is_typedef;           /* it begins with typedef */
  int is_using;             /* it begins with using */
  int dead;                 /* a token no variable declaration holds ('(', '<', ...) */
  int nspec;                /* the type's words: w[0..nspec-1]; -1 before the first name */
  int star_at;              /* words before the first declarator's '*' or '&', -1 if none */
  int first;                /* the current declarator's first word */
  int pointer;              /* the current declarator has a '*' or '&' */
  int skipping;             /* in a declarator's dimensions or initializer */
  int depth;                /* brackets open there */
} decl;

typedef struct scan {
  const char *path;         /* the namespaces wanted, "" at file scope */
  const char *name;         /* the unqualified name wanted */
  int mode;                 /* FIND_VAR or FIND_TYPEDEF */
  unsigned char kind[MAX_SCOPES];
  size_t path_at[MAX_SCOPES]; /* the length of cur before each namespace opened */
  unsigned char bad_at[MAX_SCOPES]; /* cur_bad then */
  int open;                 /* braces open */
  int others;               /* of which SCOPE_OTHER, or deeper than MAX_SCOPES */
  char cur[PATH_CAP];       /* the enclosing namespaces */
  int cur_bad;              /* cur did not fit: it matches nothing */
  int found;                /* 1 found, 2 found but its type is unreadable (a `using`) */
  int is_array;             /* what was found has dimensions */
  int space;                /* what was found: its decl.space */
  char *type;
  size_t cap;
  const_decl_var *list;     /* FIND_ALL: the variables so far (malloc'd), n of them, room cap */
  int nlist, caplist;
  int oom;                  /* FIND_ALL: the list could not grow */
} scan;

static int word_is(const char *w, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(w, lit, n) == 0;
}

/* Qualifiers and storage classes: neither the type nor the name. */
static int is_qualifier(const char *w, size_t n) {
  static const char *const q[] = {"__constant__", "__device__", "static", "const", "volatile",
                                  "extern", "constexpr", "__managed__", "inline", "register",
                                  "__restrict__", "typedef", NULL};
  for (int i = 0; q[i]; i++)
    if (word_is(w, n, q[i])) return 1;
  return 0;
}

/* Words followed by a parenthesised argument that says nothing of the type (alignment). */
static int is_attribute(const char *w, size_t n) {
  return word_is(w, n, "__align__") || word_is(w, n, "alignas") ||
         word_is(w, n, "__attribute__") || word_is(w, n, "__declspec");
}

/* Words that make a declaration no plain variable's. */
static int is_disqualifying(const char *w, size_t n) {
  return word_is(w, n, "template") || word_is(w, n, "operator") || word_is(w, n, "__global__") ||
         word_is(w, n, "__host__") || word_is(w, n, "__shared__") || word_is(w, n, "auto") ||
         word_is(w, n, "decltype") || word_is(w, n, "friend") || word_is(w, n, "return");
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

/* Skips white space and one balanced parenthesised group at p (an attribute's argument). */
static const char *skip_group(const char *p) {
  while (isspace((unsigned char)*p)) p++;
  if (*p != '(') return p;
  int depth = 0;
  while (*p) {
    const char *q = skip_literal(p);
    if (q != p) {
      p = q;
      continue;
    }
    if (*p == '(') depth++;
    else if (*p == ')' && --depth == 0) return p + 1;
    p++;
  }
  return p;
}

static int is_tag(const char *w, size_t n) {
  return word_is(w, n, "struct") || word_is(w, n, "class") || word_is(w, n, "union") ||
         word_is(w, n, "enum");
}

/* Whether d declares a struct, class, union or enum, of the name wanted or (s NULL) any. */
static int names_tag(const scan *s, const decl *d) {
  for (int i = 0; i + 1 < d->n; i++)
    if (is_tag(d->w[i], d->len[i]) && (!s || word_is(d->w[i + 1], d->len[i + 1], s->name)))
      return 1;
  return 0;
}

/* Whether declarations here are at the namespace scope wanted. */
static int in_wanted_scope(const scan *s) {
  return !s->others && !s->cur_bad && strcmp(s->cur, s->path) == 0;
}

/* Whether the declarator now ending, named by the last word, is the one wanted. */
static int wanted(const scan *s, const decl *d) {
  if (s->mode == FIND_ALL) /* any name, at any namespace scope but an anonymous one's */
    return !s->others && !s->cur_bad && d->space && !d->is_typedef && !d->is_using;
  if (!in_wanted_scope(s) || !word_is(d->w[d->n - 1], d->len[d->n - 1], s->name)) return 0;
  if (s->mode == FIND_TYPEDEF) return d->is_typedef || d->is_using;
  return d->space && !d->is_typedef && !d->is_using;
}

/* FIND_ALL: adds the variable d's current declarator names, of type s->type (found as
 * end_declarator says: 1 readable, 2 not), to the list. */
static void list_var(scan *s, const decl *d, int is_array) {
  if (s->nlist == s->caplist) {
    int cap = s->caplist ? 2 * s->caplist : 8;
    const_decl_var *g = cap > s->caplist ? realloc(s->list, sizeof *g * (size_t)cap) : NULL;
    if (!g) {
      s->oom = 1;
      return;
    }
    s->list = g;
    s->caplist = cap;
  }
  const_decl_var *v = &s->list[s->nlist];
  const char *w = d->w[d->n - 1];
  int len = (int)d->len[d->n - 1];
  if (snprintf(v->name, sizeof v->name, "%s%s%.*s", s->cur, s->cur[0] ? "::" : "", len, w) >=
      (int)sizeof v->name)
    return; /* a name too long to be asked for is not listed */
  memcpy(v->type, s->type, strlen(s->type) + 1);
  v->status = s->found == 1 ? 0 : 1;
  v->is_array = is_array;
  v->space = d->space & SPACE_MANAGED    ? CONST_DECL_MANAGED
             : d->space & SPACE_CONSTANT ? CONST_DECL_CONSTANT
                                         : CONST_DECL_DEVICE;
  s->nlist++;
}

/* The declarator now ending (at character `at`: '[' for one with dimensions): if it is the one
 * wanted, its type into s->type and 1; with FIND_ALL, each variable into the list and 0. */
static int end_declarator(scan *s, decl *d, char at) {
  if (s->mode == FIND_TYPEDEF && in_wanted_scope(s) && names_tag(s, d)) {
    s->found = 2; /* the learner's own struct of that name: no dtype, whatever it is called */
    return 1;
  }
  if (d->dead || d->n <= d->first) {
    d->dead = 1;
    return 0;
  }
  if (d->nspec < 0) d->nspec = d->star_at >= 0 ? d->star_at : d->n - 1;
  else if (d->n - d->first != 1) d->dead = 1; /* `int a, unsigned b`: not C */
  if (d->dead || !wanted(s, d)) return 0;
  if (d->is_using || (d->pointer && s->mode == FIND_TYPEDEF)) { /* alias, pointer typedef */
    s->found = 2;
    return 1;
  }
  size_t o = 0;
  s->type[0] = '\0';
  for (int i = 0; i < d->nspec; i++) {
    if (is_qualifier(d->w[i], d->len[i])) continue;
    if (o + d->len[i] + 2 > s->cap) return 0;
    if (o) s->type[o++] = ' ';
    memcpy(s->type + o, d->w[i], d->len[i]);
    o += d->len[i];
    s->type[o] = '\0';
  }
  if (o == 0) return 0;
  s->found = 1;
  s->is_array = at == '[';
  s->space = d->space;
  if (d->pointer) { /* a pointer variable: its type said, never read as numbers */
    if (o + 3 > s->cap) return 0;
    memcpy(s->type + o, " *", 3);
    s->found = 2;
  }
  if (s->mode != FIND_ALL) return 1;
  list_var(s, d, at == '[');
  return 0;
}

/* The next declarator of the same declaration begins. */
static void next_declarator(decl *d) {
  d->first = d->n;
  d->pointer = 0;
  d->skipping = 0;
  d->depth = 0;
}

/* A '{' outside any initializer: a namespace, a linkage block or anything else opens. */
static void open_scope(scan *s, const decl *d) {
  int kind = SCOPE_OTHER, i = 0;
  if (!d->dead && d->n >= 1 && word_is(d->w[0], d->len[0], "inline")) i = 1;
  if (!d->dead && d->n > i && word_is(d->w[i], d->len[i], "namespace")) kind = SCOPE_NS;
  else if (!d->dead && d->n == 1 && word_is(d->w[0], d->len[0], "extern")) kind = SCOPE_LINKAGE;
  if (s->open >= MAX_SCOPES) kind = SCOPE_OTHER; /* too deep to follow: no namespace scope */
  else {
    s->kind[s->open] = (unsigned char)kind;
    s->path_at[s->open] = strlen(s->cur);
    s->bad_at[s->open] = (unsigned char)s->cur_bad;
  }
  s->open++;
  if (kind == SCOPE_OTHER) s->others++;
  if (kind != SCOPE_NS) return;
  /* `namespace a::b {` names two; `namespace {` is anonymous: its variables have names of
   * their own in the PTX, so no path wanted matches it. */
  size_t o = strlen(s->cur);
  if (d->n == i + 1) s->cur_bad = 1;
  for (int k = i + 1; k < d->n; k++) {
    if (o + d->len[k] + 3 > sizeof s->cur) {
      s->cur_bad = 1;
      break;
    }
    if (o) {
      memcpy(s->cur + o, "::", 2);
      o += 2;
    }
    memcpy(s->cur + o, d->w[k], d->len[k]);
    o += d->len[k];
    s->cur[o] = '\0';
  }
}

/* A '}': what the matching '{' opened closes. */
static void close_scope(scan *s) {
  if (s->open == 0) return; /* a brace a macro opened */
  s->open--;
  if (s->open >= MAX_SCOPES || s->kind[s->open] == SCOPE_OTHER) {
    s->others--;
    return;
  }
  if (s->kind[s->open] == SCOPE_NS) {
    s->cur[s->path_at[s->open]] = '\0';
    s->cur_bad = s->bad_at[s->open];
  }
}

static void add_word(decl *d, const char *w, size_t n) {
  if (is_disqualifying(w, n)) d->dead = 1;
  if (word_is(w, n, "__constant__")) d->space |= SPACE_CONSTANT;
  if (word_is(w, n, "__device__")) d->space |= SPACE_DEVICE;
  if (word_is(w, n, "__managed__")) d->space |= SPACE_MANAGED;
  if (d->n == 0 && word_is(w, n, "typedef")) d->is_typedef = 1;
  if (d->n == 0 && word_is(w, n, "using")) d->is_using = 1;
  if (d->n < MAX_WORDS) {
    d->w[d->n] = w;
    d->len[d->n++] = n;
  } else {
    d->dead = 1;
  }
}

/* One scan of src for the declaration s wants. 1 found (s->found says how). */
static int run_scan(scan *s, const char *src) {
  decl d;
  memset(&d, 0, sizeof d);
  d.nspec = d.star_at = -1;
  int bol = 1;
  for (const char *p = src; *p;) {
    const char *q = skip_literal(p);
    if (*p == '\'' && p > src && isdigit((unsigned char)p[-1]) && isalnum((unsigned char)p[1]))
      q = p + 1; /* a digit separator, 1'000: no character constant begins */
    if (q != p) {
      p = q;
      continue;
    }
    char c = *p;
    if (bol && c == '#') { /* a directive: its line is no declaration */
      while (*p && *p != '\n') p += (*p == '\\' && p[1] == '\n') ? 2 : 1;
      memset(&d, 0, sizeof d);
      d.nspec = d.star_at = -1;
      continue;
    }
    if (c == '\n') bol = 1;
    else if (!isspace((unsigned char)c)) bol = 0;
    if (isalpha((unsigned char)c) || c == '_') {
      const char *w = p;
      while (isalnum((unsigned char)*p) || *p == '_') p++;
      if (d.skipping) continue;
      if (is_attribute(w, (size_t)(p - w))) {
        p = skip_group(p);
        continue;
      }
      add_word(&d, w, (size_t)(p - w));
      continue;
    }
    if (d.skipping && (c == '(' || c == '[' || c == '{')) d.depth++;
    if (d.skipping && (c == ')' || c == ']' || c == '}') && d.depth > 0) d.depth--;
    if (c == ';' || (c == '}' && !d.skipping)) {
      if (!d.skipping && end_declarator(s, &d, c)) return 1;
      if (c == '}') close_scope(s);
      memset(&d, 0, sizeof d);
      d.nspec = d.star_at = -1;
    } else if (c == '{' && !d.skipping) {
      /* `__device__ int x{5}` initialises x; any other brace opens a scope */
      if (s->mode == FIND_TYPEDEF && in_wanted_scope(s) && names_tag(s, &d)) {
        s->found = 2;
        return 1;
      }
      if (d.space && !d.dead && d.n > d.first && !names_tag(NULL, &d)) {
        if (end_declarator(s, &d, c)) return 1;
        d.skipping = 1;
        d.depth = 1;
        open_scope(s, &(decl){.dead = 1});
      } else {
        open_scope(s, &d);
        memset(&d, 0, sizeof d);
        d.nspec = d.star_at = -1;
      }
    } else if (c == '{' || c == '}') {
      if (c == '{') open_scope(s, &(decl){.dead = 1});
      else close_scope(s);
    } else if ((c == '=' || c == '[') && !d.skipping) {
      if (end_declarator(s, &d, c)) return 1;
      d.skipping = 1;
      d.depth = c == '[';
    } else if (c == ',' && !d.dead && (!d.skipping || d.depth == 0)) {
      if (!d.skipping && end_declarator(s, &d, c)) return 1;
      next_declarator(&d);
    } else if ((c == '*' || c == '&') && !d.skipping) {
      if (d.nspec < 0 && d.star_at < 0) d.star_at = d.n - d.first;
      d.pointer = 1;
    } else if (c == '\\' && p[1] == '\n') {
      p++; /* a line splice: white space */
    } else if (!isspace((unsigned char)c) && !d.skipping && c != ':') {
      d.dead = 1; /* '(', '<', a number, ...: not a plain variable's declaration */
    }
    p++;
  }
  return 0;
}

/* Whether src #defines the macro w (n bytes). */
static int macro_defined(const char *src, const char *w, size_t n) {
  for (const char *p = src; (p = strstr(p, "define")) != NULL; p += 6) {
    const char *b = p;
    while (b > src && (b[-1] == ' ' || b[-1] == '\t')) b--;
    if (b == src || b[-1] != '#') continue;
    const char *e = p + 6;
    if (*e != ' ' && *e != '\t') continue;
    while (*e == ' ' || *e == '\t') e++;
    if (strncmp(e, w, n) == 0 && !isalnum((unsigned char)e[n]) && e[n] != '_') return 1;
  }
  return 0;
}

/* Finds what s wants in src: 0 found and readable, 1 found and unreadable, -1 not found.
 * info, when not NULL, gets whether it has dimensions and its memory space. */
static int find(const char *src, const char *path, const char *name, int mode, char *type,
                size_t cap, const_decl_var *info) {
  scan s;
  memset(&s, 0, sizeof s);
  s.path = path;
  s.name = name;
  s.mode = mode;
  s.type = type;
  s.cap = cap;
  if (!run_scan(&s, src)) return -1;
  if (info) {
    info->is_array = s.is_array;
    info->space = s.space & SPACE_MANAGED    ? CONST_DECL_MANAGED
                  : s.space & SPACE_CONSTANT ? CONST_DECL_CONSTANT
                                             : CONST_DECL_DEVICE;
  }
  return s.found == 1 ? 0 : 1;
}

/* The type read for a variable in namespace path, type (cap bytes) as found, followed through
 * the source's typedefs: 0 readable, 1 not (see const_decl_type). A one-word type may be the
 * learner's own name for another: typedefs of it are followed, in the variable's namespace or
 * at file scope, and a macro, a `using` alias, a struct of that name or a chain longer than
 * TYPEDEF_HOPS is given up on, its meaning unseen (`typedef double int32_t;` makes int32_t no
 * i32). */
static int resolve(const char *src, const char *path, char *type, size_t cap) {
  for (int hop = 0; !strchr(type, ' '); hop++) {
    if (macro_defined(src, type, strlen(type))) return 1;
    char next[PATH_CAP];
    int t = find(src, path, type, FIND_TYPEDEF, next, sizeof next, NULL);
    if (t < 0 && path[0]) t = find(src, "", type, FIND_TYPEDEF, next, sizeof next, NULL);
    if (t < 0) return 0;
    if (t > 0 || hop == TYPEDEF_HOPS || strlen(next) >= cap) return 1;
    memcpy(type, next, strlen(next) + 1);
  }
  for (const char *w = type; *w;) { /* a word of a type of several, #defined */
    size_t n = strcspn(w, " ");
    if (macro_defined(src, w, n)) return 1;
    w += n + (w[n] == ' ');
  }
  return 0;
}

/* Splits "a::b::c" into its namespaces "a::b" and its name "c"; -1 when either is too long. */
static int split_name(const char *name, char *path, char *base) {
  const char *sep = NULL;
  for (const char *p = strstr(name, "::"); p; p = strstr(p + 2, "::")) sep = p;
  if (snprintf(base, PATH_CAP, "%s", sep ? sep + 2 : name) >= PATH_CAP ||
      snprintf(path, PATH_CAP, "%.*s", sep ? (int)(sep - name) : 0, name) >= PATH_CAP)
    return -1;
  return 0;
}

int const_decl_find(const char *src, const char *name, const_decl_var *out) {
  char path[PATH_CAP], base[PATH_CAP];
  memset(out, 0, sizeof *out);
  if (split_name(name, path, base) != 0 || strlen(name) >= sizeof out->name) return -1;
  memcpy(out->name, name, strlen(name) + 1);
  int r = find(src, path, base, FIND_VAR, out->type, sizeof out->type, out);
  if (r == 0) r = resolve(src, path, out->type, sizeof out->type);
  out->status = r;
  return r;
}

int const_decl_type(const char *src, const char *name, char *type, size_t cap) {
  const_decl_var v;
  int r = const_decl_find(src, name, &v);
  if (r < 0) return -1;
  if (strlen(v.type) >= cap) return -1;
  memcpy(type, v.type, strlen(v.type) + 1);
  return r;
}

int const_decl_list(const char *src, const_decl_var **out) {
  char type[sizeof (*out)->type];
  scan s;
  memset(&s, 0, sizeof s);
  s.path = s.name = "";
  s.mode = FIND_ALL;
  s.type = type;
  s.cap = sizeof type;
  run_scan(&s, src);
  if (s.oom) {
    free(s.list);
    *out = NULL;
    return -1;
  }
  /* Each distinct type (in its namespace) is followed once: a source of many variables of
   * few types costs few scans, and one of many types at most LIST_TYPES of them. */
  static const size_t room = sizeof type;
  struct seen { char path[PATH_CAP], raw[sizeof type], type[sizeof type]; int status; } *seen;
  seen = malloc(sizeof *seen * LIST_TYPES);
  int nseen = 0;
  for (int i = 0; i < s.nlist; i++) {
    const_decl_var *v = &s.list[i];
    char path[PATH_CAP], base[PATH_CAP];
    if (v->status != 0 || split_name(v->name, path, base) != 0) continue;
    int k = 0;
    while (k < nseen && (strcmp(seen[k].path, path) != 0 || strcmp(seen[k].raw, v->type) != 0))
      k++;
    if (k == nseen && (!seen || nseen == LIST_TYPES)) {
      v->status = 1; /* too many types to follow: read as bytes, never guessed at */
      continue;
    }
    if (k == nseen) {
      memcpy(seen[k].path, path, sizeof path);
      memcpy(seen[k].raw, v->type, room);
      seen[k].status = resolve(src, path, v->type, room);
      memcpy(seen[k].type, v->type, room);
      nseen++;
    }
    memcpy(v->type, seen[k].type, room);
    v->status = seen[k].status;
  }
  free(seen);
  *out = s.list;
  return s.nlist;
}
