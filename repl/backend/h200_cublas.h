/* h200_cublas.h: cuBLAS square matrix multiplies timed on the GPU by bench/model/cublas.lua
 * (make blas-rates): cuBLAS 13.1.0, NVIDIA H200, 2026-12-01. Read by blas_model.c. */
#define H200_CUBLAS_SOURCE \
  "cuBLAS 13.1.0 on an NVIDIA H200, measured 2026-12-01 (bench/model/cublas.lua)"
static const double h200_cublas_side[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
static const double h200_cublas_sgemm_us[] = {
    9.248, 13.12, 16.7, 17.5, 20.88, 27.17, 69.86, 355.6, 2715, 2.156e+04};
static const double h200_cublas_dgemm_us[] = {
    12.54, 16.3, 16.72, 17.25, 18.14, 22.37, 55.14, 317.2, 2253, 1.916e+04};
