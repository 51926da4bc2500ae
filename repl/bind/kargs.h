/* kargs.h: kernel arguments beyond a number and a whole array: a struct or a vector type built
 * from a Lua table into the parameter's bytes, NULL (nil), views of part of an array, and the
 * check of an array against what a pointer points at. Used by bind_kernel.c. */
#ifndef CUDALAB_KARGS_H
#define CUDALAB_KARGS_H

#include <lua.h>

#include "backend.h"
#include "buffer.h"
#include "ctype_layout.h"

/* What a pointer (a parameter or a struct's field) points at, as the source says. */
typedef struct kargs_pointee {
  int dtype;             /* the element's dtype, -1 when none names it */
  int stars;             /* 1 for float *, 2 for float ** */
  const char *type;      /* the element type's name as written ("uint4", "curandState") */
  const lay_node *nodes; /* the layouts of the kernel; with elem, the element's, or NULL */
  int elem;              /* -1 when unknown */
  int row;               /* elements in one of the rows it steps over: 4 for float (*)[4]; an
                            array must hold whole rows. 1 (or 0, unknown) checks nothing */
} kargs_pointee;

/* Whether an array of dtype `have` fits a pointer to `want`: the same type, or integers of one
 * width and either signedness (an i64 array for unsigned long long *, as C's cast allows). */
int kargs_dtype_fits(int want, int have);

/* Pushes and returns the name of the argument being marshalled, for a message: "argument 2
 * (Params p), field 'data'". Called only when there is something to say, since pushing a
 * string on every launch would cost an allocation each. */
typedef struct kargs_name {
  const char *(*push)(lua_State *L, const void *ud);
  const void *ud;
} kargs_name;

/* The device address the value at idx gives a pointer: 0 for nil, else an Array's (a view's)
 * own, checked: live device memory of backend be whose elements fit p. Records the array's
 * extent for the simulator's checks under parameter `param`. Sets *unknown when p's element
 * type is one nothing knows (curandState *), so the caller can warn that the array went
 * unchecked. */
uint64_t kargs_pointer(lua_State *L, int idx, const cl_backend *be, const kargs_pointee *p,
                       const kargs_name *what, int param, int *unknown);

/* Builds the bytes (size of them at dst) of an aggregate parameter laid out as node root of
 * nodes, from the value at idx: a table by field name ({x =, y =} or {1, 2} for a vector type),
 * or a string of exactly `size` bytes (string.pack's), which is also the way for a struct whose
 * layout is unknown (nodes NULL, why saying why). Raises naming the field. */
void kargs_aggregate(lua_State *L, int idx, const lay_node *nodes, int root, const char *why,
                     void *dst, size_t size, size_t align, const cl_backend *be,
                     const kargs_name *what, int param);

/* The extents of the arrays one launch's arguments point at, for the simulator: kargs_begin
 * empties the list before marshalling; kargs_finish hands it to fn's backend when an argument
 * was a view (or a view was in fn's last launch), which is what narrows the simulator's bounds
 * checks to the view. */
void kargs_begin(void);
void kargs_finish(lua_State *L, const cl_backend *be, cl_function *fn, int *had_views);

#endif
