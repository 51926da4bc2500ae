-- contract.lua: what ptxas does where PTX leaves it free, as the simulator models it
-- (sim/sim_contract.c): each case of contract_cases.lua must give the bits of its reference,
-- which spells out what the GPU computes, and those bits must differ from the other reading
-- somewhere, so that the case could fail. tests/gpu/contract_vs_gpu.lua runs the same cases on
-- the GPU.
local T = dofile("tests/lua/testlib.lua")
local K = dofile("tests/simulator/contract_cases.lua")
local N = 4096
local differ = K.differ
T.plan(K.count + 2)

for _, g in ipairs(K.groups) do
  local template, cases = g[1], g[2]
  local bodies = {}
  for i, c in ipairs(cases) do
    bodies["c" .. i], bodies["r" .. i], bodies["a" .. i] = c.body, c.ref, c.alt
  end
  local m = cuda.module(K.source(template, bodies))
  for i, c in ipairs(cases) do
    T.test(c.name, function()
      local got = K.run(template, m["c" .. i], c, N, 7 + i)
      local want = K.run(template, m["r" .. i], c, N, 7 + i)
      local other = K.run(template, m["a" .. i], c, N, 7 + i)
      local n, first = differ(got, want)
      T.check(n == 0, string.format("%d of %d differ from the reference; first at %d: %s, want %s", n, N,
                                    first or 0, tostring(got[first or 1]), tostring(want[first or 1])))
      T.check(differ(want, other) > 0, "the reference never differs from the other reading: the case cannot fail")
    end)
  end
end

-- The same rules reach ordinary CUDA C: a product with six uses, which NVRTC leaves to ptxas,
-- and a division by a constant under -use_fast_math.
T.test("CUDA C: a product feeding six sums is contracted into each", function()
  local src = [[
extern "C" __global__ void k(const float *x, const float *w, float *d, int n, int fused) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float t = x[i] * x[n + i], s = 0;
  for (int j = 0; j < 6; j++)
    s += (fused ? __fmaf_rn(x[i], x[n + i], w[j]) : __fadd_rn(__fmul_rn(x[i], x[n + i]), w[j])) * w[6 + j];
  d[i] = s;
  d[n + i] = 0;
  for (int j = 0; j < 6; j++) d[n + i] += (t + w[j]) * w[6 + j];
}]]
  local k = cuda.kernel(src)
  local x = cuda.rand(2 * N, "f32", 3)
  local w = cuda.rand(12, "f32", 4)
  local function go(fused)
    local d = cuda.array(2 * N)
    k[{N // 128, 128}](x, w, d, N, fused)
    local t = d:tolist()
    return {table.unpack(t, 1, N)}, {table.unpack(t, N + 1, 2 * N)}
  end
  local fused_ref, natural = go(1)
  local separate_ref = go(0)
  T.check(differ(natural, fused_ref) == 0, "the six sums are not the contracted ones")
  T.check(differ(fused_ref, separate_ref) > 0, "contracted and separate never differ: the test cannot fail")
end)

T.test("CUDA C: x / 33.0f + y under -use_fast_math is one fma with RN(1/33)", function()
  local k = cuda.kernel([[
extern "C" __global__ void k(const float *x, float *d, float c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  d[i] = x[i] / 33.0f + x[n + i];
  d[n + i] = __fmaf_rn(x[i], 1.0f / 33.0f, x[n + i]); /* folded to RN(1/33) by the front end */
  d[2 * n + i] = x[i] / c + x[n + i];                 /* c = 33 at run time: the unit's reciprocal */
}]], {"-use_fast_math"})
  local x = cuda.rand(2 * N, "f32", 5)
  local d = cuda.array(3 * N)
  k[{N // 128, 128}](x, d, 33, N)
  local t = d:tolist()
  local got, want, unit = {table.unpack(t, 1, N)}, {table.unpack(t, N + 1, 2 * N)}, {table.unpack(t, 2 * N + 1)}
  T.check(differ(got, want) == 0, "x / 33.0f + y is not fma(x, RN(1/33), y)")
  T.check(differ(want, unit) > 0, "RN(1/33) and the unit's reciprocal never differ: the test cannot fail")
end)
