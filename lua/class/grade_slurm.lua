-- grade_slurm.lua: cudalab --grade --slurm: writes an array job of one task
-- per shard (each a `cudalab --grade DIR --shard I/N --out FILE`), submits it
-- with sbatch, and with --wait merges the shards into the table of one run
-- (grade_output.lua). A shard that leaves no result is named with its log
-- and the command that re-runs it alone; the table is refused until every
-- shard is there.

local output = require "grade_output"

local M = {}

local write_file = require("lesson_run").write_file
local function err(fmt, ...) io.stderr:write("cudalab: ", string.format(fmt, ...), "\n") end


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
    '--out %s/shard-"$SLURM_ARRAY_TASK_ID".json -j %d --quiet%s',
    sh_quote(o.exe), o.backend and (" --backend " .. o.backend) or "", sh_quote(dir), o.shards,
    sh_quote(work), o.cpus, (o.trust and " --trust-submissions" or "") ..
    (o.publish and " --publish" or ""))
  local path = work .. "/grade.sbatch"
  assert(write_file(path, table.concat(lines, "\n") .. "\n"))
  return path
end

-- Whether Slurm still has the job: squeue lists it (pending or running).
-- A squeue that cannot answer counts as still there, so a slow controller
-- does not end the wait early; the shards' files decide then.
local function job_queued(jobid)
  local res = require("cudalab.proc").run({ { argv = { "squeue", "-h", "-j", jobid, "-o", "%i" },
    timeout = 60 } })[1]
  if res.status ~= 0 then return true end
  return (res.stdout or ""):find("%S") ~= nil
end

local function file_exists(p)
  local f = io.open(p, "rb")
  if f then f:close() end
  return f ~= nil
end

-- Waits for an array job's shards, saying each as it ends: every round it
-- looks for the shards' result files (paths[i]) and tells of each new one
-- on say(line), until every shard has one or the job has left the queue.
-- deps (for tests): exists(path), queued(jobid), sleep(seconds), say(line),
-- interval. Returns the shards that ended with a result, in the order seen.
function M.wait_shards(jobid, paths, deps)
  deps = deps or {}
  local exists, queued = deps.exists or file_exists, deps.queued or job_queued
  local sleep = deps.sleep or function(s) os.execute("sleep " .. s) end
  local say = deps.say or function(line) io.stderr:write(line, "\n") end
  local seen, order, n = {}, {}, #paths
  while true do
    local still = queued(jobid) -- asked before the files: a shard ending between is seen next
    for i, p in ipairs(paths) do
      if not seen[i] and exists(p) then
        seen[i] = true
        order[#order + 1] = i
        say(string.format("shard %d of %d ended (array task %s_%d): %d of %d done", i, n, jobid,
          i, #order, n))
      end
    end
    if #order == n or not still then return order end
    sleep(deps.interval or 5)
  end
end

function M.run(dir, opts)
  local proc = require "cudalab.proc"
  local o = { shards = opts["--shards"] or 4, cpus = opts["--cpus"] or 2,
              time = opts["--time"] or "1:00:00", partition = opts["--partition"],
              gpus = opts["--gpus"] or 0, exe = proc.self(), backend = opts["--backend"],
              trust = opts["--trust-submissions"], publish = opts["--publish"] }
  if not o.time:match("^[%d:%-]+$") then
    err("--time takes a Slurm time such as 1:00:00"); return 2
  end
  if o.partition and not o.partition:match("^[%w_%-%.]+$") then
    err("--partition takes a partition's name"); return 2
  end
  local work = absolute(opts["--work"] or ("cudalab-grade-" .. os.time()))
  local ok, why = require("cudalab.files").private_dir(work)
  if not ok then err("cannot use %s: %s", work, why); return 1 end
  local script = M.slurm_script(absolute(dir), work, o)
  -- never sbatch --wait, which says nothing, not even the job's id, until the job ends: the id
  -- is said at once, and --wait follows the shards itself
  local argv = { "sbatch", "--parsable", script }
  local res = proc.run({ { argv = argv } })[1]
  local jobid = (res.stdout or ""):match("^(%d+)")
  if not jobid then
    err("sbatch did not take the job: %s", (res.stderr ~= "" and res.stderr or res.stdout or
      ""):gsub("%s+$", ""))
    return 1
  end
  io.stderr:write(string.format("submitted array job %s: %d shards; script, logs and " ..
    "results in %s\n",
    jobid, o.shards, work))
  local paths = {}
  for i = 1, o.shards do paths[i] = string.format("%s/shard-%d.json", work, i) end
  if not opts["--wait"] then
    io.stderr:write("when it has finished: cudalab --grade --merge " .. work .. "/shard-*.json\n")
    return 0
  end
  M.wait_shards(jobid, paths)
  local failed = {}
  for i, p in ipairs(paths) do
    local f = io.open(p, "rb")
    if f then f:close() else failed[#failed + 1] = i end
  end
  if #failed > 0 then
    for _, i in ipairs(failed) do
      err("shard %d of %d (array task %s_%d) failed: no result; its log is " ..
        "%s/shard-%d.log. Re-run " ..
        "it alone: %s --grade %s --shard %d/%d --out %s", i, o.shards, jobid, i, work, i, o.exe,
        absolute(dir), i, o.shards, paths[i])
    end
    err("no table: %d of %d shards are missing (then: cudalab --grade --merge %s/shard-*.json)",
      #failed, o.shards, work)
    return 1
  end
  local g, merr = output.merge(paths)
  if not g then err("%s", merr); return 1 end
  if g.challenge then require("grade_challenge").keep(dir, g) end
  return output.emit(g, opts)
end

return M
