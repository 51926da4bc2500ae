-- written by bench/model/calibrate.lua
return {
  backend = "cuda",
  clock_khz = 1980000,
  date = "2026-12-03",
  failed = {},
  machine = "NVIDIA H200, 132 SMs, driver 13.0",
  measurements = {
    alu_ginst_s = 763.229,
    atom_bins256_gops = 26.8863,
    atom_distinct_gops = 337.109,
    atom_line_ns = 0.0740256,
    atom_same_int_ns = 0.75264,
    atom_same_ns = 1.75965,
    atom_warp_same_ns = 0.0188432,
    block_ns = 0.602595,
    block_ns_1024 = 0.679253,
    block_ns_128 = 0.602852,
    block_ns_256 = 0.602895,
    block_ns_32 = 0.602595,
    copy_small_us = 8.96,
    d2d_gbs = 4233.2,
    d2h_pageable_gbs = 16.4389,
    d2h_pinned_gbs = 55.2227,
    dram_copy_gbs = 4241.09,
    dram_read_gbs = 4500.93,
    dram_write_gbs = 4574.88,
    fp32_ginst_s = 1014.2,
    fp64_ginst_s = 518.514,
    h2d_pageable_gbs = 15.1866,
    h2d_pinned_gbs = 55.3353,
    int_ginst_s = 518.319,
    l1_sector_s = 1.03827e+12,
    l2_effective_mb = 57.9903,
    l2_read_gbs = 7989.15,
    l2_rmw_gbs = 7336.71,
    lat_dram_ns = 340.451,
    lat_l1_ns = 20.2446,
    lat_l2_ns = 145.475,
    launch_us = 5.376,
    sfu_ginst_s = 129.027,
    shared_conflict32_wf_s = 2.59471e+11,
    shared_wf_s = 2.58881e+11,
  },
  raw = {
    atomic_repeats = {
      float_ms = {
        0.323056,
        0.472368,
        0.938528,
        1.86253,
        3.69202,
        7.38539,
      },
      int_ms = {
        0.322912,
        0.318304,
        0.321024,
        0.783264,
        1.55662,
        3.07715,
      },
      m = {
        1,
        2,
        4,
        8,
        16,
        32,
      },
      n = 4194304,
    },
    atomic_slices = {
      fanout_lines = {
        32,
        256,
        1024,
        8192,
        65536,
      },
      fanout_ms = {
        0.413424,
        0.136592,
        0.07112,
        0.0516,
        0.049232,
      },
      lanes = {
        1,
        2,
        4,
        8,
        16,
        32,
      },
      lanes_one_ms = {
        0.106608,
        0.105152,
        0.105008,
        0.085376,
        0.163136,
        0.322736,
      },
      lanes_spread_ms = {
        0.019568,
        0.019456,
        0.019264,
        0.01944,
        0.019824,
        0.022608,
      },
      n = 4194304,
      one_line_ms = 0.3228,
      pair_bytes = {
        128,
        256,
        512,
        1024,
        2048,
        4096,
        16384,
        65536,
        1048576,
      },
      pair_ms = {
        0.319536,
        0.167856,
        0.32256,
        0.165472,
        0.163232,
        0.163008,
        0.16488,
        0.163824,
        0.167296,
      },
      run_lines = {
        1,
        2,
        4,
        8,
        16,
        32,
        64,
        128,
        512,
        2048,
        8192,
      },
      run_ms = {
        0.321888,
        0.32072,
        0.16552,
        0.165584,
        0.089488,
        0.051216,
        0.03736,
        0.0248,
        0.021776,
        0.021248,
        0.021568,
      },
      sector_lanes = {
        1,
        2,
        4,
      },
      sector_ms = {
        0.107888,
        0.20408,
        0.397216,
      },
      source = "extern \"C\" __global__ void lines(int *base, int nlines, long long stride, int lanes, int step) {\
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = i & 31;\
  if (lane >= lanes) return;\
  atomicAdd(base + (long long)((i >> 5) % nlines) * stride + lane * step, 1);\
}\
extern \"C\" __global__ void fanout(int *base, int nlines, int stride) {\
  int i = blockIdx.x * blockDim.x + threadIdx.x;\
  atomicAdd(base + (long long)(i % nlines) * stride, 1);\
}\
extern \"C\" __global__ void lcg_init(unsigned *next, unsigned mask) {\
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i <= mask;\
       i += (long long)gridDim.x * blockDim.x)\
    next[i] = ((unsigned)i * 1103515245u + 12345u) & mask;\
}\
extern \"C\" __global__ void chase(const unsigned *next, unsigned *end, unsigned mask, int k,\
                                 int steps) {\
  if (threadIdx.x >= k) return;\
  unsigned p = (blockIdx.x * 32 + threadIdx.x) * 2654435761u & mask;\
  for (int s = 0; s < steps; s++) p = next[p];\
  end[blockIdx.x * 32 + threadIdx.x] = p;\
}\
extern \"C\" __global__ void strided(int *out, long long stride, int n) {\
  int i = blockIdx.x * blockDim.x + threadIdx.x;\
  if (i < n) out[(long long)i * stride] = i;\
}\
",
    },
    blocks = {
      block_1024 = {
        empty_fixed_us = 5.17778,
        empty_ms = {
          0.011984,
          0.073088,
          0.684432,
        },
        write_fixed_us = 5.11111,
        write_ms = {
          0.017504,
          0.126448,
          1.22107,
        },
        write_ns_per_block = 1.21594,
      },
      block_128 = {
        empty_fixed_us = 4.75289,
        empty_ms = {
          0.010896,
          0.064912,
          0.607616,
        },
        write_fixed_us = 5.39289,
        write_ms = {
          0.01144,
          0.0656,
          0.607728,
        },
        write_ns_per_block = 0.602333,
      },
      block_256 = {
        empty_fixed_us = 5.05155,
        empty_ms = {
          0.011136,
          0.06528,
          0.607952,
        },
        write_fixed_us = 5.73155,
        write_ms = {
          0.011472,
          0.06624,
          0.607712,
        },
        write_ns_per_block = 0.602008,
      },
      block_32 = {
        empty_fixed_us = 5.49333,
        empty_ms = {
          0.0116,
          0.065664,
          0.608096,
        },
        write_fixed_us = 5.63467,
        write_ms = {
          0.011552,
          0.066048,
          0.608528,
        },
        write_ns_per_block = 0.602904,
      },
      grids = {
        10000,
        100000,
        1000000,
      },
    },
    chains = {
      cycles = {
        div32 = 49.6847,
        div64 = 119.515,
        fma32 = 4.38442,
        fma64 = 8.182,
        rcp32 = 69.7554,
        rcp64 = 67.2398,
        rsqrt32 = 44.7066,
        sqrt32 = 49.5377,
        sqrt64 = 86.7681,
        udiv32 = 133.545,
      },
      iters = 32768,
      source = "extern \"C\" __global__ void fma32(float *out, int iters, float a, float b) {\
  float v = 1.25;\
  for (int k = 0; k < iters; k++) { v = fmaf(v, a, b); }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void sqrt32(float *out, int iters, float a, float b) {\
  float v = 1.25;\
  for (int k = 0; k < iters; k++) { v = sqrtf(v) + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void rcp32(float *out, int iters, float a, float b) {\
  float v = 1.25;\
  for (int k = 0; k < iters; k++) { v = 1.0f / v + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void div32(float *out, int iters, float a, float b) {\
  float v = 1.25;\
  for (int k = 0; k < iters; k++) { v = a / v + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void rsqrt32(float *out, int iters, float a, float b) {\
  float v = 1.25;\
  for (int k = 0; k < iters; k++) { v = rsqrtf(v) + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void fma64(double *out, int iters, double a, double b) {\
  double v = 1.25;\
  for (int k = 0; k < iters; k++) { v = fma(v, a, b); }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void sqrt64(double *out, int iters, double a, double b) {\
  double v = 1.25;\
  for (int k = 0; k < iters; k++) { v = sqrt(v) + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void rcp64(double *out, int iters, double a, double b) {\
  double v = 1.25;\
  for (int k = 0; k < iters; k++) { v = 1.0 / v + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void div64(double *out, int iters, double a, double b) {\
  double v = 1.25;\
  for (int k = 0; k < iters; k++) { v = a / v + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
extern \"C\" __global__ void udiv32(unsigned *out, int iters, unsigned a, unsigned b) {\
  unsigned v = 7;\
  for (int k = 0; k < iters; k++) { v = a / v + b; }\
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\
}\
",
    },
    d2h_pageable_gbs_by_size = {
      gbs = {
        15.0935,
        16.4389,
        16.4985,
      },
      sizes_mib = {
        8,
        32,
        128,
      },
    },
    dram_copy_gbs = {
      grid_stride_blocks = 1056,
      grid_stride_gbs = 3887.44,
      per_element_gbs = 4241.09,
    },
    dram_read_gbs = {
      grid_stride_blocks = 1056,
      grid_stride_gbs = 4432.26,
      per_element_gbs = 4500.93,
    },
    dram_write_gbs = {
      grid_stride_blocks = 1056,
      grid_stride_gbs = 4222.81,
      per_element_gbs = 4574.88,
    },
    failed_values = {},
    h2d_pageable_gbs_by_size = {
      gbs = {
        9.14848,
        15.1866,
        17.2365,
      },
      sizes_mib = {
        8,
        32,
        128,
      },
    },
    issue = {
      alu_ginst_s = {
        iters = 1024,
        ms = 2.17621,
        ptx_count = 32,
        warp_insts = 1.66094e+09,
      },
      fp32_ginst_s = {
        iters = 2048,
        ms = 1.09179,
        ptx_count = 160,
        warp_insts = 1.1073e+09,
      },
      fp64_ginst_s = {
        iters = 1024,
        ms = 1.06776,
        ptx_count = 160,
        warp_insts = 5.53648e+08,
      },
      int_ginst_s = {
        iters = 1024,
        ms = 1.06816,
        ptx_count = 99,
        warp_insts = 5.53648e+08,
      },
      sfu_ginst_s = {
        iters = 256,
        ms = 1.07274,
        ptx_count = 96,
        warp_insts = 1.38412e+08,
      },
    },
    l2_read = {
      gbs = {
        6304.85,
        7955.06,
        7989.15,
        7460.69,
        8337.79,
        8120.63,
        8335.79,
        8284.46,
        5018.24,
        4397.47,
        4398.27,
        4376.76,
      },
      passes = {
        512,
        256,
        128,
        64,
        42,
        32,
        25,
        21,
        16,
        10,
        8,
        4,
      },
      size_mib = {
        2,
        4,
        8,
        16,
        24,
        32,
        40,
        48,
        64,
        96,
        128,
        256,
      },
    },
    l2_rmw = {
      gbs = {
        7174.35,
        7336.71,
        7582.07,
        5202.24,
      },
      size_mib = {
        4,
        16,
        32,
        64,
      },
    },
    latency = {
      dram = {
        bytes = 1073741824,
        cycles = 674.094,
        hops = 100000,
        ns = 340.451,
      },
      l1 = {
        bytes = 16384,
        cycles = 40.0844,
        hops = 100000,
        ns = 20.2446,
      },
      l2 = {
        bytes = 4194304,
        cycles = 288.04,
        hops = 100000,
        ns = 145.475,
      },
    },
    launch_back_to_back_us = 3.05328,
    launch_prebound_us = 4.688,
    loads = {
      l1_sector_s = {
        iters = 128,
        ms = 1.06648,
        units = 1.1073e+09,
      },
      shared_conflict32_wf_s = {
        iters = 16,
        ms = 1.06688,
        units = 2.76824e+08,
      },
      shared_wf_s = {
        iters = 512,
        ms = 1.06931,
        units = 2.76824e+08,
      },
    },
    partial_writes = {
      ms = {
        0.017104,
        0.017008,
        0.076112,
        0.096384,
        0.181008,
        0.252992,
        0.278576,
      },
      n = 4194304,
      strides = {
        1,
        2,
        8,
        16,
        32,
        128,
        256,
      },
    },
    scattered_loads = {
      k = {
        1,
        2,
        4,
        16,
      },
      mib = {
        16,
        256,
        2048,
      },
      ms = {
        {
          0.162336,
          0.166864,
          0.175248,
          0.187296,
        },
        {
          0.165008,
          0.192272,
          0.442672,
          0.53088,
        },
        {
          0.167216,
          0.21568,
          0.453984,
          0.535552,
        },
      },
      steps = 1024,
    },
    structure = {
      blocks = {
        64,
        128,
        256,
        512,
        1024,
      },
      blocks_ms = {
        0.163696,
        0.084864,
        0.055504,
        0.059808,
        0.065392,
      },
      grids = {
        1,
        2,
        4,
        8,
        16,
      },
      grids_ms = {
        0.207584,
        0.116064,
        0.069136,
        0.048432,
        0.050096,
      },
      n = 16777216,
      source = "extern \"C\" __global__ void copy1(const float *a, float *b, int n) {\
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }\
extern \"C\" __global__ void copy_gs(const float *a, float *b, int n) {\
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) b[i] = a[i]; }\
extern \"C\" __global__ void same_int(int *d, int n) {\
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d, 1); }\
extern \"C\" __global__ void one_line(const int *idx, int *d, int n) {\
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d + (idx[i] & 31), 1); }\
",
    },
  },
}
