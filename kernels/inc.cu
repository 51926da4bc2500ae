// inc.cu: a[i] += 1 over the whole array, the first kernel of the lessons.
__global__ void inc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1.0f;
}
