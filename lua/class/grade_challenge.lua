-- grade_challenge.lua: a class's challenge, the leaderboard of one task.
-- class.lua names the task (challenge = {task = ID}); when grading, the
-- worker re-runs each learner's passing submission of it and times the
-- launch the check names (expect.timed) or else its last launch of a kernel:
-- modelled H200 time on the simulator, and cuda.time's median where the
-- class grades on a GPU (grade.lua, grade_worker.lua). This module ranks the
-- times and keeps each learner's best across gradings in the class folder's
-- leaderboard.json, which the report shows.
--
-- Design stance:
--  * The modelled time ranks: the simulator is deterministic, so the order
--    is the same on every machine and every run, which a contest needs. A
--    measured GPU time is shown beside it, and ranked on its own, since a
--    GPU's run-to-run noise can swap two close kernels.
--  * Ties keep a stable order: the earlier pass first (the submission's
--    time), then the account's name, so a learner who got there first keeps
--    the place, and no run order can change it.
--  * A learner's best stays: a later grading of a slower submission (or of
--    none, once the record is gone) does not take a place away. The file is
--    the instructor's (0600, written whole under a lock); a new challenge
--    task starts a new board.

local json = require "json"

local M = {}

M.FORMAT = "cudalab-leaderboard 1"
M.FILE = "leaderboard.json"
local MAX_BYTES = 4 * 1024 * 1024

-- Whether entry a comes before b by field `key` (model_ms or gpu_ms): the
-- faster first, then the earlier pass, then the name.
local function before(a, b, key, at_key)
  if a[key] ~= b[key] then return a[key] < b[key] end
  local ta, tb = a[at_key] or math.huge, b[at_key] or math.huge
  if ta ~= tb then return ta < tb end
  return a.user < b.user
end

-- The entries of a board (best per learner) ranked by key ("model_ms" or
-- "gpu_ms"): those with that time, fastest first, ties kept as before().
function M.ranked(board, key)
  key = key or "model_ms"
  local at_key = key == "gpu_ms" and "gpu_at" or "at"
  local out = {}
  for user, e in pairs(board.best or {}) do
    if type(e[key]) == "number" then
      local c = {}
      for k, v in pairs(e) do c[k] = v end
      c.user = user
      out[#out + 1] = c
    end
  end
  table.sort(out, function(a, b) return before(a, b, key, at_key) end)
  return out
end

-- Whether time t (with its pass time at) beats the kept best (bt, bat).
local function better(t, at, bt, bat)
  if type(t) ~= "number" then return false end
  if type(bt) ~= "number" then return true end
  if t ~= bt then return t < bt end
  return (at or math.huge) < (bat or math.huge)
end

-- merge(board, g, now) -> board: this grading's times (g.learners[k].challenge)
-- folded into the board of the same task, each learner's best kept; a board
-- of another task is replaced.
function M.merge(board, g, now)
  local c = g.challenge
  if type(board) ~= "table" or board.task ~= c.task or type(board.best) ~= "table" then
    board = { format = M.FORMAT, task = c.task, best = {} }
  end
  board.title, board.graded = c.title, now
  for _, l in ipairs(g.learners) do
    local t = l.challenge
    if t and l.user then
      local e = board.best[l.user] or {}
      if better(t.model_ms, t.at, e.model_ms, e.at) then
        e.model_ms, e.at = t.model_ms, t.at
      end
      if better(t.gpu_ms, t.at, e.gpu_ms, e.gpu_at) then
        e.gpu_ms, e.gpu_at = t.gpu_ms, t.at
      end
      if e.model_ms or e.gpu_ms then
        e.uid, e.why = l.uid, nil
      else
        e.why = t.why
      end
      board.best[l.user] = e
    end
  end
  return board
end

-- A board read from text, its values checked (the file is the instructor's,
-- but one edited by hand must not break a report); nil when it is not one.
function M.decode(text)
  local b = type(text) == "string" and json.decode(text)
  if type(b) ~= "table" or b.format ~= M.FORMAT or type(b.task) ~= "string" or
      type(b.best) ~= "table" then
    return nil
  end
  local best = {}
  for user, e in pairs(b.best) do
    if type(user) == "string" and type(e) == "table" then
      local function num(v) return type(v) == "number" and v == v and v >= 0 and v or nil end
      best[user] = { model_ms = num(e.model_ms), gpu_ms = num(e.gpu_ms), at = num(e.at),
        gpu_at = num(e.gpu_at), uid = math.tointeger(e.uid),
        why = type(e.why) == "string" and e.why or nil }
    end
  end
  return { format = M.FORMAT, task = b.task, title = type(b.title) == "string" and b.title or nil,
    graded = type(b.graded) == "number" and b.graded or nil, best = best }
end

-- The board in the class folder dir, or nil (none yet, or not readable: why).
function M.read(dir)
  local files = require "cudalab.files"
  local text, why, kind = files.read(dir .. "/" .. M.FILE, MAX_BYTES)
  if not text then return nil, kind ~= "missing" and why or nil end
  local b = M.decode(text)
  if not b then return nil, M.FILE .. " is not a leaderboard: it is kept as it is" end
  return b
end

-- update(dir, g) -> board | nil, why: this grading's times into the board in
-- dir, under a lock so that two gradings at once both count.
function M.update(dir, g)
  if not g.challenge then return nil end
  local files = require "cudalab.files"
  local lock, lwhy = files.lock(dir .. "/leaderboard.lock")
  if not lock then return nil, "cannot lock the leaderboard: " .. tostring(lwhy) end
  local board, why = M.read(dir)
  if why then
    lock:release()
    return nil, why
  end
  board = M.merge(board, g, os.time())
  local ok, werr = files.write_atomic(dir .. "/" .. M.FILE,
    json.encode(board, { indent = true }) .. "\n")
  lock:release()
  if not ok then return nil, "cannot write the leaderboard: " .. tostring(werr) end
  return board
end

-- keep(dir, g): update(dir, g), saying on stderr where the board is or why
-- it could not be kept; what a grading (grade.lua, grade_slurm.lua's merge)
-- does once it has the class's results.
function M.keep(dir, g)
  local board, why = M.update(dir, g)
  if board then
    io.stderr:write("the challenge's leaderboard (each learner's best) is in ", dir,
      "/leaderboard.json\n")
  elseif why then
    io.stderr:write("cudalab: ", why, "\n")
  end
end

-- Milliseconds as the report shows them: three significant digits.
local function ms_text(v)
  if v >= 100 then return string.format("%.0f ms", v) end
  if v >= 1 then return string.format("%.3g ms", v) end
  return string.format("%.3g us", v * 1000)
end
M.ms_text = ms_text

local function pass_text(at) return at and os.date("%Y-%m-%d %H:%M", at) or "" end

-- The board as lines of text (n places at most): place, learner, modelled
-- time, measured time where there is one, and when the timed work passed.
function M.lines(board, n)
  local out = {}
  local title = board.title and (board.title .. " (" .. board.task .. ")") or board.task
  out[1] = "Challenge: " .. title .. ", fastest passing kernels by modelled H200 time"
  local list = M.ranked(board, "model_ms")
  if #list == 0 then
    out[2] = "  no passing kernel timed yet"
    return out
  end
  local gpu = M.ranked(board, "gpu_ms")
  local gpu_place = {}
  for i, e in ipairs(gpu) do gpu_place[e.user] = i end
  local wide = 7
  for _, e in ipairs(list) do wide = math.max(wide, #e.user) end
  out[2] = string.format("  %4s  %-" .. wide .. "s  %10s%s  %s", "#", "learner", "modelled",
    #gpu > 0 and string.format("  %10s %4s", "GPU", "#") or "", "passed")
  for i, e in ipairs(list) do
    if n and i > n then
      out[#out + 1] = string.format("  and %d more", #list - n)
      break
    end
    local g = ""
    if #gpu > 0 then
      g = e.gpu_ms and string.format("  %10s %4d", ms_text(e.gpu_ms), gpu_place[e.user]) or
        string.format("  %10s %4s", "", "")
    end
    out[#out + 1] = string.format("  %4d  %-" .. wide .. "s  %10s%s  %s", i, e.user,
      ms_text(e.model_ms), g, pass_text(e.at))
  end
  return out
end

-- The board as an HTML section; esc makes text safe.
function M.html(board, esc)
  local out = {}
  local title = board.title and (board.title .. " (" .. board.task .. ")") or board.task
  out[#out + 1] = '<h2>Challenge: ' .. esc(title) .. '</h2>'
  out[#out + 1] = '<p class="legend">The fastest passing kernels by modelled H200 time ' ..
    '(the simulator\'s, the same on every machine), each learner\'s best across gradings; ' ..
    'ties go to the earlier pass. GPU: cuda.time\'s median on the class\'s GPU, where it ' ..
    'grades on one, and its own place.</p>'
  local list = M.ranked(board, "model_ms")
  if #list == 0 then
    out[#out + 1] = '<p>No passing kernel timed yet.</p>'
    return table.concat(out, "\n")
  end
  local gpu_place = {}
  for i, e in ipairs(M.ranked(board, "gpu_ms")) do gpu_place[e.user] = i end
  out[#out + 1] = '<table class="leaderboard"><thead><tr><th>#</th><th>learner</th>' ..
    '<th>modelled H200</th><th>GPU</th><th>GPU #</th><th>passed</th></tr></thead><tbody>'
  for i, e in ipairs(list) do
    out[#out + 1] = string.format('<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td>' ..
      '<td>%s</td><td>%s</td></tr>', i, esc(e.user), esc(ms_text(e.model_ms)),
      e.gpu_ms and esc(ms_text(e.gpu_ms)) or "", gpu_place[e.user] or "", esc(pass_text(e.at)))
  end
  out[#out + 1] = '</tbody></table>'
  return table.concat(out, "\n")
end

-- This grading's ranking alone (g.challenge and its learners' times), as a
-- board, for the terminal's table: what the run found, before any merge.
function M.of_grading(g)
  return M.merge(nil, g, nil)
end

return M
