-- div_vs_gpu.lua: f32 division on the GPU and on the simulator, compared bit for bit, for each
-- of div.rn, div.approx (what __fdividef and -use_fast_math's x / y compile to) and div.full,
-- with and without .ftz: random bit patterns over the whole f32 range (zeros, subnormals,
-- infinities and NaNs among them) and divisors near the edges of the range, where the GPU's
-- code scales them around MUFU.RCP (sim_alu.c's div_approx).
local T = dofile("tests/lua/testlib.lua")
local FORMS = {"rn.f32", "rn.ftz.f32", "approx.f32", "approx.ftz.f32", "full.f32", "full.ftz.f32"}
T.plan(#FORMS)
local N = 1 << 18

local src = {}
for i, form in ipairs(FORMS) do
  src[#src + 1] = string.format([[
extern "C" __global__ void k%d(const unsigned *a, const unsigned *b, unsigned *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r;
  asm("div.%s %%0, %%1, %%2;" : "=f"(r) : "f"(__uint_as_float(a[i])), "f"(__uint_as_float(b[i])));
  d[i] = __float_as_uint(r);
}
]], i, form)
end
src = table.concat(src)

-- Inputs as u32 words: half random bit patterns, half divisors near 2^126, 2^-126 and 1 with
-- random dividends.
local function words(seed)
  local r = cuda.rand(2 * N, "f64", seed):tolist()
  local A, B = {}, {}
  local edges = {0x7e800000, 0x7e7fffff, 0x7f000000, 0x00800000, 0x007fffff, 0x3f800000}
  for i = 1, N do
    A[i] = math.floor(r[i] * 4294967296)
    local v = math.floor(r[N + i] * 4294967296)
    if i % 2 == 0 then B[i] = v else B[i] = (edges[i // 2 % #edges + 1] + v % 4096 - 2048) & 0xffffffff end
  end
  return A, B
end

local A, B = words(4242)
for i, form in ipairs(FORMS) do
  T.test("div." .. form .. ": the same bits as the GPU", function()
    local out = {}
    for _, be in ipairs{"cuda", "sim"} do
      local old = cuda.use(be)
      local d = cuda.array(N, "u32")
      cuda.module(src)["k" .. i][{N // 256, 256}](cuda.array(A, "u32"), cuda.array(B, "u32"), d, N)
      out[be] = d:tolist()
      cuda.use(old)
    end
    local differ, first = 0, nil
    for j = 1, N do
      if out.cuda[j] ~= out.sim[j] then
        differ = differ + 1
        first = first or string.format("%08x / %08x: GPU %08x, simulator %08x", A[j], B[j], out.cuda[j], out.sim[j])
      end
    end
    T.check(differ == 0, string.format("%d of %d differ; first %s", differ, N, first))
  end)
end
