/* sim_atomics.c: what global atomics cost the timing model. The L2 does atomics; each 128-byte
 * line belongs to one of its slices, which takes one request's operations on that line at a time:
 * the lanes on different addresses in a pipeline (atom_addr_ns each), but lanes on one address
 * one after another, each waiting for the previous result (atom_same_ns for floating point,
 * atom_same_int_ns for integers), and the first of them for the previous request's. So a request
 * costs a line the larger of (addresses) x atom_addr_ns and (most lanes on one address) x the
 * wait. Per line these costs add up: the busiest line is a chain no parallelism shortens. All of
 * them together are shared by the slices working in parallel, and bounded by the chip's rate of
 * operations on distinct addresses.
 *
 * The GPU does not merge a warp's lanes on one address, but the compiler does, for an integer add
 * whose address is the same in every lane by construction (a kernel parameter, not data): it
 * adds across the warp first and sends one atomic. The simulator runs the PTX, before that
 * rewrite, so the decoder marks such instructions (sim_inst.uniform) and they count once.
 *
 * Stance: worked out per request as it runs (the costs depend only on the request's own lanes),
 * then summed per line in tables each worker keeps and the fold merges: sums, so the result does
 * not depend on which host thread ran which block. The alternative of keeping every address and
 * ordering them after the launch would cost memory in proportion to a histogram's data. */
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"

static size_t slot_of(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static int grow(sim_atab *t) {
  size_t cap = t->cap ? t->cap * 2 : 1024;
  sim_aent *e = calloc(cap, sizeof *e);
  if (!e) return -1;
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->e[i].used) continue;
    size_t j = slot_of(t->e[i].line, cap);
    while (e[j].used) j = (j + 1) & (cap - 1);
    e[j] = t->e[i];
  }
  free(t->e);
  t->e = e;
  t->cap = cap;
  return 0;
}

static void add(sim_atab *t, uint64_t line, double ns) {
  if ((t->n + 1) * 2 > t->cap && grow(t) < 0) return;
  size_t j = slot_of(line, t->cap);
  while (t->e[j].used && t->e[j].line != line) j = (j + 1) & (t->cap - 1);
  if (!t->e[j].used) {
    t->e[j].line = line;
    t->e[j].used = 1;
    t->n++;
  }
  t->e[j].ns += ns;
}

void sim_atab_merge(sim_atab *dst, const sim_atab *src) {
  for (size_t i = 0; i < src->cap; i++)
    if (src->e[i].used) add(dst, src->e[i].line, src->e[i].ns);
  dst->ops += src->ops;
  if (src->max_same > dst->max_same) dst->max_same = src->max_same;
}

void sim_atab_free(sim_atab *t) {
  free(t->e);
  memset(t, 0, sizeof *t);
}

/* One request: its cost to each line it touches. Returns the operations that reach the L2. */
double sim_atab_request(sim_atab *t, const sim_perf *P, const sim_inst *in, const uint64_t *ad,
                        uint32_t em) {
  int fp = sim_type_float(in->ty) || sim_type_half(in->ty);
  double wait = fp ? P->atom_same_ns : P->atom_same_int_ns;
  if (in->uniform && !fp && in->sub == SIM_ATOM_ADD) { /* the compiler's warp-aggregated add */
    add(t, ad[__builtin_ctz(em)] >> 7, P->atom_addr_ns > wait ? P->atom_addr_ns : wait);
    t->ops += 1;
    if (t->max_same < 1) t->max_same = 1;
    return 1;
  }
  for (uint32_t left = em; left;) { /* per line: the most lanes on one of its addresses */
    uint64_t line = ad[__builtin_ctz(left)] >> 7;
    uint32_t in_line = 0, most = 0, addrs = 0;
    for (uint32_t mm = left; mm; mm &= mm - 1)
      if (ad[__builtin_ctz(mm)] >> 7 == line) in_line |= 1u << __builtin_ctz(mm);
    for (uint32_t rest = in_line; rest;) {
      uint64_t a = ad[__builtin_ctz(rest)];
      uint32_t same = 0;
      for (uint32_t mm = rest; mm; mm &= mm - 1)
        if (ad[__builtin_ctz(mm)] == a) same |= 1u << __builtin_ctz(mm);
      uint32_t k = (uint32_t)__builtin_popcount(same);
      if (k > most) most = k;
      addrs++;
      rest &= ~same;
    }
    double waits = most * wait, turns = addrs * P->atom_addr_ns;
    add(t, line, waits > turns ? waits : turns);
    if (most > t->max_same) t->max_same = most;
    left &= ~in_line;
  }
  t->ops += __builtin_popcount(em);
  return (double)__builtin_popcount(em);
}

/* The busiest line's chain and the sum over all lines, from a merged table. */
void sim_atab_price(const sim_atab *t, sim_profile *p) {
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->e[i].used) continue;
    p->atom_line_sum_ns += t->e[i].ns;
    if (t->e[i].ns > p->atom_chain_ns) p->atom_chain_ns = t->e[i].ns;
  }
  p->atom_max_same = t->max_same;
}
