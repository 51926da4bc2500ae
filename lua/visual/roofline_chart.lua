-- roofline_chart.lua: the terminal picture of a cuda.roofline result: a
-- log-log grid with the memory roof, the FP32 and FP64 roofs, their ridge
-- points and a letter per kernel, then a table that names each letter with
-- its figures.
--
-- Used by the result's __tostring (roofline.lua). Returns a string, never
-- prints, so the unit tests check the exact text.
--
-- Design stance: a roofline only reads on log-log axes (intensities span
-- four decades, rates five), so both axes step by decades and the ticks are
-- powers of ten. The grid is a character canvas of the terminal's width; a
-- point is one letter, with its name beside it where the cells are free, and
-- the table below always carries every name and figure, so crowding in the
-- picture never hides a number. Glyphs are distinct without colour ("/" for
-- the memory roof, "─" FP32, "╌" FP64, "*" ridge; "-", "." in ASCII).

local ipairs, math, string, table, utf8 = ipairs, math, string, table, utf8

local chart = require "chart"
local format = require "format"
local model = require "model"
local term = require "term"

local rc = {}

local LABEL_W = 8 -- "100,000 " before the axis
local LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

local log10 = function(x) return math.log(x, 10) end
local floor, ceil = math.floor, math.ceil

-- The letter of point i ("?" past 52 points: the table still names them).
function rc.letter(i)
  return i <= #LETTERS and LETTERS:sub(i, i) or "?"
end

-- "0.083 FLOP/byte, 231 GFLOP/s, 65% of the memory roof": one point in words
-- (the table's narrow form, and the SVG's tooltip).
function rc.describe(q)
  return string.format("%s FLOP/byte, %s GFLOP/s, %s of the %s roof, bound by %s",
    format.short(q.intensity, 3), format.count(math.floor(q.gflops + 0.5)),
    format.percent(math.floor(q.of_roof * 1000 + 0.5) / 1000),
    q.bound == "memory" and "memory" or q.precision:upper(), q.bound_text)
end

-- Decades to show on each axis: every point, both ridges and both roofs,
-- with room around them.
function rc.ranges(r)
  local p = r.peaks
  local xmin, xmax = r.ridge.fp64, r.ridge.fp32
  local ymin, ymax = math.huge, p.fp32_gflops
  for _, q in ipairs(r) do
    xmin, xmax = math.min(xmin, q.intensity), math.max(xmax, q.intensity)
    ymin, ymax = math.min(ymin, q.gflops), math.max(ymax, q.gflops)
  end
  local xlo, xhi = floor(log10(xmin / 2)), ceil(log10(xmax * 2))
  local yhi = ceil(log10(ymax * 1.05))
  local ylo = math.min(floor(log10(ymin / 2)), yhi - 2)
  -- the memory roof must enter the picture at its left edge
  ylo = math.min(ylo, floor(log10(p.dram_gbs * 10 ^ xlo)))
  return { xlo = xlo, xhi = xhi, ylo = ylo, yhi = yhi }
end

-- The canvas: `h` rows of `w` blank cells, and the maps from values to cells.
local function canvas(g, w, h)
  g.w, g.h, g.cells, g.taken = w, h, {}, {} -- taken: y * 1000 + x of letters and names
  for y = 1, h do
    g.cells[y] = {}
    for x = 1, w do g.cells[y][x] = " " end
  end
  g.col = function(v)
    return floor((log10(v) - g.xlo) / (g.xhi - g.xlo) * (w - 1) + 0.5) + 1
  end
  g.row = function(v)
    return floor((g.yhi - log10(v)) / (g.yhi - g.ylo) * (h - 1) + 0.5) + 1
  end
  g.x_at = function(c) return 10 ^ (g.xlo + (c - 1) / (w - 1) * (g.xhi - g.xlo)) end
  return g
end

local function put(g, y, x, s)
  if y >= 1 and y <= g.h and x >= 1 and x <= g.w then g.cells[y][x] = s end
end

-- The roofs, one column at a time: FP64 first so FP32 wins where they meet.
local function draw_roofs(g, r, utf)
  local flat = { fp64 = utf and "╌" or ".", fp32 = utf and "─" or "-" }
  for _, prec in ipairs({ "fp64", "fp32" }) do
    local peak = r.peaks[prec .. "_gflops"]
    for c = 1, g.w do
      local bw = r.peaks.dram_gbs * g.x_at(c)
      put(g, g.row(math.min(bw, peak)), c, bw < peak and "/" or flat[prec])
    end
  end
end

-- Writes s into row y from column x on, only over blank cells, and marks
-- them taken (a point's letter never lands on them); false, writing
-- nothing, if any cell was not blank or s would run off the canvas.
local function write_free(g, y, x, s)
  local chars = {}
  for _, cp in utf8.codes(s) do chars[#chars + 1] = utf8.char(cp) end
  if y < 1 or y > g.h or x < 1 or x + #chars - 1 > g.w then return false end
  for i = 1, #chars do if g.cells[y][x + i - 1] ~= " " then return false end end
  for i, ch in ipairs(chars) do
    g.cells[y][x + i - 1] = ch
    g.taken[y * 1000 + x + i - 1] = true
  end
  return true
end

-- Names the flat roofs at their right end, above the line where it is free.
local function label_roofs(g, r)
  local y32, y64 = g.row(r.peaks.fp32_gflops), g.row(r.peaks.fp64_gflops)
  if y32 == y64 then
    write_free(g, y32 - 1, g.w - 8, "FP32/64")
    return
  end
  write_free(g, y32 - 1, g.w - 4, "FP32")
  if not write_free(g, y64 + 1, g.w - 4, "FP64") then write_free(g, y64 - 1, g.w - 4, "FP64") end
end

-- The ridge points: "*" where each flat roof meets the memory roof.
local function draw_ridges(g, r)
  for _, prec in ipairs({ "fp64", "fp32" }) do
    put(g, g.row(r.peaks[prec .. "_gflops"]), g.col(r.ridge[prec]), "*")
  end
end

-- Where a point's letter goes: its own cell, else the nearest free one
-- around it (above and below first: a neighbour on the same row is likely
-- a point of the same intensity), else the first free cell to its right.
local NEAR = { { 0, 0 }, { -1, 0 }, { 1, 0 }, { 0, 1 }, { 0, -1 }, { -1, 1 }, { 1, 1 }, { -1,
  -1 }, { 1, -1 } }
local function free_cell(g, y, x)
  for _, d in ipairs(NEAR) do
    local yy, xx = y + d[1], x + d[2]
    if yy >= 1 and yy <= g.h and xx >= 1 and xx <= g.w and not g.taken[yy * 1000 + xx] then
      return yy, xx
    end
  end
  while g.taken[y * 1000 + x] and x < g.w do x = x + 1 end
  return y, x
end

-- The points: a letter each, then each name beside its letter where the
-- cells are free (letters first, so no name pushes a letter away).
local function draw_points(g, r)
  local at = {}
  for i, q in ipairs(r) do
    local y, x = free_cell(g, g.row(q.gflops), g.col(q.intensity))
    g.taken[y * 1000 + x] = true
    put(g, y, x, term.paint(rc.letter(i), "yellow"))
    at[i] = { y, x }
  end
  for i, q in ipairs(r) do
    local name = q.name
    if utf8.len(name) == nil then name = name:gsub("[\128-\255]", "?") end
    if term.len(name) > 14 then name = name:sub(1, utf8.offset(name, 14) - 1) .. "~" end
    -- right of the letter, else left of it (near the right edge, or a roof label)
    if not write_free(g, at[i][1], at[i][2] + 1, " " .. name) then
      write_free(g, at[i][1], at[i][2] - term.len(name) - 1, name .. " ")
    end
  end
end

-- The y axis labels: GFLOP/s at each decade's row.
local function y_label(g, y)
  for k = g.ylo, g.yhi do
    if g.row(10 ^ k) == y then return format.count(10 ^ k) end
  end
  return ""
end

-- The bottom axis and its decade labels.
local function x_axis(g, utf)
  local line, labels = {}, {}
  for c = 1, g.w do line[c], labels[c] = utf and "─" or "-", " " end
  local last = -1
  for k = g.xlo, g.xhi do
    local c = g.col(10 ^ k)
    line[c] = utf and "┬" or "+"
    local s = format.short(10 ^ k, 3)
    local start = math.max(1, math.min(c - #s // 2, g.w - #s + 1))
    if start > last + 1 then
      for i = 1, #s do labels[start + i - 1] = s:sub(i, i) end
      last = start + #s - 1
    end
  end
  local pad = (" "):rep(LABEL_W)
  return pad .. (utf and "└" or "+") .. table.concat(line), pad .. " " .. table.concat(labels)
end

-- The canvas as lines, with the y axis.
local function grid_lines(g, utf)
  local out = { "GFLOP/s" }
  for y = 1, g.h do
    local label = y_label(g, y)
    local axis = label ~= "" and (utf and "┤" or "+") or (utf and "│" or "|")
    out[#out + 1] = (chart.pad(label, LABEL_W - 1, "r") .. " " .. axis ..
      table.concat(g.cells[y])):gsub("%s+$", "")
  end
  local axis, labels = x_axis(g, utf)
  out[#out + 1] = axis
  out[#out + 1] = labels:gsub("%s+$", "")
  local title = "FLOP per byte of DRAM traffic (arithmetic intensity)"
  if LABEL_W + 1 + #title > LABEL_W + 1 + g.w then title = "FLOP per DRAM byte" end
  out[#out + 1] = (" "):rep(LABEL_W + 1) .. title
  return out
end

-- The picture alone (a list of lines), for a terminal `width` columns wide.
function rc.picture(r, width)
  local utf = term.utf8()
  local g = rc.ranges(r)
  local h = math.max(9, math.min(25, 4 * (g.yhi - g.ylo) + 1))
  canvas(g, width - LABEL_W - 1, h)
  draw_roofs(g, r, utf)
  label_roofs(g, r)
  draw_ridges(g, r)
  draw_points(g, r)
  return grid_lines(g, utf)
end

-- The table under the picture: a row per point; on a terminal too narrow
-- for its columns, two lines per point, the figures in words.
local function legend(r, width)
  local rows = { { "", "kernel", "FLOP/byte", "GFLOP/s", "of its roof", "bound by" } }
  for i, q in ipairs(r) do
    rows[#rows + 1] = { rc.letter(i), q.name, format.short(q.intensity, 3),
      format.count(floor(q.gflops + 0.5)), format.percent(floor(q.of_roof * 1000 + 0.5) / 1000),
      q.bound_text }
  end
  local lines = chart.columns(rows, "llrrrl")
  local widest = 0
  for i = 1, #lines do
    lines[i] = "  " .. lines[i]
    widest = math.max(widest, term.len(lines[i]))
  end
  if widest <= width then return lines end
  lines = {}
  for i, q in ipairs(r) do
    lines[#lines + 1] = "  " .. rc.letter(i) .. "  " .. q.name
    lines[#lines + 1] = "     " .. chart.wrap(rc.describe(q), width - 5, "     ")
  end
  return lines
end

-- The heading: the device and its roofs.
local function heading(r, width)
  local p = r.peaks
  local s = string.format("%s on the roofline of the %s: DRAM %s GB/s, FP32 %s GFLOP/s, " ..
    "FP64 %s GFLOP/s",
    r.title or "Kernels", model.device(p.device), format.count(floor(p.dram_gbs + 0.5)),
    format.count(floor(p.fp32_gflops + 0.5)), format.count(floor(p.fp64_gflops + 0.5)))
  return chart.wrap(s, width, "  ")
end

-- The notes: ridge points, and what the times are.
local function footer(r, width)
  local out = {}
  out[#out + 1] = chart.wrap(string.format("* ridge points: FP32 at %s, FP64 at %s " ..
    "FLOP/byte. Left of " ..
    "a ridge memory bandwidth sets the roof; right of it, arithmetic.",
      format.short(r.ridge.fp32, 3),
    format.short(r.ridge.fp64, 3)), width, "  ")
  local words = r.clock == "model" and model.clock_words(r.peaks.device) .. " (simulator), " ..
    "FLOPs and DRAM bytes counted by the simulator unless given" or
    "times as measured, FLOPs and bytes as given"
  out[#out + 1] = chart.wrap("Roofs: the timing model's peaks, measured on an H200. Points: " ..
    words .. ".", width, "  ")
  for _, q in ipairs(r) do
    if q.of_roof > 1.001 then
      -- no kernel can; the figures are what is wrong, and this is the likely way
      out[#out + 1] = chart.wrap("Above its roof: " .. q.name ..
        ". It moved fewer DRAM bytes than " ..
        "given (its data stayed in the L2 cache), or its FLOPs, bytes or time are " ..
          "off.", width, "  ")
    end
  end
  return out
end

-- The whole printout of a roofline result.
function rc.text(r)
  local width = term.width() - 1
  local out = { heading(r, width) }
  for _, l in ipairs(rc.picture(r, width)) do out[#out + 1] = l end
  for _, l in ipairs(legend(r, width)) do out[#out + 1] = l end
  for _, l in ipairs(footer(r, width)) do out[#out + 1] = l end
  return table.concat(out, "\n")
end

return rc
