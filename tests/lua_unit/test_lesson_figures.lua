-- test_lesson_figures.lua: lesson_figures.lua, which keeps the figures a
-- lesson's text states in line with what its step printed: {{figures}}
-- filled from the learner's globals, stated figures found in prose (not in
-- code), and each judged against the output in any unit of its kind.

local figures = require "lesson_figures"

test("lesson_figures: {{expression}} is filled from the environment", function()
  local text, errors = figures.fill("took {{t * 1000}} ms, on {{name}}", { t = 0.0123456, name = "an H200" })
  checkeq(text, "took 12.3 ms, on an H200")
  checkeq(#errors, 0)
  text, errors = figures.fill("{{n}} elements", { n = 43 })
  checkeq(text, "43 elements")
end)

test("lesson_figures: a figure that cannot be computed is named, never shown as nil", function()
  local text, errors = figures.fill("took {{missing.ms}} ms", {})
  checkeq(text, "took (?) ms")
  checkeq(#errors, 1)
  check(errors[1]:find("missing.ms", 1, true), "the message names the expression: " .. errors[1])
end)

test("lesson_figures: stated figures are times, rates and ratios in prose", function()
  local f = figures.stated("It took 0.34 s, then 65 ms (and 3.2 TB/s, 2.5× faster); " ..
    "a 16 × 16 tile, 48 KB, 256 threads, `k[{4, 256}]` and `0.5 ms` in code")
  checkeq(#f, 4)
  checkeq(f[1].value, 0.34); checkeq(f[1].unit, "s")
  checkeq(f[2].value, 65); checkeq(f[2].unit, "ms")
  checkeq(f[3].value, 3.2); checkeq(f[3].unit, "TB/s")
  checkeq(f[4].value, 2.5); checkeq(f[4].unit, "×")
  checkeq(#figures.stated("copies of 3,193 GB/s"), 1)
  checkeq(figures.stated("copies of 3,193 GB/s")[1].value, 3193)
end)

test("lesson_figures: output bears a figure out in any unit of its kind, within its precision", function()
  checkeq(#figures.contradictions("took 0.34 s", "context_ms\t340.2"), 0)
  checkeq(#figures.contradictions("took 0.34 s", "342.9 ms"), 0)
  checkeq(#figures.contradictions("took 65 ms", "0.0651"), 0)
  checkeq(#figures.contradictions("2.5× faster", "2.47"), 0)
  checkeq(#figures.contradictions("took {{t}} ms", ""), 0) -- computed, not stated
end)

test("lesson_figures: a figure the output contradicts is reported", function()
  local bad = figures.contradictions("0.1 ms to load against 117 ms to compile, on top of 0.39 s",
    "load 0.01 ms, compile 65 ms then 27 ms, context 340 ms")
  checkeq(#bad, 3)
  checkeq(bad[1], "0.1 ms")
  checkeq(bad[2], "117 ms")
  checkeq(bad[3], "0.39 s")
  -- a time is not borne out by a rate that happens to share its digits
  checkeq(#figures.contradictions("took 55 ms", "55 GB/s"), 1)
end)
