-- races.lua: the shared-memory race checker. The simulator runs the 32 lanes of a warp in
-- lockstep, which hides the races a GPU since Volta shows: lanes of one warp are as unordered as
-- two warps unless a __syncwarp() or a __syncthreads() stands between them. Each kernel here is
-- a race the checker must find, with the message asserted word by word, or a correct kernel it
-- must let through with the right result. Simulator only.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(16)

local checking = T.race_check -- race checking set to `on` while f runs

-- The launch must fail with a message holding every string of `want`, and no mangled name.
local function race(want, launch, ...)
  local ok, err = checking("fail", pcall, launch, ...)
  check(not ok, "the race went unreported")
  err = tostring(err)
  for _, w in ipairs(want) do check(err:find(w, 1, true), "'" .. w .. "' not in: " .. err) end
  check(not err:find("_Z", 1, true), "a mangled name in: " .. err)
  return err
end

local function sum(t) local s = 0 for _, x in ipairs(t) do s = s + x end return s end

-- The warp-synchronous reduction of old CUDA samples: the last 32 partial sums added by one warp
-- with no __syncwarp(), trusting lockstep (and volatile). Wrong since Volta.
local WARP_REDUCE = [[
__device__ void warp_reduce(volatile float *s, int t) {
  s[t] += s[t + 32];
  s[t] += s[t + 16];
  s[t] += s[t + 8];
  s[t] += s[t + 4];
  s[t] += s[t + 2];
  s[t] += s[t + 1];
}
__global__ void reduce(const float *in, float *out) {
  __shared__ float tile[64];
  int t = threadIdx.x;
  tile[t] = in[t];
  tile[t + 32] = in[t + 32];
  __syncwarp();
  warp_reduce(tile, t);
  if (t == 0) out[blockIdx.x] = tile[0];
}
]]

-- The same with the fix the CUDA programming guide gives: read, __syncwarp(), write, __syncwarp().
local WARP_REDUCE_SYNCED = [[
__global__ void reduce_synced(const float *in, float *out) {
  __shared__ float tile[64];
  int t = threadIdx.x;
  tile[t] = in[t];
  tile[t + 32] = in[t + 32];
  __syncwarp();
  float v = tile[t];
  for (int off = 32; off > 0; off >>= 1) {
    if (t < off) v += tile[t + off];
    __syncwarp();
    tile[t] = v;
    __syncwarp();
  }
  if (t == 0) out[blockIdx.x] = tile[0];
}
]]

test("a warp-synchronous reduction without __syncwarp() is a race between lanes of one warp", function()
  local k = cuda.kernel(WARP_REDUCE)
  local x, xs = cuda.rand(64, "f32", 5), nil
  xs = x:tolist()
  local out = cuda.array(1)
  checking(false, k[{1, 32}], x, out) -- lockstep hides it: the sum is right without the checker
  check(math.abs(out[0] - sum(xs)) < 1e-4, "lockstep gives the right sum")
  -- Lane 16 writes s[16] on line 2; lane 0 reads it on line 3, unordered unless lockstep.
  race({"shared-memory race between lanes of one warp", "thread (0,0,0) (warp 0, lane 0) reads",
        "element 16 of __shared__ tile (byte offset 64) at kernel.cu:3",
        "which thread (16,0,0) (warp 0, lane 16) wrote at kernel.cu:2", "no __syncwarp() between them",
        "do not run in lockstep", "add __syncwarp() between the two", "in kernel reduce,"},
       k[{1, 32}], x, out)
end)

test("the same reduction with __syncwarp() passes the checker and sums right", function()
  local k = cuda.kernel(WARP_REDUCE_SYNCED)
  local x = cuda.rand(64, "f32", 6)
  local out = cuda.array(1)
  checking(true, k[{1, 32}], x, out)
  check(math.abs(out[0] - sum(x:tolist())) < 1e-4, "sum " .. out[0])
end)

test("a block reduction: __syncthreads() between levels, __syncwarp() in the last warp", function()
  local k = cuda.kernel[[
__global__ void block_sum(const float *in, float *out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int h = blockDim.x / 2; h >= 32; h >>= 1) {
    if (t < h) s[t] += s[t + h];
    __syncthreads();
  }
  if (t < 32) {
    float v = s[t];
    for (int off = 16; off > 0; off >>= 1) {
      v += s[t + off];
      __syncwarp();
      s[t] = v;
      __syncwarp();
    }
    if (t == 0) atomicAdd(out, v);
  }
}
]]
  local n = 1000
  local x = cuda.rand(n, "f32", 7)
  local out = cuda.array(1)
  checking(true, k[{4, 256}], x, out, n)
  check(math.abs(out[0] - sum(x:tolist())) < 1e-3, "sum " .. out[0])
end)

test("a missing __syncthreads() between warps", function()
  local k = cuda.kernel[[
__global__ void reverse(float *a) {
  __shared__ float buf[64];
  int t = threadIdx.x;
  buf[t] = a[t];
  a[t] = buf[63 - t];
}
]]
  -- Warp 0 runs first: it reads buf[32..63] before warp 1 has written them.
  race({"shared-memory race between warps", "thread (32,0,0) (warp 1, lane 0) writes",
        "element 32 of __shared__ buf (byte offset 128) at kernel.cu:4",
        "which thread (31,0,0) (warp 0, lane 31) read at kernel.cu:5", "no __syncthreads() between them",
        "add __syncthreads() between the two", "in kernel reverse,"},
       k[{1, 64}], cuda.arange(64))
end)

test("two lanes of a warp writing the same word", function()
  local k = cuda.kernel[[
__global__ void last_wins(int *out) {
  __shared__ int winner;
  winner = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = winner;
}
]]
  race({"between lanes of one warp", "thread (1,0,0) (warp 0, lane 1) writes",
        "element 0 of __shared__ winner", "which thread (0,0,0) (warp 0, lane 0) wrote at kernel.cu:3"},
       k[{1, 32}], cuda.array(32, "i32"))
end)

test("a shuffle or a fence does not order shared memory; __syncwarp() does", function()
  local src = [[
__global__ void pass_on(int *out, int how) {
  __shared__ int box[32];
  int t = threadIdx.x;
  box[t] = t * 10;
  if (how == 0) t += __shfl_sync(0xffffffffu, 0, 0);
  else if (how == 1) __threadfence_block();
  else __syncwarp();
  out[t] = box[(t + 1) % 32];
}
]]
  local k = cuda.kernel(src)
  local out = cuda.array(32, "i32")
  race({"between lanes of one warp", "add __syncwarp()"}, k[{1, 32}], out, 0)
  race({"between lanes of one warp", "add __syncwarp()"}, k[{1, 32}], out, 1)
  checking(true, k[{1, 32}], out, 2)
  checkeq(out[31], 0, "lane 31 reads lane 0's value")
  checkeq(out[0], 10, "lane 0 reads lane 1's value")
end)

test("the compare-and-swap loop (a plain read, then atomicCAS) is not a race", function()
  local k = cuda.kernel [[
__global__ void fmax_shared(const float *in, float *out, int n) {
  __shared__ float m;
  if (threadIdx.x == 0) m = -1e30f;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int *p = (int *)&m, old = *p, seen;
    do {
      seen = old;
      old = atomicCAS(p, seen, __float_as_int(fmaxf(__int_as_float(seen), in[i])));
    } while (old != seen);
  }
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}]]
  local xs = cuda.rand(256, "f32", 7):tolist()
  local out = cuda.array(1)
  checking(true, k[{1, 256}], cuda.array(xs), out, 256)
  local want = -1e30
  for _, v in ipairs(xs) do want = math.max(want, v) end
  checkeq(out[0], cuda.array({want})[0])
end)

test("atomics do not race each other; a plain read of an atomic's word does", function()
  local src = [[
__global__ void histogram(const int *in, int *out, int n, int peek) {
  __shared__ int bins[8];
  int t = threadIdx.x;
  if (t < 8) bins[t] = 0;
  __syncthreads();
  for (int i = t; i < n; i += blockDim.x) atomicAdd(&bins[in[i] & 7], 1);
  if (peek) out[t] = bins[t & 7];
  __syncthreads();
  if (t < 8) atomicAdd(&out[t], bins[t]);
}
]]
  local k = cuda.kernel(src)
  local n = 500
  local xs = {}
  for i = 1, n do xs[i] = (i * 7919) % 13 end
  local x = cuda.array(xs, "i32")
  local out = cuda.array(64, "i32")
  checking(true, k[{1, 64}], x, out, n, 0)
  local want = {0, 0, 0, 0, 0, 0, 0, 0}
  for _, v in ipairs(xs) do want[(v & 7) + 1] = want[(v & 7) + 1] + 1 end
  for b = 0, 7 do checkeq(out[b], want[b + 1], "bin " .. b) end
  race({"reads element", "of __shared__ bins", "updated atomically at kernel.cu:6", "kernel.cu:7"},
       k[{1, 64}], x, out, n, 1)
end)

test("shared variables are named as written: nested, in device functions, dynamic", function()
  local k = cuda.kernel[[
namespace lab { __shared__ float pool[32]; }
__device__ float stash(float v) {
  __shared__ float scratch[32];
  scratch[threadIdx.x] = v;
  return scratch[31 - threadIdx.x];
}
__global__ void names(float *a, int which) {
  extern __shared__ float dyn[];
  int t = threadIdx.x;
  if (which == 0) a[t] = stash(a[t]);
  else if (which == 1) { lab::pool[t] = a[t]; a[t] = lab::pool[t ^ 1]; }
  else { dyn[t] = a[t]; a[t] = dyn[t ^ 1]; }
}
]]
  local a = cuda.arange(32)
  race({"__shared__ scratch (declared in stash)"}, k[{1, 32}], a, 0)
  race({"__shared__ lab::pool"}, k[{1, 32}], a, 1)
  race({"element 1 of __shared__ dyn (byte offset 4)"}, k[{1, 32, 128}], a, 2)
end)

test("an out-of-bounds shared access names the variable unmangled too", function()
  local k = cuda.kernel[[
__global__ void past(float *a, int k) {
  __shared__ float tile[32];
  tile[threadIdx.x + k] = 1.0f;
  a[threadIdx.x] = tile[threadIdx.x];
}
]]
  local ok, err = pcall(k[{1, 32}], cuda.array(32), 8)
  check(not ok and tostring(err):find("past the end of __shared__ tile (128 bytes)", 1, true), tostring(err))
end)

test("races warn by default; \"fail\" (or true) fails the launch, false turns it off", function()
  local k = cuda.kernel[[
__global__ void reverse(float *a) {
  __shared__ float buf[64];
  buf[threadIdx.x] = a[threadIdx.x];
  a[threadIdx.x] = buf[63 - threadIdx.x];
}
]]
  local before = cuda.simopts()
  checkeq(before.race_check, "warn", "the default at the prompt")
  local a = cuda.arange(64)
  k[{1, 64}](a) -- completes: the warning goes to stderr (sanitize.lua reads it there)
  checkeq(a[0], 0.0, "warp 0 read buf[63] before warp 1 wrote it, and the result is kept")
  for _, mode in ipairs({"fail", true}) do
    cuda.simopts{race_check = mode}
    checkeq(cuda.simopts().race_check, "fail", tostring(mode))
    local ok, err = pcall(k[{1, 64}], cuda.arange(64))
    check(not ok and tostring(err):find("shared-memory race between warps", 1, true), tostring(err))
  end
  cuda.simopts{race_check = false}
  checkeq(cuda.simopts().race_check, false)
  k[{1, 64}](cuda.arange(64))
  cuda.simopts(before)
  checkeq(cuda.simopts().race_check, "warn", "put back")
end)

test("a lesson check runs with race checking on, and the race is its hint", function()
  local L = require("lessons")
  local racy = {check = {code = [=[
local k = cuda.kernel[[
__global__ void reverse(float *a) {
  __shared__ float buf[64];
  buf[threadIdx.x] = a[threadIdx.x];
  a[threadIdx.x] = buf[63 - threadIdx.x];
}
]]
local a = cuda.arange(64)
k[{1, 64}](a)
return a[0] == 63
]=]}}
  local before = cuda.simopts()
  cuda.simopts{race_check = false} -- the learner turned it off; the check turns it back on
  local passed, why = L.run_check(racy)
  local after = cuda.simopts().race_check
  cuda.simopts(before)
  check(not passed, "a racy kernel passed the check")
  checkeq(after, false, "the learner's setting is put back")
  local hint = L.race_message(why)
  check(hint and hint:find("^shared%-memory race between warps") and hint:find("add __syncthreads()", 1, true),
        tostring(why))
  checkeq(L.race_message("C40 differs from A40 x B40"), nil, "other failures are not races")
  -- A check that catches the error itself and returns it keeps the message too.
  racy.check.code = "local ok, err = pcall(function() " .. racy.check.code:gsub("return a%[0%] == 63", "") ..
                    " end) return ok, err"
  passed, why = L.run_check(racy)
  check(not passed and L.race_message(why), tostring(why))
end)

test("check() in a lesson: a race fails it and the race message is the hint", function()
  local run = require "lesson_run"
  local d = assert(run.tempdir(), "no temporary folder")
  local F = "```"
  local lesson = table.concat({
    "# Races", "", "## Reverse in shared memory", "Reverse rc_a with the kernel below.",
    F .. "lua check",
    "local k = cuda.kernel[[",
    "__global__ void reverse(float *a) {",
    "  __shared__ float buf[64];",
    "  buf[threadIdx.x] = a[threadIdx.x];",
    "  if (rc_sync) __syncthreads();",
    "  a[threadIdx.x] = buf[63 - threadIdx.x];",
    "}",
    "]]",
    "local a = cuda.arange(64)",
    "k[{1, 64}](a)",
    "return a[0] == 63, 'a[0] should be 63'",
    F,
    F .. "hint", "the lesson's own hint", F,
    F .. "lua solution", "rc_done = true", F,
    F .. "lua wrong", "rc_done = false", F,
    F .. "lua wrong", "rc_done = nil", F,
    F .. "lua wrong", "rc_done = 0", F,
  }, "\n"):gsub("rc_sync", "false")
  os.execute("mkdir " .. run.shq(d .. "/lessons"))
  local f = assert(io.open(d .. "/lessons/01-races.md", "wb"))
  f:write(lesson)
  f:close()
  package.loaded.lessons = nil
  local L = require "lessons"
  L.configure({dir = d .. "/lessons", progress = false, workdir = d, quiet = false})
  local lines, real = {}, print
  print = function(...) lines[#lines + 1] = table.concat(table.pack(...), "\t") end
  local ok, err = pcall(function()
    L.commands.lesson(1)
    lines = {}
    L.commands.check()
  end)
  print = real
  package.loaded.lessons = nil
  run.rmdir(d)
  check(ok, err)
  local out = table.concat(lines, "\n")
  check(out:find("Not yet: the simulator found a shared-memory race while checking.", 1, true), out)
  check(out:find("Hint: shared-memory race between warps", 1, true), out)
  check(out:find("add __syncthreads() between the two", 1, true), out)
  check(not out:find("the lesson's own hint", 1, true), "the race is the hint: " .. out)
end)

test("bytes, doubles and vectors: neighbours do not race, the same bytes do", function()
  local k = cuda.kernel[[
__global__ void widths(int *out, int how, int sync) {
  __shared__ unsigned char c[64];
  __shared__ int w[32];
  __shared__ double d[32];
  __shared__ float4 v[32];
  int t = threadIdx.x;
  if (how == 0) {        /* each lane its own byte, then its neighbour's */
    c[t] = (unsigned char)t;
    if (sync) __syncwarp();
    out[t] = c[t ^ 1];
  } else if (how == 1) { /* bytes written, then read as a word by another lane */
    ((unsigned char *)w)[t] = (unsigned char)t;
    if (sync) __syncwarp();
    out[t] = w[(t / 4 + 1) % 8];
  } else if (how == 2) { /* 8-byte elements */
    d[t] = t;
    if (sync) __syncwarp();
    out[t] = (int)d[t ^ 1];
  } else {               /* 16-byte vectors */
    v[t] = make_float4(t, t, t, t);
    if (sync) __syncwarp();
    out[t] = (int)v[t ^ 1].w;
  }
}
]]
  local out = cuda.array(32, "i32")
  for how = 0, 3 do
    checking(true, k[{1, 32}], out, how, 1)
    if how ~= 1 then checkeq(out[0], 1, "case " .. how .. ": lane 0 sees lane 1's value") end
  end
  race({"element 1 of __shared__ c (byte offset 1)", "which thread (1,0,0) (warp 0, lane 1) wrote"},
       k[{1, 32}], out, 0, 0)
  race({"between lanes of one warp", "reads element 1 of __shared__ w (byte offset 4)", "(warp 0, lane 4) wrote"},
       k[{1, 32}], out, 1, 0)
  race({"element 1 of __shared__ d (byte offset 8)"}, k[{1, 32}], out, 2, 0)
  -- A float of a float4 array: "element 7" would not be the source's v[1], so only the offset.
  race({"thread (0,0,0) (warp 0, lane 0) reads byte offset 28 of __shared__ v at"}, k[{1, 32}], out, 3, 0)
end)

-- Strong accesses (atomics, and volatile, relaxed, acquire or release loads and stores) never
-- race each other in the PTX memory model: a flag one warp sets and another polls is no race.
test("strong accesses do not race each other: a flag polled across warps, a counter", function()
  local k = cuda.kernel[[
#include <cuda/atomic>
__global__ void strong(const int *in, int *out, int n) {
  volatile __shared__ int flag, total;
  __shared__ int count;
  cuda::atomic_ref<int, cuda::thread_scope_block> c(count);
  int t = threadIdx.x, warp = t / 32, lane = t % 32;
  if (t == 0) { flag = 0; count = 0; }
  __syncthreads();
  if (warp == 1) {             /* warp 1 sums the input, hands it over through volatile words */
    int s = 0;
    for (int i = lane; i < n; i += 32) s += in[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) { total = s; __threadfence_block(); flag = 1; }
  }
  c.fetch_add(1, cuda::memory_order_relaxed);
  if (warp == 0) {             /* warp 0 polls both: the flag, and the count of arrivals */
    while (flag == 0) {}
    __threadfence_block();
    while (c.load(cuda::memory_order_relaxed) < (int)blockDim.x) {}
    out[lane] = total + lane;
    if (lane == 0) out[32] = c.load(cuda::memory_order_relaxed);
  }
}]]
  local n, xs = 300, {}
  for i = 1, n do xs[i] = (i * 37) % 101 end
  local out = cuda.array(33, "i32")
  checking(true, k[{1, 96}], cuda.array(xs, "i32"), out, n)
  local want = sum(xs)
  for l = 0, 31 do checkeq(out[l], want + l, "out[" .. l .. "]") end
  checkeq(out[32], 96, "every thread counted")
end)

test("a plain access against a strong one races: the flag set without volatile", function()
  local k = cuda.kernel[[
__global__ void plain_flag(int *out) {
  __shared__ int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 32) flag = 1;
  if (threadIdx.x < 32) {
    while (*(volatile int *)&flag == 0) {}
    out[threadIdx.x] = 1;
  }
}]]
  -- Warp 0 polls first; warp 1's plain store then meets its strong reads.
  race({"shared-memory race between warps", "thread (32,0,0) (warp 1, lane 0) writes",
        "element 0 of __shared__ flag (byte offset 0) at kernel.cu:5",
        "which thread (0,0,0) (warp 0, lane 0) read at kernel.cu:7"},
       k[{1, 64}], cuda.array(32, "i32"))
end)

return T.done()
