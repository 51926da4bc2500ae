/* runtime.h: the engine's state shared by every binding: the active backend, the device it
 * reports, the Ctrl-C flag and whether a sticky error has poisoned the process. Also the few
 * helpers every binding uses to talk to the backend from Lua (raise, sync, device). */
#ifndef CUDALAB_RUNTIME_H
#define CUDALAB_RUNTIME_H

#include <limits.h>
#include <signal.h>

#include <lua.h>

#include "backend.h"

typedef struct rt_state {
  const cl_backend *backend;          /* where arrays are allocated and kernels run */
  cl_device device;                   /* the backend's device, valid when have_device */
  int have_device;                    /* device has been asked for since the last switch */
  volatile sig_atomic_t interrupted;  /* Ctrl-C seen since the current request began */
  int poisoned;                       /* a sticky error: the engine must be replaced */
  char data_dir[PATH_MAX];            /* holds lua/ and kernels/ ("" if not found) */
} rt_state;

extern rt_state rt;

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

#endif
