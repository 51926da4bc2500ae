/* h200.h: the one description of the device cudalab models, an NVIDIA H200 (compute capability
 * 9.0). Read by the simulator (sim/sim_device.c), by the description the backends without a GPU
 * report (repl/backend/device_default.c), by the architecture NVRTC targets there, and by the
 * tests.
 *
 * Stance: every figure is written here once, as the runtime reports it on the real device
 * (cudaGetDeviceProperties), so launch-limit errors, occupancy and cuda.device() without a GPU
 * say what they would say on one. The figures are X-macro lists of (field, value) rather than
 * one struct, because two structs carry them: cl_device (include/device.h) and the simulator's
 * sim_device_desc, which must not depend on the REPL's headers; a field named alike in both is
 * filled from the same line. The timing model's parameters are the other half of the
 * description: each is a row of sim/perf_params.def (its meaning, unit and bounds), and those
 * fitted from measurements on the GPU have their values written by a tool into
 * sim/h200_params.h (SIM_H200_PERF).
 *
 * This header is plain C with no includes beyond <stddef.h>; sim/ may include it. */
#ifndef CUDALAB_H200_H
#define CUDALAB_H200_H

#include <stddef.h>

#define CL_H200_NAME "NVIDIA H200"
/* What NVRTC compiles for when no GPU answers: a real architecture, so ptxas reports the
 * registers the GPU would use and the launch checks match it. */
#define CL_H200_ARCH "sm_90"

/* Device memory, as cudaGetDeviceProperties' totalGlobalMem reports it on the H200: 143,771 MiB
 * (140.4 GiB; NVIDIA sells it as "141 GB" of HBM3e, of which the driver keeps a little). */
#define CL_H200_MEMORY ((size_t)150109880320) /* cudaGetDeviceProperties on an H200 */

/* What limits launches and occupancy: fields of both cl_device and sim_device_desc. */
#define CL_H200_LIMITS(X)                       \
  X(cc_major, 9)                                \
  X(cc_minor, 0)                                \
  X(sm_count, 132)                              \
  X(memory_total, CL_H200_MEMORY)               \
  X(max_threads_per_block, 1024)                \
  X(max_block_dim[0], 1024)                     \
  X(max_block_dim[1], 1024)                     \
  X(max_block_dim[2], 64)                       \
  X(max_grid_dim[0], 2147483647)                \
  X(max_grid_dim[1], 65535)                     \
  X(max_grid_dim[2], 65535)                     \
  X(max_threads_per_sm, 2048)                   \
  X(max_blocks_per_sm, 32)                      \
  X(shared_per_block, (size_t)48 << 10)         \
  X(shared_per_block_optin, (size_t)227 << 10)  \
  X(shared_per_sm, (size_t)228 << 10)           \
  X(regs_per_block, 65536)                      \
  X(regs_per_sm, 65536)                         \
  X(warp_size, 32)

/* The most blocks a cluster (__cluster_dims__) may have: the portable cluster size, which a
 * launch keeps to unless it opts in to non-portable sizes (cudalab's launches do not). */
#define CL_H200_MAX_CLUSTER_BLOCKS 8

/* What cuda.device() shows beyond the limits: fields of cl_device only. */
#define CL_H200_CLOCKS(X)                       \
  X(clock_khz, 1980000)                         \
  X(memory_clock_khz, 3201000)                  \
  X(bus_width_bits, 6016)                       \
  X(l2_bytes, (size_t)60 << 20)

/* The largest texture a CUDA array can hold, in texels (maxTexture1D, maxTexture2D and
 * maxTexture3D of compute capability 9.0): cuda.texture refuses a larger one on every backend,
 * as cudaMallocArray does on the GPU. Fields of cl_device only. */
#define CL_H200_TEXTURES(X)                     \
  X(max_texture_1d, 131072)                     \
  X(max_texture_2d[0], 131072)                  \
  X(max_texture_2d[1], 65536)                   \
  X(max_texture_3d[0], 16384)                   \
  X(max_texture_3d[1], 16384)                   \
  X(max_texture_3d[2], 16384)

#endif
