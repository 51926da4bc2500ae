-- class_report.lua: the instructor's view of a class: who has passed which
-- lesson, who is stuck where, and which failed checks the room keeps hitting.
--
--   report.build(records, tasks [, opts]) -> model
--   report.text(model [, {width = 100, color = false, utf8 = term.utf8(), time = t,
--                         title = ..., name_width = 16, max_tasks = 10}]) -> text
--   report.html(model [, {title = ..., time = t, notes = {...}}]) -> one self-contained HTML page
--   report.watch(fetch [, {interval = 3, out = io.stdout, times = nil}]) -> redraws, why
--
-- The records are the learners' lesson records, already decoded (json.lua,
-- class_record.lua); the caller reads the files and sets user and uid from
-- each file's owner. Nothing here reads files, so the tests need no class.
--
-- Design stance:
--  * Records are hostile input: any learner can write theirs by hand. build()
--    keeps only fields of the right type (a count that is not a small
--    non-negative integer counts as 0, a record of another format is listed
--    as not read rather than guessed at), and every string that came from a
--    record is cleaned before it is shown: in the terminal, control
--    characters (an ESC could repaint the instructor's screen), C1 controls,
--    bidirectional overrides and invalid UTF-8 become '?'; in HTML, the same
--    plus escaping of & < > " ' everywhere, attributes included.
--  * A model, then views: build() does every count and rule once, and text()
--    and html() only lay it out, so the two views never disagree and the
--    tests check the numbers apart from the layout.
--  * Stuck means the instructor should walk over. A task not passed (and not
--    skipped) is stuck when its failed checks reach stuck_attempts (5), or
--    when it is the learner's current task (the one they opened last) and
--    stuck_minutes (15) have gone by since they opened it. The time rule only
--    looks at the current task: a task left unfinished yesterday is not
--    where anyone is stuck today, and counting it would make "stuck" mean
--    "old". (Turned down: the time rule on every task, which by the end of a
--    session marks nearly everyone.) A lesson's state is, first match wins:
--    passed (every task), not started (no task opened), stuck (a task is),
--    skipped (a task was skipped), working. Stuck outranks skipped because
--    it is the one that needs someone now.
--  * Median attempts are of the learners who passed: "how many checks does
--    passing take", which stays meaningful while most are still trying.
--  * Failure messages are grouped by their shape: trimmed, addresses (0x...)
--    and numbers taken out, so that the same mistake by two learners, whose
--    messages differ in an address of their own session or a size, is one
--    group with a count. The group shows a number where every message of it
--    has the same one ("index 7" by all stays "index 7", which is often the
--    clue) and N where they differ; an address is always 0x…. The full
--    messages are kept for the HTML page, where a click shows them.
--  * Tasks are ranked among the learners who reached them (opened the task),
--    not all learners: a task one learner has just opened is not "where the
--    room is stuck" above one with 28 failed checks. Stuck learners come
--    first, in the grid and in a list naming the task each is on.
--  * Late work is a task passed after its due time (opts.due(user, number),
--    class.lua's due times with the learner's extension).
--  * Deterministic: the model holds its own `now` (opts.now, else os.time()),
--    learners are sorted by name (ignoring case), ties everywhere are broken by course order
--    or byte order, and the views call os.date only for a time they are given.

local error, io, ipairs, math, next, os, pcall, rawget = error, io, ipairs, math, next, os,
  pcall, rawget
local string, table, tonumber, tostring, type, utf8 = string, table, tonumber, tostring, type, utf8

local svg = require "svg"
local term = require "term"

local report = {}
local stuck_on, fit_height -- defined below, where they are explained

report.FORMAT = "cudalab-class-record 1"
report.STUCK_ATTEMPTS = 5
report.STUCK_MINUTES = 15
report.TOP_FAILURES = 3
report.MESSAGE_WIDTH = 70

local floor, format = math.floor, string.format

---------------------------------------------------------------------------
-- Cleaning what came from records
---------------------------------------------------------------------------

-- A count as a record should hold it: a non-negative integer below 2^40,
-- else 0 (a float 3.0 from another JSON writer is still 3).
local function count(v)
  if type(v) ~= "number" or not (v >= 0 and v < 2 ^ 40) or v ~= floor(v) then return 0 end
  return math.tointeger(v) or 0
end

-- A time in unix seconds, or nil.
local function seconds(v)
  if type(v) == "number" and v >= 0 and v < 2 ^ 40 then return v end
  return nil
end

-- s without leading and trailing white space. (Not s:match("^%s*(.-)%s*$"),
-- which takes quadratic time on a long run of spaces.)
local function trim(s)
  local i = s:find("%S")
  if not i then return "" end
  local j = #s
  while s:find("^%s", j) do j = j - 1 end
  return s:sub(i, j)
end

-- s made safe to show: valid UTF-8, white space runs as one space, control
-- characters, C1 controls and bidirectional overrides as '?'.
local function clean(s)
  s = tostring(s)
  if not utf8.len(s) then
    local parts, i = {}, 1
    while true do
      local ok, bad = utf8.len(s, i)
      if ok then parts[#parts + 1] = s:sub(i); break end
      parts[#parts + 1] = s:sub(i, bad - 1) .. "?"
      i = bad + 1
    end
    s = table.concat(parts)
  end
  s = s:gsub("[ \t\n\v\f\r]+", " "):gsub("[%z\1-\31\127]", "?")
  s = s:gsub("\194[\128-\159]", "?"):gsub("\226\128[\170-\174]", "?")
    :gsub("\226\129[\166-\169]", "?")
  return s
end
report.clean = clean

-- Display width of cleaned text: one column per code point. (Wide CJK
-- characters take two in most terminals; a name written in them can push
-- its row out of line, which is ugly but harmless.)
local function width(s)
  return utf8.len(s) or #s
end

-- s cut to n columns, ending in an ellipsis when cut.
local function shorten(s, n, ellipsis)
  ellipsis = ellipsis or "…"
  if width(s) <= n then return s end
  local keep = n - width(ellipsis)
  if keep <= 0 then return ellipsis:sub(1, n) end
  return s:sub(1, utf8.offset(s, keep + 1) - 1) .. ellipsis
end
report.shorten = shorten

local function pad(s, n) return s .. (" "):rep(n - width(s)) end
local function lpad(s, n) return (" "):rep(n - width(s)) .. s end

---------------------------------------------------------------------------
-- The model
---------------------------------------------------------------------------

-- The lessons of the course, in order, each with its tasks. Raises on a task
-- list the caller built wrongly (that is a bug, not hostile input).
local function course(tasks)
  local lessons, by_id, list = {}, {}, {}
  for i, t in ipairs(tasks) do
    if type(t) ~= "table" or type(t.id) ~= "string" then
      error("class_report.build: task " .. i .. " has no string id", 3)
    end
    local lesson = type(t.lesson) == "string" and t.lesson or t.id:match("^[^/]*")
    local l = by_id[lesson]
    if not l then
      local n = math.tointeger(t.number) or math.tointeger(tonumber(lesson:match("^%d+") or "")) or
        #lessons + 1
      l = { id = lesson, number = n, label = format("%02d", n), tasks = {},
        title = type(t.lesson_title) == "string" and t.lesson_title or lesson }
      lessons[#lessons + 1], by_id[lesson] = l, l
    end
    local task = {
      id = t.id, lesson = lesson, index = i, step = t.step, title = t.title or t.id,
      label = l.label .. "/" .. tostring(t.step or #l.tasks + 1),
      number = l.number, started = 0, passed = 0, skipped = 0, stuck = 0, hints = 0, late = 0,
      attempts = {}, messages = {},
    }
    l.tasks[#l.tasks + 1] = task
    list[#list + 1] = task
  end
  return lessons, list
end

-- One learner's entry for one task, from the record's (untrusted) table.
local function task_cell(raw)
  if type(raw) ~= "table" then return { state = "not started", attempts = 0, failures = {} } end
  local failures = {}
  if type(raw.failures) == "table" then
    for _, m in ipairs(raw.failures) do
      if type(m) == "string" then failures[#failures + 1] = m end
    end
  end
  return {
    state = "working", started = true, passed = raw.passed == true,
    skipped = raw.skipped == true and raw.passed ~= true, attempts = count(raw.attempts),
    hints = count(raw.hints), first_seen = seconds(raw.first_seen),
    passed_at = seconds(raw.passed_at), failures = failures,
  }
end

-- The id of the task the learner opened last (ties: the later in the course).
local function current_task(cells, list)
  local best, when
  for _, task in ipairs(list) do
    local c = cells[task.id]
    if c.started and c.first_seen and (not when or c.first_seen >= when) then
      best, when = task.id, c.first_seen
    end
  end
  return best
end

-- Sets each task cell's state by the rules in the design stance.
local function judge_tasks(learner, list, m)
  local current = current_task(learner.tasks, list)
  learner.current = current
  for _, task in ipairs(list) do
    local c = learner.tasks[task.id]
    if c.started then
      if c.first_seen then c.minutes = floor(math.max(0, m.now - c.first_seen) / 60) end
      local due = m.due and c.passed_at and m.due(learner.user, task.number)
      if due and c.passed_at > due then c.late = c.passed_at - due end
      if c.passed then
        c.state = "passed"
      elseif c.skipped then
        c.state = "skipped"
      elseif c.attempts >= m.stuck_attempts then
        c.state, c.stuck_by = "stuck", "attempts"
      elseif task.id == current and c.first_seen and
        m.now - c.first_seen >= m.stuck_minutes * 60 then
        c.state, c.stuck_by = "stuck", "time"
      end
    end
  end
end

-- The learner's cell for a lesson: state, tasks passed of total, attempts,
-- and the task it is stuck on (the one with the most attempts).
local function lesson_cell(learner, lesson)
  local cell = { passed = 0, total = #lesson.tasks, attempts = 0, started = 0 }
  local stuck, skipped
  for _, task in ipairs(lesson.tasks) do
    local c = learner.tasks[task.id]
    cell.attempts = cell.attempts + c.attempts
    if c.started then cell.started = cell.started + 1 end
    if c.state == "passed" then cell.passed = cell.passed + 1 end
    if c.state == "skipped" then skipped = true end
    if c.state == "stuck" and (not stuck or c.attempts > learner.tasks[stuck].attempts) then
      stuck = task.id
    end
  end
  if cell.passed == cell.total and cell.total > 0 then cell.state = "passed"
  elseif cell.started == 0 then cell.state = "not started"
  elseif stuck then cell.state = "stuck"
  elseif skipped then cell.state = "skipped"
  else cell.state = "working" end
  if stuck then
    local c = learner.tasks[stuck]
    cell.stuck_task, cell.stuck_by = stuck, c.stuck_by
    cell.stuck_attempts, cell.stuck_minutes = c.attempts, c.minutes
  end
  return cell
end

-- The middle value of a list of numbers (the mean of the two middle ones
-- for an even count), or nil for an empty list.
function report.median(xs)
  if #xs == 0 then return nil end
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local h = #s // 2
  if #s % 2 == 1 then return s[h + 1] end
  local m = (s[h] + s[h + 1]) / 2
  return math.tointeger(m) or m
end

-- A message's shape, the key messages are grouped by: addresses as 0x…,
-- every other number as #; and the numbers taken out, in order.
local function shape(msg)
  local nums = {}
  local key = msg:gsub("0[xX]%x+", "0x…"):gsub("%d+%.?%d*", function(n)
    nums[#nums + 1] = n
    return "#"
  end)
  return key, nums
end
report.shape = shape

-- What a group shows: its shape with each number put back where every
-- message of the group has the same one, N where they differ.
local function group_text(e)
  local i = 0
  return (e.key:gsub("#", function()
    i = i + 1
    return e.varies[i] and "N" or e.nums[i]
  end))
end

-- The top n groups of a task's messages: {message, count, learners, full},
-- most frequent first, ties in byte order of the message; full lists the
-- distinct messages of the group, most frequent first.
local function top_failures(messages, n)
  local list = {}
  for _, e in next, messages do
    local learners = 0
    for _ in next, e.who do learners = learners + 1 end
    local full = {}
    for msg, c in next, e.variants do full[#full + 1] = { message = msg, count = c } end
    table.sort(full, function(a, b)
      if a.count ~= b.count then return a.count > b.count end
      return a.message < b.message
    end)
    list[#list + 1] = { message = group_text(e), count = e.count, learners = learners,
      full = full }
  end
  table.sort(list, function(a, b)
    if a.count ~= b.count then return a.count > b.count end
    return a.message < b.message
  end)
  for i = n + 1, #list do list[i] = nil end
  return list
end

-- Adds one learner's cell to the task's totals.
local function tally(task, c, who)
  if not c.started then return end
  task.started = task.started + 1
  if c.state == "passed" then
    task.passed = task.passed + 1
    task.attempts[#task.attempts + 1] = c.attempts
  end
  if c.state == "skipped" then task.skipped = task.skipped + 1 end
  if c.state == "stuck" then task.stuck = task.stuck + 1 end
  task.hints = task.hints + c.hints
  if c.late then task.late = task.late + 1 end
  for _, raw in ipairs(c.failures) do
    local msg = trim(raw)
    if msg == "" then msg = "(an empty message)" end
    local key, nums = shape(msg)
    local e = task.messages[key]
    if not e then
      e = { key = key, nums = nums, varies = {}, count = 0, who = {}, variants = {} }
      task.messages[key] = e
    end
    for i, v in ipairs(nums) do
      if e.nums[i] ~= v then e.varies[i] = true end
    end
    e.count = e.count + 1
    e.who[who] = true
    e.variants[msg] = (e.variants[msg] or 0) + 1
  end
end

-- Where a stuck learner is stuck: the stuck task they opened last (their
-- current one when it is stuck), with its numbers; nil when not stuck.
stuck_on = function(learner, list)
  local best
  for _, task in ipairs(list) do
    local c = learner.tasks[task.id]
    if c.state == "stuck" and (not best or task.id == learner.current or
        (best.task.id ~= learner.current and (c.first_seen or 0) >= (best.cell.first_seen or 0)))
    then
      best = { task = task, cell = c }
    end
  end
  if not best then return nil end
  local c = best.cell
  return { task = best.task, by = c.stuck_by, attempts = c.attempts, minutes = c.minutes or 0,
    hints = c.hints }
end

-- A learner from one record, or nil and why it was not read.
local function learner_of(rec, list)
  if type(rec) ~= "table" then return nil, "not a table" end
  if rec.format ~= report.FORMAT then return nil, "not a \"" .. report.FORMAT .. "\" record" end
  local tasks = type(rec.tasks) == "table" and rec.tasks or {}
  local learner = { uid = math.tointeger(rec.uid), updated = seconds(rec.updated), tasks = {},
    lessons = {}, absent = rec.absent == true }
  learner.user = type(rec.user) == "string" and rec.user or
    (learner.uid and tostring(learner.uid)) or "?"
  for _, task in ipairs(list) do
    learner.tasks[task.id] = task_cell(rawget(tasks, task.id))
  end
  return learner
end

-- The model of a class: see the file's header for the rules. records is a
-- list of decoded records (user and uid set by the caller); tasks the
-- course's tasks in order. opts: stuck_attempts, stuck_minutes, now, title,
-- top_failures. Bad records are kept out and listed in model.rejected.
function report.build(records, tasks, opts)
  if type(records) ~= "table" then error("class_report.build: records must be a list", 2) end
  if type(tasks) ~= "table" then error("class_report.build: tasks must be a list", 2) end
  opts = opts or {}
  local m = {
    title = opts.title or "Class", now = opts.now or os.time(),
    stuck_attempts = opts.stuck_attempts or report.STUCK_ATTEMPTS,
    stuck_minutes = opts.stuck_minutes or report.STUCK_MINUTES,
    due = type(opts.due) == "function" and opts.due or nil,
    learners = {}, rejected = {}, stuck = {}, late = {},
  }
  m.lessons, m.tasks = course(tasks)
  for i, rec in ipairs(records) do
    local learner, why = learner_of(rec, m.tasks)
    if learner then
      m.learners[#m.learners + 1] = learner
    else
      local who = type(rec) == "table" and type(rec.user) == "string" and rec.user or "#" .. i
      m.rejected[#m.rejected + 1] = { user = who, why = why }
    end
  end
  table.sort(m.learners, function(a, b)
    local la, lb = a.user:lower(), b.user:lower()
    if la ~= lb then return la < lb end
    if a.user ~= b.user then return a.user < b.user end
    return (a.uid or -1) < (b.uid or -1)
  end)
  for _, learner in ipairs(m.learners) do
    judge_tasks(learner, m.tasks, m)
    for _, lesson in ipairs(m.lessons) do
      learner.lessons[lesson.id] = lesson_cell(learner, lesson)
    end
    learner.stuck_on = stuck_on(learner, m.tasks)
    for _, task in ipairs(m.tasks) do
      local c = learner.tasks[task.id]
      if c.late then m.late[#m.late + 1] = { user = learner.user, task = task, late = c.late } end
    end
  end
  -- stuck learners first (in name order among themselves), then the others
  for i, learner in ipairs(m.learners) do learner.order = i end
  table.sort(m.learners, function(a, b)
    if (a.stuck_on ~= nil) ~= (b.stuck_on ~= nil) then return a.stuck_on ~= nil end
    return a.order < b.order
  end)
  for i, learner in ipairs(m.learners) do
    learner.order = nil
    if learner.stuck_on then m.stuck[#m.stuck + 1] = learner end
    for _, task in ipairs(m.tasks) do tally(task, learner.tasks[task.id], i) end
  end
  local n = #m.learners
  for _, task in ipairs(m.tasks) do
    task.learners = n
    task.pass_rate = task.started > 0 and task.passed / task.started or 0
    task.median_attempts = report.median(task.attempts)
    task.failures = top_failures(task.messages, opts.top_failures or report.TOP_FAILURES)
    task.messages, task.attempts = nil, nil
  end
  return m
end

-- The tasks someone reached and not everyone who reached passed, where
-- help is needed first: the most learners stuck on it, then the most who
-- reached it without passing, then the lowest pass rate among those who
-- reached it, then course order. (Turned down: the pass rate first, which
-- puts a task one learner skipped, 0 of 1, above one where 20 learners
-- failed 28 checks.)
function report.hot_tasks(model)
  local list = {}
  for _, t in ipairs(model.tasks) do
    if t.started > 0 and t.passed < t.started then list[#list + 1] = t end
  end
  table.sort(list, function(a, b)
    if a.stuck ~= b.stuck then return a.stuck > b.stuck end
    local fa, fb = a.started - a.passed, b.started - b.passed
    if fa ~= fb then return fa > fb end
    if a.pass_rate ~= b.pass_rate then return a.pass_rate < b.pass_rate end
    return a.index < b.index
  end)
  return list
end

---------------------------------------------------------------------------
-- Text
---------------------------------------------------------------------------

local GLYPHS = {
  utf8 = { passed = "✓", working = "▸", stuck = "✗", skipped = "s", ["not started"] = "·",
    times = "×", ellipsis = "…", dash = "—" },
  ascii = { passed = "+", working = ">", stuck = "x", skipped = "s", ["not started"] = ".",
    times = "x", ellipsis = "...", dash = "-" },
}
local COLORS = { passed = "32", working = "33", stuck = "1;31", skipped = "36",
  ["not started"] = "90", heading = "1" }

-- How long ago t was, in one short word: now, 5m, 3h, 2d; "-" for unknown.
local function ago(now, t)
  if not t then return "-" end
  local s = now - t
  if s < 60 then return "now" end
  if s < 3600 then return floor(s / 60) .. "m" end
  if s < 86400 then return floor(s / 3600) .. "h" end
  return floor(s / 86400) .. "d"
end

-- The compact text of a learner's lesson cell: "✓ 4/4", "✗ 2/4 7a".
local function cell_text(cell, g)
  if cell.state == "not started" then return g["not started"] end
  local s = g[cell.state] .. " " .. cell.passed .. "/" .. cell.total
  if cell.state == "stuck" then
    s = s .. " " .. (cell.stuck_by == "time" and (cell.stuck_minutes or 0) .. "m" or
      cell.stuck_attempts .. "a")
  end
  return s
end

-- Items laid out in lines of at most n columns, joined by sep; a line after
-- the first starts with indent. An item longer than a line is cut.
local function wrap_items(items, n, sep, indent)
  local lines, line = {}, ""
  for _, item in ipairs(items) do
    if line ~= "" and width(line) + width(sep) + width(item) > n then
      lines[#lines + 1] = line
      line = indent .. item
    else
      line = line == "" and item or line .. sep .. item
    end
  end
  if line ~= "" then lines[#lines + 1] = line end
  for i, l in ipairs(lines) do lines[i] = shorten(l, n) end
  return lines
end

-- text split at spaces into lines of at most n columns.
local function wrap(text, n, indent)
  local words = {}
  for word in text:gmatch("%S+") do words[#words + 1] = word end
  return wrap_items(words, n, " ", indent)
end

-- The lessons to show in `fit` columns: the run of consecutive lessons
-- where most is happening (a stuck cell counts 2, working or skipped 1;
-- ties go to the earlier run), since lessons everyone passed and lessons
-- nobody opened say little. (Turned down: the latest lessons, which hide
-- the slowest learners, who are the ones likely to need help.)
-- Returns first, last.
local WEIGHT = { stuck = 2, working = 1, skipped = 1 }
local function lesson_window(model, fit)
  local n = #model.lessons
  if fit >= n then return 1, n end
  local score = {}
  for i, lesson in ipairs(model.lessons) do
    score[i] = 0
    for _, learner in ipairs(model.learners) do
      score[i] = score[i] + (WEIGHT[learner.lessons[lesson.id].state] or 0)
    end
  end
  local best, best_sum = 1, -1
  for first = 1, n - fit + 1 do
    local sum = 0
    for i = first, first + fit - 1 do sum = sum + score[i] end
    if sum > best_sum then best, best_sum = first, sum end
  end
  return best, best + fit - 1
end

-- The learner × lesson table: lines, each within width.
local function grid_lines(model, o, g, paint)
  local out, cells, cw = {}, {}, 2
  for _, lesson in ipairs(model.lessons) do cw = math.max(cw, width(lesson.label)) end
  local namew = 7
  for i, learner in ipairs(model.learners) do
    cells[i] = {}
    namew = math.max(namew, width(clean(learner.user)))
    for j, lesson in ipairs(model.lessons) do
      cells[i][j] = cell_text(learner.lessons[lesson.id], g)
      cw = math.max(cw, width(cells[i][j]))
    end
  end
  local seenw = 4
  for _, learner in ipairs(model.learners) do
    if learner.absent then seenw = 5 end -- "never"
  end
  namew = math.max(4, math.min(namew, o.name_width or 16, o.width - 2 - seenw - 2 - cw))
  local fixed = namew + 2 + seenw
  local fit = math.max(1, (o.width - fixed) // (cw + 2))
  local first, last = lesson_window(model, fit)
  local head = { pad("learner", namew), lpad("seen", seenw) }
  for j = first, last do head[#head + 1] = pad(model.lessons[j].label, cw) end
  out[#out + 1] = paint((table.concat(head, "  "):gsub("%s+$", "")), "heading")
  for i, learner in ipairs(model.learners) do
    local row = { pad(shorten(clean(learner.user), namew, g.ellipsis), namew),
      lpad(learner.absent and "never" or ago(model.now, learner.updated), seenw) }
    for j = first, last do
      local state = learner.lessons[model.lessons[j].id].state
      row[#row + 1] = paint(cells[i][j], state) .. (" "):rep(cw - width(cells[i][j]))
    end
    out[#out + 1] = (table.concat(row, "  "):gsub("%s+$", ""))
  end
  if #model.learners == 0 then out[#out + 1] = "(no learner has a record yet)" end
  if first > 1 or last < #model.lessons then
    local hidden = {}
    if first > 1 then
      hidden[#hidden + 1] = model.lessons[1].label .. "-" .. model.lessons[first - 1].label
    end
    if last < #model.lessons then
      hidden[#hidden + 1] = model.lessons[last + 1].label .. "-" ..
        model.lessons[#model.lessons].label
    end
    for _, l in ipairs(wrap("(lessons " .. table.concat(hidden, " and ") ..
      " not shown: too many for " .. o.width .. " columns)", o.width, " ")) do
      out[#out + 1] = l
    end
  end
  return out
end

-- "1/3 passed (33%)  median 3  stuck 2  skipped 1  hints 4  late 1" for a
-- task: passed of those who reached it.
local function task_numbers(t)
  local s = format("%d/%d passed (%d%%)  median %s", t.passed, t.started,
    floor(t.pass_rate * 100 + 0.5), t.median_attempts and tostring(t.median_attempts) or "-")
  if t.stuck > 0 then s = s .. "  stuck " .. t.stuck end
  if t.skipped > 0 then s = s .. "  skipped " .. t.skipped end
  if t.hints > 0 then s = s .. "  hints " .. t.hints end
  if t.late > 0 then s = s .. "  late " .. t.late end
  return s
end

-- How long late work was late, in its largest unit or two: "2 d 3 h", "40 min".
local function late_words(secs)
  local d, h, mins = secs // 86400, secs % 86400 // 3600, secs % 3600 // 60
  if d > 0 then return format("%d d %d h", d, h) end
  if h > 0 then return format("%d h %d min", h, mins) end
  return format("%d min", math.max(1, mins))
end

-- What keeps a stuck learner stuck, in words: "7 failed checks, 2 hints".
local function stuck_words(on)
  local s = on.by == "time" and format("%d min on it", on.minutes) or
    format("%d failed checks", on.attempts)
  if on.by == "time" and on.attempts > 0 then s = s .. format(", %d failed checks", on.attempts) end
  if on.hints > 0 then s = s .. format(", %d hint%s", on.hints, on.hints == 1 and "" or "s") end
  return s
end
report.stuck_words = stuck_words

-- "Stuck now": each stuck learner and the task they are on, first of all.
local function stuck_now_lines(model, o, g, paint)
  local out = {}
  if #model.stuck == 0 then return out end
  out[#out + 1] = paint(format("Stuck now: %d learner%s", #model.stuck,
    #model.stuck == 1 and "" or "s"), "heading")
  local namew = 4
  for _, l in ipairs(model.stuck) do namew = math.max(namew, width(clean(l.user))) end
  namew = math.min(namew, o.name_width or 16)
  for _, l in ipairs(model.stuck) do
    local on = l.stuck_on
    out[#out + 1] = shorten(format("  %s  %s %s: %s", pad(shorten(clean(l.user), namew,
      g.ellipsis), namew), on.task.label, clean(on.task.title), stuck_words(on)), o.width,
      g.ellipsis)
  end
  out[#out + 1] = ""
  return out
end

-- "Late work": each task passed after its due time, by whom and how late.
local function late_lines(model, o, g)
  if #model.late == 0 then return {} end
  local items = {}
  for _, e in ipairs(model.late) do
    items[#items + 1] = format("%s %s (by %s)", clean(e.user), e.task.label, late_words(e.late))
  end
  local out = { "" }
  for _, l in ipairs(wrap_items(items, o.width, ", ", "  ")) do out[#out + 1] = l end
  out[2] = "Late work: " .. out[2]
  for i, l in ipairs(out) do out[i] = shorten(l, o.width, g.ellipsis) end
  return out
end

-- "Where the room is stuck": the hot tasks and their top failures.
local function stuck_lines(model, o, g, paint)
  local out = {}
  out[#out + 1] = paint("Where the room is stuck", "heading")
  for _, l in ipairs(wrap("(tasks someone reached, most stuck first, then most who reached " ..
    "it without passing; passed: of those who reached it; median: checks it took those who " ..
    "passed; messages grouped, N: a number that varies, 0x" .. g.ellipsis .. ": an address)",
    o.width, " ")) do
    out[#out + 1] = l
  end
  local hot = report.hot_tasks(model)
  if #hot == 0 then
    out[#out + 1] = #model.learners == 0 and "  nothing to show yet" or
      "  nobody: every task someone started is passed by everyone"
  end
  local max = o.max_tasks or 10
  -- Columns: label, title, numbers; the title takes what the others leave,
  -- and below 12 columns the numbers go on a line of their own.
  local labelw, titlew, numw = 0, 0, 0
  for i, t in ipairs(hot) do
    if i > max then break end
    labelw = math.max(labelw, width(t.label))
    titlew = math.max(titlew, width(clean(t.title)))
    numw = math.max(numw, width(task_numbers(t)))
  end
  titlew = math.min(titlew, o.width - 2 - labelw - 1 - 2 - numw)
  for i, t in ipairs(hot) do
    if i > max then
      out[#out + 1] = format("  %s and %d more tasks", g.ellipsis, #hot - max)
      break
    end
    local numbers = task_numbers(t)
    local left = "  " .. pad(t.label, labelw) .. " "
    if titlew >= 12 then
      out[#out + 1] = left .. pad(shorten(clean(t.title), titlew, g.ellipsis), titlew) .. "  " ..
        numbers
    else
      out[#out + 1] = shorten(left .. clean(t.title), o.width, g.ellipsis)
      out[#out + 1] = shorten("      " .. numbers, o.width, g.ellipsis)
    end
    for _, f in ipairs(t.failures) do
      local lead = format("      %d%s ", f.count, g.times)
      local tail = f.learners > 1 and format(" (%d learners)", f.learners) or ""
      local room = math.min(report.MESSAGE_WIDTH, o.width - width(lead) - width(tail))
      local msg = clean(f.message):gsub("0x…", "0x" .. g.ellipsis)
      out[#out + 1] = shorten(lead .. shorten(msg, math.max(room, 8), g.ellipsis) ..
        tail, o.width, g.ellipsis)
    end
  end
  return out
end

-- lines cut to height: first the grid's learner rows (the stuck come first,
-- so those kept are the ones to see), down to three, with "and N more
-- learners"; then, if still too tall, the end, with "and N more lines".
-- The terminal's last row is left for the cursor.
fit_height = function(lines, height, grid_at, model, g)
  local room = height - 1
  if #lines <= room then return lines end
  local rows = #model.learners
  local over = #lines - room
  local cut = math.min(over + 1, rows - 3)
  if cut > 1 then
    local kept = {}
    for i = 1, grid_at + rows - cut do kept[#kept + 1] = lines[i] end
    kept[#kept + 1] = format("%s and %d more learners", g.ellipsis, cut)
    for i = grid_at + 1 + rows, #lines do kept[#kept + 1] = lines[i] end
    lines = kept
  end
  if #lines > room then
    local more = #lines - room + 1
    for i = #lines, room, -1 do lines[i] = nil end
    lines[#lines + 1] = format("%s and %d more lines (a taller terminal, or --html FILE, shows " ..
      "them)", g.ellipsis, more)
  end
  return lines
end

-- The model as text for a terminal (see the file's header); every line fits
-- in opts.width columns (default 100, at least 40) and, given opts.height,
-- in that many rows (fit_height).
function report.text(model, opts)
  opts = opts or {}
  local o = { width = math.max(40, math.tointeger(opts.width) or 100), name_width = opts.name_width,
    max_tasks = opts.max_tasks }
  local use_utf8 = opts.utf8
  if use_utf8 == nil then use_utf8 = term.utf8() end
  local g = use_utf8 and GLYPHS.utf8 or GLYPHS.ascii
  local paint = function(s) return s end
  if opts.color then
    paint = function(s, what) return "\27[" .. COLORS[what] .. "m" .. s .. "\27[0m" end
  end
  local out = {}
  local title = format("%s %s %d learner%s, %d lessons, %d tasks", clean(opts.title or model.title),
    g.dash, #model.learners, #model.learners == 1 and "" or "s", #model.lessons, #model.tasks)
  if opts.time then
    title = title .. " " .. g.dash .. " " .. os.date("%Y-%m-%d %H:%M", opts.time)
  end
  out[#out + 1] = paint(shorten(title, o.width, g.ellipsis), "heading")
  out[#out + 1] = ""
  for _, l in ipairs(stuck_now_lines(model, o, g, paint)) do out[#out + 1] = l end
  local grid_at = #out + 1
  local grid = grid_lines(model, o, g, paint)
  for _, l in ipairs(grid) do out[#out + 1] = l end
  out[#out + 1] = ""
  local legend = format("%s passed all; %s working; %s stuck (7a: 7 failed checks on a task, " ..
    "20m: %s+ minutes on the current one); s skipped a task; %s not started; n/m: tasks passed " ..
    "of m; seen: last activity (never: on the roster, never joined)", g.passed, g.working,
    g.stuck, model.stuck_minutes,
    g["not started"])
  for _, l in ipairs(wrap(legend, o.width, "")) do out[#out + 1] = l end
  out[#out + 1] = ""
  for _, l in ipairs(stuck_lines(model, o, g, paint)) do out[#out + 1] = l end
  if model.challenge then
    out[#out + 1] = ""
    for _, l in ipairs(require("grade_challenge").lines(model.challenge, 10)) do
      out[#out + 1] = shorten(clean(l), o.width, g.ellipsis)
    end
  end
  if #model.rejected > 0 then
    out[#out + 1] = ""
    local parts = {}
    for _, r in ipairs(model.rejected) do
      parts[#parts + 1] = clean(r.user) .. " (" .. r.why .. ")"
    end
    for _, l in ipairs(wrap(#model.rejected .. " record(s) not read: " .. table.concat(parts, ", "),
      o.width, "  ")) do
      out[#out + 1] = shorten(l, o.width, g.ellipsis)
    end
  end
  for _, l in ipairs(late_lines(model, o, g)) do out[#out + 1] = l end
  if opts.height then out = fit_height(out, math.max(5, floor(opts.height)), grid_at, model, g) end
  return table.concat(out, "\n") .. "\n"
end

---------------------------------------------------------------------------
-- HTML
---------------------------------------------------------------------------

-- Text from anywhere (records included) made safe in HTML text and in a
-- double- or single-quoted attribute.
local function esc(s)
  return svg.escape(clean(s))
end
report.escape = esc

local CSS = [[
body { font-family: system-ui, "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px;
  color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
p.summary, p.legend { color: #555; margin: 4px 0 12px; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: #f0f0f0; }
td.cell { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: nowrap;
  text-align: center; }
td.passed { background: #cdeccd; } td.working { background: #fff2bf; }
td.stuck { background: #f7c6c6; font-weight: bold; } td.skipped { background: #dde3ea; }
td.not-started { color: #aaa; }
td.num { text-align: right; } tr.hot td.stuck-count { color: #b00; font-weight: bold; }
ol.failures { margin: 0; padding-left: 20px; } ol.failures li { margin: 2px 0; }
.count { font-weight: bold; } .who { color: #777; }
svg text { font-size: 12px; fill: #222; }
td.stuck-on { color: #b00; font-weight: bold; white-space: nowrap; }
ul#stuck li .task { font-weight: bold; color: #b00; }
details summary { cursor: pointer; } ul.full { margin: 4px 0; padding-left: 18px; }
.full-message { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre-wrap;
  word-break: break-all; }
]]

local function state_class(state) return (state:gsub(" ", "-")) end

-- A cell's hover text: what the compact cell says, in words.
local function cell_title(cell, lesson)
  local s = format("%s: %s, %d/%d tasks passed, %d checks", lesson.id, cell.state, cell.passed,
    cell.total, cell.attempts)
  if cell.stuck_task then
    s = s .. format("; stuck on %s (%d checks, %d min)", cell.stuck_task, cell.stuck_attempts,
      cell.stuck_minutes or 0)
  end
  return s
end

-- "Stuck now": each stuck learner and the task they are on, in plain sight.
local function html_stuck(model, out)
  if #model.stuck == 0 then return end
  out[#out + 1] = format('<h2>Stuck now: %d learner%s</h2><ul id="stuck">', #model.stuck,
    #model.stuck == 1 and "" or "s")
  for _, l in ipairs(model.stuck) do
    local on = l.stuck_on
    out[#out + 1] = format('<li data-user="%s"><b>%s</b> on <span class="task">%s %s</span>: ' ..
      '%s</li>', esc(l.user), esc(l.user), esc(on.task.label), esc(on.task.title),
      esc(stuck_words(on)))
  end
  out[#out + 1] = '</ul>'
end

-- "Late work": each task passed after its due time.
local function html_late(model, out)
  if #model.late == 0 then return end
  out[#out + 1] = '<h2>Late work</h2><ul id="late">'
  for _, e in ipairs(model.late) do
    out[#out + 1] = format('<li data-user="%s" data-task="%s">%s: %s %s, passed %s after ' ..
      'its due time</li>', esc(e.user), esc(e.task.id), esc(e.user), esc(e.task.label),
      esc(e.task.title), esc(late_words(e.late)))
  end
  out[#out + 1] = '</ul>'
end

local function html_grid(model, out)
  out[#out + 1] = '<table class="grid" id="learners">'
  local head = { '<thead><tr><th>learner</th><th>seen</th><th>stuck on</th>' }
  for _, lesson in ipairs(model.lessons) do
    head[#head + 1] = format('<th class="lesson" data-lesson="%s" title="%s">%s</th>',
      esc(lesson.id), esc(lesson.title), esc(lesson.label))
  end
  out[#out + 1] = table.concat(head) .. '</tr></thead>'
  out[#out + 1] = '<tbody>'
  for _, learner in ipairs(model.learners) do
    local user = esc(learner.user)
    local row = { format('<tr data-user="%s"><th class="name" scope="row">%s</th><td ' ..
      'class="seen">%s</td>',
      user, user, learner.absent and "never joined" or esc(ago(model.now, learner.updated))) }
    local on = learner.stuck_on
    row[#row + 1] = on and format('<td class="stuck-on">%s %s</td>', esc(on.task.label),
      esc(on.task.title)) or '<td class="stuck-on"></td>'
    for _, lesson in ipairs(model.lessons) do
      local cell = learner.lessons[lesson.id]
      row[#row + 1] = format('<td class="cell %s" data-user="%s" data-lesson="%s" ' ..
        'data-state="%s" ' ..
        'title="%s">%s</td>', state_class(cell.state), user, esc(lesson.id), esc(cell.state),
        esc(cell_title(cell, lesson)), esc(cell_text(cell, GLYPHS.utf8)))
    end
    out[#out + 1] = table.concat(row) .. '</tr>'
  end
  out[#out + 1] = '</tbody></table>'
end

-- A task's failure groups, each a <details>: the group's message (cut) and
-- count, and a click shows the full messages it stands for, with theirs.
local FULL_SHOWN = 10
local function html_failures(t)
  if #t.failures == 0 then return "" end
  local items = {}
  for _, f in ipairs(t.failures) do
    local msg = clean(f.message)
    local full = {}
    for i, v in ipairs(f.full or {}) do
      if i > FULL_SHOWN then
        full[#full + 1] = format('<li>and %d more</li>', #f.full - FULL_SHOWN)
        break
      end
      full[#full + 1] = format('<li><span class="count">%d×</span> <span class="full-message">' ..
        '%s</span></li>', v.count, esc(v.message))
    end
    items[#items + 1] = format('<li><details><summary><span class="count">%d×</span> ' ..
      '<span class="message" title="%s">%s</span>%s</summary><ul class="full">%s</ul>' ..
      '</details></li>', f.count, svg.escape(msg), svg.escape(shorten(msg, report.MESSAGE_WIDTH)),
      f.learners > 1 and format(' <span class="who">(%d learners)</span>', f.learners) or "",
      table.concat(full))
  end
  return '<ol class="failures">' .. table.concat(items) .. '</ol>'
end

local function html_tasks(model, out)
  local hot = report.hot_tasks(model)
  if #hot == 0 then
    out[#out + 1] = '<p class="none">Nobody: every task someone started is passed by everyone.</p>'
    return
  end
  out[#out + 1] = '<table id="tasks"><thead><tr><th>task</th><th>title</th><th>started</th>' ..
    '<th>passed of those who reached it</th><th>median checks to pass</th><th>stuck</th>' ..
    '<th>skipped</th><th>hints asked</th><th>late</th><th>most frequent failures (a click ' ..
    'shows the full messages)</th></tr></thead><tbody>'
  for _, t in ipairs(hot) do
    out[#out + 1] = format('<tr data-task="%s"%s><td>%s</td><td>%s</td><td class="num">%d</td>' ..
      '<td class="num">%d/%d (%d%%)</td><td class="num">%s</td><td class="num ' ..
        'stuck-count">%d</td>' ..
      '<td class="num">%d</td><td class="num hints">%d</td><td class="num late">%d</td>' ..
      '<td>%s</td></tr>', esc(t.id), t.stuck > 0 and ' class="hot"' or "",
      esc(t.label), esc(t.title), t.started, t.passed, t.started, floor(t.pass_rate * 100 + 0.5),
      t.median_attempts and tostring(t.median_attempts) or "-", t.stuck, t.skipped, t.hints,
      t.late, html_failures(t))
  end
  out[#out + 1] = '</tbody></table>'
end

-- Horizontal bars, one per task in course order: labels need the room.
-- Inline SVG needs no xmlns in HTML5, so the page names no URL at all.
local function html_chart(model, out)
  local rows = #model.tasks
  local left, barw, rowh, top = 280, 400, 24, 30
  local w, h = left + barw + 70, top + rows * rowh + 30
  out[#out + 1] = format('<svg id="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" ' ..
    'aria-label="pass rate per task">', w, h, w, h)
  out[#out + 1] = format('<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>', w, h)
  for _, p in ipairs({ 0, 25, 50, 75, 100 }) do
    local x = left + barw * p / 100
    out[#out + 1] = format('<line x1="%g" y1="%d" x2="%g" y2="%d" stroke="#ddd"/>' ..
      '<text x="%g" y="%d" text-anchor="middle">%d%%</text>', x, top - 6, x, top + rows * rowh, x,
      top - 12, p)
  end
  for i, t in ipairs(model.tasks) do
    local y = top + (i - 1) * rowh
    local bw = barw * t.pass_rate
    local color = t.pass_rate >= 0.75 and "#59a14f" or t.pass_rate >= 0.4 and "#f2b134" or "#e15759"
    local pct = floor(t.pass_rate * 100 + 0.5)
    out[#out + 1] = format('<text x="%d" y="%d" text-anchor="end">%s</text>', left - 8, y + 16,
      esc(shorten(t.label .. " " .. clean(t.title), 40)))
    out[#out + 1] = format('<rect class="bar" data-task="%s" x="%d" y="%d" width="%g" ' ..
      'height="%d" ' ..
      'fill="%s"><title>%s: %d of the %d who reached it passed (%d%%)</title></rect>', esc(t.id),
      left, y + 4, math.max(bw, 1), rowh - 8, color, esc(t.label), t.passed, t.started, pct)
    out[#out + 1] = format('<text x="%g" y="%d">%d%%%s</text>', left + math.max(bw, 1) + 6, y + 16,
      pct, t.started == 0 and " (nobody started)" or "")
  end
  out[#out + 1] = format('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>', left, top - 6,
    left, top + rows * rowh)
  out[#out + 1] = '</svg>'
end

-- The model as one HTML5 page: inline CSS and SVG, no scripts, nothing
-- fetched from anywhere. opts.title (else the model's); opts.time (unix
-- seconds) adds the time to the summary; opts.notes, a list of strings (the
-- caller's warnings, files it refused), ends the page.
function report.html(model, opts)
  opts = opts or {}
  local title = opts.title or model.title
  local out = { '<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>' .. esc(title) .. '</title>', '<style>', CSS, '</style></head><body>',
    '<h1>' .. esc(title) .. '</h1>' }
  out[#out + 1] = format('<p class="summary">%d learner%s, %d lessons, %d tasks%s. Stuck: %d ' ..
    'failed checks on a task, or %s minutes on the current one without passing.</p>',
    #model.learners, #model.learners == 1 and "" or "s", #model.lessons, #model.tasks,
    esc(" — made " .. os.date("%Y-%m-%d %H:%M:%S", opts.time or model.now)),
    model.stuck_attempts, esc(model.stuck_minutes))
  html_stuck(model, out)
  html_grid(model, out)
  out[#out + 1] = '<p class="legend">✓ passed all · ▸ working · ✗ stuck (7a: failed checks; ' ..
    '20m: minutes on the task) · s skipped a task · n/m: tasks passed · seen: last activity</p>'
  out[#out + 1] = '<h2>Where the room is stuck</h2>'
  out[#out + 1] = '<p class="legend">Tasks someone reached, most stuck first, then most who ' ..
    'reached them without passing; the median counts the checks of those who passed; ' ..
    'messages are grouped with addresses and varying numbers (N) taken out.</p>'
  html_tasks(model, out)
  html_late(model, out)
  out[#out + 1] = '<h2>Pass rate per task</h2>'
  html_chart(model, out)
  if model.challenge then out[#out + 1] = require("grade_challenge").html(model.challenge, esc) end
  if #model.rejected > 0 then
    local parts = {}
    for _, r in ipairs(model.rejected) do
      parts[#parts + 1] = esc(r.user .. " (" .. r.why .. ")")
    end
    out[#out + 1] = '<p class="rejected">Records not read: ' .. table.concat(parts, ", ") .. '</p>'
  end
  if type(opts.notes) == "table" and #opts.notes > 0 then
    out[#out + 1] = '<h2>Notes</h2><ul class="notes">'
    for _, note in ipairs(opts.notes) do out[#out + 1] = '<li>' .. esc(note) .. '</li>' end
    out[#out + 1] = '</ul>'
  end
  out[#out + 1] = '</body></html>'
  return table.concat(out, "\n") .. "\n"
end

---------------------------------------------------------------------------
-- Watching
---------------------------------------------------------------------------

-- Waits about `s` seconds. A child `sleep` blocks without spinning, and
-- Ctrl-C, which reaches it too, ends the wait at once. (os.execute would do
-- the same, but system() ignores SIGINT in the caller while it waits, so
-- the interrupt would only land after the full interval.)
local function sleep(s)
  local p = io.popen(format("sleep %.3f", s))
  if not p then return end
  local ok, how, code = p:close()
  if not ok and how == "signal" and code == 2 then error("interrupted", 0) end
end

local function interrupted(err)
  return type(err) == "string" and err:find("interrupted", 1, true) ~= nil
end

-- Redraws fetch()'s text every opts.interval seconds (default 3) on
-- opts.out (default io.stdout): the cursor goes home, each line clears what
-- is left of the old one and the rest of the screen is cleared below, so
-- the picture is replaced without flicker. Stops after opts.times redraws
-- when given, or at Ctrl-C, and returns the number of redraws and why
-- ("times" or "interrupted"). An error in fetch() is shown in place of the
-- report and retried at the next redraw; any other error is raised.
-- In cudalab's engine an interrupt stays armed until the prompt returns, so
-- there Ctrl-C ends the watch with the REPL's "interrupted" instead.
function report.watch(fetch, opts)
  if type(fetch) ~= "function" then error("class_report.watch: fetch must be a function", 2) end
  opts = opts or {}
  local interval = opts.interval or 3
  if type(interval) ~= "number" or not (interval >= 0 and interval <= 86400) then
    error("class_report.watch: interval must be 0..86400 seconds", 2)
  end
  local out, times, wait = opts.out or io.stdout, opts.times, opts.sleep or sleep
  local n = 0
  local ok, err = pcall(function()
    out:write("\27[2J")
    while true do
      local fine, text = pcall(fetch)
      if not fine then
        if interrupted(text) then error(text, 0) end
        text = "cannot show the report: " .. clean(text) .. "\n"
      end
      text = tostring(text):gsub("\n", "\27[K\n")
      out:write("\27[H" .. text .. "\27[J")
      if out.flush then out:flush() end
      n = n + 1
      if times and n >= times then return end
      if interval > 0 then wait(interval) end
    end
  end)
  if ok then return n, "times" end
  if interrupted(err) then return n, "interrupted" end
  error(err, 0)
end

return report
