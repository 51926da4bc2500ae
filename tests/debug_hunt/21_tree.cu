// A block's sum by pairs: stride 1, 2, 4, ... within shared memory.
__global__ void tree(const int *x, int *out)
{
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  for (int h = 1; h < blockDim.x; h *= 2) {
    if (t % (2 * h) == 0)
      s[t] += s[t + h];
  }
  if (t == 0) out[0] = s[0];
}
