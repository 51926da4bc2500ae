/* bind_debug.c: what a learner debugs a kernel with on the simulator. cuda.watch(a, i) records
 * every write kernels make to a[i] (thread, block, line, old and new value); cuda.unwatch(w)
 * stops it. cuda.sanitize{nan =, init =, sync =} turns on the checks that stop a launch where a
 * NaN or infinity the kernel made is stored (nan = "made": where it is made, stored or not), at
 * the first read of memory nothing has written, or at a __syncthreads() not every thread
 * reaches. cuda.empty arrays (bind_array.c) are marked here as
 * never written, for the init check.
 *
 * Stance: the simulator does the watching and the checking (sim/sim_watch.c, sim_sanitize.c);
 * this file checks arguments and turns what it recorded into Lua values, through cl_backend's
 * `sim` operations like bind_sim.c. A watch is a userdata created released (id 0) before the
 * simulator's watch exists, and one idempotent release serves close, cuda.unwatch, __close and
 * __gc. Closing keeps what was recorded: the writes are copied into the watch's user value
 * first, since a learner usually closes a watch and then reads it. Printing a watch is Lua's
 * (lua/meta.lua). */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "buffer.h"
#include "runtime.h"

#define WATCH_MT "cudalab.Watch"

typedef struct cl_watch {
  int id;                    /* the simulator's watch; 0 once closed (or before it exists) */
  cl_dtype dtype;            /* of the watched array, for the values */
  size_t index;              /* the element */
  uint64_t total;            /* writes counted, kept when closed */
  const cl_sim_ops *ops;     /* the simulator that records it */
  char label[64];            /* "cuda.Array<f32>[10]" */
} cl_watch;

/* User values of a watch: the array (kept alive while watched) and, once closed, its writes. */
enum { UV_ARRAY = 1, UV_WRITES = 2 };

/* The simulating backend's operations, or a raise naming `what` when this build has none. */
static const cl_sim_ops *sim_ops_for(lua_State *L, const char *what) {
  const cl_backend *b = backend_simulator();
  if (!b) luaL_error(L, "%s needs the simulator, which this build does not include", what);
  return b->sim;
}

/* ---- cuda.sanitize ---- */

static const char *const check_names[] = {"nan", "init", "sync", NULL};
static const int check_bits[] = {CL_SAN_NAN, CL_SAN_INIT, CL_SAN_SYNC};

/* The checks the table at 1 turns on (those it leaves out are off). Raises for a key that names
 * no check and for a value that is not a boolean (nan also takes "made", the strict check). */
static int checks_of(lua_State *L) {
  int bits = 0;
  for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1)) {
    int i = 0;
    if (lua_type(L, -2) == LUA_TSTRING)
      while (check_names[i] && strcmp(check_names[i], lua_tostring(L, -2)) != 0) i++;
    if (lua_type(L, -2) != LUA_TSTRING || !check_names[i])
      luaL_error(L, "cuda.sanitize: unknown check '%s' (the checks are nan, init and sync)",
                 luaL_tolstring(L, -2, NULL));
    if (check_bits[i] == CL_SAN_NAN && lua_type(L, -1) == LUA_TSTRING &&
        strcmp(lua_tostring(L, -1), "made") == 0) {
      bits |= CL_SAN_NAN | CL_SAN_NAN_MADE;
      continue;
    }
    if (lua_type(L, -1) != LUA_TBOOLEAN) {
      if (check_bits[i] == CL_SAN_NAN)
        luaL_error(L, "cuda.sanitize: nan must be true, false or \"made\", got %s",
                   luaL_tolstring(L, -1, NULL));
      luaL_error(L, "cuda.sanitize: %s must be true or false, got %s", check_names[i],
                 luaL_tolstring(L, -1, NULL));
    }
    if (lua_toboolean(L, -1)) bits |= check_bits[i];
  }
  return bits;
}

/* cuda.sanitize([{nan = bool or "made", init = bool, sync = bool}]) -> the checks in force (nan
 * as "made" under the strict check). A table sets exactly the checks it names to true;
 * cuda.sanitize{} turns them all off. */
static int cuda_sanitize(lua_State *L) {
  const cl_sim_ops *ops = sim_ops_for(L, "cuda.sanitize");
  cl_sim_opts o;
  ops->options(&o);
  if (!lua_isnoneornil(L, 1)) {
    if (!lua_istable(L, 1))
      return luaL_error(L, "cuda.sanitize expects a table such as {nan = true, init = true, "
                           "sync = true}, or nothing, got %s", luaL_typename(L, 1));
    int bits = checks_of(L);
    if (bits && !rt_backend(L)->sim)
      return luaL_error(L, "cuda.sanitize checks kernels the simulator runs, and this session "
                           "runs them on the %s backend: cuda.use(\"sim\") first (on a GPU, "
                           "compute-sanitizer checks them)", rt.backend->name);
    o.sanitize = bits;
    ops->set_options(&o);
  }
  lua_createtable(L, 0, 3);
  for (int i = 0; check_names[i]; i++) bind_set_bool(L, check_names[i], o.sanitize & check_bits[i]);
  if (o.sanitize & CL_SAN_NAN_MADE) bind_set_str(L, "nan", "made");
  return 1;
}

/* ---- watches ---- */

/* The watch at idx, or a raise in the words of `what`. */
static cl_watch *check_watch(lua_State *L, int idx, const char *what) {
  cl_watch *w = luaL_testudata(L, idx, WATCH_MT);
  if (!w) luaL_error(L, "%s must be a watch made by cuda.watch, got %s", what,
                     luaL_typename(L, idx));
  return w;
}

/* Pushes the element value held in little-endian bytes v. */
static void push_element(lua_State *L, cl_dtype t, uint64_t v) { buf_push_element(L, t, &v, 0); }

static void push_xyz(lua_State *L, const unsigned v[3]) {
  lua_createtable(L, 0, 3);
  bind_set_int(L, "x", v[0]);
  bind_set_int(L, "y", v[1]);
  bind_set_int(L, "z", v[2]);
}

/* {thread = {x, y, z}, block = {...}, line = N, where = "kernel.cu:7", kernel = "k",
 * op = "store", old = v, new = v} */
static void push_write(lua_State *L, const cl_watch *w, const cl_watch_write *r) {
  lua_createtable(L, 0, 8);
  push_xyz(L, r->thread);
  lua_setfield(L, -2, "thread");
  push_xyz(L, r->block);
  lua_setfield(L, -2, "block");
  bind_set_int(L, "line", r->line);
  bind_set_str(L, "where", r->where);
  bind_set_str(L, "kernel", r->kernel);
  bind_set_str(L, "op", r->op);
  push_element(L, w->dtype, r->old);
  lua_setfield(L, -2, "old");
  push_element(L, w->dtype, r->nv);
  lua_setfield(L, -2, "new");
}

/* The writes the simulator kept for an open watch, oldest first; sets w->total. */
static void push_writes(lua_State *L, cl_watch *w) {
  cl_watch_write r;
  lua_newtable(L);
  for (size_t i = 0; w->ops->watch_write(w->id, i, &r, &w->total) == 0; i++) {
    push_write(L, w, &r);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* Stops the watch, keeping its writes in the user value; idempotent. Never raises when called
 * from a finalizer (keep = 0): it only gives the simulator's watch back. */
static void watch_release(lua_State *L, cl_watch *w, int idx, int keep) {
  if (!w->id) return;
  if (keep) {
    push_writes(L, w);
    lua_setiuservalue(L, idx, UV_WRITES);
  }
  w->ops->watch_remove(w->id);
  w->id = 0;
}

static int watch_close(lua_State *L) {
  watch_release(L, check_watch(L, 1, "self"), 1, 1);
  return 0;
}

static int watch_gc(lua_State *L) {
  cl_watch *w = luaL_testudata(L, 1, WATCH_MT);
  if (w) watch_release(L, w, 1, 0);
  return 0;
}

static int watch_clear(lua_State *L) {
  cl_watch *w = check_watch(L, 1, "self");
  if (w->id) w->ops->watch_clear(w->id);
  lua_newtable(L);
  lua_setiuservalue(L, 1, UV_WRITES);
  w->total = 0;
  lua_settop(L, 1);
  return 1;
}

/* w.writes (a list, the first SIM_WATCH_KEEP), w.count (every write, kept or not), w.index,
 * w.dtype, w.label, w.array, w.watching; and the methods, from the metatable's __methods as
 * the other types keep theirs, so that help and completion find them there. */
static int watch_index(lua_State *L) {
  cl_watch *w = check_watch(L, 1, "self");
  const char *k = lua_tostring(L, 2);
  if (!k || lua_type(L, 2) != LUA_TSTRING) return 0;
  if (!strcmp(k, "writes")) {
    if (w->id) push_writes(L, w);
    else if (lua_getiuservalue(L, 1, UV_WRITES) == LUA_TNIL) lua_newtable(L);
  } else if (!strcmp(k, "count")) {
    if (w->id) {
      cl_watch_write r;
      w->ops->watch_write(w->id, 0, &r, &w->total);
    }
    lua_pushinteger(L, (lua_Integer)w->total);
  } else if (!strcmp(k, "index")) {
    lua_pushinteger(L, (lua_Integer)w->index);
  } else if (!strcmp(k, "dtype")) {
    lua_pushstring(L, dtype_table[w->dtype].name);
  } else if (!strcmp(k, "label")) {
    lua_pushstring(L, w->label);
  } else if (!strcmp(k, "array")) {
    lua_getiuservalue(L, 1, UV_ARRAY);
  } else if (!strcmp(k, "watching")) {
    lua_pushboolean(L, w->id != 0);
  } else {
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "__methods");
    lua_getfield(L, -1, k);
  }
  return 1;
}

/* The element index at 2 of array b, checked: a whole number from 0 to #b - 1. */
static size_t check_index(lua_State *L, const cl_buf *b) {
  if (lua_type(L, 2) != LUA_TNUMBER)
    luaL_error(L, "cuda.watch: argument 2 must be an element index, got %s", luaL_typename(L, 2));
  int ok = 0;
  lua_Integer i = lua_tointegerx(L, 2, &ok);
  if (!ok)
    luaL_error(L, "cuda.watch: the index must be a whole number, got %s",
               luaL_tolstring(L, 2, NULL));
  if (i < 0 || (lua_Unsigned)i >= (lua_Unsigned)b->n) {
    if (!b->n) luaL_error(L, "cuda.watch: %s has no elements to watch", buf_describe(L, b));
    luaL_error(L, "cuda.watch: index %I is out of range for %s (0 to %I)", i, buf_describe(L, b),
               (lua_Integer)b->n - 1);
  }
  return (size_t)i;
}

/* The device array at 1, live, on the simulator; raises otherwise. */
static cl_buf *check_array(lua_State *L) {
  cl_buf *b = buf_test(L, 1);
  if (!b || b->where != BUF_DEVICE)
    luaL_error(L, "cuda.watch: argument 1 must be a device array (cuda.Array), got %s",
               b ? buf_describe(L, b) : luaL_typename(L, 1));
  buf_check_live(L, 1, "cuda.watch's array");
  if (!b->backend->sim)
    luaL_error(L, "cuda.watch works on the simulator, and %s is on the %s backend: make the array "
               "after cuda.use(\"sim\")", buf_describe(L, b), b->backend->name);
  return b;
}

/* cuda.watch(a, i) -> Watch: from now on, every write a kernel makes to a[i]. */
static int cuda_watch(lua_State *L) {
  cl_buf *b = check_array(L);
  size_t i = check_index(L, b);
  size_t es = dtype_table[b->dtype].size;
  cl_watch *w = lua_newuserdatauv(L, sizeof *w, 2);
  memset(w, 0, sizeof *w);
  w->dtype = b->dtype;
  w->index = i;
  w->ops = b->backend->sim;
  snprintf(w->label, sizeof w->label, "%s", buf_describe(L, b));
  lua_pop(L, 1); /* the description */
  luaL_setmetatable(L, WATCH_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, UV_ARRAY);
  int id = w->ops->watch_add((char *)b->ptr + i * es, es);
  if (id <= 0) return luaL_error(L, "cuda.watch: out of host memory");
  w->id = id;
  return 1;
}

/* cuda.unwatch(w): w:close(). */
static int cuda_unwatch(lua_State *L) {
  watch_release(L, check_watch(L, 1, "cuda.unwatch: argument 1"), 1, 1);
  return 0;
}

int luaopen_cudalab_debug(lua_State *L) {
  static const luaL_Reg meta[] = {{"__index", watch_index}, {"__gc", watch_gc},
                                  {"__close", watch_gc},     {NULL, NULL}};
  static const luaL_Reg methods[] = {{"clear", watch_clear}, {"close", watch_close},
                                     {NULL, NULL}};
  static const luaL_Reg functions[] = {{"watch", cuda_watch}, {"unwatch", cuda_unwatch},
                                       {"sanitize", cuda_sanitize}, {NULL, NULL}};
  luaL_newmetatable(L, WATCH_MT);
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__methods");
  lua_pop(L, 1);
  luaL_newlib(L, functions);
  return 1;
}
