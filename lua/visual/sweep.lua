-- sweep.lua: cuda.sweep: run the same work over a list of settings and show,
-- side by side, how long each took, the bandwidth it reached and (for block
-- sizes) the occupancy, as a table with a bar per row and the best one marked.
--
--   cuda.sweep(kernel, {32, 64, 128, 256, 512, 1024}, a, b, c, n)   block sizes
--   cuda.sweep(kernel, {{264, 256}, {528, 256}}, args...)           {grid, block} pairs
--   cuda.sweep(kernel, {64, 128, grid = function(block) return 132 * 4 end}, args...)
--   cuda.sweep{"stride", {1, 2, 4, 8}, function(s) k[{g, 256}](a, n, s) end, bytes = 2 * a.nbytes}
--
-- Design stance:
--  * The result is data first: a table of rows (r[1].median, r.best.block)
--    that prints itself. Printing is the __tostring, so `s = cuda.sweep(...)`
--    in a script prints nothing, and at the prompt the table appears.
--  * Block sizes alone need a thread count to derive the grid: one thread per
--    element of the largest array argument (what a learner's first kernels
--    do). Anything else says so with {grid, block} pairs or a grid function.
--  * Bandwidth counts each array argument's bytes once per launch (read or
--    written), the "effective bandwidth" of the CUDA best-practice guides;
--    bytes = ... overrides it when the kernel touches data more or less often.
--  * One configuration that cannot launch (a block of 2048, too many
--    registers) or that faults becomes a row with its error, so the rest
--    still teach. The row keeps the whole message: a fault's second line
--    names the kernel, block, thread and source line, which is what makes a
--    block-size bug findable; only the position of the sweep's own call is
--    dropped from its front.
--  * A thread count is printed only where the sweep chose the grids from one
--    (block sizes given alone), and as what it is: the count the grids were
--    rounded up from, the length of the largest array or n =, in a footer
--    line of its own. Given {grid, block} pairs or a grid function, each
--    row's grid is the caller's and no single count is true of the sweep.
--  * On the simulator, cuda.time gives the modelled GPU time (clock
--    "model"): deterministic, so one launch per configuration is enough and
--    is cuda.time's default there (warmup 0, reps 1), which the sweep keeps
--    by passing only the reps and warmup the call gives. A
--    row keeps the model's explanation (row.model) and the table gains a
--    "bound by" column: the limit that sets each row's time, which is the
--    answer to "why is this block size slow". With the model off
--    (cuda.simopts{model = false}) the defaults are cuda.time's, as before.
--  * Ctrl-C: the engine raises "interrupted" and keeps it armed until the
--    prompt, so little code of ours can run after it. The pcall around each
--    measurement does catch it, but only to clear the progress bar's line
--    and raise it again at once; turning it into a row is not tried, since
--    the armed hook would interrupt whatever came next. Instead the result
--    is published in cuda.last before the first measurement and each row is
--    added as it completes: after Ctrl-C, cuda.last holds the rows so far,
--    printed with a "partial" note. The progress bar says so while it runs.

local error, ipairs, math, pcall, rawget, rawset = error, ipairs, math, pcall, rawget, rawset
local getmetatable, select, setmetatable, string, table, tonumber, tostring, type, utf8 =
  getmetatable, select, setmetatable, string, table, tonumber, tostring, type, utf8

local format = require "format"
local model = require "model"

local sweep = {}

local SIG = "cuda.sweep(kernel, {block sizes | {grid, block} pairs} [, args...])"
local GSIG = "cuda.sweep{param, values, function(value) ... end [, setup =, bytes =]}"

local function fail(msg) error(msg, 3) end

-- Array-like arguments (device arrays, host buffers): userdata with nbytes,
-- or a table carrying their metatable's name (what a pure-Lua stand-in for
-- the C module, such as the unit tests' fake, makes). A learner's own table
-- of numbers is not an array argument: the launch would refuse it anyway.
local function array_like(v)
  if type(v) == "userdata" then return true end
  local mt = type(v) == "table" and getmetatable(v)
  local name = type(mt) == "table" and rawget(mt, "__name")
  return name == "cudalab.Array" or name == "cudalab.HostBuffer"
end

local function nbytes_of(v)
  if not array_like(v) then return nil end
  local ok, n = pcall(function() return v.nbytes end)
  return ok and math.type(n) == "integer" and n or nil
end

local function length_of(v)
  local ok, n = pcall(function() return #v end)
  return ok and math.type(n) == "integer" and n or nil
end

-- Total bytes of the array arguments and the length of the largest one.
local function scan_args(args)
  local bytes, longest = 0, nil
  for i = 1, args.n do
    local b = nbytes_of(args[i])
    if b then
      bytes = bytes + b
      local n = length_of(args[i])
      if n and (not longest or n > longest) then longest = n end
    end
  end
  return bytes > 0 and bytes or nil, longest
end

-- "256" or "16x16" for a block or grid given as a number or {x, y, z}.
local function dim_text(d)
  if type(d) ~= "table" then return tostring(d) end
  local parts = {}
  for i = 1, 3 do if d[i] then parts[#parts + 1] = tostring(d[i]) end end
  return table.concat(parts, "x")
end

-- The list of {grid, block} to run from configs (see the header), or raises.
-- out.derived is true when some grid was worked out from n.
local function configurations(configs, n)
  local out = {}
  for i, c in ipairs(configs) do
    local grid, block
    if type(c) == "table" then
      grid, block = c[1], c[2]
      if grid == nil or block == nil then
        fail(string.format("%s: configuration %d must be {grid, block}, got a table without both",
          SIG, i))
      end
    elseif math.type(c) == "integer" then
      block = c
      if block < 1 then
        fail(string.format("%s: configuration %d is a block of %d threads; a block has 1 or more",
          SIG, i, block))
      end
      if type(configs.grid) == "function" then
        grid = configs.grid(block)
      elseif not n then
        fail(SIG .. ": cannot tell how many blocks to launch: no array argument to take a " ..
          "length from; pass {grid, block} pairs, or grid = function(block) return ... end, " ..
          "or n = threads")
      else
        grid = math.max(1, (n + block - 1) // block)
        out.derived = true
      end
    else
      fail(string.format("%s: configuration %d must be a block size or {grid, block}, got %s", SIG,
        i, tostring(c)))
    end
    out[i] = { grid = grid, block = block }
  end
  if #out == 0 then fail(SIG .. ": no configurations to run (the list is empty)") end
  return out
end

-- Times fn, returning the cuda.time/cpu.time result and the wall time it took
-- (ms, for the progress bar; nil when cpu.time is missing).
local function measure(timer, fn, opts)
  local cpu = rawget(_G, "cpu")
  local t
  if type(cpu) == "table" and type(cpu.time) == "function" then
    local wall = cpu.time(function() t = timer(fn, opts) end, { warmup = 0, reps = 1 })
    return t, wall.median
  end
  return timer(fn, opts), nil
end

-- An error message without the "file:line:" of the call that raised it, and
-- without a traceback; its other lines (where a fault happened) are kept.
local function error_text(e)
  local s = tostring(e):gsub("\nstack traceback:.*$", "")
  return (s:gsub("^[^:%s]+:%d+: ", ""))
end

-- Where a fault happened, from the line the simulator words it in
-- ("in kernel k, block (3,0,0), thread (232,0,0), at kernel.cu:3"): {kernel,
-- block = {x, y, z}, thread = {x, y, z}, at, line}, or nil for an error of
-- another kind (a launch refused before it ran).
local function fault_of(msg)
  local kernel, b, t, at =
    msg:match("\n%s*in kernel (%S+), block (%b()), thread (%b()), at ([^\n]+)")
  if not kernel then return nil end
  local function int(s) return s and math.tointeger(tonumber(s)) end
  local function dim(s)
    local x, y, z = s:match("^%((%d+),(%d+),(%d+)%)$")
    return x and { x = int(x), y = int(y), z = int(z) } or nil
  end
  return { kernel = kernel, block = dim(b), thread = dim(t), at = at,
    line = int(at:match(":(%d+)$")) }
end

-- The options for the timer: the caller's warmup and reps, and where they
-- are nil the timer's own defaults. cuda.time alone knows which clock it
-- will read (the modelled one on the simulator with the model on) and picks
-- its defaults by it: one launch, no warmup, on the model clock, where the
-- time is deterministic; several elsewhere.
local function time_opts(o)
  return { warmup = o.warmup, reps = o.reps }
end

-- Runs the measurements, filling `res` row by row. `steps` is a list of
-- {label = ..., fields..., run = function() ... end, bytes = n}.
local function run_steps(res, steps, timer, opts)
  local progress = require "progress"
  local bar = progress.new(#steps, "sweep " .. res.title,
    "Ctrl-C keeps the rows so far in cuda.last")
  local elapsed = 0
  local topts = time_opts(opts)
  for i, step in ipairs(steps) do
    bar:update(i - 1, elapsed, step.label)
    local row = step.row
    local ok, t, wall = pcall(measure, timer, step.run, topts)
    if not ok then
      if tostring(t):find("interrupted", 1, true) then bar:finish(); error(t, 0) end
      row.error = error_text(t)
      row.fault = fault_of(row.error)
    else
      row.median, row.min, row.max, res.clock = t.median, t.min, t.max, t.clock or res.clock
      row.reps = t.reps or (t.samples and #t.samples)
      if t.clock == "model" then
        row.model, res.device = t.model, t.device or res.device
        res.reps = row.reps
      end
      if step.bytes and t.median and t.median > 0 then
        row.bytes = step.bytes
        row.gbps = step.bytes / (t.median / 1000) / 1e9
      end
      elapsed = elapsed + (wall or 0)
    end
    res[#res + 1] = row
  end
  bar:finish()
end

-- Which measure ranks rows: time, unless the work differs from row to row
-- (a sweep over array sizes), where the bandwidth reached is the fair one.
local function rank_measure(res)
  local bytes, varies = nil, false
  for _, r in ipairs(res) do
    if r.median then
      if not r.gbps then return "time" end
      if bytes and r.bytes ~= bytes then varies = true end
      bytes = r.bytes
    end
  end
  return varies and "gbps" or "time"
end

-- The best row (fastest, or highest GB/s per rank_measure) and the worst.
local function pick_best(res)
  res.rank = rank_measure(res)
  local better = res.rank == "gbps" and function(a, b) return a.gbps > b.gbps end
    or function(a, b) return a.median < b.median end
  local best, worst
  for _, r in ipairs(res) do
    if r.median then
      if not best or better(r, best) then best = r end
      if not worst or better(worst, r) then worst = r end
    end
  end
  res.best, res.worst = best, worst
  if not best and res[1] then
    -- nothing ran: a mistake in the call, not something a sweep can show
    error("cuda.sweep: no configuration ran; the first failed with: " .. res[1].error, 3)
  end
end

-- Publishes res as cuda.last (see the stance on Ctrl-C) and returns it.
local function publish(res)
  local cuda = rawget(_G, "cuda")
  if type(cuda) == "table" then rawset(cuda, "last", res) end
  return res
end

-- cuda.sweep(kernel, configs, args...): see the header.
local function sweep_kernel(k, configs, ...)
  local args = table.pack(...)
  if type(configs) ~= "table" then
    fail(SIG .. ": argument 2 must be a list of block sizes or {grid, block} pairs, got " ..
      type(configs))
  end
  local auto_bytes, longest = scan_args(args)
  local list = configurations(configs, configs.n or longest)
  local info = k:info()
  -- n: the threads the grids were chosen for, and where that count came from
  local n = list.derived and (configs.n or longest) or nil
  local res = setmetatable({ kind = "kernel", param = "block",
    title = tostring(info.name or k.name), kernel = info.name, partial = true,
    n = n, n_from = n and (configs.n and "n" or "array") or nil,
    bytes = configs.bytes or auto_bytes, clock = nil }, sweep.mt)
  publish(res)
  local occupancy = require "occupancy"
  local steps = {}
  for i, c in ipairs(list) do
    local launch = { c.grid, c.block, shared = configs.shared }
    local row = { label = dim_text(c.block), block = c.block, grid = c.grid,
      threads = occupancy.block_threads(c.block) }
    local ok, occ = pcall(occupancy.occupancy, k, c.block, configs.shared or 0)
    if ok then row.occupancy, row.limit, row.occ = occ.occupancy, occ.limit, occ end
    steps[i] = { label = "block " .. row.label, row = row, bytes = res.bytes,
      run = function() k[launch](table.unpack(args, 1, args.n)) end }
  end
  local cuda = rawget(_G, "cuda")
  run_steps(res, steps, cuda.time, configs)
  res.partial = nil
  pick_best(res)
  return res
end

-- The three items of cuda.sweep{param, values, fn}, checked: by name or by position.
local function generic_items(t)
  local param, values, run = t.param or t[1], t.values or t[2], t.run or t[3]
  if type(param) ~= "string" then
    fail(GSIG .. ": the first item must name the parameter, got " .. type(param))
  end
  if type(values) ~= "table" or #values == 0 then
    fail(GSIG .. ": the second item must be a non-empty list of values")
  end
  if type(run) ~= "function" then
    fail(GSIG .. ": the third item must be the function to time, got " .. type(run))
  end
  return param, values, run
end

-- The step that times run(v, ...) for one value v. setup runs outside the timing
-- (allocations, compiling, filling input), and lazily, on the step's first run, so that a long
-- setup also shows in the progress; its results are run's further arguments. The bytes moved
-- are t.bytes (a number, or a function of v); without it, those of setup's arrays, which are
-- only known once setup has run.
local function generic_step(t, param, v, run)
  local setup, learn_bytes = t.setup, t.setup and t.bytes == nil
  local row = { label = type(v) == "number" and format.count(v) or tostring(v), value = v }
  local step = { label = param .. " " .. row.label, row = row }
  local ready = false
  step.run = function()
    if setup and not ready then
      step.prepared = table.pack(setup(v))
      ready = true
    end
    run(v, table.unpack(step.prepared or {}, 1, step.prepared and step.prepared.n or 0))
    if learn_bytes and not step.bytes then step.bytes = scan_args(step.prepared or { n = 0 }) end
  end
  if type(t.bytes) == "function" then step.bytes = t.bytes(v)
  elseif type(t.bytes) == "number" then step.bytes = t.bytes end
  return step
end

-- Rows whose bytes were learnt during their first run get their GB/s now: run_steps saw no
-- bytes when it timed them.
local function add_learnt_gbps(res, steps)
  for i, row in ipairs(res) do
    local b = steps[i] and steps[i].bytes
    if b and row.median and row.median > 0 and not row.gbps then
      row.bytes, row.gbps = b, b / (row.median / 1000) / 1e9
    end
  end
end

-- cuda.sweep{param, values, fn, setup = , bytes = , clock = "cpu"}: any parameter.
local function sweep_generic(t)
  local param, values, run = generic_items(t)
  local res = setmetatable({ kind = "param", param = param, title = t.title or param,
    partial = true }, sweep.mt)
  publish(res)
  local cuda, cpu = rawget(_G, "cuda"), rawget(_G, "cpu")
  local timer = t.clock == "cpu" and cpu.time or cuda.time
  local steps = {}
  for i, v in ipairs(values) do steps[i] = generic_step(t, param, v, run) end
  run_steps(res, steps, timer, t)
  add_learnt_gbps(res, steps)
  res.partial = nil
  pick_best(res)
  return res
end

function sweep.sweep(...)
  local first = ...
  if type(first) == "table" and getmetatable(first) == nil and select("#", ...) == 1 then
    return sweep_generic(first)
  end
  local ok, info = pcall(function() return first:info() end)
  if not ok or type(info) ~= "table" then
    fail(SIG .. " or " .. GSIG .. ": argument 1 must be a kernel or a table, got " .. type(first))
  end
  return sweep_kernel(...)
end

----------------------------------------------------------------- printing --

local function gbps_text(g)
  if not g then return "" end
  return g >= 100 and string.format("%.0f", g) or string.format("%.1f", g)
end

local LIMIT_WORD = { warps = "threads", blocks = "blocks", registers = "regs", shared = "shared" }

local CLOCK_NOTE = {
  gpu = "median of each, GPU events",
  sim = "median of each, simulator time (the CPU running the simulator), not GPU time",
  cpu = "median of each, CPU clock",
}

-- What the times are, for the footer: on the model clock, modelled time of
-- one launch each (or the median of reps), and what the new column means.
local function clock_note(res)
  if res.clock ~= "model" then
    return CLOCK_NOTE[res.clock] or (res.clock and "median of each, " .. res.clock)
  end
  local words = model.clock_words(res.device)
  return (res.reps or 1) > 1 and "median of each, " .. words or
    words .. "s, one launch each (the model is deterministic)"
end

-- The heading: what was swept and what a row's numbers are.
local function heading(res)
  local parts = {}
  if res.kind == "kernel" then
    parts[#parts + 1] = string.format("%s over %d block sizes", res.title, #res)
    if res.bytes then parts[#parts + 1] = format.bytes(res.bytes) .. " of arrays per launch" end
  else
    parts[#parts + 1] = string.format("%s over %d values", res.title, #res)
  end
  return table.concat(parts, ", ")
end

-- text wrapped to the terminal, continuation lines indented.
local function chart_wrap(text, term)
  return require("chart").wrap(text, term.width() - 1, "  ")
end

-- The closing lines: which row is best and by how much, what the times are.
local function footer(res, term)
  local out = {}
  local best, worst = res.best, res.worst
  local what = res.kind == "kernel" and "block" or res.param
  if best and worst and best ~= worst then
    local x = term.utf8() and "×" or "x"
    if res.rank == "gbps" then
      out[#out + 1] = string.format("Best: %s %s, %s GB/s, %s the slowest rate (%s).", what,
        best.label, gbps_text(best.gbps), format.short(best.gbps / worst.gbps, 2) .. x, worst.label)
    else
      out[#out + 1] = string.format("Best: %s %s, %s faster than the slowest (%s).", what,
        best.label, format.short(worst.median / best.median, 2) .. x, worst.label)
    end
    local why = type(worst.model) == "table" and (worst.model.limit_text or worst.model.limit)
    if res.clock == "model" and why then
      -- the question the sweep raises, answered by the model of the slowest row
      out[#out] = chart_wrap(out[#out]:sub(1, -2) .. ", which is bound by " .. tostring(why) ..
        ".", term)
    end
  end
  local clock = clock_note(res)
  if clock then
    -- only the model's longer note wraps; the others print as they always have
    local line = "Times: " .. clock .. "."
    out[#out + 1] = res.clock == "model" and chart_wrap(line, term) or line
  end
  if res.clock == "model" then
    out[#out + 1] = "Bound by: the limit that sets each time; cuda.last[i].model explains it."
  end
  if res.kind == "kernel" and res.n then
    local basis = res.n_from == "array"
      and "one thread per element of the largest array (" .. format.count(res.n) .. ")"
      or "n = " .. format.count(res.n) .. " threads"
    out[#out + 1] = chart_wrap("Grids: " .. basis .. ", rounded up to whole blocks.", term)
  end
  if res.partial then
    out[#out + 1] = "(partial: " .. #res .. " rows, the sweep was interrupted)"
  end
  return out
end

-- Which columns the table has: grid and occupancy for a kernel's sweep, GB/s where any row
-- has it, "bound by" on the model's clock.
local function columns_of(res)
  local any_gbps = false
  for _, r in ipairs(res) do if r.gbps then any_gbps = true end end
  return { kernel = res.kind == "kernel", gbps = any_gbps, bound = res.clock == "model" }
end

local function header_cells(res, cols)
  local header = { cols.kernel and "block" or res.param }
  if cols.kernel then header[#header + 1] = "grid" end
  header[#header + 1] = "median"
  if cols.gbps then header[#header + 1] = "GB/s" end
  if cols.kernel then header[#header + 1] = "occupancy" end
  if cols.bound then header[#header + 1] = "bound by" end
  return header
end

-- One row's cells; a failed row's are blank but its label, its message replacing them later.
local function row_cells(r, cols)
  local cells = { r.label }
  if cols.kernel then cells[#cells + 1] = dim_text(r.grid) end
  cells[#cells + 1] = r.median and format.time_ms(r.median) or ""
  if cols.gbps then cells[#cells + 1] = gbps_text(r.gbps) end
  if cols.kernel then
    cells[#cells + 1] = r.occupancy and (format.percent(r.occupancy) .. " " ..
      (LIMIT_WORD[r.limit] or "")) or ""
  end
  if cols.bound then
    cells[#cells + 1] = type(r.model) == "table" and model.short(r.model.limit) or ""
  end
  return cells
end

-- The table's lines: aligned columns, each row with a bar of its time (or of its GB/s when
-- rows are ranked by rate) and the best one marked.
local function table_lines(res, cols, chart, term)
  local rows, values, marks = { header_cells(res, cols) }, {}, {}
  for i, r in ipairs(res) do
    rows[i + 1] = row_cells(r, cols)
    if res.rank == "gbps" then
      values[i + 1] = r.gbps
    else
      values[i + 1] = r.median
    end
    marks[i + 1] = r == res.best and #res > 1 and term.paint(chart.best_mark("best"), "green") or
      nil
  end
  local align = cols.kernel and "rrrrl" or (cols.gbps and "rrr" or "rr")
  if cols.bound then align = align .. "l" end
  local lines = chart.columns(rows, align)
  for i = 1, #lines do lines[i] = "  " .. lines[i] end
  return chart.attach(lines, values, marks), term.len(rows[1][1])
end

-- A failed row: the message's first line in the row, its other lines (where a fault
-- happened: kernel, block, thread, line) under it, each cut to the terminal's width.
local function failed_row(r, label_w, chart, term)
  local width = term.width()
  local function fit(line)
    if term.len(line) > width - 1 then
      line = line:sub(1, (utf8.offset(line, width - 3) or #line) - 1) .. "..."
    end
    return term.paint(line, "red")
  end
  local more, first = {}, nil
  for l in (r.error .. "\n"):gmatch("(.-)\n") do
    if not first then first = l elseif l:match("%S") then more[#more + 1] = l end
  end
  local row = { fit("  " .. chart.pad(r.label, label_w, "r") .. "  failed: " .. first) }
  local indent = (" "):rep(label_w + 4)
  for _, l in ipairs(more) do row[#row + 1] = fit(indent .. l:gsub("^%s+", "")) end
  return table.concat(row, "\n")
end

local function tostring_sweep(res)
  local chart, term = require "chart", require "term"
  local lines, label_w = table_lines(res, columns_of(res), chart, term)
  for i, r in ipairs(res) do
    if r.error then lines[i + 1] = failed_row(r, label_w, chart, term) end
  end
  local out = { chart_wrap(heading(res), term), table.concat(lines, "\n") }
  if res.rank == "gbps" then out[#out + 1] = "  (bars: GB/s, longer is better)" end
  for _, l in ipairs(footer(res, term)) do out[#out + 1] = l end
  return table.concat(out, "\n")
end

sweep.mt = { __name = "cudalab.SweepResult", __tostring = tostring_sweep }

return sweep
