-- ptxas.lua: corpus cases whose bits depend on what the GPU's compiler does where PTX leaves it
-- free (sim/sim_contract.c): a product NVRTC leaves to ptxas, which contracts it into each sum
-- that uses it; under -use_fast_math a division by a constant, which ptxas turns into a
-- multiply by the reciprocal rounded to nearest and contracts with the add after it, and
-- special functions of constants, which it evaluates itself; and __hmul then __hadd in f16,
-- one HFMA2. The references bound the error; the GPU's digests pin the bits.
local C = dofile("tests/corpus/corpus.lua")
local N = 4099
local blocks = C.blocks

C.case{
  name = "a product feeding six sums in an unrolled loop: one FFMA each",
  src = [[
__global__ void f(const float *x, const float *y, const float *w, float *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float t = x[i] * y[i], s = 0;
#pragma unroll
  for (int j = 0; j < 6; j++) s += (t + w[j]) * w[6 + j];
  d[i] = s;
}]],
  run = function(k)
    local x, xs = C.uniform(N, 61, -2, 2)
    local y, ys = C.uniform(N, 62, -2, 2)
    local w, ws = C.uniform(12, 63, -1, 1)
    local d = cuda.array(N)
    k[{blocks(N, 128), 128}](x, y, w, d, N)
    C.xs, C.ys, C.ws = xs, ys, ws
    return {d}
  end,
  check = function(o)
    local want = {}
    for i = 1, N do
      local s, t = 0, C.xs[i] * C.ys[i]
      for j = 1, 6 do s = s + (t + C.ws[j]) * C.ws[6 + j] end
      want[i] = s
    end
    C.same(o[1], want, {rtol = 1e-5, atol = 1e-5})
  end,
}

C.case{
  name = "-use_fast_math: division by constants, then add, and __expf of constants (Gaussian weights)",
  opts = {"-use_fast_math"},
  src = [[
#define SIGMA 1.5f
__global__ void f(const float *x, float *a, float *b, float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  a[i] = v / 255.0f + 0.5f;
  b[i] = v / 3.0f - v / 7.0f;
  float s = 0, wsum = 0;
#pragma unroll
  for (int j = -3; j <= 3; j++) {
    float wj = __expf(-0.5f * j * j / (SIGMA * SIGMA));
    s += wj * x[min(max(i + j, 0), n - 1)];
    wsum += wj;
  }
  g[i] = s / wsum;
}]],
  run = function(k)
    local x, xs = C.uniform(N, 64, 0, 255)
    local o = C.map(3, function() return cuda.array(N) end)
    k[{blocks(N, 128), 128}](x, o[1], o[2], o[3], N)
    C.xs = xs
    return o
  end,
  check = function(o)
    local a, b, g = {}, {}, {}
    local w, wsum = {}, 0
    for j = -3, 3 do
      w[j] = math.exp(-0.5 * j * j / 2.25)
      wsum = wsum + w[j]
    end
    for i = 1, N do
      local v = C.xs[i]
      a[i] = v / 255 + 0.5
      b[i] = v / 3 - v / 7
      local s = 0
      for j = -3, 3 do s = s + w[j] * C.xs[math.min(math.max(i + j, 1), N)] end
      g[i] = s / wsum
    end
    C.same(o[1], a, {rtol = 1e-6, atol = 1e-6})
    C.same(o[2], b, {rtol = 1e-5, atol = 1e-4})
    C.same(o[3], g, {rtol = 1e-5, atol = 1e-4})
  end,
}

C.case{
  name = "f16: __hmul then __hadd is one HFMA2, __hmul_rn keeps the product apart",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const __half *x, const __half *y, const __half *z, __half *c, __half *s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  c[i] = __hadd(__hmul(x[i], y[i]), z[i]);
  s[i] = __hadd(__hmul_rn(x[i], y[i]), z[i]);
}]],
  run = function(k)
    local function random(seed, lo, hi)
      local u = cuda.rand(N, "f64", seed):tolist()
      for i = 1, N do u[i] = lo + (hi - lo) * u[i] end
      local a = cuda.array(u, "f16")
      return a, a:tolist()
    end
    local x, xs = random(65, -4, 4)
    local y, ys = random(66, -4, 4)
    local z, zs = random(67, -8, 8)
    local c, s = cuda.array(N, "f16"), cuda.array(N, "f16")
    k[{blocks(N, 128), 128}](x, y, z, c, s, N)
    C.xs, C.ys, C.zs = xs, ys, zs
    return {c, s}
  end,
  check = function(o)
    local fused, separate = {}, {}
    for i = 1, N do
      -- the product of two halves is exact in a double, and so is its sum with a third
      fused[i] = C.half_value(C.half_bits(C.xs[i] * C.ys[i] + C.zs[i]))
      local p = C.half_value(C.half_bits(C.xs[i] * C.ys[i]))
      separate[i] = C.half_value(C.half_bits(p + C.zs[i]))
    end
    C.same(o[1], fused)
    C.same(o[2], separate)
  end,
}
