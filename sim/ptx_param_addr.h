/* ptx_param_addr.h: taking a parameter's address (ptx_param_addr.c), for the instruction
 * decoder (ptx_inst.c: mov and cvta). */
#ifndef CUDALAB_PTX_PARAM_ADDR_H
#define CUDALAB_PTX_PARAM_ADDR_H

#include "ptx_emit.h"

/* The row holding the address of c's operand i, a parameter's name: for a kernel parameter its
 * .param address, which the kernel's loads through a register then reach. Fails the load for
 * any other parameter. */
int ptx_param_addr(ictx *c, int i);

#endif
