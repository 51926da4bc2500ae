/* siphash.h: SipHash-2-4, the keyed hash (a MAC for short messages) of Aumasson and Bernstein.
 * Used by cache.c to seal kernel-cache entries with a key only their owner holds, and by
 * gpu_slots.c (under a fixed key) to turn a slot key that is no plain name into one. */
#ifndef CUDALAB_SIPHASH_H
#define CUDALAB_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_BYTES 16

/* The 64-bit SipHash-2-4 of n bytes under a 16-byte key (read as two little-endian words, as
 * the specification does, so the published test vectors apply on any host). */
uint64_t siphash24(const unsigned char key[SIPHASH_KEY_BYTES], const void *data, size_t n);

#endif
