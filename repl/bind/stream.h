/* stream.h: streams as Lua sees them ("cudalab.Stream") and the record cuda.timeline keeps of
 * the work queued while it runs. Defined in bind_stream.c; used by the bindings that queue work
 * (bind_array.c copies, bind_kernel.c launches). */
#ifndef CUDALAB_STREAM_H
#define CUDALAB_STREAM_H

#include <stddef.h>

#include <lua.h>

#include "backend.h"

#define STREAM_MT "cudalab.Stream"

typedef struct cl_lstream {
  const cl_backend *be; /* owner of s */
  cl_stream *s;         /* NULL once released (or before it is created) */
  int id;               /* 1, 2, ...: the name timelines give it (the default stream is 0) */
} cl_lstream;

/* The live stream at idx, of the active backend; raises a message naming `what` otherwise. */
cl_lstream *stream_check(lua_State *L, int idx, const char *what);

/* What a timeline records of one operation. */
typedef struct trace_info {
  const char *kind;  /* "copy" or "kernel" */
  const char *dir;   /* copies: "H2D", "D2H", "D2D"; NULL for kernels */
  const char *name;  /* kernels: the name in the source; copied */
  size_t bytes;      /* copies */
  int pinned;        /* copies: the host memory is pinned */
} trace_info;

/* Nonzero while cuda.timeline runs: the only cost to work queued outside one is this test. */
extern int stream_tracing;

/* Around one operation queued on st (NULL: the default stream) while stream_tracing is set:
 * trace_open before queuing it returns a slot, trace_close after it records what it was. An
 * operation that raises in between leaves a slot the timeline skips; nothing leaks, as the
 * timeline's own userdata owns every slot. Both raise on a backend error. */
int trace_open(lua_State *L, cl_lstream *st);
void trace_close(lua_State *L, cl_lstream *st, int slot, const trace_info *info);

#endif
