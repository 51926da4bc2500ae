/* bindings.h: the entry points of the C modules that make up `cuda` (and `cpu`). Each returns a
 * table of functions; luaopen_cudalab_cuda merges them into one module. Used by engine.c. */
#ifndef CUDALAB_BINDINGS_H
#define CUDALAB_BINDINGS_H

#include <lua.h>

#define CUDALAB_VERSION "0.1.0"

int luaopen_cudalab_cuda(lua_State *L);
int luaopen_cudalab_array(lua_State *L);
int luaopen_cudalab_kernel(lua_State *L);
int luaopen_cudalab_time(lua_State *L);
int luaopen_cudalab_compare(lua_State *L);
int luaopen_cudalab_sim(lua_State *L);
int luaopen_cudalab_cache(lua_State *L);
int luaopen_cudalab_blas(lua_State *L);
int luaopen_cudalab_stream(lua_State *L);

/* bind_sim.c: pushes the timing model's explanation of the latest launch and returns 1 when a
 * launch was modelled after the `after`-th (bind_sim_launches() before the work); else 0. */
int bind_sim_push_model(lua_State *L, unsigned long long after);
unsigned long long bind_sim_launches(void);
/* The modelled device's name ("NVIDIA H200"), for labels. */
const char *bind_sim_device_name(void);

#endif
