-- debugger.lua: k:debug's checks before anything runs, on every backend: the launch
-- configuration and the arguments are checked as a launch checks them; the none backend, which
-- runs nothing, says so; and with no input at all the debugger quits and leaves the arrays as
-- they were; commands = {...} given in place of typing, and refused when they are not lines. The
-- debugging at a console is tests/debugger.sh's (it needs a console to type into).
local T = dofile("tests/lua/testlib.lua")
T.plan(8)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

local INC = [[
__global__ void inc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
]]
local k = cuda.kernel(INC)
local a = cuda.full(64, 5)

test("k:debug needs a launch configuration", function()
  checkerr("k:debug needs a launch configuration, as a launch does: "
    .. "k:debug{blocks, threads}(args...)", k.debug, k, 2)
  checkerr("k:debug needs a launch configuration", k.debug, k)
end)

test("a bad configuration is named as a launch names it", function()
  checkerr("grid.x must be a whole number of at least 1, got 0", k.debug, k, { 0, 32 })
  checkerr("a launch configuration is {grid, block}", k.debug, k, { 2 })
end)

test("arguments are checked before anything runs", function()
  local go = k:debug{ 1, 64 }
  if cuda.backend() == "none" then -- where nothing runs, that comes first
    return checkerr("the none backend runs nothing", go, a)
  end
  checkerr("inc(float *a, int n) takes 2 arguments, got 1", go, a)
  checkerr("argument 1 (float *a): expected a cuda.Array, got number", go, 1, 64)
end)

test("the none backend runs nothing to debug, and says what to do", function()
  if cuda.backend() ~= "none" then
    check(k.debug, "k:debug is a method of kernels")
    return
  end
  checkerr("k:debug runs the kernel, and the none backend runs nothing (it only compiles and "
    .. "checks launches): cuda.use(\"sim\")", k:debug{ 1, 64 }, a, 64)
end)

-- Standard input is tests/run.sh's /dev/null: the debugger's first prompt reads its end.
if cuda.backend() == "none" or os.execute("test -t 0") then
  T.skip("with no input the debugger quits", "needs the simulator and input that is not a terminal")
else
  test("with no input the debugger quits, and the array is as it was", function()
    k:debug{ 1, 64 }(a, 64)
    checkeq(a[0], 5.0)
    checkeq(a[63], 5.0)
  end)
end

test("commands that are not lines of text are refused before anything runs", function()
  checkerr("commands must be a table of the lines to type at the debugger's prompt, got string",
    k.debug, k, { 1, 64, commands = "continue" })
  checkerr("commands[2] must be a string (a line typed at the prompt), got number", k.debug, k,
    { 1, 64, commands = { "break 3", 4 } })
  checkerr("commands[1] holds a line break: give each line as a string of its own", k.debug, k,
    { 1, 64, commands = { "break 3\ncontinue" } })
  local many = {}
  for i = 1, 1001 do many[i] = "where" end
  checkerr("commands has 1001 lines; at most 1000", k.debug, k, { 1, 64, commands = many })
end)

if cuda.backend() == "none" then
  T.skip("commands are read in place of the console's", "needs the simulator")
  T.skip("the end of the commands quits", "needs the simulator")
else
  test("commands are read in place of the console's, each shown as typed", function()
    local dbg = require "debugger"
    local said, out = {}, dbg.out
    dbg.out = function(text) said[#said + 1] = text end
    local b = cuda.full(64, 5)
    local cmds = { "break 3 if i == 37", "continue", "print i", "print a[i]@2", "continue" }
    local ok, err = pcall(function() k:debug{ 1, 64, commands = cmds }(b, 64) end)
    dbg.out = out
    check(ok, tostring(err))
    local text = table.concat(said, "\n")
    check(text:find("(cuda-debug) print i\ni = 37", 1, true), text)
    check(text:find("(cuda-debug) print a[i]@2\n", 1, true), text)
    check(text:find("{5, 5}", 1, true), text)
    check(text:find("has finished", 1, true), text)
    checkeq(b[0], 6.0) -- the launch ran to the end, as an ordinary launch does
    checkeq(b[63], 6.0)
    checkeq(cmds[1], "break 3 if i == 37") -- the learner's table is read, not changed
  end)

  test("the end of the commands quits, as the end of input does", function()
    local dbg = require "debugger"
    local said, out = {}, dbg.out
    dbg.out = function(text) said[#said + 1] = text end
    local b = cuda.full(64, 5)
    local ok, err = pcall(function() k:debug{ 1, 64, commands = {} }(b, 64) end)
    dbg.out = out
    check(ok, tostring(err))
    check(table.concat(said, "\n"):find("quit (end of input)", 1, true), table.concat(said, "\n"))
    checkeq(b[0], 5.0)
  end)
end

return T.done()
