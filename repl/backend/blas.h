/* blas.h: the matrix-multiply libraries behind cuda.blas: cuBLAS for the cuda backend, a host
 * BLAS from the system's packages for the simulator, both loaded at run time (dlopen) so that
 * cudalab starts and works without them; and the modelled H200 time of a cuBLAS call, which the
 * simulator charges to its clock. Used by backend_cuda.c, backend_sim.c and bind_blas.c. */
#ifndef CUDALAB_BLAS_H
#define CUDALAB_BLAS_H

#include "backend.h"

/* cuBLAS from the toolkit whose NVRTC this process loaded (else the loader's search path). */
int blas_cublas_gemm(const cl_gemm *g, cl_err *err);
const char *blas_cublas_name(void);

/* The host's BLAS (OpenBLAS, else the reference BLAS): g's pointers are host memory. */
int blas_host_gemm(const cl_gemm *g, cl_err *err);
const char *blas_host_name(void);

/* Microseconds an NVIDIA H200 takes for g with cuBLAS, interpolated from the times measured by
 * bench/model/cublas.lua (repl/backend/h200_cublas.h); and that table's provenance. */
double blas_model_us(const cl_gemm *g);
const char *blas_model_source(void);

#endif
