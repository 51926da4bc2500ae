-- kernel_names.lua: kernels are found by the names their source gives them, with no limit built
-- into cudalab: as many parameters as CUDA passes (32,764 bytes), as many kernels as the source
-- defines, names of any length, and the C++ forms NVRTC's name expressions take: "ns::k" in a
-- namespace, "k<int>" for an instantiation, "k(float *)" for one of several overloads; kernels
-- a macro makes, which the source never spells out, by their compiled names. Runs on every
-- backend; the kernels run where the backend runs them (the simulator, a GPU).
local T = dofile("tests/lua/testlib.lua")
T.plan(16)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local RUNS = cuda.backend() ~= "none"

-- A kernel of n parameters: float *p0 .. float *p(n-2), then int n; it writes 1 + its index
-- through the last pointer.
local function many_pointers(n)
  local ps = {}
  for i = 0, n - 2 do ps[#ps + 1] = "float *p" .. i end
  return "__global__ void many(" .. table.concat(ps, ", ") .. ", int n) { p" .. (n - 2) ..
    "[0] = n + 1; }"
end

test("300 parameters keep their names and dtype checks (they stopped at 32)", function()
  local k = cuda.kernel(many_pointers(300))
  local info = k:info()
  checkeq(#info.params, 300)
  checkeq(info.params[299], "float *p298")
  checkeq(info.params[300], "int n")
  local args = {}
  for i = 1, 299 do args[i] = cuda.array(1) end
  args[300] = 41
  args[240] = cuda.array(1, "i32")
  checkerr("argument 240 (float *p239): got cuda.Array<i32>[1], but the kernel expects an array of f32",
    k[{1, 1}], table.unpack(args))
  args[240] = cuda.array(1)
  local ok, err = pcall(k[{1, 1}], table.unpack(args, 1, 299))
  check(not ok and err:find("many(float *p0, float *p1", 1, true) and
    err:find("...) takes 300 arguments, got 299", 1, true), err)
  if RUNS then
    k[{1, 1}](table.unpack(args))
    checkeq(args[299][0], 42.0, "written through the last pointer")
  end
end)

test("over 4 KiB of parameters (CUDA 12.1+ allows 32,764 bytes); more is refused by name", function()
  local ps, sum = {}, {}
  for i = 1, 600 do ps[i] = "double x" .. i; sum[i] = "x" .. i end
  local k = cuda.kernel("__global__ void wide(double *out, " .. table.concat(ps, ", ") ..
    ") { out[0] = " .. table.concat(sum, " + ") .. "; }")
  checkeq(#k:info().params, 601)
  local out, vals = cuda.array(1, "f64"), {}
  for i = 1, 600 do vals[i] = i end
  local bad = {out, table.unpack(vals)}
  bad[601] = "x"
  checkerr("argument 601 (double x600): expected a number, got string", k[{1, 1}], table.unpack(bad))
  if RUNS then
    k[{1, 1}](out, table.unpack(vals))
    checkeq(out[0], 600 * 601 / 2)
  end
  local big = {}
  for i = 1, 4200 do big[i] = "double y" .. i end
  -- refused by ptxas when it builds a CUBIN, else by cudalab: either way the limit is named
  checkerr("32,764 bytes of kernel parameters", cuda.kernel,
    "__global__ void huge(" .. table.concat(big, ", ") .. ") {}")
end)

test("a module keeps all of 70 kernels (it kept 64)", function()
  local src = {}
  for i = 1, 70 do src[i] = string.format("__global__ void k%02d(int *a) { a[0] = %d; }", i, i) end
  local m = cuda.module(table.concat(src, "\n"))
  local names = m:kernels()
  checkeq(#names, 70)
  checkeq(names[70], "k70")
  if RUNS then
    local a = cuda.array(1, "i32")
    m.k70[{1, 1}](a)
    checkeq(a[0], 70)
  end
end)

test("a name of 200 characters is found whole", function()
  local name = "kernel_" .. string.rep("x", 193)
  local k = cuda.kernel("__global__ void " .. name .. "(int *a) { a[0] = 5; }")
  checkeq(k.name, name)
  checkeq(#k.name, 200)
  if RUNS then
    local a = cuda.array(1, "i32")
    k[{1, 1}](a)
    checkeq(a[0], 5)
  end
end)

test("kernels in namespaces are named ns::k", function()
  local m = cuda.module([[
namespace outer { namespace inner { __global__ void deep(int *a) { a[0] = 1; } }
__global__ void mid(int *a) { a[0] = 2; } }
namespace { __global__ void hidden(int *a) { a[0] = 3; } }
]])
  local names = m:kernels()
  checkeq(table.concat(names, " "), "hidden outer::inner::deep outer::mid")
  checkeq(m["outer::mid"].entry, "_ZN5outer3midEPi", "its .entry in the module's PTX")
  check(m:ptx():find(".entry " .. m["outer::mid"].entry .. "(", 1, true), m:ptx())
  checkeq(cuda.kernel("namespace ns { __global__ void k(int *a) {} }").name, "ns::k")
  checkerr("this module has no kernel named 'deep': did you mean \"outer::inner::deep\"?",
    function() return m.deep end)
  checkerr("no kernel named 'mid' in kernel.cu: did you mean \"outer::mid\"?", cuda.kernel,
    "namespace outer { __global__ void mid(int *a) {} }", {name = "mid"})
  if RUNS then
    local a = cuda.array(1, "i32")
    m["outer::inner::deep"][{1, 1}](a)
    checkeq(a[0], 1)
    m["outer::mid"][{1, 1}](a)
    checkeq(a[0], 2)
  end
end)

test("overloaded kernels are named by their parameter types", function()
  local m = cuda.module([[
__global__ void put(float *a) { a[0] = 1.5f; }
__global__ void put(int *a) { a[0] = 7; }
__global__ void put(float *a);
]])
  checkeq(table.concat(m:kernels(), " "), "put(float *) put(int *)")
  checkeq(m["put(int*)"].name, "put(int *)", "spaces do not matter")
  check(tostring(m["put(int *)"]):find("cuda.Kernel put(int *a)", 1, true), tostring(m["put(int *)"]))
  checkerr("this module has no kernel named 'put': did you mean", function() return m.put end)
  checkerr("argument 1 (int *a): got cuda.Array<f32>[1]", m["put(int *)"][{1, 1}], cuda.array(1))
  if RUNS then
    local f, i = cuda.array(1), cuda.array(1, "i32")
    m["put(float *)"][{1, 1}](f)
    m["put(int *)"][{1, 1}](i)
    checkeq(f[0], 1.5)
    checkeq(i[0], 7)
  end
end)

test("templates: explicit instantiations are named k<T>, and any instantiation by name", function()
  local src = [[
template <typename T> __global__ void fill(T *a, T v) { a[threadIdx.x] = v; }
template __global__ void fill<float>(float *a, float v);
template __global__ void fill< int >(int *a, int v);
]]
  local m = cuda.module(src)
  checkeq(table.concat(m:kernels(), " "), "fill<float> fill<int>")
  checkerr("argument 1 (int *a): got cuda.Array<f32>[4]", m["fill<int>"][{1, 4}], cuda.array(4), 3)
  local d = cuda.kernel(src, {name = "fill<double>"}) -- not in the source: NVRTC instantiates it
  checkeq(d.name, "fill<double>")
  checkerr([[no kernel named 'fill' in this source: did you mean "fill<float>" or "fill<int>"?]],
    cuda.kernel, src, {name = "fill"})
  checkerr([[this module has no kernel named 'fill': did you mean "fill<float>" or "fill<int>"?]],
    function() return m.fill end)
  local once = src:gsub("template __global__ void fill< int >[^\n]*\n", "")
  checkeq(cuda.kernel(once, {name = "fill"}).name, "fill<float>",
    "a template instantiated once: its name names that instantiation")
  checkeq(cuda.module(once).fill.name, "fill<float>")
  if RUNS then
    local a = cuda.array(4, "f64")
    d[{1, 4}](a, 2.5)
    checkeq(a[3], 2.5)
  end
end)

-- A template instantiated by name has no signature in the source: its parameter types are the
-- template's with the template arguments the compiler's mangled name records, so defaults,
-- several parameters and non-type ones are the compiler's, not a guess from the name typed.
local TEMPLATES = [[
struct Pair { float a; int b; };
template <typename T> __global__ void combine(T *a, const T *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 2 + b[i];
}
namespace ns {
template <typename T, int N = 4, typename U = float>
__global__ void mix(T *out, const U *in, const float (*rows)[N], int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = (T)(in[i] * N + rows[i][N - 1]);
}
}
template <unsigned K> __global__ void scale(float *a) { a[threadIdx.x] *= K; }
template <typename V, typename P> __global__ void vp(V *v, P p) {
  v[threadIdx.x].x += p.a; v[threadIdx.x].w += p.b;
}
template __global__ void scale<3u>(float *);
template __global__ void combine<unsigned int>(unsigned int *, const unsigned int *, int);
]]

test("an instantiation by name checks its arguments as a plain kernel does", function()
  local c = cuda.kernel(TEMPLATES, {name = "combine<double>"})
  checkeq(c:info().params[1], "double *a")
  checkerr("argument 1 (double *a): got cuda.Array<f32>[4], but the kernel expects an array " ..
    "of f64 (double)", c[{1, 4}], cuda.array(4), cuda.array(4, "f64"), 4)
  checkerr("argument 2 (const double *b): got cuda.Array<i32>[4], but the kernel expects an " ..
    "array of f64 (double)", c[{1, 4}], cuda.array(4, "f64"), cuda.array(4, "i32"), 4)
  local m4 = cuda.kernel(TEMPLATES, {name = "ns::mix<double>"}) -- N = 4 and U = float, defaults
  checkeq(table.concat(m4:info().params, ", "), "double *out, const float *in, " ..
    "const float (*rows)[4], int n")
  checkerr("argument 2 (const float *in): got cuda.Array<f64>[8]", m4[{1, 8}],
    cuda.array(8, "f64"), cuda.array(8, "f64"), cuda.array(32), 8)
  local m2 = cuda.kernel(TEMPLATES, {name = "ns::mix<int, 2, double>"})
  checkerr("argument 3 (const float (*rows)[2]): got cuda.Array<f32>[15], which is not a whole " ..
    "number of rows of 2 elements", m2[{1, 8}], cuda.array(8, "i32"), cuda.array(8, "f64"),
    cuda.array(15), 8)
  local s3 = cuda.kernel(TEMPLATES, {name = "scale<3>"}) -- 3 for an unsigned: the compiler's 3u
  checkerr("argument 1 (float *a): got cuda.Array<i32>[4]", s3[{1, 4}], cuda.array(4, "i32"))
  local v = cuda.kernel(TEMPLATES, {name = "vp<float4, Pair>"})
  checkeq(table.concat(v:info().params, ", "), "float4 *v, Pair p")
  checkerr("argument 2 (Pair p), field 'b': missing", v[{1, 2}], cuda.array(8), {a = 1})
  checkerr("argument 1 (float4 *v): got cuda.Array<i32>[8], but float4 is 4 x f32",
    v[{1, 2}], cuda.array(8, "i32"), {a = 1, b = 2})
  if not RUNS then return end
  -- what they compute, against the CPU's
  local n = 8
  local a, b = cuda.array({1, 2, 3, 4, 5, 6, 7, 8}, "f64"), cuda.array({0.5, -1, 2, 0, 1, 1, 1, 1e9}, "f64")
  c[{1, 32}](a, b, n)
  local want = {2.5, 3, 8, 8, 11, 13, 15, 16 + 1e9}
  for i = 1, n do checkeq(a[i - 1], want[i], "combine<double> a[" .. (i - 1) .. "]") end
  local out, rows = cuda.zeros(n, "i32"), cuda.arange(2 * n)
  m2[{1, 32}](out, cuda.array({1, 2, 3, 4, 5, 6, 7, 8}, "f64"), rows, n)
  for i = 0, n - 1 do checkeq(out[i], (i + 1) * 2 + (2 * i + 1), "mix<int, 2, double>[" .. i .. "]") end
  local f = cuda.array({1, 2, 3, 4})
  s3[{1, 4}](f)
  checkeq(table.concat(f:tolist(), ","), "3.0,6.0,9.0,12.0", "scale<3>")
  local vs = cuda.zeros(8)
  v[{1, 2}](vs, {a = 1.5, b = -2})
  checkeq(table.concat(vs:tolist(), ","), "1.5,0.0,0.0,-2.0,1.5,0.0,0.0,-2.0", "vp<float4, Pair>")
end)

test("a name spelt otherwise than the kernel's is answered with the name that works", function()
  local m = cuda.module(TEMPLATES)
  checkerr([[this module has no kernel named 'scale<3>': did you mean "scale<3u>"?]],
    function() return m["scale<3>"] end)
  checkerr([[no kernel named 'combine<unsigned>': did you mean "combine<unsigned int>"?]],
    function() return m["combine<unsigned>"] end)
  checkerr([[no kernel named 'combine<unsigned int,>' (m:kernels() lists them)]], -- two arguments
    function() return m["combine<unsigned int,>"] end)
  checkeq(m["combine< unsigned int >"].name, "combine<unsigned int>", "spaces alone: found")
  checkerr("no kernel named 'combine<flaot>' in kernel.cu: the compiler could not instantiate " ..
    "the kernel template combine with those arguments (a misspelt type, too many or too few, " ..
    "a value its parameter cannot hold?); it takes arguments such as \"combine<float>\"",
    cuda.kernel, TEMPLATES, {name = "combine<flaot>"})
  checkerr("could not instantiate the kernel template ns::mix with those arguments",
    cuda.kernel, TEMPLATES, {name = "ns::mix<int, 2, double, float>"})
  checkerr("it takes arguments such as \"scale<16>\"", cuda.kernel, TEMPLATES,
    {name = "scale<-1>"})
  -- hostile names: a clear error each, never a crash
  for _, key in ipairs{string.rep("scale<", 5000), "scale<3" .. string.rep(">", 3000),
      "scale<'3'>", 'scale<"3">', "scale<3>\n#include <x>", string.rep("x", 1 << 20) .. "<3>",
      "scale<" .. string.rep("unsigned ", 2000) .. ">"} do
    local ok, err = pcall(function() return m[key] end)
    check(not ok and tostring(err):find("this module has no kernel named", 1, true),
      tostring(err):sub(1, 200))
  end
end)

test("a template alone, or a name no kernel has, gets a message that says which form to use", function()
  local tmpl = "template <typename T> __global__ void fill(T *a, T v) { a[0] = v; }"
  checkerr([['fill' in kernel.cu is a kernel template: pick an instantiation by name, cuda.kernel(src, {name = "fill<float>"})]],
    cuda.kernel, tmpl)
  local ok, err = pcall(cuda.kernel, "__global__ void k(int *a) {}", {name = "nosuch"})
  check(not ok)
  check(err:find("no kernel named 'nosuch' in kernel.cu: the compiler knows no kernel by that name; " ..
    "a kernel in a namespace is named \"ns::k\"", 1, true), err)
  check(not err:find("#if 0", 1, true), "not the #if 0 guess: " .. err)
  checkerr("no kernel named 'k<int>' in kernel.cu: the compiler knows no kernel by that name",
    cuda.kernel, "__global__ void k(int *a) {}", {name = "k<int>"})
end)

test("the #if 0 guess is left for what the scanner misread", function()
  checkerr("no kernel found in kernel.cu: the compiler knows no kernel 'ghost' (inside #if 0, or made by a macro?)",
    cuda.kernel, "#if 0\n__global__ void ghost(int *a) {}\n#endif\n")
end)

-- Attributes in a kernel's declaration, with their arguments, wherever C++ lets them stand: the
-- scanner once took __cluster_dims__, __maxnreg__ and __attribute__ for the kernel's name.
test("kernels declared with attributes are found by name and run", function()
  local BODY = "(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; " ..
    "if (i < n) a[i] = a[i] * 2.0f + 1.0f; }"
  local forms = {
    {"__global__ void __cluster_dims__(2, 1, 1) scale", "scale"},
    {"__global__ void __maxnreg__(32) scale", "scale"},
    {"__global__ void __launch_bounds__(128, 2) scale", "scale"},
    {"__global__ __launch_bounds__(128) void scale", "scale"},
    {"__global__ void __attribute__((noinline)) scale", "scale"},
    {"__launch_bounds__(128) __global__ void scale", "scale"},
    {"__attribute__((used)) __cluster_dims__(2) __global__ void scale", "scale"},
    {"__global__ void __cluster_dims__((1 + 1), 1, 1) __maxnreg__(40) scale", "scale"},
    {"template <int B> __launch_bounds__(B) __global__ void scale", "scale<128>",
     "\ntemplate __global__ void scale<128>(float *, int);"},
  }
  local n = 500
  local ref = {}
  for i = 1, n do ref[i] = (i - 1) * 2 + 1 end
  for _, f in ipairs(forms) do
    local src = f[1] .. BODY .. (f[3] or "")
    local m = cuda.module(src)
    check(m[f[2]], "no kernel '" .. f[2] .. "' in " .. src)
    local k = cuda.kernel(src, {name = f[2]})
    checkeq(k:info().name, f[2], src)
    if f[3] == nil then checkeq(cuda.kernel(src):info().name, f[2], "the one kernel of " .. src) end
    if RUNS then
      local a = cuda.arange(n)
      k[{4, 128}](a, n)
      local _, r = cuda.compare(a, ref, {rtol = 0, atol = 0})
      check(r.ok, src .. ": " .. tostring(r))
    end
  end
end)

test("kernels a macro makes are found by the names the compiler gives them", function()
  local src = [[
#define SCALE(NAME, F) extern "C" __global__ void NAME(float *x, int n) { \
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= F; }
SCALE(twice, 2.0f)
SCALE(thrice, 3.0f)
]]
  local m = cuda.module(src)
  checkeq(table.concat(m:kernels(), " "), "thrice twice", "the module's kernels")
  checkerr("this source defines 2 kernels (thrice, twice)", cuda.kernel, src)
  local k = cuda.kernel(src, {name = "thrice"})
  checkeq(k:info().name, "thrice")
  checkerr("thrice takes 2 arguments, got 1", k[{1, 32}], cuda.array(4))
  if RUNS then
    local x = cuda.arange(10)
    k[{1, 32}](x, 10)
    checkeq(x[9], 27.0, "x[9] * 3")
  end
  -- C++ names: plain ones unmangled, in their namespace; a second overload keeps its mangled name
  local cpp = cuda.module([[#define ONE(T) namespace ns { __global__ void one(T *x) { x[0] = 7; } }
ONE(float)
ONE(int)]])
  checkeq(table.concat(cpp:kernels(), " "), "_ZN2ns3oneEPi ns::one", "the C++ module's kernels")
  if RUNS then
    local y = cuda.zeros(1)
    cpp["ns::one"][{1, 1}](y)
    checkeq(y[0], 7.0, "ns::one wrote through its float pointer")
  end
end)

-- NVRTC pastes a name expression into source it compiles, and takes each option as one argument:
-- both are checked before it sees them, live as in grading.
local K1 = "__global__ void k(int *a) {}"
local WANTED = 'opts.name must be a kernel\'s name such as "scale" or "scale<float>", got '

test("a name with a newline and an #include never reaches NVRTC", function()
  local ok, err = pcall(cuda.kernel, K1, {name = 'k\n#include "/etc/passwd"'})
  check(not ok, "compiled")
  err = tostring(err)
  check(err:find(WANTED .. '"k\\n#include \\"/etc/passwd\\"": it holds a newline', 1, true), err)
  check(not err:find("root:", 1, true), "the file was read: " .. err)
end)

test("a name must be a C++ name expression, and a string", function()
  checkerr(WANTED .. "number", cuda.kernel, K1, {name = 42})
  checkerr(WANTED .. '"k;x": it holds \';\'', cuda.kernel, K1, {name = "k;x"})
  checkerr(WANTED .. '"k/x": it holds \'/\'', cuda.kernel, K1, {name = "k/x"})
  checkerr(WANTED .. '"k{": it holds \'{\'', cuda.kernel, K1, {name = "k{"})
  checkerr(WANTED .. '"k\\r": it holds a control character (\\x0d)', cuda.kernel, K1,
    {name = "k\r"})
  checkerr(WANTED .. '"k<int": its <...> or (...) are not balanced', cuda.kernel, K1,
    {name = "k<int"})
  checkerr(WANTED .. '"1k": it does not start with a name', cuda.kernel, K1, {name = "1k"})
  checkerr("it is 1025 bytes long, over the limit of 1024", cuda.kernel, K1,
    {name = string.rep("k", 1025)})
  checkerr("no kernel named 'nosuch<int, 4>'", cuda.kernel, K1, {name = "nosuch<int, 4>"})
end)

test("a compiler option is one option: no newline, NUL or control character", function()
  checkerr('compiler option 2 must be one option such as "-DN=4", got "-DX=1\\n#include ' ..
    '\\"/etc/passwd\\"": it holds a newline', cuda.kernel, K1,
    {"-DN=4", '-DX=1\n#include "/etc/passwd"'})
  checkerr('compiler option 1 must be one option such as "-DN=4", got "-DX\\0Y": it holds a NUL byte',
    cuda.module, K1, {options = {"-DX\0Y"}})
  checkerr("got \"-D\\x1bX\": it holds a control character (\\x1b)", cuda.kernel, K1, {"-D\27X"})
end)

return T.done()
