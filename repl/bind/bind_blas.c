/* bind_blas.c: cuda.blas, the library side of "hand-written kernels against a library":
 *
 *   cuda.blas.gemm(a, b, c, m, n, k [, {alpha =, beta =, trans_a =, trans_b =}])
 *       c = alpha * op(a) * op(b) + beta * c for row-major f32 or f64 device arrays
 *   cuda.blas.info() -> {library =, model =}
 *
 * On the GPU it calls cuBLAS; on the simulator a host BLAS computes the same product, and the
 * modelled clock advances by the time cuBLAS takes on an H200 (measured, see blas_model.c), so
 * cuda.time compares a learner's kernel with the library on one scale. Sizes are checked against
 * the arrays before anything runs: a BLAS library reading past an array would not say so. */
#include <limits.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "blas.h"
#include "buffer.h"
#include "launch_log.h"
#include "runtime.h"
#include "stream.h"

/* The device array at idx, which must be f32 or f64 and of the backend in use. */
static cl_buf *check_matrix(lua_State *L, int idx, const char *name) {
  cl_buf *b = buf_check_live(L, idx, name);
  if (b->where != BUF_DEVICE)
    luaL_error(L, "cuda.blas.gemm: %s is %s, a host buffer: pass a device array (cuda.array(h))",
               name, buf_describe(L, b));
  if (b->dtype != DT_F32 && b->dtype != DT_F64)
    luaL_error(L, "cuda.blas.gemm: %s is %s; gemm multiplies f32 or f64 arrays", name,
               buf_describe(L, b));
  if (b->backend != rt.backend)
    luaL_error(L, "cuda.blas.gemm: %s belongs to the %s backend, and %s is in use", name,
               b->backend->name, rt.backend->name);
  return b;
}

static int check_dim(lua_State *L, int idx, const char *name) {
  lua_Integer v = luaL_checkinteger(L, idx);
  if (v < 1 || v > INT_MAX)
    luaL_error(L, "cuda.blas.gemm: %s must be a whole number from 1 to %d, not %I", name, INT_MAX,
               v);
  return (int)v;
}

static void check_size(lua_State *L, const cl_buf *b, const char *name, int rows, int cols) {
  lua_Integer need = (lua_Integer)rows * cols; /* both below 2^31: no overflow */
  if ((size_t)need > b->n)
    luaL_error(L, "cuda.blas.gemm: %s is %s, too small for a %d x %d matrix (%I elements)", name,
               buf_describe(L, b), rows, cols, need);
}

static int overlaps(const cl_buf *x, const cl_buf *y) {
  size_t es = dtype_table[x->dtype].size;
  const char *a = x->ptr, *b = y->ptr;
  return a < b + y->n * es && b < a + x->n * es;
}

static int opt_flag(lua_State *L, int t, const char *field) {
  lua_getfield(L, t, field);
  int v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* alpha and beta: any number, as cuBLAS takes them. */
static double opt_scale(lua_State *L, int t, const char *field, double dflt) {
  return bind_opt_number(L, t, field, dflt, 0, "cuda.blas.gemm: option %s must be a number");
}

static int blas_gemm(lua_State *L) {
  cl_gemm g;
  memset(&g, 0, sizeof g);
  /* Options first: their metamethods are Lua code that may free an array. */
  if (!lua_isnoneornil(L, 7)) {
    luaL_checktype(L, 7, LUA_TTABLE);
    g.alpha = opt_scale(L, 7, "alpha", 1.0);
    g.beta = opt_scale(L, 7, "beta", 0.0);
    g.trans_a = opt_flag(L, 7, "trans_a");
    g.trans_b = opt_flag(L, 7, "trans_b");
  } else {
    g.alpha = 1.0;
  }
  g.m = check_dim(L, 4, "m");
  g.n = check_dim(L, 5, "n");
  g.k = check_dim(L, 6, "k");
  cl_buf *a = check_matrix(L, 1, "a"), *b = check_matrix(L, 2, "b"), *c = check_matrix(L, 3, "c");
  if (a->dtype != b->dtype || a->dtype != c->dtype)
    return luaL_error(L, "cuda.blas.gemm: a, b and c must have one dtype; they are %s, %s and %s",
                      dtype_table[a->dtype].name, dtype_table[b->dtype].name,
                      dtype_table[c->dtype].name);
  check_size(L, a, "a", g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k);
  check_size(L, b, "b", g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n);
  check_size(L, c, "c", g.m, g.n);
  if (overlaps(c, a) || overlaps(c, b))
    return luaL_error(L, "cuda.blas.gemm: c shares memory with a or b; BLAS needs the result "
                         "in an array of its own");
  if (!rt.backend->gemm)
    return luaL_error(L, "cuda.blas needs a GPU or the simulator; the %s backend runs no kernels "
                         "(cuda.use(\"sim\") switches to the simulator)", rt.backend->name);
  g.f64 = a->dtype == DT_F64;
  g.a = a->ptr;
  g.b = b->ptr;
  g.c = c->ptr;
  cl_err err;
  int slot = stream_tracing ? trace_open(L, NULL) : -1; /* on the default stream, in a timeline */
  if (rt.backend->gemm(&g, &err) != 0) return rt_raise(L, &err);
  if (slot >= 0) trace_close(L, NULL, slot, &(trace_info){.kind = "kernel", .name = "gemm (BLAS)"});
  /* Logged as it ran: a, b, c, then the sizes and the options read above as plain values (the
   * log holds its values weakly, so a table of them would be collected; the caller's own table
   * could change afterwards), so that a check can tell the product it asked for from a call of
   * other sizes whose result was then overwritten. */
  lua_settop(L, 3);
  lua_pushinteger(L, g.m);
  lua_pushinteger(L, g.n);
  lua_pushinteger(L, g.k);
  lua_pushnumber(L, g.alpha);
  lua_pushnumber(L, g.beta);
  lua_pushboolean(L, g.trans_a);
  lua_pushboolean(L, g.trans_b);
  launch_log_library_call(L, "cuda.blas.gemm", 10);
  lua_settop(L, 3);
  return 1;
}

static int blas_info(lua_State *L) {
  lua_createtable(L, 0, 2);
  const char *lib = rt.backend->blas_name ? rt.backend->blas_name() : NULL;
  lua_pushstring(L, lib ? lib : "none");
  lua_setfield(L, -2, "library");
  if (rt.backend->sim) { /* a simulator charges what cuBLAS takes on the modelled device */
    lua_pushstring(L, blas_model_source());
    lua_setfield(L, -2, "model");
  }
  return 1;
}

int luaopen_cudalab_blas(lua_State *L) {
  static const luaL_Reg functions[] = {{"gemm", blas_gemm}, {"info", blas_info}, {NULL, NULL}};
  lua_createtable(L, 0, 1); /* the module part: {blas = {...}} */
  luaL_newlib(L, functions);
  lua_setfield(L, -2, "blas");
  return 1;
}
