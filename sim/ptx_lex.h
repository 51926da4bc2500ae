/* ptx_lex.h: the PTX tokenizer, used only by the parser's files (ptx_parse.c, ptx_inst.c,
 * ptx_tensor.c, and ptx_dwarf.c for the debug sections), through ptx_state.h.
 * Tokens point into the caller's text; the token array is the only allocation. */
#ifndef CUDALAB_PTX_LEX_H
#define CUDALAB_PTX_LEX_H

#include <stddef.h>

enum { PTX_T_EOF, PTX_T_WORD, PTX_T_STRING, PTX_T_PUNCT };

typedef struct ptx_tok {
  int kind;        /* PTX_T_* */
  const char *s;   /* first character (for a string: after the opening quote) */
  int len;         /* characters */
  int line;        /* 1-based line in the PTX text */
} ptx_tok;

typedef struct ptx_lexer {
  ptx_tok *toks;   /* owned; always ends with a PTX_T_EOF token */
  int n, cap;
  int pos;         /* parser cursor */
} ptx_lexer;

/* Tokenize text[0..len). Returns 0, or -1 with err filled (unterminated string or comment,
 * a stray byte, out of memory). The lexer must be released with ptx_lex_free either way. */
int ptx_lex(ptx_lexer *lx, const char *text, size_t len, char *err, size_t errlen);
void ptx_lex_free(ptx_lexer *lx);

/* Cursor helpers. */
const ptx_tok *ptx_peek(const ptx_lexer *lx, int ahead);
const ptx_tok *ptx_next(ptx_lexer *lx);
int ptx_is(const ptx_tok *t, const char *word);   /* word or punctuation equals */
int ptx_accept(ptx_lexer *lx, const char *word);  /* consume if ptx_is */

#endif
