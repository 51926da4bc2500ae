-- sync_cases.lua: kernels that both a simulator suite and tests/gpu/sync_vs_gpu.lua run, kept
-- once: named barriers with a count (named_barriers.lua), cuda::barrier and mbarrier
-- (async_barriers.lua), atomicAdd on float2 and float4 (opcodes.lua). Shared data, not a suite.
return {
  named_pc = [[
__global__ void pc(const float *in, float *out, int rounds) {
  __shared__ float slot[64];
  int t = threadIdx.x;
  if (t < 64) {                                   /* producers */
    float next = in[t];
    for (int r = 0; r < rounds; r++) {
      if (r > 0) asm volatile("bar.sync 1, 128;" ::: "memory");   /* wait: slot empty */
      slot[t] = next;
      asm volatile("bar.arrive 0, 128;" ::: "memory");             /* slot full */
      if (r + 1 < rounds) next = in[(r + 1) * 64 + t];
    }
  } else {                                        /* consumers */
    float sum = 0.f;
    for (int r = 0; r < rounds; r++) {
      asm volatile("bar.sync 0, 128;" ::: "memory");               /* wait: slot full */
      sum += slot[127 - t] * (float)(r + 1);
      if (r + 1 < rounds) asm volatile("bar.arrive 1, 128;" ::: "memory"); /* slot empty */
    }
    out[blockIdx.x * 64 + t - 64] = sum;
  }
}]],
  barrier_rev_loop = [[
#include <cuda/barrier>
__global__ void rev(const float *in, float *out) {
  __shared__ float s[128];
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
  bar.arrive_and_wait();
  out[blockIdx.x * 128 + threadIdx.x] = s[127 - threadIdx.x];
}
/* producer threads fill a slot, consumer threads sum it: two barriers, one per direction */
__global__ void loop(const float *in, float *out, int rounds) {
  __shared__ float s[64];
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> full, empty;
  int t = threadIdx.x;
  if (t == 0) { init(&full, 128); init(&empty, 128); }
  __syncthreads();
  float sum = 0;
  for (int r = 0; r < rounds; r++) {
    if (t < 64) s[t] = in[r * 64 + t];
    full.arrive_and_wait();
    if (t >= 64) sum += s[127 - t] * (float)(r + 1);
    empty.arrive_and_wait();
  }
  if (t >= 64) out[blockIdx.x * 64 + t - 64] = sum;
}]],
  barrier_copy = [[
#include <cuda/barrier>
__global__ void copy(const float *in, float *out) {
  __shared__ float s[256];
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  cuda::memcpy_async(s + threadIdx.x, in + threadIdx.x, sizeof(float), bar);
  bar.arrive_and_wait();
  out[threadIdx.x] = 2.f * s[255 - threadIdx.x];
}]],
  mbarrier_parity = [[
__global__ void parity(int *out) {
  __shared__ unsigned long long bar;
  __shared__ int s[64];
  unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
  int t = threadIdx.x;
  if (t == 0) asm volatile("mbarrier.init.shared.b64 [%0], 64;" :: "r"(a) : "memory");
  __syncthreads();
  unsigned before;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], 0;"
               " selp.u32 %0, 1, 0, p; }" : "=r"(before) : "r"(a) : "memory");
  s[t] = 10 * t;
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" :: "r"(a) : "memory");
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }"
               :: "r"(a) : "memory");
  out[t] = s[63 - t] + (int)before;
}]],
  vector_atomics = [[
__global__ void many(float2 *f2, float4 *f4, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  atomicAdd(&f2[i % 3], make_float2(v, 2.f * v));
  atomicAdd(&f4[i % 2], make_float4(v, -v, 0.5f * v, 4.f));
}
__global__ void own(float2 *f2, float4 *f4, float *old) {
  int i = threadIdx.x;
  float2 a = atomicAdd(&f2[i], make_float2(1.f, 2.f));
  float4 b = atomicAdd(&f4[i], make_float4(1.f, 2.f, 3.f, 4.f));
  old[6 * i] = a.x; old[6 * i + 1] = a.y;
  old[6 * i + 2] = b.x; old[6 * i + 3] = b.y; old[6 * i + 4] = b.z; old[6 * i + 5] = b.w;
}]],
}
