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
 * whose bytes fit, and reads back as bytes (u8). A variable of a CUDA vector type (float4, int2,
 * ...) is a table of its components, {x, y, z, w} or {x =, y =, ...} as a kernel's vector
 * argument is, and an array of them a table of such tables; it reads back in the same shape,
 * so what was set can be given again. A cuda.Array for one holds its components, of their type.
 * Fewer values than the variable holds set its first elements, as cudaMemcpyToSymbol with a
 * smaller count does; a vector is always given whole.
 * m:variables() lists the variables the source declares, as this file reads each. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "buffer.h"
#include "const_decl.h"
#include "ctype_layout.h"
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
  int dtype;          /* its element type (a vector's component type), -1 when the source's
                         is no dtype */
  int vec;            /* a vector type's components (4 for float4), 0 for a scalar type */
  int is_array;       /* declared with dimensions: reads back as a table of values */
  char type[96];      /* the element type as the source spells it, "" when not found */
  const char *untyped; /* when dtype is -1: why, as a clause */
} csym;

static const char *const SPACES[] = {"__constant__", "__device__", "__managed__"};

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

/* The element type of variable s, from what the source reader found (found: its answer, d
 * what it read), with the reason, pushed as a clause, when the values cannot be numbers. */
static void type_symbol(lua_State *L, int found, const const_decl_var *d, csym *s) {
  s->dtype = -1;
  s->vec = 0;
  s->is_array = found >= 0 && d->is_array;
  snprintf(s->type, sizeof s->type, "%s", found >= 0 ? d->type : "");
  s->untyped = "";
  size_t size = 0;
  if (found < 0) {
    s->untyped = "its declaration was not found in the source (a macro may write it)";
  } else if (found > 0 && strchr(s->type, '*')) {
    s->untyped = lua_pushfstring(L, "it is a pointer (%s)", s->type);
  } else if (found > 0) {
    s->untyped = lua_pushfstring(L, "its type %s is one the source defines (a struct, a macro "
                                 "or an alias), which is not read", s->type);
  } else if ((s->dtype = dtype_from_c_type(s->type)) >= 0) {
    size = dtype_table[s->dtype].size;
  } else if ((s->dtype = lay_vector(s->type, &s->vec)) >= 0) {
    size = dtype_table[s->dtype].size * (size_t)s->vec;
  } else {
    s->untyped = lua_pushfstring(L, "its type %s is none of %s, nor a CUDA vector type", s->type,
                                 dtype_names());
  }
  if (size && s->bytes % size != 0) {
    s->untyped = lua_pushfstring(L, "its %I bytes are not a whole number of %s elements",
                                 (lua_Integer)s->bytes, s->type);
    s->dtype = -1;
    s->vec = 0;
  }
  if (s->vec && s->bytes > size) s->is_array = 1; /* more than one: however it was declared */
}

/* Finds the variable s->name in the loaded module: 0, or -1 when the module has none. */
static int locate(const bind_module_view *v, csym *s) {
  char low[600];
  cl_err err;
  if (ptx_name(s->name, low, sizeof low) != 0) return -1;
  return v->backend->module_global(v->mod, low, &s->dptr, &s->bytes, &err);
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
  if (locate(v, s) != 0)
    luaL_error(L, "constant: %s has no __constant__ or __device__ variable '%s' (declare it at "
               "file scope: __constant__ float %s[16]; or __device__ int %s[4];)",
               v->file_name, s->name, s->name, s->name);
  const_decl_var d;
  type_symbol(L, const_decl_find(v->source ? v->source : "", s->name, &d), &d, s);
}

/* The bytes of one element: a scalar, or a whole vector. */
static size_t element_size(const csym *s) {
  return dtype_table[s->dtype].size * (size_t)(s->vec ? s->vec : 1);
}

/* "coef (16 x float, 64 bytes)", "pos (float4, 16 bytes)" for messages. */
static const char *describe(lua_State *L, const csym *s) {
  if (s->dtype < 0)
    return lua_pushfstring(L, "%s (%s%s%I bytes)", s->name, s->type, s->type[0] ? ", " : "",
                           (lua_Integer)s->bytes);
  if (s->vec && !s->is_array)
    return lua_pushfstring(L, "%s (%s, %I bytes)", s->name, s->type, (lua_Integer)s->bytes);
  return lua_pushfstring(L, "%s (%I x %s, %I bytes)", s->name,
                         (lua_Integer)(s->bytes / element_size(s)), s->type,
                         (lua_Integer)s->bytes);
}

/* Pushes the vector at element v of host as a table of its components, {x, y, ...}. */
static void push_vector(lua_State *L, const csym *s, const void *host, size_t v) {
  lua_createtable(L, s->vec, 0);
  for (int c = 0; c < s->vec; c++) {
    buf_push_element(L, (cl_dtype)s->dtype, host, v * (size_t)s->vec + (size_t)c);
    lua_rawseti(L, -2, c + 1);
  }
}

/* Pushes the variable's values as a table: its elements by its type, or its bytes; a vector as
 * the table of its components, an array of vectors as a table of those. */
static int read_symbol(lua_State *L, const bind_module_view *v, const csym *s) {
  cl_dtype t = s->dtype >= 0 ? (cl_dtype)s->dtype : DT_U8;
  size_t n = s->bytes / dtype_table[t].size;
  void *host = lua_newuserdatauv(L, s->bytes ? s->bytes : 1, 0);
  cl_err err;
  if (v->backend->dtoh(host, s->dptr, s->bytes, &err) != 0) rt_raise(L, &err);
  if (s->vec && !s->is_array) {
    push_vector(L, s, host, 0);
    return 1;
  }
  if (s->vec) n /= (size_t)s->vec;
  lua_createtable(L, (int)(n < 1 << 24 ? n : 1 << 24), 0);
  for (size_t i = 0; i < n; i++) {
    if (s->vec) push_vector(L, s, host, i);
    else buf_push_element(L, t, host, i);
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
  if (s->vec && b->dtype != (cl_dtype)s->dtype)
    luaL_error(L, "constant: wrong type: %s holds %s, whose components are %s, got %s",
               describe(L, s), s->type, dtype_table[s->dtype].name, buf_describe(L, b));
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

/* Stores the value at val as slot j of host (of the variable's component type), under a
 * protected call: a value the type cannot hold raises with `where` ("c2[2].y") in the message,
 * not the slot number, which the learner never wrote. */
static int store_protected(lua_State *L) {
  cl_dtype t = (cl_dtype)lua_tointeger(L, 2);
  buf_store_value(L, 1, t, lua_touserdata(L, 3), (size_t)lua_tointeger(L, 4), 1);
  return 0;
}

static void store_component(lua_State *L, int val, const csym *s, void *host, size_t j,
                            const char *where) {
  if (lua_type(L, val) != LUA_TNUMBER)
    luaL_error(L, "constant: %s must be a number, got %s", where, luaL_typename(L, val));
  lua_pushcfunction(L, store_protected);
  lua_pushvalue(L, val);
  lua_pushinteger(L, s->dtype);
  lua_pushlightuserdata(L, host);
  lua_pushinteger(L, (lua_Integer)j);
  if (lua_pcall(L, 4, 0, 0) != LUA_OK) {
    const char *msg = lua_tostring(L, -1), *colon = msg ? strstr(msg, ": ") : NULL;
    luaL_error(L, "constant: %s: %s", where, colon ? colon + 2 : "cannot be stored");
  }
}

/* Stores the vector at idx, {x, y, ...} or {x =, y =, ...}, as element v of host. `where`
 * names it in messages ("pos", "c2[3]"). */
static void store_vector(lua_State *L, int idx, const csym *s, unsigned char *host, size_t v,
                         const char *where) {
  static const char *const forms[] = {"", "{x} or {1}", "{x, y} or {1, 2}",
                                      "{x, y, z} or {1, 2, 3}", "{x, y, z, w} or {1, 2, 3, 4}"};
  if (!lua_istable(L, idx))
    luaL_error(L, "constant: %s is a %s: give its %d components, %s, got %s", where, s->type,
               s->vec, forms[s->vec], luaL_typename(L, idx));
  int keys = 0, named = lua_getfield(L, idx, "x") != LUA_TNIL;
  lua_pop(L, 1);
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) keys++;
  int whole = 1;
  for (int c = 0; c < s->vec && whole; c++) {
    if (named) whole = lua_getfield(L, idx, (char[]){"xyzw"[c], '\0'}) != LUA_TNIL;
    else whole = lua_geti(L, idx, c + 1) != LUA_TNIL;
    lua_pop(L, 1);
  }
  if (!whole || keys != s->vec) {
    int nested = lua_geti(L, idx, 1) == LUA_TTABLE;
    lua_pop(L, 1);
    luaL_error(L, "constant: %s is a %s: give its %d components, %s, got a table of %d "
               "entr%s%s", where, s->type, s->vec, forms[s->vec], keys, keys == 1 ? "y" : "ies",
               nested  ? " (it is one vector, not a table of them)"
               : !whole ? ""
               : named ? " (a field it has not?)"
                       : " (a key that is no index?)");
  }
  for (int c = 0; c < s->vec; c++) {
    if (named) lua_getfield(L, idx, (char[]){"xyzw"[c], '\0'});
    else lua_geti(L, idx, c + 1);
    const char *name = lua_pushfstring(L, "%s.%c", where, "xyzw"[c]);
    store_component(L, lua_gettop(L) - 1, s, host, v * (size_t)s->vec + (size_t)c, name);
    lua_pop(L, 2);
  }
}

/* Writes the numbers of the table at idx into the variable: one vector's components, or a
 * list of elements (numbers, or vectors for an array of them). */
static void write_table(lua_State *L, int idx, const bind_module_view *v, const csym *s) {
  if (s->dtype < 0)
    luaL_error(L, "constant: %s is not a table of numbers, because %s: set its bytes from a "
               "cuda.Array of the type it holds instead, as m:constant(\"%s\", cuda.array({1, "
               "2}, \"i32\"))", describe(L, s), s->untyped, s->name);
  cl_dtype t = (cl_dtype)s->dtype;
  size_t size = element_size(s);
  if (s->vec && !s->is_array) {
    unsigned char *host = lua_newuserdatauv(L, size, 0);
    store_vector(L, idx, s, host, 0, s->name);
    cl_err err;
    if (v->backend->htod(s->dptr, host, size, &err) != 0) rt_raise(L, &err);
    return;
  }
  size_t n = buf_table_len(L, idx);
  check_fits(L, s, n, size,
             s->vec ? lua_pushfstring(L, "a table of %I %s vectors", (lua_Integer)n, s->type)
                    : lua_pushfstring(L, "a table of %I %s values", (lua_Integer)n,
                                      dtype_table[t].name));
  unsigned char *host = lua_newuserdatauv(L, n * size + 1, 0);
  for (size_t i = 0; i < n; i++) {
    lua_geti(L, idx, (lua_Integer)i + 1);
    if (s->vec) {
      const char *where = lua_pushfstring(L, "%s[%I]", s->name, (lua_Integer)i);
      store_vector(L, lua_gettop(L) - 1, s, host, i, where);
      lua_pop(L, 1);
    } else {
      buf_store_value(L, -1, t, host, i, i + 1);
    }
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

/* The __gc of the box holding a listing: frees it whether the listing ends or a raise (out of
 * memory, a device error) cuts it short. */
static int list_gc(lua_State *L) {
  const_decl_var **list = lua_touserdata(L, 1);
  free(*list);
  *list = NULL;
  return 0;
}

/* Pushes the entry of m:variables() for variable d: {name, space, type, array, size, dtype,
 * vector, untyped, contents}; size and contents are absent when the compiled module does not
 * hold it (the compiler dropped it), dtype when its values are not numbers. */
static void push_variable(lua_State *L, const bind_module_view *v, const const_decl_var *d,
                          int contents) {
  lua_createtable(L, 0, 9);
  lua_pushstring(L, d->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, SPACES[d->space]);
  lua_setfield(L, -2, "space");
  lua_pushstring(L, d->type);
  lua_setfield(L, -2, "type");
  lua_pushboolean(L, d->is_array);
  lua_setfield(L, -2, "array");
  csym s = {.name = d->name};
  if (locate(v, &s) != 0) return;
  int top = lua_gettop(L);
  type_symbol(L, d->status, d, &s);
  lua_pushstring(L, s.untyped);
  lua_settop(L, top);
  lua_pushinteger(L, (lua_Integer)s.bytes);
  lua_setfield(L, -2, "size");
  lua_pushboolean(L, s.is_array);
  lua_setfield(L, -2, "array");
  if (s.dtype >= 0) {
    lua_pushstring(L, dtype_table[s.dtype].name);
    lua_setfield(L, -2, "dtype");
  }
  if (s.vec) {
    lua_pushinteger(L, s.vec);
    lua_setfield(L, -2, "vector");
  }
  if (!contents) return;
  luaL_Buffer b;
  char *host = luaL_buffinitsize(L, &b, s.bytes ? s.bytes : 1);
  cl_err err;
  if (s.bytes && v->backend->dtoh(host, s.dptr, s.bytes, &err) != 0) rt_raise(L, &err);
  luaL_pushresultsize(&b, s.bytes);
  lua_setfield(L, -2, "contents");
}

/* m:variables([{contents = true}]): the module-scope __constant__, __device__ and __managed__
 * variables its source declares, in order, each as m:constant reads it (see push_variable);
 * with contents, each one's bytes as the device holds them now. One reader serves this and
 * m:constant, so what one lists the other reads. */
int bind_variables_method(lua_State *L) {
  bind_module_view v;
  bind_module_of(L, 1, &v);
  int contents = 0;
  if (!lua_isnoneornil(L, 2)) {
    if (!lua_istable(L, 2))
      luaL_error(L, "variables: the options must be a table such as {contents = true}, got %s",
                 luaL_typename(L, 2));
    lua_getfield(L, 2, "contents");
    contents = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  if (!v.backend->module_global)
    luaL_error(L, "variables: the %s backend has no device memory: run with --backend sim or "
               "on a GPU", v.backend->name);
  const_decl_var **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  lua_createtable(L, 0, 1); /* frees the list whether or not a raise comes first */
  lua_pushcfunction(L, list_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  int n = const_decl_list(v.source ? v.source : "", box);
  if (n < 0) luaL_error(L, "variables: out of host memory reading the source");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    push_variable(L, &v, &(*box)[i], contents);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}
