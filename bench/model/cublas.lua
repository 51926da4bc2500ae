-- cublas.lua: measures cuBLAS matrix multiplies on the GPU, for the simulator's cuda.blas clock:
--   cudalab --gpu bench/model/cublas.lua repl/backend/h200_cublas.h     (make blas-rates)
-- Square f32 and f64 multiplies from 16 to 8192, each timed with cuda.time (events, warm-up,
-- median of repetitions), written as a C header with the date, the device and the library.
assert(cuda.backend() == "cuda", "cublas.lua measures cuBLAS on a GPU: run it with --gpu")
local out = assert(arg[1], "usage: cublas.lua OUTPUT.h")
local sides = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
local times = {f32 = {}, f64 = {}}
for _, dt in ipairs({"f32", "f64"}) do
  for i, s in ipairs(sides) do
    local a, b, c = cuda.rand(s * s, dt, 1), cuda.rand(s * s, dt, 2), cuda.array(s * s, dt)
    local reps = s >= 4096 and 5 or 20
    local t = cuda.time(function() cuda.blas.gemm(a, b, c, s, s, s) end, {warmup = 3, reps = reps})
    times[dt][i] = t.median * 1e3 -- µs
    io.stderr:write(string.format("%s %5d: %10.2f us  %8.1f GFLOP/s\n", dt, s, times[dt][i],
      2 * s ^ 3 / (times[dt][i] * 1e-6) / 1e9))
    a:free(); b:free(); c:free()
  end
end
local function list(t)
  local parts = {}
  for i, v in ipairs(t) do parts[i] = string.format("%.4g", v) end
  return table.concat(parts, ", ")
end
local d = cuda.device()
local f = assert(io.open(out, "w"))
f:write(string.format([[
/* h200_cublas.h: cuBLAS square matrix multiplies timed on the GPU by bench/model/cublas.lua
 * (make blas-rates): %s, %s, %s. Read by blas_model.c. */
#define H200_CUBLAS_SOURCE \
  "%s on an %s, measured %s (bench/model/cublas.lua)"
static const double h200_cublas_side[] = {%s};
static const double h200_cublas_sgemm_us[] = {
    %s};
static const double h200_cublas_dgemm_us[] = {
    %s};
]], cuda.blas.info().library, d.name, os.date("!%Y-%m-%d"), cuda.blas.info().library, d.name,
  os.date("!%Y-%m-%d"), list(sides), list(times.f32), list(times.f64)))
f:close()
print("wrote " .. out)
