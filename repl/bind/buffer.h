/* buffer.h: the memory objects Lua sees: device arrays ("cudalab.Array") and host buffers
 * ("cudalab.HostBuffer", pageable or pinned). They share one struct and one interface, so that
 * copies, compare and launches treat them alike. buffer.c tells one from another value and
 * names it (buf_test, buf_describe, buf_check_*); bind_array.c defines the rest. */
#ifndef CUDALAB_BUFFER_H
#define CUDALAB_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "backend.h"
#include "dtype.h"

#define ARRAY_MT "cudalab.Array"
#define HOST_MT "cudalab.HostBuffer"

typedef enum buf_where { BUF_DEVICE, BUF_HOST, BUF_PINNED } buf_where;

typedef struct cl_buf {
  uint64_t tag;              /* udata_tag(self, UDATA_BUFFER): how buf_test knows one */
  void *ptr;                 /* device or host memory; NULL once released (or never acquired) */
  size_t n;                  /* elements */
  cl_dtype dtype;
  buf_where where;
  const cl_backend *backend; /* owner of ptr, for device and pinned memory */
  int view;                  /* a view of part of another buffer (a:view, a + k): ptr is inside
                                that buffer's memory, which it keeps alive (uservalue 1) and
                                never frees; freeing that buffer frees the view too */
  size_t first;              /* a view: its first element in the buffer it views (the root) */
  size_t root_n;             /* a view: the root's element count, for messages */
  int holds_ptrs;            /* made by cuda.ptrs: its elements are the device addresses of the
                                arrays in uservalue 1, which it keeps alive */
  int managed;               /* a device array in managed (unified) memory (cuda.managed): the
                                host reads and writes its memory directly, after a synchronize */
} cl_buf;

/* The Array or HostBuffer at idx, or NULL for any other value. */
cl_buf *buf_test(lua_State *L, int idx);
/* Like buf_test, but raises "freed" for a released one. */
cl_buf *buf_check_live(lua_State *L, int idx, const char *what);
/* "cuda.Array<f32>[1000]" or "cuda.HostBuffer<i32>[3]": names the value in messages. */
const char *buf_describe(lua_State *L, const cl_buf *b);
/* Copies n elements starting at element `first` of b into host memory at dst (synchronising
 * with the device first for device arrays). Raises on a backend error. */
void buf_read(lua_State *L, const cl_buf *b, size_t first, size_t n, void *dst);
/* Pushes element i of the elements of type t at host memory base, as Lua reads one: a float
 * type as a float, an integer type as an integer (u64 as the integer with the same bits). */
void buf_push_element(lua_State *L, cl_dtype t, const void *base, size_t i);
/* Stores the Lua value at idx as element j of the elements of type t at host memory base,
 * raising on a value t cannot hold (not a number, a fraction for an integer type, out of
 * range); messages call it element i. */
void buf_store_value(lua_State *L, int idx, cl_dtype t, void *base, size_t j, size_t i);
/* The length of the table at idx (through its __len), checked as a size is: whole, not
 * negative, at most what any memory could hold. Raises otherwise. */
size_t buf_table_len(lua_State *L, int idx);
/* Raises "<b> was freed during <during> (...)" if b has been released: for C that has called
 * back into Lua (a metamethod, a finalizer) since it last checked b, before it touches b again. */
void buf_check_unfreed(lua_State *L, const cl_buf *b, const char *during);

/* Pushes a new device array (device true) or pageable host buffer of n elements of t whose
 * elements the caller writes before it can be seen (not zero-filled); raises as cuda.array. */
cl_buf *buf_push_new(lua_State *L, size_t n, cl_dtype t, int device);
/* Copies n elements from host memory at src into b from element `first`. Raises on a backend
 * error. */
void buf_store(lua_State *L, cl_buf *b, size_t first, size_t n, const void *src);

int luaopen_cudalab_array(lua_State *L);

#endif
