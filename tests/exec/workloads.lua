-- workloads.lua: every kernel in kernels/ run and checked against a CPU reference, including
-- the seed article's two workloads: on 10,000,000 elements on the GPU (make test-gpu), on fewer
-- under the simulator (make test), which runs each thread on the CPU. Tests of what only a GPU
-- has (events, device memory) are skipped on the simulator.
local T = dofile("tests/lua/testlib.lua")
T.plan(14) -- four of them (gpu_test) skip on the simulator
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local bench = require "cudalab_bench" -- the C launch loop make bench anchors on
local GPU = cuda.backend() == "cuda"
local N = GPU and 10000000 or 100000
local function gpu_test(name, f) if GPU then test(name, f) else T.skip(name, "needs a GPU") end end
local function blocks(n, b) return (n + b - 1) // b end

gpu_test("the device is the GPU", function()
  local d = cuda.device()
  checkeq(d.backend, "cuda")
  check(d.name:find("H200") or d.name:find("H100") or d.sm_count > 0, d.name)
  check(d.cc == "9.0" or d.cc ~= nil)
  print("# " .. d.name .. ", " .. d.sm_count .. " SMs, CC " .. d.cc .. ", driver " .. d.driver_version)
end)

test("a[i] += 1 on " .. N .. " f32 matches the CPU", function()
  local k = cuda.kernel("inc.cu")
  local h = cuda.host(N, "f32")
  for i = 0, N - 1, 1 do h[i] = (i % 1000) * 0.25 end
  local a = cuda.array(h)
  k[{blocks(N, 256), 256}](a, N)
  local ref = {}
  for i = 1, N do ref[i] = ((i - 1) % 1000) * 0.25 + 1 end
  local _, r = cuda.compare(a, ref, {rtol = 0, atol = 0})
  check(r.ok, tostring(r))
end)

test("cudalab_bench.c_launch_loop launches as many times as a Lua loop, with the same arguments", function()
  local k = cuda.kernel("inc.cu")
  local n = 1000
  local from_c, from_lua = cuda.arange(n), cuda.arange(n)
  bench.c_launch_loop(k[{blocks(n, 256), 256}], 7, from_c, n)
  local l = k[{blocks(n, 256), 256}]
  for _ = 1, 7 do l(from_lua, n) end
  local ref = {}
  for i = 1, n do ref[i] = (i - 1) + 7 end
  check(cuda.compare(from_c, ref, {rtol = 0, atol = 0}), "C loop: every element + 7")
  check(cuda.compare(from_lua, ref, {rtol = 0, atol = 0}), "Lua loop: every element + 7")
  bench.c_launch_loop(l, 0, from_c, n) -- no launch at all
  check(cuda.compare(from_c, ref, {rtol = 0, atol = 0}), "0 launches change nothing")
  bench.c_launch_loop("cuLaunchKernel", l, 3, from_c, n) -- the call cudalab's launches make
  for i = 1, n do ref[i] = ref[i] + 3 end
  check(cuda.compare(from_c, ref, {rtol = 0, atol = 0}), "cuLaunchKernel loop: every element + 3 more")
end)

test("sin(x)*cos(x)+sqrt(|x|) in f64 on " .. N .. " matches the CPU", function()
  local k = cuda.kernel("sincos.cu")
  local xs = cuda.rand(N, "f64", 1):tolist()
  for i = 1, N do xs[i] = xs[i] * 20 - 10 end -- [-10, 10): negative values exercise fabs
  local x, out = cuda.array(xs, "f64"), cuda.array(N, "f64")
  k[{blocks(N, 256), 256}](x, out, N)
  local sin, cos, sqrt, abs = math.sin, math.cos, math.sqrt, math.abs
  for i = 1, N do local v = xs[i]; xs[i] = sin(v) * cos(v) + sqrt(abs(v)) end
  local _, r = cuda.compare(out, xs, {rtol = 1e-14, atol = 1e-15})
  check(r.ok, tostring(r))
end)

test("vector_add and saxpy match the CPU", function()
  local n = GPU and 1000003 or 100003
  local a, b, c = cuda.rand(n, "f32", 2), cuda.rand(n, "f32", 3), cuda.array(n)
  cuda.kernel("vector_add.cu")[{blocks(n, 256), 256}](a, b, c, n)
  local ha, hb = a:tolist(), b:tolist()
  local ref = {}
  for i = 1, n do ref[i] = string.unpack("f", string.pack("f", ha[i] + hb[i])) end
  check(cuda.compare(c, ref, {rtol = 0, atol = 0}), "vector_add exact")
  local y = cuda.array(b)
  cuda.kernel("saxpy.cu")[{GPU and 264 or 16, 256}](n, 2.0, a, y)
  for i = 1, n do ref[i] = 2 * ha[i] + hb[i] end
  local _, r = cuda.compare(y, ref, {rtol = 1e-6})
  check(r.ok, tostring(r))
end)

test("naive and tiled matmul match the CPU", function()
  local n = GPU and 200 or 64
  local A, B = cuda.rand(n * n, "f32", 4), cuda.rand(n * n, "f32", 5)
  local m = cuda.module("matmul.cu")
  local ha, hb = A:tolist(), B:tolist()
  local ref = {}
  for r = 0, n - 1 do
    for c = 0, n - 1 do
      local s = 0
      for k = 0, n - 1 do s = s + ha[r * n + k + 1] * hb[k * n + c + 1] end
      ref[r * n + c + 1] = s
    end
  end
  for _, name in ipairs{"matmul_naive", "matmul_tiled"} do
    local C = cuda.array(n * n)
    m[name][{{blocks(n, 16), blocks(n, 16)}, {16, 16}}](A, B, C, n)
    local _, r = cuda.compare(C, ref, {rtol = 1e-4, atol = 1e-4})
    check(r.ok, name .. ": " .. tostring(r))
  end
end)

test("three reductions give the CPU's sum", function()
  local n = GPU and 1 << 20 or 1 << 14
  local x = cuda.rand(n, "f32", 6)
  local xs, sum = x:tolist(), 0
  for i = 1, n do sum = sum + xs[i] end
  local m = cuda.module("reduce.cu")
  local out = cuda.array(1)
  m.reduce_shared[{n // 256, 256, shared = 256 * 4}](x, out, n)
  check(math.abs(out[0] - sum) / sum < 1e-4, "shared: " .. out[0] .. " vs " .. sum)
  out[0] = 0
  m.reduce_shuffle[{n // 256, 256}](x, out, n)
  check(math.abs(out[0] - sum) / sum < 1e-4, "shuffle: " .. out[0] .. " vs " .. sum)
  local ones = cuda.ones(n, "i32")
  local iout = cuda.array(1, "i32")
  m.reduce_atomic[{n // 256, 256}](ones, iout, n)
  checkeq(iout[0], n, "atomic sum exact")
end)

test("strided copy and transpose match the CPU", function()
  local n, s = GPU and 1 << 16 or 1 << 12, 4
  local a = cuda.arange(n * s, "f32")
  local b = cuda.array(n)
  cuda.kernel("strided.cu")[{n // 256, 256}](a, b, s, n)
  local ref = {}
  for i = 1, n do ref[i] = (i - 1) * s end
  check(cuda.compare(b, ref), "strided")
  local t, out = cuda.arange(1024, "f32"), cuda.array(1024)
  for pad = 0, 1 do
    cuda.kernel("transpose.cu")[{1, {32, 32}}](t, out, pad)
    for y = 0, 31 do for x = 0, 31 do ref[y * 32 + x + 1] = x * 32 + y end end
    for i = 1025, #ref do ref[i] = nil end
    check(cuda.compare(out, ref), "transpose pad " .. pad)
  end
end)

test("dynamic shared memory over 48 KiB is opted in to", function()
  local k = cuda.kernel([[
__global__ void big(float *out) {
  extern __shared__ float s[];
  int n = 100 * 1024 / 4;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = s[n - 1];
}
]])
  local out = cuda.array(1)
  k[{1, 256, shared = 100 * 1024}](out)
  checkeq(out[0], 100 * 1024 / 4 - 1)
end)

gpu_test("cuda.time uses events and reports a spread", function()
  local k = cuda.kernel("inc.cu")
  local a = cuda.array(N)
  local t = cuda.time(function() k[{blocks(N, 256), 256}](a, N) end, {warmup = 2, reps = 10})
  checkeq(t.clock, "gpu"); checkeq(t.reps, 10)
  check(t.median > 0.005 and t.median < 50, "median " .. t.median .. " ms")
  check(t.min <= t.median and t.median <= t.max)
  checkeq(a[0], 12.0, "2 warm-ups + 10 reps ran")
  print("# inc over 10M f32: " .. tostring(t))
end)

gpu_test("meminfo follows allocation and collection", function()
  collectgarbage(); collectgarbage()
  local before = cuda.meminfo().used
  local a = cuda.array(256 * 1024 * 1024, "f32") -- 1 GiB
  local during = cuda.meminfo().used
  check(during - before >= 1 << 30, "used grew by 1 GiB")
  a = nil
  collectgarbage(); collectgarbage()
  local after = cuda.meminfo().used
  check(after - before < 64 << 20, "memory returned: " .. (after - before))
end)

gpu_test("too large an allocation fails clearly, and the GC keeps up with a thousand 1 GiB arrays", function()
  checkerr("out of device memory allocating cuda.Array<f32>", cuda.array, 1 << 38, "f32")
  for i = 1, 1000 do
    local a = cuda.array(256 * 1024 * 1024, "f32")
  end
  checkeq(#cuda.array(4), 4)
end)

test("pageable and pinned copies round-trip", function()
  local n = GPU and 1 << 22 or 1 << 16
  local src = cuda.rand(n, "f32", 9)
  for _, pinned in ipairs{false, true} do
    local h = src:host({pinned = pinned})
    checkeq(h.pinned, pinned)
    local back = cuda.array(h)
    check(cuda.compare(back, src, {rtol = 0, atol = 0}), "pinned=" .. tostring(pinned))
  end
end)

test("cuda.stats shows sectors per request jump from 4 to 32 on the strided line", function()
  local k = cuda.kernel("strided.cu")
  local n = 8192
  local a, b = cuda.rand(32 * n, "f32", 1), cuda.array(n)
  k[{n // 256, 256}](a, b, 1, n)
  if GPU then
    checkerr("cuda.stats() needs the simulator", cuda.stats)
    return
  end
  local s = cuda.stats()
  checkeq(s.ld_requests, n // 32); checkeq(s.ld_sectors, 4 * n // 32)
  k[{n // 256, 256}](a, b, 32, n)
  s = cuda.stats{lines = true}
  checkeq(s.ld_sectors / s.ld_requests, 32.0)
  checkeq(s.lines[5].ld_sectors, 32 * n // 32, "the load's own line")
  check(tostring(s):find("(32.0 per request)", 1, true), tostring(s))
end)

return T.done()
