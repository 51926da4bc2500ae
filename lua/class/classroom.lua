-- classroom.lua: a learner's session in a class (cudalab --class DIR, or
-- CUDALAB_CLASS=DIR): reads the class's course, applies its limits and
-- backend policy, gives lessons() the class's lessons, and keeps the
-- learner's record in the class folder as they work.
--
-- The engine calls join_from_env() once per engine process, before its
-- banner, and prints banner_lines() after it.
--
-- Design stance:
--  * Joining never costs the learner their session: a class folder that is
--    missing, unsafe or has a bad class.lua gives one clear message (naming
--    the file and line) and the session starts without the class.
--  * Who the learner is comes from their Unix account (cudalab.class's
--    whoami and the record file's owner), never from USER or a typed name.
--  * The filesystem is cudalab.class's (bind_class.c): every file is opened
--    relative to the folder, without following symlinks, and the record is
--    written atomically. This module decides only what goes in the record.
--  * Limits are set through cuda.limits, which only ever lowers them, so a
--    learner cannot lift the class's caps from the prompt.

local config = require "class_config"
local record = require "class_record"

local M = {}

-- The session's class, once joined.
local S = {
  dir = nil,        -- the class folder, as given
  handle = nil,     -- cudalab.class handle on it
  settings = nil,   -- class_config.check's result
  me = nil,         -- {uid, user}
  typed = {},       -- Lua chunks typed since the current lesson began, in order
  typed_steps = {}, -- the step id (lesson_parse's) each of those was typed in
  before = {},      -- the chunks typed in this session before the current lesson began
  lesson = nil,     -- the lesson those chunks belong to
  step_id = nil,    -- the step the learner is on now
  notes = {},       -- lines for the banner
  write_warned = false,
}
M._S = S -- for tests

local function note(line) S.notes[#S.notes + 1] = line end

-- Lesson commands typed at the prompt are not part of a submission: they are
-- what the learner does to the lesson, not their answer.
local COMMAND_ONLY = {}
for _, name in ipairs(require("lesson_boot").COMMANDS) do COMMAND_ONLY[name] = true end
COMMAND_ONLY.grades = true
local function is_command(chunk)
  local name = chunk:match("^%s*([%a_]+)%s*%b()%s*;?%s*$")
  return name and COMMAND_ONLY[name] or false
end

-- Appends to the lists in `lists` (one entry each), keeping their latest
-- record.LIMITS.chunks entries, in one pass when twice that has piled up.
local function append(lists, values)
  for k, list in ipairs(lists) do list[#list + 1] = values[k] end
  local keep, n = record.LIMITS.chunks, #lists[1]
  if n <= keep * 2 then return end
  for _, list in ipairs(lists) do
    table.move(list, n - keep + 1, n, 1)
    for i = n, keep + 1, -1 do list[i] = nil end
  end
end

-- on_input(chunk): the engine calls this with every chunk typed at the prompt.
-- A submission is everything typed since the lesson began, each chunk with
-- the step it was typed in, so that grading replays a function defined a
-- step before the task where it was defined, and before them the chunks
-- typed in this session before the lesson began (another lesson's, or
-- `gpu = cuda.device()` before lesson(N)), which a check at the prompt
-- reruns too when the task's formula reads a name they set (lesson_check's
-- computed). Only the latest chunks are kept.
function M.on_input(chunk)
  if not S.handle or is_command(chunk) then return end
  if not S.lesson then
    append({ S.before }, { chunk })
  else
    append({ S.typed, S.typed_steps }, { chunk, S.step_id })
  end
end

-- The submission's chunks and their steps: those typed before the lesson
-- began (record.BEFORE_LESSON), then the lesson's own.
local function submitted_chunks()
  local chunks, steps = {}, {}
  for _, c in ipairs(S.before) do
    chunks[#chunks + 1], steps[#steps + 1] = c, record.BEFORE_LESSON
  end
  table.move(S.typed, 1, #S.typed, #chunks + 1, chunks)
  table.move(S.typed_steps, 1, #S.typed_steps, #steps + 1, steps)
  return chunks, steps
end

local function current_backend()
  local ok, name = pcall(function() return cuda.backend() end)
  return ok and name or nil
end

-- The lesson engine's observer: one event, applied to the record on disk.
function M.observe(ev)
  if not S.handle then return end
  if ev.kind == "step" then
    if S.lesson ~= ev.lesson then
      for _, c in ipairs(S.typed) do append({ S.before }, { c }) end
      S.typed, S.typed_steps = {}, {}
    end
    S.lesson, S.step_id = ev.lesson, ev.step_id
  end
  ev.backend = current_backend()
  if ev.kind == "check" then
    -- the headers the kernels include from the lesson's folder travel with them
    local files = require("submission_headers").add(ev.edited, require("lessons").workdir(),
      record.LIMITS)
    local chunks, steps = submitted_chunks()
    ev.submission = record.submission(files, chunks, nil, steps)
  end
  ev.files, ev.edited = nil, nil
  local ok, err = record.update(S.handle, S.me, ev)
  if ok then return end
  if not S.write_warned then
    S.write_warned = true
    print("Note: your work cannot be recorded in the class folder (" .. tostring(err) ..
      "); your own progress is still saved.")
  end
end

-- The class's lessons: the built-in ones it takes, then the instructor's
-- own, each numbered as its file is. Returns the catalog and warnings.
local function catalog(h, settings)
  local lessons = require "lessons"
  lessons.configure { catalog = false }
  local builtin, out, warnings, taken = lessons.list(), {}, {}, {}
  local wanted
  if settings.lessons then
    wanted = {}
    for _, n in ipairs(settings.lessons) do wanted[n] = true end
  end
  for _, e in ipairs(builtin) do
    if not wanted or wanted[e.number] then
      out[#out + 1] = e
      taken[e.number] = e.name
    end
  end
  for _, dir in ipairs(settings.lesson_dirs) do
    local files, why = h:lesson_files(dir)
    if not files then
      warnings[#warnings + 1] = "lesson_dirs: " .. tostring(why)
    else
      for _, w in ipairs(why or {}) do warnings[#warnings + 1] = w end
      for _, f in ipairs(files) do
        local num, base = f.name:match("^(%d%d)%-([%w_%-]+)%.md$")
        local n = tonumber(num)
        if taken[n] then
          warnings[#warnings + 1] = string.format("%s/%s is left out: lesson %d is %s already; " ..
            "give it another number", dir, f.name, n, taken[n])
        else
          taken[n] = num .. "-" .. base
          out[#out + 1] = { name = num .. "-" .. base, number = n, text = f.text,
                            path = dir .. "/" .. f.name, class = true }
        end
      end
    end
  end
  table.sort(out, function(a, b) return a.number < b.number end)
  -- a number in lessons that names no lesson is a typo the instructor must hear of, not a
  -- lesson silently missing from the course
  local unknown = {}
  for _, n in ipairs(settings.lessons or {}) do
    if not taken[n] then unknown[#unknown + 1] = tostring(n) end
  end
  if #unknown > 0 then
    local have = {}
    for _, e in ipairs(out) do have[#have + 1] = e.number end
    for _, e in ipairs(builtin) do
      if not taken[e.number] then have[#have + 1] = e.number end
    end
    table.sort(have) -- in order, wherever each lesson came from
    for i, n in ipairs(have) do have[i] = tostring(n) end
    return nil, string.format("class.lua: lessons names %s %s, which no lesson has (the " ..
      "built-in lessons and the class's own are numbered %s)", #unknown == 1 and "lesson" or
      "lessons", table.concat(unknown, ", "), table.concat(have, ", "))
  end
  return out, warnings
end
M.catalog = catalog

-- Where kernels run, as the class says. Returns a banner line or nil.
local function apply_backend(s)
  local cuda = rawget(_G, "cuda")
  if type(cuda) ~= "table" then return nil end
  local now = cuda.backend()
  if s.backend == "sim" then
    if now ~= "sim" and cuda.use("sim") then
      return "kernels run on the simulator, as the class says"
    end
    return nil
  end
  if now ~= "cuda" then
    if s.backend == "gpu" then return "this class runs on the GPU, but there is none here: " ..
      "kernels run on the " .. now .. " backend" end
    return nil
  end
  local request = { sessions_max = s.gpu_sessions_max, memory_needed = s.memory, key = S.key }
  local admit = cuda.gpu_admit and cuda.gpu_admit(request)
  if admit and not admit.ok and s.backend == "auto" then
    cuda.use("sim")
    M.retry_gpu(cuda, request)
    return "on the simulator: " .. admit.why .. "; cuda.use(\"gpu\") tries again for a " ..
      "freed GPU session"
  elseif admit and not admit.ok then
    return "warning: " .. admit.why
  end
  return nil
end

-- retry_gpu(cuda, request): a session the class sent to the simulator may ask
-- for the GPU again, once another has left: cuda.use("gpu") (or "cuda") takes
-- a freed slot first (cuda.gpu_admit), and says why not when none is free, so
-- that no session makes a context the class has no room for.
function M.retry_gpu(cuda, request)
  local use = cuda.use
  -- set through cudalab.standard: a lesson check, which runs with cuda as start-up left it,
  -- must ask the class for a GPU session too
  require("cudalab.standard").set(cuda, "use", function(name, ...)
    if name == "gpu" or name == "cuda" then
      local a = cuda.gpu_admit(request)
      if not a.ok then
        error("cuda.use: no GPU session is free for this class yet (" .. a.why .. "): kernels " ..
          "stay on the simulator; try again later", 2)
      end
      name = "cuda"
    end
    return use(name, ...)
  end)
end

local function apply_limits(s)
  local cuda = rawget(_G, "cuda")
  if type(cuda) ~= "table" or not cuda.limits then return end
  local want = {}
  if s.memory then want.memory = s.memory end
  if s.kernel_time then want.kernel_time = s.kernel_time end
  want.by = "class" -- an array past the limit is told of the class's allowance
  if want.memory or want.kernel_time then cuda.limits(want) end
end

-- open(dir) -> handle, settings | nil, why: the class folder (cudalab.class)
-- and what its class.lua says, checked; the instructor's commands use it too.
function M.open(dir)
  local class = require "cudalab.class"
  local h, err = class.open(dir)
  if not h then return nil, err end
  local text, cfg, settings
  text, err = h:read_config()
  if text then cfg, err = class.eval_config(text, "class.lua") end
  if cfg then settings, err = config.check(cfg, text, "class.lua") end
  if not settings then
    h:close()
    return nil, err
  end
  return h, settings
end

-- join(dir) -> true | nil, why. Sets the session up as the class says.
function M.join(dir)
  local h, settings = M.open(dir)
  if not h then return nil, settings end
  S.dir, S.handle, S.settings, S.me = dir, h, settings, require("cudalab.class").whoami()
  S.key = tostring(h:info().dir)
  local lessons = require "lessons"
  local list, warnings = catalog(h, settings)
  if not list then
    S.handle = nil
    h:close()
    return nil, warnings
  end
  lessons.configure { catalog = list, class = settings.title or dir }
  -- grades(): the results the instructor published for this learner, in a class session only
  if rawget(_G, "grades") == nil then
    rawset(_G, "grades", function() return require("grade_feedback").grades() end)
  end
  -- read-only (cudalab --verify-lessons --class DIR): the course, without a record
  local readonly = os.getenv("CUDALAB_CLASS_READONLY") == "1"
  if not readonly then lessons.observe(M.observe, { file_bytes = record.LIMITS.file + 1 }) end
  local ok, why = pcall(apply_limits, settings)
  if not ok then warnings[#warnings + 1] = "limits: " .. tostring(why) end
  local bok, line = pcall(apply_backend, settings)
  if not bok then warnings[#warnings + 1] = "backend: " .. tostring(line)
  elseif line then note("Class: " .. line .. ".") end
  for _, w in ipairs(warnings) do note("Class: " .. w .. ".") end
  -- records/'s group may have gained a member since the class was made
  local readers = h:readers()
  if readers then note("Class: your record would be readable by another account (" ..
    readers.who .. ", in the group " .. readers.group .. " of the class's records), so it is " ..
    "not written until that is fixed; tell the instructor (an administrator can run: " ..
    readers.fix .. ").") end
  -- a record from the start, so that the instructor's report shows who has joined
  if not readers and not readonly then
    local wok, werr = record.start(h, S.me)
    if not wok then note("Class: your work cannot be recorded in the class folder (" ..
      tostring(werr) .. ").") end
  end
  return true
end

-- The description of the class for the banner.
local function describe()
  local s = S.settings
  local parts = {}
  if s.memory then parts[#parts + 1] = require("format").bytes(s.memory) .. " of device memory" end
  if s.kernel_time then
    parts[#parts + 1] = config.format_seconds(s.kernel_time) .. " per launch"
  end
  return string.format("Class: %s (%s), as %s%s. The class records, for the instructor: " ..
    "the Lua you type during a lesson, your kernel files at each check(), each check's " ..
    "result and message, the hints you ask for, skips and times; grading re-runs that work.",
    s.title or "untitled",
    S.dir, S.me.user, #parts > 0 and ("; limits " .. table.concat(parts, ", ")) or "")
end

-- join_from_env(banner): joins CUDALAB_CLASS's class, if set. With banner,
-- what it has to say waits for banner_lines(); without (a script), only a
-- failure is said, on stderr.
function M.join_from_env(banner)
  local dir = os.getenv("CUDALAB_CLASS")
  if not dir or dir == "" then return end
  S.notes = {}
  local ok, why = M.join(dir)
  if not ok then
    local msg = string.format("cudalab: cannot join the class in %s: %s. Starting without it.",
      dir, tostring(why))
    if banner then note(msg) else io.stderr:write(msg, "\n") end
    return
  end
  table.insert(S.notes, 1, describe())
  if not banner then
    for i = 2, #S.notes do io.stderr:write(S.notes[i], "\n") end
    S.notes = {}
  end
end

function M.banner_lines() return S.notes end

-- The joined class's settings and folder, or nil.
function M.current()
  return S.handle and { dir = S.dir, settings = S.settings, user = S.me.user } or nil
end

return M
