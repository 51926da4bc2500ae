/* bind_cuda.c: the `cuda` module itself: device queries, sync, meminfo, backend choice, and the
 * assembly of the functions the other binding files export (arrays, kernels, time, compare) and
 * of the methods one file adds to another's type (a:save, k:debug, m:constant).
 * The metatables of plain result tables (Device, TimeResult, ...) are created here empty and
 * filled with __tostring by lua/meta.lua: formatting belongs to Lua. */
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "buffer.h"
#include "nvrtc.h"
#include "runtime.h"

/* Watch is bind_debug.c's userdata: its metatable is shared here only for its __tostring. */
static const char *const result_types[] = {"Device", "TimeResult", "CompareResult", "MemInfo",
                                           "KernelInfo", "Stats", "CacheInfo", "Watch", NULL};

static void set_dim(lua_State *L, const char *k, const int v[3]) {
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; i++) {
    lua_pushinteger(L, v[i]);
    lua_seti(L, -2, i + 1);
  }
  lua_setfield(L, -2, k);
}

static void push_version(lua_State *L, int v) {
  if (v > 0) lua_pushfstring(L, "%d.%d", v / 1000, v % 1000 / 10);
  else lua_pushliteral(L, "none");
}

static int cuda_device(lua_State *L) {
  const cl_device *d = rt_device(L);
  lua_createtable(L, 0, 28);
  bind_set_str(L, "name", d->name);
  bind_set_str(L, "backend", rt.backend->name);
  lua_pushfstring(L, "%d.%d", d->cc_major, d->cc_minor);
  lua_setfield(L, -2, "cc");
  bind_set_int(L, "sm_count", d->sm_count);
  bind_set_int(L, "memory_total", (lua_Integer)d->memory_total);
  bind_set_int(L, "clock_khz", d->clock_khz);
  bind_set_int(L, "memory_clock_khz", d->memory_clock_khz);
  bind_set_int(L, "bus_width", d->bus_width_bits);
  bind_set_int(L, "l2_bytes", (lua_Integer)d->l2_bytes);
  /* what a copy reaches on the modelled device: the timing model's memory roof, which
   * cuda.stats and the roofline measure against (the peak above is the data sheet's) */
  if (strcmp(rt.backend->name, "sim") == 0)
    bind_set_num(L, "copy_gbs", bind_sim_perf_value("dram_gbs"));
  bind_set_int(L, "max_threads_per_block", d->max_threads_per_block);
  bind_set_int(L, "max_threads_per_sm", d->max_threads_per_sm);
  bind_set_int(L, "max_blocks_per_sm", d->max_blocks_per_sm);
  bind_set_int(L, "shared_per_block", (lua_Integer)d->shared_per_block);
  bind_set_int(L, "shared_per_block_optin", (lua_Integer)d->shared_per_block_optin);
  bind_set_int(L, "shared_per_sm", (lua_Integer)d->shared_per_sm);
  bind_set_int(L, "regs_per_block", d->regs_per_block);
  bind_set_int(L, "regs_per_sm", d->regs_per_sm);
  bind_set_int(L, "warp_size", d->warp_size);
  set_dim(L, "max_block_dim", d->max_block_dim);
  set_dim(L, "max_grid_dim", d->max_grid_dim);
  bind_set_int(L, "max_texture_1d", d->max_texture_1d);
  lua_createtable(L, 2, 0);
  for (int i = 0; i < 2; i++) {
    lua_pushinteger(L, d->max_texture_2d[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "max_texture_2d");
  set_dim(L, "max_texture_3d", d->max_texture_3d);
  push_version(L, d->driver_version);
  lua_setfield(L, -2, "driver_version");
  push_version(L, d->runtime_version);
  lua_setfield(L, -2, "runtime_version");
  bind_set_str(L, "nvrtc_version", nvrtc_version_string());
  luaL_setmetatable(L, "cudalab.Device");
  return 1;
}

static int cuda_sync(lua_State *L) {
  rt_sync(L);
  return 0;
}

static int cuda_meminfo(lua_State *L) {
  size_t free_b = 0, total = 0;
  cl_err err;
  if (rt_backend(L)->meminfo(&free_b, &total, &err) != 0) rt_raise(L, &err);
  lua_createtable(L, 0, 5);
  bind_set_int(L, "free", (lua_Integer)free_b);
  bind_set_int(L, "total", (lua_Integer)total);
  bind_set_int(L, "used", (lua_Integer)(total - free_b));
  /* this session's own arrays: on a shared GPU `used` moves with other programs too, so a
   * lesson check that judges the learner's memory must not read it */
  bind_set_int(L, "arrays", (lua_Integer)rt.mem_in_use);
  size_t host = rt.backend->host_available ? rt.backend->host_available() : 0;
  if (host) bind_set_int(L, "host_available", (lua_Integer)host); /* what can really be filled */
  luaL_setmetatable(L, "cudalab.MemInfo");
  return 1;
}

/* cuda.use("sim" | "cuda" | "none"): where new arrays and kernels go. Returns the previous. */
static int cuda_use(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const char *old = rt.backend->name;
  if (rt_use(L, name) != 0) return lua_error(L);
  lua_pushstring(L, old);
  return 1;
}

static int cuda_backend(lua_State *L) {
  lua_pushstring(L, rt.backend->name);
  return 1;
}

/* Copies every field of the table at the top into the table at idx, then pops it. */
static void merge(lua_State *L, int idx) {
  for (lua_pushnil(L); lua_next(L, -2);) {
    lua_pushvalue(L, -2); /* key value key */
    lua_insert(L, -2);    /* key key value */
    lua_settable(L, idx); /* key: lua_next's cursor */
  }
  lua_pop(L, 1);
}

/* Methods a type gets from a file above its own (bindings.h says why), added here, where every
 * part is known, rather than by the type's file, which would then depend on each of them. */
static const struct {
  const char *type; /* the metatable's name */
  const char *name;
  lua_CFunction fn;
} added_methods[] = {
    {ARRAY_MT, "save", bind_save_method},       {HOST_MT, "save", bind_save_method},
    {MODULE_MT, "constant", bind_constant_method}, {KERNEL_MT, "constant", bind_constant_method},
    {MODULE_MT, "variables", bind_variables_method},
    {KERNEL_MT, "variables", bind_variables_method},
    {KERNEL_MT, "debug", bind_debugger_method},
};

/* Puts each of added_methods in its type's __methods, which the type's part has made. */
static void add_methods(lua_State *L) {
  for (size_t i = 0; i < sizeof added_methods / sizeof *added_methods; i++) {
    luaL_getmetatable(L, added_methods[i].type);
    lua_getfield(L, -1, "__methods");
    lua_pushcfunction(L, added_methods[i].fn);
    lua_setfield(L, -2, added_methods[i].name);
    lua_pop(L, 2);
  }
}

int luaopen_cudalab_cuda(lua_State *L) {
  static const luaL_Reg functions[] = {
      {"device", cuda_device}, {"sync", cuda_sync},       {"meminfo", cuda_meminfo},
      {"use", cuda_use},       {"backend", cuda_backend}, {NULL, NULL},
  };
  luaL_newlib(L, functions);
  int cuda = lua_gettop(L);
  lua_CFunction parts[] = {luaopen_cudalab_array,      luaopen_cudalab_kernel,
                           luaopen_cudalab_launch_log, luaopen_cudalab_time,
                           luaopen_cudalab_compare,    luaopen_cudalab_sim,
                           luaopen_cudalab_cache,      luaopen_cudalab_blas,
                           luaopen_cudalab_stream,     luaopen_cudalab_limits,
                           luaopen_cudalab_graph,      luaopen_cudalab_texture,
                           luaopen_cudalab_debug,      luaopen_cudalab_save};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    parts[i](L);
    merge(L, cuda);
  }
  add_methods(L);
  lua_newtable(L);
  for (int i = 0; result_types[i]; i++) {
    lua_pushfstring(L, "cudalab.%s", result_types[i]);
    luaL_newmetatable(L, lua_tostring(L, -1));
    lua_setfield(L, -3, result_types[i]);
    lua_pop(L, 1);
  }
  lua_setfield(L, cuda, "_meta");
  lua_pushstring(L, CUDALAB_VERSION);
  lua_setfield(L, cuda, "version");
  return 1;
}
