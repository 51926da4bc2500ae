-- lessons.lua: the lesson engine: the commands a learner types at the prompt
-- (their names are lesson_boot.lua's COMMANDS: lessons, lesson, next, back,
-- hint, check, skip, reset, bye, edit, workfile), the state of the lesson in
-- progress, and when to save it (lesson_progress.lua writes it to disk).
--
-- A lesson is a Markdown file in lessons/ (lesson_parse.lua reads it; the
-- format is in lessons/README.md). Showing a step prints its text and runs
-- its examples in the learner's own globals (lesson_run.lua); a step with a
-- check is a task, and next() waits until check() passes or skip() has run
-- the reference solution, so that later steps can rely on what it built.
--
-- Design stance:
--  * Progress is saved after every step (lesson_progress.lua), and a fresh
--    engine resumes at the saved step. The variables the earlier steps made
--    are gone after a restart, so entering a step first re-runs, quietly, the
--    examples and solutions of the earlier steps not yet run in this process.
--  * Free play between steps must not break the lesson: what lesson code
--    assigned to a global is remembered, and when the learner has since
--    replaced it, the next step puts it back and says which names it restored.
--  * Every message says what to type next. Nothing here raises at the
--    learner for a slip (next() with no lesson open, hint() on a step with no
--    task): it prints a sentence and returns.
--  * A check runs with the simulator's race checker on and failing the launch,
--    even when the learner turned it off (at the prompt a race only warns): a
--    kernel with a race can pass on the simulator's lockstep warps and fail on
--    a GPU. The race message, which says what to add, is what a failed check
--    shows as its finding; the lesson's own hints come only from hint().
--  * Code is shown as written and prose is fitted to the terminal: say()
--    breaks the engine's sentences at spaces, Markdown is wrapped by
--    markdown.lua, and code blocks, echoed examples and what examples print
--    go out untouched (show_code, show_rendered, lesson_run.run).
--  * The end-to-end check (cudalab --verify-lessons) lives in
--    lesson_verify.lua; it drives this module through the verify_* functions
--    below, with progress saving off and kernel copies in a temporary folder.

local parse = require "lesson_parse"
local progress = require "lesson_progress"
local run = require "lesson_run"
local values = require "lesson_values"

local M = {}

-- The engine's state; one per process.
local S = {
  dir = nil,          -- the lessons/ folder (found next to lua/ unless set)
  path = false,       -- progress file; false: not yet decided, nil: do not save
  state = nil,        -- progress (lesson_progress form), loaded on first use
  cache = {},         -- lesson name -> parsed lesson
  cur = nil,          -- the open lesson, or nil
  step = 1,           -- index of the current step in cur.steps
  hint_i = 0,         -- untagged hints given in the current step
  found = nil,        -- the finding of the current step's last failed check
                      -- that has a ```hint TAG: hint() gives that one first
  tags_given = {},    -- tag -> true: tagged hints given in the current step
  values = values.new(), -- what the open lesson's code assigned (lesson_values.lua):
                      -- record, what the next step puts back; truth, what its
                      -- checks see, whatever the learner has put there since
  ran = {},           -- lesson name -> last step whose code ran in this process
  workdir = nil,      -- where edit() and workfile() keep kernel copies; nil: the
                      -- workspace, one folder per lesson (workspace() below)
  quiet = false,      -- verify: do not print progress warnings
  catalog = nil,      -- a class's lessons (classroom.lua): list of entries as
                      -- M.list() returns them, with `text` where the file was
                      -- read from the class folder; nil: every lesson in dir
  observer = nil,     -- function(event) told of steps, checks, hints, skips
  observer_file_bytes = nil, -- the most of each edited kernel file a check's event
                      -- carries (observe's file_bytes); nil: all of it
  class = nil,        -- the class's title, for lessons()' heading
}
M._S = S -- for the unit tests only; lesson_verify.lua uses M.verify_* below

-- Forgets the hints given and what the last check found: a step entered afresh.
local function reset_hints()
  S.hint_i, S.found, S.tags_given = 0, nil, {}
end

-- What the engine says, broken at spaces to the terminal's width. Only the
-- engine's own sentences go through here: code, rendered Markdown and what
-- examples print go out as they are (show_rendered, show_code), since
-- breaking a line of code at its spaces collapses them and can turn a
-- comment's tail into a line of code.
local function say(...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]) end
  print(require("term").fit(table.concat(parts, "\t", 1, parts.n)))
end

-- Prints what markdown.render made: its prose is already wrapped to the
-- terminal's width and its code must stay as written.
local function show_rendered(text)
  if text ~= "" then print(text) end
end

-- The kernel files step s has the learner edit, as the work folder holds them
-- now: {name = text}, each at most S.observer_file_bytes bytes; a file that
-- cannot be opened is left out. The work folder is this module's, so the
-- observer is handed the text rather than told where to look.
local function edited_files(s)
  local files = {}
  for name, f in pairs(s and s.files or {}) do
    if f.edit then
      local fh = io.open(M.workdir() .. "/" .. name, "rb")
      if fh then
        files[name] = fh:read(S.observer_file_bytes or "a") or ""
        fh:close()
      end
    end
  end
  return files
end

-- Tells the observer (a class's record keeper) what the learner did; a
-- check's event carries the edited kernel files (edited_files). It must
-- never break the lesson, so its errors, and reading the files', are dropped.
local function notify(kind, fields)
  if not S.observer or not S.cur then return end
  local s = S.cur.steps[S.step]
  local ev = { kind = kind, lesson = S.cur.name, step = S.step, task = s and s.task == true,
               title = s and s.title, id = M.task_id(S.cur, s), step_id = s and s.id,
               files = s and s.files }
  for k, v in pairs(fields or {}) do ev[k] = v end
  pcall(function()
    if kind == "check" then ev.edited = edited_files(s) end
    S.observer(ev)
  end)
end

-- The id a class knows a step by: "lesson/step-id" (lesson_parse's stable
-- ids, so that editing a lesson keeps everyone's progress on its tasks).
function M.task_id(l, s)
  return l.name .. "/" .. (s and s.id or "?")
end

-- observe(fn or nil [, {file_bytes = n}]): fn(event) hears of every step
-- entered, check, hint and skip; event = {kind = "step"|"check"|"hint"|"skip"|
-- "done", lesson, step, id = M.task_id, step_id, task, title, files (the
-- step's kernel files), ok, why, edited (checks: {name = text} of the files the
-- learner edits, each at most file_bytes bytes)}.
function M.observe(fn, opts)
  S.observer, S.observer_file_bytes = fn, opts and opts.file_bytes
end

---------------------------------------------------------------- finding --

local function lessons_dir()
  if S.dir then return S.dir end
  local src = debug.getinfo(1, "S").source
  local here = src:match("^@(.*)/[^/]*$") or "lua/lessons" -- this file is lua/lessons/lessons.lua
  S.dir = here .. "/../../lessons"
  return S.dir
end

-- Configures the engine (tests, verify and classes): dir, progress path
-- (false for none), workdir, quiet, catalog (false for none). Clears the
-- open lesson and the cache.
function M.configure(opts)
  if opts.dir ~= nil then S.dir = opts.dir end
  if opts.catalog ~= nil then S.catalog = opts.catalog or nil end
  if opts.class ~= nil then S.class = opts.class or nil end
  if opts.progress ~= nil then S.path = opts.progress or nil; S.state = nil end
  if opts.workdir ~= nil then S.workdir = opts.workdir end
  if opts.quiet ~= nil then S.quiet = opts.quiet end
  S.cur, S.cache, S.ran, S.values = nil, {}, {}, values.new()
end

-- The lesson files, in order: list of {name = "03-...", number = 3, path}.
-- In a class, the class's lessons (a copy of the catalog).
function M.list()
  if S.catalog then return table.move(S.catalog, 1, #S.catalog, 1, {}) end
  local out = {}
  local dir = lessons_dir()
  local p = io.popen("ls -1 " .. run.shq(dir) .. " 2>/dev/null")
  if p then
    for f in p:lines() do
      local num, base = f:match("^(%d%d)%-([%w_%-]+)%.md$")
      if num then
        out[#out + 1] = { name = num .. "-" .. base, number = tonumber(num),
                          path = dir .. "/" .. f }
      end
    end
    p:close()
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

-- find(n or name) -> entry | nil, why. A name may be the full file name
-- without .md, or any unambiguous part of it ("coalescing"); one of digits
-- alone is the lesson's number ("1" from a command line is lesson 1, not
-- every lesson whose name holds a 1).
function M.find(key)
  if type(key) == "string" and key:match("^%d+$") then key = tonumber(key) end
  local all = M.list()
  if #all == 0 then return nil, "no lessons found in " .. lessons_dir() end
  local hits = {}
  for _, e in ipairs(all) do
    if (type(key) == "number" and e.number == key) or e.name == key then return e end
    if type(key) == "string" and e.name:find(key, 1, true) then hits[#hits + 1] = e end
  end
  if #hits == 1 then return hits[1] end
  if #hits > 1 then
    local names = {}
    for i, e in ipairs(hits) do names[i] = e.name end
    return nil, string.format("%q matches %s: say which", key, table.concat(names, ", "))
  end
  return nil, "there is no lesson " .. string.format(type(key) == "string" and "%q" or "%s", key) ..
    "; lessons() lists them"
end

-- load(entry) -> lesson | raises with the file's parse error.
function M.load(e)
  if S.cache[e.name] then return S.cache[e.name] end
  local text = e.text or run.read_file(e.path)
  if not text then error("cannot read " .. e.path, 0) end
  local l = parse.parse(text, e.name)
  l.number, l.path = e.number, e.path
  S.cache[e.name] = l
  return l
end

-- Whether a dotted name ("cuda.sweep") exists in the globals.
local function has(dotted)
  local v = _G
  for part in dotted:gmatch("[^%.]+") do
    if type(v) ~= "table" then return false end
    v = v[part]
  end
  return v ~= nil
end
M.has = has

---------------------------------------------------------------- progress --

local function state()
  if S.state then return S.state end
  if S.path == false then S.path = progress.path() end
  local st, warning = progress.load(S.path)
  if warning and not S.quiet then say("Note: " .. warning .. ".") end
  S.state = st
  return st
end

local save_warned = false
local function save()
  if not S.path then return end
  local ok, err = progress.save(S.path, state())
  if not ok and not save_warned and not S.quiet then
    save_warned = true
    say("Note: " .. err .. " (lessons still work; progress will not survive a restart).")
  end
end

local function record_of(l)
  local st = state()
  st.lessons[l.name] = st.lessons[l.name] or { step = 1, done = false, passed = {} }
  return st.lessons[l.name]
end

---------------------------------------------------------------- kernels --

-- The edit block for a kernel file anywhere in the open lesson, or nil.
-- The learner's workspace: CUDALAB_WORKSPACE, else $XDG_DATA_HOME/cudalab/
-- workspace (~/.local/share/cudalab/workspace), never the folder the REPL
-- was started from, which may be a project of the learner's or read-only.
function M.workspace()
  local ws = os.getenv("CUDALAB_WORKSPACE")
  if ws and ws ~= "" then return ws end
  local base = os.getenv("XDG_DATA_HOME")
  if not (base and base:sub(1, 1) == "/") then
    base = (os.getenv("HOME") or "/tmp") .. "/.local/share"
  end
  return base .. "/cudalab/workspace"
end

-- The folder of the open lesson's kernel files, made on first use and
-- checked as the progress folder is (files.private_dir): the learner's own,
-- writable by no one else, or a note that says how to fix it. Checked once per
-- folder in a process.
local checked_dirs = {}
local function workdir()
  if S.workdir then return S.workdir end
  local dir = M.workspace() .. "/" .. (S.cur and S.cur.name or "scratch")
  if not checked_dirs[dir] then
    checked_dirs[dir] = true
    local ok, why = require("cudalab.files").private_dir(dir)
    if not ok then say("Note: your kernel files cannot be kept safely: " .. why .. ".") end
  end
  return dir
end
M.workdir = workdir

local function edit_block(file)
  for _, s in ipairs(S.cur and S.cur.steps or {}) do
    if s.files[file] and s.files[file].edit then return s.files[file].edit end
  end
  return nil
end

-- workfile(name) -> path of the learner's copy, made from the lesson's
-- starting kernel if there is none yet.
local function workfile(name)
  local path = workdir() .. "/" .. name
  if not run.read_file(path) then
    local src = edit_block(name)
    if src then run.write_file(path, src .. "\n") end
  end
  return path
end
M.workfile = workfile

-- lesson_data(name) -> the table in lessons/data/NAME.lua: figures measured
-- on a GPU by a script kept beside them, with their date and machine.
local function lesson_data(name)
  if type(name) ~= "string" or not name:match("^[%w_%-]+$") then
    error("lesson_data takes the name of a file in lessons/data/, such as \"h200\"", 2)
  end
  return dofile(lessons_dir() .. "/data/" .. name .. ".lua")
end

-- payoff{file =, name =, grid =, block =, args = {...}} times the learner's
-- kernel (from their copy of file) against the kernel the task started from
-- (the ```cuda edit= block), on the same launch, and prints both times and
-- the ratio: a fix is worth what it measures. On the simulator the times are
-- the model's H200 times; on a GPU, the GPU's. Returns the ratio.
local function payoff(spec)
  local format, cuda = require "format", rawget(_G, "cuda")
  local src = edit_block(spec.file)
  if not src then error("payoff: this lesson has no ```cuda edit=" .. tostring(spec.file), 2) end
  local mine = cuda.kernel(workfile(spec.file), { name = spec.name })
  local start = cuda.kernel(src, { name = spec.name })
  local function time(k)
    return cuda.time(function() k[{ spec.grid, spec.block }](table.unpack(spec.args)) end)
  end
  local t_start, t_mine = time(start), time(mine)
  local ratio = t_start.median / t_mine.median
  local clock = t_mine.clock == "model" and "modelled H200 time" or "measured on this GPU"
  local fit = require("term").fit
  print(fit(string.format("Your %s: %s; the kernel you started from: %s (%s).", spec.name,
    format.time_ms(t_mine.median), format.time_ms(t_start.median), clock)))
  if ratio >= 1.05 then
    print(string.format("Your fix made it %s× faster.", format.short(ratio, 2)))
  elseif ratio > 1 / 1.05 then
    print(fit("The two take the same time here: on this launch your change neither helps nor " ..
      "hurts."))
  else
    print(fit(string.format("Yours takes %s× as long: on this launch the change costs more " ..
      "than it saves.", format.short(1 / ratio, 2))))
  end
  return ratio
end

-- expect: lesson_check.lua, the shapes, random inputs and launch log that
-- checks are built on.
local HELPERS = { workfile = workfile, lesson_data = lesson_data, expect = require "lesson_check",
  payoff = payoff }

-- A check runs with the standard library, cuda and the checks' own expect as start-up made
-- them (repl/bind/bind_standard.c): a learner who tried a replacement of string.format or
-- cuda.compare at the prompt, or typed expect.run = ..., gets a true verdict, not one their
-- replacement gave.
local standard = require "cudalab.standard"
standard.adopt(HELPERS.expect)
local with_standard = standard.with

-- Settles what lesson code left in store once each block of it has run (lesson_values.lua).
local function settler(store)
  return function() values.settle(store) end
end

local function env()
  return run.env(S.values.record, HELPERS, nil, nil, settler(S.values))
end

-- The learner's answer names (answer_names) of the lesson's tasks up to the one whose check is
-- running, or nil while no check runs.
local checking = nil

-- What a lesson's own code reads under name k while a check runs: the value the lesson's
-- examples set (true, v), unless the learner freed it (true, nil) or k is an answer (false:
-- the globals decide). A check calls functions the lesson defined (a CPU reference, the
-- baseline a payoff is timed against); reading the globals, they saw a learner's replacement
-- of a value the check itself is kept from (`kick = slow_kernel` made the lesson's baseline
-- slow, `want_total = 7` moved the answer a lesson function gave).
local function lesson_value(k)
  if not checking or checking[k] then return false end
  return values.truth(S.values, k)
end

-- The environment a step's examples run in: as env(), and what they assign
-- is also the lesson's own value under that name (truth); a function they
-- define reads the lesson's values while a check runs (lesson_value).
local function example_env()
  return run.env(S.values.record, HELPERS, values.writer(S.values), lesson_value,
    settler(S.values))
end

-- The global names a task's reference solution assigns (`c = ...`,
-- `a, b = ...`, `function f()`): what the task asks the learner to make, so
-- its check must see the learner's own values under them. Read from the
-- solution's text; a `local` name is not global.
local KEYWORDS = { ["for"] = true, ["if"] = true, ["while"] = true, ["until"] = true,
                   ["return"] = true, ["elseif"] = true, ["local"] = true }
local function answer_names(s)
  local names = {}
  local code = s.solution and s.solution.code or ""
  for line in (code .. "\n"):gmatch("([^\n]*)\n") do
    for stmt in line:gmatch("[^;]+") do
      local targets = stmt:match("^%s*([%a_][%w_%s,%.%[%]\"']-)%s*=[^=]") or
        stmt:match("^%s*([%a_][%w_%s,%.%[%]\"']-)%s*=$")
      if targets and not targets:match("^local%f[^%w_]") then
        for t in targets:gmatch("[^,]+") do
          local name = t:match("^%s*([%a_][%w_]*)")
          if name and not KEYWORDS[name] then names[name] = true end
        end
      end
      local fname = stmt:match("^%s*function%s+([%a_][%w_]*)")
      if fname then names[fname] = true end
    end
  end
  return names
end
M.answer_names = answer_names

-- A lesson's check reads names through this: its helpers, then the values
-- the lesson's examples set (never the learner's replacement: a learner who
-- sets `N = 3` or redefines the CPU reference must not move the ground truth
-- the check compares against, live or in grading), then the globals, where
-- the learner's own answers are. A name the task's solution assigns is an
-- answer, always the learner's; a lesson value the learner freed stays gone.

-- A name lesson code set (an example, a solution) comes from no chunk the learner typed: a
-- check that reruns those chunks must not take it for one set by a chunk too old to be kept.
HELPERS.expect.lesson_names(function(k)
  return S.values.record[k] ~= nil or (values.truth(S.values, k))
end)

-- with_lesson_value(name, value, f): calls f() with the lesson's value under `name` (a setting
-- such as ITERS) replaced by `value` for the learner's globals and the lesson's own functions
-- alike, then puts both back, also when f raises; returns what f returns. A check runs the
-- learner's code under another value of a setting, so that an answer that types the setting's
-- value in place of its name is caught; an answer built on a function the lesson defined (its
-- pipeline(), which reads the lesson's value while a check runs) must see the same value, or a
-- right answer is refused for a number it never typed. Only checks see it: a learner could not
-- use it to any end, and the prompt's names stay the lesson's.
local function with_lesson_value(name, value, f)
  local store = S.values
  local truth, global = store.truth[name], rawget(_G, name)
  store.truth[name] = value
  rawset(_G, name, value)
  local res = table.pack(pcall(f))
  store.truth[name] = truth
  rawset(_G, name, global)
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- lesson_arrays(name) -> list, count: the arrays the lesson's own value `name` held after its
-- code ran that are still alive ({array =, where = "results[2]"}), and how many it ever held.
-- The engine's record, held weakly (lesson_values.lua): a check that judges whether the learner
-- let a lesson's arrays go reads it, since a table the lesson made, the learner can edit.
local function lesson_arrays(name)
  return values.arrays(S.values, name)
end
local CHECK_HELPERS = { with_lesson_value = with_lesson_value, lesson_arrays = lesson_arrays }

local function check_env(s)
  local answers = answer_names(s)
  return setmetatable({}, {
    __index = function(_, k)
      local v = rawget(HELPERS, k) or CHECK_HELPERS[k] -- run.env gives HELPERS an __index to _G
      if v ~= nil then return v end
      if not answers[k] then
        local settled, tv = values.truth(S.values, k)
        if settled then return tv end
      end
      return _G[k]
    end,
    __newindex = function(_, k, v) _G[k] = v end,
  })
end

---------------------------------------------------------------- showing --

local function step_obj() return S.cur and S.cur.steps[S.step] end

-- Prints Markdown text as it reads in a terminal (markdown.lua): reflowed
-- to the terminal's width, emphasis and code shown, tables aligned.
local function show_text(text)
  show_rendered(require("markdown").render(text))
end

-- A step's header, within the terminal's width: the lesson's title, then
-- the step's own title unless it only repeats the lesson's. A title that does
-- not fit is wrapped at spaces onto lines of its own, never cut: the step's
-- title is what the learner reads to know where they are.
local function header(s)
  local term = require "term"
  local width = term.width()
  local title = S.cur.title
  if s.title ~= "" and s.title ~= title then title = title .. " · " .. s.title end
  local head = string.format("── step %d of %d: %s ", S.step, #S.cur.steps, title)
  if term.len(head) <= width - 2 then
    return head .. string.rep("─", math.max(2, width - term.len(head)))
  end
  local lines, line = {}, string.format("── step %d of %d:", S.step, #S.cur.steps)
  for word in title:gmatch("%S+") do
    if term.len(line) + 1 + term.len(word) > width then
      lines[#lines + 1] = line
      line = "  " .. word
    else
      line = line .. " " .. word
    end
  end
  local room = width - term.len(line) - 1
  if room < 2 then -- no room for the rule: it gets a line of its own
    lines[#lines + 1] = line
    lines[#lines + 1] = string.rep("─", width)
  else
    lines[#lines + 1] = line .. " " .. string.rep("─", room)
  end
  return table.concat(lines, "\n")
end

-- Prints an example's results as a Lua prompt does: every value, tab-
-- separated, on one line, except that a float is shown with 4 significant
-- digits: a ratio of two timings printed as 1.9113181596512 claims a
-- precision no measurement has, and is hard to read. Never broken at spaces
-- to the terminal's width: that turned the tab between two values into a
-- space, and two timings read as one.
local function show_results(...)
  local n, out = select("#", ...), {}
  for i = 1, n do
    local v = select(i, ...)
    out[i] = v
    if math.type(v) == "float" then
      local text = require("format").short(v, 4)
      out[i] = setmetatable({}, { __name = "figure", __tostring = function() return text end })
    end
  end
  local texts = {}
  for i = 1, n do
    local ok, s = pcall(require("pretty").format, out[i])
    texts[i] = ok and s or ("<cannot print: " .. tostring(s) .. ">")
  end
  if n > 0 then print(table.concat(texts, "\t")) end
end

local function indent(code)
  return "\n    " .. code:gsub("\n", "\n    ") .. "\n"
end

-- Prints a block of code indented by four, each line as written: never
-- broken or re-spaced to fit. A line wider than the terminal is left for the
-- terminal to wrap (turned down: a continuation mark, which a learner who
-- copies the line would paste as code).
local function show_code(code)
  print(indent(code))
end

-- Runs a step's code. echo: as a transcript; otherwise quietly, for a
-- catch-up replay. Returns true or nil, why.
local function run_examples(s, echo)
  local printer = show_results
  for _, it in ipairs(s.items) do
    if it.kind == "example" or it.kind == "error" then
      local ok, err = run.run(it.code, example_env(),
        { echo = echo, show = printer, expect_error = it.kind == "error" })
      if not ok then
        return nil, "the example at line " .. it.line .. " failed: " .. tostring(err)
      end
    end
  end
  return true
end

local function show_step(run_code)
  local s = step_obj()
  say("\n" .. header(s))
  for _, it in ipairs(s.items) do
    if it.kind == "text" then show_text((require("lesson_figures").fill(it.text, env())))
    elseif it.kind == "example" or it.kind == "error" then
      if run_code then
        say("")
        local ok, err = run.run(it.code, example_env(), { echo = true, show = show_results,
                                                          expect_error = it.kind == "error" })
        if not ok and it.kind == "error" then say("(" .. err .. ")") end
        say("")
      else
        show_code(it.code)
      end
    elseif it.kind == "kernel" then
      show_code(it.code)
      say("(edit() opens your own copy of this kernel, " .. it.file .. ", in your editor.)")
    else
      show_code(it.code)
    end
  end
  if s.task then
    local rec = record_of(S.cur)
    if rec.passed[S.step] == "skipped" then
      say("(You skipped this task: the reference solution ran. check() still checks your own " ..
        "answer; next() goes on.)")
    elseif rec.passed[S.step] then
      say("(You have done this task: next() goes on.)")
    else
      say("Task: when you are done, check().  hint() gives a hint, skip() runs the reference " ..
        "solution.")
    end
  else
    say(S.step < #S.cur.steps and "(next() goes on, back() goes back.)" or
      "(That is the last step: next() ends the lesson.)")
  end
end

-- Forgets the globals lesson code set that the learner has since set to nil, or replaced
-- where they held arrays: freeing what they held, as lesson 14 asks (lesson_values.lua).
local function forget_dropped()
  return values.forget(S.values, _G)
end

-- Puts back the globals lesson code set and the learner has since replaced.
local function restore_globals()
  forget_dropped()
  local names = {}
  for k, v in pairs(S.values.record) do
    if rawget(_G, k) ~= v then
      rawset(_G, k, v)
      names[#names + 1] = k
    end
  end
  table.sort(names)
  if #names > 0 then
    say("(Put back " .. table.concat(names, ", ") .. " as the lesson left " ..
        (#names == 1 and "it" or "them") .. "; the next step needs " ..
        (#names == 1 and "it.)" or "them.)"))
  end
end

-- Runs, quietly, the code of steps before `upto` not yet run in this
-- process (after a restart, or when resuming a lesson), so that their
-- variables exist again: each step's examples and, for a task, its lua
-- solution, which stands in for the learner's lost answer. With `current`,
-- step `upto` itself runs too, but its solution only if its task was passed.
local function catch_up(upto, current)
  local from = (S.ran[S.cur.name] or 0) + 1
  local last = current and upto or upto - 1
  if from > last then return end
  local failed
  local saved_print, passed = print, record_of(S.cur).passed
  print = function() end
  for i = from, last do
    local s = S.cur.steps[i]
    local ok, err = run_examples(s, false)
    if ok and s.solution and (i < upto or passed[i]) then
      ok, err = run.run(s.solution.code, env())
    end
    if not ok then failed = failed or ("step " .. i .. ": " .. tostring(err)) end
  end
  print = saved_print
  S.ran[S.cur.name] = last
  if not S.quiet then
    say(string.format("(Re-ran the code of steps %d to %d so that their variables exist again%s.)",
      from, last, failed and ("; " .. failed) or ""))
  end
end

-- Enters step i of the open lesson: catches up, restores, saves, shows and
-- runs it.
local function enter(i)
  catch_up(i)
  restore_globals()
  S.step = i
  reset_hints()
  -- a task's check may ask what the learner launched: log it while a task is open
  require("lesson_check").watch(S.cur.steps[i].task == true)
  local rec = record_of(S.cur)
  rec.step = i
  state().current = S.cur.name
  save()
  notify("step")
  show_step(true)
  S.ran[S.cur.name] = math.max(S.ran[S.cur.name] or 0, i)
end

local NO_LESSON = "No lesson is open. lessons() lists them; lesson(1) starts the first."

---------------------------------------------------------------- commands --

local C = {}
M.commands = C

-- What became of a lesson's tasks: {marks = {"✓"|"s"|"r"|"·" per task},
-- tasks, passed, skipped, reset}. A task is passed only by a check that
-- passed; skip() makes it skipped. In a lesson read to the end (r.done) a
-- task neither passed nor skipped was undone by reset(), since next() leaves
-- a task only once it is passed or skipped.
local function task_summary(l, r)
  local t = { marks = {}, tasks = 0, passed = 0, skipped = 0, reset = 0 }
  for i, s in ipairs(l.steps) do
    if s.task then
      local p = r.passed[i]
      t.tasks = t.tasks + 1
      local mark = "·"
      if p == true then t.passed, mark = t.passed + 1, "✓"
      elseif p == "skipped" then t.skipped, mark = t.skipped + 1, "s"
      elseif r.done then t.reset, mark = t.reset + 1, "r" end
      t.marks[#t.marks + 1] = mark
    end
  end
  return t
end

-- Whether lesson l is done: read to the end with every task passed by a
-- check (a skipped or reset task leaves it not done).
function M.is_done(l, r)
  if not (r and r.done) then return false end
  local t = task_summary(l, r)
  return t.passed == t.tasks
end

-- "2 tasks skipped, 1 reset": what keeps a lesson read to the end from being done.
local function undone_words(t)
  local parts = {}
  if t.skipped > 0 then
    parts[#parts + 1] = string.format("%d task%s skipped", t.skipped, t.skipped == 1 and "" or "s")
  end
  if t.reset > 0 then
    parts[#parts + 1] = #parts == 0 and
      string.format("%d task%s reset", t.reset, t.reset == 1 and "" or "s") or
      string.format("%d reset", t.reset)
  end
  return table.concat(parts, ", ")
end

-- A lesson's status in lessons(): "done", "read through, 2 tasks skipped",
-- "step 3 of 9"; then its task marks and whether it is the current one.
local function lesson_status(l, r, current)
  local status
  local t = task_summary(l, r)
  if r.done and t.passed == t.tasks then status = "done"
  elseif r.done then
    status = "read through, " .. undone_words(t)
    if current and r.step < #l.steps then
      status = status .. string.format("; at step %d of %d", r.step, #l.steps)
    end
  else status = string.format("step %d of %d", r.step, #l.steps) end
  if #t.marks > 0 then status = status .. "  tasks " .. table.concat(t.marks, " ") end
  if current then status = status .. "  <- current" end
  return status
end

-- One line of lessons() per lesson: number, title, status, in columns when
-- they fit the terminal's width. Where they do not, a line that is too long
-- puts its status on a line of its own under the title, and a title or
-- status still too long is broken at spaces (the rows are prose, not code).
local function lesson_rows(rows)
  local term = require "term"
  local width, titlew = term.width(), 0
  for _, row in ipairs(rows) do titlew = math.max(titlew, term.len(row.title)) end
  local fits = true
  for _, row in ipairs(rows) do
    if 6 + titlew + 2 + term.len(row.status) > width then fits = false end
  end
  for _, row in ipairs(rows) do
    local head = string.format("  %2d  %s", row.number, row.title)
    if row.status == "" then
      print(term.fit(head, width))
    elseif fits then
      local pad = string.rep(" ", titlew - term.len(row.title))
      print(head .. pad .. "  " .. row.status)
    elseif term.len(head) + 2 + term.len(row.status) <= width then
      print(head .. "  " .. row.status)
    else
      print(term.fit(head, width))
      print(term.fit("      " .. row.status, width))
    end
  end
end

function C.lessons()
  local st = state()
  local all = M.list()
  if #all == 0 then return say("No lessons found in " .. lessons_dir() .. ".") end
  say((S.class and ("Lessons of the class " .. S.class) or "Lessons") ..
    " (lesson(n) starts or resumes one; your kernel files are kept in " .. M.workspace() .. "):")
  local rows = {}
  for _, e in ipairs(all) do
    local ok, l = pcall(M.load, e)
    local row = { number = e.number, title = e.name, status = "" }
    if not ok then
      row.status = "cannot be read: " .. tostring(l)
    else
      row.title = l.title
      local missing = parse.missing(l, has)
      local r = st.lessons[e.name]
      if #missing > 0 then
        row.status = "needs " .. table.concat(missing, ", ") .. " (not in this build yet)"
      elseif r then
        row.status = lesson_status(l, r, st.current == e.name)
      end
    end
    rows[#rows + 1] = row
  end
  lesson_rows(rows)
  say("(tasks: ✓ passed, s skipped with skip(), r undone by reset(), · not done yet. A lesson " ..
    "is done when every task has passed its check.)")
end

-- lesson(n or name): opens a lesson, at its saved step when it was begun and
-- not finished. With no argument, shows the current step again.
function C.lesson(key)
  if key == nil then
    if not S.cur then
      local cur = state().current
      if not cur then return say(NO_LESSON) end
      key = cur
    else
      return show_step(false)
    end
  end
  if type(key) ~= "number" and type(key) ~= "string" then
    return say("lesson(n) takes a lesson's number or part of its name, such as lesson(2) or " ..
      "lesson \"coalescing\".")
  end
  local e, why = M.find(key)
  if not e then return say("Sorry: " .. why .. ".") end
  local ok, l = pcall(M.load, e)
  if not ok then return say("This lesson file has a mistake: " .. tostring(l)) end
  local missing = parse.missing(l, has)
  if #missing > 0 then
    return say(string.format("Lesson %s needs %s, which this build of cudalab does not have yet.",
      l.name, table.concat(missing, ", ")))
  end
  if S.cur ~= l then S.values = values.new() end
  S.cur = l
  local r = record_of(l)
  local start = r.step
  if start < 1 or start > #l.steps or (r.done and start == #l.steps) then start = 1 end
  -- a finished lesson stays finished: revisiting it starts at step 1 and keeps "done"
  if start > 1 then
    say(string.format("Resuming %s at step %d of %d (reset() starts it over).", l.name, start,
      #l.steps))
  end
  enter(start)
end

local function ensure_open()
  if S.cur then return true end
  local cur = state().current
  if cur then
    local e = M.find(cur)
    local ok, l = false, nil
    if e then ok, l = pcall(M.load, e) end
    if ok and #parse.missing(l, has) == 0 then
      S.cur, S.values = l, values.new()
      local r = record_of(l)
      S.step = math.min(math.max(r.step, 1), #l.steps)
      if not S.quiet then
        say(string.format("(Back in %s, step %d of %d.)", l.name, S.step, #l.steps))
      end
      catch_up(S.step, true)
      require("lesson_check").watch(l.steps[S.step].task == true)
      return true
    end
  end
  say(NO_LESSON)
  return false
end

function C.next()
  if not ensure_open() then return end
  local s = step_obj()
  local r = record_of(S.cur)
  if (S.ran[S.cur.name] or 0) < S.step then catch_up(S.step, true) end
  if s.task and not r.passed[S.step] then
    return say("This step is a task: check() when you are done, hint() for a hint, skip() to " ..
      "run the reference solution.")
  end
  if S.step >= #S.cur.steps then
    r.done, r.step = true, #S.cur.steps
    state().current = nil
    save()
    notify("done")
    local l = S.cur
    S.cur = nil
    require("lesson_check").watch(false)
    local nexte = M.find(l.number + 1)
    local next_words = (nexte and (" lesson(" .. (l.number + 1) .. ") starts the next one; ") or
      " ") .. "lessons() lists them all."
    if M.is_done(l, r) then return say("Lesson " .. l.name .. " is done." .. next_words) end
    return say(string.format("End of lesson %s; it is not done yet: %s (a lesson is done when " ..
      "every task has passed check(); lesson(%d) goes through it again).%s", l.name,
      undone_words(task_summary(l, r)), l.number, next_words))
  end
  enter(S.step + 1)
end

function C.back()
  if not ensure_open() then return end
  if S.step <= 1 then return say("This is the first step. lesson() shows it again.") end
  S.step = S.step - 1
  reset_hints()
  record_of(S.cur).step = S.step
  save()
  require("lesson_check").watch(S.cur.steps[S.step].task == true)
  say("(Showing the code of this step without running it again; type it to run it.)")
  show_step(false)
end

-- The hints of a task come only when asked for: a failed check says what
-- is wrong and that hint() exists, never a hint's text, so a learner who
-- only wanted to know whether they were right is not handed the answer.
-- hint() gives first the ```hint TAG for what the last failed check found
-- (once), then the untagged hints in order (the last, usually the answer,
-- repeats). Turned down: a failed check that gives the next hint itself;
-- with two hints a task, the first failure then gave away half the answer.

-- The tagged hint hint() would give now (for what the last failed check
-- found, not given yet), or nil.
local function pending_hint(s)
  local tag = S.found
  if tag and s.hint_for[tag] and not S.tags_given[tag] then return s.hint_for[tag], tag end
  return nil
end

-- What a failed check says about hints: which hint() gives next, and skip().
local function hint_offer(s)
  local n = #s.hints
  local what
  if pending_hint(s) then
    what = "hint() gives a hint for what the check found"
  elseif S.hint_i < n then
    what = string.format("hint() gives a hint (%d of %d%s)", S.hint_i + 1, n,
      S.hint_i + 1 == n and ", the last" or "")
  else
    what = "hint() shows the last hint again"
  end
  return what .. "; skip() runs the reference solution."
end

-- Gives the next hint of the current task (see above).
local function give_hint()
  local s = step_obj()
  local md = require "markdown"
  local tagged, tag = pending_hint(s)
  if tagged then
    S.tags_given[tag] = true
    return show_rendered(md.render("Hint, for what the check found: " .. tagged))
  end
  S.hint_i = math.min(S.hint_i + 1, #s.hints)
  show_rendered(md.render(string.format("Hint %d of %d: %s", S.hint_i, #s.hints,
    s.hints[S.hint_i])))
  if S.hint_i == #s.hints then
    say("(That is the last hint; skip() runs the reference solution.)")
  end
end

function C.hint()
  if not ensure_open() then return end
  if not step_obj().task then return say("This step has no task, so no hints: next() goes on.") end
  notify("hint")
  give_hint()
end

-- Calls f under pcall with the simulator's race checker failing the launch
-- ("fail"), whatever the learner set with cuda.simopts (at the prompt a race
-- only warns), and puts their setting back. A kernel with a shared-memory
-- race can give the right numbers on the simulator, which runs a warp in
-- lockstep, and the wrong ones on a GPU, so no check passes one. The
-- uninitialised-read and barrier checks are on too (cuda.sanitize's init and
-- sync, with whatever else the learner turned on): expect.run turns them on
-- for its own launches, but a check that runs the learner's code itself
-- (lesson 25's simulate, which may launch kernels of the learner's own)
-- passed a register never set, zero on the simulator and garbage on a GPU, or
-- a barrier only part of a block reaches. A build without the simulator has
-- no checker: f just runs.
--
-- A read of shared memory before the barrier that orders it after another
-- warp's write (a reverse without __syncthreads()) is a race, and the init
-- check, which stops at the read, sees only a byte nothing has written yet:
-- when a check fails on that, it runs once more with the init check off, and
-- a race found then is the failure reported, with its hint to add the barrier.
-- The failure path alone pays for it.
local function failure_of(res)
  if not res[1] then return res[2] end
  if res[2] ~= true then return res[3] end
  return nil
end

local function pcall_checked_with(f, before, checks, init)
  if checks then
    local on = {}
    for k, v in pairs(checks) do on[k] = v end
    on.init, on.sync = init or checks.init, true
    cuda.sanitize(on)
  end
  cuda.simopts{race_check = "fail"}
  local res = table.pack(pcall(f))
  cuda.simopts{race_check = before.race_check}
  if checks then cuda.sanitize(checks) end
  return res
end

local function pcall_race_checked(f)
  local has, before = pcall(function() return cuda.simopts() end)
  if not has then return pcall(f) end
  local checks = rawget(cuda, "sanitize") and cuda.sanitize()
  local res = pcall_checked_with(f, before, checks, true)
  local why = tostring(failure_of(res) or "")
  if checks and not checks.init and why:find("uninitialised read (init check)", 1, true)
      and why:find("__shared__", 1, true) then
    local again = pcall_checked_with(f, before, checks, false)
    if M.race_message(failure_of(again) or "") then res = again end
  end
  return table.unpack(res, 1, res.n)
end

-- The race checker's message in a check's failure, or nil: it names the two
-- threads, the variable, both lines and the barrier to add, which makes it
-- the best hint there is.
function M.race_message(why)
  local at = tostring(why):find("shared-memory race", 1, true)
  return at and tostring(why):sub(at) or nil
end

-- The answer names of every task of the open lesson up to step s (s's own included): what the
-- learner was asked to make is theirs, also to the lesson's functions.
local function lesson_answers(s)
  local names = {}
  for _, st in ipairs(S.cur and S.cur.steps or { s }) do
    if st.task then
      for k in pairs(answer_names(st)) do names[k] = true end
    end
    if st == s then break end
  end
  return names
end

-- run_check(step) -> true | false, why, findings, credit. A check passes only
-- by returning true; false plus a message, or an error, is a failure with
-- that message. findings (lesson_check.lua) say what the check found, most
-- specific first, so that the hint answering it can be chosen. A failing
-- check may give partial credit as its third value, a number from 0 to 1
-- (`return false, "3 of 4 sizes right", 0.75`): the share of the task's
-- points grading gives; live, the task is still not passed. It runs with
-- race checking on (pcall_race_checked).
function M.run_check(s)
  local lc = require "lesson_check"
  -- what the learner dropped, or replaced where it held arrays, is no longer the lesson's
  forget_dropped()
  local f, err = load(s.check.code, "=check", "t", check_env(s))
  if not f then return false, "the check does not compile: " .. err, {} end
  lc.begin()
  -- The check's own launches are not the learner's session: a record for cuda.export pauses.
  local recorder = package.loaded.export_record
  -- The lesson's functions the check calls read the lesson's values (lesson_value).
  local was_checking = checking
  checking = lesson_answers(s)
  -- The check is lesson code: its own kernels are not held to a class's kernel time limit.
  local paused = recorder and recorder.paused or function(g) return g() end
  local res = table.pack(with_standard(paused, function()
    return pcall_race_checked(function() return run.as_lesson(f) end)
  end))
  checking = was_checking
  if not res[1] then
    local msg = tostring(res[2]):gsub("^check:%d+: ", "")
    return false, msg, lc.findings(msg)
  end
  if res[2] == true then return true end
  -- An error caught inside the check and returned keeps its "check:N:" position; the learner
  -- needs the message, not a line of a file they never see.
  local why = res[3] and tostring(res[3]):gsub("^check:%d+: ", "") or
    "the check did not return true"
  local credit = res[4]
  if math.type(credit) == nil or not (credit >= 0 and credit <= 1) then credit = nil end
  return false, why, lc.findings(why), credit
end

-- The hint a task gives for what its check found: the ```hint TAG of the
-- first finding that has one. Returns hint, tag or nil.
local function finding_hint(s, found)
  for _, tag in ipairs(found or {}) do
    if s.hint_for[tag] then return s.hint_for[tag], tag end
  end
  return nil
end
M.finding_hint = finding_hint

function C.check()
  if not ensure_open() then return end
  local s = step_obj()
  if not s.task then return say("This step has no task to check: next() goes on.") end
  local ok, why, found = M.run_check(s)
  notify("check", { ok = ok, why = why })
  if ok then
    record_of(S.cur).passed[S.step] = true
    save()
    S.found = nil
    return say("Correct. next() goes on.")
  end
  -- what it found decides the hint hint() gives first; a finding whose hint was given already
  -- leaves the untagged hints next
  local _, tag = finding_hint(s, found)
  S.found = tag
  local race = M.race_message(why)
  if race then
    -- the race checker's own finding (the two threads, the variable, the barrier to add), not
    -- the lesson's hint text
    say("Not yet: the simulator found a shared-memory race while checking.")
    say("Hint: " .. race)
  else
    say("Not yet: " .. why)
  end
  say(hint_offer(s))
end

-- Keeps the learner's version of a kernel file beside it, never over an older
-- one: FILE.mine, else FILE.mine.1, FILE.mine.2, ... (a reset() after a skip()
-- must not lose the first). Returns the name it was kept under, or nil.
local function keep_copy(path, text)
  local name, n = path .. ".mine", 0
  while run.read_file(name) do
    n = n + 1
    name = path .. ".mine." .. n
  end
  if run.write_file(name, text) then return name:match("[^/]*$") end
  return nil
end

-- Installs a task's reference kernels (role "solution") in the work folder.
-- The learner's own copy is kept as FILE.mine. (Wrong kernels are installed
-- one at a time by verify.)
function M.install_kernels(s, role, keep_mine)
  for file, f in pairs(s.files) do
    if f[role] then
      local path = workdir() .. "/" .. file
      local old = run.read_file(path)
      if keep_mine and old and old ~= f[role] .. "\n" and (not f.edit or old ~= f.edit .. "\n") then
        local kept = keep_copy(path, old)
        say("(Your version of " .. file .. " is kept as " .. (kept or
          "nothing: it cannot be written") .. ".)")
      end
      run.write_file(path, f[role] .. "\n")
      if not keep_mine then goto continue end
      say("Reference " .. file .. ":")
      show_code(f[role])
    end
    ::continue::
  end
end

function C.skip()
  if not ensure_open() then return end
  local s = step_obj()
  if not s.task then return C.next() end
  M.install_kernels(s, "solution", true)
  if s.solution then
    say("The reference solution:")
    require("lesson_check").typed(s.solution.code)
    local ok, err = run.run(s.solution.code, env(), { echo = true, show = require("pretty").print })
    if not ok then
      return say("The reference solution failed (" .. err .. "); please report this lesson.")
    end
  end
  local ok, why = M.run_check(s)
  if not ok then
    return say("The reference solution did not pass the check (" .. why .. "); please report " ..
      "this lesson.")
  end
  local rec = record_of(S.cur)
  if rec.passed[S.step] ~= true then rec.passed[S.step] = "skipped" end
  save()
  notify("skip")
  say("Done. next() goes on.")
end

-- Puts back the lesson's starting kernels; a copy the learner changed is
-- kept as FILE.mine first, so reset() never loses work. Returns the files
-- that were put back.
local function restore_kernels()
  local put_back = {}
  for _, st in ipairs(S.cur.steps) do
    for file, f in pairs(st.files) do
      local path = workdir() .. "/" .. file
      local mine = f.edit and run.read_file(path)
      if mine and mine ~= f.edit .. "\n" and keep_copy(path, mine) then
        run.write_file(path, f.edit .. "\n")
        put_back[#put_back + 1] = file
      end
    end
  end
  table.sort(put_back)
  return put_back
end

function C.reset()
  if not ensure_open() then return end
  local rec = state().lessons[S.cur.name]
  state().lessons[S.cur.name] = { step = 1, done = rec and rec.done or false, passed = {} }
  S.ran[S.cur.name] = 0
  local put_back = restore_kernels()
  say("Starting " .. S.cur.name .. " over.")
  if #put_back > 0 then
    say("Put back the original " .. table.concat(put_back, ", ") .. " in " .. workdir() ..
        "; your versions are kept as .mine files there (.mine.1, .mine.2 ... when one was " ..
        "there already).")
  end
  enter(1)
end

function C.bye()
  if not S.cur and not state().current then return say("No lesson is open.") end
  local name = S.cur and S.cur.name or state().current
  local step = S.cur and S.step or (state().lessons[name] or {}).step or 1
  state().current = nil
  save()
  S.cur = nil
  require("lesson_check").watch(false) -- a launch outside a lesson costs what it always did
  say(string.format("Left %s at step %d; lesson %q resumes it there.", name, step, name))
end

-- workfile "FILE.cu" at the prompt: the path of the learner's copy, as in checks.
function C.workfile(name)
  if type(name) ~= "string" or not name:match("^[%w_%-%.]+$") then
    return say("workfile takes a kernel file's name, such as workfile \"double.cu\".")
  end
  return workfile(name)
end

function C.edit(src)
  if not ensure_open() then return end
  local s = step_obj()
  local file
  for f, v in pairs(s.files) do if v.edit then file = f end end
  if not file then return say("This step has no kernel to edit.") end
  local path = workfile(file)
  if type(src) == "string" then
    local ok, err = run.write_file(path, src .. "\n")
    if not ok then return say("Cannot write " .. path .. ": " .. tostring(err)) end
    return say("Saved your kernel as " .. path .. ". check() tests it.")
  end
  -- An empty VISUAL is unset, as for other programs that read it: EDITOR is next.
  local editor = os.getenv("VISUAL")
  if not editor or editor == "" then editor = os.getenv("EDITOR") end
  if editor and editor ~= "" then
    os.execute(editor .. " " .. run.shq(path))
    return say("check() tests " .. file .. ".")
  end
  say("Your copy of the kernel is " .. path .. ". Edit it in any editor (set EDITOR and edit() " ..
      "opens it), or pass the source: edit [[ __global__ ... ]]. Then check().")
end

---------------------------------------------------------------- help --

local HELP = {
  lessons = { "lessons()", "Lists the lessons with where you are in each." },
  lesson = { "lesson(n | name)", "Starts lesson n, or resumes it at the step you left. A name " ..
    "may be part of the file name: lesson \"coalescing\". With no argument, shows the current " ..
    "step again.", "lesson(1)" },
  next = { "next()", "Goes to the next step of the lesson and runs its examples. On a task, " ..
    "check() or skip() first. With arguments it is Lua's own next(t, k)." },
  back = { "back()", "Shows the previous step again, without running its code." },
  hint = { "hint()", "Gives the next hint for the current task: first the one for what the " ..
    "last failed check found, then the others in order; the last is usually the answer." },
  check = { "check()",
    "Checks the current task. A failed check says why and that hint() gives a hint; hints come " ..
    "only when you ask for them." },
  skip = { "skip()", "Runs the task's reference solution, so that later steps work; your own " ..
    "kernel file is kept as FILE.mine." },
  reset = { "reset()", "Starts the current lesson over from its first step and puts back its " ..
    "original kernel files (your versions are kept as FILE.mine)." },
  bye = { "bye()", "Leaves the lesson; its progress is kept and lesson(n) resumes it." },
  workfile = { "workfile(name)", "The path of your copy of a lesson's kernel file, in your " ..
    "workspace: cuda.kernel(workfile \"double.cu\") compiles it.",
    "dbl = cuda.kernel(workfile \"double.cu\")" },
  edit = { "edit([source])", "Opens your copy of the step's kernel (a file in your workspace, " ..
    "which lessons() names) in $EDITOR; " ..
    "without EDITOR, prints its path. edit(source) saves a kernel given as a string.",
    "edit [[\n__global__ void inc(float *a, int n) { ... }\n]]" },
}

local ok_help, help = pcall(require, "help")
if ok_help and type(help) == "table" and help.register then
  for _, name in ipairs(require("lesson_boot").COMMANDS) do
    local h = HELP[name]
    help.register(name, { sig = h[1], text = h[2], example = h[3] }, rawget(_G, name))
  end
end

-------------------------------------------------------------- verifying --
-- What lesson_verify.lua drives (cudalab --verify-lessons): it reaches the
-- engine's state only through these.

-- The environment lesson code runs in: the learner's globals, the helpers
-- (workfile, lesson_data, expect) and what lesson code has assigned.
M.env = env

-- Sets the engine up to verify lessons: progress neither saved nor warned
-- about, kernel copies in workdir. Returns a function that puts back the
-- learner's progress, workspace and open lesson.
function M.verify_begin(workdir)
  local saved = { path = S.path, state = S.state, workdir = S.workdir, quiet = S.quiet,
                  cur = S.cur, step = S.step, values = S.values, ran = S.ran }
  S.path, S.state, S.workdir, S.quiet = nil, { lessons = {} }, workdir, true
  return function()
    S.path, S.state, S.workdir, S.quiet = saved.path, saved.state, saved.workdir, saved.quiet
    S.cur, S.step, S.values, S.ran = saved.cur, saved.step, saved.values, saved.ran
  end
end

-- Opens lesson l (M.load's) as a learner starting it: nothing recorded,
-- run or typed yet in this process, no hint given.
function M.verify_open(l)
  S.cur, S.values, S.ran = l, values.new(), {}
  reset_hints()
  require("lesson_check").forget()
end

-- Enters step i of the open lesson and runs its examples as a transcript;
-- true, or nil and why. A step whose examples ran counts as run, so that a
-- later catch-up does not run them again.
-- verify_step(i) -> true, or nil and why: runs step i's examples as next()
-- would and checks that every figure its text states is borne out by what it
-- printed, and that every {{figure}} can be computed (lesson_figures.lua).
function M.verify_step(i)
  S.step = i
  local s, figures = S.cur.steps[i], require "lesson_figures"
  local output, outer = {}, print
  print = function(...) -- luacheck: ignore 121 (the step's output, as the learner sees it)
    local parts = table.pack(...)
    for k = 1, parts.n do parts[k] = tostring(parts[k]) end
    output[#output + 1] = table.concat(parts, "\t", 1, parts.n)
    outer(...)
  end
  local done, ok, why = pcall(run_examples, s, true)
  print = outer
  if not done then error(ok, 0) end
  if not ok then return nil, why end
  S.ran[S.cur.name] = i
  local printed = table.concat(output, "\n")
  for _, it in ipairs(s.items) do
    if it.kind == "text" then
      local _, errors = figures.fill(it.text, env())
      if #errors > 0 then return nil, "a {{figure}} cannot be computed: " .. errors[1] end
      local bad = figures.contradictions(it.text, printed)
      if #bad > 0 then
        return nil, "the text states " .. table.concat(bad, ", ") .. ", which the step's " ..
          "output does not show: compute the figure with {{...}} or print it"
      end
    end
  end
  return true
end

-- lessons.verify(name_or_nil [, opts]) -> true when every lesson passed.
function M.verify(name, opts)
  return require("lesson_verify").verify(M, name, opts)
end

return M
