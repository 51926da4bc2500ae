/* bind_limits.c: what a class caps per learner (cuda.limits) and how a session gets its place on
 * a shared GPU (cuda.gpu_admit). A class's settings (lua/class/classroom.lua) call both at
 * start-up.
 *
 * Stance: limits only tighten. Once set, a limit may be lowered but never raised or removed, so
 * that a learner cannot lift the class's caps from the prompt; the class sets them before the
 * learner types anything. A call is checked whole before anything changes: a bad second key
 * leaves the first unset. The memory limit counts the device memory of arrays (rt_alloc_device,
 * runtime.c), on every backend alike; pinned host buffers are host memory and do not count. The
 * kernel time limit is the backends' to enforce (cl_backend.set_kernel_time_limit). */
#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "runtime.h"

#define MEMORY_MAX 0x1p62       /* bytes: beyond any device, and exact in a double */
#define KERNEL_TIME_MAX 604800.0 /* seconds: a week, as a class's kernel_time_limit allows */
#define SESSIONS_MAX 100000      /* as a class's gpu_sessions_max allows */

/* One requested limit: absent (nil: unchanged), removed (false), or a value. */
typedef struct wish {
  int given;    /* the key was there */
  int remove;   /* it was false */
  double value; /* else its value, checked */
} wish;

/* Raises for any key of the table at t that is not in keys (a NULL-ended list), naming them. */
static void check_keys(lua_State *L, int t, const char *fn, const char *const *keys,
                       const char *list) {
  for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1)) {
    int known = 0;
    for (int i = 0; keys[i] && lua_type(L, -2) == LUA_TSTRING; i++)
      known |= strcmp(lua_tostring(L, -2), keys[i]) == 0;
    if (!known)
      luaL_error(L, "%s: unknown key '%s' (the keys are %s)", fn, luaL_tolstring(L, -2, NULL),
                 list);
  }
}

/* t[key] as a wish: a number greater than zero and at most `most`, whole when `whole`; false;
 * or nil. `unit` names what the number counts ("bytes", "seconds") in messages. */
static wish check_wish(lua_State *L, int t, const char *key, const char *unit, int whole,
                       double most) {
  wish w = {0, 0, 0};
  int type = lua_getfield(L, t, key);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return w;
  }
  w.given = 1;
  if (type == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    w.remove = 1;
    lua_pop(L, 1);
    return w;
  }
  if (type != LUA_TNUMBER)
    luaL_error(L, "cuda.limits: %s must be a number of %s (or false for no limit), got %s", key,
               unit, luaL_typename(L, -1));
  double v = lua_tonumber(L, -1);
  if (isnan(v))
    luaL_error(L, "cuda.limits: %s is NaN; it must be a number of %s greater than zero", key,
               unit);
  if (v <= 0)
    luaL_error(L, "cuda.limits: %s must be greater than zero, got %s", key,
               luaL_tolstring(L, -1, NULL));
  if (v > most || (whole && v != floor(v)))
    luaL_error(L, "cuda.limits: %s must be %s%s, at most %s, got %s", key,
               whole ? "a whole number of " : "a number of ", unit,
               whole ? "2^62" : "a week (604800 s)", luaL_tolstring(L, -1, NULL));
  w.value = v;
  lua_pop(L, 1);
  return w;
}

/* Raises unless w keeps the limit `now` (0: none) where it is or lowers it. */
static void check_tightens(lua_State *L, const wish *w, double now, const char *what,
                           const char *now_text) {
  if (!w->given || now <= 0) return;
  if (w->remove || w->value > now)
    luaL_error(L, "cuda.limits: the %s limit is %s for this session and can only be lowered",
               what, now_text);
}

static void push_limits(lua_State *L) {
  lua_createtable(L, 0, 3);
  if (rt.mem_limit) bind_set_int(L, "memory", (lua_Integer)rt.mem_limit);
  if (rt.kernel_time_limit > 0) bind_set_num(L, "kernel_time", rt.kernel_time_limit);
  bind_set_int(L, "memory_in_use", (lua_Integer)rt.mem_in_use);
}

/* t.by: nil, or "class" when a class sets the limits (its messages then speak of the class).
 * Any other value is refused, naming the one there is. */
static int check_by(lua_State *L, int t) {
  int type = lua_getfield(L, t, "by");
  int cls = type == LUA_TSTRING && strcmp(lua_tostring(L, -1), "class") == 0;
  if (type != LUA_TNIL && !cls)
    luaL_error(L, "cuda.limits: by must be \"class\" (a class sets these limits) or left out, "
               "got %s", luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return cls;
}

/* cuda.limits([{memory = bytes, kernel_time = seconds, by = "class"}]) -> {memory, kernel_time,
 * memory_in_use}: sets the limits given (false asks for none, which only an unset limit
 * allows), then returns those in force and the device memory arrays hold. by = "class" says a
 * class set them, for the wording of the message an array past the limit gets. */
static int lim_limits(lua_State *L) {
  static const char *const keys[] = {"memory", "kernel_time", "by", NULL};
  if (!lua_isnoneornil(L, 1)) {
    if (!lua_istable(L, 1))
      return luaL_error(L, "cuda.limits: expected a table such as {memory = 2 * 2^30, "
                        "kernel_time = 2}, got %s", luaL_typename(L, 1));
    check_keys(L, 1, "cuda.limits", keys, "memory, kernel_time and by");
    int by_class = check_by(L, 1);
    wish mem = check_wish(L, 1, "memory", "bytes", 1, MEMORY_MAX);
    wish kt = check_wish(L, 1, "kernel_time", "seconds", 0, KERNEL_TIME_MAX);
    char mem_text[32], kt_text[32];
    check_tightens(L, &mem, (double)rt.mem_limit, "memory",
                   cl_bytes_text(mem_text, sizeof mem_text, (double)rt.mem_limit));
    check_tightens(L, &kt, rt.kernel_time_limit, "kernel time",
                   cl_seconds_text(kt_text, sizeof kt_text, rt.kernel_time_limit));
    if (mem.given && !mem.remove) {
      rt.mem_limit = (size_t)mem.value;
      rt.mem_limit_class = by_class; /* whoever set the limit in force words its message */
    }
    if (kt.given && !kt.remove) rt_set_kernel_time_limit(kt.value, by_class);
  }
  push_limits(L);
  return 1;
}

/* An optional whole number of at least `least` and at most `most`, or dflt when nil. */
static lua_Integer opt_whole(lua_State *L, int t, const char *key, lua_Integer least,
                             lua_Integer most, lua_Integer dflt, const char *what) {
  int type = lua_getfield(L, t, key), ok = 0;
  lua_Integer v = type == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return dflt;
  }
  if (!ok || v < least || v > most)
    luaL_error(L, "cuda.gpu_admit: %s must be %s, got %s", key, what, luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return v;
}

/* cuda.gpu_admit{key = "class", sessions_max = n, memory_needed = bytes} -> {ok = true, device,
 * free, total, sessions, slot, pci [, note]} or {ok = false, why}: a GPU and a session slot on
 * it, for the life of the process, without creating a CUDA context (backend_gpu_admit). It does
 * not switch backends: the caller does (cuda.use), on either answer. */
static int lim_gpu_admit(lua_State *L) {
  static const char *const keys[] = {"key", "sessions_max", "memory_needed", NULL};
  if (!lua_istable(L, 1))
    return luaL_error(L, "cuda.gpu_admit: expected a table such as {key = \"class\", "
                      "sessions_max = 30, memory_needed = 2 * 2^30}, got %s", luaL_typename(L, 1));
  check_keys(L, 1, "cuda.gpu_admit", keys, "key, sessions_max and memory_needed");
  cl_gpu_request req = {0};
  if (lua_getfield(L, 1, "key") != LUA_TSTRING || lua_rawlen(L, -1) == 0 ||
      strlen(lua_tostring(L, -1)) != lua_rawlen(L, -1))
    return luaL_error(L, "cuda.gpu_admit: key must be a non-empty string naming the class "
                      "(its sessions share the GPU's slots), got %s",
                      lua_type(L, -1) == LUA_TSTRING ? "an empty string" : luaL_typename(L, -1));
  req.key = lua_tostring(L, -1); /* stays on the stack, so stays alive */
  req.sessions_max = (int)opt_whole(L, 1, "sessions_max", 1, SESSIONS_MAX, 0,
                                    "a whole number of sessions, 1 or more");
  req.memory_needed = (size_t)opt_whole(L, 1, "memory_needed", 0, (lua_Integer)1 << 62, 0,
                                        "a whole number of bytes, 0 or more");
  cl_gpu_admission a;
  backend_gpu_admit(&req, &a);
  lua_createtable(L, 0, 8);
  bind_set_bool(L, "ok", a.ok);
  if (!a.ok) {
    bind_set_str(L, "why", a.why);
    return 1;
  }
  bind_set_int(L, "device", a.device);
  bind_set_int(L, "slot", a.slot);
  bind_set_str(L, "pci", a.pci);
  if (a.sessions >= 0) bind_set_int(L, "sessions", a.sessions);
  if (a.free_known) {
    bind_set_int(L, "free", (lua_Integer)a.free);
    bind_set_int(L, "total", (lua_Integer)a.total);
  }
  if (a.why[0]) bind_set_str(L, "note", a.why);
  return 1;
}

/* cuda._lesson(fn, ...) -> fn's results: runs fn as lesson code (the lesson engine's examples,
 * reference solutions and checks): while it runs, a launch of a kernel that lesson code compiled
 * from a string or from cudalab's kernels/ is not held to the kernel time limit (bind_kernel.c),
 * since the limit is for the learner's kernels, and a lesson's example sized for a GPU takes
 * longer on a slow simulator. The learner's own kernels stay held to it. fn's error is raised
 * again once the depth is put back. Not a wall against the learner, who at the prompt may call it
 * as any other function: grading on the simulator holds every launch to the task's CPU time
 * instead (lua/class/grade_worker.lua), and its sandbox has no cuda._lesson. */
static int lim_lesson(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  rt.lesson_code++;
  int rc = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  rt.lesson_code--;
  if (rc != LUA_OK) return lua_error(L);
  return lua_gettop(L);
}

/* Returns a table of the functions; bind_cuda.c merges it into the cuda module. */
int luaopen_cudalab_limits(lua_State *L) {
  static const luaL_Reg functions[] = {
      {"limits", lim_limits},
      {"gpu_admit", lim_gpu_admit},
      {"_lesson", lim_lesson},
      {NULL, NULL},
  };
  luaL_newlib(L, functions);
  return 1;
}
