// A grid-stride sum: each thread adds every stride-th value from its own index on.
__global__ void partial(const float *x, float *part, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * blockIdx.x;
  float s = 0.0f;
  for (int j = i; j < n; j += stride)
    s += x[j];
  part[i] = s;
}
