/* bind_sandbox.c: require "cudalab.sandbox", what a grader's Lua sandbox
 * (lua/class/grade_worker.lua, lua/class/grade_sandbox.lua) cannot do from Lua: cap the memory of
 * the Lua state, so that a submission that builds a ten-gigabyte string fails with "not enough
 * memory" instead of taking the machine; check a kernel source as the preprocessor reads it
 * (src_guard.c), so that no spelling of an #include reads a file outside the submission and the
 * toolkit; and name the submission's own headers a source includes, read the same way, which a
 * class's record (lua/class/submission_headers.lua) carries so that grading compiles with them;
 * and keep every a:save inside the submission's folder (bind_save.c's confine_saves).
 *
 * Stance: the cap wraps the state's allocator (lua_setallocf) with one that counts the bytes
 * Lua holds and refuses a request that would pass the cap; Lua turns a refused allocation into
 * an ordinary memory error, which the submission's pcall may catch but cannot get around. The
 * count starts from what the collector already reports, so frees of older blocks balance.
 * Device memory is capped elsewhere (cuda.limits); this is the host side. Once set, a cap can
 * be lowered and never raised, as cuda.limits does. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "inc_scan.h"
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

#define OWN_HEADERS_MAX 64  /* names own_headers gives at most: a record keeps 16 files */
#define OWN_HEADER_NAME 255 /* the longest name it gives (a file name's limit) */

/* The names the scan found, collected in C: the callback runs inside inc_scan, which holds a
 * malloc'd copy of the source, so it must not raise (a Lua error would leak the copy). */
typedef struct own_list {
  char names[OWN_HEADERS_MAX][OWN_HEADER_NAME + 1];
  int n;
} own_list;

/* A name a submission's own file may have: [A-Za-z0-9_.-], not starting with '.', no "..":
 * what grading writes into the submission's folder (grade_worker.lua), never a path. */
static int plain_file_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > OWN_HEADER_NAME || s[0] == '.' || strstr(s, "..")) return 0;
  return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* inc_scan_fn: keeps each quoted plain name once, in order, up to OWN_HEADERS_MAX. */
static int on_own_header(void *ctx, const char *name, int quote) {
  own_list *o = ctx;
  if (quote != '"' || !plain_file_name(name) || o->n == OWN_HEADERS_MAX) return 0;
  for (int i = 0; i < o->n; i++)
    if (strcmp(o->names[i], name) == 0) return 0;
  strcpy(o->names[o->n++], name);
  return 0;
}

/* sandbox.own_headers(src) -> {name, ...} | nil, why: the headers src includes by a plain name
 * in quotes ("twice.h"), each once, in order, as the preprocessor reads the text (inc_scan.c:
 * comments, strings and splices are what NVRTC makes of them); __has_include counts too. A
 * toolkit header (<cuda_fp16.h>) or a path ("../x.h") is no file of the submission's and is
 * left out. nil and why when a header is named through a macro, which only a preprocessor can
 * follow. Raises when src is not a string. */
static int sb_own_headers(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "sandbox.own_headers takes a kernel's source as a string, got %s",
                      luaL_typename(L, 1));
  size_t len;
  const char *src = lua_tolstring(L, 1, &len);
  own_list *o = lua_newuserdatauv(L, sizeof *o, 0); /* freed by Lua's collector, even on error */
  o->n = 0;
  if (inc_scan(src, len, on_own_header, o) != 0) {
    luaL_pushfail(L);
    lua_pushliteral(L, "an #include names its header through a macro");
    return 2;
  }
  lua_createtable(L, o->n, 0);
  for (int i = 0; i < o->n; i++) {
    lua_pushstring(L, o->names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

int luaopen_cudalab_sandbox(lua_State *L) {
  static const luaL_Reg funcs[] = {{"memory_limit", sb_memory_limit},
                                   {"memory_used", sb_memory_used},
                                   {"check_source", sb_check_source},
                                   {"own_headers", sb_own_headers},
                                   {"confine_saves", bind_save_confine}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}
