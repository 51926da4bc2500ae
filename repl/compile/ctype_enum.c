/* ctype_enum.c: finds an enum's definition in the learner's source and says which integer it is
 * stored as: the type written after its name (`enum class Op : unsigned char`), int for an enum
 * class without one, and for a plain enum int as well, the type C++ gives it when every value
 * fits in int.
 *
 * Stance: a plain enum's type is the compiler's to choose from its values (one past int's range
 * makes it 8 bytes), and this reader does not evaluate C++. So it says int only when every value
 * is plainly an int: made of decimal or hex literals up to INT_MAX without a suffix, of the
 * enum's own names and of arithmetic on them, which overflows at compile time rather than
 * growing the type. Anything else is refused with the fix (give the enum a fixed type), never
 * guessed. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctype_attr.h"
#include "ctype_enum.h"
#include "src_words.h"

/* The '}' matching the '{' at p, before e; NULL when unbalanced. */
static const char *match_brace(const char *p, const char *e) {
  int depth = 0;
  for (; p < e; p++) {
    if (*p == '{') depth++;
    else if (*p == '}' && --depth == 0) return p;
  }
  return NULL;
}

/* Is [b, b + n) the name of an enumerator of the list between open and shut? */
static int is_enumerator(const char *open, const char *shut, const char *b, size_t n) {
  for (const char *item = open + 1; item < shut;) {
    const char *w = skip_space(item, shut), *c = w;
    while (c < shut && is_ident(*c)) c++;
    if ((size_t)(c - w) == n && !strncmp(w, b, n)) return 1;
    const char *comma = memchr(item, ',', (size_t)(shut - item));
    item = comma ? comma + 1 : shut;
  }
  return 0;
}

/* Is the value [b, e) plainly an int (the stance above)? */
static int plain_int(const char *open, const char *shut, const char *b, const char *e) {
  int any = 0;
  for (const char *c = skip_space(b, e); c < e; c = skip_space(c, e)) {
    const char *w = c;
    if (isdigit((unsigned char)*c)) {
      char num[24];
      while (c < e && is_ident(*c)) c++;
      if ((size_t)(c - w) >= sizeof num) return 0;
      memcpy(num, w, (size_t)(c - w));
      num[c - w] = '\0';
      char *end;
      unsigned long long v = strtoull(num, &end, 0);
      if (*end || v > INT_MAX) return 0; /* a suffix (1u, 2ll) or past int */
    } else if (is_ident(*c)) {
      while (c < e && is_ident(*c)) c++;
      if (!is_enumerator(open, shut, w, (size_t)(c - w))) return 0;
    } else if (strchr("+-*/%|&^~()<>", *c)) {
      c++;
    } else {
      return 0;
    }
    any = 1;
  }
  return any;
}

/* The first value of a plain enum's list that is not plainly an int, in [*b, *e); 0 if none. */
static int odd_value(const char *open, const char *shut, const char **b, const char **e) {
  for (const char *item = open + 1; item < shut;) {
    const char *comma = memchr(item, ',', (size_t)(shut - item));
    const char *end = comma ? comma : shut;
    const char *eq = memchr(item, '=', (size_t)(end - item));
    if (eq && !plain_int(open, shut, eq + 1, end)) {
      *b = skip_space(item, end);
      *e = end;
      while (*e > *b && isspace((unsigned char)(*e)[-1])) (*e)--;
      return 1;
    }
    item = end + (end < shut);
  }
  return 0;
}

/* Is p just after the word typedef (blanks between)? */
static int after_typedef(const char *s, const char *p) {
  while (p > s && isspace((unsigned char)p[-1])) p--;
  return p - s >= 7 && word_at(s, p - 7, "typedef");
}

/* Does the typedef whose list closes at shut name the type `name` (`} Name;`)? */
static int typedef_names(const char *shut, const char *name) {
  const char *q = skip_space(shut + 1, shut + 1 + strlen(shut + 1));
  size_t n = strlen(name);
  return !strncmp(q, name, n) && !is_ident(q[n]) && *skip_space(q + n, q + n + 64) == ';';
}

int lay_enum(const char *src, const char *name, char *out, size_t cap, char *why, size_t wl) {
  size_t nl = strlen(name);
  for (const char *p = src; (p = strstr(p, "enum")); p += 4) {
    if (!word_at(src, p, "enum")) continue;
    const char *e = p + strlen(p), *q = skip_space(p + 4, e);
    int scoped = word_at(src, q, "class") || word_at(src, q, "struct");
    if (scoped) q = skip_space(q + (*q == 'c' ? 5 : 6), e);
    for (const char *nx; (nx = lay_attr_skip(src, q, e)) && nx != q;) q = skip_space(nx, e);
    const char *tag = q;
    while (q < e && is_ident(*q)) q++;
    int tagged = (size_t)(q - tag) == nl && !strncmp(tag, name, nl);
    q = skip_space(q, e);
    const char *base = NULL, *base_end = NULL;
    if (*q == ':' && q[1] != ':') {
      base = q + 1;
      for (q = base; q < e && *q != '{' && *q != ';'; q++) {}
      base_end = q;
    }
    const char *shut = *q == '{' ? match_brace(q, e) : NULL;
    if (!tagged && !(shut && after_typedef(src, p) && typedef_names(shut, name))) continue;
    if (!base && !scoped && !shut) continue; /* `enum Mode;` declares nothing laid out */
    if (base) {
      base = skip_space(base, base_end);
      while (base_end > base && isspace((unsigned char)base_end[-1])) base_end--;
      snprintf(out, cap, "%.*s", (int)(base_end - base), base);
      return 1;
    }
    const char *vb, *ve;
    if (!scoped && odd_value(q, shut, &vb, &ve)) {
      snprintf(why, wl, "enum '%s' has a value this reader does not evaluate (%.*s), so its size "
               "is the compiler's to choose: give it a fixed type, as in enum %s : int { ... }",
               name, (int)(ve - vb < 60 ? ve - vb : 60), vb, name);
      return -1;
    }
    snprintf(out, cap, "int");
    return 1;
  }
  return 0;
}
