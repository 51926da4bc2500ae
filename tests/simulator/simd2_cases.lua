-- simd2_cases.lua: every half-word SIMD intrinsic of the CUDA Math API (__vadd2 ... __vsubus2,
-- and the __vi*_s16x2 / _u16x2 ones), with the 32-bit .relu forms whose PTX shares their
-- instructions (__vimax_s32_relu ...), each with a CPU reference written from the Math API's
-- definitions, and the inputs they run on: every pairing of the edge half-words (0, 1, 0x7fff,
-- 0x8000, 0xffff ...) in both halves, then random words. NVRTC writes them for sm_90 with
-- add.u16x2, add.s16x2, min/max .u16x2 / .s16x2 (.relu), max.s32.relu and vabsdiff2, and with
-- plain bit tricks. Shared by tests/simulator/simd2.lua (the simulator against the references)
-- and tests/gpu/bits_vs_gpu.lua (the GPU against the simulator, bit for bit).
local M = {}

-- Half-word i (0 low, 1 high) of a 32-bit word, unsigned or signed.
local function hu(v, i) return (v >> 16 * i) & 0xffff end
local function hs(v, i)
  local h = hu(v, i)
  return h >= 0x8000 and h - 0x10000 or h
end
local function clamp(x, lo, hi) return x < lo and lo or x > hi and hi or x end
local function sat_s(x) return clamp(x, -0x8000, 0x7fff) end
local function sat_u(x) return clamp(x, 0, 0xffff) end

-- A word from f applied to each half: f(i) gives half i as any integer, kept modulo 2^16.
local function per_half(f) return (f(0) & 0xffff) | (f(1) & 0xffff) << 16 end
local function s32(v) return v >= 0x80000000 and v - 0x100000000 or v end

-- The signed rounded average of the Math API (vavrg2's rounding): half up from zero.
local function avg_s(x, y)
  local s = x + y
  return s >= 0 and (s + 1) >> 1 or s >> 1
end

local function cmp(op, x, y)
  if op == "eq" then return x == y elseif op == "ne" then return x ~= y
  elseif op == "lt" then return x < y elseif op == "le" then return x <= y
  elseif op == "gt" then return x > y else return x >= y end
end

-- Each case: its name, how many arguments (1, 2 or 3 words), the C expression of x, y, z that
-- computes it, and the reference as a function of the argument words.
M.cases = {
  {"__vabs2", 1, function(a) return per_half(function(i) return math.abs(hs(a, i)) end) end},
  {"__vabsss2", 1, function(a)
    return per_half(function(i) return sat_s(math.abs(hs(a, i))) end) end},
  {"__vneg2", 1, function(a) return per_half(function(i) return -hs(a, i) end) end},
  {"__vnegss2", 1, function(a) return per_half(function(i) return sat_s(-hs(a, i)) end) end},
  {"__vadd2", 2, function(a, b) return per_half(function(i) return hu(a, i) + hu(b, i) end) end},
  {"__vaddss2", 2, function(a, b)
    return per_half(function(i) return sat_s(hs(a, i) + hs(b, i)) end) end},
  {"__vaddus2", 2, function(a, b)
    return per_half(function(i) return sat_u(hu(a, i) + hu(b, i)) end) end},
  {"__vsub2", 2, function(a, b) return per_half(function(i) return hu(a, i) - hu(b, i) end) end},
  {"__vsubss2", 2, function(a, b)
    return per_half(function(i) return sat_s(hs(a, i) - hs(b, i)) end) end},
  {"__vsubus2", 2, function(a, b)
    return per_half(function(i) return sat_u(hu(a, i) - hu(b, i)) end) end},
  {"__vabsdiffs2", 2, function(a, b)
    return per_half(function(i) return math.abs(hs(a, i) - hs(b, i)) end) end},
  {"__vabsdiffu2", 2, function(a, b)
    return per_half(function(i) return math.abs(hu(a, i) - hu(b, i)) end) end},
  {"__vsads2", 2, function(a, b)
    return math.abs(hs(a, 0) - hs(b, 0)) + math.abs(hs(a, 1) - hs(b, 1)) end},
  {"__vsadu2", 2, function(a, b)
    return math.abs(hu(a, 0) - hu(b, 0)) + math.abs(hu(a, 1) - hu(b, 1)) end},
  {"__vavgs2", 2, function(a, b)
    return per_half(function(i) return avg_s(hs(a, i), hs(b, i)) end) end},
  {"__vavgu2", 2, function(a, b)
    return per_half(function(i) return (hu(a, i) + hu(b, i) + 1) >> 1 end) end},
  {"__vhaddu2", 2, function(a, b)
    return per_half(function(i) return (hu(a, i) + hu(b, i)) >> 1 end) end},
  {"__vmaxs2", 2, function(a, b)
    return per_half(function(i) return math.max(hs(a, i), hs(b, i)) end) end},
  {"__vmaxu2", 2, function(a, b)
    return per_half(function(i) return math.max(hu(a, i), hu(b, i)) end) end},
  {"__vmins2", 2, function(a, b)
    return per_half(function(i) return math.min(hs(a, i), hs(b, i)) end) end},
  {"__vminu2", 2, function(a, b)
    return per_half(function(i) return math.min(hu(a, i), hu(b, i)) end) end},
  {"__vimax_s16x2_relu", 2, function(a, b)
    return per_half(function(i) return math.max(hs(a, i), hs(b, i), 0) end) end},
  {"__vimin_s16x2_relu", 2, function(a, b)
    return per_half(function(i) return math.max(math.min(hs(a, i), hs(b, i)), 0) end) end},
}

-- __vcmp<op>2 (0xffff where it holds) and __vset<op>2 (1), signed (s), unsigned (u) or either.
for _, op in ipairs({"eq", "ne", "lt", "le", "gt", "ge"}) do
  local signs = (op == "eq" or op == "ne") and {""} or {"s", "u"}
  for _, s in ipairs(signs) do
    local h = s == "s" and hs or hu
    for _, kind in ipairs({{"__vcmp", 0xffff}, {"__vset", 1}}) do
      M.cases[#M.cases + 1] = {kind[1] .. op .. s .. "2", 2, function(a, b)
        return per_half(function(i) return cmp(op, h(a, i), h(b, i)) and kind[2] or 0 end)
      end}
    end
  end
end

-- The three-operand ones: max or min of three, or of a + b (wrapping in its half) and c, each
-- on signed halves, on signed halves then .relu, and on unsigned halves.
local function three(name, sum, pick, h, relu)
  M.cases[#M.cases + 1] = {name, 3, function(a, b, c)
    return per_half(function(i)
      local x = sum and h(per_half(function(j) return hu(a, j) + hu(b, j) end), i)
                or pick(h(a, i), h(b, i))
      local r = pick(x, h(c, i))
      return relu and math.max(r, 0) or r
    end)
  end}
end
for _, f in ipairs({{"max", math.max}, {"min", math.min}}) do
  three("__vi" .. f[1] .. "3_s16x2", false, f[2], hs, false)
  three("__vi" .. f[1] .. "3_s16x2_relu", false, f[2], hs, true)
  three("__vi" .. f[1] .. "3_u16x2", false, f[2], hu, false)
  three("__viadd" .. f[1] .. "_s16x2", true, f[2], hs, false)
  three("__viadd" .. f[1] .. "_s16x2_relu", true, f[2], hs, true)
  three("__viadd" .. f[1] .. "_u16x2", true, f[2], hu, false)
end

-- __vibmax / __vibmin: the max or min of each half, and through two pointers whether a's half
-- was it (a >= b, a <= b); the second case of each packs those as hi << 1 | lo. A helper of the
-- kernel (M.source) calls each and returns one or the other.
for _, f in ipairs({{"max", math.max, ">="}, {"min", math.min, "<="}}) do
  for _, s in ipairs({{"s16x2", hs}, {"u16x2", hu}}) do
    local name, h = "__vib" .. f[1] .. "_" .. s[1], s[2]
    M.cases[#M.cases + 1] = {name, 2, function(a, b)
      return per_half(function(i) return f[2](h(a, i), h(b, i)) end)
    end, name:sub(3) .. "(x, y, 0)"}
    M.cases[#M.cases + 1] = {name .. " predicates", 2, function(a, b)
      local function p(i) return cmp(f[3] == ">=" and "ge" or "le", h(a, i), h(b, i)) and 1 or 0 end
      return p(1) << 1 | p(0)
    end, name:sub(3) .. "(x, y, 1)"}
  end
end

-- The 32-bit .relu forms (max.s32.relu, min.s32.relu): max(r, 0) of a signed result.
for _, f in ipairs({{"max", math.max}, {"min", math.min}}) do
  M.cases[#M.cases + 1] = {"__vi" .. f[1] .. "_s32_relu", 2, function(a, b)
    return math.max(f[2](s32(a), s32(b)), 0) end}
  M.cases[#M.cases + 1] = {"__vi" .. f[1] .. "3_s32_relu", 3, function(a, b, c)
    return math.max(f[2](s32(a), s32(b), s32(c)), 0) end}
  M.cases[#M.cases + 1] = {"__viadd" .. f[1] .. "_s32_relu", 3, function(a, b, c)
    return math.max(f[2](s32((a + b) & 0xffffffff), s32(c)), 0) end}
end

-- The C expression of case c.
function M.expr(c)
  return c[4] or c[1] .. "(" .. table.concat({"x", "y", "z"}, ", ", 1, c[2]) .. ")"
end

-- The reference result of case c on words a, b, c3, as a u32.
function M.want(c, a, b, c3) return c[3](a, b, c3) & 0xffffffff end

-- One kernel computing every case for element i into out[k * n + i], case k counted from 0.
function M.source()
  local body, helpers = {}, {}
  for k, c in ipairs(M.cases) do
    body[#body + 1] = string.format("  out[%d * n + i] = %s;", k - 1, M.expr(c))
  end
  for _, f in ipairs({"vibmax_s16x2", "vibmax_u16x2", "vibmin_s16x2", "vibmin_u16x2"}) do
    helpers[#helpers + 1] = string.format("__device__ unsigned %s(unsigned x, unsigned y, " ..
      "int preds) {\n  bool hi, lo;\n  unsigned r = __%s(x, y, &hi, &lo);\n" ..
      "  return preds ? hi << 1 | lo : r;\n}\n", f, f)
  end
  return table.concat(helpers) ..
    "extern \"C\" __global__ void simd2(const unsigned *a, const unsigned *b, const unsigned *c," ..
    " unsigned *out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" ..
    "  if (i >= n) return;\n  unsigned x = a[i], y = b[i], z = c[i];\n" ..
    table.concat(body, "\n") .. "\n}\n"
end

-- The inputs: three lists of n words. Every word made of two edge half-words, against every
-- other (so each pair of edge halves meets in both positions), then random words.
M.EDGES = {0x0000, 0x0001, 0x7ffe, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff, 0x4000, 0xc000}
function M.inputs(nrandom)
  local words = {}
  for _, hi in ipairs(M.EDGES) do
    for _, lo in ipairs(M.EDGES) do words[#words + 1] = hi << 16 | lo end
  end
  local xs, ys, zs = {}, {}, {}
  for i, w in ipairs(words) do
    for j, v in ipairs(words) do
      xs[#xs + 1], ys[#ys + 1], zs[#zs + 1] = w, v, words[(i * 7 + j) % #words + 1]
    end
  end
  local r = 0x2545f491
  local function rand()
    r = (r * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
    return (r >> 32) & 0xffffffff
  end
  for _ = 1, nrandom do xs[#xs + 1], ys[#ys + 1], zs[#zs + 1] = rand(), rand(), rand() end
  return xs, ys, zs
end

-- Runs the kernel of module m on the inputs; the results as one u32 array (case-major).
function M.run(m, xs, ys, zs)
  local n = #xs
  local out = cuda.zeros(#M.cases * n, "u32")
  m.simd2[{(n + 127) // 128, 128}](cuda.array(xs, "u32"), cuda.array(ys, "u32"),
    cuda.array(zs, "u32"), out, n)
  return out
end

return M
