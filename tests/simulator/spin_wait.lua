-- spin_wait.lua: a warp that polls shared memory another warp of its block will write. On a GPU
-- the block's warps interleave, so the poller spins a few iterations while the writer works; the
-- simulator runs one warp for a long slice at a time, and used to let a poller spin for all of it
-- (200,000 warp instructions a wait), which cuda.stats() counted and the timing model priced:
-- NVIDIA's multi_warp_cg_reduce, whose multi-warp tile's sync() is such a poll, was modelled at
-- 1.10 ms against 6 us for cg_reduce of the same shape. Here: that sample against cg_reduce, a
-- classic flag hand-off between two warps, the counts' independence of the number of host threads,
-- a poll that can never end still reported, and a lock taken per thread told apart. Results are checked against a CPU reference.
-- Simulator only.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(6)

local DIR = "tests/samples/"
local N, THREADS, BLOCKS = 1 << 16, 256, 64

local function sample(name)
  return cuda.kernel(DIR .. "reduction/reduction_kernel.cu",
    {options = {"-I" .. DIR .. "reduction"}, name = name, device_only = true})
end

-- (i * 7) % 256 at i, and each block's share of the sum as the kernel's grid-stride loop takes it
-- (blocks of 2 * THREADS elements for the multi-warp kernel, of THREADS for cg_reduce).
local input, want = {}, {}
for i = 1, N do input[i] = ((i - 1) * 7) % 256 end
local function shares(per)
  local s = {}
  for b = 1, BLOCKS do s[b] = 0 end
  for i = 0, N - 1 do
    local b = (i // per) % BLOCKS + 1
    s[b] = s[b] + input[i + 1]
  end
  return s
end
want.cg, want.multi = shares(THREADS), shares(2 * THREADS)

local d_in = cuda.array(N, "i32")
d_in:copyfrom(cuda.host(input, "i32"))

-- One launch: its modelled time, warp instructions, and output checked against the reference.
local function reduce(k, smem, expect)
  local out = cuda.array(BLOCKS, "i32")
  local ms = cuda.time(function() k[{BLOCKS, THREADS, smem}](d_in, out, N) end,
    {warmup = 0, reps = 1}).median
  local st = cuda.stats()
  local got = out:tolist()
  for b = 1, BLOCKS do checkeq(got[b], expect[b], "block " .. (b - 1) .. "'s partial sum") end
  return ms, st.warp_insts
end

local cg = sample("cg_reduce<int>")
local multi = sample("multi_warp_cg_reduce<int, 256, 128>")

test("a multi-warp tile's sync() is counted and timed like cg_reduce's on the same shape", function()
  local cg_ms, cg_n = reduce(cg, THREADS * 4, want.cg)
  local mw_ms, mw_n = reduce(multi, 2 * 4, want.multi)
  -- the H200 runs both in a few microseconds; the tile's sync adds a few polls per warp
  print(string.format("# multi_warp_cg_reduce %d warp instructions, %.4g ms; cg_reduce %d, %.4g ms",
    mw_n, mw_ms, cg_n, cg_ms))
  check(mw_n < 4 * cg_n, string.format("%d warp instructions against cg_reduce's %d", mw_n, cg_n))
  check(mw_ms < 2 * cg_ms and mw_ms > cg_ms / 2,
    string.format("modelled %.4g ms against cg_reduce's %.4g ms", mw_ms, cg_ms))
end)

-- Warp 1 sums the input and publishes the total through a volatile shared flag; warp 0 waits for
-- it (wait = 1), or meets warp 1 at __syncthreads() instead (wait = 0), then writes total + lane.
local HANDOFF = cuda.kernel[[
__global__ void handoff(const int *in, int *out, int n, int wait) {
  volatile __shared__ int flag;
  volatile __shared__ int total;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 1) {
    int s = 0;
    for (int i = lane; i < n; i += 32) s += in[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    if (lane == 0) {
      total = s;
      __threadfence_block();
      flag = 1;
    }
  }
  if (!wait) __syncthreads();
  if (warp == 0) {
    if (wait) while (flag == 0) {}
    __threadfence_block();
    out[blockIdx.x * 32 + lane] = total + lane;
  }
}]]

local function handoff(blocks, wait)
  local n = 2048
  local out = cuda.array(blocks * 32, "i32")
  -- strict race checking: the fences and the volatile flag order the hand-off
  cuda.simopts{race_check = "fail"}
  HANDOFF[{blocks, 64}](d_in, out, n, wait)
  cuda.simopts{race_check = "warn"}
  local st = cuda.stats()
  local total = 0
  for i = 1, n do total = total + input[i] end
  local got = out:tolist()
  for i = 1, blocks * 32 do
    checkeq(got[i], total + (i - 1) % 32, "out[" .. (i - 1) .. "]")
  end
  return st.warp_insts
end

test("a warp waiting on a volatile shared flag another warp sets polls a few times", function()
  local polled, met = handoff(8, 1), handoff(8, 0)
  -- the poll is three instructions (load, compare, branch); a few turns of it per block
  print(string.format("# %d warp instructions polling, %d meeting at __syncthreads()", polled, met))
  check(polled - met < 8 * 40, string.format(
    "%d warp instructions with the flag, %d with __syncthreads() instead (8 blocks)", polled, met))
end)

test("the counts are the same on 1 and 3 host threads, run after run", function()
  local counts = {}
  for _, n in ipairs{1, 3, 1, 3} do
    cuda.simopts{threads = n}
    local _, mw = reduce(multi, 2 * 4, want.multi)
    counts[#counts + 1] = string.format("%d/%d", mw, handoff(96, 1))
  end
  cuda.simopts{threads = 0}
  for i = 2, #counts do checkeq(counts[i], counts[1], "run " .. i .. "'s counts") end
end)

-- Warp 1 leaves without setting the flag warp 0 waits on: a GPU hangs; the simulator must end
-- the launch at once and say where it waits, not run the poll forever.
local LOST = cuda.kernel[[
__global__ void lost(int *out) {
  volatile __shared__ int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x < 32) {
    while (flag == 0) {}
    out[threadIdx.x] = 1;
  }
}]]

for _, n in ipairs{1, 3} do
  test("a flag no warp of the block will set is reported (" .. n .. " host thread"
      .. (n == 1 and "" or "s") .. ")", function()
    cuda.simopts{threads = n}
    local out = cuda.zeros(4 * 32, "i32")
    local t0 = os.clock()
    checkerr("kernel lost can never finish: its blocks wait for a flag that is never set",
      function() LOST[{4, 64}](out) end)
    cuda.simopts{threads = 0}
    check(os.clock() - t0 < 20, string.format("took %.1f s of CPU", os.clock() - t0))
    -- the message names the spinning warp and the shared memory it reads
    local ok, err = pcall(function() LOST[{1, 64}](out) end)
    check(not ok and err:find("block (0,0,0) warp 0 spins at", 1, true)
      and err:find("reading shared memory at byte", 1, true), tostring(err))
  end)
end

-- A lock taken per thread: the lane that wins is parked at the loop's end while the others of its
-- warp spin. A GPU since Volta runs that lane on and finishes; the simulator cannot, so the
-- message must not say a GPU would hang too, and says what to do: one lane of each warp takes it.
test("a lock taken per thread: the message says the simulator cannot run it, and the lock " ..
    "taken by one lane of each warp runs", function()
  local lock = cuda.kernel [[
__global__ void per_thread(int *mutex, int *count) {
  while (atomicCAS(mutex, 0, 1) != 0) {}
  *(volatile int *)count += 1;
  __threadfence();
  atomicExch(mutex, 0);
}]]
  local mutex, count = cuda.zeros(1, "i32"), cuda.zeros(1, "i32")
  local ok, err = pcall(function() lock[{1, 32}](mutex, count) end)
  check(not ok and err:find("kernel per_thread can never finish on the simulator: lanes of a " ..
    "warp spin on an atomic while other lanes of the same warp are parked until the loop ends", 1, true)
    and err:find("(a lock taken per thread), a GPU since Volta", 1, true)
    and err:find("let one lane of each warp take the lock", 1, true)
    and err:find("block (0,0,0) warp 0 spins at", 1, true), tostring(err))
  mutex, count = cuda.zeros(1, "i32"), cuda.zeros(1, "i32")
  local per_warp = cuda.kernel([[
__global__ void per_warp(int *mutex, int *count) {
  if (threadIdx.x % 32 == 0) {
    while (atomicCAS(mutex, 0, 1) != 0) {}
    *(volatile int *)count += 1;
    __threadfence();
    atomicExch(mutex, 0);
  }
}]])
  per_warp[{3, 128}](mutex, count)
  checkeq(count[0], 3 * 128 // 32, "one increment per warp")
  checkeq(mutex[0], 0, "the lock released")
end)

return T.done()
