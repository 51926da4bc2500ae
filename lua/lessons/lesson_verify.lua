-- lesson_verify.lua: lessons.verify, what an instructor runs on a workshop
-- machine the day before class (cudalab --verify-lessons, and make test on
-- the simulator): every lesson end to end, one line per lesson.
--
-- For each lesson, in order, every step: its examples run (a ```lua error
-- block must raise in its last statement and nowhere else); on a task, each
-- declared wrong answer (at least three) is installed in turn and must FAIL
-- the check, then the reference solution is installed and must PASS it, so
-- the rest of the lesson runs on the reference state. A check that passes everything, or
-- a solution that no longer works with today's cudalab, fails the lesson.
--
-- Design stance: verify drives the engine's own pieces (the parser, the
-- runner, the check, the kernel installer), not copies of them, so what it
-- passes is what a learner gets. It saves no progress and writes kernel
-- files only in a fresh temporary folder. Each lesson's output is captured
-- and shown, its last lines, only when the lesson fails (or every line with
-- {verbose = true}). A lesson that declares a requirement this build lacks
-- (<!-- cudalab: requires cuda.sweep -->) is reported as skipped, not
-- failed, and counted apart.

local parse = require "lesson_parse"
local run = require "lesson_run"
local check = require "lesson_check"

local V = {}

local TAIL = 15

-- Installs one wrong answer and runs the check, which must fail. A wrong
-- kernel (```cuda wrong=FILE) replaces the learner's file and the step's lua
-- solution, if any, runs with it, as a learner's own code would; the file is
-- put back as it was afterwards (a task that uses the kernel an earlier task
-- made has no solution of its own for the file to put back). A ```lua
-- wrong runs in place of the solution. Returns true, or false and why.
local function wrong_fails(L, s, w)
  check.watch()
  local path, was = nil, nil
  if w.kind == "cuda" then
    path = L.workdir() .. "/" .. w.file
    was = run.read_file(path)
    run.write_file(path, w.code .. "\n")
    if s.solution then
      check.typed(s.solution.code)
      run.run(s.solution.code, L.env(), { echo = true, show = print })
    end
  else
    check.typed(w.code) -- as if typed: checks may look at how a value was computed
    run.run(w.code, L.env(), { echo = true, show = print })
  end
  local passed, why, found = L.run_check(s)
  if was then run.write_file(path, was) end
  local what = w.kind == "cuda" and ("the wrong " .. w.file .. " at line " .. w.line) or
    ("the ```lua wrong at line " .. w.line)
  if passed then return false, what .. " passed the check" end
  if why:find("the check does not compile", 1, true) then return false, why end
  local found_text = #found > 0 and (" [found: " .. table.concat(found, ", ") .. "]") or ""
  print("(" .. what .. " rejected: " .. why .. found_text .. ")")
  return true
end

-- Runs one lesson; returns "ok" | "skip" | "fail", and a reason.
local function verify_one(L, e)
  local okl, l = pcall(L.load, e)
  if not okl then return "fail", tostring(l) end
  local missing = parse.missing(l, L.has)
  if #missing > 0 then return "skip", "needs " .. table.concat(missing, ", ") end
  L.verify_open(l)
  local tasks = 0
  for i, s in ipairs(l.steps) do
    local ok, err = L.verify_step(i)
    if not ok then return "fail", "step " .. i .. " (" .. s.title .. "): " .. err end
    if s.task then
      tasks = tasks + 1
      for _, w in ipairs(s.wrongs) do
        local ok_w, why_w = wrong_fails(L, s, w)
        if not ok_w then return "fail", "step " .. i .. " (" .. s.title .. "): " .. why_w end
      end
      L.install_kernels(s, "solution", false)
      check.watch()
      if s.solution then
        check.typed(s.solution.code)
        local sok, serr = run.run(s.solution.code, L.env(), { echo = true, show = print })
        if not sok then
          return "fail", "step " .. i .. " (" .. s.title .. "): the solution raised: " .. serr
        end
      end
      local passed, why = L.run_check(s)
      if not passed then
        return "fail", "step " .. i .. " (" .. s.title .. "): the reference solution failed " ..
          "the check: " .. why
      end
    end
  end
  if tasks == 0 then return "fail", "the lesson has no task with a check" end
  return "ok"
end

-- The lessons numbered from..to (either may be nil: no bound).
local function numbered(L, from, to)
  local entries = {}
  for _, e in ipairs(L.list()) do
    if e.number >= (from or 0) and e.number <= (to or math.huge) then
      entries[#entries + 1] = e
    end
  end
  return entries
end

-- verify(L, name_or_nil, {verbose, from, to}) -> true when no lesson failed.
-- from and to, without a name: only the lessons numbered from..to.
function V.verify(L, name, opts)
  opts = opts or {}
  local entries = not name and numbered(L, opts.from, opts.to)
  if name then
    local e, why = L.find(name)
    if not e then
      print("1..1")
      print("not ok - lesson " .. tostring(name) .. ": " .. why)
      print("0 passed, 1 failed")
      return false
    end
    entries = { e }
  end
  local tmp = run.tempdir()
  local restore = L.verify_begin(tmp or ".")
  local real_print = print
  local passed, failed, skipped = 0, 0, 0
  print("1.." .. #entries) -- the plan: one test per lesson
  for _, e in ipairs(entries) do
    local lines = {}
    print = function(...)
      local parts = table.pack(...)
      for i = 1, parts.n do parts[i] = tostring(parts[i]) end
      local text = table.concat(parts, "\t", 1, parts.n)
      if opts.verbose then real_print(text) end
      for line in (text .. "\n"):gmatch("(.-)\n") do
        lines[#lines + 1] = line
        if #lines > TAIL then table.remove(lines, 1) end
      end
    end
    local ok, status, why = pcall(verify_one, L, e)
    if not ok then status, why = "fail", "the engine raised: " .. tostring(status) end
    print = real_print
    if status == "ok" then
      passed = passed + 1
      print("ok - lesson " .. e.name)
    elseif status == "skip" then
      skipped = skipped + 1
      print("ok - lesson " .. e.name .. " # SKIP " .. why)
    else
      failed = failed + 1
      print("not ok - lesson " .. e.name .. ": " .. why)
      if not opts.verbose then
        for _, line in ipairs(lines) do print("    " .. line) end
      end
    end
  end
  run.rmdir(tmp)
  restore()
  print(string.format("%d passed, %d failed%s", passed, failed,
    skipped > 0 and (", " .. skipped .. " skipped (they need parts of cudalab not built yet)") or
    ""))
  return failed == 0
end

return V
