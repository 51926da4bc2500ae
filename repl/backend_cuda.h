/* backend_cuda.h: start-up hooks of the GPU backend, used by backend.c when it picks a backend.
 * The operations themselves are reached through cl_backend_cuda (backend.h). */
#ifndef CUDALAB_BACKEND_CUDA_H
#define CUDALAB_BACKEND_CUDA_H

#include "backend.h"

/* Starts creating the CUDA context in a background thread; returns at once. */
void backend_cuda_start(void);
/* Waits for that thread: 0 when the GPU is usable, else -1 with the reason in err. */
int backend_cuda_usable(cl_err *err);

#endif
