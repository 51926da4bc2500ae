// Adds 1 to every element, in a grid-stride loop.
__global__ void inc(int *a, int n)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)
    a[i] += 1;
}
