/* sim_regions.c: freed device arrays of a megabyte or more keep their pages for the next array of
 * the same size, the way CUDA's own allocators and caching allocators keep device memory.
 *
 * Why: a lesson makes and drops the same arrays again and again (`b = cuda.ones(N)` in every
 * try of a task, N = 10,000,000), and each fresh mapping pays a page fault per 4 KiB page when it
 * is first written: about 340,000 faults for one learner's graded work, a fifth of its CPU
 * time, where on a virtual machine a fault costs microseconds.
 *
 * Stance: a kept region is handed out only for the same mapped size, and always zeroed, as a
 * fresh mapping is: the pages still resident are cleared with memset (cheap: they are mapped
 * already), the rest are dropped with MADV_DONTNEED, after which they read as zeros. mincore
 * tells the two apart, so a 1 GiB array of which a kernel touched a page costs a page to clear.
 * A kept region is marked MADV_FREE: the kernel may take its pages back when memory runs short
 * (a class server running many sessions), and what it took reads as zeros, the rest as it was.
 * At most SIM_KEEP_REGIONS regions and KEEP_BYTES bytes are kept, the oldest given back first;
 * all of them go back before a mapping is refused (an address-space limit). A pointer a kernel
 * kept into a freed array then reads whatever array reuses its pages, as it does on a GPU, whose
 * allocators reuse memory too; the oldest region of a size is reused first, so that a stale
 * pointer meets new data as late as the kept regions allow. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim_int.h"

#define KEEP_BYTES ((size_t)512 << 20)

/* Clears bytes [0, len) of the page-aligned region p: memset where pages are resident, dropped
 * where not (a page swapped out is not resident, and is dropped too). */
static void zero_region(unsigned char *p, size_t len) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  unsigned char vec[4096];
  for (size_t off = 0; off < len; off += sizeof vec * page) {
    size_t span = len - off < sizeof vec * page ? len - off : sizeof vec * page;
    size_t pages = (span + page - 1) / page;
    if (mincore(p + off, span, vec) != 0) {
      madvise(p + off, span, MADV_DONTNEED);
      continue;
    }
    for (size_t i = 0; i < pages;) {
      size_t j = i;
      while (j < pages && (vec[j] & 1) == (vec[i] & 1)) j++;
      unsigned char *at = p + off + i * page;
      size_t n = (j - i) * page;
      if (at + n > p + len) n = (size_t)(p + len - at);
      if (vec[i] & 1) memset(at, 0, n);
      else madvise(at, n, MADV_DONTNEED);
      i = j;
    }
  }
}

/* Takes region i out of the list (its pages stay mapped). */
static void forget(sim_regions *r, int i) {
  r->bytes -= r->kept[i].bytes;
  memmove(&r->kept[i], &r->kept[i + 1], (size_t)(r->n - i - 1) * sizeof r->kept[0]);
  r->n--;
}

void *sim_region_take(sim_device *dev, size_t mapped) {
  sim_regions *r = &dev->regions;
  for (int i = 0; i < r->n; i++) { /* the oldest first */
    if (r->kept[i].bytes != mapped) continue;
    void *p = r->kept[i].p;
    forget(r, i);
    zero_region(p, mapped);
    return p;
  }
  return NULL;
}

void sim_region_keep(sim_device *dev, void *p, size_t mapped) {
  sim_regions *r = &dev->regions;
  if (mapped > KEEP_BYTES) {
    munmap(p, mapped);
    return;
  }
  while (r->n > 0 && (r->n == SIM_KEEP_REGIONS || r->bytes + mapped > KEEP_BYTES)) {
    munmap(r->kept[0].p, r->kept[0].bytes);
    forget(r, 0);
  }
  madvise(p, mapped, MADV_FREE); /* advice: where it fails, the pages are simply kept */
  r->kept[r->n].p = p;
  r->kept[r->n].bytes = mapped;
  r->n++;
  r->bytes += mapped;
}

int sim_regions_release(sim_device *dev) {
  sim_regions *r = &dev->regions;
  int had = r->n;
  for (int i = 0; i < r->n; i++) munmap(r->kept[i].p, r->kept[i].bytes);
  r->n = 0;
  r->bytes = 0;
  return had;
}
