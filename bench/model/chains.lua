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
  local function F(name, ptx, step, lua, tol)
    return { name = name, ctype = "float", dtype = "f32", ptx = ptx, step = step, lua = lua,
      tol = tol or 0, v0 = 1.25, a = 0.75, b = 0.5 }
  end
  local function D(name, ptx, step, lua)
    return { name = name, ctype = "double", dtype = "f64", ptx = ptx, step = step, lua = lua,
      tol = 0, v0 = 1.25, a = 0.75, b = 0.5 }
  end
  local CHAINS = { -- the step in C, the PTX it must compile to, the same step in Lua
    F("fma32", "fma.rn.f32", "v = fmaf(v, a, b)", function(v, a, b) return f32(v * a + b) end),
    F("sqrt32", "sqrt.rn.f32", "v = sqrtf(v) + b", function(v, a, b) return f32(f32(math.sqrt(v)) + b) end),
    F("rcp32", "rcp.rn.f32", "v = 1.0f / v + b", function(v, a, b) return f32(f32(1 / v) + b) end),
    F("div32", "div.rn.f32", "v = a / v + b", function(v, a, b) return f32(f32(a / v) + b) end),
    F("rsqrt32", "rsqrt.approx", "v = rsqrtf(v) + b", function(v, a, b) return 1 / math.sqrt(v) + b end,
      1e-5), -- an estimate: near the exact value, not equal to it
    D("fma64", "fma.rn.f64", "v = fma(v, a, b)", function(v, a, b) return v * a + b end),
    D("sqrt64", "sqrt.rn.f64", "v = sqrt(v) + b", function(v, a, b) return math.sqrt(v) + b end),
    D("rcp64", "rcp.rn.f64", "v = 1.0 / v + b", function(v, a, b) return 1 / v + b end),
    D("div64", "div.rn.f64", "v = a / v + b", function(v, a, b) return a / v + b end),
    { name = "udiv32", ctype = "unsigned", dtype = "u32", ptx = "div.u32", step = "v = a / v + b",
      lua = function(v, a, b) return a // v + b end, tol = 0, v0 = 7, a = 4000000000, b = 3 },
  }
  local parts = {}
  for _, c in ipairs(CHAINS) do
    parts[#parts + 1] = string.format([[
extern "C" __global__ void %s(%s *out, int iters, %s a, %s b) {
  %s v = %s;
  for (int k = 0; k < iters; k++) { %s; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
]], c.name, c.ctype, c.ctype, c.ctype, c.ctype, tostring(c.v0), c.step)
  end
  local SRC = table.concat(parts)
  print("chains: one warp per SM, each step waiting for the last")
  local m = cuda.module(SRC)
  local ptx = m:ptx()
  local sms, clk = cuda.device().sm_count, cuda.device().clock_khz
  local iters = (1 << 15) // Q
  raw.chains = { source = SRC, iters = iters, cycles = {} }
  for _, c in ipairs(CHAINS) do
    mb.check(c.name, ptx:find(c.ptx, 1, true) ~= nil, "no " .. c.ptx .. " in the PTX")
    local out = cuda.zeros(sms * 32, c.dtype)
    local k = m[c.name][{ sms, 32 }]
    local t1 = ms(function() k(out, iters, c.a, c.b) end)
    local t2 = ms(function() k(out, 2 * iters, c.a, c.b) end)
    local want = c.v0
    for _ = 1, 2 * iters do want = c.lua(want, c.a, c.b) end
    near(c.name, out[0], want, c.tol)
    out:free()
    raw.chains.cycles[c.name] = (t2 - t1) * clk / iters
  end
  local cy = raw.chains.cycles
  print(string.format("  cycles per step: %s", (function()
    local s = {}
    for _, c in ipairs(CHAINS) do s[#s + 1] = string.format("%s %.1f", c.name, cy[c.name]) end
    return table.concat(s, ", ")
  end)()))
end
