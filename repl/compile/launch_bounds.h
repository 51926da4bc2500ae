/* launch_bounds.h: what a kernel's declaration bounds its launches to (__launch_bounds__,
 * __block_size__, __cluster_dims__), and whether a launch keeps to it. Read from the PTX by
 * ptxinfo.c; checked by bind_kernel.c before any backend sees the launch. */
#ifndef CUDALAB_LAUNCH_BOUNDS_H
#define CUDALAB_LAUNCH_BOUNDS_H

#include <stddef.h>

#include "backend.h"

/* The PTX directives after an .entry's parameters; 0 where the kernel declares none. */
typedef struct lb_bounds {
  unsigned maxntid[3];     /* .maxntid (__launch_bounds__): threads per block, their product */
  unsigned reqntid[3];     /* .reqntid (__block_size__): the one block shape it takes */
  unsigned cluster[3];     /* .reqnctapercluster (__cluster_dims__): blocks per cluster */
  int explicit_cluster;    /* .explicitcluster: launched in clusters */
  int blocks_are_clusters; /* .blocksareclusters: a launch counts clusters, not blocks */
} lb_bounds;

/* The most threads per block the bounds allow, or 0 when they set none. */
unsigned lb_max_threads(const lb_bounds *b);

/* Whether a launch of grid x block keeps to b. 0 if it does; -1 if the GPU would refuse it,
 * with why in msg (naming the kernel, its bound and what was asked; the simulator's
 * sim_launch says the same). A launch that counts clusters (__block_size__ with a cluster
 * shape) is left to the backend, which knows how it counts. */
int lb_check(const lb_bounds *b, const char *kernel, cl_dim3 grid, cl_dim3 block, char *msg,
             size_t len);

#endif
