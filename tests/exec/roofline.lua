-- roofline.lua: cuda.roofline and cuda.roofline.measure with real kernels. On the simulator the
-- points come from the launch counters and the modelled H200 time, so the figures are exact: a
-- vector add of n floats does n FLOP and moves 12n bytes from DRAM, and no kernel rises above
-- its roof. The roofs must be the model's own peaks (cuda.stats().model.peak_gflops). On the GPU
-- (make test-gpu) nothing counts FLOPs or bytes, so measure must ask for them, and with them given
-- the point is placed from the GPU's own time.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local GPU = cuda.backend() == "cuda"
T.plan(GPU and 3 or 9)
local term = require "term"
term.utf8_override, term.color_override, term.width_override = true, false, 100

local N = 10000000 -- 120 MB of arrays: more than the 60 MB L2, so they come from DRAM
local va = cuda.kernel "vector_add.cu"
local a, b, c = cuda.rand(N, "f32", 1), cuda.rand(N, "f32", 2), cuda.array(N)
local function va_launch() va[{(N + 255) // 256, 256}](a, b, c, N) end

local function near(x, y, tol) return math.abs(x - y) <= (tol or 1e-9) * math.max(math.abs(x), math.abs(y)) end

if GPU then
  test("on the GPU measure asks for flops and bytes, naming what is missing", function()
    checkerr("on the GPU give flops and bytes", cuda.roofline.measure, "va", va_launch)
    checkerr("on the GPU give bytes", cuda.roofline.measure, "va", va_launch, { flops = N })
  end)
  test("on the GPU a point is placed from the given counts and the GPU's time", function()
    local p = cuda.roofline.measure("va", va_launch, { flops = N, bytes = 12 * N })
    checkeq(p.clock, "gpu")
    local r = cuda.roofline({ p })
    check(near(r[1].intensity, 1 / 12), r[1].intensity)
    check(r[1].of_roof > 0.3 and r[1].of_roof <= 1.05, "a vector add runs near the memory roof: " .. tostring(r))
  end)
  test("the chart prints", function()
    local out = tostring(cuda.roofline({ cuda.roofline.measure("va", va_launch, { flops = N, bytes = 12 * N }) }))
    check(out:find("va", 1, true) and out:find("A", 1, true) and out:find("GFLOP/s", 1, true), out)
  end)
  return T.done()
end

test("the roofs are the model's peaks, FP32 and FP64", function()
  local peaks = cuda.roofline.peaks()
  local t = cuda.time(va_launch)
  check(near(t.model.peak_gflops, peaks.fp32_gflops), t.model.peak_gflops .. " vs " .. peaks.fp32_gflops)
  check(near(t.model.peak_gbs, peaks.dram_gbs), t.model.peak_gbs .. " vs " .. peaks.dram_gbs)
  local sc = cuda.kernel "sincos.cu"
  local n = 100000
  local x, y = cuda.rand(n, "f64", 3), cuda.array(n, "f64")
  local p = cuda.roofline.measure("sincos", function() sc[{(n + 255) // 256, 256}](x, y, n) end,
    { bytes = 16 * n })
  checkeq(p.precision, "fp64", "a kernel of doubles goes under the FP64 roof")
  check(near(p.model.peak_gflops, peaks.fp64_gflops), p.model.peak_gflops .. " vs " .. peaks.fp64_gflops)
end)

test("a vector add of n floats: n FLOP, 12n bytes from DRAM, its modelled time", function()
  local p = cuda.roofline.measure("vector_add", va_launch)
  checkeq(p.flops, N)
  checkeq(p.bytes, 12 * N)
  checkeq(p.source, "counters")
  local t = cuda.time(va_launch)
  checkeq(p.ms, t.median, "the model is deterministic")
  local r = cuda.roofline({ p })
  check(near(r[1].intensity, 1 / 12), r[1].intensity)
  checkeq(r[1].bound, "memory")
  checkeq(r.clock, "model")
end)

test("no kernel rises above its roof", function()
  local sx = cuda.kernel "saxpy.cu"
  local mm = cuda.module "matmul.cu"
  local n = 256
  local A, B, C = cuda.rand(n * n, "f32", 4), cuda.rand(n * n, "f32", 5), cuda.array(n * n)
  local grid = { n // 16, n // 16 }
  local pts = {
    cuda.roofline.measure("vector_add", va_launch),
    cuda.roofline.measure("saxpy", function() sx[{ 132 * 8, 256 }](N, 2.0, a, b) end),
    cuda.roofline.measure("naive", function() mm.matmul_naive[{ grid, { 16, 16 } }](A, B, C, n) end,
      { bytes = 3 * 4 * n * n }),
    cuda.roofline.measure("tiled", function() mm.matmul_tiled[{ grid, { 16, 16 } }](A, B, C, n) end,
      { bytes = 3 * 4 * n * n }),
  }
  local r = cuda.roofline(pts)
  for _, q in ipairs(r) do
    check(q.of_roof > 0 and q.of_roof <= 1, q.name .. " at " .. q.of_roof .. " of its roof")
  end
  checkeq(r[2].flops, 2 * N, "saxpy: a multiply-add per element, two FLOPs")
  checkeq(r[3].flops, 2 * n ^ 3, "a multiply of n x n matrices: 2n^3 FLOPs")
  checkeq(r[3].bound, "compute")
  check(r[4].gflops > r[3].gflops, "tiling raises the rate at the same intensity")
end)

test("measure refuses what it cannot place on the simulator, saying why", function()
  local n = 1000
  local x, y, z = cuda.rand(n), cuda.rand(n), cuda.array(n)
  local small = function() va[{ 4, 256 }](x, y, z, n) end
  checkerr("moved 0 bytes to or from DRAM: its arrays stayed in the L2 cache", cuda.roofline.measure, "small", small)
  checkerr("fn launched no kernel", cuda.roofline.measure, "none", function() end)
  checkerr("fn must make exactly one launch and no copies", cuda.roofline.measure, "two",
    function() va_launch(); va_launch() end)
  local ik = cuda.kernel [[
    __global__ void ik(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1; }
  ]]
  local ia = cuda.array(N, "i32")
  checkerr("the kernel did no floating-point arithmetic (0 FLOP counted)", cuda.roofline.measure, "ints",
    function() ik[{ (N + 255) // 256, 256 }](ia, N) end)
  checkerr("flops must be a positive number, got 0", cuda.roofline.measure, "va", va_launch, { flops = 0 })
end)

test("with the model off, measure says the times would be the CPU's", function()
  local old = cuda.simopts().model
  cuda.simopts{ model = false }
  local ok, err = pcall(cuda.roofline.measure, "va", va_launch)
  cuda.simopts{ model = old }
  check(not ok and tostring(err):find("cuda.simopts{model = true}", 1, true), tostring(err))
end)

test("bad points from the prompt are refused with the point and the field", function()
  checkerr('point 2 ("k"): ms must be a positive time in milliseconds, got 0', cuda.roofline,
    { { name = "ok", flops = 1, bytes = 1, ms = 1 }, { name = "k", flops = 1, bytes = 1, ms = 0 } })
  checkerr("argument 1 must be a list of points, got string", cuda.roofline, "va")
end)

test("the chart names the points and the ridges, in the terminal's width", function()
  local r = cuda.roofline({ cuda.roofline.measure("vector_add", va_launch),
    { name = "matmul", flops = 2 * 512 ^ 3, bytes = 12 * 512 ^ 2, ms = 0.043 } })
  local text = tostring(r)
  check(text:find("A vector_add", 1, true), text)
  check(text:find("* ridge points: FP32 at 15.3, FP64 at 7.82 FLOP/byte", 1, true), text)
  check(text:gsub("%s+", " "):find("modelled H200 time (simulator)", 1, true), text)
  for l in text:gmatch("[^\n]+") do check(term.len(l) <= 99, "too wide: " .. l) end
end)

test("cuda.plot writes the roofline as well-formed SVG", function()
  local r = cuda.roofline({ cuda.roofline.measure("vector_add", va_launch) })
  local file = os.tmpname() .. ".svg"
  checkeq(cuda.plot(r, file), file)
  local f = assert(io.open(file))
  local text = f:read("a")
  f:close()
  check(text:find("vector_add", 1, true) and text:find("FP32 ridge 15.3", 1, true), text:sub(1, 300))
  if os.execute("command -v xmllint >/dev/null 2>&1") then
    check(os.execute("xmllint --noout " .. file), "xmllint accepts it")
  end
  os.remove(file)
end)

local size = T.file_size

if os.execute("command -v chromium >/dev/null 2>&1") then
  test("the roofline SVG renders to a picture in headless Chromium, not a white page", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p " .. dir)
    local blank, chart = dir .. "/blank.svg", dir .. "/roofline.svg"
    local f = assert(io.open(blank, "w"))
    f:write('<svg xmlns="http://www.w3.org/2000/svg" width="720" height="420">' ..
      '<rect width="720" height="420" fill="#fff"/></svg>\n')
    f:close()
    cuda.plot(cuda.roofline({ { name = "k", flops = 1e9, bytes = 1e8, ms = 0.1 } }), chart)
    local function shot(svg)
      local png = svg:gsub("%.svg$", ".png")
      os.execute(string.format("timeout 60 chromium --headless --no-sandbox --disable-gpu " ..
        "--window-size=720,420 --screenshot=%s %s >/dev/null 2>&1", png, svg))
      return size(png)
    end
    local empty, n = shot(blank), shot(chart)
    os.execute("rm -rf " .. dir)
    check(empty > 0, "Chromium took no screenshot")
    check(n > 3 * empty, string.format("renders blank: %d bytes against %d for a white page", n, empty))
  end)
else
  T.skip("the roofline SVG renders to a picture in headless Chromium, not a white page", "chromium not installed")
end

return T.done()
