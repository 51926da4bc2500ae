/* sim_heap.c: the device heap behind malloc, free, new and delete in kernels.
 *
 * Stance: like the GPU's heap (cudaLimitMallocHeapSize, 8 MiB by default), one per device,
 * shared by every thread of every launch, and its blocks outlive the launch until a kernel frees
 * them or the device goes. Each block is a host allocation of its own, kept out of the launch's
 * allocation table (which workers read without a lock): an access the table does not cover is
 * looked up here, under the heap's lock, before it is called out of bounds. So ordinary accesses
 * cost nothing more, heap accesses cost a lookup, and an access past a heap block is caught and
 * named like any other. Blocks are counted at 16-byte granularity against the limit; the GPU's
 * allocator has its own overheads, so exactly where a full heap starts returning NULL differs.
 *
 * A freed block is not handed back to the host at once: it waits in a quarantine of the last
 * SIM_HEAP_QUARANTINE frees, with who freed it and where. Its addresses then stay out of reach of
 * any new allocation, so a later access through the stale pointer fails and is named a use after
 * free of that block (sim_heap_freed) instead of landing in, or being called out of bounds of,
 * whatever the host put there next. A block over SIM_HEAP_HOLD is remembered but its memory
 * handed back, so that the quarantine never holds more than 16 MiB: an access to it that fails
 * is still named, one that lands in a later allocation is not seen. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

#define SIM_HEAP_LIMIT ((size_t)8 << 20) /* cudaLimitMallocHeapSize's default */
#define SIM_HEAP_HEADER 16               /* host bytes before each block (see sim_heap_holds) */
#define SIM_HEAP_QUARANTINE 64           /* freed blocks remembered, with their story */
#define SIM_HEAP_HOLD ((size_t)256 << 10) /* the largest block whose memory is held back: at most
                                            64 x 256 KiB of host memory stays in quarantine */

typedef struct sim_freed {
  uint64_t base, size; /* the block's device address and bytes, as malloc returned it */
  void *raw;           /* its host memory, kept until the block leaves the quarantine; NULL for
                          a block larger than SIM_HEAP_HOLD, handed back at once */
  uint32_t serial;     /* its number, as in its label; 0 in an empty slot */
  char by[240];        /* "block (..), thread (..) at kernel.cu:6": the free that released it */
} sim_freed;

typedef struct sim_heap {
  pthread_mutex_t lock;  /* every field below */
  sim_alloc *blk;        /* live blocks, sorted by base; raw is the host pointer to free */
  int n, cap;
  size_t used;           /* bytes of live blocks, each rounded up to 16 */
  uint32_t serial;       /* number of the next block, for its label */
  sim_freed gone[SIM_HEAP_QUARANTINE]; /* the last frees, a ring */
  int next_gone;         /* slot of the next free, the oldest one once the ring is full */
  unsigned long long refused; /* mallocs that returned NULL, for the message of a null access */
  uint64_t refused_bytes;     /* the size the latest of them asked for */
} sim_heap;

/* The device's heap, created on first use; NULL only when the host is out of memory. Two workers
 * of one launch may call malloc first at once, hence the lock around creation. */
static sim_heap *heap_of(sim_device *dev, int create) {
  static pthread_mutex_t make = PTHREAD_MUTEX_INITIALIZER;
  sim_heap *h = __atomic_load_n(&dev->heap, __ATOMIC_ACQUIRE);
  if (h || !create) return h;
  pthread_mutex_lock(&make);
  h = dev->heap;
  if (!h && (h = calloc(1, sizeof *h)) != NULL) {
    pthread_mutex_init(&h->lock, NULL);
    __atomic_store_n(&dev->heap, h, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&make);
  return h;
}

void sim_heap_free(sim_heap *h) {
  if (!h) return;
  for (int i = 0; i < h->n; i++) free(h->blk[i].raw);
  for (int i = 0; i < SIM_HEAP_QUARANTINE; i++) free(h->gone[i].raw);
  free(h->blk);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

/* Index of the first block whose base is > a (so the block holding a, if any, is the one
 * before). */
static int upper(const sim_heap *h, uint64_t a) {
  int lo = 0, hi = h->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (h->blk[mid].base <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Room for one more block; 0, or -1 when the host is out of memory (the table is kept). */
static int grow(sim_heap *h) {
  if (h->n < h->cap) return 0;
  int cap = h->cap ? h->cap * 2 : 64;
  sim_alloc *b = realloc(h->blk, (size_t)cap * sizeof *b);
  if (!b) return -1;
  h->blk = b;
  h->cap = cap;
  return 0;
}

/* A freed block whose memory was handed back (over SIM_HEAP_HOLD) may share addresses with a
 * new block: its record goes, so that an access past the new block is called out of bounds of
 * it rather than a use of the old one. */
static void forget_reused(sim_heap *h, uint64_t p, size_t bytes) {
  for (int k = 0; k < SIM_HEAP_QUARANTINE; k++) {
    sim_freed *g = &h->gone[k];
    if (g->serial && !g->raw && p < g->base + g->size && g->base < p + bytes) g->serial = 0;
  }
}

uint64_t sim_heap_malloc(sim_device *dev, uint64_t bytes) {
  sim_heap *h = heap_of(dev, 1);
  if (!h) return 0;
  if (bytes > SIM_HEAP_LIMIT) {
    pthread_mutex_lock(&h->lock);
    h->refused++;
    h->refused_bytes = bytes;
    pthread_mutex_unlock(&h->lock);
    return 0;
  }
  size_t rounded = ((size_t)bytes + 15) / 16 * 16;
  if (!rounded) rounded = 16; /* malloc(0) and new T[0] still return a unique pointer */
  pthread_mutex_lock(&h->lock);
  uint64_t p = 0;
  void *raw = NULL;
  if (h->used + rounded <= SIM_HEAP_LIMIT && grow(h) == 0 &&
      (raw = aligned_alloc(16, SIM_HEAP_HEADER + rounded)) != NULL) {
    memset(raw, 0, SIM_HEAP_HEADER + rounded);
    p = (uint64_t)(uintptr_t)raw + SIM_HEAP_HEADER;
    int at = upper(h, p);
    memmove(&h->blk[at + 1], &h->blk[at], (size_t)(h->n - at) * sizeof *h->blk);
    sim_alloc *b = &h->blk[at];
    memset(b, 0, sizeof *b);
    b->base = b->origin = p;
    b->size = bytes;
    b->raw = raw;
    b->param = -1;
    b->serial = ++h->serial;
    snprintf(b->label, sizeof b->label, "heap block #%u (%llu bytes)", b->serial,
             (unsigned long long)bytes);
    h->n++;
    h->used += rounded;
    forget_reused(h, p, rounded);
  } else {
    h->refused++;
    h->refused_bytes = bytes;
  }
  pthread_mutex_unlock(&h->lock);
  return p;
}

int sim_heap_refusals(sim_device *dev, char *buf, size_t len) {
  sim_heap *h = heap_of(dev, 0);
  if (!h) return 0;
  pthread_mutex_lock(&h->lock);
  unsigned long long n = h->refused;
  if (n)
    snprintf(buf, len, "malloc or new in a kernel has returned NULL %llu time%s on this device, "
             "the latest for %llu bytes, with %zu of the heap's %zu bytes in use: check what "
             "malloc returns before using it, or make the heap larger (cudaDeviceSetLimit with "
             "cudaLimitMallocHeapSize on a GPU)", n, n == 1 ? "" : "s",
             (unsigned long long)h->refused_bytes, h->used, SIM_HEAP_LIMIT);
  pthread_mutex_unlock(&h->lock);
  return n != 0;
}

/* Moves block at into the quarantine, whose oldest block goes back to the host. */
static void quarantine(sim_heap *h, int at, const char *by) {
  sim_freed *g = &h->gone[h->next_gone];
  h->next_gone = (h->next_gone + 1) % SIM_HEAP_QUARANTINE;
  free(g->raw);
  g->base = h->blk[at].base;
  g->size = h->blk[at].size;
  g->raw = h->blk[at].raw;
  if (g->size > SIM_HEAP_HOLD) { /* its addresses may be reused; a stray access still fails */
    free(g->raw);
    g->raw = NULL;
  }
  g->serial = h->blk[at].serial;
  snprintf(g->by, sizeof g->by, "%s", by ? by : "");
}

/* The quarantined block whose bytes hold a (the most recent free, when several did), or NULL.
 * Called under the lock. */
static const sim_freed *gone_at(const sim_heap *h, uint64_t a) {
  for (int k = 1; k <= SIM_HEAP_QUARANTINE; k++) {
    const sim_freed *g = &h->gone[(h->next_gone - k + SIM_HEAP_QUARANTINE) % SIM_HEAP_QUARANTINE];
    uint64_t span = g->size ? g->size : 1;
    if (g->serial && a - g->base < span) return g;
  }
  return NULL;
}

int sim_heap_release(sim_device *dev, uint64_t ptr, const char *by) {
  sim_heap *h = heap_of(dev, 0);
  if (!h) return -1;
  pthread_mutex_lock(&h->lock);
  int at = upper(h, ptr) - 1, rc = -1;
  if (at >= 0 && h->blk[at].base == ptr) {
    quarantine(h, at, by);
    h->used -= h->blk[at].size ? (h->blk[at].size + 15) / 16 * 16 : 16;
    memmove(&h->blk[at], &h->blk[at + 1], (size_t)(h->n - at - 1) * sizeof *h->blk);
    h->n--;
    rc = 0;
  }
  pthread_mutex_unlock(&h->lock);
  return rc;
}

int sim_heap_freed(sim_device *dev, uint64_t a, char *buf, size_t len) {
  sim_heap *h = heap_of(dev, 0);
  if (!h) return 0;
  pthread_mutex_lock(&h->lock);
  const sim_freed *g = gone_at(h, a);
  if (g)
    snprintf(buf, len, "byte %llu of heap block #%u (%llu bytes, from malloc or new in a kernel), "
             "freed by %s", (unsigned long long)(a - g->base), g->serial,
             (unsigned long long)g->size, g->by[0] ? g->by : "an earlier free");
  pthread_mutex_unlock(&h->lock);
  return g != NULL;
}

/* NVRTC's new[] of a class with a constructor or destructor calls malloc for the elements alone
 * and stores their count in the 8 bytes before the pointer malloc returned, which on the GPU lie
 * in the allocator's header of the block. So each block has a 16-byte header of host memory, and
 * an aligned 8-byte access to its last 8 bytes is allowed; any other access there (an int at
 * index -1, say) is still out of bounds. */

int sim_heap_holds(sim_device *dev, uint64_t a, uint64_t len) {
  sim_heap *h = heap_of(dev, 0);
  if (!h) return 0;
  pthread_mutex_lock(&h->lock);
  int at = upper(h, a);
  const sim_alloc *b = at > 0 ? &h->blk[at - 1] : NULL;
  int in = b && a - b->base < b->size && b->size - (a - b->base) >= len;
  if (!in && at < h->n && len == 8 && h->blk[at].base - 8 == a) in = 1; /* new[]'s element count */
  pthread_mutex_unlock(&h->lock);
  return in;
}

int sim_heap_nearest(sim_device *dev, uint64_t a, sim_alloc *out) {
  sim_heap *h = heap_of(dev, 0);
  if (!h) return 0;
  pthread_mutex_lock(&h->lock);
  int at = upper(h, a), best = -1;
  uint64_t bd = ~0ull;
  for (int i = at - 1; i <= at; i++) {
    if (i < 0 || i >= h->n) continue;
    const sim_alloc *b = &h->blk[i];
    uint64_t d = a < b->base                ? b->base - a
                 : a >= b->base + b->size ? a - (b->base + b->size) + 1
                                          : 0;
    if (d < bd) {
      bd = d;
      best = i;
    }
  }
  if (best >= 0) *out = h->blk[best];
  pthread_mutex_unlock(&h->lock);
  return best >= 0;
}
