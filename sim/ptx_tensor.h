/* ptx_tensor.h: the tensor decoder (ptx_tensor.c), for ptx_inst.c's table. */
#ifndef CUDALAB_PTX_TENSOR_H
#define CUDALAB_PTX_TENSOR_H

#include "ptx_emit.h"

/* wmma, mma, ldmatrix and cp.async (ptx_tensor.c); operands already parsed into c. */
void ptx_tensor_inst(ictx *c);

#endif
