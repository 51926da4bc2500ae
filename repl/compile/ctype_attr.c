/* ctype_attr.c: reads the attributes that change a struct's layout (alignas, __align__,
 * __attribute__((aligned, packed))) and follows #pragma pack through the source, for
 * ctype_layout.c.
 *
 * Stance: an attribute is either understood exactly or refused with its name. Ignoring one
 * the reader does not know would lay out a struct the compiler lays out otherwise, and for a
 * pointer's element no size check would catch it. So only attributes known to leave the layout
 * alone (unused, deprecated, maybe_unused, ...) pass unread. The rules for combining them are
 * NVRTC's, measured with sizeof/offsetof: alignas raises a member's alignment whatever the
 * packing; an aligned attribute raises it too but is capped by #pragma pack; packed and
 * #pragma pack lower only the alignment the member's type brings. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctype_attr.h"
#include "src_words.h"

#define PACK_STACK 16 /* #pragma pack(push) nesting followed; deeper is refused */

/* The ')' or ']' matching the opener at p, before e; NULL when unbalanced. */
static const char *match(const char *p, const char *e) {
  char open = *p, shut = open == '(' ? ')' : ']';
  int depth = 0;
  for (; p < e; p++) {
    if (*p == open) depth++;
    else if (*p == shut && --depth == 0) return p;
  }
  return NULL;
}

/* Is [b, e) the identifier w? */
static int is_word(const char *b, const char *e, const char *w) {
  return (size_t)(e - b) == strlen(w) && !strncmp(b, w, (size_t)(e - b));
}

/* The number [b, e) ("16", "0x10", "8u") into *v; 0, or -1 when it is not one. */
static int read_number(const char *b, const char *e, unsigned long long *v) {
  b = skip_space(b, e);
  while (e > b && isspace((unsigned char)e[-1])) e--;
  char num[32];
  if (b == e || !isdigit((unsigned char)*b) || (size_t)(e - b) >= sizeof num) return -1;
  memcpy(num, b, (size_t)(e - b));
  num[e - b] = '\0';
  char *end;
  *v = strtoull(num, &end, 0);
  while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
  return *end ? -1 : 0;
}

/* The alignment [b, e) says, into *v: 0 (alignas(0), which C++ ignores) or a power of two up to
 * LAY_MAX_ALIGN. -1 with why otherwise. */
static int read_alignment(const char *b, const char *e, size_t *v, const char *spelt,
                          const char *owner, char *why, size_t wl) {
  unsigned long long n;
  if (read_number(b, e, &n)) {
    snprintf(why, wl, "%s has %s(%.*s), an alignment this reader does not evaluate (it reads "
             "a number or a type there)", owner, spelt, (int)(e - b), b);
    return -1;
  }
  if ((n & (n - 1)) || n > LAY_MAX_ALIGN) {
    snprintf(why, wl, "%s has %s(%llu), which is not a power of two up to %d", owner, spelt, n,
             LAY_MAX_ALIGN);
    return -1;
  }
  *v = (size_t)n;
  return 0;
}

static size_t larger(size_t a, size_t b) { return a > b ? a : b; }

/* alignas(N) or alignas(type), the argument between open and shut. */
static int read_alignas(const char *open, const char *shut, lay_attrs *a, lay_align_of align_of,
                        void *ctx, const char *owner, char *why, size_t wl) {
  const char *b = skip_space(open + 1, shut);
  size_t v;
  if (b < shut && isdigit((unsigned char)*b)) {
    if (read_alignment(b, shut, &v, "alignas", owner, why, wl)) return -1;
    a->alignas = larger(a->alignas, v);
    return 0;
  }
  int type = b < shut;
  for (const char *c = b; c < shut && type; c++)
    type = is_ident(*c) || isspace((unsigned char)*c) || *c == '*' || *c == ':';
  char name[64];
  if (!type || (size_t)(shut - b) >= sizeof name) {
    snprintf(why, wl, "%s has alignas(%.*s), an alignment this reader does not evaluate (it "
             "reads a number or a type there)", owner, (int)(shut - b), b);
    return -1;
  }
  snprintf(name, sizeof name, "%.*s", (int)(shut - b), b);
  if (!(v = align_of(ctx, name, why, wl))) return -1;
  a->alignas = larger(a->alignas, v);
  return 0;
}

/* Attributes that say nothing about where members go or how big a struct is. */
static int harmless(const char *b, const char *e) {
  static const char *const names[] = {"unused", "used", "deprecated", "maybe_unused",
                                      "nodiscard", "may_alias", "visibility", NULL};
  for (int i = 0; names[i]; i++)
    if (is_word(b, e, names[i])) return 1;
  return 0;
}

/* One item of __attribute__((...)): [b, e), as "aligned(16)", "__packed__" or "unused". */
static int read_gnu_item(const char *b, const char *e, lay_attrs *a, const char *owner,
                         char *why, size_t wl) {
  b = skip_space(b, e);
  const char *n = b;
  while (n < e && is_ident(*n)) n++;
  const char *nb = b, *ne = n; /* __packed__ is packed */
  if (ne - nb > 4 && !strncmp(nb, "__", 2) && !strncmp(ne - 2, "__", 2)) nb += 2, ne -= 2;
  const char *args = skip_space(n, e);
  if (nb == ne && args == e) return 0; /* an empty item: __attribute__(()) */
  if (is_word(nb, ne, "packed") && args == e) {
    a->packed = 1;
    return 0;
  }
  if (is_word(nb, ne, "aligned")) {
    const char *shut = args < e && *args == '(' ? match(args, e) : NULL;
    size_t v = 16; /* aligned alone: the largest alignment of any type, as NVRTC measures it */
    if (args < e && (!shut || read_alignment(args + 1, shut, &v, "__attribute__((aligned",
                                             owner, why, wl)))
      return shut ? -1 : (snprintf(why, wl, "%s has an unclosed aligned(", owner), -1);
    a->aligned = larger(a->aligned, v);
    return 0;
  }
  if (nb < ne && harmless(nb, ne)) return 0;
  while (e > b && isspace((unsigned char)e[-1])) e--;
  snprintf(why, wl, "%s has __attribute__((%.*s)), whose effect on the layout this reader does "
           "not know", owner, (int)(e - b < 40 ? e - b : 40), b);
  return -1;
}

/* __attribute__((...)) whose outer parentheses are open and shut. */
static int read_gnu(const char *open, const char *shut, lay_attrs *a, const char *owner,
                    char *why, size_t wl) {
  const char *in = skip_space(open + 1, shut);
  const char *in_shut = in < shut && *in == '(' ? match(in, shut) : NULL;
  if (!in_shut || skip_space(in_shut + 1, shut) != shut) {
    snprintf(why, wl, "%s has an __attribute__ this reader cannot read", owner);
    return -1;
  }
  int depth = 0;
  const char *item = in + 1;
  for (const char *c = in + 1; c <= in_shut; c++) {
    if (c < in_shut && *c == '(') depth++;
    else if (c < in_shut && *c == ')') depth--;
    if (c < in_shut && (*c != ',' || depth)) continue;
    if (read_gnu_item(item, c, a, owner, why, wl)) return -1;
    item = c + 1;
  }
  return 0;
}

/* [[...]] between p and its closing "]]" at shut (the last ']'): only attributes that leave the
 * layout alone pass. [[gnu::aligned(N)]] and [[gnu::packed]] are refused, not read: NVRTC warns
 * that it does not know them and lays the struct out as if they were not there. */
static int read_std(const char *p, const char *shut, const char *owner, char *why, size_t wl) {
  int depth = 0;
  const char *item = p + 2;
  for (const char *c = p + 2; c <= shut - 1; c++) {
    if (c < shut - 1 && (*c == '(' || *c == '[')) depth++;
    else if (c < shut - 1 && (*c == ')' || *c == ']')) depth--;
    if (c < shut - 1 && (*c != ',' || depth)) continue;
    const char *b = skip_space(item, c), *n = b;
    while (n < c && is_ident(*n)) n++;
    if (n < c && n[0] == ':' && n + 1 < c && n[1] == ':') { /* gnu::unused: the name after */
      b = n + 2;
      for (n = b; n < c && is_ident(*n); n++) {}
    }
    if (b < n && !harmless(b, n)) {
      snprintf(why, wl, "%s has [[%.*s]], whose effect on the layout this reader does not know "
               "(alignas(N) and __attribute__((packed)) are the forms it reads)", owner,
               (int)(skip_space(item, c) < c ? c - skip_space(item, c) : 0),
               skip_space(item, c));
      return -1;
    }
    item = c + 1;
  }
  return 0;
}

/* Words that open an attribute with a parenthesised argument. */
static int attr_word(const char *b, const char *e) {
  static const char *const words[] = {"alignas", "_Alignas", "__align__", "__builtin_align__",
                                      "__attribute__", "__attribute", "__declspec", NULL};
  for (int i = 0; words[i]; i++)
    if (is_word(b, e, words[i])) return 1;
  return 0;
}

const char *lay_attr_skip(const char *s, const char *p, const char *e) {
  if (p + 1 < e && p[0] == '[' && p[1] == '[') return match(p, e);
  if (p >= e || !is_ident(*p) || (p > s && is_ident(p[-1]))) return p;
  const char *w = p;
  while (w < e && is_ident(*w)) w++;
  if (is_word(p, w, "__device_builtin__")) return w;
  if (!attr_word(p, w)) return p;
  const char *open = skip_space(w, e);
  const char *shut = open < e && *open == '(' ? match(open, e) : NULL;
  return shut ? shut + 1 : NULL;
}

const char *lay_attr_read(const char *s, const char *p, const char *e, lay_attrs *a,
                          lay_align_of align_of, void *ctx, const char *owner, char *why,
                          size_t wl) {
  if (p + 1 < e && p[0] == '[' && p[1] == '[') {
    const char *shut = match(p, e);
    if (!shut || shut[-1] != ']' || read_std(p, shut, owner, why, wl)) {
      if (!shut || shut[-1] != ']')
        snprintf(why, wl, "%s has an unclosed [[ attribute", owner);
      return NULL;
    }
    return shut + 1;
  }
  if (p >= e || !is_ident(*p) || (p > s && is_ident(p[-1]))) return p;
  const char *w = p;
  while (w < e && is_ident(*w)) w++;
  if (is_word(p, w, "__device_builtin__")) return w; /* CUDA's own mark, no argument */
  if (!attr_word(p, w)) return p;
  int alignas = is_word(p, w, "alignas") || is_word(p, w, "_Alignas");
  int align = is_word(p, w, "__align__") || is_word(p, w, "__builtin_align__");
  int ms = is_word(p, w, "__declspec");
  const char *open = skip_space(w, e);
  const char *shut = open < e && *open == '(' ? match(open, e) : NULL;
  int rc;
  if (!shut) {
    snprintf(why, wl, "%s has %.*s without a closed argument", owner, (int)(w - p), p);
    rc = -1;
  } else if (ms) {
    snprintf(why, wl, "%s has __declspec(%.*s), which this reader does not lay out", owner,
             (int)(shut - open - 1), open + 1);
    rc = -1;
  } else if (alignas) {
    rc = read_alignas(open, shut, a, align_of, ctx, owner, why, wl);
  } else if (align) {
    size_t v;
    rc = read_alignment(open + 1, shut, &v, "__align__", owner, why, wl);
    if (!rc) a->aligned = larger(a->aligned, v);
  } else { /* __attribute__ */
    rc = read_gnu(open, shut, a, owner, why, wl);
  }
  return rc ? NULL : shut + 1;
}

/* ---- #pragma pack ------------------------------------------------------------------------ */

/* Is the word w at *p (blanks before it skipped)? Moves *p past it when it is. */
static int eat_word(const char **p, const char *e, const char *w) {
  const char *q = skip_space(*p, e);
  size_t n = strlen(w);
  if ((size_t)(e - q) < n || strncmp(q, w, n) || (q + n < e && is_ident(q[n]))) return 0;
  *p = q + n;
  return 1;
}

int lay_pack_mark(char *line, size_t len) {
  const char *p = line + 1, *e = line + len;
  if (!len || line[0] != '#' || !eat_word(&p, e, "pragma") || !eat_word(&p, e, "pack")) return 0;
  char mark[64] = "@pack";
  size_t m = 5;
  int ok = !memchr(line, '\\', len); /* a continued line: not followed */
  p = skip_space(p, e);
  const char *shut = ok && p < e && *p == '(' ? match(p, e) : NULL;
  const char *rest = shut ? skip_space(shut + 1, e) : NULL; /* a comment may follow */
  ok = rest && (rest == e || (rest + 1 < e && rest[0] == '/' &&
                              (rest[1] == '/' || rest[1] == '*')));
  for (const char *c = ok ? p + 1 : e; ok && c < shut; c++) {
    if (is_ident(*c)) {
      if (m + 2 >= sizeof mark) ok = 0;
      else if (!is_ident(c[-1])) mark[m++] = ' ';
      if (ok) mark[m++] = *c;
    } else if (*c != ',' && !isspace((unsigned char)*c)) {
      ok = 0;
    }
  }
  if (!ok) m = 5, mark[m++] = ' ', mark[m++] = '?'; /* read by lay_pack_at as "not followed" */
  memset(line, ' ', len);
  memcpy(line, mark, m < len ? m : len); /* "#pragma pack" is longer than any mark made of it */
  return 1;
}

/* The packing a mark's arguments [b, e) leave, from cur and the stack (top its height, over
 * the pushes past its room). -1 for a state this reader does not follow. */
static int pack_step(const char *b, const char *e, int cur, int *stack, int *top, int *over) {
  const char *w[3];
  size_t n[3];
  int k = 0;
  for (const char *c = skip_space(b, e); c < e && k < 3; c = skip_space(c, e)) {
    w[k] = c;
    while (c < e && !isspace((unsigned char)*c)) c++;
    n[k] = (size_t)(c - w[k]);
    k++;
  }
  if (k == 0) return 0; /* pack(): the default */
  int push = is_word(w[0], w[0] + n[0], "push"), pop = is_word(w[0], w[0] + n[0], "pop");
  if (is_word(w[0], w[0] + n[0], "show") && k == 1) return cur;
  if (pop && k == 1) {
    if (*over) return (*over)--, -1;
    return *top ? stack[--*top] : -1; /* a pop with nothing pushed: not followed */
  }
  if (push) {
    if (*top == PACK_STACK) (*over)++;
    else stack[(*top)++] = cur;
  }
  const char *v = push ? (k == 2 ? w[1] : NULL) : (k == 1 ? w[0] : NULL);
  if (push && k == 1) return cur;
  unsigned long long val;
  if (!v || read_number(v, v + n[push], &val) || !val || val > 16 || (val & (val - 1)))
    return -1; /* a named push, pop with arguments, pack(3), "?": not followed */
  return (int)val;
}

int lay_pack_at(const char *s, const char *at, char *why, size_t wl) {
  int cur = 0, stack[PACK_STACK], top = 0, over = 0;
  for (const char *p = s; (p = strstr(p, "@pack")) && p < at; p += 5) {
    const char *e = p + 5;
    while (*e && *e != '\n') e++;
    cur = pack_step(p + 5, e, cur, stack, &top, &over);
  }
  if (cur < 0)
    snprintf(why, wl, "a #pragma pack before it is one this reader does not follow (it follows "
             "pack(N), pack(), pack(push[, N]) and pack(pop))");
  return cur;
}
