/* chunk.c: knowing, without parsing, that a chunk typed or piped into the REPL is unfinished.
 *
 * The REPL decides that a chunk is complete by asking Lua's parser: a chunk whose syntax error
 * ends at <eof> waits for more lines. Asked after every line, that parses a chunk of n lines
 * n times: a 2 MB table pasted into the prompt took minutes. This scanner reads each line once
 * and keeps what is open (blocks, brackets, a long string or comment); while something is open
 * the parser would certainly stop at <eof>, so the console skips asking it.
 *
 * It claims only that much. Anything it does not follow (a quote left open at the end of a
 * line, a closer that does not match) makes it "lost": from then on it claims nothing and the
 * parser is asked after every line, as before, to name the error. A full Lua lexer was turned
 * down: the parser remains the one judge, and this file only saves it work. */
#include <ctype.h>
#include <string.h>

#include "chunk.h"

void chunk_reset(chunk_scan *s) {
  s->depth = 0;
  s->long_level = -1;
  s->lost = 0;
}

static void push(chunk_scan *s, char what) {
  if (s->depth == CHUNK_DEPTH) s->lost = 1;
  else s->open[s->depth++] = what;
}

static void pop(chunk_scan *s, char what) {
  if (s->depth == 0 || s->open[s->depth - 1] != what) s->lost = 1;
  else s->depth--;
}

/* At line[i] == '[': the level of a long bracket opening there ("[[", "[==["), with *after
 * just past it; -1 when it is a plain '['. */
static int long_open(const char *line, size_t len, size_t i, size_t *after) {
  size_t j = i + 1;
  while (j < len && line[j] == '=') j++;
  if (j >= len || line[j] != '[') return -1;
  *after = j + 1;
  return (int)(j - i - 1);
}

/* Inside a long string or comment: past its closing bracket, or the whole line. */
static size_t long_close(chunk_scan *s, const char *line, size_t len, size_t i) {
  for (; i < len; i++) {
    if (line[i] != ']') continue;
    size_t j = i + 1;
    while (j < len && line[j] == '=') j++;
    if (j < len && line[j] == ']' && (int)(j - i - 1) == s->long_level) {
      s->long_level = -1;
      return j + 1;
    }
  }
  return len;
}

/* A quoted string starting at line[i]: past its closing quote. One left open at the end of the
 * line (an error, or an escaped line break) is beyond this scanner. */
static size_t short_string(chunk_scan *s, const char *line, size_t len, size_t i) {
  char q = line[i];
  for (size_t j = i + 1; j < len; j++) {
    if (line[j] == '\\') j++;
    else if (line[j] == q) return j + 1;
  }
  s->lost = 1;
  return len;
}

static int word_is(const char *w, size_t n, const char *kw) {
  return strlen(kw) == n && memcmp(w, kw, n) == 0;
}

/* A name or keyword at line[i]: opens or closes a block when it is one of those keywords. */
static size_t word(chunk_scan *s, const char *line, size_t len, size_t i) {
  size_t j = i;
  while (j < len && (isalnum((unsigned char)line[j]) || line[j] == '_')) j++;
  const char *w = line + i;
  size_t n = j - i;
  if (word_is(w, n, "function") || word_is(w, n, "do") || word_is(w, n, "if")) push(s, 'e');
  else if (word_is(w, n, "repeat")) push(s, 'u');
  else if (word_is(w, n, "end")) pop(s, 'e');
  else if (word_is(w, n, "until")) pop(s, 'u');
  return j;
}

/* A number: digits, letters, dots and an exponent's sign, so that 1e+5 or 0x1p-3 is one token
 * and the letters in it are never read as a keyword. */
static size_t number(const char *line, size_t len, size_t i) {
  size_t j = i;
  while (j < len) {
    char c = line[j];
    if (isalnum((unsigned char)c) || c == '.' || c == '_') j++;
    else if ((c == '+' || c == '-') && strchr("eEpP", line[j - 1])) j++;
    else break;
  }
  return j;
}

/* One token (or blank) at line[i] outside any long bracket; returns where the next starts. */
static size_t token(chunk_scan *s, const char *line, size_t len, size_t i) {
  char c = line[i];
  size_t after;
  if (c == '-' && i + 1 < len && line[i + 1] == '-') {
    if (i + 2 < len && line[i + 2] == '[' &&
        (s->long_level = long_open(line, len, i + 2, &after)) >= 0)
      return after;
    return len; /* a comment to the end of the line */
  }
  if (c == '"' || c == '\'') return short_string(s, line, len, i);
  if (c == '[') {
    if ((s->long_level = long_open(line, len, i, &after)) >= 0) return after;
    if (i + 1 < len && line[i + 1] == '=') s->lost = 1; /* "[=" is Lua's error to name */
    push(s, '[');
    return i + 1;
  }
  if (c == '(' || c == '{') push(s, c);
  else if (c == ')') pop(s, '(');
  else if (c == ']') pop(s, '[');
  else if (c == '}') pop(s, '{');
  else if (isalpha((unsigned char)c) || c == '_') return word(s, line, len, i);
  else if (isdigit((unsigned char)c)) return number(line, len, i);
  return i + 1;
}

void chunk_feed(chunk_scan *s, const char *line, size_t len) {
  size_t i = 0;
  while (i < len && !s->lost) {
    if (s->long_level >= 0) i = long_close(s, line, len, i);
    else i = token(s, line, len, i);
  }
}

int chunk_unfinished(const chunk_scan *s) {
  return !s->lost && (s->depth > 0 || s->long_level >= 0);
}
