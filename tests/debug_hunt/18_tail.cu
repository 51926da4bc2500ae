// Scales a vector: y = a * x.
__global__ void scale(const float *x, float *y, float a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i];
}
