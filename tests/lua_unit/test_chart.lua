-- test_chart.lua: the text side of the charts: term.lua's decisions (UTF-8,
-- colour, width), chart.lua's bars, stacks, columns and wrapping, and
-- progress.lua's rule of drawing only on a terminal for long work. Every
-- terminal property is forced through term's overrides, so the results do not
-- depend on where the tests run.

local term = require "term"
local chart = require "chart"
local progress = require "progress"

-- Runs fn with term's answers forced, then restores them.
local function with_term(t, fn)
  local saved = { term.utf8_override, term.color_override, term.width_override, term.tty_override }
  term.utf8_override, term.color_override = t.utf8, t.color
  term.width_override, term.tty_override = t.width, t.tty
  local ok, err = pcall(fn)
  term.utf8_override, term.color_override, term.width_override, term.tty_override = table.unpack(saved)
  if not ok then error(err, 0) end
end

test("bars have eighth-of-a-cell resolution in UTF-8", function()
  with_term({ utf8 = true }, function()
    checkeq(chart.bar(1, 10), ("█"):rep(10))
    checkeq(chart.bar(0.5, 10), ("█"):rep(5))
    checkeq(chart.bar(0.0625, 10), "▋", "5/8 of one cell")
    checkeq(chart.bar(0.05, 10), "▌", "4/8 of one cell")
    checkeq(chart.bar(0, 10), "")
    checkeq(chart.bar(1e-9, 10), "▏", "a tiny value stays visible")
    checkeq(chart.bar(2, 4), "████", "clamped to the width")
    checkeq(chart.bar(0 / 0, 4), "", "nan draws nothing")
  end)
end)

test("bars fall back to # without UTF-8", function()
  with_term({ utf8 = false }, function()
    checkeq(chart.bar(0.5, 10), "#####")
    checkeq(chart.bar(0.001, 10), "#")
  end)
end)

test("stacked bars keep the total and show every segment", function()
  with_term({ utf8 = false, color = false }, function()
    local s, legend = chart.stacked({ 5, 0.03, 3.6 }, 8.63, 40)
    checkeq(#s, 40, "the segments fill the scale exactly")
    checkeq(legend, { "#", "=", "." })
    check(s:find("=", 1, true), "the thin kernel segment still gets a cell: " .. s)
    checkeq(select(2, s:gsub("=", "")), 1)
    checkeq(chart.stacked({ 1, 1 }, 4, 20), "#####=====", "half the scale, a quarter each")
  end)
end)

test("stacked segments are coloured only when colour is on", function()
  with_term({ utf8 = false, color = true }, function()
    check(chart.stacked({ 1, 1 }, 2, 10):find("\27[33m", 1, true), "yellow first segment")
  end)
  with_term({ utf8 = false, color = false }, function()
    check(not chart.stacked({ 1, 1 }, 2, 10):find("\27", 1, true), "no escapes")
  end)
end)

test("NO_COLOR turns colour off whatever else is set", function()
  local getenv = os.getenv
  local env = { NO_COLOR = "1", CUDALAB_COLOR = "1", TERM = "xterm-256color" }
  os.getenv = function(k) return env[k] end
  local ok, err = pcall(function()
    with_term({}, function()
      checkeq(term.color(), false, "NO_COLOR wins")
      env.NO_COLOR = nil
      checkeq(term.color(), true, "CUDALAB_COLOR=1 forces colour")
      env.CUDALAB_COLOR, env.TERM = nil, "dumb"
      checkeq(term.color(), false, "a dumb terminal gets none")
      checkeq(term.paint("x", "red"), "x")
    end)
  end)
  os.getenv = getenv
  if not ok then error(err, 0) end
end)

test("the width comes from COLUMNS, else 80, within 40..200", function()
  local getenv = os.getenv
  local cols
  os.getenv = function(k) if k == "COLUMNS" then return cols end return getenv(k) end
  local ok, err = pcall(function()
    with_term({}, function()
      cols = nil; checkeq(term.width(), 80)
      cols = "120"; checkeq(term.width(), 120)
      cols = "10"; checkeq(term.width(), 40)
      cols = "junk"; checkeq(term.width(), 80)
    end)
  end)
  os.getenv = getenv
  if not ok then error(err, 0) end
end)

test("columns align numbers right and text left, by display width", function()
  with_term({ utf8 = true }, function()
    local lines, widths = chart.columns({ { "block", "median" }, { "32", "195 µs" }, { "1024", "41.0 µs" } }, "rr")
    checkeq(lines, { "block   median", "   32   195 µs", " 1024  41.0 µs" })
    checkeq(widths, { 5, 7 })
  end)
end)

test("attached bars start in one column and fit the width", function()
  with_term({ utf8 = true, width = 40, color = false }, function()
    local out = chart.attach({ "head", "a 1", "bb 2" }, { nil, 1, 2 }, { nil, nil, " <" })
    checkeq(out[1], "head", "a row without a value keeps its text")
    local b1, b2 = out[2]:find("█"), out[3]:find("█")
    checkeq(b1, b2, "bars start in the same column")
    check(term.len(out[3]) <= 40, "fits 40 columns: " .. out[3])
    checkeq(out[3]:sub(-2), " <", "the mark follows the bar")
    -- 31 columns are left for bars: the larger value fills them, the other half
    checkeq(out[3], "bb 2  " .. ("█"):rep(31) .. " <")
    checkeq(out[2], "a 1   " .. ("█"):rep(15) .. "▌")
  end)
end)

test("wrap breaks at spaces within the width", function()
  checkeq(chart.wrap("aaa bbb ccc ddd", 8), "aaa bbb\nccc ddd")
  checkeq(chart.wrap("averyveryverylongword x", 8), "averyveryverylongword\nx")
  checkeq(chart.wrap("a b", 8, "  "), "a b")
end)

-- A bar whose output is collected instead of written.
local function recorded_bar(total)
  local written = {}
  progress.write = function(s) written[#written + 1] = s end
  local bar = progress.new(total, "sweep k", "Ctrl-C keeps rows")
  progress.write = nil
  return bar, written
end

test("progress stays silent when output is not a terminal", function()
  with_term({ tty = false, utf8 = false, width = 80 }, function()
    local bar, written = recorded_bar(4)
    bar:update(1, 5000, "block 64")
    bar:update(2, 10000, "block 128")
    bar:finish()
    checkeq(written, {})
  end)
end)

test("progress stays silent for work under a second", function()
  with_term({ tty = true, utf8 = false, width = 80 }, function()
    local bar, written = recorded_bar(4)
    bar:update(0, 0, "block 32")
    bar:update(1, 100, "block 64")   -- projected 400 ms
    bar:update(3, 300, "block 256")
    bar:finish()
    checkeq(written, {})
  end)
end)

test("progress draws, redraws in place and erases itself for long work", function()
  with_term({ tty = true, utf8 = false, width = 80 }, function()
    local bar, written = recorded_bar(4)
    bar:update(1, 600, "block 64")   -- projected 2.4 s
    bar:update(2, 1200, "block 128")
    bar:finish()
    checkeq(#written, 3)
    checkeq(written[1], "sweep k [#####---------------] 1/4  block 64  ~2 s left  (Ctrl-C keeps rows)\n")
    check(written[2]:find("^\27%[A\r\27%[K"), "redraw moves up and clears the line")
    check(written[2]:find("2/4", 1, true), written[2])
    checkeq(written[3], "\27[A\r\27[K", "finish erases the bar")
  end)
end)

test("a progress line never wraps", function()
  with_term({ tty = true, utf8 = true, width = 40 }, function()
    local bar = progress.new(10, "sweep a_kernel_with_a_long_name", "a hint that is long as well")
    check(term.len(bar:line(3, 3000, "block 1024")) <= 39, bar:line(3, 3000, "block 1024"))
  end)
end)
