/* sim_model.c: the timing model. From what the simulator counted in one launch (sim_profile) and
 * the modelled device's parameters (sim_perf, fitted on the GPU), the time an H200 would take,
 * the limit that binds it and one sentence on why; and the time of a copy.
 *
 * Stance: each resource the launch uses gives a time it cannot beat (a roofline per resource):
 * DRAM and L2 bandwidth, each SM's pipes and issue slots, shared-memory wavefronts, L1 lines,
 * atomics on one address, block dispatch, and the latency of the busiest SM's blocks run as many
 * at a time as fit (occupancy), wave after wave, which is where too few warps and the tail of
 * the last wave show. Resources overlap on a GPU, so the launch takes about the largest of these,
 * plus a little where two are close: the terms are combined by a p-norm (p = 4) rather than a
 * plain max, which would call a kernel that is both bandwidth- and latency-bound too fast. The
 * alternative of a cycle-level simulation (Accel-Sim) is far more exact and orders of magnitude
 * slower than the interpreter; this model costs nothing measurable after the launch. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"

#define COMBINE_P 4.0 /* the p of the p-norm that combines the terms */

static const struct {
  const char *key, *text;
} LIMITS[SIM_LIM_COUNT] = {
    [SIM_LIM_LAUNCH] = {"launch", "launch overhead"},
    [SIM_LIM_BLOCKS] = {"blocks", "block scheduling (many small blocks)"},
    [SIM_LIM_TAIL] = {"tail", "the tail of the last wave"},
    [SIM_LIM_LATENCY] = {"latency", "memory latency with too few warps in flight"},
    [SIM_LIM_ISSUE] = {"issue", "instruction issue"},
    [SIM_LIM_FP32] = {"fp32", "FP32 throughput"},
    [SIM_LIM_FP64] = {"fp64", "FP64 throughput"},
    [SIM_LIM_SFU] = {"sfu", "special-function throughput"},
    [SIM_LIM_INT] = {"int", "integer multiply throughput"},
    [SIM_LIM_SHARED] = {"shared", "shared-memory bandwidth"},
    [SIM_LIM_L1] = {"l1", "L1 throughput (uncoalesced loads)"},
    [SIM_LIM_L2] = {"l2", "L2 bandwidth"},
    [SIM_LIM_DRAM] = {"dram", "DRAM bandwidth"},
    [SIM_LIM_ATOMIC] = {"atomic", "atomic contention in L2"},
};

const char *sim_limit_key(int limit) {
  return limit >= 0 && limit < SIM_LIM_COUNT ? LIMITS[limit].key : "?";
}
const char *sim_limit_text(int limit) {
  return limit >= 0 && limit < SIM_LIM_COUNT ? LIMITS[limit].text : "?";
}

int sim_occupancy(const sim_device_desc *d, int threads, int regs, size_t shared,
                  const char **limit) {
  int warps = (threads + d->warp_size - 1) / d->warp_size;
  if (warps < 1) warps = 1;
  if (regs <= 0) regs = 32;
  int by_threads = d->max_threads_per_sm / (warps * d->warp_size);
  int reg_per_warp = (regs * d->warp_size + 255) / 256 * 256;
  int by_regs = (d->regs_per_sm / 4 / reg_per_warp) * 4 / warps; /* four partitions of the file */
  size_t per_block = (shared + 1024 + 127) / 128 * 128; /* 1 KiB reserved per block on sm_90 */
  int by_shared = (int)(d->shared_per_sm / per_block);
  int n = d->max_blocks_per_sm;
  const char *why = "blocks per SM";
  if (by_threads < n) {
    n = by_threads;
    why = "threads per SM";
  }
  if (by_regs < n) {
    n = by_regs;
    why = "registers";
  }
  if (by_shared < n) {
    n = by_shared;
    why = "shared memory";
  }
  if (limit) *limit = why;
  return n;
}

/* The pieces of the model, kept for the explanation. */
typedef struct model_state {
  double nblocks, warps_per_block, bps, nsm_used, per_sm, rounds, rounds_exact, clock_mhz;
  double block_cycles, lat_eff, rho;
  double shared;                   /* bytes of shared memory per block */
  double spill_l1_wf, spill_l2_bytes; /* register spills' local-memory traffic, launch-wide */
} model_state;

static double combine(const double *t, int n) {
  double s = 0, m = 0;
  for (int i = 0; i < n; i++)
    if (t[i] > m) m = t[i];
  if (m <= 0) return 0;
  for (int i = 0; i < n; i++) s += pow(t[i] / m, COMBINE_P);
  return m * pow(s, 1 / COMBINE_P);
}

/* The load-to-use latency the waits for global loads see on average: each load instruction's
 * waits split by where its data came from (replayed hit rates), with DRAM's queueing delay
 * growing as its bandwidth fills (rho, the share in use): an M/M/1-like rise. A request
 * reading n unrelated places waits for the slowest: with latencies spread exponentially by s,
 * (1 + s H_n) / (1 + s) times one's, which is 1 + s (H_n - 1) / (1 + s). */
static double load_latency(const sim_perf *P, const sim_profile *p, double rho) {
  double dram = P->lat_dram * (1 + P->queue * rho / (1 - rho));
  double l2_share = p->wait_l2 + p->wait_l2_more * P->spread_l2 / (1 + P->spread_l2);
  double dram_share = p->wait_dram + p->wait_dram_more * P->spread_dram / (1 + P->spread_dram);
  return p->wait_l1 * P->lat_l1 + l2_share * P->lat_l2 + dram_share * dram;
}

/* A block holds its slot until its slowest warp is done. Load latencies vary (queues, DRAM
 * pages), so with W warps the slowest waits longer than the average one: for an exponential
 * spread of relative size `drain`, the expected maximum of W waits is (1 + drain * H_W) / (1 +
 * drain) times the mean, H_W the W-th harmonic number. This is why blocks of 1024 threads
 * stream slower than blocks of 256 at the same occupancy. */
static double slowest_of(double warps, double drain) {
  double h = 0;
  for (int i = 1; i <= (int)warps; i++) h += 1.0 / i;
  return (1 + drain * h) / (1 + drain);
}

static void sm_terms(const sim_device_desc *d, const sim_profile *p, model_state *s, double *t) {
  const sim_perf *P = &d->perf;
  /* a launch-wide count to the busiest SM's µs at one per cycle */
  double per_sm_cycles = s->per_sm / s->nblocks / s->clock_mhz;
  double all = 0;
  for (int c = 0; c < SIM_CLS_COUNT; c++) all += p->cls[c];
  t[SIM_LIM_ISSUE] = all * per_sm_cycles / P->ipc_issue;
  t[SIM_LIM_FP32] = p->cls[SIM_CLS_FP32] * per_sm_cycles / P->ipc_fp32;
  t[SIM_LIM_FP64] = p->cls[SIM_CLS_FP64] * per_sm_cycles / P->ipc_fp64;
  t[SIM_LIM_SFU] = p->cls[SIM_CLS_SFU] * per_sm_cycles / P->ipc_sfu;
  t[SIM_LIM_INT] =
      (p->cls[SIM_CLS_INT] / P->ipc_int + p->cls[SIM_CLS_ALU] / P->ipc_alu) * per_sm_cycles;
  t[SIM_LIM_SHARED] = p->shared_wavefronts * per_sm_cycles / P->shared_wf_cycle;
  t[SIM_LIM_L1] = (p->l1_wavefronts + p->st_lines + p->cls[SIM_CLS_LOCAL] + s->spill_l1_wf) *
                  per_sm_cycles / P->l1_wf_cycle;
  /* Latency: the busiest SM runs its blocks bps at a time, wave after wave; each takes its
   * slowest warp's time (global-load waits rescaled from the latency charged during the run to
   * the one the replayed hit rates and DRAM's load give), then retires: its stores reach L2.
   * Handing its slot to the next block costs more time (turnover, per block and per warp), paid
   * only between waves: a launch of one wave never pays it. */
  s->lat_eff = load_latency(P, p, s->rho);
  double mem = p->lat_ref > 0 ? p->block_mem * s->lat_eff / p->lat_ref : p->block_mem;
  mem *= slowest_of(s->warps_per_block, P->drain);
  double retire = p->st_lines > 0 ? P->lat_l2 : 0;
  double turnover = P->block_cycles + s->warps_per_block * P->warp_cycles;
  /* a warp's instructions wait for their arithmetic sources too, not only for loads */
  double issue = p->block_issue * (1 + (p->dep_stall_ratio > -0.5 ? p->dep_stall_ratio : -0.5));
  s->block_cycles = (issue + mem + p->block_other) / s->nblocks + retire;
  /* The first wave ramps up: an SM's first blocks start one dispatch apart. */
  double resident = s->per_sm < s->bps ? s->per_sm : s->bps;
  double ramp =
      (resident - 1) * (P->block_ns + s->warps_per_block * P->warp_ns) * d->sm_count * P->clock_ghz;
  double cycles = s->rounds * s->block_cycles + (s->rounds - 1) * turnover + ramp;
  t[SIM_LIM_LATENCY] = cycles / s->clock_mhz;
}

static void chip_terms(const sim_device_desc *d, const sim_profile *p, const model_state *s,
                       double *t) {
  const sim_perf *P = &d->perf;
  t[SIM_LIM_DRAM] = (p->dram_read_sectors + p->dram_write_sectors) * 32 / (P->dram_gbs * 1e3);
  /* L2 moves sectors, and serves each request's lines one by one: partial lines cost a whole
   * line's turn (the line rate is the sector rate of full lines). */
  double lines = p->l1_wavefronts * (1 - p->l1_hit_rate) + p->st_lines;
  double by_sectors = p->l2_sectors * 32 / (P->l2_gbs * 1e3),
         by_lines = lines * 128 / (P->l2_gbs * 1e3);
  t[SIM_LIM_L2] = by_sectors > by_lines ? by_sectors : by_lines;
  t[SIM_LIM_L2] += s->spill_l2_bytes / (P->l2_gbs * 1e3);
  double rate = p->atom_ops_l2 / (P->atom_gops * 1e3),
         spread = p->atom_slice_sum_ns / P->atom_slices / 1e3;
  double chain = p->atom_chain_ns / 1e3;
  t[SIM_LIM_ATOMIC] = rate > spread ? rate : spread;
  if (chain > t[SIM_LIM_ATOMIC]) t[SIM_LIM_ATOMIC] = chain;
  t[SIM_LIM_BLOCKS] = s->nblocks * (P->block_ns + s->warps_per_block * P->warp_ns) / 1e3;
}

/* "312,501": a whole number with thousands separators. */
static const char *count(double v, char *buf, size_t len) {
  char digits[32];
  snprintf(digits, sizeof digits, "%.0f", v < 0 ? 0 : v);
  size_t n = strlen(digits), k = 0;
  for (size_t i = 0; i < n && k + 2 < len; i++) {
    if (i > 0 && (n - i) % 3 == 0) buf[k++] = ',';
    buf[k++] = digits[i];
  }
  buf[k] = '\0';
  return buf;
}

/* "190 µs", "1.25 ms": three significant figures, as the Lua side prints times. */
static const char *duration(double us, char *buf, size_t len) {
  if (us >= 1000)
    snprintf(buf, len, "%.3g ms", us / 1000);
  else
    snprintf(buf, len, "%.3g \xc2\xb5s", us);
  return buf;
}

/* r->why for the limits the launch's shape sets: the launch's own cost, block dispatch, the
 * last wave, latency. 0 when r->limit is none of them. */
static int explain_shape(const model_state *s, sim_model_result *r) {
  char *w = r->why, a[32], b[32];
  size_t n = sizeof r->why;
  double us = r->term_us[r->limit], busy = r->time_us - r->launch_us;
  switch (r->limit) {
    case SIM_LIM_LAUNCH:
      snprintf(w, n, "the kernel's own work (%s) is shorter than the %s every launch costs",
               duration(busy, a, sizeof a), duration(r->launch_us, b, sizeof b));
      break;
    case SIM_LIM_BLOCKS:
      /* Bigger blocks are the cure only while they are small: past 8 warps a bigger block costs
       * occupancy and a longer tail (a sweep shows 256 threads best for such kernels), so the
       * advice becomes more work per thread, which needs fewer blocks of the same size. */
      snprintf(w, n,
               "%s blocks of %.0f warp%s each: dispatching them takes %s, longer than their work; "
               "%s",
               count(s->nblocks, a, sizeof a), s->warps_per_block,
               s->warps_per_block == 1 ? "" : "s", duration(us, b, sizeof b),
               s->warps_per_block < 8 ? "use bigger blocks"
                                      : "give each thread more elements (a grid-stride loop over "
                                        "fewer blocks)");
      break;
    case SIM_LIM_TAIL:
      snprintf(w, n,
               "%.2f waves of %.0f block%s per SM: the last wave is %.0f%% full, so most of the "
               "GPU waits for it",
               r->waves, s->bps, s->bps == 1 ? "" : "s",
               100 * (r->waves - floor(r->waves) > 0 ? r->waves - floor(r->waves) : 1));
      break;
    case SIM_LIM_LATENCY:
      snprintf(w, n,
               "%.0f warps per SM (%.0f%% occupancy) wait about %.0f cycles per load and cannot "
               "keep enough bytes in flight: %.0f GB/s of %.0f",
               r->warps_per_sm, 100 * r->occupancy, s->lat_eff, r->achieved_gbs, r->peak_gbs);
      break;
    default: return 0;
  }
  return 1;
}

/* r->why: the limit r->limit names, in words, with the numbers that make it the limit. */
static void explain(const sim_device_desc *d, const model_state *s, const sim_profile *p,
                    sim_model_result *r) {
  if (explain_shape(s, r)) return;
  double spill_us = r->limit == SIM_LIM_L2   ? s->spill_l2_bytes / (d->perf.l2_gbs * 1e3)
                    : r->limit == SIM_LIM_L1 ? r->term_us[SIM_LIM_L1] : 0;
  if (s->spill_l1_wf > 0 && spill_us > 0.5 * r->term_us[r->limit]) {
    char a[32];
    snprintf(r->why, sizeof r->why,
             "register spills: ptxas keeps %.0f bytes per thread in local memory, and the "
             "resident threads' frames do not all fit in L1, so reloading them takes %s; fewer "
             "blocks per SM in __launch_bounds__ leave more registers",
             p->local_frame_bytes, duration(spill_us, a, sizeof a));
    return;
  }
  char *w = r->why, a[32], b[32], c[32];
  size_t n = sizeof r->why;
  double us = r->term_us[r->limit], busy = r->time_us - r->launch_us;
  switch (r->limit) {
    case SIM_LIM_DRAM:
    case SIM_LIM_L2: {
      double bytes = r->limit == SIM_LIM_DRAM ? r->dram_bytes : r->l2_bytes;
      double peak = r->limit == SIM_LIM_DRAM ? d->perf.dram_gbs : d->perf.l2_gbs;
      snprintf(w, n, "%.1f MB moved at %.0f GB/s (%.0f%% of the %.0f GB/s peak)", bytes / 1e6,
               bytes / busy / 1e3, 100 * bytes / busy / 1e3 / peak, peak);
      break;
    }
    case SIM_LIM_ATOMIC:
      snprintf(w, n,
               "atomics queue in L2: each slice takes one request at a time, a pass per 32-byte "
               "sector, and updates of one address wait for each other; the busiest queue "
               "alone takes %s",
               duration(us, a, sizeof a));
      break;
    case SIM_LIM_SHARED:
      snprintf(w, n,
               "shared-memory passes alone take %s of the %s; a bank conflict is one more pass",
               duration(us, a, sizeof a), duration(r->time_us, b, sizeof b));
      break;
    case SIM_LIM_L1:
      snprintf(
          w, n,
          "loads that touch many 128-byte lines per warp keep the L1 busy a cycle per line: %s",
          duration(us, a, sizeof a));
      break;
    default:
      snprintf(w, n, "%s alone takes %s of the %s; %s GFLOP/s of %.0f", LIMITS[r->limit].text,
               duration(us, a, sizeof a), duration(r->time_us, b, sizeof b),
               count(r->achieved_gflops, c, sizeof c), r->peak_gflops);
      break;
  }
}

/* The launch's shape in s: blocks, warps, resident blocks per SM, waves. */
static void launch_shape(const sim_device_desc *d, sim_dim3 grid, sim_dim3 block, size_t shared,
                         const sim_profile *p, model_state *s) {
  double threads = (double)block.x * block.y * block.z;
  s->nblocks = (double)grid.x * grid.y * grid.z;
  s->warps_per_block = ceil(threads / d->warp_size);
  s->bps = sim_occupancy(d, (int)threads, p->regs_per_thread, shared, NULL);
  if (s->bps < 1) s->bps = 1;
  s->nsm_used = s->nblocks < d->sm_count ? s->nblocks : d->sm_count;
  s->per_sm = ceil(s->nblocks / d->sm_count);
  s->rounds = ceil(s->per_sm / s->bps);
  s->rounds_exact = s->nblocks / d->sm_count / s->bps;
  s->clock_mhz = d->perf.clock_ghz * 1e3;
  s->shared = (double)shared;
}

/* Register spills: the local-memory traffic ptxas's spill code makes, which the PTX the
 * simulator runs does not show. A warp's spill access is one coalesced 128-byte wavefront in L1
 * (local memory is interleaved by thread). It stays in L1 while the resident threads' stack
 * frames fit in the part of L1 that keeps them (l1_local_bytes, less the blocks' shared memory);
 * the share that does not fit goes to L2 and back (a miss fills a line, an eviction writes a
 * dirty one). */
static void spill_traffic(const sim_device_desc *d, const sim_profile *p, model_state *s) {
  double threads = s->nblocks * s->warps_per_block * d->warp_size;
  double bytes = p->spill_bytes_thread * threads;
  if (bytes <= 0) return;
  s->spill_l1_wf = bytes / 128;
  double resident = s->bps * s->warps_per_block * d->warp_size;
  double footprint = resident * p->local_frame_bytes;
  double room = d->perf.l1_local_bytes - s->bps * (s->shared + 1024);
  double hit = footprint <= room ? 1 : (room > 0 ? room / footprint : 0);
  s->spill_l2_bytes = 2 * bytes * (1 - hit);
}

/* The figures r reports besides the time and the limit: bytes, flops, occupancy, rates. */
static void launch_figures(const sim_device_desc *d, const sim_profile *p, const model_state *s,
                           sim_model_result *r) {
  const sim_perf *P = &d->perf;
  r->dram_bytes = (p->dram_read_sectors + p->dram_write_sectors) * 32;
  r->l2_bytes = p->l2_sectors * 32;
  r->flops = p->thread_flops32 + p->thread_flops64;
  r->blocks_per_sm = s->bps;
  r->warps_per_sm = s->bps * s->warps_per_block;
  if (r->warps_per_sm > d->max_threads_per_sm / d->warp_size)
    r->warps_per_sm = d->max_threads_per_sm / d->warp_size;
  if (s->nblocks < s->bps * d->sm_count)
    r->warps_per_sm = ceil(s->nblocks / d->sm_count) * s->warps_per_block;
  r->occupancy = r->warps_per_sm / (d->max_threads_per_sm / d->warp_size);
  r->waves = s->rounds_exact;
  r->l1_hit_rate = p->l1_hit_rate;
  r->l2_hit_rate = p->l2_hit_rate;
  double busy = r->time_us - r->launch_us > 0 ? r->time_us - r->launch_us : r->time_us;
  r->achieved_gbs = r->dram_bytes / busy / 1e3;
  r->peak_gbs = P->dram_gbs;
  int f64 = p->thread_flops64 > p->thread_flops32;
  r->achieved_gflops = r->flops / busy / 1e3;
  r->peak_gflops =
      d->sm_count * (f64 ? P->ipc_fp64 : P->ipc_fp32) * d->warp_size * 2 * P->clock_ghz;
}

int sim_model_launch(const sim_device_desc *d, sim_dim3 grid, sim_dim3 block, size_t shared,
                     const sim_profile *p, sim_model_result *r) {
  memset(r, 0, sizeof *r);
  if (!p || !p->valid) return -1;
  const sim_perf *P = &d->perf;
  model_state s = {0};
  launch_shape(d, grid, block, shared, p, &s);
  spill_traffic(d, p, &s);
  /* DRAM's queueing delay depends on how busy the launch keeps it, which depends on the time:
   * a fixed point, found by damped iteration (it settles in a few steps). */
  double kernel = 0;
  for (int it = 0; it < 30; it++) {
    memset(r->term_us, 0, sizeof r->term_us);
    sm_terms(d, p, &s, r->term_us);
    chip_terms(d, p, &s, r->term_us);
    kernel = combine(r->term_us, SIM_LIM_COUNT);
    double rho = kernel > 0 ? r->term_us[SIM_LIM_DRAM] / kernel : 0;
    if (rho > 0.9) rho = 0.9;
    if (fabs(rho - s.rho) < 1e-4) break;
    s.rho = 0.5 * (s.rho + rho);
  }
  r->launch_us = P->launch_us;
  r->term_us[SIM_LIM_LAUNCH] = P->launch_us;
  r->time_us = P->launch_us + kernel;
  r->limit = SIM_LIM_LAUNCH;
  for (int i = 0; i < SIM_LIM_COUNT; i++)
    if (r->term_us[i] > r->term_us[r->limit]) r->limit = i;
  /* The tail: an SM-level limit inflated by a last wave that is mostly empty. */
  int sm_level =
      r->limit == SIM_LIM_LATENCY || (r->limit >= SIM_LIM_ISSUE && r->limit <= SIM_LIM_L1);
  if (sm_level) {
    r->term_us[SIM_LIM_TAIL] =
        r->term_us[r->limit] * (1 - (s.rounds_exact < s.rounds ? s.rounds_exact / s.rounds : 1));
    if (s.rounds <= 4 && r->term_us[SIM_LIM_TAIL] > 0.3 * r->term_us[r->limit])
      r->limit = SIM_LIM_TAIL;
  }
  launch_figures(d, p, &s, r);
  explain(d, &s, p, r);
  return 0;
}

double sim_model_copy_us(const sim_device_desc *d, int kind, size_t bytes, int pinned) {
  const sim_perf *P = &d->perf;
  double gbs;
  switch (kind) {
    case SIM_COPY_H2D: gbs = pinned ? P->h2d_pinned_gbs : P->h2d_pageable_gbs; break;
    case SIM_COPY_D2H: gbs = pinned ? P->d2h_pinned_gbs : P->d2h_pageable_gbs; break;
    case SIM_COPY_D2D:
      return P->copy_us + 2.0 * (double)bytes / (P->d2d_gbs * 1e3);     /* read + write */
    default: return P->launch_us + (double)bytes / (P->dram_gbs * 1e3); /* memset: writes */
  }
  return P->copy_us + (double)bytes / (gbs * 1e3);
}
