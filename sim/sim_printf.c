/* sim_printf.c: device printf. NVRTC lowers printf(fmt, ...) to vprintf(fmt, buf) where buf is
 * a local-memory struct holding the arguments, each aligned to its own size (int and char as
 * 4 bytes, long/pointers/char* as 8, float promoted to double as 8).
 *
 * Stance: walk the format once per lane, pull each argument from the buffer according to its
 * conversion, and let the host snprintf format that single conversion, so flags, width and
 * precision behave exactly as in C. Lanes print in lane order; a whole warp's text goes to the
 * sink in one piece under the launch lock, so output never interleaves mid-line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"

static int out_append(sim_worker *wk, const char *s, size_t n) {
  if (wk->outlen + n + 1 > wk->outcap) {
    size_t cap = wk->outcap ? wk->outcap * 2 : 1024;
    while (cap < wk->outlen + n + 1) cap *= 2;
    char *p = realloc(wk->out, cap);
    if (!p) return -1;
    wk->out = p;
    wk->outcap = cap;
  }
  memcpy(wk->out + wk->outlen, s, n);
  wk->outlen += n;
  return 0;
}

/* Reads a NUL-terminated string at a generic address, at most cap-1 characters. */
static int read_str(sim_worker *wk, sim_warp *w, int lane, uint64_t a, char *buf, size_t cap) {
  size_t i = 0;
  for (; i + 1 < cap; i++) {
    if (sim_mem_read_generic(wk, w, lane, a + i, &buf[i], 1) < 0) return -1;
    if (!buf[i]) return 0;
  }
  buf[i] = 0;
  return 0;
}

/* Formats one lane's printf into wk->out; returns the number of arguments or -1. */
static int format_lane(sim_worker *wk, sim_warp *w, const sim_inst *in, int l, uint64_t fmt, uint64_t args) {
  char f[2048];
  if (read_str(wk, w, l, fmt, f, sizeof f) < 0)
    return sim_fail(wk, w, l, in, "printf: the format string at 0x%llx is not readable", (unsigned long long)fmt);
  uint64_t off = 0;
  int nargs = 0;
  for (const char *p = f; *p;) {
    if (*p != '%') {
      const char *q = strchr(p, '%');
      size_t n = q ? (size_t)(q - p) : strlen(p);
      out_append(wk, p, n);
      p += n;
      continue;
    }
    if (p[1] == '%') { out_append(wk, "%", 1); p += 2; continue; }
    char spec[64];
    const char *s = p++;
    while (*p && strchr("-+ #0", *p)) p++;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == '.') { p++; while (*p >= '0' && *p <= '9') p++; }
    int longs = 0;
    while (*p && strchr("hlLqjzt", *p)) { if (*p != 'h') longs++; p++; }
    char conv = *p;
    if (!conv) break;
    p++;
    /* Rebuild the spec without length modifiers, then add the host's for 64-bit values. */
    size_t n = 0;
    for (const char *c = s; c < p - 1 && n < sizeof spec - 4; c++)
      if (!strchr("hlLqjzt", *c)) spec[n++] = *c;
    char tmp[512];
    int size = 4;
    if (strchr("fFeEgGaA", conv) || conv == 's' || conv == 'p' || longs) size = 8;
    off = (off + (uint64_t)size - 1) / (uint64_t)size * (uint64_t)size;
    uint64_t v = 0;
    if (sim_mem_read_generic(wk, w, l, args + off, &v, (size_t)size) < 0)
      return sim_fail(wk, w, l, in, "printf: cannot read argument %d", nargs + 1);
    off += (uint64_t)size;
    nargs++;
    if (strchr("diouxXc", conv)) {
      if (size == 8) { spec[n++] = 'l'; spec[n++] = 'l'; }
      spec[n++] = conv;
      spec[n] = 0;
      if (conv == 'c') snprintf(tmp, sizeof tmp, spec, (int)(uint32_t)v);
      else if (size == 8) snprintf(tmp, sizeof tmp, spec, (long long)v);
      else if (conv == 'd' || conv == 'i') snprintf(tmp, sizeof tmp, spec, (int)(int32_t)v);
      else snprintf(tmp, sizeof tmp, spec, (unsigned)v);
    } else if (strchr("fFeEgGaA", conv)) {
      double d;
      memcpy(&d, &v, 8);
      spec[n++] = conv;
      spec[n] = 0;
      snprintf(tmp, sizeof tmp, spec, d);
    } else if (conv == 's') {
      char str[1024];
      if (v == 0) snprintf(str, sizeof str, "(null)");
      else if (read_str(wk, w, l, v, str, sizeof str) < 0)
        return sim_fail(wk, w, l, in, "printf: the string argument %d at 0x%llx is not readable", nargs, (unsigned long long)v);
      spec[n++] = 's';
      spec[n] = 0;
      snprintf(tmp, sizeof tmp, spec, str);
    } else if (conv == 'p') {
      snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)v);
    } else {
      return sim_fail(wk, w, l, in, "printf: unsupported conversion '%%%c'", conv);
    }
    out_append(wk, tmp, strlen(tmp));
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
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    unsigned char *fp = w->fparam + (size_t)l * run->fstride;
    uint64_t fmt, args;
    memcpy(&fmt, fp + c->arg_off[0], 8);
    memcpy(&args, fp + c->arg_off[1], 8);
    int n = format_lane(wk, w, in, l, fmt, args);
    if (n < 0) return -1;
    if (c->ret_off >= 0) { uint32_t r = (uint32_t)n; memcpy(fp + c->ret_off, &r, 4); }
  }
  if (wk->outlen) {
    pthread_mutex_lock(&run->lock);
    if (run->dev->sink) run->dev->sink(wk->out, wk->outlen, run->dev->sink_ud);
    else stdout_sink(wk->out, wk->outlen, NULL);
    pthread_mutex_unlock(&run->lock);
  }
  return 0;
}
