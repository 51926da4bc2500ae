-- facts_agree.lua: a fact cudalab states in two places says the same in both. Occupancy is
-- computed by cuda.occupancy (lua/visual/occupancy.lua) and by the simulator's timing model (C);
-- the L2's size is the device's, wherever a message or lesson names it; the fake device of the
-- Lua library's own tests states the modelled H200's limits.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(3)
local SIM = cuda.backend() == "sim"

local function sim_test(name, f)
  if SIM then test(name, f) else T.skip(name, "the timing model runs on the simulator") end
end

sim_test("occupancy: cuda.occupancy and the timing model agree on every shape", function()
  local ks = {
    light = cuda.kernel [[__global__ void light(float *a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }]],
    shared = cuda.kernel [[__global__ void sh(float *a, int n) {
      extern __shared__ float s[]; int i = blockIdx.x * blockDim.x + threadIdx.x;
      s[threadIdx.x] = i < n ? a[i] : 0; __syncthreads();
      if (i < n) a[i] = s[blockDim.x - 1 - threadIdx.x]; }]],
    heavy = cuda.kernel [[__global__ void heavy(float *a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
      float v[24]; for (int k = 0; k < 24; k++) v[k] = a[i] * k;
      for (int r = 0; r < 8; r++) for (int k = 0; k < 24; k++) v[k] = v[k] * v[(k + r) % 24] + 1.0f;
      float s = 0; for (int k = 0; k < 24; k++) s += v[k]; a[i] = s; }]],
  }
  local checked = 0
  for name, k in pairs(ks) do
    for _, b in ipairs({ 32, 64, 128, 256, 512, 1024 }) do
      for _, sh in ipairs(name == "shared" and { 4096, 16384, 49152 } or { 0 }) do
        local o = cuda.occupancy(k, b, sh)
        local grid = 132 * 64 -- enough blocks to fill every SM: the model's figure is then the limit
        local a = cuda.zeros(grid * b)
        cuda.time(function() k[{ grid, b, sh }](a, grid * b) end)
        checkeq(cuda.stats().model.occupancy, o.occupancy,
          string.format("%s, blocks of %d, %d bytes of shared memory: the model against cuda.occupancy", name, b, sh))
        checked = checked + 1
      end
    end
  end
  checkeq(checked, 30)
end)

test("the L2's size is the device's in the roofline's message", function()
  if cuda.backend() == "none" then check(true) return end
  local d = cuda.device()
  check(math.type(d.l2_bytes) == "integer" and d.l2_bytes > 0, "the device states its L2")
  local k = cuda.kernel [[__global__ void touch(float *a) { a[threadIdx.x] += 1.0f; }]]
  local a = cuda.zeros(32)
  k[{ 1, 32 }](a) -- warm: the measured launch then finds its array in the L2
  local ok, err = pcall(cuda.roofline.measure, "touch", function() k[{ 1, 32 }](a) end, { flops = 32 })
  if SIM then
    check(not ok, "a launch that moves no DRAM bytes has no place on the roofline")
    check(tostring(err):find(require("format").bytes(d.l2_bytes), 1, true), tostring(err))
  else
    check(true)
  end
end)

sim_test("the Lua tests' fake device states the modelled H200's limits", function()
  local fake = dofile("tests/lua_unit/fake_cuda.lua")
  local fd, d = fake.new().device(), cuda.device()
  local compared = 0
  for key, v in pairs(fd) do
    if key ~= "name" and key ~= "backend" then
      checkeq(v, d[key], "the fake device's " .. key .. " against the simulator's")
      compared = compared + 1
    end
  end
  check(compared >= 3, "the fake device states its limits")
end)

return T.done()
