/* check.h: the one assertion the C unit tests share. CHECK prints "ok - name" or
 * "not ok - name (file:line)", the lines tests/run.sh counts; main returns failures != 0. */
#ifndef CUDALAB_TEST_CHECK_H
#define CUDALAB_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(name, cond)                                                              \
  do {                                                                                 \
    if (cond) printf("ok - %s\n", name);                                               \
    else { printf("not ok - %s (%s:%d)\n", name, __FILE__, __LINE__); failures++; }    \
  } while (0)

#endif
