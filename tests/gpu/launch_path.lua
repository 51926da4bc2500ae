-- launch_path.lua: launches take the driver's cuLaunchKernel from the very first kernel of a
-- fresh engine, even when nothing before it needed a context on the Lua thread (libraries and
-- kernels are context-free, so a compile alone does not make one current). The first test must
-- stay first: it is the case a later test would hide.
local T = dofile("tests/lua/testlib.lua")
T.plan(2)
local test, check = T.test, T.check
local bench = require "cudalab_bench" -- the C launch loop make bench anchors on

local SRC = [[
extern "C" __global__ void add(int *a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += v;
}
]]

test("the first kernel of a fresh engine launches through cuLaunchKernel", function()
  local m = cuda.module(SRC) -- before any array, sync or device query
  local l = m.add[{4, 256}]
  local a = cuda.arange(1000, "i32")
  bench.c_launch_loop("cuLaunchKernel", l, 2, a, 1000, 5)
  l(a, 1000, 1)
  local ref = {}
  for i = 1, 1000 do ref[i] = (i - 1) + 2 * 5 + 1 end
  local _, r = cuda.compare(a, ref, {rtol = 0, atol = 0})
  check(r.ok, tostring(r))
end)

test("cudaLaunchKernel and cuLaunchKernel loops and a Lua loop give the same result", function()
  local m = cuda.module(SRC)
  local l = m.add[{40, 256}]
  local n = 10000
  local x, y, z = cuda.arange(n, "i32"), cuda.arange(n, "i32"), cuda.arange(n, "i32")
  bench.c_launch_loop(l, 100, x, n, 3)
  bench.c_launch_loop("cuLaunchKernel", l, 100, y, n, 3)
  for _ = 1, 100 do l(z, n, 3) end
  local ref = {}
  for i = 1, n do ref[i] = (i - 1) + 300 end
  for _, a in ipairs({x, y, z}) do
    local _, r = cuda.compare(a, ref, {rtol = 0, atol = 0})
    check(r.ok, tostring(r))
  end
end)

return T.done()
