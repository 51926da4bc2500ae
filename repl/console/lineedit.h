/* lineedit.h: reading input lines, behind three calls (read, save, free), so that the console
 * works the same with GNU Readline on a terminal and with plain reads from a pipe or a test.
 * Used by console.c. */
#ifndef CUDALAB_LINEEDIT_H
#define CUDALAB_LINEEDIT_H

#include <signal.h>

/* Candidates for a word, as a NUL-separated list in a malloc'd buffer (len bytes in all);
 * before is the line's text in front of the word (inside a call, after =, ...). */
typedef char *(*lineedit_completer)(const char *word, const char *before, size_t *len);

/* tty: use readline; history_file may be NULL (then history lives only in memory).
 * sigint: the console's Ctrl-C counter, watched while waiting for a key. */
void lineedit_init(int tty, const char *history_file, lineedit_completer complete,
                   volatile sig_atomic_t *sigint);
/* The next line without its newline (malloc'd), or NULL at end of input. *interrupted is set
 * (and NULL returned) when Ctrl-C was pressed at the prompt. */
char *lineedit_read(const char *prompt, int *interrupted);
/* Adds an entered chunk to the history (and the history file). */
void lineedit_save(const char *chunk);
void lineedit_free(char *line);
/* Writes back what must be kept (history trimmed to its limit). */
void lineedit_close(void);

#endif
