/* ptx_calls.c: which functions are "stacked", decided while the parser lays the module out: a
 * function on a cycle of the call graph, or whose address is taken (an indirect call may reach
 * any such function, so every indirect call site counts as an edge to each of them). A stacked
 * function gets a frame layout (its locals relative to SIM_SR_FRAME, its call-stack bytes, the
 * parameter slots a call saves), its final return becomes SIM_OP_RETS and calls to it
 * SIM_OP_CALLS; sim_calls.c runs those at run time.
 *
 * Stance: part of the parser's layout, not a pass after it: ptx_parse.c makes a stacked
 * function's locals frame-relative before the constant rows are resolved, and needs this first.
 * It reads only the module, so it is a file of its own rather than more of ptx_parse.c. */
#include <stdlib.h>
#include <string.h>

#include "ptx_calls.h"

/* Modelled bytes per activation beyond its locals: 16, or 32 for a function with locals of its
 * own (it also keeps a frame pointer). Measured on an H200 with bench/calls_gpu.sh: recursion
 * without locals runs 63 deep in the default 1 KiB, with a 32-byte local array 15 deep. */
#define SIM_CALL_OVERHEAD 16
#define SIM_CALL_OVERHEAD_LOCALS 32
static void reach(const sim_module *m, int f, char *seen);

/* Marks g seen and adds what it reaches, unless it was seen already. */
static void visit(const sim_module *m, int g, char *seen) {
  if (seen[g]) return;
  seen[g] = 1;
  reach(m, g, seen);
}

/* Adds to seen[] every function reachable from f in one or more calls. */
static void reach(const sim_module *m, int f, char *seen) {
  const sim_func *fn = &m->funcs[f];
  for (int i = fn->first; i >= 0 && i < fn->end; i++) {
    const sim_inst *in = &m->code[i];
    if (in->op == SIM_OP_CALLI) {
      for (int g = 0; g < m->nfuncs; g++)
        if (m->funcs[g].addr_taken) visit(m, g, seen);
    } else if (in->op == SIM_OP_CALL || in->op == SIM_OP_CALLS) {
      visit(m, m->calls[in->imm].func, seen);
    }
  }
}

/* Frame layout of a stacked function: where its locals begin in the static layout (they are
 * addressed relative to that), how much call stack an activation takes, which parameter slots
 * a call must save. */
static void stacked_layout(sim_module *m, int fi) {
  sim_func *f = &m->funcs[fi];
  size_t lo = (size_t)-1, hi = 0;
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if (v->func != fi || v->space != SIM_SP_LOCAL) continue;
    if (v->addr < lo) lo = v->addr;
    if (v->addr + v->size > hi) hi = v->addr + v->size;
  }
  f->local_lo = hi ? lo : 0;
  f->frame_bytes = hi ? (hi - lo + 15) / 16 * 16 + SIM_CALL_OVERHEAD_LOCALS : SIM_CALL_OVERHEAD;
  int plo = f->ret_off >= 0 ? f->ret_off : 1 << 30;
  int phi = f->ret_off >= 0 ? f->ret_off + f->ret_size : 0;
  for (int k = 0; k < f->nparams; k++) {
    int o = (int)f->params[k].offset, e = o + (int)f->params[k].size;
    if (o < plo) plo = o;
    if (e > phi) phi = e;
  }
  f->fp_lo = phi ? plo : 0;
  f->fp_hi = phi;
}

/* Whether an instruction orders memory between threads: an acquire or a release, or a fence. */
static int orders_memory(const sim_inst *in) {
  if (in->op == SIM_OP_FENCE) return 1;
  return (in->op == SIM_OP_LD || in->op == SIM_OP_ST || in->op == SIM_OP_ATOM) &&
         (in->flags & (SIM_IF_ACQUIRE | SIM_IF_RELEASE));
}

int ptx_calls_orders(const sim_module *m, int f) {
  char *seen = calloc((size_t)m->nfuncs + 1, 1);
  if (!seen) return 1;
  seen[f] = 1;
  reach(m, f, seen);
  int orders = 0;
  for (int g = 0; g < m->nfuncs && !orders; g++) {
    const sim_func *fn = &m->funcs[g];
    for (int i = fn->first; seen[g] && i >= 0 && i < fn->end && !orders; i++)
      orders = orders_memory(&m->code[i]);
  }
  free(seen);
  return orders;
}

void ptx_calls_mark(sim_module *m) {
  char *seen = calloc((size_t)m->nfuncs + 1, 1);
  for (int fi = 0; fi < m->nfuncs; fi++) {
    sim_func *f = &m->funcs[fi];
    if (f->first < 0 || f->is_entry) continue;
    if (!f->addr_taken && seen) {
      memset(seen, 0, (size_t)m->nfuncs);
      reach(m, fi, seen);
    }
    /* Without memory for the search, every function is stacked: slower, never wrong. */
    f->stacked = f->addr_taken || !seen || seen[fi];
    if (!f->stacked) continue;
    m->has_stacked = 1;
    stacked_layout(m, fi);
    m->code[f->end - 1].op = SIM_OP_RETS;
  }
  free(seen);
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    if (in->op == SIM_OP_CALL && m->funcs[m->calls[in->imm].func].stacked) in->op = SIM_OP_CALLS;
  }
}
