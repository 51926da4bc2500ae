/* sim_depend.c: what a warp waits for between its own instructions: an instruction that reads
 * a register an arithmetic instruction just wrote issues only once that result is ready, a few
 * cycles later (the pipe's latency). One warp alone on an SM, or a long dependent chain, runs
 * at that latency rather than at the pipe's throughput; with many warps the scheduler fills the
 * gaps with other warps' instructions, which the model's throughput terms already cover.
 *
 * Stance: the stalls are found statically, once per launch, by issuing each basic block in order
 * on an empty scoreboard, and weighed by how often each instruction ran (the counts the
 * simulator keeps anyway): nothing is added to the interpreter's loop. A block that branches to
 * itself (a loop body) is issued twice and the second pass counted, so a chain carried from one
 * iteration to the next (v = v * a + b) costs its latency per iteration, and the loop's own test
 * and branch are mostly unrolled away, as ptxas does (a credit: the total may be negative, a
 * loop issuing fewer machine instructions than PTX ones). Loads are left out:
 * their waits are measured as the launch runs (sim_trace.c). What this cannot see is a chain
 * carried through several blocks, or ptxas unrolling a loop into a longer block; both make real
 * stalls somewhat smaller or larger than these. */
#include <stdlib.h>

#include "sim_exec.h"

/* The latency, in cycles, of the pipe that class cls runs on; 0 for what this analysis leaves
 * to others (memory, barriers, branches). */
static double class_latency(const sim_perf *P, int cls) {
  switch (cls) {
    case SIM_CLS_FP32: return P->lat_fp32;
    case SIM_CLS_FP64: return P->lat_fp64;
    case SIM_CLS_INT: return P->lat_int;
    case SIM_CLS_ALU: return P->lat_alu;
    case SIM_CLS_SFU: return P->lat_sfu;
    default: return 0;
  }
}

/* What ptxas expands into a special-function estimate, a few dependent FMAs and a branch to a
 * slow path (BSSY ... CALL ... BSYNC on sm_90): sqrt, reciprocal and division in IEEE rounding,
 * and integer division. Returns the expansion's latency from its source to its result, or 0.
 * The branch ends ptxas's scheduling region, so nothing else of the warp overlaps the sequence
 * (a 1/sqrtf per pair of bodies costs their sum, not their maximum). */
static double expansion_latency(const sim_perf *P, const sim_inst *in) {
  if (in->op != SIM_OP_ALU || (in->mod & SIM_MOD_APPROX) || (in->flags & SIM_IF_FOLDED)) return 0;
  int f32 = in->ty == SIM_T_F32, f64 = in->ty == SIM_T_F64;
  switch (in->sub) {
    case SIM_ALU_SQRT: return f32 ? P->lat_sqrt32 : f64 ? P->lat_sqrt64 : 0;
    case SIM_ALU_RCP: return f32 ? P->lat_rcp32 : f64 ? P->lat_rcp64 : 0;
    case SIM_ALU_DIV:
    case SIM_ALU_REM:
      if (f32) return P->lat_div32;
      if (f64) return P->lat_div64;
      return sim_type_size(in->ty) == 4 ? P->lat_idiv32 : 0; /* 64-bit: not measured */
    default: return 0;
  }
}

#define UNROLLED_AWAY 0.75 /* of a loop's test and branch, per iteration (see issue_block) */

static int reads_predicates_ab(int op) {
  return op == SIM_OP_PAND || op == SIM_OP_POR || op == SIM_OP_PXOR || op == SIM_OP_PNOT ||
         op == SIM_OP_PMOV;
}

/* The scoreboard: when each register row and predicate is ready, in the block's own cycles.
 * An entry is valid only while its stamp is the current pass's, so no pass clears the arrays. */
typedef struct board {
  double *ready;
  unsigned *stamp;
  int nrows;
  unsigned now;
} board;

static double ready_of(const board *b, int slot) {
  return slot >= 0 && b->stamp[slot] == b->now ? b->ready[slot] : 0;
}

static void set_ready(board *b, int slot, double t) {
  if (slot < 0) return;
  b->stamp[slot] = b->now;
  b->ready[slot] = t;
}

/* Slots: register rows first, then predicates. */
static int row_slot(const board *b, int r) { return r >= 0 && r < b->nrows ? r : -1; }
static int pred_slot(const board *b, int p, int npreds) {
  return p >= 0 && p < npreds ? b->nrows + p : -1;
}

/* When `in` can issue: its sources' ready times. */
static double sources_ready(const board *b, const sim_inst *in, int npreds) {
  /* A branch does not wait for its predicate: ptxas unrolls counted loops and schedules the
   * compare early, so a loop's test costs its issue slots, not its latency. */
  double t = in->op == SIM_OP_BRA ? 0 : ready_of(b, pred_slot(b, in->guard, npreds));
  if (reads_predicates_ab(in->op)) {
    double pa = ready_of(b, pred_slot(b, in->a, npreds));
    double pb = ready_of(b, pred_slot(b, in->b, npreds));
    return t > pa ? (t > pb ? t : pb) : (pa > pb ? pa : pb);
  }
  int src[4] = {in->a, in->b, in->c, in->e};
  for (int k = 0; k < 4; k++) {
    int slot = row_slot(b, src[k]);
    if ((in->op == SIM_OP_SELP32 || in->op == SIM_OP_SELP64) && k == 2)
      slot = pred_slot(b, src[k], npreds);
    double r = ready_of(b, slot);
    if (r > t) t = r;
  }
  return t;
}

/* Issues instructions first..last (inclusive) in order from cycle 0; stall[i] gets the cycles
 * instruction i waited past its issue slot. In a loop (loops set), the test that decides the
 * loop's branch does not wait either: ptxas unrolls a counted loop and computes its test ahead. */
static void issue_block(board *b, const sim_module *m, const sim_perf *P, int first, int last,
                        int loops, double *stall, int (*cls_of)(const sim_inst *, double *slots)) {
  double t = 0;
  int test = loops ? m->code[last].guard : -1;
  for (int i = first; i <= last; i++) {
    const sim_inst *in = &m->code[i];
    int loop_test = test >= 0 && sim_writes_pred(in->op) && in->d == test;
    double at = t + 1, r = loop_test ? 0 : sources_ready(b, in, m->npreds);
    stall[i] = r > at ? r - at : 0;
    /* ptxas unrolls such a loop by four: its test and branch issue once per four iterations,
     * which this counts as a credit of the three slots the other iterations do not spend */
    if (loop_test || (loops && i == last)) stall[i] -= UNROLLED_AWAY;
    t = r > at ? r : at;
    double slots = 1, lat = class_latency(P, cls_of(in, &slots));
    double whole = expansion_latency(P, in);
    if (whole > lat) {
      /* the warp issues the sequence in order: it is held until the last step can issue, less
       * the slots its own instructions take (the mix counts those) */
      double held = whole - lat - slots;
      if (held > 0) {
        stall[i] += held;
        t += held;
      }
    }
    if (lat <= 0) continue;
    if (sim_writes_pred(in->op)) {
      set_ready(b, pred_slot(b, in->d, m->npreds), t + lat);
      set_ready(b, pred_slot(b, in->d2, m->npreds), t + lat);
    } else {
      set_ready(b, row_slot(b, in->d), t + lat);
    }
  }
  /* the next pass (a loop's next iteration) starts where this one ended */
  for (int s = 0; s < b->nrows + m->npreds; s++)
    if (b->stamp[s] == b->now) b->ready[s] = b->ready[s] > t ? b->ready[s] - t : 0;
}

double sim_dep_stalls(const sim_module *m, const sim_perf *P, const double *warp_count,
                      int (*cls_of)(const sim_inst *, double *slots)) {
  int nslots = m->nrows + m->npreds;
  board b = {calloc((size_t)nslots + 1, sizeof(double)),
             calloc((size_t)nslots + 1, sizeof(unsigned)), m->nrows, 0};
  double *stall = calloc((size_t)m->ncode + 1, sizeof *stall);
  char *leader = calloc((size_t)m->ncode + 1, 1);
  double total = 0;
  if (!b.ready || !b.stamp || !stall || !leader) goto out; /* no stalls: a lower bound */
  leader[0] = 1;
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    if (in->op != SIM_OP_BRA) continue;
    if (in->target >= 0 && in->target < m->ncode) leader[in->target] = 1;
    leader[i + 1] = 1;
  }
  for (int first = 0; first < m->ncode;) {
    int last = first;
    while (last + 1 < m->ncode && !leader[last + 1]) last++;
    const sim_inst *end = &m->code[last];
    int loops = end->op == SIM_OP_BRA && end->target == first;
    b.now++;
    issue_block(&b, m, P, first, last, loops, stall, cls_of);
    if (loops) issue_block(&b, m, P, first, last, loops, stall, cls_of);
    for (int i = first; i <= last; i++) total += warp_count[i] * stall[i];
    first = last + 1;
  }
out:
  free(b.ready);
  free(b.stamp);
  free(stall);
  free(leader);
  return total;
}
