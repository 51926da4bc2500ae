// Each block builds a scratch list on the device heap, sums it, and writes the sum.
__global__ void scratch(int *sums, int n)
{
  __shared__ int *list;
  if (threadIdx.x == 0)
    list = (int *)malloc(n * sizeof(int));
  __syncthreads();
  list[threadIdx.x] = threadIdx.x + blockIdx.x;
  __syncthreads();
  if (threadIdx.x == 0)
    free(list);
  int s = 0;
  for (int j = 0; j < n; j++)
    s += list[j];
  if (threadIdx.x == 0)
    sums[blockIdx.x] = s;
}
