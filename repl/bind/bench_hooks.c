/* bench_hooks.c: the cudalab_bench module, what benchmarks and their tests use and the product
 * does not: require "cudalab_bench" gives it; it is never a field of `cuda`.
 *
 * Stance: `make bench` holds a launch from Lua against the same launch from a plain C loop in
 * the same process, which is the one fair anchor for what Lua adds. That loop is no second
 * launch path: it lives here and in backend_cuda_launch_loop, outside the backend interface and
 * the `cuda` module, so learners and the bindings see one launch and one error check. The module
 * is built into the binary (as package.preload) because the anchor must share the process, its
 * context and its marshalled arguments with the Lua launch it is compared with. */
#include <string.h>

#include <lauxlib.h>

#include "backend_cuda.h"
#include "bindings.h"
#include "runtime.h"

/* c_launch_loop([api,] launch, times, args...): the launch `times` times from a plain C loop of
 * cudaLaunchKernel (api "cudaLaunchKernel", the default) or of cuLaunchKernel, the call
 * cudalab's own launches make on a GPU ("cuLaunchKernel"), with the arguments marshalled once.
 * Off the GPU both are a loop of the backend's launch. */
static int bench_c_launch_loop(lua_State *L) {
  static const char *const apis[] = {"cudaLaunchKernel", "cuLaunchKernel", NULL};
  backend_cuda_api api = BACKEND_CUDA_RUNTIME;
  int at = 1; /* the launch object's index */
  if (lua_type(L, 1) == LUA_TSTRING) {
    api = luaL_checkoption(L, 1, NULL, apis) == 0 ? BACKEND_CUDA_RUNTIME : BACKEND_CUDA_DRIVER;
    at = 2;
  }
  cl_launch *c = bind_kernel_launch_at(L, at);
  luaL_argexpected(L, c != NULL, at, "launch object k[{grid, block}]");
  lua_Integer times = luaL_checkinteger(L, at + 1);
  luaL_argcheck(L, times >= 0 && times <= 1000000000, at + 1,
                "the number of launches must be 0 to 1e9");
  bind_launch_target t;
  bind_kernel_prepare(L, c, at + 2, &t);
  cl_err err;
  int rc = 0;
  if (t.backend == &cl_backend_cuda)
    rc = backend_cuda_launch_loop(t.fn, t.grid, t.block, t.shared, t.args, (long)times, api, &err);
  else
    for (lua_Integer i = 0; i < times && rc == 0; i++)
      rc = t.backend->launch(t.fn, t.grid, t.block, t.shared, t.args, &err);
  if (rc != 0) rt_raise(L, &err);
  return 0;
}

int luaopen_cudalab_bench(lua_State *L) {
  static const luaL_Reg functions[] = {{"c_launch_loop", bench_c_launch_loop}, {NULL, NULL}};
  luaL_newlib(L, functions);
  return 1;
}
