/* ptx_mbarrier.c: decodes the asynchronous barriers of cuda::barrier (mbarrier.init, arrive,
 * arrive_drop, test_wait, try_wait, pending_count, inval) and the arrival cp.async makes on one
 * (cuda::memcpy_async with a barrier), into SIM_OP_MBAR and SIM_OP_MBARWAIT (sim_mbarrier.c runs
 * them).
 *
 * Stance: the forms the PTX ISA gives an mbarrier in a block's own shared memory, as the ISA
 * writes them; what works with a cluster's blocks (.shared::cluster, .cluster) or with the tensor
 * memory accelerator's byte counts (expect_tx, complete_tx) is refused by name, with what to use
 * instead. */
#include <string.h>

#include "ptx_mbarrier.h"

#define ALTERNATIVE                                                                              \
  ": the simulator runs cuda::barrier in a block's shared memory, not with the tensor memory "   \
  "accelerator's byte counts (cuda::device::barrier_arrive_tx, cp.async.bulk) or across a "      \
  "cluster; run this kernel on a GPU, or synchronise with __syncthreads() and copy with "        \
  "cg::memcpy_async"

/* The words an mbarrier instruction may carry besides its operation, its space and ordering. */
static int known_word(const char *w, int n) {
  static const char *const ok[] = {"init", "inval", "arrive", "arrive_drop", "noComplete",
                                   "test_wait", "try_wait", "parity", "pending_count",
                                   "shared::cta", NULL};
  for (int k = 0; ok[k]; k++)
    if (ptx_word_eq(w, n, ok[k])) return 1;
  return 0;
}

/* The address operand i: a shared offset (.shared) or a generic address; in->a, imm, space. */
static void mbar_addr(ictx *c, sim_inst *in, int i) {
  in->space = (uint8_t)(c->md.space == SIM_SP_SHARED || ptx_has(&c->md, "shared::cta")
                            ? SIM_SP_SHARED
                            : SIM_SP_GENERIC);
  if (c->md.space && c->md.space != SIM_SP_SHARED)
    ptx_unsupported(c, "an mbarrier is in shared memory");
  ptx_addr(c, in, i);
  if (in->op == SIM_OP_LDPARAM) ptx_unsupported(c, "an mbarrier is in shared memory");
}

static int reg64(const ictx *c, int i) {
  return c->o[i].kind == O_REG && sim_type_size(c->o[i].type) == 8;
}

void ptx_mbarrier_inst(ictx *c) {
  const mods *md = &c->md;
  for (int i = 0; i < md->nwords; i++)
    if (!known_word(md->words[i], md->wlen[i])) {
      if (ptx_word_eq(md->words[i], md->wlen[i], "expect_tx") ||
          ptx_word_eq(md->words[i], md->wlen[i], "complete_tx") ||
          ptx_word_eq(md->words[i], md->wlen[i], "shared::cluster"))
        ptx_unsupported(c, "mbarrier with a transaction count or a cluster" ALTERNATIVE);
      ptx_unsupported(c, NULL);
    }
  if (md->ntypes != 1 || md->types[0] != SIM_T_B64) ptx_unsupported(c, "an mbarrier is a .b64");
  int parity = ptx_has(md, "parity"), nocomplete = ptx_has(md, "noComplete");
  int wait = ptx_has(md, "test_wait") || ptx_has(md, "try_wait");
  int op = ptx_has(md, "init")            ? SIM_MB_INIT
           : ptx_has(md, "inval")         ? SIM_MB_INVAL
           : ptx_has(md, "arrive")        ? SIM_MB_ARRIVE
           : ptx_has(md, "arrive_drop")   ? SIM_MB_DROP
           : ptx_has(md, "pending_count") ? SIM_MB_PENDING
           : ptx_has(md, "try_wait")      ? SIM_MB_TRY
                                          : SIM_MB_TEST;
  int ops = ptx_has(md, "init") + ptx_has(md, "inval") + ptx_has(md, "arrive") +
            ptx_has(md, "arrive_drop") + ptx_has(md, "pending_count") + wait;
  if (ops != 1 || (parity && !wait) || (nocomplete && op != SIM_MB_ARRIVE && op != SIM_MB_DROP))
    ptx_unsupported(c, NULL);
  sim_inst *in = ptx_emit(c, wait ? SIM_OP_MBARWAIT : SIM_OP_MBAR);
  in->sub = (uint8_t)op;
  in->ty = SIM_T_B64;
  in->size = 8;
  in->vec = 1;
  if (op == SIM_MB_PENDING) { /* pending_count.b64 count, state */
    if (c->n != 2 || c->o[0].kind != O_REG) ptx_unsupported(c, "expected count, state");
    in->d = c->o[0].row;
    in->b = ptx_src(c, 1, SIM_T_B64);
    return;
  }
  if (wait) { /* p, [addr], state or phaseParity {, suspendTimeHint (try_wait)} */
    if (c->n != 3 && !(op == SIM_MB_TRY && c->n == 4))
      ptx_unsupported(c, "wrong number of operands");
    if (c->o[0].kind != O_PRED || c->o[0].neg) ptx_unsupported(c, "expected a predicate operand");
    if (!parity && !reg64(c, 2)) ptx_unsupported(c, "the state must be a 64-bit register");
    in->d = c->o[0].row;
    in->ty2 = (uint8_t)parity;
    mbar_addr(c, in, 1);
    in->b = ptx_src(c, 2, parity ? SIM_T_U32 : SIM_T_B64);
    return;
  }
  if (op == SIM_MB_INIT || op == SIM_MB_INVAL) { /* [addr]{, count} */
    if (c->n != (op == SIM_MB_INIT ? 2 : 1)) ptx_unsupported(c, "wrong number of operands");
    mbar_addr(c, in, 0);
    if (op == SIM_MB_INIT) in->b = ptx_src(c, 1, SIM_T_U32);
    return;
  }
  /* arrive / arrive_drop {.noComplete} state, [addr]{, count} (noComplete: with a count) */
  if (c->n != 3 && (c->n != 2 || nocomplete)) ptx_unsupported(c, "wrong number of operands");
  if (c->o[0].kind != O_SINK && !reg64(c, 0))
    ptx_unsupported(c, "the state must be a 64-bit register");
  in->d = c->o[0].kind == O_SINK ? -1 : c->o[0].row;
  in->ty2 = (uint8_t)nocomplete;
  mbar_addr(c, in, 1);
  in->b = c->n == 3 ? ptx_src(c, 2, SIM_T_U32) : ptx_const_row(c->p, -1, 1);
}

void ptx_mbarrier_cpasync(ictx *c) {
  const mods *md = &c->md;
  int noinc = ptx_has(md, "noinc");
  for (int i = 0; i < md->nwords; i++) {
    const char *w = md->words[i];
    int n = md->wlen[i];
    if (!ptx_word_eq(w, n, "async") && !ptx_word_eq(w, n, "mbarrier") &&
        !ptx_word_eq(w, n, "arrive") && !ptx_word_eq(w, n, "noinc") &&
        !ptx_word_eq(w, n, "shared::cta"))
      ptx_unsupported(c, NULL);
  }
  if (!ptx_has(md, "arrive") || md->ntypes != 1 || md->types[0] != SIM_T_B64 || c->n != 1)
    ptx_unsupported(c, NULL);
  sim_inst *in = ptx_emit(c, SIM_OP_MBAR);
  in->sub = SIM_MB_CPASYNC;
  in->ty = SIM_T_B64;
  in->size = 8;
  in->vec = 1;
  in->ty2 = (uint8_t)noinc;
  mbar_addr(c, in, 0);
  in->b = ptx_const_row(c->p, -1, 1);
}
