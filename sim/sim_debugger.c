/* sim_debugger.c: the simulator's side of the debugger (sim.h): breakpoints, steps and the
 * focus; before every instruction of a debugged launch, whether to stop; and what a stop can look
 * at: the warps of the blocks in flight with their diverged lanes, and variables by source name.
 * The prompt, the commands and what they print belong to the front end (the REPL's k:debug).
 *
 * Stance: a stop happens between two instructions of one warp, with that warp's frame saved, so
 * the whole launch is consistent where it lies and is read in place: nothing is copied, and going
 * on is returning. A debugged launch runs its warps one instruction at a time through the
 * executor (sim_debug_exec); every other launch pays one test per sim_exec_warp call, not one
 * per instruction, and runs the executor's loop unchanged. A breakpoint sits at the first
 * instruction of its line in each function, as gdb places one: the line of a for loop stops
 * once, not at its test and its increment as well. A step runs the warp in focus, not one
 * thread, since the warp is what executes; its lanes on the other side of a branch wait, which
 * is what a learner should see. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_run.h"

/* What the instructions run for: the first stop, or as sim_debug_resume said (SIM_DBG_*). */
enum { MODE_START = -1 };

typedef struct dbg_bp {
  int id, line;
  int has_cond;             /* the front end's cond hook decides which lanes it holds for */
  sim_dbgcond *prog;        /* the condition compiled for a warp (sim_dbgcond.c), or NULL */
} dbg_bp;

struct sim_debug {
  sim_kernel *k;
  const sim_module *m;
  sim_debug_hooks hooks;
  int file;                 /* the .file index of the kernel's source; -1 unknown */
  dbg_bp *bps;              /* breakpoints, nbps of cap_bps */
  int nbps, cap_bps, next_id;
  unsigned char *at;        /* per pc: some breakpoint's line starts here */
  int *run_len;             /* per pc: how many instructions from it run with no look between
                             * (to a flow instruction, inclusive, or a breakpoint's, exclusive) */
  int mode;                 /* MODE_*: what the next instructions are run for */
  /* The step: the warp it runs (its block, that block's slot, its index), the lane in focus,
   * the line it began at, and the depth of calls it counts from (the selected frame's). */
  long long step_block;
  int step_slot, step_warp, step_lane, step_line, step_file, step_depth;
  long long fblock;         /* the focus: a block (linear index) */
  int fthread;              /* and a thread in it (linear index) */
  int frame;                /* the frame of the focus selected (0: where it is) */
  unsigned ticks;           /* instructions looked at since the clock was last read */
  double next_progress;     /* CLOCK_MONOTONIC time of the next progress hook; 0 unset */
  /* The stop in progress, valid inside the hooks. */
  sim_worker *wk;           /* the launch's one worker (set before the first hook) */
  const sim_warp *sw;       /* the warp that stopped, NULL outside a stop */
  int spc;                  /* its pc */
  uint32_t slanes;          /* its lanes there */
  int reason, rbp;          /* SIM_DBG_*, and the breakpoint hit */
  int driving;              /* sim_debug_exec is running a warp: the executor runs it */
  sim_dbgflow *flow;        /* variables' places by control flow, worked out as they are read */
  /* The launch's failure, as sim_fail saw it: the warp, its lane and the pc at fault. */
  sim_fault fault;
};

/* ---- breakpoints ---- */

/* The file the kernel's own instructions come from: breakpoint lines are lines of it. */
static int kernel_file(const sim_module *m, const sim_func *f) {
  for (int pc = f->first; pc >= 0 && pc < f->end; pc++)
    if (m->code[pc].file >= 0 && m->code[pc].line > 0) return m->code[pc].file;
  return -1;
}

/* An instruction that may change where the warp goes or which lanes run. */
static int is_flow(const sim_inst *in) {
  switch (in->op) {
  case SIM_OP_BRA: case SIM_OP_EXIT: case SIM_OP_CALL: case SIM_OP_RETF: case SIM_OP_BAR:
  case SIM_OP_TRAP: case SIM_OP_CALLS: case SIM_OP_CALLI: case SIM_OP_RETS: return 1;
  default: return 0;
  }
}

/* d->run_len from the code and the breakpoints: straight code runs in one piece between looks
 * while nothing but a breakpoint could stop it, which is most of what a debugged launch runs. */
static void straight_runs(sim_debug *d) {
  const sim_module *m = d->m;
  for (int f = 0; f < m->nfuncs; f++) {
    const sim_func *fn = &m->funcs[f];
    for (int pc = fn->end - 1; pc >= fn->first && pc >= 0; pc--) {
      int last = pc + 1 >= fn->end || is_flow(&m->code[pc]) || d->at[pc + 1];
      d->run_len[pc] = last ? 1 : (d->run_len[pc + 1] < 4096 ? 1 + d->run_len[pc + 1] : 1);
    }
  }
}

sim_debug *sim_debug_new(sim_kernel *k, const sim_debug_hooks *hooks) {
  sim_debug *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->k = k;
  d->m = k->mod;
  d->hooks = *hooks;
  d->file = kernel_file(d->m, &d->m->funcs[k->func]);
  d->at = calloc((size_t)d->m->ncode + 1, 1);
  d->run_len = calloc((size_t)d->m->ncode + 1, sizeof *d->run_len);
  d->mode = MODE_START;
  d->next_id = 1;
  d->step_slot = -1;
  d->flow = sim_dbgflow_new(d->m); /* NULL is fine: reads then follow the lists alone */
  if (!d->at || !d->run_len) {
    sim_dbgflow_free(d->flow);
    free(d->at);
    free(d->run_len);
    free(d);
    return NULL;
  }
  straight_runs(d);
  return d;
}

void sim_debug_free(sim_debug *d) {
  if (!d) return;
  for (int i = 0; i < d->nbps; i++) sim_dbgcond_free(d->bps[i].prog);
  free(d->bps);
  free(d->at);
  free(d->run_len);
  sim_dbgflow_free(d->flow);
  free(d);
}

const char *sim_debug_file(const sim_debug *d) {
  const sim_module *m = d->m;
  return d->file >= 0 && d->file < m->nfiles && m->files[d->file] ? m->files[d->file] : "";
}

/* Marks (when mark is set) the first instruction of `line` in each function; returns how many
 * functions have code at that line. */
static int line_starts(const sim_debug *d, int line, unsigned char *mark) {
  const sim_module *m = d->m;
  int n = 0;
  for (int f = 0; f < m->nfuncs; f++) {
    const sim_func *fn = &m->funcs[f];
    for (int pc = fn->first; pc >= 0 && pc < fn->end; pc++) {
      if (m->code[pc].line != line || m->code[pc].file != d->file) continue;
      if (mark) mark[pc] = 1;
      n++;
      break;
    }
  }
  return n;
}

/* Why line has no breakpoint: the nearest lines before and after it that have code. */
static void no_code(const sim_debug *d, int line, char *err, size_t errlen) {
  int below = 0, above = 0;
  for (int pc = 0; pc < d->m->ncode; pc++) {
    const sim_inst *in = &d->m->code[pc];
    if (in->file != d->file || in->line <= 0) continue;
    if (in->line < line && in->line > below) below = in->line;
    if (in->line > line && (!above || in->line < above)) above = in->line;
  }
  const char *file = sim_debug_file(d);
  if (!below && !above)
    sim_errf(err, errlen, "the kernel has no source lines to stop at (it was compiled without "
             "line information)");
  else if (below && above)
    sim_errf(err, errlen, "line %d of %s has no code (a comment, a declaration or a brace?); the "
             "nearest lines that have some are %d and %d", line, file, below, above);
  else
    sim_errf(err, errlen, "line %d of %s has no code; the nearest line that has some is %d", line,
             file, below ? below : above);
}

int sim_debug_break(sim_debug *d, int line, int has_cond, char *err, size_t errlen) {
  if (line < 1 || !line_starts(d, line, NULL)) {
    no_code(d, line, err, errlen);
    return -1;
  }
  if (d->nbps == d->cap_bps) {
    int cap = d->cap_bps ? d->cap_bps * 2 : 8;
    dbg_bp *b = realloc(d->bps, (size_t)cap * sizeof *b);
    if (!b) {
      sim_errf(err, errlen, "out of memory for a breakpoint");
      return -1;
    }
    d->bps = b;
    d->cap_bps = cap;
  }
  d->bps[d->nbps++] = (dbg_bp){d->next_id, line, has_cond, NULL};
  line_starts(d, line, d->at);
  straight_runs(d);
  return d->next_id++;
}

int sim_debug_delete(sim_debug *d, int id) {
  int k = 0;
  while (k < d->nbps && d->bps[k].id != id) k++;
  if (k == d->nbps) return -1;
  sim_dbgcond_free(d->bps[k].prog);
  memmove(&d->bps[k], &d->bps[k + 1], (size_t)(d->nbps - k - 1) * sizeof *d->bps);
  d->nbps--;
  memset(d->at, 0, (size_t)d->m->ncode);
  for (int i = 0; i < d->nbps; i++) line_starts(d, d->bps[i].line, d->at);
  straight_runs(d);
  return 0;
}

int sim_debug_cond(sim_debug *d, int bp, const sim_debug_cop *ops, int n, char *err,
                   size_t errlen) {
  int k = 0;
  while (k < d->nbps && d->bps[k].id != bp) k++;
  if (k == d->nbps || !d->bps[k].has_cond) {
    sim_errf(err, errlen, "there is no breakpoint %d with a condition", bp);
    return -1;
  }
  sim_dbgcond *c = n > 0 ? sim_dbgcond_new(ops, n, err, errlen) : NULL;
  if (n > 0 && !c) return -1;
  sim_dbgcond_free(d->bps[k].prog);
  d->bps[k].prog = c;
  return 0;
}

/* ---- the warps of the blocks in flight ---- */

static long long cur_block(const sim_worker *wk) { return wk->slots[wk->cur].block; }

/* The slot holding block b, or -1 when it is not in flight. */
static int slot_of(const sim_debug *d, long long b) {
  for (int i = 0; i < d->wk->nslots; i++)
    if (d->wk->slots[i].block == b) return i;
  return -1;
}

/* Where lane l of w is: the pc of the topmost divergence frame that holds it (at a barrier, the
 * barrier's); -1 when it has exited. */
static int lane_pc(const sim_warp *w, int lane) {
  if (w->state == SIM_W_DONE || !(w->live >> lane & 1)) return -1;
  if (w->state == SIM_W_BAR) return w->bar_pc;
  for (int s = w->sp - 1; s >= 0; s--)
    if (w->stack[s].mask >> lane & 1) return w->stack[s].pc;
  return -1;
}

static int line_at(const sim_debug *d, int pc) {
  return pc >= 0 && pc < d->m->ncode ? d->m->code[pc].line : 0;
}

/* The file pc's line is in when it is not the kernel's own: an #include'd header's path as the
 * PTX's .file gives it; NULL for the kernel's file, or when the line has none. */
static const char *file_at(const sim_debug *d, int pc) {
  if (pc < 0 || pc >= d->m->ncode) return NULL;
  int f = d->m->code[pc].file;
  return f >= 0 && f != d->file && f < d->m->nfiles ? d->m->paths[f] : NULL;
}

/* The pc whose line lanes waiting at pc go on at: a path parked on the unconditional jump that
 * ends one side of an if is shown at the line the jump leads to, which is where the learner's
 * code sends those threads, rather than at the if they have already decided. */
static int next_pc(const sim_debug *d, int pc) {
  for (int hops = 0; hops < 4 && pc >= 0 && pc < d->m->ncode; hops++) {
    const sim_inst *in = &d->m->code[pc];
    if (in->op != SIM_OP_BRA || in->guard >= 0 || in->target < 0) break;
    pc = in->target;
  }
  return pc;
}

/* The pc whose line lanes of w at pc are shown at: for the lanes that stopped, the instruction
 * they stopped before, which the stop names (a step onto `return;` stops at its jump, which
 * next_pc would show at the closing brace); for any other, next_pc's. */
static int shown_pc(const sim_debug *d, const sim_warp *w, int pc) {
  return d->sw == w && pc == d->spc ? pc : next_pc(d, pc);
}

static int shown_line(const sim_debug *d, const sim_warp *w, int pc) {
  return line_at(d, shown_pc(d, w, pc));
}

/* The lanes of w grouped by pc. */
static void warp_groups(const sim_debug *d, const sim_warp *w, sim_debug_warp *out) {
  int pcs[SIM_WARP];
  uint32_t top = w->sp ? w->stack[w->sp - 1].mask : 0;
  out->ngroups = 0;
  for (int l = 0; l < SIM_WARP; l++) {
    int pc = lane_pc(w, l), g = 0;
    if (pc < 0) continue;
    while (g < out->ngroups && pcs[g] != pc) g++;
    if (g == out->ngroups) {
      pcs[g] = pc;
      int at = shown_pc(d, w, pc);
      out->group[g] = (sim_debug_group){line_at(d, at), file_at(d, at), 0, 0};
      out->ngroups++;
    }
    out->group[g].mask |= 1u << l;
    if (w->state == SIM_W_RUN && (top >> l & 1)) out->group[g].running = 1;
  }
}

int sim_debug_warps(const sim_debug *d, sim_debug_warp *out, int max) {
  const sim_worker *wk = d->wk;
  int n = 0;
  for (int i = 0; wk && i < wk->nslots; i++) {
    const sim_slot *s = &wk->slots[i];
    if (s->block < 0) continue;
    for (int k = 0; k < wk->run->nwarps; k++, n++) {
      if (!out || n >= max) continue;
      const sim_warp *w = &s->warps[k];
      sim_debug_warp *o = &out[n];
      o->block = s->block;
      o->warp = k;
      o->state = w->state == SIM_W_DONE ? SIM_DBG_W_DONE
               : w->state == SIM_W_BAR  ? SIM_DBG_W_BARRIER
                                        : SIM_DBG_W_RUNS;
      o->live = w->state == SIM_W_DONE ? 0 : w->live;
      warp_groups(d, w, o);
    }
  }
  return n;
}

/* "(1,0,0)" for linear block b of the launch. */
static void block_text(const sim_run *run, long long b, char *buf, size_t len) {
  snprintf(buf, len, "(%llu,%llu,%llu)", (unsigned long long)(b % run->grid.x),
           (unsigned long long)((b / run->grid.x) % run->grid.y),
           (unsigned long long)(b / ((long long)run->grid.x * run->grid.y)));
}

static void thread_text(const sim_run *run, int t, char *buf, size_t len) {
  unsigned bx = run->block.x, by = run->block.y;
  snprintf(buf, len, "(%u,%u,%u)", (unsigned)t % bx, ((unsigned)t / bx) % by,
           (unsigned)t / (bx * by));
}

/* Thread t of block b: its warp and lane. -1 with err when the block is not in flight or the
 * thread has exited. */
static int find_thread(const sim_debug *d, long long b, int t, const sim_warp **w, int *lane,
                       char *err, size_t errlen) {
  const sim_run *run = d->wk->run;
  char bt[64], tt[64];
  block_text(run, b, bt, sizeof bt);
  thread_text(run, t, tt, sizeof tt);
  int s = slot_of(d, b);
  if (t < 0 || t >= run->nthreads) {
    sim_errf(err, errlen, "thread %d does not exist: blocks have %d threads", t, run->nthreads);
    return -1;
  }
  if (s < 0) {
    sim_errf(err, errlen, "block %s is not in flight: its threads have all exited", bt);
    return -1;
  }
  *w = &d->wk->slots[s].warps[t / SIM_WARP];
  *lane = t % SIM_WARP;
  if (lane_pc(*w, *lane) < 0) {
    sim_errf(err, errlen, "thread %s of block %s has exited", tt, bt);
    return -1;
  }
  return 0;
}

/* ---- the focus and the stop ---- */

void sim_debug_where(const sim_debug *d, sim_debug_stop *out) {
  memset(out, 0, sizeof *out);
  out->reason = d->reason;
  out->bp = d->rbp;
  out->lanes = d->slanes;
  out->line = d->sw ? line_at(d, d->spc) : 0;
  out->file = d->sw ? file_at(d, d->spc) : NULL;
  out->fault = d->reason == SIM_DBG_FAULT ? d->wk->run->err : NULL;
  out->block = d->fblock;
  out->thread = d->fthread;
  out->focus_state = SIM_DBG_W_DONE;
  int s = slot_of(d, d->fblock);
  if (s >= 0) {
    const sim_warp *w = &d->wk->slots[s].warps[d->fthread / SIM_WARP];
    int pc = lane_pc(w, d->fthread % SIM_WARP);
    out->focus_line = shown_line(d, w, pc);
    out->focus_file = file_at(d, shown_pc(d, w, pc));
    out->focus_state = pc < 0 ? SIM_DBG_W_DONE
                     : w->state == SIM_W_BAR ? SIM_DBG_W_BARRIER
                                             : SIM_DBG_W_RUNS;
  }
  const sim_run *run = d->wk->run;
  long long started = atomic_load(&((sim_run *)run)->next_block), resident = 0;
  if (started > run->nblocks) started = run->nblocks;
  for (int i = 0; i < d->wk->nslots; i++) resident += d->wk->slots[i].block >= 0;
  out->blocks_total = run->nblocks;
  out->blocks_started = started;
  out->blocks_done = started - resident;
}

int sim_debug_focus(sim_debug *d, sim_dim3 block, sim_dim3 thread, char *err, size_t errlen) {
  const sim_run *run = d->wk->run;
  if (block.x >= run->grid.x || block.y >= run->grid.y || block.z >= run->grid.z) {
    sim_errf(err, errlen, "block (%u,%u,%u) does not exist: the grid is (%u,%u,%u)", block.x,
             block.y, block.z, run->grid.x, run->grid.y, run->grid.z);
    return -1;
  }
  if (thread.x >= run->block.x || thread.y >= run->block.y || thread.z >= run->block.z) {
    sim_errf(err, errlen, "thread (%u,%u,%u) does not exist: blocks are (%u,%u,%u)", thread.x,
             thread.y, thread.z, run->block.x, run->block.y, run->block.z);
    return -1;
  }
  long long b = block.x + (long long)block.y * run->grid.x
              + (long long)block.z * run->grid.x * run->grid.y;
  if (slot_of(d, b) < 0) {
    long long started = atomic_load(&((sim_run *)run)->next_block);
    sim_errf(err, errlen, "block (%u,%u,%u) is not in flight: it has %s (the simulator runs one "
             "block at a time under the debugger; 'where' shows the blocks in flight)", block.x,
             block.y, block.z, sim_order_rank(run, b) < started ? "finished" : "not started yet");
    return -1;
  }
  d->fblock = b;
  d->fthread = (int)(thread.x + thread.y * run->block.x + thread.z * run->block.x * run->block.y);
  d->frame = 0;
  return 0;
}

/* The launch fails with a message that says the learner ended it. */
static int abandon(sim_debug *d) {
  sim_run *run = d->wk->run;
  int expected = 0;
  if (atomic_compare_exchange_strong(&run->failed, &expected, 1)) {
    pthread_mutex_lock(&run->lock);
    sim_errf(run->err, run->errlen, "kernel %s abandoned in the debugger", run->f->name);
    pthread_mutex_unlock(&run->lock);
  }
  return -1;
}

/* Stops before w runs pc with `lanes` there: the focus moves to w's first such lane unless a
 * step of the focus ended; the front end looks and says how to go on. */
static int stop(sim_debug *d, const sim_warp *w, int pc, uint32_t lanes, int reason, int bp) {
  d->sw = w;
  d->spc = pc;
  d->slanes = lanes;
  d->reason = reason;
  d->rbp = bp;
  if (reason != SIM_DBG_STEP) {
    d->fblock = cur_block(d->wk);
    d->fthread = w->index * SIM_WARP + __builtin_ctz(lanes);
  }
  if (reason == SIM_DBG_INTERRUPT) *d->hooks.interrupt = 0;
  d->mode = SIM_DBG_RUN;
  d->frame = 0;
  int rc = d->hooks.stop(d, d->hooks.ud);
  d->next_progress = 0;
  d->sw = NULL;
  return rc < 0 ? abandon(d) : 0;
}

/* ---- the call stack ---- */

static int func_at(const sim_module *m, int pc) { return sim_dbg_func_at(m, pc); }

/* The calls of lane `lane` of w, at pc (sim_dbgframes.c): ordinary and recursive ones alike. */
static void chain_at(const sim_debug *d, const sim_warp *w, int lane, int pc, sim_dbg_chain *c) {
  sim_dbg_chain_of(d->m, w, lane, pc, c);
}

static int depth_at(const sim_debug *d, const sim_warp *w, int lane, int pc) {
  sim_dbg_chain c;
  chain_at(d, w, lane, pc, &c);
  return c.n - 1;
}

/* The lane whose calls the path w runs now stands for: prefer when it is on that path, else its
 * lowest lane (a step follows the warp, and every lane of one path is in the same calls). */
static int path_lane(const sim_warp *w, int prefer) {
  uint32_t m = w->sp ? w->stack[w->sp - 1].mask & w->live : 0;
  if (w->state == SIM_W_BAR) m = w->live;
  return !m || (m >> prefer & 1) ? prefer : __builtin_ctz(m);
}

/* The pc the reads of thread t of block b see: the selected frame's for the focus, else where the
 * thread is. */
static int view_pc(const sim_debug *d, long long b, int t, const sim_warp *w, int lane,
                   sim_dbg_regs *regs) {
  int pc = lane_pc(w, lane);
  if (regs) *regs = (sim_dbg_regs){NULL, w->R[SIM_SR_FRAME * SIM_WARP + lane]};
  if (d->frame <= 0 || b != d->fblock || t != d->fthread) return pc;
  sim_dbg_chain c;
  chain_at(d, w, lane, pc, &c);
  if (d->frame >= c.n || d->frame >= SIM_DBG_FRAMES) return pc;
  if (regs) sim_dbg_regs_of(d->m, w, &c, d->frame, regs);
  return c.pc[d->frame];
}

/* The line function f's code begins at (its opening line, where the prologue loads the
 * parameters) and the first line of its body, after the prologue, where they have their values,
 * as gdb places a breakpoint on a function; 0 when it has none. */
static int func_lines(const sim_debug *d, int f, int *body) {
  const sim_func *fn = &d->m->funcs[f];
  int first = 0;
  *body = 0;
  for (int pc = fn->first; pc >= 0 && pc < fn->end; pc++) {
    int l = d->m->code[pc].line;
    if (l <= 0) continue;
    if (!first) first = l;
    else if (l != first) {
      *body = l;
      break;
    }
  }
  if (!*body) *body = first;
  return first;
}

int sim_debug_frames(const sim_debug *d, long long block, int thread, sim_debug_frame *out,
                     int max) {
  const sim_warp *w;
  int lane;
  char err[256];
  if (!d->wk || find_thread(d, block, thread, &w, &lane, err, sizeof err) < 0) return 0;
  sim_dbg_chain c;
  chain_at(d, w, lane, lane_pc(w, lane), &c);
  int n = c.n < SIM_DBG_FRAMES ? c.n : SIM_DBG_FRAMES;
  const int *pcs = c.pc;
  for (int i = 0; i < n && i < max; i++) {
    int f = c.func[i];
    sim_debug_frame *o = &out[i];
    memset(o, 0, sizeof *o);
    if (f < 0) continue;
    char name[128], in[128];
    sim_demangle(d->m->funcs[f].name, name, sizeof name, in, sizeof in);
    if (in[0]) snprintf(o->func, sizeof o->func, "%.60s in %.60s", name, in); /* a lambda */
    else snprintf(o->func, sizeof o->func, "%s", name);
    o->is_kernel = d->m->funcs[f].is_entry;
    /* a function without .loc of its own has line 0 everywhere (ptx_parse.c) */
    int at = i == 0 ? shown_pc(d, w, pcs[i]) : pcs[i];
    o->line = line_at(d, at);
    o->file = o->line ? file_at(d, at) : NULL;
  }
  return n;
}

int sim_debug_select(sim_debug *d, int n, char *err, size_t errlen) {
  const sim_warp *w;
  int lane;
  if (find_thread(d, d->fblock, d->fthread, &w, &lane, err, errlen) < 0) return -1;
  sim_dbg_chain c;
  chain_at(d, w, lane, lane_pc(w, lane), &c);
  int frames = c.n < SIM_DBG_FRAMES ? c.n : SIM_DBG_FRAMES;
  if (n < 0 || n >= frames) {
    sim_errf(err, errlen, "there is no frame %d: the thread in focus has %d (0 to %d; bt lists "
             "them)", n, frames, frames - 1);
    return -1;
  }
  d->frame = n;
  return 0;
}

int sim_debug_func_line(const sim_debug *d, const char *name, int *line) {
  char nm[128];
  for (int f = 0; f < d->m->nfuncs; f++) {
    if (d->m->funcs[f].first < 0) continue; /* declared, not defined here */
    sim_demangle(d->m->funcs[f].name, nm, sizeof nm, NULL, 0);
    if (strcmp(nm, name) && strcmp(d->m->funcs[f].name, name)) continue;
    func_lines(d, f, line);
    return 0;
  }
  return -1;
}

void sim_debug_resume(sim_debug *d, int how) {
  d->mode = how;
  if (how == SIM_DBG_RUN) return;
  int s = d->wk ? slot_of(d, d->fblock) : -1;
  d->step_block = d->fblock;
  d->step_slot = s;
  d->step_warp = d->fthread / SIM_WARP;
  d->step_lane = d->fthread % SIM_WARP;
  d->step_line = d->step_file = -1;
  d->step_depth = 0;
  if (s < 0) return;
  const sim_warp *w = &d->wk->slots[s].warps[d->step_warp];
  int pc = w->state == SIM_W_BAR ? w->bar_pc : w->sp ? w->stack[w->sp - 1].pc : -1;
  if (pc < 0 || pc >= d->m->ncode) return;
  d->step_line = d->m->code[pc].line;
  d->step_file = d->m->code[pc].file;
  sim_dbg_chain c;
  chain_at(d, w, path_lane(w, d->step_lane), pc, &c);
  d->step_depth = c.n - 1 - d->frame;
  if (d->frame > 0 && d->frame < c.n && d->frame < SIM_DBG_FRAMES) /* from that frame's line */
    d->step_line = d->m->code[c.pc[d->frame]].line;
}

/* The breakpoint that stops w at pc: its lanes (those its condition holds for), 0 for none. */
static uint32_t hit(sim_debug *d, const sim_warp *w, int pc, uint32_t m, int *bp) {
  const sim_inst *in = &d->m->code[pc];
  for (int i = 0; i < d->nbps; i++) {
    const dbg_bp *b = &d->bps[i];
    if (b->line != in->line || in->file != d->file) continue;
    uint32_t lanes = m;
    if (b->has_cond &&
        (!b->prog ||
         sim_dbgcond_eval(b->prog, d->flow, d->m->debug, d->wk, w, pc, m, &lanes) < 0) &&
        d->hooks.cond)
      lanes = d->hooks.cond(d, b->id, cur_block(d->wk), w->index, m, d->hooks.ud) & m;
    if (lanes) {
      *bp = b->id;
      return lanes;
    }
  }
  return 0;
}

/* The thread a step follows is still there. */
static int step_alive(const sim_debug *d) {
  const sim_worker *wk = d->wk;
  if (d->step_slot < 0 || d->step_slot >= wk->nslots ||
      wk->slots[d->step_slot].block != d->step_block)
    return 0;
  const sim_warp *w = &wk->slots[d->step_slot].warps[d->step_warp];
  return w->state != SIM_W_DONE && (w->live >> d->step_lane & 1);
}

/* During a step: the warp in focus at a line other than the one it began at ends it; the thread
 * in focus gone (another warp runs now) ends it too, and the focus moves to that warp. */
static int step_check(sim_debug *d, const sim_warp *w, int pc, uint32_t m) {
  if (cur_block(d->wk) == d->step_block && w->index == d->step_warp) {
    const sim_inst *in = &d->m->code[pc];
    int depth = w->ncalls || w->depth ? depth_at(d, w, path_lane(w, d->step_lane), pc) : 0;
    int other = in->line != d->step_line || in->file != d->step_file, done = 0;
    if (in->file < 0) /* a function's tail (ptx_parse.c's emit_tail) is no line to stop at */
      return 0;
    switch (d->mode) {
    case SIM_DBG_STEP_IN:
      done = in->line > 0 && (other || depth != d->step_depth);
      if (done && depth > d->step_depth) { /* into a call: past its prologue, as gdb goes */
        int body, first = func_lines(d, func_at(d->m, pc), &body);
        done = in->line != first || body == first;
      }
      break;
    case SIM_DBG_NEXT:
      done = in->line > 0 && (depth < d->step_depth || (depth == d->step_depth && other));
      break;
    case SIM_DBG_UNTIL: /* past the line, in the same frame: a loop's jump back does not stop */
      done = in->line > 0 && (depth < d->step_depth ||
                              (depth == d->step_depth && (in->line > d->step_line ||
                                                          in->file != d->step_file)));
      break;
    case SIM_DBG_FINISH: done = depth < d->step_depth; break;
    }
    return done ? stop(d, w, pc, m, SIM_DBG_STEP, 0) : 0;
  }
  return step_alive(d) ? 0 : stop(d, w, pc, m, SIM_DBG_EXITED, 0);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Every 65536 instructions the clock is read, and once a second the front end hears where the
 * launch is: a long continue, or one into an endless loop, says so within seconds. */
static void progress(sim_debug *d, const sim_warp *w, int pc) {
  d->ticks = 0;
  double t = now();
  if (d->next_progress == 0) d->next_progress = t + 1.0;
  if (t < d->next_progress) return;
  d->next_progress = t + 1.0;
  d->hooks.progress(d, cur_block(d->wk), w->index, line_at(d, pc), d->hooks.ud);
}

/* Before w runs pc with lanes m: whether to stop, and the stop. 0 to run the instruction, -1
 * when the launch is abandoned. */
static int look(sim_debug *d, sim_worker *wk, sim_warp *w, int pc, uint32_t m) {
  d->wk = wk;
  if (!m) return 0;
  if (d->mode == MODE_START) return stop(d, w, pc, m, SIM_DBG_START, 0);
  if (d->hooks.interrupt && *d->hooks.interrupt) return stop(d, w, pc, m, SIM_DBG_INTERRUPT, 0);
  int bp = 0;
  uint32_t lanes = d->at[pc] ? hit(d, w, pc, m, &bp) : 0;
  if (lanes) return stop(d, w, pc, lanes, SIM_DBG_BREAK, bp);
  if (d->hooks.progress && ++d->ticks >= 1u << 16) progress(d, w, pc);
  return d->mode != SIM_DBG_RUN ? step_check(d, w, pc, m) : 0;
}

/* Where sim_fail notes the launch's failure (run->dbg_fault). */
sim_fault *sim_debug_faults(sim_debug *d) { return &d->fault; }

/* w has failed the launch: a stop at the instruction and thread at fault, if sim_fail named one
 * of w, so that the learner sees the failing thread's variables before the launch ends. Going on
 * from it, in any way, ends the launch with the failure. */
static void fault_stop(sim_debug *d, const sim_warp *w) {
  if (d->fault.w != w || d->reason == SIM_DBG_FAULT) return;
  uint32_t top = w->sp ? w->stack[w->sp - 1].mask & w->live : 0;
  uint32_t some = top ? top : w->live ? w->live : 1;
  int lane = d->fault.lane >= 0 ? d->fault.lane : __builtin_ctz(some);
  stop(d, w, d->fault.pc, 1u << lane, SIM_DBG_FAULT, 0);
}

void sim_debug_hang(sim_debug *d, sim_worker *wk, const sim_warp *w) {
  d->wk = wk;
  sim_fault_note(&d->fault, w, -1, w->sp ? w->stack[w->sp - 1].pc : w->spin_pc); /* if none yet */
  fault_stop(d, w);
}

/* One instruction at a time: sim_exec_warp with no budget settles the warp's divergence stack
 * (pops the paths that are over) without running anything, so the top frame is what runs next;
 * the debugger looks at it; sim_exec_warp with a budget of one runs it. The executor's own loop
 * stays as it is for every other launch, which a test in it per instruction would slow. */
static int drive(sim_debug *d, sim_worker *wk, sim_warp *w, long budget) {
  for (;;) {
    if (budget <= 0) return SIM_W_RUN;
    int r = sim_exec_warp(wk, w, 0);
    if (r != SIM_W_RUN) return r;
    const sim_frame *t = &w->stack[w->sp - 1];
    if (look(d, wk, w, t->pc, t->mask & w->live) < 0) return SIM_W_ERR;
    long n = 1; /* a step looks at every instruction; a run only where something could stop */
    if (d->mode == SIM_DBG_RUN && t->pc >= 0 && t->pc < d->m->ncode) {
      n = d->run_len[t->pc];
      if (t->rpc > t->pc && t->rpc - t->pc < n) n = t->rpc - t->pc; /* another path goes on */
      if (n > budget) n = budget;
      d->ticks += (unsigned)n - 1;
    }
    budget -= n;
    r = sim_exec_warp(wk, w, n);
    if (r == SIM_W_ERR && d->fault.w == w && w->sp > 0 && d->fault.pc >= 0)
      w->stack[w->sp - 1].pc = d->fault.pc; /* a fault within a run: the warp is where it failed */
    if (r == SIM_W_ERR) fault_stop(d, w);
    if (r != SIM_W_RUN || w->loop_paused) return r; /* a loop to probe (sim_sched.c) */
  }
}

int sim_debug_exec(sim_worker *wk, sim_warp *w, long budget, int *r) {
  sim_debug *d = wk->run->dbg;
  if (d->driving) return 0;
  d->driving = 1;
  *r = drive(d, wk, w, budget);
  d->driving = 0;
  return 1;
}

/* ---- variables ---- */

/* Reads v's value at place l for lane `lane` of w into out, its registers where regs says (an
 * outer activation of a recursive function's are in a save record): a register's bits, or for
 * one in local memory its address (out->addr, which the front end reads a structure or a whole
 * array through) and the bits of its first elements of 8 bytes or less. -1 with err when its
 * local memory lies outside the thread's. */
static int read_place(const sim_debug *d, const sim_warp *w, int lane, const sim_dvar *v,
                      const sim_dloc *l, const sim_dbg_regs *regs, sim_debug_value *out,
                      char *err, size_t errlen) {
  out->shown = 1;
  /* an outer activation of a recursive function: its registers are where the inner call saved
   * them */
  const sim_act *a = regs->act;
  const sim_func *af = a ? &d->m->funcs[a->func] : NULL;
  if (l->kind == SIM_DL_PRED) {
    int saved = af && l->where >= af->pred_first && l->where < af->pred_first + af->npreds;
    out->bits[0] = (saved ? sim_act_pred(d->m, a, (int)l->where) : w->P[l->where]) >> lane & 1;
    return 0;
  }
  if (l->kind == SIM_DL_ROW) {
    int saved = af && l->where >= af->reg_first && l->where < af->reg_first + af->nregs;
    uint64_t x = saved ? sim_act_row(d->m, a, (int)l->where, lane)
                       : w->R[l->where * SIM_WARP + lane];
    out->bits[0] = v->size >= 8 || v->size <= 0 ? x : x & ((1ull << (8 * v->size)) - 1);
    return 0;
  }
  size_t stride = d->wk->run->local_stride, size = (size_t)(v->size > 0 ? v->size : 1);
  size_t n = (size_t)v->count < SIM_DEBUG_ELEMS ? (size_t)v->count : SIM_DEBUG_ELEMS;
  int64_t at = l->where;
  const sim_func *vf = v->func >= 0 && v->func < d->m->nfuncs ? &d->m->funcs[v->func] : NULL;
  if (vf && vf->stacked) /* its locals lie in the activation's frame (sim_calls.c) */
    at = (int64_t)regs->frame + at - (int64_t)vf->local_lo;
  if (size > 8) n = 0; /* a structure: its bytes are read through its address */
  if (at < 0 || (size_t)at + (n ? n : 1) * size > stride) {
    sim_errf(err, errlen, "'%s' is in local memory the debugger cannot read", v->name);
    return -1;
  }
  const unsigned char *p = w->local + (size_t)lane * stride + (size_t)at;
  for (size_t k = 0; k < n; k++) {
    out->bits[k] = 0;
    memcpy(&out->bits[k], p + k * size, size); /* little-endian host */
  }
  out->shown = (int)n;
  out->addr = SIM_LOCAL_WIN + (uint64_t)at; /* as the thread addresses it (sim_debug_mem) */
  return 0;
}

int sim_debug_read(const sim_debug *d, long long block, int thread, const char *name,
                   sim_debug_value *out, char *err, size_t errlen) {
  const sim_warp *w;
  int lane;
  memset(out, 0, sizeof *out);
  if (find_thread(d, block, thread, &w, &lane, err, errlen) < 0) return -1;
  sim_dbg_regs regs;
  int pc = view_pc(d, block, thread, w, lane, &regs), line = line_at(d, pc);
  const sim_dbginfo *di = d->m->debug;
  if (!di) {
    sim_errf(err, errlen, "the kernel has no debug information: variables are known by name "
             "only when it is compiled with -G");
    return -1;
  }
  const sim_dvar *v = sim_dbgflow_lookup(di, pc, name);
  if (!v && di->why[0]) {
    sim_errf(err, errlen, "no variable '%s' is known: the kernel's debug information cannot be "
             "read (%s)", name, di->why);
    return -1;
  }
  if (!v) {
    sim_errf(err, errlen, "no variable '%s' at line %d", name, line);
    return -1;
  }
  const sim_dloc *l = sim_dbgflow_where(d->flow, di, v, pc);
  if (!l) {
    sim_errf(err, errlen, "'%s' has no value at line %d (not computed yet there, or no longer "
             "kept)", name, line);
    return -1;
  }
  out->enc = v->enc;
  out->size = v->size;
  out->count = v->count;
  snprintf(out->type, sizeof out->type, "%s", v->type);
  return read_place(d, w, lane, v, l, &regs, out, err, errlen);
}

int sim_debug_mem(const sim_debug *d, long long block, int thread, uint64_t a, void *out,
                  size_t n, char *err, size_t errlen) {
  const sim_run *run = d->wk->run;
  const sim_warp *w;
  int lane;
  if (a - SIM_SHARED_WIN < SIM_WIN_SIZE || a - SIM_LOCAL_WIN < SIM_WIN_SIZE) {
    if (find_thread(d, block, thread, &w, &lane, err, errlen) < 0) return -1;
    int shared = a - SIM_SHARED_WIN < SIM_WIN_SIZE;
    uint64_t off = a - (shared ? SIM_SHARED_WIN : SIM_LOCAL_WIN);
    size_t size = shared ? run->shared_total : run->local_stride;
    if (off > size || n > size - off) {
      sim_errf(err, errlen, "%s byte %llu is past the end of the %s's %zu bytes",
               shared ? "shared-memory" : "local-memory", (unsigned long long)off,
               shared ? "block" : "thread", size);
      return -1;
    }
    const unsigned char *p = shared ? d->wk->slots[slot_of(d, block)].shared
                                    : w->local + (size_t)lane * run->local_stride;
    memcpy(out, p + off, n);
    return 0;
  }
  if (sim_alloc_find(run->tab, run->ntab, a, n) < 0) {
    sim_errf(err, errlen, "address 0x%llx (%zu bytes) is not in any array of the launch",
             (unsigned long long)a, n);
    return -1;
  }
  memcpy(out, (const void *)(uintptr_t)a, n);
  return 0;
}

/* The i-th variable of the module if it is a __shared__ one the kernel sees, with its source
 * name in buf; NULL otherwise. */
static const sim_var *shared_at(const sim_debug *d, int i, char *buf, size_t len) {
  const sim_var *v = &d->m->vars[i];
  if (v->space != SIM_SP_SHARED || (v->func >= 0 && v->func != d->k->func)) return NULL;
  char fn[128];
  sim_demangle(v->name, buf, len, fn, sizeof fn);
  return v;
}

int sim_debug_shared(const sim_debug *d, const char *name, uint64_t *addr, uint64_t *size) {
  char nm[128];
  for (int i = 0; i < d->m->nvars; i++) {
    const sim_var *v = shared_at(d, i, nm, sizeof nm);
    if (!v || strcmp(nm, name)) continue;
    const sim_run *run = d->wk->run;
    *addr = SIM_SHARED_WIN + (v->is_extern ? (d->k->static_shared + 15) / 16 * 16 : v->addr);
    *size = v->is_extern ? run->dyn_shared : v->size;
    return 0;
  }
  return -1;
}

int sim_debug_global(const sim_debug *d, const char *name, uint64_t *addr, uint64_t *size,
                     int *is_const) {
  for (int i = 0; i < d->m->nvars; i++) {
    const sim_var *v = &d->m->vars[i];
    if ((v->space != SIM_SP_CONST && v->space != SIM_SP_GLOBAL) || v->func >= 0 || !v->data)
      continue;
    char nm[128], fn[128];
    sim_demangle(v->name, nm, sizeof nm, fn, sizeof fn); /* ns::coef for _ZN2ns4coefE */
    if (strcmp(nm, name) != 0) continue;
    *addr = v->addr;
    *size = v->size;
    *is_const = v->space == SIM_SP_CONST;
    return 0;
  }
  return -1;
}

int sim_debug_names(const sim_debug *d, long long block, int thread, const char **out, int max) {
  const sim_warp *w;
  int lane, n = 0;
  char err[256];
  const sim_dbginfo *di = d->m->debug;
  if (!di || find_thread(d, block, thread, &w, &lane, err, sizeof err) < 0) return 0;
  int pc = view_pc(d, block, thread, w, lane, NULL);
  for (int i = 0; i < di->nvars; i++) {
    const sim_dvar *v = &di->vars[i];
    if (pc < v->lo || pc >= v->hi) continue;
    int seen = 0;
    for (int k = 0; k < n && k < max && !seen; k++) seen = !strcmp(out[k], v->name);
    if (seen) continue;
    if (n < max) out[n] = v->name;
    n++;
  }
  for (int i = 0; i < d->m->nvars && n < max; i++) { /* its __shared__ variables are in scope */
    char nm[128];
    if (!shared_at(d, i, nm, sizeof nm)) continue;
    const char *p = strstr(d->m->vars[i].name, nm); /* the name within the mangled one */
    size_t len = strlen(nm);
    while (p && p[len] != 0) p = strstr(p + 1, nm);
    if (p) out[n++] = p;
  }
  return n;
}
