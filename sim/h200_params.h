/* h200_params.h: the timing model's parameters for the NVIDIA H200 (sim_perf in sim.h).
 * PROVISIONAL: datasheet-order values until bench/model/calibrate.lua has been run on the GPU and
 * bench/model/fit.lua has rewritten this file with the fitted values, their date and machine. */
#ifndef CUDALAB_H200_PARAMS_H
#define CUDALAB_H200_PARAMS_H

#define SIM_H200_PERF                                                                              \
  {                                                                                                \
    .clock_ghz = 1.98, .launch_us = 2.5, .block_ns = 0.62, .warp_ns = 0.0, .dram_gbs = 3800,      \
    .l2_gbs = 7000, .l2_bytes = 40e6, .l1_bytes = 262144, .lat_l1 = 40, .lat_l2 = 300,             \
    .lat_dram = 700, .lat_shared = 30, .ipc_issue = 4, .ipc_fp32 = 4, .ipc_fp64 = 2,               \
    .ipc_sfu = 0.5, .ipc_int = 2, .shared_wf_cycle = 1, .l1_wf_cycle = 1, .atom_gops = 60,          \
    .atom_same_ns = 0.5, .h2d_pageable_gbs = 6.9, .d2h_pageable_gbs = 10.9, .h2d_pinned_gbs = 55.3, \
    .d2h_pinned_gbs = 55.2, .d2d_gbs = 3321, .copy_us = 10,                                        \
  }

#endif
