/* sim_tex.c: the fetch of SIM_OP_TEX from a texture object (sim_texture.c makes them), as the
 * CUDA Programming Guide's texture-fetching appendix defines it.
 *
 * The fetch, per dimension, on the unnormalized coordinate x (x * size when normalized):
 *   point:  texel i = floor(x);
 *   linear: xb = x - 0.5, i = floor(xb), alpha = frac(xb) in 9-bit fixed point with 8
 *           fractional bits (rounded to the nearest 1/256, a half up; 256/256 reads texel
 *           i + 1 alone); the result is the sum of the 2^dims corner texels times their
 *           weights (corner_weights: 8-bit products of the alphas, as the GPU holds them),
 *           summed in double in the order x fastest, then y, then z, and rounded to float once.
 * Each texel index is then addressed: clamp to [0, n - 1], border (the texel reads 0), wrap
 * (modulo n), mirror (reflected every n). CUDA wraps and mirrors normalized coordinates only;
 * with unnormalized ones (as NVIDIA's dct8x8 sample asks) those two clamp here, which
 * tests/gpu/texture.lua checks against the GPU. 8- and 16-bit integers read normalized are
 * v / 255, v / 65535, max(v / 127, -1), max(v / 32767, -1). A texture of fewer than four
 * channels gives 0 for every missing one, the fourth too (an NVIDIA H100 does; graphics APIs
 * give 1 there). Integer coordinates (.s32: tex1Dfetch) are refused: tex1Dfetch reads textures
 * over linear memory, and cuda.texture's are CUDA arrays, over which an H100 returned undefined
 * values. How the GPU's filter rounds is not documented; measured on an H200
 * (tests/gpu/texture.lua, bench/texture/probe.lua): point sampling, every address mode, 1-D
 * weights, and 2-D and 3-D corner weights on single-corner and ramp textures are bit for bit
 * the GPU's; the sum of the corners may round otherwise (an ulp or two), and some 3-D fetches
 * still differ by up to about 1/256 of the texels' spread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

/* ---- the fetch ---- */

/* Texel index i of a dimension of n texels under address mode a; -1 for a border texel. */
static int64_t address(int64_t i, int64_t n, int a) {
  if (i >= 0 && i < n) return i;
  switch (a) {
    case SIM_TEXA_BORDER: return -1;
    case SIM_TEXA_WRAP: return (i % n + n) % n;
    case SIM_TEXA_MIRROR: {
      int64_t m = (i % (2 * n) + 2 * n) % (2 * n);
      return m < n ? m : 2 * n - 1 - m;
    }
    default: return i < 0 ? 0 : n - 1; /* SIM_TEXA_CLAMP */
  }
}

/* The address mode of dimension k: wrap and mirror clamp unnormalized coordinates. */
static int mode(const sim_texture *t, int k) {
  int a = t->d.address[k < t->d.dims ? k : 0];
  return t->d.normalized || a == SIM_TEXA_BORDER ? a : SIM_TEXA_CLAMP;
}

/* floor(v) as an integer, v held far from int64's ends (a coordinate 2^40 texels out clamps,
 * wraps or borders as one 2^40 out does); NaN reads texel 0. */
static int64_t ifloor(double v) {
  if (v != v) return 0;
  if (v > 1e12) v = 1e12;
  if (v < -1e12) v = -1e12;
  return (int64_t)floor(v);
}

/* Channel c of texel at byte offset off, as a float (f32, or an integer read normalized). */
static double texel_float(const sim_texture *t, size_t off) {
  const unsigned char *p = t->data + off;
  switch (t->d.format) {
    case SIM_TEXF_U8: return p[0] / 255.0;
    case SIM_TEXF_S8: return fmax((int8_t)p[0] / 127.0, -1.0);
    case SIM_TEXF_U16: { uint16_t v; memcpy(&v, p, 2); return v / 65535.0; }
    case SIM_TEXF_S16: { int16_t v; memcpy(&v, p, 2); return fmax(v / 32767.0, -1.0); }
    default: { float f; memcpy(&f, p, 4); return f; }
  }
}

/* The register bits of a channel read as an element: integers sign- or zero-extended to 32 bits,
 * f32 as they are. */
static uint32_t texel_bits(const sim_texture *t, size_t off) {
  const unsigned char *p = t->data + off;
  switch (t->d.format) {
    case SIM_TEXF_U8: return p[0];
    case SIM_TEXF_S8: return (uint32_t)(int32_t)(int8_t)p[0];
    case SIM_TEXF_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case SIM_TEXF_S16: { int16_t v; memcpy(&v, p, 2); return (uint32_t)(int32_t)v; }
    default: { uint32_t v; memcpy(&v, p, 4); return v; }
  }
}

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* One lane's coordinates, per dimension: the first texel index and, for linear filtering,
 * alpha in 1/256ths. */
typedef struct tex_at {
  int64_t i[3];
  int alpha[3];
} tex_at;

static void locate(const sim_texture *t, const uint64_t *coord, tex_at *at) {
  const uint64_t size[3] = {t->d.width, t->d.height, t->d.depth};
  for (int k = 0; k < 3; k++) {
    at->i[k] = 0;
    at->alpha[k] = 0;
    if (k >= t->d.dims) continue;
    float x;
    uint32_t u = (uint32_t)coord[k];
    memcpy(&x, &u, 4);
    if (t->d.normalized) x *= (float)size[k];
    if (!t->d.linear) {
      at->i[k] = ifloor(x);
      continue;
    }
    double f = (double)(x - 0.5f) * 256.0; /* exact: a float times a power of two */
    /* to the nearest 1/256, a half up: an H200 reads 1/512 past a texel centre as 1/256 */
    int64_t fx = f != f ? 0 : ifloor(floor(fmax(fmin(f, 1e14), -1e14) + 0.5));
    at->i[k] = fx >> 8; /* floor: arithmetic shift */
    at->alpha[k] = (int)(fx & 255);
  }
}

/* The weight of each corner of a linear fetch, in 1/256ths, from the dimensions' alphas, as an
 * H200 forms them: each product of two or three alphas is itself held to 8 fractional bits (the
 * nearest 1/256, a half up), and a corner's weight is what inclusion and exclusion make of those
 * (in 2-D, the corner (0,0) weighs 256 - ax - ay + [ax ay]), so that the weights always sum to
 * 1, a texture that is linear in its coordinates is still reproduced exactly, and a corner weight
 * of (8/256)^2 reads 0. Measured on an H200 (bench/texture/probe.lua, 2026-12-06): a lit far
 * corner, 1,089 of 1,089 fetches in 2-D and 4,913 of 4,913 in 3-D (the plain products of the
 * dimensions' weights: 577 and 2,225), and every fetch of a linear ramp; a lit near corner in
 * 3-D, 4,273 of 4,913 (the rest 1/256 apart: the GPU's rule for it is not found yet). */
static void corner_weights(const int alpha[3], int dims, int64_t w[8]) {
  int64_t sub[8]; /* the held product of the alphas of each subset of dimensions (bit k: k) */
  for (int s = 0; s < 1 << dims; s++) {
    int n = 0;
    int64_t prod = 1, den = 1;
    for (int k = 0; k < dims; k++)
      if (s >> k & 1) {
        prod *= alpha[k];
        den *= n++ ? 256 : 1;
      }
    sub[s] = n == 0 ? 256 : (2 * prod + den) / (2 * den); /* prod / den, a half up */
  }
  for (int c = 0; c < 1 << dims; c++) { /* over the subsets d of the dimensions c takes low */
    int low = ~c & ((1 << dims) - 1);
    int64_t sum = 0;
    for (int d = low;; d = (d - 1) & low) {
      sum += (__builtin_popcount((unsigned)d) & 1 ? -1 : 1) * sub[c | d];
      if (!d) break;
    }
    w[c] = sum;
  }
}

/* The four result registers of one lane. */
static void fetch(const sim_texture *t, const tex_at *at, uint32_t out[4]) {
  const int64_t size[3] = {(int64_t)t->d.width, (int64_t)t->d.height, (int64_t)t->d.depth};
  int ch = t->d.channels, fl = t->d.format == SIM_TEXF_F32 || t->d.read_normalized;
  int lin = t->d.linear;
  int corners = lin ? 1 << t->d.dims : 1;
  double acc[4] = {0, 0, 0, 0};
  uint32_t bits[4] = {0, 0, 0, 0};
  int64_t w[8] = {256};
  if (lin) corner_weights(at->alpha, t->d.dims, w);
  for (int c = 0; c < corners; c++) {
    double wgt = (double)w[c] / 256.0;
    int64_t idx[3];
    int border = 0;
    for (int k = 0; k < 3; k++) {
      int up = (c >> k) & 1;
      idx[k] = address(at->i[k] + up, size[k], mode(t, k));
      border |= idx[k] < 0;
    }
    size_t off = border ? 0 : ((size_t)((idx[2] * size[1] + idx[1]) * size[0] + idx[0])) *
                                  (size_t)ch * (size_t)t->esize;
    for (int q = 0; q < ch; q++) {
      size_t o = off + (size_t)q * (size_t)t->esize;
      /* the first corner's term is the sum so far, so that point sampling keeps a -0.0 */
      double term = wgt * (border ? 0.0 : texel_float(t, o));
      if (fl) acc[q] = c == 0 ? term : acc[q] + term;
      else bits[q] = border ? 0 : texel_bits(t, o); /* border colour 0 */
    }
  }
  for (int q = 0; q < 4; q++) {
    if (q >= ch) out[q] = 0u; /* 0 and 0.0f alike */
    else out[q] = fl ? fbits((float)acc[q]) : bits[q];
  }
}

/* The device address of a lane's first texel (clamped into the texture), for the counters and
 * the timing model's trace. */
static uint64_t base_addr(const sim_texture *t, const tex_at *at) {
  const int64_t size[3] = {(int64_t)t->d.width, (int64_t)t->d.height, (int64_t)t->d.depth};
  int64_t idx[3];
  for (int k = 0; k < 3; k++) idx[k] = address(at->i[k], size[k], SIM_TEXA_CLAMP);
  size_t off = (size_t)((idx[2] * size[1] + idx[1]) * size[0] + idx[0]);
  return (uint64_t)(uintptr_t)(t->data + off * (size_t)t->d.channels * (size_t)t->esize);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The 32-byte sectors the lanes' fetches touch (each bytes long from ad[l]). */
static unsigned sectors(const uint64_t *ad, uint32_t em, int bytes) {
  uint64_t s[2 * SIM_WARP];
  int n = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    s[n++] = ad[l] / 32;
    uint64_t last = (ad[l] + (uint64_t)bytes - 1) / 32;
    if (last != ad[l] / 32) s[n++] = last;
  }
  qsort(s, (size_t)n, sizeof *s, cmp_u64);
  unsigned u = 0;
  for (int i = 0; i < n; i++) u += i == 0 || s[i] != s[i - 1];
  return u;
}

static const char *geom_fn[] = {"", "tex1D", "tex2D", "tex3D"};

/* The live texture of handle h, or NULL with the launch failed, naming lane l. */
static const sim_texture *lookup(sim_worker *wk, sim_warp *w, const sim_inst *in, int l,
                                 uint64_t h) {
  const struct sim_textures *tt = wk->run->dev->textures;
  const sim_texture *t = tt && h >= 1 && h <= tt->n ? &tt->t[h - 1] : NULL;
  if (!t || !t->data) {
    sim_fail(wk, w, l, in, "texture fetch (tex.%dd) from 0x%llx, which is not a live texture "
             "object: %s", in->sub, (unsigned long long)h,
             t ? "it was freed before this launch" :
                 "pass the handle that cuda.texture made (t), not an array or a number");
    return NULL;
  }
  if (t->d.dims != in->sub) {
    sim_fail(wk, w, l, in, "%s (tex.%dd) on a %d-D texture (%llu x %llu x %llu texels): "
             "fetch it with %s", geom_fn[in->sub], in->sub, t->d.dims,
             (unsigned long long)t->d.width, (unsigned long long)t->d.height,
             (unsigned long long)t->d.depth, geom_fn[t->d.dims]);
    return NULL;
  }
  return t;
}

int sim_tex_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  uint64_t *R = w->R, ad[SIM_WARP];
  const uint64_t *H = R + in->a * SIM_WARP;
  const int32_t crow[3] = {in->b, in->c, in->e};
  const sim_texture *t = NULL;
  uint64_t th = 0;
  int bytes = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (!t || H[l] != th) { /* lanes mostly share one texture: look it up once */
      if (!(t = lookup(wk, w, in, l, H[l]))) return -1;
      th = H[l];
    }
    if (in->ty2 == SIM_T_S32) {
      sim_fail(wk, w, l, in, "tex1Dfetch (integer coordinates) reads a texture over linear "
               "memory, and cuda.texture makes textures over CUDA arrays, from which a GPU's "
               "tex1Dfetch returns undefined values: read texel i with tex1D(t, i + 0.5f) "
               "(point filtering, the default)");
      return -1;
    }
    uint64_t coord[3] = {0, 0, 0};
    for (int k = 0; k < in->sub; k++) coord[k] = R[crow[k] * SIM_WARP + l];
    tex_at at;
    locate(t, coord, &at);
    uint32_t out[4];
    fetch(t, &at, out);
    for (int q = 0; q < 4; q++)
      if (in->v[q] >= 0) R[in->v[q] * SIM_WARP + l] = out[q];
    ad[l] = base_addr(t, &at);
    int b = t->d.channels * t->esize * (t->d.linear ? 2 : 1);
    if (b > bytes) bytes = b;
  }
  wk->ic[pc].req++;
  wk->ic[pc].sect += sectors(ad, em, bytes);
  if (wk->run->lat) sim_trace_access(wk, w, pc, SIM_TR_LOAD, ad, em, bytes, -1);
  return 0;
}
