// Sums each warp's values with shuffles, only over the lanes that have an element.
__global__ void warp_sum(const float *x, float *out, int n)
{
  int t = threadIdx.x;
  if (t < n) {
    float v = x[t];
    for (int off = 16; off > 0; off /= 2)
      v += __shfl_down_sync(0xffffffff, v, off);
    if (t == 0) out[0] = v;
  }
}
