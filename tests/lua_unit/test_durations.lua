-- test_durations.lua: durations no clock gives (1e-300 ms, 0, negative, inf,
-- nan) in every Lua function that takes one: format's rate and time, a
-- roofline point's figures and its printing, cuda.roofline.measure, and
-- cuda.versus. Each gives a clear message or a finite figure: never nan, and
-- never a Lua error from deep inside a chart (1e-300 ms once made the
-- roofline chart index nil). The timing model's parameters, which are
-- durations and rates too, are held to a range in tests/simulator/faults.lua.

local fake = require "fake_cuda"
local format = require "format"
local roofline = require "roofline"
local term = require "term"

local BAD = { 0, -1, math.huge, -math.huge, 0 / 0 }
local PEAKS = { dram_gbs = 4000, fp32_gflops = 64000, fp64_gflops = 32000 }

-- No "nan" or "inf" word in text.
local function no_nan(text, what)
  check(not text:find("%f[%a]nan%f[%A]") and not text:find("%f[%a]inf%f[%A]"),
    (what or "") .. ": " .. text)
end

local function with_fake(opts, fn)
  local cuda, cpu, _, state = fake.new(opts)
  require("meta").install(cuda)
  require("visual").install(cuda)
  local saved = { term.utf8_override, term.color_override, term.width_override, format.utf8 }
  term.utf8_override, term.color_override, term.width_override, format.utf8 = true, false, 80, true
  local ok, err = pcall(with_globals, { cuda = cuda, cpu = cpu }, function() fn(cuda, state) end)
  term.utf8_override, term.color_override, term.width_override, format.utf8 =
    table.unpack(saved, 1, 4)
  if not ok then error(err, 0) end
end

------------------------------------------------------------------ format --

test("format.rate: a rate past any number is still written, from logarithms", function()
  checkeq(format.rate(1e9, 1e-300), "1e+300 TB/s")
  checkeq(format.rate(2e9, 5e-324), "4.05e+323 TB/s")
  checkeq(format.rate(1e300, 1), "1e+291 TB/s", "finite, but no 290-digit number")
  for _, ms in ipairs(BAD) do checkeq(format.rate(1e9, ms), "n/a", tostring(ms)) end
  checkeq(format.rate(3 * 40e6, 0.195), "615 GB/s", "ordinary rates as before")
end)

test("format.time_ms: a tiny or huge duration reads as itself, not as 0.00", function()
  format.utf8 = true
  checkeq(format.time_ms(1e-300), "1e-294 ns")
  checkeq(format.time_ms(1e300), "1e+297 s")
  checkeq(format.time_ms(0.0005), "500 ns", "ordinary times as before")
  checkeq(format.time_ms(1e-9, "s"), "0.00 s", "a forced unit keeps its column")
  checkeq(format.si(1e300, "B"), "1e+285 PB")
  format.utf8 = nil
end)

---------------------------------------------------------------- roofline --

local function point(ms, flops, bytes)
  return { name = "k", flops = flops or 2e9, bytes = bytes or 1.2e7, ms = ms }
end

test("cuda.roofline: 1e-300 ms is refused naming the figure it overflows", function()
  checkerr('cuda.roofline(points [, opts]): point 1 ("k"): 2000000000.0 FLOP and 12000000.0 ' ..
    "bytes in 1e-300 ms give inf GFLOP/s, too large for a chart; check the units: ms is the " ..
    "time in milliseconds, bytes those moved to or from DRAM", roofline.roofline,
    { point(1e-300) }, { peaks = PEAKS })
  checkerr("in 1 ms give inf FLOP per byte, too large for a chart", roofline.roofline,
    { point(1, 1e9, 5e-324) }, { peaks = PEAKS })
  checkerr("give 0.0 FLOP per byte, too small for a chart", roofline.roofline,
    { point(1, 5e-324) }, { peaks = PEAKS })
end)

test("cuda.roofline: 0, negative, inf and nan times are refused by name", function()
  for _, ms in ipairs(BAD) do
    checkerr('point 1 ("k"): ms must be a positive time in milliseconds, got ' ..
      format.number(ms), roofline.roofline, { point(ms) }, { peaks = PEAKS })
  end
end)

test("cuda.roofline: extreme figures that are numbers still chart", function()
  for _, p in ipairs({ point(1e300), point(1, 1e-300), point(1e-3, 1e300, 1e300) }) do
    local r = roofline.roofline({ p }, { peaks = PEAKS })
    local text = tostring(r)
    check(text:find("roofline", 1, true), text)
  end
end)

test("a roofline point prints n/a for a rate it cannot make, never nan", function()
  for _, ms in ipairs({ 1e-300, 0, -1, 0 / 0 }) do
    local text = tostring(setmetatable(point(ms), roofline.point_mt))
    no_nan((text:gsub("in .- ms", "in (the time given)")), tostring(ms))
    check(text:find("n/a GFLOP/s", 1, true), text)
  end
  checkeq(tostring(setmetatable(point(0.5), roofline.point_mt)),
    "k: 2.00 GFLOP in 500 µs, 12.0 MB from DRAM: 167 FLOP/byte, 4000 GFLOP/s")
end)

test("cuda.roofline.measure: a call timed at no time is refused, saying why", function()
  with_fake({}, function(cuda)
    for _, ms in ipairs({ 0, -1, 0 / 0 }) do
      cuda.time = function() return { median = ms, clock = "gpu" } end
      checkerr("cuda.roofline.measure(name, fn [, {flops =, bytes =}]): fn took " ..
        format.time_ms(ms) .. " on the gpu clock, a time no rate can be made of: time a " ..
        "launch that does some work (a larger n)", roofline.measure, "k", function() end,
        { flops = 1, bytes = 1 })
    end
  end)
end)

------------------------------------------------------------------ versus --

test("cuda.versus: a side timed at 0 ms gives no ratio, and says so", function()
  with_fake({}, function(cuda)
    local k = cuda.kernel("__global__ void inc(float *a, int n) {}")
    local a = cuda.array(10)
    cuda.time = function(fn)
      fn()
      return setmetatable({ median = 0, min = 0, max = 0, clock = "gpu" }, cuda._meta.TimeResult)
    end
    local v = cuda.versus{ cpu = function() return { 0 } end,
      kernel = function() k[{ 1, 32 }](a, 10) end, check = false }
    checkeq(v.speedup, nil, "no end-to-end ratio")
    checkeq(v.speedup_kernel, nil, "no kernel ratio")
    local text = tostring(v)
    no_nan(text, "versus")
    check(text:find("no ratio: the GPU side took 0 ms, which is no time to compare", 1, true),
      text)
  end)
end)

test("cuda.versus: a GPU side of 1e-300 ms gives a finite ratio, written short", function()
  with_fake({}, function(cuda)
    local k = cuda.kernel("__global__ void inc(float *a, int n) {}")
    local a = cuda.array(10)
    cuda.time = function(fn)
      fn()
      return setmetatable({ median = 1e-300, min = 1e-300, max = 1e-300, clock = "gpu" },
        cuda._meta.TimeResult)
    end
    local v = cuda.versus{ cpu = function() return { 0 } end,
      kernel = function() k[{ 1, 32 }](a, 10) end, check = false }
    local text = tostring(v)
    no_nan(text, "versus")
    check(text:find("GPU is %d[%d.]*e%+%d+× faster end to end"), text)
  end)
end)
