/* sim_texture.c: texture objects: the device's table of them, made and freed
 * (sim_texture_create, sim_texture_destroy).
 *
 * Stance: a texture is what cudaCreateTextureObject makes from a CUDA array: a copy of the texels
 * (an allocation of the device, so it counts as device memory as the array does on the GPU) and
 * the sampling options, named by a handle that is not a device address. Handles are small
 * numbers, like the GPU's, and never reused: a kernel handed a freed texture, or a pointer where
 * a texture belongs, fails with the thread and the line rather than reading another texture.
 * The table changes only between launches (one host thread makes and frees textures, and a
 * launch runs to its end before the next call), so workers read it without a lock.
 *
 * The fetch of SIM_OP_TEX is sim_tex.c's, in the executor; this file is the device's side,
 * which allocates (sim_malloc) and so sits above it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* The GPU's limits for textures on CUDA arrays (cudaDeviceProp.maxTexture1D/2D/3D, sm_90). */
#define MAX_1D 131072u
#define MAX_2D_W 131072u
#define MAX_2D_H 65536u
#define MAX_3D 16384u

static int format_size(int f) {
  switch (f) {
    case SIM_TEXF_F32: case SIM_TEXF_S32: case SIM_TEXF_U32: return 4;
    case SIM_TEXF_S16: case SIM_TEXF_U16: return 2;
    case SIM_TEXF_S8: case SIM_TEXF_U8: return 1;
    default: return 0;
  }
}

static const char *const format_names[] = {"f32", "s32", "u32", "s16", "u16", "s8", "u8"};

/* Why d describes no texture the GPU would make, or NULL. */
static const char *desc_why(const sim_tex_desc *d, char *buf, size_t len) {
  uint64_t maxw = d->dims == 1 ? MAX_1D : d->dims == 2 ? MAX_2D_W : MAX_3D;
  uint64_t maxh = d->dims == 2 ? MAX_2D_H : d->dims == 3 ? MAX_3D : 1;
  uint64_t maxd = d->dims == 3 ? MAX_3D : 1;
  if (!format_size(d->format)) return "unknown element format";
  if (d->channels != 1 && d->channels != 2 && d->channels != 4) return "channels must be 1, 2 or 4";
  if (d->dims < 1 || d->dims > 3) return "a texture has 1, 2 or 3 dimensions";
  if (!d->width || !d->height || !d->depth || d->width > maxw || d->height > maxh ||
      d->depth > maxd) {
    snprintf(buf, len, "a %d-D texture of %llu x %llu x %llu texels is outside the GPU's limits "
             "(%llu x %llu x %llu)", d->dims, (unsigned long long)d->width,
             (unsigned long long)d->height, (unsigned long long)d->depth, (unsigned long long)maxw,
             (unsigned long long)maxh, (unsigned long long)maxd);
    return buf;
  }
  int small = format_size(d->format) < 4 && d->format != SIM_TEXF_F32;
  if (d->read_normalized && !small) return "normalized reads need 8- or 16-bit integer elements";
  if (d->linear && d->format != SIM_TEXF_F32 && !d->read_normalized)
    return "linear filtering needs float results (f32 elements, or 8- and 16-bit integers read "
           "normalized)";
  for (int k = 0; k < d->dims; k++) {
    int a = d->address[k];
    if (a < SIM_TEXA_CLAMP || a > SIM_TEXA_BORDER) return "unknown address mode";
  }
  return NULL;
}

uint64_t sim_texture_create(sim_device *dev, const sim_tex_desc *d, const void *src, char *err,
                            size_t errlen) {
  char buf[200];
  const char *why = desc_why(d, buf, sizeof buf);
  if (why) {
    sim_errf(err, errlen, "%s", why);
    return 0;
  }
  if (!dev->textures && !(dev->textures = calloc(1, sizeof *dev->textures))) {
    sim_errf(err, errlen, "out of host memory for the texture table");
    return 0;
  }
  struct sim_textures *tt = dev->textures;
  if (tt->n == tt->cap) {
    size_t cap = tt->cap ? tt->cap * 2 : 16;
    sim_texture *g = realloc(tt->t, cap * sizeof *g);
    if (!g) {
      sim_errf(err, errlen, "out of host memory for the texture table");
      return 0;
    }
    tt->t = g;
    tt->cap = cap;
  }
  int es = format_size(d->format);
  size_t bytes = (size_t)(d->width * d->height * d->depth) * (size_t)d->channels * (size_t)es;
  char label[64];
  snprintf(label, sizeof label, "texture %zu (%s x %d, %llux%llux%llu)", tt->n + 1,
           format_names[d->format], d->channels, (unsigned long long)d->width,
           (unsigned long long)d->height, (unsigned long long)d->depth);
  unsigned char *data = sim_malloc(dev, bytes, label, err, errlen);
  if (!data) return 0;
  memcpy(data, src, bytes);
  sim_texture *t = &tt->t[tt->n++];
  t->d = *d;
  t->data = data;
  t->esize = es;
  return (uint64_t)tt->n;
}

int sim_texture_destroy(sim_device *dev, uint64_t handle) {
  struct sim_textures *tt = dev->textures;
  if (!tt || handle == 0 || handle > tt->n || !tt->t[handle - 1].data) return -1;
  sim_free(dev, tt->t[handle - 1].data);
  tt->t[handle - 1].data = NULL;
  return 0;
}
