-- lesson_run.lua: runs a lesson's code the way the prompt would, in the
-- learner's own globals, and keeps the kernel files a task asks them to edit.
--
-- An example block is cut into statements exactly as the REPL cuts input (a
-- statement is complete when it compiles; it is incomplete only while its
-- syntax error ends at <eof>), each is echoed after "> " and run, and an
-- expression's values are printed by the same printer as at the prompt. So
-- a lesson's transcript looks like the learner typed it, and whatever it
-- defines is there at the prompt afterwards.
--
-- Design stance:
--  * Lesson code runs through a proxy environment: reads fall through to _G,
--    writes go to _G and are also recorded. The engine uses the record to
--    notice when free play at the prompt has replaced something a later step
--    needs (`a = 5` where the lesson had an array) and puts it back, saying
--    so; the alternative, a separate environment per lesson, would hide the
--    lesson's variables from the learner, which is the point of running them.
--  * The proxy also offers `workfile(name)`: the path of the learner's copy
--    of a kernel to edit. Checks call cuda.kernel(workfile "mine.cu") and so
--    read the file the learner edited; verify points it at a temporary folder.

local M = {}

-- statements(code) -> list of {text, line} | raises on a syntax error.
-- Blank lines are dropped; a comment line stays, so the echo shows it.
function M.statements(code)
  local out, buf, first = {}, {}, nil
  local n = 0
  for line in (code .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    if #buf == 0 and line:match("^%s*$") then goto continue end
    if #buf == 0 then first = n end
    buf[#buf + 1] = line
    do
      local text = table.concat(buf, "\n")
      local f, err = load(text, "=lesson")
      if f or load("return " .. text, "=lesson") then
        out[#out + 1] = { text = text, line = first }
        buf = {}
      elseif not err:match("<eof>$") then
        error("line " .. first .. ": " .. err, 0)
      end
    end
    ::continue::
  end
  if #buf > 0 then error("line " .. first .. ": the statement is never finished", 0) end
  return out
end

-- The function each environment env() made runs after a block of code has run in it (run()),
-- by environment; weak keys, so that an environment no longer used goes.
local after_block = setmetatable({}, { __mode = "k" })

-- env(record, extra, also, first, after) -> a proxy environment over _G. Writes are
-- recorded in `record` (name -> value) when it is given, and in `also` too
-- (the lesson's own values, which its checks trust: see lessons.lua);
-- names in `extra` (helpers such as workfile) are seen before globals, and
-- then, when given, what first(name) settles (it returns true and the value
-- when it does): while a check runs, a function the lesson defined reads
-- the lesson's own values, as the check does. after(), when given, runs each
-- time run() has run a block in it, whether the block failed or not: the
-- engine then looks at what the block's code left in the values it recorded
-- (lesson_values.lua), which it cannot when each is assigned (`results = {}`
-- is filled afterwards).
function M.env(record, extra, also, first, after)
  local over = setmetatable(extra or {}, { __index = _G })
  local index = over
  if first then
    index = function(_, k)
      local v = rawget(over, k)
      if v ~= nil then return v end
      local settled, fv = first(k)
      if settled then return fv end
      return _G[k]
    end
  end
  local proxy = setmetatable({}, {
    __index = index,
    __newindex = function(_, k, v)
      _G[k] = v
      if record then record[k] = v end
      if also then also[k] = v end
    end,
  })
  after_block[proxy] = after
  return proxy
end

-- Runs one statement in env: tried first as `return <text>` so that an
-- expression prints its values (like the REPL). Returns true, or false and
-- the error message.
local function run_one(st, env, echo, show)
  local f = load("return " .. st.text, "=lesson", "t", env)
  if not f then
    local err
    f, err = load(st.text, "=lesson", "t", env)
    if not f then return false, err end
  end
  local res = table.pack(xpcall(f, function(e)
    if type(e) == "string" then return e end
    return tostring(e)
  end))
  -- A statement is one line of a transcript, so "lesson:1:" says nothing; the prompt's own
  -- errors carry no such prefix either.
  if not res[1] then return false, (tostring(res[2]):gsub("^lesson:%d+: ", "")) end
  if echo and res.n > 1 then show(table.unpack(res, 2, res.n)) end
  return true
end

-- run(code, env, opts) -> true | nil, message.
-- opts.echo: print each statement and its values; opts.show: the printer of
-- values (default print); opts.expect_error: the block's last statement must
-- raise (it is printed as the prompt prints errors) and no other may.
-- Without expect_error the block stops at the first error, which is printed
-- when echoing and returned.
local function run_statements(sts, env, opts, show, echo_code)
  for i, st in ipairs(sts) do
    if opts.echo then echo_code((st.text:gsub("\n", "\n>> "):gsub("^", "> "))) end
    local rok, err = run_one(st, env, opts.echo, show)
    local last = i == #sts
    if not rok then
      if opts.echo then print(tostring(err)) end
      if opts.expect_error and last then return true end
      return nil, tostring(err)
    elseif opts.expect_error and last then
      return nil, "the last statement of a ```lua error block ran without an error: " .. st.text
    end
  end
  return true
end

-- What a transcript prints (values, errors, the examples' own print) is
-- program output and goes out as it is, as at a plain Lua prompt: breaking a
-- line at spaces to the terminal's width would collapse its spacing (columns
-- of figures, the tab between two values) and pass for a different output. A
-- line wider than the terminal is left for the terminal to wrap. The echoed
-- code is never re-flowed either.
function M.run(code, env, opts)
  opts = opts or {}
  local ok, sts = pcall(M.statements, code)
  if not ok then return nil, sts end
  local after = after_block[env]
  local res = table.pack(pcall(M.as_lesson, run_statements, sts, env, opts, opts.show or print,
    print))
  if after then after() end
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- as_lesson(f, ...) -> f's results: f runs as lesson code (cuda._lesson), so that the lesson's
-- own kernels it launches are not held to a class's kernel time limit, which is for the
-- learner's kernels: a lesson's example sized for a GPU may take seconds on a slow simulator.
-- Every block run() runs is the lesson's (examples, reference solutions); the engine runs
-- checks through it too. A build with no cuda._lesson just calls f.
function M.as_lesson(f, ...)
  local cuda = rawget(_G, "cuda")
  local mark = type(cuda) == "table" and rawget(cuda, "_lesson")
  if mark then return mark(f, ...) end
  return f(...)
end

local function shq(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- write_file(path, text) -> true | nil, why. Atomic: the text goes to a temporary file beside
-- path (made exclusively, so a FIFO or a link planted there is never opened), every write and
-- the close are checked, and only then is it renamed over path. On a full disk the old file
-- stays as it was (a learner's kernel is never replaced by an empty one) and the caller hears
-- why.
function M.write_file(path, text)
  return require("cudalab.files").write_atomic(path, text, "shared")
end

function M.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- A fresh private folder (mkdtemp, 0700, checked to be this user's) for
-- verify's kernel files and the grader's work; nil and why when none can be
-- made. Never a name made first and created after: another account could
-- make that folder first and swap what is put in it.
local made = {}
function M.tempdir(prefix)
  local path, why = require("cudalab.files").mkdtemp(prefix or "cudalab")
  if path then made[path] = true end
  return path, why
end

-- Removes a folder tempdir made, with everything in it (rm does not follow
-- links); any other path is left alone.
function M.rmdir(dir)
  if dir and made[dir] then
    os.execute("rm -rf -- " .. shq(dir))
    made[dir] = nil
  end
end

M.shq = shq

return M
