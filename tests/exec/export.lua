-- export.lua: cuda.record and cuda.export running real kernels (the simulator in make test, the
-- GPU in make test-gpu). The program is read back and held to what the session did: the
-- kernels' sources, the arrays' sizes and contents (in the program or in the data file, whose
-- bytes are compared with the session's), the launches in order with their configurations and
-- arguments, the repetitions, the checks; and every refusal says why. tests/export_nvcc.sh
-- builds such a program with nvcc, tests/gpu/export_gpu.sh runs it on a GPU.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(26)

local dir = os.getenv("TMPDIR") or "/tmp"
local tmp = dir .. "/cudalab-export-" .. os.time() .. "-" .. math.random(1 << 30)
assert(os.execute("mkdir -p '" .. tmp .. "'"))

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function count(text, needle)
  local n, at = 0, 1
  while true do
    local s, e = text:find(needle, at, true)
    if not s then return n end
    n, at = n + 1, e + 1
  end
end

local inc = cuda.kernel[[
__global__ void inc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}]]
local scale = cuda.kernel([[
template <typename T> __global__ void scale(T *a, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}]], {name = "scale<int>", options = {"-DFACTOR=3"}})

test("export refuses before anything was recorded, saying how to record", function()
  checkerr("nothing to export: start the record with cuda.record(true)", cuda.export,
    tmp .. "/none.cu")
end)

test("a record with no launch has nothing to export", function()
  cuda.record(true)
  local a = cuda.ones(10)
  a:fill(2)
  checkerr("nothing to export: the record holds no launch yet", cuda.export, tmp .. "/none.cu")
  checkerr("bad argument #1 to 'cuda.record' (true (start recording, emptied) or false (stop)",
    cuda.record, "yes")
end)

-- The session: three launches of inc in a loop, one of a template with a negative scalar, a
-- zeroed array, a host write between launches, a view, and the big array freed before export.
cuda.record(true)
-- Globals, as at the prompt: the program names each array after its global (d_big).
big = cuda.arange(3000, "f32")           -- 12,000 bytes: the data file
small = cuda.array({1, 2, 3, 4, 5}, "i32") -- written in the program
z = cuda.zeros(300)                       -- a cudaMemset
for _ = 1, 3 do inc[{12, 256}](big, #big) end
scale[{1, 32}](small, -3, #small)
inc[{2, 256}](z, #z)
big[5] = 100                                    -- the host changes big: one more upload
inc[{12, 256}](big, #big)
inc[{1, 32}](big + 1000, 10)                    -- a view: d_big + 1000
local want_big = big:tobytes()
local sum = cuda.record()
big:free()

test("cuda.record() sums up the record", function()
  checkeq(sum.on, true, "on")
  checkeq(sum.launches, 7, "launches, repetitions included")
  checkeq(sum.arrays, 3, "arrays")
  checkeq(sum.sources, 2, "sources")
  check(sum.problem == nil, "no problem: " .. tostring(sum.problem))
end)

local path = tmp .. "/prog.cu"
local out
test("cuda.export writes the program and the data file, with an array freed before it", function()
  out = cuda.export(path)
  checkeq(out.program, path, "program")
  checkeq(out.data, tmp .. "/prog.data", "data file")
  checkeq(out.launches, 5, "distinct launches")
  checkeq(out.arrays, 3, "arrays")
end)

local prog = read(path)
local data = read(tmp .. "/prog.data")

test("the program holds both sources, namespaced, with the -D option as a #define", function()
  check(prog:find("namespace s1 {\n__global__ void inc(float *a, int n) {", 1, true), "source 1")
  check(prog:find("#define FACTOR 3\nnamespace s2 {\ntemplate <typename T>", 1, true), "source 2")
  check(prog:find("#undef FACTOR", 1, true), "undef")
end)

test("each array is made with cudaMalloc at the session's size and type", function()
  check(prog:find("float *d_big = nullptr;\n  CHECK(cudaMalloc(&d_big, 3000 * sizeof(float)));",
    1, true), "big")
  check(prog:find("CHECK(cudaMalloc(&d_small, 5 * sizeof(int)));", 1, true), "small")
  check(prog:find("CHECK(cudaMemset(d_z, 0, 300 * sizeof(float)));", 1, true), "z zeroed")
  check(prog:find("static const int set3_small[5] = {\n    1, 2, 3, 4, 5\n};", 1, true), "small")
end)

test("the launches are in order, with configuration, arguments and repetitions", function()
  local calls = {}
  for c in prog:gmatch("\n  [^\n]-(s%d::[%w_<>]+<<<[^\n]*)") do calls[#calls + 1] = c end
  checkeq(#calls, 5, "launch lines")
  checkeq(calls[1], "s1::inc<<<12, 256>>>(d_big, 3000);", "1")
  check(prog:find("for (int rep = 0; rep < 3; rep++) s1::inc<<<12, 256>>>", 1, true), "reps")
  checkeq(calls[2], "s2::scale<int><<<1, 32>>>(d_small, -3, 5);", "2")
  checkeq(calls[3], "s1::inc<<<2, 256>>>(d_z, 300);", "3")
  checkeq(calls[4], "s1::inc<<<12, 256>>>(d_big, 3000);", "4")
  checkeq(calls[5], "s1::inc<<<1, 32>>>(d_big + 1000, 10);", "5")
end)

test("the data file holds big's first contents, its changed ones and its result", function()
  checkeq(#data, 3 * 12000, "size")
  local first = cuda.arange(3000, "f32"):tobytes()
  checkeq(data:sub(1, 12000) == first, true, "the arange")
  local changed = data:sub(12001, 24000)
  checkeq(string.unpack("<f", changed, 5 * 4 + 1), 100.0, "big[5] = 100 is uploaded")
  checkeq(string.unpack("<f", changed, 4 * 4 + 1), 7.0, "after three incs")
  checkeq(data:sub(24001) == want_big, true, "the result")
  check(prog:find("data.data() + 12000, 3000 * sizeof(float), cudaMemcpyHostToDevice", 1, true),
    "the second upload reads its offset")
end)

test("every CUDA call is checked, each launch timed with events, results compared", function()
  for call in prog:gmatch("\n%s+(cuda%a+)%(") do
    if call ~= "cudaGetErrorString" then error("unchecked call: " .. call) end
  end
  checkeq(count(prog, "CHECK(cudaEventRecord(start));"), 5, "timed launches")
  checkeq(count(prog, "CHECK(cudaGetLastError());"), 5, "launch errors")
  check(prog:find('bad += check_exact("small", d_small, want_small, 5);', 1, true), "ints")
  check(prog:find('bad += check_floats("big", d_big, data.data() + 24000, 3000, 1e-05, 1e-08);',
    1, true), "floats")
  check(prog:find("std::vector<float> want_z(300, 1.0f);", 1, true), "z's result is a fill")
  check(prog:find("static const int want_small[5] = {\n    -3, -6, -9, -12, -15\n};", 1, true),
    "small's result")
  check(prog:find('fprintf(stderr, "%s:%d: %s failed: %s\\n", __FILE__, __LINE__, #call,', 1,
    true), "CHECK names the call, file and line")
end)

test("a check's own launches are not recorded", function()
  local recorder = require "export_record"
  local before = cuda.record().launches
  recorder.paused(function() inc[{1, 32}](cuda.ones(4), 4) end)
  checkeq(cuda.record().launches, before, "launches")
  checkerr("boom", recorder.paused, function() error("boom") end)
  inc[{1, 32}](cuda.ones(4), 4)
  checkeq(cuda.record().launches, before + 1, "recording again after an error")
end)

test("bad paths: not a .cu name, an unwritable folder", function()
  checkerr("the program's path must be a file name ending in .cu (\"prog.cu\"), got number",
    cuda.export, 42)
  checkerr('got "prog.txt"', cuda.export, "prog.txt")
  checkerr("cuda.export: cannot write " .. tmp .. "/no/such/dir/p.cu (No such file or directory)",
    cuda.export, tmp .. "/no/such/dir/p.cu")
  assert(os.execute("mkdir '" .. tmp .. "/folder.cu'"))
  checkerr("cuda.export: cannot write " .. tmp .. "/folder.cu (Is a directory)", cuda.export,
    tmp .. "/folder.cu")
end)

test("a FIFO or a link under the name is replaced by the program, never written through",
  function()
  -- a FIFO with no reader would make a plain open wait for ever; a link would carry the
  -- program to wherever it points
  assert(os.execute("cd '" .. tmp .. "' && mkfifo fifo.cu fifo2 && ln -s fifo2 link.cu && " ..
    "echo keep > target && ln -s target to_target.cu"))
  for _, name in ipairs({ "fifo.cu", "link.cu", "to_target.cu" }) do
    local out = cuda.export(tmp .. "/" .. name)
    check(read(out.program):find("written by cuda.export", 1, true), name .. " holds the program")
    check(os.execute("test -f '" .. tmp .. "/" .. name .. "' && ! test -L '" .. tmp .. "/" ..
      name .. "'"), name .. " is a regular file now")
  end
  checkeq(read(tmp .. "/target"), "keep\n", "the link's target is untouched")
  check(os.execute("test -p '" .. tmp .. "/fifo2'"), "the FIFO a link pointed at is still one")
end)

test("a struct passed by value and an array of addresses are refused, naming the launch", function()
  local m = cuda.module[[
struct P { float a; int b; };
__global__ void byval(P p, float *o) { o[0] = p.a + p.b; }
__global__ void gather(float **ps, float *o) { o[0] = ps[0][0]; }]]
  cuda.record(true)
  m.byval[{1, 1}]({a = 1.5, b = 2}, cuda.zeros(1))
  checkerr("cannot export this record: launch 1 (byval): argument 1 (P p) is a struct or " ..
    "vector passed by value", cuda.export, tmp .. "/s.cu")
  cuda.record(true)
  m.gather[{1, 1}](cuda.ptrs{cuda.ones(2)}, cuda.zeros(1))
  checkerr("argument 1 (float **ps) is an array of device addresses (cuda.ptrs)", cuda.export,
    tmp .. "/s.cu")
end)

test("a cooperative launch is written as one, its arguments converted to the kernel's types", function()
  local gs = cuda.kernel[[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void gsum(int *x, int *out, long long n) {
  cg::grid_group g = cg::this_grid();
  for (long long i = g.thread_rank(); i < n; i += g.size()) x[i] += 1;
  g.sync();
  if (g.thread_rank() == 0) { int s = 0; for (long long i = 0; i < n; i++) s += x[i]; *out = s; }
}]]
  cuda.record(true)
  local x, out = cuda.arange(100, "i32"), cuda.zeros(1, "i32")
  gs[{2, 64, cooperative = true}](x, out, 100)
  checkeq(out[0], 5050)
  local r = cuda.export(tmp .. "/coop.cu")
  local prog = read(r.program)
  check(prog:find("\n  CHECK%(launch_cooperative%(gsum, 2, 64, 0, d_%w+, d_%w+, 100LL%)%);\n"),
    "the launch, cooperative, with its configuration and arguments")
  check(prog:find("cudaLaunchCooperativeKernel((const void *)k, grid, block, args + 1, shared, 0)",
    1, true), "the helper launches it cooperatively")
  check(prog:find("std::tuple<P...> params(a...);", 1, true), "converted to the parameters' types")
  check(not prog:find("\n  gsum<<<", 1, true), "no <<<>>> launch, which a grid sync fails in")
end)

test("a launch captured in a graph while recording: the capture works, export says why not", function()
  cuda.record(true)
  local a = cuda.zeros(100)
  inc[{1, 128}](a, 100)
  local g = cuda.graph(function() inc[{1, 128}](a, 100) end)
  g()
  g()
  checkeq(a[0], 3.0)
  checkerr("cannot export this record: launch 2 (inc) was captured in a cuda.graph, which " ..
    "export cannot write yet: record the session's launches without a graph", cuda.export,
    tmp .. "/g.cu")
  check(cuda.record().problem:find("cuda.graph", 1, true), "cuda.record() says so too")
end)

test("__constant__ contents set from Lua, before the record and during it, reach the program", function()
  local m = cuda.module[[
__constant__ float w[3];
__constant__ int shift = 5, other;
__global__ void cw(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * w[i % 3] + shift;
}]]
  m:constant("w", {1, 2, 3})
  cuda.record(true)
  local a = cuda.ones(6)
  m.cw[{1, 32}](a, 6)
  m.cw[{1, 32}](a, 6) -- the same contents: not given again
  m:constant("w", {0.5, 0.5, 0.5})
  m:constant("shift", {-1})
  m.cw[{1, 32}](a, 6)
  -- ones, then a * w + 5 twice ({6, 7, 8}, {11, 19, 29}), then a * 0.5 - 1
  local same, r = cuda.compare(a, {4.5, 8.5, 13.5, 4.5, 8.5, 13.5}, {rtol = 0, atol = 0})
  check(same, tostring(r))
  local prog = read(cuda.export(tmp .. "/const.cu").program)
  checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(w, "), 2)
  checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(shift, "), 2) -- its initializer, then -1
  checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(other, "), 1)
  -- 1, 2, 3 as floats, in the bytes of the first
  check(prog:find("0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40",
    1, true), "w's first contents as bytes")
  local first_set, launch = prog:find("cudaMemcpyToSymbol(w,", 1, true), prog:find("cw<<<", 1, true)
  check(first_set < launch, "set before the first launch")
end)

test("__device__ variables: what the session set between launches reaches the program, what " ..
    "kernels wrote does not", function()
  local m = cuda.module[[
__device__ float scale[2];
__device__ int counter;
__device__ float *where;
__device__ float twice(float x) { return 2 * x; }
__global__ void dv(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = twice(a[i]) * scale[i % 2];
  if (i == 0) { counter += 1; where = a; }
}]]
  m:constant("scale", {1, 2})
  cuda.record(true)
  local a = cuda.ones(4)
  m.dv[{1, 32}](a, 4)
  m.dv[{1, 32}](a, 4) -- counter and where changed by the kernel alone: not given
  m:constant("scale", {0.5, 0.25})
  m.dv[{1, 32}](a, 4)
  -- ones, then 2a * {1, 2} twice ({4, 16}), then 2a * {0.5, 0.25}
  local same, r = cuda.compare(a, {4, 8, 4, 8}, {rtol = 0, atol = 0})
  check(same, tostring(r))
  checkeq(m:constant("counter")[1], 3, "the kernel's own count")
  local prog = read(cuda.export(tmp .. "/dev.cu").program)
  checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(scale, "), 2)
  checkeq(count(prog, "cudaMemcpyToSymbol(counter"), 0)
  checkeq(count(prog, "cudaMemcpyToSymbol(where"), 0)
  checkeq(count(prog, "cudaMemcpyToSymbol(twice"), 0)
  -- 1, 2 as floats, then 0.5, 0.25
  check(prog:find("0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40", 1, true), "scale's first contents")
  check(prog:find("0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0x3e", 1, true), "scale's second contents")
end)

-- The variables the record follows are read by m:constant's own reader: a comment, a string,
-- a macro's text are no variables, a variable in a namespace is named with it, several
-- declarators on a line are each one, a vector is bytes like any other, and a __managed__
-- variable the host changed between launches is carried as a __device__ one is.
local hostile_vars = [[
// __constant__ float gone[4];
/* __device__ int fake; */
#define DECL(n) __constant__ float n[2]
namespace tab { __constant__ int lut[4]; }
__constant__ int lut[2] = {100, 200}, bias = 7;
__constant__ float4 tint;
__managed__ int count;
__managed__ float gain[2] = {1.5f, 0.5f};
__device__ __constant__ short both[2];
__global__ void hv(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("");  // "__device__ int q;"
  if (i < n) a[i] = a[i] * gain[i % 2] + tab::lut[i % 4] + lut[i % 2] + bias + tint.w + both[1];
  if (i == 0) count += 1;
}]]

test("the variables of a source that fools a pattern reader reach the program, each once",
  function()
    local m = cuda.module(hostile_vars)
    m:constant("tab::lut", {1, 2, 3, 4})
    m:constant("tint", {0, 0, 0, 0.5})
    cuda.record(true)
    local a = cuda.ones(8)
    m.hv[{1, 32}](a, 8)
    m:constant("gain", {2, -1})
    m:constant("count", {40})
    m:constant("both", {0, 3})
    m.hv[{1, 32}](a, 8)
    checkeq(m:constant("count")[1], 41, "the kernel counted on from what the host set")
    -- the CPU's reference: a = a * gain + tab::lut + lut + bias + tint.w + both[1], twice
    local want = {}
    for i = 0, 7 do
      local v = 1
      v = v * ({1.5, 0.5})[i % 2 + 1] + ({1, 2, 3, 4})[i % 4 + 1] + ({100, 200})[i % 2 + 1] + 7.5
      v = v * ({2, -1})[i % 2 + 1] + ({1, 2, 3, 4})[i % 4 + 1] + ({100, 200})[i % 2 + 1] + 10.5
      want[i + 1] = v
    end
    local same, r = cuda.compare(a, want, {rtol = 0, atol = 0})
    check(same, tostring(r))
    local prog = read(cuda.export(tmp .. "/hostile.cu").program)
    checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(tab::lut, "), 1, "tab::lut, named so")
    checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(lut, "), 1, "the file-scope lut")
    checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(bias, "), 1, "the second declarator")
    checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(tint, "), 1, "a float4")
    checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(both, "), 2, "zeros, then what was set")
    checkeq(count(prog, "CHECK(cudaMemcpyToSymbol(gain, c"), 2, "its initializer, then {2, -1}")
    check(prog:find("CHECK%(cudaMemcpyToSymbol%(gain, c%d+, sizeof c%d+, 0, cudaMemcpyDefault%)%);"),
      "a __managed__ variable is copied with cudaMemcpyDefault")
    checkeq(count(prog, "cudaMemcpyToSymbol(count, "), 1, "count: the host's 40, not the kernel's 1")
    check(prog:find("0x28, 0x00, 0x00, 0x00", 1, true), "40 as an int's bytes")
    for _, ghost in ipairs{"gone", "fake", "q,", "n,", "made"} do
      checkeq(count(prog, "cudaMemcpyToSymbol(" .. ghost), 0, ghost .. " is no variable")
    end
  end)

test("m:variables lists what m:constant reads, in the source's order", function()
  local m = cuda.module(hostile_vars)
  local got = {}
  for _, v in ipairs(m:variables()) do
    got[#got + 1] = ("%s %s %s%s %s %s"):format(v.space, v.type, v.name, v.array and "[]" or "",
      v.dtype or "-", v.size or "-")
  end
  checkeq(table.concat(got, "; "), "__constant__ int tab::lut[] i32 16; " ..
    "__constant__ int lut[] i32 8; __constant__ int bias i32 4; " ..
    "__constant__ float4 tint f32 16; __managed__ int count i32 4; " ..
    "__managed__ float gain[] f32 8; __constant__ short both[] i16 4")
  m:constant("tint", {1, 2, 3, 4})
  local v = m:variables({contents = true})[4]
  checkeq(v.contents, string.pack("<ffff", 1, 2, 3, 4), "tint's bytes")
  checkeq(v.vector, 4, "four components")
  checkerr("variables: the options must be a table such as {contents = true}, got string",
    m.variables, m, "x")
end)

test("__device__ variable snapshots count against the record's bound", function()
  local m = cuda.module[[
__device__ float big[5 << 20];
__global__ void touch(float *a) { a[0] = big[1]; }]]
  m:constant("big", {0, 1})
  cuda.record(true)
  m.touch[{1, 1}](cuda.zeros(1))
  -- 20 MiB given before the launch and 20 MiB kept to compare the next launch's against, and
  -- the array's 4 bytes twice (uploaded, and its result)
  checkeq(cuda.record().bytes, 40 * 1024 * 1024 + 8, "both counted")
  m.touch[{1, 1}](cuda.zeros(1))
  m:constant("big", {2})
  m.touch[{1, 1}](cuda.zeros(1))
  check(not cuda.record().problem, "60 MiB and some bytes: within the bound")
  m:constant("big", {3}) -- 80 MiB with the snapshot, 60 without it
  m.touch[{1, 1}](cuda.zeros(1))
  checkerr("cannot export this record: the record holds more than 64 MiB of array and variable " ..
    "contents, its bound: record a smaller session (smaller arrays and variables, fewer uploads)",
    cuda.export, tmp .. "/big.cu")
end)

test("a __constant__ of a type export cannot write is refused, naming it and the launch", function()
  local m = cuda.module[[
struct P { float a; int b; };
__constant__ P p;
__global__ void usep(float *o) { o[0] = p.a + p.b; }]]
  cuda.record(true)
  m.usep[{1, 1}](cuda.zeros(1))
  checkerr("cannot export this record: launch 1 (usep): its module's __constant__ p (P) cannot " ..
    "be written in a program yet", cuda.export, tmp .. "/p.cu")
end)

test("two sources defining one extern \"C\" kernel cannot share a program", function()
  local src = 'extern "C" __global__ void twice(int *a) { a[0] += %d; }'
  local k1, k2 = cuda.kernel(src:format(1)), cuda.kernel(src:format(2))
  cuda.record(true)
  local a = cuda.zeros(1, "i32")
  k1[{1, 1}](a)
  k2[{1, 1}](a)
  checkerr("two different sources define the extern \"C\" kernel twice", cuda.export,
    tmp .. "/c.cu")
end)

test("the record is bounded: past its events it stops and export says why", function()
  local recorder = require "export_record"
  cuda.record(true)
  local a = cuda.zeros(1)
  for i = 1, recorder.MAX_EVENTS + 1 do inc[{1, 1}](a, i % 2) end -- alternating: no repeats
  check(cuda.record().problem:find("more than " .. recorder.MAX_EVENTS, 1, true), "problem")
  checkerr("cannot export this record: the record has more than 4096 uploads and launches",
    cuda.export, tmp .. "/b.cu")
  cuda.record(false)
  checkeq(cuda.record().on, false, "stopped")
end)

-- Arrays held by several globals, by a name starting with _, and by a local.
local NAMED_SESSION = [[
inc = cuda.kernel"__global__ void inc(float *a, int n) { if (threadIdx.x < n) a[threadIdx.x]++; }"
cuda.record(true)
x = cuda.rand(3000, "f32", 1)
orig, x0, xin, first, xc, input, _x = x, x, x, x, x, x, x
zb = cuda.ones(10)
za, _a, ones10, y_alias = zb, zb, zb, zb
local l = cuda.arange(5, "f32")
inc[{1, 256}](x, 256)
inc[{1, 32}](za, 10)
inc[{1, 32}](l, 5)
array3 = cuda.zeros(4) -- a global whose d_ name is the one the local's array took
inc[{1, 32}](array3, 4)
]]

test("an array is named after the shortest global holding it, then the first in byte order, " ..
    "a name with _ last; one held by a local is numbered", function()
  local f = assert(load(NAMED_SESSION, "=session", "t", _G))
  f()
  local prog = read(cuda.export(tmp .. "/named.cu").program)
  local calls = {}
  for c in prog:gmatch("\n  (inc<<<[^\n]*)") do calls[#calls + 1] = c end
  checkeq(table.concat(calls, " "), "inc<<<1, 256>>>(d_x, 256); inc<<<1, 32>>>(d_za, 10); " ..
    "inc<<<1, 32>>>(d_array3, 5); inc<<<1, 32>>>(d_array3_4, 4);", "the launches' arrays")
  for _, k in ipairs({ "inc", "x", "orig", "x0", "xin", "first", "xc", "input", "_x", "zb", "za",
    "_a", "ones10", "y_alias", "array3" }) do _G[k] = nil end
end)

test("one session typed in two processes exports the same program, byte for byte", function()
  -- Lua's hash seed differs from process to process, and with it the order in which a
  -- traversal of _G finds the several names of one array.
  local outs = {}
  for run = 1, 2 do
    local d = tmp .. "/proc" .. run
    assert(os.execute("mkdir -p '" .. d .. "'"))
    local f = assert(io.open(d .. "/session.lua", "w"))
    f:write(NAMED_SESSION, ("cuda.export(%q)\n"):format(d .. "/named.cu"))
    f:close()
    local p = io.popen(("XDG_CACHE_HOME='%s/cache' %s --backend %s '%s/session.lua' 2>&1")
      :format(d, T.self_command(), cuda.backend(), d))
    local said = p:read("a")
    p:close()
    local prog = io.open(d .. "/named.cu", "rb")
    check(prog, "run " .. run .. " wrote its program: " .. said)
    outs[run] = { prog = prog and prog:read("a"), data = read(d .. "/named.data") }
    if prog then prog:close() end
  end
  check(outs[1].prog and outs[1].prog == outs[2].prog, "the same program")
  check(outs[1].data == outs[2].data, "the same data file")
  check(outs[1].prog:find("\n  inc<<<1, 256>>>(d_x, 256);", 1, true), "x")
  check(outs[1].prog:find("\n  inc<<<1, 32>>>(d_za, 10);", 1, true), "zb, named za")
end)

test("the record as a check reads it: arrays by number with what they held, scalars' values",
    function()
  local recorder = require "export_record"
  local flag = cuda.kernel[[
__global__ void flag(int *a, int v, bool on, double s, int *none) { a[0] = on ? v : (int)s; }]]
  cuda.record(true)
  local a, b = cuda.array({5, 6}, "i32"), cuda.ones(3)
  flag[{1, 1}](a, -7, true, 2.5, nil)
  inc[{1, 32}](b, 3)
  inc[{1, 32}](b, 3)
  local r = recorder.read()
  checkeq(r.launched, 3, "launches with repetitions")
  checkeq(#r.launches, 2, "distinct launches")
  checkeq(#r.arrays, 2, "arrays")
  local l1 = r.launches[1]
  checkeq(l1.name, "flag", "name")
  checkeq(l1.grid.x * l1.block.x, 1, "configuration")
  checkeq(l1.args[1].array, 1, "a is array 1")
  checkeq(l1.args[2].value, -7, "an int")
  checkeq(l1.args[3].value, true, "a bool")
  checkeq(l1.args[4].value, 2.5, "a double")
  checkeq(l1.args[5].null, true, "a null pointer")
  checkeq(r.launches[2].reps, 2, "repetitions")
  checkeq(r.launches[2].args[1].array, 2, "b is array 2")
  checkeq(r.arrays[1].given, string.pack("<i4<i4", 5, 6), "a's contents before")
  checkeq(r.arrays[1].last, string.pack("<i4<i4", -7, 6), "a's contents after")
  checkeq(r.arrays[2].n, 3, "b's size")
  checkeq(r.arrays[2].given, string.pack("<f", 1):rep(3), "b's contents before")
  checkeq(r.arrays[2].last, string.pack("<f", 3):rep(3), "b's contents after")
  r.arrays[1].given = "changed"
  checkeq(recorder.read().arrays[1].given, string.pack("<i4<i4", 5, 6), "a copy")
end)

os.execute("rm -rf '" .. tmp .. "'")
return T.done()
