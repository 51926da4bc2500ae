/* src_words.h: the three word tests every reader of a learner's C++ source in this folder needs
 * (kernel_sig.c, ctype_layout.c, ctype_attr.c, ctype_enum.c): whether a character continues an
 * identifier, whether a whole word stands at a place, and the first character past white
 * space. Static inline: each reader keeps its own copy, and none grows a dependency. */
#ifndef CUDALAB_SRC_WORDS_H
#define CUDALAB_SRC_WORDS_H

#include <ctype.h>
#include <string.h>

static inline int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Is there the whole word w at p in s (no identifier character on either side)? */
static inline int word_at(const char *s, const char *p, const char *w) {
  size_t len = strlen(w);
  return strncmp(p, w, len) == 0 && !is_ident(p[len]) && (p == s || !is_ident(p[-1]));
}

/* The first character at or after p, before e, that is not white space (e when none is). */
static inline const char *skip_space(const char *p, const char *e) {
  while (p < e && isspace((unsigned char)*p)) p++;
  return p;
}

#endif
