// Each thread keeps a private copy of the whole input on the device heap, then scales it.
__global__ void copies(const float *x, float *out, int n)
{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float *mine = (float *)malloc(n * sizeof(float));
  for (int j = 0; j < n; j++)
    mine[j] = x[j] * 2.0f;
  out[t] = mine[t];
  free(mine);
}
