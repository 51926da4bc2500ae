/* sim_atomics.c: what global atomics cost the timing model. The L2 does atomics, each address
 * at its home slice; a slice takes one request at a time. Measured on the H200 (the
 * atomic_slices probes of bench/model/contention.lua):
 *   - A request costs its slice a pass for each 32-byte sector it touches, whatever the lanes
 *     in it, and a further pass for each further lane on the sector's busiest address: 32 lanes
 *     over four sectors take four passes, 32 lanes on one address 32. A pass over a whole sector
 *     (atom_sector_ns, 0.61 ns) is cheaper than one over part of it (atom_partial_ns, 0.77):
 *     the atomic_slices and atomic_repeats probes measured both, and m = 1, 2 or 4 lanes to an
 *     address in whole sectors all cost four passes of 0.61 ns.
 *   - A float's passes on one address each wait for the previous result (atom_same_ns, 1.76 ns),
 *     an integer's follow at once; the slice works on the request's other sectors meanwhile, so
 *     a request keeps its slice for the larger of its passes and its longest such chain.
 *   - Across requests, updates of one address wait for each other too (atom_same_ns, and
 *     atom_same_int_ns for integers): one address updated by every block (a reduction's total)
 *     is a chain of those waits, however many slices there are.
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
 * then summed per slice in tables each worker keeps and the fold merges: sums of integer ticks
 * (sim_atab.tick_ns), so the result does not depend on which host thread ran which block, not
 * even in its last digits. Which slice the GPU's hash picks for an address cannot be known (the
 * simulator's addresses are not the GPU's either), so the hash here has the measured structure
 * and spreads the rest: a dense range of addresses evenly, scattered ones as a random hash would.
 * It hashes an address's offset in its allocation, never the host address, so the answer cannot
 * change with where the host's heap put the array. Where on the
 * GPU an allocation starts does matter for a small array: the driver places arrays at 512-byte
 * granules, and 256 bins (eight lines) starting at a kilobyte pair up on two slices, starting
 * 512 bytes past one on four (the H200 took 0.37 and 0.19 ms for one such histogram in two
 * processes). The slices are therefore priced for both placements (SIM_ATOM_PLACES) and the
 * busiest slice averaged. */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

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

/* The tick of a device's atomic costs (sim_atab.tick_ns). */
static double tick_for(const sim_perf *P) {
  double c[4] = {P->atom_sector_ns, P->atom_partial_ns, P->atom_same_ns, P->atom_same_int_ns};
  double least = 0;
  for (int i = 0; i < 4; i++)
    if (c[i] > 0 && (least == 0 || c[i] < least)) least = c[i];
  return (least > 0 ? least : 1) / 16777216.0;
}

/* ns in t's ticks, rounded once per request's cost; held below where a sum could wrap. */
static uint64_t ticks_of(const sim_atab *t, double ns) {
  double k = ns / t->tick_ns + 0.5;
  return k >= 1 ? (uint64_t)(k < 0x1p52 ? k : 0x1p52) : 0;
}

/* ticks back in nanoseconds */
static double ns_of(const sim_atab *t, uint64_t ticks) {
  return (double)ticks * t->tick_ns;
}

/* Adds ticks to a slice's time. */
static void add_ticks(sim_atab *t, uint64_t slice, uint64_t ticks) {
  if ((t->n + 1) * 2 > t->cap && grow(t) < 0) return;
  size_t j = slot_of(slice, t->cap);
  while (t->e[j].used && t->e[j].slice != slice) j = (j + 1) & (t->cap - 1);
  if (!t->e[j].used) {
    t->e[j].slice = slice;
    t->e[j].used = 1;
    t->n++;
  }
  t->e[j].ticks += ticks;
}

static void add(sim_atab *t, uint64_t slice, double ns) {
  add_ticks(t, slice, ticks_of(t, ns));
}

/* Adds ns of waits to the chain of the sector holding address a. */
static void chain_add(sim_atab *t, uint64_t a, double ns) {
  if (!t->chain && !(t->chain = calloc(2 * SIM_ATOM_SKETCH, sizeof *t->chain))) return;
  uint64_t h = (a >> 5) * 0x9E3779B97F4A7C15ull, k = ticks_of(t, ns);
  t->chain[(h >> 20) % SIM_ATOM_SKETCH] += k;
  t->chain[SIM_ATOM_SKETCH + (h >> 44) % SIM_ATOM_SKETCH] += k;
}

void sim_atab_merge(sim_atab *dst, const sim_atab *src) {
  for (size_t i = 0; i < src->cap; i++)
    if (src->e[i].used) add_ticks(dst, src->e[i].slice, src->e[i].ticks);
  if (src->chain && (dst->chain || (dst->chain = calloc(2 * SIM_ATOM_SKETCH, sizeof *dst->chain))))
    for (int i = 0; i < 2 * SIM_ATOM_SKETCH; i++) dst->chain[i] += src->chain[i];
  dst->ops += src->ops;
  if (src->nslices) dst->nslices = src->nslices;
  if (src->tick_ns > 0) dst->tick_ns = src->tick_ns;
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

/* One sector of a request: its address, the slice time its passes take, and how long the
 * chain of its busiest address keeps the slice. */
typedef struct sector_cost {
  uint64_t at;
  double passes, chain;
} sector_cost;

/* Adds a request's sectors to their slices, in each placement (slice k * n + s is slice s of
 * placement k, the allocation starting k * 512 bytes past a kilobyte). A slice pipelines one
 * request's sectors: it is busy for the larger of their passes together and its longest chain
 * of passes on one address. */
static void add_request(sim_atab *t, const sector_cost *sc, int nsc, uint64_t n) {
  t->nslices = n;
  for (uint64_t k = 0; k < SIM_ATOM_PLACES; k++) {
    uint64_t slice[SIM_WARP];
    double passes[SIM_WARP], chain[SIM_WARP];
    int nsl = 0;
    for (int i = 0; i < nsc; i++) {
      uint64_t s = k * n + slice_of(sc[i].at + k * 512, n);
      int j = 0;
      while (j < nsl && slice[j] != s) j++;
      if (j == nsl) {
        slice[nsl] = s;
        passes[nsl] = chain[nsl] = 0;
        nsl++;
      }
      passes[j] += sc[i].passes;
      if (sc[i].chain > chain[j]) chain[j] = sc[i].chain;
    }
    for (int j = 0; j < nsl; j++) add(t, slice[j], passes[j] > chain[j] ? passes[j] : chain[j]);
  }
}

/* The bytes of a 32-byte sector the lanes in `lanes` cover, as a bit mask. */
static uint32_t covered(const uint64_t *ad, uint32_t lanes, int size) {
  uint32_t bytes = 0, one = size >= 32 ? 0xffffffffu : (1u << size) - 1;
  for (uint32_t mm = lanes; mm; mm &= mm - 1) bytes |= one << (ad[__builtin_ctz(mm)] & 31);
  return bytes;
}

/* Lanes that share a key (an address, or a sector), in a small open-addressed table: 64 slots
 * for a warp's 32 keys at most. */
#define GROUP_SLOTS 64
typedef struct lane_group {
  uint64_t key;
  uint32_t lanes, count; /* lanes 0: the slot is free */
} lane_group;

/* The slot of key in g: its group, or the free slot it takes. */
static int group_slot(lane_group *g, uint64_t key) {
  int h = (int)((key * 0x9E3779B97F4A7C15ull) >> 58);
  while (g[h].lanes && g[h].key != key) h = (h + 1) & (GROUP_SLOTS - 1);
  g[h].key = key;
  return h;
}

/* One request: its cost to each slice it touches, sector by sector. Returns the operations that
 * reach the L2. */
double sim_atab_request(sim_atab *t, const sim_perf *P, const sim_inst *in, const uint64_t *ad,
                        uint32_t em) {
  int fp = sim_type_float(in->ty) || sim_type_half(in->ty);
  double wait = fp ? P->atom_same_ns : P->atom_same_int_ns;
  uint64_t nslices = P->atom_slices >= 1 ? (uint64_t)(P->atom_slices + 0.5) : 1;
  t->tick_ns = tick_for(P);
  if (in->uniform && !fp && in->sub == SIM_ATOM_ADD) { /* the compiler's warp-aggregated add */
    sector_cost one = {ad[__builtin_ctz(em)], P->atom_partial_ns, P->atom_partial_ns};
    add_request(t, &one, 1, nslices);
    chain_add(t, ad[__builtin_ctz(em)], wait);
    t->ops += 1;
    if (t->max_same < 1) t->max_same = 1;
    return 1;
  }
  /* the lanes by address, then by sector with its busiest address: one pass over them each */
  lane_group addr[GROUP_SLOTS] = {{0}}, sect[GROUP_SLOTS] = {{0}};
  int at[SIM_WARP], order[SIM_WARP], nsect = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), g = group_slot(addr, ad[l]);
    addr[g].lanes |= 1u << l;
    addr[g].count++;
    at[l] = g;
  }
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), g = group_slot(sect, ad[l] >> 5);
    if (!sect[g].lanes) order[nsect++] = g;
    sect[g].lanes |= 1u << l;
    if (addr[at[l]].count > sect[g].count) sect[g].count = addr[at[l]].count;
  }
  sector_cost sc[SIM_WARP];
  int nsc = 0;
  for (int i = 0; i < nsect; i++) { /* per sector: a pass per lane on its busiest address */
    const lane_group *g = &sect[order[i]];
    uint32_t most = g->count;
    /* a pass over the whole sector is cheaper than over part of it (bytes merged in) */
    double pass = covered(ad, g->lanes, in->size) == 0xffffffffu ? P->atom_sector_ns
                                                                 : P->atom_partial_ns;
    /* an integer's next pass on one address follows at once; a float's waits for the result */
    double gap = fp ? P->atom_same_ns : pass;
    sc[nsc++] = (sector_cost){g->key << 5, most * pass, (most - 1) * gap + pass};
    chain_add(t, g->key << 5, most * wait);
    if (most > t->max_same) t->max_same = most;
  }
  add_request(t, sc, nsc, nslices);
  t->ops += sim_popcount(em);
  return (double)sim_popcount(em);
}

/* The busiest slice's or address's chain and the sum over all slices, from a merged table. */
void sim_atab_price(const sim_atab *t, sim_profile *p) {
  uint64_t busiest[SIM_ATOM_PLACES] = {0}, sum = 0;
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->e[i].used) continue;
    sum += t->e[i].ticks;
    uint64_t k = t->nslices ? t->e[i].slice / t->nslices : 0;
    if (k < SIM_ATOM_PLACES && t->e[i].ticks > busiest[k]) busiest[k] = t->e[i].ticks;
  }
  p->atom_slice_sum_ns += ns_of(t, sum) / SIM_ATOM_PLACES;
  double mean = 0;
  for (int k = 0; k < SIM_ATOM_PLACES; k++)
    mean += ns_of(t, busiest[k]) / SIM_ATOM_PLACES;
  if (mean > p->atom_chain_ns) p->atom_chain_ns = mean;
  if (t->chain) {
    uint64_t row[2] = {0, 0};
    for (int r = 0; r < 2; r++)
      for (int i = 0; i < SIM_ATOM_SKETCH; i++)
        if (t->chain[r * SIM_ATOM_SKETCH + i] > row[r]) row[r] = t->chain[r * SIM_ATOM_SKETCH + i];
    double address = ns_of(t, row[0] < row[1] ? row[0] : row[1]);
    if (address > p->atom_chain_ns) p->atom_chain_ns = address;
  }
  p->atom_max_same = t->max_same;
}
