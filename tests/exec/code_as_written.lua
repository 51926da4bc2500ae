-- code_as_written.lua: every lesson shown the way a learner at an 80-column terminal sees it,
-- through the engine's own commands (lesson, hint, skip, next), and two promises about what
-- reaches the terminal:
--  * code is shown as written: every line of every code block a step shows (```lua examples,
--    ```lua norun, ```cuda, ```text, ```sh ..., the kernel to edit), every example statement as
--    echoed after "> " and ">> ", and what skip() shows (the Lua solution echoed, the reference
--    kernels) is printed verbatim as one line: never broken at spaces or re-spaced to fit, which
--    once turned a comment's tail into a line of code;
--  * the engine's prose fits: every other line it prints (text, tables, headers, hints, its
--    messages) is at most 80 columns wide. What examples print is program output, left as it is
--    (a line longer than the terminal is the terminal's to wrap), so it is not measured.
-- CODE_LESSONS=16 (a Lua pattern for the number) shows one lesson alone. One test per lesson.
local T = dofile("tests/lua/testlib.lua")
local test, check = T.test, T.check
local L = require "lessons"
local run = require "lesson_run"
local term = require "term"
local parse = require "lesson_parse"

local WIDTH = 80
term.width_override, term.color_override = WIDTH, false
local tmp = assert(run.tempdir(), "a temporary folder")
L.configure({ progress = false, workdir = tmp, quiet = true })

local only = os.getenv("CODE_LESSONS")
local entries = {}
for _, e in ipairs(L.list()) do
  if not only or string.format("%02d", e.number):match("^" .. only .. "$") then
    entries[#entries + 1] = e
  end
end
T.plan(#entries)

-- The lines a block of code is shown as: each line after `prefix`.
local function lines_of(code, prefix, out, where)
  for line in (code .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = { prefix .. line, where } end
end

-- A statement as echoed: its first line after "> ", the others after ">> ".
local function echo_lines(code, out, where)
  for _, st in ipairs(run.statements(code)) do
    local first = true
    for line in (st.text .. "\n"):gmatch("([^\n]*)\n") do
      out[#out + 1] = { (first and "> " or ">> ") .. line, where }
      first = false
    end
  end
end

-- Every line of code lesson l must show, as {text, "step N, line M"}.
local function expected_code(l)
  local want = {}
  for i, s in ipairs(l.steps) do
    for _, it in ipairs(s.items) do
      local where = "step " .. i .. ", the block at line " .. (it.line or "?")
      if it.kind == "example" or it.kind == "error" then
        echo_lines(it.code, want, where)
      elseif it.kind ~= "text" then
        lines_of(it.code, "    ", want, where)
      end
    end
    if s.solution then echo_lines(s.solution.code, want, "step " .. i .. ", its solution") end
    for file, f in pairs(s.files) do
      if f.solution then lines_of(f.solution, "    ", want, "step " .. i .. ", " .. file) end
    end
  end
  return want
end

-- Runs lesson l from its first step to its end as a learner who asks for every hint (the tagged
-- ones too) and skips every task. Returns the lines printed, each {text, output = true when an
-- example printed it}.
local function show_lesson(l)
  local shown, in_example = {}, 0
  local saved_print, saved_run = print, run.run
  print = function(...) -- luacheck: ignore 121
    local parts = table.pack(...)
    for k = 1, parts.n do parts[k] = tostring(parts[k]) end
    local text = table.concat(parts, "\t", 1, parts.n)
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do
      local echo = line:match("^>>? ") ~= nil
      shown[#shown + 1] = { line, output = in_example > 0 and not echo, echo = echo }
    end
  end
  run.run = function(code, env, opts)
    in_example = in_example + 1
    local r = table.pack(pcall(saved_run, code, env, opts))
    in_example = in_example - 1
    if not r[1] then error(r[2], 0) end
    return table.unpack(r, 2, r.n)
  end
  local ok, err = pcall(function()
    local C = L.commands
    C.lesson(l.number)
    for _ = 1, 2 * #l.steps + 2 do
      local S = L._S
      if S.cur ~= l then break end
      local s = l.steps[S.step]
      if s.task then
        for tag in pairs(s.hint_for) do
          S.found = tag
          C.hint()
        end
        for _ = 1, #s.hints do C.hint() end
        C.skip()
      end
      C.next()
    end
  end)
  print, run.run = saved_print, saved_run -- luacheck: ignore 121
  if not ok then error(err, 0) end
  check(L._S.cur == nil, "the lesson did not come to its end")
  return shown
end

for _, e in ipairs(entries) do
  local l = L.load(e)
  local missing = parse.missing(l, L.has)
  if #missing > 0 then
    T.skip("lesson " .. e.name, "needs " .. table.concat(missing, ", "))
  else
    test("lesson " .. e.name .. ": code shown as written, prose within " .. WIDTH .. " columns",
      function()
        local shown = show_lesson(l)
        local seen = {}
        for _, s in ipairs(shown) do seen[s[1]] = true end
        local bad = {}
        for _, w in ipairs(expected_code(l)) do
          if not seen[w[1]] then bad[#bad + 1] = w[2] .. ": " .. string.format("%q", w[1]) end
        end
        check(#bad == 0, #bad .. " line(s) of code not shown as written:\n  " ..
          table.concat(bad, "\n  ", 1, math.min(#bad, 8)))
        local code = {}
        for _, w in ipairs(expected_code(l)) do code[w[1]] = true end
        for _, s in ipairs(shown) do
          if not s.output and not s.echo and not code[s[1]] and not s[1]:match("^    ") then
            if term.len(s[1]) > WIDTH then bad[#bad + 1] = s[1] end
          end
        end
        check(#bad == 0, #bad .. " line(s) of prose wider than " .. WIDTH .. " columns:\n  " ..
          table.concat(bad, "\n  ", 1, math.min(#bad, 8)))
      end)
  end
end

run.rmdir(tmp)
return T.done()
