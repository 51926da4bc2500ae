/* bind_launch_log.c: cuda.launches, the log of what reached the device from Lua.
 *
 * cuda.launches lets a lesson's check confirm that the learner launched a given kernel on given
 * arrays, which values alone cannot tell (an array filled by cuda.full looks like one a kernel
 * doubled). While the log is on, each launch from Lua appends a record to a ring of the last
 * LOG_MAX in the registry. Records are weak-valued, so the log never keeps an array or a kernel
 * alive: a leak check run after it sees the memory the learner freed. The alternative, wrapping
 * the kernel metatable from Lua, would slow every launch whether or not anyone reads the log;
 * here a launch pays one test of a flag while the log is off.
 *
 * A file of its own, below the files it records, because launches (bind_kernel.c), library calls
 * and prefetches (bind_blas.c, bind_array.c) and graph replays (bind_graph.c) all write to it:
 * kept in bind_kernel.c, it tied those files and the launch path to each other. */
#include <lauxlib.h>

#include "bindings.h"
#include "launch_log.h"

#define LOG_KEY "cudalab.launchlog"
#define LOG_MAX 256

static int launch_log_on; /* one engine, one Lua state: a flag, not a registry lookup */

/* The grid ('g') or block ('b') a launch record at idx keeps as gx, gy, gz or bx, by, bz. */
static cl_dim3 record_dim(lua_State *L, int idx, char which) {
  char key[3] = {which, 'x', 0};
  unsigned v[3];
  idx = lua_absindex(L, idx);
  for (int d = 0; d < 3; d++) {
    key[1] = (char)('x' + d);
    lua_getfield(L, idx, key);
    v[d] = (unsigned)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  return (cl_dim3){v[0], v[1], v[2]};
}

int launch_log_begin(lua_State *L, const char *name, int nargs) {
  if (!launch_log_on || lua_getfield(L, LUA_REGISTRYINDEX, LOG_KEY) != LUA_TTABLE) {
    if (launch_log_on) lua_pop(L, 1);
    return 0;
  }
  lua_createtable(L, nargs, 10);
  luaL_setmetatable(L, LOG_KEY ".record");
  bind_set_str(L, "name", name);
  return 1;
}

void launch_log_end(lua_State *L, int nargs) {
  bind_set_int(L, "nargs", nargs);
  for (int i = 1; i <= nargs; i++) {
    lua_pushvalue(L, i);
    lua_rawseti(L, -2, i);
  }
  lua_getfield(L, -2, "total");
  lua_Integer total = lua_tointeger(L, -1);
  lua_pop(L, 1);
  lua_rawseti(L, -2, total % LOG_MAX + 1);
  bind_set_int(L, "total", total + 1);
  lua_pop(L, 1);
}

/* A library call (cuda.blas.gemm), a prefetch, advice or a graph's replay in the same log, so
 * that a check can tell a product the GPU computed from one computed elsewhere and copied up, and
 * what was queued before which launch: no kernel, a grid and block of 0. */
void launch_log_library_call(lua_State *L, const char *name, int nargs) {
  if (launch_log_begin(L, name, nargs)) launch_log_end(L, nargs);
}

/* cuda.launches(true | false) turns the log on (emptied) or off; cuda.launches() returns the
 * launches logged since it was turned on, oldest first, as {name, kernel, grid = {x, y, z},
 * block = {x, y, z}, shared = dynamic shared bytes, args = {...}, n = argument count,
 * captured = recorded into a graph rather than run}, with
 * `dropped` counting the older
 * ones the ring no longer holds. An array or kernel collected since shows as nil. */
static int cuda_launches(lua_State *L) {
  if (!lua_isnone(L, 1)) {
    luaL_argexpected(L, lua_isboolean(L, 1), 1, "true (start logging, emptied) or false (stop)");
    launch_log_on = lua_toboolean(L, 1);
    if (launch_log_on)
      lua_newtable(L);
    else
      lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LOG_KEY);
    return 0;
  }
  lua_newtable(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, LOG_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    return 1;
  }
  lua_getfield(L, -1, "total");
  lua_Integer total = lua_tointeger(L, -1), first = total > LOG_MAX ? total - LOG_MAX : 0;
  lua_pop(L, 1);
  for (lua_Integer i = first; i < total; i++) {
    lua_rawgeti(L, -1, i % LOG_MAX + 1); /* the record */
    lua_createtable(L, 0, 7);
    lua_getfield(L, -2, "name");
    lua_setfield(L, -2, "name");
    lua_getfield(L, -2, "kernel");
    lua_setfield(L, -2, "kernel");
    bind_push_dim(L, record_dim(L, -2, 'g'));
    lua_setfield(L, -2, "grid");
    bind_push_dim(L, record_dim(L, -2, 'b'));
    lua_setfield(L, -2, "block");
    lua_getfield(L, -2, "shared");
    lua_setfield(L, -2, "shared");
    lua_getfield(L, -2, "captured");
    lua_pushboolean(L, lua_toboolean(L, -1));
    lua_setfield(L, -3, "captured");
    lua_pop(L, 1);
    lua_getfield(L, -2, "nargs");
    int nargs = (int)lua_tointeger(L, -1);
    lua_setfield(L, -2, "n");
    lua_createtable(L, nargs, 0);
    for (int a = 1; a <= nargs; a++) {
      lua_rawgeti(L, -3, a);
      lua_rawseti(L, -2, a);
    }
    lua_setfield(L, -2, "args");
    lua_rawseti(L, -4, i - first + 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  bind_set_int(L, "dropped", first);
  return 1;
}

int luaopen_cudalab_launch_log(lua_State *L) {
  static const luaL_Reg functions[] = {{"launches", cuda_launches}, {NULL, NULL}};
  luaL_newmetatable(L, LOG_KEY ".record"); /* weak values: the log keeps nothing alive */
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_pop(L, 1);
  luaL_newlib(L, functions);
  return 1;
}
