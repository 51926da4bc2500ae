-- testlib.lua: the few assertions the Lua test files share (after Lua's own testes/). Each
-- check prints "ok - name" or "not ok - name: why"; tests/run.sh counts those lines.
local T = {}
local passed, failed = 0, 0

local function report(ok, name, why)
  if ok then
    passed = passed + 1
    print("ok - " .. name)
  else
    failed = failed + 1
    print("not ok - " .. name .. ": " .. tostring(why))
  end
end

-- Runs f as a named test; an error inside fails it with the message.
function T.test(name, f)
  local ok, err = pcall(f)
  report(ok, name, err)
end

function T.check(cond, msg)
  if not cond then error(msg or "check failed", 2) end
end

function T.checkeq(got, want, msg)
  if got ~= want then
    error(string.format("%s: got %s, want %s", msg or "values differ", tostring(got), tostring(want)), 2)
  end
end

-- f(...) must raise an error whose message contains `needle` (plain text).
function T.checkerr(needle, f, ...)
  local ok, err = pcall(f, ...)
  if ok then error("expected an error containing '" .. needle .. "', got none", 2) end
  if not tostring(err):find(needle, 1, true) then
    error(string.format("error '%s' does not contain '%s'", tostring(err), needle), 2)
  end
end

-- Maximum absolute difference between two Lua sequences, for checks against CPU references.
function T.maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

function T.done()
  io.stdout:flush()
  return failed == 0
end

return T
