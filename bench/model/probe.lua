-- probe.lua: development probes for the timing model: each kernel timed on the GPU (events,
-- median of 20) and modelled on the simulator in the same process, printed side by side.
-- Not the validation set (points.lua / check.lua); this is for seeing how the model fails.
--   build/cudalab bench/model/probe.lua [OUTFILE] [GPU_TIMES]   (GPU_TIMES: the table a GPU run wrote)
local out = arg[1] and arg[1] ~= "-" and io.open(arg[1], "w") or io.stdout
local recorded = arg[2] and dofile(arg[2])
local have_gpu = cuda.backend() == "cuda"
local N = 10000000

local SRC = [[
extern "C" __global__ void inc(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
extern "C" __global__ void rmw_stride(float *a, int s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { long j = (long)i * s % n; a[j] += 1.0f; } }
extern "C" __global__ void saxpy_gs(int n, float a, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void sincos_sqrt(const double *x, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = sin(x[i]) * cos(x[i]) + sqrt(fabs(x[i])); }
extern "C" __global__ void empty() {}
extern "C" __global__ void branchy(float *a, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; float v = a[i];
  if (i % 2 == 0) { for (int k = 0; k < iters; k++) v = v * 0.99f + 1.0f; }
  else            { for (int k = 0; k < iters; k++) v = v * 0.98f - 1.0f; }
  a[i] = v; }
extern "C" __global__ void by_warp(float *a, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; float v = a[i];
  if ((i / 32) % 2 == 0) { for (int k = 0; k < iters; k++) v = v * 0.99f + 1.0f; }
  else                   { for (int k = 0; k < iters; k++) v = v * 0.98f - 1.0f; }
  a[i] = v; }
extern "C" __global__ void transpose_naive(const float *a, float *b, int n) {
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) b[x * n + y + j] = a[(y + j) * n + x]; }
extern "C" __global__ void transpose_tiled(const float *a, float *b, int n) {
  __shared__ float t[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) t[threadIdx.y + j][threadIdx.x] = a[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) b[(y + j) * n + x] = t[threadIdx.x][threadIdx.y + j]; }
]]

-- Each probe: name, and a function that, on the current backend, makes its data and returns
-- the launch to time.
local function probes()
  local P = {}
  local function add(name, setup) P[#P + 1] = {name = name, setup = setup} end
  for _, b in ipairs{32, 64, 128, 256, 512, 1024} do
    add("inc10M b" .. b, function(m) local a = cuda.ones(N) return function() m.inc[{(N + b - 1) // b, b}](a, N) end end)
    add("vadd10M b" .. b, function(m)
      local x, y, z = cuda.rand(N, "f32", 1), cuda.rand(N, "f32", 2), cuda.array(N)
      return function() m.vadd[{(N + b - 1) // b, b}](x, y, z, N) end end)
  end
  for _, s in ipairs{1, 2, 4, 8, 16, 32} do
    add("rmw10M stride " .. s, function(m) local a = cuda.ones(N) return function() m.rmw_stride[{(N + 255) // 256, 256}](a, s, N) end end)
  end
  for _, g in ipairs{33, 132, 528, 2112, 8448} do
    add("saxpy_gs10M grid " .. g, function(m)
      local x, y = cuda.rand(N, "f32", 1), cuda.rand(N, "f32", 2)
      return function() m.saxpy_gs[{g, 256}](N, 2.0, x, y) end end)
  end
  add("sincos_sqrt10M f64", function(m)
    local x, o = cuda.rand(N, "f64", 3), cuda.array(N, "f64")
    return function() m.sincos_sqrt[{(N + 255) // 256, 256}](x, o, N) end end)
  add("empty 1x32", function(m) return function() m.empty[{1, 32}]() end end)
  add("inc 1000", function(m) local a = cuda.ones(1000) return function() m.inc[{4, 256}](a, 1000) end end)
  add("branchy 1M x1000", function(m) local a = cuda.ones(1 << 20) return function() m.branchy[{4096, 256}](a, 1 << 20, 1000) end end)
  add("by_warp 1M x1000", function(m) local a = cuda.ones(1 << 20) return function() m.by_warp[{4096, 256}](a, 1 << 20, 1000) end end)
  local T = 4096
  add("transpose naive 4096", function(m) local a, b = cuda.rand(T * T), cuda.array(T * T)
    return function() m.transpose_naive[{{T // 32, T // 32}, {32, 8}}](a, b, T) end end)
  add("transpose tiled 4096", function(m) local a, b = cuda.rand(T * T), cuda.array(T * T)
    return function() m.transpose_tiled[{{T // 32, T // 32}, {32, 8}}](a, b, T) end end)
  for _, n in ipairs{512, 1024} do
    add("matmul naive " .. n, function() local mm = cuda.module("matmul.cu")
      local A, B, C = cuda.rand(n * n), cuda.rand(n * n), cuda.array(n * n)
      return function() mm.matmul_naive[{{n // 16, n // 16}, {16, 16}}](A, B, C, n) end end)
    add("matmul tiled " .. n, function() local mm = cuda.module("matmul.cu")
      local A, B, C = cuda.rand(n * n), cuda.rand(n * n), cuda.array(n * n)
      return function() mm.matmul_tiled[{{n // 16, n // 16}, {16, 16}}](A, B, C, n) end end)
  end
  add("reduce atomic 10M", function() local r = cuda.module("reduce.cu")
    local x, o = cuda.ones(N, "i32"), cuda.array(1, "i32")
    return function() r.reduce_atomic[{(N + 255) // 256, 256}](x, o, N) end end)
  add("reduce shared 10M", function() local r = cuda.module("reduce.cu")
    local x, o = cuda.rand(N), cuda.array(1)
    return function() r.reduce_shared[{(N + 255) // 256, 256, 1024}](x, o, N) end end)
  add("reduce shuffle 10M", function() local r = cuda.module("reduce.cu")
    local x, o = cuda.rand(N), cuda.array(1)
    return function() r.reduce_shuffle[{(N + 255) // 256, 256}](x, o, N) end end)
  return P
end

local function measure(backend)
  cuda.use(backend)
  local m = cuda.module(SRC)
  local res = {}
  for i, p in ipairs(probes()) do
    local fn = p.setup(m)
    local t = backend == "sim" and cuda.time(fn) or cuda.time(fn, {warmup = 3, reps = 20})
    res[i] = {name = p.name, ms = t.median, limit = t.model and t.model.limit, sim_ms = t.sim_ms and t.sim_ms.median}
    collectgarbage()
  end
  return res
end

local gpu = have_gpu and measure("cuda") or nil
local sim = measure("sim")
if not gpu and recorded then
  gpu = {}
  for i, s in ipairs(sim) do gpu[i] = {name = s.name, ms = recorded[s.name]} end
end
out:write(string.format("%-24s %10s %10s %7s  %s\n", "probe", "gpu ms", "model ms", "ratio", "limit"))
for i, s in ipairs(sim) do
  local g = gpu and gpu[i].ms
  out:write(string.format("%-24s %10.4f %10.4f %7.2f  %s (sim %.0f ms)\n", s.name, g or 0 / 0, s.ms,
    g and s.ms / g or 0 / 0, s.limit or "-", s.sim_ms or 0))
end
if gpu and have_gpu then
  out:write("return {\n")
  for i, g in ipairs(gpu) do out:write(string.format("  [%q] = %.6g,\n", g.name, g.ms)) end
  out:write("}\n")
end
out:close()
