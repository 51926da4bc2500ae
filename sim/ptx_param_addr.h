/* ptx_param_addr.h: taking a parameter's address (ptx_param_addr.c), for the instruction
 * decoder (ptx_inst.c: mov and cvta) and the parser (ptx_parse.c: a function's prologue, the
 * module's layout). */
#ifndef CUDALAB_PTX_PARAM_ADDR_H
#define CUDALAB_PTX_PARAM_ADDR_H

#include "ptx_emit.h"

/* The row holding the address of c's operand i, a parameter's name: for a kernel parameter its
 * .param address, which the kernel's loads through a register then reach; for a device
 * function's own parameter the local address of its copy. Fails the load for any other. */
int ptx_param_addr(ictx *c, int i);

/* At the start of device function fi's body (the cursor after its '{'): for each parameter
 * whose address the body takes, a local variable to hold its copy, and the instructions that
 * copy it there, which run first on every call. */
void ptx_param_prologue(ptx_parser *p, int fi);

/* Once the module is laid out (constant rows resolved, stacked functions known and made
 * frame-relative): places the copies of the functions that are not stacked in the region of
 * parameter copies (sim_lcopy) and makes their addresses relative to SIM_SR_LCOPY. */
void ptx_param_copies_place(ptx_parser *p);

#endif
