/* sim_dbgflow.c: where a variable lives at a pc, following the kernel's control flow rather than
 * the order of its instructions, for the debugger's reads (sim_debugger.c).
 *
 * Why: the location lists NVRTC writes for -G code are ranges of the instructions' linear order.
 * A range that begins at the end of an if's then-side (v moved into the register both sides
 * join in) runs on over the start of the else-side, where that register has not been written
 * yet: read by the list, v is 0 on every lane that took the else-side, though the kernel holds
 * it in the register it had before the if. gdb on such DWARF shows the same wrong value.
 *
 * Stance: a forward dataflow over the function's instructions, once per variable and then kept:
 * a place takes effect where its range begins, however that point is reached, and stops where
 * its range ends when control falls into its end; along a jump it stays what it was where the
 * jump left. Where two paths bring different places the answer is not known, and the read falls
 * back on the list itself, as it did before; so does a variable with a place for all its scope.
 * Places with the same register or memory count as one, so joining paths that agree stay known. */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

enum { FLOW_UNSEEN = -3, FLOW_MIXED = -2, FLOW_NONE = -1 };

struct sim_dbgflow {
  const sim_module *m;
  int nvars;
  int32_t **at;       /* per variable: its place per pc of its function (FLOW_* or a loc index),
                         NULL until asked; a variable of no use to the flow points at `none` */
  int32_t none;       /* a marker, never read */
};

sim_dbgflow *sim_dbgflow_new(const sim_module *m) {
  if (!m->debug) return NULL;
  sim_dbgflow *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->m = m;
  f->nvars = m->debug->nvars;
  f->at = calloc((size_t)(f->nvars > 0 ? f->nvars : 1), sizeof *f->at);
  if (!f->at) {
    free(f);
    return NULL;
  }
  return f;
}

void sim_dbgflow_free(sim_dbgflow *f) {
  if (!f) return;
  for (int i = 0; i < f->nvars; i++)
    if (f->at[i] != &f->none) free(f->at[i]);
  free(f->at);
  free(f);
}

/* The first place of v with the same kind and where as place k: places alike are one. */
static int32_t canon(const sim_dbginfo *di, const sim_dvar *v, int32_t k) {
  const sim_dloc *l = &di->locs[k];
  for (int32_t j = v->loc; j < k; j++)
    if (di->locs[j].kind == l->kind && di->locs[j].where == l->where) return j;
  return k;
}

static int32_t meet(int32_t a, int32_t b) {
  if (a == FLOW_UNSEEN) return b;
  if (b == FLOW_UNSEEN || a == b) return a;
  return FLOW_MIXED;
}

/* What holds after pc is entered with place `in`: a range that begins at pc takes over; one
 * that ends at pc ends (only a fall-through reaches an end: a jump target is a begin or inside). */
static int32_t transfer(const sim_dbginfo *di, const sim_dvar *v, int pc, int32_t in) {
  for (int32_t k = v->loc; k < v->loc + v->nloc; k++)
    if (di->locs[k].lo == pc) return canon(di, v, k);
  if (in >= 0 && di->locs[in].hi == pc) {
    for (int32_t k = v->loc; k < v->loc + v->nloc; k++) /* a place alike may go on from pc */
      if (canon(di, v, k) == in && di->locs[k].lo <= pc && pc < di->locs[k].hi) return in;
    return FLOW_NONE;
  }
  return in;
}

/* The pcs control goes to after pc, within [first, end): at most two. */
static int successors(const sim_module *m, int pc, int end, int out[2]) {
  const sim_inst *in = &m->code[pc];
  int n = 0;
  switch (in->op) {
  case SIM_OP_EXIT: case SIM_OP_RETF: case SIM_OP_RETS: case SIM_OP_TRAP:
    return 0;
  case SIM_OP_BRA:
    if (in->target >= 0 && in->target < end) out[n++] = in->target;
    if (in->guard < 0) return n;
    break;
  default:
    break;
  }
  if (pc + 1 < end) out[n++] = pc + 1;
  return n;
}

/* v's places along the flow of its function: an array over [first, end), or NULL when out of
 * memory. The state entering each pc is met over its predecessors until nothing changes; each
 * pc's state can change at most twice (unseen, known, mixed), so the worklist ends. */
static int32_t *flow(const sim_module *m, const sim_dvar *v) {
  const sim_func *fn = &m->funcs[v->func];
  const sim_dbginfo *di = m->debug;
  int first = fn->first, n = fn->end - fn->first;
  if (n <= 0) return NULL;
  int32_t *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
  int *work = malloc((size_t)n * sizeof *work);
  char *queued = calloc((size_t)n, 1);
  if (!in || !out || !work || !queued) {
    free(in), free(out), free(work), free(queued);
    return NULL;
  }
  for (int i = 0; i < n; i++) in[i] = FLOW_UNSEEN;
  in[0] = FLOW_NONE;
  int top = 0;
  work[top++] = 0;
  queued[0] = 1;
  while (top > 0) {
    int i = work[--top], next[2];
    queued[i] = 0;
    int32_t o = transfer(di, v, first + i, in[i]);
    out[i] = o;
    int ns = successors(m, first + i, fn->end, next);
    for (int s = 0; s < ns; s++) {
      int j = next[s] - first;
      if (j < 0 || j >= n) continue;
      int32_t mj = meet(in[j], o);
      if (mj == in[j]) continue;
      in[j] = mj;
      if (!queued[j]) {
        queued[j] = 1;
        work[top++] = j;
      }
    }
  }
  free(in), free(work), free(queued);
  return out; /* the state after entering each pc is the one that holds while it runs */
}

int sim_dbgflow_place(sim_dbgflow *f, const sim_dvar *v, int pc) {
  if (!f) return -1;
  const sim_dbginfo *di = f->m->debug;
  int i = (int)(v - di->vars);
  if (i < 0 || i >= f->nvars || v->func < 0 || v->func >= f->m->nfuncs) return -1;
  if (!f->at[i]) {
    int whole = 0;
    for (int32_t k = v->loc; k < v->loc + v->nloc; k++) whole |= di->locs[k].lo < 0;
    f->at[i] = whole || v->nloc < 2 ? NULL : flow(f->m, v);
    if (!f->at[i]) f->at[i] = &f->none; /* nothing to follow: the list alone says */
  }
  if (f->at[i] == &f->none) return -1;
  const sim_func *fn = &f->m->funcs[v->func];
  if (pc < fn->first || pc >= fn->end) return -1;
  int32_t k = f->at[i][pc - fn->first];
  return k >= 0 ? k : -1;
}

/* ---- a variable by name, for the debugger and the compiled conditions ---- */

/* The innermost variable called name whose scope holds pc. */
const sim_dvar *sim_dbgflow_lookup(const sim_dbginfo *di, int pc, const char *name) {
  const sim_dvar *best = NULL;
  for (int i = 0; i < di->nvars; i++) {
    const sim_dvar *v = &di->vars[i];
    if (pc < v->lo || pc >= v->hi || strcmp(v->name, name)) continue;
    if (!best || v->depth > best->depth) best = v;
  }
  return best;
}

/* Where v is at pc, or NULL when it has no place there: by the control flow where that says,
 * else by the location list's ranges. */
const sim_dloc *sim_dbgflow_where(sim_dbgflow *f, const sim_dbginfo *di, const sim_dvar *v,
                                  int pc) {
  int by_flow = sim_dbgflow_place(f, v, pc);
  if (by_flow >= 0) return &di->locs[by_flow];
  for (int k = v->loc; k < v->loc + v->nloc; k++) {
    const sim_dloc *l = &di->locs[k];
    if (l->lo < 0 || (pc >= l->lo && pc < l->hi)) return l;
  }
  return NULL;
}

const sim_dloc *sim_dbgflow_var(sim_dbgflow *f, const sim_dbginfo *di, int pc, const char *name,
                                const sim_dvar **v) {
  *v = di ? sim_dbgflow_lookup(di, pc, name) : NULL;
  return *v ? sim_dbgflow_where(f, di, *v, pc) : NULL;
}
