/* line_read.h: one line of a stream, the way both the console (piped input, or a terminal
 * without readline) and a run with no console (the debugger's prompt) read one. */
#ifndef CUDALAB_LINE_READ_H
#define CUDALAB_LINE_READ_H

#include <stdio.h>

/* The next line of in without its newline, malloc'd (the caller frees it); NULL at the end of
 * input or on an error, with errno as getline left it (EINTR: a signal cut the read short). */
char *line_read(FILE *in);

#endif
