-- block_order.lua: cuda.simopts{block_order = "forward" | "reverse" | "shuffle", seed = n}, the
-- order in which a launch hands out its blocks. A GPU promises none, and the simulator's fixed
-- forward order hides races between blocks: kernels here get the right answer forward and the
-- wrong one in the other orders. Also: the orders themselves (recorded by the blocks), their
-- options' messages, the timing model's indifference to them, and device printf following them.
-- Simulator only.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(10)

local SRC = [[
// Block 0 clears the accumulator the other blocks add to: right only if block 0 runs first.
__global__ void accumulate(int *sum) {
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) *sum = 0;
    else atomicAdd(sum, (int)blockIdx.x);
  }
}
// Shifts a left by one block in place: block b reads a[b + 1], which block b + 1 overwrites.
__global__ void shift_left(int *a, int n) {
  int b = blockIdx.x;
  if (threadIdx.x == 0 && b + 1 < n) a[b] = a[b + 1];
}
// Records the order blocks start in: the k-th block to take a ticket writes its linear index.
__global__ void record(int *ticket, int *order) {
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    int b = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
    order[atomicAdd(ticket, 1)] = b;
  }
}
// Enough memory traffic, atomics and arithmetic for the timing model to have something to price.
__global__ void work(const float *x, float *y, float *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * 2.0f + 1.0f;
    y[i] = v;
    atomicAdd(total, v);
  }
}
]]

-- Runs f with the simulator's options set to `opts`, putting every one back afterwards.
local function with_opts(opts, f, ...)
  local before = cuda.simopts()
  cuda.simopts(opts)
  local res = table.pack(pcall(f, ...))
  cuda.simopts{block_order = before.block_order, seed = before.seed, threads = before.threads,
               model = before.model}
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

local ORDERS = {"forward", "reverse", "shuffle"}

local function accumulate(blocks)
  local k = cuda.kernel(SRC, {name = "accumulate"})
  local sum = cuda.full(1, 12345, "i32")
  k[{blocks, 32}](sum)
  return sum[0]
end

-- The blocks' order, as they recorded it: a Lua list of linear block indices.
local function recorded(grid)
  local k = cuda.kernel(SRC, {name = "record"})
  local n = 1
  for _, g in ipairs(type(grid) == "table" and grid or {grid}) do n = n * g end
  local ticket, order = cuda.zeros(1, "i32"), cuda.full(n, -1, "i32")
  k[{grid, {32, 2}}](ticket, order)
  checkeq(ticket[0], n, "every block took a ticket")
  return order:tolist()
end

test("forward is the default, and cuda.simopts() says so", function()
  local o = cuda.simopts()
  checkeq(o.block_order, "forward")
  checkeq(o.seed, 0)
  -- one host thread: several take blocks in order but may run them out of it
  local order = with_opts({threads = 1}, recorded, 50)
  for i = 1, 50 do checkeq(order[i], i - 1, "block handed out " .. i .. "th") end
end)

test("an accumulator block 0 clears: right forward, wrong reversed and shuffled", function()
  local want = 0
  for b = 1, 15 do want = want + b end
  -- Forward is right for certain on one host thread only: with several, block 1 may add before
  -- block 0, taken first, clears. Reversed or shuffled (block 0 ninth with seed 1), more blocks
  -- have been handed out before block 0 than the other workers can still be running.
  for _, threads in ipairs{1, 4} do
    for _, o in ipairs(ORDERS) do
      local got = with_opts({block_order = o, seed = 1, threads = threads}, accumulate, 16)
      if o == "forward" then
        if threads == 1 then checkeq(got, want, "forward, threads = 1") end
      else
        check(got ~= want, string.format("%s with threads = %d gave the right sum %d: the race " ..
          "was hidden", o, threads, got))
      end
    end
  end
end)

test("block b reads a[b + 1], which block b + 1 writes: right forward, wrong otherwise", function()
  local k = cuda.kernel(SRC, {name = "shift_left"})
  local n = 16
  for _, o in ipairs(ORDERS) do
    local a = cuda.arange(n, "i32")
    with_opts({block_order = o, seed = 3, threads = 1}, function() k[{n, 32}](a, n) end)
    local got = a:tolist()
    local right = true
    for b = 0, n - 2 do right = right and got[b + 1] == b + 1 end
    check(right == (o == "forward"), string.format("%s: %s", o, table.concat(got, ",")))
  end
end)

test("reverse hands out the last block first, over a 3-D grid's linear index", function()
  local order = with_opts({block_order = "reverse", threads = 1}, recorded, {3, 4, 5})
  for i = 1, 60 do checkeq(order[i], 60 - i, "block handed out " .. i .. "th") end
end)

test("a shuffle is a permutation that its seed alone decides", function()
  local function shuffled(seed, n)
    return with_opts({block_order = "shuffle", seed = seed, threads = 1}, recorded, n)
  end
  for _, n in ipairs{1, 2, 3, 7, 64, 1000} do
    local order, seen = shuffled(42, n), {}
    for i = 1, n do
      local b = order[i]
      check(b >= 0 and b < n and not seen[b], "n = " .. n .. ": block " .. b .. " twice or never")
      seen[b] = true
    end
  end
  local a, b, c = shuffled(42, 1000), shuffled(42, 1000), shuffled(43, 1000)
  checkeq(table.concat(a, ","), table.concat(b, ","), "the same seed, the same order")
  check(table.concat(a, ",") ~= table.concat(c, ","), "another seed, another order")
  local moved = 0
  for i = 1, 1000 do if a[i] ~= i - 1 then moved = moved + 1 end end
  check(moved > 900, "a shuffle moves most blocks: " .. moved .. " of 1000 moved")
  -- several host threads run every block once too (which runs when is the system's affair)
  local seen, all = {}, with_opts({block_order = "shuffle", seed = 42, threads = 4}, recorded, 1000)
  for i = 1, 1000 do
    check(not seen[all[i]], "4 threads: block " .. all[i] .. " twice")
    seen[all[i]] = true
  end
end)

test("bad values are refused, naming what is allowed; the setting stays", function()
  checkerr('block_order must be "forward", "reverse" or "shuffle", got backwards',
    cuda.simopts, {block_order = "backwards"})
  checkerr('block_order must be "forward", "reverse" or "shuffle", got true',
    cuda.simopts, {block_order = true})
  checkerr("seed must be a whole number, 0 or more, got -1", cuda.simopts, {seed = -1})
  checkerr("seed must be a whole number, 0 or more, got 1.5", cuda.simopts, {seed = 1.5})
  checkerr("seed must be a whole number, 0 or more, got x", cuda.simopts, {seed = "x"})
  checkerr("unknown simulator option 'order' (race_check, threads, model, stack, perf, " ..
    "block_order, seed)", cuda.simopts, {order = "reverse"})
  checkeq(cuda.simopts().block_order, "forward")
  checkeq(cuda.simopts().seed, 0)
end)

test("cuda.simopts() returns the order and seed in force, and takes them back", function()
  local old = cuda.simopts()
  local now = cuda.simopts{block_order = "shuffle", seed = 99}
  checkeq(now.block_order, "shuffle")
  checkeq(now.seed, 99)
  checkeq(cuda.simopts{block_order = "reverse"}.seed, 99, "the seed stays when the order changes")
  cuda.simopts(old)
  checkeq(cuda.simopts().block_order, "forward")
  checkeq(cuda.simopts().seed, 0)
end)

test("the timing model and the counters do not depend on the order", function()
  local k = cuda.kernel(SRC, {name = "work"})
  local n = 1 << 16
  local x = cuda.rand(n, "f32", 5)
  local seen
  for _, o in ipairs(ORDERS) do
    -- one host thread: several add the model's doubles up in an order of their own
    with_opts({block_order = o, seed = 8, model = true, threads = 1}, function()
      local y, total = cuda.zeros(n), cuda.zeros(1)
      k[{n // 256, 256}](x, y, total, n)
    end)
    local s = cuda.stats()
    local fig = string.format("%.9g %d %d %d %d", s.model.time_ms, s.warp_insts, s.ld_sectors,
      s.st_sectors, s.st_requests)
    seen = seen or fig
    checkeq(fig, seen, o .. " against forward (model time, instructions, sectors, requests)")
  end
end)

test("an error in a launch leaves the order as it was", function()
  cuda.simopts{block_order = "reverse"}
  local k = cuda.kernel(SRC, {name = "shift_left"})
  local ok = pcall(function() k[{4, 32}](cuda.zeros(2, "i32"), 4) end)
  checkeq(ok, false, "the launch reads past the end")
  checkeq(cuda.simopts().block_order, "reverse")
  cuda.simopts{block_order = "forward"}
end)

-- Device printf goes to the process's stdout, out of Lua's reach: the launch runs in a child.
test("device printf with one host thread comes out in the block order", function()
  local function blocks(order)
    local code = "cuda.simopts{threads = 1, block_order = \"" .. order .. "\", seed = 5} " ..
      "cuda.kernel[=[#include <cstdio>\n__global__ void hi() { if (threadIdx.x == 0) " ..
      "printf(\"%d \", blockIdx.x); }]=][{6, 32}]() print()"
    local p = assert(io.popen("exec " .. T.self_command() .. " --sim -e '" .. code .. "' 2>&1"))
    local out = p:read("a")
    p:close()
    return out
  end
  checkeq(blocks("forward"), "0 1 2 3 4 5 \n")
  checkeq(blocks("reverse"), "5 4 3 2 1 0 \n")
  local s = blocks("shuffle")
  check(s:match("^[0-5] [0-5] [0-5] [0-5] [0-5] [0-5] \n$") and s ~= "0 1 2 3 4 5 \n",
    "shuffled: " .. s)
  checkeq(blocks("shuffle"), s, "the same seed prints the same order")
end)

return T.done()
