// A moving maximum over a window of 8 values, kept in a local array.
__global__ void window_max(const float *x, float *out, int n, int w)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + w > n) return;
  float win[8];
  for (int j = 0; j < w; j++)
    win[j] = x[i + j];
  float m = win[0];
  for (int j = 1; j <= w; j++)
    m = fmaxf(m, win[j]);
  out[i] = m;
}
