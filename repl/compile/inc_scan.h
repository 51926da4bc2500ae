/* inc_scan.h: the directives of a source as NVRTC's preprocessor sees them: the #include lines
 * for the kernel cache's key (includes.c), and every directive and file-naming operator for the
 * grader's check of a kernel source (src_guard.c). Plain C, no I/O; knows nothing of folders or
 * of NVRTC. */
#ifndef CUDALAB_INC_SCAN_H
#define CUDALAB_INC_SCAN_H

#include <stddef.h>

/* Called with each header a source names: its name as written between the quotes or angle
 * brackets (splices removed) and the quote character, '"' or '<'. Returns 0 to go on; anything
 * else stops the scan, which then returns it. */
typedef int (*inc_scan_fn)(void *ctx, const char *name, int quote);

/* Calls fn for every #include and #include_next in the len bytes of src, and for every
 * __has_include(...) (a header that appears later changes what the source compiles to), in
 * order. The scan follows translation phases 1 to 3 as NVRTC does: backslash-newline splices
 * (also before \r\n) are removed first, wherever they are; comments are spaces, and a comment
 * that spans lines ends the line it began on; '%:' is '#'; space, tab, \v, \f and \r are all
 * whitespace; strings, character constants, raw strings and numbers with digit separators are
 * skipped whole, so a quote or a slash-star inside them is no comment. It looks at every
 * directive, even one inside #if 0, since a header fed needlessly costs nothing but a miss.
 * Returns 0; -1 when an include names its header through a macro (#include HDR), which only a
 * preprocessor can follow, or when out of memory; or what fn returned. */
int inc_scan(const char *src, size_t len, inc_scan_fn fn, void *ctx);

/* What inc_scan_events reports, in the order of the source. */
typedef enum inc_event_kind {
  INC_EV_DIRECTIVE,     /* a directive; for include, include_next, import and embed, with the
                           header it names (quote 0: none, a macro or a malformed line) */
  INC_EV_HAS_INCLUDE,   /* __has_include, __has_include_next or __has_embed, with its header
                           (quote 0: through a macro, or bare outside defined and #ifdef) */
  INC_EV_TOKEN,         /* an identifier or a literal on a directive's line after its name:
                           word is the directive, header the token, quote its opening quote
                           ('"' or '\'', 'R' for a raw string) or 0 for an identifier */
  INC_EV_PRAGMA_OP,     /* the _Pragma operator, anywhere */
  INC_EV_PASTE,         /* the ## (or %:%:) operator, anywhere */
  INC_EV_UNTERMINATED   /* a block comment or raw string that runs to the end: word says which */
} inc_event_kind;

/* One event. The pointers are into the scan's own spliced copy, valid during the call only,
 * and not NUL-terminated: use the lengths. */
typedef struct inc_event {
  inc_event_kind kind;
  const char *word;   /* the directive's name ("" for none), or the operator as spelled */
  size_t word_len;
  const char *header; /* the header name between its quotes or brackets, or the token that
                         stood there instead (a macro's name, or ""); a token's text */
  size_t header_len;
  int quote;          /* '"' or '<' for a header name; 0 when there is none */
  long line;          /* the line of the original source it starts on, from 1 */
} inc_event;

typedef int (*inc_event_fn)(void *ctx, const inc_event *ev);

/* Ways to read the text other than NVRTC's default, for a check that must hold however the
 * source is read: */
#define INC_SCAN_NO_DIGIT_SEPARATORS 1 /* C++11: 1'0 is a 1 and a character constant */
#define INC_SCAN_LOOSE_SPLICES 2       /* a backslash, blanks, then a newline, as GCC splices */
#define INC_SCAN_UTF8_BLANKS 4         /* bytes past ASCII are blanks, not identifier letters */

/* The scan under inc_scan, with every event: calls fn for each, as flags read the text (0:
 * as inc_scan does). A UTF-8 byte order mark at the start is skipped, as compilers do. Returns
 * 0, what fn returned when it was not 0 (the scan stops), or -1 when out of memory. */
int inc_scan_events(const char *src, size_t len, int flags, inc_event_fn fn, void *ctx);

#endif
