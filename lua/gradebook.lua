-- gradebook.lua: what the class makes of the re-run results: who is on the
-- roster, what each task is worth, which submission counts by the deadline,
-- the late policy, the instructor's overrides. grade.lua re-runs the work
-- and calls two functions here:
--
--   gradebook.prepare(cls, records, opts) -> records | nil, why
--       before grading: the learners to grade (--learner), and each task's
--       submission as of the deadline (--until)
--   gradebook.finish(g, cls, records, opts) -> g | nil, why
--       after: roster columns, points, late penalties and overrides
--
-- Design stance: the re-run decides whether work passed (and what partial
-- credit its check gave); this module only turns that into points, so the
-- rules of the gradebook are pure functions of the results and class.lua,
-- unit-tested without a class. Every number that is not the re-run's own is
-- said in the task's output (late by how long, overridden by whom and why),
-- so a learner reading their results can follow their score.

local M = {}

-- The output of every task of a learner on the roster who never joined.
M.ABSENT = "no submission: the learner is on the roster but never joined the class"

function M.prepare(cls, records, opts)
  return records
end

-- Copies what the records know of each learner (roster columns, absence)
-- into g's learners, which are records' in the same order.
local function learner_columns(g, records)
  for k, l in ipairs(g.learners) do
    local rec = records[k]
    if rec and rec.user == l.user then
      local r = rec.roster or {}
      l.name, l.id, l.email = r.name or "", r.id or "", r.email or ""
      if rec.absent then
        l.absent = true
        for _, cell in pairs(l.results) do cell.output = M.ABSENT end
      end
    end
  end
end

function M.finish(g, cls, records, opts)
  learner_columns(g, records)
  return g
end

return M
