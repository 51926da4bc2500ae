-- async_barriers.lua: cuda::barrier and cuda::memcpy_async with a barrier (PTX's mbarrier:
-- init, arrive, arrive_drop, test_wait, try_wait, their .parity forms, pending_count,
-- cp.async.mbarrier.arrive), each against a CPU reference and under the race check as a lesson
-- runs it; and what the PTX ISA leaves undefined, or a GPU would hang on, reported by name
-- (sim/sim_mbarrier.c).
local T = dofile("tests/lua/testlib.lua")
local C = dofile("tests/simulator/sync_cases.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(6)

cuda.simopts{race_check = "fail"} -- a race the barriers do not order fails the launch

local function values(n, seed)
  local t = {}
  for i = 1, n do t[i] = (i * seed) % 97 - 48 end
  return t
end

test("cuda::barrier's arrive_and_wait orders a block's shared memory, phase after phase", function()
  local m = cuda.module(C.barrier_rev_loop)
  local inp = values(3 * 128, 13)
  local out = cuda.zeros(3 * 128)
  m.rev[{3, 128}](cuda.array(inp), out)
  for b = 0, 2 do
    for j = 0, 127 do checkeq(out[b * 128 + j], inp[b * 128 + 127 - j + 1], "rev " .. j) end
  end
  local rounds = 7
  inp = values(rounds * 64, 29)
  out = cuda.zeros(2 * 64)
  local t = cuda.time(function() m.loop[{2, 128}](cuda.array(inp), out, rounds) end,
                      {warmup = 0, reps = 1})
  check(t.median > 0, "a modelled time")
  for b = 0, 1 do
    for j = 0, 63 do
      local want = 0
      for r = 0, rounds - 1 do want = want + inp[r * 64 + 63 - j + 1] * (r + 1) end
      checkeq(out[b * 64 + j], want, ("loop, block %d, consumer %d"):format(b, j))
    end
  end
end)

test("cuda::memcpy_async with a barrier: the copy has landed when the phase completes", function()
  local k = cuda.kernel(C.barrier_copy)
  check(k:ptx():find("cp.async.mbarrier.arrive", 1, true), "it arrives through cp.async")
  local inp = values(256, 7)
  local out = cuda.zeros(256)
  k[{1, 256}](cuda.array(inp), out)
  for j = 0, 255 do checkeq(out[j], 2 * inp[256 - j], "out[" .. j .. "]") end
end)

test("arrive_and_drop, and a token's wait: later phases await fewer threads", function()
  local k = cuda.kernel[[
#include <cuda/barrier>
__global__ void drop(int *out, int *pending) {
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> b;
  __shared__ int s[128];
  int t = threadIdx.x;
  if (t == 0) init(&b, 128);
  __syncthreads();
  s[t] = t;
  if (t >= 96) { b.arrive_and_drop(); return; }
  auto token = b.arrive();                /* split: arrive, then wait on the token */
  int mine = 3 * t;
  b.wait(std::move(token));
  s[t] += mine;
  b.arrive_and_wait();                    /* this phase awaits the 96 left */
  out[t] = s[(t + 1) % 96];
  unsigned long long st;
  unsigned n;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%2], 1; mbarrier.pending_count.b64 %1, %0;"
               : "=l"(st), "=r"(n) : "r"((unsigned)__cvta_generic_to_shared(&b)) : "memory");
  pending[t] = n + (int)(st & 0);
}]]
  local out, pending = cuda.zeros(96, "i32"), cuda.zeros(96, "i32")
  k[{1, 128}](out, pending)
  for t = 0, 95 do checkeq(out[t], 4 * ((t + 1) % 96), "out[" .. t .. "]") end
  local seen = {}
  for t = 0, 95 do seen[pending[t]] = (seen[pending[t]] or 0) + 1 end
  checkeq(seen[0], 1, "one arrival completed the third phase")
  checkeq(seen[95], 1, "the first left 95 of the 96")
end)

test("test_wait and try_wait with .parity, in PTX", function()
  local k = cuda.kernel(C.mbarrier_parity)
  local out = cuda.zeros(64, "i32")
  k[{1, 64}](out)
  for t = 0, 63 do checkeq(out[t], 10 * (63 - t), "out[" .. t .. "]: phase 0 was not complete") end
end)

test("a wait that never ends is reported, not a hang", function()
  local k = cuda.kernel[[
#include <cuda/barrier>
__global__ void hang(int *out) {
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> b;
  if (threadIdx.x == 0) init(&b, 128);
  __syncthreads();
  if (threadIdx.x >= 64) return;
  b.arrive_and_wait();
  out[threadIdx.x] = 1;
}]]
  checkerr("the wait on a cuda::barrier (mbarrier, shared offset 0) at kernel.cu:8 never ends: "
           .. "its phase awaits 64 more arrivals of the 128 counted in init(&bar, count), and no "
           .. "thread of the block can arrive: 2 of its 4 warps wait on barriers like it, 2 have "
           .. "exited. On a GPU the block hangs here", k[{1, 128}], cuda.zeros(128, "i32"))
end)

test("what the PTX ISA leaves undefined is named: no init, a count of 0, too many arrivals",
     function()
  local src = [[
__global__ void f(int *out, int how) {
  __shared__ unsigned long long bar;
  unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0 && how > 0)
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(a), "r"(how == 1 ? 0 : 32)
                 : "memory");
  __syncthreads();
  if (how == 3)
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0], 64; }" :: "r"(a)
                 : "memory");
  else if (how == 4)
    asm volatile("{ .reg .b64 st; mbarrier.arrive.noComplete.shared.b64 st, [%0], 1; }" :: "r"(a)
                 : "memory");
  else
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" :: "r"(a) : "memory");
  out[threadIdx.x] = 1;
}]]
  local k, o = cuda.kernel(src), cuda.zeros(32, "i32")
  checkerr("an arrival on a cuda::barrier (mbarrier) that was never initialised", k[{1, 32}], o, 0)
  checkerr("init(&bar, 0) of a cuda::barrier (mbarrier): the count of threads must be 1 to 1048575",
           k[{1, 32}], o, 1)
  checkerr("an arrival of 64 threads on a cuda::barrier (mbarrier) whose phase awaits 32 more",
           k[{1, 32}], o, 3)
  checkerr("mbarrier.arrive.noComplete completed the barrier's phase", k[{1, 32}], o, 4)
end)

cuda.simopts{race_check = "warn"}
os.exit(T.done() and 0 or 1)
