-- model_queues.lua: where the H200 timing model queues work the way the GPU does, each as an
-- order or a ratio the H200 shows (bench/model/effects.lua and calibration.lua hold the measured
-- times): atomics per L2 slice and per address, ptxas's IEEE sqrt and division sequences, stores
-- that cover part of a sector, cudalab's own fill kernel, ptxas's interleaving of independent
-- chains, and a warp's load waiting for the slowest of its lanes' lines. Results are checked against a CPU
-- reference, times against each other.
local T = dofile("tests/lua/testlib.lua")
T.plan(8)
local test, check, checkeq = T.test, T.check, T.checkeq

local function model_ms(fn) return cuda.time(fn, { warmup = 0, reps = 1 }).median end

test("atomics: 128 hashed bins queue on two L2 slices, slower than 16 or 1024 bins", function()
  local k = cuda.kernel([[__global__ void hashed(int *bins, int nbins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[(unsigned)i * 2654435761u % (unsigned)nbins], 1); }]])
  local n, ms = 1 << 20, {}
  for _, nb in ipairs({ 16, 128, 1024 }) do
    local bins = cuda.zeros(nb, "i32")
    ms[nb] = model_ms(function() k[{ n // 256, 256 }](bins, nb, n) end)
    local want = 0
    for i = 0, n - 1 do if i * 2654435761 % (1 << 32) % nb == 0 then want = want + 1 end end
    checkeq(bins[0], want, nb .. " bins: bins[0]")
  end
  -- the H200, 4M increments: 0.32, 0.79 and 0.41 ms
  check(ms[128] > 1.5 * ms[16] and ms[128] > 1.5 * ms[1024], string.format(
    "16 bins %.4g ms, 128 bins %.4g ms, 1024 bins %.4g ms", ms[16], ms[128], ms[1024]))
  check(cuda.stats().model.limit == "atomic", "bound by atomics: " .. cuda.stats().model.limit)
end)

test("atomics: one float total updated by every warp is a chain of dependent adds", function()
  local k = cuda.kernel([[__global__ void per_warp(const float *x, float *total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, v); }]])
  local ms = {}
  for _, n in ipairs({ 1 << 18, 1 << 20 }) do
    local x, total = cuda.full(n, 0.5), cuda.zeros(1)
    ms[n] = model_ms(function() k[{ n // 256, 256 }](x, total, n) end)
    checkeq(total[0], 0.5 * n, "the total of " .. n .. " halves")
  end
  -- one wait per warp: the extra warps' time over their number is one float add's wait at the
  -- address (the H200: 1.76 ns)
  local per_add_ns = (ms[1 << 20] - ms[1 << 18]) * 1e6 / (((1 << 20) - (1 << 18)) / 32)
  check(per_add_ns > 1.2 and per_add_ns < 2.5, string.format(
    "%.4g ms against %.4g ms: %.3g ns per warp's add", ms[1 << 20], ms[1 << 18], per_add_ns))
end)

test("1.0f / sqrtf holds the warp for ptxas's two IEEE sequences; rsqrtf does not", function()
  local k = cuda.kernel([[__global__ void pull(const float *p, float *f, int n, int exact) {
    __shared__ float tile[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float me = p[i], acc = 0;
    for (int base = 0; base < n; base += blockDim.x) {
      tile[threadIdx.x] = p[base + threadIdx.x];
      __syncthreads();
      for (int j = 0; j < blockDim.x; j++) {
        float d = tile[j] - me, d2 = d * d + 0.01f;
        float inv = exact ? 1.0f / sqrtf(d2) : rsqrtf(d2);
        acc += d * inv * inv * inv;
      }
      __syncthreads();
    }
    f[i] = acc; }]])
  local n = 4096
  local p, f = cuda.arange(n, "f32"), cuda.zeros(n)
  local ms = {}
  for _, exact in ipairs({ 0, 1 }) do
    ms[exact] = model_ms(function() k[{ n // 128, 128 }](p, f, n, exact) end)
  end
  -- f[0] = sum over j of (j - 0) / (j^2 + 0.01)^1.5, in doubles: near the exact kernel's floats
  local want = 0
  for j = 1, n - 1 do want = want + j / (j * j + 0.01) ^ 1.5 end
  check(math.abs(f[0] - want) <= 1e-4 * want, string.format("f[0] = %.7g, the CPU gives %.7g", f[0], want))
  -- the H200, an n-body tile of 8192 points: 0.75 ms against 0.20 ms
  check(ms[1] > 2 * ms[0], string.format("1/sqrtf %.4g ms, rsqrtf %.4g ms", ms[1], ms[0]))
end)

test("a store to part of a sector reads its line first: one float per 256 bytes", function()
  local k = cuda.kernel([[__global__ void scatter(const float *in, float *out, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[(long long)i * s] = in[i]; }]])
  local n, bytes = 1 << 20, {}
  local x = cuda.arange(n)
  for _, s in ipairs({ 1, 64 }) do
    local y = cuda.zeros(n * s)
    k[{ n // 256, 256 }](x, y, n, s)
    checkeq(y[(n - 1) * s], n - 1, "out[(n-1)*" .. s .. "]")
    bytes[s] = cuda.stats().model.dram_bytes / n
  end
  -- whole sectors: 4 bytes read and 4 written per float; a partial one: its 128-byte line read,
  -- its 64-byte burst written (the H200: 4M int stores one per 128 bytes, 0.18 ms, ~185 B each)
  check(bytes[1] < 12, string.format("stride 1: %.1f DRAM bytes per float", bytes[1]))
  check(bytes[64] > 150 and bytes[64] < 220, string.format("stride 64: %.1f DRAM bytes per float", bytes[64]))
end)

test("fill, arange and rand are modelled as the device kernels they are on a GPU", function()
  local n = 16 << 20 -- 64 MiB of floats
  local a = cuda.empty(n)
  for name, fn in pairs({ fill = function() a:fill(1) end, arange = function() cuda.arange(n):free() end,
                          rand = function() cuda.rand(n):free() end }) do
    local t = model_ms(fn)
    -- a kernel at DRAM speed: about 0.02 ms; as a copy over PCIe it would be about 4 ms
    check(t < 0.1, string.format("%s of 64 MiB: %.4g ms", name, t))
  end
  checkeq(a[n - 1], 1, "the fill's last element")
end)

test("ptxas interleaves independent chains: three cost a warp about what one does", function()
  local m = cuda.module([[
    extern "C" __global__ void one(float *out, int iters) {
      float a = threadIdx.x * 1e-3f;
      for (int k = 0; k < iters; k++) { a = a * 0.999f + 0.001f; a = a * 0.999f + 0.001f; }
      out[blockIdx.x * blockDim.x + threadIdx.x] = a; }
    extern "C" __global__ void three(float *out, int iters) {
      float a = threadIdx.x * 1e-3f, b = a + 0.5f, c = a + 0.25f;
      for (int k = 0; k < iters; k++) {
        a = a * 0.999f + 0.001f; a = a * 0.999f + 0.001f;
        b = b * 0.998f + 0.002f; b = b * 0.998f + 0.002f;
        c = c * 0.997f + 0.003f; c = c * 0.997f + 0.003f;
      }
      out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c; }]])
  local iters, t = 2048, 7
  local out, ms = cuda.zeros(132 * 32), {}
  local function f32(v) return (string.unpack("f", string.pack("f", v))) end
  local function chain(v, m_, c_)
    v = f32(v)
    for _ = 1, 2 * iters do v = f32(v * f32(m_) + f32(c_)) end
    return v
  end
  local a0 = f32(t * f32(1e-3))
  for _, name in ipairs({ "one", "three" }) do
    ms[name] = model_ms(function() m[name][{ 132, 32 }](out, iters) end)
    local want = chain(a0, 0.999, 0.001)
    if name == "three" then
      want = f32(f32(want + chain(f32(a0 + 0.5), 0.998, 0.002)) + chain(f32(a0 + 0.25), 0.997, 0.003))
    end
    check(math.abs(out[t] - want) <= 1e-5 * math.abs(want),
      string.format("%s: out[%d] = %.7g, the CPU gives %.7g", name, t, out[t], want))
  end
  -- the H200, one warp per SM: four fmaf chains take 1.03x the time of one
  check(ms.three < 1.25 * ms.one, string.format("one chain %.4g ms, three %.4g ms", ms.one, ms.three))
end)

test("a warp's load waits for the slowest of its lanes' unrelated lines", function()
  -- each step's address depends on the last load (an LCG plus the loaded zero), so the lanes'
  -- lines are unrelated and every step waits for the slowest of them
  local k = cuda.kernel([[__global__ void hop(const unsigned *z, unsigned *end, unsigned mask,
                                              int lanes, int steps) {
    if (threadIdx.x >= lanes) return;
    unsigned p = (blockIdx.x * 32 + threadIdx.x) * 2654435761u & mask;
    for (int s = 0; s < steps; s++) p = ((p * 1103515245u + 12345u) & mask) + z[p];
    end[blockIdx.x * 32 + threadIdx.x] = p; }]])
  local n, steps = 1 << 26, 256 -- 256 MiB: sixteen lanes' lines overflow the L2
  local z, ends = cuda.zeros(n, "u32"), cuda.zeros(132 * 32, "u32")
  local tail = {}
  for _, lanes in ipairs({ 1, 16 }) do
    local t = model_ms(function() k[{ 132, 32 }](z, ends, n - 1, lanes, steps) end)
    tail[lanes] = t / cuda.stats{ perf = { spread_dram = 0, spread_l2 = 0 } }.model.time_ms
    local t_id = 32 + lanes - 1 -- block 1's last active lane
    local p = (t_id * 2654435761) & (n - 1)
    for _ = 1, steps do p = (p * 1103515245 + 12345) & (n - 1) end
    checkeq(ends[t_id], p, lanes .. " lanes: end[" .. t_id .. "]")
  end
  -- the H200: sixteen lanes in 2 GiB take 1.52x one lane's DRAM latency a step
  check(math.abs(tail[1] - 1) < 0.01, string.format("one lane: %.3fx without the spread", tail[1]))
  check(tail[16] > 1.3 and tail[16] < 1.7, string.format("16 lanes: %.3fx without the spread", tail[16]))
end)

test("atomics: the modelled time does not depend on where the host put the bins", function()
  local k = cuda.kernel([[__global__ void hist(const int *x, int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(&bins[x[i] & 255], 1); }]])
  local n = 1 << 18
  local x = cuda.arange(n, "i32")
  local ms, keep = {}, {}
  for pad = 0, 7 do
    -- small arrays of 256 to 2048 bytes before the bins move them on the host's heap
    keep[#keep + 1] = cuda.zeros(64 * (pad + 1), "i32")
    local bins = cuda.zeros(256, "i32")
    ms[#ms + 1] = model_ms(function() k[{ n // 256, 256 }](x, bins, n) end)
    checkeq(bins[255], n // 256, "bins[255]")
  end
  for i = 2, #ms do
    check(ms[i] == ms[1], string.format("placement %d: %.6g ms, placement 1: %.6g ms", i, ms[i], ms[1]))
  end
end)

return T.done()
