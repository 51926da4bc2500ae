-- grade_worker.lua: grades one learner's tasks, in a child cudalab process
-- that grade.lua starts for them:
--   cudalab --backend B lua/grade_worker.lua JOB.json
-- JOB.json (written by the grader in a folder of its own) says which tasks,
-- with each lesson's text and the learner's submission, the limits, and the
-- file to write the results to: a JSON list of {id, ok, why}, rewritten after
-- each task, so that a task that takes the process down loses only itself.
--
-- Each task is graded as a learner would have met it: the lesson's steps
-- before it run (their examples, and the reference solution of each earlier
-- task, as a resumed lesson does), the submission's kernel files are put in
-- place, the Lua the learner typed in the step runs in the sandbox
-- (grade_sandbox.lua) under a time limit, and then the lesson's own check
-- runs, with the race checker on, exactly as check() runs it.
--
-- Design stance: this file runs the learner's code, so it keeps its own
-- references to io and the lesson engine before any of that code runs, and
-- lets the submission's values reach the check only under names that are
-- not the standard library's or cudalab's (a submission cannot replace
-- `assert` or `cuda` for the check that judges it).

local io, os, debug, pcall, error, tostring = io, os, debug, pcall, error, tostring
local json = require "json"
local lessons = require "lessons"
local run = require "lesson_run"
local sandbox = require "grade_sandbox"
local check = require "lesson_check"

local job_path = ...
local function die(msg)
  io.stderr:write("grade_worker: ", msg, "\n")
  os.exit(2)
end
if not job_path then die("usage: cudalab lua/grade_worker.lua JOB.json") end
local f = io.open(job_path, "rb") or die("cannot read " .. job_path)
local job = json.decode(f:read("a")) or die("the job is not JSON")
f:close()

local results = {}
local function save()
  local tmp = job.result .. ".tmp"
  local out = io.open(tmp, "wb")
  if not out then return end
  out:write(json.encode(results))
  out:close()
  os.rename(tmp, job.result)
end

-- Names the check must always find as they were: everything global now.
local PROTECTED = {}
for k in pairs(_G) do PROTECTED[k] = true end

if cuda and cuda.limits then
  local want = {}
  if job.memory then want.memory = job.memory end
  if job.kernel_time then want.kernel_time = job.kernel_time end
  if next(want) then cuda.limits(want) end
end

local workdir = job.workdir
lessons.verify_begin(workdir)
local loaded = {}
local function lesson_of(t)
  local key = t.lesson
  if not loaded[key] then
    loaded[key] = lessons.load({ name = t.lesson, number = t.number, path = t.path, text = t.text })
  end
  return loaded[key]
end

-- Runs f with a deadline: a hook raises once the time is up, again and again,
-- so that a pcall in the submission cannot hold it off.
local function with_deadline(seconds, f)
  local deadline = os.time() + math.ceil(seconds)
  local msg = string.format("the submission ran past the grading time limit of %g s", seconds)
  debug.sethook(function()
    if os.time() > deadline then error(msg, 0) end
  end, "", 10000)
  local res = table.pack(pcall(f))
  debug.sethook()
  return table.unpack(res, 1, res.n)
end

-- The values lesson code made (examples, earlier solutions), which the
-- submission may use as the learner could.
local function lesson_value(k) return lessons._S.record[k] end

-- Brings the open lesson to step i: every step before it run as a learner
-- who passed its task would have left it. Returns true or nil, why.
local pos = {}
local function advance(l, i)
  if pos.lesson ~= l then
    lessons.verify_open(l)
    pos.lesson, pos.step = l, 0
  end
  for s_i = pos.step + 1, i do
    local s = l.steps[s_i]
    local ok, err = lessons.verify_step(s_i)
    if not ok then return nil, "the lesson's step " .. s_i .. " failed: " .. tostring(err) end
    if s.task and s_i < i then
      lessons.install_kernels(s, "solution", false)
      if s.solution then
        local sok, serr = run.run(s.solution.code, lessons.env())
        if not sok then
          return nil, "the reference solution of step " .. s_i .. " failed: " .. serr
        end
      end
    end
    pos.step = s_i
  end
  return true
end

local function put_files(sub)
  for name, text in pairs(sub.files or {}) do
    if not name:match("^[%w_%-%.]+$") then return nil, "a kernel file named " .. name end
    local ok, why = sandbox.check_source(text)
    if not ok then return nil, name .. ": " .. why end
    local out = io.open(workdir .. "/" .. name, "wb")
    if not out then return nil, "cannot write " .. name end
    out:write(text)
    out:close()
  end
  return true
end

local function grade(t)
  local l = lesson_of(t)
  local s = l.steps[t.step]
  if not (s and s.task) then return false, "the lesson has no task at step " .. tostring(t.step) end
  local ok, why = advance(l, t.step)
  if not ok then return false, why end
  ok, why = put_files(t.submission)
  if not ok then return false, why end
  check.watch(true)
  local env = sandbox.new { workdir = workdir, fallback = lesson_value }
  local set = {}
  ok, why = with_deadline(job.task_time, function()
    for n, chunk in ipairs(t.submission.lua or {}) do
      local fn = load("return " .. chunk, "=typed " .. n, "t", env)
      if not fn then
        local err
        fn, err = load(chunk, "=typed " .. n, "t", env)
        if not fn then error(err, 0) end
      end
      fn()
    end
  end)
  if not ok then return false, "your Lua failed: " .. tostring(why) end
  -- the submission's own names reach the check; the standard ones never
  for k, v in pairs(env) do
    if type(k) == "string" and not PROTECTED[k] then rawset(_G, k, v); set[#set + 1] = k end
  end
  local passed, cwhy
  ok, passed, cwhy = with_deadline(job.task_time, function() return lessons.run_check(s) end)
  for _, k in ipairs(set) do rawset(_G, k, lessons._S.record[k]) end
  if not ok then return false, tostring(passed) end
  return passed == true, passed and "passed" or tostring(cwhy)
end

if job.lua_memory then require("cudalab.sandbox").memory_limit(job.lua_memory) end
for _, t in ipairs(job.tasks) do
  local ok, passed, why = pcall(grade, t)
  if not ok then passed, why = false, "the grader could not run the task: " .. tostring(passed) end
  results[#results + 1] = { id = t.id, ok = passed, why = why }
  save()
  collectgarbage()
end
os.exit(0)
