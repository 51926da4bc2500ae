-- race_release.lua: release and acquire order warps for the shared-memory race checker, as the
-- PTX memory model says. A warp that writes data and then releases a flag hands the data to a
-- warp that acquires the flag: cuda::atomic_ref's release stores and acquire loads, volatile
-- flags with __threadfence_block() on both sides, atomics with fences, cooperative_groups'
-- 64-thread tiles. Each correct kernel runs with strict checking (a lesson check's) and its
-- result is checked against the CPU; each broken hand-off must be reported, its message asserted.
-- Simulator only.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(8)

local checking = T.race_check -- race checking set to `on` while f runs

-- The launch must fail with a message holding every string of `want`.
local function race(want, launch, ...)
  local ok, err = checking("fail", pcall, launch, ...)
  check(not ok, "the race went unreported")
  err = tostring(err)
  for _, w in ipairs(want) do check(err:find(w, 1, true), "'" .. w .. "' not in: " .. err) end
  return err
end

local ATOMIC = "#include <cuda/atomic>\n" ..
  "typedef cuda::atomic_ref<int, cuda::thread_scope_block> flag_ref;\n"
local RELAXED, RELEASE, ACQUIRE = "cuda::memory_order_relaxed", "cuda::memory_order_release",
  "cuda::memory_order_acquire"

-- Warp 1 doubles the input into buf, then sets the flag; warp 0 waits for it and reads buf
-- backwards. The pieces vary: how the flag is stored and loaded, and what comes between.
local HANDOFF = ATOMIC .. [[
__global__ void handoff(const int *in, int *out) {
  __shared__ int buf[32], flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  flag_ref f(flag);
  if (threadIdx.x >= 32) {
    $first
    buf[threadIdx.x - 32] = in[threadIdx.x - 32] * 2;
    $between
    $set
  } else {
    $wait
    $after
    out[threadIdx.x] = $read;
  }
}]]

local function handoff(o)
  local parts = {first = "", between = "__syncwarp();",
                 set = "if (threadIdx.x == 32) f.store(1, " .. RELEASE .. ");",
                 wait = "while (f.load(" .. ACQUIRE .. ") == 0) {}", after = "",
                 read = "buf[31 - threadIdx.x]"}
  for k, v in pairs(o) do parts[k] = v end
  return cuda.kernel((HANDOFF:gsub("%$(%a+)", parts)), {warnings = false})
end

local function inputs()
  local xs = {}
  for i = 1, 32 do xs[i] = (i * 7) % 23 - 5 end
  return xs, cuda.array(xs, "i32")
end

-- The handoff's result: out[l] = 2 * in[31 - l].
local function check_handoff(out, xs, what)
  for l = 0, 31 do checkeq(out[l], 2 * xs[32 - l], what .. ": out[" .. l .. "]") end
end

local HERE = "reads element 31 of __shared__ buf (byte offset 124) at kernel.cu:16"
local THERE = "which thread (63,0,0) (warp 1, lane 31) wrote at kernel.cu:10"
local NOR = "nor a release after the earlier access that the later one's warp acquired: add " ..
  "__syncthreads() between the two, or release after the earlier access (a release store or " ..
  "atomic, or __threadfence_block() and then the flag's store) and acquire before the later one"

test("a release store and acquire loads hand a buffer from one warp to another", function()
  local xs, x = inputs()
  local out = cuda.array(32, "i32")
  checking(true, handoff{}[{1, 64}], x, out)
  check_handoff(out, xs, "release/acquire")
  -- default (seq_cst) atomics are fence.sc and relaxed accesses: a release and an acquire too
  out = cuda.array(32, "i32")
  checking(true, handoff{set = "if (threadIdx.x == 32) f.store(1);",
                         wait = "while (f.load() == 0) {}"}[{1, 64}], x, out)
  check_handoff(out, xs, "seq_cst")
end)

test("a volatile flag with __threadfence_block() on both sides; a fence missing is a race", function()
  local xs, x = inputs()
  local volatile = {between = "__threadfence_block(); __syncwarp();",
                    set = "if (threadIdx.x == 32) *(volatile int *)&flag = 1;",
                    wait = "while (*(volatile int *)&flag == 0) {}", after = "__threadfence_block();"}
  local out = cuda.array(32, "i32")
  checking(true, handoff(volatile)[{1, 64}], x, out)
  check_handoff(out, xs, "volatile")
  local no_release = {}
  for k, v in pairs(volatile) do no_release[k] = v end
  no_release.between = "__syncwarp();"
  race({"shared-memory race between warps: thread (0,0,0) (warp 0, lane 0) " .. HERE, THERE, NOR},
       handoff(no_release)[{1, 64}], x, out)
  local no_acquire = {}
  for k, v in pairs(volatile) do no_acquire[k] = v end
  no_acquire.after = ""
  race({"shared-memory race between warps", HERE, THERE, NOR}, handoff(no_acquire)[{1, 64}], x, out)
end)

test("what release and acquire do not order is still a race", function()
  local _, x = inputs()
  local out = cuda.array(32, "i32")
  -- the consumer polls with relaxed loads and never acquires
  race({"shared-memory race between warps", HERE, THERE, NOR},
       handoff{wait = "while (f.load(" .. RELAXED .. ") == 0) {}"}[{1, 64}], x, out)
  -- the flag is relaxed, with no fence before it
  race({"shared-memory race between warps", HERE, THERE, NOR},
       handoff{set = "if (threadIdx.x == 32) f.store(1, " .. RELAXED .. ");"}[{1, 64}], x, out)
  -- the flag is released before the data is written: the write comes after the release
  race({"shared-memory race between warps", HERE, THERE, NOR},
       handoff{first = "if (threadIdx.x == 32) f.store(1, " .. RELEASE .. ");", set = ""}[{1, 64}],
       x, out)
  -- lane 0 releases with no __syncwarp() after the other lanes' writes: only its own are released
  race({"shared-memory race between warps", HERE, THERE, NOR}, handoff{between = ""}[{1, 64}], x,
       out)
end)

test("a lane that acquires for its warp needs __syncwarp() before the others read", function()
  local xs, x = inputs()
  local out = cuda.array(32, "i32")
  local lane0 = "if (threadIdx.x == 0) while (f.load(" .. ACQUIRE .. ") == 0) {}"
  checking(true, handoff{wait = lane0, after = "__syncwarp();"}[{1, 64}], x, out)
  check_handoff(out, xs, "lane 0 acquires, then __syncwarp()")
  race({"shared-memory race between warps: thread (1,0,0) (warp 0, lane 1) reads element 30 of " ..
        "__shared__ buf (byte offset 120) at kernel.cu:16",
        "which thread (62,0,0) (warp 1, lane 30) wrote at kernel.cu:10", NOR},
       handoff{wait = lane0}[{1, 64}], x, out)
  -- every lane reads the word lane 0 has just read: each lane is checked, none rides on lane 0
  race({"shared-memory race between warps: thread (1,0,0) (warp 0, lane 1) reads element 0 of " ..
        "__shared__ buf (byte offset 0) at kernel.cu:16",
        "which thread (32,0,0) (warp 1, lane 0) wrote at kernel.cu:10", NOR},
       handoff{wait = lane0, read = "buf[0]"}[{1, 64}], x, out)
end)

test("a chain of hand-offs through three warps orders the first warp's writes for the last", function()
  local k = cuda.kernel(ATOMIC .. [[
__global__ void chain(const int *in, int *out) {
  __shared__ int a[32], b[32], f1, f2;
  if (threadIdx.x == 0) { f1 = 0; f2 = 0; }
  __syncthreads();
  flag_ref r1(f1), r2(f2);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (warp == 0) {
    a[lane] = in[lane];
    __syncwarp();
    if (lane == 0) r1.store(1, cuda::memory_order_release);
  } else if (warp == 1) {
    while (r1.load(cuda::memory_order_acquire) == 0) {}
    b[lane] = a[31 - lane] * 10;
    __syncwarp();
    if (lane == 0) r2.store(1, cuda::memory_order_release);
  } else {
    while (r2.load(cuda::memory_order_acquire) == 0) {}
    out[lane] = a[lane] + b[lane];
  }
}]])
  local xs, x = inputs()
  local out = cuda.array(32, "i32")
  checking(true, k[{1, 96}], x, out)
  for l = 0, 31 do checkeq(out[l], xs[l + 1] + 10 * xs[32 - l], "out[" .. l .. "]") end
end)

test("cg::thread_block_tile<64>::sync() orders the tile's two warps", function()
  local k = cuda.kernel[[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void tile_sum(const int *in, int *out) {
  cg::thread_block_tile<64> t = cg::tiled_partition<64>(cg::this_thread_block());
  __shared__ int sm[128];
  int base = threadIdx.x - t.thread_rank();
  sm[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  t.sync();
  int r = t.thread_rank();
  out[blockIdx.x * blockDim.x + threadIdx.x] = sm[base + r] + sm[base + 63 - r];
  t.sync();
  sm[threadIdx.x] = 0;
}]]
  local n, xs = 256, {}
  for i = 1, n do xs[i] = (i * 13) % 97 end
  local out = cuda.array(n, "i32")
  checking(true, k[{2, 128}], cuda.array(xs, "i32"), out)
  for i = 0, n - 1 do
    local base, r = i - i % 64, i % 64
    checkeq(out[i], xs[base + r + 1] + xs[base + 63 - r + 1], "out[" .. i .. "]")
  end
end)

test("a flag in global memory, one per block, hands over shared data too", function()
  local k = cuda.kernel[[
#include <cuda/atomic>
__global__ void global_flag(const int *in, int *out, int *flags) {
  __shared__ int buf[32];
  cuda::atomic_ref<int, cuda::thread_scope_device> f(flags[blockIdx.x]);
  if (threadIdx.x >= 32) {
    buf[threadIdx.x - 32] = in[threadIdx.x - 32] + (int)blockIdx.x;
    __syncwarp();
    if (threadIdx.x == 32) f.store(1, cuda::memory_order_release);
  } else {
    while (f.load(cuda::memory_order_acquire) == 0) {}
    out[blockIdx.x * 32 + threadIdx.x] = buf[31 - threadIdx.x];
  }
}]]
  local xs, x = inputs()
  local out = cuda.array(96, "i32")
  checking(true, k[{3, 64}], x, out, cuda.zeros(3, "i32"))
  for b = 0, 2 do
    for l = 0, 31 do checkeq(out[b * 32 + l], xs[32 - l] + b, "block " .. b .. ": out[" .. l .. "]") end
  end
end)

test("a lock of atomicCAS and atomicExch orders its critical sections only with fences", function()
  local k = cuda.kernel[[
__global__ void locked(const int *in, int *out, int fenced) {
  __shared__ int lock, total;
  if (threadIdx.x == 0) { lock = 0; total = 0; }
  __syncthreads();
  int v = in[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) {
    while (atomicCAS(&lock, 0, 1) != 0) {}
    if (fenced) __threadfence_block();
    total += v;
    if (fenced) __threadfence_block();
    atomicExch(&lock, 0);
  }
  __syncthreads();
  if (threadIdx.x == 0) out[0] = total;
}]]
  local n = 256
  local out = cuda.array(1, "i32")
  checking(true, k[{1, n}], cuda.arange(n, "i32"), out, 1)
  checkeq(out[0], n * (n - 1) // 2, "the sum of the critical sections")
  race({"shared-memory race between warps: thread (32,0,0) (warp 1, lane 0) reads element 0 of " ..
        "__shared__ total (byte offset 0) at kernel.cu:10",
        "which thread (0,0,0) (warp 0, lane 0) wrote at kernel.cu:10", NOR},
       k[{1, n}], cuda.arange(n, "i32"), out, 0)
end)

return T.done()
