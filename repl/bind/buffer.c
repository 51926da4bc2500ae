/* buffer.c: what tells a buffer (an Array or a HostBuffer, buffer.h) from any other value, and
 * names one in messages. Apart from bind_array.c, which makes buffers and moves their elements,
 * because the files that take a buffer as an argument need these and often nothing else of it:
 * the launch path (bind_kernel.c, kargs.c) among them, which bind_array.c must not depend on in
 * turn. Nothing here allocates, calls a backend or calls into Lua code. */
#include <lauxlib.h>

#include "buffer.h"
#include "udata_tag.h"

/* By tag rather than by metatable: this is on every launch's path, once per array argument
 * (udata_tag.h says why the tag cannot be forged). */
cl_buf *buf_test(lua_State *L, int idx) {
  cl_buf *b = lua_touserdata(L, idx);
  return b && lua_rawlen(L, idx) == sizeof *b && b->tag == udata_tag(b, UDATA_BUFFER) ? b : NULL;
}

const char *buf_describe(lua_State *L, const cl_buf *b) {
  const char *kind = b->where == BUF_DEVICE ? "cuda.Array" : "cuda.HostBuffer";
  if (b->view)
    return lua_pushfstring(L, "%s<%s>[%I] (a view from element %I of %s<%s>[%I])", kind,
                           dtype_table[b->dtype].name, (lua_Integer)b->n, (lua_Integer)b->first,
                           kind, dtype_table[b->dtype].name, (lua_Integer)b->root_n);
  return lua_pushfstring(L, "%s<%s>[%I]", kind, dtype_table[b->dtype].name, (lua_Integer)b->n);
}

cl_buf *buf_check_live(lua_State *L, int idx, const char *what) {
  cl_buf *b = buf_test(L, idx);
  if (!b) {
    luaL_error(L, "%s must be a cuda.Array or cuda.HostBuffer, got %s", what,
               luaL_typename(L, idx));
    return NULL;
  }
  if (!b->ptr && b->n > 0) {
    luaL_error(L, "%s is a %s that has been freed", what, buf_describe(L, b));
    return NULL;
  }
  return b;
}

void buf_check_unfreed(lua_State *L, const cl_buf *b, const char *during) {
  if (!b->ptr && b->n > 0)
    luaL_error(L, "%s was freed during %s (by a metamethod or a finalizer that ran meanwhile)",
               buf_describe(L, b), during);
}
