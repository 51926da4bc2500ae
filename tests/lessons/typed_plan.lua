-- tests/lessons/typed_plan.lua LESSON.md OUTDIR: what a learner types to pass every task of a
-- lesson, and every way it names to fail one, read from the lesson file by the engine's own
-- parser: OUTDIR/lines (one line typed per line: lesson(N), next() up to each task; then each of
-- the task's wrong answers, a ```lua wrong typed line by line, or edit() for a ```cuda wrong with
-- the task's ```lua solution after it, as --verify-lessons runs them, each followed by check();
-- then the task's ```lua solution, or edit() for a kernel task, and check(); before each attempt
-- after the first, back() and next() start the task afresh, its launch log and typed code
-- emptied, as --verify-lessons starts each), OUTDIR/edits (for
-- each edit() in turn, the folder under OUTDIR/solutions whose copy of the file the test's editor
-- puts over the learner's: the reference kernels in solutions/, wrong answers in
-- solutions/wrongN/), OUTDIR/tasks (how many checks must pass) and OUTDIR/wrongs (how many must
-- fail).
local parse = require "lesson_parse"
local path, out = arg[1], arg[2]

local function slurp(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function spit(p, s)
  local f = assert(io.open(p, "wb"))
  f:write(s)
  f:close()
end

local lesson = parse.parse(slurp(path), path:match("([^/]+)%.md$"))
local number = assert(path:match("/(%d+)%-[^/]*%.md$"), "a lesson file is named NN-name.md")
local lines, edits, tasks, wrongs = { string.format("lesson(%d)", tonumber(number)) }, {}, 0, 0
os.execute("mkdir -p '" .. out .. "/solutions'")

-- Typed as a learner types: a Tab would ask for completion, so indentation is spaces.
local function type_code(code)
  for line in (code .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = (line:gsub("\t", "  ")) end
end

-- edit(), whose editor takes FILE from the folder DIR (under OUTDIR/solutions) over the learner's.
local function edit(dir, file, code)
  os.execute("mkdir -p '" .. out .. "/solutions/" .. dir .. "'")
  spit(out .. "/solutions/" .. dir .. "/" .. file, code .. "\n")
  edits[#edits + 1] = dir
  lines[#lines + 1] = "edit()"
end

for i, step in ipairs(lesson.steps) do
  if i > 1 then lines[#lines + 1] = "next()" end
  if step.task then
    tasks = tasks + 1
    -- back() and next() enter the task again: what an earlier attempt launched or typed is not
    -- this one's (a launch on the task's array by one wrong answer would count for the next)
    local function afresh(n)
      if n > 1 and i > 1 then
        lines[#lines + 1] = "back()"
        lines[#lines + 1] = "next()"
      end
    end
    for n, w in ipairs(step.wrongs) do
      afresh(n)
      wrongs = wrongs + 1
      if w.kind == "cuda" then
        edit("wrong" .. wrongs, w.file, w.code)
        if step.solution then type_code(step.solution.code) end
      else
        type_code(w.code)
      end
      lines[#lines + 1] = "check()"
    end
    afresh(#step.wrongs + 1)
    for file, f in pairs(step.files) do
      if f.solution then edit(".", file, f.solution) end
    end
    if step.solution then type_code(step.solution.code) end
    lines[#lines + 1] = "check()"
  end
end
lines[#lines + 1] = "next()" -- past the last step: the lesson is complete
spit(out .. "/lines", table.concat(lines, "\n") .. "\n")
spit(out .. "/edits", table.concat(edits, "\n") .. (#edits > 0 and "\n" or ""))
spit(out .. "/tasks", tasks .. "\n")
spit(out .. "/wrongs", wrongs .. "\n")
