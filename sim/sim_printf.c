/* sim_printf.c: device printf. NVRTC lowers printf(fmt, ...) to vprintf(fmt, buf) where buf is
 * a local-memory struct holding the arguments, each aligned to its own size (int, char and short
 * promoted to int as 4 bytes, long/pointers/char* as 8, float promoted to double as 8); a call
 * with no arguments passes a null buf. A '*' width or precision is one more int in the buffer,
 * before the value it applies to.
 *
 * Stance: walk the format once per lane, pull each argument from the buffer according to its
 * conversion, and let the host snprintf format that single conversion, so flags, width and
 * precision behave exactly as in C (the GPU's driver formats on the host with the C library too).
 * The spec handed to the host is rebuilt from the parsed conversion, never copied: '*' becomes
 * the number it took, h and hh are done here by converting the value, so no count or modifier
 * the learner wrote reaches the host's printf unchecked. Lanes print in lane order; a whole
 * warp's text goes to the sink in one piece under the launch lock, so output never interleaves
 * mid-line.
 *
 * No fixed buffers: the format, each %s argument and each conversion are as long as they are
 * (a GPU prints a 700-character %700d or a 3,000-character format whole). The one bound is the
 * GPU's own, the default 1 MiB printf buffer: against a string with no end in sight, and on
 * what one call may print, so a hostile %999999999d or a thousand %1000000d is an error naming
 * the conversion rather than gigabytes of host memory. */
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

/* The most a format, a %s argument or the text of one call may hold: the GPU's default printf
 * buffer (1 MiB). */
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

/* One lane's printf call while it is formatted: where its arguments are and how much it has
 * printed, so that each conversion pulls the next argument and the output stays bounded. */
typedef struct {
  sim_worker *wk;     /* the worker whose out buffer collects the warp's text */
  sim_warp *w;        /* the warp and lane that called printf, for reads and errors */
  int lane;
  const sim_inst *in; /* the call instruction, for errors */
  uint64_t args;      /* generic address of the argument buffer; 0 when the call passes none */
  uint64_t off;       /* offset in it of the next argument (before its alignment) */
  int nargs;          /* arguments read so far, '*' widths and precisions included */
  size_t start;       /* wk->outlen when this call began: its text is what lies past it */
  char **str;         /* the caller's scratch buffer for a %s argument, and its capacity */
  size_t *scap;
} printer;

/* Appends n characters unless this call's text would pass PRINTF_MAX_STR: 0, -1 out of
 * memory, -2 past the bound. The bound keeps a hostile format (a thousand %1000000d) from
 * taking the host's memory. A GPU's driver formats on the host and cuts no text, so this is the
 * simulator's own limit, the size of the GPU's printf buffer as everywhere in this file, and it
 * fails loudly rather than print a silently shortened line. */
static int out_append(printer *pr, const char *s, size_t n) {
  sim_worker *wk = pr->wk;
  if (n > PRINTF_MAX_STR - (wk->outlen - pr->start)) return -2;
  if (out_reserve(wk, n) < 0) return -1;
  memcpy(wk->out + wk->outlen, s, n);
  wk->outlen += n;
  return 0;
}

/* Appends one conversion, formatted by the host's vsnprintf at whatever length it takes, under
 * out_append's bound (same returns). The format is made at run time, so -Wformat-nonliteral is
 * off for this function alone: build_spec makes spec from one checked conversion of the
 * device's format (flags, width and precision as numbers, the host's length modifier and the
 * conversion letter) and the caller passes the argument type that conversion takes, which is
 * what the compiler would have checked. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int out_format(printer *pr, const char *spec, ...) {
  sim_worker *wk = pr->wk;
  va_list ap, ap2;
  va_start(ap, spec);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, spec, ap);
  va_end(ap);
  int rc = n < 0 ? -1 : (size_t)n > PRINTF_MAX_STR - (wk->outlen - pr->start) ? -2 : 0;
  if (rc == 0 && out_reserve(wk, (size_t)n) < 0) rc = -1;
  if (rc == 0) {
    vsnprintf(wk->out + wk->outlen, (size_t)n + 1, spec, ap2);
    wk->outlen += (size_t)n;
  }
  va_end(ap2);
  return rc;
}
#pragma GCC diagnostic pop

/* Why a string could not be read, as the launch's error. */
static int str_fail(printer *pr, int rc, const char *what, uint64_t a) {
  sim_worker *wk = pr->wk;
  if (rc == -2)
    return sim_fail(wk, pr->w, pr->lane, pr->in,
                    "printf: %s at 0x%llx has no end within 1 MiB (the GPU's printf buffer)",
                    what, (unsigned long long)a);
  if (rc == -3)
    return sim_fail(wk, pr->w, pr->lane, pr->in, "printf: out of host memory reading %s", what);
  return sim_fail(wk, pr->w, pr->lane, pr->in, "printf: %s at 0x%llx is not readable", what,
                  (unsigned long long)a);
}

/* A width or precision given as '*': its value is the next argument, an int. */
#define PRINTF_STAR (-2L)
/* A width or precision past this is refused: no conversion may print more than one call may. */
#define PRINTF_MAX_COUNT ((long)PRINTF_MAX_STR)

/* One conversion of a format string, parsed: CUDA's %[flags][width][.precision][size]type,
 * with C's hh and the 64-bit sizes L, q, j, z, t besides h, l and ll. */
typedef struct {
  const char *text; /* the conversion in the format, from its '%', for messages */
  size_t len;       /* its length through the conversion letter */
  char flags[6];    /* the flags given, each once however often repeated, in "-+ #0" order */
  long width;       /* -1 none, PRINTF_STAR, or the digits (PRINTF_MAX_COUNT + 1 past it) */
  long prec;        /* the same for the precision */
  int width_arg;    /* the argument a '*' width came from, for messages; 0 for digits */
  int prec_arg;     /* the same for the precision */
  int shorts;       /* 1 for h, 2 for hh: the value is converted to short or char */
  int longs;        /* l, ll, L, q, j, z and t seen: a 64-bit integer */
  char conv;        /* the conversion letter; 0 at the end of the format */
  int size;         /* bytes the argument takes in the argument buffer: 4 or 8 */
} conversion;

/* Reads a width or precision: '*', or digits (saturated, so a hostile count cannot overflow). */
static long parse_count(const char **pp) {
  const char *p = *pp;
  if (*p == '*') {
    *pp = p + 1;
    return PRINTF_STAR;
  }
  long v = 0;
  for (; *p >= '0' && *p <= '9'; p++)
    if (v <= PRINTF_MAX_COUNT) v = v * 10 + (*p - '0');
  *pp = p;
  return v > PRINTF_MAX_COUNT ? PRINTF_MAX_COUNT + 1 : v;
}

/* Adds flag f to c's flags unless it is there already. */
static void add_flag(conversion *c, char f) {
  size_t n = strlen(c->flags);
  if (!strchr(c->flags, f)) c->flags[n] = f, c->flags[n + 1] = 0;
}

/* Parses the conversion that starts at p (a '%' not followed by another); returns the text
 * after it. c->conv is 0 when the format ends first. */
static const char *parse_conversion(const char *p, conversion *c) {
  memset(c, 0, sizeof *c);
  c->text = p++;
  for (; *p && strchr("-+ #0", *p); p++) add_flag(c, *p);
  c->width = *p == '*' || (*p >= '0' && *p <= '9') ? parse_count(&p) : -1;
  c->prec = -1;
  if (*p == '.') {
    p++;
    c->prec = parse_count(&p);
  }
  for (; *p && strchr("hlLqjzt", *p); p++)
    if (*p == 'h') c->shorts++;
    else c->longs++;
  c->conv = *p;
  if (!c->conv) return p;
  p++;
  c->len = (size_t)(p - c->text);
  int wide = strchr("fFeEgGaAsp", c->conv) || (c->longs && c->conv != 'c');
  c->size = wide ? 8 : 4;
  return p;
}

/* Whether c is a conversion this printf makes: CUDA's types, h and hh on integers only, one
 * kind of length modifier, at most two of it. %n is refused: it writes, and a GPU ignores it. */
static int conversion_ok(const conversion *c) {
  if (!strchr("diouxXcfFeEgGaAsp", c->conv)) return 0;
  if (c->shorts && (c->longs || c->shorts > 2 || !strchr("diouxX", c->conv))) return 0;
  return c->longs <= 2;
}

/* c's text for a message: the conversion as written, cut short past 40 characters. */
static const char *conv_text(const conversion *c, char *buf, size_t cap) {
  if (c->len <= 40) snprintf(buf, cap, "%.*s", (int)c->len, c->text);
  else snprintf(buf, cap, "%.37s...", c->text);
  return buf;
}

/* Builds the host's spec for c into buf (32 bytes hold the longest: five flags, two counts of
 * at most seven digits): the counts as numbers, so no '*' reaches the host, and "ll" before a
 * 64-bit integer's letter. h and hh are left out: format_arg converts the value itself. */
static const char *build_spec(const conversion *c, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "%%%s", c->flags);
  if (c->width >= 0) n += snprintf(buf + n, cap - (size_t)n, "%ld", c->width);
  if (c->prec >= 0) n += snprintf(buf + n, cap - (size_t)n, ".%ld", c->prec);
  int ll = c->size == 8 && strchr("diouxX", c->conv);
  snprintf(buf + n, cap - (size_t)n, "%s%c", ll ? "ll" : "", c->conv);
  return buf;
}

/* Reads the next argument, of size bytes, aligned to its size as NVRTC lays them out; 0, or
 * the launch's error. A call with no arguments passes a null buffer: a conversion then has
 * nothing to read, which is the learner's mistake to name, not an address to report. With too
 * few arguments the reads go on into the thread's other local memory, as on a GPU, until they
 * leave it and fail. */
static int pull_arg(printer *pr, const conversion *c, int size, uint64_t *v) {
  char t[48];
  pr->nargs++;
  if (!pr->args)
    return sim_fail(pr->wk, pr->w, pr->lane, pr->in,
                    "printf: '%s' needs argument %d, but the call passes no arguments",
                    conv_text(c, t, sizeof t), pr->nargs);
  pr->off = (pr->off + (uint64_t)size - 1) / (uint64_t)size * (uint64_t)size;
  *v = 0;
  if (sim_mem_read_generic(pr->wk, pr->w, pr->lane, pr->args + pr->off, v, (size_t)size) < 0)
    return sim_fail(pr->wk, pr->w, pr->lane, pr->in,
                    "printf: cannot read argument %d (for '%s'): does the call pass as many "
                    "arguments as its format takes?", pr->nargs, conv_text(c, t, sizeof t));
  pr->off += (uint64_t)size;
  return 0;
}

/* Replaces a '*' width or precision of c with the int argument it takes, as C does: a negative
 * width is the '-' flag and its magnitude, a negative precision is none. 0, or the error. */
static int take_stars(printer *pr, conversion *c) {
  uint64_t v;
  if (c->width == PRINTF_STAR) {
    if (pull_arg(pr, c, 4, &v) < 0) return -1;
    long long x = (int32_t)v;
    if (x < 0) add_flag(c, '-'), x = -x;
    c->width = x > PRINTF_MAX_COUNT ? PRINTF_MAX_COUNT + 1 : (long)x;
    c->width_arg = pr->nargs;
  }
  if (c->prec == PRINTF_STAR) {
    if (pull_arg(pr, c, 4, &v) < 0) return -1;
    long long x = (int32_t)v;
    c->prec = x < 0 ? -1 : x > PRINTF_MAX_COUNT ? PRINTF_MAX_COUNT + 1 : (long)x;
    c->prec_arg = pr->nargs;
  }
  return 0;
}

/* Refuses a width or precision of more than one call may print, before the host pads to it
 * (a %999999999d would take seconds and a gigabyte); 0, or the error. */
static int check_count(printer *pr, const conversion *c, long count, int arg, const char *what) {
  if (count <= PRINTF_MAX_COUNT) return 0;
  char t[48], from[40] = "";
  if (arg) snprintf(from, sizeof from, " (from argument %d)", arg);
  return sim_fail(pr->wk, pr->w, pr->lane, pr->in,
                  "printf: the %s%s in '%s' is over 1 MiB, the most one call may print", what,
                  from, conv_text(c, t, sizeof t));
}

/* The launch's error for an out_append or out_format result other than 0. */
static int out_fail(printer *pr, int rc) {
  if (rc == 0) return 0;
  if (rc == -2)
    return sim_fail(pr->wk, pr->w, pr->lane, pr->in,
                    "printf: the text of one call is over 1 MiB, the most one call may print");
  return sim_fail(pr->wk, pr->w, pr->lane, pr->in,
                  "printf: out of host memory formatting argument %d", pr->nargs);
}

/* Formats an integer conversion; h and hh convert the value to short or char first, as C does
 * (the argument came promoted to int). Returns out_format's result. */
static int format_int(printer *pr, const conversion *c, const char *spec, uint64_t v) {
  int sign = c->conv == 'd' || c->conv == 'i';
  int32_t i = (int32_t)v;
  uint32_t u = (uint32_t)v;
  if (c->size == 8) return out_format(pr, spec, (long long)v);
  if (c->shorts == 1) i = (short)i, u = (unsigned short)u;
  if (c->shorts == 2) i = (signed char)i, u = (unsigned char)u;
  return sign ? out_format(pr, spec, (int)i) : out_format(pr, spec, (unsigned)u);
}

/* Formats %p as the GPU does, 0x and hexadecimal digits, in its width ('-' left-justifies). */
static int format_ptr(printer *pr, const conversion *c, uint64_t v) {
  char hex[24];
  snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)v);
  int width = c->width < 0 ? 0 : (int)c->width;
  return out_format(pr, strchr(c->flags, '-') ? "%-*s" : "%*s", width, hex);
}

/* Formats c's argument, whose raw bits are v; 0, or the launch's error. */
static int format_arg(printer *pr, const conversion *c, uint64_t v) {
  char spec[32];
  int frc;
  if (strchr("diouxX", c->conv)) {
    frc = format_int(pr, c, build_spec(c, spec, sizeof spec), v);
  } else if (c->conv == 'c') {
    frc = out_format(pr, build_spec(c, spec, sizeof spec), (int)(uint32_t)v);
  } else if (strchr("fFeEgGaA", c->conv)) {
    double d;
    memcpy(&d, &v, 8);
    frc = out_format(pr, build_spec(c, spec, sizeof spec), d);
  } else if (c->conv == 's') {
    build_spec(c, spec, sizeof spec);
    if (v == 0) {
      frc = out_format(pr, spec, "(null)");
    } else {
      char what[48];
      snprintf(what, sizeof what, "the string argument %d", pr->nargs);
      int rc = read_str(pr->wk, pr->w, pr->lane, v, pr->str, pr->scap);
      if (rc < 0) return str_fail(pr, rc, what, v);
      frc = out_format(pr, spec, *pr->str);
    }
  } else {
    frc = format_ptr(pr, c, v);
  }
  return out_fail(pr, frc);
}

/* Formats the conversion at p (a '%' not followed by another) with the arguments it takes;
 * sets *next past it (NULL at the end of the format). 0, or the launch's error. */
static int format_conversion(printer *pr, const char *p, const char **next) {
  conversion c;
  char t[48];
  *next = parse_conversion(p, &c);
  if (!c.conv) {
    *next = NULL;
    return 0;
  }
  if (!conversion_ok(&c))
    return sim_fail(pr->wk, pr->w, pr->lane, pr->in, "printf: unsupported conversion '%s'",
                    conv_text(&c, t, sizeof t));
  /* Two forms the GPU's printf does not make, though C does (measured on an H100, where %hhx
   * %hd of 0x1ff41 printed "41 -191" once and "41 26661" in another run): there the
   * call's text would be wrong, not merely different, so the simulator refuses them too */
  if (c.prec == PRINTF_STAR)
    return sim_fail(pr->wk, pr->w, pr->lane, pr->in,
                    "printf: '%s' takes its precision from an argument ('.*'), which the GPU's "
                    "printf does not: it prints the conversion as written, or reads the wrong "
                    "arguments after it; write the precision into the format (%%.3f)",
                    conv_text(&c, t, sizeof t));
  if (c.shorts == 2)
    return sim_fail(pr->wk, pr->w, pr->lane, pr->in,
                    "printf: '%s': the GPU's printf does not take hh: it prints another value, or "
                    "reads the arguments after it from the wrong place; print (int)(signed char)x "
                    "with %%d, or (unsigned char)x with %%u or %%x",
                    conv_text(&c, t, sizeof t));
  if (take_stars(pr, &c) < 0) return -1;
  if (check_count(pr, &c, c.width, c.width_arg, "width") < 0) return -1;
  if (check_count(pr, &c, c.prec, c.prec_arg, "precision") < 0) return -1;
  uint64_t v;
  if (pull_arg(pr, &c, c.size, &v) < 0) return -1;
  return format_arg(pr, &c, v);
}

/* Formats one lane's printf into wk->out; returns the number of arguments it read or -1. f and
 * str are the caller's scratch buffers (grown here, freed by the caller). */
static int format_lane(printer *pr, uint64_t fmt, char **fbuf, size_t *fcap) {
  int rc = read_str(pr->wk, pr->w, pr->lane, fmt, fbuf, fcap);
  if (rc < 0) return str_fail(pr, rc, "the format string", fmt);
  for (const char *p = *fbuf; p && *p;) {
    if (*p == '%' && p[1] == '%') {
      if (out_fail(pr, out_append(pr, "%", 1)) < 0) return -1;
      p += 2;
    } else if (*p == '%') {
      if (format_conversion(pr, p, &p) < 0) return -1;
    } else {
      const char *q = strchr(p, '%');
      size_t n = q ? (size_t)(q - p) : strlen(p);
      if (out_fail(pr, out_append(pr, p, n)) < 0) return -1;
      p += n;
    }
  }
  return pr->nargs;
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
    uint64_t fmt;
    printer pr = {.wk = wk, .w = w, .lane = l, .in = in, .start = wk->outlen, .str = &str,
                  .scap = &scap};
    memcpy(&fmt, fp + c->arg_off[0], 8);
    memcpy(&pr.args, fp + c->arg_off[1], 8);
    int n = format_lane(&pr, fmt, &fbuf, &fcap);
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
