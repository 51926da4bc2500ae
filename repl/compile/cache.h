/* cache.h: the kernel cache. A compile that has been done before (same source, options, target
 * architecture and NVRTC version) is read back instead of run again: NVRTC takes 20-120 ms, a
 * cache hit well under one. Entries live in $XDG_CACHE_HOME/cudalab/ (private to the user) and
 * in memory for this process. Used through cache_compile by bind_kernel.c, bind_debugger.c and
 * builtin.c (cudalab's own kernels), and by bind_cache.c (cuda.cache). */
#ifndef CUDALAB_CACHE_H
#define CUDALAB_CACHE_H

#include <stddef.h>

#include "nvrtc.h"

typedef struct cache_stats {
  char dir[4096];        /* "" when the cache lives in memory only */
  int disk;              /* entries are written to dir */
  size_t entries, bytes; /* on disk (or in memory when !disk) */
  size_t hits, misses;   /* this process */
} cache_stats;

/* nvrtc_compile with the cache in front: same contract. A corrupt entry is recompiled with a
 * one-line notice on stderr; a cache that cannot be written works from memory, with one notice. */
int cache_compile(const char *src, const char *file_name, const char *arch,
                  const char *const *options, int noptions, const char *const *names, int nnames,
                  nvrtc_output *out, char **errmsg);
void cache_stats_get(cache_stats *out);
/* Removes every entry (disk and memory); returns how many files were removed, -1 on error. */
int cache_clear(void);

#endif
