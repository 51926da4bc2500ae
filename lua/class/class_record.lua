-- class_record.lua: one learner's record in a class: what happened on each
-- task (attempts, failed checks' messages, hints, times, skips, backend) and
-- the submission: what the learner had when the check passed (the step's
-- kernel files, and the Lua typed since the lesson began, each chunk with the
-- id of the step it was typed in), or at the latest check while none has
-- passed, so that the work can be graded again.
--
-- The record is JSON (json.lua), one file per learner, written whole and
-- atomically by cudalab.class; this module builds, bounds and reads it, and
-- is the one that reads, updates and writes it through a class handle
-- (update, start), so that a session hands it events and nothing else.
--
-- Design stance:
--  * A record is read by the instructor's report and by the grader, which
--    treat it as hostile: decode() keeps only fields of the right type and
--    size and drops the rest, so a hand-edited record cannot break a report.
--    Who the learner is comes from the file's owner, never from the record.
--  * Everything is bounded (messages, chunks, files, tasks), so a learner who
--    pastes a megabyte a hundred times cannot fill the class's disk: the
--    oldest entries go first, and the submission keeps its latest chunks.
--  * Two sessions of one learner both update the record: each event is
--    applied to the file as it is now (read, apply, write), so neither
--    undoes the other; an event lost to a race costs one count, never the
--    record.

local json = require "json"

local M = {}

M.FORMAT = "cudalab-class-record 1"
M.LIMITS = {
  failures = 20,          -- failed checks' messages kept per task (the latest)
  message = 600,          -- bytes of one message
  chunks = 200,           -- Lua chunks kept per submission (the latest)
  chunk = 64 * 1024,      -- bytes of one chunk
  lua_total = 256 * 1024, -- bytes of all of a submission's chunks
  file = 256 * 1024,      -- bytes of one kernel file
  files = 16,             -- kernel files per submission
  tasks = 2000,           -- tasks per record
  passes = 4,             -- passing submissions kept per task (the latest), for deadlines
  record = 8 * 1024 * 1024, -- bytes of a whole record file: cudalab.class writes no larger
                            -- (CLASSDIR_RECORD_MAX), and decode() refuses one larger
}

-- The step a submission's chunk was typed in, for a chunk typed before the
-- lesson began: no step id (lesson_parse: letters, digits, '-', '_') is it.
M.BEFORE_LESSON = "(before the lesson)"

function M.new(uid, user)
  return { format = M.FORMAT, uid = uid, user = user, updated = os.time(), tasks = {},
           lessons = {} }
end

local function clip(s, n)
  if #s <= n then return s end
  -- cut on a UTF-8 boundary so the JSON stays valid text
  local cut = n
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xC0 == 0x80 do cut = cut - 1 end
  return s:sub(1, cut) .. "..."
end
M.clip = clip

-- The last n entries of the list t, in order, as a new list: one pass, however long t is.
-- (A loop of table.remove(t, 1) moves every entry each time: hours on a hostile record.)
local function last(t, n)
  local out, first = {}, math.max(1, #t - n + 1)
  for i = first, #t do out[#out + 1] = t[i] end
  return out
end
M.last = last

-- The task's entry, made on first sight.
function M.task(rec, id, info, now)
  local t = rec.tasks[id]
  if not t then
    t = { lesson = info.lesson, step = info.step, title = info.title and clip(info.title, 200),
          attempts = 0, failures = json.array({}), hints = 0, skipped = false, passed = false,
          first_seen = now or os.time() }
    rec.tasks[id] = t
  end
  return t
end

-- A submission: {files = {name = text}, lua = {chunk, ...}, steps = {step
-- id of each chunk, ...}, at}, bounded: the latest chunks are kept. steps
-- may be nil (a record of an older cudalab: every chunk belongs to the
-- task's own step).
function M.submission(files, chunks, now, steps)
  local L = M.LIMITS
  local sub = { files = {}, lua = {}, at = now or os.time() }
  local names = {}
  for name in pairs(files or {}) do names[#names + 1] = name end
  table.sort(names)
  for i, name in ipairs(names) do
    if i > L.files then break end
    sub.files[name] = clip(files[name], L.file)
  end
  chunks = chunks or {}
  local total, first = 0, #chunks + 1
  for i = #chunks, 1, -1 do
    local n = math.min(#chunks[i], L.chunk + 3)
    if #chunks - i + 1 > L.chunks or total + n > L.lua_total then break end
    total, first = total + n, i
  end
  local keep, keep_steps = {}, steps and {} or nil
  for i = first, #chunks do
    keep[#keep + 1] = clip(chunks[i], L.chunk)
    if steps then
      local sid = steps[i]
      keep_steps[#keep_steps + 1] = type(sid) == "string" and clip(sid, 80) or ""
    end
  end
  sub.lua, sub.steps = keep, keep_steps
  return sub
end

-- Applies one event to rec. ev = {kind = "step"|"check"|"hint"|"skip",
-- id, lesson, step, title, task (step events), ok, why (checks), backend,
-- submission (checks), now}.
function M.apply(rec, ev)
  local now = ev.now or os.time()
  rec.updated = now
  if ev.lesson then
    rec.lessons[ev.lesson] = rec.lessons[ev.lesson] or { step = 1 }
    rec.lessons[ev.lesson].step = ev.step or rec.lessons[ev.lesson].step
    rec.lessons[ev.lesson].at = now
    if ev.kind == "done" then rec.lessons[ev.lesson].done = true end
  end
  if not ev.id then return rec end
  -- only a task's events make it an entry: reading a step (or finishing the
  -- lesson on it) is the lesson's progress above, not a task tried
  if ev.kind == "done" or (ev.kind == "step" and not ev.task) then return rec end
  local t = M.task(rec, ev.id, ev, now)
  if ev.backend then t.backend = ev.backend end
  if ev.kind == "check" then
    t.attempts = t.attempts + 1
    -- a pass's submission is kept: a later failed try is a try, never the work graded
    if ev.submission and (ev.ok or not t.passed) then t.submission = ev.submission end
    if ev.ok and ev.submission then
      -- the passes before, so that grading as of a deadline finds the last one made before it
      local p = t.passes or {}
      p[#p + 1] = ev.submission
      t.passes = last(p, M.LIMITS.passes)
    end
    if ev.ok then
      if not t.passed then
        t.passed, t.passed_at = true, now
        t.seconds_to_pass = now - (t.first_seen or now)
      end
    else
      local f = t.failures
      f[#f + 1] = clip(tostring(ev.why or "the check failed"), M.LIMITS.message)
      while #f > M.LIMITS.failures do table.remove(f, 1) end
    end
  elseif ev.kind == "hint" then
    t.hints = t.hints + 1
  elseif ev.kind == "skip" then
    t.skipped = true
  end
  return rec
end

function M.encode(rec)
  return json.encode(rec, { indent = true })
end

-- update(handle, me, ev) -> true | nil, why: applies the event ev (apply) to
-- the learner's record as the file holds it now, since another session of
-- theirs may have written it since, and writes it back. me = {uid, user},
-- who the learner is (never the record's word). A record that does not
-- decode is started afresh; one that cannot be read is left alone.
-- handle is a cudalab.class handle (read_own_record, write_record).
function M.update(handle, me, ev)
  local text, err = handle:read_own_record()
  if text == nil and err then return nil, err end
  local rec = text and M.decode(text)
  if rec then
    rec.uid, rec.user = me.uid, me.user
  else
    rec = M.new(me.uid, me.user)
  end
  M.apply(rec, ev)
  return handle:write_record(M.encode(rec))
end

-- start(handle, me) -> true | nil, why: an empty record when the learner has
-- none yet, so that the instructor's report shows who has joined; a record
-- there already is kept as it is.
function M.start(handle, me)
  if handle:read_own_record() ~= false then return true end
  return handle:write_record(M.encode(M.new(me.uid, me.user)))
end

local function str(v, n) return type(v) == "string" and clip(v, n) or nil end
local function count(v)
  return math.type(v) == "integer" and v >= 0 and v < 2^40 and v or
    (type(v) == "number" and v >= 0 and v < 2^40 and v == math.floor(v) and math.tointeger(v)) or 0
end
local function time(v) return type(v) == "number" and v >= 0 and v < 2^40 and v or nil end

local function clean_submission(s)
  if type(s) ~= "table" then return nil end
  local files = {}
  for name, text in pairs(type(s.files) == "table" and s.files or {}) do
    if type(name) == "string" and name:match("^[%w_%-%.]+$") and type(text) == "string" then
      files[name] = text
    end
  end
  local chunks, steps = {}, type(s.steps) == "table" and {} or nil
  for i, c in ipairs(type(s.lua) == "table" and s.lua or {}) do
    if type(c) == "string" then
      chunks[#chunks + 1] = c
      if steps then steps[#steps + 1] = s.steps[i] end
    end
  end
  return M.submission(files, chunks, time(s.at), steps)
end

-- decode(text) -> rec | nil, why. Keeps only well-formed fields (see the
-- design stance); uid and user are whatever the file says and must be
-- replaced by the caller with the file owner's.
function M.decode(text)
  if type(text) ~= "string" then return nil, "not a record (a " .. type(text) .. ")" end
  if #text > M.LIMITS.record then
    return nil, string.format("larger than %d MiB (%d bytes), more than cudalab ever writes: " ..
      "not read", M.LIMITS.record >> 20, #text)
  end
  local raw, err = json.decode(text)
  if not raw then return nil, "not JSON: " .. tostring(err) end
  if type(raw) ~= "table" or raw.format ~= M.FORMAT then
    return nil, "not a cudalab class record (no \"format\": \"" .. M.FORMAT .. "\")"
  end
  local rec = M.new(nil, nil)
  rec.updated = time(raw.updated) or 0
  local n = 0
  for id, t in pairs(type(raw.tasks) == "table" and raw.tasks or {}) do
    if type(id) == "string" and #id <= 200 and type(t) == "table" then
      n = n + 1
      if n > M.LIMITS.tasks then break end
      local strings = {}
      for _, m in ipairs(type(t.failures) == "table" and t.failures or {}) do
        if type(m) == "string" then strings[#strings + 1] = m end
      end
      local failures = last(strings, M.LIMITS.failures) -- clipped once kept, not before
      for i, m in ipairs(failures) do failures[i] = clip(m, M.LIMITS.message) end
      rec.tasks[id] = {
        lesson = str(t.lesson, 200), step = count(t.step), title = str(t.title, 200),
        attempts = count(t.attempts), failures = failures, hints = count(t.hints),
        skipped = t.skipped == true, passed = t.passed == true,
        first_seen = time(t.first_seen), passed_at = time(t.passed_at),
        seconds_to_pass = time(t.seconds_to_pass), backend = str(t.backend, 20),
        submission = clean_submission(t.submission),
      }
      if type(t.passes) == "table" then
        local passes = {}
        for _, p in ipairs(last(t.passes, M.LIMITS.passes)) do
          passes[#passes + 1] = clean_submission(p)
        end
        rec.tasks[id].passes = passes
      end
    end
  end
  for name, l in pairs(type(raw.lessons) == "table" and raw.lessons or {}) do
    if type(name) == "string" and #name <= 200 and type(l) == "table" then
      rec.lessons[name] = { step = count(l.step), at = time(l.at), done = l.done == true }
    end
  end
  return rec
end

return M
