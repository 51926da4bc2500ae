-- debugger.lua: k:debug's checks before anything runs, on every backend: the launch
-- configuration and the arguments are checked as a launch checks them; the none backend, which
-- runs nothing, says so; and with no input at all the debugger quits and leaves the arrays as
-- they were. The debugging itself is tests/debugger.sh's (it needs a console to type into).
local T = dofile("tests/lua/testlib.lua")
T.plan(5)
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

return T.done()
