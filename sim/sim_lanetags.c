/* sim_lanetags.c: register-lane tags, for the checks that follow a value through a warp's
 * registers lane by lane (a NaN the kernel made, sim_nan.c; what a shuffle read from a lane not
 * running it, sim_stale.c). Tags are few, so a warp keeps them in one list, with a mask per slot
 * of the lanes holding one, not in a shadow of the register file, which would double every
 * warp's registers. A tag keeps the bits its register held, so that a write the check does not
 * see voids it: a lost tag, or one past the cap, may hide a finding, never make one up. */
#include <stdlib.h>
#include <string.h>

#include "sim_lanetags.h"

/* s empty, for slots [0, nslots) and tags of `size` bytes; -1 out of memory (free it still). */
int sim_lanetags_init(sim_lanetags *s, int nslots, size_t size) {
  *s = (sim_lanetags){.size = size, .nslots = nslots};
  s->lanes = calloc((size_t)nslots, sizeof *s->lanes);
  return s->lanes ? 0 : -1;
}

void sim_lanetags_free(sim_lanetags *s) { /* what s holds, not s */
  free(s->t);
  free(s->lanes);
}

void sim_lanetags_clear(sim_lanetags *s) { /* the masks are exact: only the tags' slots to clear */
  for (int i = 0; i < s->n; i++) s->lanes[sim_lanetags_at(s, i)->slot] = 0;
  s->n = 0;
}

/* Drops the tags of lanes em of slot (which an instruction has just written). */
void sim_lanetags_untag(sim_lanetags *s, int slot, uint32_t em) {
  if ((unsigned)slot >= (unsigned)s->nslots || !(s->lanes[slot] & em)) return;
  uint32_t left = s->lanes[slot] & em; /* one tag a lane: done when these are gone */
  for (int i = 0; i < s->n && left; i++) {
    sim_lanetag *t = sim_lanetags_at(s, i);
    if (t->slot != slot || !(em >> t->lane & 1)) continue;
    left &= ~(1u << t->lane);
    if (--s->n != i) memcpy(t, sim_lanetags_at(s, s->n), s->size);
    i--; /* the last tag, moved to i, is looked at next */
  }
  s->lanes[slot] &= ~em;
}

/* Tags lane l of slot (holding bits) with a copy of *tag, not s's own (they move); replaces any. */
void sim_lanetags_add(sim_lanetags *s, const void *tag, int slot, int l, uint64_t bits) {
  if ((unsigned)slot >= (unsigned)s->nslots) return;
  if (s->lanes[slot] >> l & 1) sim_lanetags_untag(s, slot, 1u << l);
  unsigned char *p = sim_lanetags_room(s->t, s->n, &s->cap, 64, s->size);
  if (!p) return;
  s->t = p;
  sim_lanetag *t = sim_lanetags_at(s, s->n++);
  memcpy(t, tag, s->size);
  *t = (sim_lanetag){slot, (uint8_t)l, bits};
  s->lanes[slot] |= 1u << l;
}

/* p (n elements of `size` bytes, *cap allocated) with room for one more: p, or p moved with *cap
 * doubled from `first` up to SIM_LANETAGS_MAX; NULL when there is none (p is then kept). */
#define SIM_LANETAGS_MAX 4096
void *sim_lanetags_room(void *p, int n, int *cap, int first, size_t size) {
  if (n < *cap) return p;
  int c = *cap ? 2 * *cap : first;
  void *q = c <= SIM_LANETAGS_MAX ? realloc(p, (size_t)c * size) : NULL;
  if (q) *cap = c;
  return q;
}
