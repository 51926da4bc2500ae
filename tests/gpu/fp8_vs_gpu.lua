-- fp8_vs_gpu.lua: the 8-bit float conversions (cvt to and from .e4m3x2 and .e5m2x2, with and
-- without .relu) on the GPU and on the simulator from the same bits: the simulator must give
-- the GPU's, for f32 inputs at every code's value, the midpoints between codes (the ties of
-- round to nearest even), past the largest finite value, subnormal, infinite and NaN (payloads
-- and signs), for f16x2 inputs of every sort, and for every 16-bit pair of codes widened.
-- tests/simulator/fp8.lua checks the simulator against a CPU reference.
local T = dofile("tests/lua/testlib.lua")
T.plan(2)
local test, check = T.test, T.check

local SRC = [[
__global__ void narrow(const unsigned *x, const unsigned *h, unsigned *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = __uint_as_float(x[i]), b = __uint_as_float(x[(i + 1) % n]);
  unsigned short r[8];
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r[0]) : "f"(a), "f"(b));
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r[1]) : "f"(a), "f"(b));
  asm("cvt.rn.satfinite.relu.e4m3x2.f32 %0, %1, %2;" : "=h"(r[2]) : "f"(a), "f"(b));
  asm("cvt.rn.satfinite.relu.e5m2x2.f32 %0, %1, %2;" : "=h"(r[3]) : "f"(a), "f"(b));
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r[4]) : "r"(h[i]));
  asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(r[5]) : "r"(h[i]));
  asm("cvt.rn.satfinite.relu.e4m3x2.f16x2 %0, %1;" : "=h"(r[6]) : "r"(h[i]));
  asm("cvt.rn.satfinite.relu.e5m2x2.f16x2 %0, %1;" : "=h"(r[7]) : "r"(h[i]));
  for (int k = 0; k < 4; k++) o[4 * i + k] = r[2 * k] | (unsigned)r[2 * k + 1] << 16;
}
__global__ void widen(unsigned *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; /* every pair of codes: 65536 threads */
  unsigned short p = (unsigned short)i;
  unsigned r[4];
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r[0]) : "h"(p));
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(r[1]) : "h"(p));
  asm("cvt.rn.relu.f16x2.e4m3x2 %0, %1;" : "=r"(r[2]) : "h"(p));
  asm("cvt.rn.relu.f16x2.e5m2x2 %0, %1;" : "=r"(r[3]) : "h"(p));
  for (int k = 0; k < 4; k++) o[4 * i + k] = r[k];
}]]

-- f32 bit patterns: each 8-bit code's value in both formats, a little either side, the
-- midpoints, and the edges; f16x2 words from a generator and the same edges.
local function inputs()
  local xs = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
              0x7f800001, 0x7fbfffff, 0x00000001, 0x80000001, 0x7f7fffff, 0xff7fffff}
  local function bits(v) return (string.unpack("<I4", string.pack("<f", v))) end
  for e = -30, 20 do
    for m = 0, 16 do
      local v = (1 + m / 16) * 2.0 ^ e
      xs[#xs + 1] = bits(v)
      xs[#xs + 1] = bits(-v)
      xs[#xs + 1] = bits(v) + 1
      xs[#xs + 1] = bits(v) - 1
    end
  end
  local hs, x = {}, 12345
  for i = 1, #xs do
    x = (x * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
    hs[i] = (x >> 32) & 0xffffffff
  end
  for i, h in ipairs({0x7c00fc00, 0x7e007fff, 0x7bfffbff, 0x00010000, 0x5fff5c00}) do
    hs[i] = h
  end
  return xs, hs
end

local function run(body)
  local function on(be) return T.on(be, function() return body(cuda.module(SRC)) end) end
  return on("cuda"), on("sim")
end

local function compare(g, s, n, what)
  local bad = {}
  for i = 0, n - 1 do
    if g[i] ~= s[i] then
      bad[#bad + 1] = ("%s[%d]: simulator 0x%08x, GPU 0x%08x"):format(what, i, s[i], g[i])
      if #bad == 4 then break end
    end
  end
  check(#bad == 0, table.concat(bad, "; "))
end

test("f32 pairs and f16x2 narrowed to e4m3x2 and e5m2x2: the simulator gives the GPU's bits",
  function()
  local xs, hs = inputs()
  local n = #xs
  local g, s = run(function(m)
    local o = cuda.zeros(4 * n, "u32")
    m.narrow[{(n + 255) // 256, 256}](cuda.array(xs, "u32"), cuda.array(hs, "u32"), o, n)
    return o:host()
  end)
  compare(g, s, 4 * n, "narrow")
end)

test("every pair of codes widened to f16x2: the simulator gives the GPU's bits", function()
  local g, s = run(function(m)
    local o = cuda.zeros(4 * 65536, "u32")
    m.widen[{256, 256}](o)
    return o:host()
  end)
  compare(g, s, 4 * 65536, "widen")
end)

T.done()
