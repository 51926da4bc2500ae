-- test_roofline.lua: cuda.roofline and cuda.roofline.measure against the fake
-- cuda module: the roofs from the timing model's parameters, each point's
-- figures, every bad input with its message, the terminal chart (exact
-- glyphs, width, both character sets) and the SVG. tests/exec/roofline.lua
-- runs the same on the simulator with real kernels.

local fake = require "fake_cuda"
local format = require "format"
local roofline = require "roofline"
local rc = require "roofline_chart"
local svg = require "svg"
local term = require "term"

-- Runs fn(cuda, state) with a fake module on the model clock as the global
-- cuda, the visual stubs installed, the terminal at `width` columns (80),
-- UTF-8 unless utf = false, no colour; restores everything after.
local function with_fake(fn, width, utf)
  local cuda, cpu, _, state = fake.new({ clock = "model" })
  require("meta").install(cuda)
  require("visual").install(cuda)
  local saved = { term.utf8_override, term.color_override, term.width_override, format.utf8 }
  term.utf8_override, term.color_override, term.width_override = utf ~= false, false, width or 80
  format.utf8 = utf ~= false
  local ok, err = pcall(with_globals, { cuda = cuda, cpu = cpu }, function() fn(cuda, state) end)
  term.utf8_override, term.color_override, term.width_override, format.utf8 = table.unpack(saved, 1, 4)
  if not ok then error(err, 0) end
end

local PEAKS = { dram_gbs = 4000, fp32_gflops = 64000, fp64_gflops = 32000 }

-- Points whose figures are round on PEAKS: ridges at 16 (FP32) and 8 (FP64).
local function sample_points()
  return {
    { name = "vector_add", flops = 1e7, bytes = 1.2e8, ms = 0.05 },        -- 1/12, 200 GFLOP/s
    { name = "sincos", flops = 4e8, bytes = 1e8, ms = 0.05, precision = "fp64" }, -- 4, 8000
    { name = "matmul", flops = 2e9, bytes = 1e7, ms = 0.1 },               -- 200, 20000
  }
end

local function near(a, b) return math.abs(a - b) <= 1e-9 * math.max(math.abs(a), math.abs(b)) end

test("the roofs are the timing model's: its peak formula on its measured parameters", function()
  local p = roofline.peaks_from({ dram_gbs = 4241.09, ipc_fp32 = 3.88047, ipc_fp64 = 1.98391,
    clock_ghz = 1.98 }, { sm_count = 132, warp_size = 32 })
  -- the figures C gives as peak_gflops in cuda.stats().model on the H200
  check(near(p.fp32_gflops, 64908.7769088), p.fp32_gflops)
  check(near(p.fp64_gflops, 33184.9419264), p.fp64_gflops)
  checkeq(p.dram_gbs, 4241.09)
  with_fake(function(cuda)
    local q = cuda.roofline.peaks()
    check(near(q.fp32_gflops, 64908.7769088), "from cuda.simopts().perf and cuda.device()")
    cuda.simopts{ perf = { dram_gbs = 8000, ipc_fp32 = 3.88047, ipc_fp64 = 1.98391, clock_ghz = 1.98 } }
    checkeq(cuda.roofline.peaks().dram_gbs, 8000, "a what-if model moves the roof")
    -- a build without the simulator has no cuda.simopts: the roofs must then be given
    cuda.simopts = function() error("cuda.simopts() needs the simulator, which this build does not include") end
    checkerr("this build has no timing model to take the H200's peaks from; pass them", cuda.roofline.peaks)
    checkerr("this build has no timing model", cuda.roofline, sample_points())
    checkeq(#cuda.roofline(sample_points(), { peaks = PEAKS }), 3, "given roofs still work")
  end)
end)

test("a point gets its intensity, rate, roof, share of the roof and what binds it", function()
  local r = roofline.roofline(sample_points(), { peaks = PEAKS })
  checkeq(#r, 3)
  checkeq(r.ridge, { fp32 = 16, fp64 = 8 })
  local va, sc, mm = r[1], r[2], r[3]
  check(near(va.intensity, 1 / 12), va.intensity)
  check(near(va.gflops, 200), va.gflops)
  check(near(va.gbs, 2400), va.gbs)
  check(near(va.roof, 4000 / 12), "memory roof at 1/12 FLOP/byte")
  check(near(va.of_roof, 0.6), va.of_roof)
  checkeq(va.bound, "memory")
  checkeq(va.precision, "fp32")
  checkeq(sc.bound, "memory", "4 FLOP/byte is left of the FP64 ridge at 8")
  check(near(sc.roof, 16000), sc.roof)
  checkeq(mm.bound, "compute")
  check(near(mm.roof, 64000), "the FP32 peak")
  check(near(mm.of_roof, 20000 / 64000), mm.of_roof)
  checkeq(rc.describe(va),
    "0.0833 FLOP/byte, 200 GFLOP/s, 60% of the memory roof, bound by memory (DRAM)")
  checkeq(rc.describe(mm),
    "200 FLOP/byte, 20,000 GFLOP/s, 31.3% of the FP32 roof, bound by compute (FP32)")
end)

test("bad points and options are refused with what is wrong and which point", function()
  local R = roofline.roofline
  checkerr("argument 1 must be a list of points, got nil", R)
  checkerr("argument 1 must be a list of points, got number", R, 3)
  checkerr("no points to place (the list is empty)", R, {}, { peaks = PEAKS })
  checkerr("point 2 must be a table {name =, flops =, bytes =, ms =}", R, { sample_points()[1], 5 },
    { peaks = PEAKS })
  checkerr('point 1 ("k"): bytes must be a positive number of bytes moved to or from DRAM, got nil',
    R, { { name = "k", flops = 1, ms = 1 } }, { peaks = PEAKS })
  checkerr('point 1 ("k"): ms must be a positive time in milliseconds, got -1', R,
    { { name = "k", flops = 1, bytes = 1, ms = -1 } }, { peaks = PEAKS })
  checkerr('point 1 ("k"): flops must be a positive number of floating-point operations, got nan', R,
    { { name = "k", flops = 0 / 0, bytes = 1, ms = 1 } }, { peaks = PEAKS })
  checkerr('point 1 ("k"): flops must be a positive number', R,
    { { name = "k", flops = math.huge, bytes = 1, ms = 1 } }, { peaks = PEAKS })
  checkerr('point 1 ("k"): precision must be "fp32" or "fp64", got fp16', R,
    { { name = "k", flops = 1, bytes = 1, ms = 1, precision = "fp16" } }, { peaks = PEAKS })
  checkerr("point 1: name must be a string, got table", R,
    { { name = {}, flops = 1, bytes = 1, ms = 1 } }, { peaks = PEAKS })
  checkerr("argument 2 must be a table of options, got string", R, sample_points(), "wide")
  checkerr("opts.peaks must be a table, got number", R, sample_points(), { peaks = 4 })
  checkerr("opts.peaks.fp64_gflops must be a positive number, got nil", R, sample_points(),
    { peaks = { dram_gbs = 1, fp32_gflops = 1 } })
  -- an unnamed point is named by its place
  checkeq(R({ { flops = 1, bytes = 1, ms = 1 } }, { peaks = PEAKS })[1].name, "point 1")
end)

test("one point alone must come in a list; the message says how", function()
  with_fake(function(cuda)
    local k = cuda.kernel("__global__ void va(float *a) {}")
    local p = cuda.roofline.measure("va", function() k[{ 4, 256 }](cuda.array(4)) end)
    checkerr("got one point (put it in a list: {p})", cuda.roofline, p)
  end)
end)

test("measure on the model clock takes FLOPs and DRAM bytes from the launch's counters", function()
  with_fake(function(cuda)
    local k = cuda.kernel("__global__ void va(float *a) {}")
    local a = cuda.array(16)
    local p = cuda.roofline.measure("va", function() k[{ 4, 256 }](a) end)
    -- fake.explanation("dram", 0.041): 10 MFLOP, 120 MB
    checkeq(p.flops, 10000000)
    checkeq(p.bytes, 120000000)
    checkeq(p.ms, 0.041)
    checkeq(p.precision, "fp32")
    checkeq(p.source, "counters")
    checkeq(p.clock, "model")
    checkeq(tostring(p), "va: 10.0 MFLOP in 41.0 µs, 120 MB from DRAM: 0.0833 FLOP/byte, 244 GFLOP/s")
    local q = cuda.roofline.measure("va", function() k[{ 4, 256 }](a) end, { bytes = 12 * 16 })
    checkeq(q.bytes, 192, "given bytes win over the counters")
    checkeq(q.source, "given")
    local r = cuda.roofline({ p, q })
    checkeq(r.clock, "model")
    check(near(r[1].intensity, 1 / 12))
  end)
end)

test("measure tells an FP64 kernel by the peak the model priced it against", function()
  with_fake(function(cuda, state)
    state.explain = function() return fake.explanation("fp64", 0.1, { peak_gflops = 33184.9 }) end
    local k = cuda.kernel("__global__ void d(double *a) {}")
    local p = cuda.roofline.measure("d", function() k[{ 1, 256 }](cuda.array(4, "f64")) end)
    checkeq(p.precision, "fp64")
  end)
end)

test("measure refuses what it cannot place, saying why and what to do", function()
  with_fake(function(cuda, state)
    local M = cuda.roofline.measure
    local k = cuda.kernel("__global__ void va(float *a) {}")
    local a = cuda.array(16)
    local launch = function() k[{ 4, 256 }](a) end
    checkerr("argument 1 must be the point's name, got function", M, launch)
    checkerr("argument 2 must be a function that launches the kernel, got nil", M, "va")
    checkerr("argument 3 must be a table of options, got number", M, "va", launch, 3)
    checkerr("bytes must be a positive number, got -4", M, "va", launch, { bytes = -4 })
    checkerr("fn launched no kernel", M, "va", function() end)
    state.explain = function() return fake.explanation("l2", 0.02, { dram_bytes = 0 }) end
    checkerr("the launch moved 0 bytes to or from DRAM: its arrays stayed in the L2 cache", M, "va", launch)
    checkerr("pass bytes =", M, "va", launch)
    state.explain = function() return fake.explanation("issue", 0.02, { flops = 0 }) end
    checkerr("the kernel did no floating-point arithmetic (0 FLOP counted)", M, "va", launch)
    state.explain = fake.explain
    -- two launches: the counters and the modelled time are the last one's, fn took longer
    local time = cuda.time
    cuda.time = function(fn, o)
      local t = time(fn, o)
      t.median = 2 * t.median
      return t
    end
    checkerr("fn must make exactly one launch and no copies", M, "va", launch)
    cuda.time = time
    cuda.simopts{ model = false }
    checkerr("the simulator's timing model is off", M, "va", launch)
    checkerr("cuda.simopts{model = true}", M, "va", launch)
  end)
end)

test("measure on a GPU needs flops and bytes from the learner, and names the missing one", function()
  with_fake(function(cuda)
    local k = cuda.kernel("__global__ void va(float *a) {}")
    local launch = function() k[{ 4, 256 }](cuda.array(4)) end
    cuda.time = function() return { median = 0.05, clock = "gpu" } end
    checkerr("on the GPU give flops and bytes: only the simulator counts them", cuda.roofline.measure,
      "va", launch)
    checkerr("on the GPU give bytes:", cuda.roofline.measure, "va", launch, { flops = 10 })
    local p = cuda.roofline.measure("va", launch, { flops = 1e7, bytes = 1.2e8, precision = "fp64" })
    checkeq(p.ms, 0.05)
    checkeq(p.precision, "fp64")
    checkeq(p.clock, "gpu")
  end)
end)

test("the chart: roofs, ridges, a letter per point with its name, decades on both axes", function()
  with_fake(function()
    local r = roofline.roofline(sample_points(), { peaks = PEAKS, title = "Three" })
    local text = tostring(r)
    local lines = lines_of(text)
    checkeq(lines[1], "Three on the roofline of the H200: DRAM 4,000 GB/s, FP32 64,000 GFLOP/s, FP64")
    checkeq(lines[3], "GFLOP/s")
    for i, l in ipairs(lines) do check(term.len(l) <= 79, "line " .. i .. " is too wide: " .. l) end
    check(text:find("A vector_add", 1, true), text)
    check(text:find("matmul C", 1, true), "a name that would run into FP64 goes left: " .. text)
    check(text:find("B sincos", 1, true), text)
    check(text:find("/*─", 1, true), "FP32 ridge where the roofs meet: " .. text)
    check(text:find("╌", 1, true), "FP64 roof drawn")
    check(text:find("/", 1, true), "memory roof drawn")
    check(text:find("FP32", 1, true) and text:find("FP64", 1, true))
    check(text:find(" 10,000 ┤", 1, true), "decade label on the y axis: " .. text)
    check(text:find("└┬", 1, true), text)
    check(text:find("0.01", 1, true) and text:find("1000", 1, true), "decades on the x axis")
    check(text:find("  A  vector_add     0.0833      200          60%  memory (DRAM)", 1, true), text)
    check(text:find("  C  matmul            200   20,000        31.3%  compute (FP32)", 1, true), text)
    check(text:find("* ridge points: FP32 at 16, FP64 at 8 FLOP/byte.", 1, true), text)
    check(text:gsub("%s+", " "):find("times as measured, FLOPs and bytes as given", 1, true), text)
  end)
end)

test("the chart fits narrow and wide terminals, and falls back to ASCII", function()
  for _, w in ipairs({ 40, 60, 132, 200 }) do
    with_fake(function()
      local text = tostring(roofline.roofline(sample_points(), { peaks = PEAKS }))
      for i, l in ipairs(lines_of(text)) do
        check(term.len(l) <= w - 1, w .. " columns, line " .. i .. ": " .. l)
      end
    end, w)
  end
  with_fake(function()
    local text = tostring(roofline.roofline(sample_points(), { peaks = PEAKS }))
    check(not text:find("[\128-\255]"), "ASCII only: " .. text)
    check(text:find("/*-", 1, true), text)
    check(text:find("....", 1, true), "FP64 roof in dots")
    check(text:find(" 10,000 +", 1, true), text)
  end, 80, false)
end)

test("points in one cell are moved apart, and a long name is cut in the picture only", function()
  with_fake(function()
    local pts = sample_points()
    pts[4] = { name = "matmul_tiled", flops = 2e9, bytes = 1e7, ms = 0.1 } -- on top of C
    pts[5] = { name = "a_kernel_with_a_very_long_name", flops = 5e8, bytes = 1e9, ms = 1 }
    local r = roofline.roofline(pts, { peaks = PEAKS })
    local text = tostring(r)
    local picture = text:match("^(.-)└")
    check(picture:find("C", 1, true) and picture:find("D", 1, true), "both letters drawn: " .. text)
    check(picture:find("E a_kernel_with~", 1, true), "cut in the picture: " .. text)
    check(text:find("E  a_kernel_with_a_very_long_name", 1, true), "whole in the table: " .. text)
    checkeq(rc.letter(1), "A")
    checkeq(rc.letter(27), "a")
    checkeq(rc.letter(53), "?")
  end)
end)

test("cuda.plot draws a roofline as SVG: both roofs, the ridges, a dot per point", function()
  with_fake(function()
    local pts = sample_points()
    pts[1].name = "a<b & c"
    local r = roofline.roofline(pts, { peaks = PEAKS })
    r.clock = "model"
    local text = svg.render(r)
    check(text:find("<svg", 1, true) and text:find("</svg>", 1, true))
    local _, polylines = text:gsub("<polyline ", "")
    checkeq(polylines, 2, "FP32 and FP64 roofs")
    local _, dots = text:gsub("<circle ", "")
    checkeq(dots, 3)
    check(text:find("a&lt;b &amp; c", 1, true), "names are escaped")
    check(text:find("FP32 ridge 16", 1, true) and text:find("FP64 ridge 8", 1, true), "ridges labelled")
    check(text:find("stroke-dasharray", 1, true), "FP64 roof dashed")
    check(text:find("modelled H200 time", 1, true), "a modelled chart says so")
    check(text:find("arithmetic intensity (FLOP per byte of DRAM traffic)", 1, true))
    -- every tag closes
    local depth = 0
    for close, selfclose in text:gmatch("<(/?)[%w]+[^>]-(/?)>") do
      if close == "/" then depth = depth - 1 elseif selfclose ~= "/" then depth = depth + 1 end
    end
    checkeq(depth, 0)
  end)
end)

test("cuda.roofline is a table to call, with measure and peaks, loading its module on use", function()
  with_fake(function(cuda)
    checkeq(type(cuda.roofline), "table")
    checkeq(type(cuda.roofline.measure), "function")
    local r = cuda.roofline(sample_points())
    checkeq(getmetatable(r).__name, "cudalab.RooflineResult")
    check(near(r.peaks.dram_gbs, 4241.09), "the fake's model parameters")
  end)
end)

test("help(cuda.roofline) finds the entry of the table, and of measure", function()
  with_fake(function(cuda)
    local help = require "help"
    require("visual").register_help(help)
    check(help.text(cuda.roofline):find("^cuda%.roofline%({point"), help.text(cuda.roofline))
    check(help.text(cuda.roofline.measure):find("^cuda%.roofline%.measure%(name, fn"),
      help.text(cuda.roofline.measure))
    check(help.text({}):find("No help for this table", 1, true), "other tables are not taken for it")
  end)
end)

test("a point above its roof is drawn, and the printout says what that means", function()
  with_fake(function()
    local r = roofline.roofline({ { name = "cached", flops = 1e9, bytes = 1e6, ms = 0.001 } },
      { peaks = PEAKS }) -- 1,000,000 GFLOP/s
    local text = tostring(r)
    check(text:find("A cached", 1, true), "drawn: " .. text)
    check(text:find("1,000,000 ┤", 1, true), "the y axis reaches it: " .. text)
    check(text:gsub("%s+", " "):find("Above its roof: cached. It moved fewer DRAM bytes than given", 1, true), text)
    local ok = tostring(roofline.roofline(sample_points(), { peaks = PEAKS }))
    check(not ok:find("Above its roof", 1, true), "only when one is")
  end)
end)
