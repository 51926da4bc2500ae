-- halfs.lua: corpus cases for the 16- and 8-bit element types (f16, bf16, i16, u16, i8). Each
-- CPU reference computes in double where that is exact and rounds once, to f32 with
-- string.pack and to f16/bf16 through cuda.array's conversion (round to nearest even, checked
-- on its own in tests/lua/dtypes.lua). The f16 and bf16 cases need the simulator's half-precision
-- instructions (cvt.rn.f16.f32 and the rest): until it has them, they fail to load on the
-- simulator with "the simulator cannot run this module"; on the GPU they must pass.
local C = dofile("tests/corpus/corpus.lua")
local N = 4099 -- not a multiple of any block size
local blocks, f32 = C.blocks, C.f32
local function wrap16(v) return (v + 32768) % 65536 - 32768 end
local function wrap8(v) return (v + 128) % 256 - 128 end
local HEAD = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"

-- n random numbers in [lo, hi) stored as dtype: the device array and the values it holds.
local function random(n, seed, lo, hi, dtype)
  local u = cuda.rand(n, "f64", seed):tolist()
  for i = 1, n do u[i] = lo + (hi - lo) * u[i] end
  local a = cuda.array(u, dtype)
  return a, a:tolist()
end

-- The sequence xs rounded once to dtype, as a sequence.
local function rounded(xs, dtype) return cuda.array(xs, dtype):tolist() end

C.case{
  name = "f16: fmaf on widened halves, rounded back to f16",
  src = HEAD .. [[
__global__ void f(const __half *x, const __half *y, __half *z, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = __float2half_rn(__fmaf_rn(a, __half2float(x[i]), __half2float(y[i])));
}]],
  run = function(k)
    local x, xs = random(N, 31, -4, 4, "f16")
    local y, ys = random(N, 32, -4, 4, "f16")
    local z = cuda.array(N, "f16")
    k[{blocks(N, 128), 128}](x, y, z, 1.7, N)
    C.xs, C.ys = xs, ys
    return {z}
  end,
  check = function(o)
    -- a * x + y is exact in double here (24 + 11 significant bits, exponents within 2^5..2^-47),
    -- so f32() rounds once, as the fma does.
    local a, want = f32(1.7), {}
    for i = 1, N do want[i] = f32(a * C.xs[i] + C.ys[i]) end
    C.same(o[1], rounded(want, "f16"))
  end,
}

C.case{
  name = "bf16: fmaf on widened bfloat16, rounded back to bf16",
  src = HEAD .. [[
__global__ void f(const __nv_bfloat16 *x, __nv_bfloat16 *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = __float2bfloat16_rn(__fmaf_rn(__bfloat162float(x[i]), 3.0f, 1.0f));
}]],
  run = function(k)
    local x, xs = random(N, 33, -1000, 1000, "bf16")
    local z = cuda.array(N, "bf16")
    k[{blocks(N, 256), 256}](x, z, N)
    C.xs = xs
    return {z}
  end,
  check = function(o)
    local want = {}
    for i = 1, N do want[i] = f32(C.xs[i] * 3 + 1) end
    C.same(o[1], rounded(want, "bf16"))
  end,
}

C.case{
  name = "f16: __hadd2 and __hmul2 on __half2 pairs",
  src = HEAD .. [[
__global__ void f(const __half2 *a, const __half2 *b, __half2 *s, __half2 *p, int pairs) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs) { s[i] = __hadd2(a[i], b[i]); p[i] = __hmul2(a[i], b[i]); }
}]],
  run = function(k)
    local M = 2 * 2050
    local a, xs = random(M, 34, -300, 300, "f16")
    local b, ys = random(M, 35, -300, 300, "f16")
    local s, p = cuda.array(M, "f16"), cuda.array(M, "f16")
    k[{blocks(M // 2, 64), 64}](a, b, s, p, M // 2)
    C.xs, C.ys = xs, ys
    return {s, p}
  end,
  check = function(o)
    local s, p = {}, {}
    for i = 1, #C.xs do
      s[i] = C.xs[i] + C.ys[i] -- exact in double: one rounding to f16, as the GPU's add.rn.f16
      p[i] = C.xs[i] * C.ys[i] -- 22 significant bits: exact too; products past 65504 become inf
    end
    C.same(o[1], rounded(s, "f16"))
    C.same(o[2], rounded(p, "f16"))
  end,
}

C.case{
  name = "f32 to f16 and bf16: round to nearest even, ties, overflow to inf",
  src = HEAD .. [[
__global__ void f(const float *x, __half *h, __nv_bfloat16 *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { h[i] = __float2half_rn(x[i]); b[i] = __float2bfloat16_rn(x[i]); }
}]],
  run = function(k)
    local u = cuda.rand(N, "f64", 36):tolist()
    local xs = {}
    for i = 1, N do
      local m = i % 4
      if m == 0 then xs[i] = (u[i] - 0.5) * 140000                    -- past f16's 65504
      elseif m == 1 then xs[i] = (u[i] - 0.5) * 2^-20                 -- f16 subnormals
      elseif m == 2 then xs[i] = (1 + (2 * (i % 1024) + 1) * 2^-11) * 2^(i % 7) -- f16 ties
      else xs[i] = (1 + (2 * (i % 128) + 1) * 2^-8) * 2^(i % 9 - 4) end        -- bf16 ties
    end
    local x = cuda.array(xs, "f32")
    local h, b = cuda.array(N, "f16"), cuda.array(N, "bf16")
    k[{blocks(N, 128), 128}](x, h, b, N)
    C.xs = x:tolist()
    return {h, b}
  end,
  check = function(o)
    C.same(o[1], rounded(C.xs, "f16"))
    C.same(o[2], rounded(C.xs, "bf16"))
  end,
}

C.case{
  name = "i16 and u16: wrapping add, logical shift of the bits",
  src = [[
__global__ void f(const short *a, const short *b, short *s, unsigned short *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[i] = (short)(a[i] + b[i]);
  r[i] = (unsigned short)a[i] >> 3;
}]],
  run = function(k)
    local a, xs = C.integers(N, 37, -32768, 32767, "i16")
    local b, ys = C.integers(N, 38, -32768, 32767, "i16")
    local s, r = cuda.array(N, "i16"), cuda.array(N, "u16")
    k[{blocks(N, 128), 128}](a, b, s, r, N)
    C.xs, C.ys = xs, ys
    return {s, r}
  end,
  check = function(o)
    local s, r = {}, {}
    for i = 1, N do
      s[i] = wrap16(C.xs[i] + C.ys[i])
      r[i] = (C.xs[i] % 65536) >> 3
    end
    C.same(o[1], s)
    C.same(o[2], r)
  end,
}

C.case{
  name = "i8: negation wraps at -128, squares widen to u16",
  src = [[
__global__ void f(const signed char *x, signed char *neg, unsigned short *sq, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  neg[i] = (signed char)(-x[i]);
  sq[i] = (unsigned short)(x[i] * x[i]);
}]],
  run = function(k)
    local x, xs = C.integers(N, 39, -128, 127, "i8")
    local neg, sq = cuda.array(N, "i8"), cuda.array(N, "u16")
    k[{blocks(N, 96), 96}](x, neg, sq, N)
    C.xs = xs
    return {neg, sq}
  end,
  check = function(o)
    local neg, sq = {}, {}
    for i = 1, N do neg[i] = wrap8(-C.xs[i]); sq[i] = C.xs[i] * C.xs[i] end
    C.same(o[1], neg)
    C.same(o[2], sq)
  end,
}

return C.done()
