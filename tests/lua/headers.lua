-- headers.lua: the CUDA Toolkit's headers are on NVRTC's include path on every backend, and a
-- missing header names the folders that were searched. A kernel that compiles but uses an
-- instruction the simulator does not run yet (f16 conversions, redux, wmma) is refused at load
-- with "the simulator cannot run this module", which still shows the compile succeeded; on the
-- GPU every kernel here must load. Runs on any backend.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(9)

-- Compiles src; returns the kernel, or nil when it compiled but cannot run here (the backend
-- without a GPU runs nothing; the simulator's loader may refuse it).
local function compiles(src)
  local ok, k = pcall(cuda.kernel, src)
  if ok then return cuda.backend() ~= "none" and k or nil end
  local msg = tostring(k)
  check(not msg:find("compile error", 1, true), "compile failed: " .. msg)
  check(cuda.backend() == "sim" and msg:find("the simulator cannot run this module", 1, true),
        "not loaded: " .. msg)
  return nil
end

test("<cuda_fp16.h>", function()
  local k = compiles [[#include <cuda_fp16.h>
__global__ void k(const float *x, __half *y, float *z, int n) {
  int i = threadIdx.x;
  if (i < n) { y[i] = __float2half(x[i]); z[i] = __half2float(__hadd(y[i], y[i])); }
}]]
  if not k then return end
  local x, y, z = cuda.array{0.1, 1, 70000}, cuda.array(3, "f16"), cuda.array(3)
  k[{1, 32}](x, y, z, 3)
  checkeq(y[0], 0.0999755859375); checkeq(y[2], math.huge); checkeq(z[1], 2.0)
end)

test("<cuda_bf16.h>", function()
  local k = compiles [[#include <cuda_bf16.h>
__global__ void k(const float *x, __nv_bfloat16 *y, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(x[i]);
}]]
  if not k then return end
  local y = cuda.array(2, "bf16")
  k[{1, 32}](cuda.array{0.1, -3}, y, 2)
  checkeq(y[0], 0.10009765625); checkeq(y[1], -3.0)
end)

test("<cooperative_groups.h>", function()
  local k = compiles [[#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int *out) {
  cg::thread_block b = cg::this_thread_block();
  __shared__ int s[64];
  s[b.thread_rank()] = b.thread_rank();
  b.sync();
  out[b.thread_rank()] = s[63 - b.thread_rank()];
}]]
  if not k then return end
  local out = cuda.array(64, "i32")
  k[{1, 64}](out)
  checkeq(out[0], 63); checkeq(out[63], 0)
end)

test("<cooperative_groups/reduce.h>", function()
  local k = compiles [[#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(const int *x, int *out) {
  auto t = cg::tiled_partition<32>(cg::this_thread_block());
  int v = cg::reduce(t, x[threadIdx.x], cg::plus<int>());
  if (t.thread_rank() == 0) out[threadIdx.x / 32] = v;
}]]
  if not k then return end
  local out = cuda.array(2, "i32")
  k[{1, 64}](cuda.arange(64, "i32"), out)
  checkeq(out[0], 496); checkeq(out[1], 1520)
end)

test("<mma.h>", function()
  local k = compiles [[#include <mma.h>
using namespace nvcuda;
__global__ void k(const __half *a, const __half *b, float *c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}]]
  if not k then return end
  local c = cuda.array(256)
  k[{1, 32}](cuda.ones(256, "f16"), cuda.full(256, 0.5, "f16"), c)
  checkeq(c[0], 8.0); checkeq(c[255], 8.0)
end)

test("<cuda/atomic>", function()
  local k = compiles [[#include <cuda/atomic>
__global__ void k(int *p) {
  cuda::atomic_ref<int, cuda::thread_scope_device> r(*p);
  r.fetch_add(1, cuda::std::memory_order_relaxed);
}]]
  if not k then return end
  local p = cuda.zeros(1, "i32")
  k[{4, 96}](p)
  checkeq(p[0], 384)
end)

test("<cstdint> and <stdint.h> give the fixed-width integers", function()
  for _, h in ipairs{"cstdint", "stdint.h"} do
    local k = compiles("#include <" .. h .. ">\n__global__ void k(int8_t *a, uint16_t *b) { a[0] = -5; b[0] = 65535; }")
    if not k then return end
    local a, b = cuda.zeros(1, "i8"), cuda.zeros(1, "u16")
    k[{1, 1}](a, b)
    checkeq(a[0], -5); checkeq(b[0], 65535)
  end
end)

test("a missing header names the folders searched", function()
  local src = "#include <no_such_header.h>\n__global__ void k(int *a) { }"
  checkerr('cannot open source file "no_such_header.h"', cuda.kernel, src)
  local ok, msg = pcall(cuda.kernel, src)
  msg = tostring(msg)
  check(msg:find("note: searched [^\n]*%(for #include \"...\" only%), the folders given with %-I, then "),
        msg)
  check(msg:find("/include, [^\n]*/include/cccl, [^\n]*/kernels"), "toolkit and kernels folders: " .. msg)
  check(not msg:find("no directories in search list", 1, true), msg)
end)

test("a file from the kernels folder can be included by name", function()
  local k = cuda.kernel("#include <inc.cu>\n__global__ void after_inc(float *a) { a[0] = 1; }")
  check(tostring(k):find("after_inc(float *a)", 1, true), tostring(k))
  checkerr('cannot open source file "inc_missing.cu"', cuda.kernel, "#include <inc_missing.cu>\n__global__ void k2(float *a) { }")
end)

os.exit(T.done() and 0 or 1)
