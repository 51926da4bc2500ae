/* ptxinfo.c: reading NVRTC's PTX and ptxas report. Both formats are line-oriented and stable
 * across CUDA 12 and 13; this reads only the few lines it needs and fails soft (-1 / unknown)
 * on anything else, because a missing fact must never stop a launch that cudart can check. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_bounds.h"
#include "ptxinfo.h"

static size_t type_size(const char *t) {
  if (strcmp(t, "pred") == 0) return 1;
  int bits = atoi(t + 1);
  return bits >= 8 ? (size_t)bits / 8 : 0;
}

/* Finds ".entry <entry>(" at a word boundary; returns the '(' or NULL. */
static const char *find_entry(const char *ptx, const char *entry) {
  size_t len = strlen(entry);
  for (const char *p = ptx; (p = strstr(p, ".entry")); p += 6) {
    const char *n = p + 6;
    while (*n == ' ' || *n == '\t') n++;
    if (strncmp(n, entry, len) == 0) {
      const char *q = n + len;
      while (*q == ' ' || *q == '\t' || *q == '\n') q++;
      if (*q == '(') return q;
    }
  }
  return NULL;
}

int ptx_entry_grid_sync(const char *ptx, const char *entry) {
  const char *p = find_entry(ptx, entry);
  if (!p) return 0;
  const char *end = strstr(p, ".entry");
  size_t len = end ? (size_t)(end - p) : strlen(p);
  int envreg = memmem(p, len, "%envreg1", 8) || memmem(p, len, "%envreg2", 8);
  return envreg && memmem(p, len, "trap;", 5) != NULL;
}

int ptx_entry_name(const char *ptx, int i, char *name, size_t cap) {
  for (const char *p = ptx; (p = strstr(p, ".entry")); p += 6) {
    const char *n = p + 6;
    if (n[0] != ' ' && n[0] != '\t') continue; /* a word that starts with ".entry" */
    while (*n == ' ' || *n == '\t') n++;
    size_t len = 0;
    while (n[len] && (isalnum((unsigned char)n[len]) || n[len] == '_' || n[len] == '$')) len++;
    if (len == 0 || i-- > 0) continue;
    if (len >= cap) {
      if (cap) name[0] = '\0';
      return 1;
    }
    memcpy(name, n, len);
    name[len] = '\0';
    return 0;
  }
  return -1;
}

/* One ".param .u64 .ptr .align 8 name[16]" declaration, between p and end. */
static int parse_decl(const char *p, const char *end, ptx_param *out) {
  char buf[256];
  size_t len = (size_t)(end - p) < sizeof buf - 1 ? (size_t)(end - p) : sizeof buf - 1;
  memcpy(buf, p, len);
  buf[len] = '\0';
  size_t align = 0, size = 0, count = 1;
  char type[8] = "";
  for (char *tok = strtok(buf, " \t\n\r"); tok; tok = strtok(NULL, " \t\n\r")) {
    if (strcmp(tok, ".param") == 0 || strcmp(tok, ".ptr") == 0 || strcmp(tok, ".global") == 0 ||
        strcmp(tok, ".shared") == 0 || strcmp(tok, ".const") == 0 || strcmp(tok, ".local") == 0)
      continue;
    if (strcmp(tok, ".align") == 0) {
      char *a = strtok(NULL, " \t\n\r");
      if (!a) return -1;
      align = (size_t)strtoul(a, NULL, 10);
    } else if (tok[0] == '.' && strchr("ubsf", tok[1]) && isdigit((unsigned char)tok[2])) {
      snprintf(type, sizeof type, "%s", tok + 1);
      size = type_size(type);
    } else if (strcmp(tok, ".pred") == 0) {
      snprintf(type, sizeof type, "pred");
      size = 1;
    } else {
      char *br = strchr(tok, '[');
      if (br) count = (size_t)strtoul(br + 1, NULL, 10);
    }
  }
  if (!size || !count) return -1;
  out->size = size * count;
  out->align = align ? align : size;
  snprintf(out->ptx_type, sizeof out->ptx_type, "%s", type);
  return 0;
}

int ptx_entry_params(const char *ptx, const char *entry, ptx_entry_info *out) {
  out->nparams = 0;
  out->param_bytes = 0;
  const char *open = find_entry(ptx, entry);
  if (!open) return -1;
  const char *close = strchr(open, ')');
  if (!close) return -1;
  size_t offset = 0;
  for (const char *p = open + 1; p < close;) {
    const char *decl = strstr(p, ".param");
    if (!decl || decl >= close) break;
    const char *end = strchr(decl, ',');
    if (!end || end > close) end = close;
    ptx_param one, *pp = out->nparams < out->cap ? &out->params[out->nparams] : &one;
    if (parse_decl(decl, end, pp)) return -1;
    offset = (offset + pp->align - 1) / pp->align * pp->align;
    pp->offset = offset;
    offset += pp->size;
    out->nparams++;
    p = end + 1;
  }
  out->param_bytes = offset;
  return 0;
}

/* The numbers after a directive, "128, 1, 1", into v (missing ones are 1, as in PTX); the
 * text after them. */
static const char *directive_dims(const char *p, unsigned v[3]) {
  v[0] = v[1] = v[2] = 1;
  for (int i = 0; i < 3; i++) {
    while (*p == ' ' || *p == '\t') p++;
    if (!isdigit((unsigned char)*p)) break;
    char *end;
    unsigned long x = strtoul(p, &end, 10);
    v[i] = x > 0 && x <= 0x7fffffff ? (unsigned)x : 1;
    p = end;
    while (*p == ' ' || *p == '\t') p++;
    if (*p != ',') break;
    p++;
  }
  return p;
}

/* The directive word at p ("maxntid" for ".maxntid"), if p starts with it. */
static int directive_is(const char *p, const char *word) {
  size_t n = strlen(word);
  return p[0] == '.' && strncmp(p + 1, word, n) == 0 && !isalnum((unsigned char)p[n + 1]) &&
         p[n + 1] != '_';
}

/* The directives between the .entry's parameter list and its body (or the ';' of a
 * prototype), read one character at a time: anything else there is skipped. */
int ptx_entry_bounds(const char *ptx, const char *entry, lb_bounds *out) {
  memset(out, 0, sizeof *out);
  const char *open = find_entry(ptx, entry);
  const char *p = open ? strchr(open, ')') : NULL;
  if (!p) return -1;
  for (p++; *p && *p != '{' && *p != ';'; p++) {
    if (directive_is(p, "maxntid")) p = directive_dims(p + 8, out->maxntid) - 1;
    else if (directive_is(p, "reqntid")) p = directive_dims(p + 8, out->reqntid) - 1;
    else if (directive_is(p, "reqnctapercluster")) p = directive_dims(p + 18, out->cluster) - 1;
    else if (directive_is(p, "explicitcluster")) out->explicit_cluster = 1;
    else if (directive_is(p, "blocksareclusters")) out->blocks_are_clusters = 1;
  }
  return 0;
}

/* The number before `unit` on the line, e.g. "256 bytes smem" with unit " bytes smem". */
static size_t number_before(const char *line, const char *line_end, const char *unit) {
  const char *u = strstr(line, unit);
  if (!u || u > line_end) return 0;
  const char *d = u;
  while (d > line && isdigit((unsigned char)d[-1])) d--;
  return (size_t)strtoull(d, NULL, 10);
}

void ptxas_parse(const char *log, const char *entry, ptxas_info *out) {
  memset(out, 0, sizeof *out);
  out->registers = -1;
  char key[300];
  snprintf(key, sizeof key, "Compiling entry function '%s'", entry);
  const char *p = log ? strstr(log, key) : NULL;
  if (!p) return;
  for (p = strchr(p, '\n'); p && *++p;) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    if (strstr(p, "Compiling entry function") && strstr(p, "Compiling entry function") < eol) break;
    size_t stack = number_before(p, eol, " bytes stack frame");
    if (stack) out->stack_bytes = stack;
    size_t spill = number_before(p, eol, " bytes spill stores");
    if (spill) out->spill_bytes = spill;
    size_t reload = number_before(p, eol, " bytes spill loads");
    if (reload) out->spill_load_bytes = reload;
    const char *used = strstr(p, "Used ");
    if (used && used < eol) {
      out->registers = atoi(used + 5);
      out->shared_static = number_before(p, eol, " bytes smem");
      out->const_bytes = number_before(p, eol, " bytes cmem[0]");
      out->barriers = (int)number_before(p, eol, " barriers");
    }
    p = eol;
    if (!*p) break;
  }
}
