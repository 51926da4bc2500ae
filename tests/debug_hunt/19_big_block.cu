// Squares each element of a 2048-element vector, one block.
__global__ void square(float *x, int n)
{
  int i = threadIdx.x;
  if (i < n)
    x[i] = x[i] * x[i];
}
