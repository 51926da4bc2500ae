-- timeline.lua: cuda.timeline(fn): what ran while fn ran, per stream, as a
-- table, a chart in the terminal and (through cuda.plot) an SVG.
--
-- The recording is C's (bind_stream.c, cuda._timeline): each copy and launch
-- with its stream, kind, direction, bytes, pinned or not, kernel name, and
-- start and stop in ms from the moment fn began. On the simulator these are
-- the modelled H200's times, on a GPU events recorded around each operation.
--
-- Design stance: one row per stream, time running left to right, as Nsight
-- Systems draws it, so overlap is seen, not computed: two rows with marks in
-- the same columns ran at the same time. Each kind of work has its own glyph
-- (copies in '>' and out '<', kernels '#', or block shades on UTF-8), colour
-- only adds to that. A column shows the operation that fills most of it, and
-- no operation, however short, disappears: it keeps at least the column it
-- starts in. The chart fits term.width(); the numbers stay in tl.ops.

local error, ipairs, math, pairs, rawget, setmetatable, string, table, type =
  error, ipairs, math, pairs, rawget, setmetatable, string, table, type

local format = require "format"
local model = require "model"
local term = require "term"

local timeline = {}

local MT = { __name = "cudalab.Timeline" }

-- Glyphs and colours of each kind of operation: {utf8, ascii, colour, words}.
timeline.STYLE = {
  H2D = { "▓", ">", "cyan", "copy host to device" },
  D2H = { "░", "<", "magenta", "copy device to host" },
  D2D = { "▒", "=", "blue", "copy on the device" },
  kernel = { "█", "#", "yellow", "kernel" },
}

local function style_of(op)
  return timeline.STYLE[op.dir or "kernel"] or timeline.STYLE.kernel
end

-- "default" for stream 0, else "stream N".
function timeline.label(id)
  return id == 0 and "default" or "stream " .. id
end

-- Groups ops by stream: a list of {id, label, ops}, the default stream first.
local function by_stream(ops)
  local rows, at = {}, {}
  for _, op in ipairs(ops) do
    local row = at[op.stream]
    if not row then
      row = { id = op.stream, label = timeline.label(op.stream), ops = {} }
      at[op.stream] = row
      rows[#rows + 1] = row
    end
    row.ops[#row.ops + 1] = op
  end
  table.sort(rows, function(a, b) return a.id < b.id end)
  return rows
end

-- cuda.timeline(fn) -> Timeline {ops, streams, total, clock, device}.
function timeline.timeline(fn)
  if type(fn) ~= "function" then
    error("cuda.timeline(fn): fn must be a function that queues copies and launches, got " ..
      "" .. type(fn), 2)
  end
  local cuda = rawget(_G, "cuda")
  local ops, clock = cuda._timeline(fn)
  local total = 0
  for _, op in ipairs(ops) do
    if op.stop > total then total = op.stop end
  end
  -- on the model clock the device is the one the model describes (model.device's default)
  local dev = clock ~= "model" and cuda.device().name or nil
  return setmetatable({ ops = ops, streams = by_stream(ops), total = total, clock = clock,
                        device = dev }, MT)
end

-- Which op fills most of cell [a, b) of a row; nil when none touches it.
local function cell_owner(ops, a, b)
  local best, most = nil, 0
  for _, op in ipairs(ops) do
    local overlap = math.min(op.stop, b) - math.max(op.start, a)
    if overlap > most then best, most = op, overlap end
  end
  return best
end

-- One stream's row of `width` cells over [0, total].
local function row_cells(ops, total, width)
  local cells, dt = {}, total / width
  for j = 1, width do cells[j] = cell_owner(ops, (j - 1) * dt, j * dt) end
  for _, op in ipairs(ops) do -- a short op keeps the cell it starts in
    local seen = false
    for j = 1, width do seen = seen or cells[j] == op end
    local j = math.min(width, math.floor(op.start / dt) + 1)
    if not seen and not cells[j] then cells[j] = op end
  end
  return cells
end

local function paint_cells(cells, width)
  local utf8 = term.utf8()
  local out = {}
  for j = 1, width do
    local op = cells[j]
    if op then
      local st = style_of(op)
      out[j] = term.paint(utf8 and st[1] or st[2], st[3])
    else
      out[j] = " "
    end
  end
  return (table.concat(out):gsub("%s+$", ""))
end

-- The time axis under the rows: "0" at the left and the total at the right.
local function axis(label_w, width, total)
  local unit = format.time_unit(total)
  local left, right = "0", format.time_ms(total, unit)
  local gap = math.max(1, width - #left - term.len(right))
  return (" "):rep(label_w + 2) .. left .. (" "):rep(gap) .. right
end

-- What each glyph means, for the kinds that occur.
local function legend(ops)
  local seen, parts = {}, {}
  for _, op in ipairs(ops) do seen[op.dir or "kernel"] = true end
  for _, k in ipairs({ "H2D", "kernel", "D2H", "D2D" }) do
    if seen[k] then
      local st = timeline.STYLE[k]
      parts[#parts + 1] = term.paint(term.utf8() and st[1] or st[2], st[3]) .. " " .. st[4]
    end
  end
  return table.concat(parts, "   ")
end

-- The chart as a string (what print(tl) shows).
function timeline.chart(tl)
  local words = tl.clock == "model" and model.clock_words(tl.device) or "GPU time"
  local lines = { string.format("timeline: %d operation%s on %d stream%s in %s (%s)", #tl.ops,
    #tl.ops == 1 and "" or "s", #tl.streams, #tl.streams == 1 and "" or "s",
      format.time_ms(tl.total), words) }
  if #tl.ops == 0 or not (tl.total > 0) then
    lines[#lines + 1] = "  nothing ran on the device"
    return table.concat(lines, "\n")
  end
  local label_w = 0
  for _, row in ipairs(tl.streams) do label_w = math.max(label_w, #row.label) end
  local width = math.max(20, term.width() - label_w - 4)
  for _, row in ipairs(tl.streams) do
    local cells = row_cells(row.ops, tl.total, width)
    lines[#lines + 1] = string.format("%-" .. label_w .. "s %s", row.label,
      term.utf8() and "│" or "|")
      .. paint_cells(cells, width)
  end
  lines[#lines + 1] = axis(label_w, width, tl.total)
  lines[#lines + 1] = legend(tl.ops)
  return table.concat(lines, "\n")
end

MT.__tostring = timeline.chart
MT.__index = { chart = timeline.chart }

-- The SVG text of a timeline, for cuda.plot (svg.lua calls it with its helpers).
function timeline.svg(tl, opts, h)
  local W, LEFT, RIGHT, TOP, ROW = 720, 90, 24, 56, 34
  local H = TOP + ROW * math.max(1, #tl.streams) + 70
  local out = {}
  local words = tl.clock == "model" and model.clock_words(tl.device) or "GPU time"
  h.header(out, opts.title or ("timeline (" .. words .. ")"), W, H)
  local pw = W - LEFT - RIGHT
  local unit, scale = format.time_unit(tl.total)
  local ticks, top = h.ticks(tl.total / scale)
  local ybottom = TOP + ROW * #tl.streams
  for _, t in ipairs(ticks) do
    local x = LEFT + t / top * pw
    out[#out + 1] = string.format('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>',
      h.num(x), TOP - 6, h.num(x), ybottom)
    h.text(out, x, ybottom + 16, format.short(t, 3), 'text-anchor="middle"')
  end
  h.text(out, LEFT + pw / 2, ybottom + 36, "time (" .. unit .. ")", 'text-anchor="middle"')
  local colors = { H2D = "#4e79a7", D2H = "#e15759", D2D = "#76b7b2", kernel = "#f28e2b" }
  for r, row in ipairs(tl.streams) do
    local y = TOP + (r - 1) * ROW
    h.text(out, LEFT - 8, y + ROW / 2 + 4, row.label, 'text-anchor="end" font-weight="bold"')
    for _, op in ipairs(row.ops) do
      local x = LEFT + op.start / scale / top * pw
      local w = math.max((op.stop - op.start) / scale / top * pw, 1)
      local what = op.dir and string.format("%s %s (%s)", op.dir, format.bytes(op.bytes),
        op.pinned and "pinned" or "pageable") or ("kernel " .. (op.name or "?"))
      local tip = string.format("%s: %s to %s", what, format.time_ms(op.start),
        format.time_ms(op.stop))
      out[#out + 1] = string.format('<rect x="%s" y="%d" width="%s" height="%d" ' ..
        'fill="%s"><title>%s</title></rect>',
        h.num(x), y + 4, h.num(w), ROW - 8, colors[op.dir or "kernel"], h.escape(tip))
    end
  end
  local lx = LEFT
  for _, k in ipairs({ "H2D", "kernel", "D2H" }) do
    out[#out + 1] = string.format('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>', lx,
      H - 22, colors[k])
    h.text(out, lx + 18, H - 12, timeline.STYLE[k][4])
    lx = lx + 190
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

return timeline
