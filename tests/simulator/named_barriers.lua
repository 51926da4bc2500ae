-- named_barriers.lua: barriers with a thread count (bar.sync a, b and bar.arrive a, b, the PTX
-- ISA's producer/consumer warps; bar.red with a count), each against a CPU reference, under the
-- race check as a lesson runs it; and what can never complete, or is undefined, reported with a
-- message rather than a hang (sim/sim_barrier.c).
local T = dofile("tests/lua/testlib.lua")
local C = dofile("tests/simulator/sync_cases.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(7)

cuda.simopts{race_check = "fail"} -- a race the barriers do not order fails the launch

test("producer warps arrive, consumer warps wait: bar.arrive and bar.sync with a count", function()
  local k = cuda.kernel[[
__global__ void named(const int *in, int *out) {
  __shared__ int buf[64];
  int t = threadIdx.x;
  if (t < 64) { buf[t] = in[t] * 2; asm volatile("bar.arrive 1, 128;" ::: "memory"); }
  else        { asm volatile("bar.sync 1, 128;" ::: "memory"); out[t - 64] = buf[127 - t]; }
}]]
  local inp = {}
  for i = 1, 64 do inp[i] = 3 * i - 70 end
  local out = cuda.zeros(64, "i32")
  k[{2, 128}](cuda.array(inp, "i32"), out)
  for j = 0, 63 do checkeq(out[j], 2 * inp[64 - j], "out[" .. j .. "]") end
end)

test("a phase a block leaves open does not reach the next block in its place", function()
  local k = cuda.kernel[[
__global__ void open(int *out) {
  if (threadIdx.x < 64) asm volatile("bar.arrive 3, 128;" ::: "memory"); /* nobody waits */
  out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x;
}]]
  local before = cuda.simopts()
  cuda.simopts{threads = 1} -- one host thread: each block takes the last one's place
  local out = cuda.zeros(8 * 128, "i32")
  local ok, err = pcall(k[{8, 128}], out)
  cuda.simopts{threads = before.threads}
  check(ok, err)
  for b = 0, 7 do checkeq(out[b * 128 + 5], b, "block " .. b) end
end)

-- The PTX ISA's example as a loop: barrier 0 says a slot is full, barrier 1 that it is empty;
-- two producer warps fill it and go on to fetch the next values, two consumer warps sum them.
test("the PTX ISA's producer/consumer loop, with the timing model and the race check", function()
  local k = cuda.kernel(C.named_pc)
  local rounds, blocks = 9, 3
  local inp = {}
  for i = 1, rounds * 64 do inp[i] = (i * 37) % 101 - 50 end
  local out = cuda.zeros(blocks * 64)
  local timed = cuda.time(function() k[{blocks, 128}](cuda.array(inp), out, rounds) end,
                          {warmup = 0, reps = 1})
  check(timed.median > 0, "a modelled time")
  for b = 0, blocks - 1 do
    for j = 0, 63 do
      local want = 0
      for r = 0, rounds - 1 do want = want + inp[r * 64 + (63 - j) + 1] * (r + 1) end
      checkeq(out[b * 64 + j], want, ("block %d, consumer %d"):format(b, j))
    end
  end
end)

test("groups of warps meet apart, on barrier numbers and counts in registers", function()
  local k = cuda.kernel[[
__global__ void groups(int *out, int *count) {
  __shared__ int s[256];
  int t = threadIdx.x, warp = t / 32, group = warp / 2;
  unsigned id = 1 + group, n = 64;
  s[t] = t * 3;
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n) : "memory");
  out[t] = s[(t + 32) % 64 + 64 * group];       /* the other warp of its pair */
  int c;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; bar.red.popc.u32 %0, %2, %3, p; }"
               : "=r"(c) : "r"(t % 3), "r"(9 + group), "r"(n) : "memory");
  count[t] = c;
  __syncthreads();
}]]
  local out, count = cuda.zeros(256, "i32"), cuda.zeros(256, "i32")
  k[{1, 256}](out, count)
  for t = 0, 255 do
    local group = t // 64
    checkeq(out[t], 3 * ((t + 32) % 64 + 64 * group), "out[" .. t .. "]")
    local want = 0
    for u = 64 * group, 64 * group + 63 do want = want + (u % 3 ~= 0 and 1 or 0) end
    checkeq(count[t], want, "bar.red.popc over its pair of warps, thread " .. t)
  end
end)

-- A kernel of four warps whose warps 0 and 1 run `a` and warps 2 and 3 run `b`: the message of
-- its failure, which must come back (no hang).
local function fails(needle, a, b, threads)
  local k = cuda.kernel([[
__global__ void f(int *o, int x) {
  int t = threadIdx.x;
  if (t < 64) { ]] .. a .. [[ } else { ]] .. b .. [[ }
  o[t] = x;
}]])
  checkerr(needle, k[{1, threads or 128}], cuda.zeros(256, "i32"), 100)
end

test("a barrier that can never complete is reported, not a hang", function()
  fails("barrier 1 at kernel.cu:3 waits for 128 threads (4 warps), and 2 of its warps have "
        .. "arrived (warps 0, 1), but no other warp of the block can arrive: of the 2 others, 2 "
        .. "have exited. On a GPU the block hangs here",
        'asm volatile("bar.sync 1, 128;");', "return;")
  fails("of the 2 others, 0 have exited, warp 2 waits at barrier 0 at kernel.cu:3",
        'asm volatile("bar.sync 1, 128;");', "__syncthreads();")
  fails("the barrier waits for more threads than the block has",
        'asm volatile("bar.sync 1, 256;");', 'asm volatile("bar.sync 1, 256;");')
end)

test("what the PTX ISA leaves undefined is named: counts, numbers, a second arrival", function()
  fails("bar.sync 1, 100: a thread count must be a multiple of 32",
        'asm volatile("bar.sync 1, %0;" :: "r"(x));', 'asm volatile("bar.sync 1, %0;" :: "r"(x));')
  fails("bar.sync on barrier 116: a block's barriers are numbered 0 to 15",
        'asm volatile("bar.sync %0, 64;" :: "r"(x + 16));', "")
  fails("warp 0 reaches barrier 2 a second time before it completes",
        'asm volatile("bar.arrive 2, 128; bar.arrive 2, 128;");', 'asm volatile("bar.sync 2, 128;");')
  fails("bar.sync on barrier 3 with 64 threads, where warps 0, 1 arrived with 128 threads",
        'asm volatile("bar.arrive 3, 128;");', 'asm volatile("bar.sync 3, 64;");')
  fails("bar.sync on barrier 0 with 128 threads, where warps 0, 1 arrived with no thread count",
        "__syncthreads();", 'asm volatile("bar.sync 0, 128;");')
end)

test("a race between warps a named barrier does not order is still reported", function()
  local k = cuda.kernel[[
__global__ void r(int *o) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t < 64) s[t] = t;                  /* warps 0, 1 write */
  else o[t] = s[t - 64];                 /* warps 2, 3 read at once: no barrier between */
  asm volatile("bar.sync 1, 128;" ::: "memory");
}]]
  checkerr("shared-memory race", k[{1, 128}], cuda.zeros(128, "i32"))
end)

cuda.simopts{race_check = "warn"}
os.exit(T.done() and 0 or 1)
