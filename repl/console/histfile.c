/* histfile.c: the history file's format. Readline's own file is one line per entry, so a chunk
 * typed over several lines came back after a restart as that many separate entries, and the up
 * arrow gave its last line alone. Here each entry is one line with its newlines written as \n
 * and its backslashes as \\, under a header line that says so.
 *
 * Readline's other way of keeping such entries (timestamp lines, history_multiline_entries) was
 * turned down: its truncation counts lines, not entries, and can cut an entry in two, after which
 * the whole file reads back as single lines; and a Lua line starting with # and a digit would
 * be taken for a timestamp. A file without the header (readline's, from an older cudalab) is
 * read as it was written, one entry a line; lineedit.c then rewrites it in this format.
 *
 * Plain C on buffers and descriptors: opening the file safely is lineedit.c's job. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "histfile.h"

char *histfile_encode(const char *entry, size_t *len) {
  size_t n = strlen(entry), extra = 0;
  for (size_t i = 0; i < n; i++) extra += entry[i] == '\n' || entry[i] == '\\';
  char *out = malloc(n + extra + 2), *o = out;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (entry[i] == '\n' || entry[i] == '\\') *o++ = '\\';
    *o++ = entry[i] == '\n' ? 'n' : entry[i];
  }
  *o++ = '\n';
  *o = '\0';
  *len = (size_t)(o - out);
  return out;
}

/* Undoes histfile_encode on one line, in place. A backslash before anything but n or a
 * backslash (a file edited by hand) is kept as it is. */
static void decode(char *s) {
  char *o = s;
  for (; *s; s++) {
    if (*s == '\\' && (s[1] == 'n' || s[1] == '\\')) {
      s++;
      *o++ = *s == 'n' ? '\n' : '\\';
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
}

size_t histfile_parse(char *text, size_t len, histfile_add add, void *ud, int *current) {
  size_t count = 0, hlen = strlen(HISTFILE_HEADER);
  *current = len >= hlen && memcmp(text, HISTFILE_HEADER, hlen) == 0 &&
             (len == hlen || text[hlen] == '\n');
  size_t at = *current ? hlen : 0;
  while (at < len) {
    char *line = text + at, *nl = memchr(line, '\n', len - at);
    size_t n = nl ? (size_t)(nl - line) : len - at;
    at += n + 1;
    if (n == 0) continue;
    if (nl) *nl = '\0';
    char *entry = nl ? line : strndup(line, n); /* the last line may have no newline */
    if (!entry) break;
    if (*current) decode(entry);
    add(entry, ud);
    count++;
    if (!nl) free(entry);
  }
  return count;
}

int histfile_write(int fd, const char *const *entries, size_t n) {
  size_t total = strlen(HISTFILE_HEADER) + 1;
  char **lines = calloc(n ? n : 1, sizeof *lines);
  size_t *lens = calloc(n ? n : 1, sizeof *lens);
  char *buf = NULL;
  int rc = -1;
  if (!lines || !lens) goto cleanup;
  for (size_t i = 0; i < n; i++) {
    if (!(lines[i] = histfile_encode(entries[i], &lens[i]))) goto cleanup;
    total += lens[i];
  }
  if (!(buf = malloc(total))) goto cleanup;
  char *o = stpcpy(buf, HISTFILE_HEADER);
  *o++ = '\n';
  for (size_t i = 0; i < n; i++) o = (char *)memcpy(o, lines[i], lens[i]) + lens[i];
  rc = 0;
  for (size_t off = 0; off < total && rc == 0;) {
    ssize_t w = write(fd, buf + off, total - off);
    if (w < 0) rc = -1;
    else off += (size_t)w;
  }
cleanup:
  for (size_t i = 0; lines && i < n; i++) free(lines[i]);
  free(lines);
  free(lens);
  free(buf);
  return rc;
}
