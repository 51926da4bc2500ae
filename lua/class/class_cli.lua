-- class_cli.lua: the instructor's commands, run by main.c as a script with
-- the command line from the command's own option on:
--   cudalab --class-init DIR [--group G] [--title T]
--   cudalab --class-report DIR [--watch [SECONDS]] [--html FILE]
--   cudalab --class-snapshot DIR (class_snapshot.lua)
--   cudalab --grade DIR ... (grade.lua)
-- Each exits with 0 on success, 1 when the work failed, 2 on a usage error.
--
-- Design stance: the commands read the class folder only through
-- class_load.lua (over cudalab.class, which treats every file in it as
-- hostile), and they never run a learner's code (grading does, in sandboxed
-- children: grade.lua). Everything that came from the folder (file and
-- account names, messages) is cleaned by term.clean before it can reach a
-- terminal. grade.lua is below this module: it reads the class through
-- class_load.lua and its options through cli_options.lua, never through here.

local class_load = require "class_load"
local config = require "class_config"
local parse = require("cli_options").parse
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
  ["--class-snapshot"] = [==[
usage: cudalab --class-snapshot DIR
Keeps what every learner has passed now in DIR/snapshots/ (yours alone), so
that grading by a due time does not rest on the times the learners' own
records claim: a pass that a snapshot taken after its claimed time does not
hold is graded as made after that snapshot. Run it at each due time, e.g.
  echo "cudalab --class-snapshot DIR" | at 23:59 2025-03-07]==],
}

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

-- The report as text for the terminal, cleaned whole (term.clean), the model,
-- and the notes for the HTML page: the folder's lines (class_load.records), the
-- class's warnings and the refused records.
local function report_text(cls, width, height)
  local report = require "class_report"
  local folder = {}
  local records, problems = class_load.records(cls, folder)
  if not records then return nil, problems end
  local due_for = require("gradebook").due_for
  local model = report.build(records, cls.tasks, {
    stuck_attempts = cls.settings.stuck.attempts, stuck_minutes = cls.settings.stuck.minutes,
    title = cls.settings.title,
    due = function(user, number) return due_for(cls.settings, user, number) end })
  if cls.settings.challenge then
    local board, bwhy = require("grade_challenge").read(cls.dir)
    model.challenge = board or { task = cls.settings.challenge.task,
      title = cls.settings.challenge.title, best = {} }
    if bwhy then folder[#folder + 1] = "note: " .. bwhy end
    if model.challenge.task ~= cls.settings.challenge.task then
      folder[#folder + 1] = "note: the leaderboard is of " .. model.challenge.task ..
        ", an earlier challenge: the next grading starts one for " .. cls.settings.challenge.task
    end
  end
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
-- sees half a page. The temporary is made new (O_EXCL, O_NOFOLLOW), so a
-- link planted at its name in a shared folder is never followed, and the
-- page is the instructor's alone (0600): it holds every learner's messages.
-- Returns true or nil, why.
local function write_page(path, model, cls, notes)
  local report = require "class_report"
  local page = report.html(model, { title = cls.settings.title, notes = notes })
  return require("cudalab.files").write_atomic(path, page)
end

local function class_report(args)
  local opts, pos = parse(args, 2, { ["--watch"] = "optional number", ["--html"] = "value" })
  if not opts then err("%s (cudalab --class-report --help says more)", pos); return 2 end
  if opts.help then print(USAGE["--class-report"]); return 0 end
  if #pos ~= 1 then io.stderr:write(USAGE["--class-report"], "\n"); return 2 end
  local cls, why = class_load.class(pos[1])
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
      local fresh = class_load.class(pos[1]) or cls
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

local function class_snapshot(args)
  local opts, pos = parse(args, 2, {})
  if not opts then err("%s (cudalab --class-snapshot --help says more)", pos); return 2 end
  if opts.help then print(USAGE["--class-snapshot"]); return 0 end
  if #pos ~= 1 then io.stderr:write(USAGE["--class-snapshot"], "\n"); return 2 end
  local cls, why = class_load.class(pos[1])
  if not cls then err("%s", why); return 1 end
  local path, learners, passes, problems = require("class_snapshot").take(cls)
  if not path then err("%s", learners); return 1 end
  for _, p in ipairs(problems) do err("refused %s", p) end
  print(term.clean(string.format("Kept %d passing submissions of %d learners in %s.", passes,
    learners, path)))
  return 0
end

function M.main(args)
  local cmd = args[1]
  if cmd == "--class-snapshot" then return class_snapshot(args) end
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
