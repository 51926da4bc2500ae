/* bindings.h: the entry points of the C modules that make up `cuda` (and `cpu`). Each returns a
 * table of functions; luaopen_cudalab_cuda merges them into one module. Used by engine.c and
 * interp.c, which open them, and by main.c for CUDALAB_VERSION. */
#ifndef CUDALAB_BINDINGS_H
#define CUDALAB_BINDINGS_H

#include <lua.h>

#include "backend.h"

#define CUDALAB_VERSION "0.1.0"

int luaopen_cudalab_cuda(lua_State *L);
int luaopen_cudalab_array(lua_State *L);
int luaopen_cudalab_kernel(lua_State *L);
/* cuda.launches: the log of what reached the device (bind_launch_log.c, launch_log.h). */
int luaopen_cudalab_launch_log(lua_State *L);
int luaopen_cudalab_time(lua_State *L);
int luaopen_cudalab_compare(lua_State *L);
int luaopen_cudalab_sim(lua_State *L);
int luaopen_cudalab_cache(lua_State *L);
int luaopen_cudalab_blas(lua_State *L);
/* cuda.watch, cuda.unwatch and cuda.sanitize: debugging on the simulator (bind_debug.c). */
int luaopen_cudalab_debug(lua_State *L);
/* cuda.load and a:save: arrays in .npy and CSV files (bind_save.c). */
int luaopen_cudalab_save(lua_State *L);
/* cuda.limits and cuda.gpu_admit: a class's caps per learner, a session's place on a shared
 * GPU (bind_limits.c). */
int luaopen_cudalab_limits(lua_State *L);
/* require "cudalab.files": safe file operations for the lesson progress (bind_files.c). */
int luaopen_cudalab_files(lua_State *L);
/* require "cudalab.class": the class folder of classroom mode (bind_class.c). */
int luaopen_cudalab_class(lua_State *L);
/* require "cudalab.proc": child processes run N at a time with limits, for the grader
 * (bind_proc.c). */
int luaopen_cudalab_proc(lua_State *L);
/* require "cudalab.sandbox": a cap on the Lua state's memory, for the grader (bind_sandbox.c). */
int luaopen_cudalab_sandbox(lua_State *L);
/* bind_standard.c: the globals and libraries as start-up left them, kept once init.lua has
 * run; require "cudalab.standard" runs a function with them in place */
void standard_snapshot(lua_State *L);
int luaopen_cudalab_standard(lua_State *L);

/* bench_hooks.c: the cudalab_bench module (require "cudalab_bench"), not part of `cuda`. */
int luaopen_cudalab_bench(lua_State *L);

/* bind_kernel.c's types: a module loaded from source, and a kernel of one. */
#define MODULE_MT "cudalab.Module"
#define KERNEL_MT "cudalab.Kernel"

/* bind_kernel.c, for bench_hooks.c: a launch object's record (NULL for any other value), and
 * what it launches once checked, with the arguments first..top marshalled (raises as a launch). */
typedef struct cl_launch cl_launch;
typedef struct bind_launch_target {
  const cl_backend *backend;
  cl_function *fn;
  cl_dim3 grid, block;
  size_t shared;
  void **args;
  int cooperative; /* cooperative = true in the configuration */
} bind_launch_target;
cl_launch *bind_kernel_launch_at(lua_State *L, int idx);
void bind_kernel_prepare(lua_State *L, cl_launch *c, int first, bind_launch_target *out);

/* bind_kernel.c, for bind_debugger.c: what compiled the kernel at kidx, to compile it again
 * with -G. The strings live as long as the kernel. Raises for a value that is not a loaded
 * kernel. */
#define BIND_MAX_OPTIONS 48
typedef struct bind_kernel_origin {
  const char *source;    /* the CUDA source */
  const char *file_name; /* the learner's name for it ("kernel.cu") */
  const char *path;      /* the name NVRTC compiled it under ("src/stencil.cu"), whose folder
                            its quoted #includes are looked for in first */
  const char *name;      /* the kernel's name as the learner knows it */
  const char *lowered;   /* its .entry name */
  const char *options[BIND_MAX_OPTIONS]; /* the compiler options it was given */
  int noptions;
} bind_kernel_origin;
void bind_kernel_origin_of(lua_State *L, int kidx, bind_kernel_origin *out);
/* bind_kernel.c, for bind_constant.c: the loaded module of the value at idx (a cuda.Module, or
 * a cuda.Kernel's own), with the source it was compiled from; the pointers live as long as
 * that value. Raises for any other value, or a module that has been released. */
typedef struct bind_module_view {
  const cl_backend *backend;
  cl_module *mod;
  const char *source;    /* the CUDA source */
  const char *file_name; /* the learner's name for it ("kernel.cu") */
} bind_module_view;
void bind_module_of(lua_State *L, int idx, bind_module_view *out);
/* Methods that files above a type's own add to it, so that the type's file does not depend on
 * them: bind_cuda.c puts each in the type's __methods once every part is open.
 * bind_constant.c: m:constant(name [, values]) and k:constant(...), of modules and kernels;
 * m:variables([opts]) and k:variables(...), the variables their source declares. */
int bind_constant_method(lua_State *L);
int bind_variables_method(lua_State *L);
/* bind_debugger.c: k:debug{grid, block}, of kernels. */
int bind_debugger_method(lua_State *L);
/* bind_save.c: a:save(path [, opts]), of arrays and host buffers; and, for bind_sandbox.c,
 * sandbox.confine_saves(dir), which keeps every later a:save of the process inside dir. */
int bind_save_method(lua_State *L);
int bind_save_confine(lua_State *L);
/* bind_debug_check.c, for bind_debugger.c: begin pushes an object holding copies of the arrays
 * among the arguments first..first+n-1 (none when they are too big, or the source prints);
 * end, given its stack index once the debugged launch has completed, launches the plain build
 * (tg) on the copies and prints a note when its results differ; the arrays keep the debugged
 * launch's. names: the kernel's parameters, for the note; vars: the stack index of the module
 * variables' object (bind_debug_vars.c), whose bytes from before the launch the plain launch
 * runs on. */
void bind_debug_check_begin(lua_State *L, int first, int n, const char *source);
void bind_debug_check_end(lua_State *L, int idx, const bind_launch_target *tg,
                          const char *const *names, int nnames, int vars);
/* bind_debug_vars.c, for bind_debugger.c and bind_debug_check.c: the module's __constant__ and
 * __device__ variables that the -G build dbg shares with the kernel's module plain. share pushes
 * an object holding the bytes plain's hold and gives them to dbg's; keep, given its stack index
 * once the launch is over, gives plain what dbg's hold then; inputs and results put the bytes
 * from before and after the launch into plain (the check's plain launch runs between). Raise
 * when memory runs out or a GPU's copy fails. */
void bind_debug_vars_share(lua_State *L, const bind_module_view *plain, const cl_backend *sim,
                           cl_module *dbg);
void bind_debug_vars_keep(lua_State *L, int idx);
void bind_debug_vars_inputs(lua_State *L, int idx);
void bind_debug_vars_results(lua_State *L, int idx);

int luaopen_cudalab_stream(lua_State *L);
/* cuda.graph: launches captured and replayed (bind_graph.c). bind_graph_captured: a launch
 * from Lua was just captured; anchors the launch object at lidx and the arguments first..top
 * in the graph being made, so that what its launches point at outlives the capture. */
int luaopen_cudalab_graph(lua_State *L);
/* cuda.texture: texture objects (bind_texture.c; texture.h for the launch path). */
int luaopen_cudalab_texture(lua_State *L);
void bind_graph_captured(lua_State *L, int lidx, int first);

/* luaopt.c: t[field] as a number (a numeric string too), or dflt when t is not a table or the
 * field is nil. Raises luaL_error(fmt, field) when it is not a number or, with nonneg, when it
 * is negative or NaN: fmt holds one %s, the field's name. */
double bind_opt_number(lua_State *L, int t, const char *field, double dflt, int nonneg,
                       const char *fmt);
/* luaopt.c: t[field] = v by lua_setfield, for the table t on top of the stack, which stays
 * there. A NULL string is pushed as nil, as lua_pushstring does. */
void bind_set_int(lua_State *L, const char *field, lua_Integer v);
void bind_set_num(lua_State *L, const char *field, lua_Number v);
void bind_set_str(lua_State *L, const char *field, const char *v);
void bind_set_bool(lua_State *L, const char *field, int v);
/* luaopt.c: pushes {x =, y =, z =}, a grid or a block as the launch log and the session record
 * give it to Lua. */
void bind_push_dim(lua_State *L, cl_dim3 d);


/* bind_sim.c: pushes the timing model's explanation of the latest launch and returns 1 when a
 * launch was modelled after the `after`-th (bind_sim_launches() before the work); else 0. */
int bind_sim_push_model(lua_State *L, unsigned long long after);
unsigned long long bind_sim_launches(void);
/* The simulated device's name ("NVIDIA H200 (simulated)"), for timings' labels. */
const char *bind_sim_device_name(void);
/* The timing model's parameter of that name (sim/perf_params.def), 0 without a simulator. */
double bind_sim_perf_value(const char *name);

#endif
