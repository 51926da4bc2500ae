-- grade_output.lua: what cudalab --grade prints and writes (grade.lua's
-- grades in, text out): the table learner by lesson, the CSV, Gradescope's
-- results.json per learner, and the partial results of a shard with their
-- merge. Everything here is a pure function of the grades, with learners in
-- name order and no times or paths, which is why a run split into shards and
-- merged gives the bytes of one run. The table goes to a terminal, so every
-- name and title in it passes term.clean (learner names are account names,
-- the title is class.lua's: both come from the class folder); the files keep
-- the bytes as they are.

local json = require "json"
local term = require "term"

local M = {}

local write_file = require("lesson_run").write_file
local function err(fmt, ...) io.stderr:write("cudalab: ", string.format(fmt, ...), "\n") end


-- The grades of one run (or shard): {tasks = {{id, title, lesson, number}},
-- learners = {{user, uid, results = {[id] = {score, output}}}}}.

-- A task's most points (gradebook.finish sets them; 1 in grades made without it).
local function task_max(t) return t.max_score or 1 end

-- Points as text: hundredths at most, no trailing zeros ("2", "0.75").
local function num(x)
  local s = string.format("%.2f", x):gsub("0+$", ""):gsub("%.$", "")
  return s
end
M.num = num

local function round(x) return math.floor(x * 100 + 0.5) / 100 end

local function max_score(g)
  local s = 0
  for _, t in ipairs(g.tasks) do s = s + task_max(t) end
  return round(s)
end

local function learner_score(g, l)
  local s = 0
  for _, t in ipairs(g.tasks) do s = s + ((l.results[t.id] or {}).score or 0) end
  return round(s)
end
M.learner_score, M.max_score = learner_score, max_score

-- The lessons that have tasks, in course order: {{lesson, number, ids}}.
local function lesson_columns(g)
  local cols, by = {}, {}
  for _, t in ipairs(g.tasks) do
    if not by[t.lesson] then
      by[t.lesson] = { lesson = t.lesson, number = t.number, ids = {} }
      cols[#cols + 1] = by[t.lesson]
    end
    table.insert(by[t.lesson].ids, t.id)
    by[t.lesson].max = (by[t.lesson].max or 0) + task_max(t)
  end
  return cols
end

local function pad(s, n) return s .. string.rep(" ", math.max(0, n - utf8.len(s))) end
local function lpad(s, n) return string.rep(" ", math.max(0, n - #s)) .. s end

function M.table_text(g)
  local cols = lesson_columns(g)
  local out = {}
  local title = g.title and ("Grades for " .. term.clean(g.title)) or "Grades"
  out[#out + 1] = string.format("%s: %d learner%s, %d task%s in %d lesson%s, re-run from each " ..
    "learner's submissions", title, #g.learners, #g.learners == 1 and "" or "s", #g.tasks,
    #g.tasks == 1 and "" or "s", #cols, #cols == 1 and "" or "s")
  local namew = 7
  local names = {}
  for i, l in ipairs(g.learners) do
    names[i] = term.clean(l.user)
    namew = math.max(namew, math.min(24, utf8.len(names[i]) or #names[i]))
  end
  local head = { pad("learner", namew) }
  local cw, tw = {}, 7
  for k, c in ipairs(cols) do cw[k] = math.max(5, 2 * #num(c.max) + 1) end
  tw = math.max(tw, 2 * #num(max_score(g)) + 1)
  for k, c in ipairs(cols) do head[#head + 1] = lpad(string.format("%02d", c.number), cw[k]) end
  head[#head + 1] = lpad("total", tw)
  out[#out + 1] = table.concat(head, " ")
  for i, l in ipairs(g.learners) do
    local name = names[i]
    if utf8.len(name) and utf8.len(name) > namew then
      name = name:sub(1, utf8.offset(name, namew) - 1)
    end
    local row = { pad(name, namew) }
    for k, c in ipairs(cols) do
      local s = 0
      for _, id in ipairs(c.ids) do s = s + ((l.results[id] or {}).score or 0) end
      row[#row + 1] = lpad(num(s) .. "/" .. num(c.max), cw[k])
    end
    row[#row + 1] = lpad(num(learner_score(g, l)) .. "/" .. num(max_score(g)), tw)
    out[#out + 1] = table.concat(row, " ")
  end
  local legend = {}
  for _, c in ipairs(cols) do
    legend[#legend + 1] = string.format("%02d %s", c.number, term.clean(c.lesson))
  end
  out[#out + 1] = "lessons: " .. table.concat(legend, ", ")
  return table.concat(out, "\n") .. "\n"
end

local function csv_field(s)
  s = tostring(s)
  -- a leading = + - @ is a formula to a spreadsheet, and so is one after a leading tab or
  -- carriage return, which some drop: the field is quoted and prefixed with '
  local formula = s:match("^[=+%-@\t\r]") ~= nil
  if formula then s = "'" .. s end
  if formula or s:find('[",\n\r]') then return '"' .. (s:gsub('"', '""')) .. '"' end
  return s
end

function M.csv(g)
  local out = {}
  local head = { "user", "uid", "name", "id", "email" }
  for _, t in ipairs(g.tasks) do head[#head + 1] = csv_field(t.id) end
  head[#head + 1] = "score"
  head[#head + 1] = "max_score"
  out[#out + 1] = table.concat(head, ",")
  for _, l in ipairs(g.learners) do
    local row = { csv_field(l.user), l.uid and tostring(l.uid) or "", csv_field(l.name or ""),
      csv_field(l.id or ""), csv_field(l.email or "") }
    for _, t in ipairs(g.tasks) do row[#row + 1] = num((l.results[t.id] or {}).score or 0) end
    row[#row + 1] = num(learner_score(g, l))
    row[#row + 1] = num(max_score(g))
    out[#out + 1] = table.concat(row, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

-- Every learner's results, keyed by account: cudalab's own JSON (Gradescope's
-- format is gradescope_one, one file per learner).
function M.gradescope(g)
  local all = {}
  for _, l in ipairs(g.learners) do
    local tests = {}
    for _, t in ipairs(g.tasks) do
      local r = l.results[t.id] or { score = 0, output = "not graded" }
      tests[#tests + 1] = { name = t.id .. ": " .. (t.title or ""), score = r.score,
                            max_score = task_max(t), output = r.output }
    end
    all[l.user] = { score = learner_score(g, l), max_score = max_score(g), tests = tests,
      name = l.name, id = l.id, email = l.email }
  end
  return json.encode(all, { indent = true }) .. "\n"
end

-- One learner's results.json in Gradescope's autograder format
-- (gradescope-autograders.readthedocs.io, "Autograder Specifications"):
-- score and tests at the top level, nothing else; each test's name, score,
-- max_score, status and output.
function M.gradescope_one(g, l)
  local tests = {}
  for _, t in ipairs(g.tasks) do
    local r = l.results[t.id] or { score = 0, output = "not graded" }
    tests[#tests + 1] = { name = t.id .. ": " .. (t.title or ""), score = r.score or 0,
      max_score = task_max(t), status = (r.score or 0) >= task_max(t) and "passed" or "failed",
      output = r.output or "" }
  end
  return json.encode({ score = learner_score(g, l), tests = json.array and json.array(tests) or
    tests }, { indent = true }) .. "\n"
end

-- DIR/ACCOUNT/results.json for each learner (DIR made if missing). Returns
-- true or nil, why.
function M.write_gradescope(g, dir)
  local files = require "cudalab.files"
  files.mkdir(dir, tonumber("755", 8)) -- there already is fine: the writes below say otherwise
  for _, l in ipairs(g.learners) do
    if not require("class_roster").valid_account(l.user) then
      return nil, "an account name that cannot be a folder's: " .. term.clean(l.user)
    end
    local sub = dir .. "/" .. l.user
    files.mkdir(sub, tonumber("755", 8))
    local ok, why = write_file(sub .. "/results.json", M.gradescope_one(g, l))
    if not ok then return nil, why end
  end
  return true
end

-- Prints the table and writes the files the options ask for. Returns 0 or 1.
function M.emit(g, opts)
  io.write(M.table_text(g))
  if g.challenge then
    local ch = require "grade_challenge"
    io.write("\n", table.concat(ch.lines(ch.of_grading(g)), "\n"), "\n")
  end
  if opts["--gradescope"] then
    local ok, why = M.write_gradescope(g, opts["--gradescope"])
    if not ok then err("cannot write %s: %s", opts["--gradescope"], why); return 1 end
  end
  for _, w in ipairs({ { "--csv", M.csv }, { "--json", M.gradescope } }) do
    local path = opts[w[1]]
    if path then
      local ok, ferr = write_file(path, w[2](g))
      if not ok then err("cannot write %s: %s", path, ferr); return 1 end
    end
  end
  return 0
end

---------------------------------------------------------------- shards --

local PARTIAL = "cudalab-grades-partial 1"

function M.write_partial(g, path, i, n)
  local learners = {}
  for _, l in ipairs(g.learners) do
    learners[#learners + 1] = l -- everything the emit needs: a merge's output is one run's
  end
  return write_file(path, json.encode({ format = PARTIAL, shard = i, shards = n, title = g.title,
    tasks = g.tasks, challenge = g.challenge,
    learners = json.array and json.array(learners) or learners }, { indent = true }) .. "\n")
end

-- merge(paths) -> grades | nil, why.
function M.merge(paths)
  local seen, g, n = {}, nil, nil
  for _, p in ipairs(paths) do
    local f = io.open(p, "rb")
    if not f then return nil, "cannot read " .. p end
    local part = json.decode(f:read("a"))
    f:close()
    if type(part) ~= "table" or part.format ~= PARTIAL then
      return nil, p .. " is not a partial grading result (cudalab --grade --shard ... --out FILE)"
    end
    if n and part.shards ~= n then
      return nil, string.format("%s is shard %s of %s, but the others are of %d", p,
        tostring(part.shard), tostring(part.shards), n)
    end
    n = part.shards
    if seen[part.shard] then
      return nil, string.format("shard %d of %d is given twice (%s and %s)", part.shard, n,
        seen[part.shard], p)
    end
    seen[part.shard] = p
    if not g then
      g = { title = part.title, tasks = part.tasks, learners = {},
        challenge = type(part.challenge) == "table" and type(part.challenge.task) == "string" and
          part.challenge or nil }
    elseif json.encode(g.tasks) ~= json.encode(part.tasks) then
      return nil, p .. " grades other tasks than " .. seen[next(seen)] .. " (another class?)"
    end
    for _, l in ipairs(part.learners or {}) do g.learners[#g.learners + 1] = l end
  end
  if not n then return nil, "no partial results given" end
  local missing = {}
  for i = 1, n do if not seen[i] then missing[#missing + 1] = tostring(i) end end
  if #missing > 0 then
    return nil, string.format("shard%s %s of %d %s missing: the table would leave learners out",
      #missing > 1 and "s" or "", table.concat(missing, ", "), n, #missing > 1 and "are" or "is")
  end
  table.sort(g.learners, function(a, b)
    if a.user ~= b.user then return a.user < b.user end
    return a.uid < b.uid
  end)
  return g
end

return M
