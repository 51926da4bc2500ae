-- chart.lua: text charts for the terminal: aligned tables, horizontal bars
-- with eighth-of-a-cell resolution, and stacked bars.
--
-- Used by the printers of cuda.sweep, cuda.occupancy and cuda.versus. Every
-- function returns strings (never prints), so the unit tests check the exact
-- text, and a result's __tostring can be read, logged or pasted.
--
-- Design stance: the chart is a column beside the numbers, not a picture
-- instead of them: a learner reads the value and sees the proportion in one
-- line. Bars fill whatever width the terminal leaves after the table, so a
-- row never wraps. UTF-8 terminals get block elements (█ plus ▏..▉ for the
-- last partial cell: 8 steps per column); anything else gets '#', because a
-- bar of mojibake is worse than a coarse one. Colour is an extra, never the
-- only carrier of meaning: stacked segments also differ in glyph.

local ipairs, math, string, table = ipairs, math, string, table

local term = require "term"

local chart = {}

local floor = math.floor

-- Partial cells, 1/8 to 7/8 of a column (U+258F .. U+2589).
local EIGHTHS = { "▏", "▎", "▍", "▌", "▋", "▊", "▉" }

local function clamp01(x)
  if x ~= x or x < 0 then return 0 end
  return x > 1 and 1 or x
end

-- A bar for `fraction` (0..1) of `width` columns. Any non-zero fraction
-- shows at least the thinnest mark, so "small" never reads as "nothing".
function chart.bar(fraction, width)
  local f = clamp01(fraction)
  if term.utf8() then
    local eighths = floor(f * width * 8 + 0.5)
    if eighths == 0 and f > 0 then eighths = 1 end
    local s = ("█"):rep(eighths // 8)
    if eighths % 8 > 0 then s = s .. EIGHTHS[eighths % 8] end
    return s
  end
  local n = floor(f * width + 0.5)
  if n == 0 and f > 0 then n = 1 end
  return ("#"):rep(n)
end

-- Glyphs of stacked segments, in order: distinct without colour too.
chart.STACK_UTF8 = { "█", "▓", "░", "▒" }
chart.STACK_ASCII = { "#", "=", ".", "+" }
chart.STACK_COLORS = { "yellow", "green", "cyan", "magenta" }

-- Cells per segment: boundaries are rounded cumulatively (so the total is
-- exact), then every non-zero segment gets at least one cell, taken from the
-- widest; a 0.03 ms kernel between two 5 ms copies must stay visible.
local function segment_cells(values, scale, width)
  local cells, cum, prev = {}, 0, 0
  for i, v in ipairs(values) do
    cum = cum + (v > 0 and v or 0)
    local edge = floor(clamp01(cum / scale) * width + 0.5)
    cells[i], prev = edge - prev, edge
  end
  for i, v in ipairs(values) do
    if v > 0 and cells[i] == 0 then
      local widest = 1
      for j = 2, #cells do if cells[j] > cells[widest] then widest = j end end
      if cells[widest] > 1 then cells[widest], cells[i] = cells[widest] - 1, 1 end
    end
  end
  return cells
end

-- A bar made of segments: values are drawn end to end, `scale` is the value
-- that fills `width` columns. Returns the string and the glyph of each segment
-- (for a legend).
function chart.stacked(values, scale, width)
  local glyphs = term.utf8() and chart.STACK_UTF8 or chart.STACK_ASCII
  local cells = segment_cells(values, scale, width)
  local parts = {}
  for i, n in ipairs(cells) do
    local g = glyphs[(i - 1) % #glyphs + 1]
    parts[i] = term.paint(g:rep(n), chart.STACK_COLORS[(i - 1) % #chart.STACK_COLORS + 1])
  end
  local legend = {}
  for i = 1, #values do legend[i] = glyphs[(i - 1) % #glyphs + 1] end
  return table.concat(parts), legend
end

-- s padded with spaces to `width` display columns, on the left ("r") or right.
function chart.pad(s, width, align)
  local gap = width - term.len(s)
  if gap <= 0 then return s end
  return align == "r" and (" "):rep(gap) .. s or s .. (" "):rep(gap)
end

-- Aligned columns: `rows` is a list of lists of strings (the header row too),
-- `align` a string with one "l" or "r" per column ("lrr"). Two spaces between
-- columns; trailing spaces trimmed. Returns the lines and the columns' widths.
function chart.columns(rows, align)
  local widths = {}
  for _, row in ipairs(rows) do
    for c, cell in ipairs(row) do
      local w = term.len(cell)
      if w > (widths[c] or 0) then widths[c] = w end
    end
  end
  local lines = {}
  for r, row in ipairs(rows) do
    local cells = {}
    for c, cell in ipairs(row) do
      cells[c] = chart.pad(cell, widths[c], align:sub(c, c) == "r" and "r" or "l")
    end
    lines[r] = (table.concat(cells, "  "):gsub("%s+$", ""))
  end
  return lines, widths
end

-- Appends a bar to each line: lines[i] gets bar(values[i] / max) in the
-- columns the terminal has left, then marks[i] (" ◀ best") if any. Lines
-- without a value (a failed configuration) are left as they are. The bars
-- start at one column, so they line up however long each line is.
function chart.attach(lines, values, marks)
  local prefix, mark_w, max = 0, 0, 0
  for i, line in ipairs(lines) do
    if term.len(line) > prefix then prefix = term.len(line) end
    if marks and marks[i] then mark_w = math.max(mark_w, term.len(marks[i])) end
    local v = values[i]
    if v and v == v and v > max then max = v end
  end
  local width = math.max(10, term.width() - prefix - 2 - mark_w - 1)
  local out = {}
  for i, line in ipairs(lines) do
    local v = values[i]
    if v and max > 0 then
      line = chart.pad(line, prefix, "l") .. "  " .. chart.bar(v / max, width)
      if marks and marks[i] then line = line .. marks[i] end
    end
    out[i] = line
  end
  return out
end

-- The marker that points at the best row: an arrow, or "<" without UTF-8.
function chart.best_mark(text)
  return (term.utf8() and " ◀ " or " <- ") .. text
end

-- "12.3" with at most `digits` significant digits, for axis ticks and cells.
function chart.num(x, digits)
  return (string.format("%." .. (digits or 3) .. "g", x))
end

-- text broken into lines of at most `width` columns at spaces (a word longer
-- than that gets a line of its own), each line after the first indented.
function chart.wrap(text, width, indent)
  indent = indent or ""
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and term.len(line) + 1 + term.len(word) > width then
      lines[#lines + 1] = line
      line = indent .. word
    else
      line = line == "" and word or line .. " " .. word
    end
  end
  if line ~= "" then lines[#lines + 1] = line end
  return table.concat(lines, "\n")
end

return chart
