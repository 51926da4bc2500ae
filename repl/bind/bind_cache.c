/* bind_cache.c: cuda.cache() shows the kernel cache (where, how many entries, how large, hits
 * and misses this session); cuda.cache.clear() empties it. cuda.cache is a table with __call so
 * that both read naturally at the prompt. */
#include <lauxlib.h>

#include "bindings.h"
#include "cache.h"

static int cache_info(lua_State *L) {
  cache_stats s;
  cache_stats_get(&s);
  lua_createtable(L, 0, 6);
  bind_set_str(L, "dir", s.dir);
  bind_set_bool(L, "disk", s.disk);
  bind_set_int(L, "entries", (lua_Integer)s.entries);
  bind_set_int(L, "bytes", (lua_Integer)s.bytes);
  bind_set_int(L, "hits", (lua_Integer)s.hits);
  bind_set_int(L, "misses", (lua_Integer)s.misses);
  luaL_setmetatable(L, "cudalab.CacheInfo");
  return 1;
}

static int cache_call(lua_State *L) { /* cuda.cache(): the table itself is argument 1 */
  return cache_info(L);
}

static int cache_clear_(lua_State *L) {
  int n = cache_clear();
  if (n < 0) return luaL_error(L, "cannot empty the kernel cache folder");
  lua_pushinteger(L, n);
  return 1;
}

int luaopen_cudalab_cache(lua_State *L) {
  lua_createtable(L, 0, 1);      /* the module part: {cache = <callable table>} */
  lua_createtable(L, 0, 2);      /* cuda.cache */
  lua_pushcfunction(L, cache_clear_);
  lua_setfield(L, -2, "clear");
  lua_pushcfunction(L, cache_info);
  lua_setfield(L, -2, "info");
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, cache_call);
  lua_setfield(L, -2, "__call");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "cache");
  return 1;
}
