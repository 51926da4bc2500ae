-- shfl_undefined.lua: a shuffle that reads a lane not running it (a lane a partial warp does
-- not have, one that has returned, one on another path) gets an undefined value on a GPU; the
-- race check tells of it where a lane uses that value, not at the shuffle (sim/sim_stale.c). A
-- kernel that reads such a lane and leaves out what it got is correct and runs under
-- race_check = "fail" with its result checked against the CPU's; one that uses the value is
-- told, with the shuffle, both lanes, why and the use named.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkerr, checkeq = T.test, T.check, T.checkerr, T.checkeq
T.plan(12)

local SIZES = {8, 33, 100, 1000} -- threads per block: partial last warps of 8, 1, 4 and 8 lanes
local BLOCKS = 2

-- Random integers in [lo, hi]: a Lua sequence and the device array of it.
local function ints(n, seed, lo, hi, dtype)
  local u = cuda.rand(n, "f64", seed):tolist()
  local xs = {}
  for i = 1, n do xs[i] = lo + math.floor(u[i] * (hi - lo + 1)) end
  return xs, cuda.array(xs, dtype or "i32")
end

-- Per warp of each block (bs threads a block), f folded over its threads' xs, in the order the
-- output array holds them: block-major, one element per warp.
local function per_warp(xs, bs, f)
  local out, warps = {}, (bs + 31) // 32
  for b = 0, BLOCKS - 1 do
    for w = 0, warps - 1 do
      local acc
      for t = 32 * w, math.min(32 * w + 31, bs - 1) do
        local x = xs[b * bs + t + 1]
        acc = acc == nil and x or f(acc, x)
      end
      out[#out + 1] = acc
    end
  end
  return out
end

local function add(a, b) return a + b end
local function max(a, b) return a > b and a or b end

-- Runs k under race_check = "fail" on every size of SIZES, inputs from ints, and checks each
-- output array (outs: dtypes; refs(xs, bs): the CPU's sequences) element by element.
local function strict_sizes(k, dtype, outs, refs)
  cuda.simopts{race_check = "fail"}
  for _, bs in ipairs(SIZES) do
    local xs, x = ints(BLOCKS * bs, bs, -50, 50, dtype)
    local warps = (bs + 31) // 32
    local arrays = {}
    for i, ty in ipairs(outs) do arrays[i] = cuda.zeros(BLOCKS * warps, ty) end
    local ok, err = pcall(k[{BLOCKS, bs}], x, table.unpack(arrays))
    check(ok, bs .. " threads a block: " .. tostring(err))
    local want = refs(xs, bs)
    for i, a in ipairs(arrays) do
      local got = a:tolist()
      for j = 1, #want[i] do
        check(got[j] == want[i][j], string.format("%d threads, output %d, warp %d: %s, want %s",
                                                  bs, i, j - 1, got[j], want[i][j]))
      end
    end
  end
  cuda.simopts{race_check = "warn"}
end

-- The guard of the kernels below: lane + o is a lane, and it is in the mask of the lanes that
-- run the shuffle.
local GUARD = "lane + o < 32 && ((mask >> (lane + o)) & 1)"

test("a partial warp sums with __shfl_down_sync(__activemask()) and adds only what came from a " ..
     "lane in the mask: no finding under race_check = \"fail\", the sums right", function()
  local k = cuda.kernel([[
__global__ void psum(const int *in, int *out) {
  int lane = threadIdx.x & 31;
  int s = in[blockIdx.x * blockDim.x + threadIdx.x];
  unsigned mask = __activemask();
  for (int o = 16; o > 0; o >>= 1) {
    int u = __shfl_down_sync(mask, s, o);
    if (]] .. GUARD .. [[) s += u;   // a value from a missing lane is left out
  }
  if (lane == 0) out[blockIdx.x * ((blockDim.x + 31) / 32) + threadIdx.x / 32] = s;
}]])
  strict_sizes(k, "i32", {"i32"}, function(xs, bs) return {per_warp(xs, bs, add)} end)
end)

test("floats: the guarded add compiles to an add of the undefined value and a select, the " ..
     "guarded maximum to a compare of it and an and with the guard: neither is a use", function()
  local k = cuda.kernel([[
__global__ void pstat(const float *in, float *sum, float *top) {
  int lane = threadIdx.x & 31;
  float s = in[blockIdx.x * blockDim.x + threadIdx.x], m = s;
  unsigned mask = __activemask();
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_down_sync(mask, s, o), v = __shfl_down_sync(mask, m, o);
    bool ok = ]] .. GUARD .. [[;
    if (ok) s += u;
    if (ok && v > m) m = v;
  }
  int w = blockIdx.x * ((blockDim.x + 31) / 32) + threadIdx.x / 32;
  if (lane == 0) { sum[w] = s; top[w] = m; }
}]])
  -- integer values: every order of the additions gives the same float sum
  strict_sizes(k, "f32", {"f32", "f32"},
               function(xs, bs) return {per_warp(xs, bs, add), per_warp(xs, bs, max)} end)
end)

test("the guard as a branch with a store in it, and as an integer multiply by 0 or 1: no " ..
     "finding, the results right", function()
  local k = cuda.kernel([[
__global__ void pcount(const int *in, int *out, int *taken) {
  int lane = threadIdx.x & 31, w = blockIdx.x * ((blockDim.x + 31) / 32) + threadIdx.x / 32;
  int s = in[blockIdx.x * blockDim.x + threadIdx.x], t = s;
  unsigned mask = __activemask();
  for (int o = 16; o > 0; o >>= 1) {
    int u = __shfl_down_sync(mask, s, o), v = __shfl_xor_sync(mask, t, o);
    if (]] .. GUARD .. [[) {
      s += u;
      atomicAdd(&taken[w], 1);   // a branch, not a select
    }
    int in_mask = (lane ^ o) < 32 && ((mask >> (lane ^ o)) & 1);
    t = t + v * in_mask;
  }
  if (lane == 0) { out[2 * w] = s; out[2 * w + 1] = t; }
}]])
  cuda.simopts{race_check = "fail"}
  for _, bs in ipairs(SIZES) do
    local xs, x = ints(BLOCKS * bs, 7 + bs, -1000, 1000)
    local warps = (bs + 31) // 32
    local out, taken = cuda.zeros(2 * BLOCKS * warps, "i32"), cuda.zeros(BLOCKS * warps, "i32")
    local ok, err = pcall(k[{BLOCKS, bs}], x, out, taken)
    check(ok, bs .. " threads a block: " .. tostring(err))
    local sums, got, n = per_warp(xs, bs, add), out:tolist(), taken:tolist()
    for j = 1, #sums do
      local lanes = j % warps == 0 and bs - 32 * (warps - 1) or 32 -- the warp's live lanes
      checkeq(got[2 * j - 1], sums[j], bs .. " threads, the sum of warp " .. (j - 1))
      checkeq(got[2 * j], sums[j], bs .. " threads, the xor-butterfly sum of warp " .. (j - 1))
      -- lane l adds at step o when l + o < lanes: sum over o of max(lanes - o, 0)
      local adds = 0
      for _, o in ipairs{16, 8, 4, 2, 1} do adds = adds + math.max(lanes - o, 0) end
      checkeq(n[j], adds, bs .. " threads, the guarded adds of warp " .. (j - 1))
    end
  end
  cuda.simopts{race_check = "warn"}
end)

-- A kernel of one block of n threads whose body (x its element, lane its lane) writes r: its
-- failure under race_check = "fail" must contain each of needles.
local function fails(n, body, needles)
  local k = cuda.kernel([[
__global__ void f(const int *in, int *out) {
  int lane = threadIdx.x & 31, x = in[threadIdx.x], r = 0;
]] .. body .. [[
  out[threadIdx.x] = r;
}]], {warnings = false}) -- lane is not used by every body
  cuda.simopts{race_check = "fail"}
  local ok, err = pcall(k[{1, n}], cuda.arange(n, "i32"), cuda.zeros(n, "i32"))
  cuda.simopts{race_check = "warn"}
  check(not ok, "no finding")
  for _, needle in ipairs(needles) do
    check(tostring(err):find(needle, 1, true), "'" .. needle .. "' not in: " .. tostring(err))
  end
end

test("a sum with a full mask in a block of 8 threads uses what lanes 8-31 do not have: told " ..
     "at the store, with the shuffle, both lanes and why", function()
  local k = cuda.kernel[[
__global__ void psum(const int *in, int *out) {
  int s = in[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  if ((threadIdx.x & 31) == 0) out[threadIdx.x / 32] = s;
}]]
  cuda.simopts{race_check = "fail"}
  local out = cuda.full(1, -1, "i32")
  checkerr("__shfl_down_sync (shfl.sync.down.b32) at kernel.cu:3 gave lane 0 the value of lane " ..
           "16, which does not exist (the block has 8 threads: its last warp, warp 0, has lanes " ..
           "0-7); on a GPU that value is undefined. Lane 0 uses it here, through what " ..
           "kernel.cu:3 computed from it, as the value st.global writes to memory. Use what a " ..
           "shuffle gets only from a lane that runs it",
           k[{1, 8}], cuda.arange(8, "i32"), out)
  checkerr("in kernel psum, block (0,0,0), thread (0,0,0), at kernel.cu:4", k[{1, 8}],
           cuda.arange(8, "i32"), out)
  checkeq(out[0], -1, "the failing store wrote nothing")
  -- a block of 33: the second warp has one lane
  checkerr("gave lane 0 the value of lane 16, which does not exist (the block has 33 threads: " ..
           "its last warp, warp 1, has lane 0 alone)", k[{1, 33}], cuda.arange(33, "i32"),
           cuda.zeros(2, "i32"))
  cuda.simopts{race_check = "warn"}
end)

test("each kind of use is named: a branch, an address, a vote, a shuffle's lane", function()
  fails(6, "int u = __shfl_down_sync(__activemask(), x, 4);\n" ..
        "if (u > 100) for (int j = 0; j < x; j++) r += in[j];",
        {"gave lane 2 the value of lane 6, which does not exist", "Lane 2 uses it here, " ..
         "through what kernel.cu:4 computed from it, to decide a branch (bra)",
         "thread (2,0,0), at kernel.cu:4"})
  fails(6, "int u = __shfl_down_sync(__activemask(), x, 4);\nr = in[u & 3];",
        {"Lane 2 uses it here, through what kernel.cu:4 computed from it, as the address of " ..
         "ld.global"})
  fails(6, "int u = __shfl_down_sync(__activemask(), x, 4);\n" ..
        "r = __ballot_sync(__activemask(), u > 2);",
        {"Lane 2 uses it here, through what kernel.cu:4 computed from it, as an operand of " ..
         "__ballot_sync"})
  fails(6, "int u = __shfl_down_sync(__activemask(), x, 4);\n" ..
        "r = __shfl_sync(__activemask(), x, u);",
        {"Lane 2 uses it here, as an operand of shfl.sync.idx.b32"})
end)

test("a lane on another path of a branch, and the value carried to another lane by a second " ..
     "shuffle, are named", function()
  fails(32, "if (lane < 16) r = 2 * __shfl_down_sync(0xffffu, x, 8);",
        {"__shfl_down_sync (shfl.sync.down.b32) at kernel.cu:3 gave lane 8 the value of lane " ..
         "16, which was not running the shuffle: it was on another path of a branch (the " ..
         "lanes that ran it were 0x0000ffff)", "Lane 8 uses it here, through what kernel.cu:3 " ..
         "computed from it, as the value st.global writes", "thread (8,0,0)"})
  fails(6, "int u = __shfl_down_sync(__activemask(), x, 4);\n" ..
        "r = __shfl_down_sync(__activemask(), u, 2);",
        {"gave lane 2 the value of lane 6, which does not exist", "Lane 0 uses it here (it " ..
         "came from lane 2 by another shuffle), as the value st.global writes to memory"})
end)

test("uses only count where the lane runs them: a lane predicated off, an overwritten value " ..
     "and a value never used are no finding", function()
  local k = cuda.kernel[[
__global__ void f(const int *in, int *out) {
  int lane = threadIdx.x & 31, x = in[threadIdx.x];
  unsigned mask = __activemask();
  int u = __shfl_down_sync(mask, x, 4), v = __shfl_up_sync(mask, x, 3), r = 0;
  if (lane + 4 < 6) r = u;            // lanes 2..5 read lanes 6..9: not them
  v = x * 3;                          // overwritten
  __shfl_xor_sync(mask, x, 16);       // never used
  out[threadIdx.x] = r + v;
}]]
  cuda.simopts{race_check = "fail"}
  local out = cuda.zeros(6, "i32")
  local ok, err = pcall(k[{1, 6}], cuda.arange(6, "i32"), out)
  cuda.simopts{race_check = "warn"}
  check(ok, tostring(err))
  local got = out:tolist()
  for l = 0, 5 do
    checkeq(got[l + 1], (l + 4 < 6 and l + 4 or 0) + 3 * l, "lane " .. l)
  end
end)

test("a kernel compiled with -G, whose __shfl_down_sync is a call, is followed through the " ..
     "call's parameters: the guarded sum passes, the unguarded one is told", function()
  local guarded = cuda.kernel([[
__global__ void psum(const int *in, int *out) {
  int lane = threadIdx.x & 31, s = in[threadIdx.x];
  unsigned mask = __activemask();
  for (int o = 16; o > 0; o >>= 1) {
    int u = __shfl_down_sync(mask, s, o);
    if (]] .. GUARD .. [[) s += u;
  }
  if (lane == 0) out[0] = s;
}]], {options = {"-G"}})
  local plain = cuda.kernel([[
__global__ void psum(const int *in, int *out) {
  int s = in[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  if (threadIdx.x == 0) out[0] = s;
}]], {options = {"-G"}})
  cuda.simopts{race_check = "fail"}
  local xs, x = ints(8, 3, -100, 100)
  local out = cuda.zeros(1, "i32")
  local ok, err = pcall(guarded[{1, 8}], x, out)
  check(ok, tostring(err))
  local sum = 0
  for i = 1, 8 do sum = sum + xs[i] end
  checkeq(out[0], sum, "the sum")
  checkerr("__shfl_down_sync (shfl.sync.down.b32) at kernel.cu:3 gave lane 0 the value of lane " ..
           "16, which does not exist", plain[{1, 8}], x, out)
  cuda.simopts{race_check = "warn"}
end)

test("one rule in both modes: at the prompt (\"warn\") the guarded kernel says nothing and the " ..
     "unguarded one warns once, at its use, keeping the launch", function()
  -- in a child cudalab, so that the warning on stderr can be read
  local code = [=[
local guarded = cuda.kernel[[
__global__ void psum(const int *in, int *out) {
  int lane = threadIdx.x & 31, s = in[threadIdx.x];
  unsigned mask = __activemask();
  for (int o = 16; o > 0; o >>= 1) {
    int u = __shfl_down_sync(mask, s, o);
    if (lane + o < 32 && ((mask >> (lane + o)) & 1)) s += u;
  }
  if (lane == 0) out[0] = s;
}]]
local plain = cuda.kernel[[
__global__ void psum(const int *in, int *out) {
  int s = in[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  if (threadIdx.x == 0) out[0] = s;
}]]
local out = cuda.zeros(1, "i32")
print("guarded:", pcall(guarded[{1, 8}], cuda.arange(8, "i32"), out), out[0])
print("plain:", pcall(plain[{1, 8}], cuda.arange(8, "i32"), out))
]=]
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = assert(io.popen("COLUMNS=200 exec " .. T.self_command() .. " --sim '" .. path ..
    "' 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  local flat = out:gsub("\n +", " ")
  check(flat:find("guarded:\ttrue\t28", 1, true), "the guarded sum, quietly: " .. out)
  local _, warnings = flat:gsub("warning:", "")
  checkeq(warnings, 1, "one warning, for the unguarded kernel: " .. out)
  check(flat:find("warning: __shfl_down_sync (shfl.sync.down.b32) at kernel.cu:3 gave lane 0 " ..
    "the value of lane 16, which does not exist", 1, true), out)
  check(flat:find("in kernel psum, block (0,0,0), thread (0,0,0), at kernel.cu:4", 1, true), out)
  check(flat:find("plain:\ttrue", 1, true), "the launch is kept at the prompt: " .. out)
end)

test("under the NaN check, which runs each warp one instruction at a time itself, the value " ..
     "is followed too", function()
  local guarded = cuda.kernel([[
__global__ void psum(const float *in, float *out) {
  int lane = threadIdx.x & 31;
  float s = in[threadIdx.x];
  unsigned mask = __activemask();
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_down_sync(mask, s, o);
    if (]] .. GUARD .. [[) s += u;
  }
  if (lane == 0) out[0] = s;
}]])
  local plain = cuda.kernel[[
__global__ void psum(const float *in, float *out) {
  float s = in[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  if (threadIdx.x == 0) out[0] = s;
}]]
  cuda.simopts{race_check = "fail"}
  cuda.sanitize{nan = true}
  local out = cuda.zeros(1)
  local ok, err = pcall(guarded[{1, 8}], cuda.arange(8), out)
  local ok2, err2 = pcall(plain[{1, 8}], cuda.arange(8), out)
  cuda.sanitize{}
  cuda.simopts{race_check = "warn"}
  check(ok, tostring(err))
  checkeq(out[0], 28.0, "the sum")
  check(not ok2 and tostring(err2):find("gave lane 0 the value of lane 16, which does not exist",
        1, true), tostring(err2))
end)

test("race_check = false follows nothing: the unguarded kernel runs without a word", function()
  local k = cuda.kernel[[
__global__ void psum(const int *in, int *out) {
  int s = in[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  if (threadIdx.x == 0) out[0] = s;
}]]
  cuda.simopts{race_check = false}
  local ok, err = pcall(k[{1, 8}], cuda.arange(8, "i32"), cuda.zeros(1, "i32"))
  cuda.simopts{race_check = "warn"}
  check(ok, tostring(err))
end)

test("a tag the kernel will not read again is dropped: a long loop after a guarded reduction " ..
     "runs in the interpreter's own loop, about as fast as with the check off", function()
  local k = cuda.kernel[[
__global__ void f(const float *in, float *out, int iters) {
  int lane = threadIdx.x & 31, i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = in[i];
  unsigned mask = __activemask();
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_down_sync(mask, s, o);
    if (lane + o < 32 && ((mask >> (lane + o)) & 1)) s += u;
  }
  float acc = s;
  for (int j = 0; j < iters; j++) acc = acc * 0.5f + 1.0f;
  out[i] = acc;
}]]
  local x, out = cuda.ones(4096), cuda.zeros(4096)
  -- the best of 3 launches of 512 partial warps, 10,000 instructions each, CPU seconds
  local function secs(mode)
    cuda.simopts{race_check = mode}
    local best = math.huge
    for _ = 1, 3 do
      local t0 = os.clock()
      k[{512, 8}](x, out, 5000)
      cuda.sync()
      best = math.min(best, os.clock() - t0)
    end
    cuda.simopts{race_check = "warn"}
    return best
  end
  local off, on = secs(false), secs("fail")
  -- one instruction at a time costs ten times the fetch loop or more; only the reduction, a few
  -- dozen instructions of each warp, runs so
  check(on < 3 * off, string.format("race_check = \"fail\" %.3f s, false %.3f s", on, off))
  checkeq(out[0], 2.0, "the loop's fixed point")
end)

T.done()
