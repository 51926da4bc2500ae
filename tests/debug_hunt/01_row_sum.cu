// Each thread sums one row of a matrix of n columns.
__global__ void row_sum(const float *m, float *sums, int rows, int n)
{
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.0f;
    for (int c = 0; c <= n; c++)
      s += m[r * n + c];
    sums[r] = s;
  }
}
