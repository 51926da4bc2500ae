-- calls.lua: how recursion, device assert and the device heap fail on the simulator, as a learner
-- meets it: the launch error's text, and that the engine goes on working afterwards. The results
-- of working kernels are in tests/corpus/calls.lua; the C-level cases in tests/sim/test_calls.c.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(5)

local function has_all(err, wants)
  for _, want in ipairs(wants) do check(err:find(want, 1, true), "'" .. want .. "' in: " .. err) end
end

local DOWN = cuda.kernel[[
__device__ int down(int n) {
  int keep[8]; for (int i = 0; i < 8; i++) keep[i] = n + i;
  if (n <= 0) return 0;
  int s = down(n - 1); volatile int *k = keep; return s + k[n & 7];
}
__global__ void k(int *out, int d) { out[threadIdx.x] = down(d); }]]

-- What down(d) returns: level n adds keep[n & 7] = n + (n & 7).
local function down_ref(d)
  local s = 0
  for n = 1, d do s = s + n + (n & 7) end
  return s
end

test("a failed assert is a launch error in the GPU's words", function()
  local k = cuda.kernel[[
__global__ void check_all(const int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(x[i] != 3);
}]]
  local x = cuda.array({0, 1, 2, 3, 4}, "i32")
  local ok, err = pcall(k[{1, 32}], x, 5)
  check(not ok)
  has_all(err, {"device-side assert triggered", "kernel.cu:3: void check_all(const int *, int): block: [0,0,0], thread: [3,0,0] Assertion `x[i] != 3` failed.",
                "in kernel check_all"})
  k[{1, 32}](x, 3) -- the engine goes on: the assert holds for the first three
end)

test("recursion past the call stack is a stack overflow, not a wrong answer", function()
  local out = cuda.array(32, "i32")
  DOWN[{1, 32}](out, 10)
  checkeq(out[0], down_ref(10), "depth 10 runs")
  local ok, err = pcall(DOWN[{1, 32}], out, 100)
  check(not ok)
  has_all(err, {"stack overflow", "deep to down", "1024", "cudaLimitStackSize", "in kernel k, block (0,0,0), thread (0,0,0)",
                "kernel.cu:4"})
end)

test("cuda.simopts{stack = bytes} sizes the call stack, and checks the size", function()
  local out = cuda.array(32, "i32")
  local before = cuda.simopts().stack
  checkeq(before, 1024, "cudaLimitStackSize's default")
  cuda.simopts{stack = 8192}
  DOWN[{1, 32}](out, 100)
  checkeq(out[0], down_ref(100), "100 deep with 8 KiB")
  cuda.simopts{stack = before}
  checkerr("stack must be a whole number of bytes per thread from 16 to", cuda.simopts, {stack = 4})
  checkerr("stack must be a whole number of bytes per thread from 16 to", cuda.simopts, {stack = 1.5})
  checkerr("stack must be a whole number of bytes per thread from 16 to", cuda.simopts, {stack = 1 << 40})
  checkeq(cuda.simopts().stack, before, "a refused size changes nothing")
end)

test("a bad free and a bad function pointer are launch errors that name them", function()
  local m = cuda.module[[
__global__ void twice(int *p) { int *q = (int *)malloc(4); free(q); free(q); }
__global__ void call_null(int *p, long long f) { p[0] = ((int (*)(int))f)(1); }]]
  local p = cuda.array(1, "i32")
  local ok, err = pcall(m.twice[{1, 1}], p)
  check(not ok)
  has_all(err, {"double free: free or delete of 0x", "byte 0 of heap block #", "(4 bytes", "in kernel twice", "kernel.cu:1"})
  ok, err = pcall(m.call_null[{1, 1}], p, 0)
  check(not ok)
  has_all(err, {"indirect call through 0x0, which is not the address of a device function", "in kernel call_null"})
end)

test("a freed heap block's use is a use after free naming the block and its free", function()
  local k = cuda.kernel[[
__global__ void stale(int *out, int *other) {
  int *p = (int *)malloc(16 * sizeof(int)); p[threadIdx.x] = 7;
  free(p);
  out[0] = other[0] + p[2];
}]]
  local out, other = cuda.array(1, "i32"), cuda.array({5}, "i32")
  local ok, err = pcall(k[{1, 1}], out, other)
  check(not ok)
  has_all(err, {"use after free: global load of 4 bytes", "byte 8 of heap block #", "(64 bytes",
                "freed by block (0,0,0), thread (0,0,0) at kernel.cu:3", "in kernel stale", "kernel.cu:4"})
  check(not err:find("out-of-bounds", 1, true), "not called out of bounds: " .. err)
  local m = cuda.module[[
__global__ void twice(int *p) { int *q = (int *)malloc(4);
  free(q);
  free(q); }
__global__ void foreign(int *p) { free(p); }]]
  ok, err = pcall(m.twice[{1, 1}], out)
  check(not ok)
  has_all(err, {"double free: free or delete of 0x", "(4 bytes", "freed by block (0,0,0), thread (0,0,0) at kernel.cu:2",
                "kernel.cu:3"})
  ok, err = pcall(m.foreign[{1, 1}], out)
  check(not ok)
  has_all(err, {"free or delete of 0x", "not a live block of the device heap", "not returned by malloc or new in a kernel",
                "in kernel foreign"})
  k = cuda.kernel[[__global__ void fine(int *out) { int *p = (int *)malloc(8); p[1] = 3; out[0] = p[1]; free(p); }]]
  k[{1, 1}](out)
  checkeq(out[0], 3, "the engine goes on, and a live block is used as before")
end)

T.done()
