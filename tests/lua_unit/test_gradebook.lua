-- test_gradebook.lua: the gradebook's rules (lua/class/gradebook.lua) as pure functions: points and
-- weights.

local book = require "gradebook"

test("a task is worth its points times its lesson's weight", function()
  local s = { points = { ["3-a/t"] = 5 }, weights = { [3] = 2 } }
  checkeq(book.task_points(s, { id = "3-a/t", number = 3 }), 10)
  checkeq(book.task_points(s, { id = "3-a/u", number = 3 }), 2)
  checkeq(book.task_points(s, { id = "4-b/t", number = 4 }), 1)
  checkeq(book.task_points({}, { id = "4-b/t", number = 4 }), 1)
end)

test("scores are rounded to hundredths, whole ones as integers", function()
  checkeq(math.type(book.round(2.0)), "integer")
  checkeq(book.round(0.1 * 3), 0.3)
  checkeq(book.round(2 / 3), 0.67)
end)

test("the submission as of a deadline: on time, else late, else the latest try", function()
  local p1, p2, try = { at = 100 }, { at = 300 }, { at = 400 }
  local t = { passed = true, passes = { p1, p2 }, submission = try }
  local sub, late = book.choose(t, 200, nil)
  check(sub == p1 and late == 0, "the last pass by the due time")
  sub, late = book.choose(t, 50, nil)
  check(sub == p2 and late == 250, "late by 250 s")
  sub, late = book.choose(t, 50, 250)
  check(sub == p1 and late == 50, "the last pass by the cutoff, late")
  sub, late = book.choose(t, 50, 90)
  check(sub == nil and late == 0, "a try after the cutoff is not seen")
  sub = book.choose({ passed = false, submission = try }, nil, 500)
  check(sub == try, "the latest try when nothing passed")
  sub = book.choose({ passed = true, submission = p1 }, 200, nil)
  check(sub == p1, "a record without passes: its submission")
end)

test("the late policy takes per_day a day, nothing after days", function()
  local f, words = book.late_factor({ per_day = 0.25, days = 3 }, 90000)
  checkeq(f, 0.5)
  checkeq(words, "late by 1 d 1 h: 50% of the points taken")
  f, words = book.late_factor({ per_day = 0.25, days = 3 }, 4 * 86400)
  checkeq(f, 0)
  check(words:find("past the 3 days late work is accepted", 1, true), words)
  checkeq(book.due_for({ due = { [3] = 1000 }, extensions = { a = { more = 50 } } }, "a", 3), 1050)
  checkeq(book.due_for({ due = { [3] = 1000 }, extensions = { a = { due = { [3] = 7 } } } }, "a", 3), 7)
end)

test("a CSV field a spreadsheet would run as a formula is quoted and starts with '",
  function()
  local out = require "grade_output"
  local g = { tasks = {}, learners = {} }
  for i, name in ipairs({ "=HYPERLINK(\"x\")", "+1", "-1", "@SUM(A1)", "\t=1+1", "\r=1+1",
      "plain", "a,b", "two\nlines" }) do
    g.learners[i] = { user = "u" .. i, uid = i, name = name, results = {} }
  end
  local csv = out.csv(g)
  for _, want in ipairs({ '"\'=HYPERLINK(""x"")"', '"\'+1"', '"\'-1"', '"\'@SUM(A1)"',
      '"\'\t=1+1"', '"\'\r=1+1"', ",plain,", '"a,b"', '"two\nlines"' }) do
    check(csv:find(want, 1, true), "no " .. want .. " in " .. csv)
  end
end)
