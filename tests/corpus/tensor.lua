-- tensor.lua: corpus cases for the tensor-core instructions: wmma (f16, bf16, tf32 inputs; f16
-- and f32 accumulators; the three 16-bit shapes), mma.sync through inline PTX, ldmatrix,
-- cp.async, and probes of how the tensor cores add.
--
-- Inputs of 16-bit types travel as u32 arrays holding two raw halves each (element 2i in the
-- low half), so the cases need no f16 arithmetic outside the instructions under test.
--
-- The probes ("tensor-core addition: ...") decide the simulator's TC_* parameters (sim_tensor.c):
-- each row of A is built so that the candidate behaviours give different sums (products of very
-- different magnitudes, cancellation inside and across groups of products, an accumulator much
-- larger than the products, ties and sign); their check lists every candidate (extra bits kept,
-- truncation or rounding, products per fused group, or a chain of fp32 fmas) whose bits match.
-- On the GPU, a failing probe names the candidates the H200 matches.
local C = dofile("tests/corpus/corpus.lua")
local OPTS = {"-I/usr/local/cuda/include"}

-- ---- 16-bit formats (exactly representable values only) ----

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end
local function f32bits(x) return (string.unpack("<I4", string.pack("<f", x))) end
local function from_bits(u) return (string.unpack("<f", string.pack("<I4", u))) end

-- Exponent e with 2^e <= |x| < 2^(e+1), for x ~= 0.
local function ilog2(x)
  x = math.abs(x)
  local e = math.floor(math.log(x, 2))
  while 2.0 ^ e > x do e = e - 1 end
  while 2.0 ^ (e + 1) <= x do e = e + 1 end
  return e
end

local function f16bits(x)
  if x == 0 then return 0 end
  local s, a = x < 0 and 0x8000 or 0, math.abs(x)
  local e = ilog2(a)
  local m, bits
  if e < -14 then
    m = a / 2.0 ^ -24
    bits = math.tointeger(m)
  else
    m = a / 2.0 ^ (e - 10) - 1024
    bits = math.tointeger(m) and ((e + 15) << 10 | math.tointeger(m))
  end
  assert(bits and e <= 15, "not an f16 value: " .. x)
  return s | bits
end

local function bf16bits(x)
  local u = f32bits(x)
  assert(u & 0xffff == 0 and f32(x) == x, "not a bf16 value: " .. x)
  return u >> 16
end

local function f16value(h)
  local e, m = (h >> 10) & 31, h & 1023
  local v = e == 0 and m * 2.0 ^ -24 or (m + 1024) * 2.0 ^ (e - 25)
  return h & 0x8000 ~= 0 and -v or v
end

-- Packs a sequence of 16-bit values (xs, through enc) two to a u32.
local function pack16(xs, enc)
  local t = {}
  for i = 1, #xs, 2 do t[#t + 1] = enc(xs[i]) | enc(xs[i + 1] or 0) << 16 end
  return cuda.array(t, "u32")
end

-- n random multiples of 1/8 in [-2, 2]: products and short sums of them are exact in fp32.
local function eighths(n, seed)
  local u = cuda.rand(n, "f64", seed):tolist()
  local t = {}
  for i = 1, n do t[i] = (math.floor(u[i] * 33) - 16) / 8 end
  return t
end

-- ---- the tensor cores' addition, as sim_tensor.c models it ----

local function cut(x, q, nearest)
  local s = x / 2.0 ^ q
  if nearest then
    local f = math.floor(s)
    local r = s - f
    s = (r > 0.5 or (r == 0.5 and f % 2 == 1)) and f + 1 or f
  else
    s = s < 0 and math.ceil(s) or math.floor(s)
  end
  return s * 2.0 ^ q
end

local function to_f32(x, nearest)
  local f = f32(x)
  if not nearest and math.abs(f) > math.abs(x) then
    f = from_bits(f32bits(f) - 1) -- one step toward zero (same sign)
  end
  return f
end

-- c + sum a[i]*b[i] (i = 1..k) under candidate P = {extra =, nearest =, group =} or {fma = true}.
local function tc_dot(a, b, c, P)
  local k = #a
  if P.fma then
    for i = 1, k do c = f32(a[i] * b[i] + c) end
    return c
  end
  for g = 1, k, P.group do
    local terms = {c}
    for i = g, math.min(k, g + P.group - 1) do terms[#terms + 1] = a[i] * b[i] end
    local emax
    for _, t in ipairs(terms) do
      if t ~= 0 then local e = ilog2(t) + 1; if not emax or e > emax then emax = e end end
    end
    if emax then
      local q = emax - 24 - P.extra
      local s = 0
      for _, t in ipairs(terms) do s = s + cut(t, q, P.nearest) end
      c = to_f32(s, P.nearest)
    end
  end
  return c
end

local DEFAULT = {extra = 3, nearest = false, group = 16, group_tf32 = 8} -- sim_tensor.c's TC_*

local function candidates(tf32)
  local list = {{fma = true, name = "a chain of fp32 fmas"}}
  for _, g in ipairs({4, 8, 16}) do
    for _, x in ipairs({0, 1, 2, 3, 4, 5, 8}) do
      for _, nr in ipairs({false, true}) do
        list[#list + 1] = {extra = x, nearest = nr, group = g,
                           name = string.format("extra=%d %s group=%d", x, nr and "nearest" or "truncate", g)}
      end
    end
  end
  return list
end

-- D = A*B + C for row-major m x k, k x n, m x n sequences, under candidate P.
local function gemm(A, B, Cm, m, n, k, P)
  local D = {}
  for r = 0, m - 1 do
    for c = 0, n - 1 do
      local a, b = {}, {}
      for j = 0, k - 1 do a[j + 1] = A[r * k + j + 1]; b[j + 1] = B[j * n + c + 1] end
      D[r * n + c + 1] = tc_dot(a, b, Cm and Cm[r * n + c + 1] or 0, P)
    end
  end
  return D
end

local function transpose(X, rows, cols) -- row-major rows x cols -> row-major cols x rows
  local T = {}
  for r = 0, rows - 1 do for c = 0, cols - 1 do T[c * rows + r + 1] = X[r * cols + c + 1] end end
  return T
end

local function zeros(n) local t = {} for i = 1, n do t[i] = 0 end return t end

-- ---- wmma ----

C.case{
  name = "wmma m16n16k16 f16 GEMM, a row-major, b col-major, f32 accumulator loaded and stored",
  opts = OPTS,
  src = [[
#include <mma.h>
using namespace nvcuda;
__global__ void g(const unsigned *a, const unsigned *b, float *c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, (const __half *)a, 16);
  wmma::load_matrix_sync(fb, (const __half *)b, 16);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}]],
  run = function(k)
    C.A, C.B, C.Cm = eighths(256, 101), eighths(256, 102), eighths(256, 103)
    local c = cuda.array(C.Cm)
    k[{1, 32}](pack16(C.A, f16bits), pack16(transpose(C.B, 16, 16), f16bits), c)
    return {c}
  end,
  check = function(o) C.same(o[1], gemm(C.A, C.B, C.Cm, 16, 16, 16, DEFAULT)) end,
}

C.case{
  name = "wmma m32n8k16 bf16, a col-major, b row-major, stored col-major",
  opts = OPTS,
  src = [[
#include <mma.h>
using namespace nvcuda;
__global__ void g(const unsigned *a, const unsigned *b, float *c) {
  wmma::fragment<wmma::matrix_a, 32, 8, 16, __nv_bfloat16, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 32, 8, 16, float> fc;
  wmma::fill_fragment(fc, 0.5f);
  wmma::load_matrix_sync(fa, (const __nv_bfloat16 *)a, 32);
  wmma::load_matrix_sync(fb, (const __nv_bfloat16 *)b, 8);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 32, wmma::mem_col_major);
}]],
  run = function(k)
    C.A, C.B = eighths(32 * 16, 111), eighths(16 * 8, 112)
    local c = cuda.array(32 * 8)
    k[{1, 32}](pack16(transpose(C.A, 32, 16), bf16bits), pack16(C.B, bf16bits), c)
    return {c}
  end,
  check = function(o)
    local Cm = {}
    for i = 1, 256 do Cm[i] = 0.5 end
    C.same(o[1], transpose(gemm(C.A, C.B, Cm, 32, 8, 16, DEFAULT), 32, 8))
  end,
}

C.case{
  name = "wmma m8n32k16 f16 with an f16 accumulator, b from shared memory",
  opts = OPTS,
  src = [[
#include <mma.h>
using namespace nvcuda;
__global__ void g(const unsigned *a, const unsigned *b, unsigned *c) {
  __shared__ __align__(32) unsigned sb[16 * 32 / 2];
  for (int i = threadIdx.x; i < 16 * 32 / 2; i += 32) sb[i] = b[i];
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 8, 32, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, __half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 8, 32, 16, __half> fc;
  wmma::load_matrix_sync(fa, (const __half *)a, 16);
  wmma::load_matrix_sync(fb, (const __half *)sb, 32);
  wmma::load_matrix_sync(fc, (const __half *)c, 32, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync((__half *)c, fc, 8, wmma::mem_col_major);
}]],
  run = function(k)
    C.A, C.B, C.Cm = eighths(8 * 16, 121), eighths(16 * 32, 122), eighths(8 * 32, 123)
    local c = pack16(C.Cm, f16bits)
    k[{1, 32}](pack16(C.A, f16bits), pack16(C.B, f16bits), c)
    return {c}
  end,
  check = function(o)
    local want = transpose(gemm(C.A, C.B, C.Cm, 8, 32, 16, DEFAULT), 8, 32)
    local got = {}
    for i, u in ipairs(o[1]:tolist()) do got[2 * i - 1] = f16value(u & 0xffff); got[2 * i] = f16value(u >> 16) end
    for i = 1, #want do
      if got[i] ~= want[i] then error(string.format("element %d: got %.17g, want %.17g", i - 1, got[i], want[i])) end
    end
  end,
}

-- cvt.rna.tf32.f32: 10 fraction bits, ties away from zero.
local function tf32(x)
  local u = f32bits(x)
  local s, a = u & 0x80000000, u & 0x7fffffff
  if a < 0x7f800000 then a = (a + 0x1000) & 0xffffe000 end
  return from_bits(s | a)
end

C.case{
  name = "wmma m16n16k8 tf32 with __float_to_tf32, c loaded col-major",
  opts = OPTS,
  src = [[
#include <mma.h>
using namespace nvcuda;
__global__ void g(const float *a, const float *b, float *c, float *d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::load_matrix_sync(fa, a, 8);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_col_major);
  for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}]],
  run = function(k)
    local a, xs = C.uniform(16 * 8, 131, -3, 3)
    local b, ys = C.uniform(8 * 16, 132, -3, 3)
    local c, zs = C.uniform(16 * 16, 133, -1, 1)
    local d = cuda.array(256)
    k[{1, 32}](a, b, c, d)
    C.A, C.B, C.Cm = {}, {}, transpose(zs, 16, 16)
    for i = 1, #xs do C.A[i] = tf32(xs[i]) end
    for i = 1, #ys do C.B[i] = tf32(ys[i]) end
    return {d}
  end,
  check = function(o)
    local P = {extra = DEFAULT.extra, nearest = DEFAULT.nearest, group = DEFAULT.group_tf32}
    C.same(o[1], gemm(C.A, C.B, C.Cm, 16, 16, 8, P), {rtol = 1e-5, atol = 1e-5})
  end,
}

-- What every lane holds in fragment.x[i] after wmma::load_matrix_sync, for a, b and the
-- accumulator of m16n16k16: element (r, c) of each matrix holds r*16 + c, exact in f16. The layout
-- is the PTX ISA's m16n8k16 one, composed for 16 columns; the GPU's digest confirms it.
C.case{
  name = "wmma m16n16k16 fragment layout: which lane holds which element in fragment.x[i]",
  opts = OPTS,
  src = [[
#include <mma.h>
using namespace nvcuda;
__global__ void g(const unsigned *m16, const float *m32, unsigned *out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, (const __half *)m16, 16);
  wmma::load_matrix_sync(fb, (const __half *)m16, 16);
  wmma::load_matrix_sync(fc, m32, 16, wmma::mem_row_major);
  int l = threadIdx.x;
  for (int i = 0; i < 16; i++) out[l * 40 + i] = __half_as_ushort(fa.x[i]);
  for (int i = 0; i < 16; i++) out[l * 40 + 16 + i] = __half_as_ushort(fb.x[i]);
  for (int i = 0; i < 8; i++) out[l * 40 + 32 + i] = __float_as_uint(fc.x[i]);
}]],
  run = function(k)
    local idx = {}
    for i = 1, 256 do idx[i] = i - 1 end
    local out = cuda.array(32 * 40, "u32")
    k[{1, 32}](pack16(idx, f16bits), cuda.array(idx), out)
    return {out}
  end,
  check = function(o)
    local want = {}
    for l = 0, 31 do
      local g, t = l >> 2, l & 3
      for i = 0, 15 do -- a: the m16n8k16 a fragment, twice
        local j = i & 7
        want[l * 40 + i + 1] = f16bits((g + 8 * ((j >> 1) & 1)) * 16 + 2 * t + (j & 1) + 8 * (j >> 2))
      end
      for i = 0, 15 do -- b (col-major: element (k, n) at n*16 + k): two n8 tiles, twice
        local j = i & 7
        local kk, n = 2 * t + (j & 1) + 8 * ((j >> 1) & 1), g + 8 * (j >> 2)
        want[l * 40 + 16 + i + 1] = f16bits(n * 16 + kk)
      end
      for i = 0, 7 do -- c: two m16n8 tiles side by side
        local r, c = g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)
        want[l * 40 + 32 + i + 1] = f32bits(r * 16 + c)
      end
    end
    C.same(o[1], want)
  end,
}
