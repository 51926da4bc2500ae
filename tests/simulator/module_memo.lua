-- module_memo.lua: the simulator keeps parsed modules by their PTX, so a kernel loaded again
-- from the kernel cache is not parsed again. Sharing must never be visible: modules with
-- __device__ variables get their own copy per load, and a shared module outlives any one of
-- the kernels that use it.
local T = dofile("tests/lua/testlib.lua")
T.plan(3)
local test, check, checkeq = T.test, T.check, T.checkeq

local COUNTER = [[
__device__ int counter;
__global__ void bump(int *out) { counter += 1; out[0] = counter; }
]]

test("each load of a module with a __device__ variable has its own", function()
  local out = cuda.zeros(1, "i32")
  local first = cuda.kernel(COUNTER)
  first[{1, 1}](out); first[{1, 1}](out)
  checkeq(out[0], 2)
  local second = cuda.kernel(COUNTER) -- the same source: a kernel cache hit, a fresh variable
  second[{1, 1}](out)
  checkeq(out[0], 1)
  first[{1, 1}](out)
  checkeq(out[0], 3)
end)

local ADD = [[
__global__ void add_k(float *a, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += v;
}
]]

test("a shared module outlives the kernels that loaded it first", function()
  local n = 1000
  local a = cuda.arange(n)
  local k1, k2 = cuda.kernel(ADD), cuda.kernel(ADD)
  k1 = nil
  collectgarbage(); collectgarbage()
  k2[{4, 256}](a, n, 2.5)
  local ref = {}
  for i = 1, n do ref[i] = (i - 1) + 2.5 end
  check(cuda.compare(a, ref, {rtol = 0, atol = 0}), "k2 still runs")
  local k3 = cuda.kernel(ADD) -- loaded again after both of the first two could be released
  k2 = nil
  collectgarbage()
  k3[{4, 256}](a, n, 1)
  for i = 1, n do ref[i] = ref[i] + 1 end
  check(cuda.compare(a, ref, {rtol = 0, atol = 0}), "k3 runs")
end)

test("more distinct modules than the table holds all keep working", function()
  local ks = {}
  for i = 1, 48 do
    ks[i] = cuda.kernel(string.format("__global__ void set%d(int *o) { o[%d] = %d; }", i, i - 1, i * 7))
  end
  local out = cuda.zeros(48, "i32")
  for i = 48, 1, -1 do ks[i][{1, 1}](out) end
  local ref = {}
  for i = 1, 48 do ref[i] = i * 7 end
  check(cuda.compare(out, ref, {rtol = 0, atol = 0}), "every kernel wrote its element")
  ks = nil
  collectgarbage()
  local again = cuda.kernel("__global__ void set3(int *o) { o[2] = 21; }")
  out:fill(0)
  again[{1, 1}](out)
  checkeq(out[2], 21)
end)

return T.done()
