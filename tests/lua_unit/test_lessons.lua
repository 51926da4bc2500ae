-- test_lessons.lua: the lesson engine without a GPU: the Markdown block
-- parser (what it accepts and the message for each mistake it refuses), the
-- progress file (round trip, corrupt, unreadable, atomic and private
-- writes), the REPL-like runner, and the commands driven through a small
-- lesson that needs no kernels: tasks gate next(), failed checks give hints,
-- progress survives a fresh engine, free play is undone, verify catches a
-- check that passes a wrong answer.

local parse = require "lesson_parse"
local progress = require "lesson_progress"
local run = require "lesson_run"

local function tmpdir()
  local d = run.tempdir()
  assert(d, "cannot make a temporary folder")
  return d
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- A lesson with a preamble, an example, a task and a kernel file to edit.
local F = "```"
local GOOD = table.concat({
  "<!-- cudalab: requires cuda.kernel -->",
  "# A title",
  "",
  "Intro text.",
  "",
  "## First step",
  "Some text.",
  F .. "lua", "tl_x = 20", "tl_x + 1", F,
  F .. "text", "shown as it is", F,
  "## A task",
  F .. "cuda edit=k.cu", "__global__ void k() {}", F,
  F .. "lua check", "return tl_y == 42, 'tl_y should be 42'", F,
  F .. "hint", "first hint", F,
  F .. "hint", "second hint", F,
  F .. "lua solution", "tl_y = 42", F,
  F .. "lua wrong", "tl_y = 41", F,
  F .. "lua wrong", "tl_y = nil", F,
  F .. "cuda wrong=k.cu", "__global__ void k() { int x; }", F,
  F .. "hint race", "a race hint", F,
  F .. "cuda solution=k.cu", "__global__ void k() { }", F,
  "````markdown", F .. "lua chek", "not a block", F, "````",
}, "\n")

test("the parser finds the title, steps, blocks and requirements", function()
  local l = parse.parse(GOOD, "09-good")
  checkeq(l.title, "A title")
  checkeq(l.requires, { "cuda.kernel" })
  checkeq(#l.steps, 3)
  checkeq(l.steps[1].title, "A title")
  checkeq(l.steps[2].title, "First step")
  local kinds = {}
  for _, it in ipairs(l.steps[2].items) do kinds[#kinds + 1] = it.kind end
  checkeq(kinds, { "text", "example", "show" })
  checkeq(l.steps[2].items[2].code, "tl_x = 20\ntl_x + 1")
  checkeq(l.steps[2].task, false)
  local t = l.steps[3]
  checkeq(t.task, true)
  checkeq(t.hints, { "first hint", "second hint" })
  checkeq(t.solution.code, "tl_y = 42")
  checkeq(#t.wrongs, 3)
  checkeq(t.wrongs[1], { kind = "lua", code = "tl_y = 41", line = 31 })
  checkeq(t.wrongs[3].kind .. " " .. t.wrongs[3].file, "cuda k.cu")
  checkeq(t.wrongs[3].code, "__global__ void k() { int x; }")
  checkeq(t.hint_for, { race = "a race hint" }, "a tagged hint is kept apart from the others")
  checkeq(t.files["k.cu"].edit, "__global__ void k() {}")
  checkeq(t.files["k.cu"].solution, "__global__ void k() { }")
  -- the four-backtick fence keeps its inner ``` lines as shown text
  checkeq(t.items[#t.items].kind, "show")
  checkeq(t.items[#t.items].code, F .. "lua chek\nnot a block\n" .. F)
end)

test("the parser refuses mistakes and names the line", function()
  local function task(extra) return "# T\n## S\n" .. F .. "lua check\nreturn true\n" .. F .. "\n" .. extra end
  local sol = F .. "lua solution\nx = 1\n" .. F .. "\n"
  local wrong1 = F .. "lua wrong\nx = 2\n" .. F .. "\n"
  local wrong = wrong1 .. wrong1 .. wrong1
  local hint = F .. "hint\nh\n" .. F .. "\n"
  checkerr("bad: line 2: unknown lua block '```lua chek'", parse.parse, "# T\n" .. F .. "lua chek\nx\n" .. F, "bad")
  checkerr("the task has no solution", parse.parse, task(wrong .. hint), "bad")
  checkerr("the task has no wrong answer", parse.parse, task(sol .. hint), "bad")
  checkerr("the task has no ```hint", parse.parse, task(sol .. wrong), "bad")
  checkerr("hints belong to a task", parse.parse, "# T\n" .. hint, "bad")
  checkerr("bad: step 'S' (line 2): the task has 2 wrong answers; it needs at least 3", parse.parse,
    task(sol .. wrong1 .. wrong1 .. hint), "bad")
  checkerr("bad: line 21: unknown finding 'racy' in '```hint racy' (known: block, bounds, compile,", parse.parse,
    task(sol .. wrong .. hint .. F .. "hint racy\nh\n" .. F .. "\n"), "bad")
  checkerr("unknown hint block '```hint race bounds'", parse.parse,
    task(sol .. wrong .. hint .. F .. "hint race bounds\nh\n" .. F .. "\n"), "bad")
  checkerr("a second ```hint race in one step", parse.parse,
    task(sol .. wrong .. hint .. (F .. "hint race\nh\n" .. F .. "\n"):rep(2)), "bad")
  checkerr("hints belong to a task", parse.parse, "# T\n" .. F .. "hint race\nh\n" .. F .. "\n", "bad")
  checkerr("line 2: the code block is never closed", parse.parse, "# T\n" .. F .. "lua\nx = 1\n", "bad")
  checkerr("line 3: Lua syntax error", parse.parse, "# T\n" .. F .. "lua\nx = = 1\n" .. F, "bad")
  checkerr("Lua syntax error", parse.parse, task(sol .. wrong .. hint):gsub("return true", "return ("), "bad")
  checkerr("k.cu has no ```cuda solution=k.cu", parse.parse, "# T\n" .. F .. "cuda edit=k.cu\nx\n" .. F, "bad")
  checkerr("must be a plain name ending in .cu", parse.parse, "# T\n" .. F .. "cuda edit=../k.cu\nx\n" .. F, "bad")
  checkerr("unknown cuda block", parse.parse, "# T\n" .. F .. "cuda edit=k.cu solution=k.cu\nx\n" .. F, "bad")
end)

test("three hints a task are the rule, enforced only while STRICT_HINTS is on", function()
  checkeq(parse.MIN_HINTS, 3)
  checkeq(parse.STRICT_HINTS, false, "off until every lesson has three hints a task")
  local function task(nhints)
    local t = { "# T", "## S", F .. "lua check", "return true", F, F .. "lua solution", "x = 1", F }
    for _ = 1, 3 do t[#t + 1] = F .. "lua wrong\nx = 2\n" .. F end
    for i = 1, nhints do t[#t + 1] = F .. "hint\nh" .. i .. "\n" .. F end
    return table.concat(t, "\n")
  end
  checkeq(#parse.parse(task(1), "ok").steps[1].hints, 1, "one hint is enough while it is off")
  parse.STRICT_HINTS = true
  local ok, err = pcall(function()
    checkerr("bad: step 'S' (line 2): the task has 2 hints; it needs at least 3 (```hint blocks, " ..
      "from a nudge to the answer)", parse.parse, task(2), "bad")
    checkerr("the task has 1 hint; it needs at least 3", parse.parse, task(1), "bad")
    checkeq(#parse.parse(task(3), "ok").steps[1].hints, 3)
  end)
  parse.STRICT_HINTS = false
  if not ok then error(err, 0) end
end)

test("an example block may hold bare expressions, as at the prompt", function()
  local l = parse.parse("# T\n" .. F .. "lua\n1 + 1\nx\n" .. F, "ok")
  checkeq(l.steps[1].items[1].kind, "example")
end)

test("the runner cuts statements as the prompt does", function()
  local sts = run.statements("a = 1\n\nfor i = 1, 2 do\n  a = a + i\nend\n-- note\na")
  local texts = {}
  for i, s in ipairs(sts) do texts[i] = s.text end
  checkeq(texts, { "a = 1", "for i = 1, 2 do\n  a = a + i\nend", "-- note", "a" })
  checkeq(sts[2].line, 3)
  checkerr("line 1: the statement is never finished", run.statements, "for i = 1, 2 do")
  checkerr("line 2:", run.statements, "x = 1\ny = = 2")
end)

test("the runner echoes, prints values, records writes and checks expected errors", function()
  local rec = {}
  local env = run.env(rec, { helper = function() return 7 end })
  local out = capture(function()
    assert(run.run("tl_r = helper()\ntl_r * 2", env, { echo = true }))
  end)
  checkeq(out, { "> tl_r = helper()", "> tl_r * 2", "14" })
  checkeq(rec, { tl_r = 7 })
  checkeq(rawget(_G, "tl_r"), 7)
  local ok, err = run.run("error('boom', 0)", env)
  checkeq(ok, nil); checkeq(err, "boom")
  checkeq(run.run("tl_r = 1\nerror('expected', 0)", env, { expect_error = true }), true)
  ok, err = run.run("tl_r = 1", env, { expect_error = true })
  check(err:find("ran without an error", 1, true), err)
  ok, err = run.run("error('early', 0)\ntl_r = 2", env, { expect_error = true })
  checkeq(err, "early")
  rawset(_G, "tl_r", nil)
end)

test("progress round-trips through its text form", function()
  local st = { current = "02-b", lessons = {
    ["01-a"] = { step = 6, done = true, passed = {} },
    ["02-b"] = { step = 4, done = false, passed = { [2] = true, [4] = true } } } }
  local text = progress.encode(st)
  checkeq(text, "cudalab lessons 1\ncurrent 02-b\nlesson 01-a 6 done -\nlesson 02-b 4 started 2,4\n")
  checkeq(progress.decode(text), st)
end)

test("a skipped task is kept apart from a passed one", function()
  local st = { lessons = { ["03-c"] = { step = 5, done = false,
    passed = { [2] = true, [4] = "skipped" } } } }
  local text = progress.encode(st)
  checkeq(text, "cudalab lessons 1\nlesson 03-c 5 started 2,4s\n")
  checkeq(progress.decode(text), st)
  local bad, problems = progress.decode("cudalab lessons 1\nlesson 03-c 5 started 2,4x\n")
  checkeq(bad.lessons["03-c"], nil)
  check(problems[1]:find("cannot be read", 1, true), problems[1])
end)

test("progress decoding refuses what is not a progress file", function()
  local _, why = progress.decode("something else\n")
  checkeq(why, "line 1: not a cudalab progress file")
  _, why = progress.decode("")
  checkeq(why, "line 1: not a cudalab progress file")
end)

-- A step of 99999999999999999999 was once read as 1e+20, written back so,
-- then judged damaged, and every lesson's progress was dropped.
test("progress decoding leaves out bad entries one by one and keeps the rest", function()
  local good = "lesson 01-a 3 started 1,2\n"
  local cases = {
    { "lesson 02-b 99999999999999999999 started -", "the step '99999999999999999999' of lesson 02-b is not a step number (1 to 9999); that lesson starts afresh" },
    { "lesson 02-b -3 started -", "the step '-3' of lesson 02-b is not a step number (1 to 9999); that lesson starts afresh" },
    { "lesson 02-b 2.5 started -", "the step '2.5' of lesson 02-b is not a step number (1 to 9999); that lesson starts afresh" },
    { "lesson 02-b two started -", "the step 'two' of lesson 02-b is not a step number (1 to 9999); that lesson starts afresh" },
    { "lesson 02-b 0 started -", "the step '0' of lesson 02-b is not a step number (1 to 9999); that lesson starts afresh" },
    { "lesson 02-b 1e3 started -", "the step '1e3' of lesson 02-b is not a step number (1 to 9999); that lesson starts afresh" },
    { "lesson 02-b 2 begun -", "lesson 02-b is 'begun', not done or started; that lesson starts afresh" },
    { "lesson 02-b 2 started 1,,2", "the passed steps '1,,2' of lesson 02-b cannot be read; that lesson starts afresh" },
    { "lesson 02-b 2 started 1,99999999999999999999", "the passed steps '1,99999999999999999999' of lesson 02-b cannot be read; that lesson starts afresh" },
    { "lesson ?? what", "cannot read 'lesson ?? what'; it is left out" },
  }
  for _, c in ipairs(cases) do
    local st, problems = progress.decode("cudalab lessons 1\n" .. c[1] .. "\n" .. good)
    checkeq(problems, { "line 2: " .. c[2] }, c[1])
    checkeq(st.lessons, { ["01-a"] = { step = 3, done = false, passed = { [1] = true, [2] = true } } }, c[1])
  end
  checkeq(progress.encode(progress.decode("cudalab lessons 1\n" .. good)), "cudalab lessons 1\n" .. good)
end)

test("a missing progress file is a quiet fresh start", function()
  local d = tmpdir()
  local st, warning = progress.load(d .. "/none")
  checkeq(st, progress.empty())
  checkeq(warning, nil)
  run.rmdir(d)
end)

test("a file that is not progress gives a message, a fresh start, and is kept aside", function()
  local d = tmpdir()
  write(d .. "/lessons", "cudalab lessons 7\nlesson 01-a 1 started -\n")
  local st, warning = progress.load(d .. "/lessons")
  checkeq(st, progress.empty())
  check(warning:find("is damaged (line 1: not a cudalab progress file)", 1, true), warning)
  check(warning:find("kept as " .. d .. "/lessons.bad", 1, true), warning)
  check(run.read_file(d .. "/lessons.bad"), "the damaged file was not kept")
  checkeq(run.read_file(d .. "/lessons"), nil)
  run.rmdir(d)
end)

test("a bad entry costs only itself: the rest loads, saves back whole, and the file is kept", function()
  local d = tmpdir()
  local text = "cudalab lessons 1\ncurrent 01-a\nlesson 01-a 3 started -\n" ..
    "lesson 02-b 99999999999999999999 started -\nlesson 03-c 5 done 2\n"
  write(d .. "/lessons", text)
  local st, warning = progress.load(d .. "/lessons")
  checkeq(st.current, "01-a")
  checkeq(st.lessons["01-a"].step, 3)
  checkeq(st.lessons["03-c"].step, 5)
  checkeq(st.lessons["02-b"], nil)
  check(warning:find("could not be read (the file as it was is kept as " .. d .. "/lessons.bad): " ..
    "line 4: the step '99999999999999999999' of lesson 02-b is not a step number", 1, true), warning)
  checkeq(run.read_file(d .. "/lessons.bad"), text)
  checkeq(progress.save(d .. "/lessons", st), true)
  local saved = run.read_file(d .. "/lessons")
  check(not saved:find("e+", 1, true), saved)
  checkeq(saved, "cudalab lessons 1\ncurrent 01-a\nlesson 01-a 3 started -\nlesson 03-c 5 done 2\n")
  run.rmdir(d)
end)

test("a FIFO in place of the progress file does not hang, and is set aside", function()
  local d = tmpdir()
  os.execute("mkfifo " .. run.shq(d .. "/lessons"))
  checkeq(progress.peek(d .. "/lessons"), nil)
  local st, warning = progress.load(d .. "/lessons")
  checkeq(st, progress.empty())
  check(warning:find(d .. "/lessons is not a regular file (a FIFO, a device or a folder?); remove it", 1, true), warning)
  checkeq(progress.save(d .. "/lessons", { lessons = { ["01-a"] = { step = 2, passed = {} } } }), true)
  checkeq(progress.load(d .. "/lessons").lessons["01-a"].step, 2)
  run.rmdir(d)
end)

test("a progress folder or file others can write is refused, with the fix", function()
  local d = tmpdir()
  os.execute("mkdir -m 777 " .. run.shq(d .. "/open"))
  local ok, why = progress.save(d .. "/open/lessons", { lessons = {} })
  checkeq(ok, nil)
  checkeq(why, "cannot save lesson progress: " .. d .. "/open can be written by anyone (mode 777); " ..
    "make it private with: chmod 700 " .. d .. "/open")
  write(d .. "/lessons", "cudalab lessons 1\nlesson 01-a 2 started -\n")
  os.execute("chmod 666 " .. run.shq(d .. "/lessons"))
  local st, warning = progress.load(d .. "/lessons")
  checkeq(st, progress.empty())
  check(warning:find("can be written by others (mode 666); make it private with: chmod 600 " .. d .. "/lessons", 1, true), warning)
  run.rmdir(d)
end)

test("a save sweeps away the temporaries of killed saves, and only those", function()
  local d = tmpdir()
  write(d .. "/lessons.tmp.999999999.0", "left by a save that was killed")
  write(d .. "/lessons.tmp.1.0", "process 1 is alive: its save may be in progress")
  checkeq(progress.save(d .. "/lessons", { lessons = {} }), true)
  checkeq(run.read_file(d .. "/lessons.tmp.999999999.0"), nil)
  check(run.read_file(d .. "/lessons.tmp.1.0"), "a live process's temporary was removed")
  run.rmdir(d)
end)

-- Two REPLs of one learner: the second save once dropped the first's steps.
test("two processes saving at once keep both's steps", function()
  local d = tmpdir()
  local p = io.popen("readlink /proc/$PPID/exe")
  local bin = p:read("l"); p:close()
  write(d .. "/saver.lua", [[
    local progress = require "lesson_progress"
    local path, me = ...
    local st = progress.load(path)
    for i = 1, 30 do
      st.lessons[me .. "-" .. i] = { step = i, done = false, passed = {} }
      assert(progress.save(path, st))
    end]])
  local cmd = string.format("%s --backend none %s %s a & %s --backend none %s %s b & wait", run.shq(bin),
    run.shq(d .. "/saver.lua"), run.shq(d .. "/lessons"), run.shq(bin), run.shq(d .. "/saver.lua"),
    run.shq(d .. "/lessons"))
  os.execute(cmd)
  local st = progress.load(d .. "/lessons")
  local n = 0
  for _ in pairs(st.lessons) do n = n + 1 end
  checkeq(n, 60, "lessons saved by the two processes together")
  checkeq(st.lessons["a-30"].step, 30)
  checkeq(st.lessons["b-30"].step, 30)
  run.rmdir(d)
end)

test("a save keeps what another REPL saved meanwhile, and a reset here still removes", function()
  local d = tmpdir()
  local path = d .. "/lessons"
  checkeq(progress.save(path, { lessons = { ["01-a"] = { step = 1, passed = {} } } }), true)
  local mine = progress.load(path)
  -- another REPL, with its own view of the file, moves on in lesson 02-b
  package.loaded["lesson_progress"] = nil
  local other_mod = require "lesson_progress"
  package.loaded["lesson_progress"] = progress
  local theirs = other_mod.load(path)
  theirs.lessons["02-b"] = { step = 4, done = false, passed = { [2] = true } }
  theirs.current = "02-b"
  checkeq(other_mod.save(path, theirs), true)
  -- this one moves on in 01-a, and keeps 02-b
  mine.lessons["01-a"].step = 2
  checkeq(progress.save(path, mine), true)
  local now = progress.load(path)
  checkeq(now.lessons["01-a"].step, 2)
  checkeq(now.lessons["02-b"].step, 4)
  checkeq(now.current, "02-b", "the current lesson this REPL did not change is the other's")
  checkeq(mine.lessons["02-b"].step, 4, "the saving REPL sees the other's progress too")
  mine.lessons["01-a"] = nil -- reset()
  checkeq(progress.save(path, mine), true)
  checkeq(progress.load(path).lessons["01-a"], nil)
  run.rmdir(d)
end)

test("an unreadable or oversized progress file gives a message and a fresh start", function()
  local d = tmpdir()
  os.execute("mkdir " .. run.shq(d .. "/lessons")) -- a folder where the file should be
  local st, warning = progress.load(d .. "/lessons")
  checkeq(st, progress.empty())
  check(warning:find("cannot read your lesson progress", 1, true), warning)
  write(d .. "/big", "cudalab lessons 1\n" .. string.rep("#", 70000))
  st, warning = progress.load(d .. "/big")
  checkeq(st, progress.empty())
  check(warning:find("larger than 65536 bytes", 1, true), warning)
  run.rmdir(d)
end)

test("saving is atomic and private, and a failed save says why", function()
  local d = tmpdir()
  local path = d .. "/state/cudalab/lessons"
  local st = { current = "01-a", lessons = { ["01-a"] = { step = 2, done = false, passed = {} } } }
  checkeq(progress.save(path, st), true)
  checkeq(progress.load(path), st)
  local p = io.popen("stat -c '%a' " .. run.shq(path) .. " " .. run.shq(d .. "/state/cudalab") .. "; ls -a " .. run.shq(d .. "/state/cudalab"))
  local out = p:read("a"); p:close()
  checkeq(out, "600\n700\n.\n..\nlessons\nlessons.lock\n", "modes 0600 and 0700, and no temporary file left")
  st.lessons["01-a"].step = 3
  checkeq(progress.save(path, st), true)
  checkeq(progress.load(path).lessons["01-a"].step, 3)
  local ok, why = progress.save("/dev/null/cannot/lessons", st)
  checkeq(ok, nil)
  check(why:find("^cannot save lesson progress: "), why)
  run.rmdir(d)
end)

test("peek reads the current lesson and step cheaply", function()
  local d = tmpdir()
  checkeq(progress.peek(d .. "/none"), nil)
  progress.save(d .. "/lessons", { current = "01-a", lessons = { ["01-a"] = { step = 3, passed = {} } } })
  checkeq({ progress.peek(d .. "/lessons") }, { "01-a", 3 })
  run.rmdir(d)
end)

---------------------------------------------------------------- the engine --

-- A lesson with no kernels, so the commands can be driven without a GPU.
local PLAIN = table.concat({
  "# Plain", "", "## One", "Text one.",
  F .. "lua", "tl_a = {1, 2, 3}", "#tl_a", F,
  "## Two: a task", "Set tl_b to the sum of tl_a.",
  F .. "lua check", "if tl_b == 5 then return expect.fail('tl_b should be 6, it is 5', 'value') end",
  "return tl_b == 6, 'tl_b should be 6, it is ' .. tostring(tl_b)", F,
  F .. "hint", "add them up", F,
  F .. "hint", "tl_b = 6", F,
  F .. "lua solution", "tl_b = tl_a[1] + tl_a[2] + tl_a[3]", F,
  F .. "hint value", "the hint for a wrong value", F,
  F .. "lua wrong", "tl_b = tl_a[1] + tl_a[2]", F,
  F .. "lua wrong", "tl_b = nil", F,
  F .. "lua wrong", "tl_b = '6'", F,
  "## Three", "Uses tl_a.",
  F .. "lua", "tl_c = #tl_a", F,
}, "\n")

local TL = { "tl_a", "tl_b", "tl_c", "tl_w" }

-- Runs fn(L, dir) with a fresh engine over a folder holding PLAIN (and
-- `extra` lessons); progress goes to dir/state.
local function with_engine(extra, fn)
  local d = tmpdir()
  os.execute("mkdir " .. run.shq(d .. "/lessons"))
  write(d .. "/lessons/01-plain.md", PLAIN)
  for name, text in pairs(extra or {}) do write(d .. "/lessons/" .. name, text) end
  local function fresh()
    package.loaded.lessons = nil
    local L = require "lessons"
    L.configure({ dir = d .. "/lessons", progress = d .. "/state", workdir = d, quiet = false })
    return L
  end
  -- Wide enough that no message is broken: the tests compare whole sentences. The test of
  -- breaking sets its own width.
  local term = require "term"
  term.width_override = 200
  local ok, err = pcall(fn, fresh, d)
  term.width_override = nil
  for _, k in ipairs(TL) do rawset(_G, k, nil) end
  package.loaded.lessons = nil
  run.rmdir(d)
  if not ok then error(err, 0) end
end

local function joined(lines) return table.concat(lines, "\n") end

test("a step's title that does not fit is wrapped, never cut", function()
  local long = PLAIN:gsub("# Plain", "# Plain, with a title long enough not to fit on one line of forty")
  with_engine({ ["02-long.md"] = long }, function(fresh)
    local term = require "term"
    term.width_override = 40
    local ok, out = pcall(function() return joined(capture(fresh().commands.lesson, 2)) end)
    term.width_override = nil
    assert(ok, out)
    check(not out:find("…", 1, true), "the title was cut: " .. out)
    local head = out:match("(── step 1 of 3:.-─+)\n")
    check(head, "no header in: " .. out)
    for line in head:gmatch("[^\n]+") do check(term.len(line) <= 40, "too wide: " .. line) end
    for _, w in ipairs({ "Plain,", "forty", "One" }) do check(head:find(w, 1, true), w .. " missing: " .. head) end
  end)
end)

test("lesson, next, check, hint and skip drive a lesson; progress is saved", function()
  with_engine(nil, function(fresh, d)
    local L = fresh()
    local C = L.commands
    local out = joined(capture(C.lesson, 1))
    check(out:find("── step 1 of 3: Plain · One ─", 1, true), out)
    check(out:find("> tl_a = {1, 2, 3}\n> #tl_a\n3", 1, true), out)
    checkeq(progress.load(d .. "/state").current, "01-plain")
    out = joined(capture(C.next))
    check(out:find("step 2 of 3: Plain · Two: a task", 1, true), out)
    checkeq(joined(capture(C.next)), "This step is a task: check() when you are done, hint() for a hint, skip() to run the reference solution.")
    -- a failed check says what is wrong and that hint() exists, never a hint's text
    local OFFER = "; skip() runs the reference solution."
    rawset(_G, "tl_b", 5)
    checkeq(capture(C.check), { "Not yet: tl_b should be 6, it is 5",
      "hint() gives a hint for what the check found" .. OFFER })
    checkeq(capture(C.hint), { "Hint, for what the check found: the hint for a wrong value" },
      "the hint tagged with what the check found comes first")
    rawset(_G, "tl_b", 4)
    checkeq(capture(C.check), { "Not yet: tl_b should be 6, it is 4", "hint() gives a hint (1 of 2)" .. OFFER })
    checkeq(capture(C.hint), { "Hint 1 of 2: add them up" }, "then the untagged hints in order")
    rawset(_G, "tl_b", 5)
    checkeq(capture(C.check), { "Not yet: tl_b should be 6, it is 5",
      "hint() gives a hint (2 of 2, the last)" .. OFFER }, "a tagged hint is given once")
    rawset(_G, "tl_b", 3)
    checkeq(capture(C.check), { "Not yet: tl_b should be 6, it is 3",
      "hint() gives a hint (2 of 2, the last)" .. OFFER }, "asking is what gives a hint")
    checkeq(capture(C.hint), { "Hint 2 of 2: tl_b = 6", "(That is the last hint; skip() runs the reference solution.)" })
    checkeq(capture(C.check), { "Not yet: tl_b should be 6, it is 3", "hint() shows the last hint again" .. OFFER })
    checkeq(capture(C.hint)[1], "Hint 2 of 2: tl_b = 6", "the last hint repeats")
    out = joined(capture(C.skip))
    check(out:find("> tl_b = tl_a[1] + tl_a[2] + tl_a[3]", 1, true) and out:find("Done. next() goes on.", 1, true), out)
    checkeq(progress.load(d .. "/state").lessons["01-plain"].passed, { [2] = "skipped" },
      "a skipped task is kept as skipped, not passed")
    capture(C.next)
    checkeq(rawget(_G, "tl_c"), 3)
    out = joined(capture(C.next))
    checkeq(out:gsub("\n  ", " "), "End of lesson 01-plain; it is not done yet: 1 task skipped (a " ..
      "lesson is done when every task has passed check(); lesson(1) goes through it again). " ..
      "lessons() lists them all.", "a skipped task is not done")
    local st = progress.load(d .. "/state")
    checkeq(st.current, nil)
    checkeq(st.lessons["01-plain"].done, true, "read to the end")
    checkeq(capture(C.lessons)[2], "   1  Plain  read through, 1 task skipped  tasks s")
  end)
end)

test("a lesson is done only when every task passed; skipped and reset tasks are told apart", function()
  with_engine({ ["02-plain.md"] = PLAIN:gsub("# Plain", "# Again") }, function(fresh)
    local C = fresh().commands
    capture(C.lesson, 1)
    capture(C.next)
    rawset(_G, "tl_b", 6)
    checkeq(capture(C.check), { "Correct. next() goes on." })
    capture(C.next)
    checkeq(joined(capture(C.next)), "Lesson 01-plain is done. lesson(2) starts the next one; " ..
      "lessons() lists them all.")
    capture(C.lesson, 2)
    capture(C.next)
    capture(C.skip)
    capture(C.next)
    check(joined(capture(C.next)):find("it is not done yet: 1 task skipped", 1, true))
    local out = capture(C.lessons)
    checkeq(out[2], "   1  Plain  done  tasks ✓")
    checkeq(out[3], "   2  Again  read through, 1 task skipped  tasks s")
    capture(C.lesson, 1)
    capture(C.reset)
    out = capture(C.lessons)
    checkeq(out[2], "   1  Plain  read through, 1 task reset; at step 1 of 3  tasks r  <- current")
    checkeq(out[#out], "(tasks: ✓ passed, s skipped with skip(), r undone by reset(), · not done " ..
      "yet. A lesson is done when every task has passed its check.)")
  end)
end)

test("the launch log is on while a task is open, and off outside lessons", function()
  local cuda, _, _, state = require("fake_cuda").new()
  with_globals({ cuda = cuda }, function()
    with_engine(nil, function(fresh)
      local C = fresh().commands
      capture(C.lesson, 1)
      checkeq(state.log, nil, "step 1 is no task: no log")
      capture(C.next)
      checkeq(type(state.log), "table", "step 2 is a task: logging")
      capture(C.bye)
      checkeq(state.log, nil, "bye() turns it off")
      capture(C.lesson, 1)
      checkeq(type(state.log), "table", "resuming at the task turns it on again")
      capture(C.back)
      checkeq(state.log, nil, "back() to a step with no task turns it off")
    end)
  end)
end)

test("a finished lesson stays finished when it is revisited, and resumes where the revisit left", function()
  with_engine(nil, function(fresh, d)
    local C = fresh().commands
    capture(C.lesson, 1)
    capture(C.next)
    capture(C.skip)
    capture(C.next)
    capture(C.next) -- done
    local out = joined(capture(C.lesson, 1))
    check(out:find("step 1 of 3", 1, true), out)
    checkeq(progress.load(d .. "/state").lessons["01-plain"].done, true, "done after revisiting step 1")
    capture(C.next)
    capture(C.bye)
    C = fresh().commands
    out = joined(capture(C.lesson, 1))
    check(out:find("step 2 of 3", 1, true), out)
    checkeq(capture(C.lessons)[2], "   1  Plain  read through, 1 task skipped; at step 2 of 3  tasks s  <- current",
      "lessons() still says it was read through, and that the task was skipped")
  end)
end)

-- A lesson whose task has a kernel to edit (checks need no GPU: they read the file).
local EDITING = table.concat({
  "# Editing", "", "## Edit", "Change k.cu.",
  F .. "cuda edit=k.cu", "__global__ void k() {}", F,
  F .. "lua check", "local f = io.open(workfile 'k.cu'); local s = f:read('a'); f:close()",
  "return s:find('done') ~= nil, 'k.cu does not say done yet'", F,
  F .. "cuda solution=k.cu", "__global__ void k() { /* done */ }", F,
  F .. "cuda wrong=k.cu", "__global__ void k() { /* not yet */ }", F,
  F .. "cuda wrong=k.cu", "__global__ void k() { /* later */ }", F,
  F .. "cuda wrong=k.cu", "__global__ void k() { /* soon */ }", F,
  F .. "hint", "write done in it", F,
}, "\n")

test("reset() puts back the original kernel and keeps the learner's as .mine", function()
  with_engine({ ["02-editing.md"] = EDITING }, function(fresh, d)
    local C = fresh().commands
    local l = joined(capture(C.lesson, 2))
    check(l:find("step 1 of 1", 1, true), l)
    local e = joined(capture(C.edit, "__global__ void k() { /* mine */ }"))
    check(e:find("Saved your kernel as " .. d .. "/k.cu", 1, true), e)
    checkeq(run.read_file(d .. "/k.cu"), "__global__ void k() { /* mine */ }\n")
    local out = joined(capture(C.reset))
    check(out:find("Put back the original k.cu in " .. d, 1, true), out)
    checkeq(run.read_file(d .. "/k.cu"), "__global__ void k() {}\n", "the original is back")
    checkeq(run.read_file(d .. "/k.cu.mine"), "__global__ void k() { /* mine */ }\n", "the learner's is kept")
    out = joined(capture(C.reset))
    check(not out:find("Put back", 1, true), "an unchanged file is not put back again: " .. out)
    checkeq(C.workfile("k.cu"), d .. "/k.cu", "workfile at the prompt names the copy")
    checkeq(joined(capture(C.workfile, "../k.cu")), 'workfile takes a kernel file\'s name, such as workfile "double.cu".')
  end)
end)

test("the workspace is CUDALAB_WORKSPACE, else under XDG_DATA_HOME, never the current folder", function()
  package.loaded.lessons = nil
  local L = require "lessons"
  local getenv = os.getenv
  local env = { CUDALAB_WORKSPACE = "/w/ws", XDG_DATA_HOME = "/x/data", HOME = "/home/l" }
  os.getenv = function(k) return env[k] end
  local ok, err = pcall(function()
    checkeq(L.workspace(), "/w/ws")
    env.CUDALAB_WORKSPACE = nil
    checkeq(L.workspace(), "/x/data/cudalab/workspace")
    env.XDG_DATA_HOME = "relative" -- not absolute: ignored, as the XDG spec says
    checkeq(L.workspace(), "/home/l/.local/share/cudalab/workspace")
  end)
  os.getenv = getenv
  package.loaded.lessons = nil
  if not ok then error(err, 0) end
end)

test("the workspace folder is made private, and one others can write is named with its fix", function()
  local d = tmpdir()
  package.loaded.lessons = nil
  local L = require "lessons"
  local getenv = os.getenv
  os.getenv = function(k) if k == "CUDALAB_WORKSPACE" then return d .. "/ws" end return getenv(k) end
  local ok, err = pcall(function()
    checkeq(L.workdir(), d .. "/ws/scratch")
    local p = io.popen("stat -c %a " .. run.shq(d .. "/ws/scratch"))
    checkeq(p:read("l"), "700", "made private")
    p:close()
    L.configure({ workdir = nil })
    os.execute("mkdir -p " .. run.shq(d .. "/ws/open") .. " && chmod 777 " .. run.shq(d .. "/ws/open"))
    L._S.cur = { name = "open", steps = {} }
    local out = joined(capture(L.workdir))
    check(out:find("cannot be kept safely", 1, true) and out:find("chmod 700", 1, true), out)
  end)
  os.getenv = getenv
  package.loaded.lessons = nil
  run.rmdir(d)
  if not ok then error(err, 0) end
end)

test("the banner names the lesson in progress and the command that resumes it", function()
  local boot = require "lesson_boot"
  local saved = { boot.current, boot.step }
  boot.current, boot.step = "07-memory-coalescing", 4
  checkeq(boot.resume_note(), "You were in lesson 07-memory-coalescing, at step 4: lesson(7) resumes it.")
  boot.current = nil
  checkeq(boot.resume_note(), nil)
  boot.current, boot.step = saved[1], saved[2]
end)

test("a fresh engine resumes at the saved step and re-creates earlier variables", function()
  with_engine(nil, function(fresh)
    local C = fresh().commands
    capture(C.lesson, "plain")
    capture(C.next)
    for _, k in ipairs(TL) do rawset(_G, k, nil) end -- the engine died: globals are gone
    C = fresh().commands
    rawset(_G, "tl_b", 6)
    local out = capture(C.check)
    checkeq(out, { "(Back in 01-plain, step 2 of 3.)",
                   "(Re-ran the code of steps 1 to 2 so that their variables exist again.)",
                   "Correct. next() goes on." })
    checkeq(rawget(_G, "tl_a"), { 1, 2, 3 })
  end)
end)

test("a task not yet passed is not solved by the catch-up after a restart", function()
  with_engine(nil, function(fresh)
    local C = fresh().commands
    capture(C.lesson, 1)
    capture(C.next)
    C = fresh().commands
    rawset(_G, "tl_b", nil)
    local out = capture(C.check)
    checkeq(out[3], "Not yet: tl_b should be 6, it is nil")
  end)
end)

test("free play that replaces a lesson variable is undone at the next step", function()
  with_engine(nil, function(fresh)
    local C = fresh().commands
    capture(C.lesson, 1)
    rawset(_G, "tl_a", "oops")
    local out = capture(C.next)
    checkeq(out[1], "(Put back tl_a as the lesson left it; the next step needs it.)")
    checkeq(rawget(_G, "tl_a"), { 1, 2, 3 })
  end)
end)

test("commands without an open lesson, or in the wrong place, explain themselves", function()
  with_engine(nil, function(fresh)
    local C = fresh().commands
    checkeq(capture(C.next), { "No lesson is open. lessons() lists them; lesson(1) starts the first." })
    checkeq(capture(C.lesson, 7), { "Sorry: there is no lesson 7; lessons() lists them." })
    checkeq(capture(C.lesson, {}), { "lesson(n) takes a lesson's number or part of its name, such as lesson(2) or lesson \"coalescing\"." })
    capture(C.lesson, 1)
    checkeq(capture(C.hint), { "This step has no task, so no hints: next() goes on." })
    checkeq(capture(C.edit), { "This step has no kernel to edit." })
    checkeq(capture(C.back), { "This is the first step. lesson() shows it again." })
    checkeq(capture(C.bye), { "Left 01-plain at step 1; lesson \"01-plain\" resumes it there." })
  end)
end)

test("what the engine says is broken at spaces to the terminal's width, never mid-word", function()
  with_engine(nil, function(fresh)
    local C = fresh().commands
    require("term").width_override = 40
    local out = capture(C.lesson, {})
    checkeq(#out, 1)
    local lines = {}
    for line in out[1]:gmatch("[^\n]+") do lines[#lines + 1] = line end
    check(#lines >= 3, out[1])
    for _, line in ipairs(lines) do check(require("term").len(line) <= 40, line) end
    checkeq(out[1]:gsub("\n  ", " "), "lesson(n) takes a lesson's number or part of its name, " ..
      "such as lesson(2) or lesson \"coalescing\".")
  end)
end)

-- A step whose code is wider than a narrow terminal, and an example that prints spaced output
-- and returns two values.
local WIDE = table.concat({
  "# Wide", "", "## Code",
  "Some prose that is long enough to be wrapped at forty columns, as prose is.",
  F .. "lua",
  "tl_w = 'a    b'   -- a comment long enough to pass forty columns: first .. first + n - 1",
  "print('col1    col2    col3    col4    col5    col6    col7    col8    col9')",
  "tl_w, 12",
  F,
  F .. "sh", "cudalab --sim   --verify-lessons 16   # runs one lesson from end to end, here", F,
  "| a | b |", "|---|---|", "| one cell long enough to wrap | and another one, also long |",
}, "\n")

test("code, examples' output and results are shown as written; prose and tables fit", function()
  with_engine({ ["02-wide.md"] = WIDE }, function(fresh)
    local term = require "term"
    term.width_override = 40
    local ok, out = pcall(function() return capture(fresh().commands.lesson, 2) end)
    term.width_override = 200
    assert(ok, out)
    local lines = {}
    for _, chunk in ipairs(out) do
      for line in (chunk .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
    end
    local shown = {}
    for _, l in ipairs(lines) do shown[l] = true end
    for _, want in ipairs({
      "> tl_w = 'a    b'   -- a comment long enough to pass forty columns: first .. first + n - 1",
      "col1    col2    col3    col4    col5    col6    col7    col8    col9",
      "> tl_w, 12", "a    b\t12",
      "    cudalab --sim   --verify-lessons 16   # runs one lesson from end to end, here" }) do
      check(shown[want], "not shown as written: " .. want .. "\nin:\n" .. table.concat(lines, "\n"))
    end
    for _, l in ipairs(lines) do
      if not (l:match("^>") or l:match("^    ") or l:match("col1") or l:match("\t")) then
        check(term.len(l) <= 40, "prose wider than 40: " .. l)
      end
    end
  end)
end)

test("lessons() fits a narrow terminal: a status that does not fit goes under its title", function()
  local long = PLAIN:gsub("# Plain", "# A lesson whose title is long")
  with_engine({ ["02-long.md"] = long }, function(fresh)
    local term = require "term"
    local C = fresh().commands
    capture(C.lesson, 2)
    term.width_override = 40
    local ok, out = pcall(capture, C.lessons)
    term.width_override = 200
    assert(ok, out)
    local lines = {}
    for line in (table.concat(out, "\n") .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
    for _, l in ipairs(lines) do check(term.len(l) <= 40, "too wide: " .. l) end
    local at = 0
    for i, l in ipairs(lines) do if l == "   2  A lesson whose title is long" then at = i end end
    check(at > 0, table.concat(lines, "\n"))
    checkeq(lines[at + 1], "      step 1 of 3  tasks ·  <- current")
    check(table.concat(lines, "\n"):find("\n   1  Plain\n", 1, true), "a lesson with no status stays on its line")
    out = capture(C.lessons)
    checkeq(out[3], "   2  A lesson whose title is long  step 1 of 3  tasks ·  <- current",
      "at 200 columns, one line a lesson")
  end)
end)

test("a corrupt progress file does not stop the lessons", function()
  with_engine(nil, function(fresh, d)
    write(d .. "/state", "not progress")
    local out = capture(fresh().commands.lesson, 1)
    check(out[1]:find("^Note: your lesson progress in .* is damaged %(line 1: not a cudalab progress file%)"), out[1])
    check(joined(out):find("step 1 of 3", 1, true))
  end)
end)

test("lessons() lists lessons with their status and needs", function()
  local needs = "<!-- cudalab: requires cuda.no_such_thing -->\n" .. PLAIN:gsub("# Plain", "# Later")
  with_engine({ ["02-later.md"] = needs }, function(fresh)
    local C = fresh().commands
    capture(C.lesson, 1)
    local out = capture(C.lessons)
    checkeq(out[2], "   1  Plain  step 1 of 3  tasks ·  <- current")
    checkeq(out[3], "   2  Later  needs cuda.no_such_thing (not in this build yet)")
    checkeq(capture(C.lesson, 2), { "Lesson 02-later needs cuda.no_such_thing, which this build of cudalab does not have yet." })
  end)
end)

test("verify passes a good lesson and fails one whose check takes a wrong answer", function()
  local lax = PLAIN:gsub("return tl_b == 6", "return tl_b ~= nil")
  with_engine({ ["02-lax.md"] = lax }, function(fresh)
    local L = fresh()
    local ok
    local out = capture(function() ok = L.verify() end)
    checkeq(ok, false)
    checkeq(out[1], "1..2", "the plan: one test per lesson")
    check(out[2]:find("^ok %- lesson 01%-plain"), out[2])
    checkeq(out[3], "not ok - lesson 02-lax: step 2 (Two: a task): the ```lua wrong at line 27 passed the check")
    checkeq(out[#out], "1 passed, 1 failed")
    out = capture(function() ok = L.verify("plain") end)
    checkeq(ok, true)
    checkeq(out[#out], "1 passed, 0 failed")
  end)
end)

test("every step has a stable id: its heading, or {#id}; repeats are told apart", function()
  local l = parse.parse(table.concat({ "# T", "Intro.", "## Your turn: a `sum`", "text",
    "## Your turn: a `sum`", "again", "## Pad the tile {#pad}", "x" }, "\n"), "09-x")
  checkeq(l.steps[1].id, "intro")
  checkeq(l.steps[2].id, "your-turn-a-sum")
  checkeq(l.steps[3].id, "your-turn-a-sum-2")
  checkeq(l.steps[4].id, "pad")
  checkeq(l.steps[4].title, "Pad the tile", "the {#id} is not part of the title")
  -- a step added before a task keeps the task's id (its number changes)
  local before = parse.parse(PLAIN, "01-plain")
  local after = parse.parse(PLAIN:gsub("## Two: a task", "## New prose\nMore text.\n## Two: a task"), "01-plain")
  checkeq(before.steps[2].id, "two-a-task")
  checkeq(after.steps[3].id, "two-a-task")
  checkerr("line 1: {#bad id} is not a step id", parse.parse, "## S {#bad id}\n", "bad")
  checkerr("the step id {#a} is used twice", parse.parse, "## S {#a}\n## T {#a}\n", "bad")
end)

test("a check sees the values the lesson's examples set, never the learner's replacement", function()
  local TRUTH = table.concat({
    "# Truth", "## One", F .. "lua", "tl_a = {1, 2, 3}", F,
    "## Sum it", "Set tl_b to the sum of tl_a.",
    F .. "lua check", "local want = 0; for _, v in ipairs(tl_a) do want = want + v end",
    "return tl_b == want, 'tl_b should be ' .. want .. ', it is ' .. tostring(tl_b)", F,
    F .. "hint", "add them up", F,
    F .. "lua solution", "tl_b = tl_a[1] + tl_a[2] + tl_a[3]", F,
    F .. "lua wrong", "tl_b = 5", F, F .. "lua wrong", "tl_b = nil", F, F .. "lua wrong", "tl_b = 7", F,
  }, "\n")
  with_engine({ ["02-truth.md"] = TRUTH }, function(fresh)
    local C = fresh().commands
    capture(C.lesson, 2)
    capture(C.next)
    rawset(_G, "tl_a", { 1, 1, 1 })
    rawset(_G, "tl_b", 3)
    checkeq(capture(C.check)[1], "Not yet: tl_b should be 6, it is 3",
      "the learner's tl_a does not move the check's ground truth")
    -- freeing the lesson's value and setting another does not bring the learner's in either
    rawset(_G, "tl_a", nil)
    capture(C.check)
    rawset(_G, "tl_a", { 1, 1, 1 })
    local out = capture(C.check)[1]
    check(not out:find("Correct", 1, true), out)
    rawset(_G, "tl_b", 6)
    rawset(_G, "tl_a", nil)
  end)
end)

-- A lesson whose example keeps an array (a table with the arrays' metatable name, as the fake
-- cuda makes them) in a table of its own, beside one that holds no array.
local MEMORY = table.concat({
  "# Memory", "## Made", F .. "lua",
  "tl_a = {1, 2, 3}",
  "tl_c = {}",
  "tl_c[1] = setmetatable({}, {__name = 'cudalab.Array'})", F,
  "## Let it go", "Let go of tl_c's array.",
  F .. "lua check",
  "local alive, made = lesson_arrays('tl_c')",
  "local where = {}",
  "for _, it in ipairs(alive) do where[#where + 1] = it.where end",
  "return #alive == 0 and made == 1 and tl_a[1] == 1, made .. ' made, alive: ' ..",
  "  table.concat(where, ', ') .. '; tl_a[1] is ' .. tostring(tl_a and tl_a[1])", F,
  F .. "hint", "drop it", F, F .. "hint", "tl_b = nil", F,
  F .. "lua solution", "tl_b = nil", F,
  F .. "lua wrong", "tl_b = 1", F, F .. "lua wrong", "tl_b = 2", F, F .. "lua wrong", "tl_b = 3", F,
  "## After", "The end.",
}, "\n")

test("a lesson value that holds arrays is let go when the learner replaces it", function()
  with_engine({ ["02-memory.md"] = MEMORY }, function(fresh)
    local C = fresh().commands
    capture(C.lesson, 2)
    local weak = setmetatable({ rawget(_G, "tl_c")[1], rawget(_G, "tl_c") }, { __mode = "v" })
    -- replaced by a value of another kind, the learner's own collection frees it at the prompt,
    -- before any command of the engine runs
    rawset(_G, "tl_c", false)
    rawset(_G, "tl_a", "oops")
    collectgarbage()
    checkeq(weak[1], nil, "the engine kept the array alive")
    checkeq(weak[2], nil, "the engine kept the table that held it alive")
    -- the table with no array is put back; the one that held an array is not
    checkeq(capture(C.next)[1], "(Put back tl_a as the lesson left it; the next step needs it.)")
    checkeq(rawget(_G, "tl_c"), false)
    rawset(_G, "tl_a", { 9 })
    checkeq(capture(C.check)[1], "Correct. next() goes on.",
      "no array alive, and the check reads the lesson's tl_a, not the learner's")
  end)
end)

test("a check reads the lesson's record of its arrays, not a table the learner edits", function()
  with_engine({ ["02-memory.md"] = MEMORY }, function(fresh)
    local C = fresh().commands
    capture(C.lesson, 2)
    capture(C.next)
    -- the learner's own array put in the lesson's table is not the lesson's; the lesson's
    -- array kept under another name is alive, wherever it is
    local tl_c = rawget(_G, "tl_c")
    rawset(_G, "tl_w", tl_c[1])
    tl_c[1] = setmetatable({}, { __name = "cudalab.Array" })
    checkeq(capture(C.check)[1], "Not yet: 1 made, alive: tl_c[1]; tl_a[1] is 1")
    rawset(_G, "tl_w", nil)
    collectgarbage()
    checkeq(capture(C.check)[1], "Correct. next() goes on.")
  end)
end)

test("every task of cudalab's own lessons has eight wrong answers and three hints", function()
  local thin = {}
  for path in io.popen("ls lessons/[0-9][0-9]-*.md"):lines() do
    local f = assert(io.open(path, "rb"))
    local l = parse.parse(f:read("a"), path:match("([^/]+)%.md$"))
    f:close()
    for _, s in ipairs(l.steps) do
      if s.task and (#s.wrongs < parse.BUILTIN_MIN_WRONG or #s.hints < parse.MIN_HINTS) then
        thin[#thin + 1] = string.format("%s/%s: %d wrong answers, %d hints", l.name, s.id,
          #s.wrongs, #s.hints)
      end
    end
  end
  checkeq(thin, {})
end)
