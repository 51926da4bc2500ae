-- faults.lua: what the simulator shows that a GPU hides: the exact thread, array and line of a
-- bad access, races, barriers that cannot complete, and its counters. Simulator only.
local T = dofile("tests/lua/testlib.lua")
T.plan(15)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

local OOB = [[
__global__ void shift(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + 1];
}
]]

test("an out-of-bounds read names kernel, block, thread, array, parameter and line", function()
  local k = cuda.kernel(OOB)
  local x, y = cuda.arange(100), cuda.array(100)
  local ok, err = pcall(k[{1, 128}], y, x, 100)
  check(not ok)
  for _, want in ipairs{"out-of-bounds global load", "index 100 of f32[100]", "parameter 1, 'in'",
                        "1 element (4 bytes) past the end", "in kernel shift", "block (0,0,0)",
                        "thread (99,0,0)", "kernel.cu:3"} do
    check(err:find(want, 1, true), "'" .. want .. "' in: " .. err)
  end
end)

test("the bad access is not made and the REPL state is intact", function()
  local k = cuda.kernel(OOB)
  local x, y = cuda.arange(100), cuda.full(100, 7)
  pcall(k[{1, 128}], y, x, 100)
  -- the faulting warp (threads 96..127) wrote nothing; other warps ran
  checkeq(y[99], 7.0); checkeq(y[0], 1.0)
  checkeq(x[99], 99.0)
  k[{1, 128}](y, x, 99)
  checkeq(y[98], 99.0)
end)

test("misaligned access", function()
  local k = cuda.kernel[[__global__ void mis(char *p) { *(int *)(p + 1) = 1; }]]
  checkerr("misaligned", k[{1, 1}], cuda.array(16, "u8"))
end)

test("a misaligned access says whether it lies inside the array or overlaps its end", function()
  local inside = cuda.kernel[[
__global__ void in4(const float *a, float *o) { o[0] = *(const float *)((const char *)a + 2); }]]
  checkerr("misaligned global load of 4 bytes at address 0x", inside[{1, 1}], cuda.ones(64),
    cuda.array(1))
  checkerr("(must be a multiple of 4); it is inside f32[64] (parameter 0, 'a'), byte 2 of " ..
    "element 0 of 64", inside[{1, 1}], cuda.ones(64), cuda.array(1))
  -- a float2 at o + 1: aligned to 4, not 8; inside 8 floats, over the end of 2
  local pair = cuda.kernel[[__global__ void pair(float *o) { *(float2 *)(o + 1) = make_float2(1, 2); }]]
  checkerr("it is inside f32[8] (parameter 0, 'o'), byte 0 of element 1 of 8", pair[{1, 1}],
    cuda.zeros(8))
  checkerr("it is overlapping the end of f32[2] (parameter 0, 'o') (index 1 of 2 elements)",
    pair[{1, 1}], cuda.zeros(2))
end)

test("an index past the kernel's array is told of that array, besides a nearer one it was not " ..
    "given", function()
  collectgarbage()
  collectgarbage() -- arrays earlier tests dropped are freed: the live ones near are ours
  local a = cuda.zeros(64)
  local other = cuda.zeros(16, "i32") -- allocated after a: it may lie nearer to a[1000] than a
  local k = cuda.kernel[[__global__ void far(float *a, int off) { a[threadIdx.x + off] = 1.0f; }]]
  local ok, err = pcall(k[{1, 8}], a, 1000)
  check(not ok, "the launch fails")
  err = tostring(err)
  -- The message names the array nearest the bad address first, and the kernel's own array after
  -- it when that is another one. Where the allocator put them decides which is nearest: the
  -- distances come from the arrays' device addresses.
  local bad, past_a = a:ptr() + 4000, 4000 - 64 * 4
  local lo, hi = other:ptr(), other:ptr() + 16 * 4
  local to_other = bad < lo and lo - bad or bad - hi
  local own = "f32[64] (parameter 0, 'a')"
  local note = "is not one of the kernel's parameters: the nearest that is, " .. own ..
    ", would be at index 1000 (937 elements past its end)"
  local near, dist = err:match("index %-?%d+ of ([^;]-) is %d+ elements? %((%d+) bytes%)")
  check(near, "a nearest array named in: " .. err)
  if to_other < past_a then -- other is nearer than a: named first, at its own index
    local n = bad < lo and (lo - bad + 3) // 4 or (bad - lo) // 4 - 15
    local els = n == 1 and "element" or "elements"
    local want = bad < lo and string.format("index -%d of i32[16] is %d %s (%d bytes) " ..
      "before the start; i32[16] %s", n, n, els, lo - bad, note)
      or string.format("index %d of i32[16] is %d %s (%d bytes) past the end; i32[16] %s",
        (bad - lo) // 4, n, els, bad - hi + 4, note)
    check(err:find(want, 1, true), "'" .. want .. "' in: " .. err)
  elseif near == own then -- a is the nearest: told alone
    local want = "index 1000 of " .. own .. " is 937 elements (3748 bytes) past the end\n"
    check(err:find(want, 1, true), "'" .. want .. "' in: " .. err)
  else -- an array this file does not hold lies nearer than both: named first, a after it
    local d = tonumber(dist) - (err:find("past the end", 1, true) and 4 or 0)
    check(near ~= "i32[16]" and d < past_a and d < to_other,
      near .. " is not nearer than " .. own .. " and i32[16]: " .. err)
    check(err:find(near .. " " .. note, 1, true), "'" .. note .. "' in: " .. err)
  end
  checkerr("index 64 of f32[64] (parameter 0, 'a') is 1 element (4 bytes) past the end\n",
    k[{1, 8}], a, 64)
  checkeq(other[0], 0, "the other array untouched")
end)

test("warps waiting at different barriers end the launch with a message", function()
  local k = cuda.kernel[[
__global__ void half(int *out) {
  if (threadIdx.x < 32) { out[threadIdx.x] = 1; __syncthreads(); }
  else { __syncthreads(); out[threadIdx.x] = 2; }
}
]]
  local ok, err = pcall(k[{1, 64}], cuda.array(64, "i32"))
  check(not ok and (err:find("__syncthreads", 1, true) or err:find("barrier", 1, true)), tostring(err))
end)

test("race detection is on by default, can be turned off, and finds a shared-memory race", function()
  local k = cuda.kernel[[
__global__ void race(int *out) {
  __shared__ int s;
  s = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s;
}
]]
  local out = cuda.array(64, "i32")
  local before = cuda.simopts()
  cuda.simopts{race_check = false}
  k[{1, 64}](out)
  cuda.simopts{race_check = true}
  local ok, err = pcall(k[{1, 64}], out)
  cuda.simopts(before)
  check(not ok and err:find("shared-memory race", 1, true), tostring(err))
  check(err:find("kernel.cu:3", 1, true), err)
end)

test("the timing model's parameters: what-if pricing, and bad values refused", function()
  local k = cuda.kernel("inc.cu")
  local a = cuda.ones(1 << 20)
  k[{(1 << 20) // 256, 256}](a, 1 << 20)
  local base = cuda.stats().model
  local fast = cuda.stats{perf = {launch_us = base.launch_us / 2}}.model
  check(math.abs((base.time_ms - fast.time_ms) * 1000 - base.launch_us / 2) < 1e-9, "half the launch overhead")
  checkeq(cuda.stats().model.time_ms, base.time_ms, "what-if leaves the device as it was")
  checkerr("unknown timing-model parameter 'bogus'", cuda.stats, {perf = {bogus = 1}})
  checkerr("timing-model parameter 'dram_gbs' must be a positive number, got -1", cuda.stats, {perf = {dram_gbs = -1}})
  checkerr("timing-model parameter 'clock_ghz' must be a positive number, got 0", cuda.stats, {perf = {clock_ghz = 0}})
  checkerr("must be a positive number, got fast", cuda.simopts, {perf = {l2_gbs = "fast"}})
  checkerr("must be a positive number, got inf", cuda.simopts, {perf = {l2_gbs = math.huge}})
  checkerr("must be a positive number, got", cuda.simopts, {perf = {l2_gbs = 0 / 0}})
  -- positive, but a clock of 1e-300 GHz times a launch as inf ms: refused by name
  checkerr("timing-model parameter 'clock_ghz' = 1e-300 is outside what the model can price: " ..
    "give a number from 1e-06 to 1e+15", cuda.simopts, {perf = {clock_ghz = 1e-300}})
  checkerr("timing-model parameter 'warp_ns' = 1e-300 is outside what the model can price: " ..
    "give a number from 1e-06 to 1e+15, or 0", cuda.stats, {perf = {warp_ns = 1e-300}})
  checkerr("'l2_gbs' = 1e+16 is outside what the model can price", cuda.simopts,
    {perf = {l2_gbs = 1e16}})
  checkerr("'queue' = 101 is outside what the model can price: give a number from 1e-06 to 100, " ..
    "or 0", cuda.simopts, {perf = {queue = 101}})
  checkerr("unknown timing-model parameter '1'", cuda.simopts, {perf = {7}})
  checkerr("table expected", cuda.simopts, {perf = 3})
  checkerr("table expected", cuda.stats, 5)
  local before = cuda.simopts().perf
  cuda.simopts{perf = {drain = 0}} -- may be zero: no spread
  checkeq(cuda.simopts().perf.drain, 0)
  cuda.simopts{perf = before}
  checkeq(cuda.simopts().perf.dram_gbs, before.dram_gbs)
end)

test("simopts validates its options", function()
  checkerr("unknown simulator option 'speed'", cuda.simopts, {speed = 2})
  checkerr("threads must be a whole number from 0 (all cores) to 1024", cuda.simopts, {threads = -1})
  checkeq(cuda.simopts{threads = 1}.threads, 1)
  cuda.simopts{threads = 0}
end)

-- Device printf writes to the process's stdout, out of Lua's reach, so the launch runs in a
-- child: this same binary (T.self_command), whose output is read back.
test("device printf prints, in order with one host thread", function()
  local code = [[cuda.simopts{threads = 1} cuda.kernel[=[#include <cstdio>
__global__ void hello() { printf("block %d thread %d\n", blockIdx.x, threadIdx.x); }]=][{3, 2}]()]]
  check(not code:find("'", 1, true), "the chunk is quoted with ' for the shell")
  local bin = T.self_command()
  local p = assert(io.popen("exec " .. bin .. " --sim -e '" .. code .. "' 2>&1"))
  local out = p:read("a")
  p:close()
  checkeq(out, "block 0 thread 0\nblock 0 thread 1\nblock 1 thread 0\nblock 1 thread 1\n" ..
    "block 2 thread 0\nblock 2 thread 1\n", "the child's output")
end)

test("device printf takes a '*' width from its arguments and h as C does; hh is refused",
  function()
  local function child(call)
    local code = [[cuda.kernel[=[#include <cstdio>
__global__ void pw(int w) { ]] .. call .. [[ }]=][{1, 1}](6)]]
    check(not code:find("'", 1, true), "the chunk is quoted with ' for the shell")
    local p = assert(io.popen("exec " .. T.self_command() .. " --sim -e '" .. code .. "' 2>&1"))
    local out = p:read("a")
    p:close()
    return out
  end
  checkeq(child([[printf("[%*d] %hx %hd\n", w, 42, 0x1ff41, 0x1ff41);]]), "[    42] ff41 -191\n",
    "the child's output")
  -- the GPU's printf reads the wrong arguments after an hh (measured on an H100)
  local out = child([[printf("%hhx\n", 0x1ff41);]])
  check(out:find("printf: '%hhx': the GPU's printf does not take hh", 1, true), out)
end)

test("device printf refuses a width past 1 MiB and a conversion with no argument", function()
  local huge = cuda.kernel[[__global__ void huge(int v) { printf("[%999999999d]\n", v); }]]
  checkerr("printf: the width in '%999999999d' is over 1 MiB, the most one call may print",
           huge[{1, 1}], 1)
  -- NVRTC warns that the format wants an argument; the launch must say so too
  local none = cuda.kernel([[__global__ void none() { printf("[%*d]\n"); }]], {warnings = false})
  checkerr("printf: '%*d' needs argument 1, but the call passes no arguments", none[{1, 1}])
end)

test("counters: bank conflicts of a column read, gone with padding", function()
  local k = cuda.kernel("transpose.cu")
  local a, b = cuda.arange(1024), cuda.array(1024)
  k[{1, {32, 32}}](a, b, 0)
  local s0 = cuda.stats()
  k[{1, {32, 32}}](a, b, 1)
  local s1 = cuda.stats()
  check(s0.bank_conflicts > 900, "unpadded: " .. s0.bank_conflicts)
  checkeq(s1.bank_conflicts, 0, "padded")
end)

test("stats before any launch and on other backends say why not", function()
  local old = cuda.use("none")
  checkerr("cuda.stats() needs the simulator", cuda.stats)
  cuda.use(old)
end)

test("cuda.time under the simulator gives modelled time, and the simulator's own apart", function()
  local k = cuda.kernel("inc.cu")
  local a = cuda.array(1000)
  local t = cuda.time(function() k[{4, 256}](a, 1000) end, {warmup = 0, reps = 3})
  checkeq(t.clock, "model")
  checkeq(t.reps, 3)
  checkeq(t.min, t.max, "the model is deterministic")
  checkeq(t.sim_ms.clock, "sim")
  checkeq(t.sim_ms.reps, 3)
  check(t.model and t.model.limit == "launch", "a 1000-element launch is launch-bound")
  local one = cuda.time(function() k[{4, 256}](a, 1000) end)
  checkeq(one.reps, 1, "one repetition by default")
  checkeq(one.median, t.median)
  -- the same launch on other arrays of the same size, wherever the host put them: the same time
  local big = {}
  for i = 1, 3 do big[i] = cuda.rand(3 << 20) end
  local s = cuda.kernel("saxpy.cu")
  local t1 = cuda.time(function() s[{300, 256}](#big[1], 2.0, big[1], big[2]) end)
  local spacer = cuda.array(12345)
  local other = cuda.rand(3 << 20)
  local t2 = cuda.time(function() s[{300, 256}](#big[3], 2.0, big[3], other) end)
  checkeq(t2.median, t1.median, "same shapes, other arrays")
  spacer:free()
  local copies = cuda.time(function() a:copyfrom(cuda.host(1000)) end)
  checkeq(copies.model, nil, "no launch, no explanation")
  check(copies.median > 0, "copies take modelled time")
  cuda.simopts{model = false}
  local own = cuda.time(function() k[{4, 256}](a, 1000) end, {warmup = 0, reps = 3})
  cuda.simopts{model = true}
  checkeq(own.clock, "sim")
  check(tostring(own):find("simulator time", 1, true), tostring(own))
end)

return T.done()
