/* bind_time.c: cuda.time (CUDA events around each call) and cpu.time (the monotonic clock).
 * Both run warm-ups first, then `reps` timed calls, and return every sample with the median,
 * min, max and mean: a learner should see the spread, not one lucky number.
 *
 * On the GPU the figure is device time between two events, so it excludes launch overhead a
 * host clock would add. On the simulator the events read the modelled device's clock, so the
 * figure is modelled GPU time (clock = "model"); the timing model is deterministic, so one
 * repetition without warm-up is the default there, and the simulator's own CPU time is kept
 * beside it as sim_ms, never mixed in. With the model off the host clock measures the
 * simulation, labelled clock = "sim" so nobody mistakes it for GPU time. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "bindings.h"
#include "runtime.h"

typedef struct time_opts {
  int warmup, reps;
} time_opts;

static time_opts check_opts(lua_State *L, int idx, int warmup, int reps) {
  luaL_checkstack(L, 4, NULL);
  time_opts o = {warmup, reps};
  if (lua_type(L, idx) == LUA_TNUMBER) {
    o.reps = (int)luaL_checkinteger(L, idx);
  } else if (lua_istable(L, idx)) {
    if (lua_getfield(L, idx, "warmup") != LUA_TNIL) o.warmup = (int)luaL_checkinteger(L, -1);
    if (lua_getfield(L, idx, "reps") != LUA_TNIL) o.reps = (int)luaL_checkinteger(L, -1);
    lua_pop(L, 2);
  } else if (!lua_isnoneornil(L, idx)) {
    luaL_argerror(L, idx, "expected options like {warmup = 2, reps = 20}");
  }
  if (o.reps < 1 || o.reps > 1000000)
    luaL_error(L, "reps must be between 1 and 1000000, got %d", o.reps);
  if (o.warmup < 0 || o.warmup > 1000000)
    luaL_error(L, "warmup must be between 0 and 1000000, got %d", o.warmup);
  return o;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Pushes the result table for samples[0..n-1] (milliseconds). */
static void push_result(lua_State *L, double *samples, int n, const char *clock) {
  lua_createtable(L, 0, 8);
  lua_createtable(L, n, 0);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, samples[i]);
    lua_seti(L, -2, i + 1);
    sum += samples[i];
  }
  lua_setfield(L, -2, "samples");
  qsort(samples, (size_t)n, sizeof *samples, cmp_double);
  double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  bind_set_num(L, "median", median);
  bind_set_num(L, "min", samples[0]);
  bind_set_num(L, "max", samples[n - 1]);
  bind_set_num(L, "mean", sum / n);
  bind_set_int(L, "reps", n);
  bind_set_str(L, "unit", "ms");
  bind_set_str(L, "clock", clock);
  luaL_setmetatable(L, "cudalab.TimeResult");
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void call_fn(lua_State *L) {
  lua_pushvalue(L, 1);
  lua_call(L, 0, 0);
}

/* Events are userdata-owned so that an error inside fn cannot leak them. */
typedef struct event_pair {
  const cl_backend *be;
  cl_event *start, *stop;
} event_pair;

static int events_gc(lua_State *L) {
  event_pair *e = lua_touserdata(L, 1);
  if (e->be) {
    e->be->event_destroy(e->start);
    e->be->event_destroy(e->stop);
  }
  e->start = e->stop = NULL;
  return 0;
}

static event_pair *push_events(lua_State *L, const cl_backend *be) {
  event_pair *e = lua_newuserdatauv(L, sizeof *e, 0);
  memset(e, 0, sizeof *e);
  if (luaL_newmetatable(L, "cudalab.EventPair")) {
    lua_pushcfunction(L, events_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  e->be = be;
  cl_err err;
  if (be->event_create(&e->start, &err) || be->event_create(&e->stop, &err)) rt_raise(L, &err);
  return e;
}

/* Modelled time: events give the model's clock; the host clock times the simulation. */
static int time_modelled(lua_State *L, const cl_backend *be) {
  time_opts o = check_opts(L, 2, 0, 1);
  double *samples = lua_newuserdatauv(L, sizeof(double) * 2 * (size_t)o.reps, 0);
  double *host = samples + o.reps;
  event_pair *ev = push_events(L, be);
  cl_err err;
  for (int i = 0; i < o.warmup; i++) call_fn(L);
  rt_sync(L);
  unsigned long long before = bind_sim_launches();
  for (int i = 0; i < o.reps; i++) {
    float ms = 0;
    double t0 = now_ms();
    if (be->event_record(ev->start, &err)) rt_raise(L, &err);
    call_fn(L);
    rt_sync(L);
    if (be->event_record(ev->stop, &err)) rt_raise(L, &err);
    host[i] = now_ms() - t0;
    if (be->event_elapsed_ms(ev->start, ev->stop, &ms, &err)) rt_raise(L, &err);
    samples[i] = ms;
  }
  push_result(L, samples, o.reps, "model");
  push_result(L, host, o.reps, "sim");
  lua_setfield(L, -2, "sim_ms");
  lua_pushstring(L, bind_sim_device_name());
  lua_setfield(L, -2, "device");
  if (bind_sim_push_model(L, before)) lua_setfield(L, -2, "model");
  return 1;
}

static int cuda_time(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  const cl_backend *be = rt_backend(L);
  int clock = be->event_clock ? be->event_clock() : CL_CLOCK_GPU;
  if (clock == CL_CLOCK_MODEL) return time_modelled(L, be);
  time_opts o = check_opts(L, 2, 2, 20);
  double *samples = lua_newuserdatauv(L, sizeof(double) * (size_t)o.reps, 0);
  int host_clock = clock == CL_CLOCK_HOST; /* none: the event calls say "no GPU" */
  event_pair *ev = host_clock ? NULL : push_events(L, be);
  cl_err err;
  for (int i = 0; i < o.warmup; i++) call_fn(L);
  rt_sync(L);
  for (int i = 0; i < o.reps; i++) {
    if (host_clock) {
      double t0 = now_ms();
      call_fn(L);
      rt_sync(L);
      samples[i] = now_ms() - t0;
      continue;
    }
    float ms = 0;
    if (be->event_record(ev->start, &err)) rt_raise(L, &err);
    call_fn(L);
    if (be->event_record(ev->stop, &err)) rt_raise(L, &err);
    rt_sync(L);
    if (be->event_elapsed_ms(ev->start, ev->stop, &ms, &err)) rt_raise(L, &err);
    samples[i] = ms;
  }
  push_result(L, samples, o.reps, host_clock ? be->name : "gpu");
  return 1;
}

static int cpu_time(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  time_opts o = check_opts(L, 2, 1, 5);
  double *samples = lua_newuserdatauv(L, sizeof(double) * (size_t)o.reps, 0);
  for (int i = 0; i < o.warmup; i++) call_fn(L);
  for (int i = 0; i < o.reps; i++) {
    double t0 = now_ms();
    call_fn(L);
    samples[i] = now_ms() - t0;
  }
  push_result(L, samples, o.reps, "cpu");
  return 1;
}

/* Returns {time = cuda_time}; bind_cuda.c merges it into cuda. Registers the cpu module. */
int luaopen_cudalab_time(lua_State *L) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, cpu_time);
  lua_setfield(L, -2, "time");
  lua_setglobal(L, "cpu");
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, cuda_time);
  lua_setfield(L, -2, "time");
  return 1;
}
