/* sim_device.c: the simulated device: its description, the table of live allocations that
 * every global access is checked against, and the module / kernel accessors of sim.h.
 *
 * The description by default is include/h200.h's H200, memory size included: the simulator
 * says what the GPU says about itself, and refuses an allocation only when this computer cannot
 * back it (host_can_back), which is a different message from the device's own "out of memory".
 *
 * Stance: allocations are ordinary host memory aligned to 256 bytes like cudaMalloc, kept in an
 * array sorted by address so a lookup is a binary search (and usually a cache hit before that).
 * Insertion is O(n), which is fine for the hundreds of arrays a learner makes. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "h200.h"
#include "h200_params.h"
#include "sim_int.h"
#include "sim_load.h"

#define MAP_THRESHOLD ((size_t)1 << 20) /* allocations this large are mmap'd */
#define HUGE_PAGE ((size_t)2 << 20)

static void release_raw(void *p, size_t mapped) {
  if (mapped) munmap(p, mapped);
  else free(p);
}

/* Fresh anonymous pages are zero and page-aligned, and cost nothing until touched: a 1 GiB
 * array a kernel never fills is not 1 GiB of memset. A mapping refused (an address-space limit)
 * is tried again once the kept regions have gone back. */
static void *map_fresh(sim_device *dev, size_t mapped) {
  for (;;) {
    void *p = mmap(NULL, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      /* 2 MiB pages where the kernel has them (transparent huge pages): an array's first writes
       * then fault once per 2 MiB, not per 4 KiB (a page fault costs microseconds on a virtual
       * machine); the advice is only advice, and an error leaves 4 KiB pages */
      if (mapped >= HUGE_PAGE) madvise(p, mapped, MADV_HUGEPAGE);
      return p;
    }
    if (sim_regions_release(dev) == 0) return NULL;
  }
}

/* The modelled H200: every figure from include/h200.h; the timing model's from the rows of
 * perf_params.def, each replaced by its measured value in h200_params.h where it has one. A
 * parameter marked MEASURED that h200_params.h lacks stays NaN, which test_model.c catches. */
#define MEASURED NAN
void sim_default_desc(sim_device_desc *d) {
  memset(d, 0, sizeof *d);
  snprintf(d->name, sizeof d->name, "%s (simulated)", CL_H200_NAME);
#define SET(field, value) d->field = value;
  CL_H200_LIMITS(SET)
#undef SET
#define PERF(name, h200, unit, zero, hi, doc) d->perf.name = h200;
#include "perf_params.def"
#undef PERF
#define H200(name, value) d->perf.name = value;
  SIM_H200_PERF(H200)
#undef H200
}

const sim_perf_field sim_perf_fields[] = {
#define PERF(name, h200, unit, zero, hi, doc)                                                      \
  {#name, offsetof(sim_perf, name), unit, zero, hi, doc},
#include "perf_params.def"
#undef PERF
    {NULL, 0, NULL, 0, 0, NULL}};

void sim_device_set_perf(sim_device *dev, const sim_perf *perf) {
  dev->desc.perf = *perf;
}

sim_device *sim_device_new(const sim_device_desc *desc) {
  sim_device *dev = calloc(1, sizeof *dev);
  if (!dev) return NULL;
  if (desc) dev->desc = *desc;
  else sim_default_desc(&dev->desc);
  return dev;
}

void sim_device_free(sim_device *dev) {
  if (!dev) return;
  for (int i = 0; i < dev->nallocs; i++) {
    release_raw(dev->allocs[i].raw, dev->allocs[i].mapped);
    sim_unset_drop(&dev->allocs[i]);
    sim_managed_drop(&dev->allocs[i]);
  }
  free(dev->allocs);
  sim_regions_release(dev);
  sim_watches_free(dev->watches);
  free(dev->lines);
  for (int i = 0; i < SIM_TRACE_BUFS; i++) free(dev->trace_buf[i]);
  free(dev->scratch);
  sim_cache_free(dev->caches);
  sim_heap_free(dev->heap);
  if (dev->textures) free(dev->textures->t); /* the table: its texels were allocations, above */
  free(dev->textures);
  free(dev);
}

const sim_device_desc *sim_device_info(const sim_device *dev) { return &dev->desc; }

void sim_set_printf_sink(sim_device *dev, void (*sink)(const char *, size_t, void *), void *ud) {
  dev->sink = sink;
  dev->sink_ud = ud;
}

size_t sim_host_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[128];
    unsigned long long kib = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
      found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    fclose(f);
    if (found) return (size_t)kib << 10;
  }
  long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
}

/* "12 GiB", "9.5 GiB": a size for a message about host memory. */
static void gib_text(char *buf, size_t cap, size_t bytes) {
  double gib = (double)bytes / (double)((size_t)1 << 30);
  snprintf(buf, cap, gib == (double)(long long)gib ? "%.0f GiB" : "%.1f GiB", gib);
}

/* This process's resident memory, from /proc/self/statm; 0 when unknown. */
static size_t resident_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, res = 0;
  int ok = f && fscanf(f, "%llu %llu", &size, &res) == 2;
  if (f) fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return ok && page > 0 ? (size_t)res * (size_t)page : 0;
}

/* Whether this computer can back a new allocation of `bytes`. Device memory is host memory here,
 * so a device of 140 GiB on a laptop of 16 is honest about its size (cuda.meminfo, cuda.device
 * say what the GPU says) and refuses only what the host cannot hold. Small allocations are not
 * checked: reading /proc costs more than they do, and they cannot be what runs a host out.
 * Large arrays are mapped without touching their pages, so memory that is "available" now may
 * already be promised to arrays not yet written: the test is that every device array, this one
 * included, fits in what this process holds plus what is available, less a reserve for the rest
 * of the machine. Counting only the available memory let many untouched arrays pass, and the
 * kernel's out-of-memory killer ended the engine when they were filled. */
#define HOST_RESERVE ((size_t)512 << 20)
static int host_can_back(const sim_device *dev, size_t bytes, char *err, size_t errlen) {
  if (bytes < MAP_THRESHOLD) return 1;
  size_t avail = sim_host_available();
  if (avail == 0) return 1; /* unknown: let the allocation itself decide */
  size_t room = avail + resident_bytes();
  room = room > HOST_RESERVE ? room - HOST_RESERVE : 0;
  if (dev->used + bytes <= room) return 1;
  char asked[32], have[32];
  gib_text(asked, sizeof asked, bytes);
  gib_text(have, sizeof have, room > dev->used ? room - dev->used : 0);
  sim_errf(err, errlen, "the simulator keeps device memory in this computer's memory: %s asked, %s "
           "available beside the device arrays already made", asked, have);
  return 0;
}

void *sim_malloc(sim_device *dev, size_t bytes, const char *label, char *err, size_t errlen) {
  if (bytes > dev->desc.memory_total - dev->used) {
    sim_errf(err, errlen, "out of device memory: %zu bytes requested, %zu of %zu free", bytes,
             dev->desc.memory_total - dev->used, dev->desc.memory_total);
    return NULL;
  }
  if (!host_can_back(dev, bytes, err, errlen)) return NULL;
  size_t round = (bytes + 255) / 256 * 256, mapped = 0;
  void *p;
  if (round >= MAP_THRESHOLD) {
    /* a freed array's pages when one of this size was freed (sim_regions.c), else fresh ones */
    mapped = (round + 4095) / 4096 * 4096;
    p = sim_region_take(dev, mapped);
    if (!p) p = map_fresh(dev, mapped);
  } else {
    p = aligned_alloc(256, round ? round : 256);
    if (p) memset(p, 0, round ? round : 256);
  }
  if (!p) {
    sim_errf(err, errlen, "out of host memory allocating %zu bytes", bytes);
    return NULL;
  }
  if (dev->nallocs == dev->cap) {
    int cap = dev->cap ? dev->cap * 2 : 64;
    sim_alloc *t = realloc(dev->allocs, (size_t)cap * sizeof *t);
    if (!t) {
      release_raw(p, mapped);
      sim_errf(err, errlen, "out of host memory");
      return NULL;
    }
    dev->allocs = t;
    dev->cap = cap;
  }
  uint64_t base = (uint64_t)(uintptr_t)p;
  int i = dev->nallocs;
  while (i > 0 && dev->allocs[i - 1].base > base) {
    dev->allocs[i] = dev->allocs[i - 1];
    i--;
  }
  sim_alloc *a = &dev->allocs[i];
  memset(a, 0, sizeof *a);
  a->base = a->origin = base;
  a->size = bytes;
  a->raw = p;
  a->mapped = mapped;
  a->param = -1;
  a->serial = ++dev->next_serial;
  if (label) snprintf(a->label, sizeof a->label, "%s", label);
  else snprintf(a->label, sizeof a->label, "an allocation of %zu bytes", bytes);
  dev->nallocs++;
  dev->used += bytes;
  return p;
}

int sim_free(sim_device *dev, void *ptr) {
  for (int i = 0; i < dev->nallocs; i++)
    if (dev->allocs[i].raw == ptr) {
      if (dev->allocs[i].mapped) sim_region_keep(dev, ptr, dev->allocs[i].mapped);
      else free(ptr);
      sim_unset_drop(&dev->allocs[i]);
      sim_managed_drop(&dev->allocs[i]);
      sim_watch_forget(dev, dev->allocs[i].base, dev->allocs[i].size);
      dev->used -= dev->allocs[i].size;
      size_t after = (size_t)(dev->nallocs - i - 1);
      memmove(&dev->allocs[i], &dev->allocs[i + 1], after * sizeof *dev->allocs);
      dev->nallocs--;
      return 0;
    }
  return -1;
}

void sim_mem_info(const sim_device *dev, size_t *free_bytes, size_t *total_bytes) {
  if (free_bytes) *free_bytes = dev->desc.memory_total - dev->used;
  if (total_bytes) *total_bytes = dev->desc.memory_total;
}

/* ---- modules ---- */

sim_module *sim_module_load(const char *ptx, size_t len, char *err, size_t errlen) {
  if (!ptx) {
    sim_errf(err, errlen, "no PTX given");
    return NULL;
  }
  return sim_load(ptx, len, err, errlen);
}

/* A module whose memory the host or its kernels can change is never shared between loads.
 * .const variables named with "__" are the implementation's (NVRTC's math tables, such as
 * __cudart_i2opi_f, which C++ keeps from any name a program may declare): they stay read-only,
 * so a kernel that calls sinf keeps sharing its parse; any other .const one is a __constant__
 * the host may set (sim_module_global). */
int sim_module_is_shareable(const sim_module *m) {
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if (v->space == SIM_SP_GLOBAL) return 0;
    if (v->space == SIM_SP_CONST && strncmp(v->name, "__", 2) != 0) return 0;
  }
  return 1;
}

int sim_module_global(sim_module *m, const char *name, void **ptr, size_t *bytes) {
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if ((v->space == SIM_SP_CONST || v->space == SIM_SP_GLOBAL) && v->func < 0 && v->data &&
        strcmp(v->name, name) == 0) {
      *ptr = v->data;
      *bytes = v->size;
      return 0;
    }
  }
  return -1;
}

int sim_module_global_at(sim_module *m, int i, const char **name, void **ptr, size_t *bytes) {
  for (int k = 0; k < m->nvars; k++) {
    const sim_var *v = &m->vars[k];
    if ((v->space != SIM_SP_CONST && v->space != SIM_SP_GLOBAL) || v->func >= 0 || !v->data)
      continue;
    if (i-- > 0) continue;
    *name = v->name;
    *ptr = v->data;
    *bytes = v->size;
    return 0;
  }
  return -1;
}

int sim_module_kernel_count(const sim_module *m) { return m->nkernels; }

const char *sim_module_kernel_name(const sim_module *m, int i) {
  return i >= 0 && i < m->nkernels ? m->funcs[m->kernels[i].func].name : NULL;
}

sim_kernel *sim_module_kernel(sim_module *m, const char *name) {
  for (int i = 0; i < m->nkernels; i++)
    if (strcmp(m->funcs[m->kernels[i].func].name, name) == 0) return &m->kernels[i];
  return NULL;
}

size_t sim_kernel_static_shared(const sim_kernel *k) {
  return k->static_shared - k->reserved_shared;
}
size_t sim_kernel_local_bytes(const sim_kernel *k) { return k->local_bytes; }
int sim_kernel_param_count(const sim_kernel *k) { return k->mod->funcs[k->func].nparams; }
size_t sim_kernel_param_size(const sim_kernel *k, int i) {
  const sim_func *f = &k->mod->funcs[k->func];
  return i >= 0 && i < f->nparams ? f->params[i].size : 0;
}
