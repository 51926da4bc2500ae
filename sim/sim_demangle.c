/* sim_demangle.c: the names of variables and kernels as a learner wrote them, for messages.
 * NVRTC compiles CUDA C++, so a function-scope `__shared__ float tile[32]` in `kernel(float *)`
 * reaches the PTX as _ZZ6kernelPfE4tile, a namespace-scope one as _ZN2ns4tileE, a kernel as
 * _Z6kernelPf, the call operator of a lambda in it as _ZZ6kernelPfENKUliE_clEi ("lambda", in
 * "kernel"). Learners never wrote those.
 *
 * Stance: a small reader of the Itanium C++ ABI's grammar, only as much as these names need:
 * the entity's own name, and the enclosing function's name without its parameter types (which
 * are skipped, not printed: "tile in kernel" says enough). Anything it does not recognise leaves
 * the name as it was, so a message never shows a half-decoded name. The turned-down alternative,
 * the C++ runtime's __cxa_demangle, would bring libstdc++ into a C library and print whole
 * signatures ("kernel(float*)::tile"). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

/* A cursor over a mangled name; bad is set on anything unexpected. */
typedef struct dm {
  const char *s;  /* next character */
  int bad;        /* 1 once the name did not parse */
} dm;

/* <source-name> ::= <length> <identifier>: appends the identifier to out (when out is given). */
static void source_name(dm *d, char *out, size_t len) {
  if (!isdigit((unsigned char)*d->s)) {
    d->bad = 1;
    return;
  }
  size_t n = 0;
  while (isdigit((unsigned char)*d->s) && n < 4096) n = n * 10 + (size_t)(*d->s++ - '0');
  if (n == 0 || strnlen(d->s, n) < n) {
    d->bad = 1;
    return;
  }
  if (out) {
    size_t used = strlen(out);
    snprintf(out + used, len - used, "%.*s", (int)n, d->s);
  }
  d->s += n;
}

/* S_, S0_, St, Sa ... and T_, T0_: substitutions and template parameters, skipped. */
static void skip_ref(dm *d) {
  d->s++;
  if (islower((unsigned char)*d->s)) {
    d->s++;
    return;
  }
  while (isalnum((unsigned char)*d->s) && *d->s != '_') d->s++;
  if (*d->s != '_') {
    d->bad = 1;
    return;
  }
  d->s++;
}

/* Skips types and template arguments up to the 'E' that closes the current level, leaving the
 * cursor on it. Nested N/I/F/X...E groups are counted; source names are skipped by their length
 * (an identifier may hold an 'E'); L...E literals are skipped whole (their digits are values,
 * not lengths). */
static void skip_to_close(dm *d) {
  int depth = 0;
  while (!d->bad && *d->s) {
    char c = *d->s;
    if (c == 'E') {
      if (depth == 0) return;
      depth--;
      d->s++;
    } else if (isdigit((unsigned char)c)) {
      source_name(d, NULL, 0);
    } else if (c == 'S' || c == 'T') {
      skip_ref(d);
    } else if (c == 'L') {
      const char *e = strchr(d->s, 'E');
      if (!e) d->bad = 1;
      else d->s = e + 1;
    } else if (c == 'A') { /* A <dimension> _ <element type> */
      d->s++;
      while (isdigit((unsigned char)*d->s)) d->s++;
      if (*d->s++ != '_') d->bad = 1;
    } else if (c == 'D' && d->s[1] == 'v') { /* Dv <dimension> _ <element type> */
      d->s += 2;
      while (isdigit((unsigned char)*d->s)) d->s++;
      if (*d->s++ != '_') d->bad = 1;
    } else {
      if (c == 'N' || c == 'I' || c == 'F' || c == 'X') depth++;
      else if (c == 'D' || c == 'U') { /* two-letter builtins (Dh, Dn ...), vendor qualifiers */
        d->s++;
        if (c == 'U') {
          source_name(d, NULL, 0);
          continue;
        }
      }
      d->s++;
    }
  }
  d->bad = 1; /* ran off the end */
}

/* I <template arguments> E, the cursor on its 'I': skipped. */
static void skip_template_args(dm *d) {
  d->s++;
  skip_to_close(d);
  if (!d->bad) d->s++;
}

/* <name> of a function or variable: a source name, or N [qualifiers] <source-name>+ [I...E] E,
 * joined with "::". Template arguments are skipped. */
static void entity_name(dm *d, char *out, size_t len) {
  out[0] = '\0';
  if (*d->s != 'N') {
    source_name(d, out, len);
    if (*d->s == 'I') skip_template_args(d);
    return;
  }
  d->s++;
  while (*d->s == 'r' || *d->s == 'V' || *d->s == 'K' || *d->s == 'R' || *d->s == 'O') d->s++;
  int parts = 0;
  while (!d->bad && *d->s != 'E') {
    if (*d->s == 'I') {
      skip_template_args(d);
    } else if (*d->s == 'S' || *d->s == 'T') {
      skip_ref(d);
    } else {
      if (parts++) {
        size_t u = strlen(out);
        snprintf(out + u, len - u, "::");
      }
      source_name(d, out, len);
    }
  }
  if (!d->bad) d->s++;
}

/* N [K] Ul <parameter types> E [<number>] _ cl E <parameter types>, the cursor on its 'N': the
 * call operator of a lambda the function defines, the first one "lambda", the next "lambda #2"
 * (its number + 2) and so on, as gdb counts them. */
static void lambda_name(dm *d, char *out, size_t len) {
  d->s++;
  while (*d->s == 'K' || *d->s == 'V' || *d->s == 'r') d->s++;
  if (strncmp(d->s, "Ul", 2) != 0) {
    d->bad = 1;
    return;
  }
  d->s += 2;
  skip_to_close(d);
  if (d->bad) return;
  d->s++;
  unsigned long k = 1;
  if (isdigit((unsigned char)*d->s)) {
    k = 0;
    while (isdigit((unsigned char)*d->s) && k < 100000) k = k * 10 + (unsigned long)(*d->s++ - '0');
    k += 2;
  }
  if (strncmp(d->s, "_clE", 4) != 0) {
    d->bad = 1;
    return;
  }
  d->s += 4;
  if (k == 1) snprintf(out, len, "lambda");
  else snprintf(out, len, "lambda #%lu", k);
  d->s += strlen(d->s); /* its parameter types, which say nothing a learner needs */
}

/* "_ZZ <function encoding> E <entity> [_ <discriminator>]": the entity and the function's name.
 * The function's parameter types (and, for a template, its return type) run to the 'E' that
 * closes the encoding. */
static void local_name(dm *d, char *out, size_t len, char *fn, size_t fnlen) {
  char f[256];
  entity_name(d, f, sizeof f);
  skip_to_close(d);
  if (d->bad) return;
  d->s++; /* the E that closes the encoding */
  out[0] = '\0';
  if (*d->s == 'N') lambda_name(d, out, len);
  else source_name(d, out, len);
  if (d->bad) return;
  if (*d->s == '_') { /* a discriminator: _N or __N_ */
    d->s++;
    if (*d->s == '_') d->s++;
    while (isdigit((unsigned char)*d->s)) d->s++;
    if (*d->s == '_') d->s++;
  }
  if (*d->s) {
    d->bad = 1;
    return;
  }
  if (fn) snprintf(fn, fnlen, "%s", f);
}

const char *sim_demangle(const char *mangled, char *buf, size_t len, char *fn, size_t fnlen) {
  if (fn && fnlen) fn[0] = '\0';
  if (!len) return buf;
  snprintf(buf, len, "%s", mangled ? mangled : "");
  if (!mangled || strncmp(mangled, "_Z", 2) != 0) return buf;
  char out[256] = "", f[256] = "";
  dm d = {mangled + 2, 0};
  if (*d.s == 'Z') {
    d.s++;
    local_name(&d, out, sizeof out, f, sizeof f);
  } else {
    entity_name(&d, out, sizeof out); /* a variable ends here; a function's parameters follow */
  }
  if (d.bad || !out[0]) return buf;
  snprintf(buf, len, "%s", out);
  if (fn && fnlen) snprintf(fn, fnlen, "%s", f);
  return buf;
}
