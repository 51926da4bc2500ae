// Adds neighbours in pairs: an even lane stores its value, the odd lane after it adds its own.
__global__ void pairs(const int *a, int *out)
{
  __shared__ int s[16];
  int t = threadIdx.x;
  if (t % 2 == 0)
    s[t / 2] = a[t];
  else
    s[t / 2] += a[t];
  __syncthreads();
  if (t < 16) out[t] = s[t];
}
