-- check_orders.lua: what lesson checks (lua/lessons/lesson_check.lua, `expect`) do about the order
-- blocks run in: expect.orders(f), and orders = true in expect.run and expect.same. A kernel whose
-- block 0 clears a total the other blocks add to passes in the simulator's forward order and
-- fails on a GPU; these must fail it, naming the order, and put the learner's setting back.
-- Simulator only.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(10)

local expect = require "lesson_check"

local SRC = [[
// Block 0 clears the total the others add to: right only when block 0 runs first.
__global__ void total(const int *x, int *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x == 0 && threadIdx.x == 0) *sum = 0;
  __syncthreads();
  if (i < n) atomicAdd(sum, x[i]);
}
// The same with the total cleared before the launch: right in any order.
__global__ void total_ok(const int *x, int *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, x[i]);
}
// Needs dynamic shared memory, which the launch log does not keep.
__global__ void staged(int *a) {
  extern __shared__ int s[];
  s[threadIdx.x] = a[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  a[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
]]

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir " .. dir)
local FILE = dir .. "/total.cu"
do
  local f = assert(io.open(FILE, "w"))
  f:write(SRC)
  f:close()
end

-- One host thread: forward is then exactly block 0 first, so the racy kernel passes forward.
cuda.simopts{threads = 1}

local N = 1000
local function sum_of(x)
  local s = 0
  for _, v in ipairs(x:tolist()) do s = s + v end
  return s
end

-- A check's body: launches `name` on random integers and compares the total.
local function total_check(name)
  local k = cuda.kernel(FILE, {name = name})
  return function()
    local x, sum = expect.randint(N, 3, -50, 50), cuda.full(1, 777, "i32")
    if name == "total_ok" then sum:fill(0) end
    k[{(N + 127) // 128, 128}](x, sum, N)
    if sum[0] == sum_of(x) then return true end
    return expect.fail(string.format("the total is %d, want %d", sum[0], sum_of(x)), "value")
  end
end

local function tail(msg, words)
  return msg:sub(-#words) == words
end

test("expect.orders fails a total block 0 clears, naming the order, finding 'order' first", function()
  expect.begin()
  checkeq(total_check("total")(), true, "forward alone passes: the race is hidden")
  expect.begin()
  local ok, msg = expect.orders(total_check("total"))
  checkeq(ok, false)
  check(tail(msg, "(with the blocks run in reverse order)"), msg)
  check(msg:find("^the total is %-?%d+, want %-?%d+"), msg)
  checkeq(table.concat(expect.findings(msg), ","), "order,value")
  checkeq(expect.orders(total_check("total_ok")), true, "the right kernel passes in every order")
end)

test("expect.orders runs f in forward, reverse and shuffled order with a fixed seed", function()
  local seen = {}
  local ok = expect.orders(function()
    local o = cuda.simopts()
    seen[#seen + 1] = o.block_order .. ":" .. o.seed .. ":" .. o.threads
    return true
  end)
  checkeq(ok, true)
  local seed = tostring(expect.ORDER_SEED)
  checkeq(table.concat(seen, " "), "forward:" .. seed .. ":1 reverse:" .. seed ..
    ":1 shuffle:" .. seed .. ":1", "each order on one host thread")
  local n = 0
  local ok2, msg = expect.orders(function()
    n = n + 1
    if cuda.simopts().block_order == "shuffle" then return false, "shuffled wrong" end
    return true
  end)
  checkeq(ok2, false)
  checkeq(msg, "shuffled wrong (with the blocks run in a shuffled order)")
  checkeq(n, 3)
  local _, first = expect.orders(function() return false, "wrong at once" end)
  checkeq(first, "wrong at once", "a failure in the forward order is an ordinary one")
end)

test("expect.orders puts the learner's order back, after a failure and after an error", function()
  cuda.simopts{block_order = "shuffle", seed = 5, threads = 3}
  local function setting()
    local o = cuda.simopts()
    return o.block_order .. o.seed .. "/" .. o.threads
  end
  expect.orders(function() return true end)
  checkeq(setting(), "shuffle5/3", "after a pass")
  expect.orders(total_check("total"))
  checkeq(setting(), "shuffle5/3", "after a failure")
  local ok, err = pcall(expect.orders, function()
    if cuda.simopts().block_order == "reverse" then error("the kernel broke", 0) end
    return true
  end)
  checkeq(ok, false)
  checkeq(err, "the kernel broke (with the blocks run in reverse order)")
  checkeq(setting(), "shuffle5/3", "after an error")
  cuda.simopts{block_order = "forward", seed = 0, threads = 1}
end)

test("without the simulator expect.orders runs f once, as it is", function()
  local prev = cuda.use("none")
  local n = 0
  local ok, msg = expect.orders(function() n = n + 1; return false, "as it is" end)
  cuda.use(prev)
  checkeq(n, 1)
  checkeq(ok, false)
  checkeq(msg, "as it is")
end)

local function run_spec(name, orders)
  return expect.run{file = FILE, name = name, orders = orders, shapes = {
    {n = 1000, label = "n = 1000", tag = "tail"},
  }, case = function(_, s)
    local x = expect.randint(s.n, 9, -50, 50)
    local sum = cuda.full(1, name == "total_ok" and 0 or 123, "i32")
    return {grid = (s.n + 127) // 128, block = 128, args = {x, sum, s.n},
            outputs = {{sum, {sum_of(x)}, name = "the total", rtol = 0, atol = 0}}}
  end}
end

test("expect.run with orders = true fails the racy total, naming the order", function()
  expect.begin()
  checkeq(run_spec("total"), true, "forward alone passes: the race is hidden")
  expect.begin()
  local ok, msg = run_spec("total", true)
  checkeq(ok, false)
  check(msg:find("^on n = 1000 %(grid 8, blocks of 128%), the total%[0%] is %-?%d+, want %-?%d+"),
    msg)
  check(tail(msg, "(with the blocks run in reverse order)"), msg)
  checkeq(expect.findings(msg)[1], "order")
  checkeq(run_spec("total_ok", true), true, "the right kernel passes")
  checkeq(cuda.simopts().block_order, "forward", "the order is put back")
  checkeq(cuda.simopts().race_check, "warn", "race checking is put back")
end)

-- The learner's launch at the prompt, as a task asks for it; the log is on during a task.
local function learner_launch(name)
  local k = cuda.kernel(FILE, {name = name})
  local x, sum = expect.randint(N, 4, -50, 50), cuda.zeros(1, "i32")
  k[{(N + 127) // 128, 128}](x, sum, N)
  return k, x, sum
end

test("expect.same with orders = true runs the learner's launch again in each order", function()
  expect.watch(true)
  local k, x, sum = learner_launch("total")
  checkeq(sum[0], sum_of(x), "forward, at the prompt, the total is right")
  checkeq(expect.same(k, FILE, "total", "k"), true, "without orders the kernel is the same")
  cuda.simopts{block_order = "shuffle", seed = 11}
  expect.begin()
  local ok, msg = expect.same(k, FILE, "total", "k", {orders = true})
  checkeq(ok, false)
  check(msg:find("^k's launch, run again on the same arrays, gives other values: argument 2%[0%]"),
    msg)
  check(tail(msg, "(with the blocks run in reverse order)"), msg)
  checkeq(expect.findings(msg)[1], "order")
  checkeq(cuda.simopts().block_order .. cuda.simopts().seed, "shuffle11", "the order is put back")
  checkeq(cuda.simopts().race_check, "warn", "race checking is put back")
  checkeq(sum[0], sum_of(x), "the learner's arrays are untouched")
  -- the launches run again are not the learner's: the launch log still finds the learner's
  local l = expect.launched{file = FILE, name = "total", args = {x, sum}}
  check(l and rawequal(l.args[2], sum), "expect.launched finds the learner's launch")
  checkeq(select(2, expect.same(k, FILE, "total", "k", {orders = true})), msg,
    "a second check runs the learner's launch again, not the last run of the check")
  cuda.simopts{block_order = "forward", seed = 0}
  expect.watch(false)
end)

test("expect.same with orders = true passes a kernel right in every order", function()
  expect.watch(true)
  local k = learner_launch("total_ok")
  checkeq(expect.same(k, FILE, "total_ok", "k", {orders = true}), true)
  expect.watch(false)
  checkeq(expect.same(k, FILE, "total_ok", "k", {orders = true}), true,
    "with no launch logged there is nothing to run again")
end)

test("expect.same with orders = true runs a launch again with its dynamic shared memory", function()
  expect.watch(true)
  local k = cuda.kernel(FILE, {name = "staged"})
  local a = cuda.arange(64, "i32")
  k[{2, 32, 32 * 4}](a)
  checkeq(a[0], 31, "the learner's launch ran")
  checkeq(cuda.launches()[1].shared, 128, "the log keeps the launch's dynamic shared memory")
  checkeq(expect.same(k, FILE, "staged", "k", {orders = true}), true)
  checkeq(a[0], 31, "the learner's array is untouched")
  expect.watch(false)
end)

test("expect.same with orders = true does not judge a launch it cannot run again", function()
  expect.watch(true)
  local k, x = learner_launch("total")
  x:free()
  checkeq(expect.same(k, FILE, "total", "k", {orders = true}), true,
    "an array the learner freed since: not the kernel's fault")
  expect.watch(false)
end)

test("expect.same with orders = true still refuses another kernel first", function()
  expect.watch(true)
  local k = learner_launch("total_ok")
  local ok, msg = expect.same(k, FILE, "total", "k", {orders = true})
  checkeq(ok, false)
  check(msg:find("k is kernel total_ok, not the total of your total.cu", 1, true), msg)
  expect.watch(false)
end)

os.execute("rm -rf " .. dir)
return T.done()
