/* inc_scan.h: the #include directives of a source as NVRTC's preprocessor sees them, for the
 * kernel cache's key (includes.c). Plain C, no I/O; knows nothing of folders or of NVRTC. */
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

#endif
