-- test_grade_challenge.lua: the challenge's leaderboard (lua/class/grade_challenge.lua): ranking by
-- modelled time, ties to the earlier pass, each learner's best kept across gradings, and a board
-- read from a file that is not one.

local ch = require "grade_challenge"

local function grading(task, times)
  local g = { challenge = { task = task, title = "Fast" }, learners = {} }
  for _, t in ipairs(times) do
    g.learners[#g.learners + 1] = { user = t[1], uid = 1000 + #g.learners,
      challenge = t[2] and { model_ms = t[2], gpu_ms = t[4], at = t[3] } or nil }
  end
  return g
end

local function users(list)
  local out = {}
  for _, e in ipairs(list) do out[#out + 1] = e.user end
  return table.concat(out, " ")
end

test("the leaderboard ranks by modelled time, a tie going to the earlier pass", function()
  local b = ch.merge(nil, grading("54/t", { { "ann", 0.008, 300 }, { "bob", 0.0066, 500 },
    { "cat", 0.0069, 400 }, { "dan", 0.0069, 200 }, { "eve" } }), 1)
  checkeq(users(ch.ranked(b)), "bob dan cat ann")
  checkeq(b.best.eve, nil) -- no passing work: no place
  -- the same tie with the pass times the other way round: the order follows them, not the names
  b = ch.merge(nil, grading("54/t", { { "cat", 0.0069, 100 }, { "dan", 0.0069, 200 } }), 1)
  checkeq(users(ch.ranked(b)), "cat dan")
end)

test("a learner's best is kept when a later grading times a slower kernel", function()
  local b = ch.merge(nil, grading("54/t", { { "ann", 0.008, 300 }, { "bob", 0.0066, 500 } }), 1)
  b = ch.merge(b, grading("54/t", { { "ann", 0.0065, 900 }, { "bob", 0.009, 950 } }), 2)
  checkeq(users(ch.ranked(b)), "ann bob")
  checkeq(b.best.bob.model_ms, 0.0066)
  checkeq(b.best.bob.at, 500)
  checkeq(b.best.ann.at, 900)
  -- a grading where bob's work no longer passes leaves his place
  b = ch.merge(b, grading("54/t", { { "bob" } }), 3)
  checkeq(b.best.bob.model_ms, 0.0066)
  -- a new challenge task starts a new board
  b = ch.merge(b, grading("55/u", { { "cat", 0.01, 10 } }), 4)
  checkeq(users(ch.ranked(b)), "cat")
end)

test("measured GPU times are ranked on their own", function()
  local b = ch.merge(nil, grading("54/t", { { "ann", 0.008, 300, 0.010 },
    { "bob", 0.0066, 500, 0.012 }, { "cat", 0.007, 400 } }), 1)
  checkeq(users(ch.ranked(b, "gpu_ms")), "ann bob")
  local text = table.concat(ch.lines(b), "\n")
  check(text:find("1  bob .- 6.6 us .- 12 us    2"), text)
  check(text:find("3  ann .- 8 us .- 10 us    1"), text)
end)

test("a board file that is not one is refused; its values are checked", function()
  checkeq(ch.decode("{}"), nil)
  checkeq(ch.decode("not json"), nil)
  local b = ch.decode('{"format": "cudalab-leaderboard 1", "task": "54/t", "best": ' ..
    '{"ann": {"model_ms": "fast", "at": 5}, "bob": {"model_ms": 0.5, "at": -1}, "7": 3}}')
  checkeq(b.best.ann.model_ms, nil)
  checkeq(b.best.bob, { model_ms = 0.5 })
  checkeq(users(ch.ranked(b)), "bob")
  local page = ch.html(b, function(s) return (s:gsub("<", "&lt;")) end)
  check(page:find("<td>1</td><td>bob</td><td>500 us</td>", 1, true), page)
end)
