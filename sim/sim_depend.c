/* sim_depend.c: what a warp waits for between its own instructions: an instruction that reads
 * a register an arithmetic instruction just wrote issues only once that result is ready, a few
 * cycles later (the pipe's latency). One warp alone on an SM, or a long dependent chain, runs
 * at that latency rather than at the pipe's throughput; with many warps the scheduler fills the
 * gaps with other warps' instructions, which the model's throughput terms already cover.
 *
 * Stance: the stalls are found statically, once per launch, by issuing each basic block on an
 * empty scoreboard (its arithmetic in the order ptxas's list scheduler would pick, the rest in
 * program order), and weighed by how often each instruction ran (the counts the
 * simulator keeps anyway): nothing is added to the interpreter's loop. A block that branches to
 * itself (a loop body) is issued twice and the second pass counted, so a chain carried from one
 * iteration to the next (v = v * a + b) costs its latency per iteration, and the loop's own test
 * and branch are mostly unrolled away, as ptxas does (a credit: the total may be negative, a
 * loop issuing fewer machine instructions than PTX ones). Loads are left out:
 * their waits are measured as the launch runs (sim_trace.c). What this cannot see is a chain
 * carried through several blocks, or ptxas unrolling a loop into a longer block; both make real
 * stalls somewhat smaller or larger than these. */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

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

/* Whether ptxas may move instruction `in` past its neighbours: arithmetic, conversions,
 * comparisons and predicate logic, whose operands are all in a, b, c, e and d (d2). Memory,
 * control flow, warp-wide operations, carry chains (an implicit flag) and the IEEE sequences
 * (their branch ends ptxas's scheduling region) stay where they are, and nothing crosses them. */
static int movable(const sim_perf *P, const sim_inst *in) {
  switch (in->op) {
    case SIM_OP_LD: case SIM_OP_ST: case SIM_OP_LDPARAM: case SIM_OP_ATOM: case SIM_OP_BRA:
    case SIM_OP_EXIT: case SIM_OP_RETF: case SIM_OP_CALL: case SIM_OP_VPRINTF: case SIM_OP_TRAP:
    case SIM_OP_CALLS: case SIM_OP_CALLI: case SIM_OP_RETS: case SIM_OP_BUILTIN: case SIM_OP_BAR:
    case SIM_OP_BARWARP: case SIM_OP_SHFL: case SIM_OP_VOTE: case SIM_OP_ACTIVEMASK:
    case SIM_OP_CLOCK: case SIM_OP_PACK: case SIM_OP_UNPACK: case SIM_OP_CARRY:
    case SIM_OP_MATCH: case SIM_OP_REDUX: case SIM_OP_TENSOR: case SIM_OP_NOP: case SIM_OP_TEX:
    case SIM_OP_MBAR: case SIM_OP_MBARWAIT: case SIM_OP_FENCE:
      return 0;
    default: return expansion_latency(P, in) == 0;
  }
}

/* The scoreboard slots an instruction writes (up to 2) and reads (up to 5): its dependences. */
static int writes_of(const board *b, const sim_inst *in, int npreds, int *w) {
  int n = 0;
  if (sim_writes_pred(in->op)) {
    if ((w[n] = pred_slot(b, in->d, npreds)) >= 0) n++;
    if ((w[n] = pred_slot(b, in->d2, npreds)) >= 0) n++;
  } else if ((w[n] = row_slot(b, in->d)) >= 0) {
    n++;
  }
  return n;
}
static int reads_of(const board *b, const sim_inst *in, int npreds, int *r) {
  int n = 0;
  if ((r[n] = pred_slot(b, in->guard, npreds)) >= 0) n++;
  int src[4] = {in->a, in->b, in->c, in->e};
  for (int k = 0; k < 4; k++) {
    int pred = reads_predicates_ab(in->op) && k < 2;
    if ((in->op == SIM_OP_SELP32 || in->op == SIM_OP_SELP64) && k == 2) pred = 1;
    if ((r[n] = pred ? pred_slot(b, src[k], npreds) : row_slot(b, src[k])) >= 0) n++;
  }
  return n;
}

/* An instruction's slots, found once as it enters the scheduler's window. */
typedef struct slots_of {
  int w[2], r[5], nw, nr;
} slots_of;

static void find_slots(const board *b, const sim_inst *in, int npreds, slots_of *s) {
  s->nw = writes_of(b, in, npreds, s->w);
  s->nr = reads_of(b, in, npreds, s->r);
}

/* Whether `later` must issue after `earlier`: it reads what earlier writes, writes what earlier
 * reads, or both write one slot. */
static int depends(const slots_of *earlier, const slots_of *later) {
  for (int i = 0; i < earlier->nw; i++) {
    for (int k = 0; k < later->nr; k++)
      if (earlier->w[i] == later->r[k]) return 1;
    for (int k = 0; k < later->nw; k++)
      if (earlier->w[i] == later->w[k]) return 1;
  }
  for (int i = 0; i < earlier->nr; i++)
    for (int k = 0; k < later->nw; k++)
      if (earlier->r[i] == later->w[k]) return 1;
  return 0;
}

/* The issue state of one pass over a block. */
typedef struct pass {
  board *b;
  const sim_module *m;
  const sim_perf *P;
  int (*cls_of)(const sim_inst *, double *slots);
  double *stall;
  double t;      /* the cycle of the latest issue */
  int loop_test; /* the predicate a loop's closing branch tests, or -1 */
  int last;      /* the block's last instruction */
  int loops;
} pass;

/* Issues instruction i at the first cycle after the last issue its sources allow. */
static void issue_one(pass *s, int i) {
  board *b = s->b;
  const sim_inst *in = &s->m->code[i];
  int is_test = s->loop_test >= 0 && sim_writes_pred(in->op) && in->d == s->loop_test;
  double at = s->t + 1, r = is_test ? 0 : sources_ready(b, in, s->m->npreds);
  s->stall[i] = r > at ? r - at : 0;
  /* ptxas unrolls such a loop by four: its test and branch issue once per four iterations,
   * which this counts as a credit of the three slots the other iterations do not spend */
  if (is_test || (s->loops && i == s->last)) s->stall[i] -= UNROLLED_AWAY;
  s->t = r > at ? r : at;
  double slots = 1, lat = class_latency(s->P, s->cls_of(in, &slots));
  double whole = expansion_latency(s->P, in);
  if (whole > lat) {
    /* the warp issues the sequence in order: it is held until the last step can issue, less
     * the slots its own instructions take (the mix counts those) */
    double held = whole - lat - slots;
    if (held > 0) {
      s->stall[i] += held;
      s->t += held;
    }
  }
  if (lat <= 0) return;
  if (sim_writes_pred(in->op)) {
    set_ready(b, pred_slot(b, in->d, s->m->npreds), s->t + lat);
    set_ready(b, pred_slot(b, in->d2, s->m->npreds), s->t + lat);
  } else {
    set_ready(b, row_slot(b, in->d), s->t + lat);
  }
}

/* ptxas schedules each run of movable instructions: of those whose earlier neighbours they
 * depend on have issued, it issues the first that is ready, else the one ready soonest (list
 * scheduling). Four independent chains written one after the other thus interleave, as on the
 * GPU, instead of each waiting for its own last result. It looks SCHED_WINDOW instructions
 * ahead. */
#define SCHED_WINDOW 32
static void schedule_run(pass *s, int first, int last) {
  const sim_inst *code = s->m->code;
  int npreds = s->m->npreds;
  unsigned deps[SCHED_WINDOW]; /* bit k of deps[j % W]: j depends on j - 1 - k */
  unsigned char done[SCHED_WINDOW] = {0};
  slots_of sl[SCHED_WINDOW];
  int head = first, seen = first; /* deps known for [first, seen) */
  while (head <= last) {
    int end = head + SCHED_WINDOW - 1 < last ? head + SCHED_WINDOW - 1 : last;
    for (; seen <= end; seen++) {
      unsigned mask = 0;
      find_slots(s->b, &code[seen], npreds, &sl[seen % SCHED_WINDOW]);
      for (int k = 0; k < SCHED_WINDOW - 1 && seen - 1 - k >= head; k++)
        if (depends(&sl[(seen - 1 - k) % SCHED_WINDOW], &sl[seen % SCHED_WINDOW]))
          mask |= 1u << k;
      deps[seen % SCHED_WINDOW] = mask;
      done[seen % SCHED_WINDOW] = 0;
    }
    int pick = -1;
    double pick_r = 0;
    for (int j = head; j <= end; j++) {
      if (done[j % SCHED_WINDOW]) continue;
      unsigned mask = deps[j % SCHED_WINDOW];
      int blocked = 0;
      for (int k = 0; mask && !blocked; k++, mask >>= 1)
        if ((mask & 1) && j - 1 - k >= head && !done[(j - 1 - k) % SCHED_WINDOW]) blocked = 1;
      if (blocked) continue;
      double r = sources_ready(s->b, &code[j], npreds);
      if (r <= s->t + 1) {
        pick = j;
        break;
      }
      if (pick < 0 || r < pick_r) pick = j, pick_r = r;
    }
    issue_one(s, pick); /* the first undone instruction (head) never waits on another */
    done[pick % SCHED_WINDOW] = 1;
    while (head <= last && done[head % SCHED_WINDOW]) head++;
  }
}

/* Issues instructions first..last (inclusive) from cycle 0, each run of movable instructions in
 * ptxas's order (schedule_run), the others where they stand; stall[i] gets the cycles
 * instruction i waited past its issue slot. In a loop (loops set), the test that decides the
 * loop's branch does not wait either: ptxas unrolls a counted loop and computes its test ahead. */
static void issue_block(board *b, const sim_module *m, const sim_perf *P, int first, int last,
                        int loops, double *stall, int (*cls_of)(const sim_inst *, double *slots)) {
  pass s = {b, m, P, cls_of, stall, 0, loops ? m->code[last].guard : -1, last, loops};
  for (int i = first; i <= last;) {
    int k = i;
    while (k <= last && movable(P, &m->code[k])) k++;
    if (k > i) schedule_run(&s, i, k - 1);
    if (k <= last) issue_one(&s, k);
    i = k + 1;
  }
  /* the next pass (a loop's next iteration) starts where this one ended */
  for (int sl = 0; sl < b->nrows + m->npreds; sl++)
    if (b->stamp[sl] == b->now) b->ready[sl] = b->ready[sl] > s.t ? b->ready[sl] - s.t : 0;
}

/* Each instruction's stall, for the whole module: returns a new array of m->ncode, or NULL when
 * memory is short. */
static double *module_stalls(const sim_module *m, const sim_perf *P,
                             int (*cls_of)(const sim_inst *, double *slots)) {
  int nslots = m->nrows + m->npreds;
  board b = {calloc((size_t)nslots + 1, sizeof(double)),
             calloc((size_t)nslots + 1, sizeof(unsigned)), m->nrows, 0};
  double *stall = calloc((size_t)m->ncode + 1, sizeof *stall);
  char *leader = calloc((size_t)m->ncode + 1, 1);
  if (!b.ready || !b.stamp || !stall || !leader) {
    free(stall);
    stall = NULL;
    goto out;
  }
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
    first = last + 1;
  }
out:
  free(b.ready);
  free(b.stamp);
  free(leader);
  return stall;
}

double sim_dep_stalls(const sim_module *m, const sim_perf *P, const double *warp_count,
                      int (*cls_of)(const sim_inst *, double *slots)) {
  /* The stalls depend on the code and the parameters only: they are kept with the module and
   * found again only when the parameters change (cuda.stats{perf = ...}). The module is
   * otherwise read-only while it runs, and launches run one at a time, so this memo is safe. */
  sim_module *memo = (sim_module *)m;
  if (!m->dep_stall || memcmp(&m->dep_perf, P, sizeof *P) != 0) {
    free(memo->dep_stall);
    memo->dep_stall = module_stalls(m, P, cls_of);
    memo->dep_perf = *P;
  }
  double total = 0;
  if (!m->dep_stall) return 0; /* no stalls: a lower bound */
  for (int i = 0; i < m->ncode; i++) total += warp_count[i] * m->dep_stall[i];
  return total;
}
