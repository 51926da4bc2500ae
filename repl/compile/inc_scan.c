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
 * and the cache steps aside.
 *
 * The same scan serves the grader's check (src_guard.c), which must see every directive NVRTC
 * could see, not merely most: it hears of every directive, operator and token that can name a
 * file (inc_scan_events), and the flags read the text the other ways a language standard or a
 * compiler might (C++11 has no digit separators, GCC splices after trailing blanks), so that
 * the check can hold under each reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inc_scan.h"

#define MAX_RAW_DELIM 16 /* the longest raw string delimiter C++ allows */

typedef struct scan {
  const char *text;     /* the spliced copy */
  const char *p;        /* the next character to read */
  const char *end;      /* one past the spliced text */
  int flags;            /* INC_SCAN_*: how to read it */
  int bol;              /* nothing but blanks since the last newline: a '#' begins a directive */
  const char *dir;      /* the name of the directive whose line this is; NULL outside one */
  size_t dir_len;
  int defined;          /* 2: the last token was "defined"; 1: it was "defined ("; else 0 */
  const char *open;     /* a comment or raw string that ran to the end began here, or NULL */
  const char *open_what; /* which: "comment" or "raw string" */
  const size_t *splices; /* offsets in text where a splice was removed, ascending */
  size_t nsplices, si;  /* how many; how many are behind the line cursor */
  const char *lp;       /* the line cursor: line is the line of the original source at lp */
  long line;
  inc_event_fn fn;      /* told of each event */
  void *ctx;            /* fn's */
} scan;

/* The splices removed from a text, as the offsets in the spliced copy where each was. */
typedef struct splice_list {
  size_t *at;
  size_t n, cap;
} splice_list;

static int add_splice(splice_list *l, size_t at) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    size_t *a = realloc(l->at, cap * sizeof *a);
    if (!a) return -1;
    l->at = a;
    l->cap = cap;
  }
  l->at[l->n++] = at;
  return 0;
}

/* How many bytes of a splice start at src[i] (a backslash): 2 for "\\\n", 3 for "\\\r\n"; with
 * loose splices, blanks may stand between the backslash and the newline. 0: no splice. */
static size_t splice_len(const char *src, size_t len, size_t i, int loose) {
  size_t j = i + 1;
  if (loose)
    while (j < len && src[j] && strchr(" \t\v\f\r", src[j])) j++;
  else if (j + 1 < len && src[j] == '\r' && src[j + 1] == '\n')
    j++;
  return j < len && src[j] == '\n' ? j + 1 - i : 0;
}

/* Phases 1 and 2: a copy of src with every backslash-newline (\n or \r\n) removed, wherever it
 * is: inside a word, a file name or a comment alike; where each was goes into l. Removal is
 * one pass, as the standard has it: "\\\\\n\n" leaves a backslash and a newline, no new splice.
 * NULL when out of memory. */
static char *splice(const char *src, size_t len, int flags, size_t *out, splice_list *l) {
  char *buf = malloc(len + 1);
  if (!buf) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    size_t k = src[i] == '\\' ? splice_len(src, len, i, flags & INC_SCAN_LOOSE_SPLICES) : 0;
    if (k) {
      if (add_splice(l, n) != 0) {
        free(buf);
        return NULL;
      }
      i += k - 1;
      continue;
    }
    buf[n++] = src[i];
  }
  buf[n] = '\0';
  *out = n;
  return buf;
}

/* The line of the original source that p (in the spliced text) is on. Calls come with p never
 * behind the last call's, so the cursor only moves on: the whole scan counts each line once. */
static long line_at(scan *s, const char *p) {
  for (; s->lp < p; s->lp++)
    if (*s->lp == '\n') s->line++;
  size_t off = (size_t)(p - s->text);
  while (s->si < s->nsplices && s->splices[s->si] <= off) {
    s->line++;
    s->si++;
  }
  return s->line;
}

static int is_utf8(int c) { return (unsigned char)c >= 0x80; }

/* Whitespace other than the newline, which ends a directive. \r is here for files with CRLF
 * line ends; \v and \f the compiler accepts anywhere, directives included. */
static int is_blank(const scan *s, int c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' ||
         (is_utf8(c) && (s->flags & INC_SCAN_UTF8_BLANKS));
}

static int is_ident(const scan *s, int c) {
  if (is_utf8(c)) return !(s->flags & INC_SCAN_UTF8_BLANKS); /* UTF-8 in identifiers */
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int at(const scan *s, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(s->end - s->p) >= n && memcmp(s->p, lit, n) == 0;
}

static int word_is(const char *w, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(w, lit, n) == 0;
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
  if (q + 1 >= s->end) {
    s->open = s->p;
    s->open_what = "comment";
  }
  s->p = q + 1 < s->end ? q + 2 : s->end;
  return 1;
}

/* Skips blanks and comments inside a directive (a comment is one space, whatever it holds). */
static void skip_blanks(scan *s) {
  for (;;) {
    if (s->p < s->end && is_blank(s, *s->p)) s->p++;
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
  while (open < s->end && open - d <= MAX_RAW_DELIM && *open != '(' && !is_blank(s, *open) &&
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
  s->open = s->p;
  s->open_what = "raw string";
  s->p = s->end;
  return 1;
}

/* A preprocessing number: digits, letters, '.', digit separators (1'000) and signed exponents
 * (1e+5, 0x1p-3), so that the separator's quote starts no character constant. */
static void skip_number(scan *s) {
  int seps = !(s->flags & INC_SCAN_NO_DIGIT_SEPARATORS);
  while (s->p < s->end) {
    char c = *s->p;
    if (c && strchr("eEpP", c) && s->p + 1 < s->end && (s->p[1] == '+' || s->p[1] == '-'))
      s->p += 2;
    else if (seps && c == '\'' && s->p + 1 < s->end && is_ident(s, s->p[1])) s->p += 2;
    else if (is_ident(s, c) || c == '.') s->p++;
    else return;
  }
}

/* The header name at s->p ('"' or '<'), read up to its closing character on the same line;
 * nothing inside is special (no escapes, no comments). Fills ev's header and quote; where
 * there is no name (a macro, or a line that is not well formed) quote stays 0 and header is
 * the identifier that stands there, or "". */
static void header_name(scan *s, inc_event *ev) {
  ev->header = "";
  ev->header_len = 0;
  if (s->p < s->end && (*s->p == '"' || *s->p == '<')) {
    char term = *s->p == '<' ? '>' : '"';
    const char *name = s->p + 1, *q = name;
    while (q < s->end && *q != term && *q != '\n') q++;
    if (q < s->end && *q == term) {
      ev->quote = *s->p;
      ev->header = name;
      ev->header_len = (size_t)(q - name);
      s->p = q + 1;
    }
    return;
  }
  const char *w = s->p;
  while (s->p < s->end && is_ident(s, *s->p)) s->p++;
  ev->header = w;
  ev->header_len = (size_t)(s->p - w);
}

/* The identifier at s->p, consumed; its length. */
static size_t ident(scan *s, const char **start) {
  *start = s->p;
  while (s->p < s->end && is_ident(s, *s->p)) s->p++;
  return (size_t)(s->p - *start);
}

static int takes_header(const char *w, size_t n) {
  return word_is(w, n, "include") || word_is(w, n, "include_next") || word_is(w, n, "import") ||
         word_is(w, n, "embed");
}

/* A directive whose '#' (or '%:') is at hash and was just read: reports it, with the header of
 * an include-like one. The rest of its line is read as tokens by step, which reports them. */
static int directive(scan *s, const char *hash) {
  inc_event ev = {INC_EV_DIRECTIVE, "", 0, "", 0, 0, line_at(s, hash)};
  skip_blanks(s);
  ev.word_len = ident(s, &ev.word);
  s->dir = ev.word;
  s->dir_len = ev.word_len;
  if (takes_header(ev.word, ev.word_len)) {
    skip_blanks(s);
    header_name(s, &ev);
  }
  return s->fn(s->ctx, &ev);
}

static int in_ifdef(const scan *s) {
  return s->dir && (word_is(s->dir, s->dir_len, "ifdef") || word_is(s->dir, s->dir_len, "ifndef") ||
                    word_is(s->dir, s->dir_len, "elifdef") ||
                    word_is(s->dir, s->dir_len, "elifndef"));
}

/* __has_include("a.h") (the word at w, just read): the answer changes when a.h appears, so it
 * counts as an include. Bare, it names no file where it is asked whether it is defined (#ifdef
 * __has_include, defined(__has_include)); anywhere else a macro may give it its operand. */
static int has_include(scan *s, const char *w, size_t n) {
  inc_event ev = {INC_EV_HAS_INCLUDE, w, n, "", 0, 0, line_at(s, w)};
  int asked = s->defined || in_ifdef(s);
  skip_blanks(s);
  if (s->p < s->end && *s->p == '(') {
    s->p++;
    skip_blanks(s);
    header_name(s, &ev);
  } else if (asked) {
    return 0;
  }
  return s->fn(s->ctx, &ev);
}

static int is_raw_prefix(const char *w, size_t n) {
  return word_is(w, n, "R") || word_is(w, n, "LR") || word_is(w, n, "uR") ||
         word_is(w, n, "UR") || word_is(w, n, "u8R");
}

/* A token of a directive's line, from start to s->p: reported with the directive's name. */
static int dir_token(scan *s, const char *start, int quote) {
  if (!s->dir) return 0;
  inc_event ev = {INC_EV_TOKEN, s->dir, s->dir_len, start, (size_t)(s->p - start), quote,
                  line_at(s, start)};
  return s->fn(s->ctx, &ev);
}

/* An event of no header: the word w (n bytes) that begins at the text's at. */
static int simple_event(scan *s, inc_event_kind kind, const char *w, size_t n, const char *at) {
  inc_event ev = {kind, w, n, "", 0, 0, line_at(s, at)};
  return s->fn(s->ctx, &ev);
}

/* An identifier at s->p: a raw string's prefix, an operator that names a file, or a word. */
static int step_word(scan *s) {
  const char *w;
  size_t n = ident(s, &w);
  int defined = s->defined;
  s->defined = word_is(w, n, "defined") ? 2 : 0;
  if (s->p < s->end && *s->p == '"' && is_raw_prefix(w, n) && skip_raw(s))
    return dir_token(s, w, 'R');
  if (word_is(w, n, "__has_include") || word_is(w, n, "__has_include_next") ||
      word_is(w, n, "__has_embed")) {
    s->defined = defined;
    return has_include(s, w, n);
  }
  if (word_is(w, n, "_Pragma")) return simple_event(s, INC_EV_PRAGMA_OP, w, n, w);
  return dir_token(s, w, 0);
}

/* One token (or blank, or comment) at s->p; 0, or what stops the scan. */
static int step(scan *s) {
  char c = *s->p;
  if (c == '\n') {
    s->bol = 1;
    s->dir = NULL;
    s->defined = 0;
    s->p++;
    return 0;
  }
  if (is_blank(s, c)) { s->p++; return 0; }
  if (skip_comment(s)) return 0;
  int bol = s->bol;
  s->bol = 0;
  const char *start = s->p;
  if (at(s, "##") || at(s, "%:%:")) {
    s->p += c == '#' ? 2 : 4;
    return simple_event(s, INC_EV_PASTE, start, (size_t)(s->p - start), start);
  }
  if (bol && (c == '#' || at(s, "%:"))) {
    s->p += c == '#' ? 1 : 2;
    if (s->p < s->end && (*s->p == '#' || at(s, "%:"))) return 0; /* "#%:": no directive */
    return directive(s, start);
  }
  if (is_digit(c) || (c == '.' && s->p + 1 < s->end && is_digit(s->p[1]))) {
    skip_number(s);
    s->defined = 0;
    return 0;
  }
  if (is_ident(s, c)) return step_word(s);
  s->defined = c == '(' && s->defined == 2 ? 1 : 0;
  if (c == '"' || c == '\'') {
    skip_quoted(s);
    return dir_token(s, start, c);
  }
  s->p++;
  return 0;
}

int inc_scan_events(const char *src, size_t len, int flags, inc_event_fn fn, void *ctx) {
  size_t n;
  splice_list l = {NULL, 0, 0};
  char *text = splice(src, len, flags, &n, &l);
  if (!text) {
    free(l.at);
    return -1;
  }
  scan s = {.text = text, .p = text, .end = text + n, .flags = flags, .bol = 1,
            .splices = l.at, .nsplices = l.n, .lp = text, .line = 1, .fn = fn, .ctx = ctx};
  if (n >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) s.p += 3; /* a byte order mark */
  int rc = 0;
  while (rc == 0 && s.p < s.end) rc = step(&s);
  if (rc == 0 && s.open)
    rc = simple_event(&s, INC_EV_UNTERMINATED, s.open_what, strlen(s.open_what), s.open);
  free(text);
  free(l.at);
  return rc;
}

/* inc_scan's fn and context, for the events it cares about. */
typedef struct includes_only {
  inc_scan_fn fn;
  void *ctx;
} includes_only;

/* The headers an include, include_next or __has_include names, each as a NUL-terminated copy;
 * -1 for one named through a macro, which only a preprocessor can follow. */
static int on_event(void *ctx, const inc_event *ev) {
  includes_only *io = ctx;
  int include = ev->kind == INC_EV_DIRECTIVE && (word_is(ev->word, ev->word_len, "include") ||
                                                 word_is(ev->word, ev->word_len, "include_next"));
  if (!include && ev->kind != INC_EV_HAS_INCLUDE) return 0;
  if (!ev->quote) return -1;
  char *copy = malloc(ev->header_len + 1);
  if (!copy) return -1;
  memcpy(copy, ev->header, ev->header_len);
  copy[ev->header_len] = '\0';
  int rc = io->fn(io->ctx, copy, ev->quote);
  free(copy);
  return rc;
}

int inc_scan(const char *src, size_t len, inc_scan_fn fn, void *ctx) {
  includes_only io = {fn, ctx};
  return inc_scan_events(src, len, 0, on_event, &io);
}
