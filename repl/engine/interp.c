/* interp.c: the Lua side of the engine, shaped after lua.c: every call runs under lua_pcall
 * with a message handler; REPL input becomes "return <line>" when that compiles; a chunk is
 * incomplete only when its syntax error ends at <eof>.
 *
 * Ctrl-C: the SIGINT handler only sets a hook (the one thing a handler may safely do to a Lua
 * state). The hook raises "interrupted" and stays armed until the request ends, so a pcall in
 * the learner's code cannot swallow the interrupt and loop on (Redis does the same). An error
 * already on its way to the prompt when the hook fires is left to say what it says: C code that
 * stopped for the interrupt raises one that tells more ("compile interrupted (Ctrl-C)", a
 * simulated launch stopped at its block) than a bare "interrupted" would. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "bindings.h"
#include "interp.h"
#include "proto.h"
#include "runtime.h"
#include "trace.h"

static lua_State *interrupt_target; /* the state the SIGINT handler hooks */
static int init_ref = LUA_NOREF;    /* registry ref of the table lua/init.lua returned */

static int msghandler(lua_State *L);

/* Raises "interrupted" at the next call, return or instruction; but not at the message
 * handler's call or return, which mean an error is already on its way to the prompt (see the
 * top of the file). The hook stays armed either way, so a pcall that caught that error cannot
 * go on. */
static void interrupt_hook(lua_State *L, lua_Debug *ar) {
  if (rt.interrupt_exits) {
    /* a command that Ctrl-C ends as its way out (--class-report --watch): nothing of Lua may
     * run after the interrupt, so it leaves from here, through os.exit, which the engine makes
     * tell the console the status (hooks are off while a hook runs, so the call is not hooked) */
    fputs("\n", stdout);
    lua_getglobal(L, "os");
    if (lua_getfield(L, -1, "exit") == LUA_TFUNCTION) {
      lua_pushinteger(L, rt.interrupt_status);
      lua_call(L, 1, 0);
    }
    fflush(NULL);
    _exit(rt.interrupt_status);
  }
  if (ar->event != LUA_HOOKCOUNT && lua_getinfo(L, "f", ar)) {
    int handler = lua_tocfunction(L, -1) == msghandler;
    lua_pop(L, 1);
    if (handler) return;
  }
  lua_pushliteral(L, "interrupted"); /* no position: the learner knows where they pressed it */
  lua_error(L);
}

void interp_interrupt(void) {
  rt.interrupted = 1;
  if (interrupt_target)
    lua_sethook(interrupt_target, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

void interp_clear_interrupt(lua_State *L) {
  lua_sethook(L, NULL, 0, 0);
  rt.interrupted = 0;
}

/* Does the stack above the failing function hold a Lua function other than the main chunk?
 * Only then is a traceback worth a learner's attention. */
static int has_lua_frames(lua_State *L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "S", &ar);
    if (strcmp(ar.what, "Lua") == 0) return 1;
  }
  return 0;
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  /* no traceback after Ctrl-C either: the learner knows where they pressed it */
  if (has_lua_frames(L) && strcmp(msg, "interrupted") != 0 && !rt.interrupted)
    luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Calls the function below narg arguments; prints an error to stderr. Returns the status. */
static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int status = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  if (status != LUA_OK) {
    fflush(stdout);
    fprintf(stderr, "%s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error)");
    fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

/* Prints the values left on the stack by a REPL expression through init's print_results. */
static void print_results(lua_State *L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  lua_rawgeti(L, LUA_REGISTRYINDEX, init_ref);
  if (lua_istable(L, -1) && lua_getfield(L, -1, "print_results") == LUA_TFUNCTION) {
    lua_remove(L, -2);
  } else {
    lua_settop(L, base + n);
    lua_getglobal(L, "print");
  }
  lua_insert(L, base + 1);
  docall(L, n, 0);
}

static int incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return 0;
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  return len >= 5 && strcmp(msg + len - 5, "<eof>") == 0;
}

/* Tells init's on_input hook (a class's record keeper, lua/class/classroom.lua) of a chunk typed at
 * the prompt, before it runs. The hook is the learner's submission, not their program: its
 * errors are dropped, and it never sees an incomplete chunk. The chunk to run stays on top. */
static void note_input(lua_State *L, const char *chunk, size_t len) {
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, init_ref);
  if (lua_istable(L, -1) && lua_getfield(L, -1, "on_input") == LUA_TFUNCTION) {
    lua_pushlstring(L, chunk, len);
    lua_pcall(L, 1, 0, 0); /* an error message is dropped with the rest below */
  }
  lua_settop(L, top);
}

int interp_eval(lua_State *L, const char *chunk, size_t len) {
  int base = lua_gettop(L);
  const char *ret = lua_pushfstring(L, "return %s;", chunk);
  int status = luaL_loadbuffer(L, ret, strlen(ret), "=stdin");
  lua_remove(L, -2);
  if (status != LUA_OK) {
    lua_pop(L, 1);
    status = luaL_loadbuffer(L, chunk, len, "=stdin");
    if (incomplete(L, status)) {
      lua_settop(L, base);
      return EVAL_INCOMPLETE;
    }
    if (status != LUA_OK) {
      fprintf(stderr, "%s\n", lua_tostring(L, -1));
      lua_settop(L, base);
      return EVAL_ERROR;
    }
  }
  note_input(L, chunk, len);
  status = docall(L, 0, LUA_MULTRET);
  if (status == LUA_OK) print_results(L, base);
  lua_settop(L, base);
  return status == LUA_OK ? EVAL_OK : EVAL_ERROR;
}

int interp_exec(lua_State *L, const char *chunk, size_t len, const char *name) {
  int status = luaL_loadbuffer(L, chunk, len, name);
  if (status == LUA_OK) return docall(L, 0, 0) == LUA_OK ? EVAL_OK : EVAL_ERROR;
  fprintf(stderr, "%s\n", lua_tostring(L, -1));
  lua_pop(L, 1);
  return EVAL_ERROR;
}

void interp_set_args(lua_State *L, int argc, char **argv) {
  lua_createtable(L, argc, 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_seti(L, -2, i);
  }
  lua_setglobal(L, "arg");
}

int interp_script(lua_State *L, int argc, char **argv) {
  const char *file = strcmp(argv[0], "-") == 0 ? NULL : argv[0];
  if (luaL_loadfile(L, file) != LUA_OK) {
    fprintf(stderr, "cudalab: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return EVAL_ERROR;
  }
  /* the script's arguments are its varargs: room for each on the stack first (lua.c does
   * the same), or a long command line would write past the stack */
  if (!lua_checkstack(L, argc + 3)) {
    lua_pop(L, 1);
    fprintf(stderr, "cudalab: too many arguments for the script (%d)\n", argc - 1);
    return EVAL_ERROR;
  }
  for (int i = 1; i < argc; i++) lua_pushstring(L, argv[i]);
  return docall(L, argc - 1, 0) == LUA_OK ? EVAL_OK : EVAL_ERROR;
}

/* The candidates are copied straight from the Lua list into C memory, which is where they go
 * anyway. A luaL_Buffer was turned down: each candidate has to sit on the stack above the
 * buffer while it is read, which the buffer forbids, and past LUAL_BUFFERSIZE bytes (about
 * 1 KiB) of candidates that corrupted the stack and killed the engine. Out of memory gives no
 * candidates rather than an error: a Tab key must never raise. */
char *interp_complete(lua_State *L, const char *word, const char *before, size_t *len) {
  int base = lua_gettop(L);
  char *out = NULL;
  size_t used = 0, cap = 0;
  *len = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, init_ref);
  if (!lua_istable(L, -1) || lua_getfield(L, -1, "complete") != LUA_TFUNCTION) goto done;
  lua_pushstring(L, word);
  lua_pushstring(L, before);
  if (lua_pcall(L, 2, 1, 0) != LUA_OK || !lua_istable(L, -1)) goto done;
  int list = lua_gettop(L);
  for (lua_Integer i = 1; lua_geti(L, list, i) == LUA_TSTRING; i++) {
    size_t n;
    const char *s = lua_tolstring(L, -1, &n);
    if (used + n + 1 > cap) {
      size_t want = 2 * (used + n + 1);
      char *grown = realloc(out, want);
      if (!grown) {
        free(out);
        out = NULL;
        used = 0;
        goto done;
      }
      out = grown;
      cap = want;
    }
    memcpy(out + used, s, n + 1); /* with its NUL: the separator */
    used += n + 1;
    lua_pop(L, 1);
  }
  *len = used;
done:
  lua_settop(L, base);
  return out;
}

/* lua/'s folders, each on package.path, so that modules keep plain names (require "grade") and
 * a module may move between folders without its requirers changing. Names are unique across
 * them (tests/lua_unit/test_requires.lua holds that). tests/lua_unit/run.lua lists the same. */
static const char *const LUA_FOLDERS[] = {"", "lessons/", "class/", "visual/", "debug/", NULL};

/* Loads lua/init.lua from the data folder and keeps what it returns. A missing or broken
 * library leaves a working, plainer REPL (print instead of the pretty printer), with a warning. */
static void load_library(lua_State *L) {
  if (!rt.data_dir[0]) {
    fprintf(stderr,
            "cudalab: warning: lua/ library not found (set CUDALAB_HOME); printing plainly\n");
    return;
  }
  lua_getglobal(L, "package");
  int n = 0;
  for (; LUA_FOLDERS[n]; n++) lua_pushfstring(L, "%s/lua/%s?.lua;", rt.data_dir, LUA_FOLDERS[n]);
  lua_getfield(L, -1 - n, "path");
  lua_concat(L, n + 1);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  lua_pushfstring(L, "%s/lua/init.lua", rt.data_dir);
  if (luaL_loadfile(L, lua_tostring(L, -1)) != LUA_OK) {
    fprintf(stderr, "cudalab: warning: %s\n", lua_tostring(L, -1));
    lua_pop(L, 2);
    return;
  }
  lua_remove(L, -2);
  if (docall(L, 0, 1) == LUA_OK) init_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

static int open_all(lua_State *L) {
  luaL_openlibs(L);
  luaL_requiref(L, "cuda", luaopen_cudalab_cuda, 1);
  lua_pop(L, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_cudalab_files);
  lua_setfield(L, -2, "cudalab.files");
  lua_pushcfunction(L, luaopen_cudalab_class);
  lua_setfield(L, -2, "cudalab.class");
  lua_pushcfunction(L, luaopen_cudalab_proc);
  lua_setfield(L, -2, "cudalab.proc");
  lua_pushcfunction(L, luaopen_cudalab_sandbox);
  lua_setfield(L, -2, "cudalab.sandbox");
  lua_pushcfunction(L, luaopen_cudalab_standard);
  lua_setfield(L, -2, "cudalab.standard");
  /* benchmarks' hooks, loaded only by require "cudalab_bench" (bench_hooks.c) */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_cudalab_bench);
  lua_setfield(L, -2, "cudalab_bench");
  lua_pop(L, 1);
  trace_mark("lua state"); /* the standard libraries and `cuda` */
  load_library(L);
  standard_snapshot(L); /* before any learner code: what lesson checks run with */
  trace_mark("modules"); /* lua/init.lua and what it requires */
  return 0;
}

lua_State *interp_new(void) {
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "cudalab: cannot create the Lua state: out of memory\n");
    return NULL;
  }
  lua_gc(L, LUA_GCGEN, 0, 0);
  lua_pushcfunction(L, open_all);
  if (docall(L, 0, 0) != LUA_OK) {
    lua_close(L);
    return NULL;
  }
  interrupt_target = L;
  return L;
}

void interp_close(lua_State *L) {
  interrupt_target = NULL;
  lua_close(L);
}
