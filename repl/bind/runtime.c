/* runtime.c: the state behind runtime.h, shared by every binding. One engine process owns one
 * Lua state and one backend; nothing here is thread-shared except `interrupted`, set by the
 * engine's SIGINT handler, and abandon(), which a backend's watchdog thread calls to end the
 * process. The engine wires it (rt_start, read_line) and never the other way round: nothing
 * here knows the engine's pipe or its Lua interpreter. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "backend_names.h"
#include "nvrtc.h"
#include "paths.h"
#include "proto.h"
#include "runtime.h"

rt_state rt;

const cl_backend *rt_start(const char *name, char *why, size_t len) {
  backend_attach_interrupt(&rt.interrupted);
  nvrtc_attach_interrupt(&rt.interrupted);
  rt.backend = backend_choose(name, why, len);
  if (!rt.backend) return NULL;
  if (paths_data_dir(rt.data_dir, sizeof rt.data_dir) != 0) rt.data_dir[0] = '\0';
  return rt.backend;
}

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
  rt_refuse_in_capture(L, "cuda.sync()");
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
    lua_pushfstring(L, "unknown backend '%s' (choose " CL_BACKEND_CHOICES ")", name);
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

/* Whether `bytes` more would take the arrays past the memory limit (which may have been lowered
 * below what they hold already). An empty array needs nothing and is never refused. */
static int over_limit(size_t bytes) {
  return rt.mem_limit && bytes &&
         (bytes > rt.mem_limit || rt.mem_in_use > rt.mem_limit - bytes);
}

/* No position prefix, as rt_raise: the message says where the memory went. Who set the limit
 * decides its first words: a class's is the class's allowance per learner; any other was set
 * for this session (cuda.limits from the prompt, a script or its environment), and a learner
 * outside a class must not be told of a class. */
static int raise_over_limit(lua_State *L, size_t bytes) {
  char cap[32], used[32], need[32];
  lua_pushfstring(L, rt.mem_limit_class
                         ? "this class allows %s of device memory per learner: %s is in use and "
                           "this array needs %s. Free arrays you no longer need (a:free(), or "
                           "a = nil; collectgarbage()); cuda.limits() shows what you hold."
                         : "this session's device memory limit is %s (cuda.limits): %s is in "
                           "use and this array needs %s. Free arrays you no longer need "
                           "(a:free(), or a = nil; collectgarbage()); cuda.limits() shows what "
                           "you hold.",
                    cl_bytes_text(cap, sizeof cap, (double)rt.mem_limit),
                    cl_bytes_text(used, sizeof used, (double)rt.mem_in_use),
                    cl_bytes_text(need, sizeof need, (double)bytes));
  return lua_error(L);
}

void rt_refuse_in_capture(lua_State *L, const char *what) {
  if (rt.capturing)
    luaL_error(L, "%s cannot be captured in cuda.graph: a graph holds kernel launches only; "
               "do it before or after cuda.graph(...)", what);
}

/* Lua sees an array as a few bytes of userdata, so its collector never runs for their sake:
 * `b = cuda.ones(N)` typed twenty times kept twenty arrays of N until memory ran out, each in
 * fresh pages (on the simulator a page fault per 4 KiB). So arrays pace the collector as Lua's
 * own memory does, at a pause of 100%: once as much device memory has been made since the last
 * full collection as that collection left in use (and at least COLLECT_AFTER), the next array
 * first collects, and its memory can come from the arrays that collection freed. */
#define COLLECT_AFTER ((size_t)256 << 20)
static void pace_collector(lua_State *L, size_t bytes) {
  rt.mem_since_collect += bytes;
  if (rt.mem_since_collect < COLLECT_AFTER || rt.mem_since_collect < rt.mem_after_collect) return;
  lua_gc(L, LUA_GCCOLLECT, 0);
  rt.mem_since_collect = 0;
  rt.mem_after_collect = rt.mem_in_use;
}

int rt_alloc_device(lua_State *L, const cl_backend *b, void **ptr, size_t bytes,
                    const char *label, int managed, cl_err *err) {
  rt_refuse_in_capture(L, managed ? "making a managed array" : "making an array");
  pace_collector(L, bytes);
  if (over_limit(bytes)) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    if (over_limit(bytes)) raise_over_limit(L, bytes);
  }
  if (managed && !b->alloc_managed)
    return luaL_error(L, "cuda.managed: the %s backend has no managed memory (use the GPU or "
                      "the simulator)", b->name);
  if ((managed ? b->alloc_managed : b->alloc)(ptr, bytes, label, err) != 0) return -1;
  rt.mem_in_use += bytes;
  return 0;
}

void rt_release_device(const cl_backend *b, void *ptr, size_t bytes) {
  if (!ptr) return;
  b->release(ptr);
  rt.mem_in_use -= bytes < rt.mem_in_use ? bytes : rt.mem_in_use;
}

int rt_texture_create(lua_State *L, const cl_backend *b, const void *src,
                      const cl_texture_desc *d, size_t bytes, uint64_t *handle, cl_err *err) {
  rt_refuse_in_capture(L, "making a texture");
  if (over_limit(bytes)) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    if (over_limit(bytes)) raise_over_limit(L, bytes);
  }
  if (b->texture_create(src, d, handle, err) != 0) return -1;
  rt.mem_in_use += bytes;
  return 0;
}

void rt_texture_destroy(const cl_backend *b, uint64_t handle, size_t bytes) {
  b->texture_destroy(handle);
  rt.mem_in_use -= bytes < rt.mem_in_use ? bytes : rt.mem_in_use;
}

/* Called on a backend's watchdog thread while the Lua thread may be anywhere, blocked in CUDA
 * included: so the message goes out with write(2), and stdout is flushed only if no other
 * thread holds it (a blocked terminal must not keep the process alive). Leaves as serve()
 * leaves after a sticky error, and the console starts a fresh engine the same way. */
static void abandon(const char *message) {
  if (message) {
    char buf[1024]; /* a new line first: the prompt may be showing */
    int n = snprintf(buf, sizeof buf, "\n%s\n", message);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    ssize_t written = write(STDERR_FILENO, buf, len);
    (void)written; /* the process ends either way */
  }
  if (ftrylockfile(stdout) == 0) {
    fflush(stdout);
    funlockfile(stdout);
  }
  _exit(rt.alone ? 1 : ENGINE_EXIT_POISONED);
}

void rt_set_kernel_time_limit(double seconds, int by_class) {
  rt.kernel_time_limit = seconds;
  cl_kernel_time_by_class(by_class);
  backend_set_kernel_time_limit(seconds, abandon);
}

void rt_kernel_time_suspend(int on) {
  backend_set_kernel_time_limit(on ? 0 : rt.kernel_time_limit, abandon);
}
