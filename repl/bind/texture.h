/* texture.h: texture objects as Lua sees them ("cudalab.Texture", made by cuda.texture), for the
 * launch path, which passes one to a cudaTextureObject_t parameter. Defined in bind_texture.c. */
#ifndef CUDALAB_TEXTURE_H
#define CUDALAB_TEXTURE_H

#include <stdint.h>

#include <lua.h>

#include "backend.h"

#define TEXTURE_MT "cudalab.Texture"

typedef struct cl_ltexture {
  const cl_backend *be; /* owner of the handle */
  uint64_t handle;      /* what a kernel's parameter receives */
  int live;             /* made and not freed: only then is handle a texture */
  int id;               /* its number in this session, for messages */
  cl_texture_desc d;    /* as made, for t.width and messages */
  int dtype;            /* the array's element type it was made from (cl_dtype) */
} cl_ltexture;

/* The Texture at idx, or NULL for any other value. */
cl_ltexture *tex_test(lua_State *L, int idx);
/* The handle of the live Texture at idx for a launch on backend be; raises naming `what` (the
 * argument) for a freed texture or one of another backend. */
uint64_t tex_handle(lua_State *L, const cl_ltexture *t, const cl_backend *be, const char *what);

#endif
