-- h200_bench.lua: figures that lessons quote from `make bench` on an NVIDIA H200, copied here
-- with their date from bench/RESULTS.md and bench/MODEL.md, so that a lesson's text names them
-- by field ({{lesson_data("h200_bench").pinned_h2d_gbs}}) and never types a figure by hand.
return {
  machine = "NVIDIA H200, driver 580.159.04",
  date = "2026-12-01",
  first_launch_s = 0.3456, -- bench/RESULTS.md, first_launch_ms: start to a completed launch
  pinned_h2d_gbs = 55.25,  -- bench/RESULTS.md, pinned_copy_ratio: host to device, 1 GiB
  launch_us = 3.603,       -- bench/RESULTS.md, launch_ratio_vs_c: an empty kernel's launch
  -- bench/MODEL.md, "copies 40 MB, host to device"
  copy_40mb_pinned_ms = 0.7294, copy_40mb_pageable_ms = 2.354,
  -- bench/MODEL.md, "matmul 1024 x 1024"
  matmul_1024_naive_ms = 0.4217, matmul_1024_tiled_ms = 0.2819,
  -- repl/backend/h200_cublas.h (bench/model/cublas.lua): cuBLAS sgemm of two 2048 x 2048 matrices
  sgemm_2048_tflops = 2 * 2048 ^ 3 / 355.6e-6 / 1e12,
  -- bench/MODEL.md, "block size: saxpy": H200 milliseconds by threads per block
  saxpy_ms = { [32] = 0.1947, [64] = 0.1003, [128] = 0.05382, [256] = 0.04069, [512] = 0.04309,
               [1024] = 0.04653 },
}
