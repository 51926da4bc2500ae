/* sim_report.c: the wording of launch errors: which kernel, block, thread and source line.
 *
 * Stance: one paragraph a learner can act on, always in the same order (what went wrong, then
 * where: kernel, block, thread, file:line). One error per launch, the first of its earliest
 * block in hand-out order (sim_fail in sim_run.h says how); the others are consequences and
 * would only bury it. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_run.h"

void sim_where(const sim_worker *wk, const sim_warp *w, int lane, char *buf, size_t len) {
  const sim_run *run = wk->run;
  unsigned lin = (unsigned)(w->index * SIM_WARP + lane);
  unsigned bx = run->block.x, by = run->block.y;
  snprintf(buf, len, "block (%u,%u,%u), thread (%u,%u,%u)", wk->bx, wk->by, wk->bz, lin % bx,
           (lin / bx) % by, lin / (bx * by));
}

/* The file of instruction in, or NULL. */
static const char *file_of(const sim_module *m, const sim_inst *in) {
  return in->file >= 0 && in->file < m->nfiles ? m->files[in->file] : NULL;
}

/* How far back an instruction without a line looks for one (a function's code is contiguous). */
#define NEAR_LINE 64

void sim_srcline(const sim_module *m, const sim_inst *in, char *buf, size_t len) {
  const char *file = file_of(m, in);
  if (file && in->line > 0) {
    snprintf(buf, len, "%s:%d", file, in->line);
    return;
  }
  /* A module with lines can still have instructions at line 0: one the compiler made for
   * several lines at once (a store after an if/else that both sides feed). The nearest line
   * before it is where the learner should look, which "compile with -lineinfo" would not help. */
  for (const sim_inst *p = in - 1; p >= m->code && in - p <= NEAR_LINE; p--) {
    if (p->op == SIM_OP_RETF || p->op == SIM_OP_RETS) break; /* the end of another function */
    const char *f = file_of(m, p);
    if (f && p->line > 0) {
      snprintf(buf, len, "%s near line %d (PTX line %d, an instruction the compiler made for "
               "several lines)", f, p->line, in->ptx_line);
      return;
    }
  }
  snprintf(buf, len, "PTX line %d (compile with -lineinfo for source lines)", in->ptx_line);
}

int sim_fail(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, const char *fmt,
             ...) {
  sim_run *run = wk->run;
  long long nth = run->nw > 1 ? wk->slots[wk->cur].nth : 0;
  if (run->nw <= 1) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&run->failed, &expected, 1)) return -1;
  } else if (atomic_load(&run->failed) || nth >= atomic_load(&run->fault_nth)) {
    return -1; /* a hard stop (Ctrl-C, a hang), or an earlier block's error stands */
  }
  if (run->dbg && in) sim_fault_note(run->dbg_fault, w, lane, (int)(in - run->m->code));
  char what[768], where[128], src[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  sim_where(wk, w, lane, where, sizeof where);
  sim_srcline(run->m, in, src, sizeof src);
  pthread_mutex_lock(&run->lock);
  if (run->nw <= 1 || nth < atomic_load(&run->fault_nth)) { /* checked again under the lock */
    if (atomic_load(&run->fault_nth) == LLONG_MAX)
      atomic_store(&run->fault_by_ns, sim_mono_ns() + SIM_FAULT_GRACE_NS);
    atomic_store(&run->fault_nth, nth);
    sim_errf(run->err, run->errlen, "%s\n  in kernel %s, %s, at %s", what, run->f->name, where,
             src);
  }
  pthread_mutex_unlock(&run->lock);
  return -1;
}

/* Kept in opts->warning, worded as sim_fail words an error. The one kept is chosen as sim_fail
 * chooses an error's: the first on one worker; with several, the first of the earliest block in
 * hand-out order (every block runs to its end here, so that does not depend on the host
 * threads' timing). One that yields is kept only while no other is known: the first of the
 * others, chosen so, is kept when there is one. A lock keeps two workers from ever writing the
 * buffer at once. */
void sim_warn_at(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, int yields,
                 const char *what) {
  sim_run *run = wk->run;
  if (!run->opts || !run->opts->warning || !run->opts->warninglen) return;
  char where[128], src[300];
  sim_where(wk, w, lane, where, sizeof where);
  sim_srcline(run->m, in, src, sizeof src);
  long long nth = wk->slots[wk->cur].nth;
  pthread_mutex_lock(&run->lock);
  int kept = run->opts->warning[0] != 0, kept_yields = atomic_load(&run->warn_yields);
  if (!kept || yields < kept_yields ||
      (run->nw > 1 && yields == kept_yields && nth < atomic_load(&run->warn_nth))) {
    atomic_store(&run->warn_nth, nth);
    atomic_store(&run->warn_yields, yields);
    sim_errf(run->opts->warning, run->opts->warninglen, "%s\n  in kernel %s, %s, at %s", what,
             run->f->name, where, src);
  }
  pthread_mutex_unlock(&run->lock);
}

void sim_warn(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, const char *fmt,
              ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  sim_warn_at(wk, w, lane, in, 0, what);
}

/* How many more there were, after the first one's paragraph. */
void sim_warn_finish(sim_run *run) {
  unsigned long long n = atomic_load(&run->warnings);
  char *buf = run->opts && run->opts->warning ? run->opts->warning : NULL;
  if (!buf || n < 2) return;
  size_t len = strlen(buf);
  if (len + 1 < run->opts->warninglen)
    snprintf(buf + len, run->opts->warninglen - len, "\n  (and %llu more racing access%s in this "
             "launch)", n - 1, n == 2 ? "" : "es");
}
