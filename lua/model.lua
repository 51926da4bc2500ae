-- model.lua: the words for the simulator's performance model of the GPU:
-- what a modelled time is called, the short names of the limits that bind a
-- kernel (for a column of a sweep), and the "Modelled H200 time" section that
-- cuda.stats() prints after its counters.
--
-- Used by meta.lua (TimeResult and Stats printers), sweep.lua, versus.lua and
-- svg.lua, so that every printout names the two clocks alike.
--
-- Design stance: on the simulator, cuda.time returns the modelled time of the
-- GPU (clock "model"), computed by C from the launch's counters; the
-- simulator's own CPU time is kept apart (t.sim_ms) and is only ever printed
-- as "simulated in ...", never beside or mixed with a modelled figure. The
-- explanation (which limit binds and why, with the figures) comes from C
-- already worded; this module only lays it out. Every function tolerates
-- missing fields: a row with nothing to show is left out.

-- Standard functions are captured at load time (meta.lua loads this module,
-- and with it chart.lua and term.lua, at start-up), so a learner's variable
-- named `table` or `type` breaks nothing.
local ipairs, math, table, tostring, type = ipairs, math, table, tostring, type

local chart = require "chart"
local format = require "format"
local term = require "term"

local model = {}

-- Short names of the limits, for a "bound by" column; limit_text (from C)
-- is the long form. Keys are those C uses in explanation.limit.
model.SHORT = {
  launch = "launch", blocks = "block sched.", tail = "tail", latency = "latency",
  issue = "issue", fp32 = "FP32", fp64 = "FP64", sfu = "SFU", int = "INT",
  shared = "shared mem.", l1 = "L1", l2 = "L2", dram = "DRAM", atomic = "atomics",
}

-- bound(m) -> what bounds a modelled launch, in words ("DRAM bandwidth"), or
-- nil when m names no limit. The one place that decides it: cuda.time's line,
-- cuda.stats' section and cuda.roofline's "bound by" column all print this,
-- so they cannot disagree about one launch.
function model.bound(m)
  if type(m) ~= "table" then return nil end
  if m.limit_text then return tostring(m.limit_text) end
  if m.limit then return model.short(m.limit) end
  return nil
end

-- The short name of a limit key ("dram" -> "DRAM"); unknown keys as they are.
function model.short(limit)
  if limit == nil then return "" end
  return model.SHORT[limit] or tostring(limit)
end

-- "H200" from "NVIDIA H200". Without a name, the GPU the simulator models:
-- an H200 (its one device description), so the words stay true by default.
function model.device(name)
  if type(name) ~= "string" or name == "" then return "H200" end
  return (name:gsub("^NVIDIA%s+", ""))
end

-- "modelled H200 time": the phrase every printout uses for clock "model".
function model.clock_words(device)
  return "modelled " .. model.device(device) .. " time"
end

-- "1,234" for large rates, "61.5" for small ones: GB/s and GFLOP/s.
local function rate(x)
  if type(x) ~= "number" then return nil end
  return x >= 100 and format.count(math.floor(x + 0.5)) or format.short(x, 3)
end

-- "2,910 GB/s of 4,241 peak (69%)", or the achieved figure alone; what names
-- the peak ("peak", or for memory "a copy reaches").
local function against_peak(achieved, peak, unit, what)
  local a = rate(achieved)
  if not a then return nil end
  local s = a .. " " .. unit
  if type(peak) == "number" and peak > 0 then
    s = s .. " of " .. rate(peak) .. " " .. (what or "peak") .. " (" ..
      format.percent(achieved / peak) .. ")"
  end
  return s
end

-- "120 MB from DRAM, 130 MB through L2 (8% hits), L1 0% hits", or nil.
local function memory_text(m)
  local parts = {}
  if m.dram_bytes then parts[#parts + 1] = format.si(m.dram_bytes, "B") .. " from DRAM" end
  if m.l2_bytes then
    parts[#parts + 1] = format.si(m.l2_bytes, "B") .. " through L2" ..
      (m.l2_hit_rate and " (" .. format.percent(m.l2_hit_rate) .. " hits)" or "")
  end
  if m.l1_hit_rate then parts[#parts + 1] = "L1 " .. format.percent(m.l1_hit_rate) .. " hits" end
  return #parts > 0 and table.concat(parts, ", ") or nil
end

-- "10.0 MFLOP (0.083 per byte), 51.3 GFLOP/s of 67,000 peak (0.1%)", or nil.
-- FLOPs per byte of DRAM traffic is the roofline's arithmetic intensity.
local function compute_text(m)
  local parts = {}
  if m.flops then
    local per_byte = m.dram_bytes and m.dram_bytes > 0 and
      " (" .. format.short(m.flops / m.dram_bytes, 2) .. " per byte)" or ""
    parts[#parts + 1] = format.si(m.flops, "FLOP") .. per_byte
  end
  parts[#parts + 1] = against_peak(m.achieved_gflops, m.peak_gflops, "GFLOP/s")
  return #parts > 0 and table.concat(parts, ", ") or nil
end

-- "50%: 32 warps and 16 blocks per SM, 2.3 waves", or nil.
local function occupancy_text(m)
  local per_sm = {}
  if m.warps_per_sm then per_sm[#per_sm + 1] = format.count(m.warps_per_sm) .. " warps" end
  if m.blocks_per_sm then per_sm[#per_sm + 1] = format.count(m.blocks_per_sm) .. " blocks" end
  local detail = {}
  if #per_sm > 0 then detail[1] = table.concat(per_sm, " and ") .. " per SM" end
  if m.waves then
    detail[#detail + 1] = format.short(m.waves, 3) .. (m.waves == 1 and " wave" or " waves")
  end
  local d = table.concat(detail, ", ")
  if not m.occupancy then return d ~= "" and d or nil end
  return format.percent(m.occupancy) .. (d ~= "" and ": " .. d or "")
end

-- The roofline rows: {label, text}, each left out when C gave no figures.
local function figure_rows(m)
  local rows = {}
  local function add(label, text) if text then rows[#rows + 1] = { label, text } end end
  add("memory", memory_text(m))
  -- memory against what a copy reaches (the model's roof, the roofline's too), not the data
  -- sheet's peak that the device card shows beside it
  add("bandwidth", against_peak(m.achieved_gbs, m.peak_gbs, "GB/s", "a copy reaches"))
  add("compute", compute_text(m))
  add("occupancy", occupancy_text(m))
  return rows
end

-- At most this many terms are drawn, keeping the section near 15 lines; all
-- of them stay in s.model.terms.
local MAX_TERMS = 5

-- The terms, slowest first, as "    DRAM   41.2 µs  ██████████". Limits
-- that cost nothing (no FP64 in the kernel) are left out, and not counted.
local function term_lines(terms)
  local list = {}
  for _, t in ipairs(terms) do
    if type(t) == "table" and type(t.ms) == "number" and t.ms > 0 then list[#list + 1] = t end
  end
  if #list == 0 then return {} end
  -- C sorts them; sorting again costs nothing and keeps the promise if it did not
  table.sort(list, function(a, b) return a.ms > b.ms end)
  local shown, rows = math.min(#list, MAX_TERMS), {}
  local unit = format.time_unit(list[1].ms)
  for i = 1, shown do
    rows[i] = { "    " .. model.short(list[i].key or list[i].what),
      format.time_ms(list[i].ms, unit) }
  end
  local lines = chart.columns(rows, "lr")
  local top = list[1].ms
  for i = 1, shown do
    lines[i] = lines[i] .. "  " .. chart.bar(top > 0 and list[i].ms / top or 0, 24)
  end
  local title = "  each limit alone would take (slowest first"
  if #list > shown then
    title = title .. "; " .. shown .. " of " .. #list .. ", all in s.model.terms"
  end
  table.insert(lines, 1, title .. "):")
  return lines
end

-- The section cuda.stats() prints after its counters: the modelled time, the
-- limit that binds and why (C's sentence), a roofline-style block (traffic,
-- bandwidth and compute against the peaks, occupancy) and what each limit
-- alone would cost, as bars. `m` is the explanation table (s.model); returns
-- a string of at most about 15 lines.
function model.section(m, device)
  local width = term.width() - 1
  local head = "Modelled " .. model.device(device or m.device) .. " time: " ..
    (type(m.time_ms) == "number" and format.time_ms(m.time_ms) or "?")
  if type(m.launch_us) == "number" and m.launch_us > 0 then
    head = head .. ", " .. format.time_ms(m.launch_us / 1000) .. " of it launch overhead"
  end
  local out = { chart.wrap(head, width, "  ") }
  local limit = model.bound(m)
  local why = type(m.why) == "string" and m.why ~= "" and m.why or nil
  if limit or why then
    local text = limit and "Bound by " .. tostring(limit) .. (why and ": " .. why or ".") or why
    out[#out + 1] = "  " .. chart.wrap(text, width - 2, "  ")
  end
  local rows = figure_rows(m)
  if #rows > 0 then
    local cells = {}
    for i, r in ipairs(rows) do cells[i] = { "  " .. r[1], r[2] } end
    for _, l in ipairs((chart.columns(cells, "ll"))) do out[#out + 1] = l end
  end
  if type(m.terms) == "table" then
    for _, l in ipairs(term_lines(m.terms)) do out[#out + 1] = l end
  end
  return table.concat(out, "\n")
end

return model
