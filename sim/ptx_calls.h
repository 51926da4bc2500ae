/* ptx_calls.h: the parser's call-graph layout (ptx_calls.c), for ptx_parse.c. */
#ifndef CUDALAB_PTX_CALLS_H
#define CUDALAB_PTX_CALLS_H

#include "sim_int.h"

/* Marks stacked functions (on a call-graph cycle, or address-taken), lays out their frames and
 * retargets their calls and returns; before constants are resolved, which relies on it for
 * frame-relative locals. */
void ptx_calls_mark(sim_module *m);

/* Whether function f (a kernel), or a function it may call, orders memory between threads by an
 * acquire, a release or a fence (sim_kernel.orders); yes when out of memory to find out. */
int ptx_calls_orders(const sim_module *m, int f);

#endif
