-- bits_vs_gpu.lua: conversions of NaN, infinities and out-of-range floats to every integer type,
-- the conversions between every pair of float types and from every integer type to each float type
-- in every rounding mode (NaNs with payloads, infinities, overflow and underflow: the cases of
-- tests/simulator/cvt_edges_cases.lua), f64 hypot, exp and log1p, and every half-word SIMD
-- intrinsic (__vadd2 ... __vsubus2, __vi*_s16x2: tests/simulator/simd2_cases.lua), on the GPU and
-- on the simulator from the same inputs, compared
-- bit for bit. What the hardware does at the edges (a NaN converted to int) is not in the C++
-- standard, so the GPU is the reference: the simulator must give what it gives.
local T = dofile("tests/lua/testlib.lua")
T.plan(6)
local test, check = T.test, T.check

-- Edge values: NaN, infinities, the integer types' limits and just past them, halves, huge.
local EDGES = { 0 / 0, -(0 / 0), math.huge, -math.huge, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5,
  127.5, 128.0, -128.5, -129.0, 255.5, 256.0, 32767.5, 32768.0, -32768.5, -32769.0, 65535.5,
  65536.0, 2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0, 4294967295.0, 4294967296.0,
  9.2233720368547758e18, 9.3e18, -9.2233720368547758e18, -9.3e18, 1.8446744073709552e19, 2e19,
  1e30, -1e30, 3.4e38, -3.4e38, 1e-30, -1e-30, 1e300, -1e300 }

-- C type, the array that holds it, and a name for the kernel.
local TYPES = { { "signed char", "i8", "i8" }, { "unsigned char", "u8", "u8" },
  { "short", "i16", "i16" }, { "unsigned short", "u16", "u16" }, { "int", "i32", "i32" },
  { "unsigned", "u32", "u32" }, { "long long", "i64", "i64" },
  { "unsigned long long", "u64", "u64" } }

local function source()
  local parts = {}
  for _, from in ipairs({ "float", "double" }) do
    for _, t in ipairs(TYPES) do
      parts[#parts + 1] = string.format(
        "extern \"C\" __global__ void cvt_%s_%s(const %s *x, %s *y, int n) {\n" ..
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = (%s)x[i];\n}\n",
        from, t[3], from, t[2] == "i64" and "long long" or t[1], t[1])
    end
  end
  parts[#parts + 1] = [[
extern "C" __global__ void f64_math(const double *x, const double *y, double *h, double *e,
                                    double *l, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { h[i] = hypot(x[i], y[i]); e[i] = exp(x[i]); l[i] = log1p(x[i]); }
}]]
  return table.concat(parts)
end

-- body(backend) -> list of host buffers, run on the GPU then on the simulator.
local function both(body)
  local out = {}
  for _, be in ipairs({ "cuda", "sim" }) do
    local old = cuda.use(be)
    out[be] = body(cuda.module(source()))
    cuda.use(old)
  end
  return out.cuda, out.sim
end

-- The first few elements whose bits differ, in words.
local function differences(x, g, s, n)
  local bad = {}
  for i = 0, n - 1 do
    local a, b = g[i], s[i]
    local same = a == b or (a ~= a and b ~= b)
    if math.type(a) == "float" and same then same = string.pack("d", a) == string.pack("d", b) end
    if not same then
      bad[#bad + 1] = string.format("%s -> GPU %s, simulator %s", tostring(x[i]), tostring(a), tostring(b))
      if #bad == 6 then break end
    end
  end
  return bad
end

for _, from in ipairs({ { "float", "f32" }, { "double", "f64" } }) do
  test("conversions from " .. from[1] .. " to every integer type: the GPU's bits", function()
    local n = #EDGES
    local x = cuda.host(n, from[2])
    for i = 1, n do x[i - 1] = EDGES[i] end
    local g, s = both(function(m)
      local outs = {}
      for _, t in ipairs(TYPES) do
        local y = cuda.zeros(n, t[2])
        m["cvt_" .. from[1] .. "_" .. t[3]][{ 1, 64 }](cuda.array(x), y, n)
        outs[#outs + 1] = y:host()
      end
      return outs
    end)
    local report = {}
    for k, t in ipairs(TYPES) do
      local bad = differences(x, g[k], s[k], n)
      if #bad > 0 then report[#report + 1] = "(" .. t[1] .. "): " .. table.concat(bad, "; ") end
    end
    check(#report == 0, table.concat(report, "\n  "))
  end)
end

-- The cvt instruction itself, to every integer width from f16, f32 and f64: C's casts above reach
-- only the 32- and 64-bit forms (a char is converted through int), PTX written by hand reaches all.
local WIDTHS = { { "s8", "h" }, { "u8", "h" }, { "s16", "h" }, { "u16", "h" }, { "s32", "r" },
  { "u32", "r" }, { "s64", "l" }, { "u64", "l" } }
local SOURCES = { { "f16", "h", "unsigned short", "u16" }, { "f32", "f", "float", "f32" },
  { "f64", "d", "double", "f64" } }

local function ptx_source()
  local parts = {}
  for _, s in ipairs(SOURCES) do
    for _, w in ipairs(WIDTHS) do
      local out = w[2] == "l" and "long long" or w[2] == "r" and "unsigned" or "unsigned short"
      parts[#parts + 1] = string.format(
        "extern \"C\" __global__ void ptx_%s_%s(const %s *x, %s *y, int n) {\n" ..
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; %s r = 0;\n" ..
        "  if (i < n) { asm(\"cvt.rzi.%s.%s %%0, %%1;\" : \"=%s\"(r) : \"%s\"(x[i])); y[i] = r; }\n}\n",
        s[1], w[1], s[3], out, out, w[1], s[1], w[2], s[2])
    end
  end
  return table.concat(parts)
end

test("the cvt instruction from f16, f32 and f64 to every integer width: the GPU's bits", function()
  local report = {}
  for _, s in ipairs(SOURCES) do
    local vals = {}
    if s[1] == "f16" then -- NaNs, infinities, the largest finite, halves, past 8 and 16 bits
      vals = { 0x7e00, 0xfe00, 0x7c01, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x3800, 0xb800, 0x3e00,
        0x5bf8, 0x5c04, 0xd808, 0xd80c, 0x7800, 0xf800, 0x0001, 0x8000 }
    else
      for _, v in ipairs(EDGES) do vals[#vals + 1] = v end
    end
    local n = #vals
    local x = cuda.host(n, s[4])
    for i = 1, n do x[i - 1] = vals[i] end
    local g, sm = {}, {}
    for _, be in ipairs({ "cuda", "sim" }) do
      local prev = cuda.use(be)
      local m = cuda.module(ptx_source())
      local outs = be == "cuda" and g or sm
      for k, w in ipairs(WIDTHS) do
        local y = cuda.zeros(n, w[2] == "l" and "i64" or w[2] == "r" and "u32" or "u16")
        m["ptx_" .. s[1] .. "_" .. w[1]][{ 1, 64 }](cuda.array(x), y, n)
        outs[k] = y:host()
      end
      cuda.use(prev)
    end
    for k, w in ipairs(WIDTHS) do
      local bad = differences(x, g[k], sm[k], n)
      if #bad > 0 then
        report[#report + 1] = "cvt.rzi." .. w[1] .. "." .. s[1] .. ": " .. table.concat(bad, "; ")
      end
    end
  end
  check(#report == 0, table.concat(report, "\n  "))
end)

test("cvt to every float type from every float and integer type, every mode: the GPU's bits",
     function()
  local E = dofile("tests/simulator/cvt_edges_cases.lua")
  local out = {}
  for _, be in ipairs({ "cuda", "sim" }) do
    local prev = cuda.use(be)
    local ok, r = pcall(function() return E.run(cuda.module(E.source())) end)
    cuda.use(prev)
    if not ok then error(r, 0) end
    out[be] = r
  end
  local report = {}
  for _, c in ipairs(E.conversions) do
    local name, bad = E.name(c), {}
    local g, sm, x = out.cuda[name], out.sim[name], E.types[c[2]][3]
    for i = 1, #x do
      if g[i] ~= sm[i] then
        bad[#bad + 1] = string.format("0x%x -> GPU 0x%x, simulator 0x%x", x[i], g[i], sm[i])
      end
    end
    if #bad > 0 then
      report[#report + 1] = name .. ": " .. table.concat(bad, "; ", 1, math.min(#bad, 4))
    end
  end
  check(#report == 0, #report .. " of " .. #E.conversions .. " conversions differ:\n  "
        .. table.concat(report, "\n  "))
end)

test("f64 hypot, exp and log1p: the GPU's bits", function()
  local n = 20000
  local x, y = cuda.host(n, "f64"), cuda.host(n, "f64")
  local rx, ry = cuda.rand(n, "f64", 7):host(), cuda.rand(n, "f64", 8):host()
  for i = 0, n - 1 do
    -- magnitudes from 1e-3 to 1e3, both signs; exp's argument within its finite range
    x[i] = (rx[i] - 0.5) * 10 ^ ((i % 13) - 6) * 1.4
    y[i] = (ry[i] - 0.5) * 10 ^ ((i % 7) - 3)
  end
  local g, s = both(function(m)
    local h, e, l = cuda.zeros(n, "f64"), cuda.zeros(n, "f64"), cuda.zeros(n, "f64")
    m.f64_math[{ (n + 255) // 256, 256 }](cuda.array(x), cuda.array(y), h, e, l, n)
    return { h:host(), e:host(), l:host() }
  end)
  local report = {}
  for k, name in ipairs({ "hypot", "exp", "log1p" }) do
    local bad = differences(x, g[k], s[k], n)
    if #bad > 0 then report[#report + 1] = name .. ": " .. table.concat(bad, "; ") end
  end
  check(#report == 0, table.concat(report, "\n  "))
end)

-- add, min and max on .u16x2 / .s16x2 (.relu too), max.s32.relu and vabsdiff2, through every
-- intrinsic NVRTC builds on them and those it builds with bit tricks: the simulator's
-- semantics (sim_alu.c's sem_x2 and sem_vabsdiff) against the GPU's, on every pairing of edge
-- half-words and random words. tests/simulator/simd2.lua checks the simulator against CPU
-- references of the same cases.
test("every half-word SIMD intrinsic: the GPU's bits", function()
  local C = dofile("tests/simulator/simd2_cases.lua")
  local xs, ys, zs = C.inputs(4000)
  local n, out = #xs, {}
  for _, be in ipairs({ "cuda", "sim" }) do
    local prev = cuda.use(be)
    local ok, r = pcall(function() return C.run(cuda.module(C.source()), xs, ys, zs):tolist() end)
    cuda.use(prev)
    if not ok then error(r, 0) end
    out[be] = r
  end
  local report = {}
  for k, c in ipairs(C.cases) do
    local bad = {}
    for i = 1, n do
      local g, s = out.cuda[(k - 1) * n + i], out.sim[(k - 1) * n + i]
      if g ~= s then
        bad[#bad + 1] = string.format("(%08x, %08x, %08x) -> GPU %08x, simulator %08x", xs[i],
          ys[i], zs[i], g, s)
        if #bad == 4 then break end
      end
    end
    if #bad > 0 then report[#report + 1] = c[1] .. ": " .. table.concat(bad, "; ") end
  end
  check(#report == 0, #report .. " of " .. #C.cases .. " intrinsics differ:\n  " ..
        table.concat(report, "\n  "))
end)

return T.done()
