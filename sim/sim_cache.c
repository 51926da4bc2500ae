/* sim_cache.c: the L1 and L2 models of the timing model. The sampled trace of a launch, in the
 * GPU's order, goes through an L1 per SM (loads allocate; stores write through) and then one L2
 * (write-back: dirty sectors reach DRAM when their line is evicted). Both are set-associative
 * with LRU replacement in each set, over 128-byte lines that hold 32-byte sectors, which is how
 * an NVIDIA GPU's caches are organised.
 *
 * Stance: only one line in 32 is traced (sim_trace.c), or fewer for a long trace, so each cache
 * holds that share of its lines; a cache over a sampled set of lines behaves like the whole cache
 * for those lines,
 * which is the set-sampling argument of cache studies. The L2 is replayed twice and counted on
 * the second pass, so the figures are those of a launch that repeats (timing after warm-up); the
 * L1 starts empty on each pass, as a GPU invalidates it between kernels. Set-associative rather
 * than one fully associative LRU list: a lookup is 16 compares in two host cache lines instead of
 * a hash chain and list links, which matters because this runs after every launch, alone, while
 * the launch itself ran on every core. */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim_run.h"

#define WAYS 16

static int pop4(unsigned m) {
  return (int)((m & 1) + (m >> 1 & 1) + (m >> 2 & 1) + (m >> 3 & 1));
}

/* One set: its lines' ids (32-bit hashes of the line address: two lines of one launch sharing
 * a hash and a set is rare enough not to matter), last use, and sector masks, together in 160
 * bytes so that a lookup touches one place. */
typedef struct cache_set {
  uint32_t key[WAYS]; /* 0: empty */
  uint32_t stamp[WAYS];
  uint8_t valid[WAYS], dirty[WAYS];
} cache_set;

typedef struct lru {
  int nsets;      /* capacity / WAYS */
  uint32_t clock; /* recency stamps */
  cache_set *set;
} lru;

static int lru_init(lru *c, int cap) {
  memset(c, 0, sizeof *c);
  c->nsets = cap / WAYS > 0 ? cap / WAYS : 1;
  c->set = calloc((size_t)c->nsets, sizeof *c->set);
  return c->set ? 0 : -1;
}

static void lru_free(lru *c) {
  free(c->set);
}

static void lru_clear(lru *c) {
  memset(c->set, 0, (size_t)c->nsets * sizeof *c->set);
  c->clock = 0;
}

/* A line's set and its 32-bit id (never 0). The set comes from the hash's low half scaled to
 * nsets (a multiply and a shift, not a division, and no rounding of the capacity to a power of
 * two, which would lose up to half of it). */
static cache_set *set_of(const lru *c, uint64_t line, uint32_t *key) {
  uint64_t h = line * 0x9E3779B97F4A7C15ull;
  *key = (uint32_t)(h >> 32) | 1;
  return &c->set[((h & 0xffffffffull) * (uint64_t)c->nsets) >> 32];
}

/* The ways of s holding key k, as a bit mask: written as one pass without early exit, which the
 * compiler turns into a few vector compares instead of a loop of unpredictable branches. */
static unsigned ways_of(const cache_set *s, uint32_t k) {
#if defined(__SSE2__)
  __m128i kk = _mm_set1_epi32((int)k);
  unsigned m = 0;
  for (int q = 0; q < WAYS / 4; q++) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s->key + 4 * q));
    m |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, kk))) << (4 * q);
  }
  return m;
#else
  unsigned m = 0;
  for (int w = 0; w < WAYS; w++) m |= (unsigned)(s->key[w] == k) << w;
  return m;
#endif
}

/* The way holding line k, or -1. */
static int lru_find(const lru *c, uint64_t line, cache_set **where) {
  uint32_t k;
  cache_set *s = set_of(c, line, &k);
  *where = s;
  unsigned m = ways_of(s, k);
  return m ? __builtin_ctz(m) : -1;
}

/* Looks the line up, making it most recent. Inserts it when absent, in an empty way or over the
 * set's least recently used line; then *dirty_out gets the sectors that line had to write back.
 * Returns the way, and the set in *where. */
static int lru_touch(lru *c, uint64_t line, cache_set **where, uint8_t *dirty_out) {
  uint32_t k;
  cache_set *s = set_of(c, line, &k);
  *where = s;
  *dirty_out = 0;
  unsigned m = ways_of(s, k);
  if (m) {
    int w = __builtin_ctz(m);
    s->stamp[w] = ++c->clock;
    return w;
  }
  unsigned empty = ways_of(s, 0);
  int v = 0; /* an empty way, else the least recent */
  if (empty)
    v = __builtin_ctz(empty);
  else
    for (int w = 1; w < WAYS; w++) v = s->stamp[w] < s->stamp[v] ? w : v;
  if (s->key[v]) *dirty_out = s->dirty[v];
  s->key[v] = k;
  s->valid[v] = s->dirty[v] = 0;
  s->stamp[v] = ++c->clock;
  return v;
}

/* DRAM moves 64 bytes at a time (HBM's burst: two sectors): a sector missing in L2 brings its
 * pair, and a dirty sector evicted alone still takes the pair's write. Measured on the H200: one
 * float read per 64 or 128 bytes runs at half the sector rate of one per 32. */
static uint8_t dram_pairs(uint8_t sectors) {
  return (uint8_t)(sectors | ((sectors & 0x5) << 1) | ((sectors & 0xa) >> 1));
}

typedef struct replay_counts {
  uint64_t load, l1_hit, l2_load, l2_load_hit, atom, dram_read, write, dram_write;
  uint64_t load_dram;  /* DRAM sectors that loads brought in (dram_read's share) */
  uint64_t store_dram; /* and that partial stores brought in, to merge into */
} replay_counts;

/* Per load instruction, in the counted pass: sectors traced, L1 hits, and DRAM reads. */
typedef struct pc_counts {
  uint64_t load, l1_hit, dram;
} pc_counts;

/* One pass over the trace. The warm-up pass (l1 NULL) only fills the L2: skipping the L1 there
 * changes the L2's recency order a little and halves the work. Counts are integers, summed in
 * locals: floating-point sums in memory were a third of the pass. */
static void replay_pass(lru *l1, int nsm, lru *l2, const sim_trace_ent *e, size_t n,
                        replay_counts *out, pc_counts *pcs) {
  for (int s = 0; l1 && s < nsm; s++) lru_clear(&l1[s]);
  replay_counts rc = {0};
  for (size_t i = 0; i < n; i++) {
    uint8_t mask = e[i].mask & 0xf, partial = e[i].mask >> 4, wb;
    int kind = e[i].kind;
    cache_set *cs;
    if (!l1) {
    } else if (kind == SIM_TR_LOAD) {
      int sectors = pop4(mask);
      int j = lru_touch(&l1[e[i].block % (uint32_t)nsm], e[i].line, &cs, &wb);
      uint8_t hit = cs->valid[j] & mask;
      cs->valid[j] |= mask;
      rc.load += (uint64_t)sectors;
      rc.l1_hit += (uint64_t)pop4(hit);
      if (pcs) {
        pcs[e[i].pc].load += (uint64_t)sectors;
        pcs[e[i].pc].l1_hit += (uint64_t)pop4(hit);
      }
      mask &= (uint8_t)~hit;
      if (!mask) continue;
      rc.l2_load += (uint64_t)pop4(mask);
    } else {
      int sectors = pop4(mask);
      rc.write += (uint64_t)sectors;
      if (kind == SIM_TR_ATOM) rc.atom += (uint64_t)sectors;
      int j = lru_find(&l1[e[i].block % (uint32_t)nsm], e[i].line,
                       &cs); /* write-through: an L1 copy stays current */
      if (j >= 0) cs->valid[j] |= mask;
    }
    int j = lru_touch(l2, e[i].line, &cs, &wb);
    uint8_t hit = cs->valid[j] & mask, miss = mask & (uint8_t)~hit;
    rc.dram_write += (uint64_t)pop4(dram_pairs(wb));
    uint8_t fetched = kind != SIM_TR_STORE && miss ? dram_pairs(miss) & (uint8_t)~cs->valid[j] : 0;
    /* A store covering part of a sector the L2 does not hold: the L2 reads the whole line to
     * merge into (DRAM's ECC covers whole bursts). Measured on the H200: 4M int stores, one per
     * 32, 64 or 128 bytes, take the time of reading each line touched and writing the sectors. */
    if (kind == SIM_TR_STORE && (partial & miss)) {
      fetched = (uint8_t)(0xf & ~cs->valid[j]);
      rc.store_dram += (uint64_t)pop4(fetched);
    }
    if (kind == SIM_TR_LOAD) {
      rc.l2_load_hit += (uint64_t)pop4(hit);
      rc.load_dram += (uint64_t)pop4(fetched);
      if (pcs) pcs[e[i].pc].dram += (uint64_t)pop4(fetched);
    }
    rc.dram_read += (uint64_t)pop4(fetched);
    cs->valid[j] |= mask | fetched;
    if (kind != SIM_TR_LOAD) cs->dirty[j] |= mask;
  }
  *out = rc;
}

/* The caches of one device, kept between launches (a launch would otherwise pay for fresh
 * pages); rebuilt when a launch needs other capacities. */
struct sim_caches {
  int nsm, l1_cap, l2_cap;
  lru l2, *l1;
};

void sim_cache_free(struct sim_caches *c) {
  if (!c) return;
  for (int s = 0; c->l1 && s < c->nsm; s++) lru_free(&c->l1[s]);
  free(c->l1);
  lru_free(&c->l2);
  free(c);
}

static struct sim_caches *caches_for(sim_device *dev, int nsm, int l1_cap, int l2_cap) {
  struct sim_caches *c = dev->caches;
  if (c && c->nsm == nsm && c->l1_cap == l1_cap && c->l2_cap == l2_cap) {
    lru_clear(&c->l2);
    return c;
  }
  sim_cache_free(c);
  dev->caches = c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->nsm = nsm;
  c->l1_cap = l1_cap;
  c->l2_cap = l2_cap;
  c->l1 = calloc((size_t)nsm, sizeof *c->l1);
  int ok = c->l1 && lru_init(&c->l2, l2_cap) == 0;
  for (int s = 0; ok && s < nsm; s++) ok = lru_init(&c->l1[s], l1_cap) == 0;
  if (!ok) {
    sim_cache_free(c);
    dev->caches = NULL;
  }
  return dev->caches;
}

/* A cache's capacity in sampled lines. A cache with more lines than the replayed trace can
 * touch never evicts, like any larger one, so the capacity is bounded there: a what-if device
 * with a terabyte of L2 (cuda.simopts{perf = ...}) costs no memory. */
static int lines_for(double bytes, double sample) {
  double lines = bytes / 128 / sample, most = 8.0 * SIM_TRACE_TARGET;
  if (!(lines > 1)) return 1;
  return (int)(lines < most ? lines : most);
}

/* Fills p's hit rates and traffic past each cache from the trace and the exact counters.
 * Loads are rated per instruction: a table every warp reads is a few hot lines, which the
 * line sample draws or not, and a single rate for the launch would swing with that draw. An
 * instruction none of whose lines was drawn touched few lines, all resident: it counts as hits. */
void sim_cache_replay(const sim_run *run, const sim_worker *wks, int nw, sim_trace_ent *e, size_t n,
                      int blocks_per_sm, double sample, sim_profile *p) {
  const sim_device_desc *d = &run->dev->desc;
  int nsm = d->sm_count > 0 ? d->sm_count : 1;
  double shared = (double)run->shared_user * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  double l1_bytes = d->perf.l1_bytes - shared;
  if (l1_bytes < 16384) l1_bytes = 16384;
  replay_counts warm = {0}, rc = {0};
  struct sim_caches *c = n ? caches_for(run->dev, nsm, lines_for(l1_bytes, sample),
                                        lines_for(d->perf.l2_bytes, sample))
                           : NULL;
  int ncode = run->m->ncode;
  pc_counts *pcs = calloc((size_t)ncode + 1, sizeof *pcs);
  if (c) {
    replay_pass(NULL, nsm, &c->l2, e, n, &warm, NULL);
    replay_pass(c->l1, nsm, &c->l2, e, n, &rc, pcs);
  }
  /* Rates from the sample, applied to the exact counters; an untraced launch (no sampled line)
   * has no reuse to find and every sector of it is taken to be resident, as a tiny one is. */
  double l2_loads = 0, dram_loads = 0, w1 = 0, w2 = 0, w3 = 0, wsum = 0, w2_more = 0,
         w3_more = 0;
  for (int pc = 0; pc < ncode; pc++) {
    const sim_inst *in = &run->m->code[pc];
    if (in->op != SIM_OP_LD || in->space == SIM_SP_SHARED || in->space == SIM_SP_LOCAL) continue;
    double sect = 0;
    for (int w = 0; w < nw; w++) sect += (double)wks[w].ic[pc].sect;
    double waited = 0, req = 0;
    uint64_t spread_units = 0;
    for (int w = 0; w < nw; w++) {
      waited += wks[w].prof.stall_pc ? wks[w].prof.stall_pc[pc] : 0;
      spread_units += wks[w].prof.spread_pc ? wks[w].prof.spread_pc[pc] : 0;
      req += (double)wks[w].ic[pc].req;
    }
    double spread = (double)spread_units / SIM_SPREAD_ONE;
    wsum += waited;
    /* a request waits for the slowest of its places (sim_trace.c): h - 1 is how far the mean
     * harmonic number of their counts is past one place's (sim_model.c prices it) */
    double more = req > 0 && spread > req ? spread / req - 1 : 0;
    if (!pcs || pcs[pc].load <= 0) { /* no line drawn: a few resident lines, L1 hits */
      w1 += waited;
      continue;
    }
    double load = (double)pcs[pc].load, hits = (double)pcs[pc].l1_hit;
    double miss = 1 - hits / load, to_l2 = load - hits;
    /* DRAM sectors per sector sent to L2: up to 2, a missing sector's pair coming along */
    double dram_per = to_l2 > 0 ? (double)pcs[pc].dram / to_l2 : 0;
    double from_dram = dram_per < 1 ? dram_per : 1; /* the share of waits that were DRAM's */
    l2_loads += sect * miss;
    dram_loads += sect * miss * dram_per;
    w1 += waited * (1 - miss);
    w2 += waited * miss * (1 - from_dram);
    w3 += waited * miss * from_dram;
    w2_more += waited * miss * (1 - from_dram) * more;
    w3_more += waited * miss * from_dram * more;
  }
  p->wait_l1 = wsum > 0 ? w1 / wsum : 0;
  p->wait_l2 = wsum > 0 ? w2 / wsum : 1;
  p->wait_dram = wsum > 0 ? w3 / wsum : 0;
  p->wait_l2_more = wsum > 0 ? w2_more / wsum : 0;
  p->wait_dram_more = wsum > 0 ? w3_more / wsum : 0;
  free(pcs);
  p->l1_hit_rate = p->ld_sectors > 0 ? 1 - l2_loads / p->ld_sectors : 0;
  p->l2_hit_rate = l2_loads > 0 && dram_loads < l2_loads ? 1 - dram_loads / l2_loads
                  : l2_loads > 0 ? 0 : 1;
  double atom_misses = (double)rc.dram_read - (double)rc.load_dram - (double)rc.store_dram;
  double atom_dram = rc.atom > 0 ? p->atom_sectors * atom_misses / (double)rc.atom : 0;
  if (atom_dram < 0) atom_dram = 0;
  double stores = (double)rc.write - (double)rc.atom;
  double store_dram = stores > 0 ? p->st_sectors * (double)rc.store_dram / stores : 0;
  p->l2_sectors = l2_loads + p->atom_sectors + p->st_sectors;
  p->dram_read_sectors = dram_loads + atom_dram + store_dram;
  p->dram_write_sectors =
      rc.write > 0 ? (p->st_sectors + p->atom_sectors) * (double)rc.dram_write / (double)rc.write
                   : 0;
}
