/* luaopt.c: reading optional fields of an options table, shared by the bindings that take one
 * (cuda.blas.gemm's alpha and beta, cuda.compare's rtol and atol). Each binding keeps its own
 * message, so learners see the same words they always did.
 *
 * Also the other direction: setting one field of the table a binding is building (cuda.device(),
 * cuda.stats(), cuda.cache(), the timing results), one call a field instead of a push and a
 * setfield joined by a comma; and a grid or a block as a table of its own. */
#include <math.h>

#include <lauxlib.h>

#include "bindings.h"

double bind_opt_number(lua_State *L, int t, const char *field, double dflt, int nonneg,
                       const char *fmt) {
  if (!lua_istable(L, t)) return dflt;
  double v = dflt;
  if (lua_getfield(L, t, field) != LUA_TNIL) {
    int ok = 0;
    v = (double)lua_tonumberx(L, -1, &ok);
    if (!ok || (nonneg && (v < 0 || isnan(v)))) luaL_error(L, fmt, field);
  }
  lua_pop(L, 1);
  return v;
}

void bind_set_int(lua_State *L, const char *field, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, field);
}

void bind_set_num(lua_State *L, const char *field, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, field);
}

void bind_set_str(lua_State *L, const char *field, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, field);
}

void bind_set_bool(lua_State *L, const char *field, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, field);
}

void bind_push_dim(lua_State *L, cl_dim3 d) {
  lua_createtable(L, 0, 3);
  bind_set_int(L, "x", d.x);
  bind_set_int(L, "y", d.y);
  bind_set_int(L, "z", d.z);
}
