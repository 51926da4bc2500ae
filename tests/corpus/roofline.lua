-- roofline.lua: corpus cases for the kernels of lesson 17 (roofline and capstone): a row-wise
-- softmax with block-wide reductions in shared memory (the capstone's reference), the same with
-- rows shorter than a warp, and a one-warp-per-row softmax whose reductions are butterfly
-- shuffles. Inputs run from -20 to 100, so expf(x) alone would overflow; the max is subtracted.
-- The reductions combine in a fixed order, so the GPU's bits are reproducible.
local C = dofile("tests/corpus/corpus.lua")

local SOFTMAX_BLOCK = [[
#include <math_constants.h> // CUDART_INF_F, a float infinity
#define BLOCK 256

// One block of BLOCK threads per row: each thread strides over the row, then the block
// combines its partial results in shared memory, twice (the maximum, then the sum).
__global__ void softmax(const float *x, float *y, int rows, int cols) {
  __shared__ float part[BLOCK];
  const float *in = x + (size_t)blockIdx.x * cols;
  float *out = y + (size_t)blockIdx.x * cols;
  int t = threadIdx.x;

  float m = -CUDART_INF_F;
  for (int j = t; j < cols; j += blockDim.x) m = fmaxf(m, in[j]);
  part[t] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) part[t] = fmaxf(part[t], part[t + s]);
    __syncthreads();
  }
  m = part[0];
  __syncthreads(); // everyone has read the maximum before part is reused

  float sum = 0;
  for (int j = t; j < cols; j += blockDim.x) sum += expf(in[j] - m);
  part[t] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  sum = part[0];

  for (int j = t; j < cols; j += blockDim.x) out[j] = expf(in[j] - m) / sum;
}
]]

-- The softmax of each row of xs (rows x cols, a Lua sequence), in double precision.
local function softmax_cpu(xs, rows, cols)
  local out = {}
  for r = 0, rows - 1 do
    local base, m, s = r * cols, -math.huge, 0
    for j = 1, cols do m = math.max(m, xs[base + j]) end
    for j = 1, cols do s = s + math.exp(xs[base + j] - m) end
    for j = 1, cols do out[base + j] = math.exp(xs[base + j] - m) / s end
  end
  return out
end

-- Runs k on a rows x cols matrix from seed with `block` threads per row; keeps the input for check.
local function run_softmax(k, rows, cols, block, seed)
  local x, xs = C.uniform(rows * cols, seed, -20, 100)
  local y = cuda.full(rows * cols, -1)
  k[{rows, block}](x, y, rows, cols)
  C.s = {xs, rows, cols}
  return {y}
end

local function check_softmax(o)
  local xs, rows, cols = table.unpack(C.s)
  C.same(o[1], softmax_cpu(xs, rows, cols), {rtol = 1e-5, atol = 1e-7})
end

-- expf compiles to ex2.approx, which the simulator computes as the H200's special-function unit
-- does (sim/sim_sfu.c), so these match the GPU's bits too.
C.case{
  name = "softmax: a block of 256 per row, 33 rows of 1000 (not a multiple of the block)",
  src = SOFTMAX_BLOCK,
  run = function(k) return run_softmax(k, 33, 1000, 256, 1701) end,
  check = check_softmax,
}

C.case{
  name = "softmax: a block of 256 per row, 64 rows of 7 (shorter than a warp)",
  src = SOFTMAX_BLOCK,
  run = function(k) return run_softmax(k, 64, 7, 256, 1702) end,
  check = check_softmax,
}

C.case{
  name = "softmax: one warp per row, max and sum by __shfl_xor_sync, 40 rows of 300",
  src = [[
#include <math_constants.h>
__global__ void softmax_warp(const float *x, float *y, int rows, int cols) {
  const float *in = x + (size_t)blockIdx.x * cols;
  float *out = y + (size_t)blockIdx.x * cols;
  int t = threadIdx.x;
  float m = -CUDART_INF_F, s = 0;
  for (int j = t; j < cols; j += 32) m = fmaxf(m, in[j]);
  for (int d = 16; d > 0; d /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, d));
  for (int j = t; j < cols; j += 32) s += expf(in[j] - m);
  for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffff, s, d);
  for (int j = t; j < cols; j += 32) out[j] = expf(in[j] - m) / s;
}]],
  run = function(k) return run_softmax(k, 40, 300, 32, 1703) end,
  check = check_softmax,
}

return C.done()
