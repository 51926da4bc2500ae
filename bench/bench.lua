-- bench.lua: the figures measured inside cudalab, printed as "name: value unit" for
-- bench/run.sh, which sets them beside their anchors (the plain C loop) from the same run.
local N = tonumber(arg[1]) or 100000

local function per_launch_us(launch, n)
  cuda.sync()
  local t = cpu.time(function()
    for _ = 1, n do launch() end
    cuda.sync()
  end, {warmup = 1, reps = 5})
  return t.median * 1000 / n
end

local function report(name, value, unit) print(string.format("%s: %.3f %s", name, value, unit)) end

-- NVRTC compile, from source string to a launchable kernel (a new source each time).
local t = cpu.time(function()
  cuda.kernel(string.format("__global__ void k%d(float *a) { a[0] = %d; }", math.random(1 << 30), 1))
end, {warmup = 1, reps = 5})
report("nvrtc_compile_ms", t.median, "ms")

if cuda.backend() ~= "cuda" then return end

local m = cuda.module[[
extern "C" __global__ void empty() {}
extern "C" __global__ void three(float *a, float *b, float *c, int n) {
  if (n < 0) a[0] = b[0] + c[0];
}
]]
local a, b, c = cuda.array(256), cuda.array(256), cuda.array(256)
local empty, three = m.empty[{1, 32}], m.three[{1, 32}]
report("lua_launch_empty_us", per_launch_us(function() empty() end, N), "us")
report("lua_launch_3arrays_us", per_launch_us(function() three(a, b, c, 1024) end, N), "us")
local k3 = m.three
report("lua_launch_3arrays_newcfg_us", per_launch_us(function() k3[{1, 32}](a, b, c, 1024) end, N), "us")
