/* bind_sandbox.c: require "cudalab.sandbox", the two things a grader's Lua sandbox
 * (lua/class/grade_worker.lua, lua/class/grade_sandbox.lua) cannot do from Lua: cap the memory of
 * the Lua state, so that a submission that builds a ten-gigabyte string fails with "not enough
 * memory" instead of taking the machine; and check a kernel source as the preprocessor reads it
 * (src_guard.c), so that no spelling of an #include reads a file outside the submission and the
 * toolkit.
 *
 * Stance: the cap wraps the state's allocator (lua_setallocf) with one that counts the bytes
 * Lua holds and refuses a request that would pass the cap; Lua turns a refused allocation into
 * an ordinary memory error, which the submission's pcall may catch but cannot get around. The
 * count starts from what the collector already reports, so frees of older blocks balance.
 * Device memory is capped elsewhere (cuda.limits); this is the host side. Once set, a cap can
 * be lowered and never raised, as cuda.limits does. */
#include <stdlib.h>

#include <lauxlib.h>

#include "bindings.h"
#include "src_guard.h"

/* The counting allocator's state: the allocator it wraps and the bytes in use. One per process
 * (an engine has one Lua state). */
static struct {
  lua_Alloc inner; /* the allocator Lua had before the cap */
  void *inner_ud;
  size_t used;     /* bytes Lua holds now */
  size_t cap;      /* 0: no cap */
} mem;

/* lua_Alloc: as Lua's own, but a growth past the cap returns NULL (Lua raises a memory
 * error). For a new block Lua passes a type tag in osize, not a size: ptr NULL tells. */
static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  size_t old = ptr ? osize : 0;
  if (nsize > old && mem.cap && nsize - old > mem.cap - (mem.used < mem.cap ? mem.used : mem.cap))
    return NULL;
  void *p = mem.inner(mem.inner_ud, ptr, osize, nsize);
  if (nsize == 0) {
    mem.used -= old <= mem.used ? old : mem.used;
  } else if (p) {
    mem.used = mem.used - (old <= mem.used ? old : mem.used) + nsize;
  }
  return p;
}

/* sandbox.memory_limit(bytes): caps the Lua state's memory; raises on a bad size or an attempt
 * to raise the cap. Returns the bytes in use. */
static int sb_memory_limit(lua_State *L) {
  lua_Integer bytes = luaL_checkinteger(L, 1);
  luaL_argcheck(L, bytes > 0, 1, "the memory limit must be a number of bytes greater than zero");
  if (mem.cap && (size_t)bytes > mem.cap)
    return luaL_error(L, "the Lua memory limit is %I bytes and can only be lowered",
                      (lua_Integer)mem.cap);
  if (!mem.inner) {
    lua_gc(L, LUA_GCCOLLECT);
    mem.inner = lua_getallocf(L, &mem.inner_ud);
    mem.used = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
    lua_setallocf(L, capped_alloc, NULL);
  }
  mem.cap = (size_t)bytes;
  lua_pushinteger(L, (lua_Integer)mem.used);
  return 1;
}

/* sandbox.memory_used() -> bytes the Lua state holds (as counted since the cap was set), or
 * the collector's count when there is no cap. */
static int sb_memory_used(lua_State *L) {
  if (mem.inner) lua_pushinteger(L, (lua_Integer)mem.used);
  else lua_pushinteger(L, (lua_Integer)lua_gc(L, LUA_GCCOUNT) * 1024 + lua_gc(L, LUA_GCCOUNTB));
  return 1;
}

/* sandbox.check_source(src) -> true | nil, why: may the kernel source src be compiled when
 * grading (src_guard_source)? why names the line, what is refused and what is allowed. Raises
 * when src is not a string: a number would be a source only by accident. */
static int sb_check_source(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "sandbox.check_source takes a kernel's source as a string, got %s",
                      luaL_typename(L, 1));
  size_t len;
  const char *src = lua_tolstring(L, 1, &len);
  char why[SRC_GUARD_WHY];
  if (src_guard_source(src, len, why, sizeof why) == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_pushfail(L);
  lua_pushstring(L, why);
  return 2;
}

int luaopen_cudalab_sandbox(lua_State *L) {
  static const luaL_Reg funcs[] = {{"memory_limit", sb_memory_limit},
                                   {"memory_used", sb_memory_used},
                                   {"check_source", sb_check_source}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}
