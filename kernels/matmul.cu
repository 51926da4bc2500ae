// matmul.cu: C = A * B for n x n row-major matrices, naive and with 16 x 16 shared-memory tiles.
#define TILE 16

__global__ void matmul_naive(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float s = 0;
  for (int k = 0; k < n; k++) s += A[row * n + k] * B[k * n + col];
  C[row * n + col] = s;
}

__global__ void matmul_tiled(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float s = 0;
  for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
    int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (br < n && col < n) ? B[br * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; k++) s += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = s;
}
