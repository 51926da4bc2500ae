/* bind_texture.c: texture objects for Lua: cuda.texture(array, opts) -> Texture, which a kernel's
 * cudaTextureObject_t parameter takes (kargs.c, bind_kernel.c).
 *
 * Stance: a texture is what CUDA's samples make: a copy of a device array in memory of the
 * texture's own (a CUDA array on the GPU), read through tex1D / tex2D / tex3D with
 * the sampling options given here. Copying, rather than reading the array in place, is what the
 * GPU does with a CUDA array, so a kernel that writes the array later does not change what the
 * texture reads, on any backend. Every option is checked here and named in its error with the
 * values it takes; the options are read before the array is looked at, since reading a table
 * field may run a learner's __index, which could free the array. The userdata is made released
 * and acquired after, with one idempotent release for __gc, __close and t:free(). */
#include <string.h>

#include <lauxlib.h>

#include "bindings.h"
#include "buffer.h"
#include "runtime.h"
#include "texture.h"

static int next_texture_id; /* numbers textures in messages; never reused in a session */

static const char *const filters[] = {"point", "linear", NULL};
static const char *const modes[] = {"clamp", "wrap", "mirror", "border", NULL}; /* CL_TEXA_* */
static const char *const reads[] = {"element", "normalized", NULL};

/* The texel format of dtype t: CL_TEXF_*, or -1 for a type CUDA textures do not hold. From
 * its kind and size in dtypes.def, so a new row needs nothing here: 32-bit floats, and integers
 * of 8, 16 and 32 bits. */
static int format_of(cl_dtype t) {
  const cl_dtype_info *d = &dtype_table[t];
  int log2 = d->size == 1 ? 0 : d->size == 2 ? 1 : d->size == 4 ? 2 : -1;
  if (d->kind == DK_FLOAT) return d->size == 4 ? CL_TEXF_F32 : -1;
  if (log2 < 0) return -1;
  if (d->kind == DK_SINT) return (const int[]){CL_TEXF_S8, CL_TEXF_S16, CL_TEXF_S32}[log2];
  if (d->kind == DK_UINT) return (const int[]){CL_TEXF_U8, CL_TEXF_U16, CL_TEXF_U32}[log2];
  return -1;
}

cl_ltexture *tex_test(lua_State *L, int idx) { return luaL_testudata(L, idx, TEXTURE_MT); }

uint64_t tex_handle(lua_State *L, const cl_ltexture *t, const cl_backend *be, const char *what) {
  if (!t->live) luaL_error(L, "%s: cuda.Texture %d has been freed", what, t->id);
  if (t->be != be)
    luaL_error(L, "%s: cuda.Texture %d lives on the %s backend but the kernel on %s", what, t->id,
               t->be->name, be->name);
  return t->handle;
}

static size_t texture_bytes(const cl_ltexture *t) {
  return t->d.width * t->d.height * t->d.depth * (size_t)t->d.channels *
         dtype_table[t->dtype].size;
}

static int texture_release(lua_State *L) {
  cl_ltexture *t = luaL_checkudata(L, 1, TEXTURE_MT);
  if (t->live) rt_texture_destroy(t->be, t->handle, texture_bytes(t));
  t->live = 0;
  return 0;
}

/* opts[key] as one of names (a NULL-ended list), or dflt when absent; raises naming the option
 * and the values it takes. */
static int opt_word(lua_State *L, int opts, const char *key, const char *const *names, int dflt) {
  if (lua_getfield(L, opts, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return dflt;
  }
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  for (int i = 0; s && names[i]; i++)
    if (!strcmp(s, names[i])) {
      lua_pop(L, 1);
      return i;
    }
  const char *got = s ? lua_pushfstring(L, "\"%s\"", s) : luaL_typename(L, -1);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; names[i]; i++) {
    lua_pushfstring(L, "%s\"%s\"", i ? (names[i + 1] ? ", " : " or ") : "", names[i]);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return luaL_error(L, "cuda.texture: %s must be %s, got %s", key, lua_tostring(L, -1), got);
}

/* opts[key] as a whole number >= 1, or 0 when absent. */
static size_t opt_size(lua_State *L, int opts, const char *key) {
  if (lua_getfield(L, opts, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || v < 1 || v > (lua_Integer)1 << 40)
    luaL_error(L, "cuda.texture: %s must be a whole number of texels, at least 1, got %s", key,
               luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return (size_t)v;
}

/* opts.address: one mode for every dimension, or a table of one per dimension. */
static void opt_address(lua_State *L, int opts, cl_texture_desc *d) {
  int t = lua_getfield(L, opts, "address");
  if (t != LUA_TTABLE) {
    lua_pop(L, 1);
    int m = opt_word(L, opts, "address", modes, CL_TEXA_CLAMP);
    d->address[0] = d->address[1] = d->address[2] = m;
    return;
  }
  int top = lua_gettop(L);
  lua_Integer n = luaL_len(L, top);
  if (n != d->dims)
    luaL_error(L, "cuda.texture: address as a table gives one mode per dimension: this texture "
               "has %d, the table %I", d->dims, n);
  lua_createtable(L, 0, 1); /* {address = mode} to read each through opt_word */
  for (int k = 0; k < d->dims; k++) {
    lua_geti(L, top, k + 1);
    lua_setfield(L, top + 1, "address");
    d->address[k] = opt_word(L, top + 1, "address", modes, CL_TEXA_CLAMP);
  }
  d->address[2] = d->dims < 3 ? d->address[0] : d->address[2];
  if (d->dims < 2) d->address[1] = d->address[0];
  lua_settop(L, top - 1);
}

/* Raises for a key of opts that is no option: a misspelt one would otherwise be dropped. */
static void refuse_unknown(lua_State *L, int opts) {
  static const char *const known[] = {"width", "height", "depth", "channels", "filter",
                                      "address", "normalized", "read", NULL};
  for (lua_pushnil(L); lua_next(L, opts); lua_pop(L, 1)) {
    int ok = 0;
    for (int i = 0; known[i] && lua_type(L, -2) == LUA_TSTRING; i++)
      ok |= !strcmp(lua_tostring(L, -2), known[i]);
    if (!ok)
      luaL_error(L, "cuda.texture: unknown option %s (the options: width, height, depth, "
                 "channels, filter, address, normalized, read)",
                 lua_type(L, -2) == LUA_TSTRING ? lua_pushfstring(L, "'%s'", lua_tostring(L, -2))
                                                : luaL_tolstring(L, -2, NULL));
  }
}

/* Every option into d, the sizes but the default width; the array is not looked at. */
static void read_opts(lua_State *L, int opts, cl_texture_desc *d) {
  memset(d, 0, sizeof *d);
  lua_settop(L, opts);
  if (lua_isnil(L, opts)) {
    lua_newtable(L);
    lua_replace(L, opts);
  }
  luaL_argexpected(L, lua_istable(L, opts), opts, "table of options");
  refuse_unknown(L, opts);
  d->width = opt_size(L, opts, "width");
  d->height = opt_size(L, opts, "height");
  d->depth = opt_size(L, opts, "depth");
  if (d->depth && !d->height)
    luaL_error(L, "cuda.texture: a 3-D texture (depth) needs its height too");
  if ((d->height || d->depth) && !d->width)
    luaL_error(L, "cuda.texture: a %d-D texture needs its width", d->depth ? 3 : 2);
  d->dims = d->depth ? 3 : d->height ? 2 : 1;
  size_t ch = opt_size(L, opts, "channels");
  if (ch && ch != 1 && ch != 2 && ch != 4)
    luaL_error(L, "cuda.texture: channels must be 1, 2 or 4, got %I", (lua_Integer)ch);
  d->channels = ch ? (int)ch : 1;
  d->linear = opt_word(L, opts, "filter", filters, 0);
  opt_address(L, opts, d);
  lua_getfield(L, opts, "normalized");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    luaL_error(L, "cuda.texture: normalized must be true or false, got %s", luaL_typename(L, -1));
  d->normalized = lua_toboolean(L, -1);
  lua_pop(L, 1);
  d->read_normalized = opt_word(L, opts, "read", reads, 0);
}

/* The options against each other and the array b (n elements): sizes, element type, what
 * linear filtering, normalized reads and wrap or mirror need. Raises naming the option. */
/* The device's largest CUDA array for a texture of d->dims dimensions: a size given (0: not
 * given) beyond it is refused naming the option, as cudaMallocArray refuses it on the GPU. Also
 * what keeps the sizes' products below overflow. */
static void check_limit(lua_State *L, const cl_texture_desc *d, const cl_device *dev, int axis) {
  static const char *const names[] = {"width", "height", "depth"};
  const size_t given[] = {d->width, d->height, d->depth};
  const int *lim = d->dims == 1 ? &dev->max_texture_1d
                   : d->dims == 2 ? dev->max_texture_2d : dev->max_texture_3d;
  if (given[axis] <= (size_t)lim[axis]) return;
  if (d->dims == 1)
    luaL_error(L, "cuda.texture: a 1-D texture holds at most %d texels on the %s, and its width "
               "would be %I; give a height to make it 2-D (at most %d x %d)",
               lim[0], dev->name, (lua_Integer)given[0], dev->max_texture_2d[0],
               dev->max_texture_2d[1]);
  luaL_error(L, "cuda.texture: a %d-D texture is at most %d texels in %s on the %s, got %I",
             d->dims, lim[axis], names[axis], dev->name, (lua_Integer)given[axis]);
}

static void check_desc(lua_State *L, cl_texture_desc *d, const cl_buf *b) {
  const char *dt = dtype_table[b->dtype].name;
  if ((d->format = format_of(b->dtype)) < 0)
    luaL_error(L, "cuda.texture: a texture cannot hold %s elements: CUDA textures hold f32, i32, "
               "u32, i16, u16, i8 or u8", dt);
  const cl_device *dev = rt_device(L);
  for (int axis = 0; axis < d->dims; axis++) check_limit(L, d, dev, axis);
  size_t per = (size_t)d->channels * (d->height ? d->height : 1) * (d->depth ? d->depth : 1);
  if (!d->width) {
    if (b->n % per)
      luaL_error(L, "cuda.texture: the array's %I elements are not a whole number of texels of "
                 "%d channels", (lua_Integer)b->n, d->channels);
    d->width = b->n / per;
    check_limit(L, d, dev, 0);
  }
  if (!d->width) luaL_error(L, "cuda.texture: the array is empty");
  d->height = d->height ? d->height : 1;
  d->depth = d->depth ? d->depth : 1;
  if (d->width * per != b->n) {
    if (d->dims == 1)
      luaL_error(L, "cuda.texture: width * channels = %I * %d = %I, but the array has %I "
                 "elements", (lua_Integer)d->width, d->channels,
                 (lua_Integer)(d->width * per), (lua_Integer)b->n);
    luaL_error(L, "cuda.texture: width * height%s * channels = %I * %I%s * %d = %I, but the "
               "array has %I elements", d->dims == 3 ? " * depth" : "", (lua_Integer)d->width,
               (lua_Integer)d->height,
               d->dims == 3 ? lua_pushfstring(L, " * %I", (lua_Integer)d->depth) : "",
               d->channels, (lua_Integer)(d->width * per), (lua_Integer)b->n);
  }
  int small = dtype_table[b->dtype].size < 4;
  if (d->read_normalized && !small)
    luaL_error(L, "cuda.texture: read = \"normalized\" is for 8- and 16-bit integer arrays (u8, "
               "i8, u16, i16), which it reads as floats in [0, 1] or [-1, 1]; this one is %s", dt);
  if (d->linear && b->dtype != DT_F32 && !d->read_normalized)
    luaL_error(L, "cuda.texture: filter = \"linear\" needs float results: an f32 array, or an "
               "8- or 16-bit integer one with read = \"normalized\"; this one is %s", dt);
}

/* cuda.texture(array, opts) */
static int cuda_texture(lua_State *L) {
  cl_texture_desc d;
  read_opts(L, 2, &d);
  cl_buf *b = buf_check_live(L, 1, "cuda.texture's array");
  if (b->where != BUF_DEVICE)
    luaL_error(L, "cuda.texture: %s is in host memory; make the texture from a device array "
               "(cuda.array(h) copies it there)", buf_describe(L, b));
  const cl_backend *be = rt_backend(L);
  if (b->backend != be)
    luaL_error(L, "cuda.texture: the array lives on the %s backend, but %s is active now",
               b->backend->name, be->name);
  if (!be->texture_create)
    luaL_error(L, "cuda.texture: the %s backend has no textures", be->name);
  check_desc(L, &d, b);
  cl_ltexture *t = lua_newuserdatauv(L, sizeof *t, 0);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, TEXTURE_MT);
  t->be = be;
  t->d = d;
  t->dtype = (int)b->dtype;
  cl_err err;
  if (rt_texture_create(L, be, b->ptr, &d, texture_bytes(t), &t->handle, &err)) rt_raise(L, &err);
  t->live = 1;
  t->id = ++next_texture_id;
  return 1;
}

static void push_address(lua_State *L, const cl_ltexture *t) {
  lua_createtable(L, t->d.dims, 0);
  for (int k = 0; k < t->d.dims; k++) {
    lua_pushstring(L, modes[t->d.address[k]]);
    lua_rawseti(L, -2, k + 1);
  }
}

static int texture_index(lua_State *L) {
  cl_ltexture *t = luaL_checkudata(L, 1, TEXTURE_MT);
  const char *k = luaL_checkstring(L, 2);
  const struct { const char *name; lua_Integer v; } ints[] = {
      {"width", (lua_Integer)t->d.width}, {"height", (lua_Integer)t->d.height},
      {"depth", (lua_Integer)t->d.depth}, {"dims", t->d.dims}, {"channels", t->d.channels},
      {"id", t->id}, {NULL, 0}};
  for (int i = 0; ints[i].name; i++)
    if (!strcmp(k, ints[i].name)) return lua_pushinteger(L, ints[i].v), 1;
  if (!strcmp(k, "dtype")) lua_pushstring(L, dtype_table[t->dtype].name);
  else if (!strcmp(k, "filter")) lua_pushstring(L, filters[t->d.linear]);
  else if (!strcmp(k, "read")) lua_pushstring(L, reads[t->d.read_normalized]);
  else if (!strcmp(k, "normalized")) lua_pushboolean(L, t->d.normalized);
  else if (!strcmp(k, "address")) push_address(L, t);
  else if (!strcmp(k, "freed")) lua_pushboolean(L, !t->live);
  else {
    luaL_getmetatable(L, TEXTURE_MT);
    lua_getfield(L, -1, "__methods");
    lua_getfield(L, -1, k);
  }
  return 1;
}

static int texture_tostring(lua_State *L) {
  cl_ltexture *t = luaL_checkudata(L, 1, TEXTURE_MT);
  char size[64];
  if (t->d.dims == 1) snprintf(size, sizeof size, "%zu", t->d.width);
  else if (t->d.dims == 2) snprintf(size, sizeof size, "%zux%zu", t->d.width, t->d.height);
  else snprintf(size, sizeof size, "%zux%zux%zu", t->d.width, t->d.height, t->d.depth);
  lua_pushfstring(L, "cuda.Texture %d: %s[%s]%s, %s, %s%s%s on %s%s", t->id,
                  dtype_table[t->dtype].name, size,
                  t->d.channels > 1 ? lua_pushfstring(L, " x %d channels", t->d.channels) : "",
                  filters[t->d.linear], modes[t->d.address[0]],
                  t->d.normalized ? ", normalized coordinates" : "",
                  t->d.read_normalized ? ", read normalized" : "", t->be->name,
                  t->live ? "" : " (freed)");
  return 1;
}

static const luaL_Reg texture_methods[] = {{"free", texture_release}, {NULL, NULL}};
static const luaL_Reg texture_meta[] = {
    {"__index", texture_index}, {"__gc", texture_release}, {"__close", texture_release},
    {"__tostring", texture_tostring}, {NULL, NULL}};

/* Returns {texture}; bind_cuda.c merges it into cuda. */
int luaopen_cudalab_texture(lua_State *L) {
  luaL_newmetatable(L, TEXTURE_MT);
  luaL_newlib(L, texture_methods);
  lua_setfield(L, -2, "__methods");
  luaL_setfuncs(L, texture_meta, 0);
  lua_pop(L, 1);
  static const luaL_Reg functions[] = {{"texture", cuda_texture}, {NULL, NULL}};
  luaL_newlib(L, functions);
  return 1;
}
