// strided.cu: b[i] = a[i * s]; with s = 1 a warp reads 4 sectors per request, with s = 32 it
// reads 32: the cost of uncoalesced access.
__global__ void strided_copy(const float *a, float *b, int s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[(long)i * s];
}
