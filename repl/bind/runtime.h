/* runtime.h: the state every binding shares: the active backend, the device it reports, the
 * Ctrl-C flag, whether a sticky error has poisoned the process, and the session's limits
 * (cuda.limits); with the few helpers every binding uses to talk to the backend from Lua (raise,
 * sync, device, device memory). It lives with the bindings, its only users besides the engine,
 * so that they depend on nothing above them: the engine starts it (rt_start), sets its hooks
 * (read_line) and reads its flags (interrupted, poisoned) between requests. */
#ifndef CUDALAB_RUNTIME_H
#define CUDALAB_RUNTIME_H

#include <limits.h>
#include <signal.h>

#include <lua.h>

#include "backend.h"

/* Candidates for a word typed at a prompt the engine asked for: NUL-terminated strings one after
 * another in a malloc'd buffer of *len bytes (the caller frees it), or NULL. */
typedef char *(*rt_completer)(const char *word, size_t *len, void *ud);

/* How rt_state.read_line ended without a line. */
enum { RT_LINE_OK, RT_LINE_EOF, RT_LINE_INTERRUPTED };

typedef struct rt_state {
  const cl_backend *backend;          /* where arrays are allocated and kernels run */
  cl_device device;                   /* the backend's device, valid when have_device */
  int have_device;                    /* device has been asked for since the last switch */
  volatile sig_atomic_t interrupted;  /* Ctrl-C seen since the current request began */
  int poisoned;                       /* a sticky error: the engine must be replaced */
  int alone;                          /* no console: the run's steps go in this process
                                         (engine_run_alone), which ends as the run does */
  int interrupt_exits;                /* 1: Ctrl-C ends the process with interrupt_status
                                         (proc.exit_on_interrupt), not with "interrupted" */
  int interrupt_status;               /* that exit status */
  char data_dir[PATH_MAX];            /* holds lua/ and kernels/ ("" if not found) */
  size_t mem_limit;                   /* device memory arrays may hold (cuda.limits{memory});
                                         0: no limit */
  int mem_limit_class;                /* the memory limit is a class's (cuda.limits{by =
                                         "class"}): its message speaks of the class */
  size_t mem_in_use;                  /* device memory arrays hold now, on any backend */
  size_t mem_since_collect;           /* device memory made since the last full collection */
  size_t mem_after_collect;           /* mem_in_use as that collection left it */
  double kernel_time_limit;           /* seconds a launch may run (cuda.limits{kernel_time});
                                         0: no limit */
  int lesson_code;                    /* lesson code runs (cuda._lesson's depth): its launches
                                         of the lesson's own kernels are not held to the
                                         kernel time limit (bind_kernel.c) */
  int capturing;                      /* cuda.graph's function runs: launches are captured, and
                                         whatever else reaches the device is refused */
  /* A line typed at the console while Lua code runs (the debugger's prompt), shown with
   * `prompt`, with Tab answered by complete (may be NULL) and the console's history. Returns the
   * line (malloc'd, the caller frees it), or NULL with *status RT_LINE_EOF (Ctrl-D, the end of
   * piped input, no console) or RT_LINE_INTERRUPTED (Ctrl-C, whose interrupt is then already
   * cleared). Set by the engine, which owns the console's pipe; NULL where no console can be
   * asked. */
  char *(*read_line)(lua_State *L, const char *prompt, rt_completer complete, void *ud,
                     int *status);
} rt_state;

extern rt_state rt;

/* Starts the runtime once, before any Lua runs: hands the Ctrl-C flag to the backends and to
 * NVRTC (their waits poll it), chooses the backend (name, or NULL to choose: the GPU when one
 * answers, else the fallback, why saying why in a buffer of len bytes, "" when nothing fell back)
 * and finds the data folder (lua/ and kernels/). Returns the backend, or NULL for an unknown
 * name. */
const cl_backend *rt_start(const char *name, char *why, size_t len);
/* The active backend, after its start-up has finished (the first call waits for the CUDA
 * context; if no GPU turns out to be usable it switches to the fallback and says so once). */
const cl_backend *rt_backend(lua_State *L);
const cl_device *rt_device(lua_State *L);
/* Raises err as a Lua error (no position prefix: the message says where). Marks the process
 * poisoned when the error is sticky. Never returns. */
int rt_raise(lua_State *L, const cl_err *err);
/* Waits for the device, raising on an error or Ctrl-C. */
void rt_sync(lua_State *L);
/* Switches backends (cuda.use); returns 0, or -1 with a message on the Lua stack. */
int rt_use(lua_State *L, const char *name);
/* Short name of the device for summaries: "H200", "sim", "host". */
const char *rt_device_short(lua_State *L);

/* The one way to device memory for arrays: `bytes` on backend b (label names it in the
 * simulator's messages; managed: unified memory, alloc_managed, raising where b has none),
 * within the session's memory limit. Past the limit it runs a full
 * garbage collection and checks again (dropped arrays are only freed by the collector), then
 * raises a message that gives the limit, what is in use, what is asked and how to free. Returns
 * the backend's answer: 0, counting the bytes as in use, or -1 with err (out of memory: the
 * caller may collect and try again). */
int rt_alloc_device(lua_State *L, const cl_backend *b, void **ptr, size_t bytes,
                    const char *label, int managed, cl_err *err);
/* Raises "<what> cannot be captured in cuda.graph ..." while a graph is being captured. */
void rt_refuse_in_capture(lua_State *L, const char *what);
/* Gives back what rt_alloc_device got, `bytes` being what it was asked; NULL is ignored. Never
 * fails and never calls Lua, so that finalizers may use it. */
void rt_release_device(const cl_backend *b, void *ptr, size_t bytes);
/* A texture object from the device array at src (cuda.texture), within the session's memory
 * limit as an array of `bytes` is (the texture holds a copy that big): the backend's
 * texture_create, with the limit's collection and message. rt_texture_destroy gives it back.
 * Returns as rt_alloc_device does. */
int rt_texture_create(lua_State *L, const cl_backend *b, const void *src,
                      const cl_texture_desc *d, size_t bytes, uint64_t *handle, cl_err *err);
void rt_texture_destroy(const cl_backend *b, uint64_t handle, size_t bytes);
/* Sets the kernel time limit for every backend (seconds, 0 for none); a GPU kernel past it ends
 * the engine as poisoned (proto.h's ENGINE_EXIT_POISONED), or a run alone with status 1, as a
 * console ends such a run. */
void rt_set_kernel_time_limit(double seconds, int by_class);
/* Suspends the kernel time limit in force for the launches that follow (on: 1), or puts it back
 * (on: 0): around one launch of lesson code's own kernel (bind_kernel.c). */
void rt_kernel_time_suspend(int on);

#endif
