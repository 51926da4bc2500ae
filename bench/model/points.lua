-- points.lua: the validation set of the H200 timing model, never used to fit
-- it. Returns a list of points {sweep, label, setup}; setup(ctx) creates the
-- arrays and kernels on the current backend and returns run, verify: run()
-- does the work once (one launch or one copy), verify() checks the result of
-- the first run against a CPU reference and returns true, or false and why.
--
-- ctx.n(count) scales an element count and ctx.dim(d, m) a matrix side (a
-- multiple of m) by ctx.scale, so the same set runs small for a quick test.
--
-- Design stance: the workloads are the lessons' (kernels/*.cu) wherever a
-- kernel there fits, at the sizes the lessons use on an H200, plus the
-- classic contrasts a learner asks the model about (coalescing, occupancy,
-- shared tiles, contention, divergence, launch cost, copies). Points of one
-- sweep differ in one thing, so their order is the claim to check. Checks
-- read a few sampled elements: cheap on both backends, and enough to catch a
-- launch that did nothing or the wrong thing.

local P = {}
local function add(sweep, label, setup) P[#P + 1] = { sweep = sweep, label = label, setup = setup } end

local function f32(v) return (string.unpack("f", string.pack("f", v))) end
local function cdiv(a, b) return (a + b - 1) // b end
local function samples(n) return { 0, 1, n // 3, n // 2 + 1, n - 1 } end

-- true, or false and a message, for got against want within rtol.
local function near(what, got, want, rtol)
  if math.abs(got - want) <= (rtol or 0) * math.abs(want) then return true end
  return false, string.format("%s: got %.9g, expected %.9g", what, got, want)
end

-- Checks x[i] against want(i) for the sampled i; stops at the first miss.
local function each(x, idx, want, rtol)
  for _, i in ipairs(idx) do
    local ok, why = near("element " .. i, x[i], want(i), rtol)
    if not ok then return false, why end
  end
  return true
end

-- Values of x at idx, read before an in-place kernel changes them.
local function before(x, idx)
  local v = {}
  for _, i in ipairs(idx) do v[i] = x[i] end
  return v
end

-- Kernels that kernels/ does not have.
local SRC = [[
__global__ void strided_inc(float *a, int s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[(long long)i * s % n] += 1.0f;
}
__global__ void transpose_naive(const float *in, float *out, int n) {
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  if (x < n && y < n) out[x * n + y] = in[y * n + x];
}
__global__ void transpose_tiled(const float *in, float *out, int n) {
  __shared__ float t[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  if (x < n && y < n) t[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x, y = blockIdx.x * 32 + threadIdx.y;
  if (x < n && y < n) out[y * n + x] = t[threadIdx.x][threadIdx.y];
}
__global__ void reduce_atomic_f32(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}
__global__ void histogram(const int *in, int *bins, int nbins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[in[i] % nbins], 1);
}
__global__ void poly_f32(float *x, int n, int iters, float a, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; k++) v = v * a + b;
  x[i] = v;
}
__global__ void poly_f64(double *x, int n, int iters, double a, double b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  for (int k = 0; k < iters; k++) v = v * a + b;
  x[i] = v;
}
__global__ void sincos_loop(float *x, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; k++) v = __sinf(v) + 0.5f * __cosf(v);
  x[i] = v;
}
// The two paths run the same loop with different constants; per_warp picks
// the path by warp (uniform) or by lane parity (both paths in every warp).
__global__ void branchy(float *x, int n, int iters, int per_warp) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int c = per_warp ? (threadIdx.x >> 5) & 1 : threadIdx.x & 1;
  float v = x[i];
  if (c) { for (int k = 0; k < iters; k++) v = v * 0.999f + 0.001f; }
  else   { for (int k = 0; k < iters; k++) v = v * 0.998f - 0.002f; }
  x[i] = v;
}
]]
-- One module per backend: compiled on first use after each cuda.use.
local mods = {}
local function own(name)
  local b = cuda.backend()
  mods[b] = mods[b] or cuda.module(SRC)
  return mods[b][name]
end

local BLOCKS = { 32, 64, 128, 256, 512, 1024 }

-- Memory-bound kernels against threads per block, one thread per element.
for _, b in ipairs(BLOCKS) do
  add("block size: vector_add", "block " .. b, function(ctx)
    local n = ctx.n(10000000)
    local k = cuda.kernel("vector_add.cu")
    local x, y, z = cuda.rand(n, "f32", 1), cuda.rand(n, "f32", 2), cuda.array(n)
    return function() k[{cdiv(n, b), b}](x, y, z, n) end,
      function() return each(z, samples(n), function(i) return f32(x[i] + y[i]) end) end
  end)
end

-- saxpy's grid-stride loop with a = 2: a * x is exact, so fma and the CPU agree.
local function saxpy(ctx, grid_of, b)
  local n = ctx.n(10000000)
  local k = cuda.kernel("saxpy.cu")
  local x, y = cuda.rand(n, "f32", 3), cuda.rand(n, "f32", 4)
  local idx = samples(n)
  local y0 = before(y, idx)
  return function() k[{grid_of(n), b}](n, 2.0, x, y) end,
    function() return each(y, idx, function(i) return f32(2 * x[i] + y0[i]) end) end
end
for _, b in ipairs(BLOCKS) do
  add("block size: saxpy", "block " .. b, function(ctx)
    return saxpy(ctx, function(n) return cdiv(n, b) end, b)
  end)
end

for _, s in ipairs({ 1, 2, 4, 8, 16, 32 }) do
  add("stride: a[(i*s) % n] += 1", "stride " .. s, function(ctx)
    -- n odd, so i -> (i * s) % n is a permutation for every power-of-two stride: each element is
    -- hit exactly once, and no two threads race on one (with n = 10^7 they did).
    local n = ctx.n(10000000) | 1
    local a = cuda.zeros(n)
    local k = own("strided_inc")
    return function() k[{cdiv(n, 256), 256}](a, s, n) end,
      function() return each(a, { 0, 1, s, n - 1, n // 2 }, function() return 1 end) end
  end)
end

for _, g in ipairs({ 33, 66, 132, 264, 528, 1056, 4224 }) do
  add("grid size: saxpy grid-stride, 256 threads", "grid " .. g, function(ctx)
    return saxpy(ctx, function() return g end, 256)
  end)
end

for _, kind in ipairs({ "naive", "tiled" }) do
  add("transpose 4096 x 4096", kind, function(ctx)
    local n = ctx.dim(4096, 32)
    local k = own("transpose_" .. kind)
    local a, t = cuda.rand(n * n, "f32", 5), cuda.array(n * n)
    return function() k[{{n // 32, n // 32}, {32, 32}}](a, t, n) end, function()
      for _, rc in ipairs({ { 0, 1 }, { 5, n - 1 }, { n - 1, n // 2 }, { n // 3, n // 7 } }) do
        local r, c = rc[1], rc[2]
        if t[c * n + r] ~= a[r * n + c] then return false, string.format("out[%d][%d] is wrong", c, r) end
      end
      return true
    end
  end)
end

for _, kind in ipairs({ "naive", "tiled" }) do
  add("matmul 1024 x 1024", kind, function(ctx)
    local n = ctx.dim(1024, 16)
    local k = cuda.module("matmul.cu")["matmul_" .. kind]
    local A, B, C = cuda.rand(n * n, "f32", 6), cuda.rand(n * n, "f32", 7), cuda.array(n * n)
    return function() k[{{n // 16, n // 16}, {16, 16}}](A, B, C, n) end, function()
      local ha, hb = A:host(), B:host()
      for _, rc in ipairs({ { 0, 0 }, { n - 1, 3 }, { n // 2, n - 1 } }) do
        local r, c, s = rc[1], rc[2], 0
        for j = 0, n - 1 do s = s + ha[r * n + j] * hb[j * n + c] end
        local ok, why = near(string.format("C[%d][%d]", r, c), C[r * n + c], s, 1e-4)
        if not ok then return false, why end
      end
      return true
    end
  end)
end

-- Sums of ones: exact in f32 up to 2^24, so the check is exact.
local REDUCE = {
  { "atomic per element (f32)", "f32" }, { "atomic per element (i32, reduce_atomic)", "i32" },
  { "shared tree + atomic per block", "f32", 1024 }, { "warp shuffle + atomic per warp", "f32" },
}
for j, r in ipairs(REDUCE) do
  add("reduce 10M", r[1], function(ctx)
    local n = ctx.n(10000000)
    local m = cuda.module("reduce.cu")
    local k = ({ own("reduce_atomic_f32"), m.reduce_atomic, m.reduce_shared, m.reduce_shuffle })[j]
    local x, out = cuda.ones(n, r[2]), cuda.zeros(1, r[2])
    local cfg = { cdiv(n, 256), 256, r[3] }
    return function() k[cfg](x, out, n) end, function() return near("sum", out[0], n) end
  end)
end

for _, nb in ipairs({ 256, 4, 1 }) do
  add("histogram 10M ints", nb .. " bins", function(ctx)
    local n = ctx.n(10000000)
    local x, bins = cuda.arange(n, "i32"), cuda.zeros(nb, "i32")
    local k = own("histogram")
    return function() k[{cdiv(n, 256), 256}](x, bins, nb, n) end,
      function() return each(bins, { 0, nb - 1 }, function(b) return (n - 1 - b) // nb + 1 end) end
  end)
end

-- Compute-bound loops over 1M elements; the CPU replays a few elements.
local COMPUTE = {
  { "f32 x = x*a + b, 512 iterations", "poly_f32", "f32", 512, 1e-6,
    function(v) return f32(v * f32(0.999) + f32(0.001)) end },
  { "f64 x = x*a + b, 256 iterations", "poly_f64", "f64", 256, 1e-12,
    function(v) return v * 0.999 + 0.001 end },
  { "__sinf + __cosf, 128 iterations", "sincos_loop", "f32", 128, 1e-4,
    function(v) return f32(math.sin(v) + 0.5 * math.cos(v)) end },
}
for _, c in ipairs(COMPUTE) do
  add("compute-bound 1M", c[1], function(ctx)
    local n = ctx.n(1000000)
    local k, x = own(c[2]), cuda.rand(n, c[3], 8)
    local idx = samples(n)
    local x0 = before(x, idx)
    local extra = c[2] == "sincos_loop" and {} or { 0.999, 0.001 }
    return function() k[{cdiv(n, 256), 256}](x, n, c[4], table.unpack(extra)) end, function()
      return each(x, idx, function(i)
        local v = x0[i]
        for _ = 1, c[4] do v = c[6](v) end
        return v
      end, c[5])
    end
  end)
end

for _, d in ipairs({ { "uniform (branch by warp)", 1 }, { "divergent (branch by lane)", 0 } }) do
  add("divergence", d[1], function(ctx)
    local n, iters = ctx.n(1000000), 256
    local k, x = own("branchy"), cuda.rand(n, "f32", 9)
    local idx = samples(n)
    local x0 = before(x, idx)
    return function() k[{cdiv(n, 256), 256}](x, n, iters, d[2]) end, function()
      local _, loops = k:ptx():gsub("fma%.rn%.f32", "")
      if loops < 2 then return false, "the compiler merged the two paths" end
      return each(x, idx, function(i)
        local t = i % 256
        local c = d[2] == 1 and (t >> 5) & 1 or t & 1
        local a, b = f32(c == 1 and 0.999 or 0.998), f32(c == 1 and 0.001 or -0.002)
        local v = x0[i]
        for _ = 1, iters do v = f32(v * a + b) end
        return v
      end, 1e-6)
    end
  end)
end

-- Launch-bound: the sizes stay as they are at every scale.
for _, t in ipairs({ { 1000, 1, 1024 }, { 100000, 391, 256 } }) do
  add("tiny launches (inc.cu)", t[1] .. " elements", function()
    local k, a = cuda.kernel("inc.cu"), cuda.ones(t[1])
    return function() k[{t[2], t[3]}](a, t[1]) end,
      function() return each(a, samples(t[1]), function() return 2 end) end
  end)
end

-- One sweep per direction: the choice a learner makes is pageable or pinned memory.
for _, c in ipairs({ { "h2d", "pageable" }, { "h2d", "pinned" }, { "d2h", "pageable" }, { "d2h", "pinned" } }) do
  add("copies 40 MB, " .. (c[1] == "h2d" and "host to device" or "device to host"), c[2], function(ctx)
    local n = ctx.n(10000000)
    local h = cuda.host(n, "f32", { pinned = c[2] == "pinned" })
    local d = cuda.rand(n, "f32", 10)
    local idx = samples(n)
    if c[1] == "h2d" then
      d:copyto(h) -- the data to send; then clear the device side
      d:fill(0)
      return function() d:copyfrom(h) end, function() return each(d, idx, function(i) return h[i] end) end
    end
    return function() d:copyto(h) end, function() return each(h, idx, function(i) return d[i] end) end
  end)
end

return P
