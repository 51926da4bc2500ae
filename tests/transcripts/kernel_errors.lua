k = cuda.kernel[[
__global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * s
}
]]
k = cuda.kernel[[
__global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * s;
}
]]
k
k[{1, 2048}](cuda.array(4), 2, 4)
k[{1, 32}](cuda.array(4, "f64"), 2, 4)
k[{1, 32}](cuda.array(4), 2)
k[{1, 32}](cuda.array(4), 2, 4)
