-- svg.lua: cuda.plot(result, "file.svg" [, {kind = "bars" | "lines", title = ...}]):
-- a sweep, a CPU-against-GPU result, a roofline or a timeline (drawn by timeline.lua) as
-- an SVG chart for slides and handouts.
--
-- Design stance: hand-written SVG 1.1, no library and no scripts: a white
-- background, labelled axes with their units, round-number ticks, the best
-- row in another colour, and a <title> on every bar or point so a browser
-- shows the exact value on hover. Text is XML-escaped, the file is UTF-8
-- (µs stays µs), and it is written to a temporary name and renamed, so a
-- failed plot never leaves half a file where a good one was. svg.render
-- returns the text, which is what the unit tests check. A result on the
-- simulator's model clock says "modelled H200 time" in its title and on its
-- time axis, so a chart pasted into slides cannot pass for a measurement.

local error, io, ipairs, math, os, rawget = error, io, ipairs, math, os, rawget
local getmetatable, string, table, tostring, type = getmetatable, string, table, tostring, type

local format = require "format"
local model = require "model"

local svg = {}

local W, H = 720, 420                           -- canvas
local LEFT, RIGHT, TOP, BOTTOM = 80, 24, 48, 64 -- plot margins
local BAR, BEST, ALT = "#4e79a7", "#59a14f", { "#f28e2b", "#4e79a7", "#76b7b2", "#e15759" }

local ESC = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;" }

-- s made safe inside XML text and attribute values.
function svg.escape(s)
  return (tostring(s):gsub("[&<>\"']", ESC))
end

-- Round-number ticks from 0 to at least max: steps of 1, 2 or 5 x 10^k,
-- about five of them.
function svg.ticks(max)
  if not (max > 0) then return { 0, 1 }, 1 end
  local raw = max / 5
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag
  for _, m in ipairs({ 1, 2, 5, 10 }) do
    if m * mag >= raw then step = m * mag; break end
  end
  local ticks, v = {}, 0
  repeat
    ticks[#ticks + 1] = v
    v = v + step
  until ticks[#ticks] >= max - step * 1e-9
  return ticks, ticks[#ticks]
end

local function num(x)
  local s = string.format("%.6g", x)
  return s
end

local function text(out, x, y, s, attrs)
  out[#out + 1] = string.format('<text x="%s" y="%s"%s>%s</text>', num(x), num(y),
    attrs and " " .. attrs or "", svg.escape(s))
end

-- Axes, gridlines and tick labels for a vertical value axis of 0..top.
local function value_axis(out, ticks, top, label)
  local ph = H - TOP - BOTTOM
  for _, t in ipairs(ticks) do
    local y = TOP + ph - t / top * ph
    out[#out + 1] = string.format('<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>',
      LEFT, num(y), W - RIGHT, num(y))
    text(out, LEFT - 8, y + 4, format.short(t, 3), 'text-anchor="end"')
  end
  out[#out + 1] = string.format('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>',
    LEFT, TOP, LEFT, H - BOTTOM)
  out[#out + 1] = string.format('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>',
    LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM)
  text(out, 18, TOP + ph / 2, label,
    string.format('text-anchor="middle" transform="rotate(-90 18 %s)"', num(TOP + ph / 2)))
end

-- The document's start; w and h default to the charts' usual canvas.
local function header(out, title, w, h)
  w, h = w or W, h or H
  out[#out + 1] = '<?xml version="1.0" encoding="UTF-8"?>'
  out[#out + 1] = string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" ' ..
    'viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
    w, h, w, h)
  out[#out + 1] = string.format('<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>', w, h)
  text(out, w / 2, 28, title, 'text-anchor="middle" font-size="16" font-weight="bold"')
end

-- A sweep: one bar (or point) per row, time or GB/s upwards.
local function sweep_chart(res, opts)
  local rate = res.rank == "gbps"
  local rows, max = {}, 0
  for _, r in ipairs(res) do
    local v = rate and r.gbps or r.median
    if v then rows[#rows + 1] = { r = r, v = v }; if v > max then max = v end end
  end
  if #rows == 0 then error("cuda.plot: the sweep has no measured rows to plot", 3) end
  local unit, scale = "GB/s", 1
  if not rate then unit, scale = format.time_unit(max) end
  local ticks, top = svg.ticks(max / scale)
  local out = {}
  local what = res.kind == "kernel" and "threads per block" or res.param
  local modelled = res.clock == "model" and model.clock_words(res.device)
  local time_words = modelled or "median time"
  local title = res.title .. ": " .. (rate and "bandwidth" or time_words) .. " by " .. what
  if rate and modelled then title = title .. " (" .. modelled .. ")" end
  header(out, opts.title or title)
  value_axis(out, ticks, top, rate and "effective bandwidth (GB/s" ..
    (modelled and ", " .. modelled or "") .. ")" or time_words .. " (" .. unit .. ")")
  local pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
  local slot = pw / #rows
  local lines = opts.kind == "lines"
  local points = {}
  for i, row in ipairs(rows) do
    local cx = LEFT + slot * (i - 0.5)
    local h = row.v / scale / top * ph
    local color = row.r == res.best and BEST or BAR
    local m = row.r.model
    local tip = svg.escape(row.r.label .. ": " .. (rate and format.short(row.v, 3) .. " GB/s"
      or format.time_ms(row.v)) .. (modelled and type(m) == "table" and m.limit_text and
      ", bound by " .. m.limit_text or ""))
    if lines then
      points[#points + 1] = num(cx) .. "," .. num(TOP + ph - h)
      out[#out + 1] = string.format('<circle cx="%s" cy="%s" r="4" ' ..
        'fill="%s"><title>%s</title></circle>',
        num(cx), num(TOP + ph - h), color, tip)
    else
      local bw = math.min(slot * 0.7, 80)
      out[#out + 1] = string.format('<rect x="%s" y="%s" width="%s" height="%s" ' ..
        'fill="%s"><title>%s</title></rect>',
        num(cx - bw / 2), num(TOP + ph - h), num(bw), num(h), color, tip)
    end
    text(out, cx, H - BOTTOM + 18, row.r.label, 'text-anchor="middle"')
  end
  if lines then
    table.insert(out, #out - #rows * 2 + 1, string.format(
      '<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>',
        table.concat(points, " "), BAR))
  end
  text(out, LEFT + pw / 2, H - 18, what .. (res.best and "   (green: best, " ..
    res.best.label .. ")" or ""),
    'text-anchor="middle"')
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

-- CPU against GPU: two horizontal bars on one time axis, the GPU's stacked.
local function versus_chart(res, opts)
  local max = math.max(res.cpu.median, res.gpu)
  local unit, scale = format.time_unit(max)
  local ticks, top = svg.ticks(max / scale)
  local out = {}
  local modelled = res.clock == "model" and model.clock_words(res.device)
  header(out, opts.title or (modelled and "CPU against GPU (" .. modelled .. "), end to end" or
    "CPU against GPU, end to end"))
  local pw = W - LEFT - RIGHT
  local bh, y = 70, { TOP + 40, TOP + 160 }
  for _, t in ipairs(ticks) do
    local x = LEFT + t / top * pw
    out[#out + 1] = string.format('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>',
      num(x), TOP + 20, num(x), H - BOTTOM)
    text(out, x, H - BOTTOM + 18, format.short(t, 3), 'text-anchor="middle"')
  end
  out[#out + 1] = string.format('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>',
    LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM)
  text(out, LEFT + pw / 2, H - 18, "time (" .. unit .. ")" .. (modelled and
    ": GPU " .. modelled .. ", CPU measured on this machine" or ""), 'text-anchor="middle"')
  local function bar(x, yy, ms, color, tip)
    local w = math.max(ms / scale / top * pw, 1)
    out[#out + 1] = string.format('<rect x="%s" y="%d" width="%s" height="%d" ' ..
      'fill="%s"><title>%s</title></rect>',
      num(x), yy, num(w), bh, color, svg.escape(tip))
    return x + w
  end
  text(out, LEFT - 8, y[1] + bh / 2 + 4, "CPU", 'text-anchor="end" font-weight="bold"')
  bar(LEFT, y[1], res.cpu.median, "#bab0ac", "CPU: " .. format.time_ms(res.cpu.median))
  text(out, LEFT - 8, y[2] + bh / 2 + 4, "GPU", 'text-anchor="end" font-weight="bold"')
  local x = LEFT
  for i, s in ipairs(res.stages) do
    x = bar(x, y[2], s.median, ALT[(i - 1) % #ALT + 1], s.label .. ": " .. format.time_ms(s.median))
    local lx = LEFT + (i - 1) * 180
    out[#out + 1] = string.format('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>',
      lx, y[2] + bh + 14, ALT[(i - 1) % #ALT + 1])
    text(out, lx + 18, y[2] + bh + 24, s.label .. " " .. format.time_ms(s.median))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

-- A roofline: log-log axes by decades, the memory roof rising to each flat
-- compute roof (FP64 dashed), a star at each ridge point, a labelled dot per
-- kernel whose <title> gives its figures.
local function roofline_chart(res, opts)
  local g = require("roofline_chart").ranges(res)
  local pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
  local function px(v) return LEFT + (math.log(v, 10) - g.xlo) / (g.xhi - g.xlo) * pw end
  local function py(v) return TOP + ph - (math.log(v, 10) - g.ylo) / (g.yhi - g.ylo) * ph end
  local out = {}
  local p = res.peaks
  local modelled = res.clock == "model" and model.clock_words(p.device)
  header(out, opts.title or ((res.title or "Kernels") .. " on the " .. model.device(p.device) ..
    " roofline" ..
    (modelled and " (" .. modelled .. ")" or "")))
  for k = g.xlo, g.xhi do
    out[#out + 1] = string.format('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>',
      num(px(10 ^ k)), TOP,
      num(px(10 ^ k)), H - BOTTOM)
    text(out, px(10 ^ k), H - BOTTOM + 18, format.short(10 ^ k, 3), 'text-anchor="middle"')
  end
  for k = g.ylo, g.yhi do
    out[#out + 1] = string.format('<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>', LEFT,
      num(py(10 ^ k)),
      W - RIGHT, num(py(10 ^ k)))
    text(out, LEFT - 8, py(10 ^ k) + 4, format.count(10 ^ k), 'text-anchor="end"')
  end
  out[#out + 1] = string.format('<path d="M%d %d V%d H%d" fill="none" stroke="#333"/>', LEFT, TOP,
    H - BOTTOM, W - RIGHT)
  text(out, LEFT + pw / 2, H - 18, "arithmetic intensity (FLOP per byte of DRAM traffic)",
    'text-anchor="middle"')
  text(out, 18, TOP + ph / 2, "GFLOP/s achieved", string.format(
    'text-anchor="middle" transform="rotate(-90 18 %s)"', num(TOP + ph / 2)))
  local xl, xr = 10 ^ g.xlo, 10 ^ g.xhi
  for _, prec in ipairs({ "fp64", "fp32" }) do
    local peak, ridge = p[prec .. "_gflops"], res.ridge[prec]
    out[#out + 1] = string.format('<polyline points="%s,%s %s,%s %s,%s" fill="none" ' ..
      'stroke="#e15759" ' ..
      'stroke-width="2"%s><title>%s</title></polyline>', num(px(xl)), num(py(p.dram_gbs * xl)),
        num(px(ridge)),
      num(py(peak)), num(px(xr)), num(py(peak)), prec == "fp64" and ' stroke-dasharray="6 4"' or "",
      svg.escape(string.format("%s roof: %s GFLOP/s; memory roof %s GB/s", prec:upper(),
        format.count(math.floor(peak + 0.5)), format.count(math.floor(p.dram_gbs + 0.5)))))
    text(out, px(ridge), py(peak) - 8, string.format("%s ridge %s", prec:upper(),
      format.short(ridge, 3)),
      'text-anchor="end" fill="#e15759"')
    -- FP32's name above its line, FP64's below, so the two never overlap
    text(out, W - RIGHT - 4, py(peak) + (prec == "fp64" and 16 or -6), prec:upper() .. " peak",
      'text-anchor="end" fill="#e15759"')
  end
  for i, q in ipairs(res) do
    local tip = svg.escape(q.name .. ": " .. require("roofline_chart").describe(q))
    out[#out + 1] = string.format('<circle cx="%s" cy="%s" r="5" ' ..
      'fill="%s"><title>%s</title></circle>',
      num(px(q.intensity)), num(py(q.gflops)), ALT[(i - 1) % #ALT + 1], tip)
    text(out, px(q.intensity) + 8, py(q.gflops) + 4, q.name)
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n") .. "\n"
end

-- The SVG text for a result of cuda.sweep, cuda.versus or cuda.roofline.
function svg.render(res, opts)
  opts = opts or {}
  local mt = getmetatable(res)
  local name = type(mt) == "table" and rawget(mt, "__name")
  if name == "cudalab.SweepResult" then return sweep_chart(res, opts) end
  if name == "cudalab.VersusResult" then return versus_chart(res, opts) end
  if name == "cudalab.RooflineResult" then return roofline_chart(res, opts) end
  if name == "cudalab.Timeline" then
    return require("timeline").svg(res, opts,
      { header = header, ticks = svg.ticks, num = num, text = text, escape = svg.escape })
  end
  error("cuda.plot(result, file): result must come from cuda.sweep, cuda.versus, cuda.roofline " ..
    "or cuda.timeline, got " ..
    (name or type(res)), 3)
end

-- cuda.plot(result, file [, opts]): writes the chart; returns the file name.
function svg.plot(res, file, opts)
  if type(file) ~= "string" or file == "" then
    error("cuda.plot(result, file [, opts]): file must be a file name such as " ..
      "\"sweep.svg\", got " ..
      type(file), 2)
  end
  local text_ = svg.render(res, opts)
  -- a temporary renamed into place: never a half-written chart, never a wait on a FIFO
  local ok, why = require("cudalab.files").write_atomic(file, text_, "shared")
  if not ok then error("cuda.plot: " .. tostring(why), 2) end
  return file
end

return svg
