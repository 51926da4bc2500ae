/* trace.h: start-up's phases as timestamps on stderr, for make bench's breakdown (bench/startup.c)
 * and for anyone asking where start-up goes: CUDALAB_STARTUP_TRACE=1 cudalab ... Used by main.c,
 * console.c, engine.c and interp.c; with the variable unset a mark costs one getenv. */
#ifndef CUDALAB_TRACE_H
#define CUDALAB_TRACE_H

/* Writes "cudalab-startup: PHASE SECONDS" (CLOCK_MONOTONIC, to the nanosecond) to stderr when
 * CUDALAB_STARTUP_TRACE is set: the moment PHASE ended. */
void trace_mark(const char *phase);

#endif
