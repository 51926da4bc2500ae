-- test_gradebook.lua: the gradebook's rules (lua/gradebook.lua) as pure functions: points and
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
