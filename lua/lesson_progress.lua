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
-- the lesson is finished, and the steps whose task they passed.
--
-- Design stance:
--  * Plain lines, not a Lua chunk: loading the file must never run code, and
--    a line format is easy to check strictly, so that a damaged file is
--    recognised rather than half-believed.
--  * A bad file never stops the learner. Unreadable or corrupt progress
--    gives a message and a fresh start; a corrupt file is renamed to
--    `lessons.bad` so the message comes once and nothing is destroyed.
--  * Writes are atomic: a temporary file in the same folder, then
--    os.rename, which rename(2) makes atomic; a crash mid-write (the engine
--    can die on a sticky CUDA error at any time) leaves the old file or the
--    new one, never half of one.
--  * Private: the folder is created 0700 and the file 0600. Lua's io has no
--    umask or chmod, so the folder and the empty temporary file are made by
--    `sh -c "umask 077; ..."`, and io.open then truncates the existing 0600
--    file instead of creating one with the process's umask. One fork per
--    save, a millisecond, once per step. Were that shell step to fail, the
--    0700 folder still keeps the file private.

local M = {}

local HEADER = "cudalab lessons 1"
local MAX_BYTES = 64 * 1024 -- a real file is a few hundred bytes

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

-- Text of a state; lessons in name order so the file is stable.
function M.encode(state)
  local out = { HEADER }
  if state.current then out[#out + 1] = "current " .. state.current end
  local names = {}
  for name in pairs(state.lessons) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local l = state.lessons[name]
    local passed = {}
    for i in pairs(l.passed or {}) do passed[#passed + 1] = i end
    table.sort(passed)
    out[#out + 1] = string.format("lesson %s %d %s %s", name, l.step,
      l.done and "done" or "started", #passed > 0 and table.concat(passed, ",") or "-")
  end
  return table.concat(out, "\n") .. "\n"
end

-- decode(text) -> state | nil, "line N: why". Strict: any line it does not
-- understand makes the whole file corrupt.
function M.decode(text)
  local state, n = M.empty(), 0
  for line in text:gmatch("([^\n]*)\n?") do
    n = n + 1
    if n == 1 then
      if line ~= HEADER then return nil, "line 1: not a cudalab progress file" end
    elseif line ~= "" then
      local cur = line:match("^current ([%w_%-]+)$")
      local name, step, status, passed = line:match("^lesson ([%w_%-]+) (%d+) (%a+) ([%d,%-]+)$")
      if cur then
        state.current = cur
      elseif name and (status == "done" or status == "started") and tonumber(step) >= 1 then
        local set = {}
        if passed ~= "-" then
          for i in passed:gmatch("[^,]+") do
            if not i:match("^%d+$") then return nil, "line " .. n .. ": bad step list" end
            set[tonumber(i)] = true
          end
        end
        state.lessons[name] = { step = tonumber(step), done = status == "done", passed = set }
      else
        return nil, "line " .. n .. ": cannot read '" .. line:sub(1, 40) .. "'"
      end
    end
  end
  if n == 0 or (n == 1 and text == "") then return nil, "the file is empty" end
  return state
end

-- load(path) -> state, warning. Never raises: a missing file is a fresh
-- start without a warning; an unreadable, oversized or corrupt one is a
-- fresh start with a warning that says what happened.
function M.load(path)
  if not path then return M.empty(), nil end
  local f, err = io.open(path, "rb")
  if not f then
    if err and err:find("No such file", 1, true) then return M.empty(), nil end
    return M.empty(), "cannot read your lesson progress (" .. tostring(err) .. "); starting afresh"
  end
  local text, rerr = f:read(MAX_BYTES + 1)
  f:close()
  local state, why
  if text == nil and rerr then
    return M.empty(), "cannot read your lesson progress (" .. tostring(rerr) .. "); starting afresh"
  elseif text == nil then
    why = "the file is empty"
  elseif #text > MAX_BYTES then
    why = "the file is larger than " .. MAX_BYTES .. " bytes"
  else
    state, why = M.decode(text)
  end
  if state then return state, nil end
  local kept = os.rename(path, path .. ".bad") and (" (kept as " .. path .. ".bad)") or ""
  return M.empty(), "your lesson progress in " .. path .. " is damaged (" .. why ..
    ")" .. kept .. "; starting afresh"
end

local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- save(path, state) -> true | nil, why. Atomic; see the design notes above.
function M.save(path, state)
  if not path then return nil, "no HOME or XDG_STATE_HOME to keep progress in" end
  local dir = path:match("^(.*)/[^/]*$") or "."
  local tmp = string.format("%s.tmp.%d.%d", path, os.time(), math.random(1, 1 << 30))
  os.execute("(umask 077 && mkdir -p " .. shq(dir) .. " && : > " .. shq(tmp) .. ") 2>/dev/null")
  local f, err = io.open(tmp, "wb")
  if not f then return nil, "cannot save lesson progress: " .. tostring(err) end
  local ok, werr = f:write(M.encode(state))
  local cok, cerr = f:close()
  if not ok or not cok then
    os.remove(tmp)
    return nil, "cannot save lesson progress: " .. tostring(werr or cerr)
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    return nil, "cannot save lesson progress: " .. tostring(rerr)
  end
  return true
end

-- peek(path) -> current lesson name, its step | nil: the cheap read done at
-- start-up. It reads only a small file and only its first lines, and never
-- warns (the engine warns when it loads the file properly).
function M.peek(path)
  local f = path and io.open(path, "rb")
  if not f then return nil end
  local size = f:seek("end")
  if not size or size > MAX_BYTES then f:close(); return nil end
  f:seek("set")
  local text = f:read("a")
  f:close()
  local state = text and M.decode(text)
  local cur = state and state.current
  return cur, cur and state.lessons[cur] and state.lessons[cur].step
end

return M
