/* bind_sim.c: what only a simulated device offers. cuda.stats(): the counters of the last
 * launch, what a GPU does but does not show (memory requests and sectors, bank conflicts,
 * divergence), per source line with {lines = true}. cuda.simopts{...}: shared-memory race
 * checking ("warn" at the prompt, "fail" in checks, false), the number of host threads (1 keeps
 * device printf in order) and the order blocks are handed out in (forward, reverse, or a
 * shuffle its seed decides), which shows a kernel whose result depends on it.
 *
 * It reaches the simulator only through cl_backend's `sim` operations (include/backend.h), in
 * cudalab's own types: which backend simulates is the one whose `sim` is set, never a name. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "runtime.h"

static void push_counters(lua_State *L, const cl_counters *c) {
  lua_createtable(L, 0, 9);
#define FIELD(f) bind_set_int(L, #f, (lua_Integer)c->f)
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

/* The limits that apply, slowest first: the table cuda.stats().model.terms. */
static void push_terms(lua_State *L, const cl_model *r) {
  int order[CL_MODEL_TERMS];
  int n = r->nterms;
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = 1; i < n; i++) /* insertion sort: equal times keep the model's order */
    for (int j = i; j > 0 && r->term[order[j]].us > r->term[order[j - 1]].us; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    const cl_model_term *t = &r->term[order[i]];
    lua_createtable(L, 0, 3);
    bind_set_str(L, "key", t->key);
    bind_set_str(L, "what", t->what);
    bind_set_num(L, "ms", t->us / 1e3);
    lua_seti(L, -2, i + 1);
  }
}

/* The explanation table of cuda.stats().model and TimeResult.model (README: the API). */
static void push_model(lua_State *L, const cl_model *r) {
  lua_createtable(L, 0, 24);
  bind_set_num(L, "time_ms", r->time_us / 1e3);
  bind_set_num(L, "launch_us", r->launch_us);
  bind_set_str(L, "limit", r->limit_key);
  bind_set_str(L, "limit_text", r->limit_text);
  bind_set_str(L, "why", r->why);
  push_terms(L, r);
  lua_setfield(L, -2, "terms");
  bind_set_num(L, "dram_bytes", r->dram_bytes);
  bind_set_num(L, "l2_bytes", r->l2_bytes);
  bind_set_num(L, "flops", r->flops);
  bind_set_num(L, "achieved_gbs", r->achieved_gbs);
  bind_set_num(L, "peak_gbs", r->peak_gbs);
  bind_set_num(L, "achieved_gflops", r->achieved_gflops);
  bind_set_num(L, "peak_gflops", r->peak_gflops);
  bind_set_num(L, "blocks_per_sm", r->blocks_per_sm);
  bind_set_num(L, "warps_per_sm", r->warps_per_sm);
  bind_set_num(L, "occupancy", r->occupancy);
  bind_set_num(L, "waves", r->waves);
  bind_set_num(L, "l1_hit_rate", r->l1_hit_rate);
  bind_set_num(L, "l2_hit_rate", r->l2_hit_rate);
}

/* The simulating backend's operations, NULL when this build has no simulator. cuda.simopts and
 * cuda.time's model reach the simulator whichever backend is active, as its options outlive a
 * cuda.use. */
static const cl_sim_ops *sim_ops(void) {
  const cl_backend *b = backend_simulator();
  return b ? b->sim : NULL;
}

int bind_sim_push_model(lua_State *L, unsigned long long after) {
  const cl_sim_ops *ops = sim_ops();
  cl_model r;
  if (!ops || ops->launches() <= after || ops->last_model(&r) != 0) return 0;
  push_model(L, &r);
  return 1;
}

unsigned long long bind_sim_launches(void) {
  const cl_sim_ops *ops = sim_ops();
  return ops ? ops->launches() : 0;
}

const char *bind_sim_device_name(void) {
  const cl_sim_ops *ops = sim_ops();
  return ops ? ops->device_name() : "";
}

double bind_sim_perf_value(const char *name) {
  const cl_sim_ops *ops = sim_ops();
  cl_perf perf;
  if (!ops || ops->perf(&perf) != 0) return 0;
  for (int i = 0; ops->perf_param(i); i++)
    if (strcmp(ops->perf_param(i)->name, name) == 0) return perf.value[i];
  return 0;
}

static cl_perf parse_perf(lua_State *L, const cl_sim_ops *ops, int idx);

/* The per-line counters of the last launch, and the file the lines are in. */
static void push_lines(lua_State *L, const cl_sim_ops *ops, const cl_stats *s) {
  lua_newtable(L);
  for (int i = 1; i < s->nlines; i++) {
    cl_counters c;
    ops->line_counters(i, &c);
    if (c.warp_insts == 0) continue;
    push_counters(L, &c);
    lua_seti(L, -2, i);
  }
  lua_setfield(L, -2, "lines");
  bind_set_str(L, "file", s->source_file);
}

/* What managed memory moved (cl_um_stats) as a table; `estimate` names the timing-model
 * parameters its time rests on, none of them measured yet. */
static void push_um(lua_State *L, const cl_um_stats *u, int session) {
  lua_createtable(L, 0, 12);
  bind_set_int(L, "faults", (lua_Integer)u->gpu_faults);
  bind_set_int(L, "groups", (lua_Integer)u->gpu_groups);
  bind_set_int(L, "group_bytes", 64 << 10);
  bind_set_int(L, "migrated_bytes", (lua_Integer)(u->htod_bytes + u->dtoh_bytes));
  bind_set_int(L, "remote_bytes", (lua_Integer)u->remote_bytes);
  bind_set_num(L, "us", u->fault_us);
  if (session) {
    bind_set_int(L, "cpu_faults", (lua_Integer)u->cpu_faults);
    bind_set_int(L, "prefetch_bytes", (lua_Integer)u->prefetch_bytes);
    bind_set_num(L, "prefetch_us", u->prefetch_us);
    bind_set_int(L, "launches", u->launches);
  }
  bind_set_str(L, "estimate", "um_fault_us, um_cpu_fault_us, um_migrate_gbs, um_prefetch_gbs, "
                              "um_remote_gbs (estimates, not measured)");
}

/* cuda.stats().managed (the last launch) and .managed_session, once managed memory has moved. */
static void push_managed(lua_State *L, const cl_sim_ops *ops) {
  cl_um_stats last, total;
  if (!ops->managed_stats) return;
  ops->managed_stats(&last, &total);
  if (!total.launches && !total.cpu_faults && !total.prefetch_bytes) return;
  push_um(L, &last, 0);
  lua_setfield(L, -2, "managed");
  push_um(L, &total, 1);
  lua_setfield(L, -2, "managed_session");
}

/* cuda.stats([{lines = true, perf = {...}}]): perf prices the last launch again with those
 * timing-model parameters changed (what if DRAM were twice as fast?). */
static int cuda_stats(lua_State *L) {
  if (!sim_ops())
    return luaL_error(L, "cuda.stats() needs the simulator, which this build does not include");
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
  int lines = 0;
  if (lua_istable(L, 1)) {
    lua_getfield(L, 1, "lines");
    lines = lua_toboolean(L, -1);
  }
  const cl_sim_ops *ops = rt.backend->sim;
  if (!ops)
    return luaL_error(L, "cuda.stats() needs the simulator: the GPU keeps these counters to "
                         "itself (start with --sim or call cuda.use(\"sim\"))");
  cl_stats s;
  if (ops->last_stats(&s) != 0) return luaL_error(L, "no kernel has run on the simulator yet");
  cl_perf perf;
  int has_perf = lua_istable(L, 1) && lua_getfield(L, 1, "perf") != LUA_TNIL;
  if (has_perf) perf = parse_perf(L, ops, lua_gettop(L));
  push_counters(L, &s.total);
  if (lines) push_lines(L, ops, &s);
  if (has_perf) {
    cl_model r;
    if (ops->remodel(&perf, &r) == 0) {
      push_model(L, &r);
      lua_setfield(L, -2, "model");
    }
  } else if (bind_sim_push_model(L, 0)) {
    lua_setfield(L, -2, "model");
  }
  push_managed(L, ops);
  luaL_setmetatable(L, "cudalab.Stats");
  return 1;
}

/* The index of the timing-model parameter the key at the top of the stack names; raises for
 * any other key. */
static int perf_index(lua_State *L, const cl_sim_ops *ops) {
  int i = 0;
  if (lua_type(L, -2) == LUA_TSTRING)
    while (ops->perf_param(i) && strcmp(ops->perf_param(i)->name, lua_tostring(L, -2)) != 0) i++;
  if (lua_type(L, -2) != LUA_TSTRING || !ops->perf_param(i))
    luaL_error(L, "unknown timing-model parameter '%s' (cuda.simopts().perf lists them)",
               luaL_tolstring(L, -2, NULL));
  return i;
}

/* The value at the top of the stack as parameter p, which its row bounds: a number, 0 where
 * the effect may be absent, else positive. A time, a rate or a size of 1e-300 is positive, but
 * the model's times then run past any clock (a launch at 1e-300 GHz takes forever): what the
 * model cannot price sensibly is refused by name, with the range it can. */
static double perf_value(lua_State *L, const cl_perf_param *p) {
  int ok = 0;
  double v = (double)lua_tonumberx(L, -1, &ok);
  if (!ok || v != v || v < 0 || (v == 0 && !p->zero) || v == HUGE_VAL)
    luaL_error(L, "timing-model parameter '%s' must be a positive number, got %s", p->name,
               luaL_tolstring(L, -1, NULL));
  if (v != 0 && (v < p->lo || v > p->hi)) {
    char lo[32], hi[32]; /* as C's %g writes them: 1e-06, 100, 1e+15 */
    snprintf(lo, sizeof lo, "%g", p->lo);
    snprintf(hi, sizeof hi, "%g", p->hi);
    luaL_error(L, "timing-model parameter '%s' = %s is outside what the model can price: give "
               "a number from %s to %s%s", p->name, luaL_tolstring(L, -1, NULL), lo, hi,
               p->zero ? ", or 0" : "");
  }
  return v;
}

/* The device's timing-model parameters with those named in the table at idx replaced. */
static cl_perf parse_perf(lua_State *L, const cl_sim_ops *ops, int idx) {
  luaL_checktype(L, idx, LUA_TTABLE);
  cl_perf perf;
  if (ops->perf(&perf) != 0) luaL_error(L, "cannot start the simulator: out of host memory");
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    int i = perf_index(L, ops);
    perf.value[i] = perf_value(L, ops->perf_param(i));
  }
  return perf;
}

static void set_perf(lua_State *L, const cl_sim_ops *ops, int idx) {
  cl_perf perf = parse_perf(L, ops, idx);
  if (ops->set_perf(&perf) != 0) luaL_error(L, "cannot start the simulator: out of host memory");
}

static void push_perf(lua_State *L, const cl_sim_ops *ops) {
  cl_perf perf;
  (void)ops->perf(&perf); /* the defaults if the simulator cannot start */
  lua_newtable(L);
  for (int i = 0; ops->perf_param(i); i++) bind_set_num(L, ops->perf_param(i)->name, perf.value[i]);
}

/* Whether the key at the top of the stack but one is an option cuda.simopts knows. */
static int known_option(lua_State *L) {
  static const char *const names[] = {"race_check", "threads", "model", "stack", "perf",
                                       "block_order", "seed", NULL};
  if (lua_type(L, -2) != LUA_TSTRING) return 0;
  for (int i = 0; names[i]; i++)
    if (strcmp(lua_tostring(L, -2), names[i]) == 0) return 1;
  return 0;
}

/* race_check's value at the top of the stack: "warn", "fail" or false, and true for "fail", as
 * it meant before races could be warnings. Raises for anything else. */
static int race_mode(lua_State *L) {
  if (lua_type(L, -1) == LUA_TBOOLEAN) return lua_toboolean(L, -1) ? CL_RACE_FAIL : CL_RACE_OFF;
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  if (!strcmp(s, "warn")) return CL_RACE_WARN;
  if (!strcmp(s, "fail")) return CL_RACE_FAIL;
  return luaL_error(L, "race_check must be \"warn\", \"fail\" or false (true means \"fail\"), "
                    "got %s", luaL_tolstring(L, -1, NULL));
}

static void push_race_mode(lua_State *L, int mode) {
  if (mode == CL_RACE_OFF) lua_pushboolean(L, 0);
  else lua_pushstring(L, mode == CL_RACE_WARN ? "warn" : "fail");
}

/* block_order's words, indexed by CL_ORDER_*. */
static const char *const order_names[] = {"forward", "reverse", "shuffle", NULL};

/* block_order's value at the top of the stack, as CL_ORDER_*; raises for anything else. */
static int block_order(lua_State *L) {
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  for (int i = 0; order_names[i]; i++)
    if (!strcmp(s, order_names[i])) return i;
  return luaL_error(L, "block_order must be \"forward\", \"reverse\" or \"shuffle\", got %s",
                    luaL_tolstring(L, -1, NULL));
}

/* Applies the options in the table at 1 in a fixed order, each as soon as it is read: an error
 * in a later one leaves the earlier ones in force. */
static void set_options(lua_State *L, const cl_sim_ops *ops) {
  luaL_checktype(L, 1, LUA_TTABLE);
  cl_sim_opts o;
  ops->options(&o);
  if (lua_getfield(L, 1, "race_check") != LUA_TNIL) o.race_check = race_mode(L);
  if (lua_getfield(L, 1, "model") != LUA_TNIL) o.model = lua_toboolean(L, -1);
  ops->set_options(&o);
  if (lua_getfield(L, 1, "perf") != LUA_TNIL) set_perf(L, ops, lua_gettop(L));
  if (lua_getfield(L, 1, "threads") != LUA_TNIL) {
    int ok = 0;
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (!ok || n < 0 || n > 1024)
      luaL_error(L, "threads must be a whole number from 0 (all cores) to 1024, got %s",
                 luaL_tolstring(L, -1, NULL));
    o.threads = (int)n;
    ops->set_options(&o);
  }
  if (lua_getfield(L, 1, "stack") != LUA_TNIL) {
    int ok = 0;
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (!ok || n < 16 || n > (lua_Integer)ops->stack_max)
      luaL_error(L, "stack must be a whole number of bytes per thread from 16 to %d, got %s",
                 (int)ops->stack_max, luaL_tolstring(L, -1, NULL));
    o.stack_size = (size_t)n;
    ops->set_options(&o);
  }
  if (lua_getfield(L, 1, "block_order") != LUA_TNIL) {
    o.block_order = block_order(L);
    ops->set_options(&o);
  }
  if (lua_getfield(L, 1, "seed") != LUA_TNIL) {
    int ok = 0;
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (!ok || n < 0)
      luaL_error(L, "seed must be a whole number, 0 or more, got %s", luaL_tolstring(L, -1, NULL));
    o.seed = (unsigned long long)n;
    ops->set_options(&o);
  }
  lua_settop(L, 1);
  for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1))
    if (!known_option(L))
      luaL_error(L, "unknown simulator option '%s' (race_check, threads, model, stack, perf, "
                 "block_order, seed)", luaL_tolstring(L, -2, NULL));
}

/* cuda.simopts([{race_check = "warn" | "fail" | false, threads = n, model = bool,
 * stack = bytes, perf = {...}, block_order = "forward" | "reverse" | "shuffle", seed = n}])
 * -> the options now in force, perf among them. */
static int cuda_simopts(lua_State *L) {
  const cl_sim_ops *ops = sim_ops();
  if (!ops)
    return luaL_error(L, "cuda.simopts() needs the simulator, which this build does not include");
  if (!lua_isnoneornil(L, 1)) set_options(L, ops);
  cl_sim_opts o;
  ops->options(&o);
  size_t stack = o.stack_size ? o.stack_size : ops->stack_default;
  lua_createtable(L, 0, 7);
  push_race_mode(L, o.race_check);
  lua_setfield(L, -2, "race_check");
  lua_pushinteger(L, o.threads);
  lua_setfield(L, -2, "threads");
  lua_pushboolean(L, o.model);
  lua_setfield(L, -2, "model");
  lua_pushinteger(L, (lua_Integer)stack);
  lua_setfield(L, -2, "stack");
  push_perf(L, ops);
  lua_setfield(L, -2, "perf");
  bind_set_str(L, "block_order", order_names[o.block_order]);
  lua_pushinteger(L, (lua_Integer)o.seed);
  lua_setfield(L, -2, "seed");
  return 1;
}

/* cuda.perf_params: the timing model's parameters as the simulator describes them, in order:
 * {name =, unit =, doc =, zero =, min =, max =} (zero: 0 is allowed; min and max bound a
 * nonzero value). Empty in a build without the simulator. Help reads its text from here. */
static void push_perf_params(lua_State *L, const cl_sim_ops *ops) {
  lua_newtable(L);
  for (int i = 0; ops && ops->perf_param(i); i++) {
    const cl_perf_param *p = ops->perf_param(i);
    lua_createtable(L, 0, 6);
    bind_set_str(L, "name", p->name);
    bind_set_str(L, "unit", p->unit);
    bind_set_str(L, "doc", p->doc);
    bind_set_bool(L, "zero", p->zero);
    bind_set_num(L, "min", p->lo);
    bind_set_num(L, "max", p->hi);
    lua_seti(L, -2, i + 1);
  }
}

int luaopen_cudalab_sim(lua_State *L) {
  static const luaL_Reg functions[] = {
      {"stats", cuda_stats}, {"simopts", cuda_simopts}, {NULL, NULL}};
  luaL_newlib(L, functions);
  push_perf_params(L, sim_ops());
  lua_setfield(L, -2, "perf_params");
  return 1;
}
