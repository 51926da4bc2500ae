/* check.h: the one assertion the C unit tests share. CHECK prints "ok - name" or
 * "not ok - name (file:line)", the lines tests/run.sh counts; main returns failures != 0.
 * PLAN(n), first thing in main, declares how many checks the program makes: tests/run.sh fails
 * a program that makes fewer (it stopped early) or more (the plan is stale). */
#ifndef CUDALAB_TEST_CHECK_H
#define CUDALAB_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define PLAN(n) printf("1..%d\n", (int)(n))

#define CHECK(name, cond)                                                              \
  do {                                                                                 \
    if (cond) printf("ok - %s\n", name);                                               \
    else { printf("not ok - %s (%s:%d)\n", name, __FILE__, __LINE__); failures++; }    \
  } while (0)

#endif
