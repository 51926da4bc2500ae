// transpose.cu: one 32 x 32 tile through shared memory; pad = 1 adds a column so a column read
// touches 32 different banks instead of one.
__global__ void transpose_tile(const float *a, float *b, int pad) {
  __shared__ float t[32 * 33];
  int x = threadIdx.x, y = threadIdx.y, w = 32 + pad;
  t[y * w + x] = a[y * 32 + x];
  __syncthreads();
  b[y * 32 + x] = t[x * w + y];
}
