/* runtime.c: the engine-wide state behind runtime.h. One engine process owns one Lua state and
 * one backend; nothing here is thread-shared except `interrupted`, set by the SIGINT handler. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "runtime.h"

rt_state rt;

const cl_device *rt_device(lua_State *L) {
  if (rt.have_device) return &rt.device;
  cl_err err;
  if (rt.backend->device(&rt.device, &err) != 0) {
    if (rt.backend != &cl_backend_cuda || err.sticky) rt_raise(L, &err);
    /* The driver is there but no GPU answers (a container without one, a driver too old for
     * this runtime): carry on where kernels can still run, and say so once. */
    const cl_backend *fb = backend_fallback();
    fprintf(stderr, "cudalab: the GPU is not usable (%s); using the %s backend instead.\n",
            err.name, fb->name);
    rt.backend = fb;
    if (rt.backend->device(&rt.device, &err) != 0) rt_raise(L, &err);
  }
  rt.have_device = 1;
  return &rt.device;
}

const cl_backend *rt_backend(lua_State *L) {
  if (!rt.have_device) rt_device(L);
  return rt.backend;
}

int rt_raise(lua_State *L, const cl_err *err) {
  if (err->sticky) rt.poisoned = 1;
  lua_pushstring(L, err->text);
  return lua_error(L);
}

void rt_sync(lua_State *L) {
  cl_err err;
  if (rt_backend(L)->synchronize(&rt.interrupted, &err) == 0) return;
  /* A wait that Ctrl-C ended has dealt with the interrupt: disarm the hook, or it would fire
   * on the way out and replace this message with a bare "interrupted". */
  if (rt.interrupted) lua_sethook(L, NULL, 0, 0);
  rt_raise(L, &err);
}

int rt_use(lua_State *L, const char *name) {
  const cl_backend *b = backend_by_name(name);
  if (!b) {
    lua_pushfstring(L, "unknown backend '%s' (choose cuda, sim or none)", name);
    return -1;
  }
  const cl_backend *old = rt.backend;
  int had = rt.have_device;
  cl_device dev = rt.device;
  rt.backend = b;
  rt.have_device = 0;
  cl_err err;
  if (b->device(&rt.device, &err) != 0) {
    rt.backend = old;
    rt.have_device = had;
    rt.device = dev;
    lua_pushfstring(L, "cannot use the %s backend: %s", name, err.text);
    return -1;
  }
  rt.have_device = 1;
  return 0;
}

const char *rt_device_short(lua_State *L) {
  const cl_device *d = rt_device(L); /* may switch rt.backend to the fallback */
  if (rt.backend->sim) return "sim";
  if (rt.backend == &cl_backend_none) return "host (no GPU)";
  return strncmp(d->name, "NVIDIA ", 7) == 0 ? d->name + 7 : d->name;
}
