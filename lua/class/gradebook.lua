-- gradebook.lua: what the class makes of the re-run results: who is on the
-- roster, what each task is worth, which submission counts by the deadline,
-- the late policy, the instructor's overrides. grade.lua re-runs the work
-- and calls two functions here:
--
--   gradebook.prepare(cls, records, opts) -> records, notes | nil, why
--       before grading: the learners to grade (--learner), and each task's
--       submission as of the deadline (--until), its time as far as the
--       class's snapshots prove it (class_snapshot.lua)
--   gradebook.finish(g, cls, records, opts) -> g | nil, why
--       after: roster columns, points, late penalties and overrides
--
-- Design stance: the re-run decides whether work passed (and what partial
-- credit its check gave); this module only turns that into points, so the
-- rules of the gradebook are pure functions of the results and class.lua,
-- unit-tested without a class. Every number that is not the re-run's own is
-- said in the task's output (late by how long, overridden by whom and why),
-- so a learner reading their results can follow their score.

local snapshot = require "class_snapshot"

local M = {}

-- The output of every task of a learner on the roster who never joined.
M.ABSENT = "no submission: the learner is on the roster but never joined the class"

-- When a learner's lesson is due: class.lua's due time, moved by their
-- extension (a due time of their own, or a duration added); nil if none.
function M.due_for(settings, user, number)
  local ext = (settings.extensions or {})[user]
  if ext and ext.due and ext.due[number] then return ext.due[number] end
  local due = (settings.due or {})[number]
  if due and ext and ext.more then due = due + ext.more end
  return due
end

-- The submission of one task as of a deadline: the last pass made by the
-- due time (on time); else the last pass by the cutoff (`--until`, or any
-- time), which is late; else the latest try made by the cutoff, so that its
-- failure is what the grade shows. Returns submission-or-nil, seconds late.
function M.choose(t, due, cutoff)
  local passes = t.passes
  if not passes or #passes == 0 then
    passes = (t.passed and t.submission) and { t.submission } or {}
  end
  local function last_by(limit)
    for i = #passes, 1, -1 do
      local at = passes[i].at or 0
      if not limit or at <= limit then return passes[i] end
    end
  end
  local on_time = last_by(due and cutoff and math.min(due, cutoff) or due or cutoff)
  if on_time then return on_time, 0 end
  local late = last_by(cutoff)
  if late then return late, due and math.max(0, (late.at or 0) - due) or 0 end
  local try = t.submission
  if try and (not cutoff or (try.at or 0) <= cutoff) then return try, 0 end
  return nil, 0
end

-- The instructor's overrides: CSV account,task,score,reason (a header line
-- naming them), each with a reason. Returns {[account] = {[task] =
-- {score, reason}}} or nil, why (naming the line).
function M.parse_overrides(text, name, learners, tasks)
  local roster = require "class_roster"
  local out, n, cols = {}, 0, nil
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    line = line:gsub("\r$", "")
    local function fail(fmt, ...) return nil, string.format("%s:%d: " .. fmt, name, n, ...) end
    if line:find("%S") then
      local f, why = roster.csv_fields(line)
      if not f then return fail("%s", why) end
      for k, v in ipairs(f) do f[k] = v:gsub("^%s+", ""):gsub("%s+$", "") end
      if not cols then
        cols = {}
        for k, v in ipairs(f) do cols[v:lower()] = k end
        if not (cols.account and cols.task and cols.score and cols.reason) then
          return fail("the first line must name the columns account,task,score,reason")
        end
      else
        local who, task, reason = f[cols.account] or "", f[cols.task] or "", f[cols.reason] or ""
        local score = tonumber(f[cols.score] or "")
        if not learners[who] then return fail("%s is not a learner of this class", who) end
        if not tasks[task] then return fail("%s is not a task of this class", task) end
        if not score or score ~= score or score < 0 or score > tasks[task] then
          return fail("the score %s is not between 0 and the task's %g points",
            f[cols.score] or "", tasks[task])
        end
        if not reason:find("%S") or reason:find("%c") then
          return fail("an override needs a reason (one line)")
        end
        out[who] = out[who] or {}
        if out[who][task] then return fail("%s's %s is overridden twice", who, task) end
        out[who][task] = { score = score, reason = reason }
      end
    end
  end
  return out
end

local function load_overrides(path, cls, records)
  local f, ferr = io.open(path, "rb")
  if not f then return nil, "--overrides: cannot read " .. tostring(ferr) end
  local text = f:read(4 * 2^20 + 1) or ""
  f:close()
  if #text > 4 * 2^20 then return nil, "--overrides: " .. path .. " is larger than 4 MiB" end
  local learners, tasks = {}, {}
  for _, rec in ipairs(records) do learners[rec.user] = true end
  for _, t in ipairs(cls.tasks) do tasks[t.id] = M.task_points(cls.settings, t) end
  return M.parse_overrides(text, path, learners, tasks)
end

local function apply_overrides(g, overrides)
  for _, l in ipairs(g.learners) do
    for id, o in pairs(overrides[l.user] or {}) do
      local cell = l.results[id]
      if cell then
        cell.output = string.format("overridden by the instructor (%s): %s; the re-run gave " ..
          "%g: %s", M.round(o.score), o.reason, cell.score or 0, cell.output or "")
        cell.score = M.round(o.score)
      end
    end
  end
end

-- Which learners to grade (--learner NAME) and each task's submission as of
-- the deadline (--until TIME, and the class's due times). rec.late[id] holds
-- the seconds a task's chosen submission came after its due time.
function M.prepare(cls, records, opts)
  local cutoff
  if opts["--until"] then
    local why
    cutoff, why = require("class_config").parse_time(opts["--until"])
    if not cutoff then return nil, "--until: " .. why end
  end
  if opts["--overrides"] then
    local o, why = load_overrides(opts["--overrides"], cls, records)
    if not o then return nil, why end
    cls.overrides = o
  end
  if opts["--learner"] then
    local one = {}
    for _, rec in ipairs(records) do
      if rec.user == opts["--learner"] then one[1] = rec end
    end
    if not one[1] then
      return nil, string.format("--learner: %s is not a learner of this class (no record, " ..
        "not on the roster)", opts["--learner"])
    end
    records = one
  end
  local number = {}
  for _, t in ipairs(cls.tasks) do number[t.id] = t.number end
  local snaps, notes = snapshot.load(cls.dir)
  local unproven = {}
  for _, rec in ipairs(records) do
    rec.late, rec.moved = {}, {}
    for id, t in pairs(rec.tasks) do
      local due = number[id] and M.due_for(cls.settings, rec.user, number[id])
      if due or cutoff then
        M.prove_passes(t, snaps, rec.uid, id)
        local sub, late = M.choose(t, due, cutoff)
        t.submission = sub
        if not sub then t.passed = false end
        if late > 0 then rec.late[id] = late end
        if sub and sub.claimed_at then rec.moved[id] = sub end
        for _, d in ipairs({ due or false, cutoff or false }) do
          if d and d <= os.time() and not snapshot.after(snaps, d) then unproven[d] = true end
        end
      elseif #snaps > 0 and t.passed and type(t.submission) == "table" then
        -- no deadline, but a challenge's tie goes to the earlier pass: the proven one
        t.submission = M.proven(snaps, rec.uid, id, t.submission)
      end
    end
  end
  local times = {}
  for d in pairs(unproven) do times[#times + 1] = d end
  table.sort(times)
  if #times > 0 then
    for i, d in ipairs(times) do times[i] = os.date("%Y-%m-%d %H:%M", d) end
    notes[#notes + 1] = string.format("no snapshot of the class was taken after %s: the times " ..
      "of passes before %s are the learners' own records' word, which a learner can rewrite; " ..
      "take one at each due time (cudalab --class-snapshot DIR, run by at or cron)",
      times[#times], #times > 1 and "those times" or "it")
  end
  return records, notes
end

-- Pass p of learner uid's task id with the time the snapshots allow it
-- (class_snapshot.prove): p itself, or a copy made later than it claims,
-- with claimed_at and snapshot saying why.
function M.proven(snaps, uid, id, p)
  local at, s = snapshot.prove(snaps, uid, id, p)
  if not s then return p end
  local q = {}
  for k, v in pairs(p) do q[k] = v end
  q.at, q.claimed_at, q.snapshot = at, math.type(p.at) == "integer" and p.at or 0, s.started
  return q
end

-- Gives each pass of task t the time the snapshots allow it (proven).
function M.prove_passes(t, snaps, uid, id)
  if #snaps == 0 then return end
  local out = {}
  for i, p in ipairs(snapshot.passes(t)) do out[i] = M.proven(snaps, uid, id, p) end
  t.passes = out
end

-- "2 d 3 h", "5 h 10 min", "12 min": how late, in the two largest units.
function M.duration(s)
  local d, h, m = s // 86400, s % 86400 // 3600, s % 3600 // 60
  if d > 0 then return string.format("%d d %d h", d, h) end
  if h > 0 then return string.format("%d h %d min", h, m) end
  return string.format("%d min", math.max(m, 1))
end

-- What late work keeps of its score under the class's policy: 1 - per_day
-- for each day (or part of one) late, nothing after `days` days. Returns the
-- factor and the words for the output.
function M.late_factor(policy, seconds)
  local days = math.ceil(seconds / 86400)
  if days > (policy.days or 0) then
    return 0, string.format("late by %s, past the %d day%s late work is accepted: no points",
      M.duration(seconds), policy.days or 0, policy.days == 1 and "" or "s")
  end
  local f = math.max(0, 1 - (policy.per_day or 1) * days)
  return f, string.format("late by %s: %g%% of the points taken", M.duration(seconds),
    M.round((1 - f) * 100))
end

local function late_work(g, records, settings)
  for k, l in ipairs(g.learners) do
    local late = records[k] and records[k].late or {}
    for id, secs in pairs(late) do
      local cell = l.results[id]
      if cell then
        local f, words = M.late_factor(settings.late or {}, secs)
        cell.score = M.round((cell.score or 0) * f)
        cell.late = secs
        local moved = records[k].moved and records[k].moved[id]
        if moved then
          words = words .. string.format(" (its record says it passed at %s, but the " ..
            "class's snapshot of %s does not hold it)", os.date("%Y-%m-%d %H:%M",
            moved.claimed_at), os.date("%Y-%m-%d %H:%M", moved.snapshot))
        end
        cell.output = words .. "; " .. cell.output
      end
    end
  end
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
  late_work(g, records, cls.settings)
  if cls.overrides then apply_overrides(g, cls.overrides) end
  return g
end

return M
