-- grade_feedback.lua: the results a learner reads. `cudalab --grade DIR
-- --publish` leaves each graded learner their own (score, each task's score
-- and output) in the class folder, and grades() at the prompt of a class
-- session shows them.
--
--   feedback.document(g, l [, now]) -> the results of learner l of grades g
--   feedback.publish(handle, g [, now]) -> published, problems
--   feedback.text(doc [, width]) -> what grades() prints
--   feedback.grades() -> prints the caller's results (the prompt's grades())
--
-- Design stance: the filesystem is cudalab.class's (repl/class/feedback.c:
-- a folder no learner can write in, each file readable by its learner and
-- the instructor alone, written atomically); this module decides what goes
-- in a file and how it reads. A file is the learner's view of the same
-- grades the instructor's table shows, outputs included, so that a learner
-- can follow their score; a learner with no account (a roster line without
-- one) has nowhere to be published and is named in the problems.

local json = require "json"

local M = {}

M.FORMAT = "cudalab-class-results 1"

-- The results of learner l (one of g.learners): {format, class, published,
-- score, max_score, tasks = {{id, title, lesson, score, max_score, output,
-- late}}}.
function M.document(g, l, now)
  local output = require "grade_output"
  local doc = { format = M.FORMAT, class = g.title, published = now or os.time(),
    user = l.user, score = output.learner_score(g, l), max_score = output.max_score(g),
    tasks = {} }
  for _, t in ipairs(g.tasks) do
    local r = l.results[t.id] or {}
    doc.tasks[#doc.tasks + 1] = { id = t.id, title = t.title, lesson = t.lesson,
      score = r.score or 0, max_score = t.max_score or 1, output = r.output or "", late = r.late }
  end
  return doc
end

-- Writes every learner's results through handle (cudalab.class). Returns the
-- number published and the problems, one line each.
function M.publish(handle, g, now)
  local n, problems = 0, {}
  for _, l in ipairs(g.learners) do
    if not math.tointeger(l.uid) then
      problems[#problems + 1] = l.user .. ": no account on this machine, nothing published"
    else
      local ok, why = handle:publish(l.uid, json.encode(M.document(g, l, now)))
      if ok then n = n + 1 else problems[#problems + 1] = l.user .. ": " .. tostring(why) end
    end
  end
  return n, problems
end

-- text cut into lines of at most width columns at spaces, each after indent.
local function wrap(text, width, indent)
  local lines, line = {}, indent
  for word in text:gmatch("%S+") do
    if #line > #indent and #line + 1 + #word > width then
      lines[#lines + 1] = line
      line = indent .. word
    else
      line = line .. (#line > #indent and " " or "") .. word
    end
  end
  if #line > #indent then lines[#lines + 1] = line end
  return lines
end

-- What grades() prints for doc (a decoded results file, hostile as any file
-- in the class folder is: fields of the wrong type are shown as missing, and
-- every string is cleaned for the terminal).
function M.text(doc, width)
  local term = require "term"
  local num = require("grade_output").num
  width = math.max(40, width or 80)
  local function n(v) return math.type(v) and num(v) or "?" end
  local function s(v) return type(v) == "string" and term.clean(v) or "" end
  local out = { string.format("Your results in %s, published %s: %s of %s points.",
    s(doc.class) ~= "" and s(doc.class) or "the class",
    math.type(doc.published) and os.date("%Y-%m-%d %H:%M", doc.published) or "?",
    n(doc.score), n(doc.max_score)) }
  for _, t in ipairs(type(doc.tasks) == "table" and doc.tasks or {}) do
    if type(t) == "table" then
      out[#out + 1] = string.format("  %s  %s/%s  %s", s(t.id), n(t.score), n(t.max_score),
        s(t.title))
      for _, line in ipairs(wrap(s(t.output), width, "      ")) do out[#out + 1] = line end
    end
  end
  return table.concat(out, "\n")
end

-- grades(): the caller's published results in the class they joined.
function M.grades()
  local classroom = package.loaded.classroom
  local handle = classroom and classroom._S.handle
  if not handle then
    error("grades() shows your results in a class: join one with cudalab --class DIR", 2)
  end
  local text, why = handle:read_feedback()
  if text == false then
    print("No results yet: the instructor has not published grades for you in this class.")
    return
  end
  if not text then error("grades(): " .. tostring(why), 2) end
  local doc = json.decode(text)
  if type(doc) ~= "table" or doc.format ~= M.FORMAT then
    error("grades(): your results file is not one cudalab wrote; ask the instructor to " ..
      "publish again", 2)
  end
  print(M.text(doc, require("term").width()))
end

return M
