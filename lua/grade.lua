-- grade.lua: cudalab --grade, grades every learner of a class by re-running
-- the work their record holds (each task's kernel files and the Lua typed in
-- its step), never by believing what the record says of it.
--
--   cudalab --grade DIR [-j N] [--csv FILE] [--json FILE]
--   cudalab --grade DIR --shard I/N --out FILE      one slice of the learners
--   cudalab --grade --merge FILE...                  the slices, as one run
--   cudalab --grade DIR --slurm [--wait] [--shards N] [--partition P]
--                      [--gpus G] [--time T] [--cpus C] [--work FOLDER]
--
-- What it prints and writes is grade_output.lua's; --slurm is grade_slurm.lua's.
--
-- Each learner is graded in a child cudalab (grade_worker.lua) with the
-- class's memory cap and a time limit per task, -j of them at once; the
-- learner's Lua runs sandboxed (grade_sandbox.lua). A child that runs past
-- its time is killed: the task it was on fails, and the learner's other
-- tasks are graded again in a fresh child, so a hostile submission costs
-- only itself.
--
-- Design stance: grading is a pure function of the class folder. A run's
-- output depends only on the learners' submissions and the lessons (learners
-- sorted by name, tasks in course order, no times or paths in it), so that a
-- run split into shards and merged gives the same bytes as one run; that is
-- what makes a Slurm array job's grades the same as a laptop's.

local json = require "json"
local output = require "grade_output"
local write_file = require("lesson_run").write_file

local M = {}

local USAGE = [==[
usage: cudalab --grade DIR [options]
Grades every learner of the class in DIR by re-running their recorded work
(never from what the record says): a table learner x lesson on the terminal.
  -j N            grade N learners at once (default 1)
  --csv FILE      one row per learner: each task's score, the total
  --json FILE     Gradescope's results.json for each learner, keyed by name
  --backend B     sim or cuda (default: the class's; sim without a GPU)
  --shard I/N     grade only the I-th of N slices of the learners and write
                  the partial result to --out FILE
  --merge FILE... combine partial results into the table and files of one run
                  (no DIR); refuses when a shard is missing
  --slurm         submit one Slurm array task per shard with sbatch, then with
                  --wait wait for it, merge and print the table
     --shards N (default 4)  --partition P  --gpus G (per task, default 0)
     --time T (default 1:00:00)  --cpus C (per task, default 2)
     --work FOLDER (where the job's script, logs and shards go; default
                   ./cudalab-grade-JOBTIME)]==]

local function err(fmt, ...) io.stderr:write("cudalab: ", string.format(fmt, ...), "\n") end

local SPEC = { -- class_cli.parse_options's kinds
  ["-j"] = "int", ["--csv"] = "value", ["--json"] = "value", ["--backend"] = "value",
  ["--shard"] = "value", ["--out"] = "value", ["--merge"] = "flag", ["--slurm"] = "flag",
  ["--wait"] = "flag", ["--shards"] = "int", ["--partition"] = "value", ["--gpus"] = "int0",
  ["--time"] = "value", ["--cpus"] = "int", ["--work"] = "value", ["--quiet"] = "flag",
}

local function parse(args)
  return require("class_cli").parse_options(args, 2, SPEC)
end

---------------------------------------------------------------- grading --

-- Which learners a shard grades: the i-th of every n, in name order.
local function shard_of(list, i, n)
  local out = {}
  for k, v in ipairs(list) do
    if (k - 1) % n == i - 1 then out[#out + 1] = v end
  end
  return out
end

-- What a task with nothing to re-run scores, and why.
local function no_submission(t)
  if not t then return "no submission: the learner never reached this task" end
  if t.skipped then return "no submission: the task was skipped without a check()" end
  return "no submission: the learner never ran check() on this task"
end

local function data_dir()
  local src = debug.getinfo(1, "S").source
  return (src:match("^@(.*)/lua/[^/]*$") or ".")
end

-- Where the children grade, as the class says: "sim" on the simulator, else on
-- the GPU when this machine has one (its driver's device node is there).
function M.backend_for(policy)
  if policy == "sim" then return "sim" end
  local f = io.open("/dev/nvidiactl", "rb")
  if f then f:close(); return "cuda" end
  return "sim"
end

-- Grades the learners (records) of cls; returns the grades.
function M.grade(cls, records, opts)
  local proc = require "cudalab.proc"
  local files = require "cudalab.files"
  local run = require "lesson_run"
  local backend = opts["--backend"] or M.backend_for(cls.settings.backend)
  local task_time = cls.settings.grade_time or 30
  local tmp = assert(run.tempdir(), "cannot make a temporary folder")
  local g = { title = cls.settings.title, tasks = {}, learners = {} }
  for _, t in ipairs(cls.tasks) do
    g.tasks[#g.tasks + 1] = { id = t.id, title = t.title, lesson = t.lesson, number = t.number }
  end
  local lesson_src = {}
  for _, e in ipairs(cls.catalog) do lesson_src[e.name] = e end
  -- pending[k] = the tasks of learner k still to grade
  local pending, jobs_of = {}, {}
  for k, rec in ipairs(records) do
    local l = { user = rec.user, uid = rec.uid, results = {} }
    g.learners[k] = l
    pending[k] = {}
    for _, t in ipairs(cls.tasks) do
      local rt = rec.tasks[t.id]
      local sub = rt and rt.submission
      if sub and (next(sub.files) or #sub.lua > 0) then
        local e = lesson_src[t.lesson]
        table.insert(pending[k], { id = t.id, lesson = t.lesson, number = t.number, step = t.step,
          path = not e.text and e.path or nil, text = e.text, submission = sub })
      else
        l.results[t.id] = { score = 0, output = no_submission(rt) }
      end
    end
  end
  local exe = proc.self()
  local worker = data_dir() .. "/lua/grade_worker.lua"
  local shared = { XDG_CACHE_HOME = tmp .. "/cache", XDG_STATE_HOME = tmp .. "/state",
                   CUDALAB_CLASS = "", HOME = tmp }
  local round = 0
  while true do
    round = round + 1
    local jobs = {}
    for k in ipairs(records) do
      if #pending[k] > 0 then
        local dir = string.format("%s/l%d-r%d", tmp, k, round)
        assert(files.private_dir(dir .. "/work"))
        local job = { tasks = pending[k], workdir = dir .. "/work", result = dir .. "/result.json",
                      memory = cls.settings.memory,
                        kernel_time = math.min(cls.settings.kernel_time or task_time, task_time),
                      task_time = task_time, lua_memory = 512 * 2^20 }
        assert(write_file(dir .. "/job.json", json.encode(job)))
        local env = { CUDALAB_WORKSPACE = dir .. "/work" }
        for name, v in pairs(shared) do env[name] = v end
        jobs[#jobs + 1] = { argv = { exe, "--backend", backend, worker, dir .. "/job.json" },
                            cwd = dir .. "/work", env = env,
                            timeout = #pending[k] * (task_time + 5) + 20 }
        jobs_of[#jobs] = { k = k, dir = dir }
      end
    end
    if #jobs == 0 then break end
    local done = 0
    local results = proc.run(jobs, { jobs = opts["-j"] or 1, max_output = 64 * 1024,
      on_done = function()
        done = done + 1
        if not opts["--quiet"] then
          io.stderr:write(string.format("\rgraded %d of %d learners (round %d)", done,
            #jobs, round))
        end
      end })
    if not opts["--quiet"] then io.stderr:write("\n") end
    for j, res in ipairs(results) do
      local k, dir = jobs_of[j].k, jobs_of[j].dir
      local l = g.learners[k]
      local f = io.open(dir .. "/result.json", "rb")
      local got = f and json.decode(f:read("a")) or {}
      if f then f:close() end
      local graded = {}
      for _, r in ipairs(type(got) == "table" and got or {}) do
        if type(r) == "table" and type(r.id) == "string" then
          graded[r.id] = true
          l.results[r.id] = { score = r.ok == true and 1 or 0,
                              output = r.ok == true and "passed" or ("failed: " ..
                                tostring(r.why)) }
        end
      end
      local rest, stopped = {}, false
      for _, t in ipairs(pending[k]) do
        if not graded[t.id] then
          if not stopped then
            stopped = true
            local why = res.timed_out and string.format("the grader stopped it: it ran past the " ..
              "time limit of %g s per task", task_time) or
              res.signame and ("the grading process died (" .. res.signame .. ")") or
              ("the grading process ended (status " .. tostring(res.status) .. ")")
            l.results[t.id] = { score = 0, output = "failed: " .. why }
          else
            rest[#rest + 1] = t
          end
        end
      end
      pending[k] = rest
    end
  end
  run.rmdir(tmp)
  return g
end

---------------------------------------------------------------- main --

function M.main(args)
  local opts, pos = parse(args)
  if not opts then err("%s (cudalab --grade --help lists the options)", pos); return 2 end
  if opts.help then print(USAGE); return 0 end
  if opts["--merge"] then
    if #pos == 0 then err("--merge needs the partial results (FILE...)"); return 2 end
    local g, why = output.merge(pos)
    if not g then err("%s", why); return 1 end
    return output.emit(g, opts)
  end
  if #pos ~= 1 then io.stderr:write(USAGE, "\n"); return 2 end
  local dir = pos[1]
  if opts["--backend"] and opts["--backend"] ~= "sim" and opts["--backend"] ~= "cuda" then
    err("--backend takes sim or cuda"); return 2
  end
  if opts["--slurm"] then return require("grade_slurm").run(dir, opts) end
  local shard_i, shard_n
  if opts["--shard"] then
    shard_i, shard_n = opts["--shard"]:match("^(%d+)/(%d+)$")
    shard_i, shard_n = tonumber(shard_i), tonumber(shard_n)
    if not shard_i or shard_n < 1 or shard_i < 1 or shard_i > shard_n then
      err("--shard takes I/N with 1 <= I <= N, such as 2/8"); return 2
    end
    if not opts["--out"] then err("--shard needs --out FILE for its partial result"); return 2 end
  end
  local cli = require "class_cli"
  local cls, why = cli.load_class(dir)
  if not cls then err("%s", why); return 1 end
  local records, problems = cli.load_records(cls)
  if not records then err("%s", problems); return 1 end
  for _, p in ipairs(problems) do io.stderr:write("cudalab: refused ", p, "\n") end
  table.sort(records, function(a, b)
    if a.user ~= b.user then return a.user < b.user end
    return a.uid < b.uid
  end)
  if shard_i then records = shard_of(records, shard_i, shard_n) end
  local g = M.grade(cls, records, opts)
  if shard_i then
    local ok, werr = output.write_partial(g, opts["--out"], shard_i, shard_n)
    if not ok then err("cannot write %s: %s", opts["--out"], werr); return 1 end
    io.stderr:write(string.format("shard %d of %d: %d learners graded into %s\n", shard_i, shard_n,
      #g.learners, opts["--out"]))
    return 0
  end
  return output.emit(g, opts)
end

return M
