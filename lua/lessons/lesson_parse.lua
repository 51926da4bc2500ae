-- lesson_parse.lua: turns a lesson file (lessons/NN-name.md) into steps the
-- lesson engine can show, run and check. lessons/README.md is the reference
-- for the format; this file is its implementation.
--
-- A lesson is Markdown. Its `#` heading is the title, each `##` heading
-- starts a step (the text before the first `##` is step 1), and fenced code
-- blocks whose info string the engine knows become actions:
--
--   ```lua                 an example: shown and run when the step is shown
--   ```lua norun           shown, never run (too slow, or for reading)
--   ```lua error           shown and run; its last statement must raise
--   ```lua check           the task's check (hidden): passes when it returns true
--   ```lua solution        the reference answer (hidden): skip() and verify run it
--   ```lua wrong           a wrong answer (hidden): verify runs it; the check must fail
--   ```hint                one hint (hidden until the learner asks: hint())
--   ```hint TAG            the hint for a failed check that found TAG (bounds,
--                          race, ...: lesson_check.FINDINGS), given before the others
--   ```cuda edit=f.cu      the kernel the learner edits (edit() copies it to ./f.cu)
--   ```cuda solution=f.cu  the reference kernel for f.cu (hidden)
--   ```cuda wrong=f.cu     a wrong kernel for f.cu (hidden; verify only)
--   anything else          shown as it is (```cuda, ```text, ```sh ...)
--
-- Design stance: the parser is strict. A typo in an info string (```lua chek)
-- or a task without a solution would otherwise surface in front of a class;
-- here it is an error naming the file and line, which `verify` and the unit
-- tests turn into a failure the day before. It is pure Lua (no cuda), so the
-- unit tests run it without a GPU or the engine.

local M = {}
local assign_ids

local LUA_ROLES = { example = true, norun = true, error = true, check = true,
                    solution = true, wrong = true }

-- Splits an info string into its first word and the rest as words and
-- key=value pairs: "cuda edit=inc.cu" -> "cuda", {}, {edit = "inc.cu"}.
local function split_info(info)
  local lang, words, keys = nil, {}, {}
  for w in info:gmatch("%S+") do
    if not lang then lang = w
    else
      local k, v = w:match("^([%w_]+)=(.+)$")
      if k then keys[k] = v else words[#words + 1] = w end
    end
  end
  return lang or "", words, keys
end

local function new_step(title, line)
  return { title = title, line = line, items = {}, hints = {}, hint_for = {},
    files = {}, wrongs = {} }
end

-- Raises on a Lua block that does not compile. Examples are cut into statements as the prompt
-- cuts them (an expression alone is fine), and the error names the line within the lesson;
-- hidden blocks are plain chunks.
local function check_lua_syntax(role, code, line, where)
  if role == "example" or role == "error" then
    local ok, err = pcall(require("lesson_run").statements, code)
    if not ok then error("line " .. (line + (tonumber(err:match("^line (%d+)")) or 1)) ..
      ": Lua syntax error: " .. err:gsub("^line %d+: ", ""), 0) end
  elseif role ~= "norun" then
    local ok, err = load(code, "=" .. role)
    if not ok then error(where .. "Lua syntax error: " .. err, 0) end
  end
end

-- ```lua [ROLE]: an example shown (and run), or one of the task's hidden blocks.
local function add_lua_block(step, info, words, keys, code, line)
  local where = "line " .. line .. ": "
  local role = words[1] or "example"
  if not LUA_ROLES[role] or #words > 1 or next(keys) then
    error(where .. "unknown lua block '```" .. info .. "' (known: lua, lua norun, " ..
          "lua error, lua check, lua solution, lua wrong)", 0)
  end
  check_lua_syntax(role, code, line, where)
  if role == "wrong" then
    step.wrongs[#step.wrongs + 1] = { kind = "lua", code = code, line = line }
  elseif role == "check" or role == "solution" then
    if step[role] then error(where .. "a second ```lua " .. role .. " block in one step", 0) end
    step[role] = { code = code, line = line }
  else
    step.items[#step.items + 1] = { kind = role, code = code, line = line }
  end
end

-- ```hint [TAG]: a hint given in turn, or the one for a failed check that found TAG, which
-- must be a finding lesson_check knows (a misspelt tag would never be given).
local function add_hint_block(step, info, words, keys, code, line)
  local where = "line " .. line .. ": "
  if next(keys) or #words > 1 then
    error(where .. "unknown hint block '```" .. info .. "' (known: hint, hint TAG)", 0)
  end
  local tag = words[1]
  if not tag then
    step.hints[#step.hints + 1] = code
    return
  end
  local findings = require("lesson_check").FINDINGS
  if not findings[tag] then
    local known = {}
    for k in pairs(findings) do known[#known + 1] = k end
    table.sort(known)
    error(where .. "unknown finding '" .. tag .. "' in '```" .. info .. "' (known: " ..
      table.concat(known, ", ") .. ")", 0)
  end
  if step.hint_for[tag] then error(where .. "a second ```hint " .. tag .. " in one step", 0) end
  step.hint_for[tag] = code
end

-- ```cuda ROLE=FILE: the kernel file the learner edits, its solution, or a wrong version. The
-- file name must be plain, since edit() writes it in the learner's folder.
local function add_cuda_block(step, info, words, keys, code, line)
  local where = "line " .. line .. ": "
  local role, file = next(keys)
  if next(keys, role) or #words > 0 or not (role == "edit" or role == "solution" or
    role == "wrong") then
    error(where .. "unknown cuda block '```" .. info .. "' (known: cuda edit=FILE, " ..
          "cuda solution=FILE, cuda wrong=FILE)", 0)
  end
  if not file:match("^[%w_%-%.]+%.cu$") then
    error(where .. "kernel file name '" .. file .. "' must be a plain name ending in .cu", 0)
  end
  step.files[file] = step.files[file] or {}
  if role == "wrong" then
    step.wrongs[#step.wrongs + 1] = { kind = "cuda", file = file, code = code, line = line }
    step.files[file].wrong = true
    return
  end
  if step.files[file][role] then
    error(where .. "a second " .. role .. " kernel for " .. file, 0)
  end
  step.files[file][role] = code
  if role == "edit" then
    step.items[#step.items + 1] = { kind = "kernel", file = file, code = code, line = line }
  end
end

-- Adds one fenced block to the step. Raises "line N: why" on a block the
-- engine would misunderstand.
local function add_block(step, info, code, line)
  local lang, words, keys = split_info(info)
  if lang == "lua" then
    add_lua_block(step, info, words, keys, code, line)
  elseif lang == "hint" then
    add_hint_block(step, info, words, keys, code, line)
  elseif lang == "cuda" and next(keys) then
    add_cuda_block(step, info, words, keys, code, line)
  else
    step.items[#step.items + 1] = { kind = "show", lang = lang, code = code, line = line }
  end
end

-- The text lines of a step are kept as they are (Markdown reads well in a
-- terminal); blank runs are collapsed when shown.
local function add_text(step, text)
  local last = step.items[#step.items]
  if last and last.kind == "text" then last.text = last.text .. "\n" .. text
  else step.items[#step.items + 1] = { kind = "text", text = text } end
end

-- A step with a check is a task. Checks what the engine and verify rely on:
-- a task has a solution (skip() and verify need it), at least MIN_WRONG
-- wrong answers (verify runs each; one wrong answer proves little about a
-- check, since the ways to fool it are many) and hints (hint() gives them;
-- see MIN_HINTS); a kernel to edit has a reference kernel; solutions, wrong
-- answers and hints come only with a check.
M.MIN_WRONG = 3

-- A task needs at least MIN_HINTS untagged hints: hints go from a nudge to
-- the answer, and with one or two the first is already most of the answer.
-- Enforced only while STRICT_HINTS is on (a task with fewer is refused, as
-- one with too few wrong answers is); without it a task needs one hint, so
-- that an instructor's own lesson of a class loads with less. cudalab's own
-- lessons are held to MIN_HINTS hints and BUILTIN_MIN_WRONG wrong answers a
-- task by a test (tests/lua_unit/test_lessons.lua).
M.MIN_HINTS = 3
M.STRICT_HINTS = false
M.BUILTIN_MIN_WRONG = 8

local function validate_step(step)
  local where = "step '" .. step.title .. "' (line " .. step.line .. "): "
  local has_sol, nwrong = step.solution ~= nil, #step.wrongs
  for file, f in pairs(step.files) do
    if f.edit and not f.solution then
      error(where .. file .. " has no ```cuda solution=" .. file, 0)
    end
    if f.solution then has_sol = true end
  end
  if step.check then
    if not has_sol then
      error(where .. "the task has no solution (```lua solution or ```cuda solution=FILE)", 0)
    end
    if nwrong == 0 then
      error(where .. "the task has no wrong answer (```lua wrong or ```cuda wrong=FILE)", 0)
    end
    if nwrong < M.MIN_WRONG then
      error(string.format("%sthe task has %d wrong answer%s; it needs at least %d (```lua wrong " ..
        "or ```cuda wrong=FILE " ..
        "blocks), each a different way to fool the check", where, nwrong, nwrong == 1 and "" or "s",
          M.MIN_WRONG), 0)
    end
    if #step.hints == 0 then error(where .. "the task has no ```hint", 0) end
    if M.STRICT_HINTS and #step.hints < M.MIN_HINTS then
      error(string.format("%sthe task has %d hint%s; it needs at least %d (```hint blocks, " ..
        "from a nudge to the answer)", where, #step.hints, #step.hints == 1 and "" or "s",
        M.MIN_HINTS), 0)
    end
  elseif has_sol or nwrong > 0 or #step.hints > 0 or next(step.hint_for) then
    error(where .. "solutions, wrong answers and hints belong to a task, which needs a " ..
      "```lua check", 0)
  end
  step.task = step.check ~= nil
end

-- A step heading's title and its explicit id: "## Pad the tile {#pad}" is
-- titled "Pad the tile" with id "pad". Raises on an id that is not a plain
-- word (letters, digits, '-', '_').
local function heading(text, line)
  local title, id = text:match("^(.-)%s*{#([^}]*)}$")
  if not title then return text, nil end
  if not id:match("^[%w][%w_%-]*$") or #id > 60 then
    error("line " .. line .. ": {#" .. id .. "} is not a step id: letters, digits, '-' and '_', " ..
      "at most 60", 0)
  end
  return title, id
end

-- A heading as an id: lower case words joined by '-', at most 60 bytes.
local function slug(title)
  local s = title:lower():gsub("`", ""):gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", "")
  s = s:sub(1, 60):gsub("%-+$", "")
  return s ~= "" and s or "step"
end

-- Gives every step its stable id (lesson name + "/" + id is how a class
-- knows a task, so that adding or moving a step keeps every learner's
-- progress on the others): the heading's {#id}, else the heading as a slug,
-- the preamble "intro"; a repeated slug gets "-2", "-3". A repeated explicit
-- id is an error, since two tasks would share their grades.
assign_ids = function(lesson)
  local used = {}
  for i, s in ipairs(lesson.steps) do
    if s.explicit_id then
      if used[s.explicit_id] then
        error(lesson.name .. ": line " .. s.line .. ": the step id {#" .. s.explicit_id ..
          "} is used twice", 0)
      end
      used[s.explicit_id] = true
    end
  end
  for i, s in ipairs(lesson.steps) do
    local id = s.explicit_id
    if not id then
      local base = (i == 1 and s.line == 1) and "intro" or slug(s.title)
      id = base
      local k = 1
      while used[id] do k = k + 1; id = base .. "-" .. k end
      used[id] = true
    end
    s.id, s.explicit_id = id, nil
  end
end

-- parse(text, name) -> lesson | raises "name: line N: why".
-- lesson = {name, title, requires = {"cuda.sweep", ...}, steps = {step...}}
-- step = {id (stable: see assign_ids), title, line, items = {{kind = "text"|
--   "example"|"norun"|"error"|"kernel"|"show", ...}}, task, check, solution, hints (untagged, in
--   order), hint_for = {tag = hint}, files = {FILE = {edit, solution,
--   wrong = true}}, wrongs = {{kind = "lua"|"cuda", code, file, line}...}}
function M.parse(text, name)
  name = name or "lesson"
  local lesson = { name = name, title = name, requires = {}, steps = {} }
  local step = new_step(name, 1)
  local fence, info, code, start
  local n = 0
  local ok, err = pcall(function()
    for line in (text:gsub("\r\n", "\n") .. "\n"):gmatch("(.-)\n") do
      n = n + 1
      if fence then
        local close = line:match("^%s*([`~]+)%s*$")
        if close and close:sub(1, 1) == fence:sub(1, 1) and #close >= #fence then
          add_block(step, info, table.concat(code, "\n"), start)
          fence = nil
        else
          code[#code + 1] = line
        end
      else
        local f, i = line:match("^%s*(```+)%s*([^`]*)$")
        if not f then f, i = line:match("^%s*(~~~+)%s*(.*)$") end
        local req = line:match("^<!%-%-%s*cudalab:%s*requires%s+(.-)%s*%-%->")
        if f then
          fence, info, code, start = f, i:match("^(.-)%s*$"), {}, n
        elseif req then
          for r in req:gmatch("[^,%s]+") do lesson.requires[#lesson.requires + 1] = r end
        elseif line:match("^# ") and #lesson.steps == 0 and lesson.title == name then
          lesson.title = line:match("^#%s+(.-)%s*$")
          step.title = lesson.title
        elseif line:match("^## ") then
          lesson.steps[#lesson.steps + 1] = step
          local title, id = heading(line:match("^##%s+(.-)%s*$"), n)
          step = new_step(title, n)
          step.explicit_id = id
        else
          add_text(step, line)
        end
      end
    end
    if fence then error("line " .. start .. ": the code block is never closed", 0) end
    lesson.steps[#lesson.steps + 1] = step
    for _, s in ipairs(lesson.steps) do validate_step(s) end
  end)
  if not ok then error(name .. ": " .. tostring(err), 0) end
  -- A preamble with nothing but blank lines is not a step of its own.
  local first = lesson.steps[1]
  if #lesson.steps > 1 and not first.task then
    local empty = true
    for _, it in ipairs(first.items) do
      if it.kind ~= "text" or it.text:match("%S") then empty = false end
    end
    if empty then table.remove(lesson.steps, 1) end
  end
  assign_ids(lesson)
  return lesson
end

-- The requirement names a lesson declares that `has` (a function of a dotted
-- name such as "cuda.sweep") says are missing; an empty list when it can run.
function M.missing(lesson, has)
  local out = {}
  for _, r in ipairs(lesson.requires) do
    if not has(r) then out[#out + 1] = r end
  end
  return out
end

return M
