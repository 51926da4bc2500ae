/* backend_util.c: what every backend shares: setting a cl_err, the words for a size or a
 * duration in messages, and host memory with its errors said the same way. Kept apart from
 * backend.c, which picks a backend and so knows each of them: a backend that used these from
 * there would depend on the file that depends on it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

void cl_err_set(cl_err *err, const char *name, const char *fmt, ...) {
  memset(err, 0, sizeof *err);
  snprintf(err->name, sizeof err->name, "%s", name);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->text, sizeof err->text, fmt, ap);
  va_end(ap);
}

const char *cl_bytes_text(char *buf, size_t cap, double n) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (n >= 1024 && i < 5) {
    n /= 1024;
    i++;
  }
  if (n == floor(n)) snprintf(buf, cap, "%.0f %s", n, unit[i]);
  else snprintf(buf, cap, "%.*f %s", n < 10 ? 2 : n < 100 ? 1 : 0, n, unit[i]);
  return buf;
}

/* Below a second in ms, as a class writes its limits ("500 ms"); %g drops a trailing ".0". */
const char *cl_seconds_text(char *buf, size_t cap, double s) {
  if (s < 1) snprintf(buf, cap, "%.3g ms", s * 1e3);
  else snprintf(buf, cap, "%.3g s", s);
  return buf;
}

/* Set on the Lua thread before the limit it words is set, read by a backend's watcher after:
 * a learner outside a class must not be told of one. */
static volatile int time_limit_by_class;

void cl_kernel_time_by_class(int by_class) { time_limit_by_class = by_class; }

const char *cl_kernel_time_message(char *buf, size_t cap, const char *kernel, double limit_s) {
  char t[32];
  cl_seconds_text(t, sizeof t, limit_s);
  snprintf(buf, cap, time_limit_by_class
                         ? "kernel %s was stopped after %s: this class limits a launch to %s "
                           "(kernel_time_limit). Look for a loop that never ends, or launch "
                           "less work."
                         : "kernel %s was stopped after %s: this session's time limit per launch "
                           "is %s (cuda.limits). Look for a loop that never ends, or launch "
                           "less work.",
           kernel && kernel[0] ? kernel : "(unnamed)", t, t);
  return buf;
}

void *host_alloc_zeroed(size_t bytes, cl_err *err) {
  size_t rounded = bytes ? (bytes + 255) / 256 * 256 : 256;
  void *p = rounded >= bytes ? aligned_alloc(256, rounded) : NULL;
  if (!p) {
    cl_err_set(err, "out of memory", "out of host memory allocating %zu bytes", bytes);
    err->oom = 1;
    return NULL;
  }
  return memset(p, 0, rounded);
}

int host_mem_alloc(void **p, size_t bytes, cl_err *err) {
  return (*p = host_alloc_zeroed(bytes, err)) ? 0 : -1;
}

int host_mem_copy(void *dst, const void *src, size_t bytes, cl_err *err) {
  (void)err;
  if (bytes) memmove(dst, src, bytes); /* an empty buffer's pointer may be NULL */
  return 0;
}

int host_mem_set(void *dst, int byte, size_t bytes, cl_err *err) {
  (void)err;
  memset(dst, byte, bytes);
  return 0;
}

/* The terminal's width as lua/term.lua reads it: COLUMNS, else 80, within 40..200. */
static int text_width(void) {
  const char *c = getenv("COLUMNS");
  int w = c ? atoi(c) : 80;
  return w < 40 ? (c ? 40 : 80) : w > 200 ? 200 : w;
}

/* One line of text, broken at spaces so that no piece is wider than width; pieces after the
 * first are indented two more than the line. A word wider than the line is left whole. */
static void write_fitted_line(FILE *out, const char *line, size_t len, int width) {
  size_t lead = 0;
  while (lead < len && line[lead] == ' ') lead++;
  size_t col = 0, i = 0;
  int first = 1;
  while (i < len) {
    size_t ws = i;
    while (ws < len && line[ws] == ' ') ws++;
    size_t we = ws;
    while (we < len && line[we] != ' ') we++;
    if (we == ws) break;
    size_t word = we - ws;
    if (first) {
      fprintf(out, "%.*s", (int)we, line);
      col = we;
      first = 0;
    } else if (col + 1 + word > (size_t)width) {
      fprintf(out, "\n%*s%.*s", (int)(lead + 2), "", (int)word, line + ws);
      col = lead + 2 + word;
    } else {
      fprintf(out, " %.*s", (int)word, line + ws);
      col += 1 + word;
    }
    i = we;
  }
  fputc('\n', out);
}

void cl_print_fitted(FILE *out, const char *text) {
  /* a warning on stderr comes after what the script printed before it, in a log of both */
  if (out == stderr) fflush(stdout);
  int width = text_width();
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    write_fitted_line(out, p, len, width);
    p += len + (nl ? 1 : 0);
  }
}
