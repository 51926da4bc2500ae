/* test_histfile.c: the history file's format (repl/console/histfile.c): an entry of several lines,
 * or with backslashes, reads back as the one entry it was, and readline's older files still
 * read one entry a line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "histfile.h"

/* The entries parsed from text, joined by '|' (no test entry holds one). */
static char got[1024];
static void collect(const char *entry, void *ud) {
  (void)ud;
  if (got[0]) strcat(got, "|");
  strcat(got, entry);
}

static size_t parse(const char *text, int *current) {
  char *copy = strdup(text);
  got[0] = '\0';
  size_t n = histfile_parse(copy, strlen(copy), collect, NULL, current);
  free(copy);
  return n;
}

/* Writes entries through a pipe with histfile_write and reads back the file's text. */
static char *written(const char *const *entries, size_t n) {
  static char buf[1024];
  int fds[2];
  if (pipe(fds) != 0) return NULL;
  int rc = histfile_write(fds[1], entries, n);
  close(fds[1]);
  ssize_t r = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  buf[r > 0 ? r : 0] = '\0';
  return rc == 0 ? buf : NULL;
}

int main(void) {
  PLAN(11);
  size_t len;
  char *line = histfile_encode("for i = 1, 2 do\n  print(\"a\\nb\")\nend", &len);
  CHECK("a chunk of three lines is one line", line && strcmp(line, "for i = 1, 2 do\\n  print(\"a\\\\nb\")\\nend\n") == 0);
  CHECK("and its length is told", line && len == strlen(line));
  free(line);

  const char *entries[] = {"for i = 1, 2 do\n  print(\"a\\nb\")\nend", "x = 1", "s = '\\\\'"};
  char *text = written(entries, 3);
  CHECK("the file starts with the header", text && strncmp(text, HISTFILE_HEADER "\n", strlen(HISTFILE_HEADER) + 1) == 0);
  int current = 0;
  CHECK("three entries come back", text && parse(text, &current) == 3);
  CHECK("as they were, newlines and backslashes included",
        strcmp(got, "for i = 1, 2 do\n  print(\"a\\nb\")\nend|x = 1|s = '\\\\'") == 0);
  CHECK("and the text is known as this format", current == 1);

  CHECK("readline's file is one entry a line", parse("x = 1\nprint(\"a\\nb\")\n", &current) == 2);
  CHECK("read as written, nothing unescaped", strcmp(got, "x = 1|print(\"a\\nb\")") == 0 && current == 0);
  CHECK("a last line without a newline counts, empty lines do not",
        parse(HISTFILE_HEADER "\n\nx = 1\n\ny\\\\z", &current) == 2 && strcmp(got, "x = 1|y\\z") == 0);
  CHECK("a backslash before anything else is kept (a file edited by hand)",
        parse(HISTFILE_HEADER "\na\\tb\\", &current) == 1 && strcmp(got, "a\\tb\\") == 0);
  CHECK("a header alone holds no entry", parse(HISTFILE_HEADER, &current) == 0 && current == 1);
  return failures != 0;
}
