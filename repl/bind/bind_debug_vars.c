/* bind_debug_vars.c: the module-scope variables (__constant__, __device__, __managed__) that a
 * debugged launch shares with the kernel's own module.
 *
 * k:debug runs the kernel's -G build, a module of its own, whose variables start as the PTX
 * declares them: a table set with k:constant, or a counter earlier launches left in a __device__
 * variable, would be missing there, and what the debugged launch wrote to one would be lost. So
 * before the launch each variable of the -G build takes the bytes its namesake holds in the
 * kernel's module, and once the launch is over the kernel's module takes back what the -G build's
 * hold then, as if the kernel's module itself had run. The check of the plain build after it
 * (bind_debug_check.c) runs on the bytes from before the launch, and the debugged launch's are
 * put back after it, as its arrays are.
 *
 * Stance: a variable is copied by its PTX name; one that only one of the two builds has (the
 * plain build drops one that no kernel reads) or whose sizes differ is left as it is. Every
 * variable is copied whole, each way: a module's variables are few and small beside its arrays.
 * On a GPU the -G build is on the simulator, so the copies go through the host. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "runtime.h"

#define VARS_MT "cudalab.DebugVars"

typedef struct dvar {
  void *plain, *dbg;      /* the variable in the kernel's module, and in the -G build */
  size_t bytes;
  unsigned char *before;  /* the kernel module's bytes before the launch */
  unsigned char *after;   /* the -G build's after it; NULL until kept */
} dvar;

typedef struct dvars {
  const cl_backend *from; /* the kernel's module's backend */
  const cl_backend *sim;  /* the -G build's, the simulator */
  int n, cap;
  dvar *v;                /* n of cap */
} dvars;

static void vars_release(dvars *d) {
  for (int i = 0; i < d->n; i++) {
    free(d->v[i].before);
    free(d->v[i].after);
  }
  free(d->v);
  d->v = NULL;
  d->n = d->cap = 0;
}

static int vars_gc(lua_State *L) {
  vars_release(luaL_checkudata(L, 1, VARS_MT));
  return 0;
}

/* A new entry of d for bytes bytes, its buffer before made; raises when memory runs out. */
static dvar *add_var(lua_State *L, dvars *d, size_t bytes) {
  if (d->n == d->cap) {
    int cap = d->cap ? 2 * d->cap : 8;
    dvar *v = realloc(d->v, (size_t)cap * sizeof *v);
    if (!v) luaL_error(L, "out of host memory for the debugger");
    d->v = v;
    d->cap = cap;
  }
  dvar *v = &d->v[d->n];
  memset(v, 0, sizeof *v);
  v->bytes = bytes;
  v->before = malloc(bytes ? bytes : 1);
  if (!v->before) luaL_error(L, "out of host memory for the debugger");
  d->n++;
  return v;
}

void bind_debug_vars_share(lua_State *L, const bind_module_view *plain, const cl_backend *sim,
                           cl_module *dbg) {
  dvars *d = lua_newuserdatauv(L, sizeof *d, 0);
  memset(d, 0, sizeof *d);
  if (luaL_newmetatable(L, VARS_MT)) {
    lua_pushcfunction(L, vars_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  d->from = plain->backend;
  d->sim = sim;
  if (!sim->module_global_at || !d->from->module_global) return;
  const char *name;
  void *dptr, *pptr;
  size_t bytes, pbytes;
  for (int i = 0; sim->module_global_at(dbg, i, &name, &dptr, &bytes) == 0; i++) {
    cl_err err;
    if (d->from->module_global(plain->mod, name, &pptr, &pbytes, &err) != 0 || pbytes != bytes)
      continue;
    dvar *v = add_var(L, d, bytes);
    v->plain = pptr;
    v->dbg = dptr;
    if (bytes && (d->from->dtoh(v->before, pptr, bytes, &err) != 0 ||
                  sim->htod(dptr, v->before, bytes, &err) != 0))
      rt_raise(L, &err);
  }
}

void bind_debug_vars_keep(lua_State *L, int idx) {
  dvars *d = luaL_checkudata(L, idx, VARS_MT);
  for (int i = 0; i < d->n; i++) {
    dvar *v = &d->v[i];
    cl_err err;
    if (!v->after && !(v->after = malloc(v->bytes ? v->bytes : 1)))
      luaL_error(L, "out of host memory for the debugger");
    if (v->bytes && (d->sim->dtoh(v->after, v->dbg, v->bytes, &err) != 0 ||
                     d->from->htod(v->plain, v->after, v->bytes, &err) != 0))
      rt_raise(L, &err);
  }
}

/* The kernel's module's variables take the bytes before (which 1) or after the launch, where
 * they were kept. A copy that fails leaves the rest as they are: the check that asks is over. */
static void put_back(lua_State *L, int idx, int before) {
  dvars *d = luaL_checkudata(L, idx, VARS_MT);
  for (int i = 0; i < d->n; i++) {
    const dvar *v = &d->v[i];
    const unsigned char *bytes = before ? v->before : v->after;
    cl_err err;
    if (bytes && v->bytes) d->from->htod(v->plain, bytes, v->bytes, &err);
  }
}

void bind_debug_vars_inputs(lua_State *L, int idx) { put_back(L, idx, 1); }
void bind_debug_vars_results(lua_State *L, int idx) { put_back(L, idx, 0); }
