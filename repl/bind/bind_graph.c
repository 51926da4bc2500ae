/* bind_graph.c: CUDA graphs for Lua. g = cuda.graph(function() ... launches ... end) runs the
 * function once with the backend capturing (stream capture on a GPU, a record of each launch on
 * the simulator): its launches are recorded, not run. g() or g:launch() replays them all, as
 * one submission, which costs less per kernel than launching them one by one.
 *
 * Stance: a graph holds kernel launches only. Whatever else would reach the device inside the
 * function (reading an array on the host, a synchronize, a copy, making an array, an event) is
 * refused with a message naming it, by the bindings (rt_refuse_in_capture) and again by the
 * backend, rather than letting CUDA invalidate the capture with a code the learner cannot place.
 * The graph keeps alive what its launches use: each captured launch object (which keeps its
 * kernel and module) and every array passed, in a table that is its uservalue; so dropping an
 * array the graph writes cannot leave the graph pointing at freed memory. A capture that fails
 * half-way (an error in the function, Ctrl-C) is thrown away and the error raised as it was. */
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "buffer.h"
#include "launch_log.h"
#include "runtime.h"

#define GRAPH_MT "cudalab.Graph"

typedef struct cl_lgraph {
  cl_graph *g;               /* the backend's; NULL once freed (or before it is made) */
  const cl_backend *be;      /* the backend that captured it */
  int launches;              /* kernel launches it holds */
} cl_lgraph;

/* The graph being captured: its keep table (a registry reference) and its launch count. */
static struct {
  int keep;                  /* LUA_NOREF outside a capture */
  int launches;
} cap = {LUA_NOREF, 0};

void bind_graph_captured(lua_State *L, int lidx, int first) {
  if (cap.keep == LUA_NOREF) return;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, cap.keep);
  int keep = lua_gettop(L);
  lua_pushvalue(L, lidx);
  lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
  for (int i = first; i <= top; i++) {
    if (lua_type(L, i) != LUA_TUSERDATA) continue; /* arrays; numbers need no anchor */
    lua_pushvalue(L, i);
    lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
  }
  lua_settop(L, top);
  cap.launches++;
}

static cl_lgraph *check_graph(lua_State *L) {
  cl_lgraph *lg = luaL_checkudata(L, 1, GRAPH_MT);
  if (!lg->g) luaL_error(L, "this cuda.Graph has been freed");
  return lg;
}

/* One release for __gc, __close and g:free(): the backend's graph and what it kept alive. */
static int graph_free(lua_State *L) {
  cl_lgraph *lg = luaL_checkudata(L, 1, GRAPH_MT);
  if (lg->g) lg->be->graph_free(lg->g);
  lg->g = NULL;
  lua_pushnil(L);
  lua_setiuservalue(L, 1, 1);
  return 0;
}

/* Ends the capture in progress: the graph into lg (keep) or thrown away (lg NULL). Raises on a
 * backend error, the capture ended either way. */
static void end_capture(lua_State *L, cl_lgraph *lg, const cl_backend *be) {
  rt.capturing = 0;
  luaL_unref(L, LUA_REGISTRYINDEX, cap.keep);
  cap.keep = LUA_NOREF;
  cl_err err;
  if (be->graph_end(lg ? &lg->g : NULL, &err) != 0 && lg) rt_raise(L, &err);
}

/* cuda.graph(fn): a graph of the launches fn makes; fn is called once, with no arguments. */
static int cuda_graph(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  if (rt.capturing) return luaL_error(L, "cuda.graph cannot be called inside cuda.graph");
  const cl_backend *be = rt_backend(L);
  if (!be->graph_begin)
    return luaL_error(L, "cuda.graph needs a backend that runs kernels (the GPU or the "
                      "simulator); the %s backend has none", be->name);
  cl_lgraph *lg = lua_newuserdatauv(L, sizeof *lg, 1);
  memset(lg, 0, sizeof *lg);
  lg->be = be;
  luaL_setmetatable(L, GRAPH_MT);
  int gi = lua_gettop(L);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, gi, 1);
  cl_err err;
  if (be->graph_begin(&err) != 0) rt_raise(L, &err);
  cap.keep = luaL_ref(L, LUA_REGISTRYINDEX); /* pops the keep table */
  cap.launches = 0;
  rt.capturing = 1;
  lua_pushvalue(L, 1);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
    end_capture(L, NULL, be);
    return lua_error(L);
  }
  lg->launches = cap.launches;
  end_capture(L, lg, be);
  lua_settop(L, gi);
  return 1;
}

/* g:launch() or g(): replays the graph's launches on the default stream. */
static int graph_launch(lua_State *L) {
  cl_lgraph *lg = check_graph(L);
  rt_refuse_in_capture(L, "replaying a graph");
  if (lg->be != rt_backend(L))
    return luaL_error(L, "this cuda.Graph was captured on the %s backend, but %s is active "
                      "now: capture it again", lg->be->name, rt.backend->name);
  cl_err err;
  if (lg->be->graph_launch(lg->g, &err) != 0) rt_raise(L, &err);
  lua_settop(L, 1);
  launch_log_library_call(L, "Graph:launch", 1);
  return 1;
}

static int graph_index(lua_State *L) {
  cl_lgraph *lg = luaL_checkudata(L, 1, GRAPH_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "launches") == 0) {
    lua_pushinteger(L, lg->launches);
    return 1;
  }
  if (strcmp(k, "freed") == 0) {
    lua_pushboolean(L, lg->g == NULL);
    return 1;
  }
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "__methods");
  lua_getfield(L, -1, k);
  return 1;
}

static int graph_tostring(lua_State *L) {
  cl_lgraph *lg = luaL_checkudata(L, 1, GRAPH_MT);
  lua_pushfstring(L, "cuda.Graph of %d kernel launch%s on %s%s", lg->launches,
                  lg->launches == 1 ? "" : "es", lg->be ? lg->be->name : "?",
                  lg->g ? "" : " (freed)");
  return 1;
}

static const luaL_Reg methods[] = {{"launch", graph_launch}, {"free", graph_free}, {NULL, NULL}};

static const luaL_Reg metamethods[] = {
    {"__index", graph_index}, {"__call", graph_launch}, {"__tostring", graph_tostring},
    {"__gc", graph_free},     {"__close", graph_free},  {NULL, NULL}};

static const luaL_Reg functions[] = {{"graph", cuda_graph}, {NULL, NULL}};

int luaopen_cudalab_graph(lua_State *L) {
  luaL_newmetatable(L, GRAPH_MT);
  luaL_setfuncs(L, metamethods, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__methods");
  lua_pop(L, 1);
  luaL_newlib(L, functions);
  return 1;
}
