-- launch_bounds.lua: what a kernel's declaration bounds its launches to, on the simulator as on
-- the GPU: __launch_bounds__ (a larger block is refused, naming the bound and the block), and
-- __cluster_dims__ (a grid that is not a whole number of clusters is refused; the cluster's
-- special registers read as on the GPU). Then shared memory per block, static and dynamic
-- together: 1 KiB + 48 KiB runs (over the 48 KiB without an opt-in, which cudalab takes), 1 KiB +
-- 227 KiB is refused naming both. tests/gpu/launch_limits.lua holds the GPU to the same words;
-- tests/sim/test_bounds.c the simulator's C interface.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(7)

local function exact(a, ref, what)
  local _, r = cuda.compare(a, ref, {rtol = 0, atol = 0})
  check(r.ok, what .. ": " .. tostring(r))
end

test("__launch_bounds__: a block within runs, one over it is refused naming both", function()
  local k = cuda.kernel[[
__global__ void __launch_bounds__(128) twice(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2.0f * a[i] + 1.0f;
}]]
  checkeq(k:info().max_threads_per_block, 128, "the kernel's largest block")
  local n = 1000
  local a = cuda.arange(n)
  k[{8, 128}](a, n)
  local ref = {}
  for i = 1, n do ref[i] = 2 * (i - 1) + 1 end
  exact(a, ref, "a block of 128")
  checkerr("kernel twice was declared with __launch_bounds__(128): a block of 256 threads " ..
    "(256 x 1 x 1) is over that bound, so the GPU refuses the launch (too many resources " ..
    "requested for launch); use at most 128 threads per block, or raise the bound",
    k[{4, 256}], a, n)
  checkerr("a block of 192 threads (64 x 3 x 1) is over that bound", k[{1, {64, 3}}], a, n)
end)

local CLUSTER = [[
__global__ void __cluster_dims__(2, 3, 1) where(unsigned *o) {
  unsigned r[8];
  asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(r[0]));
  asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(r[1]));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(r[2]));
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(r[3]));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(r[4]));
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r[5]));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(r[6]));
  asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(r[7]));
  unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x < 8) o[b * 8 + threadIdx.x] = r[threadIdx.x];
}]]

test("__cluster_dims__: the cluster registers read as their definitions say", function()
  local k = cuda.kernel(CLUSTER)
  local gx, gy = 4, 6
  local o = cuda.zeros(gx * gy * 8, "u32")
  k[{{gx, gy}, 32}](o)
  local ref = {}
  for y = 0, gy - 1 do
    for x = 0, gx - 1 do
      for _, v in ipairs{x % 2, y % 3, x // 2, y // 3, gx // 2, x % 2 + (y % 3) * 2, 6, 1} do
        ref[#ref + 1] = v
      end
    end
  end
  exact(o, ref, "cluster registers")
end)

test("__cluster_dims__: a grid that is not a whole number of clusters is refused", function()
  local k = cuda.kernel(CLUSTER)
  local o = cuda.zeros(64 * 8, "u32")
  checkerr("kernel where was declared with __cluster_dims__(2, 3, 1): the grid must be a whole " ..
    "number of clusters, but grid.y = 4 is not a multiple of 3", k[{{2, 4}, 32}], o)
  checkerr("but grid.x = 5 is not a multiple of 2", k[{{5, 3}, 32}], o)
end)

test("__cluster_dims__ over 8 blocks, or without a shape, is refused saying what to do", function()
  local wide = cuda.kernel "__global__ void __cluster_dims__(4, 4, 1) wide(int *o) { o[0] = 1; }"
  local o = cuda.zeros(1, "i32")
  checkerr("kernel wide was declared with __cluster_dims__(4, 4, 1): a cluster of 16 blocks is " ..
    "over the 8 the GPU allows (the portable cluster size)", wide[{{4, 4}, 32}], o)
  local free = cuda.kernel "__global__ void __cluster_dims__() free_shape(int *o) { o[0] = 1; }"
  checkerr("kernel free_shape was declared with __cluster_dims__() and no shape: its launch " ..
    "must give the cluster shape, which cudalab's launches cannot; write the shape in the " ..
    "declaration, as __cluster_dims__(2, 1, 1)", free[{2, 32}], o)
end)

test("what a cluster's blocks do together is refused when the kernel loads, saying why", function()
  checkerr("the simulator does not model the blocks of a cluster working together", cuda.kernel,
    [[#include <cooperative_groups.h>
__global__ void __cluster_dims__(2, 1, 1) swap(int *o) {
  __shared__ int s;
  cooperative_groups::cluster_group c = cooperative_groups::this_cluster();
  s = blockIdx.x;
  c.sync();
  o[blockIdx.x] = *c.map_shared_rank(&s, c.block_rank() ^ 1);
}]])
end)

-- 1 KiB of static shared memory, and as much dynamic as asked for.
local SHARED = [[
__global__ void both(float *out, int n) {
  __shared__ float fixed[256];
  extern __shared__ float more[];
  int t = threadIdx.x;
  fixed[t] = t;
  for (int i = t; i < n; i += blockDim.x) more[i] = 2.0f * i;
  __syncthreads();
  out[t] = fixed[255 - t] + more[n - 1 - t];
}]]

test("1 KiB static + 48 KiB dynamic shared memory runs, and computes right", function()
  local k = cuda.kernel(SHARED)
  checkeq(k:info().shared_static, 1024, "static shared memory")
  local n = 48 * 1024 // 4
  local out = cuda.zeros(256)
  k[{1, 256, 48 * 1024}](out, n)
  local ref = {}
  for t = 0, 255 do ref[t + 1] = (255 - t) + 2 * (n - 1 - t) end
  exact(out, ref, "static + dynamic")
end)

test("1 KiB static + 227 KiB dynamic is refused, naming both", function()
  local k = cuda.kernel(SHARED)
  local out = cuda.zeros(256)
  local dev = cuda.device()
  checkerr("the launch needs 233472 bytes of shared memory per block (1024 static + 232448 " ..
    "dynamic); the " .. dev.name .. " allows at most 232448 (227 KiB) per block, static and " ..
    "dynamic together", k[{1, 256, 227 * 1024}], out, 227 * 256)
end)

return T.done()
