/* device.h: what cudalab knows about a device, whichever backend reports it.
 * Filled by the backends; read by the bindings for launch checks and by cuda.device(). */
#ifndef CUDALAB_DEVICE_H
#define CUDALAB_DEVICE_H

#include <stddef.h>

typedef struct cl_device {
  char name[128];              /* "NVIDIA H200" */
  char backend[8];             /* "cuda", "sim", "none" */
  int cc_major, cc_minor;      /* compute capability */
  int sm_count;
  size_t memory_total;         /* bytes */
  int clock_khz, memory_clock_khz, bus_width_bits;
  size_t l2_bytes;
  int max_threads_per_block;
  int max_block_dim[3];
  int max_grid_dim[3];
  int max_threads_per_sm, max_blocks_per_sm;
  size_t shared_per_block;       /* without opt-in */
  size_t shared_per_block_optin; /* with cudaFuncAttributeMaxDynamicSharedMemorySize */
  size_t shared_per_sm;
  int regs_per_block, regs_per_sm;
  int warp_size;
  int max_texture_1d, max_texture_2d[2], max_texture_3d[3]; /* texels of a CUDA array */
  int driver_version, runtime_version; /* 13000 = 13.0; 0 = none */
} cl_device;

/* The modelled H200 (include/h200.h) as a cl_device: what checks use when no GPU is present. */
void device_default_h200(cl_device *out);

#endif
