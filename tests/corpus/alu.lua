-- alu.lua: corpus cases for half precision (__half, __nv_bfloat16, __half2) and the bit and byte
-- intrinsics (__ffs, __fns, __byte_perm, __dp4a, __dp2a, inline lop3, szext, bmsk) and special
-- registers. Halves travel as u32 arrays holding their raw bits; the CPU reference computes those
-- bits exactly: every f16 sum, product and fma below is exact in a double before its one rounding
-- (the bf16 operands are kept in a narrow range so that theirs are too).
local C = dofile("tests/corpus/corpus.lua")
local N = 2053 -- not a multiple of any block size
local blocks, map, dec, enc = C.blocks, C.map, C.half_value, C.half_bits

-- n random halves (bits) from uniform numbers in [lo, hi), then some special values at the front.
local function halves(n, seed, lo, hi, k, specials)
  local _, xs = C.uniform(n, seed, lo, hi, "f64")
  local bits = {}
  for i = 1, n do bits[i] = enc(xs[i], k) end
  for i, v in ipairs(specials or {}) do bits[i] = v end
  return cuda.array(bits, "u32"), bits
end

local F16_SPECIALS = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00,
                      0x3c01, 0xbbff, 0x5bff, 0x1400, 0x0200, 0x7bfe, 0x3555}

-- ---- f16 ----

C.case{
  name = "f16: __hadd, __hsub, __hmul and __hfma of random and special halves",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *add, unsigned *sub,
                  unsigned *mul, unsigned *fma, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half((unsigned short)a[i]), y = __ushort_as_half((unsigned short)b[i]);
  __half z = __ushort_as_half((unsigned short)c[i]);
  add[i] = __half_as_ushort(__hadd(x, y));
  sub[i] = __half_as_ushort(x - y);
  mul[i] = __half_as_ushort(x * y);
  fma[i] = __half_as_ushort(__hfma(x, y, z));
}]],
  run = function(k)
    local a, xs = halves(N, 101, -300, 300, "f16", F16_SPECIALS)
    local b, ys = halves(N, 102, -3, 3, "f16", {0x8000, 0x0000, 0xfc00, 0x7c00, 0x3c00, 0x0001, 0x0001, 0x8001, 0x0400,
                                                0x4000, 0x3c00, 0x3c00, 0x3c00, 0x4000, 0x3c00, 0x1400, 0x0200, 0x3c00, 0x3c00})
    local c, zs = halves(N, 103, -1000, 1000, "f16", {0x8000})
    local o = map(4, function() return cuda.array(N, "u32") end)
    k[{blocks(N, 128), 128}](a, b, c, o[1], o[2], o[3], o[4], N)
    C.h = {xs, ys, zs}
    return o
  end,
  check = function(o)
    local xs, ys, zs = table.unpack(C.h)
    local add, sub, mul, fma = {}, {}, {}, {}
    for i = 1, N do
      local x, y, z = dec(xs[i]), dec(ys[i]), dec(zs[i])
      add[i], sub[i], mul[i], fma[i] = enc(x + y), enc(x - y), enc(x * y), enc(x * y + z)
    end
    C.same(o[1], add)
    C.same(o[2], sub)
    C.same(o[3], mul)
    C.same(o[4], fma)
  end,
}

-- PTX min/max: a NaN operand gives the other one (both NaN: the canonical NaN); the _nan forms give
-- NaN; -0 counts as less than +0.
local function minmax(a, b, want_max, nan)
  local x, y = dec(a), dec(b)
  if x ~= x or y ~= y then
    if nan or (x ~= x and y ~= y) then return 0x7fff end
    return x ~= x and b or a
  end
  if x == y then
    local aneg = a & 0x8000 ~= 0
    if want_max then return aneg and b or a end
    return aneg and a or b
  end
  if (x < y) == want_max then return b end
  return a
end

C.case{
  name = "f16: __hmin, __hmax, __hmin_nan, __hmax_nan with NaN and signed zeros",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const unsigned *a, const unsigned *b, unsigned *mn, unsigned *mx, unsigned *mnn, unsigned *mxn, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half((unsigned short)a[i]), y = __ushort_as_half((unsigned short)b[i]);
  mn[i] = __half_as_ushort(__hmin(x, y));
  mx[i] = __half_as_ushort(__hmax(x, y));
  mnn[i] = __half_as_ushort(__hmin_nan(x, y));
  mxn[i] = __half_as_ushort(__hmax_nan(x, y));
}]],
  run = function(k)
    local a, xs = halves(N, 111, -5, 5, "f16", {0x7e00, 0x3c00, 0x7e00, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7fff})
    local b, ys = halves(N, 112, -5, 5, "f16", {0x3c00, 0x7e00, 0x7e00, 0x8000, 0x0000, 0x7bff, 0x8001, 0x0000})
    local o = map(4, function() return cuda.array(N, "u32") end)
    k[{blocks(N, 256), 256}](a, b, o[1], o[2], o[3], o[4], N)
    C.h = {xs, ys}
    return o
  end,
  check = function(o)
    local xs, ys = table.unpack(C.h)
    C.same(o[1], map(N, function(i) return minmax(xs[i], ys[i], false, false) end))
    C.same(o[2], map(N, function(i) return minmax(xs[i], ys[i], true, false) end))
    C.same(o[3], map(N, function(i) return minmax(xs[i], ys[i], false, true) end))
    C.same(o[4], map(N, function(i) return minmax(xs[i], ys[i], true, true) end))
  end,
}

C.case{
  name = "f16 and bf16: __hneg and __habs flip and clear the sign bit; a NaN becomes the canonical NaN",
  src = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void f(const unsigned *a, unsigned *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half((unsigned short)a[i]);
  __nv_bfloat16 y = __ushort_as_bfloat16((unsigned short)a[i]);
  o[4 * i] = __half_as_ushort(__hneg(x));
  o[4 * i + 1] = __half_as_ushort(__habs(x));
  o[4 * i + 2] = __bfloat16_as_ushort(__hneg(y));
  o[4 * i + 3] = __bfloat16_as_ushort(__habs(y));
}]],
  run = function(k)
    local a, xs = halves(N, 116, -9, 9, "f16", {0x7e00, 0xfe01, 0x7c01, 0x7fff, 0xffc0, 0x7f81, 0x0000, 0x8000, 0x0001})
    local o = cuda.array(4 * N, "u32")
    k[{blocks(N, 128), 128}](a, o, N)
    C.h = {xs}
    return {o}
  end,
  check = function(o)
    local xs = C.h[1]
    local want = {}
    -- measured on the H200: neg and abs of any NaN give 0x7fff, for f16 and bf16 alike
    local function nan16(x, e) return (x & 0x7fff) > e end
    for i = 1, N do
      local x, b = xs[i], 4 * (i - 1)
      local h = nan16(x, 0x7c00) and 0x7fff
      local bf = nan16(x, 0x7f80) and 0x7fff
      want[b + 1], want[b + 2] = h or x ~ 0x8000, h or x & 0x7fff
      want[b + 3], want[b + 4] = bf or x ~ 0x8000, bf or x & 0x7fff
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "f16: ordered and unordered comparisons (__hlt, __hle, __heq, __hne, __hgtu, __hneu, __hisnan)",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const unsigned *a, const unsigned *b, int *flags, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half((unsigned short)a[i]), y = __ushort_as_half((unsigned short)b[i]);
  flags[i] = __hlt(x, y) | __hle(x, y) << 1 | __heq(x, y) << 2 | __hne(x, y) << 3 | __hgtu(x, y) << 4 |
             __hneu(x, y) << 5 | __hisnan(x) << 6 | (x > y) << 7;
}]],
  run = function(k)
    local a, xs = halves(N, 121, -4, 4, "f16", {0x7e00, 0x3c00, 0x0000, 0x8000, 0x7c00, 0x3c00, 0x3c00})
    local b, ys = halves(N, 122, -4, 4, "f16", {0x3c00, 0x7e00, 0x8000, 0x0000, 0x7c00, 0x3c00, 0x3c01})
    for i = 8, N, 7 do ys[i] = xs[i] end -- equal pairs
    b = cuda.array(ys, "u32")
    local flags = cuda.array(N, "i32")
    k[{blocks(N, 64), 64}](a, b, flags, N)
    C.h = {xs, ys}
    return {flags}
  end,
  check = function(o)
    local xs, ys = table.unpack(C.h)
    local function b(v) return v and 1 or 0 end
    C.same(o[1], map(N, function(i)
      local x, y = dec(xs[i]), dec(ys[i])
      local un = x ~= x or y ~= y
      return b(x < y) | b(x <= y) << 1 | b(x == y) << 2 | b(not un and x ~= y) << 3 | b(un or x > y) << 4 |
             b(x ~= y) << 5 | b(x ~= x) << 6 | b(x > y) << 7
    end))
  end,
}

C.case{
  name = "f32 to f16 in four rounding modes (__float2half_rn/_rz/_rd/_ru) and back, subnormals and overflow",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const float *x, unsigned *rn, unsigned *rz, unsigned *rd, unsigned *ru, float *back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  rn[i] = __half_as_ushort(__float2half_rn(x[i]));
  rz[i] = __half_as_ushort(__float2half_rz(x[i]));
  rd[i] = __half_as_ushort(__float2half_rd(x[i]));
  ru[i] = __half_as_ushort(__float2half_ru(x[i]));
  back[i] = __half2float(__float2half_rn(x[i]));
}]],
  run = function(k)
    local _, us = C.uniform(N, 131, -1, 1, "f64")
    local _, es = C.integers(N, 132, -28, 18)
    local xs = map(N, function(i) return us[i] * 2.0 ^ es[i] end)
    xs[1], xs[2], xs[3], xs[4], xs[5] = 65520, -65519.99, 2.0 ^ -25, -2.0 ^ -25 * 1.5, math.huge
    xs[6], xs[7], xs[8] = 0 / 0, 1 + 2.0 ^ -11, 1 + 3 * 2.0 ^ -11
    local x = cuda.array(xs, "f32")
    local o = map(4, function() return cuda.array(N, "u32") end)
    o[5] = cuda.array(N, "f32")
    k[{blocks(N, 128), 128}](x, o[1], o[2], o[3], o[4], o[5], N)
    C.h = {x:tolist()} -- the f32 values the kernel saw
    return o
  end,
  check = function(o)
    local xs = C.h[1]
    for m, mode in ipairs{"rn", "rz", "rd", "ru"} do
      C.same(o[m], map(N, function(i) return enc(xs[i], "f16", mode) end))
    end
    local back = map(N, function(i) return dec(enc(xs[i])) end)
    local got = o[5]:tolist()
    for i = 1, N do
      local w, g = back[i], got[i]
      if not (w == g or (w ~= w and g ~= g)) then error(string.format("back[%d] = %s, want %s", i - 1, g, w)) end
    end
  end,
}

-- Round to integer: ties to even (rn), towards zero, down, up; saturating, NaN to 0.
local function to_int(x, mode, lo, hi)
  if x ~= x then return 0 end
  local r
  if mode == "rz" then r = x < 0 and math.ceil(x) or math.floor(x)
  elseif mode == "rd" then r = math.floor(x)
  elseif mode == "ru" then r = math.ceil(x)
  else
    r = math.floor(x)
    local fr = x - r
    if fr > 0.5 or (fr == 0.5 and r % 2 == 1) then r = r + 1 end
  end
  if r < lo then return lo end
  if r > hi then return hi end
  return math.tointeger(r)
end

C.case{
  name = "f16 and integers: __half2int_rn/_rz/_rd/_ru, __half2short_rn, __half2ushort_rz, __int2half_rn, __ll2half_rn",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const unsigned *a, const int *iv, int *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half((unsigned short)a[i]);
  o[8 * i] = __half2int_rn(x);
  o[8 * i + 1] = __half2int_rz(x);
  o[8 * i + 2] = __half2int_rd(x);
  o[8 * i + 3] = __half2int_ru(x);
  o[8 * i + 4] = __half2short_rn(x);
  o[8 * i + 5] = __half2ushort_rz(x);
  o[8 * i + 6] = __half_as_ushort(__int2half_rn(iv[i]));
  o[8 * i + 7] = __half_as_ushort(__ll2half_rn((long long)iv[i] * 4099));
}]],
  run = function(k)
    local a, xs = halves(N, 141, -70000, 70000, "f16", {0x7e00, 0x7c00, 0xfc00, 0x3e00, 0x4100, 0xbe00, 0xc100, 0x3800, 0xb800})
    local iv, is = C.integers(N, 142, -70000, 70000)
    local o = cuda.array(8 * N, "i32")
    k[{blocks(N, 128), 128}](a, iv, o, N)
    C.h = {xs, is}
    return {o}
  end,
  check = function(o)
    local xs, is = table.unpack(C.h)
    local want = {}
    for i = 1, N do
      local x = dec(xs[i])
      local b = 8 * (i - 1)
      want[b + 1] = to_int(x, "rn", -2 ^ 31, 2 ^ 31 - 1)
      want[b + 2] = to_int(x, "rz", -2 ^ 31, 2 ^ 31 - 1)
      want[b + 3] = to_int(x, "rd", -2 ^ 31, 2 ^ 31 - 1)
      want[b + 4] = to_int(x, "ru", -2 ^ 31, 2 ^ 31 - 1)
      want[b + 5] = to_int(x, "rn", -32768, 32767)
      want[b + 6] = to_int(x, "rz", 0, 65535)
      want[b + 7] = enc(is[i])
      want[b + 8] = enc(is[i] * 4099.0) -- below 2^53: exact in a double, so one rounding
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "f16 modifiers and modes: __hadd_sat, __hfma_relu, hceil/hfloor/htrunc/hrint, __int2half_rz/_rd/_ru, __double2half",
  src = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void f(const unsigned *a, const unsigned *b, const int *iv, const double *dv, unsigned *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half((unsigned short)a[i]), y = __ushort_as_half((unsigned short)b[i]);
  unsigned *r = o + 11 * i;
  r[0] = __half_as_ushort(__hadd_sat(x, y));
  r[1] = __half_as_ushort(__hfma_relu(x, y, x));
  r[2] = __half_as_ushort(hceil(x));
  r[3] = __half_as_ushort(hfloor(x));
  r[4] = __half_as_ushort(htrunc(x));
  r[5] = __half_as_ushort(hrint(x));
  r[6] = __half_as_ushort(__int2half_rz(iv[i]));
  r[7] = __half_as_ushort(__int2half_rd(iv[i]));
  r[8] = __half_as_ushort(__int2half_ru(iv[i]));
  r[9] = __half_as_ushort(__double2half(dv[i]));
  r[10] = __bfloat16_as_ushort(__double2bfloat16(dv[i]));
}]],
  run = function(k)
    local a, xs = halves(N, 145, -40, 40, "f16", {0x7e00, 0x7c00, 0xfc00, 0x8000, 0x3800, 0xb800, 0x3e00, 0x4100})
    local b, ys = halves(N, 146, -2, 2, "f16")
    local iv, is = C.integers(N, 147, -100000, 100000)
    local _, us = C.uniform(N, 148, -1, 1, "f64")
    local ds = map(N, function(i) return us[i] * 2.0 ^ ((i * 13) % 60 - 30) end)
    ds[1], ds[2] = 1 + 2.0 ^ -8 + 2.0 ^ -40, 1 + 2.0 ^ -11 + 2.0 ^ -45 -- just above ties, below a float's precision
    local dv = cuda.array(ds, "f64")
    local o = cuda.array(11 * N, "u32")
    k[{blocks(N, 128), 128}](a, b, iv, dv, o, N)
    C.h = {xs, ys, is, ds}
    return {o}
  end,
  check = function(o)
    local xs, ys, is, ds = table.unpack(C.h)
    local function sat(h) -- .sat: NaN and negatives to +0 (-0 stays), above 1 to 1
      local v = dec(h)
      if v ~= v or (v < 0) then return 0 end
      if v > 1 then return 0x3c00 end
      return h
    end
    local function relu(h)
      if h == 0x7fff then return h end
      if h & 0x8000 ~= 0 then return 0 end
      return h
    end
    local function rint(v) -- ties to even
      local r = math.floor(v)
      local fr = v - r
      if fr > 0.5 or (fr == 0.5 and r % 2 == 1) then r = r + 1 end
      return r
    end
    local function integral(v, f) -- keeps NaN, infinities and the sign of zero
      if v ~= v or v == math.huge or v == -math.huge then return enc(v) end
      local r = f(v)
      if r == 0 and (v < 0 or 1 / v < 0) then return 0x8000 end
      return enc(r + 0.0)
    end
    local function trunc(v) return v < 0 and math.ceil(v) or math.floor(v) end
    local want = {}
    for i = 1, N do
      local x, y, b = dec(xs[i]), dec(ys[i]), 11 * (i - 1)
      want[b + 1] = sat(enc(x + y))
      want[b + 2] = relu(enc(x * y + x))
      want[b + 3], want[b + 4] = integral(x, math.ceil), integral(x, math.floor)
      want[b + 5], want[b + 6] = integral(x, trunc), integral(x, rint)
      want[b + 7], want[b + 8], want[b + 9] = enc(is[i], "f16", "rz"), enc(is[i], "f16", "rd"), enc(is[i], "f16", "ru")
      want[b + 10], want[b + 11] = enc(ds[i]), enc(ds[i], "bf16")
    end
    C.same(o[1], want)
  end,
}

-- ---- bf16 ----

C.case{
  name = "bf16: __hadd, __hmul, __hfma, __float2bfloat16 (rn, rz) and back to float",
  src = [[
#include <cuda_bf16.h>
__global__ void f(const unsigned *a, const unsigned *b, const unsigned *c, const float *x, unsigned *o, float *back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 p = __ushort_as_bfloat16((unsigned short)a[i]), q = __ushort_as_bfloat16((unsigned short)b[i]);
  __nv_bfloat16 r = __ushort_as_bfloat16((unsigned short)c[i]);
  o[5 * i] = __bfloat16_as_ushort(__hadd(p, q));
  o[5 * i + 1] = __bfloat16_as_ushort(__hmul(p, q));
  o[5 * i + 2] = __bfloat16_as_ushort(__hfma(p, q, r));
  o[5 * i + 3] = __bfloat16_as_ushort(__float2bfloat16(x[i]));
  o[5 * i + 4] = __bfloat16_as_ushort(__float2bfloat16_rz(x[i]));
  back[i] = __bfloat162float(p);
}]],
  run = function(k)
    local a, xs = halves(N, 151, -100, 100, "bf16", {0x7fc0, 0x7f80, 0x0000, 0x8000})
    local b, ys = halves(N, 152, -3, 3, "bf16", {0x3f80, 0xff80, 0x8000, 0x8000})
    local c, zs = halves(N, 153, -2000, 2000, "bf16")
    local _, us = C.uniform(N, 154, -1, 1, "f64")
    local xf = map(N, function(i) return us[i] * 2.0 ^ ((i * 37) % 260 - 130) end)
    xf[1], xf[2], xf[3] = 0 / 0, 3.4e38, -math.huge
    local x = cuda.array(xf, "f32")
    local o, back = cuda.array(5 * N, "u32"), cuda.array(N, "f32")
    k[{blocks(N, 128), 128}](a, b, c, x, o, back, N)
    C.h = {xs, ys, zs, x:tolist()}
    return {o, back}
  end,
  check = function(o)
    local xs, ys, zs, xf = table.unpack(C.h)
    local want = {}
    for i = 1, N do
      local p, q, r = dec(xs[i], "bf16"), dec(ys[i], "bf16"), dec(zs[i], "bf16")
      local b = 5 * (i - 1)
      want[b + 1] = enc(p + q, "bf16")
      want[b + 2] = enc(p * q, "bf16")
      want[b + 3] = enc(p * q + r, "bf16")
      want[b + 4] = enc(xf[i], "bf16")
      want[b + 5] = enc(xf[i], "bf16", "rz")
    end
    C.same(o[1], want)
    local got = o[2]:tolist()
    for i = 1, N do
      local w = dec(xs[i], "bf16")
      if not (w == got[i] or (w ~= w and got[i] ~= got[i])) then error(string.format("back[%d] = %s, want %s", i - 1, got[i], w)) end
    end
  end,
}

-- ---- half2 ----

C.case{
  name = "half2: __hadd2, __hmul2, __hfma2, __floats2half2_rn and __hgt2_mask, lane by lane",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const unsigned *a, const unsigned *b, const float *x, unsigned *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 p = *(const __half2 *)&a[i], q = *(const __half2 *)&b[i];
  __half2 s = __hadd2(p, q), m = __hmul2(p, q), f = __hfma2(p, q, s);
  __half2 c = __floats2half2_rn(x[i], x[i] * 3.0f);
  o[5 * i] = *(unsigned *)&s;
  o[5 * i + 1] = *(unsigned *)&m;
  o[5 * i + 2] = *(unsigned *)&f;
  o[5 * i + 3] = *(unsigned *)&c;
  o[5 * i + 4] = __hgt2_mask(p, q);
}]],
  run = function(k)
    local _, lo1 = halves(N, 161, -50, 50, "f16", {0x7e00})
    local _, hi1 = halves(N, 162, -50, 50, "f16")
    local _, lo2 = halves(N, 163, -50, 50, "f16")
    local _, hi2 = halves(N, 164, -50, 50, "f16", {0x3c00, 0x7e00})
    local a = cuda.array(map(N, function(i) return hi1[i] << 16 | lo1[i] end), "u32")
    local b = cuda.array(map(N, function(i) return hi2[i] << 16 | lo2[i] end), "u32")
    local xa = cuda.array((select(2, C.uniform(N, 165, -30000, 30000, "f64"))), "f32")
    local o = cuda.array(5 * N, "u32")
    k[{blocks(N, 96), 96}](a, b, xa, o, N)
    C.h = {lo1, hi1, lo2, hi2, xa:tolist()}
    return {o}
  end,
  check = function(o)
    local lo1, hi1, lo2, hi2, xf = table.unpack(C.h)
    local want = {}
    local function lane(p, q)
      local x, y = dec(p), dec(q)
      local s = enc(x + y)
      return s, enc(x * y), enc(x * y + dec(s)), (x > y) and 0xffff or 0
    end
    for i = 1, N do
      local s0, m0, f0, g0 = lane(lo1[i], lo2[i])
      local s1, m1, f1, g1 = lane(hi1[i], hi2[i])
      local x3 = string.unpack("f", string.pack("f", xf[i] * 3)) -- x * 3.0f, rounded to f32 as on the GPU
      local b = 5 * (i - 1)
      want[b + 1], want[b + 2], want[b + 3] = s1 << 16 | s0, m1 << 16 | m0, f1 << 16 | f0
      want[b + 4] = enc(x3) << 16 | enc(xf[i])
      want[b + 5] = g1 << 16 | g0
    end
    C.same(o[1], want)
  end,
}

-- ---- bits ----

C.case{
  name = "bit scans: __ffs, __ffsll, __clz, __fns and bfind.s32 on random words",
  src = [[
__global__ void f(const unsigned *a, const int *base, int *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i];
  int s;
  asm("bfind.s32 %0, %1;" : "=r"(s) : "r"((int)x));
  o[6 * i] = __ffs(x);
  o[6 * i + 1] = __ffsll((long long)x << 20);
  o[6 * i + 2] = __clz(x);
  o[6 * i + 3] = (int)__fns(x, base[i] & 31, 2);
  o[6 * i + 4] = (int)__fns(x, base[i] & 31, -3);
  o[6 * i + 5] = s;
}]],
  run = function(k)
    local _, ws = C.integers(N, 171, 0, 0xffffffff, "u32")
    for i = 1, N do ws[i] = ws[i] >> ((i * 7) % 32) end -- every bit length
    ws[1], ws[2], ws[3] = 0, 0xffffffff, 0x80000000
    local a = cuda.array(ws, "u32")
    local base, bs = C.integers(N, 172, 0, 31)
    local o = cuda.array(6 * N, "i32")
    k[{blocks(N, 128), 128}](a, base, o, N)
    C.h = {ws, bs}
    return {o}
  end,
  check = function(o)
    local ws, bs = table.unpack(C.h)
    local function ffs(x) for b = 0, 63 do if (x >> b) & 1 == 1 then return b + 1 end end return 0 end
    local function clz(x) for b = 31, 0, -1 do if (x >> b) & 1 == 1 then return 31 - b end end return 32 end
    local function fns(x, base, off)
      local cnt, inc = math.abs(off) - 1, off > 0 and 1 or -1
      local p = base
      while p >= 0 and p < 32 do
        if (x >> p) & 1 == 1 then
          if cnt == 0 then return p end
          cnt = cnt - 1
        end
        p = p + inc
      end
      return -1
    end
    local function bfind_s(x)
      if x & 0x80000000 ~= 0 then x = ~x & 0xffffffff end
      if x == 0 then return -1 end
      return 31 - clz(x)
    end
    local want = {}
    for i = 1, N do
      local x, b = ws[i], 6 * (i - 1)
      want[b + 1], want[b + 2], want[b + 3] = ffs(x), ffs((x << 20) & 0xffffffffffffffff), clz(x)
      want[b + 4], want[b + 5], want[b + 6] = fns(x, bs[i], 2), fns(x, bs[i], -3), bfind_s(x)
    end
    C.same(o[1], want)
  end,
}

local function sbyte(v, k) local b = (v >> (8 * k)) & 0xff return b >= 128 and b - 256 or b end
local function ubyte(v, k) return (v >> (8 * k)) & 0xff end
local function shalf(v, k) local h = (v >> (16 * k)) & 0xffff return h >= 32768 and h - 65536 or h end
local function wrap32(v) v = v & 0xffffffff return v >= 2 ^ 31 and v - (1 << 32) or v end

C.case{
  name = "__byte_perm, __dp4a and __dp2a_lo/_hi in every signedness",
  src = [[
__global__ void f(const unsigned *a, const unsigned *b, const unsigned *sel, int *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  int us;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(us) : "r"(x), "r"(y), "r"(7));
  o[7 * i] = (int)__byte_perm(x, y, sel[i]);
  o[7 * i + 1] = __dp4a((int)x, (int)y, -5);
  o[7 * i + 2] = (int)__dp4a(x, y, 9u);
  o[7 * i + 3] = us;
  o[7 * i + 4] = __dp2a_lo((int)x, (int)y, 3);
  o[7 * i + 5] = (int)__dp2a_hi(x, y, 11u);
  o[7 * i + 6] = __dp2a_hi((int)x, (int)y, -100);
}]],
  run = function(k)
    local a, xs = C.integers(N, 181, 0, 0xffffffff, "u32")
    local b, ys = C.integers(N, 182, 0, 0xffffffff, "u32")
    local sel, ss = C.integers(N, 183, 0, 0xffff, "u32")
    local o = cuda.array(7 * N, "i32")
    k[{blocks(N, 128), 128}](a, b, sel, o, N)
    C.h = {xs, ys, ss}
    return {o}
  end,
  check = function(o)
    local xs, ys, ss = table.unpack(C.h)
    local want = {}
    for i = 1, N do
      local x, y, s, b = xs[i], ys[i], ss[i], 7 * (i - 1)
      local bytes, r = y << 32 | x, 0
      for j = 0, 3 do
        local v = (bytes >> (8 * ((s >> (4 * j)) & 7))) & 0xff
        r = r | v << (8 * j) -- __byte_perm uses the low 3 bits of each selector nibble
      end
      want[b + 1] = wrap32(r)
      local d1, d2, d3 = -5, 9, 7
      for j = 0, 3 do
        d1 = d1 + sbyte(x, j) * sbyte(y, j)
        d2 = d2 + ubyte(x, j) * ubyte(y, j)
        d3 = d3 + ubyte(x, j) * sbyte(y, j)
      end
      want[b + 2], want[b + 3], want[b + 4] = wrap32(d1), wrap32(d2), wrap32(d3)
      want[b + 5] = wrap32(3 + shalf(x, 0) * sbyte(y, 0) + shalf(x, 1) * sbyte(y, 1))
      want[b + 6] = wrap32(11 + ((x & 0xffff) * ubyte(y, 2)) + ((x >> 16) * ubyte(y, 3)))
      want[b + 7] = wrap32(-100 + shalf(x, 0) * sbyte(y, 2) + shalf(x, 1) * sbyte(y, 3))
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "inline PTX: lop3.b32 with several LUTs, szext and bmsk",
  src = [[
#define LOP3(d, a, b, c, lut) asm("lop3.b32 %0, %1, %2, %3, " #lut ";" : "=r"(d) : "r"(a), "r"(b), "r"(c))
__global__ void f(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i], r0, r1, r2, r3, r4, r5;
  LOP3(r0, x, y, z, 0x96);
  LOP3(r1, x, y, z, 0xe8);
  LOP3(r2, x, y, z, 0xca);
  LOP3(r3, x, y, z, 0x01);
  asm("szext.wrap.s32 %0, %1, %2;" : "=r"(r4) : "r"(x), "r"(z & 63));
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(r5) : "r"(y & 63), "r"(z >> 26));
  o[6 * i] = r0; o[6 * i + 1] = r1; o[6 * i + 2] = r2; o[6 * i + 3] = r3; o[6 * i + 4] = r4; o[6 * i + 5] = r5;
}]],
  run = function(k)
    local a, xs = C.integers(N, 191, 0, 0xffffffff, "u32")
    local b, ys = C.integers(N, 192, 0, 0xffffffff, "u32")
    local c, zs = C.integers(N, 193, 0, 0xffffffff, "u32")
    local o = cuda.array(6 * N, "u32")
    k[{blocks(N, 128), 128}](a, b, c, o, N)
    C.h = {xs, ys, zs}
    return {o}
  end,
  check = function(o)
    local xs, ys, zs = table.unpack(C.h)
    local M = 0xffffffff
    local want = {}
    for i = 1, N do
      local x, y, z, b = xs[i], ys[i], zs[i], 6 * (i - 1)
      want[b + 1] = x ~ y ~ z
      want[b + 2] = (x & y) | (x & z) | (y & z) -- majority
      want[b + 3] = (x & y) | (~x & M & z)      -- select: x ? y : z
      want[b + 4] = ~(x | y | z) & M
      local nb = (z & 63) % 32
      local v = 0
      if nb > 0 then
        v = x & ((1 << nb) - 1)
        if (v >> (nb - 1)) & 1 == 1 then v = v | (M & ~((1 << nb) - 1)) end
      end
      want[b + 5] = v
      local pos, w = math.min(y & 63, 32), math.min(z >> 26, 32)
      want[b + 6] = pos >= 32 and 0 or (((1 << w) - 1) << pos) & M
    end
    C.same(o[1], want)
  end,
}

-- ---- special registers ----

C.case{
  name = "special registers: %nsmid, %nwarpid, lane masks, cluster shape, shared memory sizes",
  src = [[
__global__ void f(unsigned *o) {
  __shared__ int pad[250];
  extern __shared__ int dyn[];
  pad[threadIdx.x] = threadIdx.x;
  dyn[threadIdx.x] = 1;
  __syncthreads();
  unsigned v[12];
  asm("mov.u32 %0, %%nsmid;" : "=r"(v[0]));
  asm("mov.u32 %0, %%nwarpid;" : "=r"(v[1]));
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(v[2]));
  asm("mov.u32 %0, %%lanemask_gt;" : "=r"(v[3]));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[4]));
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[5]));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(v[6]));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(v[7]));
  asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v[8]));
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(v[9]));
  asm("mov.u32 %0, %%total_smem_size;" : "=r"(v[10]));
  asm("mov.u32 %0, %%aggr_smem_size;" : "=r"(v[11]));
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 12; k++) o[12 * t + k] = v[k] + (pad[threadIdx.x] + dyn[threadIdx.x] - 1 - threadIdx.x);
}]],
  run = function(k)
    local o = cuda.array(12 * 3 * 64, "u32")
    k[{3, 64, 512}](o)
    return {o}
  end,
  check = function(o)
    local want = {}
    for t = 0, 3 * 64 - 1 do
      local lane = t % 32
      -- %total_smem_size is in the 128-byte units the H200 allocates in; %aggr_smem_size is not
      local v = {132, 64, (2 << lane) - 1, 0xffffffff & ~((2 << lane) - 1), 1, 0, t // 64, 3, 0, 512, 1536,
                 1008 + 512 + 1024}
      for kk = 1, 12 do want[12 * t + kk] = v[kk] end
    end
    C.same(o[1], want)
  end,
}

return C.done()
