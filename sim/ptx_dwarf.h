/* ptx_dwarf.h: the DWARF reader (ptx_dwarf.c), for ptx_parse.c. */
#ifndef CUDALAB_PTX_DWARF_H
#define CUDALAB_PTX_DWARF_H

#include "ptx_state.h"

/* The DWARF reader (ptx_dwarf.c). begin looks for debug information in the text and, when there
 * is some, sets p->dw; the parser then hands it each register declaration, label and .section
 * as it meets them (ptx_dwarf_section returns 0 for a section it does not keep, which the parser
 * skips). finish builds the module's sim_dbginfo once everything is laid out; drop frees what
 * was collected, after finish or after a failed parse. Debug information that cannot be read
 * never fails the load: the module then has a sim_dbginfo that says why it has no names. */
void ptx_dwarf_begin(ptx_parser *p, const char *ptx, size_t len);
void ptx_dwarf_reg(ptx_parser *p, const ptx_tok *name, int type, int row, int count);
void ptx_dwarf_label(ptx_parser *p, const ptx_tok *name, int pc);
int ptx_dwarf_section(ptx_parser *p);
void ptx_dwarf_finish(ptx_parser *p);
void ptx_dwarf_drop(ptx_parser *p);

#endif
