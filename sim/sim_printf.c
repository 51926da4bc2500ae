/* sim_printf.c: device printf. NVRTC lowers printf(fmt, ...) to vprintf(fmt, buf) where buf is
 * a local-memory struct holding the arguments, each aligned to its own size (int and char as
 * 4 bytes, long/pointers/char* as 8, float promoted to double as 8).
 *
 * Stance: walk the format once per lane, pull each argument from the buffer according to its
 * conversion, and let the host snprintf format that single conversion, so flags, width and
 * precision behave exactly as in C. Lanes print in lane order; a whole warp's text goes to the
 * sink in one piece under the launch lock, so output never interleaves mid-line.
 *
 * No fixed buffers: the format, each %s argument and each conversion are as long as they are
 * (a GPU prints a 700-character %700d or a 3,000-character format whole). The one bound is the
 * GPU's own, the default 1 MiB printf buffer, against a string with no end in sight. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

/* Makes room for n more characters and a NUL in wk->out; -1 out of memory. */
static int out_reserve(sim_worker *wk, size_t n) {
  if (wk->outlen + n + 1 > wk->outcap) {
    size_t cap = wk->outcap ? wk->outcap * 2 : 1024;
    while (cap < wk->outlen + n + 1) cap *= 2;
    char *p = realloc(wk->out, cap);
    if (!p) return -1;
    wk->out = p;
    wk->outcap = cap;
  }
  return 0;
}

static int out_append(sim_worker *wk, const char *s, size_t n) {
  if (out_reserve(wk, n) < 0) return -1;
  memcpy(wk->out + wk->outlen, s, n);
  wk->outlen += n;
  return 0;
}

/* The most a format or a %s argument may hold: the GPU's default printf buffer (1 MiB). */
#define PRINTF_MAX_STR ((size_t)1 << 20)

/* Reads the NUL-terminated string at generic address a into *buf (grown with realloc; the
 * caller frees it, also on failure). Returns 0, -1 when memory is unreadable (the launch has
 * failed with the address), -2 when no NUL comes within PRINTF_MAX_STR, -3 out of memory. */
static int read_str(sim_worker *wk, sim_warp *w, int lane, uint64_t a, char **buf, size_t *cap) {
  for (size_t i = 0;; i++) {
    if (i == PRINTF_MAX_STR) return -2;
    if (i + 1 > *cap) {
      size_t ncap = *cap ? *cap * 2 : 256;
      char *p = realloc(*buf, ncap);
      if (!p) return -3;
      *buf = p, *cap = ncap;
    }
    if (sim_mem_read_generic(wk, w, lane, a + i, &(*buf)[i], 1) < 0) return -1;
    if (!(*buf)[i]) return 0;
  }
}

/* Appends one conversion, formatted by the host's vsnprintf at whatever length it takes.
 * The format is made at run time, so -Wformat-nonliteral is off for this function alone:
 * format_lane builds spec from one conversion of the device's format (flags, width,
 * precision, then the host's length modifier and the conversion it has checked) and passes
 * the argument type that conversion takes, which is what the compiler would have checked. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int out_format(sim_worker *wk, const char *spec, ...) {
  va_list ap, ap2;
  va_start(ap, spec);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, spec, ap);
  va_end(ap);
  if (n < 0 || out_reserve(wk, (size_t)n) < 0) {
    va_end(ap2);
    return -1;
  }
  vsnprintf(wk->out + wk->outlen, (size_t)n + 1, spec, ap2);
  wk->outlen += (size_t)n;
  va_end(ap2);
  return 0;
}
#pragma GCC diagnostic pop

/* Why a string could not be read, as the launch's error. */
static int str_fail(sim_worker *wk, sim_warp *w, int l, const sim_inst *in, int rc,
                    const char *what, uint64_t a) {
  if (rc == -2)
    return sim_fail(wk, w, l, in,
                    "printf: %s at 0x%llx has no end within 1 MiB (the GPU's printf buffer)",
                    what, (unsigned long long)a);
  if (rc == -3) return sim_fail(wk, w, l, in, "printf: out of host memory reading %s", what);
  return sim_fail(wk, w, l, in, "printf: %s at 0x%llx is not readable", what,
                  (unsigned long long)a);
}

/* One conversion of a format string, parsed: the spec rebuilt without length modifiers (the
 * host's are added for 64-bit values), the conversion letter, and the argument's size. */
typedef struct {
  char spec[64];
  size_t n;  /* characters in spec so far (not terminated until the conversion is added) */
  char conv; /* 0 at the end of the format */
  int size;  /* bytes the argument takes in the argument buffer: 4 or 8 */
} conversion;

/* Parses the conversion that starts at p (a '%' not followed by another); returns the text
 * after it. */
static const char *parse_conversion(const char *p, conversion *c) {
  const char *s = p++;
  while (*p && strchr("-+ #0", *p)) p++;
  while (*p >= '0' && *p <= '9') p++;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++;
  }
  int longs = 0;
  for (; *p && strchr("hlLqjzt", *p); p++)
    if (*p != 'h') longs++;
  c->conv = *p;
  c->n = 0;
  if (!c->conv) return p;
  p++;
  for (const char *q = s; q < p - 1 && c->n < sizeof c->spec - 4; q++)
    if (!strchr("hlLqjzt", *q)) c->spec[c->n++] = *q;
  int wide = strchr("fFeEgGaA", c->conv) || c->conv == 's' || c->conv == 'p' || longs;
  c->size = wide ? 8 : 4;
  return p;
}

/* Appends the conversion letter (after "ll" for a 64-bit integer) and terminates the spec. */
static const char *finish_spec(conversion *c) {
  if (c->size == 8 && strchr("diouxXc", c->conv)) {
    c->spec[c->n++] = 'l';
    c->spec[c->n++] = 'l';
  }
  c->spec[c->n++] = c->conv;
  c->spec[c->n] = 0;
  return c->spec;
}

/* Formats argument number nargs, whose raw bits are v; 0, or the launch's error. str and scap
 * are the caller's scratch buffer for a string argument. */
static int format_arg(sim_worker *wk, sim_warp *w, const sim_inst *in, int l, conversion *c,
                      uint64_t v, int nargs, char **str, size_t *scap) {
  int frc;
  if (strchr("diouxXc", c->conv)) {
    const char *spec = finish_spec(c);
    if (c->conv == 'c')
      frc = out_format(wk, spec, (int)(uint32_t)v);
    else if (c->size == 8)
      frc = out_format(wk, spec, (long long)v);
    else if (c->conv == 'd' || c->conv == 'i')
      frc = out_format(wk, spec, (int)(int32_t)v);
    else
      frc = out_format(wk, spec, (unsigned)v);
  } else if (strchr("fFeEgGaA", c->conv)) {
    double d;
    memcpy(&d, &v, 8);
    frc = out_format(wk, finish_spec(c), d);
  } else if (c->conv == 's') {
    const char *spec = finish_spec(c);
    if (v == 0) {
      frc = out_format(wk, spec, "(null)");
    } else {
      char what[48];
      snprintf(what, sizeof what, "the string argument %d", nargs);
      int rc = read_str(wk, w, l, v, str, scap);
      if (rc < 0) return str_fail(wk, w, l, in, rc, what, v);
      frc = out_format(wk, spec, *str);
    }
  } else if (c->conv == 'p') {
    frc = out_format(wk, "0x%llx", (unsigned long long)v);
  } else {
    return sim_fail(wk, w, l, in, "printf: unsupported conversion '%%%c'", c->conv);
  }
  if (frc < 0)
    return sim_fail(wk, w, l, in, "printf: out of host memory formatting argument %d", nargs);
  return 0;
}

/* Formats one lane's printf into wk->out; returns the number of arguments or -1. f and str are
 * the caller's scratch buffers (grown here, freed by the caller). */
static int format_lane(sim_worker *wk, sim_warp *w, const sim_inst *in, int l, uint64_t fmt,
                       uint64_t args, char **fbuf, size_t *fcap, char **str, size_t *scap) {
  int rc = read_str(wk, w, l, fmt, fbuf, fcap);
  if (rc < 0) return str_fail(wk, w, l, in, rc, "the format string", fmt);
  uint64_t off = 0;
  int nargs = 0;
  for (const char *p = *fbuf; *p;) {
    if (*p != '%') {
      const char *q = strchr(p, '%');
      size_t n = q ? (size_t)(q - p) : strlen(p);
      out_append(wk, p, n);
      p += n;
      continue;
    }
    if (p[1] == '%') {
      out_append(wk, "%", 1);
      p += 2;
      continue;
    }
    conversion c;
    p = parse_conversion(p, &c);
    if (!c.conv) break;
    off = (off + (uint64_t)c.size - 1) / (uint64_t)c.size * (uint64_t)c.size;
    uint64_t v = 0;
    if (sim_mem_read_generic(wk, w, l, args + off, &v, (size_t)c.size) < 0)
      return sim_fail(wk, w, l, in, "printf: cannot read argument %d", nargs + 1);
    off += (uint64_t)c.size;
    nargs++;
    if (format_arg(wk, w, in, l, &c, v, nargs, str, scap) < 0) return -1;
  }
  return nargs;
}

static void stdout_sink(const char *text, size_t len, void *ud) {
  (void)ud;
  fwrite(text, 1, len, stdout);
  fflush(stdout);
}

int sim_printf_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  sim_run *run = wk->run;
  const sim_call *c = &run->m->calls[in->imm];
  wk->outlen = 0;
  char *fbuf = NULL, *str = NULL;
  size_t fcap = 0, scap = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    unsigned char *fp = w->fparam + (size_t)l * run->fstride;
    uint64_t fmt, args;
    memcpy(&fmt, fp + c->arg_off[0], 8);
    memcpy(&args, fp + c->arg_off[1], 8);
    int n = format_lane(wk, w, in, l, fmt, args, &fbuf, &fcap, &str, &scap);
    if (n < 0) {
      free(fbuf);
      free(str);
      return -1;
    }
    if (c->ret_off >= 0) {
      uint32_t r = (uint32_t)n;
      memcpy(fp + c->ret_off, &r, 4);
    }
  }
  free(fbuf);
  free(str);
  if (wk->outlen) {
    pthread_mutex_lock(&run->lock);
    if (run->dev->sink) run->dev->sink(wk->out, wk->outlen, run->dev->sink_ud);
    else stdout_sink(wk->out, wk->outlen, NULL);
    pthread_mutex_unlock(&run->lock);
  }
  return 0;
}
