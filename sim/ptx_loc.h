/* ptx_loc.h: where each instruction was written (ptx_loc.c), for the parser. */
#ifndef CUDALAB_PTX_LOC_H
#define CUDALAB_PTX_LOC_H

#include "ptx_state.h"

/* .file N "path": whether the file is one of the toolkit's headers, kept before the path is
 * cut to its last part */
void ptx_loc_file(ptx_parser *p, int n, const char *path);
/* a .loc read: it becomes the current one */
void ptx_loc_add(ptx_parser *p, const ptx_loc *loc);
/* instruction pc was emitted under the current .loc */
void ptx_loc_inst(ptx_parser *p, int pc);
/* once every .file is read: an instruction inlined from a toolkit header takes the line of the
 * learner's code it was inlined into */
void ptx_loc_settle(ptx_parser *p);

#endif
