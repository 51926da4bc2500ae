-- test_class_report.lua: the instructor's view of a class (class_report.lua):
-- the model's counts and states, the stuck rules, medians and the most
-- frequent failures; the text's layout within its width; the HTML page's
-- escaping of hostile records; and watch's redraw loop into a buffer. That
-- the page renders in a browser is checked by tests/class_report_html.sh.

local report = require "class_report"

local T0 = 1764640000
local NOW = T0 + 3600
local FORMAT = "cudalab-class-record 1"

local TASKS = {
  { id = "03-compute-density/1", lesson = "03-compute-density", number = 3, step = 1, title = "Read the roofline" },
  { id = "03-compute-density/2", lesson = "03-compute-density", number = 3, step = 2, title = "Count the bytes" },
  { id = "03-compute-density/4", lesson = "03-compute-density", number = 3, step = 4, title = "Write the kernel" },
  { id = "04-shared-memory/1", lesson = "04-shared-memory", number = 4, step = 1, title = "Tile the matrix" },
  { id = "04-shared-memory/2", lesson = "04-shared-memory", number = 4, step = 2, title = "Avoid bank conflicts" },
}

-- A task entry as class_record.lua writes it, with fields overridden by t.
local function task(t)
  local r = { attempts = 1, failures = {}, hints = 0, skipped = false, passed = false,
    first_seen = T0, backend = "sim" }
  for k, v in pairs(t) do r[k] = v end
  return r
end

local function record(user, uid, updated, tasks)
  return { format = FORMAT, user = user, uid = uid, updated = updated, tasks = tasks }
end

-- Three learners: alice ahead and stuck by attempts on lesson 04, bob stuck
-- by time on his current task, carol who skipped a task and is working on.
local function class()
  return {
    record("carol", 1003, NOW - 7200, {
      ["03-compute-density/1"] = task{ passed = true, attempts = 1, passed_at = T0 + 50 },
      ["03-compute-density/2"] = task{ passed = true, attempts = 4, passed_at = T0 + 400,
        failures = { "expected 12 bytes, got 8", "expected 12 bytes, got 8", "expected 12 bytes, got 16" } },
      ["03-compute-density/4"] = task{ skipped = true, attempts = 2,
        failures = { "max rel error 0.5 at index 7", "max rel error 0.5 at index 7" } },
      ["04-shared-memory/1"] = task{ attempts = 1, first_seen = NOW - 120,
        failures = { "wrong result at (3, 4)" } },
    }),
    record("alice", 1001, NOW - 30, {
      ["03-compute-density/1"] = task{ passed = true, attempts = 1, passed_at = T0 + 60 },
      ["03-compute-density/2"] = task{ passed = true, attempts = 2, passed_at = T0 + 300,
        failures = { "expected 12 bytes, got 8" } },
      ["03-compute-density/4"] = task{ passed = true, attempts = 3, passed_at = T0 + 900,
        failures = { "max rel error 0.5 at index 7", "  max rel error 0.5 at index 7 \n" } },
      ["04-shared-memory/1"] = task{ attempts = 7, first_seen = T0 + 1000, failures = {
        "wrong result at (3, 4)", "wrong result at (3, 4)", "wrong result at (3, 4)", "too slow: 2.1 ms",
        "wrong result at (3, 4)", "too slow: 2.1 ms", "kernel did not compile" } },
    }),
    record("bob", 1002, NOW - 400, {
      ["03-compute-density/1"] = task{ passed = true, attempts = 2, passed_at = T0 + 100,
        failures = { "expected 0.25 FLOP/byte" } },
      ["03-compute-density/2"] = task{ attempts = 2, first_seen = T0 + 200,
        failures = { "expected 12 bytes, got 8", "expected 12 bytes, got 16" } },
    }),
  }
end

local function build(records, opts)
  opts = opts or {}
  opts.now = opts.now or NOW
  return report.build(records or class(), TASKS, opts)
end

local function learner(m, user)
  for _, l in ipairs(m.learners) do
    if l.user == user then return l end
  end
  error("no learner " .. user)
end

local function task_of(m, id)
  for _, t in ipairs(m.tasks) do
    if t.id == id then return t end
  end
  error("no task " .. id)
end

-- Display width of a line: code points, without colour escapes.
local function cols(line)
  local plain = line:gsub("\27%[[%d;]*m", "")
  return utf8.len(plain)
end

-- Checks that tags nest and close; void elements stand alone.
local VOID = { meta = true, br = true, img = true, input = true, link = true, hr = true }
local function balanced(text)
  local stack = {}
  for close, name, selfclose in text:gmatch("<(/?)([%w]+)[^>]-(/?)>") do
    name = name:lower()
    if close == "/" then
      local top = table.remove(stack)
      if top ~= name then return false, "</" .. name .. "> closes <" .. tostring(top) .. ">" end
    elseif selfclose ~= "/" and not VOID[name] then
      stack[#stack + 1] = name
    end
  end
  return #stack == 0, "unclosed " .. tostring(stack[#stack])
end

test("class_report: lessons group the tasks in course order", function()
  local m = build()
  checkeq(#m.lessons, 2)
  checkeq(m.lessons[1].id, "03-compute-density")
  checkeq(m.lessons[1].label, "03")
  checkeq(#m.lessons[1].tasks, 3)
  checkeq(m.lessons[2].label, "04")
  checkeq(m.tasks[3].label, "03/4")
  checkeq(#m.learners, 3)
  checkeq({ m.learners[1].user, m.learners[2].user, m.learners[3].user }, { "alice", "bob", "carol" },
    "learners sorted by name")
end)

test("class_report: learner x lesson cells have state, passed/total and attempts", function()
  local m = build()
  local a = learner(m, "alice")
  checkeq(a.lessons["03-compute-density"].state, "passed")
  checkeq(a.lessons["03-compute-density"].passed, 3)
  checkeq(a.lessons["03-compute-density"].total, 3)
  checkeq(a.lessons["03-compute-density"].attempts, 6)
  local a4 = a.lessons["04-shared-memory"]
  checkeq({ a4.state, a4.passed, a4.total, a4.attempts }, { "stuck", 0, 2, 7 })
  checkeq({ a4.stuck_task, a4.stuck_by, a4.stuck_attempts }, { "04-shared-memory/1", "attempts", 7 })
  local b = learner(m, "bob")
  checkeq(b.lessons["03-compute-density"].state, "stuck")
  checkeq(b.lessons["03-compute-density"].stuck_by, "time")
  checkeq(b.lessons["03-compute-density"].stuck_minutes, 56)
  checkeq(b.lessons["04-shared-memory"].state, "not started")
  local c = learner(m, "carol")
  checkeq(c.lessons["03-compute-density"].state, "skipped")
  checkeq(c.lessons["04-shared-memory"].state, "working")
  checkeq(c.tasks["03-compute-density/4"].state, "skipped")
  checkeq(c.tasks["04-shared-memory/2"].state, "not started")
end)

test("class_report: stuck by failed checks, at the threshold and not below", function()
  local function state(attempts, opts)
    local recs = { record("d", 1, NOW, { ["04-shared-memory/1"] = task{ attempts = attempts,
      first_seen = NOW - 60 } }) }
    return build(recs, opts).learners[1].tasks["04-shared-memory/1"].state
  end
  checkeq(state(4), "working")
  checkeq(state(5), "stuck")
  checkeq(state(2, { stuck_attempts = 2 }), "stuck")
  checkeq(state(9, { stuck_attempts = 10 }), "working")
end)

test("class_report: stuck by time only on the current task", function()
  local function states(opts, extra)
    local tasks = { ["03-compute-density/1"] = task{ attempts = 1, first_seen = NOW - 40 * 60 },
      ["03-compute-density/2"] = task{ attempts = 0, first_seen = NOW - 20 * 60 } }
    for k, v in pairs(extra or {}) do tasks[k] = v end
    local l = build({ record("d", 1, NOW, tasks) }, opts).learners[1]
    return { l.tasks["03-compute-density/1"].state, l.tasks["03-compute-density/2"].state }
  end
  checkeq(states(), { "working", "stuck" }, "40 min on an old task is not stuck; 20 on the current is")
  checkeq(states({ stuck_minutes = 30 }), { "working", "working" })
  checkeq(states({ stuck_minutes = 20 }), { "working", "stuck" }, "at the threshold")
  checkeq(states(nil, { ["03-compute-density/4"] = task{ passed = true, first_seen = NOW - 60 } }),
    { "working", "working" }, "moving on to a later task (even passed) ends the wait")
  local l = build({ record("d", 1, NOW, { ["03-compute-density/1"] = task{ passed = true,
    attempts = 9, first_seen = NOW - 3600 } }) }).learners[1]
  checkeq(l.tasks["03-compute-density/1"].state, "passed", "a passed task is never stuck")
  l = build({ record("d", 1, NOW, { ["03-compute-density/1"] = task{ skipped = true,
    attempts = 9, first_seen = NOW - 3600 } }) }).learners[1]
  checkeq(l.tasks["03-compute-density/1"].state, "skipped", "nor a skipped one")
end)

test("class_report: a lesson stuck on one task and skipped on another is stuck", function()
  local m = build({ record("d", 1, NOW, {
    ["03-compute-density/1"] = task{ skipped = true },
    ["03-compute-density/2"] = task{ attempts = 6, first_seen = NOW - 60 } }) })
  checkeq(m.learners[1].lessons["03-compute-density"].state, "stuck")
end)

test("class_report: median of an odd and an even count, nil when empty", function()
  checkeq(report.median({ 3, 1, 2 }), 2)
  checkeq(report.median({ 4, 1, 2, 3 }), 2.5)
  checkeq(report.median({ 1, 3 }), 2)
  checkeq(math.type(report.median({ 1, 3 })), "integer")
  checkeq(report.median({}), nil)
end)

test("class_report: per task: started, pass rate, median of those who passed, stuck", function()
  local m = build()
  local t = task_of(m, "03-compute-density/2")
  checkeq({ t.started, t.passed, t.learners, t.stuck, t.skipped }, { 3, 2, 3, 1, 0 })
  checkeq(t.pass_rate, 2 / 3)
  checkeq(t.median_attempts, 3, "alice 2 and carol 4; bob has not passed")
  t = task_of(m, "04-shared-memory/1")
  checkeq({ t.started, t.passed, t.stuck, t.median_attempts }, { 2, 0, 1, nil })
  t = task_of(m, "04-shared-memory/2")
  checkeq({ t.started, t.passed, t.pass_rate }, { 0, 0, 0 })
  checkeq(task_of(m, "03-compute-density/1").pass_rate, 1)
end)

-- A task's failure groups without their full messages.
local function groups(list)
  local out = {}
  for i, f in ipairs(list) do out[i] = { message = f.message, count = f.count, learners = f.learners } end
  return out
end

test("class_report: the most frequent failures, trimmed and grouped, with counts", function()
  local m = build()
  checkeq(groups(task_of(m, "04-shared-memory/1").failures), {
    { message = "wrong result at (3, 4)", count = 5, learners = 2 },
    { message = "too slow: 2.1 ms", count = 2, learners = 1 },
    { message = "kernel did not compile", count = 1, learners = 1 },
  })
  checkeq(groups(task_of(m, "03-compute-density/4").failures), {
    { message = "max rel error 0.5 at index 7", count = 4, learners = 2 } },
    "trimmed before grouping; a number all share is kept")
  checkeq(groups(task_of(m, "03-compute-density/2").failures), {
    { message = "expected 12 bytes, got N", count = 6, learners = 3 } },
    "a number that varies is taken out, one that does not is kept")
  checkeq(task_of(m, "03-compute-density/2").failures[1].full, {
    { message = "expected 12 bytes, got 8", count = 4 },
    { message = "expected 12 bytes, got 16", count = 2 } }, "the full messages are kept")
  local ties = build({ record("d", 1, NOW, { ["03-compute-density/1"] = task{ failures = {
    "b", "a", "d", "c", "c" } } }) })
  checkeq(groups(task_of(ties, "03-compute-density/1").failures), {
    { message = "c", count = 2, learners = 1 }, { message = "a", count = 1, learners = 1 },
    { message = "b", count = 1, learners = 1 } }, "ties in byte order, three at most")
end)

test("class_report: hostile records are cleaned or kept out", function()
  local recs = class()
  recs[#recs + 1] = "not a table"
  recs[#recs + 1] = { format = "something else", user = "mallory" }
  recs[#recs + 1] = record("eve", 1005, "yesterday", {
    ["03-compute-density/1"] = { attempts = "many", passed = "yes", failures = "lots", first_seen = {} },
    ["03-compute-density/2"] = { attempts = -4, failures = { 42, "real one", {} } },
    ["03-compute-density/4"] = { attempts = 2 ^ 60 },
    ["04-shared-memory/1"] = "junk",
    ["no-such/9"] = task{ passed = true },
  })
  recs[#recs + 1] = { format = FORMAT, uid = 1006, tasks = "none" }
  local m = build(recs)
  checkeq(#m.learners, 5)
  checkeq(m.rejected, { { user = "#4", why = "not a table" },
    { user = "mallory", why = 'not a "cudalab-class-record 1" record' } })
  local e = learner(m, "eve")
  checkeq(e.tasks["03-compute-density/1"].attempts, 0)
  checkeq(e.tasks["03-compute-density/1"].passed, false)
  checkeq(e.tasks["03-compute-density/2"].attempts, 0)
  checkeq(e.tasks["03-compute-density/4"].attempts, 0)
  checkeq(e.tasks["04-shared-memory/1"].state, "not started")
  checkeq(e.updated, nil)
  checkeq(groups(task_of(m, "03-compute-density/2").failures)[2],
    { message = "real one", count = 1, learners = 1 })
  checkeq(learner(m, "1006").lessons["03-compute-density"].state, "not started", "named by uid")
  local text = report.text(m, { width = 80, utf8 = true })
  check(text:find("2 record(s) not read: #4 (not a table), mallory", 1, true), text)
  checkerr("class_report.build: records must be a list", report.build, nil, TASKS)
  checkerr("class_report.build: task 1 has no string id", report.build, {}, { { lesson = "x" } })
end)

test("class_report: tasks are ranked among the learners who reached them", function()
  -- one learner skipped task 1 after a try; three reached task 2, 28 failed checks, one passed
  local recs = {
    record("a", 1, NOW, { ["03-compute-density/1"] = task{ skipped = true, attempts = 1 },
      ["03-compute-density/2"] = task{ attempts = 10 } }),
    record("b", 2, NOW, { ["03-compute-density/2"] = task{ attempts = 10 } }),
    record("c", 3, NOW, { ["03-compute-density/2"] = task{ attempts = 8, passed = true } }),
  }
  local m = build(recs)
  checkeq(task_of(m, "03-compute-density/2").pass_rate, 1 / 3)
  checkeq(task_of(m, "03-compute-density/1").pass_rate, 0)
  local hot = report.hot_tasks(m)
  checkeq({ hot[1].id, hot[2].id }, { "03-compute-density/2", "03-compute-density/1" },
    "two stuck above one skip")
  local text = report.text(m, { width = 100, utf8 = true })
  check(text:find("03/2 Count the bytes%s+1/3 passed %(33%%%)"), text)
  check(text:find("03/1 Read the roofline%s+0/1 passed %(0%%%)"), text)
  -- a task nobody reached is not in the list, however many learners there are
  checkeq(task_of(m, "04-shared-memory/1").started, 0)
end)

test("class_report: stuck learners come first, each with the task they are on", function()
  local recs = {
    record("amy", 1, NOW, { ["03-compute-density/1"] = task{ passed = true } }),
    record("zed", 2, NOW, { ["04-shared-memory/2"] = task{ attempts = 6, hints = 2 } }),
  }
  local m = build(recs)
  checkeq({ m.learners[1].user, m.learners[2].user }, { "zed", "amy" })
  checkeq(m.learners[1].stuck_on.task.id, "04-shared-memory/2")
  local lines = lines_of(report.text(m, { width = 100, utf8 = true }))
  checkeq(lines[3], "Stuck now: 1 learner")
  checkeq(lines[4], "  zed   04/2 Avoid bank conflicts: 6 failed checks, 2 hints")
  local html = report.html(m)
  check(html:find('<li data-user="zed"><b>zed</b> on <span class="task">04/2 Avoid bank ' ..
    'conflicts</span>: 6 failed checks, 2 hints</li>', 1, true), "the stuck list, in plain sight")
  check(html:find('<td class="stuck-on">04/2 Avoid bank conflicts</td>', 1, true),
    "the grid names the task in a cell of its own")
end)

test("class_report: addresses and varying numbers are taken out of messages", function()
  local recs = {
    record("a", 1, NOW, { ["03-compute-density/1"] = task{ failures = {
      "illegal address 0x7f12a0 in thread 17 of block 3", "too slow: 2.1 ms" } } }),
    record("b", 2, NOW, { ["03-compute-density/1"] = task{ failures = {
      "illegal address 0x7ffe00c8 in thread 40 of block 3" } } }),
  }
  local f = build(recs).tasks[1].failures
  checkeq({ f[1].message, f[1].count, f[1].learners },
    { "illegal address 0x… in thread N of block 3", 2, 2 }, "the same mistake is one group")
  checkeq(f[2].message, "too slow: 2.1 ms")
  local html = report.html(build(recs))
  check(html:find('<details><summary><span class="count">2×</span> <span class="message"', 1,
    true), "a click shows the full messages")
  check(html:find('<span class="full-message">illegal address 0x7ffe00c8 in thread 40 of block ' ..
    '3</span>', 1, true), "each full message is there")
end)

test("class_report: hints asked and late work are shown", function()
  local due = T0 + 100
  local recs = {
    record("a", 1, NOW, { ["03-compute-density/1"] = task{ passed = true, passed_at = due + 7200,
      hints = 3 }, ["03-compute-density/2"] = task{ attempts = 2, hints = 1 } }),
    record("b", 2, NOW, { ["03-compute-density/1"] = task{ passed = true, passed_at = due - 5 } }),
  }
  local m = build(recs, { due = function(user, number) return number == 3 and due or nil end })
  checkeq({ task_of(m, "03-compute-density/1").late, task_of(m, "03-compute-density/2").hints },
    { 1, 1 })
  local text = report.text(m, { width = 100, utf8 = true })
  check(text:find("Late work: a 03/1 (by 2 h 0 min)", 1, true), text)
  check(text:find("03/2 Count the bytes  0/1 passed (0%)  median -  stuck 1  hints 1", 1, true),
    text)
  local html = report.html(m)
  check(html:find('<li data-user="a" data-task="03-compute-density/1">a: 03/1 Read the roofline, ' ..
    'passed 2 h 0 min after its due time</li>', 1, true), "late work on the page")
  check(html:find('<td class="num hints">1</td>', 1, true), "hints on the page")
  check(html:find(" — made %d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d"), "the time it was made")
end)

test("class_report: text fits a terminal's height, saying what it left out", function()
  local recs = {}
  for i = 1, 30 do
    recs[i] = record(string.format("l%02d", i), i, NOW, { ["03-compute-density/1"] = task{
      attempts = i == 30 and 9 or 1, first_seen = NOW - 60 } })
  end
  local m = build(recs)
  local full = lines_of(report.text(m, { width = 100, utf8 = true }))
  check(#full > 40, #full)
  local text = report.text(m, { width = 100, utf8 = true, height = 24 })
  checkeq(select(2, text:gsub("\n", "")), 23, "a row is left for the cursor")
  check(text:find("\nl30 ", 1, true), "the stuck learner is kept: first in the grid")
  check(text:find("… and %d+ more learners"), text)
  local lines = lines_of(report.text(m, { width = 100, utf8 = true, height = 8 }))
  checkeq(#lines, 8, "7 lines and the end")
  check(lines[7]:find("… and %d+ more lines"), lines[7])
end)

test("class_report: text shows the table, the legend and where the room is stuck", function()
  local text = report.text(build(), { width = 100, utf8 = true, title = "CUDA 101" })
  local lines = lines_of(text)
  checkeq(lines[1], "CUDA 101 — 3 learners, 2 lessons, 5 tasks")
  checkeq(lines[3], "Stuck now: 2 learners")
  checkeq(lines[4], "  alice  04/1 Tile the matrix: 7 failed checks")
  checkeq(lines[5], "  bob    03/2 Count the bytes: 56 min on it, 2 failed checks")
  checkeq(lines[7], "learner  seen  03         04")
  checkeq(lines[8], "alice     now  ✓ 3/3      ✗ 0/2 7a")
  checkeq(lines[9], "bob        6m  ✗ 1/3 56m  ·")
  checkeq(lines[10], "carol      2h  s 2/3      ▸ 0/2")
  check(text:find("✓ passed all; ▸ working; ✗ stuck (7a: 7 failed checks on a task, 20m: 15+", 1, true))
  check(text:find("\nWhere the room is stuck\n", 1, true))
  check(text:find("  04/1 Tile the matrix   0/2 passed (0%)  median -  stuck 1\n" ..
    "      5× wrong result at (3, 4) (2 learners)\n      2× too slow: 2.1 ms\n", 1, true), text)
  local room = text:find("Where the room is stuck", 1, true)
  local a, b = text:find("04/1", room, true), text:find("03/4 Write", room, true)
  local c = text:find("03/2 Count", room, true)
  check(a < c and c < b, "most stuck first, then most who reached it without passing")
  check(not text:find("03/1 Read", 1, true), "a task everyone passed is not listed")
  checkeq(report.text(build(), { width = 100, utf8 = true, title = "CUDA 101" }), text, "deterministic")
end)

test("class_report: text without UTF-8 uses ASCII only", function()
  local text = report.text(build(), { width = 80, utf8 = false })
  check(not text:find("[\128-\255]"), "only ASCII")
  check(text:find("alice     now  + 3/3      x 0/2 7a", 1, true), text)
end)

test("class_report: text puts a given time in the title, and only then", function()
  local m = build()
  check(not lines_of(report.text(m, { utf8 = true }))[1]:find("%d%d:%d%d"))
  local line = lines_of(report.text(m, { utf8 = true, time = NOW }))[1]
  check(line:find(" — %d%d%d%d%-%d%d%-%d%d %d%d:%d%d$"), line)
end)

test("class_report: every line fits the width, names cut and lessons elided", function()
  local tasks, recs = {}, {}
  for l = 1, 20 do
    for s = 1, 3 do
      tasks[#tasks + 1] = { id = string.format("%02d-lesson/%d", l, s), lesson = string.format("%02d-lesson", l),
        number = l, step = s, title = ("A long task title that goes on and on "):rep(3) }
    end
  end
  for i = 1, 6 do
    local t = {}
    for l = 1, 14 - i do
      for s = 1, 3 do
        t[string.format("%02d-lesson/%d", l, s)] = task{ passed = l < 13 - i, attempts = 12,
          failures = { ("a very long failure message %d "):format(i):rep(10) } }
      end
    end
    recs[i] = record(("learner-with-a-very-long-name-%d"):format(i), i, NOW - i * 100, t)
  end
  local m = report.build(recs, tasks, { now = NOW })
  for _, w in ipairs({ 40, 60, 80, 100, 160 }) do
    for _, color in ipairs({ false, true }) do
      local text = report.text(m, { width = w, utf8 = true, color = color })
      for i, line in ipairs(lines_of(text)) do
        check(cols(line) <= w, string.format("width %d line %d has %d columns: %s", w, i, cols(line), line))
      end
    end
  end
  local text = report.text(m, { width = 80, utf8 = true })
  check(text:find("(lessons 01-07 and 13-20 not shown: too many for 80 columns)", 1, true), text)
  check(text:find("\nlearner-with-a-…  ", 1, true), "names cut to 16 columns")
  local head = lines_of(text)[11]
  checkeq(head, "learner           seen  08         09         10         11         12",
    "the five lessons with the most stuck learners")
  check(text:find("… and %d+ more tasks"), "at most 10 tasks listed")
  check(report.text(m, { width = 1000, utf8 = true }):find("01  ", 1, true), "all lessons when wide")
end)

test("class_report: colour only when asked, and around whole cells", function()
  local m = build()
  check(not report.text(m, { utf8 = true }):find("\27", 1, true), "no escapes without colour")
  local text = report.text(m, { utf8 = true, color = true })
  check(text:find("  \27[32m✓ 3/3\27[0m      ", 1, true), "passed in green, padding outside")
  check(text:find("\27[1;31m✗ 0/2 7a", 1, true), "stuck in bold red")
end)

test("class_report: control characters from records never reach the terminal", function()
  local recs = class()
  recs[1].user = "evil\27[2J\27]0;owned\7name"
  recs[1].tasks["03-compute-density/2"].failures = { "bad\27[31m red \r\n\194\155 2J \226\128\174rtl" }
  local text = report.text(build(recs), { utf8 = true, name_width = 40 })
  check(not text:find("[\0-\9\11-\31\127]"), "no control characters but newlines")
  check(not text:find("\194\155", 1, true) and not text:find("\226\128\174", 1, true), "no C1 or bidi")
  check(text:find("evil?[2J?]0;owned?name", 1, true), "shown with ? in their place")
  check(text:find("bad?[31m red ? 2J ?rtl", 1, true), text)
  checkeq(report.clean("a\255b"), "a?b", "invalid UTF-8")
end)

test("class_report: HTML escapes everything that came from records", function()
  local recs = class()
  recs[1].user = "<script>alert(1)</script>"
  recs[2].user = '"><img src=x onerror=alert(2)>'
  recs[3].tasks["03-compute-density/2"].failures = { "<script>alert(3)</script>", "' onmouseover='x" }
  local tasks = {}
  for i, t in ipairs(TASKS) do tasks[i] = t end
  tasks[1] = { id = "03-compute-density/1", lesson = "03-compute-density", number = 3, step = 1,
    title = "</title><script>alert(4)</script>" }
  local page = report.html(report.build(recs, tasks, { now = NOW }), { title = "A & B <class>",
    notes = { "refused: 1009.json (<b>x</b>): not JSON" } })
  check(not page:find("<script", 1, true), "no script element")
  check(not page:find("<img", 1, true), "no img element")
  check(not page:find("onerror=alert(2)>", 1, true), "attribute injection closed")
  check(page:find("&lt;script&gt;alert(1)&lt;/script&gt;", 1, true))
  check(page:find('data-user="&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"', 1, true))
  check(page:find("&lt;script&gt;alert(3)&lt;/script&gt;", 1, true))
  check(page:find("&apos; onmouseover=&apos;x", 1, true))
  check(page:find("<title>A &amp; B &lt;class&gt;</title>", 1, true))
  check(page:find("<li>refused: 1009.json (&lt;b&gt;x&lt;/b&gt;): not JSON</li>", 1, true), "notes")
  check(balanced(page))
end)

test("class_report: HTML is one self-contained page with cells for tests", function()
  local page = report.html(build(), { title = "CUDA 101" })
  check(page:find("^<!DOCTYPE html>\n<html lang=\"en\">"), "HTML5")
  check(page:find('<meta charset="utf-8">', 1, true))
  check(balanced(page))
  check(page:find('<td class="cell passed" data-user="alice" data-lesson="03-compute-density" ' ..
    'data-state="passed"', 1, true), "a passed cell")
  check(page:find('<td class="cell stuck" data-user="bob" data-lesson="03-compute-density"', 1, true))
  check(page:find('<td class="cell not-started" data-user="bob" data-lesson="04-shared-memory"', 1, true))
  check(page:find('<tr data-task="04-shared-memory/1" class="hot">', 1, true), "per-task table")
  check(page:find('<span class="count">5×</span> <span class="message" title="wrong result at (3, 4)">', 1, true))
  checkeq(select(2, page:gsub('<rect class="bar"', "")), 5, "one bar per task")
  check(page:find("<svg id=\"chart\"", 1, true) and page:find("</svg>", 1, true), "inline SVG")
  check(not page:find("https?://"), "no URL at all")
  check(not page:find("<script", 1, true) and not page:find("<link", 1, true), "nothing external")
  check(not page:find("url%("), "no CSS url()")
end)

test("class_report: HTML shortens long messages and keeps them whole in the tooltip", function()
  local recs = class()
  local long = ("x"):rep(100)
  recs[3].tasks["03-compute-density/2"].failures = { long, long, long }
  local page = report.html(build(recs))
  check(page:find('title="' .. long .. '">' .. ("x"):rep(69) .. "…</span>", 1, true))
end)

-- An output that collects what watch writes.
local function buffer()
  local b = { parts = {} }
  function b:write(s) self.parts[#self.parts + 1] = s end
  function b:text() return table.concat(self.parts) end
  return b
end

test("class_report: watch redraws `times` times, sleeping between", function()
  local out, n, sleeps = buffer(), 0, {}
  local count, why = report.watch(function() n = n + 1; return "draw " .. n .. "\nline 2\n" end,
    { interval = 7, out = out, times = 2, sleep = function(s) sleeps[#sleeps + 1] = s end })
  checkeq({ count, why, n }, { 2, "times", 2 })
  checkeq(sleeps, { 7 }, "no sleep after the last redraw")
  checkeq(out:text(), "\27[2J\27[Hdraw 1\27[K\nline 2\27[K\n\27[J\27[Hdraw 2\27[K\nline 2\27[K\n\27[J")
end)

test("class_report: watch stops on an interrupt and returns normally", function()
  local out, n = buffer(), 0
  local count, why = report.watch(function()
    n = n + 1
    if n == 3 then error("interrupted", 0) end
    return "x\n"
  end, { interval = 1, out = out, sleep = function() end })
  checkeq({ count, why }, { 2, "interrupted" })
  count, why = report.watch(function() return "x\n" end,
    { out = buffer(), sleep = function() error("stdin:1: interrupted!") end })
  checkeq({ count, why }, { 1, "interrupted" }, "lua.c's message too")
end)

test("class_report: watch shows a failing fetch and tries again", function()
  local out, n = buffer(), 0
  report.watch(function()
    n = n + 1
    if n == 1 then error("cannot read /class: gone\27[2J", 0) end
    return "fine\n"
  end, { out = out, times = 2, sleep = function() end })
  check(out:text():find("cannot show the report: cannot read /class: gone?[2J\27[K\n", 1, true), out:text())
  check(out:text():find("fine", 1, true))
  checkerr("oops", report.watch, function() return "x" end,
    { out = buffer(), sleep = function() error("oops") end })
  checkerr("class_report.watch: fetch must be a function", report.watch, "text")
  checkerr("class_report.watch: interval must be 0..86400 seconds", report.watch, print, { interval = -1 })
end)

test("class_report: watch's own wait really waits", function()
  local out = buffer()
  local t0 = os.time()
  local count = report.watch(function() return "x\n" end, { interval = 0.05, out = out, times = 2 })
  checkeq(count, 2)
  check(os.time() - t0 < 5, "a short wait is short")
end)
