/* nvrtc_util.h: helpers shared by the simulator's test programs: compile CUDA C with NVRTC to
 * PTX, load it into the simulator, and print TAP-like "ok - name" / "not ok - name: why" lines. */
#ifndef CUDALAB_TESTS_SIM_NVRTC_UTIL_H
#define CUDALAB_TESTS_SIM_NVRTC_UTIL_H

#include <stddef.h>

#include "sim.h"

/* PTX for src (malloc'd, caller frees), compiled with -arch=compute_90 -lineinfo; NULL on a
 * compile error, after printing the log. */
char *tu_ptx(const char *src);
/* tu_ptx + sim_module_load; NULL (and a "not ok" line) on failure. */
sim_module *tu_module(const char *test, const char *src);
sim_kernel *tu_kernel(sim_module *m, const char *name); /* by unmangled-substring */

/* Reports one check; returns cond. */
int tu_check(int cond, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int tu_failures(void);

/* Launches with 1D dims, threads = host threads (0 = all), returns sim_launch's result. */
int tu_launch(sim_device *dev, sim_kernel *k, unsigned grid, unsigned block, size_t shm, void **args, int threads,
              sim_stats *st, char *err, size_t errlen);

#endif
