-- debugger.lua: k:debug's checks before anything runs, on every backend: the launch
-- configuration and the arguments are checked as a launch checks them; the none backend, which
-- runs nothing, says so; and with no input at all the debugger quits and leaves the arrays as
-- they were; commands = {...} given in place of typing, and refused when they are not lines. On
-- the simulator: the module's __constant__ and __device__ variables, which the -G build takes
-- from the kernel's module and gives back; the check of the plain build, which no watch, counter
-- or modelled clock sees; a cooperative launch's grid sync. The debugging at a console is
-- tests/debugger.sh's (it needs a console to type into).
local T = dofile("tests/lua/testlib.lua")
T.plan(14)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

local INC = [[
__global__ void inc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
]]
local k = cuda.kernel(INC)
local a = cuda.full(64, 5)

test("k:debug needs a launch configuration", function()
  checkerr("k:debug needs a launch configuration, as a launch does: "
    .. "k:debug{blocks, threads}(args...)", k.debug, k, 2)
  checkerr("k:debug needs a launch configuration", k.debug, k)
end)

test("a bad configuration is named as a launch names it", function()
  checkerr("grid.x must be a whole number of at least 1, got 0", k.debug, k, { 0, 32 })
  checkerr("a launch configuration is {grid, block}", k.debug, k, { 2 })
end)

test("arguments are checked before anything runs", function()
  local go = k:debug{ 1, 64 }
  if cuda.backend() == "none" then -- where nothing runs, that comes first
    return checkerr("the none backend runs nothing", go, a)
  end
  checkerr("inc(float *a, int n) takes 2 arguments, got 1", go, a)
  checkerr("argument 1 (float *a): expected a cuda.Array, got number", go, 1, 64)
end)

test("the none backend runs nothing to debug, and says what to do", function()
  if cuda.backend() ~= "none" then
    check(k.debug, "k:debug is a method of kernels")
    return
  end
  checkerr("k:debug runs the kernel, and the none backend runs nothing (it only compiles and "
    .. "checks launches): cuda.use(\"sim\")", k:debug{ 1, 64 }, a, 64)
end)

-- Standard input is tests/run.sh's /dev/null: the debugger's first prompt reads its end.
if cuda.backend() == "none" or os.execute("test -t 0") then
  T.skip("with no input the debugger quits", "needs the simulator and input that is not a terminal")
else
  test("with no input the debugger quits, and the array is as it was", function()
    k:debug{ 1, 64 }(a, 64)
    checkeq(a[0], 5.0)
    checkeq(a[63], 5.0)
  end)
end

test("commands that are not lines of text are refused before anything runs", function()
  checkerr("commands must be a table of the lines to type at the debugger's prompt, got string",
    k.debug, k, { 1, 64, commands = "continue" })
  checkerr("commands[2] must be a string (a line typed at the prompt), got number", k.debug, k,
    { 1, 64, commands = { "break 3", 4 } })
  checkerr("commands[1] holds a line break: give each line as a string of its own", k.debug, k,
    { 1, 64, commands = { "break 3\ncontinue" } })
  local many = {}
  for i = 1, 1001 do many[i] = "where" end
  checkerr("commands has 1001 lines; at most 1000", k.debug, k, { 1, 64, commands = many })
end)

if cuda.backend() == "none" then
  T.skip("commands are read in place of the console's", "needs the simulator")
  T.skip("the end of the commands quits", "needs the simulator")
  T.skip("the -G build sees __constant__ values", "needs the simulator")
  T.skip("a __device__ variable goes to the -G build and back", "needs the simulator")
  T.skip("the check of the plain build reaches no watch", "needs the simulator")
  T.skip("a cooperative launch's grid sync works under the debugger", "needs the simulator")
  T.skip("a device function of an #include'd header is shown with its own file", "needs the simulator")
  T.skip("recursion: bt lists every activation", "needs the simulator")
else
  test("commands are read in place of the console's, each shown as typed", function()
    local dbg = require "debugger"
    local said, out = {}, dbg.out
    dbg.out = function(text) said[#said + 1] = text end
    local b = cuda.full(64, 5)
    local cmds = { "break 3 if i == 37", "continue", "print i", "print a[i]@2", "continue" }
    local ok, err = pcall(function() k:debug{ 1, 64, commands = cmds }(b, 64) end)
    dbg.out = out
    check(ok, tostring(err))
    local text = table.concat(said, "\n")
    check(text:find("(cuda-debug) print i\ni = 37", 1, true), text)
    check(text:find("(cuda-debug) print a[i]@2\n", 1, true), text)
    check(text:find("{5, 5}", 1, true), text)
    check(text:find("has finished", 1, true), text)
    checkeq(b[0], 6.0) -- the launch ran to the end, as an ordinary launch does
    checkeq(b[63], 6.0)
    checkeq(cmds[1], "break 3 if i == 37") -- the learner's table is read, not changed
  end)

  -- The lines the debugger says while f runs, as one text; f's error is raised after.
  local function said_by(f)
    local dbg = require "debugger"
    local said, out = {}, dbg.out
    dbg.out = function(text) said[#said + 1] = text end
    local ok, err = pcall(f)
    dbg.out = out
    check(ok, tostring(err))
    return table.concat(said, "\n")
  end

  test("the -G build sees __constant__ values set with k:constant, and print reads them", function()
    local kc = cuda.kernel([[
__constant__ float coef[4];
__constant__ float shift[2] = {0.5f, 0.25f};
__global__ void sc(const float *x, float *out) {
  int t = threadIdx.x;
  out[t] = x[t] * coef[t % 4] + shift[t % 2];
}
]])
    local coef = { 1.5, 2, 3, 4 }
    kc:constant("coef", coef)
    local x, o = cuda.arange(32, "f32"), cuda.zeros(32)
    local text = said_by(function()
      kc:debug{ 1, 32, commands = { "break 5 if t == 3", "continue", "print coef[3]",
                                     "print x[t] * coef[t % 4]", "print coef", "print shift",
                                     "continue" } }(x, o)
    end)
    check(text:find("coef[3] = 4\n", 1, true), text)
    check(text:find("x[t] * coef[t % 4] = 12\n", 1, true), text)
    check(text:find("coef = {1.5, 2, 3, 4}", 1, true), text)
    check(text:find("shift = {0.5, 0.25}", 1, true), text) -- declared with its values
    local got = o:tolist()
    for t = 0, 31 do
      checkeq(got[t + 1], t * coef[t % 4 + 1] + ({ 0.5, 0.25 })[t % 2 + 1], "out[" .. t .. "]")
    end
  end)

  test("a __device__ variable: the debugged launch starts from what the module holds and "
    .. "leaves what it wrote there, once", function()
    local kd = cuda.kernel([[
__device__ int hits;
__device__ int table[4];
__global__ void count(int *o) {
  int before = atomicAdd(&hits, 1);
  o[threadIdx.x] = table[threadIdx.x % 4] + (before >= 10 ? 1000 : 0);
}
]])
    kd:constant("hits", { 10 })
    kd:constant("table", { 7, 8, 9, 10 })
    local o = cuda.zeros(32, "i32")
    local text = said_by(function()
      kd:debug{ 1, 32, commands = { "break 5", "continue", "print table[2]", "delete",
                                     "continue" } }(o)
    end)
    check(text:find("table[2] = 9\n", 1, true), text)
    checkeq(kd:constant("hits")[1], 42, "hits: 10, and one for each of the 32 threads, once")
    local got = o:tolist()
    for t = 0, 31 do checkeq(got[t + 1], ({ 7, 8, 9, 10 })[t % 4 + 1] + 1000, "o[" .. t .. "]") end
    kd[{ 1, 32 }](o) -- an ordinary launch goes on from there
    checkeq(kd:constant("hits")[1], 74)
  end)

  test("the check of the plain build reaches no watch, counter or launch log", function()
    local inc = cuda.kernel("__global__ void inc(int *a) { a[threadIdx.x] += 5; }")
    local other = cuda.kernel("__global__ void other(float *a) { a[threadIdx.x] *= 2.0f; }")
    local a, f = cuda.zeros(32, "i32"), cuda.zeros(256)
    other[{ 1, 256 }](f)
    local before = cuda.stats()
    local w = cuda.watch(a, 3)
    cuda.launches(true)
    said_by(function() inc:debug{ 1, 32, commands = { "continue" } }(a) end)
    local log = cuda.launches()
    cuda.launches(false)
    checkeq(w.count, 1, "the watch records the debugged launch's write alone")
    checkeq(w.writes[1].old, 0)
    checkeq(w.writes[1].new, 5)
    checkeq(a[3], 5)
    checkeq(#log, 0, "no launch of the check in cuda.launches")
    local after = cuda.stats()
    checkeq(after.warp_insts, before.warp_insts, "cuda.stats() still the last ordinary launch's")
    checkeq(after.thread_insts, before.thread_insts)
    w:close()
  end)

  test("a cooperative launch's grid sync works under the debugger", function()
    local gs = cuda.kernel([[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void gs(int *data, int *out) {
  cg::grid_group g = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  data[i] = i * 3;
  g.sync();
  out[i] = data[(i + blockDim.x) % (gridDim.x * blockDim.x)];
}
]])
    local d, o = cuda.zeros(128, "i32"), cuda.zeros(128, "i32")
    local text = said_by(function()
      gs:debug{ 4, 32, cooperative = true,
                commands = { "break 8 if i == 5", "continue", "print out[i]", "continue" } }(d, o)
    end)
    check(text:find("has finished", 1, true), text)
    check(not text:find("trap", 1, true), text)
    local got = o:tolist()
    for i = 0, 127 do checkeq(got[i + 1], ((i + 32) % 128) * 3, "out[" .. i .. "]") end
  end)

  test("a device function of an #include'd header is shown with its own file and lines",
    function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("// a header\n// line 2\n// line 3\n__device__ int hscale(int v)\n{\n"
      .. "  int q = v * 7;\n  return q + 1;\n}\n")
    f:close()
    local name = path:match("([^/]+)$")
    local kh = cuda.kernel(([[
#include "%s"
__global__ void hk(int *out) {
  int t = threadIdx.x;
  int a = hscale(t);
  out[t] = a;
}
]]):format(path))
    local o = cuda.zeros(32, "i32")
    local text = said_by(function()
      kh:debug{ 1, 32, commands = { "break 4", "continue", "step", "bt", "list", "where",
                                     "finish", "continue" } }(o)
    end)
    os.remove(path)
    check(text:find("Line 6 of " .. name .. " in hscale:", 1, true), text)
    check(text:find("\n   6 |   int q = v * 7;\n", 1, true), text)
    check(text:find("#0  hscale at line 6 of " .. name, 1, true), text)
    check(text:find("#1  hk (the kernel) at line 4 of kernel.cu", 1, true), text)
    check(text:find("\n=>   6 |   int q = v * 7;\n", 1, true), text) -- list: the header's lines
    check(text:find(name .. ":6 ", 1, true), text) -- where
    check(not text:find("out[t] = a;\n   6", 1, true), text)
    local got = o:tolist()
    for t = 0, 31 do checkeq(got[t + 1], t * 7 + 1, "out[" .. t .. "]") end
  end)

  test("recursion: bt lists every activation, up reads an outer one's variables, finish "
    .. "returns to the caller's activation", function()
    local kr = cuda.kernel([[
__device__ int fact(int n) {
  int a[2] = {n, n * 10};
  if (n <= 1)
    return 1;
  int r = n * fact(n - 1) + a[1] - a[0] * 10;
  return r;
}
__global__ void rec(int *out) {
  int t = threadIdx.x;
  out[t] = fact(t % 6 + 1);
}
]])
    local o = cuda.zeros(32, "i32")
    local text = said_by(function()
      kr:debug{ 1, 32, commands = {
        "break 5 if n == 3 && threadIdx.x == 3", "continue", "bt", "print n", "print a",
        "up", "print n", "print a", "up", "print t", "up", "down", "down", "delete",
        "finish", "print n", "next", "print r", "finish", "bt", "continue" } }(o)
    end)
    local function has(s) check(text:find(s, 1, true), s .. " in:\n" .. text) end
    has("#0  fact at line 5 of kernel.cu  <- selected\n#1  fact at line 5 of kernel.cu\n"
      .. "#2  rec (the kernel) at line 10 of kernel.cu\n")
    has("(cuda-debug) print n\nn = 3\n(cuda-debug) print a\na = {3, 30}\n")
    has("(cuda-debug) print n\nn = 4\n(cuda-debug) print a\na = {4, 40}\n")
    has("(cuda-debug) print t\nt = 3\n")
    has("up: frame #2 is the kernel, the outermost")
    has("Run till exit from #0  fact at line 5 of kernel.cu\nLine 5 in fact:")
    has("(cuda-debug) print r\nr = 24\n")
    has("(cuda-debug) bt\nCalls of thread (3,0,0), block (0,0,0), innermost first:\n"
      .. "#0  rec (the kernel) at line 10 of kernel.cu")
    local function fact(n) return n <= 1 and 1 or n * fact(n - 1) end
    local got = o:tolist()
    for t = 0, 31 do checkeq(got[t + 1], fact(t % 6 + 1), "out[" .. t .. "]") end
  end)

  test("the end of the commands quits, as the end of input does", function()
    local dbg = require "debugger"
    local said, out = {}, dbg.out
    dbg.out = function(text) said[#said + 1] = text end
    local b = cuda.full(64, 5)
    local ok, err = pcall(function() k:debug{ 1, 64, commands = {} }(b, 64) end)
    dbg.out = out
    check(ok, tostring(err))
    check(table.concat(said, "\n"):find("quit (end of input)", 1, true), table.concat(said, "\n"))
    checkeq(b[0], 5.0)
  end)
end

return T.done()
