/* bind_compare.c: cuda.compare(x, y, {rtol, atol}) -> ok, report: are two results the same
 * within a tolerance? x and y may be device arrays, host buffers or Lua tables, in any pair.
 *
 * The verdict comes first, as a boolean, and the report (a CompareResult that prints itself)
 * second, so that assert(cuda.compare(x, y)) fails on a mismatch with the report as its
 * message: a script's check must be able to fail. A single table that is always true was the
 * trap this shape replaced: assert passed whatever the table said.
 *
 * An element matches when |x - y| <= atol + rtol * |y| (numpy's allclose rule, y the reference).
 * A NaN never matches, not even another NaN: a NaN in a result is what a learner must see.
 * Both sides are read in blocks through one staging area, so comparing two 1 GiB arrays needs
 * a few MiB of host memory, not 2 GiB.
 *
 * Reading a table runs its metamethods (and allocation may run finalizers): Lua code that may
 * free an array on either side. As in bind_array.c, no pointer into an array is held across
 * that: an array is read only through buf_read, after a check that it is still live, and both
 * sides are checked again after every block, so a free is reported whatever the sizes. */
#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "buffer.h"
#include "builtin.h"
#include "bindings.h"
#include "runtime.h"

#define BLOCK 65536 /* elements per side read at a time */
#define FIRST 5     /* mismatching indices reported */

typedef struct side {
  int idx;          /* stack index of the value */
  cl_buf *buf;      /* NULL for a Lua table */
  int as;           /* a table's: the dtype of the array it is compared with, or -1 */
  size_t n;
  void *raw;        /* staging for one block of buf's dtype */
  double vals[BLOCK];
} side;

static void open_side(lua_State *L, int idx, side *s, const char *what) {
  s->idx = idx;
  s->buf = NULL;
  s->as = -1;
  if (lua_istable(L, idx)) {
    s->n = buf_table_len(L, idx);
    return;
  }
  s->buf = buf_check_live(L, idx, what);
  s->n = s->buf->n;
  s->raw = lua_newuserdatauv(L, BLOCK * sizeof(cl_element), 0); /* anchored until we return */
}

static void check_side(lua_State *L, const side *s) {
  if (s->buf) buf_check_unfreed(L, s->buf, "cuda.compare");
}

static void read_block(lua_State *L, side *s, size_t first, size_t cnt) {
  if (!s->buf) {
    for (size_t j = 0; j < cnt; j++) {
      lua_geti(L, s->idx, (lua_Integer)(first + j + 1));
      int ok = 0;
      s->vals[j] = lua_tonumberx(L, -1, &ok);
      if (ok && s->as >= 0 && lua_isinteger(L, -1))
        s->vals[j] = dtype_int_value((cl_dtype)s->as, lua_tointeger(L, -1));
      if (!ok) luaL_error(L, "compare: element %I of the table is %s, not a number",
                          (lua_Integer)(first + j + 1), luaL_typename(L, -1));
      lua_pop(L, 1);
    }
    return;
  }
  check_side(L, s);
  buf_read(L, s->buf, first, cnt, s->raw);
  for (size_t j = 0; j < cnt; j++) s->vals[j] = dtype_get_f(s->buf->dtype, s->raw, j);
}

typedef struct tally {
  double rtol, atol, max_abs, max_rel;
  size_t mismatches;
  size_t first[FIRST];
  double xf[FIRST], yf[FIRST];
} tally;

/* Reads elements first .. first + cnt - 1 of both sides. */
static void read_pair(lua_State *L, side *x, side *y, size_t first, size_t cnt) {
  read_block(L, x, first, cnt);
  read_block(L, y, first, cnt);
  check_side(L, x); /* y's table may have freed x, after x was read */
  check_side(L, y);
}

static void compare_block(tally *t, const double *x, const double *y, size_t base, size_t cnt) {
  for (size_t j = 0; j < cnt; j++) {
    double d = fabs(x[j] - y[j]);
    int same_inf = isinf(x[j]) && x[j] == y[j];
    if (same_inf) d = 0;
    int bad = isnan(d) || d > t->atol + t->rtol * fabs(y[j]);
    if (!isnan(d)) {
      if (d > t->max_abs) t->max_abs = d;
      if (y[j] != 0 && d / fabs(y[j]) > t->max_rel) t->max_rel = d / fabs(y[j]);
    }
    if (!bad) continue;
    if (t->mismatches < FIRST) {
      t->first[t->mismatches] = base + j;
      t->xf[t->mismatches] = x[j];
      t->yf[t->mismatches] = y[j];
    }
    t->mismatches++;
  }
}

/* Both sides device arrays of one dtype on the GPU: compare there, at device bandwidth. */
static int on_gpu_pair(const side *x, const side *y) {
  return x->buf && y->buf && x->buf->where == BUF_DEVICE && y->buf->where == BUF_DEVICE &&
         x->buf->dtype == y->buf->dtype && x->buf->backend == y->buf->backend &&
         x->buf->backend == &cl_backend_cuda;
}

/* rtol and atol: tolerances, so never negative. */
static double opt_tolerance(lua_State *L, int opts, const char *key, double dflt) {
  return bind_opt_number(L, opts, key, dflt, 1, "compare: %s must be a non-negative number");
}

static void push_result(lua_State *L, const tally *t, size_t n) {
  lua_createtable(L, 0, 10);
  lua_pushboolean(L, t->mismatches == 0);
  lua_setfield(L, -2, "ok");
  lua_pushinteger(L, (lua_Integer)n);
  lua_setfield(L, -2, "n");
  lua_pushnumber(L, t->max_abs);
  lua_setfield(L, -2, "max_abs");
  lua_pushnumber(L, t->max_rel);
  lua_setfield(L, -2, "max_rel");
  lua_pushinteger(L, (lua_Integer)t->mismatches);
  lua_setfield(L, -2, "mismatches");
  lua_pushnumber(L, t->rtol);
  lua_setfield(L, -2, "rtol");
  lua_pushnumber(L, t->atol);
  lua_setfield(L, -2, "atol");
  size_t k = t->mismatches < FIRST ? t->mismatches : FIRST;
  const char *names[3] = {"first", "x_first", "y_first"};
  for (int f = 0; f < 3; f++) {
    lua_createtable(L, (int)k, 0);
    for (size_t i = 0; i < k; i++) {
      if (f == 0) lua_pushinteger(L, (lua_Integer)t->first[i]);
      else lua_pushnumber(L, f == 1 ? t->xf[i] : t->yf[i]);
      lua_seti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, names[f]);
  }
  luaL_setmetatable(L, "cudalab.CompareResult");
}

/* A side of a type with a default tolerance of its own (a 16-bit float: about two roundings,
 * f16 keeps 11 significant bits, bf16 8; the values PyTorch's assert_close uses) loosens the
 * default to it: an f32 default would call every correct half-precision result wrong. The
 * looser side wins; explicit rtol and atol still win over both. */
static void default_tolerance(const side *s, double *rtol, double *atol) {
  if (!s->buf) return;
  double own = dtype_table[s->buf->dtype].rtol;
  if (own > *rtol) {
    *rtol = own;
    *atol = 1e-5;
  }
}

/* A table compared with an array reads its integers as that array's elements read: a u64
 * element above 2^63 - 1 reads into Lua as the negative integer with its bits, and a table of
 * such integers (a:tolist(), or Lua's own wrapping arithmetic) must match it. */
static void pair_sides(side *x, side *y) {
  if (!x->buf && y->buf) x->as = (int)y->buf->dtype;
  if (!y->buf && x->buf) y->as = (int)x->buf->dtype;
}

static int cuda_compare(lua_State *L) {
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  tally t;
  memset(&t, 0, sizeof t);
  side *x = lua_newuserdatauv(L, sizeof *x, 0), *y = lua_newuserdatauv(L, sizeof *y, 0);
  open_side(L, 1, x, "compare's first argument");
  open_side(L, 2, y, "compare's second argument");
  pair_sides(x, y);
  double rtol = 1e-5, atol = 1e-8;
  default_tolerance(x, &rtol, &atol);
  default_tolerance(y, &rtol, &atol);
  t.rtol = opt_tolerance(L, 3, "rtol", rtol);
  t.atol = opt_tolerance(L, 3, "atol", atol);
  if (x->n != y->n)
    luaL_error(L, "compare: lengths differ (%I and %I elements)", (lua_Integer)x->n,
               (lua_Integer)y->n);
  size_t start = 0;
  if (on_gpu_pair(x, y)) {
    /* A kernel finds the maxima, the count and the first mismatch; the host then reads only
     * from that first mismatch on, to list the first few. */
    builtin_cmp r;
    cl_err err;
    check_side(L, x); /* opening y allocated, which may run a finalizer */
    check_side(L, y);
    rt_sync(L);
    if (builtin_compare(x->buf->backend, x->buf->ptr, y->buf->ptr, x->n, x->buf->dtype, t.rtol,
                        t.atol, &r, &err))
      rt_raise(L, &err);
    tally scan = t;
    size_t from = r.mismatches ? r.first : x->n;
    for (size_t first = from; first < x->n && scan.mismatches < FIRST; first += BLOCK) {
      size_t cnt = x->n - first < BLOCK ? x->n - first : BLOCK;
      read_pair(L, x, y, first, cnt);
      compare_block(&scan, x->vals, y->vals, first, cnt);
    }
    memcpy(t.first, scan.first, sizeof t.first);
    memcpy(t.xf, scan.xf, sizeof t.xf);
    memcpy(t.yf, scan.yf, sizeof t.yf);
    t.max_abs = r.max_abs;
    t.max_rel = r.max_rel;
    t.mismatches = (size_t)r.mismatches;
    start = x->n;
  }
  for (size_t first = start; first < x->n; first += BLOCK) {
    size_t cnt = x->n - first < BLOCK ? x->n - first : BLOCK;
    read_pair(L, x, y, first, cnt);
    compare_block(&t, x->vals, y->vals, first, cnt);
  }
  lua_pushboolean(L, t.mismatches == 0);
  push_result(L, &t, x->n);
  return 2;
}

int luaopen_cudalab_compare(lua_State *L) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, cuda_compare);
  lua_setfield(L, -2, "compare");
  return 1;
}
