-- bench.lua: the figures measured inside cudalab, printed as "name: value unit" for
-- bench/run.sh, which sets each beside its anchor from the same run. With the argument "sim"
-- it measures the simulator instead; with "launch", only the launch overhead; with "builtin",
-- only the built-in operations' bandwidth (bench/builtin_gpu.sh).
local mode = arg[1]
local bench = require "cudalab_bench" -- the plain C launch loop, outside the cuda module

local function report(name, value, unit) print(string.format("%s: %.4g %s", name, value, unit)) end
local function median_ms(fn, reps) return cpu.time(fn, {warmup = 1, reps = reps or 5}).median end

if mode == "sim" then
  -- The figures below predate race checking by default and keep measuring without it; the race
  -- rows at the end measure what it costs.
  cuda.simopts{race_check = false}
  -- Threads simulated per second on a vector add (checking and counters on), all host threads.
  local n = 1 << 20
  local k = cuda.kernel("vector_add.cu")
  local a, b, c = cuda.rand(n, "f32", 1), cuda.rand(n, "f32", 2), cuda.array(n)
  local ms = median_ms(function() k[{n // 256, 256}](a, b, c, n) end)
  report("sim_threads_per_s", n / (ms / 1000), "/s")
  -- A kernel cache hit on the simulator: source string to launchable kernel, parsed module kept.
  local SRC = "__global__ void bench_cached_sim(float *a) { a[0] = 3; }"
  cuda.kernel(SRC)
  report("sim_cache_hit_ms", median_ms(function() cuda.kernel(SRC) end, 21), "ms")
  -- What a check adds to a simulated launch: the same launch with it off (the anchor) and on,
  -- alternating over rounds so both see the same machine; median of the ratios. kind names the
  -- figures (sim_NAME_KIND_off_ms, sim_KIND_overhead_NAME); off and on are cuda.simopts tables.
  local function overhead(kind, name, launch, off, on)
    local ratios, on_ms, off_ms = {}, {}, {}
    for r = 1, 7 do
      cuda.simopts(off)
      off_ms[r] = median_ms(launch, 3)
      cuda.simopts(on)
      on_ms[r] = median_ms(launch, 3)
      ratios[r] = on_ms[r] / off_ms[r]
    end
    cuda.simopts{model = true, race_check = false}
    table.sort(ratios); table.sort(on_ms); table.sort(off_ms)
    report("sim_" .. name .. "_" .. kind .. "_off_ms", off_ms[4], "ms")
    report("sim_" .. name .. "_" .. kind .. "_on_ms", on_ms[4], "ms")
    print(string.format("sim_%s_overhead_%s: %.3f x (7 rounds: %.3f to %.3f)", kind, name,
      ratios[4], ratios[1], ratios[7]))
  end
  local vn = 10000000
  local va, vb, vc = cuda.rand(vn, "f32", 1), cuda.rand(vn, "f32", 2), cuda.array(vn)
  local mm, mn = cuda.module("matmul.cu"), 256
  local A, B, C = cuda.rand(mn * mn, "f32", 3), cuda.rand(mn * mn, "f32", 4), cuda.array(mn * mn)
  local red, rn = cuda.module("reduce.cu"), 1 << 20
  local rx, rout = cuda.rand(rn, "f32", 5), cuda.array(1)
  local launches = {
    vadd10M = function() k[{(vn + 255) // 256, 256}](va, vb, vc, vn) end,
    matmul_tiled256 = function()
      mm.matmul_tiled[{{mn // 16, mn // 16}, {16, 16}}](A, B, C, mn)
    end,
    reduce_shared1M = function() red.reduce_shared[{rn // 256, 256, 256 * 4}](rx, rout, rn) end,
  }
  -- The timing model alone (race checking off).
  for _, name in ipairs{"vadd10M", "matmul_tiled256"} do
    overhead("model", name, launches[name], {model = false}, {model = true})
  end
  -- Shared-memory race checking alone (on by default, as warnings), with the model on. The tiled
  -- matmul is the worst case the lessons have (two shared loads per FMA); the reduction is a tree
  -- of shared adds between __syncthreads(), as in lesson 10.
  for _, name in ipairs{"matmul_tiled256", "reduce_shared1M", "vadd10M"} do
    overhead("race", name, launches[name], {race_check = false}, {race_check = "warn"})
  end
  -- Both: a learner's launch as the prompt makes it (cuda.simopts' defaults) against the bare
  -- simulator.
  for _, name in ipairs{"vadd10M", "matmul_tiled256", "reduce_shared1M"} do
    overhead("checks", name, launches[name], {model = false, race_check = false},
      {model = true, race_check = "warn"})
  end
  return
end

-- Built-in array operations on 1 GiB, in GB/s of memory touched (reads + writes), GPU events;
-- alone with the argument "builtin" (bench/builtin_gpu.sh).
local n = 256 * 1024 * 1024
local GiB = n * 4
local function gbps(bytes, fn)
  local t = cuda.time(fn, {warmup = 1, reps = 5})
  return bytes / (t.median * 1e6)
end
local x, y
local function builtin_bandwidth()
  x, y = x or cuda.array(n), y or cuda.array(n)
  report("fill_GBps", gbps(GiB, function() x:fill(1.5) end), "GB/s")
  report("arange_GBps", gbps(GiB, function() x:arange() end), "GB/s")
  report("rand_GBps", gbps(GiB, function() y:rand(7) end), "GB/s")
  report("copy_GBps", gbps(2 * GiB, function() x:copyto(y) end), "GB/s")
  x:copyto(y)
  report("compare_GBps", gbps(2 * GiB, function() cuda.compare(x, y) end), "GB/s")
  -- The same where every element differs by rounding, as a GPU result against a reference does.
  cuda.kernel("__global__ void nudge(float *y, unsigned long long n) { "
    .. "for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; "
    .. "i += 256ull * gridDim.x) y[i] = y[i] * 1.0000001f + 1e-30f; }")[{1056, 256}](y, n)
  report("compare_rounded_GBps", gbps(2 * GiB, function() cuda.compare(x, y) end), "GB/s")
end
if mode == "builtin" then
  if cuda.backend() == "cuda" then builtin_bandwidth() end
  return
end

if mode ~= "launch" then
-- NVRTC compile, source string to launchable kernel (a source never seen before).
report("nvrtc_compile_ms", median_ms(function()
  cuda.kernel(string.format("__global__ void k%d(float *a) { a[0] = 1; }", math.random(1 << 30)))
end), "ms")

-- A kernel cache hit in this process, from source string to launchable kernel.
local SRC = "__global__ void bench_cached(float *a) { a[0] = 2; }"
cuda.kernel(SRC)
report("cache_hit_ms", median_ms(function() cuda.kernel(SRC) end, 21), "ms")

end
if cuda.backend() ~= "cuda" then return end

-- Launch overhead: back-to-back asynchronous launches from a Lua loop, against the same launch
-- from a plain C loop in this process (bench.c_launch_loop): of cudaLaunchKernel, the anchor,
-- and of cuLaunchKernel, the driver call cudalab's launches make, which isolates what Lua
-- itself adds. The loops run in rounds, each round in a different order, so that all see the
-- same machine: on a virtual machine the cost of a launch moves by a fifth within seconds and
-- by a third from one process to the next. Each figure is the median over the rounds of the
-- per-round ratio.
local N, ROUNDS = 100000, 15
local m = cuda.module[[
extern "C" __global__ void empty() {}
extern "C" __global__ void three(float *a, float *b, float *c, int n) {
  if (n < 0) a[0] = b[0] + c[0];
}
]]
local a, b, c = cuda.array(256), cuda.array(256), cuda.array(256)
local function per_launch_us(loop)
  return cpu.time(function() loop() cuda.sync() end, {warmup = 0, reps = 1}).median * 1000 / N
end
local function median(t)
  local s = {table.unpack(t)}
  table.sort(s)
  return s[(#s + 1) // 2], s[1], s[#s]
end
local ORDERS = {{1, 2, 3}, {3, 2, 1}, {2, 3, 1}, {1, 3, 2}, {3, 1, 2}, {2, 1, 3}}
local function rounds_of(name, lua_loop, runtime_loop, driver_loop)
  local loops = {lua_loop, runtime_loop, driver_loop}
  for _, loop in ipairs(loops) do loop() end -- warm-up
  local us = {{}, {}, {}}
  local vs_runtime, vs_driver = {}, {}
  for r = 1, ROUNDS do
    local t = {}
    for _, i in ipairs(ORDERS[(r - 1) % #ORDERS + 1]) do t[i] = per_launch_us(loops[i]) end
    for i = 1, 3 do us[i][r] = t[i] end
    vs_runtime[r], vs_driver[r] = t[1] / t[2], t[1] / t[3]
  end
  report("lua_launch_" .. name .. "_us", (median(us[1])), "us")
  report("c_launch_" .. name .. "_us", (median(us[2])), "us")
  report("c_drv_launch_" .. name .. "_us", (median(us[3])), "us")
  local r, lo, hi = median(vs_runtime)
  print(string.format("launch_ratio_%s: %.4f x (%d rounds: %.4f to %.4f)", name, r, ROUNDS, lo, hi))
  r, lo, hi = median(vs_driver)
  print(string.format("launch_ratio_drv_%s: %.4f x (%d rounds: %.4f to %.4f)", name, r, ROUNDS, lo, hi))
end
local empty, three, k3 = m.empty[{1, 32}], m.three[{1, 32}], m.three
rounds_of("empty", function() for _ = 1, N do empty() end end,
  function() bench.c_launch_loop(empty, N) end,
  function() bench.c_launch_loop("cuLaunchKernel", empty, N) end)
rounds_of("3arrays", function() for _ = 1, N do three(a, b, c, 1024) end end,
  function() bench.c_launch_loop(three, N, a, b, c, 1024) end,
  function() bench.c_launch_loop("cuLaunchKernel", three, N, a, b, c, 1024) end)
report("lua_launch_3arrays_newcfg_us",
  per_launch_us(function() for _ = 1, N do k3[{1, 32}](a, b, c, 1024) end end), "us")
if mode == "launch" then return end

builtin_bandwidth()

-- Copies from a pinned host buffer, against cudaMemcpy from pinned memory in C.
local h = cuda.host(n, "f32", {pinned = true})
report("pinned_h2d_GBps", gbps(GiB, function() x:copyfrom(h) end), "GB/s")
