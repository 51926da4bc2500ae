/* bind_constant.c: __constant__ and __device__ variables of a module, set and read from Lua:
 * m:constant("coef", {1, 2, 3}) is cudaMemcpyToSymbol, m:constant("coef") reads the table back.
 *
 * Stance: the variable is checked against what the source declares before a byte moves. Its
 * size comes from the loaded module (the backend's module_global, which cudaLibraryGetGlobal
 * answers on the GPU and the simulator's module on the simulator), its element type from the
 * source's declaration (const_decl.c), since the PTX of a float table is only bytes. Values are
 * converted as cuda.array converts them, so a fraction for an int table or a number out of range
 * is refused as it is there; a cuda.Array must be of the declared type. A variable whose type is
 * no dtype (a struct), or whose type the source hides (a macro), takes an array of any type
 * whose bytes fit, and reads back as bytes (u8).
 * Fewer values than the variable holds set its first elements, as cudaMemcpyToSymbol with a
 * smaller count does. */
#include <string.h>

#include <lauxlib.h>

#include "buffer.h"
#include "const_decl.h"
#include "dtype.h"
#include "src_guard.h"
#include "bindings.h"
#include "runtime.h"

#define SHOWN_MAX 300

/* A module-scope variable as the learner names it, found in the loaded module. */
typedef struct csym {
  const char *name;   /* as given: "coef" or "ns::coef" */
  void *dptr;         /* its device address */
  size_t bytes;       /* its size */
  int dtype;          /* its element type, -1 when the source's is no dtype */
  char type[96];      /* the element type as the source spells it, "" when not found */
  const char *untyped; /* when dtype is -1: why, as a clause */
} csym;

/* The PTX name of `name`: itself at file scope (C++ mangles no global variable there), or for
 * "a::b::c" the Itanium mangling of a variable in namespaces, _ZN1a1b1cE. -1 when it is not
 * made of identifiers. */
static int ptx_name(const char *name, char *out, size_t cap) {
  if (!strstr(name, "::")) return snprintf(out, cap, "%s", name) < (int)cap ? 0 : -1;
  size_t o = (size_t)snprintf(out, cap, "_ZN");
  for (const char *p = name; *p;) {
    size_t n = strcspn(p, ":");
    if (n == 0 || o + n + 24 > cap) return -1;
    o += (size_t)snprintf(out + o, cap - o, "%zu%.*s", n, (int)n, p);
    p += n;
    if (*p && strncmp(p, "::", 2) != 0) return -1;
    if (*p) p += 2;
  }
  return snprintf(out + o, cap - o, "E") < (int)(cap - o) ? 0 : -1;
}

/* Checks the name at idx and finds its variable; raises naming what is wrong. */
static void find_symbol(lua_State *L, int idx, const bind_module_view *v, csym *s) {
  size_t len;
  s->name = luaL_checklstring(L, idx, &len);
  char why[SRC_GUARD_WHY], shown[SHOWN_MAX], low[600];
  if (src_guard_name(s->name, len, why, sizeof why) != 0 || strpbrk(s->name, "<>(),*& ") ||
      ptx_name(s->name, low, sizeof low) != 0) {
    src_guard_quote(s->name, len, 60, shown, sizeof shown);
    luaL_error(L, "constant: the name must be a variable's, such as \"coef\" or \"ns::coef\", "
               "got %s", shown);
  }
  if (!v->backend->module_global)
    luaL_error(L, "constant: the %s backend has no device memory: run with --backend sim or "
               "on a GPU", v->backend->name);
  cl_err err;
  if (v->backend->module_global(v->mod, low, &s->dptr, &s->bytes, &err) != 0)
    luaL_error(L, "constant: %s has no __constant__ or __device__ variable '%s' (declare it at "
               "file scope: __constant__ float %s[16]; or __device__ int %s[4];)",
               v->file_name, s->name, s->name, s->name);
  s->dtype = -1;
  s->type[0] = '\0';
  s->untyped = "";
  int found = const_decl_type(v->source ? v->source : "", s->name, s->type, sizeof s->type);
  if (found < 0) {
    s->type[0] = '\0';
    s->untyped = "its declaration was not found in the source (a macro may write it)";
  } else if (found > 0 && strchr(s->type, '*')) {
    s->untyped = lua_pushfstring(L, "it is a pointer (%s)", s->type);
  } else if (found > 0) {
    s->untyped = lua_pushfstring(L, "its type %s is one the source defines (a struct, a macro "
                                 "or an alias), which is not read", s->type);
  } else if ((s->dtype = dtype_from_c_type(s->type)) < 0) {
    s->untyped = lua_pushfstring(L, "its type %s is none of %s", s->type, dtype_names());
  } else if (s->bytes % dtype_table[s->dtype].size != 0) {
    s->untyped = lua_pushfstring(L, "its %I bytes are not a whole number of %s elements",
                                 (lua_Integer)s->bytes, s->type);
    s->dtype = -1;
  }
}

/* "coef (16 x float, 64 bytes)" for messages. */
static const char *describe(lua_State *L, const csym *s) {
  if (s->dtype < 0)
    return lua_pushfstring(L, "%s (%s%s%I bytes)", s->name, s->type, s->type[0] ? ", " : "",
                           (lua_Integer)s->bytes);
  return lua_pushfstring(L, "%s (%I x %s, %I bytes)", s->name,
                         (lua_Integer)(s->bytes / dtype_table[s->dtype].size), s->type,
                         (lua_Integer)s->bytes);
}

/* Pushes the variable's values as a table: its elements by its type, or its bytes. */
static int read_symbol(lua_State *L, const bind_module_view *v, const csym *s) {
  cl_dtype t = s->dtype >= 0 ? (cl_dtype)s->dtype : DT_U8;
  size_t n = s->bytes / dtype_table[t].size;
  void *host = lua_newuserdatauv(L, s->bytes ? s->bytes : 1, 0);
  cl_err err;
  if (v->backend->dtoh(host, s->dptr, s->bytes, &err) != 0) rt_raise(L, &err);
  lua_createtable(L, (int)(n < 1 << 24 ? n : 1 << 24), 0);
  for (size_t i = 0; i < n; i++) {
    buf_push_element(L, t, host, i);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* Raises for n elements of `size` bytes that do not fit the variable. */
static void check_fits(lua_State *L, const csym *s, size_t n, size_t size, const char *what) {
  if (n * size <= s->bytes && n <= s->bytes) return;
  luaL_error(L, "constant: too large: %s is %I bytes, more than %s holds", what,
             (lua_Integer)(n * size), describe(L, s));
}

/* Writes the cuda.Array b into the variable, device to device. */
static void write_array(lua_State *L, const bind_module_view *v, const csym *s, cl_buf *b) {
  if (b->where != BUF_DEVICE)
    luaL_error(L, "constant: a HostBuffer cannot be copied to a __constant__: give a table or a "
               "cuda.Array");
  if (s->dtype >= 0 && b->dtype != (cl_dtype)s->dtype)
    luaL_error(L, "constant: wrong type: %s holds %s (%s), got %s", describe(L, s), s->type,
               dtype_table[s->dtype].name, buf_describe(L, b));
  size_t size = dtype_table[b->dtype].size;
  check_fits(L, s, b->n, size, buf_describe(L, b));
  cl_err err;
  if (b->backend != v->backend)
    luaL_error(L, "constant: the array is on the %s backend, the module on %s", b->backend->name,
               v->backend->name);
  if (b->n && v->backend->dtod(s->dptr, b->ptr, b->n * size, &err) != 0) rt_raise(L, &err);
}

/* Writes the numbers of the table at idx into the variable. */
static void write_table(lua_State *L, int idx, const bind_module_view *v, const csym *s) {
  if (s->dtype < 0)
    luaL_error(L, "constant: %s is not a table of numbers, because %s: set its bytes from a "
               "cuda.Array of the type it holds instead, as m:constant(\"%s\", cuda.array({1, "
               "2}, \"i32\"))", describe(L, s), s->untyped, s->name);
  cl_dtype t = (cl_dtype)s->dtype;
  size_t n = buf_table_len(L, idx), size = dtype_table[t].size;
  check_fits(L, s, n, size, lua_pushfstring(L, "a table of %I %s values", (lua_Integer)n,
                                            dtype_table[t].name));
  unsigned char *host = lua_newuserdatauv(L, n * size + 1, 0);
  for (size_t i = 0; i < n; i++) {
    lua_geti(L, idx, (lua_Integer)i + 1);
    buf_store_value(L, -1, t, host, i, i + 1);
    lua_pop(L, 1);
  }
  cl_err err;
  if (n && v->backend->htod(s->dptr, host, n * size, &err) != 0) rt_raise(L, &err);
}

int bind_constant_method(lua_State *L) {
  bind_module_view v;
  bind_module_of(L, 1, &v);
  int reading = lua_isnoneornil(L, 3); /* asked before find_symbol pushes its messages */
  csym s;
  find_symbol(L, 2, &v, &s);
  if (reading) return read_symbol(L, &v, &s);
  cl_buf *b = buf_test(L, 3);
  if (b) {
    write_array(L, &v, &s, buf_check_live(L, 3, "constant"));
  } else if (lua_istable(L, 3)) {
    write_table(L, 3, &v, &s);
  } else {
    luaL_error(L, "constant: the values must be a table of numbers or a cuda.Array, got %s",
               luaL_typename(L, 3));
  }
  return 0;
}
