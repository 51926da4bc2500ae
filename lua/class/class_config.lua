-- class_config.lua: what a class's class.lua may say, checked and turned into
-- the settings a session uses. Pure Lua with no I/O, so that it is unit-tested
-- without a class folder.
--
-- class.lua is evaluated elsewhere (cudalab.class's eval_config: a fresh Lua
-- state of its own, capped in memory and instructions, no libraries that
-- reach files or processes); this module sees only the plain table it
-- returned, and the file's text, to name the line of a bad value.
--
-- Design stance:
--  * Every key is optional, and a bad value is an error that names its line
--    ("class.lua:12: backend must be ..."), so that the instructor can fix it
--    at once. The caller starts the session without the class on an error:
--    a learner never loses the REPL to a typo in the course file.
--  * Sizes and times are written as people write them ("2 GiB", "500 MiB",
--    "2 s", "500 ms", "1.5 min"), or as plain numbers (bytes, seconds).
--  * An unknown key is an error too, not a warning: `memory_per_leaner` must
--    not silently lift the cap the instructor meant to set.

local M = {}

M.TEMPLATE = [[
-- class.lua: the course of this class. Every learner's cudalab session reads it
-- when they join with `cudalab --class DIR`. It is Lua that returns one table;
-- every key is optional. It runs in a sandbox (no files, no os, no require),
-- so it can only describe the class.
return {
  -- shown in the banner of every learner's session and in the report
  title = %q,

  -- the built-in lessons this class takes, by number (default: all of them)
  -- lessons = {1, 2, 3, 4, 5, 6},

  -- folders of your own lessons, Markdown in the format of cudalab's lessons
  -- (see the README's "Writing a lesson"); relative to this folder
  lesson_dirs = {"lessons"},

  -- where kernels run: "auto" (the GPU while it has room, else the simulator),
  -- "gpu" (the GPU only) or "sim" (the simulator for everyone)
  backend = "auto",

  -- device memory each learner may hold (on the GPU and on the simulator)
  memory_per_learner = "2 GiB",

  -- a launch that runs longer than this is stopped
  kernel_time_limit = "2 s",

  -- at most this many sessions on one GPU; with backend = "auto" the others
  -- run on the simulator. An H200 makes about 64 CUDA contexts at once
  -- (cudalab's bench/class/H200.md); without this key, only its free memory counts
  gpu_sessions_max = 60,

  -- when the report calls a learner stuck on a task: this many failed checks,
  -- or this many minutes without passing
  -- stuck = {attempts = 5, minutes = 15},

  -- grading (cudalab --grade): the time each task's re-run may take
  -- grade_time_limit = "30 s",

  -- who is in the class: by default the members of the class's group; or a
  -- CSV file of yours with the columns account,name,id,email (relative to
  -- this folder). A learner on it who never joined still has a row (0).
  -- roster = "roster.csv",

  -- points of a task (by its id, as the report and the CSV name it; default 1)
  -- and weights of a lesson (by number: its tasks' points are multiplied by it)
  -- points = { ["50-warmup/square-every-element"] = 5 },
  -- weights = { [50] = 2 },

  -- when each lesson is due (local time), extensions per learner (a duration
  -- added to every due time, or due times of their own), and what late work
  -- earns: per_day of the points taken per day late, none after days
  -- due = { [50] = "2025-03-07 23:59" },
  -- extensions = { alice = "2 days", bob = { [50] = "2025-03-10 12:00" } },
  -- late = { per_day = 0.1, days = 3 },

  -- a challenge: the task (by its id) whose passing kernels the report ranks
  -- by modelled H200 time, re-run by the grader (and by measured time on the
  -- GPU where the class grades on one); each learner's best is kept
  -- challenge = { task = "50-warmup/square-every-element" },
}
]]

local KNOWN = {
  title = true, lessons = true, lesson_dirs = true, backend = true,
  memory_per_learner = true, kernel_time_limit = true, gpu_sessions_max = true, stuck = true,
  grade_time_limit = true, roster = true, points = true, weights = true, due = true,
  extensions = true, late = true, challenge = true,
}

local UNITS_BYTES = {
  b = 1, byte = 1, bytes = 1,
  kib = 2^10, mib = 2^20, gib = 2^30, tib = 2^40,
  kb = 1e3, mb = 1e6, gb = 1e9, tb = 1e12,
  k = 2^10, m = 2^20, g = 2^30, -- as `ulimit` and most tools read a bare letter
}
local UNITS_SECONDS = {
  us = 1e-6, ["µs"] = 1e-6, ms = 1e-3, s = 1, sec = 1, secs = 1, second = 1, seconds = 1,
  min = 60, mins = 60, minute = 60, minutes = 60, h = 3600, hour = 3600, hours = 3600,
  d = 86400, day = 86400, days = 86400,
}

-- A number with a unit ("2 GiB", "500 ms") or a plain number in base_unit,
-- as a number of the base unit; nil, why otherwise. q describes the quantity
-- for messages: {units, base, what, example, most, range}.
local function parse_quantity(v, q)
  local n, unit
  if type(v) == "number" then
    n, unit = v, q.base
  elseif type(v) == "string" then
    n, unit = v:match("^%s*([%d%.]+)%s*(%S*)%s*$")
    n = tonumber(n)
    unit = unit and unit:lower()
    if unit == "" then unit = q.base end
  end
  local scale = unit and q.units[unit]
  if not (n and scale) then
    return nil, string.format("%s is not a %s (write it as %s)",
      type(v) == "string" and string.format("%q", v) or tostring(v), q.what, q.example)
  end
  local x = n * scale
  if x ~= x or x <= 0 or x > q.most then
    return nil, string.format("%s is not a %s %s", tostring(v), q.what, q.range)
  end
  return x
end

local BYTES = { units = UNITS_BYTES, base = "b", what = "size", most = 2^62,
  example = "\"2 GiB\", \"512 MiB\" or a number of bytes", range = "greater than zero" }
local SECONDS = { units = UNITS_SECONDS, base = "s", what = "duration", most = 7 * 86400,
  example = "\"2 s\", \"500 ms\" or a number of seconds", range = "between 0 and a week" }

-- "2 GiB" -> 2147483648; 1e9 -> 1e9. Returns nil, why on anything else.
function M.parse_bytes(v)
  local b, why = parse_quantity(v, BYTES)
  return b and math.floor(b), why
end

-- "2 s" -> 2; "500 ms" -> 0.5; 3 -> 3. Returns nil, why on anything else.
function M.parse_seconds(v) return parse_quantity(v, SECONDS) end

-- The line of class.lua where `key` is set (the first `key =` at the start of
-- a line), for messages; nil when it cannot be told.
local function line_of(text, key)
  local n = 0
  for line in ((text or "") .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    if line:match("^%s*" .. key .. "%s*=") or line:match("^%s*%[%s*[\"']" .. key ..
      "[\"']%s*%]%s*=") then
      return n
    end
  end
  return nil
end

-- The keys whose value is a size or a duration, and the setting each becomes.
local QUANTITIES = {
  { key = "memory_per_learner", setting = "memory", parse = M.parse_bytes },
  { key = "kernel_time_limit", setting = "kernel_time", parse = M.parse_seconds },
  { key = "grade_time_limit", setting = "grade_time", parse = M.parse_seconds },
}

local function positive_integer(v, most)
  return math.type(v) == "integer" and v >= 1 and v <= most
end

-- The steps of check below: each checks some keys of cfg into the settings
-- s and returns true, or fail's nil, why (fail names the file and the line).

-- Every key is one class.lua may set.
local function check_keys(cfg, _, fail)
  local keys = {}
  for k in pairs(cfg) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if not KNOWN[k] then
      local known = {}
      for kk in pairs(KNOWN) do known[#known + 1] = kk end
      table.sort(known)
      return fail(k, "unknown key %q (the keys are %s)", k, table.concat(known, ", "))
    end
  end
  return true
end

local function check_title(cfg, s, fail)
  if cfg.title == nil then return true end
  if type(cfg.title) ~= "string" or #cfg.title > 200 or cfg.title:find("[%c]") then
    return fail("title", "title must be a line of text (200 characters at most)")
  end
  s.title = cfg.title
  return true
end

local function count_keys(t)
  local c = 0
  for _ in pairs(t) do c = c + 1 end
  return c
end

-- lessons: "all" (or nothing), or a plain list of lesson numbers.
local function check_lessons(cfg, s, fail)
  if cfg.lessons == nil or cfg.lessons == "all" then return true end
  if type(cfg.lessons) ~= "table" then
    return fail("lessons", "lessons must be a list of lesson numbers such as {1, 2, " ..
      "3}, or \"all\"")
  end
  s.lessons = {}
  for i, n in ipairs(cfg.lessons) do
    if not positive_integer(n, 99) then
      return fail("lessons", "lessons[%d] is %s, not a lesson number (1 to 99)", i, tostring(n))
    end
    s.lessons[#s.lessons + 1] = n
  end
  if #s.lessons ~= count_keys(cfg.lessons) then
    return fail("lessons", "lessons must be a plain list such as {1, 2, 3}")
  end
  return true
end

-- lesson_dirs: a folder name or a list of them.
local function check_lesson_dirs(cfg, s, fail)
  if cfg.lesson_dirs == nil then return true end
  local dirs = type(cfg.lesson_dirs) == "string" and { cfg.lesson_dirs } or cfg.lesson_dirs
  if type(dirs) ~= "table" then
    return fail("lesson_dirs", "lesson_dirs must be a list of folders such as {\"lessons\"}")
  end
  for i, d in ipairs(dirs) do
    if type(d) ~= "string" or d == "" or #d > 1024 or d:find("%c") then
      return fail("lesson_dirs", "lesson_dirs[%d] is not a folder name", i)
    end
    s.lesson_dirs[#s.lesson_dirs + 1] = d
  end
  return true
end

local function check_backend(cfg, s, fail)
  if cfg.backend == nil then return true end
  if cfg.backend ~= "auto" and cfg.backend ~= "gpu" and cfg.backend ~= "sim" then
    return fail("backend", "backend must be \"auto\", \"gpu\" or \"sim\", not %s",
      type(cfg.backend) == "string" and string.format("%q", cfg.backend) or tostring(cfg.backend))
  end
  s.backend = cfg.backend
  return true
end

-- The sizes and durations (QUANTITIES), each parsed into its setting.
local function check_quantities(cfg, s, fail)
  for _, q in ipairs(QUANTITIES) do
    if cfg[q.key] ~= nil then
      local v, why = q.parse(cfg[q.key])
      if not v then return fail(q.key, "%s: %s", q.key, why) end
      s[q.setting] = v
    end
  end
  return true
end

local function check_gpu_sessions(cfg, s, fail)
  if cfg.gpu_sessions_max == nil then return true end
  if not positive_integer(cfg.gpu_sessions_max, 100000) then
    return fail("gpu_sessions_max", "gpu_sessions_max must be a whole number of " ..
      "sessions, 1 or more")
  end
  s.gpu_sessions_max = cfg.gpu_sessions_max
  return true
end

-- stuck: {attempts =, minutes =}, each over the default.
local function check_stuck(cfg, s, fail)
  local st = cfg.stuck
  if st == nil then return true end
  if type(st) ~= "table" then
    return fail("stuck", "stuck must be a table such as {attempts = 5, minutes = 15}")
  end
  for k, v in pairs(st) do
    if k ~= "attempts" and k ~= "minutes" then
      return fail("stuck", "stuck has an unknown key %q (attempts, minutes)", tostring(k))
    end
    if type(v) ~= "number" or v ~= v or v <= 0 or v > 1e6 then
      return fail("stuck", "stuck.%s must be a number greater than zero", k)
    end
    s.stuck[k] = v
  end
  return true
end

-- In this order: the first problem is the one reported.
local CHECK_STEPS = { check_keys, check_title, check_lessons, check_lesson_dirs, check_backend,
  check_quantities, check_gpu_sessions, check_stuck }

-- check(cfg, text, name) -> settings | nil, message. cfg is the table class.lua
-- returned; text its source (for line numbers); name how to call the file.
-- settings = {title, lessons = {n, ...} or nil (all), lesson_dirs = {...},
--   backend = "auto"|"gpu"|"sim", memory = bytes|nil, kernel_time = s|nil,
--   gpu_sessions_max = n|nil, stuck = {attempts, minutes}, grade_time = s}
function M.check(cfg, text, name)
  name = name or "class.lua"
  local function fail(key, fmt, ...)
    local at = key and line_of(text, key)
    return nil, string.format("%s:%s " .. fmt, name, at and (at .. ":") or "", ...)
  end
  if type(cfg) ~= "table" then
    return nil, string.format("%s must return a table (it returned %s)", name, type(cfg))
  end
  local s = { backend = "auto", lesson_dirs = {}, stuck = { attempts = 5, minutes = 15 },
              grade_time = 30 }
  for _, step in ipairs(CHECK_STEPS) do
    local ok, why = step(cfg, s, fail)
    if not ok then return nil, why end
  end
  return M.check_grading(cfg, s, fail)
end

-- A path inside the class folder: relative, no "..", not under records/ (the
-- learners' own files), one line.
local function inside_path(v)
  return type(v) == "string" and v ~= "" and #v <= 1024 and not v:find("%c") and
    v:sub(1, 1) ~= "/" and not ("/" .. v .. "/"):find("/%.%./") and
    not ("/" .. v):find("^/+records/") and not ("/" .. v):find("^/+records$")
end

-- A number of points: finite, 0 or more, at most a million.
local function points_value(v)
  return type(v) == "number" and v == v and v >= 0 and v <= 1e6
end

-- The keys that say how the class is graded (roster, points, weights, ...),
-- checked into s. fail is check's. Returns s or nil, why.
function M.check_grading(cfg, s, fail)
  if cfg.roster ~= nil then
    if not inside_path(cfg.roster) then
      return fail("roster", "roster must be the name of a CSV file in the class folder " ..
        "(such as \"roster.csv\"), not under records/")
    end
    s.roster = cfg.roster
  end
  s.points = {}
  if cfg.points ~= nil then
    if type(cfg.points) ~= "table" then
      return fail("points", "points must be a table of task ids and points, such as " ..
        "{[\"50-warmup/square\"] = 5}")
    end
    for id, v in pairs(cfg.points) do
      if type(id) ~= "string" or #id > 200 then
        return fail("points", "points has a key %s that is not a task id (lesson/step)",
          tostring(id))
      end
      if not points_value(v) then
        return fail("points", "points[%q] is %s, not a number of points (0 to 1e6)", id,
          tostring(v))
      end
      s.points[id] = v
    end
  end
  s.weights = {}
  if cfg.weights ~= nil then
    if type(cfg.weights) ~= "table" then
      return fail("weights", "weights must be a table of lesson numbers and weights, such " ..
        "as {[3] = 2}")
    end
    for n, v in pairs(cfg.weights) do
      if not positive_integer(n, 99) then
        return fail("weights", "weights has a key %s that is not a lesson number (1 to 99)",
          tostring(n))
      end
      if not points_value(v) then
        return fail("weights", "weights[%d] is %s, not a weight (0 to 1e6)", n, tostring(v))
      end
      s.weights[n] = v
    end
  end
  if cfg.challenge ~= nil then
    local c = cfg.challenge
    if type(c) ~= "table" or type(c.task) ~= "string" or c.task == "" or #c.task > 200 or
        c.task:find("%c") then
      return fail("challenge", "challenge must be a table naming a task by its id, such as " ..
        "{task = \"50-warmup/square-every-element\"}")
    end
    for k in pairs(c) do
      if k ~= "task" then
        return fail("challenge", "challenge has an unknown key %q (task)", tostring(k))
      end
    end
    s.challenge = { task = c.task }
  end
  return M.check_due(cfg, s, fail)
end

-- "2025-03-07 23:59" (or with seconds) in local time -> unix seconds; nil,
-- why for anything else, a date that does not exist included.
function M.parse_time(v)
  local y, mo, d, h, mi, sec = tostring(v):match(
    "^%s*(%d%d%d%d)%-(%d%d)%-(%d%d)[ T](%d%d):(%d%d):?(%d*)%s*$")
  if not y then
    return nil, string.format("%s is not a time (write it as \"2025-03-07 23:59\")",
      type(v) == "string" and string.format("%q", v) or tostring(v))
  end
  local t = { year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h),
    min = tonumber(mi), sec = tonumber(sec) or 0, isdst = nil }
  -- os.time normalises the table it is given (30 February becomes 1 March): ask with a copy
  local ok, at = pcall(os.time, { year = t.year, month = t.month, day = t.day, hour = t.hour,
    min = t.min, sec = t.sec })
  local back = ok and os.date("*t", at)
  if not back or back.year ~= t.year or back.month ~= t.month or back.day ~= t.day or
    back.hour ~= t.hour or back.min ~= t.min then
    return nil, string.format("%q is not a date and time that exists", v)
  end
  return at
end

-- The steps of check_due, in the manner of check's: each checks one key into s and returns
-- true, or fail's nil, why.

-- due: a time for each lesson number.
local function check_due_times(cfg, s, fail)
  if cfg.due == nil then return true end
  if type(cfg.due) ~= "table" then
    return fail("due", "due must be a table of lesson numbers and times, such as " ..
      "{[3] = \"2025-03-07 23:59\"}")
  end
  for n, v in pairs(cfg.due) do
    if not positive_integer(n, 99) then
      return fail("due", "due has a key %s that is not a lesson number (1 to 99)", tostring(n))
    end
    local at, why = M.parse_time(v)
    if not at then return fail("due", "due[%d]: %s", n, why) end
    s.due[n] = at
  end
  return true
end

-- One account's extension: its own times for some lessons, or more time for every one.
local function check_extension(who, v, s, fail)
  if type(v) == "table" then
    local own = {}
    for n, t in pairs(v) do
      local at, why = M.parse_time(t)
      if not positive_integer(n, 99) or not at then
        return fail("extensions", "extensions.%s[%s]: %s", who, tostring(n),
          why or "not a lesson number")
      end
      own[n] = at
    end
    s.extensions[who] = { due = own }
    return true
  end
  local d, why = parse_quantity(v, { units = UNITS_SECONDS, base = "s",
    what = "duration", most = 366 * 86400, example = "\"2 days\", \"36 h\"",
    range = "between 0 and a year" })
  if not d then return fail("extensions", "extensions.%s: %s", who, why) end
  s.extensions[who] = { more = d }
  return true
end

-- extensions: by account name.
local function check_extensions(cfg, s, fail)
  if cfg.extensions == nil then return true end
  if type(cfg.extensions) ~= "table" then
    return fail("extensions", "extensions must be a table of accounts, such as " ..
      "{alice = \"2 days\"}")
  end
  for who, v in pairs(cfg.extensions) do
    if type(who) ~= "string" or not who:match("^[%w_][%w_.%-]*%$?$") then
      return fail("extensions", "extensions has a key %s that is not an account name",
        tostring(who))
    end
    local ok, why = check_extension(who, v, s, fail)
    if not ok then return nil, why end
  end
  return true
end

-- late: the share of the points lost per day late, and for how many days late work counts.
local function check_late(cfg, s, fail)
  local l = cfg.late
  if l == nil then return true end
  if type(l) ~= "table" then
    return fail("late", "late must be a table such as {per_day = 0.1, days = 3}")
  end
  for k, v in pairs(l) do
    if k == "per_day" then
      if type(v) ~= "number" or not (v >= 0 and v <= 1) then
        return fail("late", "late.per_day must be a share of the points from 0 to 1")
      end
    elseif k == "days" then
      if not (math.type(v) == "integer" and v >= 0 and v <= 365) then
        return fail("late", "late.days must be a whole number of days from 0 to 365")
      end
    else
      return fail("late", "late has an unknown key %q (per_day, days)", tostring(k))
    end
    s.late[k] = v
  end
  return true
end

-- In this order: the first problem is the one reported.
local DUE_STEPS = { check_due_times, check_extensions, check_late }

-- due, extensions and late, checked into s. Returns s or nil, why.
function M.check_due(cfg, s, fail)
  s.due, s.extensions, s.late = {}, {}, { per_day = 1, days = 0 }
  for _, step in ipairs(DUE_STEPS) do
    local ok, why = step(cfg, s, fail)
    if not ok then return nil, why end
  end
  return s
end

function M.format_seconds(s)
  if s >= 60 and s % 60 == 0 then return string.format("%d min", s // 60) end
  if s >= 1 then
    return (s == math.floor(s) and string.format("%d s", s)) or string.format("%.3g s", s)
  end
  return string.format("%.3g ms", s * 1e3)
end

return M
