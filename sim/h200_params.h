/* h200_params.h: the timing model's parameters for the NVIDIA H200 (sim_perf in sim.h).
 * Written by bench/model/fit.lua from calibration.lua:
 * measured 2026-12-01 on NVIDIA H200, 132 SMs, driver 13.0.
 * Do not edit by hand: run make model-fit after recalibrating (see bench/MODEL.md). */
#ifndef CUDALAB_H200_PARAMS_H
#define CUDALAB_H200_PARAMS_H

#define SIM_H200_PERF { \
  .atom_addr_ns = 0.0740256, /* int atomicAdd, the 32 addresses of one line from data */ \
  .atom_gops = 337.109, /* atomicAdd on 10M distinct addresses */ \
  .atom_same_int_ns = 0.75264, /* int atomicAdd, every thread on one address */ \
  .atom_same_ns = 1.75965, /* float atomicAdd, every thread on one address */ \
  .atom_slices = 93.3838, /* one address for all, against one per warp */ \
  .block_cycles = 0, /* fitted: copy_blocks and copy_grids */ \
  .block_ns = 0.602895, /* empty blocks of 256, slope of time against blocks */ \
  .clock_ghz = 1.98, /* the SM clock under load */ \
  .copy_us = 8.96, /* 4 KiB pinned copy */ \
  .d2d_gbs = 4233.2, /* 1 GiB device-to-device copy, read + write */ \
  .d2h_pageable_gbs = 16.4389, /* 64 MiB copy */ \
  .d2h_pinned_gbs = 55.2227, /* 64 MiB copy */ \
  .drain = 0.1, /* fitted: copy_blocks */ \
  .dram_gbs = 4241.09, /* 1 GiB float4 copy, read + write */ \
  .h2d_pageable_gbs = 15.1866, /* 64 MiB copy */ \
  .h2d_pinned_gbs = 55.3353, /* 64 MiB copy */ \
  .ipc_alu = 2.92022, /* integer xor, shift and add */ \
  .ipc_fp32 = 3.88047, /* independent fmaf chains */ \
  .ipc_fp64 = 1.98391, /* independent fma chains on doubles */ \
  .ipc_int = 1.98316, /* integer multiply-add chains */ \
  .ipc_issue = 4, /* architecture: one warp instruction per cycle per scheduler, four per SM */ \
  .ipc_sfu = 0.493675, /* __sinf */ \
  .l1_bytes = 262144, /* architecture: 256 KiB of L1 and shared memory per SM */ \
  .l1_wf_cycle = 0.993142, /* L1-resident loads, a sector per lane (4 per line) */ \
  .l2_bytes = 6.08072e+07, /* working set where read bandwidth falls halfway to DRAM's */ \
  .l2_gbs = 7989.15, /* repeated reads of a 4 MiB set */ \
  .lat_dram = 674.094, /* pointer chase in 1 GiB */ \
  .lat_l1 = 40.0844, /* pointer chase in 16 KiB */ \
  .lat_l2 = 288.04, /* pointer chase in 4 MiB */ \
  .lat_shared = 30, /* architecture (not measured) */ \
  .lat_fp32 = 4, /* dependent FFMA chain, one warp per SM (effects.lua) */ \
  .lat_fp64 = 8, /* dependent DFMA chain, one warp per SM (effects.lua) */ \
  .lat_int = 4, /* dependent IMAD chain (effects.lua) */ \
  .lat_alu = 4, /* integer add, logic, compare: the loop counter's chain (effects.lua) */ \
  .lat_sfu = 16, /* MUFU, as published for sm_90 microbenchmarks (not measured here) */ \
  .l1_local_bytes = 163840, /* spills' stack frames that stay in L1 (effects.lua, minBlocks 6, 8) */ \
  .launch_us = 5.376, /* empty kernel, events */ \
  .queue = 0.2, /* fitted: copy_grids */ \
  .shared_wf_cycle = 0.990515, /* conflict-free shared loads */ \
  .warp_cycles = 15, /* fitted: copy_blocks */ \
  .warp_ns = 0.00247284, /* blocks of 1024 against 32 */ \
}

#endif
