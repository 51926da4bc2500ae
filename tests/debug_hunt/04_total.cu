// Adds up n values into total[0], each thread one value.
__global__ void total(const int *x, int *total, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    total[0] += x[i];
}
