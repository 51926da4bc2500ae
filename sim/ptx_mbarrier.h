/* ptx_mbarrier.h: the decoder of mbarrier and cp.async.mbarrier.arrive (ptx_mbarrier.c), for
 * ptx_inst.c's table and ptx_tensor.c's cp.async. */
#ifndef CUDALAB_PTX_MBARRIER_H
#define CUDALAB_PTX_MBARRIER_H

#include "ptx_emit.h"

/* mbarrier.* (cuda::barrier); operands already parsed into c. */
void ptx_mbarrier_inst(ictx *c);
/* cp.async.mbarrier.arrive{.noinc}.shared.b64 [addr] (cuda::memcpy_async with a barrier). */
void ptx_mbarrier_cpasync(ictx *c);

#endif
