/* chunk.h: a cheap, line-by-line look at Lua source that tells when a multi-line chunk is
 * certainly unfinished (an open block, bracket or long string), so that the console need not
 * ask the engine to parse it again. Used by console.c; tested by tests/unit/test_chunk.c. */
#ifndef CUDALAB_CHUNK_H
#define CUDALAB_CHUNK_H

#include <stddef.h>

#define CHUNK_DEPTH 200 /* Lua's own limit on nested C levels is the same order */

typedef struct chunk_scan {
  char open[CHUNK_DEPTH]; /* what is open, innermost last: 'e' (needs end), 'u' (needs until),
                             ( [ { */
  int depth;              /* entries used in open */
  int long_level;         /* inside a long string or comment of this level; -1 when not */
  int lost;               /* saw something it does not model: it no longer claims anything */
} chunk_scan;

/* Starts a new chunk. */
void chunk_reset(chunk_scan *s);
/* Feeds one line (without its newline; the line break is implied). */
void chunk_feed(chunk_scan *s, const char *line, size_t len);
/* 1 when the text fed so far certainly cannot be a complete chunk, so that Lua's parser would
 * stop at <eof>; 0 when it may be complete, or may hold an error only the parser can name. */
int chunk_unfinished(const chunk_scan *s);

#endif
