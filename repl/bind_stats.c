/* bind_stats.c: cuda.stats(), the simulator's counters for the last launch: what a GPU does
 * but does not show (memory requests and sectors, bank conflicts, divergence). With
 * {lines = true} the counts come per source line too. Only the simulator has them; on other
 * backends the function says so. */
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "runtime.h"
#ifdef CUDALAB_HAVE_SIM
#include "backend_sim.h"

static void push_counters(lua_State *L, const sim_counters *c) {
  lua_createtable(L, 0, 9);
#define FIELD(f) (lua_pushinteger(L, (lua_Integer)c->f), lua_setfield(L, -2, #f))
  FIELD(warp_insts);
  FIELD(thread_insts);
  FIELD(ld_requests);
  FIELD(ld_sectors);
  FIELD(st_requests);
  FIELD(st_sectors);
  FIELD(shared_wavefronts);
  FIELD(bank_conflicts);
  FIELD(divergent_branches);
#undef FIELD
}

static int cuda_stats(lua_State *L) {
  int lines = lua_istable(L, 1) && (lua_getfield(L, 1, "lines"), lua_toboolean(L, -1));
  if (strcmp(rt.backend->name, "sim") != 0)
    return luaL_error(L, "cuda.stats() needs the simulator: the GPU keeps these counters to itself "
                         "(start with --sim or call cuda.use(\"sim\"))");
  const sim_stats *s = backend_sim_last_stats();
  if (!s) return luaL_error(L, "no kernel has run on the simulator yet");
  push_counters(L, &s->total);
  if (lines) {
    lua_newtable(L);
    for (int i = 1; i < s->nlines; i++) {
      if (s->lines[i].warp_insts == 0) continue;
      push_counters(L, &s->lines[i]);
      lua_seti(L, -2, i);
    }
    lua_setfield(L, -2, "lines");
    lua_pushstring(L, s->source_file);
    lua_setfield(L, -2, "file");
  }
  luaL_setmetatable(L, "cudalab.Stats");
  return 1;
}
#else
static int cuda_stats(lua_State *L) {
  return luaL_error(L, "cuda.stats() needs the simulator, which this build does not include");
}
#endif

int luaopen_cudalab_stats(lua_State *L) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, cuda_stats);
  lua_setfield(L, -2, "stats");
  return 1;
}
