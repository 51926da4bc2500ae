// A histogram of bytes into 16 bins, counted per block in shared memory first.
__global__ void histogram(const unsigned char *data, int *bins, int n)
{
  __shared__ int local[16];
  int t = threadIdx.x;
  if (t < 16) local[t] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + t;
  if (i < n)
    local[data[i] % 16]++;
  __syncthreads();
  if (t < 16) atomicAdd(&bins[t], local[t]);
}
