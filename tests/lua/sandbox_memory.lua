-- sandbox_memory.lua: require "cudalab.sandbox" (repl/bind/bind_sandbox.c), the cap on the Lua
-- state's memory that the grader sets for a submission: bad sizes, an attempt to raise it, and
-- an allocation past it failing as an ordinary memory error that leaves the state usable.
-- The cap lasts for the process, so this file sets it once, last.
package.path = "tests/lua/?.lua;" .. package.path
local T = require "testlib"
local sb = require "cudalab.sandbox"
T.plan(4)

T.test("a size that is not a positive whole number is refused", function()
  T.checkerr("the memory limit must be a number of bytes greater than zero", sb.memory_limit, 0)
  T.checkerr("the memory limit must be a number of bytes greater than zero", sb.memory_limit, -5)
  T.checkerr("number has no integer representation", sb.memory_limit, 1.5)
  T.checkerr("number expected, got string", sb.memory_limit, "lots")
end)

T.test("memory_used counts before and after a cap", function()
  local before = sb.memory_used()
  assert(math.type(before) == "integer" and before > 0, tostring(before))
  local used = sb.memory_limit(64 * 2^20)
  assert(used > 0 and used <= 64 * 2^20, tostring(used))
  assert(sb.memory_used() > 0)
end)

T.test("past the cap, an allocation fails and the state goes on", function()
  local ok, err = pcall(string.rep, "x", 128 * 2^20)
  assert(not ok and tostring(err):find("not enough memory", 1, true), tostring(err))
  local t = {}
  for i = 1, 1000 do t[i] = i end
  assert(#t == 1000)
end)

T.test("the cap can be lowered, never raised", function()
  T.checkerr("the Lua memory limit is 67108864 bytes and can only be lowered", sb.memory_limit, 2^30)
  assert(sb.memory_limit(48 * 2^20))
end)

return T.done()
