/* device_default.c: the device description used when no GPU answers (the "none" backend and the
 * simulator's default). Figures are those of an NVIDIA H200 (compute capability 9.0), so that
 * launch-limit errors and occupancy a learner sees without a GPU match the real device. */
#include <string.h>

#include "device.h"

void device_default_h200(cl_device *d) {
  memset(d, 0, sizeof *d);
  strcpy(d->name, "NVIDIA H200 (modelled)");
  d->cc_major = 9;
  d->cc_minor = 0;
  d->sm_count = 132;
  d->memory_total = (size_t)143771 << 20; /* 140 GiB usable of 141 GB */
  d->clock_khz = 1980000;
  d->memory_clock_khz = 3201000;
  d->bus_width_bits = 6144;
  d->l2_bytes = (size_t)50 << 20;
  d->max_threads_per_block = 1024;
  d->max_block_dim[0] = 1024;
  d->max_block_dim[1] = 1024;
  d->max_block_dim[2] = 64;
  d->max_grid_dim[0] = 2147483647;
  d->max_grid_dim[1] = 65535;
  d->max_grid_dim[2] = 65535;
  d->max_threads_per_sm = 2048;
  d->max_blocks_per_sm = 32;
  d->shared_per_block = 48 << 10;
  d->shared_per_block_optin = 227 << 10;
  d->shared_per_sm = 228 << 10;
  d->regs_per_block = 65536;
  d->regs_per_sm = 65536;
  d->warp_size = 32;
}
