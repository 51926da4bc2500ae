-- roofline.lua: cuda.roofline(points [, opts]): kernels placed on the H200's
-- roofline, as a log-log chart in the terminal and, through cuda.plot, as SVG.
--
--   p = cuda.roofline.measure("saxpy", function() saxpy[{g, 256}](n, 2, x, y) end)
--   r = cuda.roofline({p, {name = "mine", flops = 2e9, bytes = 1.2e7, ms = 0.5}})
--   print(r); cuda.plot(r, "roofline.svg")
--
-- x is arithmetic intensity (FLOP per byte moved to or from DRAM), y the
-- achieved GFLOP/s. Above every x sits the roof: the lower of the memory roof
-- (DRAM bandwidth times intensity) and the compute peak; where they meet is
-- the ridge point. A kernel left of the ridge cannot go faster than memory
-- lets it, whatever its arithmetic; right of it, only better arithmetic helps.
--
-- Design stance:
--  * The roofs are the timing model's own device description (the parameters
--    measured on an H200 that cuda.simopts().perf shows), with the peak
--    computed exactly as the model computes the peak_gflops of cuda.stats():
--    SMs x FMA warp instructions per cycle x 32 lanes x 2 FLOP x clock. One
--    set of numbers, so a point placed from the model and the roof above it
--    cannot disagree; the memory roof is what a copy reaches, which the device
--    card shows beside the data sheet's peak. (Turned down: the data sheet's
--    4.8 TB/s and 67 TFLOP/s, which no kernel reaches and which would put
--    every point far below.) On a GPU, the same figures of that GPU: its own
--    copy measured once, its SMs and clock (roofline.this_gpu), so an H100's
--    points sit under an H100's roof.
--  * measure() on the simulator takes FLOPs and DRAM bytes from the launch's
--    counters and the modelled time; it times exactly one launch, and says so
--    when fn did more (the counters describe the last launch only). On a GPU
--    nothing counts for us, so the learner gives flops and bytes; the error
--    says which and how to count them.
--  * The result is data first (r[i].intensity, r.peaks, r.ridge) that prints
--    itself; the chart is its __tostring, built from strings only, so the
--    unit tests check the exact text.

local error, getmetatable, ipairs, math, pcall, rawget = error, getmetatable, ipairs,
  math, pcall, rawget
local pairs, require, setmetatable = pairs, require, setmetatable
local string, table, tostring, type = string, table, tostring, type

local format = require "format"
local roofline_chart = require "roofline_chart"

local roofline = {}

local SIG = "cuda.roofline(points [, opts])"
local MSIG = "cuda.roofline.measure(name, fn [, {flops =, bytes =}])"

local function fail(msg, level) error(msg, (level or 2) + 1) end

-- A value for an error message: numbers as format.number writes them (nan
-- is "nan" on every C library), anything else as tostring does.
local function show(v)
  return type(v) == "number" and format.number(v) or tostring(v)
end

local function positive(x)
  return type(x) == "number" and x == x and x > 0 and x < math.huge
end

----------------------------------------------------------------- the roofs --

-- The peaks from a perf table (cuda.simopts().perf) and a device (sm_count,
-- warp_size); see the stance for why these and not the data sheet's.
function roofline.peaks_from(perf, device)
  local sms, lanes = device.sm_count, device.warp_size or 32
  local function gflops(ipc) return sms * ipc * lanes * 2 * perf.clock_ghz end
  return { dram_gbs = perf.dram_gbs, fp32_gflops = gflops(perf.ipc_fp32),
    fp64_gflops = gflops(perf.ipc_fp64), device = device.name }
end

-- Checks a caller's peaks table (opts.peaks); raises naming the field.
local function check_peaks(p)
  for _, k in ipairs({ "dram_gbs", "fp32_gflops", "fp64_gflops" }) do
    if not positive(p[k]) then
      fail(SIG .. ": opts.peaks." .. k .. " must be a positive number, got " .. show(p[k]), 4)
    end
  end
  return { dram_gbs = p.dram_gbs, fp32_gflops = p.fp32_gflops, fp64_gflops = p.fp64_gflops,
    device = p.device }
end

-- The device's roofs: opts.peaks when given, else the timing model's.
function roofline.peaks(given)
  if given ~= nil then
    if type(given) ~= "table" then
      fail(SIG .. ": opts.peaks must be a table, got " .. type(given), 3)
    end
    return check_peaks(given)
  end
  local cuda = rawget(_G, "cuda")
  local ok, p, dev = pcall(function()
    local d = cuda.device()
    local perf = cuda.simopts().perf
    if d.backend == "cuda" then perf = roofline.this_gpu(cuda, d, perf) end
    return roofline.peaks_from(perf, d), d
  end)
  if not (ok and positive(p.dram_gbs) and positive(p.fp32_gflops) and positive(p.fp64_gflops)) then
    fail(SIG .. ": this build has no timing model to take the H200's peaks from; pass them: " ..
      "{peaks = {dram_gbs = ..., fp32_gflops = ..., fp64_gflops = ...}}", 3)
  end
  p.device = type(dev.name) == "string" and dev.name or nil
  return p
end

-- On a GPU the roofs are that GPU's, not the H200's: the memory roof is what
-- a copy reaches on it (a float4 copy of 256 MiB, the median of ten, measured
-- once a session), the compute peaks its SMs at its own clock with the FMA
-- rate of an SM of the model's architecture. perf is the model's table; the
-- result is a copy with those changed (the model's own where the copy cannot
-- be measured, a class's memory limit say).
local this_gpu_gbs
function roofline.this_gpu(cuda, device, perf)
  local mine = {}
  for k, v in pairs(perf) do mine[k] = v end
  if type(device.clock_khz) == "number" and device.clock_khz > 0 then
    mine.clock_ghz = device.clock_khz / 1e6
  end
  if not this_gpu_gbs then
    local ok, gbs = pcall(function()
      local n4 = 1 << 24 -- float4 elements: 256 MiB an array, beyond any L2
      local src, dst = cuda.zeros(4 * n4), cuda.array(4 * n4)
      local copy = cuda.kernel [[
__global__ void roofline_copy(const float4 *a, float4 *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}]]
      local t = cuda.time(function() copy[{n4 // 256, 256}](src, dst, n4) end,
        { warmup = 2, reps = 10 })
      src:free(); dst:free()
      return 2 * 16 * n4 / (t.median / 1e3) / 1e9
    end)
    this_gpu_gbs = ok and positive(gbs) and gbs or false
  end
  if this_gpu_gbs then mine.dram_gbs = this_gpu_gbs end
  return mine
end

-- The roof over intensity x for a precision ("fp32" or "fp64").
function roofline.roof(peaks, x, precision)
  local top = precision == "fp64" and peaks.fp64_gflops or peaks.fp32_gflops
  return math.min(top, peaks.dram_gbs * x)
end

------------------------------------------------------------------ points --

-- The figures a point's three numbers give, each a positive number: each
-- input may be positive and finite while a quotient of two is not (2e9 FLOP
-- in 1e-300 ms is past any number), and the chart cannot place infinity or
-- zero on a logarithmic scale. Raises naming the figure and the inputs.
local function check_figures(q, i)
  local figures = { { "intensity", "FLOP per byte" }, { "gflops", "GFLOP/s" }, { "gbs", "GB/s" } }
  for _, f in ipairs(figures) do
    local v = q[f[1]]
    if not positive(v) then
      fail(string.format("%s: point %d (%q): %s FLOP and %s bytes in %s ms give %s %s, %s for " ..
        "a chart; check the units: ms is the time in milliseconds, bytes those moved to or " ..
        "from DRAM", SIG, i, q.name, show(q.flops), show(q.bytes), show(q.ms), show(v), f[2],
        v > 0 and "too large" or "too small"), 5)
    end
  end
end

-- A point checked and completed: intensity, GFLOP/s, GB/s, its roof, what
-- binds it and how close it gets. i and the name make errors findable.
local function make_point(p, i, peaks)
  if type(p) ~= "table" then fail(string.format("%s: point %d must be a table {name =, flops =, " ..
    "bytes =, ms =} or a result of cuda.roofline.measure, got %s", SIG, i, type(p)), 4) end
  local name = p.name == nil and "point " .. i or p.name
  if type(name) ~= "string" then
    fail(string.format("%s: point %d: name must be a string, got %s", SIG, i, type(name)), 4)
  end
  local what = { flops = "a positive number of floating-point operations",
    bytes = "a positive number of bytes moved to or from DRAM", ms = "a positive time in " ..
      "milliseconds" }
  for _, k in ipairs({ "flops", "bytes", "ms" }) do
    if not positive(p[k]) then
      fail(string.format("%s: point %d (%q): %s must be %s, got %s", SIG, i, name, k, what[k],
        show(p[k])), 4)
    end
  end
  local prec = p.precision or "fp32"
  if prec ~= "fp32" and prec ~= "fp64" then
    fail(string.format("%s: point %d (%q): precision must be \"fp32\" or \"fp64\", got %s", SIG, i,
      name, tostring(prec)), 4)
  end
  local q = { name = name, flops = p.flops, bytes = p.bytes, ms = p.ms, precision = prec,
    source = p.source }
  q.intensity = p.flops / p.bytes
  q.gflops = p.flops / p.ms / 1e6
  q.gbs = p.bytes / p.ms / 1e6
  check_figures(q, i)
  q.roof = roofline.roof(peaks, q.intensity, prec)
  q.of_roof = q.gflops / q.roof
  local ridge = (prec == "fp64" and peaks.fp64_gflops or peaks.fp32_gflops) / peaks.dram_gbs
  q.bound = q.intensity < ridge and "memory" or "compute"
  -- What bounds it, in words: the timing model's verdict when the point was measured on the
  -- model (the same words cuda.time and cuda.stats print), else the side of the ridge.
  q.bound_text = require("model").bound(p.model) or
    (q.bound == "memory" and "memory (DRAM)" or "compute (" .. prec:upper() .. ")")
  return q
end

-- x / y in words when both are positive and the quotient is a number, else
-- "n/a": a point's table is the learner's to change, and printing it must
-- never show nan.
local function ratio(x, y, digits)
  local v = positive(x) and positive(y) and x / y
  if not positive(v) then return "n/a" end
  return v >= 1e15 and string.format("%.3g", v) or format.short(v, digits)
end

roofline.point_mt = { __name = "cudalab.RooflinePoint",
  __tostring = function(p)
    local gflops = ratio(p.flops, p.ms, 3)
    if gflops ~= "n/a" then gflops = ratio(p.flops / p.ms, 1e6, 3) end
    return string.format("%s: %s in %s, %s from DRAM: %s FLOP/byte, %s GFLOP/s", p.name,
      format.si(p.flops, "FLOP"), format.time_ms(p.ms), format.si(p.bytes, "B"),
      ratio(p.flops, p.bytes, 3), gflops)
  end }

------------------------------------------------------------------ measure --

-- Which peak the model priced the launch against: FP64 when its peak is the
-- FP64 one (the model picks by the kernel's larger share of FLOPs).
local function precision_of(m, peaks)
  if type(m.peak_gflops) ~= "number" then return "fp32" end
  local d32 = math.abs(m.peak_gflops - peaks.fp32_gflops)
  local d64 = math.abs(m.peak_gflops - peaks.fp64_gflops)
  return d64 < d32 and "fp64" or "fp32"
end

-- The figures of the one launch fn made on the model clock, or raises.
local function from_model(t, o)
  local m = t.model
  if type(m) ~= "table" then
    fail(MSIG .. ": fn launched no kernel: call the kernel inside it", 4)
  end
  if math.abs(t.median - m.time_ms) > 1e-6 * math.max(t.median, m.time_ms) then
    fail(MSIG .. ": fn must make exactly one launch and no copies: the counters describe the " ..
      "last launch only, and its modelled time (" .. format.time_ms(m.time_ms) .. ") is not " ..
      "fn's (" .. format.time_ms(t.median) .. "); measure each kernel on its own", 4)
  end
  local flops, bytes = o.flops or m.flops, o.bytes or m.dram_bytes
  if not positive(flops) then
    fail(MSIG .. ": the kernel did no floating-point arithmetic (0 FLOP counted), so it has no " ..
      "place on a roofline of FLOP/s; pass flops = ... if it does work of another kind", 4)
  end
  if not positive(bytes) then
    -- the L2's size as the device states it, never a figure of our own
    local ok, d = pcall(rawget(_G, "cuda").device)
    local l2 = ok and type(d) == "table" and d.l2_bytes
    fail(MSIG .. ": the launch moved 0 bytes to or from DRAM: its arrays stayed in the L2 cache" ..
      (l2 and " (" .. format.bytes(l2) .. " on the " .. tostring(d.name) .. ")" or "") ..
      ". Use arrays larger than that, or pass bytes = the bytes it must move " ..
      "at least (each input read once, each output written once)", 4)
  end
  return flops, bytes, t.median, precision_of(m, roofline.peaks())
end

-- The learner's own counts on a clock that counts nothing (the GPU), or raises.
local function from_caller(t, o)
  if t.clock == "sim" then
    fail(MSIG .. ": the simulator's timing model is off, so its times are this CPU's, not a " ..
      "GPU's; turn it on with cuda.simopts{model = true}", 4)
  end
  local missing = {}
  if not positive(o.flops) then missing[#missing + 1] = "flops" end
  if not positive(o.bytes) then missing[#missing + 1] = "bytes" end
  if #missing > 0 then
    fail(MSIG .. ": on the GPU give " .. table.concat(missing, " and ") ..
      ": only the simulator " ..
      "counts them. Count them from the kernel: a vector add of n floats does n FLOP and moves " ..
      "12n bytes ({flops = n, bytes = 12 * n})", 4)
  end
  return o.flops, o.bytes, t.median, o.precision or "fp32"
end

-- cuda.roofline.measure(name, fn [, opts]): see the header. opts: flops,
-- bytes (override the counters), precision, warmup, reps (for cuda.time).
function roofline.measure(name, fn, opts)
  if type(name) ~= "string" then
    fail(MSIG .. ": argument 1 must be the point's name, got " .. type(name))
  end
  if type(fn) ~= "function" then
    fail(MSIG .. ": argument 2 must be a function that launches the kernel, got " .. type(fn))
  end
  if opts ~= nil and type(opts) ~= "table" then
    fail(MSIG .. ": argument 3 must be a table of options, got " .. type(opts))
  end
  local o = opts or {}
  for _, k in ipairs({ "flops", "bytes" }) do
    if o[k] ~= nil and not positive(o[k]) then
      fail(MSIG .. ": " .. k .. " must be a positive number, got " .. show(o[k]))
    end
  end
  local cuda = rawget(_G, "cuda")
  local t = cuda.time(fn, { warmup = o.warmup, reps = o.reps })
  local flops, bytes, ms, prec
  if t.clock == "model" then
    flops, bytes, ms, prec = from_model(t, o)
    prec = o.precision or prec
  else
    flops, bytes, ms, prec = from_caller(t, o)
  end
  if not positive(ms) then
    fail(MSIG .. ": fn took " .. format.time_ms(ms) .. " on the " .. tostring(t.clock) ..
      " clock, a time no rate can be made of: time a launch that does some work (a larger n)")
  end
  return setmetatable({ name = name, flops = flops, bytes = bytes, ms = ms, precision = prec,
    clock = t.clock, device = t.device, model = t.model,
    source = (o.flops or o.bytes) and "given" or (t.clock == "model" and "counters" or "given") },
    roofline.point_mt)
end

------------------------------------------------------------------ result --

-- cuda.roofline(points [, opts]): the points placed under the roofs.
-- opts: title, peaks (see roofline.peaks).
function roofline.roofline(points, opts)
  if type(points) ~= "table" or getmetatable(points) == roofline.point_mt then
    fail(SIG .. ": argument 1 must be a list of points, got " ..
      (type(points) == "table" and "one point (put it in a list: {p})" or type(points)))
  end
  if #points == 0 then fail(SIG .. ": no points to place (the list is empty)") end
  if opts ~= nil and type(opts) ~= "table" then
    fail(SIG .. ": argument 2 must be a table of options, got " .. type(opts))
  end
  opts = opts or {}
  local peaks = roofline.peaks(opts.peaks)
  local r = setmetatable({ peaks = peaks, title = opts.title,
    ridge = { fp32 = peaks.fp32_gflops / peaks.dram_gbs,
      fp64 = peaks.fp64_gflops / peaks.dram_gbs } },
    roofline.mt)
  local clock
  for i, p in ipairs(points) do
    r[i] = make_point(p, i, peaks)
    if type(p) == "table" and p.clock then clock = clock or p.clock end
  end
  r.clock = clock
  return r
end

roofline.mt = { __name = "cudalab.RooflineResult",
  __tostring = function(r) return roofline_chart.text(r) end }

return roofline
