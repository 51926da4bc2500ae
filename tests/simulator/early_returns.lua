-- early_returns.lua: threads that return before a __syncthreads() leave the block's barriers, as
-- on a GPU (the PTX ISA's bar.sync waits for the threads that have not exited), in whatever shape
-- the compiler gives the return. The plain build jumps straight to the kernel's exit; the -G
-- build that k:debug runs sends every return through unguarded branches to one final ret, where
-- the returned lanes used to wait for the rest of their warp and fail the barrier as "reached by
-- only part of a warp". Each kernel runs plain, with -G and under k:debug, against a CPU
-- reference. Simulator only.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(5)

local SRC = [[
__device__ __noinline__ bool inside(int t, int n) { return t < n; }
__device__ __forceinline__ bool inside_inl(int t, int n) { if (t >= n) return false; return true; }
__device__ __noinline__ void fill(int *s, int t, int n) {
  if (t >= n) return;
  s[t] = t * 2;
}
__global__ void guard(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = t;
  __syncthreads();
  o[t] = s[(t + 1) % n];
}
__global__ void in_loop(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  for (int i = 0; i < 4; i++) {
    if (t >= n - i * 8) return;
    s[t] = t + i;
    __syncthreads();
    o[t] += s[(t + 1) % (n - i * 8)];
    __syncthreads();
  }
}
__global__ void by_call(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (!inside(t, n)) return;
  s[t] = t;
  __syncthreads();
  o[t] = s[(t + 1) % n];
}
__global__ void by_inlined(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (!inside_inl(t, n)) return;
  s[t] = t;
  __syncthreads();
  o[t] = s[(t + 1) % n];
}
__global__ void two_returns(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t >= n) return;
  else if (t < 4) return;
  s[t] = t;
  __syncthreads();
  o[t] = s[(t + 1) % n < 4 ? 4 : (t + 1) % n];
}
__global__ void after_call(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  fill(s, t, n);
  if (t >= n) return;
  __syncthreads();
  o[t] = s[(t + 1) % n];
}
__global__ void in_while(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  int k = 0;
  while (true) {
    if (t >= n - k) return;
    s[t] = t + k;
    __syncthreads();
    o[t] += s[(t + 1) % (n - k)];
    __syncthreads();
    if (++k == 3) break;
  }
  o[t] += 1000;
}
__global__ void work_then_return(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t >= n) {
    o[t] = -t;
    return;
  }
  s[t] = t;
  __syncthreads();
  o[t] = s[(t + 1) % n];
}
__global__ void branchy_return(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t >= n) {
    if (t & 1) o[t] = -1;
    else o[t] = -2;
    for (int i = 0; i < t % 3; i++) o[t] -= 10;
    return;
  }
  s[t] = 3 * t;
  __syncthreads();
  o[t] = s[(t + 1) % n];
  __syncthreads();
  s[t] = o[t] + 1;
  __syncthreads();
  o[t] += s[(t + 2) % n];
}
]]

local N, THREADS = 40, 64

-- What each kernel leaves in o (zeros before), thread by thread, computed here.
local function reference(name, t)
  local n = N
  if name == "guard" or name == "by_call" or name == "by_inlined" then
    return t < n and (t + 1) % n or 0
  elseif name == "in_loop" then
    local v = 0
    for i = 0, 3 do
      local m = n - i * 8
      if t >= m then break end
      v = v + (t + 1) % m + i
    end
    return v
  elseif name == "two_returns" then
    if t >= n or t < 4 then return 0 end
    local j = (t + 1) % n
    return j < 4 and 4 or j
  elseif name == "after_call" then
    return t < n and 2 * ((t + 1) % n) or 0
  elseif name == "in_while" then
    local v = 0
    for k = 0, 2 do
      local m = n - k
      if t >= m then return v end
      v = v + (t + 1) % m + k
    end
    return v + 1000
  elseif name == "work_then_return" then
    return t < n and (t + 1) % n or -t
  elseif name == "branchy_return" then
    if t >= n then return (t % 2 == 1 and -1 or -2) - 10 * (t % 3) end
    local first = function(u) return 3 * ((u + 1) % n) end
    return first(t) + first((t + 2) % n) + 1
  end
end

local NAMES = {"guard", "in_loop", "by_call", "by_inlined", "two_returns", "after_call",
               "in_while", "work_then_return", "branchy_return"}

local function agrees(m, name, launch)
  local o = cuda.zeros(THREADS, "i32")
  local ok, err = pcall(launch, m[name], o)
  check(ok, name .. ": " .. tostring(err))
  if not ok then return end
  local got = o:tolist()
  for t = 0, THREADS - 1 do checkeq(got[t + 1], reference(name, t), name .. ": o[" .. t .. "]") end
end

local function plain(k, o)
  k[{1, THREADS}](o, N)
  cuda.sync()
end

test("the plain build: returned threads leave the barrier", function()
  local m = cuda.module(SRC)
  for _, name in ipairs(NAMES) do agrees(m, name, plain) end
end)

test("the -G build: returns through the one final ret leave it too", function()
  local m = cuda.module(SRC, {options = {"-G"}})
  for _, name in ipairs(NAMES) do agrees(m, name, plain) end
end)

test("under k:debug, which runs the -G build, the launch runs to its end", function()
  local dbg = require "debugger"
  local said, out = {}, dbg.out
  dbg.out = function(text) said[#said + 1] = text end
  local m = cuda.module(SRC)
  for _, name in ipairs(NAMES) do
    agrees(m, name, function(k, o) k:debug{1, THREADS, commands = {"continue"}}(o, N) end)
  end
  dbg.out = out
  local text = table.concat(said, "\n")
  check(not text:find("part of a warp", 1, true), text)
  check(not text:find("differ", 1, true), text) -- the closing check agrees with the plain build
end)

test("the sync check still names the threads that returned before the barrier", function()
  local m = cuda.module(SRC, {options = {"-G"}})
  cuda.sanitize{sync = true}
  local ok, err = pcall(plain, m.guard, cuda.zeros(THREADS, "i32"))
  cuda.sanitize{}
  check(not ok, "the sync check let the launch pass")
  check(tostring(err):find("was reached by 40 of the 64 threads of block (0,0,0); 24 exited "
    .. "before reaching it", 1, true), tostring(err))
end)

-- A barrier inside a branch is still refused when the threads that skip it go on: only threads
-- on their way out leave it, whether they return at once or after work of their own.
test("a barrier that threads skip and then run past is refused, -G or not", function()
  local SKIP = [[
__global__ void skip(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t < n) {
    s[t] = t;
    __syncthreads();
  }
  o[t] = t < n ? s[t] : 1;
}
]]
  -- the skipping threads do work first, then go on past the barrier: run first, they still
  -- never reach it
  local WORK_THEN_ON = [[
__global__ void work_then_on(int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t >= n) {
    o[t] = -1;
  } else {
    s[t] = t;
    __syncthreads();
    o[t] = s[(t + 1) % n];
  }
  o[t] += 1;
}
]]
  for _, src in ipairs({SKIP, WORK_THEN_ON}) do
    for _, opts in ipairs({{}, {"-G"}}) do
      local k = cuda.kernel(src, {options = opts})
      checkerr("__syncthreads() reached by only part of a warp (lanes 0x000000ff of 0xffffffff)",
        plain, k, cuda.zeros(THREADS, "i32"))
    end
  end
end)

return T.done()
