// Transposes a rows x cols matrix through a 32 x 32 shared tile.
__global__ void transpose(const float *in, float *out, int rows, int cols)
{
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  if (x < cols && y < rows)
    tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  if (x < rows && y < cols)
    out[y * cols + x] = tile[threadIdx.x][threadIdx.y];
}
