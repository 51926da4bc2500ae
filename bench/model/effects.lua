-- effects.lua: the timing model's effect set: one sweep per effect a lesson teaches, where a
-- model that counts throughput alone reads the H200 wrong (register spills under
-- __launch_bounds__, atomics contending for addresses, the latency of dependent instructions, of
-- a dependent load from DRAM or from L2, grid-stride read-modify-write, divergent paths, shared
-- memory strides, an n-body tile, strided reads). Same form as points.lua: {sweep, label, setup}.
--
-- Each effect has two kernels of its own. The model's handling of the effect is developed
-- against the first ("effect: ... [calibration]"); the second ("effect: ... [held out]") is a
-- different kernel showing the same effect, never looked at while the model was changed, and
-- check.lua reports the two apart. Sizes keep each point under about 5e8 simulated thread
-- instructions, so the set runs on the simulator in minutes.

local P = {}
local function add(effect, role, label, setup)
  P[#P + 1] = { sweep = "effect: " .. effect .. " [" .. role .. "]", label = label, setup = setup,
    role = role }
end

local function f32(v) return (string.unpack("f", string.pack("f", v))) end
local function cdiv(a, b) return (a + b - 1) // b end

local function near(what, got, want, rtol)
  if math.abs(got - want) <= (rtol or 0) * math.abs(want) then return true end
  return false, string.format("%s: got %.9g, expected %.9g", what, got, want)
end

-- The spill kernels, one per minBlocks, written out (cudalab finds a kernel by its name in the
-- source, which a macro would hide); the f32 one is shared with the model's test (spill48.lua).
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local spill48 = dofile(here .. "/spill48.lua")
local function spill_source()
  local parts = {}
  for _, b in ipairs({ 1, 2, 4, 6, 8 }) do
    parts[#parts + 1] = spill48.source(b, "spill48_b" .. b)
  end
  for _, b in ipairs({ 1, 3, 5, 8 }) do
    parts[#parts + 1] = string.format([[
extern "C" __global__ void __launch_bounds__(256, %d)
spilld_b%d(const double *x, double *y, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a[20];
#pragma unroll
  for (int j = 0; j < 20; j++) a[j] = x[(i * 3 + j) %% n];
  for (int k = 0; k < iters; k++) {
#pragma unroll
    for (int j = 0; j < 20; j++) a[j] = a[j] * 0.75 + a[(j + 3) %% 20] * 0.25;
  }
  double s = 0;
#pragma unroll
  for (int j = 0; j < 20; j++) s += a[j];
  y[i] = s;
}
]], b, b)
  end
  return table.concat(parts)
end

-- Horner's rule on `polys` independent polynomials per thread, each written out step after step:
-- ptxas interleaves them, so up to the pipe's latency more cost a warp little more.
local function horner_source()
  local parts = {}
  for _, p in ipairs({ 1, 2, 8 }) do
    parts[#parts + 1] = string.format([[
extern "C" __global__ void horner%d(float *out, int iters) {
  float x[%d], acc[%d];
#pragma unroll
  for (int j = 0; j < %d; j++) { x[j] = 0.5f + 0.001f * (threadIdx.x + j); acc[j] = 1.0f; }
  for (int k = 0; k < iters; k++) {
#pragma unroll
    for (int j = 0; j < %d; j++) { acc[j] = acc[j] * x[j] + 0.75f; acc[j] = acc[j] * x[j] - 0.125f; }
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < %d; j++) s += acc[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
]], p, p, p, p, p, p)
  end
  return table.concat(parts)
end

local SRC = spill_source() .. horner_source() .. [[
extern "C" __global__ void list_init(int2 *nodes, unsigned mask) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i <= mask;
       i += (long long)gridDim.x * blockDim.x)
    nodes[i] = make_int2((int)(((unsigned)i * 1664525u + 1013904223u) & mask), (int)(i & 1023));
}
// lanes lanes of each warp walk a linked list of {next, value} nodes, summing the values
extern "C" __global__ void list_walk(const int2 *nodes, int *sums, unsigned mask, int lanes,
                                     int steps) {
  if (threadIdx.x >= lanes) return;
  int t = blockIdx.x * 32 + threadIdx.x;
  unsigned p = ((unsigned)t * 2246822519u) & mask;
  int s = 0;
  for (int k = 0; k < steps; k++) { int2 v = nodes[p]; s += v.y; p = (unsigned)v.x; }
  sums[t] = s;
}
extern "C" __global__ void hashed_count(int *bins, int nbins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[(unsigned)i * 2654435761u % (unsigned)nbins], 1);
}
extern "C" __global__ void modulo_sum(const float *x, float *bins, int nbins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[i % nbins], x[i]);
}

extern "C" __global__ void fma_chains(float *out, int iters, int chains) {
  float v0 = threadIdx.x * 1e-3f, v1 = v0 + 1, v2 = v0 + 2, v3 = v0 + 3;
  if (chains == 1) {
    for (int k = 0; k < iters; k++) v0 = fmaf(v0, 0.9999f, 0.0001f);
  } else {
    for (int k = 0; k < iters; k++) {
      v0 = fmaf(v0, 0.9999f, 0.0001f); v1 = fmaf(v1, 0.9999f, 0.0001f);
      v2 = fmaf(v2, 0.9999f, 0.0001f); v3 = fmaf(v3, 0.9999f, 0.0001f);
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v0 + v1 + v2 + v3;
}
extern "C" __global__ void dmad_chain(double *out, int iters) {
  double v = threadIdx.x * 1e-3;
  for (int k = 0; k < iters; k++) v = v * 0.99990 + 0.0001;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
extern "C" __global__ void imad_chain(unsigned *out, int iters) {
  unsigned v = threadIdx.x;
  for (int k = 0; k < iters; k++) v = v * 1664525u + 1013904223u;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void ring_init(int *next, int n, int step) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    next[i] = (int)((i + step) % n);
}
// chains lanes of each block follow next[] from their own start, steps times
extern "C" __global__ void ring_walk(const int *next, int *end, int n, int steps, int chains) {
  if (threadIdx.x >= chains) return;
  int t = blockIdx.x * chains + threadIdx.x;
  int p = (int)(((long long)t * 7919) % n);
  for (int k = 0; k < steps; k++) p = next[p];
  end[t] = p;
}

extern "C" __global__ void scale_shift(float *x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    x[i] = x[i] * 0.5f + 1.0f;
}
extern "C" __global__ void accumulate(const float *x, float *y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] += x[i];
}

// ways: how many different paths a warp takes (by lane), or 0: by warp, four paths
extern "C" __global__ void paths(float *x, int n, int iters, int ways) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int sel = ways == 0 ? (i / 32) % 4 : (threadIdx.x % 32) % ways;
  float v = x[i];
  if (sel == 0)      { for (int k = 0; k < iters; k++) v = fmaf(v, 0.999f, 0.001f); }
  else if (sel == 1) { for (int k = 0; k < iters; k++) v = fmaf(v, 0.998f, 0.002f); }
  else if (sel == 2) { for (int k = 0; k < iters; k++) v = fmaf(v, 0.997f, 0.003f); }
  else               { for (int k = 0; k < iters; k++) v = fmaf(v, 0.996f, 0.004f); }
  x[i] = v;
}
extern "C" __global__ void odd_even(float *x, int n, int iters, int by_lane) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int odd = by_lane ? i & 1 : (i >> 5) & 1;
  float v = x[i];
  if (odd) { for (int k = 0; k < iters; k++) v = v * 0.5f + 0.25f; }
  else     { for (int k = 0; k < iters; k++) v = v * 0.25f + 0.5f; }
  x[i] = v;
}

// each thread reads the shared table with a stride: stride 1 and odd strides are conflict-free
extern "C" __global__ void shared_stride(float *out, int iters, int stride) {
  __shared__ float t[1024];
  for (int j = threadIdx.x; j < 1024; j += blockDim.x) t[j] = (float)(j & 7);
  __syncthreads();
  float acc = 0;
  unsigned base = threadIdx.x * stride;
  for (int k = 0; k < iters; k++) acc += t[(base + k) & 1023];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
// a 32 x 32 tile read by rows or by columns, padded or not
extern "C" __global__ void tile_read(float *out, int iters, int by_column, int pad) {
  __shared__ float t[32 * 33];
  int w = 32 + pad, lane = threadIdx.x % 32, row = threadIdx.x / 32;
  for (int j = threadIdx.x; j < 32 * 33; j += blockDim.x) t[j] = (float)(j % 5);
  __syncthreads();
  float acc = 0;
  for (int k = 0; k < iters; k++) {
    int r = (row + k) & 31;
    acc += by_column ? t[lane * w + r] : t[r * w + lane];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// pairwise pull of n points in 2D through a shared tile of blockDim.x points
extern "C" __global__ void pull2d(const float2 *p, float2 *f, int n, int exact) {
  extern __shared__ float2 tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float2 me = p[i < n ? i : 0], acc = make_float2(0, 0);
  for (int base = 0; base < n; base += blockDim.x) {
    tile[threadIdx.x] = p[base + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < blockDim.x; j++) {
      float dx = tile[j].x - me.x, dy = tile[j].y - me.y;
      float d2 = dx * dx + dy * dy + 0.01f;
      float inv = exact ? 1.0f / sqrtf(d2) : rsqrtf(d2);
      float s = inv * inv * inv;
      acc.x += dx * s; acc.y += dy * s;
    }
    __syncthreads();
  }
  if (i < n) f[i] = acc;
}

extern "C" __global__ void gather_stride(const float *in, float *out, int n, int s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[(long long)i * s];
}
extern "C" __global__ void scatter_stride(const float *in, float *out, int n, int s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[(long long)i * s] = in[i];
}
]]

local mods = {}
local function own(name)
  local b = cuda.backend()
  mods[b] = mods[b] or cuda.module(SRC)
  return mods[b][name]
end

-- Register spills: the same work under __launch_bounds__(256, minBlocks). More resident blocks
-- allow fewer registers per thread; past what the kernel needs, ptxas spills to local memory.
local function spill_point(kernel, dtype, n, iters, ref)
  return function()
    local k = own(kernel)
    local x, y = cuda.rand(n, dtype, 11), cuda.zeros(n, dtype)
    return function() k[{ cdiv(n, 256), 256 }](x, y, n, iters) end, function()
      local hx = x:host()
      for _, i in ipairs({ 0, n // 3, n - 1 }) do
        local ok, why = near("y[" .. i .. "]", y[i], ref(hx, i, n, iters), 2e-4)
        if not ok then return false, why end
      end
      return true
    end
  end
end
local function spilld_ref(x, i, n, iters)
  local a = {}
  for j = 0, 19 do a[j] = x[(i * 3 + j) % n] end
  for _ = 1, iters do
    for j = 0, 19 do a[j] = a[j] * 0.75 + a[(j + 3) % 20] * 0.25 end
  end
  local s = 0
  for j = 0, 19 do s = s + a[j] end
  return s
end
for _, b in ipairs({ 1, 2, 4, 6, 8 }) do
  add("register spills", "calibration", "minBlocks " .. b,
    spill_point("spill48_b" .. b, "f32", 132 * 256 * 8, 32, spill48.ref))
end
for _, b in ipairs({ 1, 3, 5, 8 }) do
  add("register spills", "held out", "f64, minBlocks " .. b,
    spill_point("spilld_b" .. b, "f64", 132 * 256 * 8, 48, spilld_ref))
end

-- Atomic contention: 4M increments spread over nbins addresses; fewer bins, longer queues.
for _, nb in ipairs({ 1, 16, 128, 1024, 16384, 262144 }) do
  add("atomics per address", "calibration", nb .. " bins", function()
    local n = 1 << 22
    local k = own("hashed_count")
    local bins = cuda.zeros(nb, "i32")
    return function() bins:fill(0) k[{ n // 256, 256 }](bins, nb, n) end, function()
      local want0 = 0
      for i = 0, n - 1 do if (i * 2654435761) % (1 << 32) % nb == 0 then want0 = want0 + 1 end end
      if bins[0] ~= want0 then
        return false, string.format("bins[0] = %d, expected %d", bins[0], want0)
      end
      return true
    end
  end)
end
for _, nb in ipairs({ 3, 100, 2000, 100000 }) do
  add("atomics per address", "held out", "float sums into " .. nb .. " bins", function()
    local n = 1 << 22
    local k = own("modulo_sum")
    local x, bins = cuda.full(n, 0.5), cuda.zeros(nb)
    return function() bins:fill(0) k[{ n // 256, 256 }](x, bins, nb, n) end, function()
      local want = 0.5 * ((n - 1) // nb + 1)
      return near("bins[0]", bins[0], want, 0)
    end
  end)
end

-- Dependent-instruction latency: warps per SM against independent chains per thread.
local function chain_point(kernel, dtype, warps, iters, chains, ref)
  return function()
    local k = own(kernel)
    local threads = warps * 32
    local out = cuda.zeros(132 * threads, dtype)
    local args = chains and { out, iters, chains } or { out, iters }
    return function() k[{ 132, threads }](table.unpack(args)) end, function()
      local ok, why = near("out[5]", out[5], ref(5, iters, chains), 1e-5)
      return ok, why
    end
  end
end
local function fma_ref(t, iters, chains)
  local v = { f32(t * f32(1e-3)) }
  v[2], v[3], v[4] = f32(v[1] + 1), f32(v[1] + 2), f32(v[1] + 3)
  local a, b = f32(0.9999), f32(0.0001)
  for c = 1, chains do
    for _ = 1, iters do v[c] = f32(v[c] * a + b) end
  end
  return f32(f32(f32(v[1] + v[2]) + v[3]) + v[4])
end
for _, c in ipairs({ { 1, 1 }, { 1, 4 }, { 4, 1 }, { 8, 1 }, { 8, 4 } }) do
  add("dependent FMA latency", "calibration",
    string.format("%d warp%s per SM, %d chain%s", c[1], c[1] > 1 and "s" or "", c[2],
      c[2] > 1 and "s" or ""),
    chain_point("fma_chains", "f32", c[1], 8192, c[2], fma_ref))
end
local function dmad_ref(t, iters)
  local v = t * 1e-3
  for _ = 1, iters do v = v * 0.99990 + 0.0001 end
  return v
end
local function imad_ref(t, iters)
  local v = t
  for _ = 1, iters do v = (v * 1664525 + 1013904223) % (1 << 32) end
  return v
end
for _, w in ipairs({ 1, 4, 16 }) do
  add("dependent FMA latency", "held out", "f64, " .. w .. " warps per SM",
    chain_point("dmad_chain", "f64", w, 4096, nil, dmad_ref))
  add("dependent FMA latency", "held out", "int, " .. w .. " warps per SM",
    chain_point("imad_chain", "u32", w, 4096, nil, imad_ref))
end

local function horner_ref(t, iters, polys)
  local s = 0
  for j = 0, polys - 1 do
    local x, acc = f32(f32(0.001) * (t + j) + 0.5), 1.0 -- one fma, as ptxas contracts it
    for _ = 1, iters do
      acc = f32(acc * x + 0.75)
      acc = f32(acc * x - 0.125)
    end
    s = f32(s + acc)
  end
  return s
end
for _, c in ipairs({ { 1, 1 }, { 1, 2 }, { 1, 8 }, { 8, 8 } }) do
  add("dependent FMA latency", "held out",
    string.format("Horner, %d polynomial%s, %d warp%s per SM", c[2], c[2] > 1 and "s" or "", c[1],
      c[1] > 1 and "s" or ""),
    function()
      local k = own("horner" .. c[2])
      local threads, iters = c[1] * 32, 2048
      local out = cuda.zeros(132 * threads)
      return function() k[{ 132, threads }](out, iters) end, function()
        return near("out[5]", out[5], horner_ref(5, iters, c[2]), 1e-5)
      end
    end)
end

-- A dependent load: each step's address is the last load's value. The ring's size decides
-- whether the steps come from L2 or from DRAM.
local function ring_point(mb, chains, steps)
  return function()
    local n = mb * 262144
    local step = 262147 -- a prime: every step lands on a new 1 MiB-apart line, the ring is one cycle
    local next_, ends = cuda.zeros(n, "i32"), cuda.zeros(132 * chains, "i32")
    own("ring_init")[{ 1056, 256 }](next_, n, step)
    local k = own("ring_walk")
    return function() k[{ 132, 32 }](next_, ends, n, steps, chains) end, function()
      for _, t in ipairs({ 0, 132 * chains - 1 }) do
        local want = (t * 7919 % n + steps * step) % n
        if ends[t] ~= want then return false, string.format("end[%d] = %d, expected %d", t, ends[t], want) end
      end
      return true
    end
  end
end
for _, mb in ipairs({ 1, 8, 24, 256, 1024 }) do
  add("dependent loads: L2 or DRAM", "calibration", mb .. " MiB ring, 1 chain", ring_point(mb, 1, 2048))
end
for _, v in ipairs({ { 4, 8 }, { 512, 8 }, { 4, 32 }, { 512, 32 } }) do
  add("dependent loads: L2 or DRAM", "held out", v[1] .. " MiB ring, " .. v[2] .. " chains",
    ring_point(v[1], v[2], 1024))
end
-- Linked lists of 8-byte nodes in 512 MiB, 1, 8 or 32 lanes of each warp walking their own.
for _, lanes in ipairs({ 1, 8, 32 }) do
  add("dependent loads: L2 or DRAM", "held out", "linked lists, " .. lanes .. " lane" ..
    (lanes > 1 and "s" or "") .. " per warp", function()
    local n, steps = 1 << 26, 512
    local nodes, sums = cuda.zeros(2 * n, "i32"), cuda.zeros(132 * 32, "i32")
    own("list_init")[{ 1056, 256 }](nodes, n - 1)
    local k = own("list_walk")
    return function() k[{ 132, 32 }](nodes, sums, n - 1, lanes, steps) end, function()
      local t = 32 + lanes - 1 -- block 1's last walking lane
      local p, want = (t * 2246822519) & (n - 1), 0
      for _ = 1, steps do
        want = want + (p & 1023)
        p = (p * 1664525 + 1013904223) & (n - 1)
      end
      if sums[t] ~= want then return false, string.format("sums[%d] = %d, expected %d", t, sums[t], want) end
      return true
    end
  end)
end

-- Grid-stride read-modify-write of 32M floats: the grid decides the loads in flight.
for _, g in ipairs({ 66, 132, 264, 528, 1056, 2112, 8448 }) do
  add("grid-stride read-modify-write", "calibration", "grid " .. g .. " x 256", function()
    local n = 1 << 25
    local k = own("scale_shift")
    local x = cuda.full(n, 2.0)
    return function() k[{ g, 256 }](x, n) end, function()
      local v = x[n - 1] -- 2 -> 2 after any number of runs: 2 * 0.5 + 1
      return near("x[n-1]", v, 2.0, 0)
    end
  end)
end
for _, g in ipairs({ 132, 528, 2112 }) do
  add("grid-stride read-modify-write", "held out", "y += x, grid " .. g .. " x 128", function()
    local n = 1 << 24
    local k = own("accumulate")
    local x, y = cuda.zeros(n), cuda.full(n, 3.0)
    return function() k[{ g, 128 }](x, y, n) end, function()
      return near("y[7]", y[7], 3.0, 0)
    end
  end)
end

-- Divergence: paths a warp splits into, by lane, against the same paths taken by whole warps.
local function path_ref(v, sel, iters)
  local a = ({ 0.999, 0.998, 0.997, 0.996 })[sel + 1]
  a = f32(a)
  local b = f32(({ 0.001, 0.002, 0.003, 0.004 })[sel + 1])
  for _ = 1, iters do v = f32(v * a + b) end
  return v
end
for _, ways in ipairs({ 0, 1, 2, 4 }) do
  add("divergence", "calibration", ways == 0 and "4 paths, by warp" or (ways .. " path" ..
    (ways > 1 and "s" or "") .. " by lane"), function()
    local n = 1 << 20
    local k = own("paths")
    local x = cuda.full(n, 0.5)
    return function() k[{ n // 256, 256 }](x, n, 256, ways) end, function()
      for _, i in ipairs({ 0, 1, 2, 3, 33, 97 }) do
        local sel = ways == 0 and (i // 32) % 4 or (i % 32) % ways
        local ok, why = near("x[" .. i .. "]", x[i], path_ref(f32(0.5), sel, 256), 1e-5)
        if not ok then return false, why end
      end
      return true
    end
  end)
end
for _, by_lane in ipairs({ 0, 1 }) do
  add("divergence", "held out", by_lane == 1 and "odd/even by lane" or "odd/even by warp", function()
    local n = 1 << 20
    local k = own("odd_even")
    local x = cuda.full(n, 1.0)
    return function() k[{ n // 256, 256 }](x, n, 200, by_lane) end, function()
      -- both maps have fixed points: 0.5 for v * 0.5 + 0.25, 2/3 for v * 0.25 + 0.5
      for _, i in ipairs({ 0, 1, 32, 33 }) do
        local odd = by_lane == 1 and (i & 1) or ((i >> 5) & 1)
        local ok, why = near("x[" .. i .. "]", x[i], odd == 1 and 0.5 or 2 / 3, 1e-5)
        if not ok then return false, why end
      end
      return true
    end
  end)
end

-- Shared memory: a loop of reads whose stride sets the bank conflicts.
for _, s in ipairs({ 1, 2, 4, 8, 32, 33 }) do
  add("shared-memory stride", "calibration", "stride " .. s, function()
    local blocks, iters = 1056, 512
    local k = own("shared_stride")
    local out = cuda.zeros(blocks * 256)
    return function() k[{ blocks, 256 }](out, iters, s) end, function()
      local t, acc = 3, 0
      for q = 0, iters - 1 do acc = f32(acc + (((t * s + q) & 1023) & 7)) end
      return near("out[3]", out[3], acc, 0)
    end
  end)
end
for _, v in ipairs({ { 0, 0 }, { 1, 0 }, { 1, 1 } }) do
  add("shared-memory stride", "held out", (v[1] == 1 and "columns" or "rows") ..
    (v[2] == 1 and ", padded" or ""), function()
    local blocks, iters = 1056, 512
    local k = own("tile_read")
    local out = cuda.zeros(blocks * 256)
    return function() k[{ blocks, 256 }](out, iters, v[1], v[2]) end, function()
      local tid, w, acc = 37, 32 + v[2], 0
      local lane, row = tid % 32, tid // 32
      for q = 0, iters - 1 do
        local r = (row + q) & 31
        acc = f32(acc + ((v[1] == 1 and lane * w + r or r * w + lane) % 5))
      end
      return near("out[37]", out[37], acc, 0)
    end
  end)
end

-- n-body style: every point pulls every other through a shared tile.
local function pull_point(n, block, exact)
  return function()
    local k = own("pull2d")
    local p = cuda.rand(2 * n, "f32", 21)
    local f = cuda.zeros(2 * n)
    return function() k[{ n // block, block, block * 8 }](p, f, n, exact) end, function()
      local hp = p:host()
      for _, i in ipairs({ 0, n - 1 }) do
        local fx = 0
        for j = 0, n - 1 do
          local dx, dy = hp[2 * j] - hp[2 * i], hp[2 * j + 1] - hp[2 * i + 1]
          local inv = 1 / math.sqrt(dx * dx + dy * dy + 0.01)
          fx = fx + dx * inv * inv * inv
        end
        local ok, why = near("f[" .. i .. "].x", f[2 * i], fx, 2e-3)
        if not ok and math.abs(f[2 * i] - fx) > 1e-2 then return false, why end
      end
      return true
    end
  end
end
for _, v in ipairs({ { 8192, 128 }, { 8192, 256 }, { 16384, 256 } }) do
  add("n-body tile, rsqrtf", "calibration", v[1] .. " points, blocks of " .. v[2],
    pull_point(v[1], v[2], 0))
end
for _, v in ipairs({ { 8192, 256 }, { 16384, 128 } }) do
  add("n-body tile, rsqrtf", "held out", "1/sqrtf, " .. v[1] .. " points, blocks of " .. v[2],
    pull_point(v[1], v[2], 1))
end

-- Strided access: one float used per s read.
for _, s in ipairs({ 1, 2, 4, 8, 16, 32 }) do
  add("strided reads", "calibration", "stride " .. s, function()
    local n = 1 << 22
    local k = own("gather_stride")
    local x, y = cuda.arange(n * s), cuda.zeros(n)
    return function() k[{ n // 256, 256 }](x, y, n, s) end, function()
      for _, i in ipairs({ 1, n - 1 }) do
        local ok, why = near("out[" .. i .. "]", y[i], f32(i * s), 0)
        if not ok then return false, why end
      end
      return true
    end
  end)
end
for _, s in ipairs({ 1, 4, 16, 64 }) do
  add("strided reads", "held out", "strided writes, stride " .. s, function()
    local n = 1 << 21
    local k = own("scatter_stride")
    local x, y = cuda.arange(n), cuda.zeros(n * s)
    return function() k[{ n // 256, 256 }](x, y, n, s) end, function()
      return near("out[s * (n-1)]", y[s * (n - 1)], f32(n - 1), 0)
    end
  end)
end

return P
