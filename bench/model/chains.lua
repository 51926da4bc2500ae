-- chains.lua: how long one warp waits for its own results, instruction by instruction. One warp
-- per SM runs a chain where every step needs the last one's result, so the time per step is
-- the latency of the step's instructions, not their throughput.
-- Loaded by calibrate.lua (group "chains"); bench/model/fit.lua reads raw.chains.
--
-- The steps that matter are those ptxas turns into a sequence of its own: sqrtf, 1/x and x/y in
-- IEEE rounding (and their doubles) become a special-function estimate refined by a few
-- dependent FMAs, behind a branch to a slow path for awkward inputs. Each step adds one f32 (or
-- f64) add to keep the value in range; that add's own latency is taken off with the plain FMA
-- chain's. Each chain runs at two lengths and the difference is used, so the launch's fixed
-- cost drops out. Every result is checked against the same chain computed here.
return function(mb, meas, raw, Q)
  local ms, near, f32 = mb.ms, mb.near, mb.f32
  local CHAINS = {
    -- name, C type, step, PTX that must appear, the step in Lua, its tolerance (an estimate's)
    { "fma32", "float", "v = fmaf(v, a, b)", "fma.rn.f32", function(v, a, b) return f32(v * a + b) end },
    { "sqrt32", "float", "v = sqrtf(v) + b", "sqrt.rn.f32",
      function(v, a, b) return f32(f32(math.sqrt(v)) + b) end },
    { "rcp32", "float", "v = 1.0f / v + b", "rcp.rn.f32", function(v, a, b) return f32(f32(1 / v) + b) end },
    { "div32", "float", "v = a / v + b", "div.rn.f32", function(v, a, b) return f32(f32(a / v) + b) end },
    { "rsqrt32", "float", "v = rsqrtf(v) + b", "rsqrt.approx",
      function(v, a, b) return 1 / math.sqrt(v) + b end, 1e-5 },
    { "fma64", "double", "v = fma(v, a, b)", "fma.rn.f64", function(v, a, b) return v * a + b end },
    { "sqrt64", "double", "v = sqrt(v) + b", "sqrt.rn.f64", function(v, a, b) return math.sqrt(v) + b end },
    { "rcp64", "double", "v = 1.0 / v + b", "rcp.rn.f64", function(v, a, b) return 1 / v + b end },
    { "div64", "double", "v = a / v + b", "div.rn.f64", function(v, a, b) return a / v + b end },
  }
  local parts = {}
  for _, c in ipairs(CHAINS) do
    parts[#parts + 1] = string.format([[
extern "C" __global__ void %s(%s *out, int iters, %s a, %s b) {
  %s v = 1.25;
  for (int k = 0; k < iters; k++) { %s; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
]], c[1], c[2], c[2], c[2], c[2], c[3])
  end
  local SRC = table.concat(parts)
  print("chains: one warp per SM, each step waiting for the last")
  local m = cuda.module(SRC)
  local ptx = m:ptx()
  local sms, clk = cuda.device().sm_count, cuda.device().clock_khz
  local iters = (1 << 15) // Q
  raw.chains = { source = SRC, iters = iters, cycles = {} }
  for _, c in ipairs(CHAINS) do
    local name, dtype = c[1], c[2] == "float" and "f32" or "f64"
    mb.check(name, ptx:find(c[4], 1, true) ~= nil, "no " .. c[4] .. " in the PTX")
    local out = cuda.zeros(sms * 32, dtype)
    local k = m[name][{ sms, 32 }]
    local a, b = 0.75, 0.5
    local t1 = ms(function() k(out, iters, a, b) end)
    local t2 = ms(function() k(out, 2 * iters, a, b) end)
    local want = 1.25
    for _ = 1, 2 * iters do want = c[5](want, a, b) end
    near(name, out[0], want, c[6])
    out:free()
    raw.chains.cycles[name] = (t2 - t1) * clk / iters
  end
  local cy = raw.chains.cycles
  print(string.format("  cycles per step: %s", (function()
    local s = {}
    for _, c in ipairs(CHAINS) do s[#s + 1] = string.format("%s %.1f", c[1], cy[c[1]]) end
    return table.concat(s, ", ")
  end)()))
end
