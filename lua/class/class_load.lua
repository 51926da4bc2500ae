-- class_load.lua: reads a class for the instructor's commands: the class
-- (its settings and the tasks of its lessons in course order) and the
-- learners' records, with one line for each problem the folder holds. The
-- report (class_cli.lua) and grading (grade.lua) both start here.
--
-- Design stance: the folder is read only through cudalab.class, which treats
-- every file in it as hostile; every line this module hands back (problems,
-- notes, the class's warnings) is cleaned by term.clean already, so that a
-- printer cannot forget. A folder full of junk is summed up in one line,
-- never listed file by file.

local term = require "term"

local M = {}

-- The class: handle, settings, the tasks of its lessons in course order,
-- and the records. Returns nil, why on a problem.
function M.class(dir)
  local classroom = require "classroom"
  local h, settings = classroom.open(dir)
  if not h then return nil, term.clean(settings) end
  local catalog, warnings = classroom.catalog(h, settings)
  if not catalog then return nil, term.clean(warnings) end
  local lessons = require "lessons"
  local tasks = {}
  for _, e in ipairs(catalog) do
    local ok, l = pcall(lessons.load, e)
    if not ok then
      warnings[#warnings + 1] = tostring(l)
    else
      for i, s in ipairs(l.steps) do
        if s.task then
          tasks[#tasks + 1] = { id = lessons.task_id(l, s), lesson = l.name, number = e.number,
                                step = i, step_id = s.id, title = s.title, lesson_title = l.title }
        end
      end
    end
  end
  for i, w in ipairs(warnings) do warnings[i] = term.clean(w) end
  local challenge = settings.challenge
  if challenge then
    local ids = {}
    for _, t in ipairs(tasks) do
      if t.id == challenge.task then challenge.title = t.title or t.id end
      ids[#ids + 1] = t.id
    end
    if not challenge.title then
      h:close()
      return nil, term.clean(string.format("class.lua: challenge names the task %q, which " ..
        "the class's lessons do not have (its tasks: %s)", challenge.task,
        #ids > 0 and table.concat(ids, ", ") or "none"))
    end
  end
  return { handle = h, settings = settings, catalog = catalog, tasks = tasks,
           warnings = warnings, dir = dir }
end

-- "uid 1002 (mallory)", or "uid 1002" for an account without a name.
local function account(uid, user)
  if user and user ~= "uid " .. tostring(uid) then
    return string.format("uid %s (%s)", tostring(uid), user)
  end
  return "uid " .. tostring(uid)
end

-- s quoted for a POSIX shell, so that a command in a message can be pasted.
local function shell_quote(s)
  if s:match("^[%w_%-%./:@]+$") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function plural(n, one, many) return n == 1 and one or many end

-- The one line that sums up what records/ held besides records (skipped is
-- what cudalab.class counted), or nil when it held nothing else.
local function skipped_line(skipped)
  if not skipped or skipped.total == 0 then return nil end
  local kinds = {}
  local function kind(n, one, many)
    if n > 0 then kinds[#kinds + 1] = n .. " " .. plural(n, one, many) end
  end
  kind(skipped.empty, "empty", "empty")
  kind(skipped.links, "symbolic link", "symbolic links")
  kind(skipped.folders, "folder", "folders")
  kind(skipped.special, "FIFO, socket or device", "FIFOs, sockets or devices")
  kind(skipped.names, "not named <uid>.json", "not named <uid>.json")
  kind(skipped.planted, "planted under a learner's name (not listed)",
    "planted under learners' names (not listed)")
  local owners = table.concat(skipped.owners, ", ")
  if skipped.more_owners then owners = owners .. " and others" end
  return string.format("records/: skipped %d %s that %s not records (%s), made by %s",
    skipped.total, plural(skipped.total, "file", "files"), plural(skipped.total, "is", "are"),
    table.concat(kinds, ", "), owners)
end

-- "a.json, b.json, c.json, d.json, e.json and 7 more"
local function some(files)
  local shown = {}
  for i = 1, math.min(5, #files) do shown[i] = files[i] end
  return table.concat(shown, ", ") ..
    (#files > 5 and string.format(" and %d more", #files - 5) or "")
end

-- The line for the files one account planted under one learner's name.
local function victim_line(files, e, records)
  local n = #files
  return string.format("planted: %d %s named as the record of %s %s %s, who planted %s: %s; " ..
    "%s ignored, and %s own record is read as usual (remove %s with: find %s -user %d -name " ..
    "'%d.*' -delete)",
    n, plural(n, "file", "files"), account(e.claimed, e.claimed_user),
    plural(n, "belongs to", "belong to"), account(e.uid, e.user), plural(n, "it", "them"),
    some(files), plural(n, "it is", "they are"),
    e.claimed_user and (e.claimed_user .. "'s") or "their", plural(n, "it", "them"), records,
    e.uid, e.claimed)
end

-- The line for the files one account planted under the names of many.
local function planter_line(files, victims, e, records)
  return string.format("planted: %d files named as the records of %d other accounts belong to " ..
    "%s, who planted them: %s; they are ignored, and those learners' own records are read as " ..
    "usual (remove them with: find %s -user %d -name '[0-9]*.*' ! -name '%d.*' -delete)",
    #files, victims, account(e.uid, e.user), some(files), records, e.uid, e.uid)
end

-- The lines naming the files planted under learners' names (named as uid
-- U's record, owned by someone else) and who planted them, with the command
-- that removes them: one line per planter and learner, or one per planter
-- when they planted under more than three learners' names, so that the
-- lines stay few however many files there are. Learners' own records are
-- read as usual.
local function planted_lines(planted, dir)
  local planters, order = {}, {}
  for _, e in ipairs(planted) do
    local p = planters[e.uid]
    if not p then
      p = { first = e, files = {}, victims = {}, victim_order = {} }
      planters[e.uid] = p
      order[#order + 1] = e.uid
    end
    p.files[#p.files + 1] = e.file
    local v = p.victims[e.claimed]
    if not v then
      v = { first = e, files = {} }
      p.victims[e.claimed] = v
      p.victim_order[#p.victim_order + 1] = e.claimed
    end
    v.files[#v.files + 1] = e.file
  end
  local lines, records = {}, shell_quote(dir .. "/records")
  for _, uid in ipairs(order) do
    local p = planters[uid]
    if #p.victim_order > 3 then
      lines[#lines + 1] = planter_line(p.files, #p.victim_order, p.first, records)
    else
      for _, claimed in ipairs(p.victim_order) do
        local v = p.victims[claimed]
        lines[#lines + 1] = victim_line(v.files, v.first, records)
      end
    end
  end
  return lines
end

-- The warning when records/'s group lets accounts besides the instructor
-- read every record (a member added after the class was made), with the fix.
local function readers_line(h)
  local r = h:readers()
  if not r then return nil end
  return string.format("warning: the learners' records can be read by %s, through the group " ..
    "%s that records/ gives every record, not by you alone; have an administrator run: %s",
    r.who, r.group, r.fix)
end

-- Keys the tasks of every record by the course's task ids: a record of an
-- older cudalab knows a task as "lesson/N" (its step number), which is moved
-- to the step's id while that step is still the task. Returns the line that
-- names the tasks the records hold and the course no longer has (a step
-- renamed or removed), or nil when there are none.
local function gone_tasks_line(by_uid, tasks)
  local known, by_step = {}, {}
  for _, t in ipairs(tasks) do
    known[t.id] = true
    by_step[t.lesson .. "/" .. tostring(t.step)] = t.id
  end
  local gone, order = {}, {}
  for _, rec in pairs(by_uid) do
    local moves = {} -- applied after the walk: a table may not gain keys while next() walks it
    for id, t in pairs(rec.tasks) do
      -- an entry nobody tried (an older cudalab made one for the step a lesson was finished
      -- on) has nothing to lose, and is no sign of a renamed task
      local tried = t.attempts > 0 or t.passed or t.skipped or t.hints > 0
      if not known[id] and tried then
        local now = by_step[id]
        if now and id:match("/%d+$") and not rec.tasks[now] then
          moves[#moves + 1] = { id, now }
        else
          if not gone[id] then gone[id] = 0; order[#order + 1] = id end
          gone[id] = gone[id] + 1
        end
      end
    end
    for _, m in ipairs(moves) do
      if not rec.tasks[m[2]] then rec.tasks[m[2]], rec.tasks[m[1]] = rec.tasks[m[1]], nil end
    end
  end
  if #order == 0 then return nil end
  table.sort(order)
  local shown = {}
  for i = 1, math.min(#order, 8) do
    shown[i] = string.format("%s (%d %s)", order[i], gone[order[i]],
      plural(gone[order[i]], "learner", "learners"))
  end
  return string.format("records hold %d %s the course no longer has (a step renamed or " ..
    "removed): %s%s; they are kept, not shown or graded (a heading's {#id} gives a step back " ..
    "its old id)", #order, plural(#order, "task", "tasks"), table.concat(shown, ", "),
    #order > 8 and string.format(" and %d more", #order - 8) or "")
end

-- records(cls [, notes]) -> records, problems | nil, why. The learners'
-- records as the report wants them, and the problems found: one line each
-- ("FILE (OWNER): why"), cleaned for a terminal. notes, when given, receives
-- the lines about the folder as a whole (who else can read the records,
-- planted files, the summary of what was skipped), cleaned too; without it
-- they are written to stderr, as grading wants them.
function M.records(cls, notes)
  local list, skipped = cls.handle:records()
  if not list then return nil, term.clean(skipped) end
  local record = require "class_record"
  local by_uid, problems, planted = {}, {}, {}
  for _, e in ipairs(list) do
    if e.planted then
      planted[#planted + 1] = e
    elseif e.problem then
      problems[#problems + 1] = term.clean(e.file .. " (" .. account(e.uid, e.user) .. "): " ..
        e.problem)
    else
      local rec, perr = record.decode(e.text)
      if not rec then
        problems[#problems + 1] = term.clean(e.file .. " (" .. account(e.uid, e.user) .. "): " ..
          perr)
      else
        rec.uid, rec.user, rec.file = e.uid, e.user, e.file
        local old = by_uid[e.uid]
        if not old or (rec.updated or 0) > (old.updated or 0) then by_uid[e.uid] = rec end
      end
    end
  end
  local lines = { readers_line(cls.handle) }
  for _, l in ipairs(planted_lines(planted, cls.dir)) do lines[#lines + 1] = l end
  lines[#lines + 1] = skipped_line(skipped)
  lines[#lines + 1] = gone_tasks_line(by_uid, cls.tasks)
  for _, l in ipairs(lines) do
    l = term.clean(l)
    if notes then notes[#notes + 1] = l else io.stderr:write("cudalab: ", l, "\n") end
  end
  local records = {}
  for _, rec in pairs(by_uid) do records[#records + 1] = rec end
  table.sort(records, function(a, b) return a.user < b.user end)
  -- the roster: a learner on it who never joined gets a row of their own
  local roster = require "class_roster"
  local list, rwhy = roster.load(cls)
  if rwhy then return nil, term.clean(rwhy) end
  local extra
  records, extra = roster.merge(records, list)
  if #extra > 0 then
    local l = term.clean(string.format("roster: %d %s a record but %s not on the roster " ..
      "(kept, graded as usual): %s", #extra, plural(#extra, "account has", "accounts have"),
      plural(#extra, "is", "are"), some(extra)))
    if notes then notes[#notes + 1] = l else io.stderr:write("cudalab: ", l, "\n") end
  end
  return records, problems
end

return M
