/* siphash.c: SipHash-2-4, written from its specification ("SipHash: a fast short-input PRF",
 * Aumasson and Bernstein, 2012): two compression rounds per 8-byte word, four finalisation
 * rounds. Chosen over HMAC-SHA-256 for the kernel cache because it is a tenth of the code and
 * runs at about a byte per cycle, so sealing and checking an entry keeps a cache hit well under
 * a millisecond; 64 bits of tag are plenty against forgery by someone who cannot read the key.
 * tests/unit/test_siphash.c checks it against the specification's published vectors. */
#include <string.h>

#include "siphash.h"

typedef struct sip {
  uint64_t v0, v1, v2, v3;
} sip;

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

/* Little-endian load of n <= 8 bytes, whatever the host's byte order. */
static uint64_t load_le(const unsigned char *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* One SipRound, laid out as the authors' reference SIPROUND: four lines of add-rotate-xor, each
 * step one comma-separated expression. The exception to one statement per line: fourteen lines
 * would hide the shape a reader checks it against. */
static void sip_round(sip *s) {
  s->v0 += s->v1, s->v1 = rotl(s->v1, 13), s->v1 ^= s->v0, s->v0 = rotl(s->v0, 32);
  s->v2 += s->v3, s->v3 = rotl(s->v3, 16), s->v3 ^= s->v2;
  s->v0 += s->v3, s->v3 = rotl(s->v3, 21), s->v3 ^= s->v0;
  s->v2 += s->v1, s->v1 = rotl(s->v1, 17), s->v1 ^= s->v2, s->v2 = rotl(s->v2, 32);
}

/* One message word: c = 2 compression rounds. */
static void sip_word(sip *s, uint64_t m) {
  s->v3 ^= m;
  sip_round(s);
  sip_round(s);
  s->v0 ^= m;
}

uint64_t siphash24(const unsigned char key[SIPHASH_KEY_BYTES], const void *data, size_t n) {
  uint64_t k0 = load_le(key, 8), k1 = load_le(key + 8, 8);
  sip s = {k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
           k1 ^ 0x7465646279746573ull};
  const unsigned char *p = data;
  size_t whole = n - n % 8;
  for (size_t i = 0; i < whole; i += 8) sip_word(&s, load_le(p + i, 8));
  /* The last word: the remaining bytes, and the length's low byte on top. */
  sip_word(&s, load_le(p + whole, n % 8) | (uint64_t)(n & 0xff) << 56);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; i++) sip_round(&s); /* d = 4 finalisation rounds */
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
