/* ptx_bind.h: binds each ld, st and atom whose address is computed from one variable's address
 * to that variable (sim_inst.aux = its index + 1; 0 when unbound), once the module is laid out
 * (ptx_bind.c says how, and why). const_var[i]: the variable whose address constant row
 * const_first + i holds, or -1. */
#ifndef CUDALAB_PTX_BIND_H
#define CUDALAB_PTX_BIND_H

#include "sim_int.h"

void ptx_bind_accesses(sim_module *m, const int *const_var);

#endif
