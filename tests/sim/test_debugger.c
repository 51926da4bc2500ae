/* test_debugger.c: the simulator's debugger (sim/sim_debugger.c) driven the way the REPL drives
 * it: a stop at the start, a conditional breakpoint, a step of the warp in focus into a branch
 * that splits it (its lanes at two lines, with their masks), focus on threads and blocks that do
 * not exist or are not in flight, a breakpoint on a line without code, Ctrl-C while running, a
 * step off the end of a warp, and a launch abandoned half-way, whose memory keeps what the
 * finished blocks wrote. A launch run to its end under the debugger computes what it computes
 * without it. With the blocks in reverse order, focus tells a block not started from one
 * finished by where it stands in that order. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static const char SRC[] =
    "__global__ void split(int *a, int n)\n"          /* 1 */
    "{\n"                                             /* 2 */
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" /* 3 */
    "  if (i < n) {\n"                                /* 4 */
    "    int v = a[i];\n"                             /* 5 */
    "    if (threadIdx.x % 2 == 0) {\n"               /* 6 */
    "      v = v * 2;\n"                              /* 7 */
    "    } else {\n"                                  /* 8 */
    "      v = v + 100;\n"                            /* 9 */
    "    }\n"                                         /* 10 */
    "    a[i] = v;\n"                                 /* 11 */
    "  }\n"                                           /* 12 */
    "}\n";                                            /* 13 */

#define N 128 /* two blocks of 64 */

/* What a test's stop function sees and leaves behind. */
typedef struct script {
  int stops;
  int (*on_stop)(struct script *s, sim_debug *d, const sim_debug_stop *st);
  int want_block;                /* the condition: threadIdx.x == 3 in this block (-1: any) */
  volatile sig_atomic_t flag;    /* Ctrl-C */
  char err[8][256];              /* messages the commands gave */
  int rc[8];
  sim_debug_stop seen[8];
  sim_debug_warp warps[8];
  int nwarps;
  long long i_at_break;
  int order;                     /* SIM_ORDER_*: the blocks' order */
} script;

static uint32_t cond(sim_debug *d, int bp, long long block, int warp, uint32_t lanes, void *ud) {
  (void)d;
  (void)bp;
  script *s = ud;
  if (s->want_block >= 0 && block != s->want_block) return 0;
  return warp == 0 ? lanes & (1u << 3) : 0;
}

static int on_stop(sim_debug *d, void *ud) {
  script *s = ud;
  sim_debug_stop st;
  sim_debug_where(d, &st);
  if (s->stops < 8) s->seen[s->stops] = st;
  int rc = s->on_stop(s, d, &st);
  s->stops++;
  return rc;
}

static void reference(int *want) {
  for (int i = 0; i < N; i++) want[i] = i % 64 % 2 == 0 ? (i + 1) * 2 : i + 1 + 100;
}

/* Runs split over a[i] = i + 1 under a debugger whose stops go to s->on_stop. */
static int run(sim_device *dev, sim_kernel *k, script *s, int *a, char *err, size_t errlen) {
  for (int i = 0; i < N; i++) a[i] = i + 1;
  sim_debug_hooks h = {on_stop, cond, s, &s->flag, NULL};
  sim_debug *d = sim_debug_new(k, &h);
  int n = N;
  void *args[] = {&a, &n};
  sim_launch_opts o = {0};
  o.debug = d;
  o.threads = 4; /* the debugger runs it on one all the same */
  o.block_order = s->order;
  sim_dim3 g = {2, 1, 1}, b = {64, 1, 1};
  int rc = sim_launch(dev, k, g, b, 0, args, &o, NULL, err, errlen);
  sim_debug_free(d);
  return rc;
}

/* ---- break, step into divergence, look, continue ---- */

static int divergence(script *s, sim_debug *d, const sim_debug_stop *st) {
  if (s->stops == 0) {
    s->rc[0] = sim_debug_break(d, 10, 0, s->err[0], sizeof s->err[0]);
    s->rc[1] = sim_debug_break(d, 6, 1, s->err[1], sizeof s->err[1]);
    s->rc[2] = sim_debug_focus(d, (sim_dim3){0, 0, 0}, (sim_dim3){99999, 0, 0}, s->err[2],
                               sizeof s->err[2]);
    s->rc[3] = sim_debug_focus(d, (sim_dim3){1, 0, 0}, (sim_dim3){0, 0, 0}, s->err[3],
                               sizeof s->err[3]);
    s->rc[4] = sim_debug_focus(d, (sim_dim3){5, 0, 0}, (sim_dim3){0, 0, 0}, s->err[4],
                               sizeof s->err[4]);
    s->rc[5] = sim_debug_break(d, 0, 0, s->err[5], sizeof s->err[5]);
  } else if (s->stops == 1) {
    sim_debug_value v;
    if (sim_debug_read(d, st->block, st->thread, "i", &v, s->err[6], sizeof s->err[6]) == 0)
      s->i_at_break = (long long)v.bits[0];
    sim_debug_resume(d, 1);
  } else if (s->stops == 2) {
    s->nwarps = sim_debug_warps(d, s->warps, 8);
    sim_debug_delete(d, s->rc[1]);
  }
  return 0;
}

static void check_divergence(sim_device *dev, sim_kernel *k) {
  script s = {.on_stop = divergence, .want_block = -1};
  int *a = sim_malloc(dev, N * sizeof *a, "i32[128]", s.err[7], sizeof s.err[7]), want[N];
  char err[1024];
  int rc = run(dev, k, &s, a, err, sizeof err);
  tu_check(rc == 0 && s.stops == 3, "a debugged launch: start, a breakpoint, a step, then the end",
           "rc %d after %d stops: %s", rc, s.stops, err);
  const sim_debug_stop *st = &s.seen[0];
  tu_check(st->reason == SIM_DBG_START && st->block == 0 && st->thread == 0 && st->focus_line > 0 &&
           st->blocks_total == 2 && st->blocks_started == 1 && st->blocks_done == 0,
           "the first stop is before the first instruction, thread (0,0,0) in focus",
           "reason %d block %lld thread %d line %d", st->reason, st->block, st->thread,
           st->focus_line);
  tu_check(s.rc[0] < 0 && strstr(s.err[0], "line 10 of kernel.cu has no code") &&
           strstr(s.err[0], "are 9 and 11"),
           "a breakpoint on a line without code: refused, with the nearest lines that have some",
           "said '%s'", s.err[0]);
  tu_check(s.rc[5] < 0 && strstr(s.err[5], "line 0 of kernel.cu has no code"),
           "line 0 is refused", "said '%s'", s.err[5]);
  tu_check(s.rc[2] < 0 && !strcmp(s.err[2], "thread (99999,0,0) does not exist: blocks are "
                                            "(64,1,1)"),
           "focus on a thread that does not exist is refused", "said '%s'", s.err[2]);
  tu_check(s.rc[3] < 0 && strstr(s.err[3], "block (1,0,0) is not in flight: it has not started"),
           "focus on a block not started is refused", "said '%s'", s.err[3]);
  tu_check(s.rc[4] < 0 && strstr(s.err[4], "block (5,0,0) does not exist: the grid is (2,1,1)"),
           "focus on a block outside the grid is refused", "said '%s'", s.err[4]);
  st = &s.seen[1];
  tu_check(st->reason == SIM_DBG_BREAK && st->bp == s.rc[1] && st->line == 6 && st->thread == 3 &&
           st->lanes == 1u << 3 && s.i_at_break == 3,
           "the breakpoint's condition holds for thread 3 alone, which takes the focus",
           "reason %d line %d thread %d lanes 0x%08x i %lld (%s)", st->reason, st->line,
           st->thread, st->lanes, s.i_at_break, s.err[6]);
  st = &s.seen[2];
  int lines = st->reason == SIM_DBG_STEP && (st->line == 7 || st->line == 9) && st->thread == 3;
  tu_check(lines, "a step runs the warp in focus to its next line", "reason %d line %d thread %d",
           st->reason, st->line, st->thread);
  const sim_debug_warp *w = s.nwarps >= 2 ? &s.warps[0] : NULL;
  int split = w && w->block == 0 && w->warp == 0 && w->ngroups == 2 && w->live == 0xffffffffu;
  for (int g = 0; split && g < 2; g++) {
    const sim_debug_group *gr = &w->group[g];
    split = (gr->line == 7 && gr->mask == 0x55555555u) ||
            (gr->line == 9 && gr->mask == 0xaaaaaaaau);
  }
  tu_check(split && w->group[0].running != w->group[1].running,
           "after the branch the warp's lanes are at two lines: 0x55555555 and 0xaaaaaaaa, one "
           "path running", "%d warps, %d groups", s.nwarps, w ? w->ngroups : -1);
  tu_check(s.nwarps == 2 && s.warps[1].ngroups == 1 && s.warps[1].group[0].mask == 0xffffffffu,
           "a warp that has not run yet is all at its first line", "%d warps", s.nwarps);
  reference(want);
  tu_check(!memcmp(a, want, sizeof want), "the debugged launch's results are the kernel's", NULL);
  sim_free(dev, a);
}

/* ---- Ctrl-C while running, and a step off the end of a warp ---- */

static int interrupted(script *s, sim_debug *d, const sim_debug_stop *st) {
  (void)st;
  if (s->stops == 0) {
    s->flag = 1; /* as if Ctrl-C came while the kernel runs on */
  } else if (s->stops == 1) {
    s->rc[0] = s->flag;
    s->rc[1] = sim_debug_break(d, 13, 0, s->err[1], sizeof s->err[1]);
  } else if (s->stops == 2) {
    sim_debug_delete(d, s->rc[1]);
    sim_debug_resume(d, 1);
  }
  return 0;
}

static void check_interrupt_and_exit(sim_device *dev, sim_kernel *k) {
  script s = {.on_stop = interrupted, .want_block = -1};
  int *a = sim_malloc(dev, N * sizeof *a, "i32[128]", s.err[7], sizeof s.err[7]), want[N];
  char err[1024];
  int rc = run(dev, k, &s, a, err, sizeof err);
  tu_check(rc == 0 && s.stops == 4 && s.seen[1].reason == SIM_DBG_INTERRUPT && s.rc[0] == 0,
           "Ctrl-C stops the launch at the next instruction and is cleared", "rc %d, %d stops, "
           "reason %d, flag %d: %s", rc, s.stops, s.seen[1].reason, s.rc[0], err);
  const sim_debug_stop *st = &s.seen[3];
  tu_check(s.seen[2].reason == SIM_DBG_BREAK && s.seen[2].thread == 0 &&
           st->reason == SIM_DBG_EXITED && st->block == 0 && st->thread == 32,
           "a step past the end of the warp in focus moves the focus to the warp that runs next",
           "reason %d block %lld thread %d", st->reason, st->block, st->thread);
  reference(want);
  tu_check(!memcmp(a, want, sizeof want), "and the results are still the kernel's", NULL);
  sim_free(dev, a);
}

/* ---- quit half-way ---- */

static int quit_in_block_1(script *s, sim_debug *d, const sim_debug_stop *st) {
  if (s->stops == 0) {
    s->rc[0] = sim_debug_break(d, 11, 1, s->err[0], sizeof s->err[0]);
    return 0;
  }
  s->seen[1] = *st;
  return -1;
}

static void check_quit(sim_device *dev, sim_kernel *k) {
  script s = {.on_stop = quit_in_block_1, .want_block = 1};
  int *a = sim_malloc(dev, N * sizeof *a, "i32[128]", s.err[7], sizeof s.err[7]), want[N];
  char err[1024];
  int rc = run(dev, k, &s, a, err, sizeof err);
  tu_check(rc < 0 && strstr(err, "abandoned in the debugger") && s.seen[1].block == 1 &&
           s.seen[1].blocks_done == 1,
           "quitting at a stop in block 1 abandons the launch, and says so", "rc %d: %s", rc, err);
  reference(want);
  int kept = !memcmp(a, want, 64 * sizeof *a), untouched = 1;
  for (int i = 64; i < N; i++) untouched &= a[i] == i + 1;
  tu_check(kept && untouched, "memory keeps what block 0 wrote, and block 1 wrote nothing",
           "block 0 %s, block 1 %s", kept ? "kept" : "lost", untouched ? "untouched" : "written");
  sim_free(dev, a);
}

/* ---- blocks in reverse order ---- */

static int reversed(script *s, sim_debug *d, const sim_debug_stop *st) {
  (void)st;
  if (s->stops == 0) {
    s->rc[0] = sim_debug_focus(d, (sim_dim3){0, 0, 0}, (sim_dim3){0, 0, 0}, s->err[0],
                               sizeof s->err[0]);
    s->rc[1] = sim_debug_break(d, 6, 1, s->err[1], sizeof s->err[1]);
  } else if (s->stops == 1) {
    s->rc[2] = sim_debug_focus(d, (sim_dim3){1, 0, 0}, (sim_dim3){0, 0, 0}, s->err[2],
                               sizeof s->err[2]);
    sim_debug_delete(d, s->rc[1]);
  }
  return 0;
}

static void check_reverse(sim_device *dev, sim_kernel *k) {
  script s = {.on_stop = reversed, .want_block = 0, .order = SIM_ORDER_REVERSE};
  int *a = sim_malloc(dev, N * sizeof *a, "i32[128]", s.err[7], sizeof s.err[7]), want[N];
  char err[1024];
  int rc = run(dev, k, &s, a, err, sizeof err);
  tu_check(rc == 0 && s.stops == 2 && s.seen[0].block == 1 && s.seen[1].block == 0 &&
           s.rc[0] < 0 && strstr(s.err[0], "block (0,0,0) is not in flight: it has not started") &&
           s.rc[2] < 0 && strstr(s.err[2], "block (1,0,0) is not in flight: it has finished"),
           "blocks in reverse order: block 1 runs first, then block 0; focus says which is which",
           "rc %d, %d stops, blocks %lld then %lld; '%s', '%s': %s", rc, s.stops,
           s.seen[0].block, s.seen[1].block, s.err[0], s.err[2], err);
  reference(want);
  tu_check(!memcmp(a, want, sizeof want), "and the results are the kernel's", NULL);
  sim_free(dev, a);
}

/* ---- the lines a step stops at: onto a return, and out of a device function ---- */

static const char SRC_RET[] =
    "__device__ int twice(int v)\n"                  /* 1 */
    "{\n"                                            /* 2 */
    "  int r = v * 2;\n"                             /* 3 */
    "  return r;\n"                                  /* 4 */
    "}\n"                                            /* 5 */
    "__global__ void ret(int *out)\n"                /* 6 */
    "{\n"                                            /* 7 */
    "  int t = threadIdx.x;\n"                       /* 8 */
    "  if (t & 1) {\n"                               /* 9 */
    "    out[t] = twice(t);\n"                       /* 10 */
    "    return;\n"                                  /* 11 */
    "  }\n"                                          /* 12 */
    "  out[t] = t + 100;\n"                          /* 13 */
    "}\n";                                           /* 14 */

/* What the stops of a `next` from a breakpoint at `line` showed. */
typedef struct nexts {
  int line, steps, n;
  sim_debug_stop seen[8];
} nexts;

static int next_stop(sim_debug *d, void *ud) {
  nexts *s = ud;
  sim_debug_stop st;
  sim_debug_where(d, &st);
  char err[256];
  if (st.reason == SIM_DBG_START) {
    sim_debug_break(d, s->line, 0, err, sizeof err);
    return 0;
  }
  if (s->n < 8) s->seen[s->n] = st;
  if (s->n++ >= s->steps) return -1;
  if (st.reason == SIM_DBG_BREAK) sim_debug_delete(d, st.bp);
  sim_debug_resume(d, SIM_DBG_NEXT);
  return 0;
}

static void run_nexts(sim_device *dev, sim_kernel *k, nexts *s) {
  char err[1024];
  int *out = sim_malloc(dev, 32 * sizeof *out, "i32[32]", err, sizeof err);
  sim_debug_hooks h = {next_stop, NULL, s, NULL, NULL};
  sim_debug *d = sim_debug_new(k, &h);
  void *args[] = {&out};
  sim_launch_opts o = {0};
  o.debug = d;
  sim_dim3 g1 = {1, 1, 1}, b32 = {32, 1, 1};
  sim_launch(dev, k, g1, b32, 0, args, &o, NULL, err, sizeof err);
  sim_debug_free(d);
  sim_free(dev, out);
}

static void check_return_lines(sim_device *dev, sim_module *m) {
  sim_kernel *k = tu_kernel(m, "ret");
  nexts s = {.line = 10, .steps = 1};
  run_nexts(dev, k, &s);
  const sim_debug_stop *st = &s.seen[1];
  tu_check(s.n == 2 && st->line == 11 && st->focus_line == 11,
           "a step onto `return;` stops at its line, where the thread in focus is",
           "%d stops; line %d, focus at line %d", s.n, st->line, st->focus_line);
  nexts f = {.line = 3, .steps = 3};
  run_nexts(dev, k, &f);
  int got[3] = {f.seen[1].line, f.seen[2].line, f.seen[3].line};
  tu_check(f.n == 4 && got[0] == 4 && got[1] == 10 && got[2] == 11,
           "next from a function's last line returns to the caller's line, stopping once there",
           "lines %d %d %d (want 4 10 11)", got[0], got[1], got[2]);
}

int main(void) {
  tu_plan(23);
  sim_device *dev = sim_device_new(NULL);
  char *ptx = tu_ptx_debug(SRC);
  char err[1024];
  sim_module *m = ptx ? sim_module_load(ptx, strlen(ptx), err, sizeof err) : NULL;
  if (!tu_check(m != NULL, "the kernel compiles with -G and loads", "%s", ptx ? err : "NVRTC"))
    return 1;
  free(ptx);
  sim_kernel *k = tu_kernel(m, "split");
  check_divergence(dev, k);
  check_interrupt_and_exit(dev, k);
  check_quit(dev, k);
  check_reverse(dev, k);
  sim_module_free(m);
  ptx = tu_ptx_debug(SRC_RET);
  m = ptx ? sim_module_load(ptx, strlen(ptx), err, sizeof err) : NULL;
  free(ptx);
  if (tu_check(m != NULL, "a kernel with a device function and a return loads", "%s", err))
    check_return_lines(dev, m);
  sim_module_free(m);
  sim_device_free(dev);
  return tu_failures() != 0;
}
