/* h200_params.h: the timing model's parameters for the NVIDIA H200 (sim_perf in sim.h).
 * Written by bench/model/fit.lua from calibration.lua: measured 2026-12-01 on NVIDIA H200, 132 SMs, driver 13.0.
 * Do not edit by hand: run make model-fit after recalibrating (see bench/MODEL.md). */
#ifndef CUDALAB_H200_PARAMS_H
#define CUDALAB_H200_PARAMS_H

#define SIM_H200_PERF { \
  .atom_addr_ns = 0.0739792, /* int atomicAdd, the 32 addresses of one line from data */ \
  .atom_gops = 337.655, /* atomicAdd on 10M distinct addresses */ \
  .atom_same_int_ns = 0.753408, /* int atomicAdd, every thread on one address */ \
  .atom_same_ns = 1.75694, /* float atomicAdd, every thread on one address */ \
  .atom_slices = 94.9, /* one address for all, against one per warp */ \
  .block_cycles = 0, /* fitted: copy_blocks and copy_grids */ \
  .block_ns = 0.604353, /* empty blocks of 256, slope of time against blocks */ \
  .clock_ghz = 1.98, /* the SM clock under load */ \
  .copy_us = 11.056, /* 4 KiB pinned copy */ \
  .d2d_gbs = 4183.84, /* 1 GiB device-to-device copy, read + write */ \
  .d2h_pageable_gbs = 13.4236, /* 64 MiB copy */ \
  .d2h_pinned_gbs = 54.8384, /* 64 MiB copy */ \
  .drain = 0.1, /* fitted: copy_blocks */ \
  .dram_gbs = 4233.33, /* 1 GiB float4 copy, read + write */ \
  .h2d_pageable_gbs = 6.76199, /* 64 MiB copy */ \
  .h2d_pinned_gbs = 55.073, /* 64 MiB copy */ \
  .ipc_alu = 2.91675, /* integer xor, shift and add */ \
  .ipc_fp32 = 3.86383, /* independent fmaf chains */ \
  .ipc_fp64 = 1.97247, /* independent fma chains on doubles */ \
  .ipc_int = 1.98337, /* integer multiply-add chains */ \
  .ipc_issue = 4, /* architecture: one warp instruction per cycle per scheduler, four per SM */ \
  .ipc_sfu = 0.492275, /* __sinf */ \
  .l1_bytes = 262144, /* architecture: 256 KiB of L1 and shared memory per SM */ \
  .l1_wf_cycle = 0.991535, /* L1-resident loads, a sector per lane (4 per line) */ \
  .l2_bytes = 6.13869e+07, /* working set where read bandwidth falls halfway to DRAM's */ \
  .l2_gbs = 7868.32, /* repeated reads of a 4 MiB set */ \
  .lat_dram = 674.529, /* pointer chase in 1 GiB */ \
  .lat_l1 = 40.2327, /* pointer chase in 16 KiB */ \
  .lat_l2 = 288.584, /* pointer chase in 4 MiB */ \
  .lat_shared = 30, /* architecture (not measured) */ \
  .launch_us = 6.864, /* empty kernel, events */ \
  .queue = 0.2, /* fitted: copy_grids */ \
  .shared_wf_cycle = 0.98918, /* conflict-free shared loads */ \
  .warp_cycles = 15, /* fitted: copy_blocks */ \
  .warp_ns = 0.00260977, /* blocks of 1024 against 32 */ \
}

#endif
