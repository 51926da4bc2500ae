/* launch_bounds.c: a launch against the bounds its kernel declares.
 *
 * Stance: the GPU refuses a launch outside its kernel's __launch_bounds__ with "too many
 * resources requested for launch", and one whose grid is not a whole number of the kernel's
 * clusters with a bare invalid-value error; neither names the bound or the launch. So the
 * bindings check first, on every backend, and say which bound and which launch disagree: the
 * learner reads the same sentence on the simulator and on the GPU, and the GPU never sees the
 * launch. The simulator holds its own launches to the same bounds in the same words
 * (sim_launch.c), for launches that do not come through the bindings. */
#include <stdio.h>

#include "h200.h"
#include "launch_bounds.h"

unsigned lb_max_threads(const lb_bounds *b) {
  unsigned long long t = (unsigned long long)b->maxntid[0] * b->maxntid[1] * b->maxntid[2];
  return b->maxntid[0] && t < 0xffffffffull ? (unsigned)t : 0;
}

/* "__launch_bounds__(256)" for a bound on x alone (what the C++ attribute writes), else the
 * directive's shape. */
static const char *maxntid_text(const unsigned m[3], char *buf, size_t len) {
  if (m[1] == 1 && m[2] == 1) snprintf(buf, len, "__launch_bounds__(%u)", m[0]);
  else snprintf(buf, len, "a bound of %u x %u x %u threads (.maxntid)", m[0], m[1], m[2]);
  return buf;
}

static int check_block(const lb_bounds *b, const char *kernel, cl_dim3 k, char *msg,
                       size_t len) {
  const unsigned *m = b->maxntid, *r = b->reqntid;
  unsigned long long t = (unsigned long long)k.x * k.y * k.z;
  unsigned long long most = (unsigned long long)m[0] * m[1] * m[2];
  char bound[96];
  if (m[0] && t > most) {
    snprintf(msg, len, "kernel %s was declared with %s: a block of %llu threads (%u x %u x %u) "
             "is over that bound, so the GPU refuses the launch (too many resources requested "
             "for launch); use at most %llu threads per block, or raise the bound", kernel,
             maxntid_text(m, bound, sizeof bound), t, k.x, k.y, k.z, most);
    return -1;
  }
  if (r[0] && (k.x != r[0] || k.y != r[1] || k.z != r[2])) {
    snprintf(msg, len, "kernel %s was declared with __block_size__((%u, %u, %u)): it runs only "
             "with blocks of exactly %u x %u x %u threads, not %u x %u x %u", kernel, r[0], r[1],
             r[2], r[0], r[1], r[2], k.x, k.y, k.z);
    return -1;
  }
  return 0;
}

static int check_cluster(const lb_bounds *b, const char *kernel, cl_dim3 g, char *msg,
                         size_t len) {
  const unsigned *c = b->cluster;
  if (b->explicit_cluster && !c[0]) {
    snprintf(msg, len, "kernel %s was declared with __cluster_dims__() and no shape: its launch "
             "must give the cluster shape, which cudalab's launches cannot; write the shape in "
             "the declaration, as __cluster_dims__(2, 1, 1)", kernel);
    return -1;
  }
  if (!c[0]) return 0;
  unsigned long long size = (unsigned long long)c[0] * c[1] * c[2];
  if (size > CL_H200_MAX_CLUSTER_BLOCKS) {
    snprintf(msg, len, "kernel %s was declared with __cluster_dims__(%u, %u, %u): a cluster of "
             "%llu blocks is over the %d the GPU allows (the portable cluster size)", kernel,
             c[0], c[1], c[2], size, CL_H200_MAX_CLUSTER_BLOCKS);
    return -1;
  }
  const unsigned gd[3] = {g.x, g.y, g.z};
  for (int i = 0; i < 3; i++)
    if (gd[i] % c[i]) {
      snprintf(msg, len, "kernel %s was declared with __cluster_dims__(%u, %u, %u): the grid "
               "must be a whole number of clusters, but grid.%c = %u is not a multiple of %u",
               kernel, c[0], c[1], c[2], "xyz"[i], gd[i], c[i]);
      return -1;
    }
  return 0;
}

int lb_check(const lb_bounds *b, const char *kernel, cl_dim3 grid, cl_dim3 block, char *msg,
             size_t len) {
  if (b->blocks_are_clusters) return 0;
  if (check_block(b, kernel, block, msg, len)) return -1;
  return check_cluster(b, kernel, grid, msg, len);
}
