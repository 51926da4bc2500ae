-- tests/lessons/typed_plan.lua LESSON.md OUTDIR: what a learner types to pass every task of a
-- lesson, read from the lesson file by the engine's own parser: OUTDIR/lines (one line typed per
-- line: lesson(N), next() up to each task, the task's ```lua solution typed line by line, or
-- edit() for a kernel task, then check()), OUTDIR/solutions/FILE (the reference kernels, which
-- the test's editor copies over the learner's file when edit() opens it) and OUTDIR/tasks (how
-- many checks must pass).
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
local lines, tasks = { string.format("lesson(%d)", tonumber(number)) }, 0
os.execute("mkdir -p '" .. out .. "/solutions'")
for i, step in ipairs(lesson.steps) do
  if i > 1 then lines[#lines + 1] = "next()" end
  if step.task then
    tasks = tasks + 1
    for file, f in pairs(step.files) do
      if f.solution then
        spit(out .. "/solutions/" .. file, f.solution .. "\n")
        lines[#lines + 1] = "edit()"
      end
    end
    if step.solution then
      -- Typed as a learner types: a Tab would ask for completion, so indentation is spaces.
      for line in (step.solution.code .. "\n"):gmatch("(.-)\n") do
        lines[#lines + 1] = (line:gsub("\t", "  "))
      end
    end
    lines[#lines + 1] = "check()"
  end
end
lines[#lines + 1] = "next()" -- past the last step: the lesson is complete
spit(out .. "/lines", table.concat(lines, "\n") .. "\n")
spit(out .. "/tasks", tasks .. "\n")
