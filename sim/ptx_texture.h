/* ptx_texture.h: the texture decoder (ptx_texture.c), for ptx_inst.c's table. */
#ifndef CUDALAB_PTX_TEXTURE_H
#define CUDALAB_PTX_TEXTURE_H

#include "ptx_emit.h"

/* tex (ptx_texture.c), which reads its own operands: its address operand [handle, {coords}] is
 * no plain address. */
void ptx_tex_inst(ictx *c);

#endif
