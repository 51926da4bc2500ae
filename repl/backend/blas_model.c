/* blas_model.c: how long cuBLAS takes for a matrix multiply on an NVIDIA H200, for the
 * simulator's clock. The times were measured by bench/model/cublas.lua on the GPU for square
 * sizes and kept in h200_cublas.h; a call of m x n x k is priced as the square of the same work
 * (side (m n k)^(1/3)), interpolated in log-log between measured sizes: flat below the smallest
 * (launch overhead), growing with the work above the largest (the rate is reached by then). This
 * is a labelled approximation for teaching (cuBLAS picks different kernels for thin shapes), not
 * the simulator's own performance model, which prices kernels from their instructions. */
#include <math.h>

#include "blas.h"
#include "h200_cublas.h"

#define NSIZES (sizeof h200_cublas_side / sizeof h200_cublas_side[0])

double blas_model_us(const cl_gemm *g) {
  const double *t = g->f64 ? h200_cublas_dgemm_us : h200_cublas_sgemm_us;
  double side = cbrt((double)g->m * (double)g->n * (double)g->k);
  if (side <= h200_cublas_side[0]) return t[0];
  size_t last = NSIZES - 1;
  if (side >= h200_cublas_side[last]) return t[last] * pow(side / h200_cublas_side[last], 3);
  size_t i = 1;
  while (h200_cublas_side[i] < side) i++;
  double f = log(side / h200_cublas_side[i - 1]) /
             log(h200_cublas_side[i] / h200_cublas_side[i - 1]);
  return exp(log(t[i - 1]) + f * (log(t[i]) - log(t[i - 1])));
}

const char *blas_model_source(void) { return H200_CUBLAS_SOURCE; }
