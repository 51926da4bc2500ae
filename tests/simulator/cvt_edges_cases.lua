-- cvt_edges_cases.lua: the cvt instruction between every pair of float types (f16, bf16, f32,
-- f64) and from the 16-, 32- and 64-bit integer types to each float type, in every rounding mode
-- a narrowing takes, on the values where the hardware decides the bits: NaNs of either sign with
-- and without payloads (signalling ones too), infinities, the largest finite values and the
-- halfway points past them (overflow), the smallest subnormals and half of them (underflow), and
-- integers past a format's range or precision. Shared by tests/gpu/bits_vs_gpu.lua (the GPU
-- against the simulator, bit for bit) and tests/simulator/bits_h200.lua (what the simulator
-- gives where the ISA and the H200 fix the answer).
local M = {}

-- Each type: its bits' array dtype, its inline-asm register constraint, and its edge values as
-- bit patterns (integers for the integer types).
M.types = {
  f64 = {"u64", "l", {0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001,
    0x7ff80000deadbeef, 0xfff4000000012345, 0x7ff0000000000000, 0xfff0000000000000,
    0x7fefffffffffffff, 0x47effffff0000000, 0x47efffffefffffff, 0xc7effffff0000000,
    0x40effc0000000000, 0x40effe0000000000, 0x40effdffffffffff, 0x47efe00000000000,
    0x47eff00000000000, 0x36a0000000000000, 0x36a0000000000001, 0x3e70000000000000,
    0x3e60000000000000, 0x3e60000000000001, 0x0000000000000001, 0x8000000000000001,
    0x0000000000000000, 0x8000000000000000, 0x3ff0000000000001}},
  f32 = {"u32", "r", {0x7fc00000, 0xffc00000, 0x7f800001, 0x7fc12345, 0xffa00001, 0x7f800000,
    0xff800000, 0x7f7fffff, 0xff7fffff, 0x477fe000, 0x477ff000, 0x477fefff, 0x7f7f8000,
    0x7f7f7fff, 0x33800000, 0x33000000, 0x33000001, 0x00000001, 0x80000001, 0x00000000,
    0x80000000, 0x3f800001}},
  f16 = {"u16", "h", {0x7e00, 0xfe00, 0x7c01, 0x7e55, 0xfd01, 0x7c00, 0xfc00, 0x7bff, 0xfbff,
    0x0001, 0x8001, 0x0000, 0x8000, 0x3c01}},
  bf16 = {"u16", "h", {0x7fc0, 0xffc0, 0x7f81, 0x7fd5, 0xffa1, 0x7f80, 0xff80, 0x7f7f, 0xff7f,
    0x0001, 0x8001, 0x0000, 0x8000, 0x3f81}},
  s16 = {"u16", "h", {0x8000, 0x7fff, 0x0000, 0xffff, 0x0801, 0xf7ff}},
  u16 = {"u16", "h", {0xffff, 0xffe0, 0xfff0, 0xffef, 0x8000, 0x0801}},
  s32 = {"u32", "r", {0x80000000, 0x7fffffff, 0x01000001, 0xfeffffff, 0x0001fff0, 0xffff0010}},
  u32 = {"u32", "r", {0xffffffff, 0x80000000, 0x01000001, 0x0000fff0, 0x0001fff0, 0xffffff80}},
  s64 = {"u64", "l", {math.mininteger, math.maxinteger, 0x0020000000000001, -0x0020000000000001,
    0x000000000000fff0, -1}},
  u64 = {"u64", "l", {-1, math.mininteger, 0x0020000000000001, 0xffffff8000000000,
    0xfffffe0000000000, 0x000000000000fff0}},
}

local FLOATS = {"f16", "bf16", "f32", "f64"}
local INTS = {"s16", "u16", "s32", "u32", "s64", "u64"}
local WIDTH = {f16 = 16, bf16 = 16, f32 = 32, f64 = 64}

-- Every conversion: {dst, src, rounding modifier or ""}.
M.conversions = {}
local function add(d, s, m) M.conversions[#M.conversions + 1] = {d, s, m} end
for _, s in ipairs(FLOATS) do
  for _, d in ipairs(FLOATS) do
    local narrow = WIDTH[d] < WIDTH[s] or (WIDTH[d] == WIDTH[s] and d ~= s)
    if narrow then
      for _, m in ipairs({"rn", "rz", "rm", "rp"}) do add(d, s, m) end
    elseif WIDTH[d] > WIDTH[s] then
      add(d, s, "")
    end
  end
end
for _, s in ipairs(INTS) do
  for _, d in ipairs(FLOATS) do
    for _, m in ipairs({"rn", "rz", "rm", "rp"}) do add(d, s, m) end
  end
end

-- The kernel of conversion c: y[i] = cvt(x[i]), bits in and out.
function M.name(c) return string.format("cvt_%s_%s%s", c[1], c[2], c[3] ~= "" and "_" .. c[3] or "") end

local CTYPE = {u16 = "unsigned short", u32 = "unsigned", u64 = "unsigned long long"}

function M.source()
  local parts = {}
  for _, c in ipairs(M.conversions) do
    local d, s = M.types[c[1]], M.types[c[2]]
    parts[#parts + 1] = string.format(
      "extern \"C\" __global__ void %s(const %s *x, %s *y, int n) {\n" ..
      "  int i = blockIdx.x * blockDim.x + threadIdx.x; %s r;\n" ..
      "  if (i < n) { asm(\"cvt%s.%s.%s %%0, %%1;\" : \"=%s\"(r) : \"%s\"(x[i])); y[i] = r; }\n}\n",
      M.name(c), CTYPE[s[1]], CTYPE[d[1]], CTYPE[d[1]], c[3] ~= "" and "." .. c[3] or "",
      c[1], c[2], d[2], s[2])
  end
  return table.concat(parts)
end

-- Runs every conversion with module m: outputs[name] = the result bits as a Lua sequence.
function M.run(m)
  local out = {}
  for _, c in ipairs(M.conversions) do
    local d, s = M.types[c[1]], M.types[c[2]]
    local vals = s[3]
    local x, y = cuda.array(vals, s[1]), cuda.zeros(#vals, d[1])
    m[M.name(c)][{1, 32}](x, y, #vals)
    out[M.name(c)] = y:tolist()
  end
  return out
end

return M
