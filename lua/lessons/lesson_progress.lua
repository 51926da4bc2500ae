-- lesson_progress.lua: the learner's lesson progress on disk, read at start
-- and written after every step.
--
-- The file is $XDG_STATE_HOME/cudalab/lessons (~/.local/state/cudalab/lessons
-- when XDG_STATE_HOME is unset or not absolute, as for the history file):
--
--   cudalab lessons 1
--   current 03-arithmetic-intensity
--   lesson 01-welcome 6 done -
--   lesson 03-arithmetic-intensity 4 started 2,4
--
-- one `lesson` line per lesson begun: the step the learner is on, whether
-- the lesson is finished, and the steps whose task they passed, or skipped
-- (`4s`: skip() ran the reference solution; a later check() that passes
-- makes it `4`).
--
-- Design stance:
--  * Plain lines, not a Lua chunk: loading the file must never run code, and
--    a line format is easy to check strictly, so that a damaged entry is
--    recognised rather than half-believed.
--  * A bad file never stops the learner, and one bad entry costs only
--    itself: a line that cannot be read (a step of 99999999999999999999, a
--    negative or fractional one, a word) is left out with a message naming
--    it, the other lessons are kept, and the file as it was is copied to
--    `lessons.bad` so nothing is destroyed. A file that is not a progress
--    file at all, or cannot be trusted (a FIFO, someone else's, writable by
--    others), is renamed to `lessons.bad` and the learner starts afresh.
--    Reading goes through cudalab.files (bind_files.c): a FIFO in the file's
--    place must not hang start-up, and Lua's io.open would wait on it.
--  * Saves merge, under a lock: two REPLs of one learner each save after
--    every step. A save takes an exclusive flock on `lessons.lock`, reads
--    the file as it is now, applies only what this process changed since it
--    last read or wrote it (lessons begun, moved, finished or reset, and the
--    current lesson), and writes the result. Overwriting the file with this
--    process's view was turned down: it dropped the other REPL's steps.
--  * Writes are atomic: a private temporary in the same folder, then
--    rename(2); a crash mid-write (the engine can die on a sticky CUDA error
--    at any time) leaves the old file or the new one, never half of one.
--    Temporaries are named after their process, and a save sweeps away those
--    of processes that are gone (a save killed before its rename).
--  * Private: the folder is made 0700 and must be the learner's own and
--    writable by no one else (else the message says how to fix it); files
--    are created 0600.

local M = {}

local files = require "cudalab.files"

local HEADER = "cudalab lessons 1"
local MAX_BYTES = 64 * 1024 -- a real file is a few hundred bytes
local MAX_STEP = 9999       -- a lesson has a few dozen steps; more digits are damage

-- The progress file's path, or nil when neither XDG_STATE_HOME nor HOME is set.
function M.path()
  local base = os.getenv("XDG_STATE_HOME")
  if not (base and base:sub(1, 1) == "/") then
    local home = os.getenv("HOME")
    if not home or home == "" then return nil end
    base = home .. "/.local/state"
  end
  return base .. "/cudalab/lessons"
end

function M.empty()
  return { current = nil, lessons = {} }
end

local function record_line(name, l)
  local steps = {}
  for i in pairs(l.passed or {}) do steps[#steps + 1] = i end
  table.sort(steps)
  for k, i in ipairs(steps) do steps[k] = i .. (l.passed[i] == "skipped" and "s" or "") end
  return string.format("lesson %s %d %s %s", name, l.step, l.done and "done" or "started",
    #steps > 0 and table.concat(steps, ",") or "-")
end

-- Text of a state; lessons in name order so the file is stable.
function M.encode(state)
  local out = { HEADER }
  if state.current then out[#out + 1] = "current " .. state.current end
  local names = {}
  for name in pairs(state.lessons) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do out[#out + 1] = record_line(name, state.lessons[name]) end
  return table.concat(out, "\n") .. "\n"
end

-- A step number as the file holds it: digits only, 1 to MAX_STEP; else nil.
local function step_number(s)
  local v = s:match("^%d+$") and #s <= #tostring(MAX_STEP) and tonumber(s)
  return v and v >= 1 and v <= MAX_STEP and v or nil
end

-- Reads one `lesson` or `current` line into state; nil and why when it cannot.
local function decode_line(state, line)
  local cur = line:match("^current ([%w_%-]+)$")
  if cur then state.current = cur; return true end
  local name, step, status, passed = line:match("^lesson ([%w_%-]+) (%S+) (%S+) (%S+)$")
  if not name then return nil, "cannot read '" .. line:sub(1, 40) .. "'; it is left out" end
  local n = step_number(step)
  if not n then
    return nil, "the step '" .. step:sub(1, 30) .. "' of lesson " .. name ..
      " is not a step number (1 to " .. MAX_STEP .. "); that lesson starts afresh"
  end
  if status ~= "done" and status ~= "started" then
    return nil, "lesson " .. name .. " is '" .. status:sub(1, 20) .. "', not done or started; " ..
      "that lesson starts afresh"
  end
  local set = {}
  if passed ~= "-" then
    for i in (passed .. ","):gmatch("([^,]*),") do
      local digits, skipped = i:match("^(%d+)(s?)$")
      local k = digits and step_number(digits)
      if not k then
        return nil, "the passed steps '" .. passed:sub(1, 30) .. "' of lesson " .. name ..
          " cannot be read; that lesson starts afresh"
      end
      set[k] = skipped == "s" and "skipped" or true
    end
  end
  state.lessons[name] = { step = n, done = status == "done", passed = set }
  return true
end

-- decode(text) -> state, problems | nil, "line N: why". Entry by entry: a
-- line it cannot read is left out and named in problems ("line N: why"),
-- the rest is kept. Only a text that is not a progress file is refused.
function M.decode(text)
  local state, problems, n = M.empty(), {}, 0
  if text ~= "" and text:sub(-1) ~= "\n" then text = text .. "\n" end
  for line in text:gmatch("([^\n]*)\n") do
    n = n + 1
    if n == 1 then
      if line ~= HEADER then return nil, "line 1: not a cudalab progress file" end
    elseif line ~= "" then
      local ok, why = decode_line(state, line)
      if not ok then problems[#problems + 1] = "line " .. n .. ": " .. why end
    end
  end
  if n == 0 then return nil, "line 1: not a cudalab progress file" end
  return state, problems
end

-- What each path held when this process last read or wrote it: the lines of
-- its lessons and its current lesson. A save applies what changed since.
local base = {}

local function snapshot(state)
  local s = { current = state.current, lines = {} }
  for name, l in pairs(state.lessons) do s.lines[name] = record_line(name, l) end
  return s
end

local function set_aside(path)
  return os.rename(path, path .. ".bad") and (" (kept as " .. path .. ".bad)") or ""
end

-- load(path) -> state, warning. Never raises: a missing file is a fresh
-- start without a warning; entries that cannot be read are left out with a
-- warning naming each; a file that cannot be read or trusted at all is set
-- aside and gives a fresh start, with a warning that says why.
function M.load(path)
  if not path then return M.empty(), nil end
  base[path] = snapshot(M.empty())
  local text, err, kind = files.read(path, MAX_BYTES)
  if not text and kind == "missing" then return M.empty(), nil end
  if not text then
    return M.empty(), "cannot read your lesson progress (" .. err .. ")" .. set_aside(path) ..
      "; starting afresh"
  end
  local state, problems = M.decode(text)
  if not state then
    return M.empty(), "your lesson progress in " .. path .. " is damaged (" .. problems .. ")" ..
      set_aside(path) .. "; starting afresh"
  end
  base[path] = snapshot(state)
  if #problems == 0 then return state, nil end
  local kept = files.write_atomic(path .. ".bad", text) and (" (the file as it was is kept as " ..
    path .. ".bad)") or ""
  return state, "some of your lesson progress in " .. path .. " could not be read" ..
    kept .. ": " ..
    table.concat(problems, "; ")
end

-- The file's records, with what this process changed since `since` (lessons
-- added, changed or removed; the current lesson) taken from state.
local function merge(disk, state, since)
  local out = { current = disk.current, lessons = {} }
  for name, l in pairs(disk.lessons) do out.lessons[name] = l end
  for name, l in pairs(state.lessons) do
    if record_line(name, l) ~= since.lines[name] then out.lessons[name] = l end
  end
  for name in pairs(since.lines) do
    if not state.lessons[name] then out.lessons[name] = nil end
  end
  if state.current ~= since.current then out.current = state.current end
  return out
end

-- Makes state (the table the lesson engine holds) show the merged result.
local function adopt(state, merged)
  for name in pairs(state.lessons) do state.lessons[name] = nil end
  for name, l in pairs(merged.lessons) do state.lessons[name] = l end
  state.current = merged.current
end

-- save(path, state) -> true | nil, why. Merged under a lock, atomic; see the
-- design notes above. state is updated with what other REPLs saved.
function M.save(path, state)
  if not path then return nil, "no HOME or XDG_STATE_HOME to keep progress in" end
  local dir = path:match("^(.*)/[^/]*$") or "."
  local ok, why = files.private_dir(dir)
  if not ok then return nil, "cannot save lesson progress: " .. why end
  local lock <close>, lerr = files.lock(path .. ".lock")
  if not lock then return nil, "cannot save lesson progress: " .. lerr end
  files.sweep(path)
  local text = files.read(path, MAX_BYTES)
  local disk = text and M.decode(text) or M.empty()
  local merged = merge(disk, state, base[path] or snapshot(M.empty()))
  local wok, werr = files.write_atomic(path, M.encode(merged))
  if not wok then return nil, "cannot save lesson progress: " .. werr end
  adopt(state, merged)
  base[path] = snapshot(merged)
  return true
end

-- peek(path) -> current lesson name, its step | nil: the cheap read done at
-- start-up. It reads only a small file of the learner's own, never waits on
-- a FIFO, and never warns (the engine warns when it loads the file properly).
function M.peek(path)
  local text = path and files.read(path, MAX_BYTES)
  local state = text and M.decode(text)
  local cur = state and state.current
  return cur, cur and state.lessons[cur] and state.lessons[cur].step
end

return M
