/* trace.c: start-up's phase marks (trace.h). The clock is CLOCK_MONOTONIC, which the process
 * that started cudalab can read too (bench/startup.c reads it just before fork), so the first
 * mark also tells how long the process took to start: exec, the dynamic loader, relocations. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "trace.h"

void trace_mark(const char *phase) {
  if (!getenv("CUDALAB_STARTUP_TRACE")) return;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  fprintf(stderr, "cudalab-startup: %s %lld.%09ld\n", phase, (long long)t.tv_sec, t.tv_nsec);
}
