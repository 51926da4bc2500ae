/* engine.c: the engine process's request loop.
 *
 * Why a separate process: after an illegal memory access CUDA refuses every call for the rest
 * of the process (cudaDeviceReset does not help; measured on an H200). Keeping Lua and CUDA
 * together here, and the terminal in the console, lets the console replace a poisoned engine
 * while the learner keeps the prompt, history and lesson progress. Launch overhead is untouched:
 * Lua calls CUDA directly inside this process.
 *
 * The engine writes program output straight to the inherited stdout/stderr and flushes both
 * before it answers, so output always appears before the next prompt. A script never loses its
 * output: at its end (and at os.exit) the kernels still running are waited for, the Lua state
 * is closed as lua.c closes it (finalizers run and print), and an output that could not be
 * written is said and fails the run. It then leaves with _exit(): a poisoned or stuck context
 * must not run cudart's teardown, which could wait on the GPU; every stream still open (a file
 * a script wrote with io.open and never closed: a CSV of results) is flushed first. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "backend_names.h"
#include "bindings.h"
#include "builtin.h"
#include "engine.h"
#include "interp.h"
#include "line_read.h"
#include "nvrtc.h"
#include "proto.h"
#include "runtime.h"
#include "trace.h"

static int reply_fd = -1;   /* for os.exit, which must tell the console before leaving */
static int request_fd = -1; /* for a line read in the middle of a request (read_line) */

static void on_sigint(int sig) {
  (void)sig;
  interp_interrupt();
}

/* Whether everything written to standard output so far has reached it. A write that fails (a
 * full disk, a closed or non-blocking pipe) loses that output for good; Lua's print and io.write
 * do not say so, so this does, once, on stderr, and the run then fails. A closed pipe (| head)
 * is said by the exit status alone, as a shell's tools say it. */
static int output_reached(void) {
  static int lost;
  errno = 0;
  if (fflush(stdout) == 0 && !ferror(stdout) && !lost) return 1;
  if (!lost && errno != EPIPE) {
    fprintf(stderr, "cudalab: output was lost: standard output could not be written%s%s\n",
            errno ? ": " : "", errno ? strerror(errno) : "");
    fflush(stderr);
  }
  lost = 1;
  return 0;
}

static void leave(int status) __attribute__((noreturn));
static void leave(int status) {
  if (!output_reached() && status == 0) status = 1;
  fflush(NULL); /* every output stream: stderr and the files Lua's io has open */
  _exit(status);
}

/* Device printf's output of the kernels that have finished, before the prompt comes back. */
static void flush_device_output(void) {
  if (rt.have_device && rt.backend && rt.backend->flush_output) rt.backend->flush_output();
}

/* The end of a session: kernels still running are waited for (within the kernel time limit;
 * Ctrl-C ends the wait), so that what they print, their errors, and the files the script's
 * arrays were to be written to are not lost to the exit. Returns 0, or 1 with the error
 * printed. */
static int drain_device(void) {
  if (!rt.have_device || rt.poisoned || !rt.backend->synchronize) return 0;
  cl_err err;
  if (rt.backend->synchronize(&rt.interrupted, &err) != 0) {
    fprintf(stderr, "cudalab: waiting for the kernels still running at the end: %s\n", err.text);
    return 1;
  }
  flush_device_output();
  return 0;
}

/* Closes the Lua state as lua.c does at the end of a script: finalizers (__gc) and what they
 * print run, and every array and kernel is freed through its own __gc. Not after the device
 * was lost, whose frees would only fail. */
static void close_state(lua_State *L) {
  if (!L || rt.poisoned) return;
  interp_close(L);
  fflush(stdout);
}

static lua_State *engine_state; /* for os.exit's close */

/* os.exit replacement: the device is drained first (a launch os.exit(0) follows prints and
 * fails as at a script's end), and with close true the state is closed, as Lua's os.exit
 * does; the console learns the status and ends the session with it (a run with no console
 * ends with it here). */
static int engine_os_exit(lua_State *L) {
  int status = lua_isboolean(L, 1) ? (lua_toboolean(L, 1) ? 0 : 1) : (int)luaL_optinteger(L, 1, 0);
  int close = lua_toboolean(L, 2);
  if (drain_device() != 0 && status == 0) status = 1;
  if (close) close_state(engine_state);
  if (!output_reached() && status == 0) status = 1;
  unsigned char b = (unsigned char)status;
  fflush(NULL); /* before the console is told: what waits on the exit may read the files */
  if (reply_fd >= 0) proto_send(reply_fd, MSG_EXIT, &b, 1); /* none in a run alone */
  leave(status);
  return 0;
}

static void print_banner(const char *fallback_why) {
  char gpu[128];
  backend_gpu_name(gpu, sizeof gpu);
  printf("cudalab %s  (Lua 5.4, NVRTC %s)\n", CUDALAB_VERSION, nvrtc_version_string());
  if (rt.backend == &cl_backend_cuda)
    printf("GPU: %s\n", gpu[0] ? gpu : "an NVIDIA GPU");
  else if (rt.backend->sim)
    printf("%s: kernels run on the built-in simulator\n",
           fallback_why[0] ? "no GPU found" : "simulator");
  else
    printf("no GPU found: kernels compile and launches are checked, but nothing runs\n");
  printf("Type lessons() to start a lesson, help() for help, Ctrl-D to quit.\n");
  fflush(stdout);
}

/* Calls fn of the lua/ module named module with the nargs values on top of the stack, in
 * protected mode: LUA_OK with nres results in their place, or an error code with the message
 * in their place. The engine's start-up calls lua/ this way rather than carrying Lua source. */
static int call_module(lua_State *L, const char *module, const char *fn, int nargs, int nres) {
  lua_getglobal(L, "require");
  lua_pushstring(L, module);
  int rc = lua_pcall(L, 1, 1, 0);
  if (rc == LUA_OK) {
    if (lua_getfield(L, -1, fn) == LUA_TFUNCTION) {
      lua_remove(L, -2); /* the module */
      lua_insert(L, -(nargs + 1));
      return lua_pcall(L, nargs, nres, 0);
    }
    lua_pop(L, 2);
    lua_pushfstring(L, "module '%s' has no function %s", module, fn);
    rc = LUA_ERRRUN;
  }
  lua_insert(L, -(nargs + 1)); /* the message below the arguments, which go */
  lua_pop(L, nargs);
  return rc;
}

/* The banner's last line: the lesson in progress and how to resume it
 * (lua/lessons/lesson_boot.lua). A broken progress file must not stop start-up, so any error is
 * dropped. */
static void print_resume_note(lua_State *L) {
  int ok = call_module(L, "lesson_boot", "resume_note", 0, 1) == LUA_OK;
  if (ok && lua_type(L, -1) == LUA_TSTRING) printf("%s\n", lua_tostring(L, -1));
  lua_pop(L, 1);
  fflush(stdout);
}

/* Joins the class named by CUDALAB_CLASS (lua/class/classroom.lua), before the banner so that the
 * banner shows the backend the class chose. A class that cannot be joined must not stop
 * start-up: it says why and the session goes on without it. */
static void join_class(lua_State *L, int banner) {
  const char *dir = getenv("CUDALAB_CLASS");
  if (!dir || !dir[0]) return;
  lua_pushboolean(L, banner);
  if (call_module(L, "classroom", "join_from_env", 1, 0) == LUA_OK) return;
  const char *why = lua_tostring(L, -1);
  fprintf(stderr, "cudalab: cannot join the class: %s\n", why ? why : "(an error, not a string)");
  lua_pop(L, 1);
}

/* The class's lines for the banner: which class, and why the backend is what it is. */
static void print_class_notes(lua_State *L) {
  if (!getenv("CUDALAB_CLASS")) return;
  if (call_module(L, "classroom", "banner_lines", 0, 1) == LUA_OK && lua_istable(L, -1)) {
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
      if (lua_geti(L, -1, i) == LUA_TSTRING) printf("%s\n", lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  fflush(stdout);
}

/* The console's answer to MSG_READLINE: the line, or NULL with *status set. */
static char *await_line(rt_completer complete, void *ud, int *status) {
  for (;;) {
    char type, *data;
    size_t len;
    if (proto_recv(request_fd, &type, &data, &len) != 0) return NULL; /* the console has gone */
    if (type == MSG_LINE) {
      *status = RT_LINE_OK;
      return data;
    }
    if (type == MSG_COMPLETE) {
      size_t n = 0;
      char *cands = complete ? complete(data, &n, ud) : NULL;
      proto_send(reply_fd, MSG_CANDIDATES, cands, n);
      free(cands);
    } else if (type == MSG_NOLINE) {
      if (len == 1 && data[0] == LINE_INTERRUPTED) *status = RT_LINE_INTERRUPTED;
      free(data);
      return NULL;
    }
    free(data); /* nothing else comes while the console waits for a request's end */
  }
}

/* rt.read_line: asks the console for a line while a request runs (the debugger's prompt) and
 * waits for it, answering Tab meanwhile with `complete`. The console reads it as it reads the
 * REPL's lines, so history, completion and piped input work the same. A Ctrl-C at that prompt
 * reaches this process too (one process group) and arms the interrupt; there it only cancels
 * the line, so whatever the console made of it (it may have seen the key after Enter), the
 * interrupt is cleared before Lua runs again. */
static char *engine_read_line(lua_State *L, const char *prompt, rt_completer complete, void *ud,
                              int *status) {
  fflush(stdout);
  fflush(stderr);
  *status = RT_LINE_EOF;
  char *line = NULL;
  if (proto_send(reply_fd, MSG_READLINE, prompt, strlen(prompt)) == 0)
    line = await_line(complete, ud, status);
  if (rt.interrupted || *status == RT_LINE_INTERRUPTED) interp_clear_interrupt(L);
  return line;
}

/* A step of a run, as the console sends it or a run with no console has it: a chunk (-e), or a
 * script with its arguments (none: nothing to run, a failure). An EVAL_* status. */
static int run_chunk(lua_State *L, const char *chunk, size_t len) {
  return interp_exec(L, chunk, len, "=(command line)");
}
static int run_script(lua_State *L, int argc, char **argv) {
  return argc ? interp_script(L, argc, argv) : EVAL_ERROR;
}

static void serve(lua_State *L, char type, char *data, size_t len) {
  unsigned char status = EVAL_OK;
  interp_clear_interrupt(L);
  if (type == MSG_COMPLETE) {
    /* the word, then what comes before it on the line; a payload without the second part (or
     * without any NUL: proto_recv terminates it) has the word alone */
    size_t n = 0, wlen = strlen(data);
    const char *before = wlen + 1 < len ? data + wlen + 1 : "";
    char *cands = interp_complete(L, data, before, &n);
    proto_send(reply_fd, MSG_CANDIDATES, cands, n);
    free(cands);
    return;
  }
  if (type == MSG_FINISH) {
    status = drain_device() ? EVAL_ERROR : EVAL_OK;
  } else if (type == MSG_EVAL) {
    status = (unsigned char)interp_eval(L, data, len);
  } else if (type == MSG_EXEC) {
    status = (unsigned char)run_chunk(L, data, len);
  } else if (type == MSG_SCRIPT || type == MSG_ARGS) {
    /* as many arguments as the message packs, however many: a script's command line is the
     * shell's to limit, not ours */
    int argc = 0;
    for (size_t off = 0; off < len; off += strlen(data + off) + 1) argc++;
    char **argv = malloc(((size_t)argc + 1) * sizeof *argv);
    if (!argv) {
      fprintf(stderr, "cudalab: out of memory for %d arguments\n", argc);
      status = EVAL_ERROR;
    } else {
      int n = 0;
      for (size_t off = 0; off < len; off += strlen(data + off) + 1) argv[n++] = data + off;
      argv[n] = NULL;
      if (type == MSG_ARGS) interp_set_args(L, argc, argv);
      else status = (unsigned char)run_script(L, argc, argv);
      free(argv);
    }
  }
  interp_clear_interrupt(L);
  if (rt.poisoned) status = EVAL_POISONED;
  else flush_device_output();
  if (!output_reached() && status == EVAL_OK) status = EVAL_ERROR;
  fflush(stderr);
  proto_send(reply_fd, MSG_DONE, &status, 1);
  if (rt.poisoned) leave(ENGINE_EXIT_POISONED);
}

/* What both ways of running share, up to the point where steps can run: Ctrl-C (handler), the
 * runtime, the Lua state with os.exit replaced, the class and, when asked, the banner. Leaves
 * with status 2 for an unknown backend or a Lua state that cannot be made. */
static lua_State *start(const engine_config *cfg, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);

  char why[256];
  if (!rt_start(cfg->backend, why, sizeof why)) {
    fprintf(stderr, "cudalab: unknown backend '%s' (choose " CL_BACKEND_CHOICES ")\n",
            cfg->backend);
    leave(2);
  }
  trace_mark("backend");
  lua_State *L = interp_new();
  if (!L) leave(2);
  engine_state = L;
  lua_getglobal(L, "os");
  lua_pushcfunction(L, engine_os_exit);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
  join_class(L, cfg->banner);
  if (cfg->banner) {
    print_banner(why);
    print_class_notes(L);
    print_resume_note(L);
  }
  fflush(stdout);
  fflush(stderr);
  trace_mark("ready"); /* the class, the banner */
  return L;
}

/* The end of either way of running, with status. CUDALAB_CLEAN_EXIT=1 (make valgrind-test):
 * close Lua, which frees every array, kernel and module, and leave through exit(), so that a
 * leak checker sees what is still held. */
static void finish(lua_State *L, int status) __attribute__((noreturn));
static void finish(lua_State *L, int status) {
  close_state(L);
  if (getenv("CUDALAB_CLEAN_EXIT")) {
    builtin_shutdown();
    if (!output_reached() && status == 0) status = 1;
    fflush(stderr);
    exit(status);
  }
  leave(status);
}

void engine_main(int req_fd, int rep_fd, const engine_config *cfg) {
  trace_mark("engine fork"); /* the console's work before it, and fork */
  reply_fd = rep_fd;
  request_fd = req_fd;
  rt.read_line = engine_read_line;
  lua_State *L = start(cfg, on_sigint);
  proto_send(reply_fd, MSG_READY, NULL, 0);
  for (;;) {
    char type, *data;
    size_t len;
    if (proto_recv(req_fd, &type, &data, &len) != 0) break; /* the console has gone */
    serve(L, type, data, len);
    free(data);
  }
  finish(L, 0);
}

/* ---- a run with no console ------------------------------------------------------------------ */

/* Ctrl-C in a run with no console: the first interrupts Lua and the waits, as in an engine; one
 * that comes before the first was answered (a kernel that never ends, a loop in C) ends the
 * process by SIGINT, where a console would have stopped its engine. Async-signal-safe. */
static void on_sigint_alone(int sig) {
  if (rt.interrupted) {
    static const char msg[] = "\ncudalab: Ctrl-C was not answered (a kernel that never ends?); "
                              "stopping.\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w; /* the process ends either way */
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
    return;
  }
  (void)sig;
  interp_interrupt();
}

/* rt.read_line with no console (the debugger's prompt in a piped run): the next line of
 * standard input, as the console reads piped lines: no prompt shown, no completion. */
static char *read_line_alone(lua_State *L, const char *prompt, rt_completer complete, void *ud,
                             int *status) {
  (void)L;
  (void)prompt;
  (void)complete;
  (void)ud;
  fflush(stdout);
  fflush(stderr);
  char *line = line_read(stdin);
  *status = line ? RT_LINE_OK : RT_LINE_EOF;
  return line;
}

void engine_run_alone(const engine_config *cfg, const engine_step *steps, int nsteps) {
  trace_mark("engine fork"); /* no fork: the console's part ends here all the same */
  rt.alone = 1;
  rt.read_line = read_line_alone;
  signal(SIGPIPE, SIG_DFL); /* output to a closed pipe (| head) ends the run quietly */
  lua_State *L = start(cfg, on_sigint_alone);
  for (int i = 0; i < nsteps; i++) /* arg exists before any -e chunk runs, as in lua */
    if (!steps[i].chunk) interp_set_args(L, steps[i].argc, steps[i].argv);
  int status = 0;
  for (int i = 0; i < nsteps && status == 0; i++) {
    interp_clear_interrupt(L);
    const engine_step *s = &steps[i];
    int r = s->chunk ? run_chunk(L, s->chunk, strlen(s->chunk)) : run_script(L, s->argc, s->argv);
    if (!output_reached()) status = 1;
    fflush(stderr);
    if (r != EVAL_OK || rt.poisoned) status = 1;
  }
  if (drain_device() != 0) status = 1;
  trace_mark("exit"); /* main's mark, which this run never returns to */
  finish(L, status);
}
