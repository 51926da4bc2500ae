-- model_effects.lua: effects of the H200 timing model that a count of instructions and bytes
-- alone would miss, each as an order the H200 shows (bench/model/effects.lua has the measured
-- times): ptxas's register spills under __launch_bounds__, and a warp waiting for its own
-- dependent results. The results are checked against a CPU reference, the times against each
-- other.
local T = dofile("tests/lua/testlib.lua")
T.plan(5)
local test, check, checkeq = T.test, T.check, T.checkeq

local function f32(v) return (string.unpack("f", string.pack("f", v))) end

-- One kernel body under two launch bounds (the effect set's, bench/model/spill48.lua): 48 live
-- floats per thread fit in the registers a single block per SM allows, and spill when eight
-- blocks of 256 must fit.
local spill48 = dofile("bench/model/spill48.lua")

test("register spills: __launch_bounds__(256, 8) is modelled slower, and says why", function()
  local n, iters = 132 * 256 * 4, 8
  local x = cuda.rand(n, "f32", 3)
  local hx, times, model = x:host(), {}, nil
  for _, minb in ipairs({ 1, 8 }) do
    local k, y = cuda.kernel(spill48.source(minb, "keep48")), cuda.zeros(n)
    local t = cuda.time(function() k[{ n // 256, 256 }](x, y, n, iters) end, { warmup = 0, reps = 1 })
    for _, i in ipairs({ 0, n // 2, n - 1 }) do
      local want = spill48.ref(hx, i, n, iters)
      check(math.abs(y[i] - want) <= 2e-4 * math.abs(want), string.format(
        "minBlocks %d: y[%d] = %.9g, the CPU gives %.9g", minb, i, y[i], want))
    end
    times[minb], model = t.median, t.model
  end
  check(times[8] > 3 * times[1], string.format(
    "spilling to local memory: %.4g ms, against %.4g ms in registers (the H200: 8x)", times[8], times[1]))
  check(model.why:find("register spills", 1, true), "the reason names the spills: " .. model.why)
end)

local CHAIN = [[
__global__ void chains(float *out, int iters, int four) {
  float v0 = threadIdx.x * 1e-3f, v1 = v0 + 1, v2 = v0 + 2, v3 = v0 + 3;
  for (int k = 0; k < iters; k++) {
    v0 = fmaf(v0, 0.9999f, 0.0001f);
    if (four) { v1 = fmaf(v1, 0.9999f, 0.0001f); v2 = fmaf(v2, 0.9999f, 0.0001f);
                v3 = fmaf(v3, 0.9999f, 0.0001f); }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v0 + v1 + v2 + v3;
}]]

test("a dependent chain, one warp per SM: its latency, not its instruction count", function()
  local k, out = cuda.kernel(CHAIN), cuda.zeros(132 * 32)
  local iters, ms = 4096, {}
  for _, four in ipairs({ 0, 1 }) do
    ms[four] = cuda.time(function() k[{ 132, 32 }](out, iters, four) end,
      { warmup = 0, reps = 1 }).median
    local v = { f32(5 * f32(1e-3)) }
    v[2], v[3], v[4] = f32(v[1] + 1), f32(v[1] + 2), f32(v[1] + 3)
    for c = 1, four == 1 and 4 or 1 do
      for _ = 1, iters do v[c] = f32(v[c] * f32(0.9999) + f32(0.0001)) end
    end
    local want = f32(f32(f32(v[1] + v[2]) + v[3]) + v[4])
    check(math.abs(out[5] - want) <= 1e-5 * math.abs(want),
      string.format("out[5] = %.9g, the CPU gives %.9g", out[5], want))
  end
  -- 4096 dependent FMAs at 4 cycles at 1.98 GHz: about 8 microseconds, past the launch's own
  -- cost; four chains interleave in the same time on the H200 (measured 1.03x)
  check(ms[0] > 0.008, string.format("one chain: %.4g ms, less than its latency allows", ms[0]))
  check(ms[1] < 1.6 * ms[0], string.format("four chains %.4g ms against one %.4g ms", ms[1], ms[0]))
end)

test("DRAM moves 64 bytes at a time: one float per 64 bytes costs twice one per 32", function()
  local k = cuda.kernel([[__global__ void gather(const float *in, float *out, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[(long long)i * s]; }]])
  local n, ms = 1 << 20, {}
  local x = cuda.arange(n * 16)
  for _, s in ipairs({ 8, 16 }) do
    local y = cuda.zeros(n)
    ms[s] = cuda.time(function() k[{ n // 256, 256 }](x, y, n, s) end, { warmup = 1, reps = 1 }).median
    checkeq(y[n - 1], f32((n - 1) * s), "out[n-1] with stride " .. s)
  end
  -- the H200: 0.0404 ms and 0.0717 ms for 4M floats (bench/model/h200_effects.lua)
  check(ms[16] > 1.5 * ms[8], string.format("stride 16: %.4g ms, stride 8: %.4g ms", ms[16], ms[8]))
end)

test("the latency parameters are the model's, by name", function()
  local perf = cuda.simopts().perf
  local lat = perf.lat_fp32
  check(lat >= 4 and lat < 5, "cuda.simopts().perf.lat_fp32, an FFMA chain's cycles: " .. tostring(lat))
  check(perf.l1_local_bytes > 0 and perf.l1_local_bytes <= perf.l1_bytes,
    "the L1 spills stay in is part of the L1: " .. tostring(perf.l1_local_bytes))
  -- what-if: a slower FMA makes the one-chain kernel slower
  local k, out = cuda.kernel(CHAIN), cuda.zeros(132 * 32)
  local function ms() return cuda.time(function() k[{ 132, 32 }](out, 4096, 0) end,
    { warmup = 0, reps = 1 }).median end
  local base = ms()
  cuda.simopts{ perf = { lat_fp32 = 8 } }
  local slow = ms()
  cuda.simopts{ perf = { lat_fp32 = lat } }
  check(slow > 1.25 * base, string.format("lat_fp32 = 8: %.4g ms against %.4g ms", slow, base))
end)

test("calibrate.lua --only: an unknown group is refused, its groups named, no file written", function()
  local bin = T.self_command()
  local out = os.tmpname()
  os.remove(out)
  local p = assert(io.popen("exec " .. bin .. " --sim bench/model/calibrate.lua " .. out ..
    " --only chains,nosuch 2>&1"))
  local said = p:read("a")
  local ok, _, code = p:close()
  check(not ok and code == 2, "exit status " .. tostring(code) .. ": " .. said)
  check(said:find("no group 'nosuch'", 1, true) and said:find("scattered_loads", 1, true), said)
  local f = io.open(out)
  check(f == nil, "calibrate.lua wrote " .. out)
  if f then f:close(); os.remove(out) end
end)

return T.done()
