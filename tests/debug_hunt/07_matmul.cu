// C = A * B for n x n matrices, in 16 x 16 tiles through shared memory.
#define TILE 16
__global__ void matmul(const float *A, const float *B, float *C, int n)
{
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < n / TILE; t++) {
    As[ty][tx] = A[row * n + t * TILE + tx];
    Bs[ty][tx] = B[(t * TILE + tx) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; k++)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}
