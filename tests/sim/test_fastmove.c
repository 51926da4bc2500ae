/* test_fastmove.c: the data a whole warp's ld and st move on the memory fast path, for every
 * shape the mover takes four lanes at a time (sim_memo.move in sim_run.h: each group of four
 * lanes on consecutive elements, or on one) and for shapes it leaves to the lane-by-lane loop,
 * with elements of 4 and 8 bytes. Each pair of warps of a block uses one pattern, so the second
 * warp of the pair takes the memo's hit path and the first its fill path. Stores where several
 * lanes name one element must leave the highest lane's value, as the GPU's lane order does. The
 * expected memory comes from running the same indices lane by lane on the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

/* T: the element type. A warp's lanes store their values at s[i] and g[i], i = idx[t], then
 * read s[i] and in[i] back; sdump is shared memory as the stores left it. */
#define MOVE_KERNEL(NAME, T)                                                                   \
  "__global__ void " NAME "(const int *idx, const " T " *in, " T " *out, " T " *g, " T        \
  " *sdump) {\n"                                                                               \
  "  __shared__ " T " s[512];\n"                                                               \
  "  int t = threadIdx.x, b = blockIdx.x * 512, i = idx[t];\n"                                 \
  "  s[t] = 0;\n"                                                                              \
  "  __syncthreads();\n"                                                                       \
  "  s[i] = in[b + t];\n"                                                                      \
  "  g[b + i] = in[b + t];\n"                                                                  \
  "  __syncthreads();\n"                                                                       \
  "  sdump[b + t] = s[t];\n"                                                                   \
  "  out[b + t] = s[i] + in[b + i];\n"                                                         \
  "}\n"

static const char *src = "extern \"C\" {\n" MOVE_KERNEL("move32", "int")
    MOVE_KERNEL("move64", "long long") "}\n";

enum { BLOCKS = 3, BLOCK = 512, PATTERNS = 8 };

/* Lane l's element in its warp's window of 32, by pattern: consecutive; one per group of four
 * (its stores collide); consecutive groups that repeat (collide across groups); halves that
 * repeat; one per half; reversed; reversed within each group; one for the whole warp. The last
 * three but one are shapes the mover leaves to the loop. */
static int lane_index(int pattern, int l) {
  switch (pattern) {
    case 0: return l;
    case 1: return l / 4;
    case 2: return l % 8;
    case 3: return l % 16;
    case 4: return 7 * (l / 16);
    case 5: return 31 - l;
    case 6: return l / 4 * 4 + 3 - l % 4;
    default: return 5;
  }
}

/* Runs kernel k with elements of es bytes and compares out, g and sdump with the host. */
static void test_move(sim_device *dev, sim_module *m, const char *k, const char *name, int es) {
  char err[2048], what[160];
  int n = BLOCKS * BLOCK, bad = 0;
  int *idx = sim_malloc(dev, BLOCK * sizeof(int), "i32[512]", err, sizeof err);
  unsigned char *in = sim_malloc(dev, (size_t)n * (size_t)es, "in", err, sizeof err);
  unsigned char *out = sim_malloc(dev, (size_t)n * (size_t)es, "out", err, sizeof err);
  unsigned char *g = sim_malloc(dev, (size_t)n * (size_t)es, "g", err, sizeof err);
  unsigned char *sd = sim_malloc(dev, (size_t)n * (size_t)es, "sdump", err, sizeof err);
  long long *s = calloc(BLOCK, sizeof *s), *gr = calloc((size_t)n, sizeof *gr);
  if (!idx || !in || !out || !g || !sd || !s || !gr) {
    tu_check(0, name, "out of memory");
    return;
  }
  for (int t = 0; t < BLOCK; t++) idx[t] = t / 32 * 32 + lane_index(t / 64 % PATTERNS, t % 32);
  for (int i = 0; i < n; i++) {
    /* negative values and, at 8 bytes, high words: a move that drops or extends bits shows */
    long long v = (long long)(i * 7919 % 1000003) - 500000;
    if (es == 8) v = v * 4294967311ll;
    memcpy(in + (size_t)i * (size_t)es, &v, (size_t)es);
  }
  memset(g, 0, (size_t)n * (size_t)es);
  void *args[] = {&idx, &in, &out, &g, &sd};
  int rc = tu_launch(dev, sim_module_kernel(m, k), BLOCKS, BLOCK, 0, args, 1, NULL, err,
                     sizeof err);
  if (rc != 0) {
    tu_check(0, name, "launch failed: %s", err);
    return;
  }
  for (int bl = 0; bl < BLOCKS && !bad; bl++) {
    int b = bl * BLOCK;
    memset(s, 0, BLOCK * sizeof *s);
    for (int t = 0; t < BLOCK; t++) { /* lane order: the highest lane's store wins */
      long long v = 0;
      memcpy(&v, in + (size_t)(b + t) * (size_t)es, (size_t)es);
      if (es == 4) v = (int)v;
      s[idx[t]] = v;
      gr[b + idx[t]] = v;
    }
    for (int t = 0; t < BLOCK && !bad; t++) {
      long long o = 0, d = 0, gv = 0, x = 0;
      memcpy(&o, out + (size_t)(b + t) * (size_t)es, (size_t)es);
      memcpy(&d, sd + (size_t)(b + t) * (size_t)es, (size_t)es);
      memcpy(&gv, g + (size_t)(b + t) * (size_t)es, (size_t)es);
      memcpy(&x, in + (size_t)(b + idx[t]) * (size_t)es, (size_t)es);
      if (es == 4) {
        o = (int)o;
        d = (int)d;
        gv = (int)gv;
        x = (int)x;
      }
      long long want = s[idx[t]] + x; /* no overflow: |values| < 2^52 */
      if (d != s[t] || gv != gr[b + t] || o != want) {
        snprintf(what, sizeof what, "block %d thread %d (pattern %d): shared %lld want %lld, g "
                 "%lld want %lld, out %lld want %lld", bl, t, t / 64 % PATTERNS, d, s[t], gv,
                 gr[b + t], o, want);
        bad = 1;
      }
    }
  }
  tu_check(!bad, name, "%s", what);
  free(s);
  free(gr);
  sim_free(dev, idx);
  sim_free(dev, in);
  sim_free(dev, out);
  sim_free(dev, g);
  sim_free(dev, sd);
}

int main(void) {
  tu_plan(2);
  sim_device *dev = sim_device_new(NULL);
  sim_module *m = tu_module("compile move kernels", src);
  if (!m) return 1;
  test_move(dev, m, "move32", "4-byte elements: every shape's loads and stores, lanes colliding",
            4);
  test_move(dev, m, "move64", "8-byte elements: every shape's loads and stores, lanes colliding",
            8);
  sim_module_free(m);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
