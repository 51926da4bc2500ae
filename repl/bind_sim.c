/* bind_sim.c: what only the simulator offers. cuda.stats(): the counters of the last launch,
 * what a GPU does but does not show (memory requests and sectors, bank conflicts, divergence),
 * per source line with {lines = true}. cuda.simopts{...}: shared-memory race checking and the
 * number of host threads (1 keeps device printf in order). */
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

static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/* The explanation table of cuda.stats().model and TimeResult.model (README: the API). */
static void push_model(lua_State *L, const sim_model_result *r) {
  lua_createtable(L, 0, 24);
  set_num(L, "time_ms", r->time_us / 1e3);
  set_num(L, "launch_us", r->launch_us);
  lua_pushstring(L, sim_limit_key(r->limit)), lua_setfield(L, -2, "limit");
  lua_pushstring(L, sim_limit_text(r->limit)), lua_setfield(L, -2, "limit_text");
  lua_pushstring(L, r->why), lua_setfield(L, -2, "why");
  int order[SIM_LIM_COUNT], n = 0;
  for (int i = 0; i < SIM_LIM_COUNT; i++) if (r->term_us[i] > 0) order[n++] = i;
  for (int i = 1; i < n; i++) /* slowest first */
    for (int j = i; j > 0 && r->term_us[order[j]] > r->term_us[order[j - 1]]; j--) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, sim_limit_key(order[i])), lua_setfield(L, -2, "key");
    lua_pushstring(L, sim_limit_text(order[i])), lua_setfield(L, -2, "what");
    set_num(L, "ms", r->term_us[order[i]] / 1e3);
    lua_seti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "terms");
  set_num(L, "dram_bytes", r->dram_bytes);
  set_num(L, "l2_bytes", r->l2_bytes);
  set_num(L, "flops", r->flops);
  set_num(L, "achieved_gbs", r->achieved_gbs);
  set_num(L, "peak_gbs", r->peak_gbs);
  set_num(L, "achieved_gflops", r->achieved_gflops);
  set_num(L, "peak_gflops", r->peak_gflops);
  set_num(L, "blocks_per_sm", r->blocks_per_sm);
  set_num(L, "warps_per_sm", r->warps_per_sm);
  set_num(L, "occupancy", r->occupancy);
  set_num(L, "waves", r->waves);
  set_num(L, "l1_hit_rate", r->l1_hit_rate);
  set_num(L, "l2_hit_rate", r->l2_hit_rate);
}

int bind_sim_push_model(lua_State *L, unsigned long long after) {
  unsigned long long n = 0;
  const sim_model_result *r = backend_sim_last_model(&n);
  if (!r || n <= after) return 0;
  push_model(L, r);
  return 1;
}

unsigned long long bind_sim_launches(void) { return backend_sim_launches(); }

const char *bind_sim_device_name(void) {
  const sim_device_desc *d = backend_sim_desc();
  const char *name = d ? d->name : "Simulated NVIDIA H200";
  return strncmp(name, "Simulated ", 10) == 0 ? name + 10 : name;
}

static sim_perf parse_perf(lua_State *L, int idx);

/* cuda.stats([{lines = true, perf = {...}}]): perf prices the last launch again with those
 * timing-model parameters changed (what if DRAM were twice as fast?). */
static int cuda_stats(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
  int lines = lua_istable(L, 1) && (lua_getfield(L, 1, "lines"), lua_toboolean(L, -1));
  if (strcmp(rt.backend->name, "sim") != 0)
    return luaL_error(L, "cuda.stats() needs the simulator: the GPU keeps these counters to itself "
                         "(start with --sim or call cuda.use(\"sim\"))");
  const sim_stats *s = backend_sim_last_stats();
  if (!s) return luaL_error(L, "no kernel has run on the simulator yet");
  sim_perf perf;
  int has_perf = lua_istable(L, 1) && lua_getfield(L, 1, "perf") != LUA_TNIL;
  if (has_perf) perf = parse_perf(L, lua_gettop(L));
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
  if (has_perf) {
    sim_model_result r;
    if (backend_sim_remodel(&perf, &r) == 0) {
      push_model(L, &r);
      lua_setfield(L, -2, "model");
    }
  } else if (bind_sim_push_model(L, 0)) {
    lua_setfield(L, -2, "model");
  }
  luaL_setmetatable(L, "cudalab.Stats");
  return 1;
}

/* The device's timing-model parameters with those named in the table at idx replaced. */
static sim_perf parse_perf(lua_State *L, int idx) {
  luaL_checktype(L, idx, LUA_TTABLE);
  const sim_device_desc *d = backend_sim_desc();
  if (!d) luaL_error(L, "cannot start the simulator: out of host memory");
  sim_perf perf = d->perf;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    const sim_perf_field *f = sim_perf_fields;
    if (lua_type(L, -2) == LUA_TSTRING)
      while (f->name && strcmp(f->name, lua_tostring(L, -2)) != 0) f++;
    if (lua_type(L, -2) != LUA_TSTRING || !f->name)
      luaL_error(L, "unknown timing-model parameter '%s' (cuda.simopts().perf lists them)", luaL_tolstring(L, -2, NULL));
    int ok = 0;
    double v = (double)lua_tonumberx(L, -1, &ok);
    /* Rates and sizes divide: only the effects that can be absent may be zero. */
    int may_be_zero = strcmp(f->name, "drain") == 0 || strcmp(f->name, "queue") == 0 ||
                      strcmp(f->name, "block_cycles") == 0 || strcmp(f->name, "warp_ns") == 0 ||
                      strcmp(f->name, "warp_cycles") == 0;
    if (!ok || v != v || v < 0 || (v == 0 && !may_be_zero) || v > 1e15 || (strcmp(f->name, "queue") == 0 && v > 100))
      luaL_error(L, "timing-model parameter '%s' must be a positive number, got %s", f->name, luaL_tolstring(L, -1, NULL));
    *(double *)(void *)((char *)&perf + f->offset) = v;
  }
  return perf;
}

static void set_perf(lua_State *L, int idx) {
  sim_perf perf = parse_perf(L, idx);
  if (backend_sim_set_perf(&perf) != 0) luaL_error(L, "cannot start the simulator: out of host memory");
}

static void push_perf(lua_State *L) {
  const sim_device_desc *d = backend_sim_desc();
  sim_device_desc def;
  sim_default_desc(&def);
  const sim_perf *perf = d ? &d->perf : &def.perf; /* the defaults if the simulator cannot start */
  lua_newtable(L);
  for (const sim_perf_field *f = sim_perf_fields; f->name; f++) {
    lua_pushnumber(L, *(const double *)(const void *)((const char *)perf + f->offset));
    lua_setfield(L, -2, f->name);
  }
}

/* cuda.simopts([{race_check = bool, threads = n, model = bool, stack = bytes, perf = {...}}]) -> the options
 * now in force, perf among them. */
static int cuda_simopts(lua_State *L) {
  sim_launch_opts *o = backend_sim_options();
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (lua_getfield(L, 1, "race_check") != LUA_TNIL) o->race_check = lua_toboolean(L, -1);
    if (lua_getfield(L, 1, "model") != LUA_TNIL) o->model = lua_toboolean(L, -1);
    if (lua_getfield(L, 1, "perf") != LUA_TNIL) set_perf(L, lua_gettop(L));
    if (lua_getfield(L, 1, "threads") != LUA_TNIL) {
      int ok = 0;
      lua_Integer n = lua_tointegerx(L, -1, &ok);
      if (!ok || n < 0 || n > 1024)
        return luaL_error(L, "threads must be a whole number from 0 (all cores) to 1024, got %s",
                          luaL_tolstring(L, -1, NULL));
      o->threads = (int)n;
    }
    if (lua_getfield(L, 1, "stack") != LUA_TNIL) {
      int ok = 0;
      lua_Integer n = lua_tointegerx(L, -1, &ok);
      if (!ok || n < 16 || n > SIM_STACK_MAX)
        return luaL_error(L, "stack must be a whole number of bytes per thread from 16 to %d, got %s", SIM_STACK_MAX,
                          luaL_tolstring(L, -1, NULL));
      o->stack_size = (size_t)n;
    }
    lua_settop(L, 1);
    for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1))
      if (lua_type(L, -2) != LUA_TSTRING || (strcmp(lua_tostring(L, -2), "race_check") != 0 &&
                                             strcmp(lua_tostring(L, -2), "threads") != 0 &&
                                             strcmp(lua_tostring(L, -2), "model") != 0 &&
                                             strcmp(lua_tostring(L, -2), "stack") != 0 &&
                                             strcmp(lua_tostring(L, -2), "perf") != 0))
        return luaL_error(L, "unknown simulator option '%s' (race_check, threads, model, stack, perf)",
                          luaL_tolstring(L, -2, NULL));
  }
  lua_createtable(L, 0, 3);
  lua_pushboolean(L, o->race_check), lua_setfield(L, -2, "race_check");
  lua_pushinteger(L, o->threads), lua_setfield(L, -2, "threads");
  lua_pushboolean(L, o->model), lua_setfield(L, -2, "model");
  lua_pushinteger(L, (lua_Integer)(o->stack_size ? o->stack_size : SIM_STACK_DEFAULT)), lua_setfield(L, -2, "stack");
  push_perf(L);
  lua_setfield(L, -2, "perf");
  return 1;
}
#else
/* Without the simulator there is no model: cuda.time has nothing to attach. */
int bind_sim_push_model(lua_State *L, unsigned long long after) {
  (void)L;
  (void)after;
  return 0;
}
unsigned long long bind_sim_launches(void) { return 0; }
const char *bind_sim_device_name(void) { return ""; }
static int cuda_stats(lua_State *L) {
  return luaL_error(L, "cuda.stats() needs the simulator, which this build does not include");
}
static int cuda_simopts(lua_State *L) {
  return luaL_error(L, "cuda.simopts() needs the simulator, which this build does not include");
}
#endif

int luaopen_cudalab_sim(lua_State *L) {
  static const luaL_Reg functions[] = {{"stats", cuda_stats}, {"simopts", cuda_simopts}, {NULL, NULL}};
  luaL_newlib(L, functions);
  return 1;
}
