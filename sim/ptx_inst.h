/* ptx_inst.h: the instruction decoder (ptx_inst.c), for ptx_parse.c. */
#ifndef CUDALAB_PTX_INST_H
#define CUDALAB_PTX_INST_H

#include "ptx_state.h"

/* Parses one instruction (optionally guarded) at the cursor, through its ';'. */
void ptx_parse_inst(ptx_parser *p);

#endif
