/* backend_cuda.h: what the GPU backend offers outside cl_backend: choosing a GPU for a session
 * (backend.c's backend_gpu_admit, for cuda.gpu_admit), and the launch loop benchmarks hold a
 * Lua loop against (bench_hooks.c). The operations themselves are reached through
 * cl_backend_cuda (backend.h). */
#ifndef CUDALAB_BACKEND_CUDA_H
#define CUDALAB_BACKEND_CUDA_H

#include "backend.h"

/* Chooses a GPU and takes a session slot on it without creating a context, and makes it the
 * device the context will be created on; see backend_gpu_admit (backend.h). The slot is held
 * until the process ends; asked again, it reports the slot it holds. */
void backend_cuda_admit(const cl_gpu_request *req, cl_gpu_admission *out);

/* The launch call a C loop is made of: the runtime's cudaLaunchKernel, or the driver's
 * cuLaunchKernel, which is what this backend's own launches call. */
typedef enum backend_cuda_api { BACKEND_CUDA_RUNTIME, BACKEND_CUDA_DRIVER } backend_cuda_api;

/* For benchmarks only, not a second launch path: fn launched `times` times from a plain C loop
 * of the call `api` names, arguments as given (fn must be a cl_backend_cuda function). */
int backend_cuda_launch_loop(cl_function *fn, cl_dim3 grid, cl_dim3 block, size_t shared,
                             void **args, long times, backend_cuda_api api, cl_err *err);

#endif
