/* sim_lanetags.h: register-lane tags, the marks a check that follows values through a warp's
 * registers lane by lane keeps on them; used by sim_nan.c and sim_stale.c. */
#ifndef CUDALAB_SIM_LANETAGS_H
#define CUDALAB_SIM_LANETAGS_H

#include <stddef.h>
#include <stdint.h>

/* Where a tag sits: the first member of each check's tag, whose own fields follow. */
typedef struct sim_lanetag {
  int32_t slot;  /* a register row, or a slot the check numbers past the rows (a predicate) */
  uint8_t lane;  /* the lane holding the value */
  uint64_t bits; /* the register's value when tagged: another value there voids the tag */
} sim_lanetag;

typedef struct sim_lanetags {
  unsigned char *t; /* the tags, `size` bytes each, in no order; one at most per slot and lane */
  size_t size;      /* bytes a tag: the check's own type */
  int n, cap;       /* held, allocated */
  uint32_t *lanes;  /* per slot: the lanes with a tag there */
  int nslots;       /* slots [0, nslots) */
} sim_lanetags;

int sim_lanetags_init(sim_lanetags *s, int nslots, size_t size);
void sim_lanetags_free(sim_lanetags *s);
void sim_lanetags_clear(sim_lanetags *s);
void sim_lanetags_untag(sim_lanetags *s, int slot, uint32_t em);
void sim_lanetags_add(sim_lanetags *s, const void *tag, int slot, int l, uint64_t bits);
void *sim_lanetags_room(void *p, int n, int *cap, int first, size_t size);

static inline sim_lanetag *sim_lanetags_at(const sim_lanetags *s, int i) {
  return (sim_lanetag *)(s->t + (size_t)i * s->size);
}

/* The tag on lane l of slot, if its register still holds bits there; NULL (mostly by the mask). */
static inline void *sim_lanetags_find(const sim_lanetags *s, int slot, int l, uint64_t bits) {
  if ((unsigned)slot >= (unsigned)s->nslots || !(s->lanes[slot] >> l & 1)) return NULL;
  for (int i = 0; i < s->n; i++) {
    sim_lanetag *t = sim_lanetags_at(s, i);
    if (t->slot == slot && t->lane == l) return t->bits == bits ? t : NULL;
  }
  return NULL;
}

#endif
