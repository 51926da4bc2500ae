/* sim_load.h: the loader (sim_load.c), for sim_device.c's sim_module_load. */
#ifndef CUDALAB_SIM_LOAD_H
#define CUDALAB_SIM_LOAD_H

#include "sim_int.h"

/* Parses ptx and runs the load-time passes. Returns the module, or NULL with err filled. */
sim_module *sim_load(const char *ptx, size_t len, char *err, size_t errlen);

#endif
