-- kernels.lua: compiling with NVRTC and checking launches before anything runs. Needs no GPU:
-- every check here fails before the backend is asked to launch.
local T = dofile("tests/lua/testlib.lua")
T.plan(16)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local bench = require "cudalab_bench" -- benchmark hooks, not part of cuda

local INC = [[
__global__ void inc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
]]

test("compile: kernel object, PTX, info", function()
  local k = cuda.kernel(INC)
  checkeq(k.name, "inc")
  check(tostring(k):find("cuda.Kernel inc(float *a, int n)", 1, true), tostring(k))
  check(k:ptx():find(".entry _Z3incPfi", 1, true), "PTX holds the mangled entry")
  local info = k:info()
  check(info.registers > 0 and info.registers < 64, "registers reported")
  checkeq(info.max_threads_per_block, 1024)
  checkeq(info.params[1], "float *a"); checkeq(info.params[2], "int n")
end)

test("spill bytes: in k:info(), printed by it, and named in the occupancy explanation", function()
  -- one body, two launch bounds: 48 live floats fit one block of 256 per SM, and spill when
  -- eight must fit (the timing model's effect set uses the same kernel)
  local spill48 = dofile("bench/model/spill48.lua")
  local roomy, tight = cuda.kernel(spill48.source(1, "roomy")), cuda.kernel(spill48.source(8, "tight"))
  local r, t = roomy:info(), tight:info()
  checkeq(r.spill_bytes, 0, "registers enough: nothing spilled")
  checkeq(r.spill_load_bytes, 0)
  check(t.spill_bytes > 0 and t.spill_load_bytes > 0, "8 blocks of 256: spills, " .. tostring(t.spill_bytes))
  check(t.registers <= 32 and t.registers < r.registers, t.registers .. " against " .. r.registers)
  check(t.local_bytes > 0, "spills live in local memory")
  local want = string.format("spills    %s", require("format").bytes(t.spill_bytes))
  check(tostring(t):find(want .. "%s+spill stores to local memory, " ..
    require("format").bytes(t.spill_load_bytes):gsub("%.", "%%.") .. " of loads back"), tostring(t))
  check(tostring(r):find("spills    0 B%s+nothing spilled"), tostring(r))
  local o = cuda.occupancy(tight, 256)
  checkeq(o.spill_bytes, t.spill_bytes)
  local text = tostring(o)
  check(text:find("\nSpills: at " .. t.registers .. " registers per thread ptxas moved values",
    1, true), text)
  check(text:find("k:info().spill_bytes", 1, true), text)
  check(not tostring(cuda.occupancy(roomy, 256)):find("Spills", 1, true), "no spills, no line")
end)

test("the device is named for what it is: simulated on the simulator, wherever it shows", function()
  local be, name = cuda.backend(), cuda.device().name
  if be == "sim" then
    checkeq(name, "NVIDIA H200 (simulated)")
  elseif be == "none" then
    checkeq(name, "NVIDIA H200 (modelled)")
  else
    check(not name:find("simulated", 1, true), name)
  end
  check(tostring(cuda.device()):sub(1, #name + 2) == name .. "  ", tostring(cuda.device()))
  local k = cuda.kernel(INC)
  checkerr("over the limit of 1024 threads per block on " .. name, function()
    k[{1, 2048}](cuda.zeros(4), 4)
  end)
  if be == "sim" then
    local a = cuda.zeros(1000)
    local t = cuda.time(function() k[{4, 256}](a, #a) end)
    checkeq(t.device, name, "a modelled timing names the simulated device")
    check(tostring(t):find("modelled H200 time", 1, true), tostring(t))
    checkeq(a[999], 1, "the launch ran")
  end
end)

test("k:occupancy checks its arguments and answers only where the CUDA runtime is", function()
  local k = cuda.kernel(INC)
  checkerr("threads per block must be at least 1", k.occupancy, k, 0)
  checkerr("shared memory must be a byte count", k.occupancy, k, 32, -1)
  if cuda.backend() ~= "cuda" then checkeq(k:occupancy(256), nil) end
end)

test("options reach NVRTC", function()
  local k = cuda.kernel("__global__ void k(float *a) { a[0] = N; }", {"-DN=42"})
  check(k:ptx():find("1109917696", 1, true) or k:ptx():find("0f42280000", 1, true), "N was defined")
  checkerr("compile error", cuda.kernel, "__global__ void k(float *a) { a[0] = N; }")
  checkerr("compiler option 1 must be a string", cuda.kernel, INC, {42})
  local many = {}
  for i = 1, 48 do many[i] = "-DX" .. i end
  check(cuda.kernel(INC, many), "48 options: the most a module takes")
  many[49] = "-DX49"
  checkerr("too many compiler options (at most 48)", cuda.kernel, INC, many)
  checkerr("too many compiler options (at most 48)", cuda.kernel, INC, {options = many})
end)

test("a module with several kernels; extern C and templates", function()
  local m = cuda.module([[
extern "C" __global__ void one(int *a) { a[0] = 1; }
__global__ void two(double *a, double x) { a[0] = x; }
template <typename T> __global__ void tmpl(T *a) { a[0] = 0; }
]])
  local names = m:kernels()
  checkeq(#names, 2); checkeq(names[1], "one"); checkeq(names[2], "two")
  checkeq(m.one.name, "one")
  check(m:ptx():find(".entry one(", 1, true), "extern C name kept")
  checkerr("no kernel named 'three'", function() return m.three end)
  checkerr("this source defines 2 kernels (", cuda.kernel, "__global__ void a(){}\n__global__ void b(){}")
  checkeq(cuda.kernel("__global__ void a(){}\n__global__ void b(){}", {name = "b"}).name, "b")
  checkerr("no __global__ function found", cuda.kernel, "__device__ int f() { return 1; }")
end)

test("a kernel the compiler does not see (#if 0) is skipped, not an error", function()
  local k = cuda.kernel("#if 0\n__global__ void ghost(int *a) {}\n#endif\n__global__ void real(int *a) { a[0] = 1; }")
  checkeq(k.name, "real")
  checkerr("no kernel found in kernel.cu", cuda.kernel, "#if 0\n__global__ void ghost(int *a) {}\n#endif\n")
end)

test("compile errors quote the learner's line with a caret", function()
  local ok, err = pcall(cuda.kernel, "__global__ void k(float *a) {\n  a[0] = undefined_name;\n}\n")
  check(not ok)
  check(err:find("kernel.cu:2: error: identifier \"undefined_name\" is undefined", 1, true), err)
  check(err:find("a[0] = undefined_name;", 1, true), "quotes the line: " .. err)
  check(err:find("\n%s*%^"), "has a caret: " .. err)
  check(not err:find("/tmp", 1, true), "no temporary file name")
end)

test("kernel files are found in kernels/", function()
  local k = cuda.kernel("vector_add.cu")
  checkeq(k.name, "vector_add")
  checkerr("kernel file 'nope.cu' not found", cuda.kernel, "nope.cu")
end)

test("launch configuration errors", function()
  local k = cuda.kernel(INC)
  local a = cuda.array(10)
  checkerr("a block of 2048 threads (2048 x 1 x 1) is over the limit of 1024 threads per block", k[{1, 2048}], a, 10)
  checkerr("a block of 2048 threads (64 x 32 x 1)", k[{1, {64, 32}}], a, 10)
  checkerr("block.z = 65 is over the limit of 64", k[{1, {1, 1, 65}}], a, 10)
  checkerr("grid.y = 65536 is over the limit of 65535", k[{{1, 65536}, 32}], a, 10)
  checkerr("grid.x must be a whole number of at least 1, got 0", function() return k[{0, 32}] end)
  checkerr("block must be a number or {x, y, z}, got string", function() return k[{1, "x"}] end)
  -- a name that holds nothing ({g, g, 1} with g a local of an earlier line) is no 1
  checkerr("grid.x is nil but grid.z is given: each of {x, y, z} up to the last must be a number",
           function() return k[{{undefined_g, undefined_g, 1}, 32}] end)
  checkerr("block.x is nil but block.y is given", function() return k[{1, {nil, 32}}] end)
  checkerr("grid is an empty table: give {x}, {x, y} or {x, y, z}",
           function() return k[{{}, 32}] end)
  if cuda.backend() ~= "none" then -- nothing launches there
    k[{{2, nil}, {5, nil, nil}}](a, 10) -- missing at the end: 1
    checkeq(a[0] + a[9], 2, "{2, nil} and {5, nil, nil} run all ten threads")
  end
  checkerr("a launch configuration is {grid, block}", function() return k[{1}] end)
  checkerr("needs a launch configuration", k, a, 10)
  checkerr("bytes of shared memory per block (0 static + 300000 dynamic)", k[{1, 32, shared = 300000}], a, 10)
end)

test("argument errors name the parameter", function()
  local k = cuda.kernel(INC)
  local a = cuda.array(10)
  checkerr("inc(float *a, int n) takes 2 arguments, got 1", k[{1, 32}], a)
  checkerr("inc(float *a, int n) takes 2 arguments, got 3", k[{1, 32}], a, 1, 2)
  checkerr("argument 1 (float *a): got cuda.Array<i32>[10], but the kernel expects an array of f32", k[{1, 32}], cuda.array(10, "i32"), 10)
  checkerr("argument 1 (float *a): expected a cuda.Array, got number", k[{1, 32}], 5, 10)
  checkerr("which is in host memory", k[{1, 32}], cuda.host(10), 10)
  checkerr("argument 2 (int n): expected an integer, got 2.5", k[{1, 32}], a, 2.5)
  checkerr("argument 2 (int n): 8589934592 does not fit in 32 bits", k[{1, 32}], a, 1 << 33)
  local f = cuda.array(1); f:free()
  checkerr("argument 1 (float *a): cuda.Array<f32>[1] has been freed", k[{1, 32}], f, 1)
  local d = cuda.kernel("__global__ void d(double *o, double x) { o[0] = x; }")
  checkerr("argument 2 (double x): expected a number, got string", d[{1, 1}], cuda.array(1, "f64"), "x")
end)

test("launch objects are functions; a tampered one is refused, not followed", function()
  local k = cuda.kernel(INC)
  local l = k[{1, 32}]
  checkeq(type(l), "function")
  local record = select(2, debug.getupvalue(l, 1))
  checkerr("argument 1 (float *a): expected a cuda.Array, got userdata", l, record, 1)
  for _, forged in ipairs({cuda.array(10), 42, "x", io.stdout, setmetatable({}, {})}) do
    local t = k[{1, 32}]
    debug.setupvalue(t, 1, forged)
    checkerr("this launch object has been tampered with", t, cuda.array(10), 10)
    checkerr("bad argument #1 to 'cudalab_bench.c_launch_loop' (launch object k[{grid, block}] expected", bench.c_launch_loop, t, 1, cuda.array(10), 10)
  end
  -- A launch record moved to another launch object still works: it is a real one.
  local moved = k[{1, 32}]
  debug.setupvalue(moved, 1, record)
  checkerr("inc(float *a, int n) takes 2 arguments, got 0", moved)
end)

test("k[cfg] hands out the kernel's last launch object again for the same configuration", function()
  local k = cuda.kernel(INC)
  local l = k[{1, 32}]
  check(k[{1, 32}] == l, "same grid and block: the same object")
  check(k[{1, {32, 1, 1}}] == l, "{32, 1, 1} is the same block as 32")
  check(k[{1, 32, shared = 16}] ~= l, "other shared memory: a new object")
  check(k[{2, 32}] ~= k[{1, 32, shared = 16}], "other grid: a new object")
  local big = k[{1, 2048}]
  checkerr("over the limit of 1024 threads per block", big, cuda.array(10), 10)
  check(k[{1, 2048}] == big, "reused after a failed check")
  checkerr("over the limit of 1024 threads per block", k[{1, 2048}], cuda.array(10), 10)
  local other = cuda.kernel(INC)
  check(other[{1, 2048}] ~= big, "each kernel keeps its own")
  debug.setuservalue(k, print, 2) -- tampering with what the kernel keeps is noticed, not followed
  check(k[{1, 2048}] ~= big, "a new object after tampering")
  checkerr("over the limit of 1024 threads per block", k[{1, 2048}], cuda.array(10), 10)
end)

test("cudalab_bench.c_launch_loop checks what a launch checks, and its count; it is not part of cuda", function()
  checkeq(cuda.c_launch_loop, nil, "benchmark hooks stay out of the cuda module")
  checkeq(package.loaded.cudalab_bench, bench, "require gives the one module")
  local k = cuda.kernel(INC)
  local a = cuda.array(10)
  checkerr("bad argument #1 to 'cudalab_bench.c_launch_loop' (launch object k[{grid, block}] expected, got function)", bench.c_launch_loop, print, 1, a, 10)
  checkerr("launch object k[{grid, block}] expected, got no value", bench.c_launch_loop)
  checkerr("launch object k[{grid, block}] expected, got cudalab.Array", bench.c_launch_loop, a, 1)
  checkerr("bad argument #2 to 'cudalab_bench.c_launch_loop' (number expected, got no value)", bench.c_launch_loop, k[{1, 32}])
  checkerr("number has no integer representation", bench.c_launch_loop, k[{1, 32}], 1.5, a, 10)
  checkerr("the number of launches must be 0 to 1e9", bench.c_launch_loop, k[{1, 32}], -1, a, 10)
  checkerr("the number of launches must be 0 to 1e9", bench.c_launch_loop, k[{1, 32}], 1 << 40, a, 10)
  checkerr("inc(float *a, int n) takes 2 arguments, got 1", bench.c_launch_loop, k[{1, 32}], 1, a)
  checkerr("argument 2 (int n): expected an integer, got 2.5", bench.c_launch_loop, k[{1, 32}], 1, a, 2.5)
  checkerr("a block of 2048 threads (2048 x 1 x 1) is over the limit", bench.c_launch_loop, k[{1, 2048}], 1, a, 10)
  checkerr("bad argument #1 to 'cudalab_bench.c_launch_loop' (invalid option 'cuLaunch')", bench.c_launch_loop, "cuLaunch", k[{1, 32}], 1, a, 10)
  checkerr("bad argument #2 to 'cudalab_bench.c_launch_loop' (launch object k[{grid, block}] expected, got number)", bench.c_launch_loop, "cuLaunchKernel", 1, 1, a, 10)
  checkerr("bad argument #3 to 'cudalab_bench.c_launch_loop' (the number of launches must be 0 to 1e9)", bench.c_launch_loop, "cudaLaunchKernel", k[{1, 32}], -5, a, 10)
  checkerr("inc(float *a, int n) takes 2 arguments, got 3", bench.c_launch_loop, "cuLaunchKernel", k[{1, 32}], 1, a, 10, 11)
  bench.c_launch_loop(k[{1, 32}], 0, a, 10) -- nothing to run: fine on every backend
  bench.c_launch_loop("cuLaunchKernel", k[{1, 32}], 0, a, 10)
  if cuda.backend() == "none" then
    checkerr("no GPU", bench.c_launch_loop, k[{1, 32}], 3, a, 10)
  end
end)

test("too many registers for the block", function()
  -- A kernel that keeps many values live needs many registers; __maxnreg__ lets ptxas use up
  -- to 255, so 1024 threads cannot fit. (__launch_bounds__(64) would do the same, but then the
  -- launch is refused for its bound first.)
  local k = cuda.kernel([[
__global__ void __maxnreg__(255) heavy(double *a) {
  double v[64];
  #pragma unroll
  for (int j = 0; j < 64; j++) v[j] = a[threadIdx.x + j] * j;
  double s = 0;
  #pragma unroll
  for (int j = 0; j < 64; j++) s += v[j] * v[63 - j] + v[(j * 7) % 64];
  a[threadIdx.x] = s;
}
]])
  local regs = k:info().registers
  check(regs > 64, "uses many registers: " .. regs)
  checkerr("registers per thread: a block of 1024 threads needs", k[{1, 1024}], cuda.array(2048, "f64"))
end)

test("the launch log: what ran, on which arrays, and it keeps nothing alive", function()
  checkerr("bad argument #1 to 'cuda.launches' (true (start logging, emptied) or false (stop) expected, got string)",
    cuda.launches, "yes")
  if cuda.backend() == "none" then return end -- nothing launches there
  local k = cuda.kernel "inc.cu"
  local a = cuda.zeros(100)
  cuda.launches(false)
  k[{1, 128}](a, 100)
  checkeq(#cuda.launches(), 0, "nothing is logged while the log is off")
  cuda.launches(true)
  k[{1, 128}](a, 100)
  k[{{2, 1, 1}, {64, 1, 1}}](a, 50)
  local l = cuda.launches()
  checkeq(#l, 2, "two launches logged")
  checkeq(l[1].name, "inc", "the kernel's name")
  check(rawequal(l[1].kernel, k) and rawequal(l[1].args[1], a), "the kernel and the array themselves")
  checkeq(l[2].args[2], 50, "a value argument")
  checkeq(l[2].grid.x * 1000 + l[2].block.x, 2064, "grid and block")
  checkeq(l[1].n, 2, "the argument count")
  if cuda.backend() == "sim" then
    checkerr("index 100 of f32[100]", k[{1, 128}], a, 101)
    checkeq(#cuda.launches(), 2, "a launch that failed is not logged")
  end
  for i = 1, 300 do k[{1, 32}](a, i % 32) end
  l = cuda.launches()
  checkeq(#l, 256, "the ring holds the last 256")
  checkeq(l.dropped, 46, "and counts the ones it dropped")
  checkeq(l[256].args[2], 300 % 32, "the newest is last")
  l, a = nil, nil
  collectgarbage(); collectgarbage()
  checkeq(cuda.launches()[1].args[1], nil, "a collected array is not kept alive by the log")
  cuda.launches(false)
  checkeq(#cuda.launches(), 0, "turning it off empties it")
end)

return T.done()
