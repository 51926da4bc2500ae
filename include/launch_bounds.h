/* launch_bounds.h: a kernel's launch bounds (__launch_bounds__, __maxnreg__, __block_size__,
 * __cluster_dims__), read from the directives after a PTX .entry's parameters, and whether a
 * launch keeps to them. The one reader and the one set of refusals: the simulator's parser and
 * launch (sim/ptx_parse.c, sim/sim_launch.c) and the REPL's (repl/compile/ptxinfo.c,
 * repl/bind/bind_kernel.c) both call these, so a bound the one refuses the other refuses too, in
 * the same words.
 *
 * Stance: the functions are static inline, in a header of include/ that includes nothing of
 * the project. The simulator is a library of its own that links nothing of the REPL, and the REPL
 * builds without the simulator, so a .c file would have to be compiled into both and kept out of
 * one link; a header both may include is the one place they share (tests/layers.sh allows sim/
 * this header and h200.h of include/). A bad bound is refused, never read as 1: the GPU's loader
 * refuses such PTX, and a bound silently taken as 1 would refuse every launch but the smallest. */
#ifndef CUDALAB_LAUNCH_BOUNDS_H
#define CUDALAB_LAUNCH_BOUNDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The directives after an .entry's parameters; 0 where the kernel declares none. */
typedef struct lb_bounds {
  unsigned maxntid[3];     /* .maxntid (__launch_bounds__): threads per block, their product */
  unsigned reqntid[3];     /* .reqntid (__block_size__): the one block shape it takes */
  unsigned cluster[3];     /* .reqnctapercluster (__cluster_dims__): blocks per cluster */
  unsigned min_blocks;     /* .minnctapersm (__launch_bounds__'s second): blocks per SM wanted */
  unsigned max_blocks;     /* .maxnctapersm: the same, in PTX before 8.0 */
  unsigned maxnreg;        /* .maxnreg (__maxnreg__): registers per thread */
  unsigned cluster_rank;   /* .maxclusterrank (__launch_bounds__'s third): blocks per cluster */
  int explicit_cluster;    /* .explicitcluster: launched in clusters */
  int blocks_are_clusters; /* .blocksareclusters: a launch counts clusters, not blocks */
} lb_bounds;

/* A grid's or a block's shape; each caller converts its own (cl_dim3, sim_dim3). */
typedef struct lb_dim3 {
  unsigned x, y, z;
} lb_dim3;

/* The largest number a bound may hold: PTX's .u32 operands, kept signed-safe as ptxas does. */
#define LB_MAX_VALUE 0x7fffffffu

/* The directives read, each with how many numbers follow it (0 for a flag) and where they go. */
enum { LB_MAXNTID, LB_REQNTID, LB_CLUSTER, LB_MINBLOCKS, LB_MAXBLOCKS, LB_MAXNREG, LB_RANK,
       LB_EXPLICIT, LB_BLOCKS_CLUSTERS, LB_NORETURN, LB_NWORDS };
static const struct {
  const char *word; /* without its '.' */
  int most;         /* numbers it takes: 3 for a shape, 1 for a count, 0 for a flag */
} lb_words[LB_NWORDS] = {
    [LB_MAXNTID] = {"maxntid", 3},       [LB_REQNTID] = {"reqntid", 3},
    [LB_CLUSTER] = {"reqnctapercluster", 3}, [LB_MINBLOCKS] = {"minnctapersm", 1},
    [LB_MAXBLOCKS] = {"maxnctapersm", 1}, [LB_MAXNREG] = {"maxnreg", 1},
    [LB_RANK] = {"maxclusterrank", 1},   [LB_EXPLICIT] = {"explicitcluster", 0},
    [LB_BLOCKS_CLUSTERS] = {"blocksareclusters", 0}, [LB_NORETURN] = {"noreturn", 0},
};

static inline int lb_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

/* p past blanks, newlines and comments, never past end. */
static inline const char *lb_blank(const char *p, const char *end) {
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
      while (p < end && *p != '\n') p++;
    } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
      const char *q = p + 2;
      while (end - q >= 2 && !(q[0] == '*' && q[1] == '/')) q++;
      p = end - q >= 2 ? q + 2 : end;
    } else {
      return p;
    }
  }
}

/* The directive at p, one of lb_words, or -1; *after is past its word. */
static inline int lb_word_at(const char *p, const char *end, const char **after) {
  if (p >= end || *p != '.') return -1;
  const char *w = p + 1, *e = w;
  while (e < end && lb_ident(*e)) e++;
  for (int i = 0; i < LB_NWORDS; i++)
    if (strlen(lb_words[i].word) == (size_t)(e - w) && !memcmp(lb_words[i].word, w, e - w)) {
      *after = e;
      return i;
    }
  return -1;
}

/* The numbers after directive `word`, "128, 1, 1", into v (missing ones are 1, as PTX has them);
 * where they end, or NULL with why in msg and *bad at the culprit: a number that is not one (0,
 * negative, over LB_MAX_VALUE, not a number at all) or more of them than the directive takes. */
static inline const char *lb_numbers(const char *p, const char *end, int word, unsigned v[3],
                                     char *msg, size_t len, const char **bad) {
  v[0] = v[1] = v[2] = 1;
  for (int n = 0;; n++) {
    p = lb_blank(p, end);
    const char *s = *bad = p;
    while (p < end && lb_ident(*p)) p++;
    char num[24];
    size_t k = (size_t)(p - s);
    unsigned long long x = 0;
    char *stop = num;
    if (k > 0 && k < sizeof num && s[0] >= '0' && s[0] <= '9') {
      memcpy(num, s, k);
      num[k] = 0;
      x = strtoull(num, &stop, 0);
      if (*stop == 'U') stop++;
    }
    if (n == lb_words[word].most || k == 0 || *stop || x < 1 || x > LB_MAX_VALUE) {
      if (n == lb_words[word].most)
        snprintf(msg, len, "bad launch bound: .%s takes %d number%s, not more", lb_words[word].word,
                 lb_words[word].most, lb_words[word].most == 1 ? "" : "s");
      else
        snprintf(msg, len, "bad launch bound '%.*s' after .%s: each of its numbers must be a "
                 "whole number from 1 to %u", k ? (int)(k > 40 ? 40 : k) : 1, k ? s : "?",
                 lb_words[word].word, LB_MAX_VALUE);
      return NULL;
    }
    v[n] = (unsigned)x;
    p = lb_blank(p, end);
    if (p >= end || *p != ',') return p;
    p++;
  }
}

/* `.pragma "..." [, "..."] ;` at p (its word consumed): past the ';', or NULL if unended. */
static inline const char *lb_pragma(const char *p, const char *end) {
  for (int in_string = 0; p < end; p++) {
    if (*p == '"') in_string = !in_string;
    else if (*p == '\\' && in_string && p + 1 < end) p++;
    else if (*p == ';' && !in_string) return p + 1;
  }
  return NULL;
}

/* Reads the directives in [p, end) (p just after a function's parameter list) into b, which it
 * zeros first, up to the first thing that is none of them: the '{' of a body, the ';' of a
 * prototype, anything else (which the caller judges). Returns where it stopped, or NULL for a
 * bad bound, with why in msg and *bad (unless bad is NULL) at it, for the caller's line number. */
static inline const char *lb_read(const char *p, const char *end, lb_bounds *b, char *msg,
                                  size_t len, const char **bad) {
  const char *culprit;
  memset(b, 0, sizeof *b);
  for (;;) {
    p = lb_blank(p, end);
    const char *after;
    int w = lb_word_at(p, end, &after);
    if (w < 0 && end - p >= 7 && !memcmp(p, ".pragma", 7) && (end - p == 7 || !lb_ident(p[7]))) {
      const char *q = lb_pragma(p + 7, end);
      if (!q) return p; /* unended: the caller's parser says so */
      p = q;
      continue;
    }
    if (w < 0) return p;
    unsigned v[3];
    if (lb_words[w].most && !(p = lb_numbers(after, end, w, v, msg, len, &culprit))) {
      if (bad) *bad = culprit;
      return NULL;
    }
    if (!lb_words[w].most) p = after;
    switch (w) {
    case LB_MAXNTID: memcpy(b->maxntid, v, sizeof v); break;
    case LB_REQNTID: memcpy(b->reqntid, v, sizeof v); break;
    case LB_CLUSTER: memcpy(b->cluster, v, sizeof v); break;
    case LB_MINBLOCKS: b->min_blocks = v[0]; break;
    case LB_MAXBLOCKS: b->max_blocks = v[0]; break;
    case LB_MAXNREG: b->maxnreg = v[0]; break;
    case LB_RANK: b->cluster_rank = v[0]; break;
    case LB_EXPLICIT: b->explicit_cluster = 1; break;
    case LB_BLOCKS_CLUSTERS: b->blocks_are_clusters = 1; break;
    case LB_NORETURN: break; /* a .func's: changes nothing of a launch */
    }
  }
}

/* The most threads per block the bounds allow, or 0 when they set none. */
static inline unsigned lb_max_threads(const lb_bounds *b) {
  unsigned long long t = (unsigned long long)b->maxntid[0] * b->maxntid[1] * b->maxntid[2];
  return b->maxntid[0] && t < 0xffffffffull ? (unsigned)t : 0;
}

/* The block against .maxntid and .reqntid; 0, or -1 with the GPU's refusal in words. */
static inline int lb_check_block(const lb_bounds *b, const char *kernel, lb_dim3 k, char *msg,
                                 size_t len) {
  const unsigned *m = b->maxntid, *r = b->reqntid;
  unsigned long long t = (unsigned long long)k.x * k.y * k.z;
  unsigned long long most = (unsigned long long)m[0] * m[1] * m[2];
  char bound[96];
  /* "__launch_bounds__(256)" for a bound on x alone (what the C++ attribute writes), else the
   * directive's shape */
  if (m[1] == 1 && m[2] == 1) snprintf(bound, sizeof bound, "__launch_bounds__(%u)", m[0]);
  else
    snprintf(bound, sizeof bound, "a bound of %u x %u x %u threads (.maxntid)", m[0], m[1], m[2]);
  if (m[0] && t > most) {
    snprintf(msg, len, "kernel %s was declared with %s: a block of %llu threads (%u x %u x %u) "
             "is over that bound, so the GPU refuses the launch (too many resources requested "
             "for launch); use at most %llu threads per block, or raise the bound", kernel,
             bound, t, k.x, k.y, k.z, most);
    return -1;
  }
  if (r[0] && (k.x != r[0] || k.y != r[1] || k.z != r[2])) {
    snprintf(msg, len, "kernel %s was declared with __block_size__((%u, %u, %u)): it runs only "
             "with blocks of exactly %u x %u x %u threads, not %u x %u x %u", kernel, r[0], r[1],
             r[2], r[0], r[1], r[2], k.x, k.y, k.z);
    return -1;
  }
  return 0;
}

/* The grid against the cluster shape (at most max_cluster blocks, the device's portable
 * cluster size); 0, or -1 with the GPU's refusal in words. */
static inline int lb_check_cluster(const lb_bounds *b, const char *kernel, lb_dim3 g,
                                   unsigned max_cluster, char *msg, size_t len) {
  const unsigned *c = b->cluster;
  if (b->explicit_cluster && !c[0]) {
    snprintf(msg, len, "kernel %s was declared with __cluster_dims__() and no shape: its launch "
             "must give the cluster shape, which cudalab's launches cannot; write the shape in "
             "the declaration, as __cluster_dims__(2, 1, 1)", kernel);
    return -1;
  }
  if (!c[0]) return 0;
  unsigned long long size = (unsigned long long)c[0] * c[1] * c[2];
  if (size > max_cluster) {
    snprintf(msg, len, "kernel %s was declared with __cluster_dims__(%u, %u, %u): a cluster of "
             "%llu blocks is over the %u the GPU allows (the portable cluster size)", kernel,
             c[0], c[1], c[2], size, max_cluster);
    return -1;
  }
  const unsigned gd[3] = {g.x, g.y, g.z};
  for (int i = 0; i < 3; i++)
    if (gd[i] % c[i]) {
      snprintf(msg, len, "kernel %s was declared with __cluster_dims__(%u, %u, %u): the grid "
               "must be a whole number of clusters, but grid.%c = %u is not a multiple of %u",
               kernel, c[0], c[1], c[2], "xyz"[i], gd[i], c[i]);
      return -1;
    }
  return 0;
}

/* Whether a launch of grid x block keeps to b: 0 if it does; -1 if the GPU would refuse it, with
 * why in msg, naming the kernel, its bound and what was asked. A launch that counts clusters
 * (.blocksareclusters) is the caller's to judge: how it counts depends on who launches it. */
static inline int lb_check(const lb_bounds *b, const char *kernel, lb_dim3 grid, lb_dim3 block,
                           unsigned max_cluster, char *msg, size_t len) {
  if (lb_check_block(b, kernel, block, msg, len)) return -1;
  return lb_check_cluster(b, kernel, grid, max_cluster, msg, len);
}

#endif
