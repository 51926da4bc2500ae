/* sim_mark.c: the timing model's marks on a module, made once when it loads (sim_load.c runs
 * them after the control-flow graph): which atomics have the same address in every lane, which
 * instructions produce a late result and which wait for one (SIM_IF_LAT_*), and what ptxas folds
 * into other instructions (m->folded); and the init check's: which exchanges only store
 * (SIM_IF_ONLY_STORES).
 *
 * Stance: these are load-time passes over the decoded module, apart from the files that use
 * them at run time (sim_trace.c, sim_profile.c, sim_depend.c), so loading a module needs nothing
 * of the executor or the model. A mark that cannot get memory leaves the module unmarked, which
 * the model reads as "no latency" or "nothing folded": a coarser time, never a failed load. */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ---- which atomics have an address the same in every lane ---- */

/* Whether instruction i of m computes something that differs between lanes, by what is known
 * to vary so far (row, pred, region; multi: registers defined more than once). */
static int varies(const sim_module *m, int i, const uint8_t *row, const uint8_t *pred,
                  const uint8_t *region, const uint8_t *multi) {
  const sim_inst *in = &m->code[i];
  int v = (region[i] && in->d >= 0 && in->d < m->nrows && multi[in->d]) ||
          (in->guard >= 0 && pred[in->guard]);
  int op = in->op;
  /* predicate logic reads predicates; setp, hsetp and an mbarrier's wait read register rows */
  if (sim_writes_pred(op) && op != SIM_OP_SETP && op != SIM_OP_HSETP && op != SIM_OP_MBARWAIT) {
    v = v || (in->a >= 0 && pred[in->a]) ||
        (op != SIM_OP_PNOT && op != SIM_OP_PMOV && op != SIM_OP_PSETI && in->b >= 0 &&
         pred[in->b]);
  } else {
    int src[4] = {in->a, in->b, in->c, in->e};
    for (int k = 0; k < 4; k++) {
      int bpred = (op == SIM_OP_SETP || op == SIM_OP_HSETP) && (in->flags & SIM_IF_BPRED);
      int is_pred = k == 2 && (op == SIM_OP_SELP32 || op == SIM_OP_SELP64 || bpred);
      if (src[k] >= 0 && (is_pred ? pred[src[k]] : (src[k] < m->nrows && row[src[k]]))) v = 1;
    }
    if (op == SIM_OP_PACK)
      for (int k = 0; k < in->vec && k < 4; k++)
        if (in->v[k] >= 0 && row[in->v[k]]) v = 1;
  }
  /* Data from memory, other lanes or the clock: varying, conservatively. */
  if (op == SIM_OP_LD || op == SIM_OP_ATOM || op == SIM_OP_SHFL || op == SIM_OP_VOTE ||
      op == SIM_OP_ACTIVEMASK || op == SIM_OP_CLOCK || op == SIM_OP_CARRY || op == SIM_OP_MATCH ||
      op == SIM_OP_REDUX || op == SIM_OP_BAR || op == SIM_OP_TENSOR || op == SIM_OP_TEX ||
      op == SIM_OP_MBAR || op == SIM_OP_MBARWAIT)
    v = 1;
  return v;
}

/* Marks as varying what instruction i of m writes (and, for a branch that varies, the region
 * until its lanes meet again); returns 1 when something became varying. */
static int mark_varying(const sim_module *m, int i, uint8_t *row, uint8_t *pred,
                        uint8_t *region) {
  const sim_inst *in = &m->code[i];
  int op = in->op, changed = 0;
#define MARK(arr, i)             \
  do {                           \
    if ((i) >= 0 && !(arr)[i]) { \
      (arr)[i] = 1;              \
      changed = 1;               \
    }                            \
  } while (0)
  if (sim_writes_pred(op)) {
    MARK(pred, in->d);
    if (op == SIM_OP_SETP || op == SIM_OP_HSETP) MARK(pred, in->d2);
  } else if (op == SIM_OP_LD || op == SIM_OP_UNPACK || op == SIM_OP_TEX) {
    for (int k = 0; k < 4; k++)
      if (in->v[k] >= 0 && in->v[k] < m->nrows) MARK(row, in->v[k]);
  } else if (op == SIM_OP_BAR) {
    if (in->sub == SIM_BAR_POPC) MARK(row, in->d);
    else if (in->sub) MARK(pred, in->d);
  } else if (op == SIM_OP_TENSOR) { /* its destinations are in its side record (and d for cvt) */
    const sim_tensor *t = &m->tensor[in->aux];
    for (int k = 0; k < 8; k++)
      if (t->d[k] >= 0 && t->d[k] < m->nrows) MARK(row, t->d[k]);
    if (in->d >= 0 && in->d < m->nrows) MARK(row, in->d);
  } else if (op == SIM_OP_VOTE) {
    if (in->sub == SIM_VOTE_BALLOT)
      MARK(row, in->d);
    else
      MARK(pred, in->d);
  } else {
    if (in->d >= 0 && in->d < m->nrows) MARK(row, in->d);
    /* the predicate too where d is a sink (elect.sync _|p) */
    if (op == SIM_OP_SHFL || op == SIM_OP_MATCH) MARK(pred, in->d2);
  }
  /* A branch some lanes take and others not: what runs until they meet again differs by lane. */
  if (op == SIM_OP_BRA && in->guard >= 0 && pred[in->guard] && in->rpc > i) {
    int lo = in->target < i + 1 ? in->target : i + 1;
    for (int k = lo < 0 ? 0 : lo; k < in->rpc && k < m->ncode; k++) MARK(region, k);
  }
#undef MARK
  return changed;
}

/* One pass of the uniformity analysis; returns 1 when something became varying. A value
 * computed under a lane-dependent branch is the same in every lane that computes it, so the
 * branch makes it varying only where a register has several definitions (merged after the
 * branch); NVRTC's PTX defines most registers once. */
static int vary_pass(const sim_module *m, uint8_t *row, uint8_t *pred, uint8_t *region,
                     const uint8_t *multi) {
  int changed = 0;
  for (int i = 0; i < m->ncode; i++)
    if (varies(m, i, row, pred, region, multi) && mark_varying(m, i, row, pred, region))
      changed = 1;
  return changed;
}

/* Marks atomics whose address is the same in every lane by construction (from kernel parameters
 * and block coordinates, never from the thread index or from memory): a flow-insensitive
 * fixed point, conservative wherever control flow diverges. See sim_atomics.c for why. */
static void mark_uniform_atomics(sim_module *m) {
  uint8_t *row = calloc((size_t)m->nrows + 1, 1), *pred = calloc((size_t)m->npreds + 1, 1);
  uint8_t *region = calloc((size_t)m->ncode + 1, 1), *multi = calloc((size_t)m->nrows + 1, 1);
  if (row && pred && region && multi) {
    uint8_t *defs = row; /* counts definitions first, then is reset to mark varying rows */
    for (int i = 0; i < m->ncode; i++) {
      const sim_inst *in = &m->code[i];
      int writes_row = !sim_writes_pred(in->op) && in->d >= 0 && in->d < m->nrows;
      if (writes_row && defs[in->d] < 2) defs[in->d]++;
    }
    for (int r = 0; r < m->nrows; r++) multi[r] = defs[r] > 1;
    memset(row, 0, (size_t)m->nrows + 1);
    int lane_rows[] = {SIM_SR_TID_X,       SIM_SR_TID_Y,       SIM_SR_TID_Z,
                       SIM_SR_LANEID,      SIM_SR_LANEMASK_EQ, SIM_SR_LANEMASK_LT,
                       SIM_SR_LANEMASK_LE, SIM_SR_LANEMASK_GT, SIM_SR_LANEMASK_GE,
                       SIM_SR_SMID};
    for (size_t k = 0; k < sizeof lane_rows / sizeof *lane_rows; k++) row[lane_rows[k]] = 1;
    while (vary_pass(m, row, pred, region, multi)) {
    }
    for (int i = 0; i < m->ncode; i++) {
      sim_inst *in = &m->code[i];
      if (in->op == SIM_OP_ATOM)
        in->uniform = (uint8_t)(in->a >= 0 && in->a < m->nrows && !row[in->a]);
    }
  }
  free(row);
  free(pred);
  free(region);
  free(multi);
}

/* Marks producers (loads whose result arrives late) and their consumers, statically: a row any
 * producer writes makes every reader of that row a consumer, which is conservative but cheap. */
void sim_mark_lat(sim_module *m) {
  mark_uniform_atomics(m);
  uint8_t *loaded = calloc((size_t)m->nrows + 1, 1);
  if (!loaded) return; /* the model then sees no load latency */
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    int shared = in->space == SIM_SP_SHARED;
    int global =
        in->space == SIM_SP_GLOBAL || in->space == SIM_SP_GENERIC || in->space == SIM_SP_LOCAL;
    if (in->op == SIM_OP_TEX) { /* a global load's latency (the read-only path's): a first model */
      in->flags |= SIM_IF_LAT_PRODUCER;
      for (int k = 0; k < 4; k++)
        if (in->v[k] >= 0 && in->v[k] < m->nrows) loaded[in->v[k]] = 1;
    } else if (in->op == SIM_OP_LD && (shared || global)) {
      in->flags |= shared ? SIM_IF_LAT_SHARED : SIM_IF_LAT_PRODUCER;
      for (int k = 0; k < 4; k++)
        if (in->v[k] >= 0 && in->v[k] < m->nrows) loaded[in->v[k]] = 1;
    } else if (in->op == SIM_OP_ATOM && in->d >= 0 && in->d < m->nrows) {
      in->flags |= shared ? SIM_IF_LAT_SHARED : SIM_IF_LAT_PRODUCER;
      loaded[in->d] = 1;
    } else if (in->op == SIM_OP_TENSOR && in->space && m->tensor[in->aux].kind != SIM_TC_WSTORE &&
               m->tensor[in->aux].kind != SIM_TC_CPASYNC) {
      /* wmma.load and ldmatrix: sim_tensor.c sets and waits for their rows' arrival itself; the
       * flag only says which stall it is (shared or memory). */
      if (shared) in->flags |= SIM_IF_LAT_SHARED;
      const int32_t *d = m->tensor[in->aux].d;
      for (int k = 0; k < 8; k++)
        if (d[k] >= 0 && d[k] < m->nrows) loaded[d[k]] = 1;
    }
  }
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    int src[8] = {in->a, in->b, in->c, in->e, in->v[0], in->v[1], in->v[2], in->v[3]};
    int n = in->op == SIM_OP_LD || in->op == SIM_OP_TEX ? 4 : 8; /* v[]: destinations */
    in->latsrc = 0;
    if (in->op == SIM_OP_LDPARAM || in->op == SIM_OP_BRA || in->op == SIM_OP_EXIT) continue;
    for (int k = 0; k < n; k++)
      if (src[k] >= 0 && src[k] < m->nrows && loaded[src[k]]) {
        in->flags |= SIM_IF_LAT_CONSUMER;
        in->latsrc |= (uint8_t)(1u << k);
      }
  }
  free(loaded);
}

/* What ptxas folds into other instructions and never issues: a mov of a constant (a symbol's
 * address, a number), which becomes an immediate operand, and an add of such a mov'd address,
 * which becomes the offset of the load or store using it ([r + t] for a shared array t).
 * m->folded[i] is 1 for those. And what it issues less often: a loop whose body is one block
 * it unrolls by four, so the loop's branch, its test and the counter step the test reads run
 * once per four iterations (m->folded[i] is 2; sim_depend.c gives their stalls the same
 * credit). Marked once, when the module loads. */
void sim_mark_fold(sim_module *m) {
  char *folded = calloc((size_t)m->ncode + 1, 1), *const_row = calloc((size_t)m->nrows + 1, 1);
  if (!folded || !const_row) {
    free(folded);
    free(const_row);
    return; /* nothing folded: the mix counts every instruction */
  }
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    int mov = in->op == SIM_OP_MOV32 || in->op == SIM_OP_MOV64;
    if (mov && in->a >= m->const_first && in->a < m->nrows && in->guard < 0) {
      folded[i] = 1;
      if (in->d >= 0 && in->d < m->nrows) const_row[in->d] = 1;
    }
  }
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    int add = in->op == SIM_OP_ADD32 || in->op == SIM_OP_ADD64;
    int ca = in->a >= 0 && in->a < m->nrows && const_row[in->a] && in->a < m->const_first;
    int cb = in->b >= 0 && in->b < m->nrows && const_row[in->b] && in->b < m->const_first;
    if (add && (ca || cb)) folded[i] = 1;
  }
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *br = &m->code[i];
    if (br->op != SIM_OP_BRA || br->guard < 0 || br->target < 0 || br->target >= i) continue;
    int one_block = 1;
    for (int j = br->target; j < i && one_block; j++) one_block = m->code[j].op != SIM_OP_BRA;
    if (!one_block) continue;
    folded[i] = folded[i] ? folded[i] : 2;
    for (int j = i - 1; j >= br->target; j--) { /* the test, then the step it reads */
      const sim_inst *in = &m->code[j];
      if (!sim_writes_pred(in->op) || in->d != br->guard) continue;
      if (!folded[j]) folded[j] = 2;
      for (int s = j - 1; s >= br->target; s--) {
        const sim_inst *st = &m->code[s];
        int step = (st->op == SIM_OP_ADD32 || st->op == SIM_OP_ADD64) && st->d == st->a &&
                   (st->d == in->a || st->d == in->b);
        if (step && !folded[s]) folded[s] = 2;
        if (step || st->d == in->a || st->d == in->b) break;
      }
      break;
    }
  }
  free(const_row);
  m->folded = folded;
}

/* ---- exchanges that only store ---- */

/* Marks each atom.exch whose result row no instruction of the module reads: the word's old
 * value goes nowhere, so the exchange is a store, and the init check (sim_sanitize.c) counts it
 * as one rather than as a read of what the word held (atomicExch(&s[i], 0) clearing shared
 * memory before a __syncthreads(): NVRTC gives the dropped value a row of its own). Every
 * operand field counts as a read, predicates and destinations included, so a row read anywhere,
 * or that may be, keeps its exchange a read: wrong only towards checking too much. Without
 * memory nothing is marked, and every exchange is checked as a read. */
void sim_mark_stores(sim_module *m) {
  uint8_t *read = calloc((size_t)m->nrows + 1, 1);
  if (!read) return;
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    const int32_t src[8] = {in->a, in->b, in->c, in->e, in->v[0], in->v[1], in->v[2], in->v[3]};
    for (int k = 0; k < 8; k++)
      if (src[k] >= 0 && src[k] < m->nrows) read[src[k]] = 1;
    if (in->op == SIM_OP_TENSOR && in->aux >= 0 && in->aux < m->ntensor) {
      const sim_tensor *t = &m->tensor[in->aux];
      for (int k = 0; k < 8; k++) {
        const int32_t r[4] = {t->ra[k], t->rb[k], t->rc[k], t->d[k]};
        for (int j = 0; j < 4; j++)
          if (r[j] >= 0 && r[j] < m->nrows) read[r[j]] = 1;
      }
    }
  }
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    if (in->op == SIM_OP_ATOM && in->sub == SIM_ATOM_EXCH &&
        (in->d < 0 || (in->d < m->nrows && !read[in->d])))
      in->flags |= SIM_IF_ONLY_STORES;
  }
  free(read);
}
