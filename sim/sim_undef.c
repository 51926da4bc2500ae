/* sim_undef.c: under the init check (cuda.sanitize{init = true}), a kernel that reads a register
 * no instruction has written on some way from its start: an uninitialised local variable
 * (float acc; acc += ...), which NVRTC compiles to a read of a register it never sets. Found
 * before the launch runs, statically, so that it is named by its line even where the register
 * happens to hold zero (the registers of a fresh block on a GPU mostly do, and the result is
 * then right by chance).
 *
 * What it finds is a note, never a failure: the launch runs (with registers that no instruction
 * wrote reading the init check's pattern), since correct code may read a register that the
 * analysis cannot prove written (a value set and read under one test; a running maximum guarded
 * by a "found" flag), and a lesson's check must never fail correct work.
 *
 * Stance: a forward "must be written" analysis over the kernel's instructions: a register row is
 * written at an instruction when every way there from the kernel's start writes it first. Errs
 * toward silence: a guarded write counts as a write, and a kernel with calls, tensor-core or
 * texture instructions (whose operands are not all in a sim_inst), or too large to analyse
 * cheaply, is not looked at. Only a register the kernel's source could name is reported: rows
 * [SIM_SR_COUNT, nuser), not special registers or constants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

#define UNDEF_MAX_BITS ((size_t)1 << 26) /* instructions x rows: 8 MiB of sets at most */

typedef unsigned long long word;

static int opaque(int op) {
  return op == SIM_OP_TENSOR || op == SIM_OP_TEX || op == SIM_OP_CALL || op == SIM_OP_CALLS ||
         op == SIM_OP_CALLI || op == SIM_OP_VPRINTF || op == SIM_OP_BUILTIN;
}

/* The register rows in writes, up to 6. */
static int writes_of(const sim_inst *in, int *r) {
  int n = 0;
  if (sim_writes_pred(in->op) || in->op == SIM_OP_ST || in->op == SIM_OP_BRA) return 0;
  if (in->d >= 0) r[n++] = in->d;
  if (in->op == SIM_OP_LD || in->op == SIM_OP_LDPARAM || in->op == SIM_OP_UNPACK)
    for (int k = 0; k < 4 && k < in->vec; k++)
      if (in->v[k] >= 0) r[n++] = in->v[k];
  return n;
}

/* The register rows in reads, up to 8 (predicates left out). */
static int reads_of(const sim_inst *in, int *r) {
  int n = 0, op = in->op;
  if (op == SIM_OP_PAND || op == SIM_OP_POR || op == SIM_OP_PXOR || op == SIM_OP_PNOT ||
      op == SIM_OP_PMOV || op == SIM_OP_PSETI || op == SIM_OP_BRA)
    return 0;
  int src[4] = {in->a, in->b, in->c, in->e};
  for (int k = 0; k < 4; k++) {
    if ((op == SIM_OP_SELP32 || op == SIM_OP_SELP64 || op == SIM_OP_SETP) && k == 2) continue;
    if (src[k] >= 0) r[n++] = src[k];
  }
  if (op == SIM_OP_ST || op == SIM_OP_PACK)
    for (int k = 0; k < 4 && k < in->vec; k++)
      if (in->v[k] >= 0) r[n++] = in->v[k];
  return n;
}

static int next_of(const sim_inst *code, int i, int end, int *s) {
  const sim_inst *in = &code[i];
  int n = 0;
  if (in->op == SIM_OP_EXIT || in->op == SIM_OP_RETF || in->op == SIM_OP_RETS ||
      in->op == SIM_OP_TRAP) {
    if (in->guard < 0) return 0;
  } else if (in->op == SIM_OP_BRA) {
    if (in->target >= 0) s[n++] = in->target;
    if (in->guard < 0) return n;
  }
  if (i + 1 < end) s[n++] = i + 1;
  return n;
}

int sim_undef_check(const sim_module *m, const sim_func *f, char *buf, size_t len) {
  int first = f->first, end = f->end, n = end - first;
  int lo = SIM_SR_COUNT, hi = m->nuser, nrows = hi - lo;
  if (n <= 0 || nrows <= 0 || (size_t)n * (size_t)nrows > UNDEF_MAX_BITS) return 0;
  for (int i = first; i < end; i++)
    if (opaque(m->code[i].op)) return 0;
  size_t words = ((size_t)nrows + 63) / 64;
  word *in = malloc((size_t)n * words * sizeof *in), *out = malloc(words * sizeof *out);
  int *work = malloc((size_t)n * sizeof *work);
  char *queued = calloc((size_t)n, 1), *seen = calloc((size_t)n, 1);
  int found = 0;
  if (!in || !out || !work || !queued || !seen) goto done;
  memset(in, 0xff, (size_t)n * words * sizeof *in); /* everything written, until a way says not */
  memset(in, 0, words * sizeof *in);                /* nothing at the start */
  int top = 0;
  work[top++] = 0;
  queued[0] = seen[0] = 1;
  while (top) {
    int k = work[--top];
    queued[k] = 0;
    const sim_inst *ins = &m->code[first + k];
    memcpy(out, &in[(size_t)k * words], words * sizeof *out);
    int w[6], nw = writes_of(ins, w);
    for (int j = 0; j < nw; j++)
      if (w[j] >= lo && w[j] < hi) out[(w[j] - lo) / 64] |= 1ull << ((w[j] - lo) % 64);
    int s[2], ns = next_of(m->code, first + k, end, s);
    for (int j = 0; j < ns; j++) {
      int t = s[j] - first;
      if (t < 0 || t >= n) continue;
      word *dst = &in[(size_t)t * words], changed = !seen[t];
      for (size_t x = 0; x < words; x++) {
        word v = dst[x] & out[x];
        changed |= v != dst[x];
        dst[x] = v;
      }
      seen[t] = 1;
      if (changed && !queued[t]) {
        queued[t] = 1;
        work[top++] = t;
      }
    }
  }
  for (int k = 0; k < n && !found; k++) {
    const sim_inst *ins = &m->code[first + k];
    if (!seen[k] || ins->line <= 0) continue; /* a line the learner can look at */
    int r[8], nr = reads_of(ins, r);
    for (int j = 0; j < nr && !found; j++) {
      if (r[j] < lo || r[j] >= hi) continue;
      if (in[(size_t)k * words + (size_t)(r[j] - lo) / 64] >> ((r[j] - lo) % 64) & 1) continue;
      char src[300];
      sim_srcline(m, ins, src, sizeof src);
      snprintf(buf, len, "maybe an uninitialised read (init check): at %s, kernel %s may use a "
               "value that nothing has assigned on some way there from its start, such as a "
               "local declared without a value (float acc; where float acc = 0.0f; was meant). "
               "Correct code can do this too (a value set and read under the same test), so the "
               "launch ran, with such registers holding 0xcb bytes: if its results are wrong, "
               "look there first", src, f->name);
      found = 1;
    }
  }
done:
  free(in);
  free(out);
  free(work);
  free(queued);
  free(seen);
  return found;
}
