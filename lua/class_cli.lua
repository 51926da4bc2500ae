-- class_cli.lua: the instructor's commands, run by main.c as a script with
-- the command line from the command's own option on:
--   cudalab --class-init DIR [--group G] [--title T]
--   cudalab --class-report DIR [--watch [SECONDS]] [--html FILE]
--   cudalab --grade DIR ... (grade.lua)
-- Each exits with 0 on success, 1 when the work failed, 2 on a usage error.
--
-- Design stance: the commands read the class folder only through
-- cudalab.class, which treats every file in it as hostile, and they never
-- run a learner's code (grading does, in sandboxed children: grade.lua).
-- Everything that came from the folder (file and account names, messages)
-- is cleaned by term.clean before it can reach a terminal, and the lists
-- handed to other printers (load_records' problems) are clean already, so
-- that a printer cannot forget. A folder full of junk is summed up in one
-- line, never listed file by file.

local config = require "class_config"
local term = require "term"

local M = {}

local function err(fmt, ...)
  io.stderr:write("cudalab: ", term.clean(string.format(fmt, ...)), "\n")
end

local USAGE = {
  ["--class-init"] = [==[
usage: cudalab --class-init DIR [--group G] [--title TITLE]
Creates a class folder that learners join with `cudalab --class DIR`:
  DIR/class.lua   the course: title, lessons, your own lesson folders, backend,
                  memory per learner, kernel time limit (commented; edit it)
  DIR/lessons/    your own lessons, in the format of cudalab's lessons
  DIR/records/    one record per learner, written by that learner's account
                  only and readable by you alone
Any account on the machine can join; with --group G, only G's members.]==],
  ["--class-report"] = [==[
usage: cudalab --class-report DIR [--watch [SECONDS]] [--html FILE]
Prints the stuck learners and the task each is on, learners x lessons
(passed, attempts, skipped, stuck) and, per task, the pass rate among those
who reached it, the median attempts, hints asked, late work and the most
frequent failure messages (grouped, addresses and varying numbers taken out).
  --watch [S]   redraw every S seconds (default 3), fitted to the terminal's
                height, until Ctrl-C (which ends it with status 0)
  --html FILE   also write one self-contained page with the same tables, the
                full messages (a click shows them) and a chart of pass rates
                per task; with --watch it is rewritten every round]==],
}

-- Parses args[first..] as options: spec = {["--x"] = "value"|"flag"|"optional number"|
-- "int"|"int0"} (whole numbers of 1 or more, of 0 or more; "-j4" is "-j 4"). Returns opts,
-- positional arguments; or nil, why.
local function parse(args, first, spec)
  local opts, pos = {}, {}
  local i = first
  while i <= #args do
    local a = args[i]
    local short, digits = a:match("^(%-%a)(%d+)$")
    if short and spec[short] == "int" then
      opts[short] = tonumber(digits)
    elseif a == "-h" or a == "--help" then
      opts.help = true
    elseif a:sub(1, 1) == "-" and #a > 1 then
      local kind = spec[a]
      if not kind then return nil, "unknown option '" .. a .. "'" end
      if kind == "flag" then
        opts[a] = true
      elseif kind == "value" then
        i = i + 1
        if not args[i] then return nil, "'" .. a .. "' needs a value" end
        opts[a] = args[i]
      elseif kind == "int" or kind == "int0" then
        i = i + 1
        local v = math.tointeger(tonumber(args[i]))
        local least = kind == "int" and 1 or 0
        if not v or v < least or v > 100000 then
          return nil, string.format("'%s' needs a whole number of %d or more", a, least)
        end
        opts[a] = v
      elseif kind == "optional number" then
        opts[a] = true
        if args[i + 1] and tonumber(args[i + 1]) then
          i = i + 1
          opts[a] = tonumber(args[i])
        end
      end
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  return opts, pos
end

local function class_init(args)
  local opts, pos = parse(args, 2, { ["--group"] = "value", ["--title"] = "value" })
  if not opts then err("%s (cudalab --class-init --help says more)", pos); return 2 end
  if opts.help then print(USAGE["--class-init"]); return 0 end
  if #pos ~= 1 then io.stderr:write(USAGE["--class-init"], "\n"); return 2 end
  local dir = pos[1]
  local title = opts["--title"] or (dir:match("([^/]+)/*$") or "CUDA class")
  if title:find("%c") or #title > 200 then err("--title must be one line of text"); return 2 end
  local text = config.TEMPLATE:format(title)
  local class = require "cudalab.class"
  local ok, why = class.init(dir, opts["--group"], text)
  if not ok then err("%s", why); return 1 end
  print(string.format("Created the class %q in %s.", title, dir))
  print("  Edit " .. dir .. "/class.lua to choose its lessons and limits; put your own " ..
    "lessons in " ..
    dir .. "/lessons/.")
  print("  Learners join with:  cudalab --class " .. dir)
  print("  You see the room with:  cudalab --class-report " .. dir .. " --watch")
  return 0
end

-- The class: handle, settings, the tasks of its lessons in course order,
-- and the records. Returns nil, why on a problem.
function M.load_class(dir)
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
local gone_tasks_line, write_page

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
gone_tasks_line = function(by_uid, tasks)
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

-- load_records(cls [, notes]) -> records, problems | nil, why. The learners'
-- records as the report wants them, and the problems found: one line each
-- ("FILE (OWNER): why"), cleaned for a terminal. notes, when given, receives
-- the lines about the folder as a whole (who else can read the records,
-- planted files, the summary of what was skipped), cleaned too; without it
-- they are written to stderr, as grading wants them.
function M.load_records(cls, notes)
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

-- The report as text for the terminal, cleaned whole (term.clean), the model,
-- and the notes for the HTML page: the folder's lines (load_records), the
-- class's warnings and the refused records.
local function report_text(cls, width, height)
  local report = require "class_report"
  local folder = {}
  local records, problems = M.load_records(cls, folder)
  if not records then return nil, problems end
  local due_for = require("gradebook").due_for
  local model = report.build(records, cls.tasks, {
    stuck_attempts = cls.settings.stuck.attempts, stuck_minutes = cls.settings.stuck.minutes,
    title = cls.settings.title,
    due = function(user, number) return due_for(cls.settings, user, number) end })
  local out = report.text(model, { width = width, time = model.now, height = height })
  local notes = {}
  for _, l in ipairs(folder) do notes[#notes + 1] = l end
  for _, w in ipairs(cls.warnings) do notes[#notes + 1] = "note: " .. w end
  for _, p in ipairs(problems) do notes[#notes + 1] = "refused: " .. p end
  if #notes > 0 then out = out .. "\n" .. table.concat(notes, "\n") .. "\n" end
  return term.clean(out, true), model, notes
end

-- The terminal's rows, for --watch to fit its height: stty asks the terminal
-- itself (a fork each round, every few seconds, is nothing), then LINES,
-- then 24.
local function rows()
  local p = io.popen("stty size 2>/dev/null")
  local n = p and tonumber((p:read("a") or ""):match("^(%d+)"))
  if p then p:close() end
  n = n or tonumber(os.getenv("LINES") or "")
  if not n or n < 5 then n = 24 end
  return math.min(n, 1000)
end
M.rows = rows

-- Writes the HTML page of model to path, whole: a temporary beside it, then
-- rename, so that a browser reloading it while --watch rewrites it never
-- sees half a page. Returns true or nil, why.
write_page = function(path, model, cls, notes)
  local report = require "class_report"
  local page = report.html(model, { title = cls.settings.title, notes = notes })
  local tmp = path .. ".tmp"
  local f, ferr = io.open(tmp, "w")
  if not f then return nil, "cannot write " .. path .. ": " .. tostring(ferr) end
  local ok, werr = f:write(page)
  f:close()
  if ok then ok, werr = os.rename(tmp, path) end
  if not ok then os.remove(tmp); return nil, "cannot write " .. path .. ": " .. tostring(werr) end
  return true
end

local function class_report(args)
  local opts, pos = parse(args, 2, { ["--watch"] = "optional number", ["--html"] = "value" })
  if not opts then err("%s (cudalab --class-report --help says more)", pos); return 2 end
  if opts.help then print(USAGE["--class-report"]); return 0 end
  if #pos ~= 1 then io.stderr:write(USAGE["--class-report"], "\n"); return 2 end
  local cls, why = M.load_class(pos[1])
  if not cls then err("%s", why); return 1 end
  local interval = opts["--watch"] == true and 3 or opts["--watch"]
  if interval and interval < 0.5 then err("--watch takes at least 0.5 seconds"); return 2 end
  local width = require("term").width()
  local text, model, notes = report_text(cls, width, interval and rows())
  if not text then err("%s", model); return 1 end
  if opts["--html"] then
    local ok, werr = write_page(opts["--html"], model, cls, notes)
    if not ok then err("%s", werr); return 1 end
  end
  if interval then
    -- Ctrl-C is how a watch ends: the way out, not a failure
    require("cudalab.proc").exit_on_interrupt(0)
    require("class_report").watch(function()
      local fresh = M.load_class(pos[1]) or cls
      local t, m, n = report_text(fresh, require("term").width(), rows())
      if not t then return text end
      -- the page follows the room as the terminal does, every round
      if opts["--html"] then assert(write_page(opts["--html"], m, fresh, n)) end
      return t
    end, { interval = interval })
    return 0
  end
  io.write(text)
  if opts["--html"] then print("Wrote " .. opts["--html"] .. ".") end
  return 0
end

M.parse_options = parse

function M.main(args)
  local cmd = args[1]
  if cmd == "--class-init" then return class_init(args) end
  if cmd == "--class-report" then return class_report(args) end
  if cmd == "--grade" then return require("grade").main(args) end
  err("unknown class command '%s'", tostring(cmd))
  return 2
end

-- Run as a script by main.c: `...` are the command's arguments.
if select("#", ...) > 0 and type((...)) == "string" and (...):match("^%-%-") then
  os.exit(M.main({ ... }))
end
return M
