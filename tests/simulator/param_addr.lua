-- param_addr.lua: kernels that take the address of a parameter, which NVRTC does for a struct
-- parameter whose array is indexed at run time (mov of the parameter, then ld.param through a
-- register). Each against a CPU reference, and each error with its message. Simulator only.
local T = dofile("tests/lua/testlib.lua")
T.plan(5)
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
  check(WSUM:ptx():find("mov.b64%s+%%rd%d+, _Z4wsum6FilterPf_param_0;"), "the PTX takes the address")
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
                        "index 33 of parameter 0 ('f', 132 bytes) is 1 element (4 bytes) past the " ..
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

return T.done()
