/* launch_log.h: the log cuda.launches reads (bind_launch_log.c): what reached the device, in
 * order, so that a lesson's check can tell which kernel ran on which arrays. Used by the files
 * whose work it records: launches (bind_kernel.c), library calls and replays (bind_array.c,
 * bind_blas.c, bind_graph.c). */
#ifndef CUDALAB_LAUNCH_LOG_H
#define CUDALAB_LAUNCH_LOG_H

#include <lua.h>

/* While the log is on: pushes the log and a new record in it named `name`, with room for nargs
 * arguments, returns 1, and the caller sets the record's own fields (a kernel, its grid) before
 * launch_log_end; while it is off (the usual case, which costs one test of a flag), pushes
 * nothing and returns 0. */
int launch_log_begin(lua_State *L, const char *name, int nargs);
/* Adds arguments 1..nargs to the record on top, stores it in the log below it and pops both. */
void launch_log_end(lua_State *L, int nargs);
/* Logs a library call (arguments 1..nargs on the stack) as a record with no kernel, a grid and
 * block of 0, so that checks see what the library computed. */
void launch_log_library_call(lua_State *L, const char *name, int nargs);

#endif
