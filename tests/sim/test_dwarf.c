/* test_dwarf.c: the DWARF reader (sim/ptx_dwarf.c) on PTX that NVRTC writes with -G: parameters,
 * variables in nested lexical blocks (one hiding another of the same name), a location list, a
 * local array, a device function's own variables and the C types; then the same names read
 * through the debugger in a paused launch, per thread, where each one is in scope; and debug
 * information it cannot read, which must never stop a module from loading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"
#include "sim_int.h"

/* Line numbers matter: the debugger's half stops at line 13 and line 17. */
static const char SRC[] =
    "__device__ int sq(int v) { int y = v * v; return y; }\n"            /* 1 */
    "__global__ void nest(int *out, int n, float f)\n"                   /* 2 */
    "{\n"                                                                /* 3 */
    "  int t = threadIdx.x;\n"                                           /* 4 */
    "  int x = t * 10;\n"                                                /* 5 */
    "  float g = f * t;\n"                                               /* 6 */
    "  int loc[4];\n"                                                    /* 7 */
    "  for (int k = 0; k < 4; k++) {\n"                                  /* 8 */
    "    int x = k + t;\n"                                               /* 9 */
    "    loc[k] = x;\n"                                                  /* 10 */
    "    {\n"                                                            /* 11 */
    "      int inner = x * 2;\n"                                         /* 12 */
    "      out[t * 4 + k] = inner + (int)g;\n"                           /* 13 */
    "    }\n"                                                            /* 14 */
    "  }\n"                                                              /* 15 */
    "  char c = 'a' + t; unsigned u = 7u * t; double dd = 0.5 * t;\n"    /* 16 */
    "  if (t < n) out[t * 4] += x + loc[3] + c + u + (int)dd + sq(t);\n" /* 17 */
    "}\n";

static const sim_dbginfo *dbg;

/* The variable name declared at depth (-1: any), or NULL. */
static const sim_dvar *var(const char *name, int depth) {
  for (int i = 0; dbg && i < dbg->nvars; i++)
    if (!strcmp(dbg->vars[i].name, name) && (depth < 0 || dbg->vars[i].depth == depth))
      return &dbg->vars[i];
  return NULL;
}

static const sim_dloc *first_place(const sim_dvar *v) {
  return v && v->nloc ? &dbg->locs[v->loc] : NULL;
}

static void check_parse(const sim_module *m) {
  const sim_dvar *out = var("out", -1), *n = var("n", -1), *f = var("f", -1);
  tu_check(out && n && f && out->param && n->param && f->param && !strcmp(out->type, "int *") &&
           out->enc == SIM_DV_POINTER && !strcmp(n->type, "int") && n->enc == SIM_DV_SIGNED &&
           !strcmp(f->type, "float") && f->enc == SIM_DV_FLOAT,
           "parameters: names, C types and how they read",
           "out %s, n %s, f %s", out ? out->type : "-", n ? n->type : "-", f ? f->type : "-");
  const sim_dvar *t = var("t", -1);
  const sim_dloc *lt = first_place(t);
  tu_check(lt && lt->kind == SIM_DL_ROW && lt->where >= SIM_SR_COUNT && lt->where < m->nuser,
           "a variable in a register has that register's row", "place %d at %lld",
           lt ? lt->kind : -1, lt ? (long long)lt->where : -1);
  const sim_dvar *loc = var("loc", -1);
  const sim_dloc *ll = first_place(loc);
  tu_check(loc && !strcmp(loc->type, "int[4]") && loc->count == 4 && loc->size == 4 && ll &&
           ll->kind == SIM_DL_LOCAL && (size_t)ll->where + 16 <= m->local_frame,
           "a local array lives in the thread's local frame, with its length",
           "type %s count %d place %d", loc ? loc->type : "-", loc ? loc->count : 0,
           ll ? ll->kind : -1);
  const sim_dvar *k = var("k", -1);
  int ranged = k && k->nloc > 1;
  for (int i = 0; ranged && i < k->nloc; i++)
    ranged = dbg->locs[k->loc + i].lo >= 0 && dbg->locs[k->loc + i].hi > dbg->locs[k->loc + i].lo;
  tu_check(ranged, "a location list gives a place per range of instructions", "k has %d places",
           k ? k->nloc : -1);
  const sim_dvar *xo = var("x", -1), *xi = NULL, *inner = var("inner", -1);
  for (int i = 0; dbg && i < dbg->nvars; i++)
    if (!strcmp(dbg->vars[i].name, "x") && dbg->vars[i].depth > xo->depth) xi = &dbg->vars[i];
  tu_check(xo && xi && inner && k && inner->depth > xi->depth && xi->depth > k->depth - 1 &&
           inner->lo >= xi->lo && inner->hi <= xi->hi && xi->lo >= k->lo && xi->hi <= k->hi &&
           k->lo >= xo->lo && k->hi <= xo->hi,
           "lexical blocks nest: the loop's x inside k's scope, inner inside that",
           "x %d..%d, inner %d..%d", xi ? xi->lo : -1, xi ? xi->hi : -1, inner ? inner->lo : -1,
           inner ? inner->hi : -1);
  const sim_dvar *c = var("c", -1), *u = var("u", -1), *dd = var("dd", -1);
  tu_check(c && u && dd && c->enc == SIM_DV_CHAR && c->size == 1 && u->enc == SIM_DV_UNSIGNED &&
           !strcmp(u->type, "unsigned int") && dd->enc == SIM_DV_FLOAT && dd->size == 8,
           "char, unsigned int and double read as such", "c %s u %s dd %s", c ? c->type : "-",
           u ? u->type : "-", dd ? dd->type : "-");
  const sim_dvar *y = var("y", -1), *v = var("v", -1);
  tu_check(y && v && v->param && y->func == v->func && y->func != t->func &&
           m->funcs[y->func].first <= y->lo && y->hi <= m->funcs[y->func].end,
           "a device function's variables are its own", "y in %d, t in %d", y ? y->func : -1,
           t ? t->func : -1);
}

/* ---- the same names in a paused launch ---- */

typedef struct seen {
  int stops, cond_calls;
  long long t, k, x, inner, n, xo0, xo5;
  float g;
  int loc[3], names;
  uint64_t out;
  char nosuch[256], outside[256];
} seen;

static long long read_int(sim_debug *d, long long b, int tid, const char *name) {
  sim_debug_value v;
  char err[256];
  if (sim_debug_read(d, b, tid, name, &v, err, sizeof err) < 0) return -999;
  return v.enc == SIM_DV_SIGNED ? (long long)(int32_t)v.bits[0] : (long long)v.bits[0];
}

/* The breakpoint at line 13 holds for t == 5 and k == 2 only. */
static uint32_t cond(sim_debug *d, int bp, long long block, int warp, uint32_t lanes, void *ud) {
  (void)bp;
  ((seen *)ud)->cond_calls++;
  uint32_t hold = 0;
  for (int l = 0; l < 32; l++)
    if ((lanes >> l & 1) && read_int(d, block, warp * 32 + l, "t") == 5 &&
        read_int(d, block, warp * 32 + l, "k") == 2)
      hold |= 1u << l;
  return hold;
}

static int on_stop(sim_debug *d, void *ud) {
  seen *s = ud;
  sim_debug_stop st;
  sim_debug_where(d, &st);
  char err[256];
  s->stops++;
  if (st.reason == SIM_DBG_START) {
    sim_debug_break(d, 13, 1, err, sizeof err);
    return 0;
  }
  if (st.reason == SIM_DBG_BREAK && st.line == 13) {
    sim_debug_value v;
    s->t = read_int(d, st.block, st.thread, "t");
    s->k = read_int(d, st.block, st.thread, "k");
    s->x = read_int(d, st.block, st.thread, "x");
    s->inner = read_int(d, st.block, st.thread, "inner");
    s->n = read_int(d, st.block, st.thread, "n");
    if (sim_debug_read(d, st.block, st.thread, "g", &v, err, sizeof err) == 0)
      memcpy(&s->g, &v.bits[0], 4);
    if (sim_debug_read(d, st.block, st.thread, "out", &v, err, sizeof err) == 0) s->out = v.bits[0];
    if (sim_debug_read(d, st.block, st.thread, "loc", &v, err, sizeof err) == 0 && v.shown == 4)
      for (int i = 0; i < 3; i++) s->loc[i] = (int)v.bits[i];
    const char *names[32];
    s->names = sim_debug_names(d, st.block, st.thread, names, 32);
    sim_debug_read(d, st.block, st.thread, "nosuch", &v, s->nosuch, sizeof s->nosuch);
    sim_debug_delete(d, st.bp);
    sim_debug_break(d, 17, 0, err, sizeof err);
    return 0;
  }
  if (st.reason == SIM_DBG_BREAK && st.line == 17 && s->xo0 == 0) {
    sim_debug_value v;
    s->xo0 = read_int(d, st.block, 0, "x") + 1000; /* + 1000: 0 is a value, not "unset" */
    s->xo5 = read_int(d, st.block, 5, "x");
    sim_debug_read(d, st.block, 5, "k", &v, s->outside, sizeof s->outside);
    sim_debug_delete(d, st.bp);
  }
  return 0;
}

static void check_paused(sim_device *dev, sim_module *m) {
  sim_kernel *k = tu_kernel(m, "nest");
  seen s = {0};
  sim_debug_hooks h = {on_stop, cond, &s, NULL, NULL};
  sim_debug *d = sim_debug_new(k, &h);
  char err[2048];
  int *out = sim_malloc(dev, 64 * 4 * sizeof *out, "i32[256]", err, sizeof err);
  int n = 64;
  float f = 1.5f;
  void *args[] = {&out, &n, &f};
  sim_launch_opts o = {0};
  o.debug = d;
  sim_dim3 g1 = {1, 1, 1}, b64 = {64, 1, 1};
  int rc = sim_launch(dev, k, g1, b64, 0, args, &o, NULL, err, sizeof err);
  tu_check(rc == 0 && s.stops == 3, "a launch stops at its start and at two breakpoints",
           "rc %d, %d stops: %s", rc, s.stops, err);
  tu_check(s.cond_calls > 0 && s.t == 5 && s.k == 2,
           "a condition over variables picks the thread and the iteration",
           "stopped at t %lld k %lld", s.t, s.k);
  tu_check(s.x == 7 && s.inner == 14 && s.n == 64 && s.g == 7.5f && s.out == (uint64_t)out,
           "values by name: the loop's own x, inner, a parameter, a float, a pointer",
           "x %lld inner %lld n %lld g %g", s.x, s.inner, s.n, (double)s.g);
  tu_check(s.loc[0] == 5 && s.loc[1] == 6 && s.loc[2] == 7,
           "a local array reads element by element", "loc %d %d %d", s.loc[0], s.loc[1], s.loc[2]);
  tu_check(s.names >= 9, "the names in scope include the parameters and every enclosing block's",
           "%d names", s.names);
  tu_check(strstr(s.nosuch, "no variable 'nosuch' at line 13") != NULL,
           "an unknown name is named, with the line", "said '%s'", s.nosuch);
  tu_check(s.xo0 == 1000 && s.xo5 == 50, "after the loop, x is the outer one again, per thread",
           "thread 0 x %lld, thread 5 x %lld", s.xo0 - 1000, s.xo5);
  tu_check(strstr(s.outside, "no variable 'k' at line 17") != NULL,
           "a loop variable is out of scope after its loop", "said '%s'", s.outside);
  int ok = 1;
  for (int t = 0; t < 64 && ok; t++)
    for (int kk = 0; kk < 4 && ok; kk++) {
      int want = (kk + t) * 2 + (int)(1.5f * (float)t);
      if (kk == 0)
        want += t * 10 + (3 + t) + (signed char)('a' + t) + 7 * t + (int)(0.5 * t) + t * t;
      ok = out[t * 4 + kk] == want;
      if (!ok)
        tu_check(0, "the debugged launch computes what the kernel says", "out[%d] = %d, want %d",
                 t * 4 + kk, out[t * 4 + kk], want);
    }
  if (ok) tu_check(1, "the debugged launch computes what the kernel says", NULL);
  sim_debug_free(d);
  sim_free(dev, out);
}

/* ---- arrays of two dimensions and structures in local memory ---- */

static const char SRC2[] =
    "__global__ void grid(int *o)\n"                                     /* 1 */
    "{\n"                                                                /* 2 */
    "  int m[4][5];\n"                                                   /* 3 */
    "  float4 q = make_float4(1, 2, 3, threadIdx.x);\n"                   /* 4 */
    "  for (int k = 0; k < 20; k++) m[k / 5][k % 5] = k;\n"               /* 5 */
    "  o[threadIdx.x] = m[3][4] + (int)q.w;\n"                            /* 6 */
    "}\n";

/* What the stop at line 6 read of m and q. */
typedef struct layout_seen {
  int rc_m, rc_q, shown_q, m34;
  uint64_t addr_m, addr_q;
  float qw;
  char err[256];
} layout_seen;

static int layout_stop(sim_debug *d, void *ud) {
  layout_seen *s = ud;
  sim_debug_stop st;
  sim_debug_where(d, &st);
  char err[256];
  if (st.reason == SIM_DBG_START) {
    sim_debug_break(d, 6, 0, err, sizeof err);
    return 0;
  }
  sim_debug_value v;
  s->rc_m = sim_debug_read(d, st.block, 3, "m", &v, s->err, sizeof s->err);
  s->addr_m = v.addr;
  if (s->rc_m == 0) sim_debug_mem(d, st.block, 3, v.addr + 19 * 4, &s->m34, 4, err, sizeof err);
  s->rc_q = sim_debug_read(d, st.block, 3, "q", &v, s->err, sizeof s->err);
  s->addr_q = v.addr;
  s->shown_q = v.shown;
  if (s->rc_q == 0) sim_debug_mem(d, st.block, 3, v.addr + 12, &s->qw, 4, err, sizeof err);
  return -1; /* that is all */
}

static void check_layout(sim_device *dev) {
  char *ptx = tu_ptx_debug(SRC2);
  char err[1024];
  sim_module *m = ptx ? sim_module_load(ptx, strlen(ptx), err, sizeof err) : NULL;
  const sim_dvar *mv = NULL;
  for (int i = 0; m && m->debug && i < m->debug->nvars; i++)
    if (!strcmp(m->debug->vars[i].name, "m")) mv = &m->debug->vars[i];
  tu_check(mv && !strcmp(mv->type, "int[4][5]") && mv->count == 20 && mv->size == 4,
           "an array of two dimensions is spelled with both, and counts all its elements",
           "type %s count %d", mv ? mv->type : "-", mv ? mv->count : 0);
  layout_seen s = {0};
  sim_debug_hooks h = {layout_stop, NULL, &s, NULL, NULL};
  sim_kernel *k = m ? tu_kernel(m, "grid") : NULL;
  sim_debug *d = k ? sim_debug_new(k, &h) : NULL;
  int *o = sim_malloc(dev, 32 * sizeof *o, "i32[32]", err, sizeof err);
  void *args[] = {&o};
  sim_launch_opts opt = {0};
  opt.debug = d;
  sim_dim3 g1 = {1, 1, 1}, b32 = {32, 1, 1};
  if (d) sim_launch(dev, k, g1, b32, 0, args, &opt, NULL, err, sizeof err);
  tu_check(s.rc_m == 0 && s.addr_m - SIM_LOCAL_WIN < SIM_WIN_SIZE && s.m34 == 19,
           "a local array has its address in the thread's local memory, all of it readable",
           "rc %d addr 0x%llx m[3][4] %d: %s", s.rc_m, (unsigned long long)s.addr_m, s.m34, s.err);
  tu_check(s.rc_q == 0 && s.shown_q == 0 && s.addr_q - SIM_LOCAL_WIN < SIM_WIN_SIZE &&
           s.qw == 3.0f, "a local structure of 16 bytes is read through its address",
           "rc %d shown %d q.w %g: %s", s.rc_q, s.shown_q, (double)s.qw, s.err);
  sim_debug_free(d);
  sim_free(dev, o);
  sim_module_free(m);
  free(ptx);
}

/* ---- debug information it cannot read ---- */

/* ptx with the first occurrence of `from` replaced by `to`. */
static char *edit(const char *ptx, const char *from, const char *to) {
  const char *at = strstr(ptx, from);
  if (!at) return NULL;
  size_t n = strlen(ptx) - strlen(from) + strlen(to);
  char *out = malloc(n + 1);
  size_t k = (size_t)(at - ptx);
  memcpy(out, ptx, k);
  strcpy(out + k, to);
  strcat(out, at + strlen(from));
  return out;
}

static void check_unreadable(const char *ptx) {
  char err[1024];
  /* the unit's version (the two bytes after its length) becomes 9 */
  const char *info = strstr(ptx, ".section\t.debug_info");
  char *bad = NULL;
  if (info) {
    const char *two = strstr(info, "\n.b8 2\n");
    if (two) {
      bad = strdup(ptx);
      bad[two - ptx + 5] = '9';
    }
  }
  sim_module *m = bad ? sim_module_load(bad, strlen(bad), err, sizeof err) : NULL;
  tu_check(m && m->debug && m->debug->nvars == 0 && strstr(m->debug->why, "DWARF version"),
           "DWARF of an unknown version: the module loads, without names, and says why", "%s",
           m ? (m->debug ? m->debug->why : "no debug info") : err);
  sim_module_free(m);
  free(bad);
  /* the abbreviations cut away: nothing to read the DIEs by */
  char *cut = edit(ptx, ".section\t.debug_abbrev", ".section\t.debug_nothing");
  m = cut ? sim_module_load(cut, strlen(cut), err, sizeof err) : NULL;
  tu_check(m && m->debug && m->debug->nvars == 0 && m->debug->why[0],
           "no abbreviations: the module loads, without names", "%s", m ? "no reason" : err);
  sim_module_free(m);
  free(cut);
  /* a DW_OP_regx naming %q1, which no function declares, in place of %r1 (ULEB 177 228 149 1):
   * that variable has no place, and the others keep theirs */
  char *reg = edit(ptx, ".b8 144\n.b8 177\n.b8 228\n.b8 149\n.b8 1\n",
                   ".b8 144\n.b8 177\n.b8 226\n.b8 149\n.b8 1\n");
  m = reg ? sim_module_load(reg, strlen(reg), err, sizeof err) : NULL;
  int placeless = 0, placed = 0;
  for (int i = 0; m && m->debug && i < m->debug->nvars; i++) {
    placeless += m->debug->vars[i].nloc == 0;
    placed += m->debug->vars[i].nloc > 0;
  }
  tu_check(m && placeless == 1 && placed >= 13, "a register it cannot find leaves that variable "
           "without a place, not the module without names", "%s",
           !reg ? "no %r1 in the DWARF" : m ? "placed as before" : err);
  sim_module_free(m);
  free(reg);
}

int main(void) {
  tu_plan(24);
  sim_device *dev = sim_device_new(NULL);
  char *ptx = tu_ptx_debug(SRC);
  char err[1024];
  sim_module *m = ptx ? sim_module_load(ptx, strlen(ptx), err, sizeof err) : NULL;
  tu_check(m && m->debug && m->debug->nvars >= 14 && !m->debug->why[0],
           "a -G module has its variables by name", "%s",
           !ptx ? "NVRTC failed" : !m ? err : m->debug ? m->debug->why : "no debug information");
  if (!m) return 1;
  dbg = m->debug;
  check_parse(m);
  sim_module *plain = tu_module("a -lineinfo module loads", SRC);
  tu_check(plain && !plain->debug, "a module without -G has no debug information, at no cost",
           NULL);
  sim_module_free(plain);
  check_paused(dev, m);
  check_unreadable(ptx);
  check_layout(dev);
  sim_module_free(m);
  free(ptx);
  sim_device_free(dev);
  return tu_failures() != 0;
}
