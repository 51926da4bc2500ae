-- sync_vs_gpu.lua: what the simulator learned to run lately, on the GPU and on the simulator
-- from the same inputs: barriers with a thread count (bar.arrive, bar.sync a, b, bar.red),
-- cuda::barrier and its PTX mbarrier, atomicAdd on float2 and float4, elect.sync and
-- cg::invoke_one, __managed__ variables, isspacep. Each case's values must be the GPU's, and
-- the GPU's must be the CPU reference's where one is worked out here. The simulator's own
-- suites (tests/simulator/named_barriers.lua, async_barriers.lua, opcodes.lua, warp_masks.lua)
-- check it alone against CPU references and test the errors; the kernels both run are in
-- tests/simulator/sync_cases.lua.
local T = dofile("tests/lua/testlib.lua")
local C = dofile("tests/simulator/sync_cases.lua") -- the kernels the simulator's suites run
T.plan(6)
local test, check, checkeq = T.test, T.check, T.checkeq

-- Runs body(module) on the GPU and on the simulator; each returns a list of host tables.
local function both(src, body)
  local function on(be) return T.on(be, function() return body(cuda.module(src)) end) end
  return on("cuda"), on("sim")
end

-- Every element of the simulator's tables equals the GPU's (the first four differences named).
local function same(g, s, what)
  local bad = {}
  for k = 1, #g do
    for i = 0, #g[k] - 1 do
      if g[k][i] ~= s[k][i] and #bad < 4 then
        bad[#bad + 1] = ("%s %d[%d]: simulator %s, GPU %s"):format(what, k, i, s[k][i], g[k][i])
      end
    end
    checkeq(#s[k], #g[k], what .. " " .. k .. ": length")
  end
  check(#bad == 0, table.concat(bad, "; "))
end

local function values(n, seed)
  local t = {}
  for i = 1, n do t[i] = (i * seed) % 97 - 48 end
  return t
end

test("named barriers: producer warps arrive, consumers wait; groups meet on counts in registers",
     function()
  local src = C.named_pc .. "\n" .. [[
__global__ void groups(int *out, int *count) {
  __shared__ int s[256];
  int t = threadIdx.x, group = t / 64;
  unsigned id = 1 + group, n = 64;
  s[t] = t * 3;
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n) : "memory");
  out[t] = s[(t + 32) % 64 + 64 * group];
  int c;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; bar.red.popc.u32 %0, %2, %3, p; }"
               : "=r"(c) : "r"(t % 3), "r"(9 + group), "r"(n) : "memory");
  count[t] = c;
}]]
  local rounds, blocks, inp = 9, 3, values(9 * 64, 37)
  local g, s = both(src, function(m)
    local out, o2, c2 = cuda.zeros(blocks * 64), cuda.zeros(256, "i32"), cuda.zeros(256, "i32")
    m.pc[{blocks, 128}](cuda.array(inp), out, rounds)
    m.groups[{1, 256}](o2, c2)
    return {out:host(), o2:host(), c2:host()}
  end)
  same(g, s, "named barriers")
  for j = 0, 63 do
    local want = 0
    for r = 0, rounds - 1 do want = want + inp[r * 64 + (63 - j) + 1] * (r + 1) end
    checkeq(g[1][64 + j], want, "GPU: block 1, consumer " .. j)
  end
  for t = 0, 255 do
    local want, group = 0, t // 64
    for u = 64 * group, 64 * group + 63 do want = want + (u % 3 ~= 0 and 1 or 0) end
    checkeq(g[3][t], want, "GPU: bar.red.popc, thread " .. t)
  end
end)

test("cuda::barrier: arrive_and_wait, memcpy_async, arrive_and_drop, try_wait.parity", function()
  local src = C.barrier_rev_loop .. "\n" .. C.barrier_copy .. "\n" .. [[
__global__ void drop(int *out) {
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> b;
  __shared__ int s[128];
  int t = threadIdx.x;
  if (t == 0) init(&b, 128);
  __syncthreads();
  s[t] = t;
  if (t >= 96) { b.arrive_and_drop(); return; }
  auto token = b.arrive();
  int mine = 3 * t;
  b.wait(std::move(token));
  s[t] += mine;
  b.arrive_and_wait();
  out[t] = s[(t + 1) % 96];
}
]] .. C.mbarrier_parity
  local rounds, inp, c = 7, values(7 * 64, 29), values(256, 7)
  local g, s = both(src, function(m)
    local out, copied = cuda.zeros(2 * 64), cuda.zeros(256)
    local dropped, par = cuda.zeros(96, "i32"), cuda.zeros(64, "i32")
    m.loop[{2, 128}](cuda.array(inp), out, rounds)
    m.copy[{1, 256}](cuda.array(c), copied)
    m.drop[{1, 128}](dropped)
    m.parity[{1, 64}](par)
    return {out:host(), copied:host(), dropped:host(), par:host()}
  end)
  same(g, s, "cuda::barrier")
  for j = 0, 63 do
    local want = 0
    for r = 0, rounds - 1 do want = want + inp[r * 64 + 63 - j + 1] * (r + 1) end
    checkeq(g[1][j], want, "GPU: loop, consumer " .. j)
  end
  for j = 0, 255 do checkeq(g[2][j], 2 * c[256 - j], "GPU: memcpy_async " .. j) end
  for t = 0, 95 do checkeq(g[3][t], 4 * ((t + 1) % 96), "GPU: arrive_and_drop " .. t) end
  for t = 0, 63 do checkeq(g[4][t], 10 * (63 - t), "GPU: parity " .. t) end
end)

test("atomicAdd on float2 and float4: sums and the old values", function()
  local src = C.vector_atomics
  local n, xs = 300, {}
  for i = 1, n do xs[i] = (i - 1) * 7 % 11 - 5 end -- small integers: exact in any order
  local g, s = both(src, function(m)
    local f2, f4 = cuda.zeros(6), cuda.full(8, 1)
    m.many[{3, 128}](f2, f4, cuda.array(xs), n)
    local a2, a4, old = cuda.arange(64), cuda.arange(128), cuda.zeros(6 * 32)
    m.own[{1, 32}](a2, a4, old)
    return {f2:host(), f4:host(), a2:host(), a4:host(), old:host()}
  end)
  same(g, s, "vector atomics")
  local w2 = {0, 0, 0, 0, 0, 0}
  for i = 0, n - 1 do
    local s2 = 2 * (i % 3)
    w2[s2 + 1], w2[s2 + 2] = w2[s2 + 1] + xs[i + 1], w2[s2 + 2] + 2 * xs[i + 1]
  end
  for j = 1, 6 do checkeq(g[1][j - 1], w2[j], "GPU: float2 element " .. (j - 1)) end
  for i = 0, 31 do checkeq(g[5][6 * i + 5], 4 * i + 3, "GPU: old w of float4 " .. i) end
end)

test("elect.sync and cg::invoke_one: the same leaders as the GPU", function()
  local src = [[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ unsigned elect(unsigned mask, unsigned *p) {
  unsigned d, q;
  asm volatile("{ .reg .pred e; elect.sync %0|e, %2; selp.u32 %1, 1, 0, e; }"
               : "=r"(d), "=r"(q) : "r"(mask));
  *p = q;
  return d;
}
__global__ void k(int *tiles, unsigned *o) {
  auto t = cg::tiled_partition<8>(cg::this_thread_block());
  cg::invoke_one(t, [&]() { atomicAdd(tiles, 1); });
  unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5, p = 0, d = 99;
  if (wid == 0 && lane % 3 == 1) {
    cg::invoke_one(cg::coalesced_threads(), [&]() { atomicAdd(tiles + 1, 1 + (int)lane); });
  }
  if (wid == 1 && (lane & 4)) d = elect(0xf0f0f0f0u, &p);
  if (wid == 2) {
    if (lane < 5 || lane == 9) return;
    if (0xfcfu >> lane & 1) d = elect(0xfcfu, &p);
  }
  if (wid == 3) d = elect(lane < 16 ? 0xffffu : 0xffff0000u, &p);
  o[2 * threadIdx.x] = d;
  o[2 * threadIdx.x + 1] = p;
}]]
  local g, s = both(src, function(m)
    local tiles, o = cuda.zeros(2, "i32"), cuda.full(256, 7, "u32")
    m.k[{1, 128}](tiles, o)
    return {tiles:host(), o:host()}
  end)
  same(g, s, "leaders")
  checkeq(g[1][0], 16, "GPU: one atomicAdd a tile of 8")
end)

test("__managed__ variables: set from the host, added to by a kernel, read back", function()
  local src = [[
__managed__ int total;
__managed__ float scale[4];
__global__ void add(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { y[i] = scale[i % 4] * x[i]; atomicAdd(&total, (int)x[i]); }
}]]
  local n, xs = 1000, values(1000, 13)
  local g, s = both(src, function(m)
    m:constant("total", {5})
    m:constant("scale", {1, -2, 0.5, 3})
    local y = cuda.zeros(n)
    m.add[{(n + 127) // 128, 128}](cuda.array(xs), y, n)
    cuda.sync()
    return {y:host(), {[0] = m:constant("total")[1]}}
  end)
  same(g, s, "managed")
  local sum = 5
  for i = 1, n do sum = sum + xs[i] end
  checkeq(g[2][0], sum, "GPU: total")
  checkeq(g[1][6], 0.5 * xs[7], "GPU: y[6]"); checkeq(g[1][5], -2 * xs[6], "GPU: y[5]")
end)

test("isspacep: __isGlobal, __isShared, __isLocal, __isConstant as the GPU answers", function()
  local src = [[
__device__ float dev[2];
__constant__ float con[4];
__device__ __noinline__ int where(const void *p) {
  return __isGlobal(p) | __isShared(p) << 1 | __isLocal(p) << 2 | __isConstant(p) << 5;
}
__global__ void k(float *g, int *o) {
  __shared__ float sh[4];
  volatile float loc[4];
  int i = threadIdx.x;
  loc[i & 3] = i;
  o[5 * i] = where(g + i);
  o[5 * i + 1] = where(sh + (i & 3));
  o[5 * i + 2] = where((const void *)(loc + (i & 3)));
  o[5 * i + 3] = where(dev + (i & 1));
  o[5 * i + 4] = where(con + (i & 3)) + (int)loc[i & 3] * 0;
}]]
  local g, s = both(src, function(m)
    local o = cuda.zeros(5 * 64, "i32")
    m.k[{1, 64}](cuda.zeros(64), o)
    return {o:host()}
  end)
  same(g, s, "isspacep")
  checkeq(g[1][0], 1, "GPU: a global pointer"); checkeq(g[1][1], 2, "GPU: a shared pointer")
  checkeq(g[1][2], 4, "GPU: a local pointer"); checkeq(g[1][4], 32, "GPU: a constant pointer")
end)

T.done()
