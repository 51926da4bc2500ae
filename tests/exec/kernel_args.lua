-- kernel_args.lua: kernel arguments of every kind a C++ kernel takes, from kernels written as
-- real code writes them: a struct of parameters (float, int, pointer, with padding), CUDA's
-- vector types by value, an array of pointers, NULL, and views of part of an array. Runs on the
-- simulator in make test and on the GPU in make test-gpu; every result is checked against a
-- CPU reference, every bad case against its message.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local SIM = cuda.backend() == "sim"
T.plan(12)

-- A SAXPY-like step with its parameters in a struct, as a solver passes them: float then int
-- then a pointer (4 bytes of padding before it) then a double.
local step = cuda.kernel([[
struct StepParams {
  float alpha;      // offset 0
  int n;            // offset 4
  const float *x;   // offset 8
  double shift;     // offset 16
  bool clamp;       // offset 24, then 7 bytes of padding: 32 bytes in all
};
__global__ void step(StepParams p, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) {
    float v = p.alpha * p.x[i] + y[i] + (float)p.shift;
    y[i] = p.clamp && v > 10.0f ? 10.0f : v;
  }
}]])

local function list(a) return a:tolist() end

test("a struct of parameters from a table by field name, padding and all", function()
  local n = 100
  local xs, ys = {}, {}
  for i = 1, n do xs[i], ys[i] = i * 0.25, 1 - i * 0.125 end
  local x, y = cuda.array(xs), cuda.array(ys)
  step[{1, 128}]({alpha = 2, n = n, x = x, shift = 0.5, clamp = true}, y)
  local got = list(y)
  for i = 1, n do
    local v = 2 * xs[i] + ys[i] + 0.5
    local want = v > 10 and 10 or v
    check(math.abs(got[i] - want) < 1e-5, ("y[%d] = %g, want %g"):format(i - 1, got[i], want))
  end
  -- the same struct as its bytes (string.pack), for a layout the reader cannot see
  local y2 = cuda.array(ys)
  local bytes = string.pack("<f i4 I8 d B", 2, n, x:ptr(), 0.5, 0) .. string.rep("\0", 7)
  step[{1, 128}](bytes, y2)
  got = list(y2)
  for i = 1, n do check(math.abs(got[i] - (2 * xs[i] + ys[i] + 0.5)) < 1e-5, "bytes: y" .. i) end
end)

test("a struct's missing, extra and mistyped fields are errors naming the field", function()
  local x, y = cuda.zeros(4), cuda.zeros(4)
  local go = step[{1, 4}]
  checkerr("argument 1 (StepParams p), field 'shift': missing (StepParams has 5 fields",
    go, {alpha = 1, n = 4, x = x, clamp = false}, y)
  checkerr("argument 1 (StepParams p): StepParams has no field 'alhpa' (its fields: alpha, n, x, "
    .. "shift, clamp)", go, {alhpa = 1, alpha = 1, n = 4, x = x, shift = 0, clamp = false}, y)
  checkerr("argument 1 (StepParams p), field 'n': int holds whole numbers, got 2.5",
    go, {alpha = 1, n = 2.5, x = x, shift = 0, clamp = false}, y)
  checkerr("argument 1 (StepParams p), field 'n': 4294967296 does not fit in int",
    go, {alpha = 1, n = 1 << 32, x = x, shift = 0, clamp = false}, y)
  checkerr("argument 1 (StepParams p), field 'alpha': expected a number (float), got string",
    go, {alpha = "1", n = 4, x = x, shift = 0, clamp = false}, y)
  checkerr("argument 1 (StepParams p), field 'x': got cuda.Array<i32>[4], but the kernel expects "
    .. "an array of f32", go, {alpha = 1, n = 4, x = cuda.zeros(4, "i32"), shift = 0,
      clamp = false}, y)
  checkerr("argument 1 (StepParams p), field 'clamp': expected true or false, got 2",
    go, {alpha = 1, n = 4, x = x, shift = 0, clamp = 2}, y)
  checkerr("argument 1 (StepParams p): expected a table for StepParams (its fields by name), got "
    .. "number", go, 5, y)
  checkerr("argument 1 (StepParams p): a string for it must hold its 32 bytes exactly, got 3",
    go, "abc", y)
end)

-- A 2-D rotation and an integer box test with CUDA's vector types by value.
local vec = cuda.kernel([[
__global__ void vec(float2 rot, float4 w, int4 box, double2 off, uchar4 c, float *out, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  float x = (float)i, y = 1.0f - (float)i;
  float rx = rot.x * x - rot.y * y, ry = rot.y * x + rot.x * y;
  int inside = i >= box.x && i < box.z && box.y <= 0 && box.w > 0;
  out[i] = w.x * rx + w.y * ry + w.z * inside + w.w + (float)(off.x - off.y) + c.x + c.w;
}]])

test("float2, float4, int4, double2 and uchar4 by value, as {x =, y =} or {1, 2}", function()
  local n = 16
  local out = cuda.zeros(n)
  vec[{1, 32}]({x = 0.5, y = -0.25}, {1, 2, 3, 4}, {x = 2, y = -1, z = 9, w = 1}, {1.5, 0.5},
    {x = 7, y = 0, z = 0, w = 250}, out, n)
  local got = list(out)
  for i = 0, n - 1 do
    local x, y = i, 1 - i
    local rx, ry = 0.5 * x + 0.25 * y, -0.25 * x + 0.5 * y
    local inside = (i >= 2 and i < 9) and 1 or 0
    local want = rx + 2 * ry + 3 * inside + 4 + 1 + 7 + 250
    check(math.abs(got[i + 1] - want) < 1e-4, ("out[%d] = %g, want %g"):format(i, got[i + 1], want))
  end
  local go = vec[{1, 32}]
  checkerr("argument 1 (float2 rot): float2 has no field 'z' (its fields: x, y)",
    go, {x = 1, y = 2, z = 3}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2}, {1, 2, 3, 4}, out, n)
  checkerr("argument 2 (float4 w), field 'w': missing (float4 has 4 components",
    go, {1, 2}, {1, 2, 3}, {1, 2, 3, 4}, {1, 2}, {1, 2, 3, 4}, out, n)
  checkerr("argument 3 (int4 box): int4 has 4 elements, got one at 5",
    go, {1, 2}, {1, 2, 3, 4}, {1, 2, 3, 4, 5}, {1, 2}, {1, 2, 3, 4}, out, n)
  checkerr("argument 5 (uchar4 c), field 'x': 256 does not fit in unsigned char (0..255)",
    go, {1, 2}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2}, {256, 0, 0, 0}, out, n)
  checkerr("argument 1 (float2 rot): expected a table for float2 ({x = ..., y = ...} or {1, 2}), "
    .. "got number", go, 1.5, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2}, {1, 2, 3, 4}, out, n)
end)

-- Rows of a jagged matrix reached through an array of row pointers, as batched kernels take them.
local rows = cuda.kernel([[
__global__ void rowsum(float **rows, const int *len, float *sum, int nrows) {
  int r = threadIdx.x;
  if (r >= nrows) return;
  float s = 0;
  for (int j = 0; j < len[r]; j++) s += rows[r][j];
  sum[r] = s;
}]])

test("float ** takes an array of device addresses made with cuda.ptrs or a:ptr()", function()
  local lens = {3, 1, 5}
  local rs, want = {}, {}
  for r, l in ipairs(lens) do
    local vals = {}
    for j = 1, l do vals[j] = r * 10 + j end
    rs[r] = cuda.array(vals)
    local s = 0
    for _, v in ipairs(vals) do s = s + v end
    want[r] = s
  end
  local sum = cuda.zeros(3)
  local function same(got)
    for r = 1, 3 do checkeq(got[r], want[r], "row " .. r) end
  end
  rows[{1, 32}](cuda.ptrs(rs), cuda.array(lens, "i32"), sum, 3)
  same(list(sum))
  -- the same table built by hand from a:ptr(): a u64 array of addresses
  local sum2 = cuda.zeros(3)
  local addrs = cuda.array({rs[1]:ptr(), rs[2]:ptr(), rs[3]:ptr()}, "u64")
  rows[{1, 32}](addrs, cuda.array(lens, "u32"), sum2, 3) -- u32 for const int *: same width
  same(list(sum2))
  checkerr("argument 1 (float **rows): got cuda.Array<f32>[3], but the kernel expects an array of "
    .. "device addresses (u64)", rows[{1, 32}], cuda.zeros(3), cuda.array(lens, "i32"), sum, 3)
  checkerr("argument 2 (const int *len): got cuda.Array<f32>[3], but the kernel expects an array "
    .. "of i32", rows[{1, 32}], cuda.ptrs(rs), cuda.array(lens), sum, 3)
  checkerr("argument 2 (const int *len): got cuda.Array<i64>[3], but the kernel expects an array "
    .. "of i32", rows[{1, 32}], cuda.ptrs(rs), cuda.array(lens, "i64"), sum, 3)
  checkerr("cuda.ptrs: element 2 must be a cuda.Array (or false for NULL), got number",
    cuda.ptrs, {rs[1], 5})
  checkerr("is in host memory: only a device array has a device address",
    function() return cuda.host(4):ptr() end)
end)

if SIM then
  test("simulator: an address read from a pointer array is checked against its array", function()
    local short = {cuda.array({1, 2, 3}), cuda.array({4})}
    local ok, err = pcall(rows[{1, 32}], cuda.ptrs(short), cuda.array({3, 2}, "i32"),
      cuda.zeros(2), 2)
    check(not ok, "reading row 1 past its one element must fail")
    check(tostring(err):find("index 1 of f32[1] is 1 element (4 bytes) past the end", 1, true),
      tostring(err))
  end)
else
  T.skip("simulator: an address read from a pointer array is checked against its array",
    "the simulator's check")
end

-- A histogram that may be given no bin counts at all (NULL), as optional outputs are.
local hist = cuda.kernel([[
__global__ void hist(const int *data, unsigned int *bins, int *total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (bins) atomicAdd(&bins[data[i] & 7], 1u);
  if (total) atomicAdd(total, data[i]);
}]])

test("nil passes NULL for a pointer", function()
  local vals, want = {}, 0
  for i = 1, 50 do vals[i] = i * 3; want = want + i * 3 end
  local data, total = cuda.array(vals, "i32"), cuda.zeros(1, "i32")
  hist[{1, 64}](data, nil, total, 50)
  checkeq(total[0], want)
  local bins = cuda.zeros(8, "i32") -- i32 for unsigned int *: same width, either sign
  hist[{1, 64}](data, bins, nil, 50)
  local counts = {0, 0, 0, 0, 0, 0, 0, 0}
  for _, v in ipairs(vals) do counts[(v & 7) + 1] = counts[(v & 7) + 1] + 1 end
  checkeq(table.concat(list(bins), ","), table.concat(counts, ","))
  checkerr("argument 2 (unsigned int *bins): expected a cuda.Array, got number (nil passes NULL",
    hist[{1, 64}], data, 0, total, 50)
  checkerr("argument 2 (unsigned int *bins): got cuda.Array<f32>[8], but the kernel expects an "
    .. "array of u32", hist[{1, 64}], data, cuda.zeros(8), total, 50)
end)

-- A kernel that scales n elements from a pointer: given part of an array, as d_data + 256.
local scale = cuda.kernel([[
__global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}]])

test("a:view(offset, count) and a + offset are arguments that start at that element", function()
  local n = 64
  local a = cuda.arange(n)
  scale[{1, 32}](a:view(8, 16), 2, 16)
  scale[{1, 64}](a + 40, 3, n - 40)
  local got = list(a)
  for i = 0, n - 1 do
    local want = i
    if i >= 8 and i < 24 then want = 2 * i elseif i >= 40 then want = 3 * i end
    checkeq(got[i + 1], want, "a[" .. i .. "]")
  end
  local v = a:view(8, 16)
  checkeq(#v, 16)
  checkeq(v[0], 16)
  checkeq(tostring(v):match("^[^:]+"), "cuda.Array<f32>[16] (a view from element 8 of "
    .. "cuda.Array<f32>[64]) on " .. tostring(a):match(" on ([^:]+)"))
  checkeq((v + 4)[0], a[12], "a view of a view starts from the root's element 12")
  checkerr("view count 60 is out of range for cuda.Array<f32>[64] (0..56)", a.view, a, 8, 60)
  checkerr("view offset 65 is out of range", a.view, a, 65)
  checkerr("an array plus a whole number of elements (a + 256) is a view from that element",
    function() return a + 1.5 end)
  a:free()
  check(v.freed, "freeing an array frees its views")
  checkerr("has been freed", scale[{1, 32}], v, 2, 16)
end)

if SIM then
  test("simulator: an access past a view's end is reported against the view", function()
    local a = cuda.zeros(64)
    local ok, err = pcall(scale[{1, 32}], a:view(8, 16), 2, 17)
    check(not ok, "element 16 of a 16-element view must fail")
    check(tostring(err):find("index 16 of f32[16] at 8 in f32[64] (parameter 0, 'a') is 1 element "
      .. "(4 bytes) past the end", 1, true), tostring(err))
    -- the whole array passed beside the view keeps the whole of it in bounds
    local two = cuda.kernel([[__global__ void two(float *v, const float *src, int off) {
      v[threadIdx.x] = src[threadIdx.x + off]; }]])
    two[{1, 32}](a:view(0, 32), a, 32) -- the whole array passed beside the view: all in bounds
    two[{1, 32}](a:view(0, 32), a + 32, 0)
    ok, err = pcall(two[{1, 32}], a:view(0, 32), a:view(32, 16), 8)
    check(not ok, "reading 8..39 of a 16-element view must fail")
    check(tostring(err):find("index 16 of f32[16] at 32 in f32[64] (parameter 1, 'src')", 1, true),
      tostring(err))
  end)
else
  T.skip("simulator: an access past a view's end is reported against the view",
    "the simulator's check")
end

test("pointers to vector types, structs and typedefs are checked by element", function()
  local k = cuda.kernel([[
typedef float real;
struct Particle { float x, y, z; float mass; };
__global__ void move(uint4 *flags, float2 *vel, real *t, Particle *p, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  p[i].x += vel[i].x * t[i];
  p[i].y += vel[i].y * t[i];
  flags[i].w = 1;
}]])
  local n = 4
  local flags, vel, t, p = cuda.zeros(4 * n, "u32"), cuda.array({1, 2, 3, 4, 5, 6, 7, 8}),
    cuda.array({1, 0.5, 2, 1}), cuda.zeros(4 * n)
  k[{1, 32}](flags, vel, t, p, n)
  local got, fl = list(p), list(flags)
  local tv = {1, 0.5, 2, 1}
  for i = 0, n - 1 do
    checkeq(got[4 * i + 1], (2 * i + 1) * tv[i + 1], "p[" .. i .. "].x")
    checkeq(got[4 * i + 2], (2 * i + 2) * tv[i + 1], "p[" .. i .. "].y")
    checkeq(fl[4 * i + 4], 1, "flags[" .. i .. "].w")
  end
  k[{1, 32}](cuda.zeros(4 * n, "i32"), vel, t, p, n) -- int for unsigned int: same width
  local go = k[{1, 32}]
  checkerr("argument 1 (uint4 *flags): got cuda.Array<f32>[16], but uint4 is 4 x u32: pass an "
    .. "array of u32 (4 elements per uint4)", go, cuda.zeros(16), vel, t, p, n)
  checkerr("argument 1 (uint4 *flags): got cuda.Array<u32>[6] (24 bytes), which is not a whole "
    .. "number of uint4 (16 bytes each)", go, cuda.zeros(6, "u32"), vel, t, p, n)
  checkerr("argument 3 (real *t): got cuda.Array<f64>[4], but the kernel expects an array of f32",
    go, flags, vel, cuda.zeros(4, "f64"), p, n)
  checkerr("argument 4 (Particle *p): got cuda.Array<f32>[6] (24 bytes), which is not a whole "
    .. "number of Particle (16 bytes each)", go, flags, vel, t, cuda.zeros(6), n)
end)

test("a pointer to a type nothing knows is named in a warning, once", function()
  -- the warning goes to stderr: run the launch in a child and read what it says
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write([[
local k = cuda.kernel("struct Opaque; __global__ void k(Opaque *o) { }")
k[{1, 1}](cuda.zeros(8, "u8"))
k[{1, 1}](cuda.zeros(8, "u8"))
k[{1, 1}](nil)
]])
  f:close()
  local p = io.popen(T.self_command() .. " --backend " .. cuda.backend() .. " " .. script
    .. " 2>&1")
  local out = p:read("a")
  p:close()
  os.remove(script)
  local _, count = out:gsub("warning: argument 1 %(Opaque %*o%)", "")
  checkeq(count, 1, out)
  check(out:gsub("%s+", " "):find("the array passed for it is not checked: type 'Opaque' is not "
    .. "defined in the kernel's source", 1, true), out)
end)

-- Types a header defines, as NVIDIA's samples keep `typedef unsigned int uint;` in a common
-- header: the launch check follows the typedef into the header the compile included (through
-- -I here), so `uint *` takes u32 and refuses f32 as `unsigned int *` would, `real *` is float *,
-- and a header's struct is measured.
test("a typedef or struct from an included header checks its pointer's array", function()
  local k = cuda.kernel([[
#include "kernel_args_types.h"
__global__ void inside(uint *hit, const Range *r, const real *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) hit[i] = x[i] >= r[i].lo && x[i] < r[i].hi ? 1u : 0u;
}]], {options = {"-Itests/exec"}})
  local n, xs, rs = 40, {}, {}
  for i = 1, n do
    xs[i] = (i * 7) % 13 - 6
    rs[2 * i - 1], rs[2 * i] = (i % 5) - 3, (i % 7) - 2
  end
  local hit, x, r = cuda.array(n, "u32"), cuda.array(xs), cuda.array(rs)
  k[{2, 32}](hit, r, x, n)
  local got = hit:tolist()
  for i = 1, n do
    local want = (xs[i] >= rs[2 * i - 1] and xs[i] < rs[2 * i]) and 1 or 0
    checkeq(got[i], want, "hit[" .. (i - 1) .. "]")
  end
  checkerr("argument 1 (uint *hit): got cuda.Array<f32>[40], but the kernel expects an array of "
    .. "u32 (unsigned int)", k[{2, 32}], cuda.array(n), r, x, n)
  checkerr("argument 3 (const real *x): got cuda.Array<i32>[40], but the kernel expects an array "
    .. "of f32 (float)", k[{2, 32}], hit, r, cuda.array(n, "i32"), n)
  checkerr("argument 2 (const Range *r): got cuda.Array<u8>[7] (7 bytes), which is not a whole "
    .. "number of Range (8 bytes each)", k[{2, 32}], hit, cuda.array(7, "u8"), x, n)
end)

-- A bool parameter takes true or false, or 0 or 1; another number stored as its bits made a
-- bool that was neither (f == true false, (int)f 2), and a struct's bool field refuses it too.
test("a bool parameter takes true, false, 0 or 1, and refuses any other value", function()
  local k = cuda.kernel[[
__global__ void pick(bool f, int a, bool g, int *o) { o[0] = f ? a : -a; o[1] = (int)f; o[2] = g; }]]
  local o = cuda.zeros(3, "i32")
  for _, c in ipairs({{true, false, 5, 1, 0}, {false, true, -5, 0, 1}, {1, 0, 5, 1, 0},
                      {0, 1, -5, 0, 1}}) do
    k[{1, 1}](c[1], 5, c[2], o)
    local got = o:tolist()
    checkeq(got[1], c[3], "f ? a : -a for " .. tostring(c[1]))
    checkeq(got[2], c[4], "(int)f for " .. tostring(c[1]))
    checkeq(got[3], c[5], "(int)g for " .. tostring(c[2]))
  end
  checkerr("argument 1 (bool f): expected true or false, got 2", k[{1, 1}], 2, 5, false, o)
  checkerr("argument 1 (bool f): expected true or false, got -1", k[{1, 1}], -1, 5, false, o)
  checkerr("argument 3 (bool g): expected true or false, got 0.5", k[{1, 1}], true, 5, 0.5, o)
  checkerr("argument 3 (bool g): expected true or false, got yes", k[{1, 1}], true, 5, "yes", o)
  checkerr("argument 3 (bool g): expected true or false, got nil", k[{1, 1}], true, 5, nil, o)
end)

return T.done()
