-- param_addr.lua: kernels that take the address of a parameter, which NVRTC does for a struct
-- parameter whose array is indexed at run time (mov of the parameter, then ld.param through a
-- register). Each against a CPU reference, and each error with its message. Simulator only.
local T = dofile("tests/lua/testlib.lua")
T.plan(15)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

-- The first n weights 1.5, 3, 4.5, ... and their sum.
local function weights(n)
  local w, s = {}, 0
  for j = 1, 32 do w[j] = j * 1.5 end
  for j = 1, n do s = s + w[j] end
  return w, s
end

local WSUM = cuda.kernel[[
struct Filter { float w[32]; int n; };
__global__ void wsum(Filter f, float *o) {
  float s = 0;
  for (int j = 0; j < f.n; j++) s += f.w[j];
  o[blockIdx.x] = s;
}]]

test("a struct parameter's array summed in a loop (its address taken)", function()
  check(WSUM:ptx():find("mov.b64%s+%%rd%d+, _Z4wsum6FilterPf_param_0;"),
        "the PTX takes the address")
  local o = cuda.array(2)
  for _, n in ipairs{0, 1, 5, 31, 32} do
    local w, s = weights(n)
    WSUM[{2, 1}]({w = w, n = n}, o)
    checkeq(o[0], s, "n = " .. n)
    checkeq(o[1], s, "n = " .. n .. ", second block")
  end
end)

test("per-thread indices into two structs, with parameters between and after them", function()
  local k = cuda.kernel[[
struct A { int v[40]; };
struct B { double d[20]; int n; };
__global__ void two(A a, int k, B b, float *o) {
  int i = threadIdx.x;
  o[i] = a.v[(i * k) % 40] + b.d[(i + k) % 20] * b.n;
}]]
  local v, d = {}, {}
  for j = 1, 40 do v[j] = j * 3 - 7 end
  for j = 1, 20 do d[j] = j * 0.25 end
  local o = cuda.array(96)
  for _, kk in ipairs{1, 7, 13} do
    k[{1, 96}]({v = v}, kk, {d = d, n = -3}, o)
    for i = 0, 95 do
      checkeq(o[i], v[(i * kk) % 40 + 1] + d[(i + kk) % 20 + 1] * -3, ("i %d, k %d"):format(i, kk))
    end
  end
end)

test("a kernel that changes its struct parameter works on a copy of it", function()
  -- NVRTC copies the parameter into local memory with a loop of ld.param through a register
  local k = cuda.kernel[[
struct F { float w[32]; int n; };
__global__ void kw(F f, float *o, int i) {
  f.w[i] = 100;
  float s = 0;
  for (int j = 0; j < 32; j++) s += f.w[j] * (j + 1);
  o[threadIdx.x] = s + f.n;
}]]
  local w = weights(32)
  local o = cuda.array(32)
  for _, i in ipairs{0, 9, 31} do
    k[{1, 32}]({w = w, n = 5}, o, i)
    local s = 5
    for j = 1, 32 do s = s + (j == i + 1 and 100 or w[j]) * j end
    checkeq(o[31], s, "i = " .. i)
  end
end)

test("an index past a struct parameter's array is out of bounds, naming the parameter", function()
  local w = weights(32)
  local ok, err = pcall(WSUM[{1, 1}], {w = w, n = 40}, cuda.array(1))
  check(not ok)
  -- f.w[32] is f.n, inside the struct; f.w[33] is past it
  for _, want in ipairs{"out-of-bounds parameter load of 4 bytes at parameter address 0x84: " ..
                        "index 33 of parameter 0 ('f', 132 bytes) is 1 element (4 bytes) " ..
                        "past the " ..
                        "end", "in kernel wsum, block (0,0,0), thread (0,0,0), at kernel.cu:4"} do
    check(err:find(want, 1, true), "'" .. want .. "' in: " .. err)
  end
  local back = cuda.kernel[[
struct Filter { float w[32]; int n; };
__global__ void back(Filter f, float *o) { o[threadIdx.x] = f.w[(int)threadIdx.x - f.n]; }]]
  checkerr("index -1 of parameter 0 ('f', 132 bytes) is 1 element (4 bytes) before the start\n" ..
           "  in kernel back, block (0,0,0), thread (0,0,0), at kernel.cu:2", back[{1, 32}],
           {w = w, n = 1}, cuda.array(32))
  local wrapped = cuda.kernel[[
struct Filter { float w[32]; int n; };
__global__ void wrapped(Filter f, float *o) { o[threadIdx.x] = f.w[threadIdx.x - f.n]; }]]
  checkerr("index 4294967294 of parameter 0 ('f', 132 bytes), which is -2 as a 32-bit unsigned " ..
           "index: an unsigned index (such as threadIdx.x - 1) went below zero and wrapped around",
           wrapped[{1, 32}], {w = w, n = 2}, cuda.array(32))
  local far = cuda.kernel[[
struct Filter { float w[32]; int n; };
__global__ void far(Filter f, float *o, int k) { o[threadIdx.x] = f.w[threadIdx.x * k]; }]]
  checkerr("index 500000000 of parameter 0 ('f', 132 bytes) is 499999968 elements", far[{1, 2}],
           {w = w, n = 1}, cuda.array(2), 500000000)
end)

test("the launch after a failed one runs, and its results are right", function()
  local w, s = weights(32)
  local o = cuda.array(2)
  pcall(WSUM[{2, 1}], {w = w, n = 1000}, o)
  WSUM[{2, 1}]({w = w, n = 32}, o)
  checkeq(o[1], s)
end)

-- __grid_constant__ (CUDA 11.7): the kernel may take the parameter's address. Passed to a
-- function NVRTC does not inline, it becomes generic (cvta.param) and is read with a plain ld.
local GC = [[
struct P { float w[4]; int n; };
__device__ __noinline__ float use(const P *p, int i) { return p->w[i & 3] * p->n; }
__global__ void gc(const __grid_constant__ P p, float *o) {
  o[threadIdx.x] = use(&p, threadIdx.x);
}]]

test("a __grid_constant__ struct read through its address in another function", function()
  local k = cuda.kernel(GC)
  check(k:ptx():find("cvta.param.u64", 1, true), "the PTX makes the address generic")
  local o = cuda.array(40)
  for _, n in ipairs{1, -2, 7} do
    local w = {0.5, -1.25, 3, 8}
    k[{1, 40}]({w = w, n = n}, o)
    for i = 0, 39 do checkeq(o[i], w[(i & 3) + 1] * n, ("i %d, n %d"):format(i, n)) end
  end
end)

test("a __grid_constant__ struct through a pointer in the kernel itself", function()
  local k = cuda.kernel[[
struct P { float w[40]; int n; };
__global__ void gi(const __grid_constant__ P p, float *o, int k) {
  const P *q = &p;
  o[threadIdx.x] = q->w[(threadIdx.x * k) % 40] + q->n;
}]]
  local w, o = {}, cuda.array(64)
  for j = 1, 40 do w[j] = j * j end
  k[{1, 64}]({w = w, n = 1000}, o, 3)
  for i = 0, 63 do checkeq(o[i], w[(i * 3) % 40 + 1] + 1000, "i " .. i) end
end)

test("an index past a __grid_constant__ struct, through a generic pointer, is out of bounds",
     function()
  local k = cuda.kernel[[
struct P { float w[4]; int n; };
__device__ __noinline__ float at(const P *p, int i) { return p->w[i]; }
__global__ void gcb(const __grid_constant__ P p, float *o) {
  o[threadIdx.x] = at(&p, threadIdx.x);
}]]
  local o = cuda.array(8)
  k[{1, 5}]({w = {1, 2, 3, 4}, n = 9}, o) -- w[4] is n's bits: inside the struct
  checkerr("out-of-bounds parameter load of 4 bytes at parameter address 0x14: index 5 of " ..
           "parameter 0 ('p', 20 bytes) is 1 element (4 bytes) past the end\n  in kernel gcb, " ..
           "block (0,0,0), thread (5,0,0), at kernel.cu:2", k[{1, 8}], {w = {1, 2, 3, 4}, n = 9}, o)
end)

test("a write or an atomic through a pointer to a kernel parameter is refused", function()
  local poke = cuda.kernel[[
struct P { float w[4]; int n; };
__device__ __noinline__ void poke(P *p, int i) { p->w[i] = 1; }
__global__ void gcw(const __grid_constant__ P p, float *o) {
  poke((P *)&p, threadIdx.x); o[0] = 1;
}]]
  local o = cuda.zeros(1)
  checkerr("store of 4 bytes to parameter 0 ('p', 20 bytes) at parameter address 0x0: a " ..
           "kernel's " ..
           "parameters are read-only (a __grid_constant__ parameter is const); copy the " ..
           "parameter into a local variable to change it\n  in kernel gcw, block (0,0,0), " ..
           "thread (0,0,0), at kernel.cu:2", poke[{1, 4}], {w = {1, 2, 3, 4}, n = 3}, o)
  checkeq(o[0], 0, "the kernel stopped at the store")
  local bump = cuda.kernel[[
struct P { float w[4]; int n; };
__device__ __noinline__ void bump(P *p) { atomicAdd(&p->n, 1); }
__global__ void gca(const __grid_constant__ P p) { bump((P *)&p); }]]
  checkerr("atomic of 4 bytes to parameter 0 ('p', 20 bytes) at parameter address 0x10: a " ..
           "kernel's parameters are read-only", bump[{1, 1}], {w = {1, 2, 3, 4}, n = 3})
end)

-- Device printf writes to the process's stdout: the launch runs in a child (as faults.lua's).
test("printf reads a string inside a __grid_constant__ struct", function()
  local code = [[cuda.simopts{threads = 1} cuda.kernel[=[#include <cstdio>
struct N { char name[8]; int k; };
__global__ void hello(const __grid_constant__ N n) { printf("%s %d\n", n.name, n.k + threadIdx.x); }
]=][{1, 2}]{name = {104, 105, 0, 0, 0, 0, 0, 0}, k = 5}]]
  check(not code:find("'", 1, true), "the chunk is quoted with ' for the shell")
  local p = assert(io.popen("exec " .. T.self_command() .. " --sim -e '" .. code .. "' 2>&1"))
  local out = p:read("a")
  p:close()
  checkeq(out, "hi 5\nhi 6\n", "the child's output")
end)

-- A device function NVRTC does not inline takes its struct parameter's address: the PTX ISA puts
-- the parameter on the stack and gives a local address (mov, then cvta.local).
local MSUM = [[
struct M { float m[64]; int n; };
__device__ __noinline__ float msum(M m, int k) {
  float s = 0;
  for (int i = 0; i < m.n; i++) s += m.m[(i * k) & 63];
  return s;
}
__global__ void abi(const float *in, float *o, int k) {
  M m;
  for (int j = 0; j < 64; j++) m.m[j] = in[j] + threadIdx.x;
  m.n = 64 - (threadIdx.x & 7);
  o[threadIdx.x] = msum(m, threadIdx.x | k);
}]]

test("a __noinline__ function's struct parameter indexed in a loop", function()
  local k = cuda.kernel(MSUM)
  check(k:ptx():find("mov.b64%s+%%rd%d+, _Z4msum1Mi_param_0;"), "the PTX takes the address")
  local inp, o = cuda.array(64), cuda.array(96)
  for j = 0, 63 do inp[j] = j * 0.5 - 3 end
  for _, kk in ipairs{1, 6} do
    k[{1, 96}](inp, o, kk)
    for t = 0, 95 do
      local s, step = 0, t | kk
      for i = 0, 64 - (t & 7) - 1 do s = s + inp[(i * step) & 63] + t end
      check(math.abs(o[t] - s) <= 1e-4 * math.abs(s) + 1e-4, ("t %d, k %d: %s vs %s"):format(
        t, kk, o[t], s))
    end
  end
end)

test("a function that changes its struct parameter changes its own copy", function()
  local k = cuda.kernel[[
struct M { int m[48]; int n; };
__device__ __noinline__ int change(M m, int i) {
  m.m[i % 48] += 1000;
  int s = 0;
  for (int j = 0; j < 48; j++) s += m.m[j] * (j + 1);
  return s + m.n;
}
__global__ void caller(const int *in, int *o) {
  M m;
  for (int j = 0; j < 48; j++) m.m[j] = in[j];
  m.n = 7;
  int a = change(m, threadIdx.x), b = change(m, threadIdx.x * 5);
  o[threadIdx.x] = a - b + m.m[threadIdx.x % 48];
}]]
  local inp, o = cuda.array(48, "i32"), cuda.array(64, "i32")
  for j = 0, 47 do inp[j] = j * 3 - 50 end
  k[{1, 64}](inp, o)
  local function change(i)
    local s = 7
    for j = 0, 47 do s = s + (inp[j] + (j == i % 48 and 1000 or 0)) * (j + 1) end
    return s
  end
  for t = 0, 63 do checkeq(o[t], change(t) - change(t * 5) + inp[t % 48], "t " .. t) end
end)

test("a recursive function's struct parameter: a copy in each call's frame", function()
  local k = cuda.kernel[[
struct S { int v[40]; int depth; };
__device__ __noinline__ int rec(S s, int i) {
  if (s.depth == 0) return s.v[i % 40];
  S t = s;
  t.depth--;
  t.v[(i + s.depth) % 40] += i;
  int r = rec(t, i + 1);
  return s.v[(i * 3) % 40] + r;
}
__global__ void krec(const int *in, int *o, int d) {
  S s;
  for (int j = 0; j < 40; j++) s.v[j] = in[j];
  s.depth = d;
  o[threadIdx.x] = rec(s, threadIdx.x);
}]]
  local inp, o = cuda.array(40, "i32"), cuda.array(32, "i32")
  for j = 0, 39 do inp[j] = j * 7 - 20 end
  local function rec(v, depth, i)
    if depth == 0 then return v[i % 40] end
    local t = {}
    for j = 0, 39 do t[j] = v[j] end
    t[(i + depth) % 40] = t[(i + depth) % 40] + i
    return v[(i * 3) % 40] + rec(t, depth - 1, i + 1)
  end
  local v = {}
  for j = 0, 39 do v[j] = inp[j] end
  local stack = cuda.simopts().stack
  cuda.simopts{stack = 8192} -- each call's frame holds its locals and its parameter's copy
  for _, d in ipairs{0, 1, 6} do
    k[{1, 32}](inp, o, d)
    for t = 0, 31 do checkeq(o[t], rec(v, d, t), ("t %d, depth %d"):format(t, d)) end
  end
  cuda.simopts{stack = stack}
end)

test("an index past a function's struct parameter is out of bounds, naming it", function()
  local k = cuda.kernel[[
struct M { float m[64]; int n; };
__device__ __noinline__ float mget(M m, int i) {
  float s = 0;
  for (int j = 0; j < m.n; j++) s += m.m[j + i];
  return s;
}
__device__ __noinline__ float other(M m, int i) { return m.m[i]; }
__global__ void oob(const float *in, float *o, int i, int j) {
  M m;
  for (int k = 0; k < 64; k++) m.m[k] = in[k];
  m.n = 64;
  o[threadIdx.x] = mget(m, i) + other(m, j);
}]]
  local inp, o = cuda.ones(64), cuda.array(32)
  k[{1, 32}](inp, o, 1, 0) -- m.m[64] is m.n's bits: inside the struct
  local where = "\n  in kernel oob, block (0,0,0), thread (0,0,0), at kernel.cu:4"
  checkerr("out-of-bounds local load of 4 bytes at local address 0x", k[{1, 32}], inp, o, 2, 0)
  checkerr(": index 65 of parameter 0 of mget (260 bytes, the function's copy of it in the " ..
           "thread's local memory) is 1 element (4 bytes) past the end" .. where, k[{1, 32}], inp,
           o, 2, 0)
  checkerr("index -1 of parameter 0 of mget (260 bytes, the function's copy of it in the " ..
           "thread's local memory) is 1 element (4 bytes) before the start" .. where, k[{1, 32}],
           inp, o, -1, 0)
  -- the second function's copy lies after the first's, guard bytes between: each overrun names
  -- its own (one far past the first copy lands nearer the second: an address tells no origin)
  checkerr("index 1000 of parameter 0 of other (260 bytes, the function's copy of it in the " ..
           "thread's local memory) is 936 elements (3744 bytes) past the end", k[{1, 32}], inp, o,
           0, 1000)
  checkerr("index 66 of parameter 0 of other (260 bytes, the function's copy of it in the " ..
           "thread's local memory) is 2 elements (8 bytes) past the end\n  in kernel oob, " ..
           "block (0,0,0), thread (0,0,0), at kernel.cu:7", k[{1, 32}], inp, o, 0, 66)
  checkerr("index -3 of parameter 0 of other", k[{1, 32}], inp, o, 0, -3)
end)

test("a pointer to a function's parameter, passed on, reads its copy", function()
  local k = cuda.kernel[[
struct V { double d[24]; };
__device__ __noinline__ double pick(const V *v, int i) { return v->d[i % 24]; }
__device__ __noinline__ double twice(V v, int i) { return pick(&v, i) + pick(&v, i * 7); }
__global__ void kp(double *o) {
  V v;
  for (int j = 0; j < 24; j++) v.d[j] = j * 1.5 + threadIdx.x;
  o[threadIdx.x] = twice(v, threadIdx.x);
}]]
  local o = cuda.array(64, "f64")
  k[{1, 64}](o)
  for t = 0, 63 do checkeq(o[t], (t % 24) * 1.5 + t + ((t * 7) % 24) * 1.5 + t, "t " .. t) end
end)

return T.done()
