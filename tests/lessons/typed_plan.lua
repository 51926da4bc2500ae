-- tests/lessons/typed_plan.lua LESSON.md OUTDIR: what a learner types to pass every task of a
-- lesson, and every way it names to fail one, read from the lesson file by the engine's own
-- parser: OUTDIR/lines (one line typed per line: lesson(N), next() up to each task; then each of
-- the task's wrong answers, a ```lua wrong typed line by line, or edit() for a ```cuda wrong with
-- the task's ```lua solution after it (in a step with no kernel to edit, a line typed puts the
-- wrong kernel in the file, and another puts back the reference of the steps before), as
-- --verify-lessons runs them, each followed by check();
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

-- The lesson's reference for FILE as the steps before step i leave it: a task that uses the
-- kernel an earlier task made has no reference of its own.
local function reference_before(i, file)
  for j = i - 1, 1, -1 do
    local f = lesson.steps[j].files[file]
    if f and f.solution then return f.solution end
  end
end

-- A kernel put over the learner's FILE by a line typed at the prompt, as a learner changes the
-- file from outside: for a wrong kernel in a step with no kernel to edit (edit() opens none).
local function put(dir, file, code)
  os.execute("mkdir -p '" .. out .. "/solutions/" .. dir .. "'")
  local from = out .. "/solutions/" .. dir .. "/" .. file
  spit(from, code .. "\n")
  lines[#lines + 1] = string.format('do local f, src = io.open(workfile %q, "wb"), ' ..
    'io.open(%q, "rb"); f:write(src:read("a")); f:close(); src:close() end', file, from)
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
      local edited = step.files[w.file] and step.files[w.file].edit
      if w.kind == "cuda" and edited then
        edit("wrong" .. wrongs, w.file, w.code)
      elseif w.kind == "cuda" then
        put("wrong" .. wrongs, w.file, w.code)
      else
        type_code(w.code)
      end
      if w.kind == "cuda" and step.solution then type_code(step.solution.code) end
      lines[#lines + 1] = "check()"
      if w.kind == "cuda" and not edited then -- the file back as the earlier steps left it
        put("restore" .. wrongs, w.file, assert(reference_before(i, w.file),
          "a wrong " .. w.file .. " in a step with no kernel to edit, and no earlier reference"))
      end
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
