/* sim_cfg.c: control-flow analysis at load time: for every branch, the immediate
 * post-dominator (rpc), where lanes that diverged at it meet again.
 *
 * Stance: per function, basic blocks and post-dominator sets as bitsets, iterated to a fixed
 * point. Quadratic in blocks, which is fine for the hundreds of blocks NVRTC emits per kernel and
 * much less code than Cooper-Harvey-Kennedy. `ret` of a .func has already been rewritten into a
 * branch to the function's single final RETF, and EXIT/TRAP lead to a virtual exit node; a branch
 * whose only post-dominator is that exit gets rpc -1 and reconverges where its enclosing region
 * does (decided at run time); in a stacked function (sim_calls.c) it meets at the function's
 * final return instead, since the activation's own frame on the divergence stack must see every
 * lane come back before it returns.
 *
 * It also marks the exit path (SIM_IF_EXIT_PATH): an unguarded exit and the chains of unguarded
 * branches that end at one. Debug builds (-G) send every return of a kernel through such a chain
 * to one final ret, where a lane that returned would otherwise wait for the rest of its warp. */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

typedef struct cfg {
  int n;              /* blocks; block n is the virtual exit */
  int *start;         /* first pc of each block */
  int *bof;           /* block of each pc, relative to the function's first */
  int words;          /* uint64 words per bitset */
  uint64_t *pd;       /* (n+1) bitsets */
} cfg;

int sim_ends_block(const sim_inst *in) {
  return in->op == SIM_OP_BRA || in->op == SIM_OP_EXIT || in->op == SIM_OP_RETF ||
         in->op == SIM_OP_RETS || in->op == SIM_OP_TRAP;
}

/* Successors of block b (at most 2), returns count; n means the virtual exit. */
static int succs(const sim_module *m, const sim_func *f, const cfg *g, int b, int out[2]) {
  int last = (b + 1 < g->n ? g->start[b + 1] : f->end) - 1;
  const sim_inst *in = &m->code[last];
  int k = 0;
  int fall = last + 1 < f->end ? g->bof[last + 1 - f->first] : g->n;
  switch (in->op) {
    case SIM_OP_BRA:
      out[k++] = g->bof[in->target - f->first];
      if (in->guard >= 0 && fall != out[0]) out[k++] = fall;
      return k;
    case SIM_OP_EXIT: case SIM_OP_TRAP: case SIM_OP_RETF: case SIM_OP_RETS:
      out[k++] = g->n;
      if (in->guard >= 0 && in->op != SIM_OP_RETF && in->op != SIM_OP_RETS) out[k++] = fall;
      return k;
    default:
      out[k++] = fall;
      return k;
  }
}

/* Members of the bitset s. */
static int popcount_set(const uint64_t *s, int words) {
  int c = 0;
  for (int i = 0; i < words; i++) c += __builtin_popcountll(s[i]);
  return c;
}

/* Marks in lead[] (len + 1 entries, zeroed) the pcs of f that begin a basic block: the first,
 * branch targets, and those after a terminator or a barrier. -1 with err set when a branch
 * leaves the function. */
static int mark_leaders(const sim_module *m, const sim_func *f, char *lead, char *err,
                        size_t errlen) {
  int len = f->end - f->first;
  lead[0] = 1;
  for (int i = 0; i < len; i++) {
    const sim_inst *in = &m->code[f->first + i];
    if (in->op == SIM_OP_BRA) {
      if (in->target < f->first || in->target >= f->end) {
        sim_errf(err, errlen, "PTX line %d: branch leaves its function", in->ptx_line);
        return -1;
      }
      lead[in->target - f->first] = 1;
    }
    if (sim_ends_block(in) || in->op == SIM_OP_BAR) lead[i + 1] = 1;
  }
  return 0;
}

/* The blocks lead[] marks: g->n, g->start, and g->bof (allocated by the caller). -1 when out
 * of memory. */
static int split_blocks(const sim_func *f, cfg *g, const char *lead) {
  int len = f->end - f->first;
  for (int i = 0; i < len; i++) g->n += lead[i];
  g->start = malloc((size_t)g->n * sizeof *g->start);
  if (!g->start) return -1;
  for (int i = 0, b = -1; i < len; i++) {
    if (lead[i]) g->start[++b] = f->first + i;
    g->bof[i] = b;
  }
  return 0;
}

/* g->pd: every block's post-dominators, from "all blocks" down to the fixed point (the exit
 * post-dominates only itself). -1 when out of memory. */
static int post_dominators(const sim_module *m, const sim_func *f, cfg *g) {
  g->words = (g->n + 1 + 63) / 64;
  size_t words = (size_t)g->words;
  g->pd = malloc((size_t)(g->n + 1) * words * sizeof *g->pd);
  if (!g->pd) return -1;
  memset(g->pd, 0xff, (size_t)(g->n + 1) * words * sizeof *g->pd);
  uint64_t *ex = g->pd + (size_t)g->n * words;
  memset(ex, 0, words * sizeof *ex);
  ex[g->n / 64] |= 1ull << (g->n % 64);
  uint64_t *tmp = malloc(words * sizeof *tmp);
  if (!tmp) return -1;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int b = g->n - 1; b >= 0; b--) {
      int s[2];
      int ns = succs(m, f, g, b, s);
      memcpy(tmp, g->pd + (size_t)s[0] * words, words * sizeof *tmp);
      for (int k = 1; k < ns; k++)
        for (size_t w = 0; w < words; w++) tmp[w] &= g->pd[(size_t)s[k] * words + w];
      tmp[b / 64] |= 1ull << (b % 64);
      uint64_t *cur = g->pd + (size_t)b * words;
      if (memcmp(cur, tmp, words * sizeof *tmp)) {
        memcpy(cur, tmp, words * sizeof *tmp);
        changed = 1;
      }
    }
  }
  free(tmp);
  return 0;
}

/* rpc of each conditional branch: the strict post-dominator whose set is one smaller. */
static void set_rpcs(sim_module *m, const sim_func *f, const cfg *g) {
  size_t words = (size_t)g->words;
  for (int b = 0; b < g->n; b++) {
    int last = (b + 1 < g->n ? g->start[b + 1] : f->end) - 1;
    sim_inst *in = &m->code[last];
    if (in->op != SIM_OP_BRA) continue;
    const uint64_t *pb = g->pd + (size_t)b * words;
    int want = popcount_set(pb, g->words) - 1;
    in->rpc = -1;
    for (int c = 0; c < g->n; c++) {
      if (c == b || !(pb[c / 64] >> (c % 64) & 1)) continue;
      if (popcount_set(g->pd + (size_t)c * words, g->words) == want) {
        in->rpc = g->start[c];
        break;
      }
    }
  }
}

static int func_cfg(sim_module *m, sim_func *f, char *err, size_t errlen) {
  int len = f->end - f->first;
  cfg g = {0};
  g.bof = malloc((size_t)len * sizeof *g.bof);
  char *lead = calloc((size_t)len + 1, 1);
  int rc = -1;
  if (!g.bof || !lead) goto oom;
  if (mark_leaders(m, f, lead, err, errlen) < 0) goto out;
  if (split_blocks(f, &g, lead) < 0 || post_dominators(m, f, &g) < 0) goto oom;
  set_rpcs(m, f, &g);
  rc = 0;
  goto out;
oom:
  sim_errf(err, errlen, "out of memory while analysing PTX control flow");
out:
  free(g.bof);
  free(g.start);
  free(g.pd);
  free(lead);
  return rc;
}

/* The exit path of f: each pc's chain of unguarded branches is followed once, and every pc on
 * it takes the chain's verdict, so the pass is linear however the branches run (a loop of
 * branches, as `for (;;);` compiles to, leads to no exit). state per pc: 0 not yet seen, 1 on
 * the chain being followed, 2 on the exit path, 3 not. -1 when out of memory. */
static int mark_exit_paths(sim_module *m, const sim_func *f) {
  int len = f->end - f->first;
  unsigned char *state = calloc((size_t)len, 1);
  if (!state) return -1;
  for (int start = 0; start < len; start++) {
    int pc = start, verdict = 3;
    while (state[pc] == 0) {
      const sim_inst *in = &m->code[f->first + pc];
      state[pc] = 1;
      if (in->guard >= 0 || (in->op != SIM_OP_BRA && in->op != SIM_OP_EXIT)) break;
      if (in->op == SIM_OP_EXIT) {
        verdict = 2;
        break;
      }
      pc = in->target - f->first; /* inside f: mark_leaders checked every target */
    }
    if (state[pc] == 2) verdict = 2;
    for (pc = start; state[pc] == 1;) { /* the chain again, with its verdict */
      const sim_inst *in = &m->code[f->first + pc];
      state[pc] = (unsigned char)verdict;
      if (verdict == 2) m->code[f->first + pc].flags |= SIM_IF_EXIT_PATH;
      if (in->op != SIM_OP_BRA || in->guard >= 0) break;
      pc = in->target - f->first;
    }
  }
  free(state);
  return 0;
}

int sim_cfg_build(sim_module *m, char *err, size_t errlen) {
  for (int i = 0; i < m->nfuncs; i++) {
    sim_func *f = &m->funcs[i];
    if (f->first < 0) continue;
    if (func_cfg(m, f, err, errlen) < 0) return -1;
    if (mark_exit_paths(m, f) < 0) {
      sim_errf(err, errlen, "out of memory while analysing PTX control flow");
      return -1;
    }
    if (!f->stacked) continue;
    for (int pc = f->first; pc < f->end; pc++)
      if (m->code[pc].op == SIM_OP_BRA && m->code[pc].rpc < 0) m->code[pc].rpc = f->end - 1;
  }
  return 0;
}
