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
  local argv = { "sbatch", "--parsable" }
  if opts["--wait"] then argv[#argv + 1] = "--wait" end
  argv[#argv + 1] = script
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
  return output.emit(g, opts)
end

return M
