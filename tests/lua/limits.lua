-- limits.lua: cuda.limits (a cap on the device memory arrays hold, and on how long a launch may
-- run) and cuda.gpu_admit's checks. Limits only tighten, and last for the process, so the tests
-- run in order: bad arguments first, with nothing set; then the memory cap, set and lowered;
-- then the kernel time limit, which on the simulator stops a kernel that never ends and leaves
-- the session working. On the backend without a GPU (none) no kernel runs; on a GPU the stopped
-- kernel would end the engine (by design), so that case is the simulator's alone.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local SIM = cuda.backend() == "sim"
local RUNS = cuda.backend() ~= "none"
T.plan(16)

local MiB = 1 << 20

local function in_use() return cuda.limits().memory_in_use end

test("cuda.limits() before any is set: no limits, and what arrays hold", function()
  local l = cuda.limits()
  checkeq(l.memory, nil)
  checkeq(l.kernel_time, nil)
  checkeq(math.type(l.memory_in_use), "integer")
  checkeq(cuda.limits({}).memory, nil, "an empty table changes nothing")
  checkeq(cuda.limits{memory = false, kernel_time = false}.memory, nil,
    "false asks for no limit, which is what there is")
end)

test("cuda.limits: bad arguments say what is wrong", function()
  checkerr("cuda.limits: expected a table such as {memory = 2 * 2^30, kernel_time = 2}, got number",
    cuda.limits, 5)
  checkerr("cuda.limits: unknown key 'memroy' (the keys are memory, kernel_time and by)",
    cuda.limits, {memroy = 1})
  checkerr("cuda.limits: unknown key '1' (the keys are memory, kernel_time and by)", cuda.limits, {7})
  checkerr('cuda.limits: by must be "class" (a class sets these limits) or left out, got teacher',
    cuda.limits, {memory = 2 * MiB, by = "teacher"})
  checkerr('by must be "class"', cuda.limits, {by = 1})
  checkeq(cuda.limits().memory, nil, "a refused by sets nothing")
  checkerr("cuda.limits: memory must be greater than zero, got -1", cuda.limits, {memory = -1})
  checkerr("cuda.limits: memory must be greater than zero, got 0", cuda.limits, {memory = 0})
  checkerr("cuda.limits: memory is NaN; it must be a number of bytes greater than zero",
    cuda.limits, {memory = 0 / 0})
  checkerr("cuda.limits: memory must be a whole number of bytes, at most 2^62, got 1.5",
    cuda.limits, {memory = 1.5})
  checkerr("cuda.limits: memory must be a whole number of bytes, at most 2^62, got inf",
    cuda.limits, {memory = math.huge})
  checkerr("cuda.limits: memory must be a number of bytes (or false for no limit), got string",
    cuda.limits, {memory = "2 GiB"})
  checkerr("cuda.limits: memory must be a number of bytes (or false for no limit), got boolean",
    cuda.limits, {memory = true})
  checkerr("cuda.limits: kernel_time must be greater than zero, got 0", cuda.limits,
    {kernel_time = 0})
  checkerr("cuda.limits: kernel_time is NaN; it must be a number of seconds greater than zero",
    cuda.limits, {kernel_time = 0 / 0})
  checkerr("cuda.limits: kernel_time must be a number of seconds, at most a week (604800 s), " ..
    "got inf", cuda.limits, {kernel_time = math.huge})
  checkerr("cuda.limits: kernel_time must be a number of seconds (or false for no limit), " ..
    "got table", cuda.limits, {kernel_time = {}})
  -- a bad key anywhere leaves the good ones unset
  checkerr("kernel_time must be greater than zero", cuda.limits, {memory = MiB, kernel_time = -2})
  checkeq(cuda.limits().memory, nil, "nothing was set by the failed call")
end)

test("cuda.gpu_admit: bad arguments say what is wrong", function()
  checkerr("cuda.gpu_admit: expected a table such as {key = \"class\", sessions_max = 30, " ..
    "memory_needed = 2 * 2^30}, got nil", cuda.gpu_admit, nil)
  checkerr("got string", cuda.gpu_admit, "class")
  checkerr("cuda.gpu_admit: key must be a non-empty string naming the class (its sessions " ..
    "share the GPU's slots), got nil", cuda.gpu_admit, {sessions_max = 2})
  checkerr("got an empty string", cuda.gpu_admit, {key = ""})
  checkerr("got number", cuda.gpu_admit, {key = 42})
  checkerr("cuda.gpu_admit: sessions_max must be a whole number of sessions, 1 or more, got 0",
    cuda.gpu_admit, {key = "k", sessions_max = 0})
  checkerr("sessions_max must be a whole number of sessions, 1 or more, got 2.5",
    cuda.gpu_admit, {key = "k", sessions_max = 2.5})
  checkerr("cuda.gpu_admit: memory_needed must be a whole number of bytes, 0 or more, got -1",
    cuda.gpu_admit, {key = "k", memory_needed = -1})
  checkerr("cuda.gpu_admit: unknown key 'sessions' (the keys are key, sessions_max and " ..
    "memory_needed)", cuda.gpu_admit, {key = "k", sessions = 3})
end)

test("cuda.gpu_admit answers without a GPU context; with no GPU, says so", function()
  local r = cuda.gpu_admit{key = "tests-limits-" .. tostring({}):match("0x(%x+)"),
                           sessions_max = 30, memory_needed = 64 * MiB}
  checkeq(type(r.ok), "boolean")
  local driver = io.open("/dev/nvidiactl", "rb")
  if driver then driver:close() end
  if not driver then
    checkeq(r.ok, false, "no driver here")
    check(r.why:find("^no GPU found"), r.why)
  elseif r.ok then
    check(math.type(r.device) == "integer" and r.device >= 0, "a device index")
    check(r.sessions >= 1 and r.slot >= 0 and r.slot < 30, "a slot of the 30")
    check(r.pci:find("^%x+:%x+:%x+%.%x$"), r.pci)
  else
    check(type(r.why) == "string" and #r.why > 0, "a reason")
  end
end)

test("the memory cap counts every way an array is made, and nothing on the host", function()
  collectgarbage()
  checkeq(in_use(), 0, "nothing held before the first array")
  cuda.limits{memory = 64 * MiB}
  checkeq(cuda.limits().memory, 64 * MiB)
  local arrays = {
    cuda.array(1000), cuda.zeros(1000, "f64"), cuda.ones(1000, "i32"), cuda.full(1000, 7),
    cuda.arange(1000), cuda.rand(1000), cuda.array({1, 2, 3}, "i64"),
  }
  local want = 4000 + 8000 + 4000 + 4000 + 4000 + 4000 + 24
  checkeq(in_use(), want, "bytes the arrays hold")
  local copy = cuda.array(arrays[1])
  checkeq(in_use(), want + 4000, "a copy of an array is device memory too")
  local h, pinned = arrays[1]:host(), cuda.host(1000, "f32", {pinned = true})
  local fromhost = cuda.array(h)
  checkeq(in_use(), want + 8000, "host buffers and pinned ones do not count")
  copy:free()
  fromhost:free()
  checkeq(in_use(), want, "a:free() gives the bytes back")
  arrays = nil
  collectgarbage()
  checkeq(in_use(), 0, "and so does the collector")
  copy:free() -- freeing twice counts once
  checkeq(in_use(), 0)
  check(h and pinned, "kept alive")
end)

test("past the cap: a collection first, then a message with the figures and the way out", function()
  cuda.limits{memory = 16 * MiB}
  local a = cuda.array(3 * MiB) -- 12 MiB
  checkeq(in_use(), 12 * MiB)
  local function big() return cuda.array(2 * MiB) end -- 8 MiB more: over
  -- set from the prompt, not by a class: the message speaks of this session, never of a class
  checkerr("this session's device memory limit is 16 MiB (cuda.limits): 12 MiB is in use and " ..
    "this array needs 8 MiB. Free arrays you no longer need (a:free(), or a = nil; " ..
    "collectgarbage()); cuda.limits() shows what you hold.", big)
  local ok, err = pcall(big)
  check(not ok and not tostring(err):find("class", 1, true), tostring(err))
  checkerr("this array needs 16 MiB", cuda.zeros, 2 * MiB, "f64")
  checkerr("this array needs 8 MiB", cuda.rand, 2 * MiB)
  checkerr("this array needs 4.88 MiB", cuda.ones, 1280000)
  checkeq(in_use(), 12 * MiB, "a refused array holds nothing")
  a = nil -- dropped but not collected: the allocation collects and then fits
  local b = big()
  checkeq(in_use(), 8 * MiB, "the dropped array was collected to make room")
  checkeq(#b, 2 * MiB)
  checkeq(#cuda.array(0), 0, "an empty array needs nothing")
end)

test("the memory limit can be lowered, never raised or removed", function()
  collectgarbage()
  checkeq(in_use(), 0)
  checkerr("cuda.limits: the memory limit is 16 MiB for this session and can only be lowered",
    cuda.limits, {memory = 16 * MiB + 1})
  checkerr("the memory limit is 16 MiB for this session and can only be lowered", cuda.limits,
    {memory = false})
  checkeq(cuda.limits{memory = 16 * MiB}.memory, 16 * MiB, "the same value is no change")
  local a = cuda.array(2 * MiB) -- 8 MiB
  checkeq(cuda.limits{memory = 4 * MiB}.memory, 4 * MiB, "lowered below what is held")
  checkerr("this session's device memory limit is 4 MiB (cuda.limits): 8 MiB is in use and " ..
    "this array needs 4 KiB.", cuda.array, 1024)
  a:free()
  checkeq(#cuda.array(1024), 1024, "room again once freed")
  checkerr("the memory limit is 4 MiB for this session and can only be lowered", cuda.limits,
    {memory = 8 * MiB})
end)

test("a call that fails changes no limit", function()
  checkerr("kernel_time must be greater than zero", cuda.limits,
    {memory = 2 * MiB, kernel_time = -1})
  checkeq(cuda.limits().memory, 4 * MiB, "the memory limit was not lowered")
  checkerr("the memory limit is 4 MiB", cuda.limits, {memory = 8 * MiB, kernel_time = 5})
  checkeq(cuda.limits().kernel_time, nil, "the kernel time limit was not set")
end)

local SPIN = [[
__global__ void spin(volatile int *x) { while (x[0] == 0) { x[1]++; } }
]]
local SAXPY = [[
__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]

test("the kernel time limit is set, and can be lowered, never raised or removed", function()
  checkeq(cuda.limits{kernel_time = 5}.kernel_time, 5)
  checkerr("cuda.limits: the kernel time limit is 5 s for this session and can only be lowered",
    cuda.limits, {kernel_time = 6})
  checkerr("the kernel time limit is 5 s for this session and can only be lowered",
    cuda.limits, {kernel_time = false})
  checkerr("the kernel time limit is 5 s", cuda.limits, {memory = 2 * MiB, kernel_time = 6})
  checkeq(cuda.limits().memory, 4 * MiB, "the memory limit was not lowered either")
  checkeq(cuda.limits{kernel_time = 1}.kernel_time, 1)
end)

if SIM then
  test("the simulator stops a kernel that never ends at the limit, with its own message", function()
    local k = cuda.kernel(SPIN)
    local x = cuda.array(2, "i32")
    local msg
    local t = cpu.time(function()
      local ok, err = pcall(function() k[{1, 1}](x) end)
      check(not ok, "the launch failed")
      msg = tostring(err)
    end, {warmup = 0, reps = 1})
    -- set from the prompt: the session's limit, never a class's
    checkeq(msg, "kernel spin was stopped after 1 s: this session's time limit per launch is " ..
      "1 s (cuda.limits). Look for a loop that never ends, or launch less work.")
    check(t.median >= 900 and t.median < 5000,
      "stopped after about a second: " .. t.median .. " ms")
    check(x[1] > 0, "it ran")
  end)

  test("the session goes on: another kernel runs, checked against the CPU", function()
    local k = cuda.kernel(SAXPY)
    local n = 1000
    local xs, ys = {}, {}
    for i = 1, n do xs[i], ys[i] = i * 0.5, 3 - i end
    local x, y = cuda.array(xs), cuda.array(ys)
    k[{(n + 255) // 256, 256}](2.5, x, y, n)
    local got, want = y:tolist(), {}
    for i = 1, n do want[i] = 2.5 * xs[i] + ys[i] end
    check(T.maxdiff(got, want) < 1e-3, "saxpy matches the CPU")
    checkeq(cuda.limits().kernel_time, 1, "the limit holds")
  end)

  test("a lower limit stops sooner, and many blocks stop as one", function()
    cuda.limits{kernel_time = 0.25}
    local k = cuda.kernel(SPIN)
    checkerr("kernel spin was stopped after 250 ms: this session's time limit per launch is 250 ms",
      function() k[{8, 64}](cuda.array(2, "i32")) end)
  end)

  -- BUSY's N turns take the simulator over a second here, several times the limit of 250 ms.
  local BUSY = "__global__ void busy(volatile int *x, int n) { " ..
    "for (int i = 0; i < n; i++) x[0] += i & 7; }"
  local N = 4000000
  local function busy_sum(n) return n // 8 * 28 end -- each run of eight turns adds 0 + ... + 7

  test("lesson code's own kernels are not held to the limit; the learner's are", function()
    local mine = cuda.kernel(BUSY) -- compiled by the learner's code
    local lessons = cuda._lesson(function() return cuda.kernel(BUSY) end)
    local file = os.tmpname() .. ".cu" -- a file of the learner's, compiled by lesson code
    local f = assert(io.open(file, "w"))
    f:write(BUSY)
    f:close()
    local from_file = cuda._lesson(function() return cuda.kernel(file) end)
    os.remove(file)
    local x = cuda.zeros(1, "i32")
    local a, b, c = cuda._lesson(function(v) lessons[{1, 1}](x, N); return v, 2, 3 end, 1)
    checkeq(a + b + c, 6, "cuda._lesson passes arguments and results through")
    checkeq(x[0], busy_sum(N), "the lesson's kernel ran to its end, as the CPU counts")
    for _, k in ipairs({ mine, from_file }) do
      checkerr("kernel busy was stopped after 250 ms", cuda._lesson,
        function() k[{1, 1}](cuda.zeros(1, "i32"), N) end)
    end
    checkerr("kernel busy was stopped after 250 ms", function() lessons[{1, 1}](x, N) end)
    checkeq(cuda.limits().kernel_time, 0.25, "the limit is as it was")
  end)

  test("after an error in lesson code, its kernels are held to the limit again", function()
    local k = cuda._lesson(function() return cuda.kernel(BUSY) end)
    checkerr("lesson code failed", cuda._lesson, function() error("lesson code failed") end)
    checkerr("kernel busy was stopped after 250 ms",
      function() k[{1, 1}](cuda.zeros(1, "i32"), N) end)
    checkerr("cuda._lesson", cuda._lesson, 5)
  end)
else
  T.skip("the simulator stops a kernel that never ends", RUNS and "on the GPU it ends the engine"
    or "no kernel runs on the none backend")
  T.skip("the session goes on after a stopped kernel", "simulator only")
  T.skip("a lower limit stops sooner", "simulator only")
  T.skip("lesson code's own kernels are not held to the limit", "simulator only")
  T.skip("after an error in lesson code, its kernels are held again", "simulator only")
end

test("a launch within the limit runs as before", function()
  local k = cuda.kernel(SAXPY)
  local x, y = cuda.ones(256), cuda.full(256, 2)
  if not RUNS then
    checkerr("cannot run a kernel", function() k[{1, 256}](3, x, y, 256) end)
    return
  end
  k[{1, 256}](3, x, y, 256)
  checkeq(y[255], 5)
end)

-- Last: it lowers the memory limit below what the tests above expect.
test("a limit a class set speaks of the class; one lowered at the prompt, of the session", function()
  collectgarbage()
  checkeq(cuda.limits{memory = 4 * MiB, by = "class"}.memory, 4 * MiB)
  local a = cuda.array(MiB) -- 4 MiB: all of it
  checkerr("this class allows 4 MiB of device memory per learner: 4 MiB is in use and this " ..
    "array needs 4 B. Free arrays you no longer need", cuda.array, 1)
  checkerr("can only be lowered", cuda.limits, {memory = 8 * MiB, by = "class"})
  checkeq(cuda.limits{memory = 3 * MiB}.memory, 3 * MiB, "lowered from the prompt")
  checkerr("this session's device memory limit is 3 MiB (cuda.limits): 4 MiB is in use", cuda.array, 1)
  a:free()
  checkeq(#cuda.array(1), 1, "room again once freed")
  if SIM then -- a stopped kernel on the GPU ends the engine; the words are the same there
    cuda.limits{kernel_time = 0.2, by = "class"}
    local k = cuda.kernel(SPIN)
    checkerr("kernel spin was stopped after 200 ms: this class limits a launch to 200 ms " ..
      "(kernel_time_limit).", function() k[{1, 32}](cuda.array(2, "i32")) end)
  end
end)

return T.done()
