-- grade_worker.lua: grades one task of one learner, in a child cudalab
-- process that grade.lua starts for it:
--   cudalab --backend B lua/class/grade_worker.lua < JOB.json
-- The job comes on stdin, never from a file another account could swap: the
-- task (with its lesson's text, the step's stable id and the learner's
-- submission), the limits and the private folder to work in. The result goes
-- back through the descriptor the grader gave for it (proc.mark), one JSON
-- line, {id, ok, why}: nothing the submission can print or write is mistaken
-- for a result.
--
-- The task is graded as the learner met it: the lesson is opened afresh and
-- every step up to the task's runs (its examples; for an earlier task, its
-- reference solution, as a resumed lesson does), and after each step the Lua
-- the learner typed during that step runs, in the sandbox, in the order it
-- was typed. A chunk that failed live fails here too and the replay goes on,
-- as the prompt did. The submission's kernel files are in place from the
-- start. Then the lesson's own check runs, with the race checker on, exactly
-- as check() runs it, and sees the lesson's own values (lessons.lua).
--
-- Design stance: one task, one process. A task's grade depends on its
-- submission alone, never on what another task of the learner's left behind
-- (its memory under the Lua cap, its arrays, the simulator's options, a
-- finalizer set to run later): a fresh process is the one reset that misses
-- nothing. This file runs the learner's code, so it keeps its own references
-- to io and the lesson engine before any of that code runs. The learner's
-- globals are this process's globals, as at the prompt, except the names of
-- the standard library and cudalab, which a submission may shadow for its
-- own code but never replace for the check that judges it. The process
-- itself was confined before it started (grade.lua: the learner's own
-- account, or Landlock), and its time is watched from outside: each phase of
-- the task (the lesson's steps, the learner's code) marks its start, and the
-- grader kills the process when one runs past its limit.

local io, os, debug, pcall, error, tostring = io, os, debug, pcall, error, tostring
local json = require "json"
local lessons = require "lessons"
local run = require "lesson_run"
local sandbox = require "grade_sandbox"
local check = require "lesson_check"
local proc = require "cudalab.proc"

local function die(msg)
  io.stderr:write("grade_worker: ", msg, "\n")
  os.exit(2)
end
local job = json.decode(io.read("a") or "") or die("the job on stdin is not JSON")
if type(job) ~= "table" or type(job.task) ~= "table" or type(job.workdir) ~= "string" then
  die("the job on stdin has no task or workdir")
end

-- One task's result, to the grader (the mark descriptor); stderr when run by
-- hand without one.
local function report(r)
  local line = json.encode(r) .. "\n"
  if not proc.mark(line) then io.stderr:write(line) end
end

-- Names the check must always find as they were: everything global now.
local PROTECTED = {}
for k in pairs(_G) do PROTECTED[k] = true end

if cuda and cuda.limits then
  local want = {}
  if job.memory then want.memory = job.memory end
  if job.kernel_time then want.kernel_time = job.kernel_time end
  if next(want) then
    want.by = "class" -- the learner's limits are the class's
    cuda.limits(want)
  end
end

-- A check needs what a CPU timing returns, not a careful figure: cpu.time
-- calls each function once here (no warm-up, one timed run). Lessons time Lua
-- loops over ten million elements five times, which was most of a replay's
-- CPU. Options cpu.time would refuse go to it unchanged, so a chunk that
-- failed live on them fails the same way here.
local function timed_once(opts)
  local function count(v, least)
    return v == nil or (math.type(v) == "integer" and v >= least and v <= 1000000)
  end
  if opts == nil or (type(opts) == "number" and count(math.tointeger(opts), 1))
      or (type(opts) == "table" and count(opts.warmup, 0) and count(opts.reps, 1)) then
    return { warmup = 0, reps = 1 }
  end
  return opts
end
if cpu and cpu.time then
  local time = cpu.time
  cpu.time = function(fn, opts) return time(fn, timed_once(opts)) end
end

-- The class challenge (job.challenge, a task id): once its check passes, the
-- launch it names (expect.timed) or else its last launch of a kernel is made
-- again and timed, with cuda's own functions kept here before any submission
-- runs (a submission may not time itself): on the simulator by the
-- performance model, deterministic, so one run is the figure; on a GPU by
-- cuda.time's median of its usual runs. The log's arrays are weak, so the
-- collector is stopped while the check runs, and they are there to be timed.
local C = type(cuda) == "table" and { time = cuda.time, launches = rawget(cuda, "launches"),
  simopts = rawget(cuda, "simopts"), backend = cuda.backend } or {}
-- The backend this child grades on (--backend), before any submission could move it.
local GRADED_ON = C.backend and C.backend()

local function launches_so_far()
  if not C.launches then return 0 end
  local l = C.launches()
  return #l + (l.dropped or 0)
end

-- What to time: a function making the check's chosen launch, or nil, why.
local function challenge_launch(before)
  local fn = check.timed_launch()
  if fn then return fn end
  local l = C.launches and C.launches() or {}
  local base = l.dropped or 0
  for i = #l, 1, -1 do
    if base + i <= before then break end
    local r = l[i]
    if r.kernel then
      -- the log names a dimension's parts x, y, z; a launch takes them as a list
      local function dim(d) return { d.x, d.y, d.z } end
      local k, cfg, args, n = r.kernel, { dim(r.grid), dim(r.block), shared = r.shared }, r.args,
        r.n
      return function() k[cfg](table.unpack(args, 1, n)) end
    end
  end
  return nil, "the check launched no kernel to time"
end

-- Times the challenge's launch: {model_ms =} on the simulator, {gpu_ms =} on
-- a GPU, or {time_why =} when it cannot be timed.
local function time_challenge(before)
  local fn, why = challenge_launch(before)
  if not fn then return { time_why = why } end
  local on_sim = C.backend() == "sim"
  local model = on_sim and C.simopts().model
  if on_sim then C.simopts { model = true } end
  local ok, t = pcall(C.time, fn, on_sim and { warmup = 0, reps = 1 } or nil)
  if on_sim then C.simopts { model = model } end
  if not ok or type(t) ~= "table" or type(t.median) ~= "number" then
    return { time_why = "the timed launch failed: " .. tostring(t) }
  end
  return on_sim and { model_ms = t.median } or { gpu_ms = t.median }
end

local workdir = job.workdir
lessons.verify_begin(workdir)
-- Every a:save of this process writes only into the submission's folder, by a plain name and
-- never through a link, as cuda.export and cuda.plot do (grade_sandbox.lua); set before any of
-- the learner's code runs, and never lifted. Without it a save reached the folder this process
-- runs in, where a lesson finds cudalab's kernels by a plain name, and wherever the account
-- may write.
require("cudalab.sandbox").confine_saves(workdir)
local function lesson_of(t)
  return lessons.load({ name = t.lesson, number = t.number, text = t.text })
end

-- The task's clock. The learner's code (the chunks typed, and the check,
-- which runs the learner's kernels and functions) shares the task's time
-- limit; each step's own code (its examples, an earlier task's reference
-- solution) has an allowance of that length of its own, since a lesson's
-- slow example is no fault of the learner's. A hook raises once the phase's
-- time is up, again and again, so that a pcall in the submission cannot hold
-- it off; it cannot stop a long C call (string.rep, a pattern): the CPU
-- budget each change of phase sets does (proc.cpu_budget), and the grader's
-- wall-clock deadline, which each change of phase moves on (proc.mark), ends
-- a child that stops using the CPU altogether.
-- The time is this process's CPU time (os.clock: the simulator's kernels run
-- in it), never the wall clock's: a grade must not depend on how busy the
-- machine was, and on a machine shared by -j 8 graders a correct submission
-- would otherwise run past its limit.
local clock = { deadline = math.huge, left = 0, since = nil }
local LIMIT_MSG = "the submission ran past the grading time limit of %g s of CPU time"

-- Starts the lesson's phase, ending the learner's (what it used is spent).
function clock.lesson()
  if clock.since then clock.left = clock.left - (os.clock() - clock.since) end
  clock.since = nil
  clock.deadline = os.clock() + job.task_time
  proc.mark()
  if job.cpu_per_phase then pcall(proc.cpu_budget, job.cpu_per_phase) end
end

-- Starts (or resumes) the learner's phase with the time left to the task.
function clock.learner()
  clock.since = os.clock()
  clock.deadline = clock.since + math.max(clock.left, 0)
  proc.mark()
  if job.cpu_per_phase then pcall(proc.cpu_budget, job.cpu_per_phase) end
end

-- Runs f(...) on a fresh task clock; returns pcall's results.
local function with_clock(f)
  clock.left, clock.since = job.task_time, nil
  clock.lesson()
  local msg = string.format(LIMIT_MSG, job.task_time)
  debug.sethook(function()
    if os.clock() > clock.deadline then error(msg, 0) end
  end, "", 10000)
  local res = table.pack(pcall(f))
  debug.sethook()
  return table.unpack(res, 1, res.n)
end

-- Writes the submission's files (its kernels and the headers they include) into the workdir,
-- each checked as a kernel source is, by a plain name (no leading dot, no ..), as a new file
-- renamed into place (never through a link). Returns true, or nil, why.
local function put_files(sub)
  local write = require("cudalab.files").write_atomic
  for name, text in pairs(sub.files or {}) do
    if not name:match("^[%w_%-][%w_%-%.]*$") or name:find("..", 1, true) then
      return nil, "a kernel file named " .. name
    end
    local ok, why = sandbox.check_source(text)
    if not ok then return nil, name .. ": " .. why end
    if not write(workdir .. "/" .. name, text) then return nil, "cannot write " .. name end
  end
  return true
end

-- The submission's chunks by step: chunks[i] = the chunks typed in step i, in
-- order, chunks[0] those typed before the lesson began. A chunk typed in a
-- step the lesson no longer has goes with the step before it; one typed after
-- the task's step (the learner went back to check) runs with the task's step,
-- as it ran before the check live.
local BEFORE_LESSON = require("class_record").BEFORE_LESSON
local function chunks_by_step(l, task_i, sub)
  local index = {}
  for i, s in ipairs(l.steps) do index[s.id] = i end
  local by, at = {}, 1
  for n, chunk in ipairs(sub.lua or {}) do
    local sid = sub.steps and sub.steps[n]
    local i
    if sid == BEFORE_LESSON then
      i = 0
    else
      if sub.steps == nil then at = task_i
      elseif index[sid] then at = index[sid] end
      i = math.min(at, task_i)
    end
    by[i] = by[i] or {}
    table.insert(by[i], chunk)
  end
  return by
end

-- Runs one typed chunk as the prompt did (an expression first); an error is
-- the chunk's own and ends only it. Returns the error, or nil.
local function run_chunk(chunk, n, env)
  local fn, err = load("return " .. chunk, "=typed " .. n, "t", env)
  if not fn then fn, err = load(chunk, "=typed " .. n, "t", env) end
  if not fn then return err end
  local ok, rerr = pcall(fn)
  if not ok then return tostring(rerr) end
end

-- Replays the lesson up to step task_i with the learner's chunks: first those
-- typed before the lesson began, then for each step its examples, an earlier
-- task's reference solution, then the chunks the learner typed in it, in env,
-- whose globals are this process's (what the learner set is there for the
-- lesson's later examples and its check, as at the prompt). Returns true and
-- the first error a chunk of the task's own step raised (shown with a failed
-- check: it is often why), or nil, why (the lesson's own code failed).
local function replay(l, task_i, by_step, env)
  lessons.verify_open(l)
  local n, first_err = 0, nil
  -- what was typed before lesson(N), as it ran then: before the lesson's first step. A phase
  -- of its own, not the task's: another lesson's long computation typed an hour before costs
  -- the task nothing, and past the task's time the rest of these chunks are stopped, not the task
  if by_step[0] then
    clock.lesson()
    for _, chunk in ipairs(by_step[0]) do
      n = n + 1
      check.typed(chunk, env)
      run_chunk(chunk, n, env)
    end
  end
  for i = 1, task_i do
    local s = l.steps[i]
    clock.lesson()
    local ok, err = lessons.verify_step(i)
    if not ok then return nil, "the lesson's step " .. i .. " failed: " .. tostring(err) end
    if s.task and i < task_i and s.solution then
      local sok, serr = run.run(s.solution.code, lessons.env())
      if not sok then
        return nil, "the reference solution of step " .. i .. " failed: " .. tostring(serr)
      end
    end
    if i == task_i then check.watch(true) end
    clock.learner()
    for _, chunk in ipairs(by_step[i] or {}) do
      n = n + 1
      -- every step's chunks: a name the task's formula reads may be set in a step before it
      check.typed(chunk, env)
      local cerr = run_chunk(chunk, n, env)
      if i == task_i then first_err = first_err or cerr end
    end
  end
  return true, first_err
end

-- Grades task t: the lesson replayed from its start with the learner's chunks, then its check.
-- Returns passed, why, the check's partial credit, the challenge's timing.
local function grade(t)
  local l = lesson_of(t)
  local task_i
  for i, s in ipairs(l.steps) do if s.id == t.step_id then task_i = i end end
  local s = task_i and l.steps[task_i]
  if not (s and s.task) then
    return false, "the lesson has no task " .. tostring(t.step_id) .. " now"
  end
  local by_step = chunks_by_step(l, task_i, t.submission)
  local env = sandbox.new { workdir = workdir, globals = _G, keep = PROTECTED,
    backend = GRADED_ON }
  for i = 1, task_i - 1 do
    if l.steps[i].task then lessons.install_kernels(l.steps[i], "solution", false) end
  end
  local ok, why = put_files(t.submission)
  if not ok then return false, why end
  local typed_err, timing
  local res = table.pack(with_clock(function()
    local rok, rwhy = replay(l, task_i, by_step, env)
    if not rok then return false, rwhy end
    typed_err = rwhy
    if t.id ~= job.challenge then return lessons.run_check(s) end
    local before = launches_so_far()
    collectgarbage("stop")
    local cres = table.pack(pcall(lessons.run_check, s))
    if cres[1] and cres[2] == true then timing = time_challenge(before) end
    collectgarbage("restart")
    if not cres[1] then error(cres[2], 0) end
    return table.unpack(cres, 2, cres.n)
  end))
  if not res[1] then return false, tostring(res[2]) end
  if res[2] == true then return true, "passed", nil, timing end
  local why = tostring(res[3])
  if typed_err then why = why .. " (your Lua raised: " .. typed_err .. ")" end
  return false, why, res[5] -- the check's partial credit, if it gave one
end

local clip = require("class_record").clip

-- A message as the grades show it: the workdir's path (in a compile error's file name, a check's
-- "there is no program at ..."), which differs from run to run, is taken out, so that the
-- output depends on the submission alone: a file in it by its name, the folder in words.
local function stable(msg)
  local dir = workdir:gsub("%p", "%%%0")
  msg = tostring(msg):gsub(dir .. "/", "")
  return (msg:gsub(dir, "the submission's folder"))
end

if job.lua_memory then require("cudalab.sandbox").memory_limit(job.lua_memory) end
proc.mark()
local ok, passed, why, credit, timing = pcall(grade, job.task)
if not ok then passed, why = false, "the grader could not run the task: " .. tostring(passed) end
timing = passed == true and timing or {}
report({ id = job.task.id, ok = passed == true, why = clip(stable(why), 1500),
  credit = passed ~= true and credit or nil, model_ms = timing.model_ms,
  gpu_ms = timing.gpu_ms, time_why = timing.time_why and clip(stable(timing.time_why), 300) })
os.exit(0)
