-- carry_chains_cases.lua: the kernels, operands and CPU reference of tests/simulator/carry_chains.lua,
-- shared with tests/gpu/carry_vs_gpu.lua, which runs them on the GPU too. Data, not a suite.
local C = {}
local M32 = 0xffffffff

-- ---- unsigned 128-bit numbers as {hi, lo}, two 64-bit Lua integers read as unsigned ----
local function ult128(a, b) return math.ult(a[1], b[1]) or (a[1] == b[1] and math.ult(a[2], b[2])) end
local function sub128(a, b)
  local borrow = math.ult(a[2], b[2]) and 1 or 0
  return { a[1] - b[1] - borrow, a[2] - b[2] }
end
local function neg128(a) return sub128({ 0, 0 }, a) end
local function mul64(a, b) -- the full product of two u64, as {hi, lo}
  local a0, a1, b0, b1 = a & M32, a >> 32, b & M32, b >> 32
  local p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
  local mid = (p00 >> 32) + (p01 & M32) + (p10 & M32)
  return { p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (p00 & M32) | (mid << 32) }
end
local function mul128(a, b) -- the low 128 bits
  local p = mul64(a[2], b[2])
  return { p[1] + a[1] * b[2] + a[2] * b[1], p[2] }
end
local function divmod128(a, b) -- b ~= 0: one bit at a time, as long division on paper
  local q, r = { 0, 0 }, { 0, 0 }
  for i = 127, 0, -1 do
    local bit = i >= 64 and (a[1] >> (i - 64)) & 1 or (a[2] >> i) & 1
    r = { (r[1] << 1) | (r[2] >> 63), (r[2] << 1) | bit }
    if not ult128(r, b) then
      r = sub128(r, b)
      if i >= 64 then q[1] = q[1] | (1 << (i - 64)) else q[2] = q[2] | (1 << i) end
    end
  end
  return q, r
end
local function negative(a) return a[1] < 0 end
local function sdivmod128(a, b) -- C's truncating division: the remainder takes the dividend's sign
  local ua, ub = negative(a) and neg128(a) or a, negative(b) and neg128(b) or b
  local q, r = divmod128(ua, ub)
  if negative(a) ~= negative(b) then q = neg128(q) end
  if negative(a) then r = neg128(r) end
  return q, r
end

-- Operand pairs: edges (a divisor of one word, of two, the largest values, a quotient of 1 and of
-- 2^64) and pseudo-random ones from a fixed seed.
local PAIRS = {
  { { 0, 7 }, { 0, 7 } }, { { 1, 0 }, { 0, 2 } }, { { -1, -1 }, { 0, 1 } }, { { -1, -1 }, { -1, -1 } },
  { { -1, -1 }, { 0, 3 } }, { { 5, 0 }, { 1, 0 } }, { { 0, 0 }, { 9, 9 } }, { { 0x7fffffffffffffff, -1 }, { 0, 10 } },
  { { 123456789, 987654321 }, { 0, 0xffffffff } }, { { 1 << 40, 17 }, { 1, -1 } },
  { { math.mininteger, 0 }, { 0, 3 } }, { { -2, 5 }, { -1, -3 } },
}
local seed = 0x2545F4914F6CDD1D
local function rand64()
  seed = seed ~ (seed << 13); seed = seed ~ (seed >> 7); seed = seed ~ (seed << 17)
  return seed
end
for i = 1, 52 do
  local b = { i % 2 == 0 and 0 or rand64() >> (i % 60), rand64() >> (i % 5) }
  if b[1] == 0 and b[2] == 0 then b[2] = 1 end
  PAIRS[#PAIRS + 1] = { { rand64() >> (i % 3), rand64() }, b }
end

local KERNELS = [[
extern "C" __global__ void u128(const unsigned long long *x, unsigned long long *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned __int128 a = ((unsigned __int128)x[4 * i] << 64) | x[4 * i + 1];
  unsigned __int128 b = ((unsigned __int128)x[4 * i + 2] << 64) | x[4 * i + 3];
  unsigned __int128 v[4] = {a / b, a % b, a - b, a * b};
  for (int k = 0; k < 4; k++) {
    r[8 * i + 2 * k] = (unsigned long long)(v[k] >> 64);
    r[8 * i + 2 * k + 1] = (unsigned long long)v[k];
  }
}
extern "C" __global__ void s128(const long long *x, long long *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __int128 a = (__int128)(((unsigned __int128)x[4 * i] << 64) | (unsigned long long)x[4 * i + 1]);
  __int128 b = (__int128)(((unsigned __int128)x[4 * i + 2] << 64) | (unsigned long long)x[4 * i + 3]);
  __int128 v[2] = {a / b, a % b};
  for (int k = 0; k < 2; k++) {
    r[4 * i + 2 * k] = (long long)(v[k] >> 64);
    r[4 * i + 2 * k + 1] = (long long)(unsigned long long)v[k];
  }
}
// Each chain sets the flag with its first instruction and reads it with its last.
extern "C" __global__ void chains(const unsigned *x, unsigned *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = x[4 * i], b = x[4 * i + 1], c = x[4 * i + 2], d = x[4 * i + 3], t, u, v;
  asm("add.cc.u32 %0, %2, %3;\n\tsubc.u32 %1, %4, %5;" : "=&r"(t), "=r"(u) : "r"(a), "r"(b), "r"(c), "r"(d));
  r[8 * i] = u;
  asm("sub.cc.u32 %0, %2, %3;\n\taddc.u32 %1, %4, %5;" : "=&r"(t), "=r"(u) : "r"(a), "r"(b), "r"(c), "r"(d));
  r[8 * i + 1] = u;
  asm("sub.cc.u32 %0, %3, %4;\n\tsubc.cc.u32 %1, %5, %6;\n\taddc.u32 %2, 0, 0;"
      : "=&r"(t), "=&r"(u), "=r"(v) : "r"(a), "r"(b), "r"(c), "r"(d));
  r[8 * i + 2] = t; r[8 * i + 3] = u; r[8 * i + 4] = v;
  asm("add.cc.u32 %0, %2, %3;\n\tsubc.cc.u32 %1, %4, %5;\n\taddc.u32 %0, 0, 0;"
      : "=&r"(t), "=r"(u) : "r"(a), "r"(b), "r"(c), "r"(d));
  r[8 * i + 5] = u; r[8 * i + 6] = t;
  unsigned long long p = ((unsigned long long)a << 32) | b, q = ((unsigned long long)c << 32) | d, w;
  asm("add.cc.u64 %0, %1, %2;\n\tsubc.u64 %0, %2, %1;" : "=&l"(w) : "l"(p), "l"(q));
  r[8 * i + 7] = (unsigned)(w ^ (w >> 32));
}
]]

local function pairs_input(dtype)
  local x = cuda.host(4 * #PAIRS, dtype)
  for i, p in ipairs(PAIRS) do
    x[4 * i - 4], x[4 * i - 3], x[4 * i - 2], x[4 * i - 1] = p[1][1], p[1][2], p[2][1], p[2][2]
  end
  return x
end
local function hex(v) return string.format("%016x:%016x", v[1], v[2]) end

-- The reference of a chain: a subtraction adds the complement, with carry-in 1 when it opens the
-- chain and the flag when it continues one.
local function addc32(a, b, cin) local s = a + b + cin; return s & M32, s >> 32 end
local function subc32(a, b, cin) return addc32(a, ~b & M32, cin) end
local function chains_want(a, b, c, d)
  local w = {}
  local _, f = addc32(a, b, 0); w[1] = subc32(c, d, f)
  _, f = subc32(a, b, 1); w[2] = addc32(c, d, f)
  local t, f1 = subc32(a, b, 1)
  local u, f2 = subc32(c, d, f1)
  w[3], w[4], w[5] = t, u, f2
  _, f = addc32(a, b, 0)
  u, f2 = subc32(c, d, f)
  w[6], w[7] = u, f2
  local p, q = (a << 32) | b, (c << 32) | d
  local f64 = math.ult(p + q, p) and 1 or 0
  local nq = ~p -- subc.u64 q - p with the flag: q + ~p + f64
  local v = q + nq + f64
  w[8] = (v ~ (v >> 32)) & M32
  return w
end


-- Operands of the chains kernel: each of a few edge values against the flag's edges.
local function chain_quads()
  local vals = { 0, 1, 2, 3, 0x7fffffff, 0x80000000, 0xfffffffe, M32, 0x12345678, 0xdeadbeef }
  local quads = {}
  for _, a in ipairs(vals) do
    for _, b in ipairs({ 0, 1, M32, 0x80000000 }) do
      quads[#quads + 1] = { a, b, vals[(#quads % #vals) + 1], vals[((#quads * 7) % #vals) + 1] }
    end
  end
  return quads
end

C.M32, C.PAIRS, C.KERNELS, C.QUADS = M32, PAIRS, KERNELS, chain_quads()
C.divmod128, C.sdivmod128, C.sub128, C.mul128 = divmod128, sdivmod128, sub128, mul128
C.pairs_input, C.hex, C.chains_want = pairs_input, hex, chains_want
return C
