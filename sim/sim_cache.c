/* sim_cache.c: the L1 and L2 models of the timing model. The sampled trace of a launch, in the
 * GPU's order, goes through an L1 per SM (loads allocate; stores write through) and then one L2
 * (write-back: dirty sectors reach DRAM when their line is evicted). Both are LRU over 128-byte
 * lines that hold 32-byte sectors, which is how an NVIDIA GPU's caches are organised.
 *
 * Stance: only one line in sixteen is traced (sim_trace.c), so each cache holds a sixteenth of
 * its lines; LRU over a sampled set of lines behaves like the whole cache for the sampled lines,
 * which is the set-sampling argument of cache studies. The L2 is replayed twice and counted on
 * the second pass, so the figures are those of a launch that repeats (timing after warm-up); the
 * L1 starts empty on each pass, as a GPU invalidates it between kernels. */
#include <stdlib.h>
#include <string.h>

#include "sim_exec.h"

#define SAMPLE 16 /* must match sim_trace.c's TRACE_SAMPLE_SHIFT */

static int pop4(unsigned m) { return (int)((m & 1) + (m >> 1 & 1) + (m >> 2 & 1) + (m >> 3 & 1)); }

typedef struct lru {
  int cap, n, head, tail, nbucket; /* head: most recently used */
  uint64_t *key;
  uint8_t *valid, *dirty;          /* sector masks */
  int *prev, *next, *chain, *bucket;
} lru;

static int lru_init(lru *c, int cap) {
  memset(c, 0, sizeof *c);
  c->cap = cap < 1 ? 1 : cap;
  c->nbucket = 1;
  while (c->nbucket < 2 * c->cap) c->nbucket *= 2;
  c->key = malloc((size_t)c->cap * sizeof *c->key);
  c->valid = malloc((size_t)c->cap);
  c->dirty = malloc((size_t)c->cap);
  c->prev = malloc((size_t)c->cap * sizeof(int));
  c->next = malloc((size_t)c->cap * sizeof(int));
  c->chain = malloc((size_t)c->cap * sizeof(int));
  c->bucket = malloc((size_t)c->nbucket * sizeof(int));
  if (!c->key || !c->valid || !c->dirty || !c->prev || !c->next || !c->chain || !c->bucket) return -1;
  memset(c->bucket, -1, (size_t)c->nbucket * sizeof(int));
  c->head = c->tail = -1;
  return 0;
}

static void lru_free(lru *c) {
  free(c->key); free(c->valid); free(c->dirty); free(c->prev); free(c->next); free(c->chain); free(c->bucket);
}

static void lru_clear(lru *c) {
  memset(c->bucket, -1, (size_t)c->nbucket * sizeof(int));
  c->n = 0;
  c->head = c->tail = -1;
}

static int slot_of(const lru *c, uint64_t k) { return (int)((k * 0x9E3779B97F4A7C15ull) >> 32) & (c->nbucket - 1); }

static void unlink_node(lru *c, int i) {
  if (c->prev[i] >= 0) c->next[c->prev[i]] = c->next[i]; else c->head = c->next[i];
  if (c->next[i] >= 0) c->prev[c->next[i]] = c->prev[i]; else c->tail = c->prev[i];
}

static void push_front(lru *c, int i) {
  c->prev[i] = -1;
  c->next[i] = c->head;
  if (c->head >= 0) c->prev[c->head] = i;
  c->head = i;
  if (c->tail < 0) c->tail = i;
}

static int lru_find(const lru *c, uint64_t k) {
  for (int i = c->bucket[slot_of(c, k)]; i >= 0; i = c->chain[i])
    if (c->key[i] == k) return i;
  return -1;
}

/* Evicts the least recently used line; returns its dirty sector mask. */
static uint8_t lru_evict(lru *c, int *freed) {
  int i = c->tail;
  unlink_node(c, i);
  int *p = &c->bucket[slot_of(c, c->key[i])];
  while (*p != i) p = &c->chain[*p];
  *p = c->chain[i];
  *freed = i;
  return c->dirty[i];
}

/* Looks line k up, making it most recent. Inserts it when absent and `allocate`; then
 * *dirty_out gets the sectors a full cache had to write back. Returns the node or -1. */
static int lru_touch(lru *c, uint64_t k, int allocate, uint8_t *dirty_out) {
  *dirty_out = 0;
  int i = lru_find(c, k);
  if (i >= 0) {
    unlink_node(c, i);
    push_front(c, i);
    return i;
  }
  if (!allocate) return -1;
  if (c->n < c->cap) i = c->n++;
  else *dirty_out = lru_evict(c, &i);
  c->key[i] = k;
  c->valid[i] = c->dirty[i] = 0;
  int s = slot_of(c, k);
  c->chain[i] = c->bucket[s];
  c->bucket[s] = i;
  push_front(c, i);
  return i;
}

typedef struct replay_counts {
  double load, l1_hit, l2_load, l2_load_hit, atom, dram_read, write, dram_write;
} replay_counts;

/* Per load instruction, in the counted pass: sectors traced, L1 hits, and DRAM reads. */
typedef struct pc_counts { double load, l1_hit, dram; } pc_counts;

/* One pass over the trace. The warm-up pass (l1 NULL) only fills the L2: skipping the L1 there
 * changes the L2's recency order a little and halves the work. */
static void replay_pass(lru *l1, int nsm, lru *l2, const sim_trace_ent *e, size_t n, replay_counts *rc,
                        pc_counts *pcs) {
  for (int s = 0; l1 && s < nsm; s++) lru_clear(&l1[s]);
  for (size_t i = 0; i < n; i++) {
    uint8_t mask = e[i].mask, wb;
    int sectors = pop4(mask);
    if (!l1) {
    } else if (e[i].kind == SIM_TR_LOAD) {
      rc->load += sectors;
      lru *c = &l1[e[i].block % (uint32_t)nsm];
      int j = lru_touch(c, e[i].line, 1, &wb);
      uint8_t hit = c->valid[j] & mask;
      c->valid[j] |= mask;
      rc->l1_hit += pop4(hit);
      if (pcs) {
        pcs[e[i].pc].load += sectors;
        pcs[e[i].pc].l1_hit += pop4(hit);
      }
      mask &= (uint8_t)~hit;
      if (!mask) continue;
      rc->l2_load += pop4(mask);
    } else {
      rc->write += sectors;
      if (e[i].kind == SIM_TR_ATOM) rc->atom += sectors;
      lru *c = &l1[e[i].block % (uint32_t)nsm];
      int j = lru_find(c, e[i].line); /* write-through: an L1 copy stays current */
      if (j >= 0) c->valid[j] |= mask;
    }
    int j = lru_touch(l2, e[i].line, 1, &wb);
    rc->dram_write += pop4(wb);
    uint8_t hit = l2->valid[j] & mask;
    if (e[i].kind == SIM_TR_LOAD) rc->l2_load_hit += pop4(hit);
    if (e[i].kind != SIM_TR_STORE) rc->dram_read += pop4(mask & (uint8_t)~hit);
    if (pcs && e[i].kind == SIM_TR_LOAD) pcs[e[i].pc].dram += pop4(mask & (uint8_t)~hit);
    l2->valid[j] |= mask;
    if (e[i].kind != SIM_TR_LOAD) l2->dirty[j] |= mask;
  }
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

/* Fills p's hit rates and traffic past each cache from the trace and the exact counters.
 * Loads are rated per instruction: a table every warp reads is a few hot lines, which the
 * line sample draws or not, and a single rate for the launch would swing with that draw. An
 * instruction none of whose lines was drawn touched few lines, all resident: it counts as hits. */
void sim_cache_replay(const sim_run *run, const sim_worker *wks, int nw, sim_trace_ent *e, size_t n,
                      int blocks_per_sm, sim_profile *p) {
  const sim_device_desc *d = &run->dev->desc;
  int nsm = d->sm_count > 0 ? d->sm_count : 1;
  double shared = (double)run->shared_total * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  double l1_bytes = d->perf.l1_bytes - shared;
  if (l1_bytes < 16384) l1_bytes = 16384;
  replay_counts warm = {0}, rc = {0};
  struct sim_caches *c = n ? caches_for(run->dev, nsm, (int)(l1_bytes / 128 / SAMPLE), (int)(d->perf.l2_bytes / 128 / SAMPLE)) : NULL;
  int ncode = run->m->ncode;
  pc_counts *pcs = calloc((size_t)ncode + 1, sizeof *pcs);
  if (c) {
    replay_pass(NULL, nsm, &c->l2, e, n, &warm, NULL);
    replay_pass(c->l1, nsm, &c->l2, e, n, &rc, pcs);
  }
  /* Rates from the sample, applied to the exact counters; an untraced launch (no sampled line)
   * has no reuse to find and every sector of it is taken to be resident, as a tiny one is. */
  double l2_loads = 0, dram_loads = 0, w1 = 0, w2 = 0, w3 = 0;
  for (int pc = 0; pc < ncode; pc++) {
    const sim_inst *in = &run->m->code[pc];
    if (in->op != SIM_OP_LD || in->space == SIM_SP_SHARED || in->space == SIM_SP_LOCAL) continue;
    double sect = 0;
    for (int w = 0; w < nw; w++) sect += (double)wks[w].ic[pc].sect;
    double waited = 0;
    for (int w = 0; w < nw; w++) waited += wks[w].prof.stall_pc ? wks[w].prof.stall_pc[pc] : 0;
    if (!pcs || pcs[pc].load <= 0) { /* no line drawn: a few resident lines, L1 hits */
      w1 += waited;
      continue;
    }
    double miss = 1 - pcs[pc].l1_hit / pcs[pc].load, to_l2 = pcs[pc].load - pcs[pc].l1_hit;
    double dram_share = to_l2 > 0 ? pcs[pc].dram / to_l2 : 0;
    l2_loads += sect * miss;
    dram_loads += sect * miss * dram_share;
    w1 += waited * (1 - miss);
    w2 += waited * miss * (1 - dram_share);
    w3 += waited * miss * dram_share;
  }
  double wsum = w1 + w2 + w3;
  p->wait_l1 = wsum > 0 ? w1 / wsum : 0;
  p->wait_l2 = wsum > 0 ? w2 / wsum : 1;
  p->wait_dram = wsum > 0 ? w3 / wsum : 0;
  free(pcs);
  p->l1_hit_rate = p->ld_sectors > 0 ? 1 - l2_loads / p->ld_sectors : 0;
  p->l2_hit_rate = l2_loads > 0 ? 1 - dram_loads / l2_loads : 1;
  double atom_dram = rc.atom > 0 ? p->atom_sectors * (rc.dram_read - (rc.l2_load - rc.l2_load_hit)) / rc.atom : 0;
  if (atom_dram < 0) atom_dram = 0;
  p->l2_read_sectors = l2_loads + p->atom_sectors;
  p->l2_sectors = p->l2_read_sectors + p->st_sectors;
  p->dram_read_sectors = dram_loads + atom_dram;
  p->dram_write_sectors = rc.write > 0 ? (p->st_sectors + p->atom_sectors) * rc.dram_write / rc.write : 0;
}
