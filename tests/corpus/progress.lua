-- progress.lua: corpus cases whose blocks wait on one another (a decoupled look-back scan, a grid
-- barrier built from an atomic counter, a producer/consumer queue between blocks, a chain of
-- blocks each waiting for the next). On a GPU they finish because every block is resident at
-- once; the simulator must park a waiting block and run the others, with one host thread and
-- with several. Then, on the simulator only (a GPU would hang), the two launches that can never
-- finish, which its watchdog must end within seconds with a message naming the spinning warps.
local C = dofile("tests/corpus/corpus.lua")
local sim = cuda.backend() == "sim"

-- five kinds of case on 1 and 3 host threads; on the simulator, ten watchdog checks too
C.plan(sim and 20 or 10)
local function threads(n) if sim then cuda.simopts{threads = n} end end
local function label(n) return string.format(" (%d host thread%s)", n, n == 1 and "" or "s") end

local SCAN = [[
#define B 128
// Inclusive scan with a decoupled look-back: each block publishes its tile's total (flag 1),
// then walks back over earlier tiles, adding totals until it finds an inclusive prefix (flag 2).
// The tile is a ticket taken in arrival order (safe on any GPU), or with reversed set, the
// block's index backwards: block 0 takes the last tile and waits for every other block.
__global__ void scan(const int *in, int *out, int *ticket, volatile int *flag, volatile int *agg, volatile int *pre,
                     int n, int reversed) {
  __shared__ int s[B];
  __shared__ int tile_s, excl_s;
  if (threadIdx.x == 0) tile_s = reversed ? gridDim.x - 1 - blockIdx.x : atomicAdd(ticket, 1);
  __syncthreads();
  int tile = tile_s, t = threadIdx.x, i = tile * B + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int d = 1; d < B; d *= 2) {
    int v = t >= d ? s[t - d] : 0;
    __syncthreads();
    s[t] += v;
    __syncthreads();
  }
  if (t == 0) {
    int total = s[B - 1], e = 0;
    if (tile > 0) {
      agg[tile] = total;
      __threadfence();
      flag[tile] = 1;
      for (int j = tile - 1;; j--) {
        int f;
        while ((f = flag[j]) == 0) {}
        __threadfence();
        if (f == 2) { e += pre[j]; break; }
        e += agg[j];
      }
    }
    pre[tile] = e + total;
    __threadfence();
    flag[tile] = 2;
    excl_s = e;
  }
  __syncthreads();
  if (i < n) out[i] = s[t] + excl_s;
}]]

local function scan_case(nthreads, reversed)
  local N, TILES = 96 * 128 - 37, 96
  C.case{
    name = "progress: decoupled look-back scan over 96 blocks" .. (reversed and ", block 0 takes the last tile" or "") ..
      label(nthreads),
    src = SCAN,
    run = function(k)
      threads(nthreads)
      local a, xs = C.integers(N, 41, -1000, 1000)
      local out = cuda.array(N, "i32")
      local ticket, flag = cuda.zeros(1, "i32"), cuda.zeros(TILES, "i32")
      local agg, pre = cuda.zeros(TILES, "i32"), cuda.zeros(TILES, "i32")
      k[{TILES, 128}](a, out, ticket, flag, agg, pre, N, reversed and 1 or 0)
      threads(0)
      C.xs = xs
      return {out}
    end,
    check = function(o)
      local want, s = {}, 0
      for i = 1, N do s = s + C.xs[i]; want[i] = s end
      C.same(o[1], want)
    end,
  }
end

local BARRIER = [[
// A grid-wide barrier from an atomic counter: every block must be resident at once. Each round,
// each block publishes the sum of its slice times the round number, waits for all the others,
// then adds up every block's part.
__global__ void gbar(const int *in, int *out, unsigned *count, volatile int *part, int rounds) {
  __shared__ int s;
  int b = blockIdx.x, nb = gridDim.x;
  for (int r = 0; r < rounds; r++) {
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    atomicAdd(&s, in[b * blockDim.x + threadIdx.x] * (r + 1));
    __syncthreads();
    if (threadIdx.x == 0) {
      part[r * nb + b] = s;
      __threadfence();
      atomicAdd(count, 1u);
      while (atomicAdd(count, 0u) < (unsigned)((r + 1) * nb)) {}
      __threadfence();
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      int t = 0;
      for (int j = threadIdx.x; j < nb; j += 32) t += part[r * nb + j];
      for (int o = 16; o > 0; o /= 2) t += __shfl_down_sync(0xffffffff, t, o);
      if (threadIdx.x == 0) out[r * nb + b] = t + s;
    }
    __syncthreads();
  }
}]]

local function barrier_case(nthreads)
  local NB, BS, R = 64, 128, 3
  C.case{
    name = "progress: grid barrier from an atomic counter, 64 resident blocks, 3 rounds" .. label(nthreads),
    src = BARRIER,
    run = function(k)
      threads(nthreads)
      local a, xs = C.integers(NB * BS, 42, -50, 50)
      local out, count, part = cuda.array(NB * R, "i32"), cuda.zeros(1, "u32"), cuda.zeros(NB * R, "i32")
      k[{NB, BS}](a, out, count, part, R)
      threads(0)
      C.xs = xs
      return {out, count}
    end,
    check = function(o)
      local want, slice, total = {}, {}, 0
      for b = 0, NB - 1 do
        local s = 0
        for t = 1, BS do s = s + C.xs[b * BS + t] end
        slice[b], total = s, total + s
      end
      for r = 0, R - 1 do
        for b = 0, NB - 1 do want[r * NB + b + 1] = (r + 1) * (total + slice[b]) end
      end
      C.same(o[1], want)
      C.same(o[2], {NB * R})
    end,
  }
end

local QUEUE = [[
// Block 1 produces n items into an 8-slot ring; block 0, which starts first, consumes them in
// order. Each waits for the other: the consumer when the ring is empty, the producer when full.
__global__ void queue(const int *in, int *out, volatile int *ring, volatile int *head, volatile int *tail, int n) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    for (int i = 0; i < n; i++) {
      while (*head - *tail == 8) {}
      ring[*head % 8] = in[i] * 3 + i;
      __threadfence();
      *head = *head + 1;
    }
  } else {
    for (int i = 0; i < n; i++) {
      while (*tail == *head) {}
      __threadfence();
      out[i] = ring[*tail % 8] - i;
      __threadfence();
      *tail = *tail + 1;
    }
  }
}]]

local function queue_case(nthreads)
  local N = 300
  C.case{
    name = "progress: producer and consumer blocks through an 8-slot ring" .. label(nthreads),
    src = QUEUE,
    run = function(k)
      threads(nthreads)
      local a, xs = C.integers(N, 43, -100000, 100000)
      local out, ring = cuda.array(N, "i32"), cuda.zeros(8, "i32")
      local head, tail = cuda.zeros(1, "i32"), cuda.zeros(1, "i32")
      k[{2, 32}](a, out, ring, head, tail, N)
      threads(0)
      C.xs = xs
      return {out, head, tail}
    end,
    check = function(o)
      local want = {}
      for i = 1, N do want[i] = C.xs[i] * 3 end
      C.same(o[1], want)
      C.same(o[2], {N})
      C.same(o[3], {N})
    end,
  }
end

local CHAIN = [[
// Each block waits for the next one's value: blocks finish in reverse order of their index.
__global__ void chain(const int *in, volatile int *val, volatile int *flag) {
  int b = blockIdx.x, nb = gridDim.x;
  if (threadIdx.x == 0) {
    int next = 0;
    if (b + 1 < nb) {
      while (flag[b + 1] == 0) {}
      __threadfence();
      next = val[b + 1];
    }
    val[b] = next * 3 + in[b];
    __threadfence();
    flag[b] = 1;
  }
}]]

local function chain_case(nthreads)
  local NB = 150
  C.case{
    name = "progress: 150 blocks, each waiting for the next one" .. label(nthreads),
    src = CHAIN,
    run = function(k)
      threads(nthreads)
      local a, xs = C.integers(NB, 44, -9, 9)
      local val, flag = cuda.zeros(NB, "i32"), cuda.zeros(NB, "i32")
      k[{NB, 32}](a, val, flag)
      threads(0)
      C.xs = xs
      return {val, flag}
    end,
    check = function(o)
      local want, ones, v = {}, {}, 0
      for b = NB, 1, -1 do
        v = v * 3 + C.xs[b]
        v = ((v + 0x80000000) % 0x100000000) - 0x80000000 -- i32 wraps as on the device
        want[b], ones[b] = v, 1
      end
      C.same(o[1], want)
      C.same(o[2], ones)
    end,
  }
end

for _, n in ipairs{1, 3} do
  scan_case(n, false)
  scan_case(n, true)
  barrier_case(n)
  queue_case(n)
  chain_case(n)
end

-- The watchdog, on the simulator only: a GPU would spin until the process is killed.
local function hopeless(name, needle, f)
  for _, n in ipairs{1, 3} do
    C.test("progress: watchdog, " .. name .. label(n), function()
      threads(n)
      local t0 = os.clock()
      C.checkerr(needle, f)
      threads(0)
      C.check(os.clock() - t0 < 20, string.format("took %.1f s of CPU", os.clock() - t0))
    end)
  end
end

if sim then
  local gbar = cuda.kernel(BARRIER)
  local shared = 100 * 1024 -- two blocks per SM: 264 resident at most
  local occ = cuda.occupancy(gbar, 128, shared)
  local L = occ.blocks_per_sm * cuda.device().sm_count
  hopeless("more blocks than could be resident wait at a grid barrier",
    string.format("more blocks wait than could be resident (%d resident at most on the modelled H200, %d launched)",
      L, L + 1),
    function()
      local n = L + 1
      local a, out, count, part = cuda.zeros(n * 128, "i32"), cuda.array(n, "i32"), cuda.zeros(1, "u32"), cuda.zeros(n, "i32")
      gbar[{n, 128, shared}](a, out, count, part, 1)
    end)
  local never = cuda.kernel[[
__global__ void never(volatile int *ready, int *out) {
  if (threadIdx.x == 0)
    while (ready[3] == 0) {}
  __syncthreads();
  out[blockIdx.x] = 1;
}]]
  for _, needle in ipairs{"a flag that is never set", "block (4,0,0) warp 0 spins at ", ":3, reading ready[3] (i32[8], parameter 'ready')"} do
    hopeless("a flag no block sets: '" .. needle .. "'", needle, function()
      local ready, out = cuda.zeros(8, "i32"), cuda.zeros(8, "i32")
      never[{5, 64}](ready, out)
    end)
  end
  -- Without volatile the compiler reads the flag once, before the loop: the message says so, and
  -- says what it saw (a loop of registers alone), which is right for a numeric loop too.
  local hoisted = cuda.kernel[[
__global__ void hoisted(int *ready, int *out) {
  while (ready[0] == 0) {}
  out[0] = 1;
}]]
  hopeless("a flag read once, before the loop", "the compiler read it once, before the loop: read it through a volatile pointer",
    function() hoisted[{2, 32}](cuda.zeros(1, "i32"), cuda.zeros(1, "i32")) end)
end

return C.done()
