-- warp_masks_cases.lua: kernels whose lanes pass different membermasks to one warp-synchronous
-- call (shfl.sync, vote.sync, match.sync, redux.sync, bar.warp.sync), each lane's group being
-- the lanes its own mask names, as the PTX ISA defines: groups interleaved across the warp (one
-- per lane % 3, or per key from __match_any_sync), tiles, and the cooperative groups that compile
-- to them; and the multi-warp tiles of cooperative groups, whose barriers and exchange slots live
-- in the shared memory the GPU reserves at the start of each block's window
-- (%reserved_smem_offset_*, cg::block_tile_memory). Shared by tests/simulator/warp_masks.lua (each case against its CPU reference, on the
-- simulator) and tests/gpu/warp_masks_vs_gpu.lua (on the GPU against the reference and against
-- the simulator, bit for bit).
--
-- A case: name; src, the kernel (kernel: its name when src has several); run(k, seed), which
-- launches it and returns its inputs (Lua sequences) and its output arrays; ref(inputs), the
-- outputs as Lua sequences, from what the ISA defines.
local M = {}

-- Random integers in [lo, hi], as an i32 device array and as a Lua sequence (the same numbers on
-- every backend: cuda.rand is the host's).
local function ints(n, seed, lo, hi)
  local u = cuda.rand(n, "f64", seed):tolist()
  local xs = {}
  for i = 1, n do xs[i] = lo + math.floor(u[i] * (hi - lo + 1)) end
  return cuda.array(xs, "i32"), xs
end
M.ints = ints

local function s32(x)
  x = x & 0xffffffff
  return x >= 1 << 31 and x - (1 << 32) or x
end

-- The threads of the launches below: 3 warps, the last with lanes 0..N-65 live (the others
-- return at once, so they leave every group), N elements.
local N, THREADS = 83, 96
M.N, M.THREADS = N, THREADS

-- For thread t (0-based) of n live ones and key function key(t): the 0-based threads of its
-- warp that are live and share its key, its group.
local function group(t, n, key)
  local g, w = {}, t // 32
  for j = 32 * w, 32 * w + 31 do
    if j < n and key(j) == key(t) then g[#g + 1] = j end
  end
  return g
end
M.group = group

local function lane3(t) return (t % 32) % 3 end

-- The mask of thread t's lane % 3 group: every third lane from its own.
local MASK3 = [[
  unsigned lane = threadIdx.x & 31;
  unsigned mask = 0x49249249u << (lane % 3);  /* lanes 0, 3, 6 ...; 1, 4, 7 ...; 2, 5, 8 ... */
]]

M.cases = {}
local function case(c) M.cases[#M.cases + 1] = c end

case{
  name = "__reduce_*_sync on one group per lane % 3 (add, min, max signed and unsigned, and, or, xor)",
  src = [[
__global__ void f(const int *v, int *o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
]] .. MASK3 .. [[
  int x = v[t];
  unsigned u = (unsigned)x;
  o[8 * t] = __reduce_add_sync(mask, x);
  o[8 * t + 1] = __reduce_min_sync(mask, x);
  o[8 * t + 2] = __reduce_max_sync(mask, x);
  o[8 * t + 3] = (int)__reduce_min_sync(mask, u);
  o[8 * t + 4] = (int)__reduce_max_sync(mask, u);
  o[8 * t + 5] = (int)__reduce_and_sync(mask, u | 0x10000u);
  o[8 * t + 6] = (int)__reduce_or_sync(mask, u & 0xff00ffu);
  o[8 * t + 7] = (int)__reduce_xor_sync(mask, u);
}]],
  run = function(k, seed)
    local v, vs = ints(N, seed, -2000000000, 2000000000)
    local o = cuda.array(8 * N, "i32")
    k[{1, THREADS}](v, o, N)
    return {vs}, {o}
  end,
  ref = function(inp)
    local vs, want = inp[1], {}
    for t = 0, N - 1 do
      local add, mn, mx, umn, umx, a, r, x = 0, math.huge, -math.huge, math.huge, -1, 0xffffffff, 0, 0
      for _, j in ipairs(group(t, N, lane3)) do
        local v = vs[j + 1]
        local u = v & 0xffffffff
        add, mn, mx = add + v, math.min(mn, v), math.max(mx, v)
        umn, umx = math.min(umn, u), math.max(umx, u)
        a, r, x = a & (u | 0x10000), r | (u & 0xff00ff), x ~ u
      end
      local b = 8 * t
      want[b + 1], want[b + 2], want[b + 3] = s32(add), mn, mx
      want[b + 4], want[b + 5] = s32(math.tointeger(umn)), s32(umx)
      want[b + 6], want[b + 7], want[b + 8] = s32(a), s32(r), s32(x)
    end
    return {want}
  end,
}

case{
  name = "__reduce_max_sync and __reduce_add_sync per key, the masks from __match_any_sync",
  src = [[
__global__ void f(const int *key, const int *v, int *o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned mask = __match_any_sync(__activemask(), key[t]);
  o[3 * t] = (int)mask;
  o[3 * t + 1] = __reduce_max_sync(mask, v[t]);
  o[3 * t + 2] = (int)__reduce_add_sync(mask, (unsigned)v[t]);
}]],
  run = function(k, seed)
    local key, ks = ints(N, seed, 0, 4)
    local v, vs = ints(N, seed + 1, -1000, 1000)
    local o = cuda.array(3 * N, "i32")
    k[{1, THREADS}](key, v, o, N)
    return {ks, vs}, {o}
  end,
  ref = function(inp)
    local ks, vs, want = inp[1], inp[2], {}
    for t = 0, N - 1 do
      local g = group(t, N, function(j) return ks[j + 1] end)
      local mask, mx, add = 0, -math.huge, 0
      for _, j in ipairs(g) do
        mask, mx, add = mask | 1 << (j % 32), math.max(mx, vs[j + 1]), add + vs[j + 1]
      end
      want[3 * t + 1], want[3 * t + 2], want[3 * t + 3] = s32(mask), mx, s32(add)
    end
    return {want}
  end,
}

case{
  name = "__shfl_sync, __shfl_up_sync and __shfl_xor_sync with one mask per lane % 3 group and per tile of 8",
  src = [[
__global__ void f(const int *v, int *o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
]] .. MASK3 .. [[
  int x = v[t];
  o[3 * t] = __shfl_sync(mask, x, __ffs(mask) - 1);   /* the group's first lane */
  o[3 * t + 1] = __shfl_up_sync(mask, x, 3);          /* the group's previous lane */
  unsigned tile = 0xffu << (lane & ~7u);
  o[3 * t + 2] = __shfl_xor_sync(tile, x, 5, 8);      /* within each tile of 8 */
}]],
  run = function(k, seed)
    local v, vs = ints(64, seed, -1000000, 1000000)
    local o = cuda.array(3 * 64, "i32")
    -- every warp whole: lanes past n would leave a mask that names them (a GPU hangs on that)
    k[{1, 64}](v, o, 64)
    return {vs}, {o}
  end,
  ref = function(inp)
    local vs, want = inp[1], {}
    for t = 0, 63 do
      local lane, w = t % 32, t - t % 32
      local first = w + lane % 3
      want[3 * t + 1] = vs[first + 1]
      want[3 * t + 2] = lane >= 3 and vs[t - 3 + 1] or vs[t + 1]
      want[3 * t + 3] = vs[(t ~ 5) + 1]
    end
    return {want}
  end,
}

case{
  name = "__ballot_sync, __any_sync, __all_sync and __uni_sync over one group per lane % 3",
  src = [[
__global__ void f(const int *v, int *o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
]] .. MASK3 .. [[
  int p = v[t] > 0;
  o[4 * t] = (int)__ballot_sync(mask, p);
  o[4 * t + 1] = __any_sync(mask, p);
  o[4 * t + 2] = __all_sync(mask, p);
  o[4 * t + 3] = __uni_sync(mask, p);
}]],
  run = function(k, seed)
    -- mostly positive, so that some groups are all positive, some mixed
    local v, vs = ints(N, seed, -3, 40)
    local o = cuda.array(4 * N, "i32")
    k[{1, THREADS}](v, o, N)
    return {vs}, {o}
  end,
  ref = function(inp)
    local vs, want = inp[1], {}
    for t = 0, N - 1 do
      local ballot, n, yes = 0, 0, 0
      for _, j in ipairs(group(t, N, lane3)) do
        n = n + 1
        if vs[j + 1] > 0 then ballot, yes = ballot | 1 << (j % 32), yes + 1 end
      end
      want[4 * t + 1] = s32(ballot)
      want[4 * t + 2] = yes > 0 and 1 or 0
      want[4 * t + 3] = yes == n and 1 or 0
      want[4 * t + 4] = (yes == n or yes == 0) and 1 or 0
    end
    return {want}
  end,
}

case{
  name = "__match_any_sync and __match_all_sync over one group per lane % 3",
  src = [[
__global__ void f(const int *key, int *o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
]] .. MASK3 .. [[
  int k = key[t], pred;
  o[4 * t] = (int)__match_any_sync(mask, k);
  o[4 * t + 1] = (int)__match_all_sync(mask, k, &pred);
  o[4 * t + 2] = pred;
  /* a key the same across the group where the group is within lanes 0..14 */
  int c = lane < 15 ? 7 : k;
  o[4 * t + 3] = (int)__match_all_sync(mask, c, &pred) + (pred << 30);
}]],
  run = function(k, seed)
    local key, ks = ints(N, seed, 0, 2)
    local o = cuda.array(4 * N, "i32")
    k[{1, THREADS}](key, o, N)
    return {ks}, {o}
  end,
  ref = function(inp)
    local ks, want = inp[1], {}
    for t = 0, N - 1 do
      local g = group(t, N, lane3)
      local any, all, same, same2 = 0, 0, true, true
      local function c(j) return (j % 32) < 15 and 7 or ks[j + 1] end
      for _, j in ipairs(g) do
        all = all | 1 << (j % 32)
        if ks[j + 1] == ks[t + 1] then any = any | 1 << (j % 32) end
        same = same and ks[j + 1] == ks[t + 1]
        same2 = same2 and c(j) == c(t)
      end
      want[4 * t + 1] = s32(any)
      want[4 * t + 2] = same and s32(all) or 0
      want[4 * t + 3] = same and 1 or 0
      want[4 * t + 4] = s32((same2 and all or 0) + (same2 and 1 << 30 or 0))
    end
    return {want}
  end,
}

case{
  name = "__syncwarp with one mask per lane % 3 group orders a hand-off through shared memory",
  src = [[
__global__ void f(const int *v, int *o, int n) {
  __shared__ int s[96];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
]] .. MASK3 .. [[
  int w = threadIdx.x & ~31;
  s[threadIdx.x] = v[t];
  __syncwarp(mask);
  /* the next lane of the group, round its end */
  unsigned later = mask & ~((2u << lane) - 1);
  int next = later ? __ffs(later) - 1 : __ffs(mask) - 1;
  int got = s[w + next];
  __syncwarp(mask);
  s[threadIdx.x] = got + 1;
  __syncwarp(mask);
  o[t] = s[w + next];
}]],
  run = function(k, seed)
    local v, vs = ints(64, seed, -1000, 1000)
    local o = cuda.array(64, "i32")
    k[{1, 64}](v, o, 64)
    return {vs}, {o}
  end,
  ref = function(inp)
    local vs, want = inp[1], {}
    local function next(t)
      local lane, w = t % 32, t - t % 32
      local nl = lane + 3
      if nl > 31 then nl = lane % 3 end
      return w + nl
    end
    for t = 0, 63 do want[t + 1] = vs[next(next(t)) + 1] + 1 end
    return {want}
  end,
}

case{
  name = "cg::reduce over cg::labeled_partition: the maximum and the count of each bucket",
  src = [[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void f(const int *bucket, const int *v, int *maxes, int *counts, int *o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  cg::coalesced_group active = cg::coalesced_threads();
  int b = bucket[t];
  cg::coalesced_group same = cg::labeled_partition(active, b);
  int mx = cg::reduce(same, v[t], cg::greater<int>());
  int cnt = cg::reduce(same, 1, cg::plus<int>());
  o[t] = mx;
  if (same.thread_rank() == 0) {
    atomicMax(&maxes[b], mx);
    atomicAdd(&counts[b], cnt);
  }
}]],
  run = function(k, seed)
    local bucket, bs = ints(N, seed, 0, 4)
    local v, vs = ints(N, seed + 1, -100000, 100000)
    local maxes = cuda.array({-2147483647 - 1, -2147483647 - 1, -2147483647 - 1,
                              -2147483647 - 1, -2147483647 - 1}, "i32")
    local counts, o = cuda.array(5, "i32"), cuda.array(N, "i32")
    k[{1, THREADS}](bucket, v, maxes, counts, o, N)
    return {bs, vs}, {maxes, counts, o}
  end,
  ref = function(inp)
    local bs, vs = inp[1], inp[2]
    local maxes, counts, o = {}, {}, {}
    for b = 0, 4 do maxes[b + 1], counts[b + 1] = -2147483647 - 1, 0 end
    for t = 0, N - 1 do
      local b = bs[t + 1]
      maxes[b + 1] = math.max(maxes[b + 1], vs[t + 1])
      counts[b + 1] = counts[b + 1] + 1
      local mx = -math.huge
      for _, j in ipairs(group(t, N, function(i) return bs[i + 1] end)) do mx = math.max(mx, vs[j + 1]) end
      o[t + 1] = mx
    end
    return {maxes, counts, o}
  end,
}

case{
  name = "cg::tiled_partition<128> over cg::block_tile_memory: reduce, shfl, ranks, reserved shared memory",
  src = [[
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void f(const int *v, int *sums, int *ranks, unsigned *where, int n) {
  __shared__ cg::block_tile_memory<256> scratch;
  __shared__ int mine[256];
  cg::thread_block block = cg::this_thread_block(scratch);
  cg::thread_block_tile<128> tile = cg::tiled_partition<128>(block);
  int t = block.thread_rank(), g = blockIdx.x * blockDim.x + t;
  int x = g < n ? v[g] : 0;
  mine[t] = x;
  int s = cg::reduce(tile, x, cg::plus<int>());
  int m = cg::reduce(tile, x, cg::greater<int>());
  tile.sync();
  int from5 = tile.shfl(x, 5);
  sums[2 * g] = s;
  sums[2 * g + 1] = m;
  ranks[2 * g] = (int)(tile.thread_rank() * 1000 + tile.meta_group_rank() * 100 + tile.meta_group_size());
  ranks[2 * g + 1] = from5 + mine[t ^ 1];
  if (g == 0) {
    unsigned b, e, c;
    asm("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(b));
    asm("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(e));
    asm("mov.u32 %0, %%reserved_smem_offset_cap;" : "=r"(c));
    where[0] = b; where[1] = e; where[2] = c;
    where[3] = (unsigned)__cvta_generic_to_shared(mine) >= e; /* user memory after the region */
  }
}]],
  run = function(k, seed)
    local n = 3 * 256 - 40
    local v, vs = ints(n, seed, -100000, 100000)
    local sums, ranks, where = cuda.array(2 * 768, "i32"), cuda.array(2 * 768, "i32"), cuda.array(4, "u32")
    k[{3, 256}](v, sums, ranks, where, n)
    return {vs, n}, {sums, ranks, where}
  end,
  ref = function(inp)
    local vs, n = inp[1], inp[2]
    local function x(g) return g < n and vs[g + 1] or 0 end
    local sums, ranks = {}, {}
    for g = 0, 767 do
      local base = g - g % 128
      local s, m = 0, -math.huge
      for j = base, base + 127 do s, m = s + x(j), math.max(m, x(j)) end
      local t = g % 256
      sums[2 * g + 1], sums[2 * g + 2] = s, m
      ranks[2 * g + 1] = (g % 128) * 1000 + (t // 128) * 100 + 2
      ranks[2 * g + 2] = x(base + 5) + x(g ~ 1)
    end
    -- the reserved region's begin, end and cap as an H100 gives them, and the block's own
    -- shared memory after it
    return {sums, ranks, {0, 288, 1024, 1}}
  end,
}

-- Runs case c with kernel k: its outputs as Lua sequences, and the reference's.
function M.run(c, k, seed)
  local inp, outs = c.run(k, seed)
  local got = {}
  for i, a in ipairs(outs) do got[i] = a:tolist() end
  return got, c.ref(inp)
end

-- The first difference between two lists of sequences: "output i [j]: got x, want y", or nil.
function M.differ(got, want)
  for i, w in ipairs(want) do
    local g = got[i]
    if #g ~= #w then return string.format("output %d: %d elements, want %d", i, #g, #w) end
    for j = 1, #w do
      if g[j] ~= w[j] then return string.format("output %d [%d]: got %s, want %s", i, j - 1, g[j], w[j]) end
    end
  end
  return nil
end

function M.kernel(c)
  return c.kernel and cuda.module(c.src)[c.kernel] or cuda.kernel(c.src)
end

return M
