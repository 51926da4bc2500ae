-- warpsync.lua: corpus cases for warp-synchronous shared-memory code written correctly for GPUs
-- since Volta, whose lanes do not run in lockstep: every hand-off between lanes through shared
-- memory has a __syncwarp() (or a __syncthreads()) between the write and the read. On the
-- simulator they run with race checking failing the launch, as in a lesson check (at the prompt
-- a race only warns), so each case also shows that the checker lets correct code through; on
-- the GPU, that the fixed code gives the CPU's answer.
local C = dofile("tests/corpus/corpus.lua")
if cuda.backend() == "sim" then cuda.simopts{race_check = "fail"} end
local blocks = C.blocks

-- Per block of `b` consecutive elements of xs (a Lua sequence), the sum.
local function block_sums(xs, b)
  local out = {}
  for i, x in ipairs(xs) do
    local k = (i - 1) // b + 1
    out[k] = (out[k] or 0) + x
  end
  return out
end

C.case{
  name = "i32 block sum: shared tree with __syncthreads(), warp tail with __syncwarp()",
  src = [[
__global__ void block_sum(const int *in, int *out, int n) {
  __shared__ int s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int h = blockDim.x / 2; h >= 32; h >>= 1) {
    if (t < h) s[t] += s[t + h];
    __syncthreads();
  }
  if (t < 32) {
    int v = s[t];
    for (int off = 16; off > 0; off >>= 1) {
      v += s[t + off]; /* read every lane's partner first, */
      __syncwarp();
      s[t] = v;        /* then write, */
      __syncwarp();    /* and let the writes land before the next read */
    }
    if (t == 0) out[blockIdx.x] = v;
  }
}]],
  run = function(k)
    local n = 5000
    local x, xs = C.integers(n, 31, -100000, 100000)
    local out = cuda.array(blocks(n, 256), "i32")
    k[{blocks(n, 256), 256}](x, out, n)
    C.xs, C.n = xs, n
    return {out}
  end,
  check = function(o) C.same(o[1], block_sums(C.xs, 256)) end,
}

C.case{
  name = "f32 block sum: shared tree to one warp, then __shfl_down_sync",
  src = [[
__global__ void block_sum(const float *in, float *out, int n) {
  __shared__ float s[128];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (t < 64) s[t] += s[t + 64];
  __syncthreads();
  if (t < 32) {
    float v = s[t] + s[t + 32];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (t == 0) out[blockIdx.x] = v;
  }
}]],
  run = function(k)
    local n = 4099
    local x, xs = C.uniform(n, 32, -1, 1)
    local out = cuda.array(blocks(n, 128))
    k[{blocks(n, 128), 128}](x, out, n)
    C.xs = xs
    return {out}
  end,
  check = function(o) C.same(o[1], block_sums(C.xs, 128), {rtol = 1e-5, atol = 1e-5}) end,
}

C.case{
  name = "u32 inclusive scan per warp in shared memory, __syncwarp() between read and write",
  src = [[
__global__ void warp_scan(const unsigned *in, unsigned *out, int n) {
  __shared__ unsigned s[128];
  int t = threadIdx.x, lane = t & 31, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0u;
  __syncwarp();
  for (int d = 1; d < 32; d <<= 1) {
    unsigned add = lane >= d ? s[t - d] : 0u;
    __syncwarp();
    s[t] += add;
    __syncwarp();
  }
  if (i < n) out[i] = s[t];
}]],
  run = function(k)
    local n = 1000
    local x, xs = C.integers(n, 33, 0, 1000000, "u32")
    local out = cuda.array(n, "u32")
    k[{blocks(n, 128), 128}](x, out, n)
    C.xs = xs
    return {out}
  end,
  check = function(o)
    local want, run = {}, 0
    for i, x in ipairs(C.xs) do
      if (i - 1) % 32 == 0 then run = 0 end
      run = run + x
      want[i] = run
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "i32 shared histogram: atomics between two __syncthreads()",
  src = [[
__global__ void histogram(const int *in, int *out, int n) {
  __shared__ int bins[16];
  int t = threadIdx.x;
  if (t < 16) bins[t] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) atomicAdd(&bins[in[i] & 15], 1);
  __syncthreads();
  if (t < 16) atomicAdd(&out[t], bins[t]);
}]],
  run = function(k)
    local n = 7777
    local x, xs = C.integers(n, 34, 0, 1 << 20)
    local out = cuda.array(16, "i32")
    k[{8, 128}](x, out, n)
    C.xs = xs
    return {out}
  end,
  check = function(o)
    local want = {}
    for b = 1, 16 do want[b] = 0 end
    for _, x in ipairs(C.xs) do want[(x & 15) + 1] = want[(x & 15) + 1] + 1 end
    C.same(o[1], want)
  end,
}

return C.done()
