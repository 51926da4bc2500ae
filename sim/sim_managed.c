/* sim_managed.c: managed (unified) memory on the simulated device: where each 64 KiB group of a
 * managed allocation is (host, device, or both for read-mostly data), what a launch, a host
 * access or a prefetch moves, and what that costs in the timing model.
 *
 * Stance: the data itself never moves (device memory is host memory here); only the record of
 * where it would be does, so results never depend on it and the cost is the model's alone. The
 * kernel marks the groups it touches (sim_sanitize.c's hooks, sim_um_touch) and the launch is
 * settled afterwards, group by group in address order, so the outcome is the same whatever the
 * order the host threads ran the blocks in: deterministic, as the model must be.
 *
 * Granularity and what moves, after NVIDIA's open nvidia-uvm driver (uvm_va_block.c): managed
 * memory is managed in 2 MiB VA blocks; a GPU fault is serviced in batches, a VA block's
 * faulting pages together, and on Pascal and later GPUs pages move as 64 KiB big pages. So a
 * kernel pays one fault batch per 2 MiB block it faults in (um_fault_us) and moves each touched
 * 64 KiB group (um_migrate_gbs). The CPU faults 4 KiB pages; the driver brings back at least the
 * group, which is what is counted here (um_cpu_fault_us per group). Turned down: the driver's
 * density prefetch (which grows a migration to most of a 2 MiB block once half of it faulted):
 * its thresholds are heuristics that change between driver versions, and a model that moves
 * only what was touched keeps "touched pages move" the lesson.
 *
 * The figures: none of these is measured on the H200 (reference measurements have none for
 * managed memory), so every parameter is named an estimate in perf_params.def, cuda.stats and
 * help. They are set so that their order is the GPU's: fault-driven migration well below a
 * pinned copy's 55 GB/s (the driver maps and copies small pieces, and the warps that faulted
 * wait), a prefetch near a pinned copy, a fault batch a few tens of microseconds. Advice:
 * read-mostly makes a kernel's read duplicate the group rather than move it (a write then drops
 * the host's copy, as a host write drops the device's); preferred location cpu keeps the group
 * on the host and a kernel reads it in place over the link (um_remote_gbs), as a GPU does once
 * the driver has mapped it there; preferred location gpu lets the host read it, migrating it
 * back as it must on a PCIe machine. */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* The allocation that holds [ptr, ptr + bytes), managed or not; NULL when none does. */
static sim_alloc *holder(sim_device *dev, const void *ptr, size_t bytes) {
  int i = sim_alloc_find(dev->allocs, dev->nallocs, (uint64_t)(uintptr_t)ptr, bytes ? bytes : 1);
  return i < 0 ? NULL : &dev->allocs[i];
}

int sim_managed_make(sim_device *dev, const void *ptr) {
  sim_alloc *a = holder(dev, ptr, 1);
  if (!a || a->base != (uint64_t)(uintptr_t)ptr) return -1;
  if (a->um) return 0;
  sim_managed *m = calloc(1, sizeof *m);
  if (!m) return -1;
  m->ngroups = (a->size + SIM_UM_GROUP - 1) / SIM_UM_GROUP;
  size_t n = m->ngroups ? (size_t)m->ngroups : 1;
  m->where = calloc(n, 1); /* SIM_UM_HOST is 0 */
  m->advice = calloc(n, 1);
  m->touch = calloc(n, 1);
  if (!m->where || !m->advice || !m->touch) {
    free(m->where);
    free(m->advice);
    free(m->touch);
    free(m);
    return -1;
  }
  a->um = m;
  return 0;
}

void sim_managed_drop(sim_alloc *a) {
  if (!a->um) return;
  free(a->um->where);
  free(a->um->advice);
  free(a->um->touch);
  free(a->um);
  a->um = NULL;
}

int sim_managed_is(sim_device *dev, const void *ptr, size_t bytes) {
  sim_alloc *a = holder(dev, ptr, bytes);
  return a && a->um;
}

/* The groups of a that [ptr, ptr + bytes) overlaps: [*g0, *g1). */
static void groups_of(const sim_alloc *a, const void *ptr, size_t bytes, uint64_t *g0,
                      uint64_t *g1) {
  uint64_t off = (uint64_t)(uintptr_t)ptr - a->origin;
  *g0 = off / SIM_UM_GROUP;
  *g1 = bytes ? (off + bytes - 1) / SIM_UM_GROUP + 1 : *g0;
  if (*g1 > a->um->ngroups) *g1 = a->um->ngroups;
}

/* The bytes of group g of a: SIM_UM_GROUP but for a short last group. */
static uint64_t group_bytes(const sim_alloc *a, uint64_t g) {
  uint64_t start = g * SIM_UM_GROUP;
  return a->size - start < SIM_UM_GROUP ? a->size - start : SIM_UM_GROUP;
}

/* One group a kernel touched (bits: 1 read, 2 written). Returns 1 when it faulted. */
static int settle_group(sim_alloc *a, uint64_t g, int bits, sim_um_moves *out) {
  sim_managed *m = a->um;
  int adv = m->advice[g], written = bits & 2;
  uint64_t bytes = group_bytes(a, g);
  switch (m->where[g]) {
    case SIM_UM_DEVICE:
      return 0;
    case SIM_UM_BOTH: /* a write drops the host's copy: a fault, nothing to move */
      if (!written) return 0;
      m->where[g] = SIM_UM_DEVICE;
      return 1;
    case SIM_UM_HOST:
      if (adv & SIM_UM_PREFER_CPU) { /* read in place; a write lands there too */
        out->remote_bytes += bytes;
        return 0;
      }
      m->where[g] = (adv & SIM_UM_READ_MOSTLY) && !written ? SIM_UM_BOTH : SIM_UM_DEVICE;
      out->htod_bytes += bytes;
      out->gpu_groups++;
      return 1;
  }
  return 0;
}

void sim_managed_settle(sim_device *dev, sim_um_moves *out) {
  for (int i = 0; i < dev->nallocs; i++) {
    sim_alloc *a = &dev->allocs[i];
    if (!a->um) continue;
    uint64_t batch = UINT64_MAX; /* the 2 MiB block of the last fault counted */
    for (uint64_t g = 0; g < a->um->ngroups; g++) {
      int bits = a->um->touch[g];
      if (!bits) continue;
      a->um->touch[g] = 0;
      uint64_t vb = g * SIM_UM_GROUP / SIM_UM_VABLOCK;
      if (settle_group(a, g, bits, out) && vb != batch) {
        out->gpu_faults++;
        batch = vb;
      }
    }
  }
}

void sim_managed_host(sim_device *dev, const void *ptr, size_t bytes, int write,
                      sim_um_moves *out) {
  sim_alloc *a = holder(dev, ptr, bytes);
  if (!a || !a->um || !bytes) return;
  uint64_t g0, g1;
  groups_of(a, ptr, bytes, &g0, &g1);
  for (uint64_t g = g0; g < g1; g++) {
    unsigned char *w = &a->um->where[g];
    if (*w == SIM_UM_HOST) continue;
    if (*w == SIM_UM_BOTH) { /* the host has a copy: only a write drops the device's */
      if (write) {
        *w = SIM_UM_HOST;
        out->cpu_faults++;
      }
      continue;
    }
    *w = (a->um->advice[g] & SIM_UM_READ_MOSTLY) && !write ? SIM_UM_BOTH : SIM_UM_HOST;
    out->cpu_faults++;
    out->dtoh_bytes += group_bytes(a, g);
  }
}

void sim_managed_prefetch(sim_device *dev, const void *ptr, size_t bytes, int to_device,
                          sim_um_moves *out) {
  sim_alloc *a = holder(dev, ptr, bytes);
  if (!a || !a->um || !bytes) return;
  uint64_t g0, g1;
  groups_of(a, ptr, bytes, &g0, &g1);
  for (uint64_t g = g0; g < g1; g++) {
    unsigned char *w = &a->um->where[g];
    int there = to_device ? *w != SIM_UM_HOST : *w != SIM_UM_DEVICE;
    if (there) continue;
    if (a->um->advice[g] & SIM_UM_READ_MOSTLY) *w = SIM_UM_BOTH; /* a copy, the other kept */
    else *w = to_device ? SIM_UM_DEVICE : SIM_UM_HOST;
    if (to_device) out->htod_bytes += group_bytes(a, g);
    else out->dtoh_bytes += group_bytes(a, g);
  }
}

void sim_managed_advise(sim_device *dev, const void *ptr, size_t bytes, int bit, int set) {
  sim_alloc *a = holder(dev, ptr, bytes);
  if (!a || !a->um || !bytes) return;
  uint64_t g0, g1;
  groups_of(a, ptr, bytes, &g0, &g1);
  int clear = bit | (set && (bit & (SIM_UM_PREFER_GPU | SIM_UM_PREFER_CPU))
                         ? SIM_UM_PREFER_GPU | SIM_UM_PREFER_CPU : 0);
  for (uint64_t g = g0; g < g1; g++) {
    unsigned char *v = &a->um->advice[g];
    *v = (unsigned char)((*v & ~clear) | (set ? bit : 0));
    /* no longer read-mostly: duplicates collapse to the device's copy, as the driver keeps
     * the copy of the processor that last had it to itself */
    if (bit == SIM_UM_READ_MOSTLY && !set && a->um->where[g] == SIM_UM_BOTH)
      a->um->where[g] = SIM_UM_DEVICE;
  }
}

void sim_managed_where(sim_device *dev, const void *ptr, size_t bytes, uint64_t counts[3]) {
  counts[0] = counts[1] = counts[2] = 0;
  sim_alloc *a = holder(dev, ptr, bytes);
  if (!a || !a->um || !bytes) return;
  uint64_t g0, g1;
  groups_of(a, ptr, bytes, &g0, &g1);
  for (uint64_t g = g0; g < g1; g++) counts[a->um->where[g]]++;
}

double sim_model_um_us(const sim_device_desc *d, const sim_um_moves *m, int prefetch) {
  const sim_perf *P = &d->perf;
  double moved = (double)(m->htod_bytes + m->dtoh_bytes);
  if (prefetch) return moved > 0 ? P->copy_us + moved / (P->um_prefetch_gbs * 1e3) : 0;
  return (double)m->gpu_faults * P->um_fault_us + (double)m->cpu_faults * P->um_cpu_fault_us
       + moved / (P->um_migrate_gbs * 1e3) + (double)m->remote_bytes / (P->um_remote_gbs * 1e3);
}
