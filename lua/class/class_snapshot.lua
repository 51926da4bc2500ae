-- class_snapshot.lua: what the learners had passed at a moment, kept where
-- they cannot reach it, so that grading by a due time does not rest on the
-- times a learner's own record claims.
--
--   cudalab --class-snapshot DIR     (the instructor, at a due time: at, cron)
--
-- A record is written by the learner's session, as the learner: a learner
-- can rewrite theirs after the due time with a pass dated before it, or swap
-- the kernel of an on-time pass and keep its time. A snapshot holds, for
-- every learner and task, a keyed digest (SipHash-2-4) of each passing
-- submission the records held then, time and work together, in
-- DIR/snapshots/, the instructor's (0700; each file 0600 with its own random
-- key, so no learner can compute a digest that matches). Grading then
-- believes a pass's time only as far as the snapshots allow: a pass that a
-- snapshot begun after its claimed time does not hold was made after that
-- snapshot began (prove()).
--
-- Design stance: the snapshot is the instructor's evidence, taken by the
-- instructor's own account from the records as the report reads them; it
-- never changes a record. Without any snapshot, grading reads the records'
-- times as before and says that they are the learners' own.

local json = require "json"

local M = {}

M.FORMAT = "cudalab-class-snapshot 1"
M.FOLDER = "snapshots"
M.MAX_BYTES = 256 * 2^20

-- SipHash-2-4 of msg under a 16-byte key (repl/common/siphash.c, which the
-- kernel cache seals its entries with): 16 hex digits.
function M.siphash(key, msg)
  return require("cudalab.class").siphash(key, msg)
end

-- The digest of one pass (a submission as class_record.decode gives it):
-- its time and its work, in json's deterministic encoding.
function M.digest(key, pass)
  return M.siphash(key, json.encode(pass))
end

---------------------------------------------------------------- taking --

local function random_key()
  local f = io.open("/dev/urandom", "rb")
  local k = f and f:read(16)
  if f then f:close() end
  if not k or #k ~= 16 then return nil, "cannot read 16 random bytes from /dev/urandom" end
  return k
end

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local function unhex(s)
  return (s:gsub("..", function(h) return string.char(tonumber(h, 16)) end))
end

-- The snapshot of records (class_load.records' list) read between started
-- and finished: {format, started, finished, key, learners = {[uid] = {user,
-- tasks = {[id] = {digest, ...}}}}}, or nil, why.
function M.build(records, started, finished, key)
  local learners = {}
  for _, rec in ipairs(records) do
    if math.type(rec.uid) == "integer" and not rec.absent then
      local tasks = {}
      for id, t in pairs(rec.tasks or {}) do
        local list = {}
        for _, p in ipairs(M.passes(t)) do list[#list + 1] = M.digest(key, p) end
        if #list > 0 then tasks[id] = list end
      end
      learners[tostring(rec.uid)] = { user = rec.user, tasks = tasks }
    end
  end
  return { format = M.FORMAT, started = started, finished = finished, key = hex(key),
           learners = learners }
end

-- A task's passing submissions, as gradebook.choose reads them.
function M.passes(t)
  if type(t.passes) == "table" and #t.passes > 0 then return t.passes end
  if t.passed and type(t.submission) == "table" then return { t.submission } end
  return {}
end

-- Takes a snapshot of the class (class_load.class's) into DIR/snapshots/.
-- Returns the path, the number of learners and passes, or nil, why.
function M.take(cls)
  local class_load = require "class_load"
  local key, kwhy = random_key()
  if not key then return nil, kwhy end
  local started = os.time()
  local records, problems = class_load.records(cls, {})
  if not records then return nil, problems end
  local doc = M.build(records, started, os.time(), key)
  local files = require "cudalab.files"
  local folder = cls.dir .. "/" .. M.FOLDER
  files.mkdir(folder, tonumber("700", 8)) -- there already is fine: the write says otherwise
  local path = string.format("%s/%s.json", folder, os.date("%Y%m%d-%H%M%S", started))
  local ok, why = files.write_atomic(path, json.encode(doc) .. "\n")
  if not ok then return nil, why end
  -- taken as root (cron), the snapshot is still the instructor's, whose grading reads it
  if require("cudalab.class").whoami().uid == 0 then
    local owner = cls.handle:info().owner_uid
    ok, why = files.chown(folder, owner)
    if ok then ok, why = files.chown(path, owner) end
    if not ok then return nil, why end
  end
  local learners, passes = 0, 0
  for _, l in pairs(doc.learners) do
    learners = learners + 1
    for _, list in pairs(l.tasks) do passes = passes + #list end
  end
  return path, learners, passes, problems
end

---------------------------------------------------------------- reading --

-- The class's snapshots, oldest first: {{started, finished, learners, key}},
-- and a list of problems (a file that is not a snapshot is named, not used).
function M.load(dir)
  local folder = dir .. "/" .. M.FOLDER
  local out, problems = {}, {}
  local listed, why, errno = require("cudalab.files").list(folder)
  if not listed and errno ~= 2 then problems[#problems + 1] = why end -- 2: none taken yet
  local names = {}
  for _, name in ipairs(listed or {}) do
    if name:match("^%d+%-%d+%.json$") then names[#names + 1] = name end
  end
  for _, name in ipairs(names) do
    local f = io.open(folder .. "/" .. name, "rb")
    local text = f and f:read(M.MAX_BYTES + 1)
    if f then f:close() end
    local ok, doc = pcall(json.decode, text or "")
    if not ok or type(doc) ~= "table" or doc.format ~= M.FORMAT or
        math.type(doc.started) ~= "integer" or type(doc.key) ~= "string" or
        not doc.key:match("^%x+$") or #doc.key ~= 32 or type(doc.learners) ~= "table" then
      problems[#problems + 1] = M.FOLDER .. "/" .. name .. " is not a snapshot of this class"
    else
      doc.key = unhex(doc.key)
      out[#out + 1] = doc
    end
  end
  table.sort(out, function(a, b) return a.started < b.started end)
  return out, problems
end

-- Whether snapshot s holds the pass of learner uid's task id.
local function holds(s, uid, id, pass)
  local l = s.learners[tostring(uid)]
  local list = l and type(l.tasks) == "table" and l.tasks[id]
  if type(list) ~= "table" then return false end
  local d = M.digest(s.key, pass)
  for _, x in ipairs(list) do if x == d then return true end end
  return false
end

-- When a pass was made, as far as the snapshots show: its claimed time,
-- unless a snapshot begun after that time (and before the first snapshot
-- that holds it) does not hold it; then a second after that snapshot began.
-- Returns the time and the snapshot that moved it (nil if none did).
function M.prove(snaps, uid, id, pass)
  local claimed = math.type(pass.at) == "integer" and pass.at or 0
  local moved
  for _, s in ipairs(snaps) do
    if holds(s, uid, id, pass) then break end
    if s.started >= claimed then moved = s end
  end
  if moved then return math.max(claimed, moved.started + 1), moved end
  return claimed, nil
end

-- Whether any snapshot was begun at or after time t.
function M.after(snaps, t)
  for _, s in ipairs(snaps) do if s.started >= t then return true end end
  return false
end

return M
