-- test_svg.lua: svg.lua's chart text for sweep and CPU-against-GPU results
-- (built here by hand with the result metatables, so no kernel runs), the
-- printers of those results, and occupancy.lua's explanations. That the
-- SVG is well-formed XML and renders is checked on real results by
-- tests/exec/sweep.lua with xmllint and headless Chromium.

local svg = require "svg"
local sweep = require "sweep"
local versus = require "versus"
local occupancy = require "occupancy"
local term = require "term"

-- Checks that tags nest and close, the part of well-formedness a typo breaks.
local function balanced(text)
  local stack = {}
  for close, name, selfclose in text:gmatch("<(/?)([%w:]+)[^>]-(/?)>") do
    if close == "/" then
      local top = table.remove(stack)
      if top ~= name then return false, "</" .. name .. "> closes <" .. tostring(top) .. ">" end
    elseif selfclose ~= "/" then
      stack[#stack + 1] = name
    end
  end
  return #stack == 0, "unclosed " .. tostring(stack[#stack])
end

local function sample_sweep()
  local r = setmetatable({ kind = "kernel", param = "block", title = "vector_add", clock = "gpu",
    n = 10000000, bytes = 120000000 }, sweep.mt)
  local ms = { [32] = 0.195, [64] = 0.101, [128] = 0.054, [256] = 0.041 }
  for _, b in ipairs({ 32, 64, 128, 256 }) do
    r[#r + 1] = { label = tostring(b), block = b, grid = (10000000 + b - 1) // b, median = ms[b],
      gbps = 120000000 / (ms[b] / 1000) / 1e9, bytes = 120000000,
      occupancy = b == 32 and 0.5 or 1, limit = b == 32 and "blocks" or "warps" }
  end
  r.rank, r.best, r.worst = "time", r[4], r[1]
  return r
end

test("svg.escape makes text safe in XML", function()
  checkeq(svg.escape([[a<b & "c" 'd'>]]), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;")
end)

test("ticks are round numbers from 0 past the maximum", function()
  checkeq((svg.ticks(195)), { 0, 50, 100, 150, 200 })
  checkeq((svg.ticks(0.041)), { 0, 0.01, 0.02, 0.03, 0.04, 0.05 })
  local t, top = svg.ticks(1)
  checkeq(top, 1)
  checkeq(#t, 6)
end)

test("a sweep chart has labelled axes with units, one bar per row, the best in green", function()
  local text = svg.render(sample_sweep())
  check(balanced(text))
  check(text:find("^<%?xml"), "XML declaration first")
  check(text:find("median time (µs)", 1, true), "value axis names its unit")
  check(text:find(">threads per block", 1, true), "category axis named")
  local bars = select(2, text:gsub("<rect x=[^>]*><title>", ""))
  checkeq(bars, 4, "one bar per row")
  check(text:find('fill="#59a14f"><title>256: 41.0 µs</title>', 1, true), "best bar in green with its value")
end)

test("a line chart draws a polyline through one point per row", function()
  local text = svg.render(sample_sweep(), { kind = "lines", title = "a < b" })
  check(balanced(text))
  checkeq(select(2, text:gsub("<circle", "")), 4)
  check(text:find("<polyline", 1, true))
  check(text:find("a &lt; b", 1, true), "title escaped")
end)

test("a CPU-against-GPU chart stacks the GPU's stages", function()
  local r = setmetatable({ cpu = { median = 8.9 }, gpu = 9.43, kernel = 0.03, stages = {
    { name = "h2d", label = "copy in", median = 5.8 }, { name = "kernel", label = "kernel", median = 0.03 },
    { name = "d2h", label = "copy out", median = 3.6 } } }, versus.mt)
  local text = svg.render(r)
  check(balanced(text))
  check(text:find("time (ms)", 1, true))
  check(text:find("<title>kernel: 30.0 µs</title>", 1, true), "the kernel segment is there")
  check(text:find(">copy out 3.60 ms<", 1, true), "legend")
end)

test("plot refuses what it cannot draw, naming it", function()
  checkerr("must come from cuda.sweep, cuda.versus, cuda.roofline or cuda.timeline, got table", svg.render, {})
  checkerr("file must be a file name", svg.plot, sample_sweep(), nil)
end)

test("a sweep prints a table with bars, the best marked, and the ratio", function()
  local saved = { term.utf8_override, term.color_override, term.width_override }
  term.utf8_override, term.color_override, term.width_override = true, false, 80
  local ok, err = pcall(function()
    local lines = {}
    for l in (tostring(sample_sweep()) .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
    checkeq(lines[1], "vector_add over 4 block sizes, 114 MiB of arrays per launch")
    check(lines[2]:find("block%s+grid%s+median%s+GB/s%s+occupancy"), lines[2])
    check(lines[3]:find("^%s+32%s+312500%s+195 µs%s+615%s+50%% blocks%s+█"), lines[3])
    checkeq(lines[3]:sub(-3), "█", "the slowest row has the full bar")
    check(lines[6]:find("41.0 µs", 1, true) and lines[6]:find("◀ best$"), lines[6])
    checkeq(lines[7], "Best: block 256, 4.8× faster than the slowest (32).")
    checkeq(lines[8], "Times: median of each, GPU events.")
    checkeq(lines[9], "Grids: n = 10,000,000 threads, rounded up to whole blocks.")
    for i = 1, #lines do check(term.len(lines[i]) <= 80, "line " .. i .. " fits 80 columns") end
  end)
  term.utf8_override, term.color_override, term.width_override = table.unpack(saved)
  if not ok then error(err, 0) end
end)

test("a partial sweep says so", function()
  local r = sample_sweep()
  r.partial = true
  check(tostring(r):find("(partial: 4 rows, the sweep was interrupted)", 1, true))
end)

local H200 = { name = "H200", cc = "9.0", max_threads_per_block = 1024, max_threads_per_sm = 2048,
  max_blocks_per_sm = 32, regs_per_block = 65536, regs_per_sm = 65536, warp_size = 32,
  shared_per_block = 49152, shared_per_sm = 233472, shared_per_block_optin = 232448 }

local function explain(regs, threads, static, dyn)
  local r = occupancy.compute({ name = "k", registers = regs, shared_static = static or 0 }, H200,
    threads, dyn or 0)
  r._device = H200
  setmetatable(r, occupancy.mt)
  -- printed 200 columns wide: one line per sentence, so the checks can find phrases
  local saved = term.width_override
  term.width_override = 200
  local text = tostring(r)
  term.width_override = saved
  return r, text
end

test("occupancy names the limit that binds and what to do", function()
  local r, text = explain(32, 256)
  checkeq(r.blocks_per_sm, 8)
  checkeq(r.occupancy, 1)
  checkeq(r.limit, "warps")
  check(text:find("Threads bind: the SM is full", 1, true), text)
  r, text = explain(64, 256)
  checkeq(r.limit, "registers")
  checkeq(r.occupancy, 0.5)
  check(text:find("at most 32 per thread would fill the SM", 1, true), text)
  r, text = explain(16, 32)
  checkeq(r.limit, "blocks")
  check(text:find("use 64 or more threads per block", 1, true), text)
  r, text = explain(16, 256, 0, 100000)
  checkeq(r.limit, "shared")
  checkeq(r.blocks_per_sm, 2)
  check(text:find("97.7 KiB dynamic + 1 KiB reserved", 1, true), text)
end)

test("occupancy says why a block cannot launch", function()
  local r, text = explain(16, 2048)
  checkeq(r.blocks_per_sm, 0)
  check(text:find("It cannot launch: a block of 2,048 threads is over the limit of 1,024", 1, true), text)
  r, text = explain(255, 1024)
  check(text:find("255 registers per thread x 1,024 threads need 262,144 registers", 1, true), text)
end)

test("occupancy accepts {x, y, z} blocks and rejects fractions", function()
  checkeq(occupancy.block_threads({ 16, 16 }), 256)
  checkeq(occupancy.block_threads({ x = 8, y = 8, z = 2 }), 128)
  checkeq(occupancy.block_threads(1.5), nil)
end)
