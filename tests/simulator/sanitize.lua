-- sanitize.lua: the simulator's debugging aids. cuda.sanitize's checks (where the first NaN or
-- infinity was made, reads of memory nothing wrote, barriers not every thread reaches) and
-- cuda.watch each find a bug planted in a small kernel, at the right thread and line, and say
-- nothing of the same kernel fixed; races warn at the prompt and fail a check. Simulator only.
local T = dofile("tests/lua/testlib.lua")
T.plan(30)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

-- One host thread: the first finding of a launch is then always the same one.
local saved = cuda.simopts()
cuda.simopts{threads = 1}

-- Runs f(...) with the checks `on` (a cuda.sanitize table), putting them back whatever happens.
local function sanitized(on, f, ...)
  local before = cuda.sanitize()
  cuda.sanitize(on)
  local res = table.pack(pcall(f, ...))
  cuda.sanitize(before)
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- The launch must fail under the checks `on` with a message holding every string of `want`.
local function finds(on, want, launch, ...)
  local ok, err = sanitized(on, pcall, launch, ...)
  check(not ok, "nothing was reported")
  err = tostring(err)
  for _, w in ipairs(want) do check(err:find(w, 1, true), "'" .. w .. "' not in: " .. err) end
  check(not err:find("_Z", 1, true), "a mangled name in: " .. err)
  return err
end

-- The launch must run clean under the checks `on`.
local function clean(on, launch, ...)
  local ok, err = sanitized(on, pcall, launch, ...)
  check(ok, "a finding in the fixed kernel: " .. tostring(err))
end

---------------------------------------------------------------- NaN origin --

local NORMALIZE = [[
__global__ void normalize(const float *x, const float *len, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / len[i];
}
]]
local NORMALIZE_FIXED = NORMALIZE:gsub("y%[i%] = x%[i%] / len%[i%];",
  "y[i] = len[i] != 0.0f ? x[i] / len[i] : 0.0f;")

-- Lengths that are all 2 but one zero, at element 35: thread 3 of block 1 with blocks of 32.
local function lengths(n)
  local t = {}
  for i = 1, n do t[i] = 2 end
  t[36] = 0
  return cuda.array(t)
end

test("nan: the first infinity is found at its thread, block, line and instruction", function()
  local k = cuda.kernel(NORMALIZE)
  local y = cuda.full(64, -1)
  finds({nan = true}, {"NaN check: thread (3,0,0) of block (1,0,0), kernel.cu:3: div.rn.f32 of " ..
        "1.0 by 0.0 gave inf, made from finite numbers. The kernel writes this infinity to " ..
        "memory at kernel.cu:3; everything computed from it is inf or NaN too",
        "in kernel normalize,"},
        k[{2, 32}], cuda.ones(64), lengths(64), y, 64)
  clean({nan = true}, cuda.kernel(NORMALIZE_FIXED)[{2, 32}], cuda.ones(64), lengths(64), y, 64)
  checkeq(y[35], 0.0, "the fixed kernel's result")
  checkeq(y[34], 0.5)
end)

test("nan: a NaN from finite numbers is found; one that came in as input is not", function()
  local k = cuda.kernel[[
__global__ void root(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sqrtf(x[i]) + x[i] * 2.0f;
}
]]
  local y = cuda.array(32)
  finds({nan = true}, {"thread (7,0,0) of block (0,0,0), kernel.cu:3: sqrt.rn.f32 of -4.0 gave " ..
        "nan, made from finite numbers. The kernel writes this NaN to memory at kernel.cu:3"},
        k[{1, 32}], cuda.array({1, 1, 1, 1, 1, 1, 1, -4, 1, 1}), y, 10)
  local nan = cuda.array({1, 0 / 0, 4})
  clean({nan = true}, k[{1, 32}], nan, y, 3) -- sqrt(NaN) is NaN, but not made here
  check(y[1] ~= y[1], "the input's NaN went through")
  clean({}, k[{1, 32}], cuda.array({-1}), y, 1) -- the check off: nothing is looked at
end)

-- A kernel computing y[i] = expr at line 3, one thread per element.
local function lib_kernel(expr)
  return cuda.kernel("#include <math_constants.h>\n__global__ void f(const float *x, float *y, " ..
    "int n) {\n  int i = threadIdx.x; if (i < n) y[i] = " .. expr .. ";\n}\n")
end

test("nan: the math library's NaNs and infinities, made from constants, are found", function()
  local made = "as a math function such as logf or powf does for an argument outside its domain"
  local picked = "how a math function answers at a pole or outside its domain (logf(0.0f) is -inf)"
  local cases = {
    {"logf(x[i]) * 2.0f", -0.5, "fma.rn.f32 of -4194304.0, inf and inf gave nan, made from " ..
      "finite numbers and a constant infinity, " .. made .. ". The kernel writes this NaN"},
    {"log10f(x[i])", -0.5, "fma.rn.f32 of -4194304.0, inf and inf gave nan"},
    {"(float)log((double)x[i])", -0.5, "fma.rn.f64 of -9007199254740992, inf and inf gave nan"},
    {"logf(x[i])", 0, "selp.f32 gave the constant -inf, chosen by the test setp.eq.f32 of 0.0 " ..
      "and 0.0: " .. picked .. ". The kernel writes this infinity to memory at kernel.cu:3"},
    {"lgammaf(x[i])", 0, "selp.f32 gave the constant inf, chosen by the test setp.eq.f32"},
    {"powf(x[i], 0.5f)", -0.5, "mov.f32 gave the constant nan, chosen by the test " ..
      "setp.geu.f32 of -0.5 and 0.0"},
    {"fmodf(1.0f, x[i])", 0, "selp.f32 gave the constant nan, chosen by the test setp.leu.f32"},
  }
  for _, c in ipairs(cases) do
    local y = cuda.full(3, 7)
    finds({nan = true}, {"NaN check: thread (1,0,0) of block (0,0,0), kernel.cu:3: " .. c[3]},
          lib_kernel(c[1])[{1, 32}], cuda.array({1, c[2], 1}), y, 3)
  end
  -- the same functions of good arguments, and of an infinity or a NaN that came in: silent
  local y = cuda.array(4)
  clean({nan = true}, lib_kernel("logf(x[i]) + powf(x[i], 0.5f) + lgammaf(x[i])")[{1, 32}],
        cuda.array({1, 4, 1 / 0, 0 / 0}), y, 4)
  checkeq(y[0], 1.0, "logf(1) + powf(1, 0.5) + lgammaf(1)")
  check(math.abs(y[1] - (math.log(4) + 2 + math.log(6))) < 1e-5, "the sums of 4: " .. y[1])
  checkeq(y[2], 1 / 0, "the input's infinity went through")
  check(y[3] ~= y[3], "the input's NaN went through")
end)

test("nan: library math that makes infinities on the way, and -CUDART_INF_F starts, are clean",
     function()
  local x = {0.5, -1, 2, 0, 3, -100}
  local k = lib_kernel("expf(x[i]) + tanhf(x[i] * 50.0f) + atan2f(x[i], 0.0f) + " ..
    "erfcf(x[i] * 20.0f) + powf(2.0f, 10.0f) + logf(1.0f) + 1.0f / (1.0f + expf(-x[i] * 100.0f))")
  local y = cuda.array(#x)
  clean({nan = true}, k[{1, 32}], cuda.array(x), y, #x)
  for i, v in ipairs(x) do
    -- |50 x| and |20 x| are 25 or more but for x = 0: tanh and erfc are at their limits
    local sign = v > 0 and 1 or v < 0 and -1 or 0
    local at = sign * math.pi / 2
    local sig, erfc = 1 / (1 + math.exp(-v * 100)), 1 - sign
    local t = sign
    local want = math.exp(v) + t + at + erfc + 1024 + sig
    check(math.abs(y[i - 1] - want) < 1e-3 * math.max(1, math.abs(want)), i .. ": " .. y[i - 1])
  end
  -- a maximum from -CUDART_INF_F and a minimum from CUDART_INF_F, kept as they are by threads
  -- with no element; an online softmax whose first step computes expf(-inf)
  local r = cuda.kernel[[
#include <math_constants.h>
__global__ void f(const float *x, float *y, int n) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = t < n ? x[t] : -CUDART_INF_F;
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) { if (t < k) s[t] = fmaxf(s[t], s[t + k]); __syncthreads(); }
  float m = -CUDART_INF_F, lo = CUDART_INF_F, d = 0.0f, om = -CUDART_INF_F;
  for (int j = t; j < n; j += 64) { m = fmaxf(m, x[j]); lo = fminf(lo, x[j]); }
  for (int j = 0; j < n; j++) {
    float mn = fmaxf(om, x[j]);
    d = d * expf(om - mn) + expf(x[j] - mn);
    om = mn;
  }
  y[t] = s[0] + (isinf(lo) ? 100.0f : 0.0f);
  y[64 + t] = m;
  y[128 + t] = d + __shfl_down_sync(0xffffffffu, om, 1);
}]]
  local out = cuda.array(192)
  clean({nan = true}, r[{1, 64}], cuda.array(x), out, #x)
  local d = 0
  for _, v in ipairs(x) do d = d + math.exp(v - 3) end
  checkeq(out[0], 3.0, "the maximum"); checkeq(out[10], 103.0, "a thread with no element")
  checkeq(out[64 + 2], 2.0); checkeq(out[64 + 10], -1 / 0, "its maximum stays -inf, unreported")
  check(math.abs(out[128] - (d + 3)) < 1e-5, "the online softmax's sum: " .. out[128])
end)

test("nan: the lesson's softmax without the maximum overflows expf; with it, it is clean",
     function()
  local f = io.open("lessons/17-roofline-and-capstone.md"):read("a")
  local right = f:match("```cuda solution=softmax.cu\n(.-)```")
  local wrong = f:match("```cuda wrong=softmax.cu\n(.-)```")
  local x, y = cuda.array({1, 2, 100, 3}), cuda.array(4)
  finds({nan = true}, {"NaN check: thread (2,0,0) of block (0,0,0), kernel.cu:24: fma.rn.f32 " ..
        "of 315986.75, 8.50705917e+37 and 0.0 gave inf, made from finite numbers. The kernel " ..
        "writes this infinity to memory at kernel.cu:25"}, cuda.kernel(wrong)[{1, 256}], x, y, 1, 4)
  clean({nan = true}, cuda.kernel(right)[{1, 256}], x, y, 1, 4)
  local s = math.exp(-99) + math.exp(-98) + 1 + math.exp(-97)
  check(math.abs(y[2] - 1 / s) < 1e-6 and math.abs(y[0] - math.exp(-99) / s) < 1e-30,
        "softmax: " .. y[0] .. " " .. y[2])
end)

-- Lesson 12's task, and one of its wrong answers: a NaN made and replaced before the store.
local HIDDEN = [[
__global__ void scaled(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float d = x[i] - 0.05f;
    float v = d / sqrtf(d);
    y[i] = isnan(v) ? 0.0f : v;
  }
}
]]

test("nan = \"made\": a NaN made and hidden before the store is found; nan = true lets it be",
     function()
  local k, x = cuda.kernel(HIDDEN), cuda.array({1.05, 0.05, 2.05, -1, 3.05})
  local y = cuda.full(5, -1)
  clean({nan = true}, k[{1, 32}], x, y, 5)
  checkeq(y[1], 0.0, "0 / 0 replaced"); checkeq(y[3], 0.0, "the root of -1.05 replaced")
  check(math.abs(y[2] - math.sqrt(2)) < 1e-6, "d / sqrtf(d) of 2: " .. y[2])
  finds({nan = "made"}, {"NaN check: thread (1,0,0) of block (0,0,0), kernel.cu:5: div.rn.f32 " ..
        "of 0.0 by 0.0 gave nan, made from finite numbers. This is the first NaN the kernel " ..
        "made; everything computed from it is NaN too", "in kernel scaled,"}, k[{1, 32}],
        cuda.array({1.05, 0.05, 2.05}), y, 3)
  -- the lesson's answer, which makes none
  local right = HIDDEN:gsub("float v = d / sqrtf%(d%);\n    y%[i%] = isnan%(v%) %? 0.0f : v;",
                            "y[i] = d > 0.0f ? sqrtf(d) : 0.0f;")
  clean({nan = "made"}, cuda.kernel(right)[{1, 32}], x, y, 5)
  checkeq(y[1], 0.0); checkeq(y[3], 0.0)
  check(math.abs(y[4] - math.sqrt(3)) < 1e-6, "sqrtf(3): " .. y[4])
  -- the math library's NaN from a constant infinity, and a constant picked by a test: both
  -- checks find them, the strict one where they are made
  local log = lib_kernel("logf(x[i]) * 2.0f")
  for _, on in ipairs({true, "made"}) do
    finds({nan = on}, {"NaN check: thread (1,0,0) of block (0,0,0), kernel.cu:3: fma.rn.f32 " ..
          "of -4194304.0, inf and inf gave nan, made from finite numbers and a constant infinity",
          on == true and "The kernel writes this NaN to memory at kernel.cu:3" or
          "This is the first NaN the kernel made; everything computed from it is NaN too"},
          log[{1, 32}], cuda.array({1, -0.5, 1}), cuda.full(3, 7), 3)
  end
  finds({nan = "made"}, {"thread (1,0,0) of block (0,0,0), kernel.cu:3: selp.f32 gave the " ..
        "constant -inf, chosen by the test setp.eq.f32 of 0.0 and 0.0", "This is the first " ..
        "infinity the kernel made; everything computed from it is inf or NaN too"},
        lib_kernel("logf(x[i])")[{1, 32}], cuda.array({1, 0, 1}), cuda.full(3, 7), 3)
  -- the price of the strict check: tanhf makes an infinity on its way to 1.0
  local th = lib_kernel("tanhf(x[i])")
  clean({nan = true}, th[{1, 32}], cuda.array({100}), y, 1)
  checkeq(y[0], 1.0, "tanhf(100)")
  finds({nan = "made"}, {"gave inf", "This is the first infinity the kernel made"},
        th[{1, 32}], cuda.array({100}), y, 1)
end)

test("nan = \"made\": -CUDART_INF_F starts of a maximum and a minimum are silent in both checks",
     function()
  local k = cuda.kernel[[
#include <math_constants.h>
__global__ void f(const float *x, float *y, int n) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = t < n ? x[t] : -CUDART_INF_F;
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) { if (t < k) s[t] = fmaxf(s[t], s[t + k]); __syncthreads(); }
  float m = -CUDART_INF_F, lo = CUDART_INF_F;
  for (int j = t; j < n; j += 64) { m = fmaxf(m, x[j]); lo = fminf(lo, x[j]); }
  y[t] = s[0];
  y[64 + t] = m;
  y[128 + t] = lo;
}]]
  local x = {0.5, -1, 2, 0, 3, -100}
  for _, on in ipairs({true, "made"}) do
    local out = cuda.full(192, 7)
    clean({nan = on}, k[{1, 64}], cuda.array(x), out, #x)
    checkeq(out[0], 3.0, "the maximum"); checkeq(out[64 + 2], 2.0); checkeq(out[128 + 5], -100.0)
    checkeq(out[64 + 10], -1 / 0, "a thread with no element keeps -inf, unreported")
    checkeq(out[128 + 10], 1 / 0)
  end
end)

---------------------------------------------------------------- watches --

-- Each thread should write out[i]; the planted bug writes out[i / 2], so two threads write
-- each element of the first half.
local HALVE = [[
__global__ void scale(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i / 2] = in[i] * 10.0f;
}
]]

test("watch: every write to the element, with thread, block, line, old and new value", function()
  local out = cuda.array(64)
  local w = cuda.watch(out, 5)
  cuda.kernel(HALVE)[{2, 32}](cuda.arange(64), out, 64)
  checkeq(w.count, 2, "two threads wrote out[5]")
  local a, b = w.writes[1], w.writes[2]
  checkeq(a.thread.x, 10); checkeq(a.thread.y, 0); checkeq(a.block.x, 0)
  checkeq(a.line, 3); checkeq(a.where, "kernel.cu:3"); checkeq(a.op, "store")
  checkeq(a.kernel, "scale")
  checkeq(a.old, 0.0); checkeq(a.new, 100.0)
  checkeq(b.thread.x, 11); checkeq(b.old, 100.0); checkeq(b.new, 110.0)
  checkeq(out[5], 110.0, "the last write wins")
  local text = tostring(w)
  for _, want in ipairs({"watch on element 5 of cuda.Array<f32>[64]: 2 writes",
                         "thread (10,0,0) block (0,0,0)", "kernel.cu:3", "store", "0 -> 100",
                         "100 -> 110"}) do
    check(text:find(want, 1, true), "'" .. want .. "' not in: " .. text)
  end
  w:close()
end)

test("watch: the fixed kernel writes the element once, from the right thread", function()
  local out = cuda.array(64)
  local w = cuda.watch(out, 5)
  cuda.kernel((HALVE:gsub("out%[i / 2%]", "out[i]")))[{2, 32}](cuda.arange(64), out, 64)
  checkeq(w.count, 1)
  checkeq(w.writes[1].thread.x, 5)
  checkeq(w.writes[1].new, 50.0)
  cuda.unwatch(w)
end)

test("watch: atomics are named and replayed lane by lane; a hot element keeps 1000", function()
  local k = cuda.kernel[[
__global__ void count(int *c, int *other) {
  atomicAdd(&c[0], 1);
  if (threadIdx.x == 0) atomicMax(&c[0], 5000);
  other[threadIdx.x] = 1;
}
]]
  local c = cuda.array(2, "i32")
  local w = cuda.watch(c, 0)
  k[{8, 256}](c, cuda.array(256, "i32"))
  checkeq(w.count, 8 * 256 + 8, "every atomic counted")
  checkeq(#w.writes, 1000, "the first 1000 kept")
  for i = 1, 32 do -- warp 0's lanes, in lane order
    local r = w.writes[i]
    checkeq(r.op, "atomicAdd"); checkeq(r.thread.x, i - 1)
    checkeq(r.old, i - 1, "write " .. i); checkeq(r.new, i)
  end
  local r = w.writes[33] -- then warp 0's lane 0 again, on line 3
  checkeq(r.op, "atomicMax"); checkeq(r.thread.x, 0); checkeq(r.where, "kernel.cu:3")
  checkeq(r.old, 32); checkeq(r.new, 5000)
  r = w.writes[34] -- then warp 1
  checkeq(r.op, "atomicAdd"); checkeq(r.thread.x, 32); checkeq(r.old, 5000); checkeq(r.new, 5001)
  check(tostring(w):find("the other 1,056 were only counted", 1, true), tostring(w))
  checkeq(c[0], 5000 + 224 + 7 * 256, "block 0 passes 5000 with its max, the rest only add")
  w:close()
end)

test("watch: clear forgets, close stops and keeps what it saw, other elements are not seen",
     function()
  local k = cuda.kernel[[__global__ void set(int *a, int v) { a[threadIdx.x] = v; }]]
  local a = cuda.array(8, "i32")
  local w = cuda.watch(a, 7)
  k[{1, 4}](a, 1) -- threads 0..3: not element 7
  checkeq(w.count, 0)
  check(tostring(w):find("no writes yet", 1, true), tostring(w))
  k[{1, 8}](a, 2)
  checkeq(w.count, 1)
  w:clear()
  checkeq(w.count, 0); checkeq(#w.writes, 0)
  k[{1, 8}](a, 3)
  w:close()
  checkeq(w.watching, false)
  k[{1, 8}](a, 4)
  checkeq(w.count, 1, "nothing recorded once closed")
  checkeq(w.writes[1].new, 3, "what it saw is kept")
  check(tostring(w):find("(closed)", 1, true), tostring(w))
  w:close() -- again: nothing
  cuda.unwatch(w)
  checkeq(w.index, 7); checkeq(w.dtype, "i32"); check(rawequal(w.array, a))
end)

test("watch: bad arguments are refused with a message", function()
  local a = cuda.array(10)
  local not_array = "cuda.watch: argument 1 must be a device array (cuda.Array), got "
  checkerr(not_array .. "number", cuda.watch, 3, 1)
  checkerr(not_array .. "no value", cuda.watch)
  checkerr(not_array .. "cuda.HostBuffer<f32>[4]", cuda.watch, cuda.host(4), 0)
  local range = "is out of range for cuda.Array<f32>[10] (0 to 9)"
  checkerr("cuda.watch: index 10 " .. range, cuda.watch, a, 10)
  checkerr("cuda.watch: index -1 " .. range, cuda.watch, a, -1)
  checkerr("cuda.watch: the index must be a whole number, got 1.5", cuda.watch, a, 1.5)
  checkerr("cuda.watch: argument 2 must be an element index, got string", cuda.watch, a, "3")
  checkerr("cuda.watch: argument 2 must be an element index, got no value", cuda.watch, a)
  checkerr("cuda.watch: cuda.Array<f32>[0] has no elements to watch", cuda.watch, cuda.array(0), 0)
  local gone = cuda.array(4)
  gone:free()
  checkerr("has been freed", cuda.watch, gone, 0)
  checkerr("cuda.unwatch: argument 1 must be a watch made by cuda.watch, got table", cuda.unwatch,
           {})
  checkeq(cuda.watch(a, 2.0).index, 2, "a float with a whole value is an index")
end)

---------------------------------------------------------------- init --

-- A difference of neighbours through a shared tile: the planted bug loads no halo, so thread
-- 31 reads tile[32], which no thread wrote.
local DIFF = [[
__global__ void diff(const float *in, float *out, int halo) {
  __shared__ float tile[33];
  int t = threadIdx.x, i = blockIdx.x * 32 + t;
  tile[t] = in[i];
  if (halo && t == 0) tile[32] = in[i + 32];
  __syncthreads();
  out[i] = tile[t + 1] - tile[t];
}
]]

test("init: a shared element no thread wrote, named with its thread and line", function()
  local k = cuda.kernel(DIFF)
  local out = cuda.array(64)
  finds({init = true}, {
        "uninitialised read (init check): thread (31,0,0) of block (0,0,0), kernel.cu:7,",
        "reads element 32 of __shared__ tile (byte offset 128)",
        "which no thread of the block has written in this launch", "in kernel diff,"},
        k[{1, 32}], cuda.arange(64), out, 0)
  clean({init = true}, k[{1, 32}], cuda.arange(64), out, 1)
  checkeq(out[31], 1.0)
  clean({}, k[{1, 32}], cuda.arange(64), out, 0) -- unchecked, it reads the block's zeroed memory
end)

test("init: an unset local is noted by its line and reads 0xcb; correct code runs unrefused",
     function()
  local k = cuda.module[[
__global__ void total(const int *x, int n, int *out) {
  int sum;
  for (int i = 0; i < n; i++) sum += x[i];
  out[threadIdx.x] = sum;
}
__global__ void stack(int *out, int i) {
  int t[8];
  volatile int *v = t;
  v[0] = 1;
  out[threadIdx.x] = v[i];
}]]
  local x, out = cuda.array({1, 2, 3, 4}, "i32"), cuda.array(2, "i32")
  local ref = 1 + 2 + 3 + 4
  clean({}, k.total[{1, 2}], x, 4, out)
  checkeq(out[0], ref, "unchecked, the register starts at zero and the sum is right by luck")
  clean({init = true}, k.total[{1, 2}], x, 4, out)
  checkeq(out[0], -875836469 + ref, "under the check the sum starts from the pattern: visibly wrong")
  local fixed = cuda.kernel[[__global__ void fixed(const int *x, int n, int *out) {
  int sum = 0;
  for (int i = 0; i < n; i++) sum += x[i];
  out[threadIdx.x] = sum; }]]
  clean({init = true}, fixed[{1, 2}], x, 4, out)
  checkeq(out[1], ref, "the fixed kernel runs clean")
  clean({init = true}, k.stack[{1, 2}], out, 5)
  checkeq(out[1], -875836469, "an unset element of a local array reads the pattern too")
  clean({init = true}, k.stack[{1, 2}], out, 0)
  checkeq(out[1], 1, "a set one reads what was stored")
end)

-- What the init check notes on stderr, from a child (this same binary): the note names the line
-- of an unset local, and correct code whose value is set and read under one test, or guarded by
-- a "found" flag, is let run with its right result (a note at most, never a refusal).
test("init: the note names an unset local's line; correct code with a guarded value is not refused",
     function()
  local code = [=[
local m = cuda.module[[
__global__ void total(const int *x, int n, int *out) {
  int sum;
  for (int i = 0; i < n; i++) sum += x[i];
  out[threadIdx.x] = sum;
}
__global__ void guarded(const float *x, float *y, int n, int mode) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a;
  if (mode == 1) a = x[i];
  else if (mode == 2) a = 2.0f * x[i];
  if (mode == 1 || mode == 2) y[i] = a; else y[i] = 0;
}
__global__ void best(const float *x, float *y, int n) {
  float b; int found = 0;
  for (int j = 0; j < n; j++) { float v = x[j]; if (!found || v > b) { b = v; found = 1; } }
  if (threadIdx.x == 0) y[0] = found ? b : 0.0f;
}]]
cuda.sanitize{init = true}
local x, out = cuda.array({1, 2, 3, 4}, "i32"), cuda.array(1, "i32")
m.total[{1, 1}](x, 4, out)
local f = cuda.array({3, 9, 4, 1}, "f32")
local y = cuda.zeros(4, "f32")
m.guarded[{1, 4}](f, y, 4, 2)
print("guarded", y[0], y[1], y[2], y[3])
m.best[{1, 1}](f, y, 4)
print("best", y[0])]=]
  local path = os.tmpname()
  local fh = assert(io.open(path, "w"))
  fh:write(code)
  fh:close()
  local p = assert(io.popen("exec " .. T.self_command() .. " --sim '" .. path .. "' 2>&1"))
  local text = p:read("a")
  p:close()
  os.remove(path)
  check(text:find("note: maybe an uninitialised read (init check): at kernel.cu:3, kernel total",
                  1, true), text)
  check(text:find("guarded\t6.0\t18.0\t8.0\t2.0") or text:find("guarded\t6\t18\t8\t2"), text)
  check(text:find("best\t9"), text)
  check(not text:find("error", 1, true), text)
end)

-- Row sums into an array made by cuda.empty: the planted bug adds into it without zeroing.
local ROWSUM = [[
__global__ void rowsum(const float *a, float *sums, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  for (int c = 0; c < cols; c++) sums[r] += a[r * cols + c];
}
]]
local ROWSUM_FIXED = [[
__global__ void rowsum(const float *a, float *sums, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int c = 0; c < cols; c++) s += a[r * cols + c];
  sums[r] = s;
}
]]

test("init: an element of a cuda.empty array read before anything wrote it", function()
  local a = cuda.ones(32 * 4)
  finds({init = true}, {
        "uninitialised read (init check): thread (0,0,0) of block (0,0,0), kernel.cu:3,",
        "reads sums[0] (f32[32], parameter 1)", "since the array was made without filling it"},
        cuda.kernel(ROWSUM)[{1, 32}], a, cuda.empty(32), 4)
  local sums = cuda.empty(32)
  clean({init = true}, cuda.kernel(ROWSUM_FIXED)[{1, 32}], a, sums, 4)
  checkeq(sums[31], 4.0)
  -- what the fixed kernel wrote counts, in a later launch too
  clean({init = true}, cuda.kernel(ROWSUM)[{1, 32}], a, sums, 4)
  checkeq(sums[0], 8.0)
end)

test("init: copies and fills from the host count as writes; an atomic on an unset counter does not",
     function()
  local k = cuda.kernel[[
__global__ void tally(const int *in, int *counter, int n) {
  int i = threadIdx.x;
  if (i < n && in[i] > 0) atomicAdd(counter, 1);
}
]]
  local x = cuda.array({1, 2, -3, 4}, "i32")
  local counter = cuda.empty(1, "i32")
  finds({init = true}, {"thread (0,0,0) of block (0,0,0), kernel.cu:3",
        "reads counter[0] (i32[1], parameter 1)"},
        k[{1, 32}], x, counter, 4)
  counter[0] = 0
  clean({init = true}, k[{1, 32}], x, counter, 4)
  checkeq(counter[0], 3)
  local e = cuda.empty(8)
  e:fill(2)
  clean({init = true}, cuda.kernel(ROWSUM_FIXED)[{1, 4}], e, cuda.array(4), 2)
  local part = cuda.empty(8)
  part:copyfrom(cuda.host({1, 2, 3, 4, 5, 6, 7, 8}))
  clean({init = true}, cuda.kernel(ROWSUM_FIXED)[{1, 4}], part, cuda.array(4), 2)
end)

test("init: an exchange whose old value goes unread is a write; one whose value is read is a read",
     function()
  local m = cuda.module[==[
__global__ void hist(const int *in, int *bins, int n) {
  __shared__ int local[16];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int b = threadIdx.x; b < 16; b += blockDim.x) atomicExch(&local[b], 0);
  __syncthreads();
  if (i < n) atomicAdd(&local[in[i]], 1);
  __syncthreads();
  for (int b = threadIdx.x; b < 16; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
__global__ void clear_then_add(int *counter) {
  if (threadIdx.x == 0) atomicExch(counter, 0);
  __syncthreads();
  atomicAdd(counter, 1);
}
__global__ void swap_out(int *out) {
  __shared__ int s[32];
  out[threadIdx.x] = atomicExch(&s[threadIdx.x], 1);
}]==]
  local n, values = 300, {}
  local want = {}
  for b = 1, 16 do want[b] = 0 end
  for i = 1, n do
    values[i] = (i * 7 + i // 3) % 16
    want[values[i] + 1] = want[values[i] + 1] + 1
  end
  local bins = cuda.zeros(16, "i32")
  clean({init = true}, m.hist[{3, 128}], cuda.array(values, "i32"), bins, n)
  local got = bins:tolist()
  for b = 1, 16 do
    checkeq(got[b], want[b], "bin " .. b - 1 .. " of shared bins cleared with atomicExch")
  end
  local counter = cuda.empty(1, "i32")
  clean({init = true}, m.clear_then_add[{1, 64}], counter)
  checkeq(counter[0], 64, "a counter of cuda.empty cleared with atomicExch, then counted")
  finds({init = true}, {"uninitialised read (init check): thread (0,0,0) of block (0,0,0), " ..
        "kernel.cu:17", "which no thread of the block has written in this launch"},
        m.swap_out[{1, 32}], cuda.array(32, "i32"))
end)

test("cuda.empty makes an array of the size and type asked, and refuses what cuda.zeros refuses",
     function()
  local e = cuda.empty(5, "i32")
  checkeq(#e, 5); checkeq(e.dtype, "i32")
  checkeq(#cuda.empty(0), 0)
  checkerr("size", cuda.empty, -1)
  checkerr("dtype", cuda.empty, 4, "f33")
end)

---------------------------------------------------------------- sync --

local HALF_BARRIER = [[
__global__ void step(float *a) {
  int t = threadIdx.x;
  if (t < 48) {
    a[t] *= 2;
    __syncthreads();
  }
  a[t] += a[(t + 1) % 64];
}
]]
local HALF_BARRIER_FIXED = [[
__global__ void step(float *a) {
  int t = threadIdx.x;
  if (t < 48) a[t] *= 2;
  __syncthreads();
  a[t] += a[(t + 1) % 64];
}
]]

test("sync: a __syncthreads() part of the block never reaches, as synccheck reports it", function()
  finds({sync = true}, {"barrier error (sync check): the __syncthreads() at kernel.cu:5",
        "was reached by 48 of the 64 threads of block (0,0,0)",
        "16 are on another path of a branch (threads (48,0,0), (49,0,0), (50,0,0) and 13 more)",
        "synccheck", "in kernel step,"}, cuda.kernel(HALF_BARRIER)[{1, 64}], cuda.arange(64))
  clean({sync = true}, cuda.kernel(HALF_BARRIER_FIXED)[{1, 64}], cuda.arange(64))
  -- unchecked, a part of a warp at a barrier is refused all the same, in other words
  checkerr("reached by only part of a warp", cuda.kernel(HALF_BARRIER)[{1, 64}], cuda.arange(64))
end)

local EARLY_EXIT = [[
__global__ void scan(float *a, int n) {
  int t = threadIdx.x;
  if (t >= n) return;
  float v = a[t];
  __syncthreads();
  a[(t + 1) % n] = v;
}
]]
local EARLY_EXIT_FIXED = [[
__global__ void scan(float *a, int n) {
  int t = threadIdx.x;
  float v = t < n ? a[t] : 0.0f;
  __syncthreads();
  if (t < n) a[(t + 1) % n] = v;
}
]]

test("sync: threads that returned before the barrier, and threads at another barrier", function()
  finds({sync = true}, {"the __syncthreads() at kernel.cu:5 was reached by 40 of the 64 threads",
        "24 exited before reaching it (threads (40,0,0), (41,0,0), (42,0,0) and 21 more)"},
        cuda.kernel(EARLY_EXIT)[{1, 64}], cuda.arange(64), 40)
  clean({sync = true}, cuda.kernel(EARLY_EXIT)[{1, 64}], cuda.arange(64), 64)
  clean({sync = true}, cuda.kernel(EARLY_EXIT_FIXED)[{1, 64}], cuda.arange(64), 40)
  local k = cuda.kernel[[
__global__ void two(int *out) {
  if (threadIdx.x < 32) { out[threadIdx.x] = 1; __syncthreads(); }
  else { __syncthreads(); out[threadIdx.x] = 2; }
}
]]
  finds({sync = true}, {"the __syncthreads() at kernel.cu:2 was reached by 32 of the 64 threads",
        "32 wait at another __syncthreads(), at kernel.cu:3 (threads (32,0,0), (33,0,0), " ..
        "(34,0,0) and 29 more)"},
        k[{1, 64}], cuda.array(64, "i32"))
end)

---------------------------------------------------------------- the settings --

test("cuda.sanitize sets exactly the checks it names, returns them; {} turns all off", function()
  local before = cuda.sanitize()
  checkeq(before.nan, false); checkeq(before.init, false); checkeq(before.sync, false)
  local now = cuda.sanitize{nan = true, sync = true}
  checkeq(now.nan, true); checkeq(now.init, false); checkeq(now.sync, true)
  checkeq(cuda.sanitize().sync, true)
  cuda.sanitize{init = true}
  checkeq(cuda.sanitize().nan, false, "a table replaces the setting")
  checkeq(cuda.sanitize{}.init, false)
  checkeq(cuda.sanitize{nan = false}.nan, false)
  checkeq(cuda.sanitize{nan = "made", init = true}.nan, "made", "the strict NaN check")
  checkeq(cuda.sanitize().init, true)
  cuda.sanitize(cuda.sanitize()) -- what it returns, given back, is the same setting
  checkeq(cuda.sanitize().nan, "made")
  checkeq(cuda.sanitize{nan = true}.nan, true, "true is the check at the store again")
  cuda.sanitize{}
end)

test("cuda.sanitize: bad arguments are refused with a message", function()
  local known = "(the checks are nan, init and sync)"
  checkerr("cuda.sanitize: unknown check 'bounds' " .. known, cuda.sanitize, {bounds = true})
  checkerr("cuda.sanitize: unknown check '1' " .. known, cuda.sanitize, {true})
  checkerr('cuda.sanitize: nan must be true, false or "made", got 1', cuda.sanitize, {nan = 1})
  checkerr('cuda.sanitize: nan must be true, false or "made", got bogus', cuda.sanitize,
           {nan = "bogus"})
  checkerr('cuda.sanitize: nan must be true, false or "made", got Made', cuda.sanitize,
           {nan = "Made"})
  checkerr("cuda.sanitize: sync must be true or false, got yes", cuda.sanitize, {sync = "yes"})
  checkerr("cuda.sanitize expects a table such as {nan = true, init = true, sync = true}, " ..
           "or nothing, got string", cuda.sanitize, "nan")
  checkeq(cuda.sanitize().nan, false, "a refused call changes nothing")
end)

---------------------------------------------------------------- races --

-- Runs `code` in a child cudalab on the simulator (this same binary: see faults.lua) and returns
-- what it printed, stdout and stderr together.
local function child(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local bin = T.self_command()
  -- a wide terminal, so that no warning is broken across lines: the tests look for sentences
  local p = assert(io.popen("COLUMNS=200 exec " .. bin .. " --sim '" .. path .. "' 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  return out
end

local REVERSE = [=[
local k = cuda.kernel[[
__global__ void reverse(float *a) {
  __shared__ float buf[64];
  buf[threadIdx.x] = a[threadIdx.x];
  a[threadIdx.x] = buf[63 - threadIdx.x];
}
]]
local a = cuda.arange(64)
print("launch:", pcall(k[{1, 64}], a))
print("kept:", a[63])
print("again:", pcall(k[{1, 64}], cuda.arange(64)))
]=]

test("at the prompt a race is a warning on stderr, once, and the launch's results are kept",
     function()
  local out = child(REVERSE)
  check(out:find("again:\ttrue", 1, true), out)
  local _, warnings = out:gsub("warning:", "")
  checkeq(warnings, 1, "the same race of the same kernel is told once")
  for _, want in ipairs({"launch:\ttrue", "kept:\t0.0",
      "warning: shared-memory race between warps:",
      "thread (32,0,0) (warp 1, lane 0) writes element 32 of __shared__ buf (byte offset 128) " ..
      "at kernel.cu:3",
      "which thread (31,0,0) (warp 0, lane 31) read at kernel.cu:4",
      "add __syncthreads() between the two", "in kernel reverse, block (0,0,0)",
      "and 63 more racing accesses", "The launch completed and its results are kept",
      'cuda.simopts{race_check = "fail"}'}) do
    -- the warning is broken at spaces to the terminal's width: compare with spacing evened out
    local flat = out:gsub("\n +", " ")
    check(flat:find(want, 1, true), "'" .. want .. "' not in: " .. out)
  end
end)

test("race_check = \"fail\" fails the launch, as lesson checks do", function()
  local out = child('cuda.simopts{race_check = "fail"}\n' .. REVERSE)
  check(out:find("launch:\tfalse\tshared-memory race between warps", 1, true), out)
  check(not out:find("warning:", 1, true), out)
  local lc = require "lesson_check"
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir " .. dir)
  local f = assert(io.open(dir .. "/reverse.cu", "w"))
  f:write(REVERSE:match("%[%[\n(.-)%]%]"))
  f:close()
  local ok, why = lc.run{file = dir .. "/reverse.cu", name = "reverse", shapes = {{}},
    case = function() return {grid = 1, block = 64, args = {cuda.arange(64)}} end}
  os.execute("rm -rf " .. dir)
  -- A check also runs the init sanitizer, which may see the missing barrier first: the read of
  -- an element whose writer has not run yet. Either way the check fails and names the barrier's
  -- shared variable.
  check(not ok and (tostring(why):find("shared-memory race between warps", 1, true) or
    tostring(why):find("uninitialised read (init check)", 1, true)), tostring(why))
  checkeq(cuda.simopts().race_check, "warn", "the check puts the prompt's mode back")
end)

local LEGACY = [=[
local k = cuda.kernel[[
__device__ void warp_reduce(volatile float *s, int t) {
  s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8];
  s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];
}
__global__ void reduce(const float *in, float *out) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int h = 128; h > 32; h >>= 1) { if (t < h) s[t] += s[t + h]; __syncthreads(); }
  if (t < 32) warp_reduce(s, t);
  if (t == 0) out[0] = s[0];
}
]]
local out = cuda.array(1)
print("sum:", pcall(k[{1, 256}], cuda.ones(256), out))
print("value:", out[0])
local loop = cuda.kernel[[
__global__ void halve(const float *in, float *out) {
  volatile __shared__ float s[32];
  int t = threadIdx.x;
  s[t] = in[t];
  for (int h = 16; h > 0; h >>= 1) if (t < h) s[t] += s[t + h];
  if (t == 0) out[0] = s[0];
}
]]
print("loop:", pcall(loop[{1, 32}], cuda.ones(32), out))
print("halved:", out[0])
]=]

test("the legacy warp-synchronous reduction runs in lockstep: no warning, the right sum", function()
  local out = child(LEGACY)
  check(out:find("sum:\ttrue", 1, true) and out:find("value:\t256.0", 1, true), out)
  check(out:find("loop:\ttrue", 1, true) and out:find("halved:\t32.0", 1, true), out)
  check(not out:find("warning", 1, true), "a lockstep warp was warned about: " .. out)
  -- a check keeps the rule the lessons teach: __syncwarp() between the lanes
  out = child('cuda.simopts{race_check = "fail"}\n' .. LEGACY)
  check(out:find("sum:\tfalse\tshared-memory race between lanes of one warp", 1, true), out)
end)

-- The same reduction step by step under `if (t < h)`, volatile or not: lockstep orders each
-- step's read after the other lane's write, but only volatile keeps the compiler from reading
-- early or writing late, so without it the read after the write warns as the write after the
-- read does.
local GUARDED = [=[
local k = cuda.kernel[[
__global__ void guarded(const int *in, int *o) {
  VOLATILE __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = in[t] + in[t + 32];
  __syncwarp();
  if (t < 16) s[t] += s[t + 16];
  if (t < 8) s[t] += s[t + 8];
  if (t < 4) s[t] += s[t + 4];
  if (t < 2) s[t] += s[t + 2];
  if (t < 1) s[t] += s[t + 1];
  if (t == 0) o[0] = s[0];
}
]]
local o = cuda.zeros(1, "i32")
print("guarded:", pcall(k[{1, 32}], cuda.arange(64, "i32"), o))
print("sum:", o[0])
]=]

test("without volatile a lockstep read of another lane's write warns at the prompt", function()
  local out = child((GUARDED:gsub("VOLATILE", "")))
  check(out:find("guarded:\ttrue", 1, true) and out:find("sum:\t2016", 1, true), out)
  local flat = out:gsub("%s+", " ")
  check(flat:find("warning: shared-memory race between lanes of one warp: thread (0,0,0) (warp 0, " ..
    "lane 0) reads element 8 of __shared__ s (byte offset 32) at kernel.cu:7, which thread (8,0,0) " ..
    "(warp 0, lane 8) wrote at kernel.cu:6 with no __syncwarp() between them, and the array is " ..
    "not volatile", 1, true), out)
  out = child((GUARDED:gsub("VOLATILE", "volatile")))
  check(out:find("guarded:\ttrue", 1, true) and out:find("sum:\t2016", 1, true), out)
  check(not out:find("warning", 1, true), "the volatile reduction was warned about: " .. out)
end)

test("a race between warps displaces a lockstep warning, on 1 host thread as on 3", function()
  -- A tree sum with no barrier between its levels: within warp 0 the levels' reads of another
  -- lane's sum, lockstep and not volatile, come first; the race between warps is the bug.
  local code = [=[
cuda.simopts{threads = THREADS}
local k = cuda.kernel[[
__global__ void tree(const int *x, int *out) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  for (int h = 1; h < blockDim.x; h *= 2)
    if (t % (2 * h) == 0) s[t] += s[t + h];
  if (t == 0) out[blockIdx.x] = s[0];
}
]]
print("tree:", pcall(k[{4, 128}], cuda.arange(128, "i32"), cuda.zeros(4, "i32")))
]=]
  local seen = {}
  for _, threads in ipairs{1, 3} do
    local out = child((code:gsub("THREADS", threads)))
    local flat = out:gsub("%s+", " ")
    check(out:find("tree:\ttrue", 1, true), out)
    check(flat:find("warning: shared-memory race between warps", 1, true) and
          flat:find("add __syncthreads() between the two", 1, true), out)
    check(not flat:find("not volatile", 1, true), "the lockstep warning was kept: " .. out)
    seen[#seen + 1] = flat:match("warning: (.-) in kernel")
  end
  checkeq(seen[2], seen[1], "the same warning on 3 host threads")
end)

test("lanes of one warp on two paths of a branch warn; a spin-wait between warps runs", function()
  local out = child([=[
local k = cuda.kernel[[
__global__ void paths(int *out) {
  __shared__ int box[32];
  int t = threadIdx.x;
  if (t < 16) box[t + 16] = t;
  else out[t] = box[t];
}
]]
print("paths:", pcall(k[{1, 32}], cuda.array(32, "i32")))
local spin = cuda.kernel[[
__global__ void spin(int *out) {
  volatile __shared__ int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 32) flag = 7;
  if (threadIdx.x < 32) { while (flag == 0) { } out[threadIdx.x] = flag; }
}
]]
local o = cuda.array(64, "i32")
print("spin:", pcall(spin[{1, 64}], o))
print("seen:", o[0], o[31])
]=])
  check(out:find("paths:\ttrue", 1, true), out)
  check(out:find("warning: shared-memory race between lanes of one warp", 1, true), out)
  check(out:find("spin:\ttrue", 1, true) and out:find("seen:\t7\t7", 1, true), out)
  -- the flag is volatile on both sides: strong accesses, which do not race each other
  check(not out:find("race between warps", 1, true), "the volatile flag warned: " .. out)
end)

test("race_check takes \"warn\", \"fail\", true and false, and nothing else", function()
  local before = cuda.simopts()
  local must = 'race_check must be "warn", "fail" or false (true means "fail"), got '
  checkerr(must .. "maybe", cuda.simopts, {race_check = "maybe"})
  checkerr(must .. "1", cuda.simopts, {race_check = 1})
  checkeq(cuda.simopts().race_check, before.race_check, "a refused value changes nothing")
  checkeq(cuda.simopts{race_check = "warn"}.race_check, "warn")
  cuda.simopts(before)
end)

cuda.simopts(saved)
return T.done()
