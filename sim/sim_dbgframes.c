/* sim_dbgframes.c: the debugger's frames of one thread's calls, innermost first, and where each
 * frame's registers are.
 *
 * Stance: the warp keeps two records of its calls, and a thread's frames are read from both.
 * Ordinary calls (sim_exec.c's jump and copy) leave their return address on w->calls; a call to
 * a stacked function (one that recursion or a function pointer may make active twice, sim_calls.c)
 * leaves a frame of its own on the divergence stack (rpc SIM_RPC_CALL, the caller's path resuming
 * in the frame below it) and an activation record on the save stack, in the same order. So from
 * the function the thread is in, a stacked function's caller is found by the next call frame
 * down the divergence stack that holds the thread's lane, and any other function's by the
 * newest return address into it, as gdb would list them. A recursive function's outer
 * activations keep their registers in the records of the inner calls: the record that the next
 * inner activation of the same function made holds them. */
#include <string.h>

#include "sim_run.h"

/* The function pc lies in, or -1. */
int sim_dbg_func_at(const sim_module *m, int pc) {
  for (int f = 0; f < m->nfuncs; f++)
    if (pc >= m->funcs[f].first && pc < m->funcs[f].end) return f;
  return -1;
}

/* The index of the topmost divergence frame of w that holds lane, or -1. */
static int top_of_lane(const sim_warp *w, int lane) {
  for (int k = w->sp - 1; k >= 0; k--)
    if (w->stack[k].mask >> lane & 1) return k;
  return -1;
}

/* Appends a frame at pc to c (counted past SIM_DBG_FRAMES, not kept). */
static void add(const sim_module *m, sim_dbg_chain *c, int pc) {
  if (c->n < SIM_DBG_FRAMES) {
    c->pc[c->n] = pc;
    c->func[c->n] = sim_dbg_func_at(m, pc);
    c->act[c->n] = (sim_act){-1, NULL, 0};
  }
  c->n++;
}

void sim_dbg_chain_of(const sim_module *m, const sim_warp *w, int lane, int pc,
                      sim_dbg_chain *c) {
  c->n = 0;
  if (pc < 0 || lane < 0 || lane >= SIM_WARP) return;
  int k = top_of_lane(w, lane), kc = w->ncalls - 1, f = sim_dbg_func_at(m, pc);
  size_t end = w->save_len;
  sim_act act;
  add(m, c, pc);
  for (int j = w->sp - 1; j > k && j >= 0; j--) /* other lanes' calls above the lane's path */
    if (w->stack[j].rpc == SIM_RPC_CALL && sim_act_below(w, &end, &act) < 0) return;
  while (f >= 0 && !m->funcs[f].is_entry && c->n < 1 << 17) {
    int site;
    if (m->funcs[f].stacked) {
      for (; k > 0; k--) {
        if (w->stack[k].rpc != SIM_RPC_CALL) continue;
        if (sim_act_below(w, &end, &act) < 0) return;
        if (w->stack[k].mask >> lane & 1) break;
      }
      if (k <= 0) return;
      if (c->n - 1 < SIM_DBG_FRAMES) c->act[c->n - 1] = act;
      site = w->stack[--k].pc - 1; /* the caller's path resumes after its call */
    } else {
      while (kc >= 0 && m->calls[w->calls[kc].call].func != f) kc--;
      if (kc < 0) return;
      site = w->calls[kc--].pc - 1;
    }
    add(m, c, site);
    f = sim_dbg_func_at(m, site);
  }
}

void sim_dbg_regs_of(const sim_module *m, const sim_warp *w, const sim_dbg_chain *c, int i,
                     sim_dbg_regs *out) {
  *out = (sim_dbg_regs){NULL, w->R[SIM_SR_FRAME * SIM_WARP]};
  int n = c->n < SIM_DBG_FRAMES ? c->n : SIM_DBG_FRAMES, frame_known = 0;
  if (i <= 0 || i >= n) return;
  for (int j = i - 1; j >= 0; j--) { /* the activations between, innermost last */
    const sim_act *a = &c->act[j];
    if (!a->saved) continue;
    if (!frame_known) { /* the nearest stacked call the frame made, or one it led to */
      out->frame = a->frame;
      frame_known = 1;
    }
    if (a->func == c->func[i] && !out->act) out->act = a;
  }
  (void)m;
}
