-- test_grade_slurm.lua: cudalab --grade --slurm --wait's progress (lua/class/grade_slurm.lua's
-- wait_shards) against a fake Slurm: each shard is said as its result appears, and the wait ends
-- when all are there or the job has left the queue. The real one-node Slurm runs in
-- tests/class/grading.sh.

local slurm = require "grade_slurm"

-- A fake job: shard i's file appears at round ends[i] (nil: never); the job is queued until
-- round gone. Returns the deps for wait_shards and what it said.
local function fake(ends, gone)
  local round, said, slept = 1, {}, 0
  local paths = {}
  for i = 1, #ends do paths[i] = "shard-" .. i .. ".json" end
  local deps = {
    exists = function(p)
      local i = tonumber(p:match("shard%-(%d+)"))
      return ends[i] ~= nil and round >= ends[i]
    end,
    queued = function(id)
      checkeq(id, "4242")
      return round < gone
    end,
    sleep = function() slept = slept + 1; round = round + 1 end,
    say = function(line) said[#said + 1] = line end,
  }
  return deps, paths, said, function() return slept end
end

test("grade_slurm: --wait says each shard as it ends, in the order they end", function()
  local deps, paths, said, slept = fake({ 3, 1, 2 }, 10)
  local order = slurm.wait_shards("4242", paths, deps)
  checkeq(order, { 2, 3, 1 })
  checkeq(said, {
    "shard 2 of 3 ended (array task 4242_2): 1 of 3 done",
    "shard 3 of 3 ended (array task 4242_3): 2 of 3 done",
    "shard 1 of 3 ended (array task 4242_1): 3 of 3 done",
  })
  checkeq(slept(), 2, "it stops waiting once every shard is there")
end)

test("grade_slurm: --wait ends when the job leaves the queue, a shard missing", function()
  local deps, paths, said = fake({ 1, nil, 2 }, 4)
  checkeq(slurm.wait_shards("4242", paths, deps), { 1, 3 })
  checkeq(#said, 2)
  check(not table.concat(said, "\n"):find("shard 2 of 3", 1, true), "the missing shard is not said")
end)
