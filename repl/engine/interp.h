/* interp.h: the engine's Lua interpreter: state creation with the cuda module and lua/init.lua,
 * evaluation of REPL input the way lua.c does it, scripts, completion and Ctrl-C. Used by
 * engine.c only; everything here runs inside the engine process. */
#ifndef CUDALAB_INTERP_H
#define CUDALAB_INTERP_H

#include <stddef.h>

#include <lua.h>

/* A ready state, or NULL (message on stderr) when Lua cannot even start. */
lua_State *interp_new(void);
void interp_close(lua_State *L);
/* REPL input: tried first as "return <chunk>" so expressions print, then as statements; an
 * error ending in <eof> means the chunk is incomplete. Returns an EVAL_* status (proto.h). */
int interp_eval(lua_State *L, const char *chunk, size_t len);
/* A chunk run as is (-e): EVAL_OK or EVAL_ERROR. */
int interp_exec(lua_State *L, const char *chunk, size_t len, const char *name);
/* Sets the global arg: arg[0] the script, arg[1..] its arguments. */
void interp_set_args(lua_State *L, int argc, char **argv);
/* Runs argv[0] (a file, or "-" for standard input) with ... set from the rest. */
int interp_script(lua_State *L, int argc, char **argv);
/* Completion candidates for word, where before (the line's text in front of it, may be "") puts
 * it, each ending in NUL, in a malloc'd buffer of *len bytes that the caller frees; NULL and 0
 * when there are none. */
char *interp_complete(lua_State *L, const char *word, const char *before, size_t *len);
/* Safe to call from a signal handler: makes the running Lua code raise "interrupted". */
void interp_interrupt(void);
/* Clears a pending interrupt at the start of a request. */
void interp_clear_interrupt(lua_State *L);

#endif
