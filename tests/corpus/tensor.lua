-- tensor.lua: corpus cases for the tensor-core instructions: wmma (f16, bf16, tf32 inputs; f16
-- and f32 accumulators; the three 16-bit shapes), mma.sync through inline PTX, ldmatrix,
-- cp.async, and probes of how the tensor cores add.
--
-- Inputs of 16-bit types travel as u32 arrays holding two raw halves each (element 2i in the
-- low half), so the cases need no f16 arithmetic outside the instructions under test. The wmma
-- cases include <mma.h> as a learner would, from the CUDA headers on NVRTC's include path.
--
-- The probes ("tensor-core addition: ...") decide the simulator's TC_* parameters (sim_tensor.c):
-- each row of A is built so that the candidate behaviours give different sums (products of very
-- different magnitudes, cancellation inside and across groups of products, an accumulator much
-- larger than the products, ties and sign); their check lists every candidate (extra bits kept,
-- truncation or rounding, products per fused group, the accumulator inside the fused sum or added
-- after it, or a chain of fp32 fmas) whose bits match.
-- On the GPU, a failing probe names the candidates the H200 matches.
local C = dofile("tests/corpus/corpus.lua")

-- ---- 16-bit formats (exactly representable values only) ----

local f32 = C.f32
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

-- The bits of x, which must be exactly an f16 (bf16) value.
local function f16bits(x)
  local h = C.half_bits(x, "f16")
  assert(C.half_value(h, "f16") == x, "not an f16 value: " .. x)
  return h
end

local function bf16bits(x)
  local h = C.half_bits(x, "bf16")
  assert(C.half_value(h, "bf16") == x, "not a bf16 value: " .. x)
  return h
end

local function f16value(h) return C.half_value(h, "f16") end

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

-- The exponent a term is aligned by: its leading bit's, zeros and subnormals at their format's
-- least normal exponent (what a biased exponent field of 0 reads as).
local function align_exp(x, min_exp)
  if x == 0 then return min_exp end
  local e = ilog2(x)
  return e < min_exp and min_exp or e
end

-- c + sum a[i]*b[i] (i = 1..k) under candidate P = {extra =, nearest =, group =} or {fma = true}.
-- P.min_exp is the inputs' least normal exponent (-14 for f16, else -126), P.c_min_exp c's. A
-- product is aligned by the sum of its factors' exponents, not renormalised first.
local tc_dot
function tc_dot(a, b, c, P)
  local k = #a
  if P.fma then
    for i = 1, k do c = f32(a[i] * b[i] + c) end
    return c
  end
  if P.sep then -- the products' fused sum first, then one rounded fp32 add of the accumulator
    local s = tc_dot(a, b, 0, {extra = P.extra, nearest = P.nearest, group = P.group, min_exp = P.min_exp})
    return f32(s + c)
  end
  local min_exp = P.min_exp or -126
  for g = 1, k, P.group do
    local terms = {c}
    local emax, nonzero = align_exp(c, P.c_min_exp or -126), c ~= 0
    for i = g, math.min(k, g + P.group - 1) do
      local t = a[i] * b[i]
      terms[#terms + 1] = t
      local e = align_exp(a[i], min_exp) + align_exp(b[i], min_exp)
      if e > emax then emax = e end
      if t ~= 0 then nonzero = true end
    end
    if nonzero then
      local q = emax - 23 - P.extra
      local s = 0
      for _, t in ipairs(terms) do s = s + cut(t, q, P.nearest) end
      c = to_f32(s, P.nearest)
    end
  end
  return c
end

local DEFAULT = {extra = 2, nearest = false, group = 16, group_tf32 = 4, group_tf32_mma = 8} -- sim_tensor.c's TC_*

-- P for f16 inputs (and an f16 accumulator when c_min_exp is given).
local function f16_params(P, c_min_exp)
  local t = {}
  for key, v in pairs(P) do t[key] = v end
  t.min_exp, t.c_min_exp = -14, c_min_exp
  return t
end

local function candidates()
  local list = {{fma = true, name = "a chain of fp32 fmas"}}
  for _, g in ipairs({4, 8, 16}) do
    for _, x in ipairs({0, 1, 2, 3, 4, 5, 8, 30}) do
      for _, nr in ipairs({false, true}) do
        local name = string.format("extra=%d %s group=%d", x, nr and "nearest" or "truncate", g)
        list[#list + 1] = {extra = x, nearest = nr, group = g, name = name}
        list[#list + 1] = {extra = x, nearest = nr, group = g, sep = true, name = name .. ", accumulator added after"}
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

-- An f16 result (a u32 array of packed halves) against exact sums: within one f16 ulp, since
-- how the tensor core rounds its sum to f16 is for the GPU's digest to pin down.
local function same_f16(arr, want)
  local got = {}
  for i, u in ipairs(arr:tolist()) do got[2 * i - 1] = f16value(u & 0xffff); got[2 * i] = f16value(u >> 16) end
  for i = 1, #want do
    local ulp = 2.0 ^ (math.max(want[i] ~= 0 and ilog2(want[i]) or -14, -14) - 10)
    if math.abs(got[i] - want[i]) > ulp then
      error(string.format("f16 element %d: got %.10g, want %.10g", i - 1, got[i], want[i]), 2)
    end
  end
end

-- ---- wmma ----

C.case{
  name = "wmma m16n16k16 f16 GEMM, a row-major, b col-major, f32 accumulator loaded and stored",
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
  check = function(o) C.same(o[1], gemm(C.A, C.B, C.Cm, 16, 16, 16, f16_params(DEFAULT))) end,
}

C.case{
  name = "wmma m32n8k16 bf16, a col-major, b row-major, stored col-major",
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
    same_f16(o[1], transpose(gemm(C.A, C.B, C.Cm, 8, 32, 16, {fma = true}), 8, 32))
  end,
}

C.case{
  name = "wmma m16n16k16 f16 with an f16 accumulator in and an f32 one out",
  src = [[
#include <mma.h>
using namespace nvcuda;
__global__ void g(const unsigned *a, const unsigned *b, const unsigned *c, float *d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, __half> fc;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fd;
  wmma::load_matrix_sync(fa, (const __half *)a, 16);
  wmma::load_matrix_sync(fb, (const __half *)b, 16);
  wmma::load_matrix_sync(fc, (const __half *)c, 16, wmma::mem_col_major);
  wmma::mma_sync(fd, fa, fb, fc);
  wmma::store_matrix_sync(d, fd, 16, wmma::mem_row_major);
}]],
  run = function(k)
    C.A, C.B, C.Cm = eighths(256, 124), eighths(256, 125), eighths(256, 126)
    local d = cuda.array(256)
    k[{1, 32}](pack16(transpose(C.A, 16, 16), f16bits), pack16(C.B, f16bits), pack16(transpose(C.Cm, 16, 16), f16bits), d)
    return {d}
  end,
  check = function(o) C.same(o[1], gemm(C.A, C.B, C.Cm, 16, 16, 16, f16_params(DEFAULT, -14))) end,
}

C.case{
  name = "wmma m32n8k16 f16 and m8n32k16 bf16, a and b in all four layouts",
  src = [[
#include <mma.h>
using namespace nvcuda;
template <int M, int N, typename T, typename LA, typename LB>
__device__ void gemm(const void *a, const void *b, float *d, int lda, int ldb) {
  wmma::fragment<wmma::matrix_a, M, N, 16, T, LA> fa;
  wmma::fragment<wmma::matrix_b, M, N, 16, T, LB> fb;
  wmma::fragment<wmma::accumulator, M, N, 16, float> fc;
  wmma::fill_fragment(fc, 1.0f);
  wmma::load_matrix_sync(fa, (const T *)a, lda);
  wmma::load_matrix_sync(fb, (const T *)b, ldb);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, N, wmma::mem_row_major);
}
__global__ void g(const unsigned *a1, const unsigned *b1, const unsigned *a2, const unsigned *b2, float *d) {
  gemm<32, 8, __half, wmma::row_major, wmma::col_major>(a1, b1, d, 16, 16);
  gemm<8, 32, __nv_bfloat16, wmma::col_major, wmma::row_major>(a2, b2, d + 256, 8, 32);
}]],
  kernel = "g",
  run = function(k)
    C.A, C.B = eighths(32 * 16, 127), eighths(16 * 8, 128)
    C.X, C.Y = eighths(8 * 16, 129), eighths(16 * 32, 130)
    local d = cuda.array(512)
    k[{1, 32}](pack16(C.A, f16bits), pack16(transpose(C.B, 16, 8), f16bits),
               pack16(transpose(C.X, 8, 16), bf16bits), pack16(C.Y, bf16bits), d)
    return {d}
  end,
  check = function(o)
    local ones = {}
    for i = 1, 256 do ones[i] = 1 end
    local want = gemm(C.A, C.B, ones, 32, 8, 16, f16_params(DEFAULT))
    local w2 = gemm(C.X, C.Y, ones, 8, 32, 16, DEFAULT)
    for i = 1, 256 do want[256 + i] = w2[i] end
    C.same(o[1], want)
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
  -- Three of these sums (elements 27, 172 and 228) differ by an ulp unless products are aligned
  -- by their factors' exponents rather than their own: the case that settled that rule.
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
    C.same(o[1], gemm(C.A, C.B, C.Cm, 16, 16, 8, P))
  end,
}

-- What every lane holds in fragment.x[i] after wmma::load_matrix_sync, for a, b and the
-- accumulator of m16n16k16: element (r, c) of each matrix holds r*16 + c, exact in f16. The layout
-- is the PTX ISA's m16n8k16 one, composed for 16 columns; the GPU's digest confirms it.
C.case{
  name = "wmma m16n16k16 fragment layout: which lane holds which element in fragment.x[i]",
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
    -- On a mismatch, say where the GPU keeps each element: that is the layout to adopt. Positions
    -- are (row, column) in memory: (m, k) for a, (n, k) for the col-major b, (m, n) for c.
    local got, bad = o[1]:tolist(), {}
    local function where(v, j) -- the matrix position a slot's bits name
      local x = j % 40 >= 32 and from_bits(v) or f16value(v)
      return string.format("(%d,%d)", math.floor(x) // 16, math.floor(x) % 16)
    end
    for j = 0, 32 * 40 - 1 do
      if got[j + 1] ~= want[j + 1] and #bad < 12 then
        local slot = j % 40
        local frag = slot < 16 and "a" or slot < 32 and "b" or "c"
        bad[#bad + 1] = string.format("lane %d %s.x[%d] holds %s, the simulator %s", j // 40, frag,
                                      slot < 16 and slot or slot < 32 and slot - 16 or slot - 32,
                                      where(got[j + 1], j), where(want[j + 1], j))
      end
    end
    if #bad > 0 then error("fragment layouts differ: " .. table.concat(bad, "; ")) end
  end,
}

-- ---- mma.sync through inline PTX: each lane builds its fragments by the PTX ISA's tables ----

C.case{
  name = "mma.sync m16n8k16 row.col f32.f16.f16.f32 with the ISA's fragment layout",
  src = [[
__global__ void g(const unsigned *A, const unsigned *B, const float *Cm, float *D) {
  const unsigned short *a = (const unsigned short *)A, *b = (const unsigned short *)B;
  int l = threadIdx.x, g = l >> 2, t = l & 3;
  unsigned ra[4], rb[2];
  float rc[4], rd[4];
  for (int i = 0; i < 4; i++) { /* a: 16 x 16 row-major */
    int r = g + 8 * (i & 1), c = 2 * t + 8 * (i >> 1);
    ra[i] = a[r * 16 + c] | (unsigned)a[r * 16 + c + 1] << 16;
  }
  for (int i = 0; i < 2; i++) { /* b: 16 x 8, element (k, n) at k * 8 + n */
    int k = 2 * t + 8 * i;
    rb[i] = b[k * 8 + g] | (unsigned)b[(k + 1) * 8 + g] << 16;
  }
  for (int i = 0; i < 4; i++) rc[i] = Cm[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%10,%11,%12,%13};"
               : "=f"(rd[0]), "=f"(rd[1]), "=f"(rd[2]), "=f"(rd[3])
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                 "f"(rc[0]), "f"(rc[1]), "f"(rc[2]), "f"(rc[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = rd[i];
}]],
  run = function(k)
    C.A, C.B, C.Cm = eighths(256, 141), eighths(128, 142), eighths(128, 143)
    local d = cuda.array(128)
    k[{1, 32}](pack16(C.A, f16bits), pack16(C.B, f16bits), cuda.array(C.Cm), d)
    return {d}
  end,
  check = function(o) C.same(o[1], gemm(C.A, C.B, C.Cm, 16, 8, 16, f16_params(DEFAULT))) end,
}

C.case{
  name = "mma.sync m16n8k8 bf16, m16n8k8 tf32 and m16n8k4 tf32",
  src = [[
__global__ void g(const unsigned *A16, const unsigned *B16, const float *A32, const float *B32, float *D) {
  const unsigned short *a = (const unsigned short *)A16, *b = (const unsigned short *)B16;
  int l = threadIdx.x, g = l >> 2, t = l & 3;
  float d[3][4];
  unsigned ra[2], rb, xa[4], xb[2];
  for (int i = 0; i < 2; i++) { /* bf16 a: 16 x 8 row-major */
    int r = g + 8 * i;
    ra[i] = a[r * 8 + 2 * t] | (unsigned)a[r * 8 + 2 * t + 1] << 16;
  }
  rb = b[(2 * t) * 8 + g] | (unsigned)b[(2 * t + 1) * 8 + g] << 16; /* bf16 b: 8 x 8, (k, n) at k*8+n */
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
               : "=f"(d[0][0]), "=f"(d[0][1]), "=f"(d[0][2]), "=f"(d[0][3]) : "r"(ra[0]), "r"(ra[1]), "r"(rb), "f"(0.25f));
  for (int i = 0; i < 4; i++) xa[i] = __float_as_uint(A32[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)]); /* tf32 a: 16 x 8 */
  for (int i = 0; i < 2; i++) xb[i] = __float_as_uint(B32[(t + 4 * i) * 8 + g]);                     /* tf32 b: 8 x 8 */
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
               : "=f"(d[1][0]), "=f"(d[1][1]), "=f"(d[1][2]), "=f"(d[1][3])
               : "r"(xa[0]), "r"(xa[1]), "r"(xa[2]), "r"(xa[3]), "r"(xb[0]), "r"(xb[1]), "f"(0.0f));
  /* m16n8k4: the first four columns of a, the first four rows of b */
  unsigned ya[2] = {__float_as_uint(A32[g * 8 + t]), __float_as_uint(A32[(g + 8) * 8 + t])};
  unsigned yb = __float_as_uint(B32[t * 8 + g]);
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
               : "=f"(d[2][0]), "=f"(d[2][1]), "=f"(d[2][2]), "=f"(d[2][3]) : "r"(ya[0]), "r"(ya[1]), "r"(yb), "f"(1.0f));
  for (int m = 0; m < 3; m++)
    for (int i = 0; i < 4; i++) D[m * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[m][i];
}]],
  run = function(k)
    C.A, C.B = eighths(128, 151), eighths(64, 152)
    C.X, C.Y = eighths(128, 153), eighths(64, 154)
    local d = cuda.array(3 * 128)
    k[{1, 32}](pack16(C.A, bf16bits), pack16(C.B, bf16bits), cuda.array(C.X), cuda.array(C.Y), d)
    return {d}
  end,
  check = function(o)
    local full = function(v) local t = {} for i = 1, 128 do t[i] = v end return t end
    local P = {extra = DEFAULT.extra, nearest = DEFAULT.nearest, group = DEFAULT.group_tf32_mma}
    local want = gemm(C.A, C.B, full(0.25), 16, 8, 8, DEFAULT)
    local w2 = gemm(C.X, C.Y, full(0), 16, 8, 8, P)
    local X4, Y4 = {}, {}
    for r = 0, 15 do for c = 0, 3 do X4[r * 4 + c + 1] = C.X[r * 8 + c + 1] end end
    for r = 0, 3 do for c = 0, 7 do Y4[r * 8 + c + 1] = C.Y[r * 8 + c + 1] end end
    local w3 = gemm(X4, Y4, full(1), 16, 8, 4, P)
    for i = 1, 128 do want[128 + i] = w2[i]; want[256 + i] = w3[i] end
    C.same(o[1], want)
  end,
}

C.case{
  name = "mma.sync m16n8k16 bf16, m16n8k8 f16, and m16n8k16 f16 with f16 accumulators",
  src = [[
/* Fragments of a 16 x 16 row-major a and a 16 x 8 b ((k, n) at k*8+n) by the PTX ISA's tables. */
__device__ void frags(const unsigned *A, const unsigned *B, unsigned ra[4], unsigned rb[2]) {
  const unsigned short *a = (const unsigned short *)A, *b = (const unsigned short *)B;
  int l = threadIdx.x, g = l >> 2, t = l & 3;
  for (int i = 0; i < 4; i++) {
    int r = g + 8 * (i & 1), c = 2 * t + 8 * (i >> 1);
    ra[i] = a[r * 16 + c] | (unsigned)a[r * 16 + c + 1] << 16;
  }
  for (int i = 0; i < 2; i++) rb[i] = b[(2 * t + 8 * i) * 8 + g] | (unsigned)b[(2 * t + 8 * i + 1) * 8 + g] << 16;
}
__global__ void g(const unsigned *Ab, const unsigned *Bb, const unsigned *Ah, const unsigned *Bh, const unsigned *Ch,
                  float *D, unsigned *Dh) {
  const unsigned short *ch = (const unsigned short *)Ch;
  int l = threadIdx.x, g = l >> 2, t = l & 3;
  unsigned ra[4], rb[2], ha[4], hb[2], rc[2], rd[2];
  float d0[4], d1[4];
  frags(Ab, Bb, ra, rb);
  frags(Ah, Bh, ha, hb);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
               : "=f"(d0[0]), "=f"(d0[1]), "=f"(d0[2]), "=f"(d0[3])
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "f"(-1.0f));
  /* m16n8k8 f16: the first 8 columns of a (registers 0 and 1), the first 8 rows of b (register 0) */
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
               : "=f"(d1[0]), "=f"(d1[1]), "=f"(d1[2]), "=f"(d1[3]) : "r"(ha[0]), "r"(ha[1]), "r"(hb[0]), "f"(2.0f));
  /* f16 accumulators: two registers of two halves, (g, 2t..2t+1) and (g+8, 2t..2t+1) */
  for (int i = 0; i < 2; i++) rc[i] = ch[(g + 8 * i) * 8 + 2 * t] | (unsigned)ch[(g + 8 * i) * 8 + 2 * t + 1] << 16;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(rd[0]), "=r"(rd[1]) : "r"(ha[0]), "r"(ha[1]), "r"(ha[2]), "r"(ha[3]), "r"(hb[0]), "r"(hb[1]),
                 "r"(rc[0]), "r"(rc[1]));
  for (int i = 0; i < 4; i++) {
    int at = (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1);
    D[at] = d0[i];
    D[128 + at] = d1[i];
  }
  for (int i = 0; i < 2; i++) Dh[(g + 8 * i) * 4 + t] = rd[i];
}]],
  kernel = "g",
  run = function(k)
    C.A, C.B, C.Cm = eighths(256, 144), eighths(128, 145), eighths(128, 146)
    C.H, C.K = eighths(256, 147), eighths(128, 148)
    local d, dh = cuda.array(256), cuda.array(64, "u32")
    k[{1, 32}](pack16(C.A, bf16bits), pack16(C.B, bf16bits), pack16(C.H, f16bits), pack16(C.K, f16bits),
               pack16(C.Cm, f16bits), d, dh)
    return {d, dh}
  end,
  check = function(o)
    local full = function(v) local t = {} for i = 1, 128 do t[i] = v end return t end
    local want = gemm(C.A, C.B, full(-1), 16, 8, 16, DEFAULT)
    local A8 = {}
    for r = 0, 15 do for c = 0, 7 do A8[r * 8 + c + 1] = C.H[r * 16 + c + 1] end end
    local w1 = gemm(A8, {table.unpack(C.K, 1, 64)}, full(2), 16, 8, 8, f16_params(DEFAULT))
    for i = 1, 128 do want[128 + i] = w1[i] end
    C.same(o[1], want)
    same_f16(o[2], gemm(C.H, C.K, C.Cm, 16, 8, 16, {fma = true}))
  end,
}

-- ---- ldmatrix and cp.async ----

-- An f16 result is rounded once, to nearest even, from the exact fused sum. Rounding it to fp32
-- first (toward zero, as an f32 result is) would lose the 2^-25 that breaks row 0's tie.
C.case{
  name = "mma.sync m16n8k16 f16 accumulator: rounded once from the exact sum",
  src = [[
__global__ void g(const unsigned *A, const unsigned *B, unsigned *D) {
  const unsigned short *a = (const unsigned short *)A, *b = (const unsigned short *)B;
  int l = threadIdx.x, g = l >> 2, t = l & 3;
  unsigned ra[4], rb[2], rd[2], zero = 0;
  for (int i = 0; i < 4; i++) {
    int r = g + 8 * (i & 1), c = 2 * t + 8 * (i >> 1);
    ra[i] = a[r * 16 + c] | (unsigned)a[r * 16 + c + 1] << 16;
  }
  for (int i = 0; i < 2; i++) rb[i] = b[(2 * t + 8 * i) * 8 + g] | (unsigned)b[(2 * t + 8 * i + 1) * 8 + g] << 16;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%8};"
               : "=r"(rd[0]), "=r"(rd[1]) : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                 "r"(zero));
  D[g * 4 + t] = rd[0];
  D[(g + 8) * 4 + t] = rd[1];
}]],
  run = function(k)
    -- row r of A against B's column 0 = [1, 1, 2^-12, 0...]; other columns of B are 0
    local rows = {
      {1, 2.0 ^ -11, 2.0 ^ -13},  -- 1 + 2^-11 + 2^-25: just above a tie, rounds up
      {1, 2.0 ^ -11},             -- an exact tie: to even (1)
      {1, 3 * 2.0 ^ -11},         -- 1.5 ulp: up to 2 ulp
      {-1, -2.0 ^ -11, -2.0 ^ -13}, -- row 0 negated
      {2.0 ^ -14, 2.0 ^ -24},     -- a subnormal sum: exact
    }
    local A, B = {}, {}
    for i = 1, 256 do A[i] = 0 end
    for i = 1, 128 do B[i] = 0 end
    for r, vals in ipairs(rows) do for c, v in ipairs(vals) do A[(r - 1) * 16 + c] = v end end
    B[1], B[9], B[17] = 1, 1, 2.0 ^ -12
    local d = cuda.array(64, "u32")
    k[{1, 32}](pack16(A, f16bits), pack16(B, f16bits), d)
    return {d}
  end,
  check = function(o)
    local u = o[1]:tolist()
    local function at(r, c) local w = u[r * 4 + c // 2 + 1] return c % 2 == 0 and w & 0xffff or w >> 16 end
    local want = {0x3c01, 0x3c00, 0x3c02, 0xbc01, 0x0401}
    for r = 0, 15 do
      for c = 0, 7 do
        local w = c == 0 and want[r + 1] or 0
        C.check(at(r, c) == (w or 0), string.format("d[%d][%d] = 0x%04x, want 0x%04x", r, c, at(r, c), w or 0))
      end
    end
  end,
}

C.case{
  name = "ldmatrix m8n8 x1, x2, x4, plain and .trans, from shared memory",
  src = [[
__global__ void g(const unsigned *in, unsigned *out) {
  __shared__ __align__(16) unsigned short s[4 * 64]; /* matrix j at s[64 j], row r at +8 r */
  for (int i = threadIdx.x; i < 128; i += 32) ((unsigned *)s)[i] = in[i];
  __syncthreads();
  int l = threadIdx.x;
  unsigned addr = (unsigned)__cvta_generic_to_shared(&s[(l >> 3) * 64 + (l & 7) * 8]);
  unsigned r[12];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]) : "r"(addr));
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[8]) : "r"(addr));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[9]), "=r"(r[10]) : "r"(addr));
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[11]) : "r"(addr + 64 * 2 * 3));
  for (int i = 0; i < 12; i++) out[l * 12 + i] = r[i];
}]],
  run = function(k)
    local xs = {}
    local u = cuda.rand(256, "f64", 161):tolist()
    for i = 1, 256 do xs[i] = math.floor(u[i] * 65536) end
    C.xs = xs
    local out = cuda.array(32 * 12, "u32")
    k[{1, 32}](pack16(xs, function(v) return v end), out)
    return {out}
  end,
  check = function(o)
    local M = function(j, r, c) return C.xs[j * 64 + r * 8 + c + 1] end
    local want = {}
    for l = 0, 31 do
      local r, c = l >> 2, 2 * (l & 3)
      local plain = function(j) return M(j, r, c) | M(j, r, c + 1) << 16 end
      local trans = function(j) return M(j, c, r) | M(j, c + 1, r) << 16 end
      local w = {plain(0), plain(1), plain(2), plain(3), trans(0), trans(1), trans(2), trans(3),
                 plain(0), trans(0), trans(1), trans(3)}
      for i = 1, 12 do want[l * 12 + i] = w[i] end
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "cp.async double-buffered tile copy: 16-byte cg with src-size zero fill, 4- and 8-byte ca",
  src = [[
#define TILE 256
__global__ void g(const float *in, float *out, float *small, int n) {
  __shared__ __align__(16) float buf[2][TILE];
  __shared__ __align__(16) float s4[64], s8[128];
  int tid = threadIdx.x, tiles = (n + TILE - 1) / TILE;
  { /* 4-byte and 8-byte copies of the first elements */
    unsigned d4 = (unsigned)__cvta_generic_to_shared(&s4[tid]), d8 = (unsigned)__cvta_generic_to_shared(&s8[2 * tid]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d4), "l"(in + tid));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(d8), "l"(in + 2 * tid));
  }
  for (int t = 0; t <= tiles; t++) {
    if (t < tiles) { /* issue tile t into buffer t & 1: each thread 16 bytes, zero-filled past n */
      int i = t * TILE + 4 * tid, left = n - i;
      int bytes = left >= 4 ? 16 : left > 0 ? 4 * left : 0;
      unsigned dst = (unsigned)__cvta_generic_to_shared(&buf[t & 1][4 * tid]);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(in + (bytes ? i : 0)), "r"(bytes));
    }
    asm volatile("cp.async.commit_group;");
    if (t == 0) continue;
    if (t < tiles) asm volatile("cp.async.wait_group 1;"); else asm volatile("cp.async.wait_all;");
    __syncthreads();
    int u = t - 1; /* consume tile u, reading other threads' copies and the zero fill */
    for (int q = tid; q < TILE; q += 64) {
      int i = u * TILE + q;
      if (i < n) out[i] = 2.0f * buf[u & 1][q] + buf[u & 1][q ^ 1] + buf[u & 1][TILE - 1];
    }
    __syncthreads();
  }
  small[tid] = s4[tid];
  small[64 + 2 * tid] = s8[2 * tid];
  small[65 + 2 * tid] = s8[2 * tid + 1];
}]],
  run = function(k)
    local n = 998 -- the last tile is partial, and so is its last 16-byte chunk
    local a, xs = C.uniform(n, 171, -4, 4)
    local out, small = cuda.array(n), cuda.array(192)
    k[{1, 64}](a, out, small, n)
    C.xs, C.n = xs, n
    return {out, small}
  end,
  check = function(o)
    local x = function(i) return i < C.n and C.xs[i + 1] or 0 end
    local want = {}
    for i = 0, C.n - 1 do
      local base, q = i - i % 256, i % 256
      want[i + 1] = f32(f32(2 * x(i) + x(base + (q ~ 1))) + x(base + 255))
    end
    C.same(o[1], want)
    local sw = {}
    for i = 0, 191 do sw[i + 1] = x(i < 64 and i or i - 64) end
    C.same(o[2], sw)
  end,
}

-- ---- a whole GEMM ----

C.case{
  name = "tiled 64x64x64 f16 GEMM with wmma: four warps per block, tiles staged in shared memory",
  src = [[
#include <mma.h>
using namespace nvcuda;
#define N 64
__global__ void g(const unsigned *A, const unsigned *B, float *Cm) {
  __shared__ __align__(32) __half as[32 * 16], bs[16 * 32]; /* a 32 x 16 slab of A, a 16 x 32 slab of B */
  const __half *a = (const __half *)A, *b = (const __half *)B;
  int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2;
  int row0 = blockIdx.y * 32, col0 = blockIdx.x * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k0 = 0; k0 < N; k0 += 16) {
    for (int i = threadIdx.x; i < 32 * 16; i += blockDim.x) {
      as[i] = a[(row0 + i / 16) * N + k0 + i % 16];
      bs[i] = b[(k0 + i / 32) * N + col0 + i % 32];
    }
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::load_matrix_sync(fa, as + wr * 16 * 16, 16);
    wmma::load_matrix_sync(fb, bs + wc * 16, 32);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncthreads();
  }
  wmma::store_matrix_sync(Cm + (row0 + wr * 16) * N + col0 + wc * 16, acc, N, wmma::mem_row_major);
}]],
  run = function(k)
    C.A, C.B = eighths(64 * 64, 181), eighths(64 * 64, 182)
    local c = cuda.array(64 * 64)
    k[{{2, 2}, 128}](pack16(C.A, f16bits), pack16(C.B, f16bits), c)
    return {c}
  end,
  check = function(o)
    -- Sums of multiples of 1/64 below 2^8 are exact however the tensor cores add.
    C.same(o[1], gemm(C.A, C.B, nil, 64, 64, 64, {fma = true}))
  end,
}

-- ---- how the tensor cores add ----
--
-- Each probe runs D = A*B + C where column 0 of B is all ones, so D[r][0] = C[r][0] + sum of row
-- r of A: the rows below are built so that candidate behaviours disagree on it. What each row
-- tells apart (t is a tiny power of two, all values exact in the input type):
--   rows 0-4   [4096, t x (k-1)], t = 2^-12 .. 2^-16: how many bits below fp32's 24 survive the
--              alignment to the largest term (extra bits), and a fused sum vs a chain of fp32 adds
--              (each t is half an ulp of 4096 or less, which a chain rounds away)
--   row 5      [4096, -4096, 0.., t x 8 at the end]: the tiny terms survive only when they are
--              added in a later group than the big ones (groups of 8 or fewer vs 16)
--   row 6      [4096, -4096, 0, 0, t x 4, 0..]: groups of 4 vs 8
--   rows 7-9   C = +-2^20, [2^-4 or 2^-6 x k]: an accumulator much larger than the products
--              (a chain loses every product; a fused add keeps them down to its extra bits)
--   row 10     [2^15, 2^-10 x (k/2-1), -2^15, 2^-10 x ...]: cancellation across groups, and
--              truncation vs rounding when a group's sum is normalised
--   row 11     row 0 negated: truncation is toward zero (sign-magnitude), not toward -inf
--   row 12     tiny products only (f16 subnormals): no alignment loss when all terms are small
--   row 13     C = 1.5 * 2^-23, [1, 0..]: the normalisation's rounding (1 + 1.5 ulp: 1 or 2 ulp)
--   rows 14-15 random values of mixed magnitude; the other columns of B are random too, so every
--              output is a further random probe.
-- The check lists the candidates whose bits match all 256 outputs; the simulator's TC_* must be
-- one of them. On the GPU, a failure names the candidates the H200 matches.
local function probe_rows(k, tiny_of, lo, enc_ok)
  local rows, cs = {}, {}
  local function row(c, vals) local t = {} for i = 1, k do t[i] = vals[i] or 0 end rows[#rows + 1] = t; cs[#cs + 1] = c end
  local function rep(v, n) local t = {} for i = 1, n do t[i] = v end return t end
  local function cat(...) local t = {} for _, p in ipairs({...}) do for _, v in ipairs(p) do t[#t + 1] = v end end return t end
  for j = 12, 16 do row(0, cat({4096}, rep(2.0 ^ -j, k - 1))) end
  row(0, cat({4096, -4096}, rep(0, k - 2 - k // 2), rep(2.0 ^ -16, k // 2)))
  row(0, cat({4096, -4096, 0, 0}, rep(2.0 ^ -16, 4)))
  row(2.0 ^ 20, rep(2.0 ^ -4, k))
  row(2.0 ^ 20, rep(2.0 ^ -6, k))
  row(-2.0 ^ 20, rep(2.0 ^ -6, k))
  row(0, cat({2.0 ^ 15}, rep(2.0 ^ -10, k // 2 - 1), {-2.0 ^ 15}, rep(2.0 ^ -10, k // 2 - 1)))
  row(0, cat({-4096}, rep(-2.0 ^ -12, k - 1)))
  row(0, rep(tiny_of, k))
  row(1.5 * 2.0 ^ -23, {1})
  local u = cuda.rand(2 * k + 2, "f64", 191):tolist()
  for r = 0, 1 do
    local t = {}
    for i = 1, k do
      local e = math.floor(u[r * k + i] * 24) - 12
      t[i] = (math.floor(u[r * k + i] * 1e6) % 15 - 7) / 4 * 2.0 ^ e
    end
    row(u[2 * k + 1 + r] * 3, t)
  end
  return rows, cs
end

local function probe_case(label, et, k, tiny)
  local enc = et == "f16" and f16bits or et == "bf16" and bf16bits or nil
  local frag = et == "f16" and "__half, wmma::row_major" or et == "bf16" and "__nv_bfloat16, wmma::row_major"
               or "wmma::precision::tf32, wmma::row_major"
  local ptr = et == "f16" and "const __half *" or et == "bf16" and "const __nv_bfloat16 *" or "const float *"
  local name = "tensor-core addition: " .. label
  return {
    name = name,
      src = string.format([[
#include <mma.h>
using namespace nvcuda;
__global__ void g(const void *a, const void *b, float *c) {
  wmma::fragment<wmma::matrix_a, 16, 16, %d, %s> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, %d, %s> fb;
  wmma::fragment<wmma::accumulator, 16, 16, %d, float> fc;
  wmma::load_matrix_sync(fa, (%s)a, %d);
  wmma::load_matrix_sync(fb, (%s)b, 16);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}]], k, frag, k, frag, k, ptr, k, ptr),
    run = function(kern)
      local rows, cs = probe_rows(k, tiny)
      local A, B, Cm = {}, eighths(k * 16, 192), eighths(256, 193)
      for r = 1, 16 do
        for i = 1, k do A[(r - 1) * k + i] = rows[r][i] end
        Cm[(r - 1) * 16 + 1] = f32(cs[r])
      end
      for i = 0, k - 1 do B[i * 16 + 1] = 1 end
      C.A, C.B, C.Cm = A, B, Cm
      local c = cuda.array(Cm)
      if enc then kern[{1, 32}](pack16(A, enc), pack16(B, enc), c)
      else kern[{1, 32}](cuda.array(A), cuda.array(B), c) end
      return {c}
    end,
    check = function(o)
      local got, matches, default_ok = o[1]:tolist(), {}, false
      local dgroup = et == "tf32" and DEFAULT.group_tf32 or DEFAULT.group
      for _, P in ipairs(candidates()) do
        if et == "f16" then P = f16_params(P) end
        local D = gemm(C.A, C.B, C.Cm, 16, 16, k, P)
        local same = true
        for i = 1, 256 do if D[i] ~= got[i] then same = false break end end
        if same then
          matches[#matches + 1] = P.name
          if not P.fma and not P.sep and P.extra == DEFAULT.extra and P.nearest == DEFAULT.nearest and P.group == dgroup then
            default_ok = true
          end
        end
      end
      local list = #matches > 0 and table.concat(matches, "; ") or "none of the candidates"
      if cuda.backend() ~= "sim" then print("# " .. name .. ": the bits match " .. list) end
      C.check(default_ok, "the simulator's TC_* parameters (sim_tensor.c) do not give these bits; they match " .. list)
    end,
  }
end

C.case(probe_case("f16 inputs, k = 16", "f16", 16, 2.0 ^ -24))
C.case(probe_case("bf16 inputs, k = 16", "bf16", 16, 2.0 ^ -60))
C.case(probe_case("tf32 inputs, k = 8", "tf32", 8, 2.0 ^ -60))

return C.done()
