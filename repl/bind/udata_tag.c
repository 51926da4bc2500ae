/* udata_tag.c: the secret behind udata_tag.h. */
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "udata_tag.h"

uint64_t udata_secret;

void udata_tag_init(void) {
  if (udata_secret) return;
  uint64_t s = 0;
  if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s || s == 0) {
    struct timespec t; /* no entropy yet (early boot): unpredictable enough for a tag */
    clock_gettime(CLOCK_MONOTONIC, &t);
    s = ((uint64_t)t.tv_nsec << 32) ^ (uint64_t)t.tv_sec ^ ((uint64_t)getpid() << 16) ^
        (uint64_t)(uintptr_t)&t;
  }
  udata_secret = s | 1;
}
