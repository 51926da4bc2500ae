// A block's sum: a tree down to 64 values, then the last warp without barriers.
__global__ void reduce(const int *x, int *out)
{
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * 256 + t];
  __syncthreads();
  for (int h = 128; h > 32; h /= 2) {
    if (t < h) s[t] += s[t + h];
    __syncthreads();
  }
  if (t < 32) {
    int *w = s;
    w[t] += w[t + 32];
    w[t] += w[t + 16];
    w[t] += w[t + 8];
    w[t] += w[t + 4];
    w[t] += w[t + 2];
    w[t] += w[t + 1];
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
