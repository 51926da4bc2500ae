// Each thread takes the dot product of its row of a with v.
__global__ void rowdot(const float *a, const float *v, float *out, int n)
{
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float acc;
  for (int c = 0; c < n; c++)
    acc += a[r * n + c] * v[c];
  out[r] = acc;
}
