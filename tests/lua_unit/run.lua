-- run.lua: runs the unit tests of the Lua library (lua/) without the C engine.
--
--   lua5.4 tests/lua_unit/run.lua            all test files
--   lua5.4 tests/lua_unit/run.lua pretty     only test_pretty.lua
--
-- Run from the repository root. Each test file registers named tests with
-- test(name, fn); a test fails when fn raises, which check, checkeq and
-- checkerr do with a message that says what was expected. The output is TAP-
-- like ("ok - name", "not ok - name" plus the reason) and ends with one line
-- "N passed, M failed"; the exit status is non-zero if anything failed.
--
-- Design stance: no test framework, only the four helpers below (as in Lua's
-- own testes/), so a failure points straight at the check that failed. The
-- cuda module is replaced by fakes (fake_cuda.lua) that follow the C side's
-- documented interface; the tests check our behaviour, not the GPU's.

-- lua/ and its folders, as the engine puts them on the path (LUA_FOLDERS in repl/engine/interp.c;
-- test_requires.lua holds the two lists to lua/'s folders).
package.path = "lua/?.lua;lua/lessons/?.lua;lua/class/?.lua;lua/visual/?.lua;lua/debug/?.lua;" ..
  "tests/lua_unit/?.lua;" .. package.path

-- The helpers use local copies of the standard functions, so that a test may
-- shadow globals such as `table` or `pairs` (as a learner might) and still
-- be checked and cleaned up after.
local pairs, ipairs, type, tostring, select = pairs, ipairs, type, tostring, select
local rawget, rawset, pcall, error, require = rawget, rawset, pcall, error, require
local string, table = string, table

local FILES = { "format", "pretty", "meta", "complete", "help", "init", "lessons", "chart", "svg",
  "model", "markdown", "lesson_check", "roofline", "class_config", "class_record", "json",
  "class_report", "class_roster", "gradebook", "class_snapshot", "grade_slurm", "grade_challenge", "durations",
  "lesson_figures", "cexpr", "debugger", "debugger_warp", "requires" }

local tests = {}

-- Set by the helpers below when they fail, so the runner prints their message
-- alone; any other error (a bug in the code under test) gets a traceback.
local helper_failed = false

-- Raises msg as a failed check, pointing at the caller's caller's line.
local function fail(msg)
  helper_failed = true
  error(msg, 3)
end

-- Registers a test; the file it came from is kept for the report.
function test(name, fn)
  tests[#tests + 1] = { name = name, fn = fn }
end

-- Human-readable form of a value in failure messages.
local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) ~= "table" then return tostring(v) end
  local ok, pretty = pcall(require, "pretty")
  return ok and pretty.format(v, { depth = 5, raw_strings = false }) or tostring(v)
end

-- Deep equality for plain tables (keys and values), plain == otherwise.
local function equal(a, b, seen)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  seen = seen or {}
  if seen[a] == b then return true end
  seen[a] = b
  for k, v in pairs(a) do
    if not equal(v, b[k], seen) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

-- The lines of a printed result, for checks line by line.
function lines_of(text)
  local out = {}
  for l in (text .. "\n"):gmatch("(.-)\n") do out[#out + 1] = l end
  return out
end

-- Fails unless cond is true.
function check(cond, msg)
  if not cond then fail("check failed: " .. tostring(msg or "?")) end
end

-- Fails unless got equals want (deeply, for tables); shows both.
function checkeq(got, want, msg)
  if not equal(got, want) then
    fail(string.format("%s\n     got: %s\n    want: %s", msg or "values differ",
      show(got), show(want)))
  end
end

-- Fails unless f(...) raises an error whose message contains `sub`.
function checkerr(sub, f, ...)
  local ok, err = pcall(f, ...)
  if ok then fail("expected an error containing " .. show(sub) .. ", got none") end
  if not tostring(err):find(sub, 1, true) then
    fail("error " .. show(tostring(err)) .. " does not contain " .. show(sub))
  end
end

-- Calls fn with print replaced by a collector; returns everything printed,
-- one string per print call (arguments joined by tabs, as print does).
function capture(fn, ...)
  local lines, saved = {}, print
  print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    lines[#lines + 1] = table.concat(parts, "\t")
  end
  local ok, err = pcall(fn, ...)
  print = saved
  if not ok then error(err, 0) end
  return lines
end

-- Sets globals for the duration of fn and restores the previous values.
function with_globals(values, fn)
  local saved = {}
  for k, v in pairs(values) do saved[k] = { rawget(_G, k) }; rawset(_G, k, v) end
  local ok, err = pcall(fn)
  for k, old in pairs(saved) do rawset(_G, k, old[1]) end
  if not ok then error(err, 0) end
end

local only = arg and arg[1]
for _, name in ipairs(FILES) do
  if not only or only == name then dofile("tests/lua_unit/test_" .. name .. ".lua") end
end

local passed, failed = 0, 0
-- The plan line tests/run.sh holds the run to: every test registered above.
print("1.." .. #tests)
for _, t in ipairs(tests) do
  helper_failed = false
  local ok, err = xpcall(t.fn, function(e)
    return helper_failed and tostring(e) or debug.traceback(tostring(e), 2)
  end)
  if ok then
    passed = passed + 1
    print("ok - " .. t.name)
  else
    failed = failed + 1
    print("not ok - " .. t.name)
    print("  " .. tostring(err):gsub("\n", "\n  "))
  end
end
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
