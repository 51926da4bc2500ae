/* src_guard.c: the checks on what reaches NVRTC. A graded kernel source must name no file
 * outside the toolkit's headers and the submission's own; a kernel's name and a compiler
 * option must be one name and one option, with nothing that NVRTC would read as more source.
 *
 * Stance: the source check is built on the preprocessor's own reading of the text (inc_scan.c,
 * phases 1 to 3), never on patterns: a pattern that strips comments without knowing strings
 * was fooled by "/" "*" in one string and "*" "/" in a later one, which hid an #include between
 * them. Where NVRTC's reading depends on options grading allows, or where its front end may
 * part from the standard (digit separators before C++14, GCC's splice after trailing blanks,
 * bytes past ASCII as whitespace), the text is read each way and must pass every reading: the
 * check may refuse a source NVRTC would have read safely, never the other way round. What no
 * reading can settle without a preprocessor (an include through a macro, _Pragma, token
 * pasting) is refused outright; each is rare in a learner's kernel, and the message says what
 * to write instead. Names and options are checked the same way everywhere, live and in
 * grading, since NVRTC pastes a name expression into source it generates: a newline and an
 * #include in a kernel's name would otherwise be compiled. */
#include <stdio.h>
#include <string.h>

#include "inc_scan.h"
#include "src_guard.h"

/* What every refusal ends with. HASH keeps these examples out of tests/layers.sh's search for
 * include lines. */
#define HASH "#"
#define RULE                                                                               \
  "when grading a kernel may include the toolkit's headers and its own files only, as "    \
  HASH "include <cuda/std/cstdint> or " HASH "include \"helper.h\""

#define QUOTE_MAX 80 /* the bytes of a name or token a message shows */

/* The judge's context: where the reason goes. */
typedef struct verdict {
  char *why;
  size_t cap;
} verdict;

/* s (len bytes) into out with escapes, cut after max bytes; in quotes, with quotes and
 * backslashes escaped too, when quoted is set. */
static void escape(const char *s, size_t len, size_t max, int quoted, char *out, size_t cap) {
  size_t n = 0;
#define PUT(c) do { if (n + 1 < cap) out[n++] = (c); } while (0)
  if (quoted) PUT('"');
  for (size_t i = 0; i < len && i < max; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" :
                      c == '\0' ? "\\0" : !quoted ? NULL : c == '"' ? "\\\"" :
                      c == '\\' ? "\\\\" : NULL;
    char hex[8];
    if (!esc && (c < 0x20 || c >= 0x7f)) {
      snprintf(hex, sizeof hex, "\\x%02x", c);
      esc = hex;
    }
    if (esc) {
      for (; *esc; esc++) PUT(*esc);
    } else {
      PUT((char)c);
    }
  }
  if (len > max) for (const char *d = "..."; *d; d++) PUT(*d);
  if (quoted) PUT('"');
#undef PUT
  out[n < cap ? n : cap - 1] = '\0';
}

void src_guard_quote(const char *s, size_t len, size_t max, char *out, size_t cap) {
  escape(s, len, max, 1, out, cap);
}

/* ---- file names ---------------------------------------------------------------------------- */

static int in_set(const char *set, char c) { return c && strchr(set, c) != NULL; }

static int is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Does the name hold a ".." part (between slashes or at either end)? */
static int has_dotdot(const char *s, size_t n) {
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '.' && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') &&
        (i + 2 == n || s[i + 2] == '/'))
      return 1;
  return 0;
}

/* Why the header name (quote '<' or '"') may not be included when grading, or NULL if it may:
 * <a/b.h> is a toolkit header (relative, [A-Za-z0-9_.+/-], no ".." part); "b.h" a file of the
 * submission ([A-Za-z0-9_.-], no folder). */
static const char *name_problem(const char *s, size_t n, int quote) {
  if (n == 0) return "names no file";
  if (s[0] == '/' || has_dotdot(s, n) || memchr(s, '\\', n)) return "names a path";
  if (quote == '"' && memchr(s, '/', n)) return "names a path";
  const char *extra = quote == '<' ? "_.+/-" : "_.-";
  int dots = 1;
  for (size_t i = 0; i < n; i++) {
    if (!is_alnum(s[i]) && !in_set(extra, s[i])) return "is not a plain file name";
    dots &= s[i] == '.';
  }
  return dots ? "names a path" : NULL;
}

/* ---- the source ---------------------------------------------------------------------------- */

/* Says in v why the source is refused: "line N: " what, then the rule. Returns 1, the value
 * that stops the scan. */
static int refuse(verdict *v, long line, const char *what) {
  snprintf(v->why, v->cap, "line %ld: %s: " RULE, line, what);
  return 1;
}

/* The header of ev as the source writes it, escaped: "a.h", <a.h>, or the macro's name. */
static void header_text(const inc_event *ev, char *out, size_t cap) {
  src_guard_quote(ev->header, ev->header_len, QUOTE_MAX, out, cap);
  size_t n = strlen(out);
  if (ev->quote == '<') {
    out[0] = '<';
    out[n - 1] = '>';
  } else if (!ev->quote) {
    memmove(out, out + 1, n - 2);
    out[n - 2] = '\0';
  }
}

static int word_is(const inc_event *ev, const char *lit) {
  return ev->word_len == strlen(lit) && memcmp(ev->word, lit, ev->word_len) == 0;
}

/* An include-like directive (op "#include"), or __has_include(...) (call set): its header is
 * judged. 0 if it may be included, else 1 with the reason in v. */
static int judge_header(verdict *v, const inc_event *ev, const char *op, int call) {
  char what[QUOTE_MAX * 4 + 200], h[QUOTE_MAX * 4 + 8], shown[QUOTE_MAX * 4 + 48];
  header_text(ev, h, sizeof h);
  if (call) snprintf(shown, sizeof shown, "%s(%s)", op, h);
  else snprintf(shown, sizeof shown, "%s%s%s", op, *h ? " " : "", h);
  const char *problem = !ev->quote ? "names its file through a macro (or not at all), which "
                                     "the check cannot follow"
                                   : name_problem(ev->header, ev->header_len, ev->quote);
  if (!problem) return 0;
  snprintf(what, sizeof what, "%s %s", shown, problem);
  return refuse(v, ev->line, what);
}

static int judge_directive(verdict *v, const inc_event *ev) {
  char what[160];
  if (word_is(ev, "include")) return judge_header(v, ev, "#include", 0);
  if (!word_is(ev, "include_next") && !word_is(ev, "import") && !word_is(ev, "embed")) return 0;
  snprintf(what, sizeof what, "#%.*s is refused", (int)ev->word_len, ev->word);
  return refuse(v, ev->line, what);
}

/* A token on a #pragma line: a literal, or include_alias, may name a file. */
static int judge_pragma_token(verdict *v, const inc_event *ev) {
  if (!word_is(ev, "pragma")) return 0;
  int alias = !ev->quote && ev->header_len == 13 && memcmp(ev->header, "include_alias", 13) == 0;
  if (!ev->quote && !alias) return 0;
  char what[QUOTE_MAX * 4 + 120], t[QUOTE_MAX * 4 + 8];
  escape(ev->header, ev->header_len, QUOTE_MAX, 0, t, sizeof t);
  snprintf(what, sizeof what, "a #pragma that holds %s%s is refused, since it could name a "
           "file", alias ? "include_alias" : "the literal ", alias ? "" : t);
  return refuse(v, ev->line, what);
}

/* inc_event_fn: 0 for an event that reads no file; 1, with the reason in the verdict, for one
 * that might. */
static int judge(void *ctx, const inc_event *ev) {
  verdict *v = ctx;
  switch (ev->kind) {
  case INC_EV_DIRECTIVE: return judge_directive(v, ev);
  case INC_EV_HAS_INCLUDE: {
    char op[32];
    snprintf(op, sizeof op, "%.*s", (int)ev->word_len, ev->word);
    return judge_header(v, ev, op, 1);
  }
  case INC_EV_TOKEN: return judge_pragma_token(v, ev);
  case INC_EV_PRAGMA_OP:
    return refuse(v, ev->line, "_Pragma is refused (write a #pragma line, such as #pragma unroll)");
  case INC_EV_PASTE:
    return refuse(v, ev->line, "the ## operator is refused, since pasted tokens could spell "
                  "_Pragma or __has_include where the check cannot see them");
  case INC_EV_UNTERMINATED: {
    char what[80];
    snprintf(what, sizeof what, "a %.*s that never ends is refused", (int)ev->word_len, ev->word);
    return refuse(v, ev->line, what);
  }
  }
  return 0;
}

static int is_trigraph_end(char c) { return in_set("=(/)'<!>-", c); }

/* What phase 1 would change or a front end might read its own way, byte by byte: trigraphs
 * (NVRTC replaces them under -std=c++11 and c++14, which grading allows), NUL and other
 * control characters, and a carriage return that ends no line (some compilers end a line
 * there). 0, or 1 with the reason in v. */
static int check_bytes(verdict *v, const char *s, size_t len) {
  long line = 1;
  char what[160];
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n') {
      line++;
    } else if (c == '?' && i + 2 < len && s[i + 1] == '?' && is_trigraph_end(s[i + 2])) {
      snprintf(what, sizeof what, "the trigraph ??%c is refused (NVRTC reads it as another "
               "character under -std=c++11 and c++14): write that character itself", s[i + 2]);
      return refuse(v, line, what);
    } else if (c == '\r' && (i + 1 == len || s[i + 1] != '\n')) {
      return refuse(v, line, "a carriage return that ends no line (\\r without \\n) is refused");
    } else if ((c < 0x20 && !in_set("\t\v\f\r", (char)c)) || c == 0x7f) {
      snprintf(what, sizeof what, "%s (byte \\x%02x) is refused", c ? "a control character" :
               "a NUL byte", c);
      return refuse(v, line, what);
    }
  }
  return 0;
}

int src_guard_source(const char *src, size_t len, char *why, size_t cap) {
  verdict v = {why, cap};
  if (cap) why[0] = '\0';
  if (check_bytes(&v, src, len)) return -1;
  /* NVRTC's own reading first, so that a message speaks of what the learner sees */
  for (int flags = 0; flags < 8; flags++) {
    int rc = inc_scan_events(src, len, flags, judge, &v);
    if (rc == 1) return -1;
    if (rc != 0) {
      snprintf(why, cap, "out of memory checking the kernel source");
      return -1;
    }
  }
  return 0;
}

/* ---- names and options --------------------------------------------------------------------- */

/* The first byte of s that may never reach NVRTC inside a name, or -1: a control character, or
 * one of the characters that could start a directive, a comment, a literal or a new statement
 * (% and ? spell # as a digraph or trigraph). */
static long bad_byte(const char *s, size_t len, const char *forbidden) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f || in_set(forbidden, (char)c)) return (long)i;
  }
  return -1;
}

/* why := "it holds" and a description of the byte c. */
static int holds(char c, char *why, size_t cap) {
  if (c == '\n') snprintf(why, cap, "it holds a newline");
  else if (c == '\0') snprintf(why, cap, "it holds a NUL byte");
  else if ((unsigned char)c < 0x20 || c == 0x7f)
    snprintf(why, cap, "it holds a control character (\\x%02x)", (unsigned char)c);
  else if ((unsigned char)c >= 0x80)
    snprintf(why, cap, "it holds a byte past ASCII (\\x%02x)", (unsigned char)c);
  else snprintf(why, cap, "it holds '%c'", c);
  return -1;
}

#define EXPR_FORBIDDEN "#\"'/\\;{}%?@`"

int src_guard_expr(const char *s, size_t len, char *why, size_t cap) {
  long bad = bad_byte(s, len, EXPR_FORBIDDEN);
  if (bad >= 0) return holds(s[bad], why, cap);
  if (len == 0) {
    snprintf(why, cap, "it is empty");
    return -1;
  }
  return 0;
}

static int is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

static int say(char *why, size_t cap, const char *what) {
  snprintf(why, cap, "%s", what);
  return -1;
}

/* The brackets of a name: <...> and (...) balanced and nested; ':' only as "::". 0, or -1 with
 * why. */
static int name_shape(const char *s, size_t len, char *why, size_t cap) {
  char want[64]; /* the closer each open bracket waits for */
  int depth = 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == ':') {
      if (i + 1 < len && s[i + 1] == ':') {
        i++;
        continue;
      }
      return say(why, cap, "it holds a single ':' (a namespace is written ns::k)");
    }
    if (c == '<' || c == '(') {
      if (depth == (int)sizeof want) return say(why, cap, "its brackets nest too deep");
      want[depth++] = c == '<' ? '>' : ')';
    } else if ((c == '>' || c == ')') && (depth == 0 || want[--depth] != c)) {
      return say(why, cap, "its <...> or (...) are not balanced");
    }
  }
  return depth ? say(why, cap, "its <...> or (...) are not balanced") : 0;
}

#define NAME_CHARS "_$:<>,*&() -." /* besides letters and digits */

int src_guard_name(const char *s, size_t len, char *why, size_t cap) {
  if (len == 0) return say(why, cap, "it is empty");
  if (len > SRC_GUARD_NAME_MAX) {
    snprintf(why, cap, "it is %zu bytes long, over the limit of %d", len, SRC_GUARD_NAME_MAX);
    return -1;
  }
  long bad = bad_byte(s, len, EXPR_FORBIDDEN);
  if (bad >= 0) return holds(s[bad], why, cap);
  for (size_t i = 0; i < len; i++)
    if (!is_alnum(s[i]) && !in_set(NAME_CHARS, s[i])) return holds(s[i], why, cap);
  size_t i = 0;
  while (i < len && s[i] == ' ') i++;
  if (i == len || !(is_name_start(s[i]) || s[i] == ':'))
    return say(why, cap, "it does not start with a name");
  return name_shape(s, len, why, cap);
}

int src_guard_option(const char *s, size_t len, char *why, size_t cap) {
  long bad = bad_byte(s, len, "");
  return bad >= 0 ? holds(s[bad], why, cap) : 0;
}
