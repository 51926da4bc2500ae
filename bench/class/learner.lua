-- bench/class/learner.lua: one scripted learner of the classroom load benchmark
-- (bench/class/load.sh), run as that learner's own account:
--   cudalab --class DIR learner.lua STEPS [READY_DIR GO_FIFO]
-- It does the class's warm-up task as a learner would (opens the lesson, saves
-- a kernel, checks it: the record goes to the class folder), then waits at the
-- start line (bench/class/load.sh) and makes STEPS steps, each a launch of a small kernel and
-- a wait for it, timed on the host. Prints "steps: ms,ms,..." and what it ran on.
local steps, ready, go = tonumber(arg[1]) or 300, arg[2], arg[3]
local real_print = print
print = function() end -- the lesson's text is not what is measured
lesson(50)
edit [[
__global__ void square(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * a[i];
}]]
check()
print = real_print
local k = cuda.kernel [[
__global__ void step(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 1.0f;
}]]
local a = cuda.zeros(4096)
k[{16, 256}](a, #a) -- the first launch loads the module: not a step
cuda.sync()
if ready then -- the start line: say so, then wait for the benchmark to open the FIFO
  local f = assert(io.open(ready .. "/" .. os.getenv("USER") .. "-" .. tostring({}):match("0x%x+"), "w"))
  f:close()
  local g = assert(io.open(go, "r"))
  g:read("a")
  g:close()
end
local t = cpu.time(function()
  k[{16, 256}](a, #a)
  cuda.sync()
end, { warmup = 0, reps = steps })
assert(a[0] == steps + 1, "the steps did not all run")
local out = {}
for i, v in ipairs(t.samples) do out[i] = string.format("%.4f", v) end
print("backend: " .. cuda.backend())
print("steps: " .. table.concat(out, ","))
