/* inc_scan.c: finds a source's #include directives the way the preprocessor's first three
 * translation phases see the text.
 *
 * Stance: the kernel cache's key must cover every header a compile read, or an edited header
 * would bring back a stale kernel. NVRTC does not say which files it opened, so the scan must
 * find every include NVRTC finds; finding more only costs a needless miss. Matching lines
 * against "#include" cannot do that: a comment between '#' and "include", "%:include", a form
 * feed before the '#' and a splice inside the word or the file name all make includes to the
 * compiler. So the text is spliced first (phase 2), then read as preprocessing tokens (phase
 * 3): comments, strings, character constants, raw strings and numbers are each skipped whole,
 * because a quote or a comment opener inside one of them would otherwise swallow the lines
 * after it, includes and all. Where NVRTC's front end parts from the standard, the scan does as
 * NVRTC does (checked against NVRTC 13): a block comment that spans lines ends the line it
 * began on, so a '#' after it starts a directive; trigraphs are off; a backslash followed by
 * spaces is no splice. Where the scan cannot be sure (a macro naming the header) it says so,
 * and the cache steps aside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inc_scan.h"

#define MAX_RAW_DELIM 16 /* the longest raw string delimiter C++ allows */

typedef struct scan {
  const char *p;    /* the next character to read */
  const char *end;  /* one past the spliced text */
  int bol;          /* nothing but blanks since the last newline: a '#' begins a directive */
  inc_scan_fn fn;   /* told of each header */
  void *ctx;        /* fn's */
} scan;

/* Phases 1 and 2: a copy of src with every backslash-newline (\n or \r\n) removed, wherever it
 * is: inside a word, a file name or a comment alike. Removal is one pass, as the standard has
 * it: "\\\\\n\n" leaves a backslash and a newline, no new splice. NULL when out of memory. */
static char *splice(const char *src, size_t len, size_t *out) {
  char *buf = malloc(len + 1);
  if (!buf) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (src[i] == '\\' && i + 1 < len && src[i + 1] == '\n') { i += 1; continue; }
    if (src[i] == '\\' && i + 2 < len && src[i + 1] == '\r' && src[i + 2] == '\n') {
      i += 2;
      continue;
    }
    buf[n++] = src[i];
  }
  buf[n] = '\0';
  *out = n;
  return buf;
}

/* Whitespace other than the newline, which ends a directive. \r is here for files with CRLF
 * line ends; \v and \f the compiler accepts anywhere, directives included. */
static int is_blank(int c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

static int is_ident(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || (unsigned char)c >= 0x80; /* UTF-8 in identifiers */
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int at(const scan *s, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(s->end - s->p) >= n && memcmp(s->p, lit, n) == 0;
}

/* Skips one comment at s->p, if there is one; 1 if it did. A block comment that holds a
 * newline sets bol, as NVRTC's front end does: "x;", then a comment holding a newline, then
 * "#include" on the same line as the comment's end, is an include to it. */
static int skip_comment(scan *s) {
  if (at(s, "//")) {
    const char *nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
    s->p = nl ? nl : s->end;
    return 1;
  }
  if (!at(s, "/*")) return 0;
  const char *q = s->p + 2;
  while (q + 1 < s->end && !(q[0] == '*' && q[1] == '/')) {
    if (*q == '\n') s->bol = 1;
    q++;
  }
  s->p = q + 1 < s->end ? q + 2 : s->end;
  return 1;
}

/* Skips blanks and comments inside a directive (a comment is one space, whatever it holds). */
static void skip_blanks(scan *s) {
  for (;;) {
    if (s->p < s->end && is_blank(*s->p)) s->p++;
    else if (!skip_comment(s)) return;
  }
}

/* A string or character constant from its opening quote to its closing one or the end of the
 * line: an unterminated ' (an apostrophe in #error don't) costs one line, never more. */
static void skip_quoted(scan *s) {
  char q = *s->p++;
  while (s->p < s->end && *s->p != '\n') {
    char c = *s->p++;
    if (c == '\\' && s->p < s->end && *s->p != '\n') s->p++;
    else if (c == q) return;
  }
}

/* A raw string R"delim( ... )delim" at s->p (the quote); 0 if the delimiter is not one, and
 * the quote is then read as an ordinary string's. */
static int skip_raw(scan *s) {
  const char *d = s->p + 1, *open = d;
  while (open < s->end && open - d <= MAX_RAW_DELIM && *open != '(' && !is_blank(*open) &&
         *open != '\n' && *open != ')' && *open != '\\' && *open != '"')
    open++;
  if (open >= s->end || *open != '(' || open - d > MAX_RAW_DELIM) return 0;
  char term[MAX_RAW_DELIM + 3];
  int n = snprintf(term, sizeof term, ")%.*s\"", (int)(open - d), d);
  for (const char *q = open + 1; q + n <= s->end; q++)
    if (memcmp(q, term, (size_t)n) == 0) {
      s->p = q + n;
      return 1;
    }
  s->p = s->end;
  return 1;
}

/* A preprocessing number: digits, letters, '.', digit separators (1'000) and signed exponents
 * (1e+5, 0x1p-3), so that the separator's quote starts no character constant. */
static void skip_number(scan *s) {
  while (s->p < s->end) {
    char c = *s->p;
    if (strchr("eEpP", c) && s->p + 1 < s->end && (s->p[1] == '+' || s->p[1] == '-')) s->p += 2;
    else if (c == '\'' && s->p + 1 < s->end && is_ident(s->p[1])) s->p += 2;
    else if (is_ident(c) || c == '.') s->p++;
    else return;
  }
}

/* The header name at s->p ('"' or '<'), read up to its closing character on the same line;
 * nothing inside is special (no escapes, no comments). Calls fn; -1 when there is no name
 * (a macro, or a line that is not well formed), which the caller cannot follow. */
static int header_name(scan *s) {
  if (s->p >= s->end || (*s->p != '"' && *s->p != '<')) return -1;
  char quote = *s->p, term = quote == '<' ? '>' : '"';
  const char *name = s->p + 1, *q = name;
  while (q < s->end && *q != term && *q != '\n') q++;
  if (q >= s->end || *q != term) return -1;
  size_t n = (size_t)(q - name);
  char *copy = malloc(n + 1);
  if (!copy) return -1;
  memcpy(copy, name, n);
  copy[n] = '\0';
  s->p = q + 1;
  int rc = s->fn(s->ctx, copy, quote);
  free(copy);
  return rc;
}

/* The identifier at s->p, consumed; its length. */
static size_t ident(scan *s, const char **start) {
  *start = s->p;
  while (s->p < s->end && is_ident(*s->p)) s->p++;
  return (size_t)(s->p - *start);
}

static int word_is(const char *w, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(w, lit, n) == 0;
}

/* A directive whose '#' (or '%:') was just read. Only include and include_next matter. */
static int directive(scan *s) {
  skip_blanks(s);
  const char *w;
  size_t n = ident(s, &w);
  if (!word_is(w, n, "include") && !word_is(w, n, "include_next")) return 0;
  skip_blanks(s);
  return header_name(s);
}

/* __has_include("a.h") in an #if: the answer changes when a.h appears, so it counts as an
 * include. One spelled with a macro cannot be followed. */
static int has_include(scan *s) {
  skip_blanks(s);
  if (s->p >= s->end || *s->p != '(') return 0; /* #ifdef __has_include */
  s->p++;
  skip_blanks(s);
  return header_name(s);
}

static int is_raw_prefix(const char *w, size_t n) {
  return word_is(w, n, "R") || word_is(w, n, "LR") || word_is(w, n, "uR") ||
         word_is(w, n, "UR") || word_is(w, n, "u8R");
}

/* One token (or blank, or comment) at s->p; 0, or what stops the scan. */
static int step(scan *s) {
  char c = *s->p;
  if (c == '\n') { s->bol = 1; s->p++; return 0; }
  if (is_blank(c)) { s->p++; return 0; }
  if (skip_comment(s)) return 0;
  int bol = s->bol;
  s->bol = 0;
  if (bol && (c == '#' || at(s, "%:"))) {
    s->p += c == '#' ? 1 : 2;
    if (s->p < s->end && (*s->p == '#' || at(s, "%:"))) return 0; /* "##": no directive */
    return directive(s);
  }
  if (is_digit(c) || (c == '.' && s->p + 1 < s->end && is_digit(s->p[1]))) {
    skip_number(s);
    return 0;
  }
  if (is_ident(c)) {
    const char *w;
    size_t n = ident(s, &w);
    if (s->p < s->end && *s->p == '"' && is_raw_prefix(w, n) && skip_raw(s)) return 0;
    if (word_is(w, n, "__has_include") || word_is(w, n, "__has_include_next"))
      return has_include(s);
    return 0;
  }
  if (c == '"' || c == '\'') { skip_quoted(s); return 0; }
  s->p++;
  return 0;
}

int inc_scan(const char *src, size_t len, inc_scan_fn fn, void *ctx) {
  size_t n;
  char *text = splice(src, len, &n);
  if (!text) return -1;
  scan s = {text, text + n, 1, fn, ctx};
  int rc = 0;
  while (rc == 0 && s.p < s.end) rc = step(&s);
  free(text);
  return rc;
}
