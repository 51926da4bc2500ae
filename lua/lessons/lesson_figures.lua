-- lesson_figures.lua: the figures a lesson's text states, and whether the
-- output of the same step bears them out.
--
-- A lesson that says "the copy took 0.39 s" next to an example that prints
-- 0.34 teaches the learner to distrust both. Two rules keep text and output
-- together:
--   * a figure that depends on the run is written as {{expression}}: the
--     expression is evaluated in the learner's globals (and the lesson's
--     helpers) when the text is shown, after the examples above it ran, and
--     printed with three significant digits (format.short) unless it is a
--     string already;
--   * a time, a rate or a ratio written as a number in the text (0.34 s,
--     65 ms, 3.2 TB/s, 2.5×) must appear in what the step printed, in any
--     unit of the same kind, within the precision it is written with.
--     verify (cudalab --verify-lessons) checks this on whichever backend
--     runs it, so a lesson cannot state a simulator figure that a GPU
--     contradicts, or the reverse.
-- Figures inside `code spans` are code, not claims, and are not checked.

local format = require "format"

local M = {}

-- fill(text, env) -> text with each {{expression}} replaced by its value,
-- and a list of the expressions that failed ("expr: why"), for verify.
function M.fill(text, env)
  local errors = {}
  local out = text:gsub("{{(.-)}}", function(expr)
    local f, why = load("return " .. expr, "=figure", "t", env)
    local ok, v = false, why
    if f then ok, v = pcall(f) end
    if not ok then
      errors[#errors + 1] = expr .. ": " .. tostring(v)
      return "(?)"
    end
    if math.type(v) == "float" then return format.short(v, 3) end
    return tostring(v)
  end)
  return out, errors
end

-- Units, by kind, as a factor to a base unit: times to seconds, rates to
-- bytes or FLOP per second, ratios to themselves.
local UNITS = {
  ns = { "time", 1e-9 }, ["µs"] = { "time", 1e-6 }, us = { "time", 1e-6 },
  ms = { "time", 1e-3 }, s = { "time", 1 },
  ["MB/s"] = { "rate", 1e6 }, ["GB/s"] = { "rate", 1e9 }, ["TB/s"] = { "rate", 1e12 },
  ["GFLOP/s"] = { "flops", 1e9 }, ["TFLOP/s"] = { "flops", 1e12 },
  ["×"] = { "ratio", 1 }, x = { "ratio", 1 },
}

-- The prose of text: code spans and fenced blocks removed.
local function prose(text)
  return (text:gsub("```.-```", " "):gsub("`[^`]*`", " "))
end

-- stated(text) -> {{value, unit, text}...}: the timed, rated or ratio figures
-- written as numbers in the prose of text.
function M.stated(text)
  local out = {}
  local p = " " .. prose(text) .. " "
  for num, space, unit in p:gmatch("[%s%(~]([%d][%d,]*%.?%d*)(%s?)([%aµ×/]+)") do
    local u = UNITS[unit] or UNITS[unit:gsub("[,.;:]$", "")]
    -- "3x" and "3×" are ratios; "3 x 4" and "16 × 16" (with a space) are sizes
    if u and not (u[1] == "ratio" and space ~= "") then
      local value = tonumber((num:gsub(",", "")))
      if value then out[#out + 1] = { value = value, unit = unit, text = num .. space .. unit } end
    end
  end
  return out
end

-- Every number printed in output, with its unit when one follows it.
local function printed(output)
  local out = {}
  for num, unit in (" " .. output ..
    " "):gmatch("([%-]?%d[%d,]*%.?%d*[eE]?[%-+]?%d*)%s?([%aµ×/]*)") do
    local v = tonumber((num:gsub(",", "")))
    if v then out[#out + 1] = { value = v, unit = UNITS[unit] and unit or nil } end
  end
  return out
end

-- How far a figure written as `num` may be from the true value: half of its
-- last written digit (0.34 covers 0.335 to 0.345), and never less than 2%.
local function tolerance(num, value)
  local decimals = num:match("%.(%d+)$")
  local half = 0.5 * 10 ^ -(decimals and #decimals or 0)
  if not decimals then
    local zeros = num:gsub(",", ""):match("[1-9](0*)$")
    if zeros and #zeros > 0 then half = 0.5 * 10 ^ #zeros end
  end
  return math.max(half, 0.02 * math.abs(value))
end

-- Does the printed number p bear out the stated figure f? Same unit kind
-- (a bare number may be in any unit of the kind), within f's precision.
local function bears_out(f, p)
  local fu = UNITS[f.unit]
  local scales
  if p.unit then
    local pu = UNITS[p.unit]
    if pu[1] ~= fu[1] then return false end
    scales = { pu[2] / fu[2] }
  else
    scales = fu[1] == "ratio" and { 1 } or { 1, 1e3, 1e-3, 1e6, 1e-6 }
  end
  local num = f.text:match("^[%d,%.]+")
  for _, k in ipairs(scales) do
    if math.abs(p.value * k - f.value) <= tolerance(num, f.value) then return true end
  end
  return false
end

-- contradictions(text, output) -> {"figure"...}: the figures text (as
-- written, before fill) states that nothing in output bears out; {{figures}}
-- are computed, so they are not claims of the text's own.
function M.contradictions(text, output)
  local numbers, bad = printed(output), {}
  for _, f in ipairs(M.stated((text:gsub("{{.-}}", " ")))) do
    local found = false
    for _, p in ipairs(numbers) do
      if bears_out(f, p) then found = true break end
    end
    if not found then bad[#bad + 1] = f.text end
  end
  return bad
end

return M
