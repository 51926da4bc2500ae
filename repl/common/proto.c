/* proto.c: framing of console <-> engine messages. Blocking I/O on pipes; EINTR is retried so
 * that a Ctrl-C arriving mid-message never tears one. The console watches for signals with
 * poll() before it reads, not inside a read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

int proto_write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int proto_read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

int proto_send(int fd, char type, const void *data, size_t len) {
  unsigned char hdr[5] = {(unsigned char)type, (unsigned char)(len >> 24),
                          (unsigned char)(len >> 16), (unsigned char)(len >> 8),
                          (unsigned char)len};
  if (len > 0xffffffffu) return -1;
  if (proto_write_all(fd, hdr, sizeof hdr)) return -1;
  return len ? proto_write_all(fd, data, len) : 0;
}

int proto_recv(int fd, char *type, char **data, size_t *len) {
  unsigned char hdr[5];
  if (proto_read_all(fd, hdr, sizeof hdr)) return -1;
  size_t n = (size_t)hdr[1] << 24 | (size_t)hdr[2] << 16 | (size_t)hdr[3] << 8 | hdr[4];
  char *buf = malloc(n + 1);
  if (!buf) return -1;
  if (n && proto_read_all(fd, buf, n)) {
    free(buf);
    return -1;
  }
  buf[n] = '\0';
  *type = (char)hdr[0];
  *data = buf;
  *len = n;
  return 0;
}
