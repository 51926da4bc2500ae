-- grade.lua: cudalab --grade, grades every learner of a class by re-running
-- the work their record holds (the kernel files and the Lua typed since the
-- lesson began, when the check passed), never by believing what the record
-- says of it.
--
--   cudalab --grade DIR [-j N] [--csv FILE] [--json FILE] [--trust-submissions]
--   cudalab --grade DIR --shard I/N --out FILE      one slice of the learners
--   cudalab --grade --merge FILE...                  the slices, as one run
--   cudalab --grade DIR --slurm [--wait] [--shards N] [--partition P]
--                      [--gpus G] [--time T] [--cpus C] [--work FOLDER]
--
-- What it prints and writes is grade_output.lua's; --slurm is grade_slurm.lua's.
--
-- Each task of each learner is graded in a child cudalab of its own
-- (grade_worker.lua), -j of them at once, so that no task's grade depends on
-- what another left behind. A submission is hostile code, and the operating
-- system is the wall between it and the instructor: as root, the child
-- becomes the learner's own account before it starts (and is put under
-- Landlock too, where the kernel has it); as the instructor, it is put under
-- Landlock, reading only cudalab, the toolkit and its job (on stdin) and
-- writing only a private folder; with neither, grading refuses unless told
-- --trust-submissions. The Lua sandbox (grade_sandbox.lua) is the second
-- wall. Limits are held from outside the child: each phase of a task (the
-- lesson's own steps, the learner's code) marks its start, and one that runs
-- past the class's time per task gets its process group killed; RLIMIT_CPU
-- (per phase too), the address space of a simulator child and file sizes are
-- capped. The task fails, and only it: a hostile submission costs at most
-- its limit per task.
--
-- Design stance: grading is a pure function of the class folder. A run's
-- output depends only on the learners' submissions and the lessons (learners
-- sorted by name, tasks in course order, no times or paths in it), so that a
-- run split into shards and merged gives the same bytes as one run; that is
-- what makes a Slurm array job's grades the same as a laptop's.

local json = require "json"
local output = require "grade_output"
local run = require "lesson_run"
local run_read = run.read_file

local M = {}

local USAGE = [==[
usage: cudalab --grade DIR [options]
Grades every learner of the class in DIR by re-running their recorded work
(never from what the record says): a table learner x lesson on the terminal.
  -j N            grade N tasks at once, each in a process of its own
                  (default 1)
  --csv FILE      one row per learner: each task's score, the total
  --json FILE     every learner's results, keyed by account: score, max_score,
                  name, id, email, tests
  --gradescope DIR  Gradescope's results.json, one per learner: DIR/ACCOUNT/
  --until TIME    grade as of TIME ("2025-03-07 23:59"): the last passing work
                  made by then (default: each lesson's due time, and late work
                  as the class's late policy allows); a pass's time is the
                  one the class's snapshots prove (cudalab --class-snapshot
                  DIR at each due time), else its record's
  --learner NAME  grade one learner only (a regrade)
  --overrides FILE  the instructor's scores that replace the re-run's:
                  CSV account,task,score,reason (a reason each)
  --publish       leave each learner their own results in DIR/feedback/
                  (score, each task's output), readable by them alone; they
                  see them with grades() at the prompt of the class
  --backend B     sim or cuda (default: the class's; sim without a GPU)
  --trust-submissions  grade even where the learners' work cannot be confined
                  (not root, and no Landlock): it then runs with your rights,
                  behind the Lua sandbox alone
  --shard I/N     grade only the I-th of N slices of the learners and write
                  the partial result to --out FILE
  --merge FILE... combine partial results into the table and files of one run
                  (no DIR); refuses when a shard is missing
  --slurm         submit one Slurm array task per shard with sbatch (its job id
                  is said at once), then with --wait say each shard as it ends,
                  merge and print the table
     --shards N (default 4)  --partition P  --gpus G (per task, default 0)
     --time T (default 1:00:00)  --cpus C (per task, default 2)
     --work FOLDER (where the job's script, logs and shards go; default
                   ./cudalab-grade-JOBTIME)]==]

local function err(fmt, ...) io.stderr:write("cudalab: ", string.format(fmt, ...), "\n") end

local SPEC = { -- cli_options.parse's kinds
  ["-j"] = "int", ["--csv"] = "value", ["--json"] = "value", ["--backend"] = "value",
  ["--shard"] = "value", ["--out"] = "value", ["--merge"] = "flag", ["--slurm"] = "flag",
  ["--wait"] = "flag", ["--shards"] = "int", ["--partition"] = "value", ["--gpus"] = "int0",
  ["--time"] = "value", ["--cpus"] = "int", ["--work"] = "value", ["--quiet"] = "flag",
  ["--trust-submissions"] = "flag", ["--until"] = "value", ["--learner"] = "value",
  ["--gradescope"] = "value", ["--overrides"] = "value", ["--publish"] = "flag",
}

local function parse(args)
  return require("cli_options").parse(args, 2, SPEC)
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

-- The folder holding lua/ (this file is lua/class/grade.lua), as CUDALAB_HOME names it.
local function data_dir()
  local src = debug.getinfo(1, "S").source
  return (src:match("^@(.*)/lua/class/[^/]*$") or ".")
end

-- Where the children grade, as the class says: "sim" on the simulator, else on
-- the GPU when this machine has one (its driver's device node is there).
function M.backend_for(policy)
  if policy == "sim" then return "sim" end
  local f = io.open("/dev/nvidiactl", "rb")
  if f then f:close(); return "cuda" end
  return "sim"
end

------------------------------------------------------------ confinement --

-- How submissions are kept from the instructor's rights, decided once per
-- run: as root, each learner's work runs as the learner's own account (and
-- under Landlock too, where the kernel has it); as anyone else, under
-- Landlock; without Landlock, only with --trust-submissions. Returns
-- {become = bool, landlock = bool, trusted = bool, says = "..."} or nil, why.
function M.confinement(opts)
  local proc = require "cudalab.proc"
  local me = require("cudalab.class").whoami()
  local abi, no_ll = proc.landlock_abi()
  local ll = abi > 0
  if me.uid == 0 then
    return { become = true, landlock = ll, says = "each learner's work runs as their own account" ..
      (ll and ", under Landlock" or "") }
  end
  if ll then
    return { landlock = true, says = "each learner's work runs under Landlock (Linux ABI " ..
      abi .. "): it reads only cudalab, the toolkit and its job, and writes only its own folder" }
  end
  if opts["--trust-submissions"] then
    return { trusted = true, says = "submissions are trusted (--trust-submissions): " ..
      "they run with your rights, behind the Lua sandbox only" }
  end
  return nil, "cannot confine the learners' work here: " .. tostring(no_ll) .. ". Grade as " ..
    "root (each learner's work then runs as their own account), on a machine whose kernel has " ..
    "Landlock, or pass --trust-submissions to grade with only the Lua sandbox between the " ..
    "submissions and your files"
end

-- The places a Landlock-confined child may read: the system's libraries and
-- programs, the few files of /etc a process needs, the toolkit, cudalab's
-- own files, the GPU's driver files; and write: its own folder, the GPU's
-- device nodes. Nothing of the instructor's home, the class folder, other
-- learners' records or /tmp. A path that does not exist is skipped.
function M.landlock_paths(home, backend)
  local cuda_home = os.getenv("CUDA_HOME")
  local read = { "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt/nvidia",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf",
    "/etc/passwd", "/etc/group", "/etc/localtime", "/etc/alternatives", "/proc/meminfo",
    "/proc/cpuinfo", "/proc/driver/nvidia", "/sys/devices/system/cpu", "/sys/bus/pci",
    "/sys/kernel/mm/transparent_hugepage", -- malloc asks whether it may use 2 MiB pages
    "/sys/devices", "/dev/urandom", "/dev/zero", "/usr/local/cuda", data_dir(),
    require("cudalab.proc").self() }
  if cuda_home and cuda_home:sub(1, 1) == "/" then read[#read + 1] = cuda_home end
  -- where the dynamic loader is told to find libraries (a toolkit or Lua outside /usr)
  for dir in (os.getenv("LD_LIBRARY_PATH") or ""):gmatch("[^:]+") do
    if dir:sub(1, 1) == "/" then read[#read + 1] = dir end
  end
  local write = { home, "/dev/null", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset" }
  for i = 0, 15 do write[#write + 1] = "/dev/nvidia" .. i end
  if backend == "cuda" then
    -- CUDA's driver writes under /proc in the engine, a process the child starts, whose pid
    -- cannot be named beforehand (without it: cudaErrorOperatingSystem). Landlock's own ptrace
    -- scoping keeps other processes' memory, environment and maps out of reach; what else is
    -- writable there for an account without privileges is a process's name.
    write[#write + 1] = "/proc"
    read[#read + 1] = "/dev/nvidia-caps"
  end
  return { read = read, write = write }
end

------------------------------------------------------------- the children --

local PRIVATE = tonumber("700", 8)      -- a folder of its owner's alone
local PASS_THROUGH = tonumber("711", 8) -- others may pass through to what they own inside

-- Makes the folders a learner's child works in: home (its HOME, cache, state
-- and temporary files) inside the run's private folder, given to the learner
-- when they run as themselves. Returns home or nil, why.
local function learner_home(tmp, k, uid, become)
  local files = require "cudalab.files"
  local home = string.format("%s/l%d", tmp, k)
  local ok, why = files.mkdir(home, PRIVATE)
  for _, sub in ipairs({ "cache", "state", "data", "tmp" }) do
    if ok then ok, why = files.mkdir(home .. "/" .. sub, PRIVATE) end
    if ok and become then ok, why = files.chown(home .. "/" .. sub, uid) end
  end
  if ok and become then ok, why = files.chown(home, uid) end
  if not ok then return nil, why end
  return home
end

-- The child's environment: its own folders, no class, nothing of the
-- instructor's session that a submission could use (a display, an agent),
-- and the caps of each compile (NVRTC's own process: CPU time and memory).
-- malloc's large blocks (a lesson's Lua tables of ten million numbers) in
-- 2 MiB pages where the kernel has them: a page fault per 2 MiB instead of
-- per 4 KiB was a fifth of a learner's grading on a virtual machine.
local COMPILE_MEMORY = 2 * 2^30
local function child_env(home, workdir, task_time, backend)
  local env = { HOME = home, XDG_CACHE_HOME = home .. "/cache", XDG_STATE_HOME = home .. "/state",
    XDG_DATA_HOME = home .. "/data", TMPDIR = home .. "/tmp", CUDALAB_CLASS = "",
    CUDALAB_WORKSPACE = workdir, CUDALAB_HOME = data_dir(), MALLOC_ARENA_MAX = "2",
    CUDALAB_COMPILE_SECONDS = tostring(math.ceil(task_time)),
    GLIBC_TUNABLES = "glibc.malloc.hugetlb=1" }
  -- on the GPU, a compile's process is forked from an engine holding CUDA's reservations, under
  -- which an address-space cap broke NVRTC on an H100: there the CPU-time cap alone holds
  if backend == "sim" then env.CUDALAB_COMPILE_MEMORY = string.format("%d", COMPILE_MEMORY) end
  for _, name in ipairs({ "SSH_AUTH_SOCK", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
                          "DBUS_SESSION_BUS_ADDRESS", "GPG_AGENT_INFO", "KRB5CCNAME",
                          "SLURM_JOB_ID", "LD_PRELOAD" }) do
    env[name] = false
  end
  return env
end

-- Seconds past a task's limit before its process is killed: the worker stops
-- the task itself at the limit, unless the submission is stuck in a C call.
local GRACE = 2
-- The limits are CPU time (the worker's clock, RLIMIT_CPU); the wall-clock
-- deadlines behind them only end a child that has stopped using the CPU (a
-- wait that never ends), and allow this many times the CPU time, so that a
-- machine busy with other graders never ends a child the CPU limits would not.
local WALL_PER_CPU = 5
local HOST_MEMORY = 4 * 2^30 -- address space of a simulator child, beyond the class's memory

-- The proc.run job of one of a learner's tasks: a child of its own, confined
-- as conf says, its submission's files in a folder of its own (home/work-TAG),
-- with a deadline per phase. It runs in another, empty folder (home/run-TAG):
-- the lesson's code names cudalab's kernels by a plain name (cuda.kernel
-- "inc.cu"), found in the current folder first, where a submission's file of
-- that name would stand in for the lesson's kernel and change what its
-- examples compute for the check.
local function learner_job(ctx, k, rec, tag, task, backend)
  local files = require "cudalab.files"
  local home = ctx.homes[k]
  local workdir = string.format("%s/work-%s", home, tag)
  local rundir = string.format("%s/run-%s", home, tag)
  local ok, why = true, nil
  for _, dir in ipairs({ workdir, rundir }) do
    if ok then ok, why = files.mkdir(dir, PRIVATE) end
    if ok and ctx.conf.become then ok, why = files.chown(dir, rec.uid) end
  end
  if not ok then return nil, why end
  local t = ctx.task_time
  -- The class's kernel time limit is wall-clock time, a guard for a shared GPU. On the simulator
  -- a launch is the grading child's own CPU work, held to the task's CPU time like the rest (the
  -- learner's phase, or the lesson's own allowance for its examples): a wall-clock limit per
  -- launch would make a grade depend on how fast and how busy the grading machine is.
  local job = { task = task, workdir = workdir, memory = ctx.settings.memory,
    challenge = ctx.settings.challenge and ctx.settings.challenge.task,
    kernel_time = backend ~= "sim" and math.min(ctx.settings.kernel_time or t, t) or nil,
    task_time = t, lua_memory = 512 * 2^20, cpu_per_phase = math.ceil(t) + GRACE }
  -- the most the child may take: two phases (the lesson's, the learner's) per step replayed, and
  -- one for what the learner typed before the lesson began (grade_worker.lua)
  local phases = 2 * (task.step or 1) + 1
  local whole = phases * (math.ceil(t) + GRACE) + 20
  local limits = { cpu = whole, file_size = 512 * 2^20 }
  -- the GPU's driver, and AddressSanitizer's shadow, reserve far more address space than they use
  if backend == "sim" and not require("cudalab.proc").address_sanitizer then
    limits.memory = math.floor(HOST_MEMORY + 2 * (ctx.settings.memory or 2^30))
  end
  if ctx.conf.become then limits.processes = 512 end
  local j = { argv = { ctx.exe, "--backend", backend, ctx.worker }, stdin = json.encode(job),
    cwd = rundir, env = child_env(home, workdir, t, backend), timeout = WALL_PER_CPU * whole,
    mark_timeout = WALL_PER_CPU * t + GRACE, limits = limits }
  if ctx.conf.become then j.become = rec.uid end
  if ctx.conf.landlock then j.landlock = M.landlock_paths(home, backend) end
  return j
end

-- The result a child sent for task id (a JSON line through its mark
-- descriptor), or nil when it sent none: the first line about that task.
local function child_result(res, id)
  for line in tostring(res.mark_data or ""):gmatch("[^\n]+") do
    local r = json.decode(line)
    if type(r) == "table" and r.id == id then
      local credit = math.type(r.credit) and r.credit >= 0 and r.credit <= 1 and r.credit or nil
      local function ms(v) return type(v) == "number" and v >= 0 and v < 1e9 and v or nil end
      return { ok = r.ok == true, why = type(r.why) == "string" and r.why or "",
        credit = r.ok ~= true and credit or nil, model_ms = ms(r.model_ms), gpu_ms = ms(r.gpu_ms),
        time_why = type(r.time_why) == "string" and r.time_why or nil }
    end
  end
  return nil
end

-- Why a child stopped before finishing its tasks, for the task it was on.
local function stop_reason(res, task_time)
  if res.error then return "the grader could not start the learner's work: " .. res.error end
  if res.timed_out then
    return string.format("the grader stopped it: it ran %d times past the time limit of %g s of " ..
      "CPU time per task without finishing a step (waiting, not computing)", WALL_PER_CPU,
      task_time)
  end
  -- RLIMIT_CPU ends the process that runs Lua with SIGXCPU: the one waited for here when it runs
  -- with no console (no terminal on its input: a grading job), else an engine whose console
  -- says so on stderr and exits 1
  if res.signame == "SIGXCPU" or type(res.stderr) == "string" and
      res.stderr:find("the engine stopped (CPU time limit exceeded)", 1, true) then
    return string.format("the grader stopped it: it ran past the time limit of %g s of CPU time " ..
      "per task (in a call the time check cannot interrupt)", task_time)
  end
  if res.signame then return "the grading process died (" .. res.signame .. ")" end
  return "the grading process ended (status " .. tostring(res.status) .. ")"
end

-- Each learner's tasks, with what is needed to re-run them; tasks with no
-- submission are scored 0 at once.
local function pending_tasks(cls, records, g)
  local lesson_text = {}
  for _, e in ipairs(cls.catalog) do
    lesson_text[e.name] = e.text or run_read(e.path)
  end
  local pending = {}
  for k, rec in ipairs(records) do
    local l = { user = rec.user, uid = rec.uid, results = {} }
    g.learners[k] = l
    pending[k] = {}
    for _, t in ipairs(cls.tasks) do
      local rt = rec.tasks[t.id]
      local sub = rt and rt.submission
      if sub and (next(sub.files) or #sub.lua > 0) then
        table.insert(pending[k], { id = t.id, lesson = t.lesson, number = t.number,
          step_id = t.step_id, step = t.step, text = lesson_text[t.lesson], submission = sub })
        l.results[t.id] = { claimed = rt.passed == true }
      else
        l.results[t.id] = { score = 0, output = no_submission(rt) }
      end
    end
  end
  return pending
end

-- The challenge's modelled times where grading ran on a GPU: each passing
-- learner's challenge task once more, in a child on the simulator, which
-- times it by the performance model (the GPU's child measured it).
local function model_challenge(ctx, records, g, opts)
  local jobs, who = {}, {}
  for k, rec in ipairs(records) do
    local l = g.learners[k]
    if l.challenge then
      local task
      for _, t in ipairs(ctx.pending[k]) do if t.id == ctx.challenge then task = t end end
      local j = task and learner_job(ctx, k, rec, "model", task, "sim")
      if j then jobs[#jobs + 1], who[#jobs + 1] = j, k end
    end
  end
  if #jobs == 0 then return end
  local results = require("cudalab.proc").run(jobs, { jobs = opts["-j"] or 1,
    max_output = 64 * 1024 })
  for j, res in ipairs(results) do
    local l = g.learners[who[j]]
    local r = child_result(res, ctx.challenge)
    if r and r.ok then
      l.challenge.model_ms = r.model_ms
      l.challenge.why = l.challenge.why or r.time_why
    else
      l.challenge.why = "the simulator's re-run did not pass: " ..
        (r and r.why or stop_reason(res, ctx.task_time))
    end
  end
end

-- The grades before any re-run: the course's tasks, and the learners that
-- pending_tasks adds as it finds their work.
local function empty_grades(cls, conf)
  local g = { title = cls.settings.title, tasks = {}, learners = {}, confinement = conf.says }
  for _, t in ipairs(cls.tasks) do
    g.tasks[#g.tasks + 1] = { id = t.id, title = t.title, lesson = t.lesson, number = t.number }
  end
  return g
end

-- What the children need: the confinement, the class's settings and limits,
-- the worker to run, and each learner's tasks to re-run (pending).
local function grading_context(cls, records, opts, conf, g)
  return { conf = conf, settings = cls.settings, backend = opts["--backend"] or
    M.backend_for(cls.settings.backend), task_time = cls.settings.grade_time or 30,
    exe = require("cudalab.proc").self(), worker = data_dir() .. "/lua/class/grade_worker.lua",
    homes = {}, pending = pending_tasks(cls, records, g),
    challenge = cls.settings.challenge and cls.settings.challenge.task }
end

-- A folder in tmp for each learner with work to grade, into ctx.homes.
-- Returns true, or nil, why.
local function make_homes(ctx, records, tmp)
  for k, rec in ipairs(records) do
    if #ctx.pending[k] > 0 then
      local home, why = learner_home(tmp, k, rec.uid, ctx.conf.become)
      if not home then
        return nil, "cannot make a folder for " .. rec.user .. ": " .. tostring(why)
      end
      ctx.homes[k] = home
    end
  end
  return true
end

-- Why learner rec's work is not run, or nil. A record's owner is whoever the file system says
-- made it: root, when someone ran a class session as root, is no learner, and its work is never
-- run, however grading is confined (so that the grades do not depend on who grades); an account
-- deleted since (class_load names it "uid N") cannot be become when grading as root.
local function not_run(rec, become)
  if rec.uid == 0 then
    return "its record belongs to root (a class session run as root made it), and grading " ..
      "never runs work with root's rights: a learner works as their own account"
  end
  if become and rec.user == "uid " .. tostring(rec.uid) then
    return "no account has uid " .. tostring(rec.uid) .. " now, and grading as root runs a " ..
      "learner's work as their own account"
  end
  return nil
end

-- One child job for each task with a submission to re-run, and whose it is
-- (who[j] = {k = learner, task = task}). A learner whose work cannot be run
-- as grading must run it fails alone, every task saying why, and is named on
-- stderr; the others are graded. Returns jobs, who.
local function task_jobs(ctx, g, records)
  local jobs, who = {}, {}
  for k, rec in ipairs(records) do
    local cannot = #ctx.pending[k] > 0 and not_run(rec, ctx.conf.become)
    if cannot then
      io.stderr:write("cudalab: ", rec.user, "'s work is not graded: ", cannot, "\n")
    end
    for n, task in ipairs(ctx.pending[k]) do
      local j, why
      if cannot then why = cannot else j, why = learner_job(ctx, k, rec, n, task, ctx.backend) end
      if j then
        jobs[#jobs + 1], who[#jobs + 1] = j, { k = k, task = task }
      else
        g.learners[k].results[task.id].score = 0
        g.learners[k].results[task.id].output = "not graded: " .. tostring(why)
      end
    end
  end
  return jobs, who
end

-- Runs the jobs -j at once, counting them on stderr unless --quiet.
local function run_jobs(jobs, opts)
  local done = 0
  local results = require("cudalab.proc").run(jobs, { jobs = opts["-j"] or 1,
    max_output = 64 * 1024,
    on_done = function()
      done = done + 1
      if not opts["--quiet"] then
        io.stderr:write(string.format("\rgraded %d of %d tasks", done, #jobs))
      end
    end })
  if not opts["--quiet"] and #jobs > 0 then io.stderr:write("\n") end
  return results
end

-- Scores task t of learner k from its child's result (res): what the child
-- reported, or, when it reported nothing, failed with why it stopped.
local function score_task(ctx, g, k, t, res)
  local l = g.learners[k]
  local r, cell = child_result(res, t.id), l.results[t.id]
  if r and r.ok and t.id == ctx.challenge then
    l.challenge = { model_ms = r.model_ms, gpu_ms = r.gpu_ms, why = r.time_why,
      at = t.submission.at }
  end
  if r then
    cell.score, cell.output = r.ok and 1 or (r.credit or 0), r.ok and "passed" or
      (r.credit and string.format("partly right (%g%% of the points): %s",
        r.credit * 100, r.why) or ("failed: " .. r.why))
  else
    cell.score, cell.output = 0, "failed: " .. stop_reason(res, ctx.task_time)
  end
end

-- Every task in a child of its own, so that no task's grade depends on
-- another's (grade_worker.lua says why). Returns true.
local function run_tasks(ctx, g, records, opts)
  local jobs, who = task_jobs(ctx, g, records)
  for j, res in ipairs(run_jobs(jobs, opts)) do score_task(ctx, g, who[j].k, who[j].task, res) end
  return true
end

-- Where the record said passed and the re-run says otherwise, the report
-- says so; the claim itself is not part of the grades.
local function note_claims(g)
  for _, l in ipairs(g.learners) do
    for _, cell in pairs(l.results) do
      if cell.claimed and (cell.score or 0) < 1 then
        cell.output = cell.output .. " (the learner's record says this task passed; the " ..
          "re-run of the recorded work did not)"
      end
      cell.claimed = nil
    end
  end
end

-- Grades the learners (records) of cls; returns the grades, or nil, why
-- when the learners' work cannot be confined here.
function M.grade(cls, records, opts)
  local conf, cwhy = M.confinement(opts)
  if not conf then return nil, cwhy end
  local tmp, twhy = run.tempdir("cudalab-grade")
  if not tmp then return nil, "cannot make a private folder to grade in: " .. tostring(twhy) end
  -- learners running as themselves pass through the run's folder to their own
  if conf.become then require("cudalab.files").chmod(tmp, PASS_THROUGH) end
  local g = empty_grades(cls, conf)
  local ctx = grading_context(cls, records, opts, conf, g)
  local ok, why = make_homes(ctx, records, tmp)
  if ok then ok, why = run_tasks(ctx, g, records, opts) end
  if not ok then
    run.rmdir(tmp)
    return nil, why
  end
  if ctx.challenge then
    g.challenge = { task = ctx.challenge, title = cls.settings.challenge.title }
    if ctx.backend ~= "sim" then model_challenge(ctx, records, g, opts) end
  end
  run.rmdir(tmp)
  note_claims(g)
  return g
end

---------------------------------------------------------------- main --

-- --merge FILE...: the shards' partial results as one set of grades, emitted as usual.
-- Publishing needs the class folder, which a merge is not given.
local function merge_main(opts, pos)
  if opts["--publish"] then
    err("--publish needs the class (DIR): publish with each shard (--slurm passes it on)")
    return 2
  end
  if #pos == 0 then err("--merge needs the partial results (FILE...)"); return 2 end
  local g, why = output.merge(pos)
  if not g then err("%s", why); return 1 end
  return output.emit(g, opts)
end

-- --shard I/N: true and I, N (nil, nil without the option), or false once the mistake is said.
local function shard_option(opts)
  if not opts["--shard"] then return true end
  local shard_i, shard_n = opts["--shard"]:match("^(%d+)/(%d+)$")
  shard_i, shard_n = tonumber(shard_i), tonumber(shard_n)
  if not shard_i or shard_n < 1 or shard_i < 1 or shard_i > shard_n then
    err("--shard takes I/N with 1 <= I <= N, such as 2/8"); return false
  end
  if not opts["--out"] then err("--shard needs --out FILE for its partial result"); return false end
  return true, shard_i, shard_n
end

-- The class in dir and its learners' records, in the order of their accounts (so that shards
-- split the same list whoever runs them), prepared by the gradebook; or nil, nil and the exit
-- status once the problem is said. Records refused one by one are said and left out.
local function class_records(dir, opts)
  local class_load = require "class_load"
  local cls, why = class_load.class(dir)
  if not cls then err("%s", why); return nil, nil, 1 end
  local records, problems = class_load.records(cls)
  if not records then err("%s", problems); return nil, nil, 1 end
  for _, p in ipairs(problems) do io.stderr:write("cudalab: refused ", p, "\n") end
  table.sort(records, function(a, b)
    if a.user ~= b.user then return a.user < b.user end
    return a.uid < b.uid
  end)
  local pwhy
  records, pwhy = require("gradebook").prepare(cls, records, opts)
  if not records then err("%s", pwhy); return nil, nil, 2 end
  for _, n in ipairs(pwhy) do err("note: %s", n) end
  return cls, records
end

-- --publish: each learner's results into the class's feedback folder. Returns false when
-- there were problems and nobody's results were published.
local function publish(cls, g, dir)
  local n, problems = require("grade_feedback").publish(cls.handle, g)
  for _, p in ipairs(problems) do err("not published: %s", p) end
  io.stderr:write(string.format("published the results of %d of %d learners in " ..
    "%s/feedback (each readable by that learner alone; they see them with grades())\n", n,
    #g.learners, dir))
  return not (#problems > 0 and n == 0)
end

-- A shard's grades, written as the partial result --merge reads. Returns the exit status.
local function write_shard(g, opts, shard_i, shard_n)
  local ok, werr = output.write_partial(g, opts["--out"], shard_i, shard_n)
  if not ok then err("cannot write %s: %s", opts["--out"], werr); return 1 end
  io.stderr:write(string.format("shard %d of %d: %d learners graded into %s\n", shard_i, shard_n,
    #g.learners, opts["--out"]))
  return 0
end

function M.main(args)
  local opts, pos = parse(args)
  if not opts then err("%s (cudalab --grade --help lists the options)", pos); return 2 end
  if opts.help then print(USAGE); return 0 end
  if opts["--merge"] then return merge_main(opts, pos) end
  if #pos ~= 1 then io.stderr:write(USAGE, "\n"); return 2 end
  local dir = pos[1]
  if opts["--backend"] and opts["--backend"] ~= "sim" and opts["--backend"] ~= "cuda" then
    err("--backend takes sim or cuda"); return 2
  end
  if opts["--slurm"] then return require("grade_slurm").run(dir, opts) end
  local shard_ok, shard_i, shard_n = shard_option(opts)
  if not shard_ok then return 2 end
  local cls, records, status = class_records(dir, opts)
  if not cls then return status end
  if shard_i then records = shard_of(records, shard_i, shard_n) end
  local g, gwhy = M.grade(cls, records, opts)
  if g then g, gwhy = require("gradebook").finish(g, cls, records, opts) end
  if not g then err("%s", gwhy); return 1 end
  if not opts["--quiet"] then io.stderr:write("Grading: ", g.confinement, ".\n") end
  if g.challenge and not shard_i then require("grade_challenge").keep(dir, g) end
  g.confinement = nil
  if opts["--publish"] and not publish(cls, g, dir) then return 1 end
  if shard_i then return write_shard(g, opts, shard_i, shard_n) end
  return output.emit(g, opts)
end

return M
