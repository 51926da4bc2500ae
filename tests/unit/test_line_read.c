/* test_line_read.c: line_read (repl/common/line_read.c), which the console and a run with no
 * console read a piped line with: lines without their newline, an empty line, a last line with
 * no newline, the end of input, and errno left as getline set it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "line_read.h"

int main(void) {
  PLAN(7);
  static const char text[] = "first\n\nlast, no newline";
  FILE *in = fmemopen((void *)text, sizeof text - 1, "r");
  char *a = line_read(in), *b = line_read(in), *c = line_read(in);
  CHECK("a line comes without its newline", a && strcmp(a, "first") == 0);
  CHECK("an empty line is an empty string, not the end", b && strcmp(b, "") == 0);
  CHECK("a last line with no newline comes whole", c && strcmp(c, "last, no newline") == 0);
  errno = 0;
  CHECK("then the end of input: NULL", line_read(in) == NULL);
  CHECK("and errno untouched at a plain end", errno == 0);
  free(a);
  free(b);
  free(c);
  fclose(in);
  /* a stream that cannot be read: NULL, with getline's errno kept through the free */
  FILE *out = fopen("/dev/null", "w");
  errno = 0;
  CHECK("an unreadable stream: NULL", line_read(out) == NULL);
  CHECK("with errno set (EBADF)", errno == EBADF);
  fclose(out);
  return failures != 0;
}
