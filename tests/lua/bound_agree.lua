-- bound_agree.lua: cuda.time, cuda.stats and cuda.roofline name the same limit for one launch
-- (one function, model.bound, decides it), for kernels bound by different limits; and the
-- block-scheduling advice never says "bigger blocks" to a kernel whose blocks are already big.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(3)

local SIM = cuda.backend() == "sim"
local saxpy = SIM and cuda.kernel [[
__global__ void saxpy(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + y[i];
}]]
local heavy = SIM and cuda.kernel [[
__global__ void heavy(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; for (int k = 0; k < 512; k++) v = v * 1.0001f + 0.5f; y[i] = v; }
}]]

-- The bound in the three tools' words for the launch fn makes.
local function three(fn, opts)
  local t = cuda.time(fn)
  local time_line = tostring(t):match("bound by (.-);") or tostring(t):match("bound by (.-)%)")
  local stats_line = tostring(cuda.stats()):match("Bound by (.-):")
  local p = cuda.roofline.measure("k", fn, opts)
  local r = cuda.roofline({ p })
  return time_line, stats_line, r[1].bound_text, (tostring(r):gsub("%s+", " "))
end

-- Each test needs the timing model, which runs on the simulator.
local function sim_test(name, f)
  if SIM then test(name, f) else T.skip(name, "the timing model runs on the simulator") end
end

local function agree(name, fn, opts)
  sim_test("bound by: time, stats and roofline agree for " .. name, function()
    local a, b, c, chart = three(fn, opts)
    check(a and b and c, "each names a limit: " .. tostring(a) .. " / " .. tostring(b) .. " / " .. tostring(c))
    checkeq(b, a, "cuda.stats against cuda.time")
    checkeq(c, a, "cuda.roofline against cuda.time")
    check(chart:find(a, 1, true), "the roofline's table prints it: " .. chart)
  end)
end

local n = 1 << 25
local x, y = SIM and cuda.rand(n), SIM and cuda.rand(n)
agree("a streaming kernel", function() saxpy[{n // 256, 256}](x, y, n) end)
local m = 1 << 20
local hx, hy = SIM and cuda.rand(m), SIM and cuda.rand(m)
-- its arrays stay in L2, so the roofline is given the bytes it must move at least
agree("an arithmetic-heavy kernel", function() heavy[{m // 256, 256}](hx, hy, m) end, {bytes = 8 * m})

sim_test("block scheduling: small blocks are told to grow, big ones to do more each", function()
  local small = 1 << 22
  local sx, sy = cuda.rand(small), cuda.rand(small)
  cuda.time(function() saxpy[{small // 32, 32}](sx, sy, small) end)
  local s32 = cuda.stats().model
  checkeq(s32.limit, "blocks", "blocks of 32 over 4 Mi elements are bound by block dispatch")
  check(s32.why:find("use bigger blocks", 1, true), s32.why)
  local big = 1 << 22
  local bx, by = cuda.rand(big), cuda.rand(big)
  cuda.time(function() saxpy[{big // 256, 256}](bx, by, big) end)
  local s256 = cuda.stats().model
  if s256.limit == "blocks" then
    check(not s256.why:find("bigger blocks", 1, true), s256.why)
    check(s256.why:find("grid-stride", 1, true), s256.why)
  else
    check(true)
  end
end)

return T.done()
