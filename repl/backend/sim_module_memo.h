/* sim_module_memo.h: parsed simulator modules kept by their PTX text, so that loading a kernel
 * the kernel cache already holds skips the parse too (the cache holds the PTX; this holds what
 * the simulator makes of it). Only modules without writable state are shared: a module with
 * __device__ variables gets a fresh copy per load, as a GPU gives each loaded library its own. */
#ifndef CUDALAB_SIM_MODULE_MEMO_H
#define CUDALAB_SIM_MODULE_MEMO_H

#include <stddef.h>

#include "sim.h"

/* The parsed module for this PTX: a shared one when it was parsed before, else a new one.
 * NULL with err filled when the simulator cannot run it. */
sim_module *sim_memo_acquire(const char *ptx, size_t len, char *err, size_t errlen);
/* Gives back a module from sim_memo_acquire; a shared one stays for the next load. */
void sim_memo_release(sim_module *mod);

#endif
