/* histfile.h: the history file's format, one entry a line, so that a chunk of several lines comes
 * back from the file as the one entry it was. Used by lineedit.c, which opens the file. */
#ifndef CUDALAB_HISTFILE_H
#define CUDALAB_HISTFILE_H

#include <stddef.h>

/* The first line of a file in this format. A file without it was written by readline, one
 * entry a line with nothing escaped, and is read that way. */
#define HISTFILE_HEADER "# cudalab history: one entry a line, \\n a newline, \\\\ a backslash"

/* The line that holds entry: newlines and backslashes escaped, a newline at the end. malloc'd
 * (the caller frees it), *len its length; NULL when out of memory. */
char *histfile_encode(const char *entry, size_t *len);

/* Calls add(entry, ud) for each entry of a file's text, in order, decoding in place (text is
 * changed; it need not end in a newline). An empty line is no entry. Returns how many entries
 * it found; *current says whether the text is in this format (has the header). */
typedef void (*histfile_add)(const char *entry, void *ud);
size_t histfile_parse(char *text, size_t len, histfile_add add, void *ud, int *current);

/* Writes the header and entries[0..n-1] to fd in one buffer. 0, or -1 with errno set. */
int histfile_write(int fd, const char *const *entries, size_t n);

#endif
