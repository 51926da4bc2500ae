-- fp8.lua: cuda_fp8.h's 8-bit floats (E4M3, E5M2) on the simulator, each conversion against a
-- CPU reference of its own: every one of the 256 codes of each format widened to float and to
-- f16x2, and f32, f16x2 and f32 pairs narrowed to them (round to nearest even, saturating, NaN to
-- 0x7f, .relu), found here by searching the 256 codes for the nearest value rather than by the
-- simulator's arithmetic. These conversions were once refused ("cvt takes no .e4m3x2"); the forms
-- the ISA lacks (ptxas refuses them first) are refused by tests/sim/test_errors.c.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(4)

local INF, NAN = 1 / 0, 0 / 0
local FORMATS = {
  e4m3 = {mbits = 3, bias = 7, inf = false, max = 0x7e},
  e5m2 = {mbits = 2, bias = 15, inf = true, max = 0x7b},
}

-- The value of code b (0..255) in format f: NaN for its NaNs.
local function decode(f, b)
  local s = b & 0x80 ~= 0 and -1.0 or 1.0 -- floats: -1 * 0 as integers would lose -0
  local e, m = (b >> f.mbits) & ((1 << (7 - f.mbits)) - 1), b & ((1 << f.mbits) - 1)
  if f.inf and e == (1 << (7 - f.mbits)) - 1 then return m == 0 and s * INF or NAN end
  if not f.inf and b & 0x7f == 0x7f then return NAN end
  if e == 0 then return s * m * 2.0 ^ (1 - f.bias - f.mbits) end
  return s * (m + (1 << f.mbits)) * 2.0 ^ (e - f.bias - f.mbits)
end

-- x narrowed to format f by search: the nearest finite code, a tie to the one with an even
-- mantissa, anything past the largest finite (infinity too) the largest with x's sign.
local function encode(f, x, relu)
  if x ~= x then return 0x7f end
  local neg = x < 0 or (x == 0 and 1 / x < 0)
  if relu and neg then return 0 end
  local a = math.abs(x)
  if a >= decode(f, f.max) then return (neg and 0x80 or 0) | f.max end
  local best, bestd
  for b = 0, f.max do
    local d = math.abs(decode(f, b) - a)
    if not bestd or d < bestd or (d == bestd and b & 1 == 0) then best, bestd = b, d end
  end
  return (neg and 0x80 or 0) | best
end

-- f16 bits of an exactly representable value (every 8-bit float is one).
local function f16_bits(x)
  if x ~= x then return 0x7fff end
  local s = (x < 0 or (x == 0 and 1 / x < 0)) and 0x8000 or 0
  local a = math.abs(x)
  if a == INF then return s | 0x7c00 end
  if a == 0 then return s end
  local m, e = math.frexp(a) -- a = m * 2^e, 0.5 <= m < 1
  e = e - 1
  if e < -14 then return s | math.floor(a * 2 ^ 24) end
  return s | (e + 15) << 10 | (math.floor(a * 2 ^ (10 - e)) & 0x3ff)
end

local function f32(x) return (string.unpack("f", string.pack("f", x))) end
local function same(a, b) return a == b or (a ~= a and b ~= b) end

test("every E4M3 and E5M2 code widens to its exact float and f16 value", function()
  local k = cuda.kernel[[
#include <cuda_fp8.h>
__global__ void widen(const unsigned char *x, float *f4, float *f5, unsigned *h4, unsigned *h5) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  __nv_fp8_e4m3 a; a.__x = x[i];
  __nv_fp8_e5m2 b; b.__x = x[i];
  f4[i] = (float)a;
  f5[i] = (float)b;
  unsigned short pair = (unsigned short)(x[i] | x[255 - i] << 8);
  __half2_raw r4 = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3);
  __half2_raw r5 = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E5M2);
  h4[i] = r4.x | (unsigned)r4.y << 16;
  h5[i] = r5.x | (unsigned)r5.y << 16;
}]]
  local codes = {}
  for b = 0, 255 do codes[b + 1] = b end
  local f4, f5, h4, h5 = cuda.zeros(256), cuda.zeros(256), cuda.zeros(256, "u32"),
                         cuda.zeros(256, "u32")
  k[{2, 128}](cuda.array(codes, "u8"), f4, f5, h4, h5)
  local g4, g5, gh4, gh5 = f4:tolist(), f5:tolist(), h4:tolist(), h5:tolist()
  for b = 0, 255 do
    local v4, v5 = decode(FORMATS.e4m3, b), decode(FORMATS.e5m2, b)
    check(same(g4[b + 1], v4), ("e4m3 0x%02x: got %s, want %s"):format(b, g4[b + 1], v4))
    check(same(g5[b + 1], v5), ("e5m2 0x%02x: got %s, want %s"):format(b, g5[b + 1], v5))
    local hi = 255 - b
    checkeq(gh4[b + 1], f16_bits(v4) | f16_bits(decode(FORMATS.e4m3, hi)) << 16,
      ("e4m3x2 0x%02x%02x to f16x2"):format(hi, b))
    checkeq(gh5[b + 1], f16_bits(v5) | f16_bits(decode(FORMATS.e5m2, hi)) << 16,
      ("e5m2x2 0x%02x%02x to f16x2"):format(hi, b))
  end
end)

-- Floats at and between the codes: each code's value, the midpoints to its neighbours (ties),
-- a little either side of them, and the edges (largest finite and past it, subnormals and
-- below, infinities, NaN, -0).
local function probes(f)
  local xs = {0.0, -0.0, INF, -INF, NAN, 1e30, -1e30, 1e-30, 3e38, -3e38}
  for b = 0, f.max do
    local v = decode(f, b)
    local nxt = b < f.max and decode(f, b + 1) or v * 1.25
    local mid = (v + nxt) / 2
    for _, x in ipairs({v, mid, mid * (1 + 2 ^ -20), mid * (1 - 2 ^ -20), nxt * 1.1}) do
      xs[#xs + 1] = f32(x)
      xs[#xs + 1] = f32(-x)
    end
  end
  return xs
end

test("floats narrow to E4M3 and E5M2 by round to nearest even, saturating", function()
  local k = cuda.kernel[[
#include <cuda_fp8.h>
__global__ void narrow(const float *x, unsigned char *o4, unsigned char *o5, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  o4[i] = __nv_fp8_e4m3(x[i]).__x;
  o5[i] = __nv_fp8_e5m2(x[i]).__x;
}]]
  for name, f in pairs(FORMATS) do
    local xs = probes(f)
    local n = #xs
    local o4, o5 = cuda.zeros(n, "u8"), cuda.zeros(n, "u8")
    k[{(n + 127) // 128, 128}](cuda.array(xs, "f32"), o4, o5, n)
    local got = (name == "e4m3" and o4 or o5):tolist()
    for i, x in ipairs(xs) do
      checkeq(got[i], encode(f, x), ("%s of %.9g"):format(name, x))
    end
  end
end)

test("pairs: two floats and an f16x2 narrow into one 16-bit word, the first into the high byte",
  function()
  local k = cuda.kernel[[
#include <cuda_fp8.h>
__global__ void pairs(const float *x, const unsigned *h, unsigned short *o, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  float2 v = make_float2(x[2 * i], x[2 * i + 1]);
  o[4 * i] = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E4M3);
  o[4 * i + 1] = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E5M2);
  __half2_raw r;
  r.x = (unsigned short)(h[i] & 0xffff);
  r.y = (unsigned short)(h[i] >> 16);
  o[4 * i + 2] = __nv_cvt_halfraw2_to_fp8x2(r, __NV_SATFINITE, __NV_E4M3);
  o[4 * i + 3] = __nv_cvt_halfraw2_to_fp8x2(r, __NV_SATFINITE, __NV_E5M2);
}]]
  local xs = probes(FORMATS.e5m2)
  if #xs % 2 == 1 then xs[#xs + 1] = 1.0 end
  local n = #xs // 2
  -- f16 pairs: every f16 code is exact in a double, so the reference reads the same values
  local hs, hv = {}, {}
  local function f16_value(h)
    local e, m = (h >> 10) & 0x1f, h & 0x3ff
    local v = e == 31 and (m == 0 and INF or NAN) or e == 0 and m * 2.0 ^ -24
              or (m + 1024) * 2.0 ^ (e - 25)
    return h & 0x8000 ~= 0 and -v or v
  end
  for i = 1, n do
    local lo, hi = (i * 2654435761) & 0xffff, (i * 40503 + 7) & 0xffff
    hs[i] = lo | hi << 16
    hv[i] = {f16_value(lo), f16_value(hi)}
  end
  local o = cuda.zeros(4 * n, "u16")
  k[{(n + 127) // 128, 128}](cuda.array(xs, "f32"), cuda.array(hs, "u32"), o, n)
  local got = o:tolist()
  for i = 1, n do
    local a, b = xs[2 * i - 1], xs[2 * i]
    -- float2 {x, y}: x into the low byte, y into the high
    checkeq(got[4 * i - 3], encode(FORMATS.e4m3, a) | encode(FORMATS.e4m3, b) << 8,
      ("e4m3x2 of %.9g, %.9g"):format(a, b))
    checkeq(got[4 * i - 2], encode(FORMATS.e5m2, a) | encode(FORMATS.e5m2, b) << 8,
      ("e5m2x2 of %.9g, %.9g"):format(a, b))
    checkeq(got[4 * i - 1], encode(FORMATS.e4m3, hv[i][1]) | encode(FORMATS.e4m3, hv[i][2]) << 8,
      ("e4m3x2 of f16x2 0x%08x"):format(hs[i]))
    checkeq(got[4 * i], encode(FORMATS.e5m2, hv[i][1]) | encode(FORMATS.e5m2, hv[i][2]) << 8,
      ("e5m2x2 of f16x2 0x%08x"):format(hs[i]))
  end
end)

test(".relu makes negatives +0 and keeps NaN, both ways", function()
  local k = cuda.kernel[[
__global__ void relu(const float *x, unsigned short *o, unsigned *h, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  unsigned short d, e;
  unsigned w;
  asm("cvt.rn.satfinite.relu.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(x[i]), "f"(-x[i]));
  asm("cvt.rn.satfinite.relu.e5m2x2.f32 %0, %1, %2;" : "=h"(e) : "f"(x[i]), "f"(-x[i]));
  o[2 * i] = d;
  o[2 * i + 1] = e;
  asm("cvt.rn.relu.f16x2.e4m3x2 %0, %1;" : "=r"(w) : "h"(d == 0 ? (unsigned short)0xb8c0 : d));
  h[i] = w;
}]]
  local xs = {1.0, -1.0, 0.0, 3.5, -448.0, 1e9, NAN, -INF, 0.001}
  local n = #xs
  local o, h = cuda.zeros(2 * n, "u16"), cuda.zeros(n, "u32")
  k[{1, 32}](cuda.array(xs, "f32"), o, h, n)
  local got, gh = o:tolist(), h:tolist()
  for i, x in ipairs(xs) do
    x = f32(x)
    local d = encode(FORMATS.e4m3, x, true) << 8 | encode(FORMATS.e4m3, -x, true)
    checkeq(got[2 * i - 1], d, "relu e4m3x2 of " .. x)
    checkeq(got[2 * i], encode(FORMATS.e5m2, x, true) << 8 | encode(FORMATS.e5m2, -x, true),
      "relu e5m2x2 of " .. x)
    local src = d == 0 and 0xb8c0 or d
    local want = 0
    for half = 0, 1 do
      local v = decode(FORMATS.e4m3, (src >> 8 * half) & 0xff)
      want = want | (v < 0 and 0 or f16_bits(v)) << 16 * half
    end
    checkeq(gh[i], want, ("relu f16x2 of e4m3x2 0x%04x"):format(src))
  end
end)

T.done()
