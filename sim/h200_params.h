/* h200_params.h: the timing model's measured parameters for the NVIDIA H200, as X(name, value)
 * for each row of perf_params.def that fit.lua measures (the others keep their row's value).
 * Written by bench/model/fit.lua from calibration.lua:
 * measured 2026-12-03 on NVIDIA H200, 132 SMs, driver 13.0.
 * Do not edit by hand: run make model-fit after recalibrating (see bench/MODEL.md). */
#ifndef CUDALAB_H200_PARAMS_H
#define CUDALAB_H200_PARAMS_H

#define SIM_H200_PERF(X) \
  X(atom_gops, 337.109) /* atomicAdd on 10M distinct addresses */ \
  X(atom_partial_ns, 0.769831) /* int atomicAdd, 1 to 4 lanes in a sector of one line */ \
  X(atom_same_int_ns, 0.75264) /* int atomicAdd, every thread on one address */ \
  X(atom_same_ns, 1.75965) /* float atomicAdd, every thread on one address */ \
  X(atom_sector_ns, 0.61384) /* int atomicAdd, whole sectors of one line, 1 to 4 passes */ \
  X(atom_slices, 91.7423) /* one float address per warp, against one for all */ \
  X(block_cycles, 0) /* fitted: copy_blocks and copy_grids */ \
  X(block_ns, 0.602895) /* empty blocks of 256, slope of time against blocks */ \
  X(clock_ghz, 1.98) /* the SM clock under load */ \
  X(copy_us, 8.96) /* 4 KiB pinned copy */ \
  X(d2d_gbs, 4233.2) /* 1 GiB device-to-device copy, read + write */ \
  X(d2h_pageable_gbs, 16.4389) /* 64 MiB copy */ \
  X(d2h_pinned_gbs, 55.2227) /* 64 MiB copy */ \
  X(drain, 0.1) /* fitted: copy_blocks */ \
  X(dram_gbs, 4241.09) /* 1 GiB float4 copy, read + write */ \
  X(h2d_pageable_gbs, 15.1866) /* 64 MiB copy */ \
  X(h2d_pinned_gbs, 55.3353) /* 64 MiB copy */ \
  X(ipc_alu, 2.92022) /* integer xor, shift and add */ \
  X(ipc_fp32, 3.88047) /* independent fmaf chains */ \
  X(ipc_fp64, 1.98391) /* independent fma chains on doubles */ \
  X(ipc_int, 1.98316) /* integer multiply-add chains */ \
  X(ipc_sfu, 0.493675) /* __sinf */ \
  X(l1_wf_cycle, 0.993142) /* L1-resident loads, a sector per lane (4 per line) */ \
  X(l2_bytes, 6.08072e+07) /* working set where read bandwidth falls halfway to DRAM's */ \
  X(l2_gbs, 7989.15) /* repeated reads of a 4 MiB set */ \
  X(lat_div32, 45.3003) /* div32 chain, less an f32 add */ \
  X(lat_div64, 111.333) /* div64 chain, less an f64 add */ \
  X(lat_dram, 674.094) /* pointer chase in 1 GiB */ \
  X(lat_fp32, 4.38442) /* fmaf chain, one warp per SM */ \
  X(lat_fp64, 8.182) /* fma chain on doubles */ \
  X(lat_idiv32, 129.161) /* unsigned division chain, less an add */ \
  X(lat_l1, 40.0844) /* pointer chase in 16 KiB */ \
  X(lat_l2, 288.04) /* pointer chase in 4 MiB */ \
  X(lat_rcp32, 65.371) /* rcp32 chain, less an f32 add */ \
  X(lat_rcp64, 59.0578) /* rcp64 chain, less an f64 add */ \
  X(lat_sfu, 40.3222) /* rsqrtf chain, less an f32 add */ \
  X(lat_sqrt32, 45.1533) /* sqrt32 chain, less an f32 add */ \
  X(lat_sqrt64, 78.5861) /* sqrt64 chain, less an f64 add */ \
  X(launch_us, 5.376) /* empty kernel, events */ \
  X(queue, 0.2) /* fitted: copy_grids */ \
  X(shared_wf_cycle, 0.990515) /* conflict-free shared loads */ \
  X(spread_dram, 0.275415) /* 16 lanes chasing in 256 MiB and 2 GiB, against lat_dram */ \
  X(spread_l2, 0.0715762) /* 16 lanes chasing in 16 MiB, against 1 */ \
  X(warp_cycles, 15) /* fitted: copy_blocks */ \
  X(warp_ns, 0.00247284) /* blocks of 1024 against 32 */ \

#endif
