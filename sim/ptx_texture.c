/* ptx_texture.c: decodes tex.{1d,2d,3d}.v4.dtype.ctype, the fetch NVRTC emits for tex1D,
 * tex2D, tex3D and tex1Dfetch on a texture object, into a SIM_OP_TEX record (run by
 * sim_tex.c).
 *
 * Stance: the form NVRTC writes for a cudaTextureObject_t is
 *     tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];
 * four results, the handle in a 64-bit register, the coordinates in a vector (tex.3d gives four,
 * the last ignored). Everything else PTX allows on tex (texture references named by a global,
 * an explicit sampler, coordinate offsets, a depth compare, a residency predicate, mipmap
 * levels, layered and cube geometries, f16 results) fails the load, naming what is refused: the
 * simulator would otherwise have to guess at its meaning. */
#include <string.h>

#include "ptx_texture.h"

/* The next token must be s; else the load fails, saying what was there. */
static void expect(ictx *c, const char *s, const char *what) {
  const ptx_tok *t = ptx_next(&c->p->lx);
  if (!ptx_is(t, s)) ptx_unsupported(c, what);
}

/* The geometry from the modifier words: 1, 2 or 3 dimensions; the load fails on any other. */
static int geometry(ictx *c) {
  int dims = 0;
  for (int i = 0; i < c->md.nwords; i++) {
    if (dims) ptx_unsupported(c, "more than one geometry");
    dims = c->md.words[i][0] - '0';
  }
  if (!dims) ptx_unsupported(c, "no geometry (.1d, .2d or .3d)");
  return dims;
}

/* The result type (.f32 .s32 .u32) and the coordinates' (.f32 .s32), in that order. */
static void types(ictx *c, int *dt, int *ct) {
  if (c->md.ntypes != 2) ptx_unsupported(c, "needs a result type and a coordinate type");
  *dt = c->md.types[0];
  *ct = c->md.types[1];
  if (*dt != SIM_T_F32 && *dt != SIM_T_S32 && *dt != SIM_T_U32)
    ptx_unsupported(c, "results must be .f32, .s32 or .u32");
  if (*ct != SIM_T_F32 && *ct != SIM_T_S32) ptx_unsupported(c, "coordinates must be .f32 or .s32");
}

/* The four destination registers (sinks allowed) into in->v. */
static void results(ictx *c, sim_inst *in) {
  opnd o;
  ptx_opnd(c->p, &o);
  if (o.kind != O_VEC || o.n != 4) ptx_unsupported(c, "expected four result registers");
  for (int k = 0; k < 4; k++) {
    if (o.vec[k] <= -2) ptx_unsupported(c, "a result must be a register");
    in->v[k] = o.vec[k];
  }
  if (ptx_is(ptx_peek(&c->p->lx, 0), "|"))
    ptx_unsupported(c, "the residency predicate (sparse textures) is not modelled");
}

/* [handle, {coords}]: the handle a 64-bit register (a texture object), the coordinates rows. */
static void address(ictx *c, sim_inst *in, int dims) {
  expect(c, "[", "expected '[' before the texture");
  opnd h;
  ptx_opnd(c->p, &h);
  if (h.kind != O_REG || sim_type_size(h.type) != 8)
    ptx_unsupported(c, "the texture must be a 64-bit register holding a texture object "
                       "(texture references, texture<> globals, are not supported)");
  in->a = h.row;
  expect(c, ",", "expected ',' after the texture");
  if (!ptx_is(ptx_peek(&c->p->lx, 0), "{"))
    ptx_unsupported(c, "an explicit sampler is not supported (a texture object has its own)");
  opnd v;
  ptx_opnd(c->p, &v);
  int want = dims == 3 ? 4 : dims; /* tex.3d's fourth coordinate is ignored */
  if (v.kind != O_VEC || v.n != want) ptx_unsupported(c, "wrong number of coordinates");
  int32_t *rows[3] = {&in->b, &in->c, &in->e};
  for (int k = 0; k < dims; k++) {
    if (v.vec[k] == -1) ptx_unsupported(c, "a coordinate must be a register or a number");
    *rows[k] = v.vec[k] <= -2 ? -2 - v.vec[k] : v.vec[k];
  }
  expect(c, "]", "expected ']' after the coordinates");
}

void ptx_tex_inst(ictx *c) {
  int dims = geometry(c), dt, ct;
  types(c, &dt, &ct);
  if (c->md.vec != 4) ptx_unsupported(c, "only the .v4 form");
  sim_inst *in = ptx_emit(c, SIM_OP_TEX);
  in->sub = (uint8_t)dims;
  in->ty = (uint8_t)dt;
  in->ty2 = (uint8_t)ct;
  in->vec = 4; /* v[] holds the results: the timing model marks their arrival */
  results(c, in);
  expect(c, ",", "expected ',' after the results");
  address(c, in, dims);
  if (!ptx_accept(&c->p->lx, ";"))
    ptx_unsupported(c, "coordinate offsets and depth compares are not supported");
}
