// The largest of the first n values of a block of 128: threads past n leave at once.
__global__ void head_max(const float *x, float *out, int n)
{
  __shared__ float s[128];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = x[t];
  __syncthreads();
  for (int h = 64; h > 0; h /= 2) {
    if (t < h) s[t] = fmaxf(s[t], s[t + h]);
    __syncthreads();
  }
  if (t == 0) out[0] = s[0];
}
