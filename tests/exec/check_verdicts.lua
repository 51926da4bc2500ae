-- check_verdicts.lua: the verdict of check() at the prompt is the lesson's own, whatever the
-- learner replaced first: string.format, type, tostring, cuda.compare, cuda.kernel, the checks'
-- expect.run (through require), _G's metatable, the string metatable. A wrong kernel is still
-- refused with the lesson's message, a right one still passes, the lesson's own text reads as
-- written, and after check() the learner's replacements are theirs again.
--
-- Each session is a child cudalab on this backend, with its own workspace and state, so the
-- learner's replacements reach nothing of this test's process.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(7)

local run = require "lesson_run"
local tmp = assert(run.tempdir(), "a temporary folder")

local WRONG = [[
__global__ void dbl(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 2.0f;
}]]
local RIGHT = [[
__global__ void dbl(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2.0f * a[i];
}]]

-- What a learner may have typed before check(): each a replacement a check relies on.
local REPLACE = [[
pcall(function() require("lesson_check").run = function() return true end end)
pcall(function() cuda.compare = function() return true, {} end end)
pcall(function() cuda.kernel = function() return setmetatable({}, {__index = function()
  return function() end end}) end end)
string.format = function() return "" end
string.rep = function() return "" end
tostring = function() return "42" end
type = function() return "number" end
getmetatable("").__index = setmetatable({}, {__index = string})
setmetatable(_G, {__index = function() return 41 end})
]]

-- The output of a session that opens lesson 2 at its task, saves `kernel` as the learner's
-- file, runs `before`, then check(), then `after`.
local session_no = 0
local function session(kernel, before, after)
  session_no = session_no + 1
  -- next() up to the task: the lesson's steps before it have no task
  return T.child_session(tmp .. "/s" .. session_no, "lesson(2)\nfor _ = 1, 30 do next() end\n" ..
    "edit [==[\n" .. kernel .. "\n]==]\n" .. (before or "") .. "\ncheck()\n" .. (after or ""))
end

test("a wrong kernel is refused after every replacement, with the lesson's own message",
  function()
  local plain = session(WRONG)
  local fooled = session(WRONG, REPLACE)
  for _, out in ipairs({ plain, fooled }) do
    check(out:find("Not yet: on n = 1000, not a multiple of the block (grid 4, blocks of 256)",
      1, true), out)
    check(not out:find("Correct.", 1, true), out)
    check(out:find("hint() gives a hint (1 of 3); skip() runs the reference solution.", 1, true),
      "the lesson's text is written by the real string.format: " .. out)
  end
end)

test("a right kernel passes after every replacement", function()
  local out = session(RIGHT, REPLACE)
  check(out:find("Correct. next() goes on.", 1, true), out)
end)

test("after check() the learner's replacements are theirs again", function()
  local out = session(WRONG, REPLACE, [[
io.stdout:write("after: ", rawequal(getmetatable(_G), nil) and "no meta" or "meta", " ",
  string.format("%d", 7) == "" and "own format" or "real format", " ",
  type(1) == "number" and type("s") == "number" and "own type" or "real type", "\n")]])
  check(out:find("after: meta own format own type", 1, true), out)
end)

test("a global the learner named like nothing standard is untouched by check()", function()
  local out = session(WRONG, "mine = 5; cuda.mine = 6",
    [[io.stdout:write("mine ", rawget(_G, "mine"), " ", rawget(cuda, "mine"), "\n")]])
  checkeq(out:match("mine (%d+ %d+)"), "5 6", out)
end)

test("cudalab.standard: with() passes results and errors through and puts values back",
  function()
  local standard = require "cudalab.standard"
  local real_format = string.format
  local mine = function() return "mine" end
  string.format = mine
  local a, b = standard.with(function(x) return string.format("%d", x), x + 1 end, 41)
  checkeq(a, "41", "the kept string.format inside")
  checkeq(b, 42, "every result")
  check(string.format == mine, "the learner's own after")
  local ok, err = pcall(standard.with, function() error({ code = 7 }) end)
  check(not ok and type(err) == "table" and err.code == 7, "the error value as it was")
  check(string.format == mine, "the learner's own after an error")
  -- past the 20 stack slots a C function is given: with() makes room for them
  local many = {}
  for i = 1, 300 do many[i] = i end
  checkeq(select("#", standard.with(function(...) return ... end, table.unpack(many))), 300,
    "300 arguments and results")
  check(pcall(lessons, table.unpack(many)), "a lesson command given 300 arguments")
  -- a field the function itself changes keeps its new value (a module's real function)
  standard.with(function() string.format = print end)
  check(string.format == print, "what f set stays")
  string.format = real_format
end)

test("cudalab.standard: global() is what start-up left under a name, not the learner's", function()
  local standard = require "cudalab.standard"
  local real_math = math
  check(standard.global("math") == real_math and standard.global("cuda") == cuda, "math, cuda")
  math = { mine = true }
  check(standard.global("math") == real_math, "a replaced math: start-up's")
  math = real_math
  rawset(_G, "learners_own", 1)
  checkeq(standard.global("learners_own"), nil, "a name start-up did not set")
  rawset(_G, "learners_own", nil)
  checkeq(standard.global(42), nil)
  T.checkerr("bad argument #1 to 'cudalab.standard.global' (value expected)", standard.global)
end)

test("cudalab.standard: bad arguments are refused with their names", function()
  local standard = require "cudalab.standard"
  T.checkerr("bad argument #1 to 'cudalab.standard.adopt' (table expected, got number)",
    standard.adopt, 5)
  T.checkerr("bad argument #1 to 'cudalab.standard.set' (table expected, got no value)",
    standard.set)
  T.checkerr("bad argument #2 to 'cudalab.standard.set' (value expected)", standard.set, {})
  T.checkerr("attempt to call a nil value", standard.with, nil)
  T.checkerr("bad argument #1 to 'cudalab.standard.with' (value expected)", standard.with)
end)

run.rmdir(tmp)
