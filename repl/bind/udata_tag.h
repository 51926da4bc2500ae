/* udata_tag.h: tags that let the launch path recognise cudalab's own userdata (arrays, host
 * buffers, launch records) without looking up a metatable, which costs four calls into Lua per
 * argument on every launch.
 *
 * A tag is the object's address mixed with a secret drawn at start-up. The check reads the tag
 * only after lua_rawlen has confirmed the block is as large as the struct, and Lua code cannot
 * write it: no userdata reachable from Lua holds bytes a learner chooses at an address they know
 * together with the secret, so a forged or stale object is never taken for a real one. */
#ifndef CUDALAB_UDATA_TAG_H
#define CUDALAB_UDATA_TAG_H

#include <stdint.h>

typedef enum udata_kind { UDATA_BUFFER = 1, UDATA_LAUNCH = 2 } udata_kind;

extern uint64_t udata_secret; /* set once by udata_tag_init */

/* Draws the secret; called once before any tagged object is made. */
void udata_tag_init(void);

static inline uint64_t udata_tag(const void *p, udata_kind kind) {
  return ((uint64_t)(uintptr_t)p ^ udata_secret) * 0x9e3779b97f4a7c15ULL + (uint64_t)kind;
}

#endif
