/* sim_module_memo.c: see sim_module_memo.h. A small table searched linearly: one run of the
 * REPL loads tens of distinct modules, and a lookup (hash, then the whole text compared) costs
 * far less than the parse it replaces. Entries nobody holds are evicted, least recently used
 * first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_module_memo.h"

#define MEMO_ENTRIES 32

typedef struct memo_entry {
  sim_module *mod; /* NULL: a free slot */
  char *ptx;       /* the text it was parsed from, compared in full on a hit */
  size_t len;
  uint64_t hash;
  int holders;     /* loads not yet released */
  uint64_t used;   /* when it was last acquired, for eviction */
} memo_entry;

static memo_entry memo[MEMO_ENTRIES];
static uint64_t clock_ticks;

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
  return h;
}

static void drop(memo_entry *e) {
  sim_module_free(e->mod);
  free(e->ptx);
  memset(e, 0, sizeof *e);
}

/* A slot for a new entry: a free one, else the least recently used that nobody holds. */
static memo_entry *free_slot(void) {
  memo_entry *victim = NULL;
  for (int i = 0; i < MEMO_ENTRIES; i++) {
    memo_entry *e = &memo[i];
    if (!e->mod) return e;
    if (e->holders == 0 && (!victim || e->used < victim->used)) victim = e;
  }
  if (victim) drop(victim);
  return victim;
}

sim_module *sim_memo_acquire(const char *ptx, size_t len, char *err, size_t errlen) {
  uint64_t h = fnv1a(ptx, len);
  for (int i = 0; i < MEMO_ENTRIES; i++) {
    memo_entry *e = &memo[i];
    if (e->mod && e->hash == h && e->len == len && memcmp(e->ptx, ptx, len) == 0) {
      e->holders++;
      e->used = ++clock_ticks;
      return e->mod;
    }
  }
  sim_module *m = sim_module_load(ptx, len, err, errlen);
  if (!m || !sim_module_is_shareable(m)) return m;
  memo_entry *e = free_slot();
  char *copy = e ? malloc(len ? len : 1) : NULL;
  if (!copy) return m; /* no room: this load keeps its own module, which is fine */
  memcpy(copy, ptx, len);
  *e = (memo_entry){m, copy, len, h, 1, ++clock_ticks};
  return m;
}

void sim_memo_release(sim_module *m) {
  if (!m) return;
  for (int i = 0; i < MEMO_ENTRIES; i++)
    if (memo[i].mod == m) {
      memo[i].holders--;
      return;
    }
  sim_module_free(m); /* not shared */
}
