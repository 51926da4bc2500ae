/* bind_debugger.c: k:debug{grid, block}(args...), a launch on the simulator that stops where the
 * learner asks and gives them a prompt of its own, "(cuda-debug) ", until it ends.
 *
 * The launch runs inside this call: the simulator stops it (cl_debug_ops), calls the stop hook
 * here, and the hook runs the command loop of lua/debug/debugger.lua, which reads lines through the
 * console (rt.read_line), looks at the paused launch through the debugger object this file
 * gives it, and returns how to go on. Conditions of breakpoints are evaluated there too, per lane,
 * through the cond hook. Lua runs only under lua_pcall inside the hooks: an error must never
 * unwind through the simulator, which holds locks and memory of its own.
 *
 * The kernel is compiled again from its own source with -G, which gives the PTX the DWARF that
 * names its variables (the cache keeps that compile like any other). The arguments are checked
 * and marshalled as for an ordinary launch of the same kernel. On the GPU backend the launch runs
 * on the simulator all the same, since a GPU cannot be paused from here: the arrays it is given
 * are copied to the simulator and back, after the launch however it ended, so they hold what
 * the kernel wrote, as they would on the GPU. On the none backend nothing runs, so there is
 * nothing to debug. With commands = {lines...} in the configuration, the prompt reads those lines
 * instead of the console's, echoing each, and their end is the end of input: a lesson or a script
 * shows a debugging session that really runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "buffer.h"
#include "cache.h"
#include "kernel_sig.h"
#include "nvrtc.h"
#include "runtime.h"

#define DEBUGGER_MT "cudalab.Debugger"
#define PROMPT "(cuda-debug) "

/* An array of a GPU launch, copied to the simulator for the debugged launch. */
typedef struct mirror {
  void *gpu, *sim;
  size_t bytes;
} mirror;

/* One debugged launch. Created released, filled as the launch is set up, and released once by
 * release_state, which __gc and __close also call, so an error half-way leaks nothing. */
typedef struct dbg_state {
  const cl_backend *sim;     /* the simulator the launch runs on */
  const cl_backend *from;    /* the backend the kernel and its arrays belong to */
  const cl_debug_ops *ops;
  cl_module *mod;            /* the kernel compiled with -G, loaded on sim; NULL when released */
  cl_function *fn;           /* its kernel, owned by mod */
  cl_debug *d;               /* the debugger, during the launch */
  lua_State *L;              /* the state the hooks call into */
  int ref;                   /* this object in the registry, for the hooks, which run in whatever
                                frame of L the simulator was called from (or completion from) */
  int live;                  /* inside a hook: the launch may be looked at */
  int quit;                  /* the learner quit */
  int faulted;               /* the launch stopped at its failure: it ends with it, quit or not */
  cl_dim3 grid, block;
  mirror *mirrors;           /* nmirrors arrays copied from a GPU */
  int nmirrors;
  char kernel[128];          /* its name, for messages */
  char file[128];            /* its source file's name */
  char params[16][64];       /* its parameters' names, for the note of bind_debug_check.c */
  int nparams;
  int script_next;           /* commands = {...}: how many of its lines the prompt has read */
} dbg_state;

static void debugger_type(lua_State *L);

static void release_state(dbg_state *s) {
  if (s->L && s->ref != LUA_NOREF) luaL_unref(s->L, LUA_REGISTRYINDEX, s->ref);
  s->ref = LUA_NOREF;
  if (s->ops && s->d) s->ops->close(s->d);
  s->d = NULL;
  if (s->mod) s->sim->module_unload(s->mod);
  s->mod = NULL;
  for (int i = 0; i < s->nmirrors; i++) s->sim->release(s->mirrors[i].sim);
  free(s->mirrors);
  s->mirrors = NULL;
  s->nmirrors = 0;
}

static int debugger_gc(lua_State *L) {
  release_state(luaL_checkudata(L, 1, DEBUGGER_MT));
  return 0;
}

/* The debugger object at idx, which must be inside a stop of its launch. */
static dbg_state *live_state(lua_State *L, int idx) {
  dbg_state *s = luaL_checkudata(L, idx, DEBUGGER_MT);
  if (!s->live || !s->d) luaL_error(L, "this debugger's launch is not paused (it has ended)");
  return s;
}

/* ---- the debugger object's methods, for lua/debug/debugger.lua ---- */

static void push_dim(lua_State *L, cl_dim3 d) {
  lua_createtable(L, 0, 3);
  bind_set_int(L, "x", d.x);
  bind_set_int(L, "y", d.y);
  bind_set_int(L, "z", d.z);
}

/* s:info() -> {kernel, file, grid = {x, y, z}, block = {x, y, z}, source}; also once the
 * launch has ended */
static int s_info(lua_State *L) {
  dbg_state *s = luaL_checkudata(L, 1, DEBUGGER_MT);
  lua_createtable(L, 0, 5);
  bind_set_str(L, "kernel", s->kernel);
  bind_set_str(L, "file", s->file);
  push_dim(L, s->grid);
  lua_setfield(L, -2, "grid");
  push_dim(L, s->block);
  lua_setfield(L, -2, "block");
  lua_getiuservalue(L, 1, 2);
  lua_setfield(L, -2, "source");
  return 1;
}

static const char *const REASONS[] = {"start", "break", "step", "exited", "interrupt", "fault"};
static const char *const STATES[] = {"runs", "barrier", "exited"};

/* s:where() -> the stop: reason, bp, lanes, line, block, thread, focus_line, focus_state,
 * blocks_done, blocks_started, blocks_total, at a fault its message, and file and focus_file
 * where line and focus_line are an #include'd file's (its path) */
static int s_where(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  cl_debug_stop st;
  s->ops->where(s->d, &st);
  lua_createtable(L, 0, 12);
  int reason = st.reason >= 0 && st.reason <= CL_DBG_FAULT ? st.reason : CL_DBG_START;
  int state = st.focus_state >= 0 && st.focus_state <= 2 ? st.focus_state : CL_DBG_W_DONE;
  bind_set_str(L, "reason", REASONS[reason]);
  bind_set_int(L, "bp", st.bp);
  bind_set_int(L, "lanes", st.lanes);
  bind_set_int(L, "line", st.line);
  bind_set_int(L, "block", st.block);
  bind_set_int(L, "thread", st.thread);
  bind_set_int(L, "focus_line", st.focus_line);
  if (st.file) bind_set_str(L, "file", st.file);
  if (st.focus_file) bind_set_str(L, "focus_file", st.focus_file);
  bind_set_str(L, "focus_state", STATES[state]);
  bind_set_int(L, "blocks_done", st.blocks_done);
  bind_set_int(L, "blocks_started", st.blocks_started);
  bind_set_int(L, "blocks_total", st.blocks_total);
  if (st.reason == CL_DBG_FAULT && st.fault) bind_set_str(L, "fault", st.fault);
  return 1;
}

static void push_warp(lua_State *L, const cl_debug_warp *w) {
  lua_createtable(L, 0, 5);
  bind_set_int(L, "block", w->block);
  bind_set_int(L, "warp", w->warp);
  bind_set_str(L, "state", STATES[w->state >= 0 && w->state <= 2 ? w->state : 2]);
  bind_set_int(L, "live", w->live);
  lua_createtable(L, w->ngroups, 0);
  for (int g = 0; g < w->ngroups; g++) {
    lua_createtable(L, 0, 3);
    bind_set_int(L, "line", w->group[g].line);
    if (w->group[g].file) bind_set_str(L, "file", w->group[g].file);
    bind_set_int(L, "mask", w->group[g].mask);
    bind_set_bool(L, "running", w->group[g].running);
    lua_seti(L, -2, g + 1);
  }
  lua_setfield(L, -2, "groups");
}

/* s:warps() -> the warps of the blocks in flight: {block, warp, state, live, groups = {{line,
 * file, mask, running}}} (file as s:where's) */
static int s_warps(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  int n = s->ops->warps(s->d, NULL, 0);
  cl_debug_warp *w = lua_newuserdatauv(L, sizeof *w * (size_t)(n > 0 ? n : 1), 0);
  n = s->ops->warps(s->d, w, n);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    push_warp(L, &w[i]);
    lua_seti(L, -2, i + 1);
  }
  return 1;
}

/* s:set_break(line, has_cond) -> id | nil, why */
static int s_set_break(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  lua_Integer line = luaL_checkinteger(L, 2);
  cl_err err;
  int id = s->ops->set_break(s->d, line > 0 && line < 1 << 30 ? (int)line : 0,
                             lua_toboolean(L, 3), &err);
  if (id < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err.text);
    return 2;
  }
  lua_pushinteger(L, id);
  return 1;
}

/* The operations of a compiled condition by the names lua/debug/debugger_warp.lua gives them, in
 * CL_DC_*'s order. */
static const char *const COND_OPS[] = {
    "int", "float", "var", "tid", "bid", "cvt", "neg", "bnot", "lnot", "add", "sub", "mul", "div",
    "mod", "and", "or", "xor", "shl", "shr", "lt", "le", "gt", "ge", "eq", "ne", "land", "lor",
    "sel", NULL};
_Static_assert(sizeof COND_OPS / sizeof *COND_OPS == CL_DC_NOPS + 1, "a name for every operation");

/* The type field `key` of the operation at the top of the stack: "i4" (a signed int), "u8",
 * "f4", "b1"; raises on anything else. */
static cl_debug_ty cond_type(lua_State *L, int k, const char *key) {
  cl_debug_ty t = {0, 0, 0};
  lua_getfield(L, -1, key);
  const char *s = lua_tostring(L, -1);
  if (!s || strlen(s) != 2 || !strchr("iufb", s[0]) || !strchr("1248", s[1]))
    luaL_error(L, "operation %d of the condition: '%s' is not a type (i4, u8, f4, b1...)", k,
               s ? s : "(none)");
  t.k = s[0] == 'u' ? 'i' : s[0];
  t.size = (char)(s[1] - '0');
  t.sgn = s[0] == 'i';
  lua_pop(L, 1);
  return t;
}

/* String field `key` of the operation at the top of the stack; raises when it is not one. */
static const char *cond_str(lua_State *L, int k, const char *key) {
  lua_getfield(L, -1, key);
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  if (!s) luaL_error(L, "operation %d of the condition has no %s", k, key);
  lua_pop(L, 1); /* the string stays in the table */
  return s;
}

/* Operation k of a compiled condition, from the table at the top of the stack. */
static void cond_op(lua_State *L, int k, cl_debug_cop *o) {
  memset(o, 0, sizeof *o);
  const char *op = cond_str(L, k, "op");
  o->op = 0;
  while (COND_OPS[o->op] && strcmp(COND_OPS[o->op], op)) o->op++;
  if (!COND_OPS[o->op]) luaL_error(L, "operation %d: '%s' is not an operation", k, op);
  o->t = cond_type(L, k, "t");
  if (o->op == CL_DC_CVT) o->from = cond_type(L, k, "from");
  lua_getfield(L, -1, "v");
  int isnum = lua_isnumber(L, -1);
  if ((o->op == CL_DC_INT || o->op == CL_DC_TID || o->op == CL_DC_BID) && !lua_isinteger(L, -1))
    luaL_error(L, "operation %d (%s) needs an integer v", k, op);
  if (o->op == CL_DC_FLOAT && !isnum) luaL_error(L, "operation %d (float) needs a number v", k);
  if (o->op == CL_DC_INT) o->i = lua_tointeger(L, -1);
  if (o->op == CL_DC_FLOAT) o->f = lua_tonumber(L, -1);
  if (o->op == CL_DC_TID || o->op == CL_DC_BID) {
    lua_Integer w = lua_tointeger(L, -1);
    o->which = w >= 0 && w <= 2 ? (int)w : -1; /* the simulator refuses -1 */
  }
  lua_pop(L, 1);
  if (o->op == CL_DC_VAR) {
    snprintf(o->name, sizeof o->name, "%s", cond_str(L, k, "name"));
    snprintf(o->type, sizeof o->type, "%s", cond_str(L, k, "type"));
  }
}

/* s:set_cond(id, program) -> true | nil, why: breakpoint id's condition compiled for a whole
 * warp (lua/debug/debugger_warp.lua makes the program: a list of {op, t, from, v, name, type}); an
 * empty list takes it away. Raises on an operation that is not one. */
static int s_set_cond(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 3);
  luaL_argcheck(L, n >= 0 && n <= 4096, 3, "a condition has at most 4096 operations");
  cl_debug_cop *ops = lua_newuserdatauv(L, sizeof *ops * (size_t)(n > 0 ? n : 1), 0);
  for (lua_Integer k = 1; k <= n; k++) {
    if (lua_geti(L, 3, k) != LUA_TTABLE)
      return luaL_error(L, "operation %d of the condition is not a table", (int)k);
    cond_op(L, (int)k, &ops[k - 1]);
    lua_pop(L, 1);
  }
  cl_err err;
  if (id <= 0 || id >= 1 << 30 ||
      s->ops->set_cond(s->d, (int)id, ops, (int)n, &err) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, id <= 0 || id >= 1 << 30 ? "there is no such breakpoint" : err.text);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* s:delete_break(id) -> true | false */
static int s_delete_break(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  lua_Integer id = luaL_checkinteger(L, 2);
  lua_pushboolean(L, id > 0 && id < 1 << 30 && s->ops->delete_break(s->d, (int)id) == 0);
  return 1;
}

/* s:resume(how): "run", "step", "next", "finish" or "until" */
static int s_resume(lua_State *L) {
  static const char *const HOW[] = {"run", "step", "next", "finish", "until", NULL};
  dbg_state *s = live_state(L, 1);
  s->ops->resume(s->d, luaL_checkoption(L, 2, "run", HOW)); /* in CL_DBG_RUN's order */
  return 0;
}

/* s:frames([block, thread]) -> {{func, line, file, kernel}, ...}: the call stack of that thread
 * (the focus by default), innermost first; file as s:where's */
static int s_frames(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  cl_debug_stop st;
  s->ops->where(s->d, &st);
  long long block = luaL_optinteger(L, 2, st.block);
  lua_Integer t = luaL_optinteger(L, 3, st.thread);
  cl_debug_frame f[66];
  int n = s->ops->frames(s->d, block, t >= 0 && t < 1 << 30 ? (int)t : -1, f, 66);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n && i < 66; i++) {
    lua_createtable(L, 0, 3);
    bind_set_str(L, "func", f[i].func);
    bind_set_int(L, "line", f[i].line);
    if (f[i].file) bind_set_str(L, "file", f[i].file);
    lua_pushboolean(L, f[i].is_kernel);
    lua_setfield(L, -2, "kernel");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* s:select(n) -> true | nil, why */
static int s_select(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  lua_Integer n = luaL_checkinteger(L, 2);
  cl_err err;
  if (s->ops->select(s->d, n >= 0 && n < 1 << 30 ? (int)n : -1, &err) == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_pushstring(L, err.text);
  return 2;
}

/* s:func_line(name) -> line (0: the function has no line information) | nil */
static int s_func_line(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  int line = 0;
  if (s->ops->func_line(s->d, luaL_checkstring(L, 2), &line) < 0) return 0;
  lua_pushinteger(L, line);
  return 1;
}

static unsigned coord(lua_State *L, int idx) {
  lua_Integer v = luaL_checkinteger(L, idx);
  return v < 0 || v > 0xffffffffLL ? 0xffffffffu : (unsigned)v;
}

/* s:focus(bx, by, bz, tx, ty, tz) -> true | nil, why */
static int s_focus(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  cl_dim3 b = {coord(L, 2), coord(L, 3), coord(L, 4)}, t = {coord(L, 5), coord(L, 6), coord(L, 7)};
  cl_err err;
  if (s->ops->focus(s->d, b, t, &err) == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_pushstring(L, err.text);
  return 2;
}

/* One element of a value, as Lua holds it. */
static void push_elem(lua_State *L, const cl_debug_value *v, uint64_t bits) {
  int sh = v->size > 0 && v->size < 8 ? 64 - 8 * v->size : 0;
  int is_signed = v->enc == CL_DV_SIGNED || (v->enc == CL_DV_CHAR && !strstr(v->type, "unsigned"));
  if (v->enc == CL_DV_FLOAT && v->size == 4) {
    float f;
    uint32_t u = (uint32_t)bits;
    memcpy(&f, &u, 4);
    lua_pushnumber(L, f);
  } else if (v->enc == CL_DV_FLOAT && v->size == 8) {
    double f;
    memcpy(&f, &bits, 8);
    lua_pushnumber(L, f);
  } else if (v->enc == CL_DV_BOOL) {
    lua_pushboolean(L, bits != 0);
  } else if (is_signed) {
    lua_pushinteger(L, (lua_Integer)((int64_t)(bits << sh) >> sh));
  } else if (v->enc == CL_DV_UNSIGNED || v->enc == CL_DV_CHAR || v->enc == CL_DV_POINTER ||
             (v->enc == CL_DV_OTHER && v->size > 0 && v->size <= 8)) {
    lua_pushinteger(L, (lua_Integer)bits); /* a small structure or a half: its bits, which the
                                              front end lays out by its type */
  } else {
    lua_pushnil(L);
  }
}

static const char *const ENCODINGS[] = {"none", "int", "unsigned", "float", "bool", "char",
                                        "pointer", "other"};

/* s:read(name, block, thread) -> value, type, kind, count, address, size | nil, why. An
 * array's value is a table of its first elements (count says how many it has); address is
 * where it lies in the thread's memory (nil in a register), through which s:mem reads the rest
 * of an array or a structure's bytes; size is one element's bytes. */
static int s_read(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  const char *name = luaL_checkstring(L, 2);
  lua_Integer b = luaL_checkinteger(L, 3), t = luaL_checkinteger(L, 4);
  cl_debug_value v;
  cl_err err;
  if (t < 0 || t > 1 << 20 || s->ops->read(s->d, b, (int)t, name, &v, &err) < 0) {
    lua_pushnil(L);
    lua_pushstring(L, t < 0 || t > 1 << 20 ? "no such thread" : err.text);
    return 2;
  }
  if (v.count > 1) {
    lua_createtable(L, v.shown, 0);
    for (int i = 0; i < v.shown; i++) {
      push_elem(L, &v, v.bits[i]);
      lua_seti(L, -2, i + 1);
    }
  } else {
    push_elem(L, &v, v.bits[0]);
  }
  lua_pushstring(L, v.type);
  lua_pushstring(L, ENCODINGS[v.enc >= 0 && v.enc <= CL_DV_OTHER ? v.enc : CL_DV_OTHER]);
  lua_pushinteger(L, v.count);
  if (v.addr) lua_pushinteger(L, (lua_Integer)v.addr);
  else lua_pushnil(L);
  lua_pushinteger(L, v.size);
  return 6;
}

/* s:mem(address, bytes, block, thread) -> a string of those bytes | nil, why. At most
 * DBG_MEM_MAX bytes (x/4096g reads 32 KiB), which lua/debug/debugger.lua asks no more than. */
#define DBG_MEM_MAX (1 << 20)
static int s_mem(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  lua_Integer a = luaL_checkinteger(L, 2), n = luaL_checkinteger(L, 3);
  lua_Integer b = luaL_checkinteger(L, 4), t = luaL_checkinteger(L, 5);
  luaL_argcheck(L, n > 0 && n <= DBG_MEM_MAX, 3, "between 1 and 1048576 bytes");
  luaL_Buffer buf;
  char *p = luaL_buffinitsize(L, &buf, (size_t)n);
  cl_err err;
  if (t < 0 || t > 1 << 20 || s->ops->mem(s->d, b, (int)t, (uint64_t)a, p, (size_t)n, &err)) {
    lua_pushnil(L);
    lua_pushstring(L, t < 0 || t > 1 << 20 ? "no such thread" : err.text);
    return 2;
  }
  luaL_pushresultsize(&buf, (size_t)n);
  return 1;
}

/* s:shared(name) -> address, bytes | nil: a __shared__ variable of the kernel */
static int s_shared(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  const char *name = luaL_checkstring(L, 2);
  uint64_t a, n;
  if (s->ops->shared(s->d, name, &a, &n) < 0) return 0;
  lua_pushinteger(L, (lua_Integer)a);
  lua_pushinteger(L, (lua_Integer)n);
  return 2;
}

/* s:global(name) -> address, bytes, "__constant__" | "__device__" | nil: a module-scope variable
 * of the source, whose bytes s:mem reads */
static int s_global(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  const char *name = luaL_checkstring(L, 2);
  uint64_t a, n;
  int is_const;
  if (!s->ops->global || s->ops->global(s->d, name, &a, &n, &is_const) < 0) return 0;
  lua_pushinteger(L, (lua_Integer)a);
  lua_pushinteger(L, (lua_Integer)n);
  lua_pushstring(L, is_const ? "__constant__" : "__device__");
  return 3;
}

/* s:names(block, thread) -> the variables in scope there */
static int s_names(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  lua_Integer b = luaL_checkinteger(L, 2), t = luaL_checkinteger(L, 3);
  const char *names[256];
  int n = t < 0 || t > 1 << 20 ? 0 : s->ops->names(s->d, b, (int)t, names, 256);
  if (n > 256) n = 256;
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_seti(L, -2, i + 1);
  }
  return 1;
}

/* Tab at the debugger's prompt: debugger.complete(d, word), a list of strings, packed as
 * the console wants them. Runs inside read_line, so within a stop. */
static char *complete_word(const char *word, size_t *len, void *ud) {
  dbg_state *s = ud;
  lua_State *L = s->L;
  *len = 0;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref);
  lua_getiuservalue(L, -1, 1);
  lua_getfield(L, -1, "complete");
  lua_pushvalue(L, -3);
  lua_pushstring(L, word);
  char *buf = NULL;
  if (lua_pcall(L, 2, 1, 0) == LUA_OK && lua_istable(L, -1)) {
    size_t cap = 0;
    for (lua_Integer i = 1; lua_geti(L, -1, i) == LUA_TSTRING; i++) {
      size_t n;
      const char *c = lua_tolstring(L, -1, &n);
      char *nb = realloc(buf, cap + n + 1);
      if (!nb) break;
      buf = nb;
      memcpy(buf + cap, c, n + 1);
      cap += n + 1;
      lua_pop(L, 1);
    }
    *len = cap;
  }
  lua_settop(L, top);
  return buf;
}

/* s:readline(prompt) -> line | line, "script" | nil, "eof" | "interrupted"; "script": the line
 * is the next of the launch's commands = {...} (uservalue 3), which the caller echoes. */
static int s_readline(lua_State *L) {
  dbg_state *s = live_state(L, 1);
  const char *prompt = luaL_optstring(L, 2, PROMPT);
  int status;
  if (lua_getiuservalue(L, 1, 3) == LUA_TTABLE) {
    if (lua_geti(L, -1, ++s->script_next) == LUA_TSTRING) {
      lua_pushliteral(L, "script");
      return 2;
    }
    lua_pushnil(L);
    lua_pushliteral(L, "eof");
    return 2;
  }
  lua_pop(L, 1);
  if (!rt.read_line) {
    lua_pushnil(L);
    lua_pushliteral(L, "eof");
    return 2;
  }
  char *line = rt.read_line(L, prompt, complete_word, s, &status);
  if (!line) {
    lua_pushnil(L);
    lua_pushstring(L, status == RT_LINE_INTERRUPTED ? "interrupted" : "eof");
    return 2;
  }
  lua_pushstring(L, line);
  free(line);
  return 1;
}

/* ---- the hooks: the simulator calls them, they call lua/debug/debugger.lua ---- */

/* Calls debugger[fn](d, ...) with the nargs values on top of the stack, in protected mode;
 * leaves one result, or returns -1 with the error message printed. */
static int call_lua(dbg_state *s, const char *fn, int nargs) {
  lua_State *L = s->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref);
  lua_getiuservalue(L, -1, 1);
  lua_getfield(L, -1, fn);
  lua_rotate(L, -3, 1); /* fn, the object, module */
  lua_pop(L, 1);
  lua_rotate(L, -2 - nargs, 2);
  if (lua_pcall(L, nargs + 1, 1, 0) == LUA_OK) return 0;
  fflush(stdout);
  fprintf(stderr, "debugger: %s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error)");
  fflush(stderr);
  lua_pop(L, 1);
  return -1;
}

/* A stop: the command loop until it says how to go on. A Ctrl-C that stopped the launch armed
 * the interrupt hook, which is dropped here, or the loop would end as soon as it began; one
 * pressed while the loop runs ends that round of it, and the prompt comes back. */
static int hook_stop(cl_debug *d, void *ud) {
  dbg_state *s = ud;
  lua_State *L = s->L;
  cl_debug_stop st;
  s->ops->where(d, &st);
  s->faulted |= st.reason == CL_DBG_FAULT;
  if (st.reason == CL_DBG_INTERRUPT || rt.interrupted) {
    lua_sethook(L, NULL, 0, 0);
    rt.interrupted = 0;
  }
  s->live = 1;
  int rc = 0;
  for (;;) {
    int top = lua_gettop(L);
    if (call_lua(s, "stop", 0) == 0) {
      const char *how = lua_tostring(L, -1);
      s->quit = !how || strcmp(how, "quit") == 0;
      rc = s->quit ? -1 : 0;
      lua_settop(L, top);
      break;
    }
    lua_settop(L, top);
    if (!rt.interrupted) { /* a fault of the debugger itself: do not loop on it */
      s->quit = 1;
      rc = -1;
      break;
    }
    lua_sethook(L, NULL, 0, 0);
    rt.interrupted = 0;
  }
  s->live = 0;
  return rc;
}

/* A breakpoint with a condition was reached: debugger.cond says for which lanes it holds. An
 * error there stops at the lane where it happened (debugger.cond), or at every lane when the
 * front end itself fails, which is where the learner can see the message and fix it. */
static uint32_t hook_cond(cl_debug *d, int bp, long long block, int warp, uint32_t lanes,
                          void *ud) {
  (void)d;
  dbg_state *s = ud;
  lua_State *L = s->L;
  int top = lua_gettop(L);
  lua_pushinteger(L, bp);
  lua_pushinteger(L, block);
  lua_pushinteger(L, warp);
  lua_pushinteger(L, lanes);
  s->live = 1;
  uint32_t hold = lanes;
  if (call_lua(s, "cond", 4) == 0 && lua_isinteger(L, -1)) hold = (uint32_t)lua_tointeger(L, -1);
  s->live = 0;
  lua_settop(L, top);
  return hold & lanes;
}

/* About once a second while the launch runs: debugger.progress prints where it is. */
static void hook_progress(cl_debug *d, long long block, int warp, int line, void *ud) {
  (void)d;
  dbg_state *s = ud;
  lua_State *L = s->L;
  int top = lua_gettop(L);
  lua_pushinteger(L, block);
  lua_pushinteger(L, warp);
  lua_pushinteger(L, line);
  s->live = 1;
  call_lua(s, "progress", 3);
  s->live = 0;
  lua_settop(L, top);
}

/* ---- setting the launch up ---- */

/* The kernels a scan of the source found, owned by a userdata so that an error leaks none. */
typedef struct sigs_hold {
  sig_kernel *k;
  int n;
} sigs_hold;

static int sigs_hold_gc(lua_State *L) {
  sigs_hold *h = lua_touserdata(L, 1);
  sig_free(h->k, h->n);
  h->k = NULL;
  h->n = 0;
  return 0;
}

/* The kernel's NVRTC name expression and its parameters' names, from its source: what the
 * scanner says of the kernel of that name, else the name itself (a kernel the learner named by
 * a form only NVRTC knows). Pushes a userdata that owns what it found; *sig may be NULL. */
static void find_signature(lua_State *L, const bind_kernel_origin *o, const char **expr,
                           const sig_kernel **sig) {
  sigs_hold *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->k = NULL;
  h->n = 0;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, sigs_hold_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  int n = sig_find_kernels(o->source, &h->k);
  h->n = n > 0 ? n : 0;
  *expr = o->name;
  *sig = NULL;
  for (int i = 0; i < h->n; i++)
    if (!h->k[i].is_template && sig_same_name(h->k[i].name, o->name)) {
      *expr = h->k[i].expr;
      *sig = &h->k[i];
    }
}

/* Compiles the kernel's source again with -G for the simulator and loads it there (s->mod,
 * s->fn). Raises on a compile or load error. */
static void load_debug_build(lua_State *L, dbg_state *s, int kidx) {
  bind_kernel_origin o;
  bind_kernel_origin_of(L, kidx, &o);
  const char *expr;
  const sig_kernel *sig;
  find_signature(L, &o, &expr, &sig);
  const char *options[BIND_MAX_OPTIONS + 1];
  int n = 0, has_g = 0;
  for (int i = 0; i < o.noptions; i++) {
    has_g |= strcmp(o.options[i], "-G") == 0;
    options[n++] = o.options[i];
  }
  if (!has_g) options[n++] = "-G";
  nvrtc_output out;
  char *errmsg = NULL;
  if (cache_compile(o.source, o.path, s->sim->target_arch(), options, n, &expr, 1, &out,
                    &errmsg) != 0) {
    lua_pushfstring(L, "compile error (compiling %s with -G for the debugger)\n%s", o.file_name,
                    errmsg ? errmsg : "(no message)");
    free(errmsg);
    lua_error(L);
  }
  cl_image img = {out.ptx, out.ptx_len, NULL, 0};
  cl_err err;
  const char *lowered = out.nnames > 0 && out.lowered[0][0] ? out.lowered[0] : o.lowered;
  int rc = s->sim->module_load(&img, &s->mod, &err);
  if (rc == 0) rc = s->sim->function(s->mod, lowered, &s->fn, &err);
  nvrtc_output_free(&out);
  if (rc != 0) luaL_error(L, "%s", err.text);
  snprintf(s->kernel, sizeof s->kernel, "%s", o.name);
  snprintf(s->file, sizeof s->file, "%s", o.file_name);
  const char *names[64];
  int np = sig && sig->nparams > 0 ? (sig->nparams < 64 ? sig->nparams : 64) : 0;
  for (int i = 0; i < np; i++) names[i] = sig->params[i].name;
  s->nparams = np < 16 ? np : 16;
  for (int i = 0; i < s->nparams; i++)
    snprintf(s->params[i], sizeof s->params[i], "%s", names[i] ? names[i] : "");
  if (s->sim->source_names) s->sim->source_names(s->fn, o.name, names, np);
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref);
  lua_pushstring(L, o.source); /* for `list`: kept as uservalue 2 */
  lua_setiuservalue(L, -2, 2);
  lua_pop(L, 1);
  lua_pop(L, 1); /* the signatures */
}

/* On the GPU: each array among the arguments first..first+n-1 is copied to the simulator and its
 * argument pointed at the copy. Raises when memory runs out. */
static void mirror_arrays(lua_State *L, dbg_state *s, int first, int n, void **args) {
  s->mirrors = calloc((size_t)(n > 0 ? n : 1), sizeof *s->mirrors);
  if (!s->mirrors) luaL_error(L, "out of host memory for the debugger");
  for (int i = 0; i < n; i++) {
    cl_buf *b = buf_test(L, first + i);
    if (!b || b->where != BUF_DEVICE || !b->ptr) continue;
    int k = 0; /* an array passed twice is one array there too */
    while (k < s->nmirrors && s->mirrors[k].gpu != b->ptr) k++;
    if (k < s->nmirrors) {
      memcpy(args[i], &s->mirrors[k].sim, sizeof s->mirrors[k].sim);
      continue;
    }
    mirror *m = &s->mirrors[s->nmirrors];
    m->gpu = b->ptr;
    m->bytes = b->n * dtype_table[b->dtype].size;
    cl_err err;
    if (s->sim->alloc(&m->sim, m->bytes ? m->bytes : 1, buf_describe(L, b), &err) != 0)
      luaL_error(L, "the debugger cannot copy %s to the simulator: %s", buf_describe(L, b),
                 err.text);
    s->nmirrors++;
    if (m->bytes && s->from->dtoh(m->sim, m->gpu, m->bytes, &err) != 0) rt_raise(L, &err);
    memcpy(args[i], &m->sim, sizeof m->sim);
  }
}

/* The arrays copied to the simulator go back where they came from. Raises on a GPU error. */
static void unmirror_arrays(lua_State *L, dbg_state *s) {
  for (int i = 0; i < s->nmirrors; i++) {
    cl_err err;
    const mirror *m = &s->mirrors[i];
    if (m->bytes && s->from->htod(m->gpu, m->sim, m->bytes, &err) != 0) rt_raise(L, &err);
  }
}

/* The backend to debug on for kernels of `from`: the simulator itself, or the one built in next
 * to a GPU. Raises where there is none. */
static const cl_backend *debug_backend(lua_State *L, const cl_backend *from, int scripted) {
  if (!from->sim && from != &cl_backend_cuda)
    luaL_error(L, "k:debug runs the kernel, and the %s backend runs nothing (it only compiles "
               "and checks launches): cuda.use(\"sim\") and compile the kernel again to debug it "
               "on the simulator", from->name);
  const cl_backend *sim = from->sim ? from : backend_simulator();
  if (!sim || !sim->sim || !sim->sim->debug)
    luaL_error(L, "k:debug needs the simulator, and this cudalab was built without it");
  if (!rt.read_line && !scripted)
    luaL_error(L, "k:debug needs cudalab's console for its prompt");
  return sim;
}

/* The debugged launch itself, with the arguments tg marshalled; vars: the stack index of the
 * module variables it shares with the kernel's module (bind_debug_vars.c), given back to that
 * module however the launch ended, as its arrays are. */
static int run_debugged(lua_State *L, dbg_state *s, const bind_launch_target *tg, int vars) {
  cl_debug_hooks hooks = {hook_stop, hook_cond, hook_progress, s};
  cl_err err;
  s->d = s->ops->open(s->fn, &hooks, &err);
  if (!s->d) luaL_error(L, "%s", err.text);
  int rc = s->ops->launch(s->d, tg->grid, tg->block, tg->shared, tg->args, tg->cooperative,
                          &err);
  s->ops->close(s->d);
  s->d = NULL;
  unmirror_arrays(L, s);
  bind_debug_vars_keep(L, vars);
  if (rc != 0 && (!s->quit || s->faulted)) rt_raise(L, &err);
  return rc;
}

/* k:debug{...}(args...): upvalue 1 the kernel, upvalue 2 its launch object, upvalue 3 the
 * commands to read instead of the console's (a table of strings) or nil. */
static int debug_call(lua_State *L) {
  int nargs = lua_gettop(L);
  debugger_type(L);
  const cl_backend *from = rt_backend(L);
  const cl_backend *sim = debug_backend(L, from, !lua_isnil(L, lua_upvalueindex(3)));
  cl_launch *c = bind_kernel_launch_at(L, lua_upvalueindex(2));
  if (!c) return luaL_error(L, "this debug launch has been tampered with: make a new one");
  bind_launch_target tg;
  bind_kernel_prepare(L, c, 1, &tg); /* checks and marshals the arguments, as a launch does */
  /* uservalues 1: lua/debug/debugger.lua; 2: the source; 3: the commands, or nil */
  dbg_state *s = lua_newuserdatauv(L, sizeof *s, 3);
  memset(s, 0, sizeof *s);
  s->ref = LUA_NOREF;
  s->L = L;
  luaL_setmetatable(L, DEBUGGER_MT);
  lua_toclose(L, -1);
  int idx = lua_gettop(L);
  lua_pushvalue(L, idx);
  s->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  s->sim = sim;
  s->from = from;
  s->ops = sim->sim->debug;
  lua_getglobal(L, "require");
  lua_pushliteral(L, "debugger");
  lua_call(L, 1, 1);
  lua_setiuservalue(L, idx, 1);
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_setiuservalue(L, idx, 3);
  load_debug_build(L, s, lua_upvalueindex(1));
  s->grid = tg.grid;
  s->block = tg.block;
  if (from != sim) {
    printf("k:debug: a GPU cannot be paused from here, so this launch runs on the simulator "
           "(its arrays are copied there and back)\n");
    mirror_arrays(L, s, 1, nargs, tg.args);
  }
  bind_module_view plain;
  bind_module_of(L, lua_upvalueindex(1), &plain);
  bind_debug_vars_share(L, &plain, sim, s->mod);
  int vars = lua_gettop(L);
  bind_kernel_origin o;
  bind_kernel_origin_of(L, lua_upvalueindex(1), &o);
  bind_debug_check_begin(L, 1, from == sim ? nargs : 0, o.source); /* arrays of a GPU: no */
  int check = lua_gettop(L);
  int rc = run_debugged(L, s, &tg, vars);
  lua_pushstring(L, s->quit ? "quit" : "done");
  if (call_lua(s, "finish", 1) == 0) lua_pop(L, 1);
  if (rc == 0) {
    const char *names[16];
    for (int i = 0; i < s->nparams; i++) names[i] = s->params[i];
    bind_debug_check_end(L, check, &tg, names, s->nparams, vars);
  }
  return 0;
}

/* The commands field of the configuration at cfg, checked (a table of at most DBG_MAX_COMMANDS
 * strings, with no line breaks), pushed as a copy the learner cannot change mid-launch; nil when
 * absent. */
#define DBG_MAX_COMMANDS 1000
static void push_commands(lua_State *L, int cfg) {
  int t = lua_getfield(L, cfg, "commands");
  if (t == LUA_TNIL) return;
  if (t != LUA_TTABLE)
    luaL_error(L, "commands must be a table of the lines to type at the debugger's prompt, "
                  "got %s", lua_typename(L, t));
  lua_Integer n = luaL_len(L, -1);
  if (n > DBG_MAX_COMMANDS)
    luaL_error(L, "commands has %I lines; at most %d", n, DBG_MAX_COMMANDS);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_geti(L, -2, i) != LUA_TSTRING)
      luaL_error(L, "commands[%I] must be a string (a line typed at the prompt), got %s", i,
                 luaL_typename(L, -1));
    if (strpbrk(lua_tostring(L, -1), "\r\n"))
      luaL_error(L, "commands[%I] holds a line break: give each line as a string of its own", i);
    lua_seti(L, -2, i);
  }
  lua_remove(L, -2);
}

/* k:debug{grid, block [, shared] [, commands = {...}]}: a function that launches the kernel under
 * the debugger. */
int bind_debugger_method(lua_State *L) {
  luaL_checkudata(L, 1, KERNEL_MT);
  if (!lua_istable(L, 2))
    return luaL_error(L, "k:debug needs a launch configuration, as a launch does: "
                         "k:debug{blocks, threads}(args...)");
  lua_settop(L, 2);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_gettable(L, 1); /* k[cfg]: the launch object, its configuration checked */
  push_commands(L, 2);
  lua_pushcclosure(L, debug_call, 3);
  return 1;
}

/* The debugger object's metatable, made the first time a debugged launch runs. */
static void debugger_type(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"info", s_info},       {"where", s_where},   {"warps", s_warps},
      {"set_break", s_set_break}, {"delete_break", s_delete_break}, {"resume", s_resume},
      {"focus", s_focus},     {"read", s_read},     {"names", s_names},
      {"mem", s_mem},         {"shared", s_shared}, {"global", s_global},
      {"frames", s_frames},
      {"select", s_select},   {"func_line", s_func_line}, {"set_cond", s_set_cond},
      {"readline", s_readline}, {NULL, NULL}};
  if (luaL_newmetatable(L, DEBUGGER_MT)) {
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, debugger_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, debugger_gc);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}
