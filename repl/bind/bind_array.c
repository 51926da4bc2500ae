/* bind_array.c: device arrays and host buffers for Lua (cuda.array, zeros, ones, full, arange,
 * rand, host). Indexing is 0-based, as in kernel code: a[0] .. a[#a - 1].
 *
 * Stance: a buffer userdata is created released (ptr NULL) before memory is acquired, and one
 * idempotent release serves __gc, __close and :free(), so an error half-way leaves nothing
 * behind (liolib.c's way with files). Bulk conversions go through a staging block that is itself
 * a Lua userdata, so a raise mid-copy cannot leak it. Printing reads only the first and last few
 * elements: printing a 10-million-element array copies six of them.
 *
 * Copies to and from Lua tables call back into Lua (__len, __index, __newindex, and finalizers
 * that any allocation may run), and that Lua code may free the very buffer being copied. So C
 * never holds a pointer into a buffer across such a call: elements go through the staging block,
 * the buffer is re-checked with buf_check_unfreed after every call into Lua, and its memory is
 * touched only by buf_read / buf_write, which take b->ptr afresh. (b->n never changes, and the
 * userdata itself is anchored on the stack, so "still live" is the whole check.) Turned down: a
 * busy flag that makes free() raise during a copy, which __gc and __close (coroutine.close, a
 * <close> variable) would have to honour too; and reading a whole table into a temporary first,
 * which doubles the memory of a 1 GiB copy. A table's length, from its __len, passes the same
 * checks as a numeric size. */
/* Managed arrays (cuda.managed) are device arrays (where BUF_DEVICE, `managed` set) whose
 * memory the host addresses too: the host reads and writes it in place after a synchronize, as a
 * C program would, telling the backend first (managed_host) so that a simulator can move its
 * record of the pages and charge the faults. They are filled by the host, never by cudalab's
 * fill kernels, so that a new one lives on the host on every backend, as the model says. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "buffer.h"
#include "builtin.h"
#include "bindings.h"
#include "launch_log.h"
#include "runtime.h"
#include "stream.h"
#include "udata_tag.h"

#define STAGE_ELEMS ((size_t)1 << 18) /* elements converted per staging block */
#define MAX_ELEMS ((size_t)1 << 40)   /* beyond any device's memory, below size_t overflow */
#define SHOW_EDGE 3                   /* elements shown at each end of a summary */

/* ---- arguments ----------------------------------------------------------------------------- */

static cl_buf *check_self(lua_State *L) { return buf_check_live(L, 1, "self"); }

/* self of a metamethod that also serves freed buffers (__index, __len, __tostring). Learners
 * can call these through getmetatable(a) with any value, so self is checked all the same. */
static cl_buf *check_buf(lua_State *L) {
  cl_buf *b = buf_test(L, 1);
  luaL_argexpected(L, b != NULL, 1, "cuda.Array or cuda.HostBuffer");
  return b;
}

static cl_dtype check_dtype(lua_State *L, int idx, cl_dtype dflt) {
  if (lua_isnoneornil(L, idx)) return dflt;
  const char *name = luaL_checkstring(L, idx);
  int t = dtype_parse(name);
  if (t < 0) luaL_error(L, "unknown dtype '%s' (choose one of %s)", name, dtype_names());
  return (cl_dtype)t;
}

/* A number of elements, from the value at idx. `what` names it in messages: "size", or "table
 * length" for what a table's __len returned, which is checked exactly as a size is. At most
 * MAX_ELEMS, so that no byte count (at most 8 bytes an element) can wrap. */
static size_t check_count_of(lua_State *L, int idx, const char *what) {
  lua_Integer n;
  idx = lua_absindex(L, idx);
  if (lua_isinteger(L, idx)) {
    n = lua_tointeger(L, idx);
  } else {
    int ok = 0;
    n = lua_tointegerx(L, idx, &ok);
    if (!ok)
      luaL_error(L, "%s must be a whole number of elements, got %s", what,
                 lua_type(L, idx) == LUA_TNUMBER ? lua_pushfstring(L, "%f", lua_tonumber(L, idx))
                                                   : luaL_typename(L, idx));
  }
  if (n < 0) luaL_error(L, "%s must not be negative, got %I", what, n);
  if ((size_t)n > MAX_ELEMS)
    luaL_error(L, "%s %I is larger than any device's memory, or any host's (at most %I elements)",
               what, n, (lua_Integer)MAX_ELEMS);
  return (size_t)n;
}

static size_t check_count(lua_State *L, int idx) { return check_count_of(L, idx, "size"); }

size_t buf_table_len(lua_State *L, int idx) {
  lua_len(L, idx);
  size_t n = check_count_of(L, -1, "table length");
  lua_pop(L, 1);
  return n;
}

/* ---- element conversion -------------------------------------------------------------------- */

/* A whole number given as a float that an integer dtype holds though no Lua integer does
 * (2^63 .. 2^64 - 1 for u64), stored at slot j; 0 when there is none. */
static int store_whole(lua_State *L, int idx, cl_dtype t, void *base, size_t j) {
  if (lua_type(L, idx) != LUA_TNUMBER || !dtype_holds_whole(t, lua_tonumber(L, idx))) return 0;
  dtype_set_f(t, base, j, lua_tonumber(L, idx));
  return 1;
}

/* Stores the Lua value at idx in slot j of host memory base, raising on a value the dtype cannot
 * hold (a fraction for an integer type, a number out of range); messages name it element i.
 * An integer type as wide as a Lua integer holds every one: u64 takes a negative integer as the
 * value with the same bits, as it reads back (dtypes.def's DK_UINT). */
static void store_value(lua_State *L, int idx, cl_dtype t, void *base, size_t j, size_t i) {
  const cl_dtype_info *d = &dtype_table[t];
  int ok = 0;
  if (d->is_float) {
    lua_Number v = lua_tonumberx(L, idx, &ok);
    if (!ok)
      luaL_error(L, "element %I: expected a number, got %s", (lua_Integer)i, luaL_typename(L, idx));
    dtype_set_f(t, base, j, v);
    return;
  }
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  char range[48];
  if (!ok) {
    if (store_whole(L, idx, t, base, j)) return;
    if (lua_type(L, idx) != LUA_TNUMBER)
      luaL_error(L, "element %I: expected a number, got %s", (lua_Integer)i, luaL_typename(L, idx));
    lua_Number f = lua_tonumber(L, idx);
    if (f == floor(f)) { /* all its digits: 2^64 as 1.844674407371e+19 would look in range */
      char num[64];
      if (fabs(f) < 1e21) snprintf(num, sizeof num, "%.0f", f);
      for (int g = 15; fabs(f) >= 1e21 && g <= 17; g++) /* the fewest digits that read back */
        if (snprintf(num, sizeof num, "%.*g", g, f) > 0 && strtod(num, NULL) == f) break;
      luaL_error(L, "element %I: %s does not fit in %s (%s)", (lua_Integer)i, num, d->name,
                 dtype_range_text(t, range, sizeof range));
    }
    luaL_error(L, "element %I: %s holds whole numbers, got %f", (lua_Integer)i, d->name, f);
  }
  if (!dtype_holds_int(t, v))
    luaL_error(L, "element %I: %I does not fit in %s (%s)", (lua_Integer)i, v, d->name,
               dtype_range_text(t, range, sizeof range));
  dtype_set_i(t, base, j, v);
}

void buf_store_value(lua_State *L, int idx, cl_dtype t, void *base, size_t j, size_t i) {
  store_value(L, idx, t, base, j, i);
}

void buf_push_element(lua_State *L, cl_dtype t, const void *base, size_t i) {
  if (dtype_table[t].is_float)
    lua_pushnumber(L, dtype_get_f(t, base, i));
  else
    lua_pushinteger(L, dtype_get_i(t, base, i));
}

/* ---- raw transfers ------------------------------------------------------------------------- */

static void raise_err(lua_State *L, const cl_err *err) { rt_raise(L, err); }

/* The host is about to touch n elements of managed b from `first`: the device must be idle
 * (a kernel may be writing them), and a simulator moves its record of the pages. */
static void managed_touch(lua_State *L, const cl_buf *b, size_t first, size_t n, int write) {
  size_t es = dtype_table[b->dtype].size;
  cl_err err;
  if (b->backend->synchronize(&rt.interrupted, &err) != 0) raise_err(L, &err);
  if (b->backend->managed_host &&
      b->backend->managed_host((char *)b->ptr + first * es, n * es, write, &err) != 0)
    raise_err(L, &err);
}

void buf_read(lua_State *L, const cl_buf *b, size_t first, size_t n, void *dst) {
  if (n == 0) return; /* an empty buffer has no memory at all (ptr NULL): nothing to copy */
  size_t es = dtype_table[b->dtype].size;
  const char *src = (const char *)b->ptr + first * es;
  if (b->where != BUF_DEVICE) {
    memcpy(dst, src, n * es);
    return;
  }
  rt_refuse_in_capture(L, "reading a device array on the host (a[i], print, tolist, compare)");
  if (b->managed) {
    managed_touch(L, b, first, n, 0);
    memcpy(dst, src, n * es);
    return;
  }
  cl_err err;
  if (b->backend->synchronize(&rt.interrupted, &err) || b->backend->dtoh(dst, src, n * es, &err))
    raise_err(L, &err);
}

static void buf_write(lua_State *L, cl_buf *b, size_t first, size_t n, const void *src) {
  if (n == 0) return; /* as in buf_read */
  size_t es = dtype_table[b->dtype].size;
  char *dst = (char *)b->ptr + first * es;
  if (b->where != BUF_DEVICE) {
    memcpy(dst, src, n * es);
    return;
  }
  rt_refuse_in_capture(L, "writing a device array from the host (a[i] = v, a fill, a copy)");
  if (b->managed) {
    managed_touch(L, b, first, n, 1);
    memcpy(dst, src, n * es);
    return;
  }
  cl_err err;
  if (b->backend->htod(dst, src, n * es, &err)) raise_err(L, &err);
}

/* A staging block of up to STAGE_ELEMS elements of dtype t, left on the stack. */
static void *push_stage(lua_State *L, cl_dtype t, size_t n) {
  size_t elems = n < STAGE_ELEMS ? n : STAGE_ELEMS;
  return lua_newuserdatauv(L, (elems ? elems : 1) * dtype_table[t].size, 0);
}

/* ---- allocation and release ---------------------------------------------------------------- */

/* A view's memory is its root's: releasing the view only forgets it. */
static void buf_release(cl_buf *b) {
  if (!b->ptr) return;
  if (b->view) {
    b->ptr = NULL;
    return;
  }
  if (b->where == BUF_DEVICE)
    rt_release_device(b->backend, b->ptr, b->n * dtype_table[b->dtype].size);
  else if (b->where == BUF_PINNED)
    b->backend->host_release_pinned(b->ptr);
  else
    free(b->ptr);
  b->ptr = NULL;
}

/* Device memory through the runtime, which counts it against the session's memory limit and
 * raises when the limit is reached. */
static int try_acquire(lua_State *L, cl_buf *b, size_t bytes, cl_err *err) {
  if (b->where == BUF_DEVICE) {
    char label[48]; /* names the array in the simulator's out-of-bounds reports */
    snprintf(label, sizeof label, "%s[%zu]", dtype_table[b->dtype].name, b->n);
    return rt_alloc_device(L, b->backend, &b->ptr, bytes, label, b->managed, err);
  }
  if (b->where == BUF_PINNED) return b->backend->host_alloc_pinned(&b->ptr, bytes, err);
  return (b->ptr = host_alloc_zeroed(bytes, err)) ? 0 : -1;
}

/* Pushes a new buffer, zero-filled unless `overwritten`: the caller fills every element before
 * the buffer can be seen (a constructor that copies or fills), so that a 1 GiB cuda.ones does not
 * write its memory twice. Device memory the learner has dropped is only returned when Lua's
 * collector runs, which knows nothing of its size: so an allocation that fails for lack of
 * memory runs a full collection and tries once more before giving up. */
static cl_buf *buf_alloc(lua_State *L, size_t n, cl_dtype t, buf_where where, int overwritten,
                         int managed) {
  if (n > MAX_ELEMS) /* callers check counts; this keeps `bytes` below from ever wrapping */
    luaL_error(L, "%I elements is larger than any device's memory", (lua_Integer)n);
  cl_buf *b = lua_newuserdatauv(L, sizeof *b, 2); /* 1: what it keeps alive; 2: its views */
  memset(b, 0, sizeof *b);
  b->tag = udata_tag(b, UDATA_BUFFER);
  b->n = n;
  b->dtype = t;
  b->where = where;
  b->managed = managed;
  b->backend = where == BUF_HOST ? NULL : rt_backend(L);
  luaL_setmetatable(L, where == BUF_DEVICE ? ARRAY_MT : HOST_MT);
  size_t bytes = n * dtype_table[t].size;
  cl_err err;
  if (try_acquire(L, b, bytes, &err) == 0) goto zero;
  if (!err.oom) raise_err(L, &err);
  lua_gc(L, LUA_GCCOLLECT, 0);
  if (try_acquire(L, b, bytes, &err) == 0) goto zero;
  if (err.host_limited)
    luaL_error(L, "out of memory allocating %s: %s. Free arrays you no longer need (a = nil; "
               "collectgarbage()) or use smaller ones.", buf_describe(L, b), err.text);
  {
    size_t free_b = 0, total_b = 0;
    cl_err ignored;
    int known = where == BUF_DEVICE && b->backend->meminfo(&free_b, &total_b, &ignored) == 0;
    char need[32], fr[32], tot[32];
    luaL_error(L, "out of %s memory allocating %s (%s)%s%s",
               where == BUF_DEVICE ? "device" : "host",
               buf_describe(L, b), cl_bytes_text(need, sizeof need, (double)bytes),
               known ? lua_pushfstring(L, "; %s free of %s",
                                       cl_bytes_text(fr, sizeof fr, (double)free_b),
                                       cl_bytes_text(tot, sizeof tot, (double)total_b))
                     : "",
               ". Free arrays you no longer need (a = nil; collectgarbage()) or use smaller ones.");
  }
zero:
  if (managed && bytes && !overwritten && !b->backend->alloc_zeroes) {
    memset(b->ptr, 0, bytes); /* by the host: the pages start there */
    return b;
  }
  if (where == BUF_DEVICE && bytes && !overwritten && !b->backend->alloc_zeroes) {
    if (b->backend->memset(b->ptr, 0, bytes, &err)) raise_err(L, &err);
  }
  return b;
}

static cl_buf *buf_new(lua_State *L, size_t n, cl_dtype t, buf_where where) {
  return buf_alloc(L, n, t, where, 0, 0);
}

/* For constructors that write every element before returning the buffer. */
static cl_buf *buf_new_overwritten(lua_State *L, size_t n, cl_dtype t, buf_where where) {
  return buf_alloc(L, n, t, where, 1, 0);
}

/* Releases the buffer at idx and forgets every view of it (its weak table, uservalue 2), so
 * that a view of freed memory says "freed" rather than reading it. */
static void release_at(lua_State *L, int idx) {
  cl_buf *b = buf_test(L, idx);
  if (!b) return;
  if (!b->view && b->ptr) {
    if (lua_getiuservalue(L, idx, 2) == LUA_TTABLE) {
      for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
        cl_buf *v = buf_test(L, -2);
        if (v) buf_release(v);
      }
    }
    lua_pop(L, 1);
  }
  buf_release(b);
}

cl_buf *buf_push_new(lua_State *L, size_t n, cl_dtype t, int device) {
  return buf_new_overwritten(L, n, t, device ? BUF_DEVICE : BUF_HOST);
}

void buf_store(lua_State *L, cl_buf *b, size_t first, size_t n, const void *src) {
  buf_write(L, b, first, n, src);
}

static int buf_gc(lua_State *L) {
  release_at(L, 1);
  return 0;
}

static int buf_free(lua_State *L) {
  luaL_argexpected(L, buf_test(L, 1) != NULL, 1, "cuda.Array or cuda.HostBuffer");
  release_at(L, 1);
  return 0;
}

/* ---- views and addresses ------------------------------------------------------------------- */

/* Pushes a view of n elements of the live buffer at idx from its element `first` (checked by
 * the caller). A view of a view views the root: one level, whatever the chain. */
static cl_buf *push_view(lua_State *L, int idx, size_t first, size_t n) {
  cl_buf *src = buf_test(L, idx);
  cl_buf *v = lua_newuserdatauv(L, sizeof *v, 2);
  int vi = lua_gettop(L);
  memset(v, 0, sizeof *v);
  v->tag = udata_tag(v, UDATA_BUFFER);
  v->n = n;
  v->dtype = src->dtype;
  v->where = src->where;
  v->backend = src->backend;
  v->view = 1;
  v->managed = src->managed;
  v->first = src->first + first;
  v->root_n = src->view ? src->root_n : src->n;
  v->ptr = (char *)src->ptr + first * dtype_table[src->dtype].size;
  luaL_setmetatable(L, src->where == BUF_DEVICE ? ARRAY_MT : HOST_MT);
  if (src->view) lua_getiuservalue(L, idx, 1); /* the root */
  else lua_pushvalue(L, idx);
  int root = lua_gettop(L);
  lua_pushvalue(L, root);
  lua_setiuservalue(L, vi, 1); /* the view keeps its root alive */
  if (lua_getiuservalue(L, root, 2) != LUA_TTABLE) { /* the root's weak set of views */
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, root, 2);
  }
  lua_pushvalue(L, vi);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_settop(L, vi);
  return v;
}

/* An element offset or count from idx, at most `most`; `what` names it in the message. */
static size_t check_span(lua_State *L, int idx, size_t most, const char *what, const cl_buf *b) {
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "%s must be a whole number of elements, got %s", what,
               luaL_tolstring(L, idx, NULL));
  if (v < 0 || (size_t)v > most)
    luaL_error(L, "%s %I is out of range for %s (0..%I)", what, v, buf_describe(L, b),
               (lua_Integer)most);
  return (size_t)v;
}

/* a:view(offset [, count]): elements offset .. offset + count - 1 of a (to its end when count
 * is left out) as an array of their own, sharing a's memory: a kernel given it sees element
 * `offset` as its element 0, as C's a + offset, and on the simulator an access past the view's
 * end is reported against the view. */
static int buf_view(lua_State *L) {
  cl_buf *b = check_self(L);
  size_t off = check_span(L, 2, b->n, "view offset", b);
  size_t n = lua_isnoneornil(L, 3) ? b->n - off
                                   : check_span(L, 3, b->n - off, "view count", b);
  push_view(L, 1, off, n);
  return 1;
}

/* a + k (or k + a): a:view(k), C's pointer arithmetic on an array. */
static int buf_add(lua_State *L) {
  int self = buf_test(L, 1) ? 1 : 2, k = 3 - self;
  cl_buf *b = buf_check_live(L, self, "an array in a + k");
  if (!lua_isinteger(L, k))
    return luaL_error(L, "an array plus a whole number of elements (a + 256) is a view from that "
                      "element; got %s + %s", luaL_typename(L, 1), luaL_typename(L, 2));
  push_view(L, self, check_span(L, k, b->n, "offset", b), b->n - (size_t)lua_tointeger(L, k));
  return 1;
}

/* a:ptr(): a's device address (a view's, for a view) as an integer, to store in a u64 array
 * that a kernel reads as pointers (float **). The array must outlive every launch that uses
 * the address; cuda.ptrs keeps its arrays alive for that reason. */
static int buf_ptr(lua_State *L) {
  cl_buf *b = check_self(L);
  if (b->where != BUF_DEVICE)
    return luaL_error(L, "%s is in host memory: only a device array has a device address",
                      buf_describe(L, b));
  lua_pushinteger(L, (lua_Integer)(uintptr_t)b->ptr);
  return 1;
}

/* cuda.ptrs({a, b, ...}): a u64 array of the arrays' device addresses (false for NULL), for a
 * kernel that takes float **. It keeps the arrays alive as long as it lives, and on the
 * simulator every address a kernel reads from it is still checked against its array. */
static int cuda_ptrs(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  size_t n = buf_table_len(L, 1);
  lua_createtable(L, n < 1024 ? (int)n : 1024, 0); /* the arrays, anchored */
  int keep = lua_gettop(L);
  const cl_backend *be = rt_backend(L);
  uint64_t *stage = lua_newuserdatauv(L, (n ? n : 1) * sizeof *stage, 0);
  for (size_t i = 0; i < n; i++) {
    lua_geti(L, 1, (lua_Integer)i + 1);
    if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
      stage[i] = 0;
    } else {
      cl_buf *b = buf_test(L, -1);
      if (!b || b->where != BUF_DEVICE)
        luaL_error(L, "cuda.ptrs: element %I must be a cuda.Array (or false for NULL), got %s",
                   (lua_Integer)i + 1, b ? buf_describe(L, b) : luaL_typename(L, -1));
      if (!b->ptr && b->n > 0)
        luaL_error(L, "cuda.ptrs: element %I, %s, has been freed", (lua_Integer)i + 1,
                   buf_describe(L, b));
      if (b->backend != be)
        luaL_error(L, "cuda.ptrs: element %I lives on the %s backend, but %s is active",
                   (lua_Integer)i + 1, b->backend->name, be->name);
      stage[i] = (uint64_t)(uintptr_t)b->ptr;
      lua_pushvalue(L, -1);
      lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
    }
    lua_pop(L, 1);
  }
  cl_buf *out = buf_new_overwritten(L, n, DT_U64, BUF_DEVICE);
  out->holds_ptrs = 1;
  lua_pushvalue(L, keep);
  lua_setiuservalue(L, -2, 1);
  buf_write(L, out, 0, n, stage);
  return 1;
}

/* ---- filling ------------------------------------------------------------------------------- */

/* Fills all of b from a generator of element i into host memory at slot j: straight into b's
 * memory where that is host memory (host arrays, the simulator's device), else through a staging
 * block copied to the device. Generators never call into Lua (the host path writes straight
 * into b->ptr); tables go through fill_from_table.
 * Allocating the staging block may run a collection, and with it any finalizer: one that frees
 * b (a learner's __gc holding it, or one that reaches it through debug.getlocal) would leave
 * buf_write copying to a NULL pointer. Hence the check after the allocation; nothing after it
 * calls into Lua. */
typedef void (*gen_fn)(lua_State *L, cl_dtype t, void *base, size_t j, size_t i, void *ud);

static void fill_with(lua_State *L, cl_buf *b, gen_fn gen, void *ud) {
  if (b->managed) { /* the host writes it in place */
    managed_touch(L, b, 0, b->n, 1);
    for (size_t i = 0; i < b->n; i++) gen(L, b->dtype, b->ptr, i, i, ud);
    return;
  }
  if (b->where != BUF_DEVICE || b->backend->device_wrote) {
    for (size_t i = 0; i < b->n; i++) gen(L, b->dtype, b->ptr, i, i, ud);
    if (b->where == BUF_DEVICE) b->backend->device_wrote(b->ptr, b->n * dtype_table[b->dtype].size);
    return;
  }
  void *stage = push_stage(L, b->dtype, b->n);
  buf_check_unfreed(L, b, "a fill");
  for (size_t first = 0; first < b->n; first += STAGE_ELEMS) {
    size_t cnt = b->n - first < STAGE_ELEMS ? b->n - first : STAGE_ELEMS;
    for (size_t j = 0; j < cnt; j++) gen(L, b->dtype, stage, j, first + j, ud);
    buf_write(L, b, first, cnt, stage);
  }
  lua_pop(L, 1);
}

/* On the GPU, fills, ranges and random numbers are made by cudalab's own kernels at device
 * bandwidth; elsewhere (simulator, no GPU) device memory is host memory and the host fills it. */
static int on_gpu(const cl_buf *b) {
  return b->where == BUF_DEVICE && !b->managed && b->backend == &cl_backend_cuda;
}

static void fill_const(lua_State *L, cl_buf *b, const void *value);
static void gen_const(lua_State *L, cl_dtype t, void *base, size_t j, size_t i, void *ud) {
  (void)L;
  (void)i;
  memcpy((char *)base + j * dtype_table[t].size, ud, dtype_table[t].size);
}

static void gen_range(lua_State *L, cl_dtype t, void *base, size_t j, size_t i, void *ud) {
  (void)L;
  (void)ud;
  if (dtype_table[t].is_float)
    dtype_set_f(t, base, j, (double)i);
  else
    dtype_set_i(t, base, j, (int64_t)i);
}

/* splitmix64 of (seed, i): the same numbers on every backend and every run, whatever the
 * order elements are generated in, which a sequential generator could not promise. The GPU
 * path (builtin.c) computes the same function. */
static void gen_rand(lua_State *L, cl_dtype t, void *base, size_t j, size_t i, void *ud) {
  (void)L;
  builtin_rand_host(t, *(uint64_t *)ud, i, base, j);
}

/* The value at idx as one element of dtype t, in `out`. */
static void element_of(lua_State *L, int idx, cl_dtype t, cl_element *out) {
  store_value(L, idx, t, out, 0, 0);
}

/* ---- copies -------------------------------------------------------------------------------- */

/* Copies n elements from src (from element soff) to dst (from doff), ranges already checked.
 * On stream st (a copy between host and device only) it is queued there; with st NULL it goes
 * on the default stream and the host waits for it, as it always has. A running timeline
 * records copies that touch the device. */
static void queue_copy(lua_State *L, cl_lstream *st, cl_buf *dst, size_t doff, const cl_buf *src,
                       size_t soff, size_t n) {
  if (dst->where == BUF_DEVICE || src->where == BUF_DEVICE)
    rt_refuse_in_capture(L, "a copy of a device array");
  size_t es = dtype_table[src->dtype].size, bytes = n * es;
  char *d = (char *)dst->ptr + doff * es;
  const char *s = (const char *)src->ptr + soff * es;
  if (bytes == 0) return;
  if (dst->where != BUF_DEVICE && src->where != BUF_DEVICE) {
    memmove(d, s, bytes);
    return;
  }
  const cl_backend *be = dst->where == BUF_DEVICE ? dst->backend : src->backend;
  const cl_buf *host = dst->where == BUF_DEVICE ? src : dst;
  const char *dir = dst->where != BUF_DEVICE ? "D2H" : src->where != BUF_DEVICE ? "H2D" : "D2D";
  int slot = stream_tracing ? trace_open(L, st) : -1;
  cl_err err;
  int rc = 0;
  if (st)
    rc = be->copy_async(d, s, bytes, dir[0] == 'H' ? CL_COPY_H2D : CL_COPY_D2H, st->s, &err);
  else if (dir[0] == 'D' && dir[2] == 'D')
    rc = be->dtod(d, s, bytes, &err);
  else if (dir[0] == 'H')
    rc = be->htod(d, s, bytes, &err);
  else
    rc = be->synchronize(&rt.interrupted, &err) || be->dtoh(d, s, bytes, &err);
  if (rc) raise_err(L, &err);
  if (slot >= 0)
    trace_close(L, st, slot,
                &(trace_info){.kind = "copy", .dir = dir, .bytes = bytes,
                              .pinned = strcmp(dir, "D2D") != 0 && host->where == BUF_PINNED});
}

static void copy_buf(lua_State *L, cl_buf *dst, const cl_buf *src) {
  if (dst->n != src->n || dst->dtype != src->dtype)
    luaL_error(L, "cannot copy %s into %s: length and dtype must match", buf_describe(L, src),
               buf_describe(L, dst));
  if (dst->where == BUF_DEVICE && src->where == BUF_DEVICE && dst->backend != src->backend)
    luaL_error(L, "cannot copy between arrays of the %s and %s backends; go through a host buffer",
               src->backend->name, dst->backend->name);
  queue_copy(L, NULL, dst, 0, src, 0, src->n);
}

/* One offset option of cuda.copy: a whole number of elements, at least 0. */
static size_t copy_offset(lua_State *L, int opts, const char *key, size_t dflt) {
  if (lua_getfield(L, opts, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return dflt;
  }
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || v < 0)
    luaL_error(L, "cuda.copy: %s must be a whole number of elements, at least 0, got %s", key,
               luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return (size_t)v;
}

/* Rejects a misspelt option ({strem = s}) instead of silently copying on the default stream. */
static void copy_known_keys(lua_State *L, int opts) {
  static const char *const keys[] = {"stream", "count", "offset", "dst_offset", "src_offset", NULL};
  for (lua_pushnil(L); lua_next(L, opts); lua_pop(L, 1)) {
    int known = 0;
    for (int i = 0; keys[i] && lua_type(L, -2) == LUA_TSTRING; i++)
      known |= strcmp(lua_tostring(L, -2), keys[i]) == 0;
    if (!known)
      luaL_error(L, "cuda.copy: unknown option %s (the options are stream, count, offset, "
                 "dst_offset, src_offset)", luaL_tolstring(L, -2, NULL));
  }
}

/* The range [off, off + n) must lie inside b. */
static void copy_in_range(lua_State *L, const cl_buf *b, size_t off, size_t n, const char *what) {
  if (off > b->n || n > b->n - off)
    luaL_error(L, "cuda.copy: the %s range is elements %I to %I, but %s has %I", what,
               (lua_Integer)off, (lua_Integer)(off + n), buf_describe(L, b), (lua_Integer)b->n);
}

/* cuda.copy(dst, src [, {stream = s, count = n, offset = i, dst_offset = i, src_offset = i}]):
 * count elements (all of src past its offset by default) from src to dst. offset sets both
 * offsets. On a stream, a copy between host and device is queued there and returns at once
 * when the host buffer is pinned; without one it is the same copy as dst:copyfrom(src). */
static int cuda_copy(lua_State *L) {
  buf_check_live(L, 1, "destination");
  buf_check_live(L, 2, "source");
  if (!lua_isnoneornil(L, 3) && !lua_istable(L, 3))
    return luaL_argerror(L, 3, "expected options like {stream = s, offset = 0, count = n}");
  cl_lstream *st = NULL;
  size_t doff = 0, soff = 0, n = 0;
  int have_count = 0;
  if (lua_istable(L, 3)) {
    copy_known_keys(L, 3);
    size_t both = copy_offset(L, 3, "offset", 0);
    doff = copy_offset(L, 3, "dst_offset", both);
    soff = copy_offset(L, 3, "src_offset", both);
    have_count = lua_getfield(L, 3, "count") != LUA_TNIL;
    lua_pop(L, 1);
    n = copy_offset(L, 3, "count", 0);
    if (lua_getfield(L, 3, "stream") != LUA_TNIL)
      st = stream_check(L, lua_gettop(L), "cuda.copy's stream");
  }
  /* the options' __index may have run Lua code that freed a buffer: look again */
  cl_buf *dst = buf_check_live(L, 1, "destination");
  cl_buf *src = buf_check_live(L, 2, "source");
  if (dst->dtype != src->dtype)
    return luaL_error(L, "cannot copy %s into %s: the dtypes differ", buf_describe(L, src),
                      buf_describe(L, dst));
  if (!have_count) n = soff <= src->n ? src->n - soff : 0;
  copy_in_range(L, src, soff, n, "source");
  copy_in_range(L, dst, doff, n, "destination");
  if (dst->where == BUF_DEVICE && src->where == BUF_DEVICE && dst->backend != src->backend)
    return luaL_error(L, "cannot copy between arrays of the %s and %s backends; "
                      "go through a host buffer",
                      src->backend->name, dst->backend->name);
  if (st && (dst->where == BUF_DEVICE) == (src->where == BUF_DEVICE))
    return luaL_error(L, "cuda.copy: a copy on a stream goes between host and device (%s into %s)",
                      buf_describe(L, src), buf_describe(L, dst));
  if (st && (dst->where == BUF_DEVICE ? dst : src)->backend != st->be)
    return luaL_error(L, "cuda.copy: cuda.Stream %d belongs to the %s backend, the array to %s",
                      st->id, st->be->name, (dst->where == BUF_DEVICE ? dst : src)->backend->name);
  queue_copy(L, st, dst, doff, src, soff, n);
  lua_settop(L, 1);
  return 1;
}

/* Fills all of b from t[1] .. t[b->n], the table at tidx (an absolute index). Each t[i] may run
 * __index, which may free b: so values are converted into the staging block, b is re-checked
 * after each, and b's memory is written only by buf_write, a block at a time. */
static void fill_from_table(lua_State *L, cl_buf *b, int tidx) {
  void *stage = push_stage(L, b->dtype, b->n);
  for (size_t first = 0; first < b->n; first += STAGE_ELEMS) {
    size_t cnt = b->n - first < STAGE_ELEMS ? b->n - first : STAGE_ELEMS;
    for (size_t j = 0; j < cnt; j++) {
      lua_geti(L, tidx, (lua_Integer)(first + j + 1));
      buf_check_unfreed(L, b, "a copy from a table");
      store_value(L, -1, b->dtype, stage, j, first + j);
      lua_pop(L, 1);
    }
    buf_write(L, b, first, cnt, stage);
  }
  lua_pop(L, 1);
}

static void copy_from_table(lua_State *L, cl_buf *dst, int tidx) {
  size_t len = buf_table_len(L, tidx);
  buf_check_unfreed(L, dst, "a copy from a table"); /* __len is Lua code too */
  if (len != dst->n)
    luaL_error(L, "cannot copy a table of %I values into %s: lengths differ", (lua_Integer)len,
               buf_describe(L, dst));
  fill_from_table(L, dst, tidx);
}

/* Sets t[1] .. t[src->n], the table at tidx (an absolute index). Each store may run __newindex
 * (or, for a plain table, a finalizer), which may free src: src is re-checked after each, and
 * read only by buf_read, a block at a time into the staging block. */
static void copy_to_table(lua_State *L, const cl_buf *src, int tidx) {
  void *stage = push_stage(L, src->dtype, src->n);
  for (size_t first = 0; first < src->n; first += STAGE_ELEMS) {
    size_t cnt = src->n - first < STAGE_ELEMS ? src->n - first : STAGE_ELEMS;
    buf_check_unfreed(L, src, "a copy to a table");
    buf_read(L, src, first, cnt, stage);
    for (size_t j = 0; j < cnt; j++) {
      buf_push_element(L, src->dtype, stage, j);
      lua_seti(L, tidx, (lua_Integer)(first + j + 1));
      buf_check_unfreed(L, src, "a copy to a table");
    }
  }
  lua_pop(L, 1);
}

static int buf_copyto(lua_State *L) {
  cl_buf *b = check_self(L);
  if (lua_istable(L, 2)) {
    copy_to_table(L, b, 2);
  } else {
    copy_buf(L, buf_check_live(L, 2, "destination"), b);
  }
  lua_settop(L, 2);
  return 1;
}

static int buf_copyfrom(lua_State *L) {
  cl_buf *b = check_self(L);
  if (lua_istable(L, 2))
    copy_from_table(L, b, 2);
  else
    copy_buf(L, b, buf_check_live(L, 2, "source"));
  lua_settop(L, 1);
  return 1;
}

static int buf_tolist(lua_State *L) {
  cl_buf *b = check_self(L);
  lua_createtable(L, b->n < INT32_MAX ? (int)b->n : 0, 0);
  copy_to_table(L, b, lua_gettop(L));
  return 1;
}

/* The raw bytes of the elements, as a Lua string: bit patterns (NaN payloads, signed zeros)
 * survive where tolist's numbers would not. buf_read never calls into Lua. */
static int buf_tobytes(lua_State *L) {
  cl_buf *b = check_self(L);
  size_t nbytes = b->n * dtype_table[b->dtype].size;
  luaL_Buffer sb;
  char *dst = luaL_buffinitsize(L, &sb, nbytes);
  buf_read(L, check_self(L), 0, b->n, dst); /* allocating may have run a finalizer */
  luaL_pushresultsize(&sb, nbytes);
  return 1;
}

/* The options first: their __index is Lua code that may free self. Allocating may run a
 * finalizer that frees self, hence the second check. */
static int buf_host(lua_State *L) {
  int pinned = 0;
  if (lua_istable(L, 2)) pinned = lua_getfield(L, 2, "pinned") != LUA_TNIL && lua_toboolean(L, -1);
  cl_buf *b = check_self(L);
  cl_buf *h = buf_new_overwritten(L, b->n, b->dtype, pinned ? BUF_PINNED : BUF_HOST);
  copy_buf(L, h, check_self(L));
  return 1;
}

static void fill_const(lua_State *L, cl_buf *b, const void *value) {
  cl_err err;
  if (!on_gpu(b)) {
    fill_with(L, b, gen_const, (void *)value);
    return;
  }
  if (builtin_fill(b->backend, b->ptr, b->n * dtype_table[b->dtype].size, value,
                   dtype_table[b->dtype].size, &err))
    raise_err(L, &err);
}

static int buf_fill(lua_State *L) {
  cl_buf *b = check_self(L);
  cl_element v;
  element_of(L, 2, b->dtype, &v);
  fill_const(L, b, &v);
  lua_settop(L, 1);
  return 1;
}

/* ---- metamethods --------------------------------------------------------------------------- */

static size_t check_index(lua_State *L, cl_buf *b, int idx) {
  int ok = 0;
  lua_Integer i = lua_tointegerx(L, idx, &ok);
  if (!ok) luaL_error(L, "index must be a whole number, got %s", luaL_tolstring(L, idx, NULL));
  if (i < 0 || (size_t)i >= b->n)
    luaL_error(L, "index %I out of range for %s (valid: 0..%I)%s", i, buf_describe(L, b),
               (lua_Integer)b->n - 1, i == (lua_Integer)b->n ? "; indices start at 0" : "");
  return (size_t)i;
}

static int buf_index(lua_State *L) {
  cl_buf *b = check_buf(L);
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char *k = lua_tostring(L, 2);
    if (strcmp(k, "dtype") == 0) {
      lua_pushstring(L, dtype_table[b->dtype].name);
      return 1;
    }
    if (strcmp(k, "nbytes") == 0) {
      lua_pushinteger(L, (lua_Integer)(b->n * dtype_table[b->dtype].size));
      return 1;
    }
    if (strcmp(k, "pinned") == 0) {
      lua_pushboolean(L, b->where == BUF_PINNED);
      return 1;
    }
    if (strcmp(k, "managed") == 0) {
      lua_pushboolean(L, b->managed);
      return 1;
    }
    if (strcmp(k, "freed") == 0) {
      lua_pushboolean(L, b->ptr == NULL && b->n > 0);
      return 1;
    }
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "__methods");
    lua_getfield(L, -1, k);
    return 1;
  }
  check_self(L);
  size_t i = check_index(L, b, 2);
  cl_element v;
  buf_read(L, b, i, 1, &v);
  buf_push_element(L, b->dtype, &v, 0);
  return 1;
}

static int buf_newindex(lua_State *L) {
  cl_buf *b = check_self(L);
  if (lua_type(L, 2) == LUA_TSTRING)
    return luaL_error(L, "cannot set field '%s' of %s", lua_tostring(L, 2), buf_describe(L, b));
  size_t i = check_index(L, b, 2);
  cl_element v;
  element_of(L, 3, b->dtype, &v);
  buf_write(L, b, i, 1, &v);
  return 0;
}

static int buf_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_buf(L)->n);
  return 1;
}

/* A DK_HALF with the fewest significant digits (3 up to its row's) that read back as the same
 * bits: f16(0.1) shows as 0.1, where a fixed %.5g would show 0.099976 and look like a bug. */
static void short_half(char *s, size_t len, cl_dtype t, const void *base, size_t j) {
  size_t es = dtype_table[t].size;
  double v = dtype_get_f(t, base, j);
  if (v == floor(v) && fabs(v) < 1e15) { /* whole numbers as integers print: 65504, not 6.55e+04 */
    snprintf(s, len, "%.0f", v);
    return;
  }
  for (int digits = 3; digits <= dtype_table[t].digits; digits++) {
    cl_element back;
    snprintf(s, len, "%.*g", digits, v);
    dtype_set_f(t, &back, 0, strtod(s, NULL));
    if (memcmp(&back, (const char *)base + j * es, es) == 0) return;
  }
}

/* Element j as arrays print it: a float with its row's digits, an integer in full, an unsigned
 * one as unsigned (a u64 above 2^63 - 1 reads into Lua as a negative integer, but prints as
 * what the GPU holds). */
static void add_value(luaL_Buffer *sb, cl_dtype t, const void *base, size_t j) {
  char s[64];
  switch (dtype_table[t].kind) {
    case DK_HALF: short_half(s, sizeof s, t, base, j); break;
    case DK_FLOAT: snprintf(s, sizeof s, "%.*g", dtype_table[t].digits, dtype_get_f(t, base, j));
      break;
    case DK_SINT: snprintf(s, sizeof s, "%lld", (long long)dtype_get_i(t, base, j)); break;
    case DK_UINT: snprintf(s, sizeof s, "%llu", (unsigned long long)dtype_get_i(t, base, j));
      break;
  }
  luaL_addstring(sb, s);
}

static int buf_tostring(lua_State *L) {
  cl_buf *b = check_buf(L);
  const char *desc = buf_describe(L, b);
  if (!b->ptr && b->n > 0) {
    lua_pushfstring(L, "%s (freed)", desc);
    return 1;
  }
  const char *where = b->where != BUF_DEVICE ? (b->where == BUF_PINNED ? "pinned host" : "host")
                      : b->managed ? lua_pushfstring(L, "%s (managed)", rt_device_short(L))
                                   : rt_device_short(L);
  size_t head = b->n <= 2 * SHOW_EDGE ? b->n : SHOW_EDGE;
  size_t tail = b->n <= 2 * SHOW_EDGE ? 0 : SHOW_EDGE;
  cl_element vals[2 * SHOW_EDGE]; /* as bytes: head + tail elements of b's dtype */
  size_t es = dtype_table[b->dtype].size;
  if (head) buf_read(L, b, 0, head, vals);
  if (tail) buf_read(L, b, b->n - tail, tail, (char *)vals + head * es);
  luaL_Buffer sb;
  luaL_buffinit(L, &sb);
  lua_pushfstring(L, "%s on %s: [", desc, where);
  luaL_addvalue(&sb);
  for (size_t j = 0; j < head + tail; j++) {
    if (j) luaL_addstring(&sb, j == head ? ", ..., " : ", ");
    add_value(&sb, b->dtype, vals, j);
  }
  luaL_addchar(&sb, ']');
  luaL_pushresult(&sb);
  return 1;
}

/* ---- constructors -------------------------------------------------------------------------- */

/* cuda.array(n | table | buffer [, dtype]) and cuda.host(... [, dtype] [, {pinned = true}]) */
static int make(lua_State *L, buf_where where) {
  cl_dtype t;
  cl_buf *src = buf_test(L, 1);
  if (src) {
    buf_check_live(L, 1, "source");
    t = check_dtype(L, 2, src->dtype);
    if (t != src->dtype)
      luaL_error(L, "cannot convert %s to %s while copying; copy, then convert with a kernel",
                 buf_describe(L, src), dtype_table[t].name);
    cl_buf *b = buf_new_overwritten(L, src->n, t, where);
    copy_buf(L, b, buf_check_live(L, 1, "source")); /* allocating may run a finalizer */
    return 1;
  }
  t = check_dtype(L, 2, DT_F32);
  if (lua_istable(L, 1)) {
    fill_from_table(L, buf_new_overwritten(L, buf_table_len(L, 1), t, where), 1);
    return 1;
  }
  if (lua_type(L, 1) != LUA_TNUMBER)
    return luaL_error(L, "expected a size, a table of values or an array as argument 1, got %s",
                      luaL_typename(L, 1));
  buf_new(L, check_count(L, 1), t, where);
  return 1;
}

static int cuda_array(lua_State *L) { return make(L, BUF_DEVICE); }

/* ---- managed arrays ------------------------------------------------------------------------ */

/* cuda.managed(n | table | buffer [, dtype]): an array in managed memory, made and filled by the
 * host (so its pages start there); usable wherever a cuda.array is. A buffer's elements are read
 * into it on the host: a copy engine never touches it. */
static int cuda_managed(lua_State *L) {
  cl_buf *src = buf_test(L, 1);
  cl_dtype t = check_dtype(L, 2, src ? src->dtype : DT_F32);
  if (src) {
    buf_check_live(L, 1, "source");
    if (t != src->dtype)
      luaL_error(L, "cannot convert %s to %s while copying; copy, then convert with a kernel",
                 buf_describe(L, src), dtype_table[t].name);
    cl_buf *b = buf_alloc(L, src->n, t, BUF_DEVICE, 1, 1);
    src = buf_check_live(L, 1, "source"); /* allocating may run a finalizer */
    if (b->n) {
      managed_touch(L, b, 0, b->n, 1);
      buf_read(L, src, 0, src->n, b->ptr);
    }
    return 1;
  }
  if (lua_istable(L, 1)) {
    fill_from_table(L, buf_alloc(L, buf_table_len(L, 1), t, BUF_DEVICE, 1, 1), 1);
    return 1;
  }
  if (lua_type(L, 1) != LUA_TNUMBER)
    return luaL_error(L, "cuda.managed: expected a size, a table of values or an array as "
                      "argument 1, got %s", luaL_typename(L, 1));
  buf_alloc(L, check_count(L, 1), t, BUF_DEVICE, 0, 1);
  return 1;
}

/* self, a live managed array, for `method`: anything else is refused with what to use. */
static cl_buf *check_managed(lua_State *L, const char *method) {
  cl_buf *b = check_self(L);
  if (!b->managed)
    luaL_error(L, "%s: %s is not managed memory; make the array with cuda.managed(n) (a "
               "cuda.array lives on the device, a cuda.host buffer on the host)", method,
               buf_describe(L, b));
  return b;
}

/* "gpu" (or "device") is 1, "cpu" (or "host") 0; anything else is refused. */
static int check_place(lua_State *L, int idx, const char *method) {
  const char *to = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
  if (to && (strcmp(to, "gpu") == 0 || strcmp(to, "device") == 0)) return 1;
  if (to && (strcmp(to, "cpu") == 0 || strcmp(to, "host") == 0)) return 0;
  return luaL_error(L, "%s: the place is \"gpu\" or \"cpu\", got %s", method,
                    to ? lua_pushfstring(L, "'%s'", to) : luaL_typename(L, idx));
}

/* a:prefetch("gpu" | "cpu" [, stream]): moves a's pages ahead of use (cudaMemPrefetchAsync),
 * queued on the stream (the default one without), so that a kernel or the host finds them
 * where it needs them instead of faulting them over one group at a time. */
static int buf_prefetch(lua_State *L) {
  cl_buf *b = check_managed(L, "a:prefetch");
  int to_device = check_place(L, 2, "a:prefetch");
  cl_lstream *st = lua_isnoneornil(L, 3) ? NULL : stream_check(L, 3, "a:prefetch's stream");
  b = check_managed(L, "a:prefetch"); /* the stream's check may have run Lua code */
  rt_refuse_in_capture(L, "a:prefetch");
  if (!b->backend->prefetch)
    return luaL_error(L, "a:prefetch: the %s backend has no managed memory", b->backend->name);
  if (st && st->be != b->backend)
    return luaL_error(L, "a:prefetch: cuda.Stream %d belongs to the %s backend, the array to %s",
                      st->id, st->be->name, b->backend->name);
  cl_err err;
  if (b->backend->prefetch(b->ptr, b->n * dtype_table[b->dtype].size, to_device,
                           st ? st->s : NULL, &err) != 0)
    raise_err(L, &err);
  launch_log_library_call(L, "Array:prefetch", st ? 3 : 2);
  lua_settop(L, 1);
  return 1;
}

/* a:advise("read_mostly" [, false]) or a:advise("preferred", "gpu" | "cpu" | false): hints
 * to the driver (cudaMemAdvise). Read-mostly data is copied, not moved, to the processor that
 * reads it; a preferred location is where the pages stay (on the CPU, kernels read them over
 * the link instead of moving them). false takes the advice back. */
static int buf_advise(lua_State *L) {
  cl_buf *b = check_managed(L, "a:advise");
  const char *kind = luaL_checkstring(L, 2);
  int advice, set = 1;
  if (strcmp(kind, "read_mostly") == 0) {
    advice = CL_ADVISE_READ_MOSTLY;
    if (!lua_isnoneornil(L, 3)) {
      luaL_argexpected(L, lua_isboolean(L, 3), 3, "boolean");
      set = lua_toboolean(L, 3);
    }
  } else if (strcmp(kind, "preferred") == 0) {
    if (lua_isboolean(L, 3) && !lua_toboolean(L, 3)) {
      advice = CL_ADVISE_PREFER_GPU; /* unsetting clears whichever place was preferred */
      set = 0;
    } else {
      advice = check_place(L, 3, "a:advise(\"preferred\", ...)") ? CL_ADVISE_PREFER_GPU
                                                                 : CL_ADVISE_PREFER_CPU;
    }
  } else {
    return luaL_error(L, "a:advise: unknown advice '%s' (the advice is \"read_mostly\" or "
                      "\"preferred\")", kind);
  }
  rt_refuse_in_capture(L, "a:advise");
  if (!b->backend->advise)
    return luaL_error(L, "a:advise: the %s backend has no managed memory", b->backend->name);
  cl_err err;
  size_t bytes = b->n * dtype_table[b->dtype].size;
  if (b->backend->advise(b->ptr, bytes, advice, set, &err) != 0) raise_err(L, &err);
  if (!set && advice == CL_ADVISE_PREFER_GPU &&
      b->backend->advise(b->ptr, bytes, CL_ADVISE_PREFER_CPU, 0, &err) != 0)
    raise_err(L, &err);
  lua_settop(L, 3); /* the array, the advice and its value (nil for read_mostly's default) */
  launch_log_library_call(L, "Array:advise", 3);
  lua_settop(L, 1);
  return 1;
}

/* a:residency(): where a's pages are, on the simulator: {cpu =, gpu =, both =} in groups of
 * `group` bytes (64 KiB), and `bytes` of the array. A GPU does not say this page by page. */
static int buf_residency(lua_State *L) {
  cl_buf *b = check_managed(L, "a:residency");
  const cl_sim_ops *ops = b->backend->sim;
  if (!ops || !ops->managed_where)
    return luaL_error(L, "a:residency() needs the simulator: a GPU does not tell where each "
                      "page is (Nsight Systems shows the migrations)");
  uint64_t c[3];
  size_t group = 0, bytes = b->n * dtype_table[b->dtype].size;
  ops->managed_where(b->ptr, bytes, c, &group);
  lua_createtable(L, 0, 5);
  bind_set_int(L, "cpu", (lua_Integer)c[0]);
  bind_set_int(L, "gpu", (lua_Integer)c[1]);
  bind_set_int(L, "both", (lua_Integer)c[2]);
  bind_set_int(L, "group", (lua_Integer)group);
  bind_set_int(L, "bytes", (lua_Integer)bytes);
  return 1;
}

static int cuda_host(lua_State *L) {
  int pinned = 0;
  if (lua_istable(L, 3)) {
    pinned = lua_getfield(L, 3, "pinned") != LUA_TNIL && lua_toboolean(L, -1);
    lua_pop(L, 1);
  } else if (!lua_isnoneornil(L, 3)) {
    return luaL_argerror(L, 3, "expected options like {pinned = true}");
  }
  lua_settop(L, 2);
  return make(L, pinned ? BUF_PINNED : BUF_HOST);
}

static int cuda_zeros(lua_State *L) {
  buf_new(L, check_count(L, 1), check_dtype(L, 2, DT_F32), BUF_DEVICE);
  return 1;
}

/* cuda.empty(n [, dtype]): an array the constructor does not fill (cudaMalloc's memory as it is,
 * on a GPU); on the simulator its elements count as never written, for the init check. */
/* An array made by cuda.empty starts as never written, for the simulator's init check
 * (cuda.sanitize{init = true}); other backends keep no such record. */
static void mark_never_written(lua_State *L, const cl_buf *b) {
  const cl_sim_ops *ops = b->backend ? b->backend->sim : NULL;
  size_t bytes = b->n * dtype_table[b->dtype].size;
  if (!ops || !ops->mark_unset || !b->ptr || !bytes) return;
  if (ops->mark_unset(b->ptr, bytes) != 0)
    luaL_error(L, "out of host memory marking %s as never written", buf_describe(L, b));
}

static int cuda_empty(lua_State *L) {
  size_t n = check_count(L, 1);
  mark_never_written(L, buf_new_overwritten(L, n, check_dtype(L, 2, DT_F32), BUF_DEVICE));
  return 1;
}

static int filled(lua_State *L, size_t n, cl_dtype t, int value_idx) {
  cl_element v;
  element_of(L, value_idx, t, &v);
  cl_buf *b = buf_new_overwritten(L, n, t, BUF_DEVICE);
  fill_const(L, b, &v);
  return 1;
}

static int cuda_ones(lua_State *L) {
  size_t n = check_count(L, 1);
  cl_dtype t = check_dtype(L, 2, DT_F32);
  lua_pushinteger(L, 1);
  return filled(L, n, t, lua_gettop(L));
}

static int cuda_full(lua_State *L) {
  size_t n = check_count(L, 1);
  luaL_checkany(L, 2);
  return filled(L, n, check_dtype(L, 3, DT_F32), 2);
}

static void fill_range(lua_State *L, cl_buf *b) {
  cl_err err;
  if (!on_gpu(b)) fill_with(L, b, gen_range, NULL);
  else if (builtin_arange(b->backend, b->ptr, b->n, b->dtype, &err)) raise_err(L, &err);
}

static void fill_rand(lua_State *L, cl_buf *b, uint64_t seed) {
  cl_err err;
  if (!dtype_table[b->dtype].is_float)
    luaL_error(L, "cuda.rand makes floats in [0, 1): use %s, not %s", dtype_float_names(),
               dtype_table[b->dtype].name);
  uint64_t key = builtin_mix(seed);
  if (!on_gpu(b)) fill_with(L, b, gen_rand, &key);
  else if (builtin_rand(b->backend, b->ptr, b->n, b->dtype, seed, &err)) raise_err(L, &err);
}

/* a:arange() and a:rand([seed]): refill an existing array, as the constructors fill a new one
 * (useful in a loop, where a new 1 GiB array each time would cost an allocation). */
static int buf_arange(lua_State *L) {
  fill_range(L, check_self(L));
  lua_settop(L, 1);
  return 1;
}

static int buf_rand(lua_State *L) {
  cl_buf *b = check_self(L);
  fill_rand(L, b, (uint64_t)luaL_optinteger(L, 2, 0));
  lua_settop(L, 1);
  return 1;
}

static int cuda_arange(lua_State *L) {
  size_t n = check_count(L, 1);
  fill_range(L, buf_new_overwritten(L, n, check_dtype(L, 2, DT_F32), BUF_DEVICE));
  return 1;
}

static int cuda_rand(lua_State *L) {
  size_t n = check_count(L, 1);
  cl_dtype t = check_dtype(L, 2, DT_F32);
  if (!dtype_table[t].is_float)
    return luaL_error(L, "cuda.rand makes floats in [0, 1): use %s, not %s", dtype_float_names(),
                      dtype_table[t].name);
  uint64_t seed = (uint64_t)luaL_optinteger(L, 3, 0);
  fill_rand(L, buf_new_overwritten(L, n, t, BUF_DEVICE), seed);
  return 1;
}

static const luaL_Reg methods[] = {
    {"tolist", buf_tolist}, {"tobytes", buf_tobytes}, {"host", buf_host},
    {"copyto", buf_copyto}, {"copyfrom", buf_copyfrom}, {"fill", buf_fill},
    {"free", buf_free},     {"arange", buf_arange},     {"rand", buf_rand},
    {"view", buf_view},     {"ptr", buf_ptr},       {"prefetch", buf_prefetch},
    {"advise", buf_advise}, {"residency", buf_residency}, {NULL, NULL},
};

static const luaL_Reg metamethods[] = {
    {"__index", buf_index}, {"__newindex", buf_newindex}, {"__len", buf_len},
    {"__tostring", buf_tostring}, {"__gc", buf_gc},   {"__close", buf_gc},
    {"__add", buf_add},
    {NULL, NULL},
};

static const luaL_Reg functions[] = {
    {"array", cuda_array}, {"zeros", cuda_zeros},   {"ones", cuda_ones}, {"full", cuda_full},
    {"empty", cuda_empty},
    {"arange", cuda_arange}, {"rand", cuda_rand}, {"host", cuda_host}, {"copy", cuda_copy},
    {"ptrs", cuda_ptrs},   {"managed", cuda_managed},
    {NULL, NULL},
};

static void new_metatable(lua_State *L, const char *name) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, metamethods, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__methods");
  lua_pop(L, 1);
}

/* How a row's kind reads in Lua. */
static const char *kind_name(cl_dtype_kind k) {
  switch (k) {
    case DK_FLOAT: return "float";
    case DK_HALF: return "half";
    case DK_SINT: return "signed";
    case DK_UINT: return "unsigned";
  }
  return "?";
}

/* cuda.dtypes: the rows of dtypes.def, in order, as {name =, size =, c_type =, kind =, digits =,
 * rtol =} (kind "float", "half", "signed" or "unsigned"; digits those a float prints, 0 for an
 * integer; rtol cuda.compare's default tolerance for the type, 0 where compare's own applies):
 * the one list the Lua library and help read the element types from. */
static void push_dtypes(lua_State *L) {
  lua_createtable(L, DT_COUNT, 0);
  for (int t = 0; t < DT_COUNT; t++) {
    const cl_dtype_info *d = &dtype_table[t];
    lua_createtable(L, 0, 6);
    bind_set_str(L, "name", d->name);
    bind_set_int(L, "size", (lua_Integer)d->size);
    bind_set_str(L, "c_type", d->c_type);
    bind_set_str(L, "kind", kind_name(d->kind));
    bind_set_int(L, "digits", d->digits);
    bind_set_num(L, "rtol", d->rtol);
    lua_seti(L, -2, t + 1);
  }
}

/* Returns a table of the constructors; bind_cuda.c merges it into the cuda module. */
int luaopen_cudalab_array(lua_State *L) {
  udata_tag_init();
  new_metatable(L, ARRAY_MT);
  new_metatable(L, HOST_MT);
  luaL_newlib(L, functions);
  push_dtypes(L);
  lua_setfield(L, -2, "dtypes");
  return 1;
}
