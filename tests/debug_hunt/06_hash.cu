// Spreads keys over 64 buckets with a multiplicative hash and counts them.
__global__ void bucket(const int *keys, int *counts, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int h = keys[i] * 2654435;
    int b = h % 64;
    atomicAdd(&counts[b], 1);
  }
}
