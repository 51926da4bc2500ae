/* bind_stream.c: streams, events and timelines for Lua: cuda.stream(), cuda.event([s]) and
 * cuda._timeline(fn), which lua/visual/timeline.lua wraps as cuda.timeline.
 *
 * Stance: a stream is a queue the learner names, and everything else stays as it was: work
 * given no stream goes to the default stream, which behaves exactly as before. Streams and
 * events are userdata created released, then acquired, with one idempotent release for __gc,
 * __close and :free(), so an error half-way leaves nothing behind.
 *
 * A timeline is recorded by the bindings, not the backend: they alone know what an operation
 * was (a copy of how many bytes, pinned or not; which kernel), while the backend knows when it
 * ran (events around it on the GPU, the modelled clock on the simulator), through the span
 * calls of backend.h. The record belongs to a userdata, so a learner's function that raises
 * half-way leaks no span. Turned down: timing every operation all the time, which would add
 * two event records to every launch of every learner. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "runtime.h"
#include "stream.h"

#define EVENT_MT "cudalab.Event"
#define TRACE_MT "cudalab.Trace"

typedef struct cl_levent {
  const cl_backend *be; /* owner of ev */
  cl_event *ev;         /* NULL once released */
  int recorded;         /* recorded at least once: only then can it be waited on or timed */
} cl_levent;

/* One operation of a timeline. */
typedef struct trace_slot {
  cl_span *sp;       /* the backend's record of when it ran; owned here */
  int stream;        /* the stream's id, 0 for the default stream */
  int done;          /* trace_close filled it in: the operation was queued */
  trace_info info;   /* info.name is malloc'd (or NULL) */
} trace_slot;

/* The record of one cuda.timeline call, owned by its userdata. */
typedef struct trace_state {
  const cl_backend *be;
  cl_event *origin;  /* recorded on the default stream before the function ran: time zero */
  trace_slot *v;     /* slots, n used of cap */
  int n, cap;
} trace_state;

int stream_tracing;
static trace_state *current; /* the running timeline's record, while stream_tracing is set */
static int next_stream_id;   /* ids are never reused within a process, so a chart is unambiguous */

static int no_streams(lua_State *L, const cl_backend *be) {
  return luaL_error(L, "cannot use streams on the %s backend: no GPU found on this machine. Start "
                    "cudalab with --sim (or call cuda.use(\"sim\")) to model them on the simulator",
                    be->name);
}

/* ---- streams ------------------------------------------------------------------------------- */

static int stream_release(lua_State *L) {
  cl_lstream *st = luaL_checkudata(L, 1, STREAM_MT);
  if (st->s) st->be->stream_destroy(st->s);
  st->s = NULL;
  return 0;
}

cl_lstream *stream_check(lua_State *L, int idx, const char *what) {
  cl_lstream *st = luaL_testudata(L, idx, STREAM_MT);
  if (!st)
    luaL_error(L, "%s must be a cuda.Stream (from cuda.stream()), got %s", what,
               luaL_typename(L, idx));
  if (!st->s) luaL_error(L, "%s is cuda.Stream %d, which has been freed", what, st->id);
  if (st->be != rt_backend(L))
    luaL_error(L, "%s is cuda.Stream %d of the %s backend, but %s is active now: make a new one",
               what, st->id, st->be->name, rt.backend->name);
  return st;
}

static int cuda_stream(lua_State *L) {
  const cl_backend *be = rt_backend(L);
  if (!be->stream_create) return no_streams(L, be);
  cl_lstream *st = lua_newuserdatauv(L, sizeof *st, 0);
  memset(st, 0, sizeof *st);
  luaL_setmetatable(L, STREAM_MT);
  st->be = be;
  cl_err err;
  if (be->stream_create(&st->s, &err)) rt_raise(L, &err);
  st->id = ++next_stream_id;
  return 1;
}

static int stream_sync(lua_State *L) {
  cl_lstream *st = stream_check(L, 1, "self");
  cl_err err;
  if (st->be->stream_sync(st->s, &rt.interrupted, &err)) rt_raise(L, &err);
  lua_settop(L, 1);
  return 1;
}

static cl_levent *event_check(lua_State *L, int idx, const char *what) {
  cl_levent *e = luaL_testudata(L, idx, EVENT_MT);
  if (!e)
    luaL_error(L, "%s must be a cuda.Event (from cuda.event()), got %s", what,
               luaL_typename(L, idx));
  if (!e->ev) luaL_error(L, "%s is a cuda.Event that has been freed", what);
  if (e->be != rt_backend(L))
    luaL_error(L, "%s is a cuda.Event of the %s backend, but %s is active now", what, e->be->name,
               rt.backend->name);
  return e;
}

/* s:wait(ev): work queued on s from now on starts only once ev has happened. */
static int stream_wait(lua_State *L) {
  cl_lstream *st = stream_check(L, 1, "self");
  cl_levent *e = event_check(L, 2, "the event to wait for");
  cl_err err;
  if (st->be->stream_wait(st->s, e->ev, &err)) rt_raise(L, &err);
  lua_settop(L, 1);
  return 1;
}

static int stream_index(lua_State *L) {
  cl_lstream *st = luaL_checkudata(L, 1, STREAM_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "id") == 0) {
    lua_pushinteger(L, st->id);
    return 1;
  }
  luaL_getmetatable(L, STREAM_MT);
  lua_getfield(L, -1, "__methods");
  lua_getfield(L, -1, k);
  return 1;
}

static int stream_tostring(lua_State *L) {
  cl_lstream *st = luaL_checkudata(L, 1, STREAM_MT);
  lua_pushfstring(L, "cuda.Stream %d on %s%s", st->id, st->be->name, st->s ? "" : " (freed)");
  return 1;
}

/* ---- events -------------------------------------------------------------------------------- */

static int event_release(lua_State *L) {
  cl_levent *e = luaL_checkudata(L, 1, EVENT_MT);
  if (e->ev) e->be->event_destroy(e->ev);
  e->ev = NULL;
  return 0;
}

/* The stream at idx, or NULL (the default stream) when there is none. */
static cl_stream *opt_stream(lua_State *L, int idx) {
  return lua_isnoneornil(L, idx) ? NULL : stream_check(L, idx, "the stream")->s;
}

static void event_record(lua_State *L, cl_levent *e, int sidx) {
  cl_stream *s = opt_stream(L, sidx);
  cl_err err;
  int rc = e->be->event_record_on ? e->be->event_record_on(e->ev, s, &err)
                                  : e->be->event_record(e->ev, &err);
  if (rc) rt_raise(L, &err);
  e->recorded = 1;
}

/* cuda.event([s]): an event recorded on s (the default stream without one). */
static int cuda_event(lua_State *L) {
  const cl_backend *be = rt_backend(L);
  if (!lua_isnoneornil(L, 1)) stream_check(L, 1, "the stream");
  lua_settop(L, 1); /* the stream, or nil, stays at 1 for event_record */
  cl_levent *e = lua_newuserdatauv(L, sizeof *e, 0);
  memset(e, 0, sizeof *e);
  luaL_setmetatable(L, EVENT_MT);
  e->be = be;
  cl_err err;
  if (be->event_create(&e->ev, &err)) rt_raise(L, &err);
  event_record(L, e, 1);
  return 1;
}

static int ev_record(lua_State *L) {
  cl_levent *e = event_check(L, 1, "self");
  event_record(L, e, 2);
  lua_settop(L, 1);
  return 1;
}

/* ev:elapsed(ev2): milliseconds from ev to ev2, waiting for ev2 to happen. */
static int ev_elapsed(lua_State *L) {
  cl_levent *a = event_check(L, 1, "self");
  cl_levent *b = event_check(L, 2, "the end event");
  float ms = 0;
  cl_err err;
  if (a->be->event_elapsed_ms(a->ev, b->ev, &ms, &err)) rt_raise(L, &err);
  lua_pushnumber(L, ms);
  return 1;
}

static int ev_tostring(lua_State *L) {
  cl_levent *e = luaL_checkudata(L, 1, EVENT_MT);
  lua_pushfstring(L, "cuda.Event on %s%s", e->be->name, e->ev ? "" : " (freed)");
  return 1;
}

/* ---- timelines ----------------------------------------------------------------------------- */

static void trace_free(trace_state *t) {
  if (t == current) {
    current = NULL;
    stream_tracing = 0;
  }
  for (int i = 0; i < t->n; i++) {
    t->be->span_free(t->v[i].sp);
    free((char *)t->v[i].info.name);
  }
  free(t->v);
  t->v = NULL;
  t->n = t->cap = 0;
  if (t->origin) t->be->event_destroy(t->origin);
  t->origin = NULL;
}

static int trace_gc(lua_State *L) {
  trace_free(luaL_checkudata(L, 1, TRACE_MT));
  return 0;
}

int trace_open(lua_State *L, cl_lstream *st) {
  trace_state *t = current;
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 64;
    trace_slot *v = realloc(t->v, (size_t)cap * sizeof *v);
    if (!v) return luaL_error(L, "out of host memory recording the timeline");
    t->v = v;
    t->cap = cap;
  }
  trace_slot *sl = &t->v[t->n];
  memset(sl, 0, sizeof *sl);
  cl_err err;
  if (t->be->span_open(&sl->sp, st ? st->s : NULL, &err)) rt_raise(L, &err);
  sl->stream = st ? st->id : 0;
  return t->n++;
}

void trace_close(lua_State *L, cl_lstream *st, int slot, const trace_info *info) {
  trace_slot *sl = &current->v[slot];
  cl_err err;
  if (current->be->span_close(sl->sp, st ? st->s : NULL, &err)) rt_raise(L, &err);
  sl->info = *info;
  sl->info.name = info->name ? strdup(info->name) : NULL;
  sl->done = 1;
}

/* A NULL string leaves the field out. */
static void set_str(lua_State *L, const char *k, const char *v) {
  if (v) bind_set_str(L, k, v);
}

/* Pushes the list of operations, each {stream, kind, dir, bytes, pinned, name, start, stop}. */
static void push_ops(lua_State *L, trace_state *t) {
  lua_createtable(L, t->n, 0);
  int k = 0;
  for (int i = 0; i < t->n; i++) {
    trace_slot *sl = &t->v[i];
    if (!sl->done) continue;
    double start = 0, stop = 0;
    cl_err err;
    if (t->be->span_read(t->origin, sl->sp, &start, &stop, &err)) rt_raise(L, &err);
    lua_createtable(L, 0, 8);
    bind_set_int(L, "stream", sl->stream);
    set_str(L, "kind", sl->info.kind);
    set_str(L, "dir", sl->info.dir);
    set_str(L, "name", sl->info.name);
    if (sl->info.dir) {
      bind_set_int(L, "bytes", (lua_Integer)sl->info.bytes);
      bind_set_bool(L, "pinned", sl->info.pinned);
    }
    bind_set_num(L, "start", start);
    bind_set_num(L, "stop", stop);
    lua_seti(L, -2, ++k);
  }
}

/* cuda._timeline(fn): runs fn with every copy and launch recorded; returns the operations and
 * the clock they were timed by ("model" or "gpu"). Waits for the device before and after. */
static int cuda_timeline_raw(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  const cl_backend *be = rt_backend(L);
  if (!be->span_open) return no_streams(L, be);
  if (be->event_clock && be->event_clock() != CL_CLOCK_MODEL)
    return luaL_error(L, "cuda.timeline on the simulator needs the timing model: "
                         "cuda.simopts{model = true}");
  if (stream_tracing)
    return luaL_error(L, "cuda.timeline is already recording: timelines cannot nest");
  trace_state *t = lua_newuserdatauv(L, sizeof *t, 0);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, TRACE_MT);
  t->be = be;
  cl_err err;
  rt_sync(L);
  if (be->event_create(&t->origin, &err) || be->event_record(t->origin, &err)) rt_raise(L, &err);
  current = t;
  stream_tracing = 1;
  lua_pushvalue(L, 1);
  int rc = lua_pcall(L, 0, 0, 0);
  stream_tracing = 0;
  current = NULL;
  if (rc != LUA_OK) return lua_error(L);
  rt_sync(L);
  push_ops(L, t);
  lua_pushstring(L, be->event_clock ? "model" : "gpu");
  trace_free(t); /* its spans now, not at some later collection; __gc then finds nothing */
  return 2;
}

static const luaL_Reg stream_methods[] = {
    {"sync", stream_sync}, {"wait", stream_wait}, {"free", stream_release}, {NULL, NULL},
};
static const luaL_Reg event_methods[] = {
    {"record", ev_record}, {"elapsed", ev_elapsed}, {"free", event_release}, {NULL, NULL},
};
/* The metamethods, besides __methods and the events' __index (tables, set by hand). */
static const luaL_Reg stream_meta[] = {
    {"__index", stream_index}, {"__gc", stream_release}, {"__close", stream_release},
    {"__tostring", stream_tostring}, {NULL, NULL},
};
static const luaL_Reg event_meta[] = {
    {"__gc", event_release}, {"__close", event_release}, {"__tostring", ev_tostring},
    {NULL, NULL},
};
static const luaL_Reg trace_meta[] = {{"__gc", trace_gc}, {NULL, NULL}};

/* Returns {stream, event, _timeline}; bind_cuda.c merges it into cuda. */
int luaopen_cudalab_stream(lua_State *L) {
  luaL_newmetatable(L, STREAM_MT);
  luaL_newlib(L, stream_methods);
  lua_setfield(L, -2, "__methods");
  luaL_setfuncs(L, stream_meta, 0);
  luaL_newmetatable(L, EVENT_MT);
  luaL_newlib(L, event_methods);
  lua_setfield(L, -2, "__index");
  luaL_setfuncs(L, event_meta, 0);
  luaL_newmetatable(L, TRACE_MT);
  luaL_setfuncs(L, trace_meta, 0);
  lua_pop(L, 3);
  static const luaL_Reg functions[] = {
      {"stream", cuda_stream},
      {"event", cuda_event},
      {"_timeline", cuda_timeline_raw},
      {NULL, NULL},
  };
  luaL_newlib(L, functions);
  return 1;
}
