/* sim_atomics.c: what global atomics cost the timing model. The L2 does atomics, each address
 * at its home slice; a slice takes one request at a time. Measured on the H200 (the
 * atomic_slices probes of bench/model/contention.lua):
 *   - A request costs its slice atom_sector_ns for each 32-byte sector it touches, whatever the
 *     lanes in it: 1, 8 or 32 lanes in one sector cost the same, 32 lanes over four sectors four
 *     times that.
 *   - Lanes on one address take one pass each, every pass waiting for the previous result
 *     (atom_same_ns for floating point, atom_same_int_ns for integers), and so do requests: one
 *     address updated by every block (a reduction's total) is a chain of those waits, however
 *     many slices there are.
 *   - Two 128-byte lines 128 or 512 bytes apart share a slice, 256 or 1024 bytes apart do not:
 *     address bits 7 and 9 do not choose the slice, the others are hashed. Runs of adjacent
 *     lines then spread two lines per slice, as the probes' times show (1, 2, 4, 8, 16 lines:
 *     1, 1, 2, 2, 4 slices).
 * So the busiest slice and the busiest address are chains no parallelism shortens; all of them
 * together are bounded by the chip's rate of lane operations. The address chains are kept in a
 * sketch (two rows of hashed sector buckets; the smaller of the two rows' largest bucket), so
 * that a launch touching millions of addresses needs no table of them: a bucket shared by
 * several sectors can only overstate a chain, by their share of the total.
 *
 * The GPU does not merge a warp's lanes on one address, but the compiler does, for an integer add
 * whose address is the same in every lane by construction (a kernel parameter, not data): it
 * adds across the warp first and sends one atomic. The simulator runs the PTX, before that
 * rewrite, so the decoder marks such instructions (sim_inst.uniform) and they count once.
 *
 * Stance: worked out per request as it runs (the costs depend only on the request's own lanes),
 * then summed per slice in tables each worker keeps and the fold merges: sums, so the result does
 * not depend on which host thread ran which block. Which slice the GPU's hash picks for an
 * address cannot be known (the simulator's addresses are not the GPU's either), so the hash here
 * has the measured structure and spreads the rest: a dense range of addresses evenly, scattered
 * ones as a random hash would. It hashes an address's offset in its allocation, never the host
 * address, so the answer cannot change with where the host's heap put the array. Where on the
 * GPU an allocation starts does matter for a small array: the driver places arrays at 512-byte
 * granules, and 256 bins (eight lines) starting at a kilobyte pair up on two slices, starting
 * 512 bytes past one on four (the H200 took 0.37 and 0.19 ms for one such histogram in two
 * processes). The slices are therefore priced for both placements (SIM_ATOM_PLACES) and the
 * busiest slice averaged. */
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
    size_t j = slot_of(t->e[i].slice, cap);
    while (e[j].used) j = (j + 1) & (cap - 1);
    e[j] = t->e[i];
  }
  free(t->e);
  t->e = e;
  t->cap = cap;
  return 0;
}

static void add(sim_atab *t, uint64_t slice, double ns) {
  if ((t->n + 1) * 2 > t->cap && grow(t) < 0) return;
  size_t j = slot_of(slice, t->cap);
  while (t->e[j].used && t->e[j].slice != slice) j = (j + 1) & (t->cap - 1);
  if (!t->e[j].used) {
    t->e[j].slice = slice;
    t->e[j].used = 1;
    t->n++;
  }
  t->e[j].ns += ns;
}

/* Adds ns of waits to the chain of the sector holding address a. */
static void chain_add(sim_atab *t, uint64_t a, double ns) {
  if (!t->chain && !(t->chain = calloc(2 * SIM_ATOM_SKETCH, sizeof *t->chain))) return;
  uint64_t h = (a >> 5) * 0x9E3779B97F4A7C15ull;
  t->chain[(h >> 20) % SIM_ATOM_SKETCH] += ns;
  t->chain[SIM_ATOM_SKETCH + (h >> 44) % SIM_ATOM_SKETCH] += ns;
}

void sim_atab_merge(sim_atab *dst, const sim_atab *src) {
  for (size_t i = 0; i < src->cap; i++)
    if (src->e[i].used) add(dst, src->e[i].slice, src->e[i].ns);
  if (src->chain && (dst->chain || (dst->chain = calloc(2 * SIM_ATOM_SKETCH, sizeof *dst->chain))))
    for (int i = 0; i < 2 * SIM_ATOM_SKETCH; i++) dst->chain[i] += src->chain[i];
  dst->ops += src->ops;
  if (src->nslices) dst->nslices = src->nslices;
  if (src->max_same > dst->max_same) dst->max_same = src->max_same;
}

void sim_atab_free(sim_atab *t) {
  free(t->e);
  free(t->chain);
  memset(t, 0, sizeof *t);
}

/* The slice of address a among n: bits 7 and 9 dropped, what is left placed so that n
 * consecutive keys take n different slices, each run of n at an offset of its own. */
static uint64_t slice_of(uint64_t a, uint64_t n) {
  uint64_t key = (a >> 10) << 1 | (a >> 8 & 1), run = key / n;
  uint64_t mix = (run + 1) * 0x9E3779B97F4A7C15ull;
  return (key + (mix >> 32)) % n;
}

/* Adds ns to the slice of placed address a in each placement: slice k * n + s is slice s of
 * placement k, the allocation starting k * 512 bytes past a kilobyte. */
static void add_placed(sim_atab *t, uint64_t a, uint64_t n, double ns) {
  t->nslices = n;
  for (uint64_t k = 0; k < SIM_ATOM_PLACES; k++) add(t, k * n + slice_of(a + k * 512, n), ns);
}

/* One request: its cost to each slice it touches, sector by sector. Returns the operations that
 * reach the L2. */
double sim_atab_request(sim_atab *t, const sim_perf *P, const sim_inst *in, const uint64_t *ad,
                        uint32_t em) {
  int fp = sim_type_float(in->ty) || sim_type_half(in->ty);
  double wait = fp ? P->atom_same_ns : P->atom_same_int_ns;
  uint64_t nslices = P->atom_slices >= 1 ? (uint64_t)(P->atom_slices + 0.5) : 1;
  if (in->uniform && !fp && in->sub == SIM_ATOM_ADD) { /* the compiler's warp-aggregated add */
    add_placed(t, ad[__builtin_ctz(em)], nslices, P->atom_sector_ns);
    chain_add(t, ad[__builtin_ctz(em)], wait);
    t->ops += 1;
    if (t->max_same < 1) t->max_same = 1;
    return 1;
  }
  for (uint32_t left = em; left;) { /* per sector: one pass per lane on its busiest address */
    uint64_t sector = ad[__builtin_ctz(left)] >> 5;
    uint32_t in_sector = 0, most = 0;
    for (uint32_t mm = left; mm; mm &= mm - 1)
      if (ad[__builtin_ctz(mm)] >> 5 == sector) in_sector |= 1u << __builtin_ctz(mm);
    for (uint32_t rest = in_sector; rest;) {
      uint64_t a = ad[__builtin_ctz(rest)];
      uint32_t same = 0;
      for (uint32_t mm = rest; mm; mm &= mm - 1)
        if (ad[__builtin_ctz(mm)] == a) same |= 1u << __builtin_ctz(mm);
      uint32_t k = (uint32_t)__builtin_popcount(same);
      if (k > most) most = k;
      rest &= ~same;
    }
    add_placed(t, sector << 5, nslices, P->atom_sector_ns + (most - 1) * wait);
    chain_add(t, sector << 5, most * wait);
    if (most > t->max_same) t->max_same = most;
    left &= ~in_sector;
  }
  t->ops += __builtin_popcount(em);
  return (double)__builtin_popcount(em);
}

/* The busiest slice's or address's chain and the sum over all slices, from a merged table. */
void sim_atab_price(const sim_atab *t, sim_profile *p) {
  double busiest[SIM_ATOM_PLACES] = {0}, sum = 0;
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->e[i].used) continue;
    sum += t->e[i].ns;
    uint64_t k = t->nslices ? t->e[i].slice / t->nslices : 0;
    if (k < SIM_ATOM_PLACES && t->e[i].ns > busiest[k]) busiest[k] = t->e[i].ns;
  }
  p->atom_slice_sum_ns += sum / SIM_ATOM_PLACES;
  double mean = 0;
  for (int k = 0; k < SIM_ATOM_PLACES; k++) mean += busiest[k] / SIM_ATOM_PLACES;
  if (mean > p->atom_chain_ns) p->atom_chain_ns = mean;
  if (t->chain) {
    double row[2] = {0, 0};
    for (int r = 0; r < 2; r++)
      for (int i = 0; i < SIM_ATOM_SKETCH; i++)
        if (t->chain[r * SIM_ATOM_SKETCH + i] > row[r]) row[r] = t->chain[r * SIM_ATOM_SKETCH + i];
    double address = row[0] < row[1] ? row[0] : row[1];
    if (address > p->atom_chain_ns) p->atom_chain_ns = address;
  }
  p->atom_max_same = t->max_same;
}
