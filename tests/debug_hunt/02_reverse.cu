// Reverses each block's 128 elements through shared memory.
__global__ void reverse(const int *in, int *out)
{
  __shared__ int s[128];
  int t = threadIdx.x;
  int base = blockIdx.x * blockDim.x;
  s[t] = in[base + t];
  out[base + t] = s[blockDim.x - 1 - t];
}
