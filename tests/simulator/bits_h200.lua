-- bits_h200.lua: results the H200 gave (tests/gpu/bits_vs_gpu.lua, 2026-12-03) where the PTX ISA
-- leaves the bits to the hardware, held here so that a machine without a GPU keeps them: f64
-- hypot (libdevice refines rsqrt.approx.ftz.f64, the unit's raw 20-bit estimate, itself), a NaN
-- converted to each integer type, cvt's result in a register wider than its type, and the float
-- conversions of NaN, infinity and out-of-range values (tests/simulator/cvt_edges_cases.lua).
local T = dofile("tests/lua/testlib.lua")
T.plan(5)
local test, check = T.test, T.check

-- x, y, hypot(x, y) on the H200: inputs where a refined estimate gave a last bit off by one
local HYPOT = {
  { "0x1.690714a6aa32bp+12", "0x1.487a17094d4e8p-2", "0x1.690714b00116p+12" },
  { "-0x1.b6c26f257ecd6p+9", "-0x1.fa9fab634355ap-8", "0x1.b6c26f25c7ecdp+9" },
  { "0x1.ffb78ed97d0d6p+5", "0x1.29bdde67ce0cp+7", "0x1.440fccfe4dfa1p+7" },
  { "0x1.536463eb3737ap-28", "0x1.48b38fc748d1ap-2", "0x1.48b38fc748d1ap-2" },
  { "-0x1.9f09bf05d4605p+12", "-0x1.121826b5c2a1bp+8", "0x1.9f6436f4e9674p+12" },
  { "-0x1.26884e73feed2p+2", "0x1.46d80d913ed64p-6", "0x1.268903cd66ab1p+2" },
  { "-0x1.6223ca137c018p-1", "0x1.48963c8868148p-9", "0x1.62246283b363cp-1" },
  { "0x1.60676b57bd2a6p-1", "-0x1.debf1849344fp+6", "0x1.dec11f16c2971p+6" },
  { "-0x1.ed03919a4ccd6p+0", "0x1.05a1c81680204p-13", "0x1.ed0391aba7c3p+0" },
  { "-0x1.8f1fb23388461p-8", "-0x1.86a6ec5465684p+1", "0x1.86a71f4d52219p+1" },
  { "-0x1.423bbdb6f4b8dp+19", "0x1.69f70f3e3f0fp+1", "0x1.423bbdb7016d9p+19" },
  { "0x1.41c626438b67dp+1", "-0x1.ca6a5b8ed5871p+4", "0x1.cc2d3710ae1f7p+4" },
}

test("f64 hypot: the H200's last bit", function()
  local n = #HYPOT
  local x, y = cuda.host(n, "f64"), cuda.host(n, "f64")
  for i, v in ipairs(HYPOT) do x[i - 1], y[i - 1] = tonumber(v[1]), tonumber(v[2]) end
  local h = cuda.zeros(n, "f64")
  cuda.kernel([[__global__ void hyp(const double *x, const double *y, double *h, int n) {
    int i = threadIdx.x; if (i < n) h[i] = hypot(x[i], y[i]); }]])[{ 1, 32 }](
    cuda.array(x), cuda.array(y), h, n)
  local got, bad = h:host(), {}
  for i, v in ipairs(HYPOT) do
    if got[i - 1] ~= tonumber(v[3]) then
      bad[#bad + 1] = string.format("hypot(%s, %s) = %a, the H200 gave %s", v[1], v[2], got[i - 1], v[3])
    end
  end
  check(#bad == 0, table.concat(bad, "; "))
end)

-- (C type, array dtype, what a NaN becomes from float, from double), as the H200 converts them:
-- 0 where the conversion is 32 bits or narrower from float (the PTX ISA's rule), the sign bit
-- alone into 64 bits, and into 32 bits from double (a char or short is converted through int).
local MIN64 = math.mininteger
local NAN_TO = {
  { "signed char", "i8", 0, 0 }, { "unsigned char", "u8", 0, 0 }, { "short", "i16", 0, 0 },
  { "unsigned short", "u16", 0, 0 }, { "int", "i32", 0, -2147483648 },
  { "unsigned", "u32", 0, 2147483648 }, { "long long", "i64", MIN64, MIN64 },
  { "unsigned long long", "u64", MIN64, MIN64 }, -- 2^63, read as the integer with its bits
}

test("a NaN converted to every integer type: the H200's bits", function()
  local bad = {}
  for _, from in ipairs({ { "float", "f32", 3 }, { "double", "f64", 4 } }) do
    local x = cuda.host(2, from[2])
    x[0], x[1] = 0 / 0, -(0 / 0)
    for _, t in ipairs(NAN_TO) do
      local store = t[2] == "i64" and "long long" or t[1]
      local y = cuda.zeros(2, t[2])
      cuda.kernel(string.format([[__global__ void cvt(const %s *x, %s *y) {
        y[threadIdx.x] = (%s)x[threadIdx.x]; }]], from[1], store, t[1]))[{ 1, 2 }](cuda.array(x), y)
      local got = y:host()
      for i = 0, 1 do
        if math.tointeger(got[i]) ~= t[from[3]] then
          bad[#bad + 1] = string.format("(%s)%s NaN = %s, the H200 gave %d", t[1], from[1],
            tostring(got[i]), t[from[3]])
        end
      end
    end
  end
  check(#bad == 0, table.concat(bad, "; "))
end)

-- The cvt instruction written by hand into a 16-bit register, as the H200 answered: a signed
-- result is sign-extended to the register, and a NaN from f64 is the destination's sign bit.
local CVT16 = {
  { "cvt.rzi.s8.f32", "float", -1.5, 0xffff }, { "cvt.rzi.s8.f32", "float", -129.0, 0xff80 },
  { "cvt.rzi.s8.f64", "double", 0 / 0, 0xff80 }, { "cvt.rzi.u8.f64", "double", 0 / 0, 0x80 },
  { "cvt.rzi.s16.f64", "double", 0 / 0, 0x8000 }, { "cvt.rzi.u16.f64", "double", 0 / 0, 0x8000 },
  { "cvt.rzi.s16.f32", "float", 0 / 0, 0 }, { "cvt.rzi.u8.f32", "float", 300.0, 0xff },
}

test("cvt into a 16-bit register: the H200's bits", function()
  local bad = {}
  for _, c in ipairs(CVT16) do
    local x, y = cuda.host(1, c[2] == "float" and "f32" or "f64"), cuda.zeros(1, "u16")
    x[0] = c[3]
    cuda.kernel(string.format([[__global__ void one(const %s *x, unsigned short *y) {
      unsigned short r; asm("%s %%0, %%1;" : "=h"(r) : "%s"(x[0])); y[0] = r; }]], c[2], c[1],
      c[2] == "float" and "f" or "d"))[{ 1, 1 }](cuda.array(x), y)
    if y[0] ~= c[4] then
      bad[#bad + 1] = string.format("%s of %s = 0x%x, the H200 gave 0x%x", c[1], c[3], y[0], c[4])
    end
  end
  check(#bad == 0, table.concat(bad, "; "))
end)

-- ---- cvt to a float type: NaN, infinity, overflow (the cases of cvt_edges_cases.lua) ----

local E = dofile("tests/simulator/cvt_edges_cases.lua")
local OUT = E.run(cuda.module(E.source()))
-- Each float type: its canonical NaN (what the H200 gives for any NaN it narrows: 0x7fffffff,
-- 0x7fff), its +infinity and its largest finite value, and its sign bit.
local FMT = {f16 = {0x7fff, 0x7c00, 0x7bff, 0x8000}, bf16 = {0x7fff, 0x7f80, 0x7f7f, 0x8000},
  f32 = {0x7fffffff, 0x7f800000, 0x7f7fffff, 0x80000000}}
local WIDTH = {f16 = 16, bf16 = 16, f32 = 32, f64 = 64}

-- What IEEE 754 rounding gives past the largest finite value: an infinity, or the largest finite
-- where the direction points back towards zero.
local function overflow(d, mode, negative)
  local f = FMT[d]
  local inf = mode == "rn" or (mode == "rp" and not negative) or (mode == "rm" and negative)
  return (negative and f[4] or 0) | (inf and f[2] or f[3])
end

test("narrowing float conversions: a NaN is the canonical NaN, an infinity an infinity, every mode",
     function()
  local bad = {}
  for _, c in ipairs(E.conversions) do
    local d, s = c[1], c[2]
    local narrow = FMT[d] and WIDTH[s] and (WIDTH[d] < WIDTH[s] or (WIDTH[d] == WIDTH[s] and d ~= s))
    if narrow then
      local got = OUT[E.name(c)]
      local want = {}
      for i = 1, 5 do want[i] = FMT[d][1] end -- the five NaNs of each list
      want[6], want[7] = FMT[d][2], FMT[d][4] | FMT[d][2]
      for i = 1, 7 do
        if got[i] ~= want[i] then
          bad[#bad + 1] = string.format("%s of 0x%x: 0x%x, want 0x%x", E.name(c), E.types[s][3][i],
                                        got[i], want[i])
        end
      end
    end
  end
  check(#bad == 0, table.concat(bad, "; "))
end)

-- Values past a destination's range, {source, index in its edge list, negative, destinations}:
-- f64's and f32's largest finite values, the f64 halfway past f32's largest (where round to
-- nearest goes to infinity, its largest being odd), f64 and bf16 values past f16's and bf16's,
-- and the integers' extremes past f16's 65504 (65520 and up round to infinity).
local PAST = {
  {"f64", 8, false, {"f32", "f16", "bf16"}}, {"f64", 9, false, {"f32", "f16", "bf16"}},
  {"f64", 10, false, {"f16", "bf16"}}, {"f64", 11, true, {"f32", "f16", "bf16"}},
  {"f32", 8, false, {"f16", "bf16"}}, {"f32", 9, true, {"f16", "bf16"}},
  {"bf16", 8, false, {"f16"}}, {"bf16", 9, true, {"f16"}},
  {"u16", 1, false, {"f16"}}, {"u32", 1, false, {"f16"}}, {"s32", 1, true, {"f16"}},
  {"u64", 1, false, {"f16"}}, {"s64", 1, true, {"f16"}},
}

test("a value past a float type's range: infinity or its largest finite, as each mode rounds",
     function()
  local bad, n = {}, 0
  for _, c in ipairs(E.conversions) do
    local d, s, mode = c[1], c[2], c[3]
    for _, p in ipairs(PAST) do
      for _, pd in ipairs(p[4]) do
        if p[1] == s and pd == d then
          n = n + 1
          local got, want = OUT[E.name(c)][p[2]], overflow(d, mode, p[3])
          if got ~= want then
            bad[#bad + 1] = string.format("%s of 0x%x: 0x%x, want 0x%x", E.name(c),
                                          E.types[s][3][p[2]], got, want)
          end
        end
      end
    end
  end
  check(n == 4 * 22, "checked " .. n .. " conversions")
  check(#bad == 0, table.concat(bad, "; "))
end)

return T.done()
