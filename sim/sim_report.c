/* sim_report.c: the wording of launch errors: which kernel, block, thread and source line.
 *
 * Stance: one paragraph a learner can act on, always in the same order (what went wrong, then
 * where: kernel, block, thread, file:line). The first error of a launch wins; the others are
 * consequences and would only bury it. */
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

void sim_srcline(const sim_module *m, const sim_inst *in, char *buf, size_t len) {
  int known = in->file >= 0 && in->file < m->nfiles && m->files[in->file];
  const char *file = known ? m->files[in->file] : NULL;
  if (file && in->line > 0) snprintf(buf, len, "%s:%d", file, in->line);
  else snprintf(buf, len, "PTX line %d (compile with -lineinfo for source lines)", in->ptx_line);
}

int sim_fail(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, const char *fmt,
             ...) {
  sim_run *run = wk->run;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&run->failed, &expected, 1)) return -1;
  if (run->dbg && in) sim_fault_note(run->dbg_fault, w, lane, (int)(in - run->m->code));
  char what[768], where[128], src[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  sim_where(wk, w, lane, where, sizeof where);
  sim_srcline(run->m, in, src, sizeof src);
  pthread_mutex_lock(&run->lock);
  sim_errf(run->err, run->errlen, "%s\n  in kernel %s, %s, at %s", what, run->f->name, where, src);
  pthread_mutex_unlock(&run->lock);
  return -1;
}

/* Kept in opts->warning, worded as sim_fail words an error. Called once per launch (report() in
 * sim_race.c counts the races and words only the first), but a lock keeps two workers from ever
 * writing the buffer at once. */
void sim_warn(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, const char *fmt,
              ...) {
  sim_run *run = wk->run;
  if (!run->opts || !run->opts->warning || !run->opts->warninglen) return;
  char what[768], where[128], src[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  sim_where(wk, w, lane, where, sizeof where);
  sim_srcline(run->m, in, src, sizeof src);
  pthread_mutex_lock(&run->lock);
  if (!run->opts->warning[0])
    sim_errf(run->opts->warning, run->opts->warninglen, "%s\n  in kernel %s, %s, at %s", what,
             run->f->name, where, src);
  pthread_mutex_unlock(&run->lock);
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
