-- test_format.lua: exact strings from lua/format.lua, including the edges
-- (zero, negatives, nan, inf) where a printer must not fail.

local format = require "format"

test("format.number tells floats from integers", function()
  checkeq(format.number(1), "1")
  checkeq(format.number(1.0), "1.0")
  checkeq(format.number(-3.0), "-3.0")
  checkeq(format.number(0.1), "0.1")
  checkeq(format.number(1e20), "1e+20")
  checkeq(format.number(1 / 3), "0.33333333333333")
  checkeq(format.number(math.maxinteger), "9223372036854775807")
end)

test("format.number pins nan and inf", function()
  checkeq(format.number(0 / 0), "nan")
  checkeq(format.number(-(0 / 0)), "nan")
  checkeq(format.number(math.huge), "inf")
  checkeq(format.number(-math.huge), "-inf")
end)

test("format.bytes uses binary units", function()
  checkeq(format.bytes(0), "0 B")
  checkeq(format.bytes(512), "512 B")
  checkeq(format.bytes(1023), "1023 B")
  checkeq(format.bytes(1024), "1 KiB")
  checkeq(format.bytes(1536), "1.5 KiB")
  checkeq(format.bytes(48 * 1024), "48 KiB")
  checkeq(format.bytes(1.5 * 2^30), "1.5 GiB")
  checkeq(format.bytes(150754820096), "140 GiB")
  checkeq(format.bytes(40e6), "38.1 MiB")
  checkeq(format.bytes(-2048), "-2 KiB")
  checkeq(format.bytes(2^60), "1024 PiB")
  checkeq(format.bytes(0 / 0), "nan B")
end)

test("format.si uses decimal prefixes with three significant digits", function()
  checkeq(format.si(0, "B"), "0 B")
  checkeq(format.si(512, "B"), "512 B")
  checkeq(format.si(999, "B"), "999 B")
  checkeq(format.si(999.7, "B"), "1.00 kB")
  checkeq(format.si(1.2e8, "B"), "120 MB")
  checkeq(format.si(1e7, "FLOP"), "10.0 MFLOP")
  checkeq(format.si(2.5e12, "FLOP"), "2.50 TFLOP")
  checkeq(format.si(-4096, "B"), "-4.10 kB")
  checkeq(format.si(0 / 0, "B"), "nan B")
end)

test("format.time_ms picks a unit", function()
  format.utf8 = true
  checkeq(format.time_ms(1500), "1.50 s")
  checkeq(format.time_ms(12.345), "12.3 ms")
  checkeq(format.time_ms(123.4), "123 ms")
  checkeq(format.time_ms(1), "1.00 ms")
  checkeq(format.time_ms(0.041), "41.0 µs")
  checkeq(format.time_ms(0.0005), "500 ns")
  checkeq(format.time_ms(0), "0 ms")
  checkeq(format.time_ms(math.huge), "inf ms")
  format.utf8 = nil
end)

test("format.time_ms writes us without UTF-8", function()
  format.utf8 = false
  checkeq(format.time_ms(0.041), "41.0 us")
  checkeq(format.time_ms(2, "us"), "2000 us")
  format.utf8 = nil
end)

test("format.time_ms with a forced unit", function()
  format.utf8 = true
  checkeq(format.time_ms(0.052, "µs"), "52.0 µs")
  checkeq(format.time_ms(1.5, "µs"), "1500 µs")
  checkeq(format.time_ms(250, "s"), "0.25 s")
  checkeq(format.time_ms(0, "µs"), "0 µs")
  format.utf8 = nil
end)

test("format.is_utf8 follows the override, else the locale", function()
  format.utf8 = false
  checkeq(format.is_utf8(), false)
  format.utf8 = true
  checkeq(format.is_utf8(), true)
  format.utf8 = nil
  local loc = os.getenv("LC_ALL") or os.getenv("LC_CTYPE") or os.getenv("LANG") or ""
  checkeq(format.is_utf8(), loc:lower():find("utf%-?8") ~= nil)
end)

test("format.count groups thousands", function()
  checkeq(format.count(0), "0")
  checkeq(format.count(999), "999")
  checkeq(format.count(1000), "1,000")
  checkeq(format.count(10000000), "10,000,000")
  checkeq(format.count(-1234567), "-1,234,567")
  checkeq(format.count(3.0), "3")
  checkeq(format.count(12.5), "12.5")
  checkeq(format.count(0 / 0), "nan")
end)

test("format.rate in decimal units", function()
  checkeq(format.rate(3 * 40e6, 0.195), "615 GB/s")
  checkeq(format.rate(3 * 40e6, 0.041), "2.93 TB/s")
  checkeq(format.rate(400 * 2^20, 60), "6.99 GB/s")
  checkeq(format.rate(1000, 1), "1 MB/s")
  checkeq(format.rate(1, 0), "n/a")
  checkeq(format.rate(1, -1), "n/a")
end)

test("format.short and format.percent", function()
  checkeq(format.short(1e-5), "1e-05")
  checkeq(format.short(2.0), "2")
  checkeq(format.short(0.041), "0.041")
  checkeq(format.short(123456.7), "123457")
  checkeq(format.percent(0.5), "50%")
  checkeq(format.percent(0.0087), "0.9%")
end)
