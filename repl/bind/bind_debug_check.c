/* bind_debug_check.c: after a debugged launch completes, whether an ordinary launch of the same
 * kernel (the plain build, without -G) gives the same results, and a note when it does not.
 *
 * A learner debugs the -G build, which keeps every variable where the source puts it; code whose
 * result depends on how the compiler arranges it (a warp-synchronous reduction without volatile
 * or __syncwarp(), a race, an uninitialised variable) can then work under the debugger and fail
 * without it, and the debugger would be showing the wrong program. So the arrays the launch is
 * given are copied before it; once it has completed, its results are kept aside, the copies put
 * back, the plain build launched on them, and the two results compared; the arrays then hold the
 * debugged launch's results again, which is what the learner looked at. The module's variables
 * go the same way (bind_debug_vars.c). The plain launch is one aside (launch_aside): a watch, the
 * counters and the modelled clock show the debugged launch alone, as if it were the only one.
 *
 * Costs: a host copy of each array three times over and one plain launch, which is quick beside
 * a debugged one. Above CHECK_MAX bytes of arrays the check is left out (and the note says
 * nothing). On the simulator only: a GPU's plain launch may differ from the simulator's in
 * rounding for reasons that have nothing to do with the bug. A kernel that calls printf is left
 * out too, since its plain launch would print everything a second time. Floats compare with a
 * tolerance of rounding (the -G build does not contract a * b + c into an fma). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "buffer.h"
#include "dtype.h"
#include "runtime.h"

#define CHECK_MAX ((size_t)64 << 20) /* bytes of arrays, all together */
#define CHECK_MT "cudalab.DebugCheck"
#define CHECK_ARRAYS 32

typedef struct snap {
  cl_buf *b;                 /* the array (kept alive by the launch's arguments on the stack) */
  int param;                 /* the parameter it was passed as, 0-based */
  unsigned char *before;     /* its bytes before the launch */
  unsigned char *debugged;   /* and after the debugged launch */
} snap;

typedef struct check {
  int n;
  snap s[CHECK_ARRAYS];
} check;

static void check_release(check *c) {
  for (int i = 0; i < c->n; i++) {
    free(c->s[i].before);
    free(c->s[i].debugged);
    c->s[i].before = c->s[i].debugged = NULL;
  }
  c->n = 0;
}

static int check_gc(lua_State *L) {
  check_release(luaL_checkudata(L, 1, CHECK_MT));
  return 0;
}

static size_t bytes_of(const cl_buf *b) { return b->n * dtype_table[b->dtype].size; }

void bind_debug_check_begin(lua_State *L, int first, int n, const char *source) {
  check *c = lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  if (luaL_newmetatable(L, CHECK_MT)) {
    lua_pushcfunction(L, check_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  if (source && strstr(source, "printf")) return;
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    cl_buf *b = buf_test(L, first + i);
    if (!b || b->where != BUF_DEVICE || !b->ptr || !b->backend || !b->backend->sim) continue;
    int k = 0;
    while (k < c->n && c->s[k].b->ptr != b->ptr) k++;
    if (k < c->n) continue; /* passed twice: one array */
    total += bytes_of(b);
    if (c->n == CHECK_ARRAYS || total > CHECK_MAX) {
      check_release(c); /* too much to copy: no check */
      return;
    }
    snap *s = &c->s[c->n++];
    s->b = b;
    s->param = i;
    s->before = malloc(bytes_of(b) ? bytes_of(b) : 1);
    cl_err err;
    if (!s->before || b->backend->dtoh(s->before, b->ptr, bytes_of(b), &err) != 0) {
      check_release(c);
      return;
    }
  }
}

/* The first element where a and b differ beyond rounding, or -1; *count gets how many do. */
static long long first_difference(cl_dtype t, const void *a, const void *b, size_t n,
                                  size_t *count) {
  long long first = -1;
  *count = 0;
  const cl_dtype_info *d = &dtype_table[t];
  for (size_t i = 0; i < n; i++) {
    int differ;
    if (d->is_float) {
      double x = dtype_get_f(t, a, i), y = dtype_get_f(t, b, i);
      double tol = (d->size >= 8 ? 1e-12 : d->size == 4 ? 1e-5 : 1e-2) *
                   (fabs(x) > fabs(y) ? fabs(x) : fabs(y));
      differ = isnan(x) != isnan(y) || (!isnan(x) && fabs(x - y) > tol);
    } else {
      differ = dtype_get_i(t, a, i) != dtype_get_i(t, b, i);
    }
    if (differ && first < 0) first = (long long)i;
    *count += differ;
  }
  return first;
}

static void value_text(cl_dtype t, const void *base, size_t i, char *buf, size_t len) {
  if (dtype_table[t].is_float)
    snprintf(buf, len, "%.*g", dtype_table[t].digits, dtype_get_f(t, base, i));
  else if (dtype_table[t].kind == DK_UINT)
    snprintf(buf, len, "%llu", (unsigned long long)dtype_get_i(t, base, i));
  else
    snprintf(buf, len, "%lld", (long long)dtype_get_i(t, base, i));
}

void bind_debug_check_end(lua_State *L, int idx, const bind_launch_target *tg,
                          const char *const *names, int nnames, int vars) {
  check *c = luaL_checkudata(L, idx, CHECK_MT);
  const cl_backend *be = tg->backend;
  if (c->n == 0 || !be->sim || !be->sim->options || !be->sim->launch_aside) return;
  cl_err err;
  for (int i = 0; i < c->n; i++) { /* keep the debugged results, put the inputs back */
    snap *s = &c->s[i];
    size_t bytes = bytes_of(s->b);
    s->debugged = malloc(bytes ? bytes : 1);
    if (!s->debugged || s->b->backend->dtoh(s->debugged, s->b->ptr, bytes, &err) != 0 ||
        s->b->backend->htod(s->b->ptr, s->before, bytes, &err) != 0)
      goto restore;
  }
  cl_sim_opts saved, quiet;
  be->sim->options(&saved);
  quiet = saved;
  quiet.race_check = CL_RACE_OFF; /* the debugged launch has told of a race already */
  be->sim->set_options(&quiet);
  /* aside: the learner's watches, counters and modelled clock see the debugged launch only */
  bind_debug_vars_inputs(L, vars);
  int rc = be->sim->launch_aside(tg->fn, tg->grid, tg->block, tg->shared, tg->args,
                                 tg->cooperative, &err);
  bind_debug_vars_results(L, vars);
  be->sim->set_options(&saved);
  if (rc != 0) {
    printf("Note: an ordinary launch of the kernel (without -G) on the same inputs fails, where "
           "the debugged one completed:\n  %s\n", err.text);
    goto restore;
  }
  for (int i = 0; i < c->n; i++) {
    snap *s = &c->s[i];
    size_t bytes = bytes_of(s->b), count;
    if (s->b->backend->dtoh(s->before, s->b->ptr, bytes, &err) != 0) goto restore;
    long long at = first_difference(s->b->dtype, s->debugged, s->before, s->b->n, &count);
    if (at < 0) continue;
    char dbg[64], plain[64], param[80];
    value_text(s->b->dtype, s->debugged, (size_t)at, dbg, sizeof dbg);
    value_text(s->b->dtype, s->before, (size_t)at, plain, sizeof plain);
    if (s->param < nnames && names[s->param] && names[s->param][0])
      snprintf(param, sizeof param, "%s", names[s->param]);
    else
      snprintf(param, sizeof param, "parameter %d", s->param);
    printf("Note: an ordinary launch (without -G) gives other results: %s[%lld] is %s there, "
           "%s under the debugger (%zu of %zu elements differ). Code whose result depends on "
           "how the compiler arranges it differs so: a warp-synchronous reduction without "
           "volatile or __syncwarp(), a race, an uninitialised variable (cuda.sanitize{init = "
           "true} names the line that reads one). The arrays keep the debugged launch's "
           "results.\n", param, at, plain, dbg, count, s->b->n);
    break;
  }
restore:
  for (int i = 0; i < c->n; i++) {
    snap *s = &c->s[i];
    if (s->debugged) s->b->backend->htod(s->b->ptr, s->debugged, bytes_of(s->b), &err);
  }
  check_release(c);
}
