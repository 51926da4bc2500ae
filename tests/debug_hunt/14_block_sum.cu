// Each block adds its 128 values into a shared total, which thread 0 writes out.
__global__ void block_sum(const float *x, float *sums)
{
  __shared__ float total;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __syncthreads();
  atomicAdd(&total, x[i]);
  __syncthreads();
  if (threadIdx.x == 0)
    sums[blockIdx.x] = total;
}
