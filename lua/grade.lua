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

---------------------------------------------------------------- results --

-- The grades of one run (or shard): {tasks = {{id, title, lesson, number}},
-- learners = {{user, uid, results = {[id] = {score, output}}}}}.

local function max_score(g) return #g.tasks end

local function learner_score(g, l)
  local s = 0
  for _, t in ipairs(g.tasks) do s = s + ((l.results[t.id] or {}).score or 0) end
  return s
end

-- The lessons that have tasks, in course order: {{lesson, number, ids}}.
local function lesson_columns(g)
  local cols, by = {}, {}
  for _, t in ipairs(g.tasks) do
    if not by[t.lesson] then
      by[t.lesson] = { lesson = t.lesson, number = t.number, ids = {} }
      cols[#cols + 1] = by[t.lesson]
    end
    table.insert(by[t.lesson].ids, t.id)
  end
  return cols
end

local function pad(s, n) return s .. string.rep(" ", math.max(0, n - utf8.len(s))) end
local function lpad(s, n) return string.rep(" ", math.max(0, n - #s)) .. s end

function M.table_text(g)
  local cols = lesson_columns(g)
  local out = {}
  local title = g.title and ("Grades for " .. g.title) or "Grades"
  out[#out + 1] = string.format("%s: %d learner%s, %d task%s in %d lesson%s, re-run from each " ..
    "learner's submissions", title, #g.learners, #g.learners == 1 and "" or "s", #g.tasks,
    #g.tasks == 1 and "" or "s", #cols, #cols == 1 and "" or "s")
  local namew = 7
  for _, l in ipairs(g.learners) do namew = math.max(namew, math.min(24, utf8.len(l.user) or #l.user)) end
  local head = { pad("learner", namew) }
  for _, c in ipairs(cols) do head[#head + 1] = lpad(string.format("%02d", c.number), 5) end
  head[#head + 1] = lpad("total", 7)
  out[#out + 1] = table.concat(head, " ")
  for _, l in ipairs(g.learners) do
    local name = l.user
    if utf8.len(name) and utf8.len(name) > namew then name = name:sub(1, utf8.offset(name, namew) - 1) end
    local row = { pad(name, namew) }
    for _, c in ipairs(cols) do
      local s = 0
      for _, id in ipairs(c.ids) do s = s + ((l.results[id] or {}).score or 0) end
      row[#row + 1] = lpad(string.format("%d/%d", s, #c.ids), 5)
    end
    row[#row + 1] = lpad(string.format("%d/%d", learner_score(g, l), max_score(g)), 7)
    out[#out + 1] = table.concat(row, " ")
  end
  local legend = {}
  for _, c in ipairs(cols) do legend[#legend + 1] = string.format("%02d %s", c.number, c.lesson) end
  out[#out + 1] = "lessons: " .. table.concat(legend, ", ")
  return table.concat(out, "\n") .. "\n"
end

local function csv_field(s)
  s = tostring(s)
  -- a leading = + - @ is a formula to a spreadsheet: the field is quoted and prefixed with '
  local formula = s:match("^[=+%-@]") ~= nil
  if formula then s = "'" .. s end
  if formula or s:find('[",\n\r]') then return '"' .. (s:gsub('"', '""')) .. '"' end
  return s
end

function M.csv(g)
  local out = {}
  local head = { "user", "uid" }
  for _, t in ipairs(g.tasks) do head[#head + 1] = csv_field(t.id) end
  head[#head + 1] = "score"
  head[#head + 1] = "max_score"
  out[#out + 1] = table.concat(head, ",")
  for _, l in ipairs(g.learners) do
    local row = { csv_field(l.user), tostring(l.uid) }
    for _, t in ipairs(g.tasks) do row[#row + 1] = tostring((l.results[t.id] or {}).score or 0) end
    row[#row + 1] = tostring(learner_score(g, l))
    row[#row + 1] = tostring(max_score(g))
    out[#out + 1] = table.concat(row, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

-- Gradescope's autograder results.json, one per learner, keyed by user name.
function M.gradescope(g)
  local all = {}
  for _, l in ipairs(g.learners) do
    local tests = {}
    for _, t in ipairs(g.tasks) do
      local r = l.results[t.id] or { score = 0, output = "not graded" }
      tests[#tests + 1] = { name = t.id .. ": " .. (t.title or ""), score = r.score,
                            max_score = 1, output = r.output }
    end
    all[l.user] = { score = learner_score(g, l), max_score = max_score(g), tests = tests }
  end
  return json.encode(all, { indent = true }) .. "\n"
end

local write_file = require("lesson_run").write_file

-- Prints the table and writes the files the options ask for. Returns 0 or 1.
local function emit(g, opts)
  io.write(M.table_text(g))
  for _, w in ipairs({ { "--csv", M.csv }, { "--json", M.gradescope } }) do
    local path = opts[w[1]]
    if path then
      local ok, ferr = write_file(path, w[2](g))
      if not ok then err("cannot write %s: %s", path, ferr); return 1 end
    end
  end
  return 0
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
                      memory = cls.settings.memory, kernel_time = math.min(cls.settings.kernel_time or task_time, task_time),
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
          io.stderr:write(string.format("\rgraded %d of %d learners (round %d)", done, #jobs, round))
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
                              output = r.ok == true and "passed" or ("failed: " .. tostring(r.why)) }
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

---------------------------------------------------------------- shards --

local PARTIAL = "cudalab-grades-partial 1"

local function write_partial(g, path, i, n)
  local learners = {}
  for _, l in ipairs(g.learners) do
    learners[#learners + 1] = { user = l.user, uid = l.uid, results = l.results }
  end
  return write_file(path, json.encode({ format = PARTIAL, shard = i, shards = n, title = g.title,
    tasks = g.tasks, learners = json.array and json.array(learners) or learners }, { indent = true }) .. "\n")
end

-- merge(paths) -> grades | nil, why.
function M.merge(paths)
  local seen, g, n = {}, nil, nil
  for _, p in ipairs(paths) do
    local f = io.open(p, "rb")
    if not f then return nil, "cannot read " .. p end
    local part = json.decode(f:read("a"))
    f:close()
    if type(part) ~= "table" or part.format ~= PARTIAL then
      return nil, p .. " is not a partial grading result (cudalab --grade --shard ... --out FILE)"
    end
    if n and part.shards ~= n then
      return nil, string.format("%s is shard %s of %s, but the others are of %d", p,
        tostring(part.shard), tostring(part.shards), n)
    end
    n = part.shards
    if seen[part.shard] then
      return nil, string.format("shard %d of %d is given twice (%s and %s)", part.shard, n,
        seen[part.shard], p)
    end
    seen[part.shard] = p
    if not g then
      g = { title = part.title, tasks = part.tasks, learners = {} }
    elseif json.encode(g.tasks) ~= json.encode(part.tasks) then
      return nil, p .. " grades other tasks than " .. seen[next(seen)] .. " (another class?)"
    end
    for _, l in ipairs(part.learners or {}) do g.learners[#g.learners + 1] = l end
  end
  if not n then return nil, "no partial results given" end
  local missing = {}
  for i = 1, n do if not seen[i] then missing[#missing + 1] = tostring(i) end end
  if #missing > 0 then
    return nil, string.format("shard%s %s of %d %s missing: the table would leave learners out",
      #missing > 1 and "s" or "", table.concat(missing, ", "), n, #missing > 1 and "are" or "is")
  end
  table.sort(g.learners, function(a, b)
    if a.user ~= b.user then return a.user < b.user end
    return a.uid < b.uid
  end)
  return g
end

---------------------------------------------------------------- slurm --

local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  local pwd = os.getenv("PWD")
  if not pwd then
    local p = io.popen("pwd")
    pwd = p and p:read("l") or "."
    if p then p:close() end
  end
  return pwd .. "/" .. path
end

-- Writes the array job's script; returns its path.
function M.slurm_script(dir, work, o)
  local lines = {
    "#!/bin/sh",
    "# Grades one shard of the class " .. dir .. " (written by cudalab --grade --slurm).",
    "#SBATCH --job-name=cudalab-grade",
    "#SBATCH --array=1-" .. o.shards,
    "#SBATCH --output=" .. work .. "/shard-%a.log",
    "#SBATCH --cpus-per-task=" .. o.cpus,
    "#SBATCH --time=" .. o.time,
  }
  if o.partition then lines[#lines + 1] = "#SBATCH --partition=" .. o.partition end
  if o.gpus and o.gpus > 0 then lines[#lines + 1] = "#SBATCH --gres=gpu:" .. o.gpus end
  lines[#lines + 1] = string.format('exec %s%s --grade %s --shard "$SLURM_ARRAY_TASK_ID/%d" ' ..
    '--out %s/shard-"$SLURM_ARRAY_TASK_ID".json -j %d --quiet',
    sh_quote(o.exe), o.backend and (" --backend " .. o.backend) or "", sh_quote(dir), o.shards,
    sh_quote(work), o.cpus)
  local path = work .. "/grade.sbatch"
  assert(write_file(path, table.concat(lines, "\n") .. "\n"))
  return path
end

local function slurm(dir, opts)
  local proc = require "cudalab.proc"
  local o = { shards = opts["--shards"] or 4, cpus = opts["--cpus"] or 2,
              time = opts["--time"] or "1:00:00", partition = opts["--partition"],
              gpus = opts["--gpus"] or 0, exe = proc.self(), backend = opts["--backend"] }
  if not o.time:match("^[%d:%-]+$") then err("--time takes a Slurm time such as 1:00:00"); return 2 end
  if o.partition and not o.partition:match("^[%w_%-%.]+$") then err("--partition takes a partition's name"); return 2 end
  local work = absolute(opts["--work"] or ("cudalab-grade-" .. os.time()))
  local ok, why = require("cudalab.files").private_dir(work)
  if not ok then err("cannot use %s: %s", work, why); return 1 end
  local script = M.slurm_script(absolute(dir), work, o)
  local argv = { "sbatch", "--parsable" }
  if opts["--wait"] then argv[#argv + 1] = "--wait" end
  argv[#argv + 1] = script
  local res = proc.run({ { argv = argv } })[1]
  local jobid = (res.stdout or ""):match("^(%d+)")
  if not jobid then
    err("sbatch did not take the job: %s", (res.stderr ~= "" and res.stderr or res.stdout or ""):gsub("%s+$", ""))
    return 1
  end
  io.stderr:write(string.format("submitted array job %s: %d shards; script, logs and results in %s\n",
    jobid, o.shards, work))
  local paths = {}
  for i = 1, o.shards do paths[i] = string.format("%s/shard-%d.json", work, i) end
  if not opts["--wait"] then
    io.stderr:write("when it has finished: cudalab --grade --merge " .. work .. "/shard-*.json\n")
    return 0
  end
  local failed = {}
  for i, p in ipairs(paths) do
    local f = io.open(p, "rb")
    if f then f:close() else failed[#failed + 1] = i end
  end
  if #failed > 0 then
    for _, i in ipairs(failed) do
      err("shard %d of %d (array task %s_%d) failed: no result; its log is %s/shard-%d.log. Re-run " ..
        "it alone: %s --grade %s --shard %d/%d --out %s", i, o.shards, jobid, i, work, i, o.exe,
        absolute(dir), i, o.shards, paths[i])
    end
    err("no table: %d of %d shards are missing (then: cudalab --grade --merge %s/shard-*.json)",
      #failed, o.shards, work)
    return 1
  end
  local g, merr = M.merge(paths)
  if not g then err("%s", merr); return 1 end
  return emit(g, opts)
end

---------------------------------------------------------------- main --

function M.main(args)
  local opts, pos = parse(args)
  if not opts then err("%s (cudalab --grade --help lists the options)", pos); return 2 end
  if opts.help then print(USAGE); return 0 end
  if opts["--merge"] then
    if #pos == 0 then err("--merge needs the partial results (FILE...)"); return 2 end
    local g, why = M.merge(pos)
    if not g then err("%s", why); return 1 end
    return emit(g, opts)
  end
  if #pos ~= 1 then io.stderr:write(USAGE, "\n"); return 2 end
  local dir = pos[1]
  if opts["--backend"] and opts["--backend"] ~= "sim" and opts["--backend"] ~= "cuda" then
    err("--backend takes sim or cuda"); return 2
  end
  if opts["--slurm"] then return slurm(dir, opts) end
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
    local ok, werr = write_partial(g, opts["--out"], shard_i, shard_n)
    if not ok then err("cannot write %s: %s", opts["--out"], werr); return 1 end
    io.stderr:write(string.format("shard %d of %d: %d learners graded into %s\n", shard_i, shard_n,
      #g.learners, opts["--out"]))
    return 0
  end
  return emit(g, opts)
end

return M
