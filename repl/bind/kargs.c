/* kargs.c: the kernel arguments that are more than a number or a whole array.
 *
 * Stance: a struct's bytes are built field by field from its layout in the learner's source
 * (ctype_layout.c), padding zeroed, and every field is checked as a parameter of its type would
 * be: a missing, extra or mistyped field is an error that names it, never a zero or garbage on
 * the device. A learner who knows better (a struct from a header this reader cannot see) passes
 * the bytes themselves as a string, whose length must be the parameter's.
 *
 * Pointers: an array is accepted for a pointer whose element it fits (kargs_dtype_fits); a
 * pointer to pointers takes an array of device addresses (u64), which cuda.ptrs or a:ptr()
 * makes; nil is NULL. The simulator checks every address a kernel dereferences against the
 * allocations; the extents recorded here add what it cannot know: that a parameter was given
 * only part of an array (a view), so that an access past the view is reported against it. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "kargs.h"
#include "runtime.h"
#include "texture.h"

#define EXT_MAX 256 /* extents one launch records; past it, views are not narrowed (no false
                       reports, only coarser ones) */

/* The extents of the launch being marshalled (one engine, one Lua state). */
static struct {
  cl_extent e[EXT_MAX];
  int n;
  int views;    /* how many of them are views */
  int overflow; /* more than EXT_MAX: the list is not handed on */
} X;

int kargs_dtype_fits(int want, int have) {
  if (want == have) return 1;
  const cl_dtype_info *w = &dtype_table[want], *h = &dtype_table[have];
  int wi = w->kind == DK_SINT || w->kind == DK_UINT, hi = h->kind == DK_SINT || h->kind == DK_UINT;
  return wi && hi && w->size == h->size;
}

static void record(int param, int view, const void *base, size_t bytes) {
  if (X.n == EXT_MAX) {
    X.overflow = 1;
    return;
  }
  X.e[X.n++] = (cl_extent){param, view, base, bytes};
  X.views += view;
}

/* The arrays a cuda.ptrs array at idx keeps alive, each recorded whole: their addresses are in
 * it, so a view of one of them passed beside it must not narrow the checks of the rest. */
static void record_targets(lua_State *L, int idx, int param) {
  if (lua_getiuservalue(L, idx, 1) == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
      cl_buf *t = buf_test(L, -1);
      if (t && t->ptr) record(param, t->view, t->ptr, t->n * dtype_table[t->dtype].size);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Raises that array b does not fit pointer p (what names it). */
static void element_mismatch(lua_State *L, const cl_buf *b, const kargs_pointee *p,
                             const char *what) {
  const lay_node *e = p->nodes && p->elem >= 0 ? &p->nodes[p->elem] : NULL;
  if (e && e->kind == LAY_VECTOR && !kargs_dtype_fits(e->dtype, (int)b->dtype))
    luaL_error(L, "%s: got %s, but %s is %d x %s: pass an array of %s (%d elements per %s)", what,
               buf_describe(L, b), p->type, e->count, dtype_table[e->dtype].name,
               dtype_table[e->dtype].name, e->count, p->type);
  luaL_error(L, "%s: got %s (%I bytes), which is not a whole number of %s (%I bytes each)", what,
             buf_describe(L, b), (lua_Integer)(b->n * dtype_table[b->dtype].size), p->type,
             (lua_Integer)(e ? e->size : 0));
}

/* Checks array b against the element p points at. Returns 1 when nothing knows that element. */
static int check_element(lua_State *L, const cl_buf *b, const kargs_pointee *p, const char *what) {
  if (p->stars >= 2) {
    if (dtype_table[b->dtype].size == 8 && !dtype_table[b->dtype].is_float) return 0;
    luaL_error(L, "%s: got %s, but the kernel expects an array of device addresses (u64), since "
               "the parameter points at pointers: make one with cuda.ptrs{a, b, ...} or "
               "cuda.array({a:ptr(), b:ptr()}, \"u64\")", what, buf_describe(L, b));
  }
  if (p->dtype >= 0) {
    if (!kargs_dtype_fits(p->dtype, (int)b->dtype))
      luaL_error(L, "%s: got %s, but the kernel expects an array of %s (%s)", what,
                 buf_describe(L, b), dtype_table[p->dtype].name, dtype_table[p->dtype].c_type);
    if (p->row > 1 && b->n % (size_t)p->row)
      luaL_error(L, "%s: got %s, which is not a whole number of rows of %d elements (the "
                 "parameter points at %s[%d])", what, buf_describe(L, b), p->row,
                 dtype_table[p->dtype].c_type, p->row);
    return 0;
  }
  if (!p->type || !strcmp(p->type, "void") || !strcmp(p->type, "char"))
    return 0; /* void * and char *: any array, as in C */
  const lay_node *e = p->nodes && p->elem >= 0 ? &p->nodes[p->elem] : NULL;
  if (!e) return 1;
  size_t bytes = b->n * dtype_table[b->dtype].size;
  if (e->kind == LAY_VECTOR && !kargs_dtype_fits(e->dtype, (int)b->dtype))
    element_mismatch(L, b, p, what);
  if (e->kind == LAY_SCALAR && !kargs_dtype_fits(e->dtype, (int)b->dtype))
    luaL_error(L, "%s: got %s, but the kernel expects an array of %s (%s)", what,
               buf_describe(L, b), dtype_table[e->dtype].name, p->type);
  if (e->size && bytes % e->size) element_mismatch(L, b, p, what);
  return 0;
}

/* The array at idx when it needs no message at all: live device memory of be whose dtype is
 * the pointer's own. The hot path of a launch: no string is made. */
static cl_buf *plainly_fits(lua_State *L, int idx, const cl_backend *be, const kargs_pointee *p) {
  cl_buf *b = buf_test(L, idx);
  return b && b->where == BUF_DEVICE && (b->ptr || !b->n) && b->backend == be && p->stars == 1 &&
                 (p->dtype == (int)b->dtype || (p->dtype < 0 && !p->type)) &&
                 (p->row <= 1 || b->n % (size_t)p->row == 0)
             ? b
             : NULL;
}

uint64_t kargs_pointer(lua_State *L, int idx, const cl_backend *be, const kargs_pointee *p,
                       const kargs_name *name, int param, int *unknown) {
  if (lua_isnil(L, idx)) return 0;
  cl_buf *b = plainly_fits(L, idx, be, p);
  if (b) {
    if (b->ptr) record(param, b->view, b->ptr, b->n * dtype_table[b->dtype].size);
    return (uint64_t)(uintptr_t)b->ptr;
  }
  int top = lua_gettop(L);
  const char *what = name->push(L, name->ud);
  b = buf_test(L, idx);
  if (!b && tex_test(L, idx))
    luaL_error(L, "%s: got a texture (cuda.Texture), but this parameter is a pointer: a texture "
               "goes to a cudaTextureObject_t parameter, read with tex1D, tex2D or tex3D",
               what);
  if (!b)
    luaL_error(L, "%s: expected a cuda.Array, got %s (nil passes NULL%s)", what,
               luaL_typename(L, idx),
               lua_type(L, idx) == LUA_TNUMBER ? "; a device address goes in a u64 array, for a "
                                                 "pointer to pointers: cuda.ptrs" : "");
  if (b->where != BUF_DEVICE)
    luaL_error(L, "%s: got %s, which is in host memory; kernels need device memory (cuda.array(h) "
               "copies it there)", what, buf_describe(L, b));
  if (!b->ptr && b->n > 0) luaL_error(L, "%s: %s has been freed", what, buf_describe(L, b));
  if (b->backend != be)
    luaL_error(L, "%s: the array lives on the %s backend but the kernel on %s", what,
               b->backend->name, be->name);
  if (check_element(L, b, p, what) && unknown) *unknown = 1;
  lua_settop(L, top);
  if (b->ptr) record(param, b->view, b->ptr, b->n * dtype_table[b->dtype].size);
  if (b->holds_ptrs) record_targets(L, idx, param);
  return (uint64_t)(uintptr_t)b->ptr;
}

/* ---- aggregates ------------------------------------------------------------------------------ */

/* The field being built, for messages: "argument 2 (Params p), field 'pos.x'". */
typedef struct agg_ctx {
  const lay_node *nodes;
  const cl_backend *be;
  const char *what; /* the argument's name, pushed once at the start */
  int param;
  char path[160];
} agg_ctx;

static const char *field_name(lua_State *L, const agg_ctx *c) {
  return lua_pushfstring(L, "%s, field '%s'", c->what, c->path);
}

static const char *push_field_name(lua_State *L, const void *ud) { return field_name(L, ud); }

static void put_node(lua_State *L, agg_ctx *c, int node, int idx, unsigned char *dst);

/* A number for a scalar field of dtype t, checked as a parameter of that type would be. */
static void put_scalar(lua_State *L, agg_ctx *c, const lay_node *n, int idx, unsigned char *dst) {
  cl_dtype t = (cl_dtype)n->dtype;
  if (n->kind == LAY_BOOL) {
    if (lua_isboolean(L, idx)) {
      *dst = (unsigned char)lua_toboolean(L, idx);
      return;
    }
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, idx, &ok);
    if (!ok || (v != 0 && v != 1))
      luaL_error(L, "%s: expected true or false, got %s", field_name(L, c),
                 luaL_tolstring(L, idx, NULL));
    *dst = (unsigned char)v;
    return;
  }
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "%s: expected a number (%s), got %s", field_name(L, c), n->type,
               luaL_typename(L, idx));
  if (dtype_table[t].is_float) {
    dtype_set_f(t, dst, 0, lua_tonumber(L, idx));
    return;
  }
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  char range[48];
  if (!ok)
    luaL_error(L, "%s: %s holds whole numbers, got %s", field_name(L, c), n->type,
               luaL_tolstring(L, idx, NULL));
  if (!dtype_holds_int(t, v))
    luaL_error(L, "%s: %I does not fit in %s (%s)", field_name(L, c), v, n->type,
               dtype_range_text(t, range, sizeof range));
  dtype_set_i(t, dst, 0, v);
}

/* Appends ".name" or "[i]" to the path for the duration of one child; returns the old length. */
static size_t path_push(agg_ctx *c, const char *name, lua_Integer i) {
  size_t len = strlen(c->path);
  if (name)
    snprintf(c->path + len, sizeof c->path - len, "%s%s", len ? "." : "", name);
  else
    snprintf(c->path + len, sizeof c->path - len, "[%lld]", (long long)i);
  return len;
}

/* Raises for any key of the table at idx that names no child of n: a misspelt field would
 * otherwise be dropped and its field left zero. */
static void refuse_extra(lua_State *L, agg_ctx *c, const lay_node *n, int idx, int by_index) {
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    int known = 0;
    if (by_index && lua_isinteger(L, -2)) {
      lua_Integer i = lua_tointeger(L, -2);
      known = i >= 1 && i <= n->count;
    } else if (!by_index && lua_type(L, -2) == LUA_TSTRING) {
      for (int f = 0; f < n->count && !known; f++)
        known = !strcmp(lua_tostring(L, -2), c->nodes[n->first + f].name);
    }
    if (known) continue;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int f = 0; f < n->count; f++) {
      if (f) luaL_addstring(&b, ", ");
      luaL_addstring(&b, c->nodes[n->first + f].name);
    }
    luaL_pushresult(&b);
    const char *fields = lua_tostring(L, -1);
    const char *key = lua_type(L, -3) == LUA_TSTRING
                          ? lua_pushfstring(L, "'%s'", lua_tostring(L, -3))
                          : luaL_tolstring(L, -3, NULL);
    if (by_index)
      luaL_error(L, "%s%s: %s has %d elements, got one at %s", c->what,
                 c->path[0] ? lua_pushfstring(L, ", field '%s'", c->path) : "", n->type, n->count,
                 key);
    luaL_error(L, "%s%s: %s has no field %s (its fields: %s)", c->what,
               c->path[0] ? lua_pushfstring(L, ", field '%s'", c->path) : "", n->type, key,
               fields);
  }
}

/* The children of struct or vector n from the table at idx: by name, or for a vector also as a
 * list ({1, 2}). */
static void put_children(lua_State *L, agg_ctx *c, const lay_node *n, int idx,
                         unsigned char *dst) {
  int list = n->kind != LAY_STRUCT && lua_rawgeti(L, idx, 1) != LUA_TNIL;
  if (n->kind != LAY_STRUCT) lua_pop(L, 1);
  refuse_extra(L, c, n, idx, list);
  for (int f = 0; f < n->count; f++) {
    const lay_node *ch = &c->nodes[n->first + f];
    size_t len = path_push(c, ch->name, 0);
    int t = list ? lua_geti(L, idx, f + 1) : lua_getfield(L, idx, ch->name);
    if (t == LUA_TNIL && ch->kind != LAY_POINTER)
      luaL_error(L, "%s: missing (%s has %d %s%s; give every one)", field_name(L, c),
                 n->type, n->count, n->kind == LAY_STRUCT ? "field" : "component",
                 n->count == 1 ? "" : "s");
    put_node(L, c, n->first + f, lua_gettop(L), dst + ch->offset);
    lua_pop(L, 1);
    c->path[len] = '\0';
  }
}

/* A char array field (char name[8]) from a Lua string, as C's initializer "Hi" fills it: its
 * bytes, then zeros to the end. A string longer than the array is refused, not cut. */
static void put_chars(lua_State *L, agg_ctx *c, const lay_node *n, int idx, unsigned char *dst) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  if (len > (size_t)n->count)
    luaL_error(L, "%s: a string of %I bytes does not fit %s[%d] (%d bytes at most; a shorter one "
               "is padded with zeros)", field_name(L, c), (lua_Integer)len,
               c->nodes[n->first].type, n->count, n->count);
  memcpy(dst, s, len); /* the rest is zero already: kargs_aggregate cleared the bytes */
}

/* Is n an array of 1-byte integers, which a string may fill? */
static int is_char_array(const agg_ctx *c, const lay_node *n) {
  const lay_node *e = &c->nodes[n->first];
  return e->kind == LAY_SCALAR && (e->dtype == DT_I8 || e->dtype == DT_U8);
}

static void put_array(lua_State *L, agg_ctx *c, const lay_node *n, int idx, unsigned char *dst) {
  refuse_extra(L, c, n, idx, 1);
  const lay_node *e = &c->nodes[n->first];
  for (int i = 0; i < n->count; i++) {
    size_t len = path_push(c, NULL, i);
    if (lua_geti(L, idx, i + 1) == LUA_TNIL && e->kind != LAY_POINTER)
      luaL_error(L, "%s: missing (the array has %d elements; give every one)", field_name(L, c),
                 n->count);
    put_node(L, c, n->first, lua_gettop(L), dst + e->size * (size_t)i);
    lua_pop(L, 1);
    c->path[len] = '\0';
  }
}

static void put_node(lua_State *L, agg_ctx *c, int node, int idx, unsigned char *dst) {
  const lay_node *n = &c->nodes[node];
  switch (n->kind) {
    case LAY_SCALAR:
    case LAY_BOOL: put_scalar(L, c, n, idx, dst); return;
    case LAY_POINTER: {
      kargs_pointee p = {n->dtype, n->stars, n->type, NULL, -1, 1};
      char type[64];
      snprintf(type, sizeof type, "%.*s", (int)strcspn(n->type, " *"), n->type);
      p.type = type;
      kargs_name nm = {push_field_name, c};
      uint64_t a = kargs_pointer(L, idx, c->be, &p, &nm, c->param, NULL);
      memcpy(dst, &a, sizeof a);
      return;
    }
    case LAY_STRUCT:
    case LAY_VECTOR:
    case LAY_ARRAY:
      if (n->kind == LAY_ARRAY && lua_type(L, idx) == LUA_TSTRING && is_char_array(c, n)) {
        put_chars(L, c, n, idx, dst);
        return;
      }
      if (!lua_istable(L, idx))
        luaL_error(L, "%s%s: expected a table for %s, got %s", c->what,
                   c->path[0] ? lua_pushfstring(L, ", field '%s'", c->path) : "", n->type,
                   luaL_typename(L, idx));
      if (n->kind == LAY_ARRAY) put_array(L, c, n, idx, dst);
      else put_children(L, c, n, idx, dst);
      return;
  }
}

void kargs_aggregate(lua_State *L, int idx, const lay_node *nodes, int root, const char *why,
                     void *dst, size_t size, size_t align, const cl_backend *be,
                     const kargs_name *name, int param) {
  memset(dst, 0, size); /* padding is zero, as a C compiler's initializer leaves it */
  const char *what = name->push(L, name->ud); /* an aggregate costs a table walk anyway */
  if (lua_type(L, idx) == LUA_TSTRING) {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    if (len != size)
      luaL_error(L, "%s: a string for it must hold its %I bytes exactly, got %I", what,
                 (lua_Integer)size, (lua_Integer)len);
    memcpy(dst, s, size);
    return;
  }
  if (!nodes || root < 0)
    luaL_error(L, "%s: its layout is unknown (%s): pass its %I bytes as a string, e.g. "
               "string.pack(\"<fi\", 1.5, 4) for struct {float f; int i;}", what,
               why && why[0] ? why : "no source signature", (lua_Integer)size);
  const lay_node *r = &nodes[root];
  if (r->size != size || (align && r->align != align))
    luaL_error(L, "%s: %s is %I bytes aligned to %I as read from the source, but the compiled "
               "kernel's parameter is %I bytes aligned to %I: pass its bytes as a string "
               "(string.pack)", what, r->type, (lua_Integer)r->size, (lua_Integer)r->align,
               (lua_Integer)size, (lua_Integer)align);
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: expected a table for %s (%s), got %s", what, r->type,
               r->kind == LAY_VECTOR ? "{x = ..., y = ...} or {1, 2}" : "its fields by name",
               luaL_typename(L, idx));
  agg_ctx c = {nodes, be, what, param, ""};
  put_node(L, &c, root, idx, dst);
  lua_pop(L, 1);
}

/* ---- extents ------------------------------------------------------------------------------- */

void kargs_begin(void) {
  X.n = 0;
  X.views = 0;
  X.overflow = 0;
}

void kargs_finish(lua_State *L, const cl_backend *be, cl_function *fn, int *had_views) {
  if (!be->sim || !be->sim->arg_extents) return;
  int views = X.views > 0 && !X.overflow;
  if (!views && !*had_views) return; /* the common case: nothing to hand on or to clear */
  cl_err err;
  if (be->sim->arg_extents(fn, X.e, views ? X.n : 0, &err) != 0) rt_raise(L, &err);
  *had_views = views;
}
