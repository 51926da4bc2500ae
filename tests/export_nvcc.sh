#!/bin/sh
# tests/export_nvcc.sh BIN [BACKEND]: a session recorded on BACKEND (sim by default), exported
# with cuda.export, is built with nvcc, warnings counted as failures, and run. Without a GPU the
# program must stop cleanly at its first CUDA call, naming the call, the file and the line;
# with one (found here, or GPU=1 as tests/gpu/export_gpu.sh passes) it must print every array
# matching the session's. A program whose data file is missing must say so before any CUDA
# call. Skips where nvcc is not installed.
BIN=$1
BACKEND=${2:-sim}
. tests/shlib.sh
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$NVCC" ] || NVCC=$(command -v nvcc 2>/dev/null)
if [ -z "$NVCC" ] || [ ! -x "$NVCC" ]; then
  plan 1; echo "ok - # SKIP nvcc is not installed"; exit 0
fi
plan 5
export XDG_CACHE_HOME="$tmp/cache"
# Whether the program finds a GPU: GPU=1 says so (tests/gpu/export_gpu.sh); otherwise asked, so
# that make test on a machine with a GPU expects the run to pass rather than to stop.
if [ -z "${GPU:-}" ]; then
  GPU=0
  [ "$("$BIN" -e 'io.write(cuda.backend())' 2>/dev/null)" = cuda ] && GPU=1 # a GPU's the default
fi
cat >"$tmp/session.lua" <<'LUA'
-- Several kernels from several sources: a template, extern "C", halves, a bool, a float4 view
-- of an f32 array, a loop of identical launches, host writes between launches, a cooperative
-- launch that syncs its grid (with a long long parameter given a Lua integer), __constant__
-- contents set from Lua, and __managed__, __device__ and vector-typed variables (one in a
-- namespace) that the session changed between launches.
inc = cuda.kernel[[
__global__ void inc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}]]
scale = cuda.kernel([[
template <typename T> __global__ void scale(T *a, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s * FACTOR;
}]], {name = "scale<int>", options = {"-DFACTOR=2"}})
m = cuda.module[[
#include <cuda_fp16.h>
extern "C" __global__ void hscale(__half *a, __half s, bool neg, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { __half v = __hmul(a[i], s); a[i] = neg ? __hneg(v) : v; }
}
__global__ void v4(float4 *p, long long n, double k, unsigned char c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 v = p[i]; v.x += (float)k + c; v.w *= 2; p[i] = v; }
}]]
cuda.record(true)
big = cuda.rand(5000, "f32", 7)
ints = cuda.array({1, -2, 3, 40, 5}, "i32")
h = cuda.array({1, 2, 3, -0.5}, "f16")
for _ = 1, 4 do inc[{20, 256}](big, #big) end
scale[{1, 32}](ints, -3, #ints)
m.hscale[{1, 32}](h, 0.5, true, #h)
big[17] = -1.25
m.v4[{4, 64}](big, 1000, 0.25, 7)
inc[{1, 64}](big + 4000, 50)
gs = cuda.kernel[[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void gsum(int *x, int *out, long long n) {
  cg::grid_group g = cg::this_grid();
  for (long long i = g.thread_rank(); i < n; i += g.size()) x[i] += 1;
  g.sync();
  if (g.thread_rank() == 0) { int s = 0; for (long long i = 0; i < n; i++) s += x[i]; *out = s; }
}]]
xs, total = cuda.arange(3000, "i32"), cuda.zeros(1, "i32")
ints_f = cuda.arange(50, "f32")
gs[{4, 128, cooperative = true}](xs, total, #xs)
cm = cuda.module[[
__constant__ float coef[4];
__global__ void poly(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = coef[0] + a[i] * (coef[1] + a[i] * (coef[2] + a[i] * coef[3]));
}]]
cm:constant("coef", {1, -0.5, 0.25, 2})
cm.poly[{20, 256}](big, #big)
vm = cuda.module[[
namespace tab { __constant__ float4 tint; }
__managed__ int count;
__managed__ float gain[2] = {1.5f, 0.5f};
__device__ double2 pair;
__global__ void vars(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * gain[i % 2] + tab::tint.w + (float)pair.y;
  if (i == 0) count += 1;
}]]
vm:constant("tab::tint", {0, 0, 0, 0.5})
vm:constant("pair", {0, -2})
vm.vars[{1, 64}](ints_f, #ints_f)
vm:constant("gain", {2, -1})
vm:constant("count", {40})
vm.vars[{1, 64}](ints_f, #ints_f)
local out = cuda.export(arg[1])
print("exported", out.launches, out.arrays, out.data ~= nil)
LUA
"$BIN" --backend "$BACKEND" "$tmp/session.lua" "$tmp/prog.cu" >"$tmp/export.out" 2>&1
expect "the session is exported" "exported	9	6	true" "$tmp/export.out"
if (cd "$tmp" && "$NVCC" -o prog prog.cu) >"$tmp/nvcc.out" 2>&1 && ! grep -q "warning" "$tmp/nvcc.out"; then
  ok "nvcc -o prog prog.cu builds it without a warning"
else
  bad "nvcc -o prog prog.cu"; sed 's/^/    /' "$tmp/nvcc.out" | head -n 30
fi
mv "$tmp/prog.data" "$tmp/moved.data"
(cd "$tmp" && ./prog) >"$tmp/nodata.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "cannot open ./prog.data: it holds the arrays' contents" "$tmp/nodata.out" &&
  ok "without its data file the program says so (exit 1)" ||
  { bad "without its data file (exit $rc)"; sed 's/^/    /' "$tmp/nodata.out" | head; }
(cd "$tmp" && ./prog moved.data) >"$tmp/run.out" 2>&1
rc=$?
if [ "${GPU:-0}" = 1 ]; then
  [ $rc = 0 ] && grep -q "PASSED: every array matches the session's" "$tmp/run.out" &&
    ok "on the GPU every array matches the session's" ||
    { bad "on the GPU (exit $rc)"; sed 's/^/    /' "$tmp/run.out" | head -n 20; }
  [ "$(grep -c "^launch [0-9]: .*: [0-9.]* ms$" "$tmp/run.out")" = 9 ] &&
    ok "each of the 9 launches is timed" || { bad "launch timings"; sed 's/^/    /' "$tmp/run.out"; }
else
  [ $rc = 1 ] && grep -q "^prog.cu:[0-9]*: cudaMalloc(&d_big, 5000 \* sizeof(float)) failed: " "$tmp/run.out" &&
    ok "without a GPU it stops at its first CUDA call, naming it (exit 1)" ||
    { bad "without a GPU (exit $rc)"; sed 's/^/    /' "$tmp/run.out" | head; }
  grep -q "no CUDA-capable device\|driver" "$tmp/run.out" &&
    ok "the message is CUDA's own reason" || { bad "CUDA's reason"; sed 's/^/    /' "$tmp/run.out"; }
fi
exit $status
