/* line_read.c: see line_read.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>

#include "line_read.h"

char *line_read(FILE *in) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, in);
  if (n < 0) {
    int e = errno; /* the caller reads it: EINTR is not the end of input */
    free(line);
    errno = e;
    return NULL;
  }
  if (n > 0 && line[n - 1] == '\n') line[n - 1] = '\0';
  return line;
}
