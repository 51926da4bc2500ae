-- format.lua: turning raw numbers into the short phrases a learner reads.
--
-- Used by pretty.lua (numbers inside tables) and meta.lua (the __tostring of
-- device cards, timings, comparisons). Every function takes a plain number and
-- returns a string; none of them raises on odd input (nil, nan, inf, negative):
-- a printer that fails while printing an error hides the error.
--
-- Stance: a few significant digits and a unit beat full precision. Sizes of
-- memory use binary units (GiB, as cudaMalloc and nvidia-smi do); bandwidths use
-- decimal units (GB/s, as data sheets quote them). Exact values stay reachable
-- through the table fields; these strings are for reading, not for parsing.

-- Standard functions are captured at load time: a learner may well name a
-- variable `table` or `type`, and this module must keep working when they do.
local math, os, string, tonumber, tostring, type = math, os, string, tonumber, tostring, type

local format = {}

local floor, abs = math.floor, math.abs

-- True for a finite number; nan and +-inf fail (nan ~= nan, inf - inf is nan).
local function finite(x)
  return type(x) == "number" and x == x and x - x == 0
end

-- The text for a non-finite or non-number value, so callers can bail out early.
local function odd(x)
  if type(x) ~= "number" then return tostring(x) end
  if x ~= x then return "nan" end
  return x > 0 and "inf" or "-inf"
end

-- A number as Lua source would write it, but always telling floats from
-- integers: 1 is the integer, 1.0 the float. Lua's own tostring already does
-- this, except that nan prints as "-nan" or "nan" depending on the C library;
-- we pin it to "nan" so transcripts are stable across machines.
function format.number(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if not finite(x) then return odd(x) end
  local s = string.format("%.14g", x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s
end

-- x with `digits` significant digits, without a trailing ".0": 0.041, 616, 1e-05.
-- %g would switch to exponents for 1e5 and up, which reads badly for counts
-- of bytes per second, so large values are printed as whole numbers.
function format.short(x, digits)
  digits = digits or 3
  if not finite(x) then return odd(x) end
  if x == floor(x) and abs(x) < 1e15 then return string.format("%d", x) end
  if abs(x) >= 10 ^ digits then return string.format("%.0f", x) end
  return string.format("%." .. digits .. "g", x)
end

-- Three significant digits with the decimals kept (41.0, 1.50): in a column of
-- timings "41.0 us" next to "40.5 us" lines up and shows the precision we have.
local function sig3(x)
  local a = abs(x)
  if a >= 100 then return string.format("%.0f", x) end
  if a >= 10 then return string.format("%.1f", x) end
  return string.format("%.2f", x)
end

-- sig3, or three significant digits with an exponent for a value it would
-- print as 0.00 or as hundreds of digits: 1e-294 ns, 1e+297 s. Timings that
-- small or large come only from bad input, and must still read as what they
-- are rather than as zero.
local function sig3_wide(x)
  local a = abs(x)
  if a ~= 0 and (a < 0.01 or a >= 1e6) then return string.format("%.3g", x) end
  return sig3(x)
end

-- Insert thousands separators into a string of digits (with optional sign).
local function group(digits)
  local sign, body = digits:match("^([-+]?)(%d+)$")
  if not body then return digits end
  body = body:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return sign .. body:gsub("^,", "")
end

-- A count with thousands separators: 10000000 -> "10,000,000". Floats holding
-- a whole number print like integers (sizes often arrive as floats from C);
-- fractional values keep a few digits instead.
function format.count(n)
  if not finite(n) then return odd(n) end
  if n ~= floor(n) then return format.short(n, 6) end
  if abs(n) >= 2^63 then return string.format("%.3g", n) end
  return group(string.format("%d", n))
end

local BYTE_UNITS = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" }

-- A memory size in binary units: 512 -> "512 B", 1536 -> "1.5 KiB",
-- 150754820096 -> "140.4 GiB". One decimal place below 100 and none above;
-- the exact byte count stays in the field the caller read it from.
function format.bytes(n)
  if not finite(n) then return odd(n) .. " B" end
  local v, i = abs(n), 1
  while v >= 1024 and i < #BYTE_UNITS do v, i = v / 1024, i + 1 end
  if n < 0 then v = -v end
  if i == 1 then return string.format("%d B", floor(n)) end
  local s = v >= 100 and string.format("%.0f", v) or string.format("%.1f", v)
  return s:gsub("%.0$", "") .. " " .. BYTE_UNITS[i]
end

-- Whether the terminal can show "µ". format.utf8 = true/false overrides the
-- guess (tests use it); nil means ask the locale, the way the C library does:
-- LC_ALL beats LC_CTYPE beats LANG.
function format.is_utf8()
  if format.utf8 ~= nil then return format.utf8 end
  local loc = os.getenv("LC_ALL") or os.getenv("LC_CTYPE") or os.getenv("LANG") or ""
  return loc:lower():find("utf%-?8") ~= nil
end

local function micro()
  return format.is_utf8() and "µs" or "us"
end

-- The unit a duration in milliseconds reads best in, and its size in ms.
-- Exposed so that a group of timings (median, min, max) can share one unit.
function format.time_unit(ms)
  local a = finite(ms) and abs(ms) or 1
  if a >= 1000 then return "s", 1000 end
  if a >= 1 or a == 0 then return "ms", 1 end
  if a >= 1e-3 then return micro(), 1e-3 end
  return "ns", 1e-6
end

local TIME_SCALES = { s = 1000, ms = 1, ns = 1e-6 }

-- A duration given in milliseconds, in the unit that reads best:
-- 1500 -> "1.50 s", 12.34 -> "12.3 ms", 0.041 -> "41.0 µs", 0.0005 -> "500 ns".
-- `unit` forces one of "s", "ms", "us"/"µs", "ns" so that numbers meant to be
-- compared are shown alike.
function format.time_ms(ms, unit)
  if not finite(ms) then return odd(ms) .. " ms" end
  local name, scale
  if unit == "us" or unit == "µs" then
    name, scale = micro(), 1e-3
  elseif unit then
    scale = TIME_SCALES[unit] or 1
    name = TIME_SCALES[unit] and unit or "ms"
  else
    name, scale = format.time_unit(ms)
  end
  if ms == 0 then return "0 " .. name end
  -- a unit the caller forced keeps its column (0.00 s); one chosen here never hides a value
  return (unit and sig3(ms / scale) or sig3_wide(ms / scale)) .. " " .. name
end

local RATE_UNITS = { "B/s", "KB/s", "MB/s", "GB/s", "TB/s" }

-- Bandwidth of moving `bytes` in `ms` milliseconds, in decimal units:
-- rate(4e9, 6.5) -> "615 GB/s". Data sheets quote GB/s and TB/s in powers of
-- ten, and a learner compares against the data sheet.
-- A time too short for the quotient to fit in a number (1e9 bytes in 1e-300
-- ms) still has a rate: it is written from logarithms, 1e+300 TB/s.
function format.rate(bytes, ms)
  if not (finite(bytes) and finite(ms)) or ms <= 0 then
    return "n/a"
  end
  local v, i = bytes / (ms / 1000), 1
  if not finite(v) then
    local e = math.log(abs(bytes), 10) - math.log(ms, 10) + 3 - 3 * (#RATE_UNITS - 1)
    local ex = floor(e)
    local m = tonumber(string.format("%.3g", 10 ^ (e - ex)))
    if m >= 10 then m, ex = m / 10, ex + 1 end
    return string.format("%s%se+%d %s", bytes < 0 and "-" or "", format.short(m, 3), ex,
      RATE_UNITS[#RATE_UNITS])
  end
  while abs(v) >= 1000 and i < #RATE_UNITS do v, i = v / 1000, i + 1 end
  if abs(v) >= 1e6 then return string.format("%.3g", v) .. " " .. RATE_UNITS[i] end
  return format.short(tonumber(sig3(v)), 3) .. " " .. RATE_UNITS[i]
end

local SI_PREFIXES = { "", "k", "M", "G", "T", "P" }

-- A quantity in decimal (SI) units with three significant digits:
-- si(1.2e8, "B") -> "120 MB", si(1e7, "FLOP") -> "10.0 MFLOP", si(512, "B") -> "512 B".
-- For bytes that are compared with a bandwidth in GB/s, where format.bytes'
-- binary units would make the reader convert; sizes of memory keep MiB.
function format.si(x, unit)
  unit = unit or ""
  if not finite(x) then return odd(x) .. " " .. unit end
  local v, i = abs(x), 1
  while v >= 999.5 and i < #SI_PREFIXES do v, i = v / 1000, i + 1 end
  if x < 0 then v = -v end
  local s = (i == 1 and v == floor(v) and abs(v) < 1e15) and string.format("%d", v) or sig3_wide(v)
  return s .. " " .. SI_PREFIXES[i] .. unit
end

-- A percentage with one decimal, or none when it is whole: 0.5 -> "50%".
function format.percent(fraction)
  if not finite(fraction) then return odd(fraction) .. "%" end
  local s = string.format("%.1f", fraction * 100):gsub("%.0$", "")
  return s .. "%"
end

return format
