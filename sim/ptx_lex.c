/* ptx_lex.c: splits PTX text into words, strings and punctuation.
 *
 * Stance: a "word" is a maximal run of [A-Za-z0-9_$%.], so an opcode with its modifiers
 * (ld.global.nc.f32), a register (%rd12), a special register (%tid.x), a directive (.reg) and a
 * number (0f3F800000, 1.5) are each one token; the parser splits opcodes on dots itself. This is
 * simpler than a grammar-aware lexer and costs nothing since PTX has no other use for dots. */
#include "ptx_lex.h"

#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

static int lex_word_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '$' || c == '%' || c == '.';
}

static int lex_push(ptx_lexer *lx, int kind, const char *s, int len, int line) {
  if (lx->n == lx->cap) {
    int cap = lx->cap ? lx->cap * 2 : 1024;
    ptx_tok *t = realloc(lx->toks, (size_t)cap * sizeof *t);
    if (!t) return -1;
    lx->toks = t;
    lx->cap = cap;
  }
  lx->toks[lx->n++] = (ptx_tok){kind, s, len, line};
  return 0;
}

/* The end of the word starting at text[i]. "::" joins words too (cp.async.ca.shared::cta.global,
 * L2::128B); a label's one ':' does not. */
static size_t word_end(const char *text, size_t len, size_t i) {
  size_t j = i;
  for (;;) {
    if (j < len && lex_word_char((unsigned char)text[j])) {
      j++;
    } else if (j + 2 < len && text[j] == ':' && text[j + 1] == ':' &&
               lex_word_char((unsigned char)text[j + 2])) {
      j += 2;
    } else {
      return j;
    }
  }
}

/* The closing quote of the string whose opening quote is text[i], or where the string stops
 * short of one (a newline, the end of the text). */
static size_t string_end(const char *text, size_t len, size_t i) {
  size_t j = i + 1;
  while (j < len && text[j] != '"' && text[j] != '\n')
    j += (text[j] == '\\' && j + 1 < len) ? 2 : 1; /* an escape takes the next character along */
  return j;
}

/* Skips a comment starting at text[*i]; returns -1 for an unterminated block comment. */
static int lex_comment(const char *text, size_t len, size_t *i, int *line) {
  if (text[*i + 1] == '/') {
    while (*i < len && text[*i] != '\n') (*i)++;
    return 0;
  }
  for (*i += 2; *i + 1 < len; (*i)++) {
    if (text[*i] == '\n') (*line)++;
    if (text[*i] == '*' && text[*i + 1] == '/') {
      *i += 2;
      return 0;
    }
  }
  return -1;
}

int ptx_lex(ptx_lexer *lx, const char *text, size_t len, char *err, size_t errlen) {
  memset(lx, 0, sizeof *lx);
  int line = 1;
  size_t i = 0;
  while (i < len) {
    unsigned char c = (unsigned char)text[i];
    if (c == '\n') line++;
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      i++;
      continue;
    }
    if (c == 0) break; /* a NUL ends the text, as nvrtcGetPTX's size includes it */
    if (c == '/' && i + 1 < len && (text[i + 1] == '/' || text[i + 1] == '*')) {
      int start = line;
      if (lex_comment(text, len, &i, &line) < 0) {
        sim_errf(err, errlen, "PTX line %d: unterminated /* comment", start);
        return -1;
      }
      continue;
    }
    int rc;
    if (lex_word_char(c)) {
      size_t j = word_end(text, len, i);
      rc = lex_push(lx, PTX_T_WORD, text + i, (int)(j - i), line);
      i = j;
    } else if (c == '"') {
      size_t j = string_end(text, len, i);
      if (j >= len || text[j] != '"') {
        sim_errf(err, errlen, "PTX line %d: unterminated string", line);
        return -1;
      }
      rc = lex_push(lx, PTX_T_STRING, text + i + 1, (int)(j - i - 1), line);
      i = j + 1;
    } else if (strchr("{}[](),;:+-|@!<>=", c)) {
      rc = lex_push(lx, PTX_T_PUNCT, text + i, 1, line);
      i++;
    } else {
      sim_errf(err, errlen, "PTX line %d: unexpected character 0x%02x", line, c);
      return -1;
    }
    if (rc < 0) {
      sim_errf(err, errlen, "out of memory while reading PTX");
      return -1;
    }
  }
  if (lex_push(lx, PTX_T_EOF, "", 0, line) < 0) {
    sim_errf(err, errlen, "out of memory while reading PTX");
    return -1;
  }
  return 0;
}

void ptx_lex_free(ptx_lexer *lx) {
  free(lx->toks);
  memset(lx, 0, sizeof *lx);
}

const ptx_tok *ptx_peek(const ptx_lexer *lx, int ahead) {
  int p = lx->pos + ahead;
  return &lx->toks[p < lx->n ? p : lx->n - 1];
}

const ptx_tok *ptx_next(ptx_lexer *lx) {
  const ptx_tok *t = ptx_peek(lx, 0);
  if (lx->pos < lx->n - 1) lx->pos++;
  return t;
}

int ptx_is(const ptx_tok *t, const char *word) {
  size_t n = strlen(word);
  return t->kind != PTX_T_EOF && t->kind != PTX_T_STRING && (size_t)t->len == n &&
         memcmp(t->s, word, n) == 0;
}

int ptx_accept(ptx_lexer *lx, const char *word) {
  if (!ptx_is(ptx_peek(lx, 0), word)) return 0;
  ptx_next(lx);
  return 1;
}
