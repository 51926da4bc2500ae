-- compile_features.lua: what a kernel file from a real project needs of compiling and loading:
-- its own header beside it, __constant__ tables set from Lua, a cooperative grid sync, kernels
-- of included files, and a message naming what is not supported (dynamic parallelism, textures,
-- host code) with what to do instead. Every result is checked against a CPU reference. Runs on
-- the simulator in make test and on the GPU in make test-gpu.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(22)

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "/src'"))
local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- A stencil in src/ with its own stencil.h beside it, and another stencil.h where the process
-- runs from: nvcc uses the one beside the file, and so must cuda.kernel.
write(dir .. "/src/stencil.h", "#define RADIUS 2\n")
write(dir .. "/stencil.h", "#define RADIUS 5\n")
write(dir .. "/src/stencil.cu", [[
#include "stencil.h"
__global__ void stencil(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int s = 0;
  for (int j = -RADIUS; j <= RADIUS; j++)
    if (i + j >= 0 && i + j < n) s += in[i + j];
  out[i] = s;
}
]])

test("a kernel file's own header is used, wherever the process runs", function()
  local k = cuda.kernel(dir .. "/src/stencil.cu")
  local n = 300
  local a, b = cuda.arange(n, "i32"), cuda.zeros(n, "i32")
  k[{(n + 127) // 128, 128}](a, b, n)
  for i = 0, n - 1 do
    local want = 0
    for j = -2, 2 do if i + j >= 0 and i + j < n then want = want + i + j end end
    checkeq(b[i], want, "out[" .. i .. "]")
  end
end)

-- __constant__ tables: a convolution whose weights and scale come from Lua.
local conv_src = [[
#define R 3
__constant__ float coef[2 * R + 1];
__constant__ int scale;
namespace tab { __constant__ unsigned int lut[4]; }
struct Params { float a; int b; };
__constant__ Params params;
__global__ void conv(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
  for (int j = -R; j <= R; j++) {
    int k = i + j;
    if (k >= 0 && k < n) s += coef[j + R] * x[k];
  }
  y[i] = s * scale + tab::lut[i % 4];
}
]]

test("__constant__ tables set from Lua are what the kernel reads", function()
  local m = cuda.module(conv_src)
  local w = {0.5, 1, 2, 4, 2, 1, 0.5}
  m:constant("coef", w)
  m:constant("scale", {3})
  m:constant("tab::lut", {10, 20, 30, 40})
  local n = 1000
  local x, y = cuda.arange(n), cuda.zeros(n)
  m.conv[{(n + 255) // 256, 256}](x, y, n)
  local lut = {10, 20, 30, 40}
  for i = 0, n - 1 do
    local s = 0.0
    for j = -3, 3 do
      if i + j >= 0 and i + j < n then s = s + w[j + 4] * (i + j) end
    end
    local want = s * 3 + lut[i % 4 + 1]
    check(math.abs(y[i] - want) <= 1e-5 * math.abs(want), "y[" .. i .. "] = " .. y[i] ..
          ", want " .. want)
  end
end)

test("__constant__ tables read back, from the module and from its kernel", function()
  local m = cuda.module(conv_src)
  m:constant("coef", {1, 2, 3})
  local back = m.conv:constant("coef")
  checkeq(#back, 7, "elements")
  checkeq(table.concat(back, " "), "1.0 2.0 3.0 0.0 0.0 0.0 0.0", "values")
  m:constant("coef", cuda.full(7, 2))
  checkeq(m:constant("coef")[7], 2.0, "from an array")
  checkeq(#m:constant("params"), 8, "a struct reads back as its bytes")
end)

test("a __constant__ of a module is its own: another load of the same source starts at zero",
  function()
    local m1, m2 = cuda.module(conv_src), cuda.module(conv_src)
    m1:constant("scale", {7})
    checkeq(m2:constant("scale")[1], 0, "the other module's")
  end)

test("bad __constant__ writes are refused with what is wrong", function()
  local m = cuda.module(conv_src)
  checkerr("kernel.cu has no __constant__ or __device__ variable 'nope'",
    m.constant, m, "nope", {1})
  checkerr("too large: a table of 8 f32 values is 32 bytes, more than coef (7 x float, 28 bytes)",
    m.constant, m, "coef", {1, 2, 3, 4, 5, 6, 7, 8})
  checkerr("wrong type: coef (7 x float, 28 bytes) holds float (f32), got cuda.Array<i32>[3]",
    m.constant, m, "coef", cuda.zeros(3, "i32"))
  checkerr("i32 holds whole numbers, got 1.5", m.constant, m, "scale", {1.5})
  checkerr("expected a number, got string", m.constant, m, "coef", {"x"})
  checkerr("too large: cuda.Array<f32>[8]", m.constant, m, "coef", cuda.zeros(8))
  checkerr("params (Params, 8 bytes) is not a table of numbers", m.constant, m, "params", {1, 2})
  checkerr("the name must be a variable's", m.constant, m, "coef;\n#include <x>")
  checkerr("the values must be a table of numbers or a cuda.Array, got string",
    m.constant, m, "coef", "1, 2")
  checkeq(m:constant("scale")[1], 0, "nothing was written by the refused calls")
end)

-- __device__ variables: m:constant reads and sets them as their declared type, as it does
-- __constant__ ones. The comment, the function and the pointer are traps for the reader of
-- the source: none of them may be taken for a variable.
local devvar_src = [[
// __device__ float table[4];
#define REAL float
__device__ int table[4] = {10, 20, 300, -40};
static __device__ float f1 = 1.5f;
extern "C" __device__ unsigned short us[2][3] = {{1, 2, 3}, {4, 5, 6}};
__device__ __align__(16) const double dd[2] = {0.25, -2};
__device__ int a = 1, b[3] = {7, 8, 9}, *p;
namespace ns { __device__ float x = 2.5f; }
__device__ int x = -3;
__device__ REAL r[2];
struct P { float a; int b; };
__device__ P pp;
__device__ int twice(int v) { return 2 * v; }
extern "C" __global__ void k(float *o) {
  int i = threadIdx.x;
  if (i < 4) table[i] = twice(table[i]);
  if (i == 0) {
    o[0] = f1; o[1] = us[1][2]; o[2] = (float)dd[1]; o[3] = a + b[2];
    o[4] = ns::x; o[5] = x; o[6] = r[0] + pp.b;
  }
}
]]

test("__device__ variables read back as their declared type and are set from tables", function()
  local m = cuda.module(devvar_src)
  checkeq(table.concat(m:constant("table"), ","), "10,20,300,-40", "int table")
  checkeq(table.concat(m:constant("f1"), ","), "1.5", "static float")
  checkeq(table.concat(m:constant("us"), ","), "1,2,3,4,5,6", "unsigned short [2][3]")
  checkeq(table.concat(m:constant("dd"), ","), "0.25,-2.0", "aligned const double")
  checkeq(table.concat(m:constant("b"), ","), "7,8,9", "a declarator after another")
  checkeq(table.concat(m:constant("ns::x"), ","), "2.5", "ns::x is the float")
  checkeq(table.concat(m:constant("x"), ","), "-3", "x is the int at file scope")
  local t = {1, 2, -3, 40000}
  m:constant("table", t)
  m:constant("f1", {-0.75})
  m:constant("us", {0, 0, 0, 0, 0, 65535})
  m:constant("a", {5})
  m:constant("ns::x", {4.25})
  m.k:constant("x", {9})
  local o = cuda.zeros(7)
  m.k[{1, 32}](o)
  local back = m:constant("table")
  for i = 1, 4 do
    checkeq(back[i], 2 * t[i], "table[" .. (i - 1) .. "] after the kernel doubled it")
  end
  local want = {-0.75, 65535, -2, 5 + 9, 4.25, 9, 0}
  for i = 1, 7 do checkeq(o[i - 1], want[i], "o[" .. (i - 1) .. "]") end
end)

-- A __managed__ variable is a global one the host reaches too: the kernel's atomics on it and
-- its initializer read back through m:constant, which sets it as well.
test("__managed__ variables read back and are set as __device__ ones are", function()
  local m = cuda.module[[
__managed__ int count;
__managed__ float weights[3] = {0.5f, 1.5f, -2.0f};
__global__ void tally(float *out) {
  atomicAdd(&count, 1);
  if (threadIdx.x + blockIdx.x == 0) out[0] = weights[0] + weights[1] + weights[2];
}]]
  local out = cuda.zeros(1)
  m.tally[{4, 32}](out)
  checkeq(m:constant("count")[1], 128, "one atomicAdd per thread")
  checkeq(table.concat(m:constant("weights"), ","), "0.5,1.5,-2.0", "the initializer")
  checkeq(out[0], 0, "the kernel read the initializer")
  m:constant("count", {-28})
  m:constant("weights", {1, 2, 4})
  m.tally[{1, 32}](out)
  checkeq(m:constant("count")[1], 4, "set from Lua, then counted on")
  checkeq(out[0], 7, "weights set from Lua")
end)

test("bad __device__ writes are refused with what is wrong, and change nothing", function()
  local m = cuda.module(devvar_src)
  checkerr("kernel.cu has no __constant__ or __device__ variable 'nope' (declare it at file " ..
           "scope: __constant__ float nope[16]; or __device__ int nope[4];)",
    m.constant, m, "nope", {1})
  checkerr("kernel.cu has no __constant__ or __device__ variable 'twice'", m.constant, m, "twice")
  checkerr("has no __constant__ or __device__ variable 'v'", m.constant, m, "v", {1})
  checkerr("too large: a table of 5 i32 values is 20 bytes, more than table (4 x int, 16 bytes)",
    m.constant, m, "table", {1, 2, 3, 4, 5})
  checkerr("i32 holds whole numbers, got 1.5", m.constant, m, "table", {1.5})
  checkerr("wrong type: table (4 x int, 16 bytes) holds int (i32), got cuda.Array<f32>[4]",
    m.constant, m, "table", cuda.zeros(4))
  checkerr("expected a number, got string", m.constant, m, "f1", {"x"})
  checkerr("constant: r (REAL, 8 bytes) is not a table of numbers, because its type REAL is " ..
           "one the source defines (a struct, a macro or an alias), which is not read: set its " ..
           "bytes from a cuda.Array of the type it holds instead, as m:constant(\"r\", " ..
           "cuda.array({1, 2}, \"i32\"))", m.constant, m, "r", {1, 2})
  checkerr("pp (P, 8 bytes) is not a table of numbers, because its type P is one the source " ..
           "defines", m.constant, m, "pp", {1, 2})
  checkerr("p (int *, 8 bytes) is not a table of numbers, because it is a pointer (int *)",
    m.constant, m, "p", {1})
  checkeq(table.concat(m:constant("table"), ","), "10,20,300,-40", "table untouched")
  checkeq(table.concat(m:constant("f1"), ","), "1.5", "f1 untouched")
end)

test("a __device__ variable of a type the source hides is set and read as bytes", function()
  local m = cuda.module(devvar_src)
  m:constant("r", cuda.array({1.5, 2}, "f32"))
  m:constant("pp", cuda.array({0, 7}, "i32"))
  local o = cuda.zeros(7)
  m.k[{1, 32}](o)
  checkeq(o[6], 1.5 + 7, "r[0] + pp.b, as the kernel reads them")
  checkeq(table.concat(m:constant("r"), ","), "0,0,192,63,0,0,0,64", "r's bytes: 1.5f, 2.0f")
end)

-- Variables of CUDA's vector types: one vector is the table of its components, an array of
-- them a table of such tables (of several dimensions, flat in C's order), and each reads back
-- in the shape it was given. The kernel reads every component, so a component set in the wrong
-- place shows in its results.
local vec_src = [[
__constant__ float4 tint;
__constant__ float2 offs[3];
__device__ int4 counts;
__device__ double2 pair[2][2];
__managed__ uint4 mask;
__constant__ float4 single[1];
__global__ void shade(const float *in, float *out, double *dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2 o = offs[i % 3];
  out[i] = in[i] * tint.x + tint.y - tint.z * tint.w + o.x - o.y + single[0].w;
  const double2 *p = &pair[0][0];
  dout[i] = p[i % 4].x * counts.x + p[i % 4].y * counts.w + mask.z - counts.y + counts.z;
}]]

test("vector-typed variables are set from tables of components and read back in that shape",
  function()
    local m = cuda.module(vec_src)
    local tint, offs = {1.5, -2, 0.25, 4}, {{1, 2}, {x = -3, y = 0.5}, {10, 20}}
    local pair = {{1, 2}, {3, 4}, {-0.5, 8}, {1e3, 1e-3}}
    m:constant("tint", tint)
    m:constant("offs", offs)
    m:constant("counts", {x = 2, y = -7, z = 1, w = 3})
    m:constant("pair", pair)
    m:constant("mask", {1, 2, 4000000000, 8})
    m:constant("single", {{0, 0, 0, 0.5}})
    checkeq(table.concat(m:constant("tint"), ","), "1.5,-2.0,0.25,4.0", "float4 back as {x,y,z,w}")
    local back = m:constant("offs")
    checkeq(#back, 3, "three float2")
    checkeq(table.concat(back[2], ","), "-3.0,0.5", "{x =, y =} back as {x, y}")
    checkeq(table.concat(m:constant("counts"), ","), "2,-7,1,3", "int4 by field names")
    checkeq(#m:constant("pair"), 4, "double2 [2][2]: four vectors, flat in C's order")
    checkeq(table.concat(m:constant("pair")[4], ","), "1000.0,0.001", "pair[1][1]")
    checkeq(table.concat(m:constant("mask"), ","), "1,2,4000000000,8", "__managed__ uint4")
    checkeq(#m:constant("single"), 1, "an array of one float4 is a table of one vector")
    m:constant("offs", m:constant("offs")) -- what is read back is given again unchanged
    local n = 64
    local input = {}
    for i = 1, n do input[i] = i * 0.5 - 7 end
    local out, dout = cuda.zeros(n), cuda.zeros(n, "f64")
    m.shade[{1, 64}](cuda.array(input), out, dout, n)
    for i = 0, n - 1 do
      local o, p = offs[i % 3 + 1], pair[i % 4 + 1]
      local ox, oy = o[1] or o.x, o[2] or o.y
      local want = input[i + 1] * 1.5 + -2 - 0.25 * 4 + ox - oy + 0.5
      check(math.abs(out[i] - want) <= 1e-5 * math.max(1, math.abs(want)), "out[" .. i .. "]: " ..
        out[i] .. ", want " .. want)
      checkeq(dout[i], p[1] * 2 + p[2] * 3 + 4000000000 - -7 + 1, "dout[" .. i .. "]")
    end
    -- a cuda.Array of the components' type sets them too
    m:constant("tint", cuda.array({9, 8, 7, 6}))
    checkeq(table.concat(m:constant("tint"), ","), "9.0,8.0,7.0,6.0", "from a cuda.Array")
  end)

test("wrong vector values are refused with what is wrong, and change nothing", function()
  local m = cuda.module(vec_src)
  m:constant("tint", {1, 2, 3, 4})
  local c4 = "constant: tint is a float4: give its 4 components, {x, y, z, w} or {1, 2, 3, 4}, "
  checkerr(c4 .. "got a table of 3 entries", m.constant, m, "tint", {1, 2, 3})
  checkerr(c4 .. "got a table of 5 entries (a key that is no index?)",
    m.constant, m, "tint", {1, 2, 3, 4, 5})
  checkerr(c4 .. "got a table of 5 entries (a field it has not?)",
    m.constant, m, "tint", {x = 1, y = 2, z = 3, w = 4, v = 5})
  checkerr(c4 .. "got a table of 1 entry (it is one vector, not a table of them)",
    m.constant, m, "tint", {{1, 2, 3, 4}})
  checkerr("constant: tint.z must be a number, got string", m.constant, m, "tint", {1, 2, "3", 4})
  checkerr("constant: tint.y must be a number, got boolean",
    m.constant, m, "tint", {x = 1, y = true, z = 3, w = 4})
  checkerr("constant: offs[0] is a float2: give its 2 components, {x, y} or {1, 2}, got number",
    m.constant, m, "offs", {1, 2})
  checkerr("constant: offs[1] is a float2: give its 2 components, {x, y} or {1, 2}, got a " ..
           "table of 1 entry", m.constant, m, "offs", {{1, 2}, {3}})
  checkerr("constant: too large: a table of 4 float2 vectors is 32 bytes, more than offs " ..
           "(3 x float2, 24 bytes) holds", m.constant, m, "offs", {{1, 2}, {3, 4}, {5, 6}, {7, 8}})
  checkerr("constant: counts.w: i32 holds whole numbers, got 4.5",
    m.constant, m, "counts", {1, 2, 3, 4.5})
  checkerr("constant: mask.x: -1 does not fit in u32", m.constant, m, "mask", {-1, 0, 0, 0})
  checkerr("constant: wrong type: tint (float4, 16 bytes) holds float4, whose components are " ..
           "f32, got cuda.Array<i32>[4]", m.constant, m, "tint", cuda.array({1, 2, 3, 4}, "i32"))
  checkerr("constant: too large: a table of 3 float4 vectors is 48 bytes, more than single " ..
           "(1 x float4, 16 bytes) holds", m.constant, m, "single", {{}, {}, {}})
  checkeq(table.concat(m:constant("tint"), ","), "1.0,2.0,3.0,4.0", "tint untouched")
  checkeq(table.concat(m:constant("counts"), ","), "0,0,0,0", "counts untouched")
end)

-- A grid-wide sync: every block writes its partial sum, the grid syncs, block 0 adds them.
local gsum_src = [[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void gsum(const int *x, int *part, int *out, int n) {
  cg::grid_group g = cg::this_grid();
  int s = 0;
  for (int i = g.thread_rank(); i < n; i += g.size()) s += x[i];
  atomicAdd(&part[blockIdx.x], s);
  g.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int t = 0;
    for (int b = 0; b < gridDim.x; b++) t += part[b];
    out[0] = t;
  }
}
]]

test("a cooperative launch syncs the whole grid", function()
  local k = cuda.kernel(gsum_src)
  local n, blocks = 50000, 64
  local x, part, out = cuda.arange(n, "i32"), cuda.zeros(blocks, "i32"), cuda.zeros(1, "i32")
  k[{blocks, 128, cooperative = true}](x, part, out, n)
  checkeq(out[0], n * (n - 1) // 2, "the grid's sum")
  local again = cuda.zeros(1, "i32")
  part = cuda.zeros(blocks, "i32")
  k[{blocks, 128, cooperative = true}](x, part, again, n) -- the barrier starts afresh
  checkeq(again[0], n * (n - 1) // 2, "a second launch")
end)

test("a grid sync without a cooperative launch is refused by name", function()
  local k = cuda.kernel(gsum_src)
  local x, part, out = cuda.zeros(4, "i32"), cuda.zeros(4, "i32"), cuda.zeros(1, "i32")
  checkerr("gsum syncs its whole grid (cg::this_grid().sync()), which needs a cooperative launch",
    function() k[{4, 32}](x, part, out, 4) end)
  checkerr("cooperative must be true or false, got string",
    function() k[{4, 32, cooperative = "yes"}](x, part, out, 4) end)
end)

test("a cooperative grid larger than the device holds at once is refused with the numbers",
  function()
    local k = cuda.kernel(gsum_src)
    local d = cuda.device()
    local per_sm = k:occupancy(1024) or 2
    local too_many = d.sm_count * per_sm + 1
    local x, part, out = cuda.zeros(4, "i32"), cuda.zeros(too_many, "i32"), cuda.zeros(1, "i32")
    checkerr("a cooperative launch needs all its blocks resident at once: the grid has " ..
             too_many .. " blocks",
      function() k[{too_many, 1024, cooperative = true}](x, part, out, 4) end)
    checkerr("launch at most " .. (too_many - 1) .. " blocks",
      function() k[{too_many, 1024, cooperative = true}](x, part, out, 4) end)
  end)

-- cuda.module lists the kernels a source's #include brings in, as cuda.kernel{name} finds them.
write(dir .. "/src/rows.cuh", "__global__ void rows_kernel(int *a, int n) {\n" ..
  "  int i = threadIdx.x; if (i < n) a[i] = 2 * i + 1;\n}\n")

test("cuda.module lists the kernels of an included file", function()
  local m = cuda.module('#include "rows.cuh"\n__global__ void own(int *a) { a[0] = 9; }\n',
                        {"-I" .. dir .. "/src"})
  checkeq(table.concat(m:kernels(), ","), "own,rows_kernel", "kernels")
  local a = cuda.zeros(32, "i32")
  m.rows_kernel[{1, 32}](a, 32)
  for i = 0, 31 do checkeq(a[i], 2 * i + 1, "a[" .. i .. "]") end
end)

test("a template kernel's hint fits its parameters", function()
  checkerr('{name = "MatrixMulCUDA<16>"}', cuda.kernel,
    "template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float *C) { C[0] = BLOCK_SIZE; }")
  checkerr('{name = "axpy<float, 16>"}', cuda.kernel,
    "template <typename T, unsigned N> __global__ void axpy(T *y) { y[0] = N; }")
  local k = cuda.kernel("template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float *C) " ..
                        "{ C[0] = BLOCK_SIZE; }", {name = "MatrixMulCUDA<16>"})
  local c = cuda.zeros(1)
  k[{1, 1}](c)
  checkeq(c[0], 16.0, "the instantiation the hint names runs")
end)

local host_src = [[
int helper(int x) { return x + 1; }
__global__ void k(int *a) { a[0] = helper(41); }
]]

test("a .cu with host functions names -default-device, which loads it", function()
  checkerr('cuda.module(src, {"-default-device"})', cuda.module, host_src)
  local k = cuda.kernel(host_src, {"-default-device"})
  local a = cuda.zeros(1, "i32")
  k[{1, 1}](a)
  checkeq(a[0], 42, "helper ran on the device")
end)

test("dynamic parallelism is named, with what to do instead", function()
  local src = "__global__ void child(int *a) { a[0] = 1; }\n" ..
              "__global__ void parent(int *a) { child<<<1, 1>>>(a); }\n"
  checkerr("a kernel that launches a kernel (dynamic parallelism", cuda.module, src)
  checkerr("launch the second kernel from Lua", cuda.module, src)
end)

test("texture references are named, with what to do instead", function()
  checkerr("texture references (texture<float, 2> t; a global bound with cudaBindTexture) are " ..
           "not supported: take a cudaTextureObject_t parameter instead",
    cuda.module, "texture<float, 1> t;\n__global__ void k(float *a) { a[0] = tex1Dfetch(t, 0); }")
end)

if cuda.backend() == "sim" then
  test("texture objects run on the simulator; surfaces are named with what to use", function()
    local m = cuda.module(
      "__global__ void k(cudaTextureObject_t t, float *a) { a[0] = tex1D<float>(t, 1.5f); }")
    local a = cuda.zeros(1)
    m.k[{1, 1}](cuda.texture(cuda.array({4, 5}, "f32")), a)
    checkeq(a[0], 5, "tex1D read texel 1")
    checkerr("surfaces (cudaSurfaceObject_t, surf2Dwrite, surf2Dread) are not supported: pass " ..
             "the data as a pointer and write it with plain stores", cuda.module,
      "__global__ void k(cudaSurfaceObject_t s) { surf2Dwrite(1.0f, s, 0, 0); }")
    checkerr("layered and cubemap textures, tex2Dgather", cuda.module,
      "__global__ void k(cudaTextureObject_t t, float *a) { a[0] = tex1DLayered<float>(t, 0.5f, 1); }")
  end)
  test("dynamic parallelism compiled with -rdc is named on the simulator", function()
    checkerr("dynamic parallelism", cuda.module,
      "__global__ void child(int *a) { a[0] = 1; }\n" ..
      "__global__ void parent(int *a) { child<<<1, 1>>>(a); }\n", {"-rdc=true"})
  end)
else
  T.skip("texture objects run on the simulator; surfaces are named with what to use",
    "the simulator's message")
  T.skip("dynamic parallelism compiled with -rdc is named on the simulator", "the simulator's")
end

test("-I folders are searched in their order", function()
  assert(os.execute("mkdir -p '" .. dir .. "/ia' '" .. dir .. "/ib'"))
  write(dir .. "/ia/w.h", "#define W 1\n")
  write(dir .. "/ib/w.h", "#define W 2\n")
  local src = '#include "w.h"\n__global__ void k(int *a) { a[0] = W; }\n'
  local got = {}
  for _, o in ipairs{{"-I" .. dir .. "/ia", "-I" .. dir .. "/ib"},
                     {"-I" .. dir .. "/ib", "-I" .. dir .. "/ia"}} do
    local a = cuda.zeros(1, "i32")
    cuda.kernel(src, o)[{1, 1}](a)
    got[#got + 1] = a[0]
  end
  checkeq(table.concat(got, " "), "1 2", "the first -I folder wins")
end)

os.execute("rm -rf '" .. dir .. "'")
return T.done()
