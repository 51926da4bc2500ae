-- simd2.lua: the half-word SIMD intrinsics of the CUDA Math API on the simulator, every one
-- (tests/simulator/simd2_cases.lua lists them with their CPU references) on every pairing of
-- edge half-words and on random words, exact; the instructions NVRTC writes for them
-- (add.u16x2, add.s16x2, min/max .u16x2 / .s16x2 / .relu, max.s32.relu, vabsdiff2) in inline PTX
-- with each type and modifier the PTX ISA gives them. tests/gpu/bits_vs_gpu.lua runs the same
-- cases on the GPU; tests/sim/test_errors.c loads the forms the ISA does not have.
local T = dofile("tests/lua/testlib.lua")
local test, check = T.test, T.check
T.plan(4)
local C = dofile("tests/simulator/simd2_cases.lua")

test("NVRTC writes the half-word SIMD intrinsics with the instructions this suite is about",
     function()
  local ptx = cuda.module(C.source()):ptx()
  local missing = {}
  for _, inst in ipairs({"add.u16x2", "add.s16x2", "max.s16x2", "min.u16x2", "max.s16x2.relu",
                         "min.s16x2.relu", "max.s32.relu", "vabsdiff2.u32.u32.u32.add"}) do
    if not ptx:find(inst, 1, true) then missing[#missing + 1] = inst end
  end
  check(#missing == 0, "not in the PTX: " .. table.concat(missing, ", "))
end)

test("every __v*2 intrinsic (and the __vi* relu forms) matches its CPU reference", function()
  local xs, ys, zs = C.inputs(1000)
  local n = #xs
  local got = C.run(cuda.module(C.source()), xs, ys, zs):tolist()
  local report = {}
  for k, c in ipairs(C.cases) do
    local bad = {}
    for i = 1, n do
      local want, g = C.want(c, xs[i], ys[i], zs[i]), got[(k - 1) * n + i]
      if g ~= want then
        bad[#bad + 1] = string.format("(%08x, %08x, %08x): %08x, want %08x", xs[i], ys[i],
          zs[i], g, want)
        if #bad == 3 then break end
      end
    end
    if #bad > 0 then report[#report + 1] = c[1] .. " " .. table.concat(bad, "; ") end
  end
  check(#report == 0, #report .. " of " .. #C.cases .. " intrinsics differ:\n  " ..
        table.concat(report, "\n  "))
end)

-- One kernel running the inline-PTX forms on words x, y, z, each into its own row of out.
local function asm_kernel(forms)
  local src = {}
  for k, f in ipairs(forms) do
    src[#src + 1] = string.format('  asm("%s %%0, %%1, %%2%s;" : "=r"(r) : "r"(x), "r"(y), ' ..
      '"r"(z)); out[%d * n + i] = r;', f[1], f[3] and ", %3" or "", k - 1)
  end
  return cuda.kernel(
    "__global__ void v(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out, " ..
    "int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n" ..
    "  unsigned x = a[i], y = b[i], z = c[i], r;\n" .. table.concat(src, "\n") .. "\n}")
end

-- Runs forms {ptx, reference(x, y, z), takes_c} and reports the first few that differ.
local function check_forms(forms)
  local xs, ys, zs = C.inputs(500)
  local n = #xs
  local out = cuda.zeros(#forms * n, "u32")
  asm_kernel(forms)[{(n + 127) // 128, 128}](cuda.array(xs, "u32"), cuda.array(ys, "u32"),
    cuda.array(zs, "u32"), out, n)
  local got, bad = out:tolist(), {}
  for k, f in ipairs(forms) do
    for i = 1, n do
      local want, g = f[2](xs[i], ys[i], zs[i]) & 0xffffffff, got[(k - 1) * n + i]
      if g ~= want then
        bad[#bad + 1] = string.format("%s %08x %08x %08x: %08x, want %08x", f[1], xs[i], ys[i],
          zs[i], g, want)
        break
      end
    end
  end
  check(#bad == 0, table.concat(bad, "\n  "))
end

local function hu(v, i) return (v >> 16 * i) & 0xffff end
local function hs(v, i) local h = hu(v, i); return h >= 0x8000 and h - 0x10000 or h end
local function halves(f) return (f(0) & 0xffff) | (f(1) & 0xffff) << 16 end

test("add, min and max on .u16x2 and .s16x2, .relu on .s16x2 and .s32, in inline PTX", function()
  local forms = {}
  for _, ty in ipairs({{"u16x2", hu}, {"s16x2", hs}}) do
    local h = ty[2]
    forms[#forms + 1] = {"add." .. ty[1], function(x, y)
      return halves(function(i) return h(x, i) + h(y, i) end) end}
    forms[#forms + 1] = {"min." .. ty[1], function(x, y)
      return halves(function(i) return math.min(h(x, i), h(y, i)) end) end}
    forms[#forms + 1] = {"max." .. ty[1], function(x, y)
      return halves(function(i) return math.max(h(x, i), h(y, i)) end) end}
  end
  forms[#forms + 1] = {"min.relu.s16x2", function(x, y)
    return halves(function(i) return math.max(math.min(hs(x, i), hs(y, i)), 0) end) end}
  forms[#forms + 1] = {"max.relu.s16x2", function(x, y)
    return halves(function(i) return math.max(hs(x, i), hs(y, i), 0) end) end}
  local function s32(v) return v >= 0x80000000 and v - 0x100000000 or v end
  forms[#forms + 1] = {"min.relu.s32", function(x, y) return math.max(math.min(s32(x), s32(y)), 0) end}
  forms[#forms + 1] = {"max.s32.relu", function(x, y) return math.max(s32(x), s32(y), 0) end}
  check_forms(forms)
end)

test("vabsdiff2 in inline PTX: each signedness, .sat and .add", function()
  local forms = {}
  for _, t in ipairs({{"u32.u32.u32", hu, hu, false}, {"s32.s32.s32", hs, hs, true},
                      {"u32.s32.u32", hs, hu, false}, {"s32.u32.s32", hu, hs, true}}) do
    local ha, hb, sd = t[2], t[3], t[4]
    local function diff(x, y, i) return math.abs(ha(x, i) - hb(y, i)) end
    forms[#forms + 1] = {"vabsdiff2." .. t[1], function(x, y)
      return halves(function(i) return diff(x, y, i) end) end, true}
    forms[#forms + 1] = {"vabsdiff2." .. t[1] .. ".sat", function(x, y)
      return halves(function(i) return math.min(diff(x, y, i), sd and 0x7fff or 0xffff) end) end,
      true}
    forms[#forms + 1] = {"vabsdiff2." .. t[1] .. ".add", function(x, y, z)
      return z + diff(x, y, 0) + diff(x, y, 1) end, true}
  end
  check_forms(forms)
end)

os.exit(T.done() and 0 or 1)
