-- device.lua: corpus cases at the edges of the modelled H200's limits (include/h200.h): the
-- largest dynamic shared memory a block may opt in to, the deepest block in z and the tallest
-- grid in y. Each launch is legal on the H200, so a wrong figure in the description shows as a
-- launch refused on one backend and not the other, or as different bits. Sizes come from
-- cuda.device(), which on the GPU is the driver's word and on the simulator the description's.
local C = dofile("tests/corpus/corpus.lua")

C.case{
  name = "device: a block of 1024 reverses an array in all the dynamic shared memory it may opt in to",
  src = [[
__global__ void rev(const float *in, float *out, int n) {
  extern __shared__ float s[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = s[n - 1 - i] * 2.0f + (float)(i & 7);
}]],
  run = function(k)
    local d = cuda.device()
    local n = d.shared_per_block_optin // 4 -- 227 KiB: every byte a block may have
    local x, xs = C.uniform(n, 31, -4, 4)
    local out = cuda.array(n)
    k[{1, d.max_threads_per_block, shared = n * 4}](x, out, n)
    C.s = xs
    return {out}
  end,
  check = function(o)
    local xs, want = C.s, {}
    for i = 1, #xs do want[i] = xs[#xs + 1 - i] * 2 + ((i - 1) & 7) end
    C.same(o[1], want)
  end,
}

C.case{
  name = "device: a block of (1, 16, 64) threads, the deepest z a block may have",
  src = [[
__global__ void ids(int *out) {
  int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[t] = threadIdx.z * 1000 + threadIdx.y * 10 + (int)(blockDim.z == 64);
}]],
  run = function(k)
    local z = cuda.device().max_block_dim[3] -- 64 on the H200
    local out = cuda.array(16 * z, "i32")
    k[{1, {1, 16, z}}](out)
    C.s = z
    return {out}
  end,
  check = function(o)
    local z, want = C.s, {}
    for tz = 0, z - 1 do
      for ty = 0, 15 do want[tz * 16 + ty + 1] = tz * 1000 + ty * 10 + (z == 64 and 1 or 0) end
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "device: a grid of 65,535 blocks in y, the tallest a grid may be",
  src = [[
__global__ void rows(unsigned *out) {
  if (threadIdx.x == 0) out[blockIdx.y] = blockIdx.y * 2654435761u ^ gridDim.y;
}]],
  run = function(k)
    local h = cuda.device().max_grid_dim[2] -- 65535 on the H200
    local out = cuda.array(h, "u32")
    k[{{1, h, 1}, 32}](out)
    C.s = h
    return {out}
  end,
  check = function(o)
    local h, want = C.s, {}
    for y = 0, h - 1 do want[y + 1] = ((y * 2654435761) & 0xffffffff) ~ h end
    C.same(o[1], want)
  end,
}

return C.done()
