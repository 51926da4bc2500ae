/* sim_order.c: the order in which a launch hands out its blocks (sim_launch_opts.block_order):
 * forward, reverse, or a shuffle that a seed decides. A GPU promises no order, and a kernel that
 * depends on one (a block clearing an accumulator the others add to) passes in the simulator's
 * fixed order and fails on a GPU; other orders let a check find it.
 *
 * Stance: the shuffle is a bijection computed on demand, never a table, because a grid may hold
 * 2^63 blocks. It is a four-round Feistel network over the smallest domain of an even number of
 * bits that holds every block index, with cycle-walking (an index past the last block is sent
 * through the network again until it lands inside): at most four times the blocks, so a few
 * rounds per block on average. A table of nblocks indices, shuffled by Fisher-Yates, was turned
 * down: memory proportional to the grid for an option meant to be left on in checks. The
 * network is not a uniformly random permutation, which finding an order-dependent kernel does
 * not need; it is the same for a seed on every run and machine. */
#include <stdio.h>

#include "sim_run.h"

#define ROUNDS 4

/* SplitMix64's finaliser: every bit of x reaches every bit of the result. */
static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int sim_order_init(sim_run *run) {
  const sim_launch_opts *o = run->opts;
  int order = o ? o->block_order : SIM_ORDER_FORWARD;
  if (order < SIM_ORDER_FORWARD || order > SIM_ORDER_SHUFFLE) {
    sim_errf(run->err, run->errlen, "sim_launch: block_order %d is not one of SIM_ORDER_FORWARD, "
             "SIM_ORDER_REVERSE, SIM_ORDER_SHUFFLE", order);
    return -1;
  }
  run->order = order;
  if (order != SIM_ORDER_SHUFFLE) return 0;
  int bits = 2;
  while (bits < 64 && (1ull << bits) < (uint64_t)run->nblocks) bits++;
  run->order_half = (bits + 1) / 2;
  uint64_t s = o->order_seed;
  for (int r = 0; r < ROUNDS; r++) run->order_key[r] = mix(s += 0x9e3779b97f4a7c15ull);
  return 0;
}

/* One pass through the network, forward or backward, over the domain of 2 * half bits. */
static uint64_t feistel(const sim_run *run, uint64_t x, int inverse) {
  int h = run->order_half;
  uint64_t mask = h >= 64 ? ~0ull : (1ull << h) - 1;
  uint64_t l = x >> h & mask, r = x & mask;
  for (int k = 0; k < ROUNDS; k++) {
    if (!inverse) {
      uint64_t t = l ^ (mix(r ^ run->order_key[k]) & mask);
      l = r;
      r = t;
    } else {
      uint64_t t = r ^ (mix(l ^ run->order_key[ROUNDS - 1 - k]) & mask);
      r = l;
      l = t;
    }
  }
  return l << h | r;
}

/* Cycle-walking: the network permutes the whole domain, so following it from an index inside
 * [0, n) must come back inside; the first index it lands on there is the image. */
static long long walk(const sim_run *run, long long i, int inverse) {
  uint64_t x = (uint64_t)i, n = (uint64_t)run->nblocks;
  do x = feistel(run, x, inverse);
  while (x >= n);
  return (long long)x;
}

long long sim_order_block(const sim_run *run, long long i) {
  switch (run->order) {
  case SIM_ORDER_REVERSE: return run->nblocks - 1 - i;
  case SIM_ORDER_SHUFFLE: return walk(run, i, 0);
  default: return i;
  }
}

long long sim_order_rank(const sim_run *run, long long b) {
  switch (run->order) {
  case SIM_ORDER_REVERSE: return run->nblocks - 1 - b;
  case SIM_ORDER_SHUFFLE: return walk(run, b, 1);
  default: return b;
  }
}
