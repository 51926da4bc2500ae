// reduce.cu: sum of an array, three ways: shared-memory tree per block, warp shuffles, atomics.
__global__ void reduce_shared(const float *in, float *out, int n) {
  extern __shared__ float buf[];
  int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, buf[0]);
}

__global__ void reduce_shuffle(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

__global__ void reduce_atomic(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}
