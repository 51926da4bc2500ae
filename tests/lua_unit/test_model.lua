-- test_model.lua: how results on the simulator's model clock print: a
-- TimeResult says "modelled H200 time" and what binds it, cuda.stats() adds
-- the "Modelled H200 time" section, a sweep gets a "bound by" column and one
-- launch per configuration, cuda.versus says which side is which clock, and
-- cuda.plot labels modelled charts. The fake module (fake.new{clock =
-- "model"}) returns what the C side documents; the "sim" clock, what C
-- returns today and with cuda.simopts{model = false}, must print as before.

local fake = require "fake_cuda"
local format = require "format"
local meta = require "meta"
local model = require "model"
local svg = require "svg"
local term = require "term"

-- Runs fn(cuda, cpu, state) with a fake module as the globals cuda and cpu,
-- its printers and visual functions installed, the terminal forced to UTF-8,
-- no colour and 80 columns; restores everything after.
local function with_fake(opts, fn)
  local cuda, cpu, _, state = fake.new(opts)
  meta.install(cuda)
  require("visual").install(cuda)
  local saved = { term.utf8_override, term.color_override, term.width_override, format.utf8 }
  term.utf8_override, term.color_override, term.width_override, format.utf8 = true, false, 80, true
  local ok, err = pcall(with_globals, { cuda = cuda, cpu = cpu }, function() fn(cuda, cpu, state) end)
  term.utf8_override, term.color_override, term.width_override, format.utf8 = table.unpack(saved, 1, 4)
  if not ok then error(err, 0) end
end

-- A modelled timing as C returns it, with fields replaced by `t`.
local function modelled(cuda, t)
  local r = { median = 0.041, min = 0.041, max = 0.041, mean = 0.041, reps = 1, unit = "ms",
    samples = { 0.041 }, clock = "model", device = "NVIDIA H200",
    sim_ms = { median = 69.2, min = 69.2, max = 69.2 }, model = fake.explanation("dram", 0.041) }
  for k, v in pairs(t or {}) do r[k] = v end
  return setmetatable(r, cuda._meta.TimeResult)
end

------------------------------------------------------------ TimeResult --

test("a modelled timing names the modelled GPU, the limit and the simulator's time apart", function()
  with_fake({}, function(cuda)
    checkeq(tostring(modelled(cuda)),
      "median 41.0 µs  (modelled H200 time, bound by DRAM bandwidth; simulated in 69.2 ms)")
    checkeq(tostring(modelled(cuda, { device = "NVIDIA B200" })),
      "median 41.0 µs  (modelled B200 time, bound by DRAM bandwidth; simulated in 69.2 ms)")
    check(tostring(modelled(cuda, { device = false })):find("(modelled H200 time,", 1, true),
      "without a device name, the GPU the simulator models")
  end)
end)

test("a modelled timing of several reps shows min, max and reps; no launch, no limit", function()
  with_fake({}, function(cuda)
    checkeq(tostring(modelled(cuda, { reps = 3, min = 0.040, max = 0.043 })),
      "median 41.0 µs  (min 40.0 µs, max 43.0 µs, 3 reps, modelled H200 time, bound by DRAM " ..
      "bandwidth; simulated in 69.2 ms each)")
    checkeq(tostring(modelled(cuda, { median = 0.25, model = false })),
      "median 250 µs  (modelled H200 time; simulated in 69.2 ms)")
  end)
end)

test("a timing whose last launch is a small part of it says 'last kernel'", function()
  with_fake({}, function(cuda)
    local t = modelled(cuda, { median = 5.8 })
    checkeq(tostring(t),
      "median 5.80 ms  (modelled H200 time, last kernel bound by DRAM bandwidth; simulated in 69.2 ms)")
  end)
end)

test("cuda.time on the model clock: one rep by default, the explanation of the launch", function()
  with_fake({ clock = "model" }, function(cuda, _, state)
    local inc = cuda.kernel("__global__ void inc(float *a, int n) {}")
    local a = cuda.array(100)
    local t = cuda.time(function() inc[{ 1, 32 }](a, #a) end)
    checkeq(t.clock, "model")
    checkeq(t.reps, 1)
    checkeq(t.model.limit, "blocks")
    checkeq(state.time_calls[1], {}, "no options: cuda.time's own defaults")
    local text = tostring(t)
    check(text:find("modelled H200 time", 1, true), text)
    check(text:find("bound by block scheduling (many tiny blocks)", 1, true), text)
    check(not text:find("rep", 1, true) and not text:find("min ", 1, true), "one rep: no min, max or count")
  end)
end)

test("the sim clock prints as before, with the model off or from today's C", function()
  with_fake({}, function(cuda)
    local t = cuda.time(function() end, { warmup = 0, reps = 3 })
    checkeq(tostring(t), "median 42.0 µs  (min 41.0 µs, max 43.0 µs, 3 reps, simulator time, not GPU time)")
  end)
  with_fake({ clock = "model" }, function(cuda)
    checkeq(cuda.simopts{ model = false }.model, false)
    local t = cuda.time(function() end, { warmup = 0, reps = 1 })
    checkeq(t.clock, "sim")
    checkeq(tostring(t), "median 41.0 µs  (1 rep, simulator time, not GPU time)")
  end)
end)

----------------------------------------------------------------- stats --

test("cuda.stats() adds the modelled time, why, the roofline figures and the terms", function()
  with_fake({ clock = "model" }, function(cuda)
    local k = cuda.kernel("__global__ void vector_add(float *a) {}")
    k[{ 31250, 32 }]()
    local s = cuda.stats()
    local lines = lines_of(tostring(s))
    checkeq(lines[5], "divergent branches  0", "the counters come first, unchanged")
    local want = {
      "Modelled H200 time: 195 µs, 2.50 µs of it launch overhead",
      "  Bound by block scheduling (many tiny blocks): the fake's reason, 195.0 us.",
      "  memory     120 MB from DRAM, 130 MB through L2 (8% hits), L1 0% hits",
      "  bandwidth  615 GB/s of 4,800 a copy reaches (12.8%)",
      "  compute    10.0 MFLOP (0.083 per byte), 51.3 GFLOP/s of 67,000 peak (0.1%)",
      "  occupancy  50%: 32 warps and 32 blocks per SM, 2.3 waves",
      "  each limit alone would take (slowest first):",
      "    block sched.   192 µs  ████████████████████████",
      "    latency       97.5 µs  ████████████▏",
      "    issue         24.4 µs  ███",
      "    launch        2.50 µs  ▎",
    }
    for i, w in ipairs(want) do checkeq(lines[5 + i], w, "line " .. (5 + i)) end
    checkeq(#lines, 5 + #want, "nothing after the terms")
    check(#want <= 15, "the section stays short")
  end)
end)

test("the stats section shows five terms at most, slowest first, and fits the terminal", function()
  with_fake({}, function(cuda)
    local terms = {}
    for i, key in ipairs({ "issue", "dram", "fp64", "l2", "latency", "tail", "sfu" }) do
      terms[i] = { key = key, what = key, ms = i == 2 and 0.9 or i * 0.01 }
    end
    terms[#terms + 1] = { key = "fp32", what = "FP32 throughput", ms = 0 }
    local m = fake.explanation("dram", 0.9, { terms = terms, why = ("word "):rep(40) })
    local text = tostring(setmetatable({ model = m }, cuda._meta.Stats))
    check(text:find("(slowest first; 5 of 7, all in s.model.terms):", 1, true), text)
    local order = {}
    for name in text:gmatch("\n    (%S+)%s+[%d.]+ %S*s  ") do order[#order + 1] = name end
    checkeq(order, { "DRAM", "SFU", "tail", "latency", "L2" })
    for _, l in ipairs(lines_of(text)) do check(term.len(l) <= 80, "too wide: " .. l) end
  end)
end)

test("stats without the model print only the counters; a sparse model does not raise", function()
  with_fake({}, function(cuda)
    local k = cuda.kernel("__global__ void k(float *a) {}")
    k[{ 1, 256 }]()
    local text = tostring(cuda.stats())
    check(not text:find("Modelled", 1, true), text)
    checkeq(#lines_of(text), 5)
    local sparse = tostring(setmetatable({ model = { time_ms = 0.01, limit = "tail" } }, cuda._meta.Stats))
    check(sparse:find("Modelled H200 time: 10.0 µs\n  Bound by tail.", 1, true), sparse)
    check(tostring(setmetatable({ model = {} }, cuda._meta.Stats)):find("Modelled H200 time: ?", 1, true))
  end)
end)

test("limit keys have short names for columns", function()
  checkeq(model.short("dram"), "DRAM")
  checkeq(model.short("blocks"), "block sched.")
  checkeq(model.short("shared"), "shared mem.")
  checkeq(model.short("atomic"), "atomics")
  checkeq(model.short("something_new"), "something_new")
  checkeq(model.short(nil), "")
  checkeq(model.clock_words("NVIDIA H200"), "modelled H200 time")
end)

----------------------------------------------------------------- sweep --

local N = 10000
local BYTES = 120000000 -- as for 10,000,000 elements: the fake's arrays are small

-- A block-size sweep of a fake vector_add over n elements.
local function block_sweep(cuda, list)
  list.bytes = list.bytes or BYTES
  local k = cuda.kernel("__global__ void vector_add(float *a, float *b, float *c, int n) {}")
  local a, b, c = cuda.array(N), cuda.array(N), cuda.array(N)
  return cuda.sweep(k, list, a, b, c, N)
end

test("a modelled sweep runs one launch per configuration and names what binds each", function()
  with_fake({ clock = "model" }, function(cuda, _, state)
    local s = block_sweep(cuda, { 32, 64, 256 })
    checkeq(s.clock, "model")
    -- the defaults are cuda.time's own (one launch on the model clock), not the sweep's copy
    for i, call in ipairs(state.time_calls) do checkeq(call, {}, "call " .. i) end
    checkeq(#state.time_calls, 3)
    for i = 1, 3 do checkeq(s[i].reps, 1, "row " .. i .. ": one launch") end
    checkeq(state.launches, 3, "one launch per configuration")
    checkeq(s[1].model.limit, "blocks", "the row keeps the whole explanation")
    checkeq(s[1].model.why, fake.explain({ block = 32 }).why)
    checkeq(s[1].bytes, BYTES)
    local lines = lines_of(tostring(s))
    check(lines[2]:find("block%s+grid%s+median%s+GB/s%s+occupancy%s+bound by"), lines[2])
    check(lines[3]:find("^%s+32%s+313%s+195 µs%s+615%s+50%% blocks%s+block sched%.%s+█"), lines[3])
    check(lines[4]:find("^%s+64%s+157%s+41.0 µs%s+2927%s+100%% threads%s+DRAM%s+█.* ◀ best$"), lines[4])
    check(lines[5]:find("^%s+256%s+40%s+41.0 µs%s+2927%s+100%% threads%s+DRAM%s+█"), lines[5])
    check(not lines[5]:find("best", 1, true), "a tie after the best is not marked")
    local rest = table.concat(lines, "\n", 6)
    checkeq(rest, "Best: block 64, 4.8× faster than the slowest (32), which is bound by block\n" ..
      "  scheduling (many tiny blocks).\n" ..
      "Times: modelled H200 times, one launch each (the model is deterministic).\n" ..
      "Bound by: the limit that sets each time; cuda.last[i].model explains it.")
    for _, l in ipairs(lines) do check(term.len(l) <= 80, "too wide: " .. l) end
  end)
end)

test("a modelled sweep keeps the first of tied rows as the best", function()
  with_fake({ clock = "model" }, function(cuda)
    local s = block_sweep(cuda, { 256, 64, 512, 32 })
    checkeq(s[1].median, s[2].median, "256, 64 and 512 tie on the model")
    checkeq(s.best, s[1])
    checkeq(s.worst, s[4])
    check(tostring(s):find("256[^\n]*◀ best"), tostring(s))
    checkeq(select(2, tostring(s):gsub("◀ best", "")), 1, "one row marked")
  end)
end)

test("a modelled sweep honours reps and warmup when the caller gives them", function()
  with_fake({ clock = "model" }, function(cuda, _, state)
    local s = block_sweep(cuda, { 64, 128, reps = 3 })
    checkeq(state.time_calls[1], { reps = 3 })
    checkeq(s[1].reps, 3)
    check(tostring(s):find("\nTimes: median of each, modelled H200 time.\n", 1, true), tostring(s))
    local launched = state.launches
    local w = block_sweep(cuda, { 64, warmup = 2 })
    checkeq(state.time_calls[3], { warmup = 2 })
    checkeq(w[1].reps, 1, "reps left to cuda.time: one on the model clock")
    checkeq(state.launches - launched, 3, "two warm-up launches and the timed one")
  end)
end)

test("off the model clock a sweep passes cuda.time's defaults and prints as before", function()
  with_fake({}, function(cuda, _, state)
    local s = block_sweep(cuda, { 32, 256 })
    checkeq(state.time_calls[1], {}, "the sim clock: cuda.time's defaults")
    checkeq(s.clock, "sim")
    local text = tostring(s)
    check(not text:find("bound by", 1, true), text)
    check(text:find("\nTimes: median of each, simulator time (the CPU running the simulator), " ..
      "not GPU time.", 1, true), text)
  end)
  with_fake({ clock = "model" }, function(cuda, _, state)
    cuda.simopts{ model = false }
    block_sweep(cuda, { 32 })
    checkeq(state.time_calls[1], {}, "the model turned off: cuda.time's defaults")
  end)
  with_fake({ clock = "model" }, function(cuda, _, state)
    cuda.use("cuda")
    block_sweep(cuda, { 32 })
    checkeq(state.time_calls[1], {}, "the GPU: cuda.time's defaults")
  end)
end)

test("a modelled sweep over any parameter gets the column; clock = \"cpu\" does not", function()
  with_fake({ clock = "model" }, function(cuda, _, state)
    local k = cuda.kernel("__global__ void k(float *a) {}")
    local s = cuda.sweep{ "block", { 32, 128 }, function(b) k[{ 1, b }]() end, bytes = 1e6 }
    checkeq(state.time_calls[1], {})
    checkeq(s[1].reps, 1)
    checkeq(s[1].model.limit, "blocks")
    local text = tostring(s)
    check(text:find("block%s+median%s+GB/s%s+bound by"), text)
    check(text:find("\n%s+128%s+41.0 µs%s+24.4%s+DRAM"), text)
    local c = cuda.sweep{ "n", { 1, 2 }, function() end, clock = "cpu" }
    checkeq(#state.time_calls, 2, "cpu.time, not cuda.time")
    checkeq(c[1].reps, 20, "cpu.time's default reps")
    check(not tostring(c):find("bound by", 1, true), tostring(c))
  end)
end)

---------------------------------------------------------------- versus --

local function run_versus(cuda)
  local n = 100
  local k = cuda.kernel("__global__ void inc(float *a, int n) {}")
  local h, out, a = cuda.host(n), cuda.host(n), cuda.array(n)
  return cuda.versus{
    cpu = function() local r = {} for i = 1, n do r[i] = 0 end return r end,
    h2d = function() a:copyfrom(h) end,
    kernel = function() k[{ 1, 128 }](a, n) end,
    d2h = function() a:copyto(out) return out end,
  }
end

test("a modelled versus says the GPU side is modelled and the CPU side real", function()
  with_fake({ clock = "model" }, function(cuda, _, state)
    local v = run_versus(cuda)
    checkeq(v.clock, "model")
    checkeq(v.stages[1].median, 0.25, "copies modelled")
    checkeq(v.stages[2].model.limit, "dram")
    checkeq(state.time_calls[2], {}, "cuda.time's model defaults: one rep")
    local text = tostring(v):gsub("\n", " ")
    check(text:find("(GPU side: modelled H200 time, the copies over PCIe modelled too; the " ..
      "kernel is bound by DRAM bandwidth. CPU side: this machine's real time.)", 1, true), text)
    check(not text:find("timed on the simulator", 1, true), text)
  end)
end)

test("a versus on the sim clock keeps its old note", function()
  with_fake({}, function(cuda)
    local text = tostring(run_versus(cuda)):gsub("\n", " ")
    check(text:find("(GPU side timed on the simulator, which runs kernels on the CPU: the ratios " ..
      "say nothing about a real GPU.)", 1, true), text)
    check(not text:find("modelled", 1, true), text)
  end)
end)

------------------------------------------------------------------ plot --

test("plots of modelled results say so in the title and on the axis", function()
  with_fake({ clock = "model" }, function(cuda)
    local text = svg.render(block_sweep(cuda, { 32, 256 }))
    check(text:find(">vector_add: modelled H200 time by threads per block<", 1, true), text)
    check(text:find(">modelled H200 time (µs)<", 1, true), text)
    check(text:find("<title>32: 195 µs, bound by block scheduling (many tiny blocks)</title>", 1, true), text)
    check(not text:find("median time", 1, true), text)
    local vt = svg.render(run_versus(cuda))
    check(vt:find(">CPU against GPU (modelled H200 time), end to end<", 1, true), vt)
    check(vt:find(">time (µs): GPU modelled H200 time, CPU measured on this machine<", 1, true), vt)
  end)
  with_fake({}, function(cuda)
    local text = svg.render(block_sweep(cuda, { 32, 256 }))
    check(text:find(">median time (µs)<", 1, true) and not text:find("modelled", 1, true), text)
    check(not svg.render(run_versus(cuda)):find("modelled", 1, true))
  end)
end)
