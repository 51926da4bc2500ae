/* bind_standard.c: the standard library and cudalab as start-up left them, and require
 * "cudalab.standard".with(f, ...), which runs f with them in place.
 *
 * Why: a lesson's check is cudalab's Lua code running in the learner's own Lua state, where
 * the learner may have typed anything first: `string.format = ...` while experimenting, a
 * global named `type`, a cuda.compare wrapped for debugging, even `expect.run = ...`. The
 * verdict must be the lesson's, not one the replacement gave. (Grading does not rely on this:
 * there the submission runs in a sandbox and cuda is read-only.)
 *
 * What is kept, once init.lua has run and before any learner code (standard_snapshot):
 *  - every global (name -> value);
 *  - the fields of string, math, table, os and cuda, of cuda's own tables (cuda.blas,
 *    cuda.cache, cuda.roofline, ...), of the string metatable, and of those of cudalab's
 *    metatables in the registry that give their values methods (__index: arrays, kernels,
 *    streams...; not the result printers);
 *  - _G's metatable (none).
 * That is what checks call. It is made in C with tables sized up front, and kept that small,
 * because it is paid at every start: about 460 entries cost 0.1 ms on a slow 2-core machine,
 * and a copy of every library in Lua cost more than the rest of init.lua.
 *
 * with(f, ...) -> f's results, or raises f's error: puts the kept values in place, calls f,
 * then puts back the learner's values, except where f itself changed one (a module that
 * installs its real function over a stub keeps it). adopt(t) keeps the fields of a table the
 * engine made later (the checks' expect); set(t, k, v) is the engine replacing a field of its
 * own (a class's cuda.use), which checks then see too. global(name) is what start-up left under
 * a global name, or nil: a check that reruns the learner's lines tells a name of start-up's
 * (math, cuda) from one the learner set. */
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"

#define KEPT_GLOBALS "standard library kept: globals" /* no "cudalab." prefix: not a type */
#define KEPT_FIELDS "standard library kept: fields" /* table -> its kept copy */
#define KEPT_META "standard library kept: _G's metatable"

static const char *const LIBRARIES[] = {"string", "math", "table", "os", "cuda", NULL};

/* A copy of the table at idx, sized for its entries. */
static void push_copy(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    n++;
    lua_pop(L, 1);
  }
  lua_createtable(L, 0, n);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
}

/* fields[t] = a copy of t, where t (at idx) is a table not kept yet. fields at fidx. */
static void keep_fields(lua_State *L, int fidx, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE) return;
  lua_pushvalue(L, idx);
  if (lua_rawget(L, fidx) != LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  push_copy(L, idx);
  lua_rawset(L, fidx);
}

void standard_snapshot(lua_State *L) {
  if (!lua_checkstack(L, 24)) return; /* no snapshot: with() then just calls */
  int top = lua_gettop(L);
  lua_pushglobaltable(L);
  int g = lua_gettop(L);
  push_copy(L, g);
  lua_setfield(L, LUA_REGISTRYINDEX, KEPT_GLOBALS);
  if (!lua_getmetatable(L, g)) lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, KEPT_META);

  lua_createtable(L, 0, 64);
  int fields = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  int loaded = lua_gettop(L);
  for (int i = 0; LIBRARIES[i]; i++) {
    if (lua_getfield(L, g, LIBRARIES[i]) != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    int lib = lua_gettop(L);
    keep_fields(L, fields, lib);
    /* a library's own tables of functions (cuda.blas), never package.loaded or _G */
    lua_pushnil(L);
    while (lua_next(L, lib)) {
      if (lua_type(L, -1) == LUA_TTABLE && !lua_rawequal(L, -1, loaded) &&
          !lua_rawequal(L, -1, g))
        keep_fields(L, fields, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pushliteral(L, "");
  if (lua_getmetatable(L, -1)) keep_fields(L, fields, -1);
  lua_settop(L, loaded);
  /* cudalab's metatables: a learner reaches them with getmetatable(cuda.zeros(1)) */
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX)) {
    if (lua_type(L, -2) == LUA_TSTRING && strncmp(lua_tostring(L, -2), "cudalab.", 8) == 0 &&
        lua_type(L, -1) == LUA_TTABLE) {
      lua_pushliteral(L, "__index");
      int behaves = lua_rawget(L, -2) != LUA_TNIL; /* methods, not a printer alone */
      lua_pop(L, 1);
      if (behaves) keep_fields(L, fields, -1);
    }
    lua_pop(L, 1);
  }
  lua_pushvalue(L, fields);
  lua_setfield(L, LUA_REGISTRYINDEX, KEPT_FIELDS);
  lua_settop(L, top);
}

/* Swaps in the kept values of one table: for each key of kept (at kidx), saved[key] = {t's
 * value} (boxed, as nil is a value to put back), then t[key] = the kept value. */
static void swap_in(lua_State *L, int t, int kidx, int saved) {
  lua_pushnil(L);
  while (lua_next(L, kidx)) { /* key, kept */
    lua_pushvalue(L, -2);
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, -4);
    lua_rawget(L, t);
    lua_rawseti(L, -2, 1);
    lua_rawset(L, saved); /* saved[key] = {t[key]} */
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, t); /* t[key] = kept */
  }
}

/* Puts back what swap_in saved, where t still holds the kept value. */
static void swap_out(lua_State *L, int t, int kidx, int saved) {
  lua_pushnil(L);
  while (lua_next(L, saved)) {
    lua_pushvalue(L, -2);
    lua_rawget(L, t);
    lua_pushvalue(L, -3);
    lua_rawget(L, kidx);
    int unchanged = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (unchanged) {
      lua_pushvalue(L, -2);
      lua_rawgeti(L, -2, 1);
      lua_rawset(L, t);
    }
    lua_pop(L, 1);
  }
}

/* with(f, ...) -> f's results */
static int standard_with(lua_State *L) {
  luaL_checkany(L, 1);
  int nargs = lua_gettop(L) - 1;
  /* the swaps' own slots, then f and its arguments again above them */
  luaL_checkstack(L, nargs + 24, "too many arguments");
  if (lua_getfield(L, LUA_REGISTRYINDEX, KEPT_FIELDS) != LUA_TTABLE) {
    /* no snapshot (a state that did not start as the engine's): just call */
    lua_pop(L, 1);
    lua_call(L, nargs, LUA_MULTRET);
    return lua_gettop(L);
  }
  int fields = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, KEPT_GLOBALS);
  int kept_g = lua_gettop(L);
  lua_pushglobaltable(L);
  int g = lua_gettop(L);
  lua_newtable(L); /* saved globals */
  int saved_g = lua_gettop(L);
  lua_newtable(L); /* table -> its saved fields */
  int saved_f = lua_gettop(L);
  if (!lua_getmetatable(L, g)) lua_pushnil(L);
  int learners_meta = lua_gettop(L);

  swap_in(L, g, kept_g, saved_g);
  lua_pushnil(L);
  while (lua_next(L, fields)) {
    lua_newtable(L);
    swap_in(L, lua_absindex(L, -3), lua_absindex(L, -2), lua_gettop(L));
    lua_pushvalue(L, -3);
    lua_insert(L, -2);
    lua_rawset(L, saved_f);
    lua_pop(L, 1);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, KEPT_META);
  lua_setmetatable(L, g);

  int base = lua_gettop(L);
  for (int i = 1; i <= nargs + 1; i++) lua_pushvalue(L, i);
  int rc = lua_pcall(L, nargs, LUA_MULTRET, 0);

  /* The learner's values back, whatever f did: the results stay above base. */
  lua_pushvalue(L, learners_meta);
  lua_setmetatable(L, g);
  swap_out(L, g, kept_g, saved_g);
  lua_pushnil(L);
  while (lua_next(L, saved_f)) {
    lua_pushvalue(L, -2);
    lua_rawget(L, fields);
    swap_out(L, lua_absindex(L, -3), lua_gettop(L), lua_absindex(L, -2));
    lua_pop(L, 2);
  }
  if (rc != LUA_OK) return lua_error(L);
  return lua_gettop(L) - base;
}

/* adopt(t): keeps t's fields as they are now, unless kept already */
static int standard_adopt(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_getfield(L, LUA_REGISTRYINDEX, KEPT_FIELDS) == LUA_TTABLE) keep_fields(L, 2, 1);
  return 0;
}

/* set(t, k, v): t[k] = v, and v is what checks see there from now on */
static int standard_set(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_settop(L, 3);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_rawset(L, 1);
  lua_pushglobaltable(L);
  int is_g = lua_rawequal(L, 1, -1);
  lua_pop(L, 1);
  if (is_g) {
    lua_getfield(L, LUA_REGISTRYINDEX, KEPT_GLOBALS);
  } else if (lua_getfield(L, LUA_REGISTRYINDEX, KEPT_FIELDS) == LUA_TTABLE) {
    lua_pushvalue(L, 1);
    lua_rawget(L, -2);
  }
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_rawset(L, -3);
  }
  return 0;
}

/* global(name) -> the value start-up left under the global name, or nil (also without a
 * snapshot) */
static int standard_global(lua_State *L) {
  luaL_checkany(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, KEPT_GLOBALS) != LUA_TTABLE) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  return 1;
}

int luaopen_cudalab_standard(lua_State *L) {
  static const luaL_Reg funcs[] = {{"with", standard_with},
                                   {"adopt", standard_adopt},
                                   {"set", standard_set},
                                   {"global", standard_global},
                                   {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}
