-- grading_sandbox.lua: what a submission may use when it is graded (lua/class/grade_sandbox.lua),
-- and the checks on its kernels' #include lines and compiler options. Runs on every backend.
package.path = "tests/lua/?.lua;" .. package.path
local T = require "testlib"
local sandbox = require "grade_sandbox"
T.plan(25)

local work = os.tmpname()
os.remove(work)
os.execute("mkdir -p " .. work)
local function env() return sandbox.new { workdir = work } end
local function run(code, e)
  local f = assert(load(code, "=typed", "t", e or env()))
  return pcall(f)
end

T.test("io, os, require, debug and dofile fail, saying why", function()
  for _, name in ipairs({ "io.open('/etc/passwd')", "os.execute('true')", "require('os')",
                          "debug.getinfo(1)", "dofile('/etc/passwd')", "package.loaded.os" }) do
    local ok, err = run("return " .. name)
    assert(not ok, name .. " ran")
    assert(tostring(err):find("is not available when grading", 1, true), name .. ": " .. tostring(err))
  end
end)

T.test("bytecode cannot be loaded; text can, in the sandbox", function()
  local ok, err = run("return load(('').dump(function() end))")
  assert(not ok and tostring(err):find("bytecode", 1, true), tostring(err))
  ok, err = run("return load('return 1', 'x', 'b')")
  assert(not ok and tostring(err):find("only text chunks", 1, true), tostring(err))
  local ok2, v = run("return load('return io')()")
  assert(not ok2 and tostring(v):find("io is not available", 1, true), tostring(v))
end)

T.test("the string metatable and cuda's functions cannot be replaced", function()
  local ok, v = run("return getmetatable('')")
  assert(ok and v == nil, "getmetatable('') gave " .. tostring(v))
  if rawget(_G, "cuda") then
    local ok2, err = run("cuda.compare = function() return {ok = true} end")
    assert(not ok2 and tostring(err):find("cannot change cuda.compare", 1, true), tostring(err))
    ok2, err = run("cuda.blas.gemm = print")
    assert(not ok2 and tostring(err):find("cannot change cuda.blas.gemm", 1, true), tostring(err))
    ok2, err = run("return cuda.load")
    assert(not ok2 and tostring(err):find("cuda.load is not available", 1, true), tostring(err))
  end
end)

T.test("lesson commands typed in a step do nothing; next with arguments is Lua's", function()
  local ok, v = run("check(); hint(); edit [[x]]; next(); return next({5})")
  assert(ok and v == 1, tostring(v))
end)

T.test("a submission's own globals stay in its environment", function()
  local e = env()
  assert(run("answer = 42", e))
  assert(rawget(_G, "answer") == nil, "leaked into _G")
  assert(rawget(e, "answer") == 42)
end)

T.test("#include of a toolkit header or an own file is allowed", function()
  assert(sandbox.check_source('#include <cuda_fp16.h>\n#include "helper.h"\n__global__ void k() {}'))
  assert(sandbox.check_source("#include <cooperative_groups/reduce.h>\n"))
end)

T.test("#include of a path is refused, however it is written", function()
  for _, src in ipairs({ '#include "/etc/passwd"', '#include "../records/1001.json"',
      '#include </etc/shadow>', '  #  include "/etc/passwd"', '#/**/include "/etc/passwd"',
      '#inc\\\nlude "/etc/passwd"', '%:include "/etc/passwd"', '#include "sub/file.h"',
      '#include <../../etc/passwd>' }) do
    local ok, why = sandbox.check_source(src)
    assert(not ok, src .. " was allowed")
    assert(why:find("names a path", 1, true), src .. ": " .. why)
  end
end)

local RULE = "when grading a kernel may include the toolkit's headers and its own files only"

-- src is refused with a message holding want and the rule.
local function refused(src, want)
  local ok, why = sandbox.check_source(src)
  assert(not ok, string.format("%q was allowed", src))
  assert(why:find(want, 1, true) and why:find(RULE, 1, true),
    string.format("%q: %s (want %s)", src, why, want))
end

T.test("#include MACRO, #include_next, #import and #embed are refused", function()
  refused("#define F \"/etc/passwd\"\n#include F",
    "line 2: #include F names its file through a macro")
  refused("#include_next <x.h>", "line 1: #include_next is refused")
  refused("#import \"a.h\"", "line 1: #import is refused")
  refused("#embed \"/etc/passwd\"", "line 1: #embed is refused")
end)

T.test("comment marks inside strings hide no #include (the pattern check's hole)", function()
  refused('const char *a = "/*";\n#include "/etc/passwd"\nconst char *b = "*/";\n',
    'line 2: #include "/etc/passwd" names a path')
  refused("char q = '\"';\n#include \"/etc/passwd\"\n", "line 2:")
  refused('auto s = R"x( /* )x";\n#include "/etc/passwd"\n', "line 2:")
  refused('auto s = u8"/*";\r\n#include "/etc/passwd"\r\nauto t = L"*/";\r\n', "line 2:")
  assert(sandbox.check_source('auto s = R"x(\n#include "/etc/passwd"\n)x";\n#include "a.h"\n'),
    "a directive inside a raw string is text")
end)

T.test("file-naming operators, pragmas, pasting, trigraphs and odd bytes are refused", function()
  refused('#if __has_include("/etc/passwd")\n#endif', '__has_include("/etc/passwd") names a path')
  refused("#if __has_include(P)\n#endif", "names its file through a macro")
  refused('_Pragma("unroll")', "line 1: _Pragma is refused")
  refused('#pragma GCC dependency "f.h"', 'a #pragma that holds the literal "f.h"')
  refused("#pragma include_alias(<a.h>, </etc/passwd>)", "include_alias")
  refused("#define CAT(a, b) a ## b", "the ## operator is refused")
  refused('??=include "/etc/passwd"', "the trigraph ??= is refused")
  refused('int x;\0\n#include "/etc/passwd"', "line 1: a NUL byte")
  refused("/* #include \"a.h\"", "a comment that never ends")
  assert(sandbox.check_source("#pragma unroll 4\n#if __has_include(<cuda_fp16.h>)\n#endif\n"))
end)

T.test("cudalab.sandbox.check_source says true, or nil and why; refuses a non-string", function()
  local guard = require "cudalab.sandbox"
  T.checkeq(guard.check_source("#include <cuda/std/cstdint>\n"), true)
  local ok, why = guard.check_source("#inc\\\nlude </etc/shadow>")
  assert(ok == nil and why:find("line 1: #include </etc/shadow> names a path", 1, true), why)
  T.checkerr("sandbox.check_source takes a kernel's source as a string, got nil",
    guard.check_source, nil)
  T.checkerr("got table", guard.check_source, {})
end)

T.test("compiler options that add include folders are refused", function()
  if not rawget(_G, "cuda") then return end
  local src = "__global__ void k(float *a) { a[0] = 1; }"
  for _, o in ipairs({ "-I/etc", "--include-path=/home", "-include /etc/passwd", "--pre-include=x" }) do
    local ok, err = run("return cuda.kernel(" .. string.format("%q", src) .. ", {" .. string.format("%q", o) .. "})")
    assert(not ok and tostring(err):find("is not available when grading", 1, true), o .. ": " .. tostring(err))
  end
  local ok = run("return cuda.kernel(" .. string.format("%q", src) .. ", {'-use_fast_math', '-DN=4'})")
  assert(ok, "plain options refused")
end)

-- src and opts as the Lua a submission types: cuda.kernel(<src>, <opts>)
local function compile_call(src, opts)
  return run("return cuda.kernel(" .. string.format("%q", src) .. ", " .. opts .. ")")
end
local K = "__global__ void k(float *a) { a[0] = 1; }"

T.test("-D values are one word; options that read files or change the language are refused",
  function()
  if not rawget(_G, "cuda") then return end
  for _, o in ipairs({ "-DX=1\n#include \"/etc/passwd\"", '-DX="/etc/passwd"', "-D'X'",
      "--device-as-default-execution-space", "-default-device", "-std=c++03",
      "--pre-include /etc/passwd", "-include=/etc/passwd", "-I.", "--include-path=." }) do
    local ok, err = compile_call(K, "{" .. string.format("%q", o) .. "}")
    assert(not ok and tostring(err):find("is not available when grading", 1, true),
      o .. ": " .. tostring(err))
  end
  local ok, err = compile_call(K, "{'-std=c++17', '-DN=4'}")
  assert(ok, "plain options refused: " .. tostring(err))
  ok, err = compile_call(K, "{options = {'-I/etc'}}")
  assert(not ok and tostring(err):find("the option \"options\" is not available", 1, true),
    tostring(err))
end)

T.test("a metatable cannot show the check one list of options and the compiler another",
  function()
  if not rawget(_G, "cuda") then return end
  local opts = "setmetatable({}, {__index = function(_, i) if i == 1 then " ..
    "return '--pre-include=/etc/passwd' end end, __pairs = function() return next, {}, nil end})"
  local ok, err = compile_call(K, opts)
  assert(ok, "the raw copy (no options) should compile: " .. tostring(err))
  ok, err = compile_call(K, "'-I/etc'")
  assert(not ok and tostring(err):find("must be a table", 1, true), tostring(err))
end)

T.test("attack (b): a kernel's name with a newline and an #include never reaches NVRTC",
  function()
  if not rawget(_G, "cuda") then return end
  local ok, err = compile_call(K, "{name = 'k\\n#include \"/etc/passwd\"'}")
  assert(not ok, "compiled")
  err = tostring(err)
  assert(err:find('opts.name must be a kernel\'s name such as "scale" or "scale<float>", got ' ..
    '"k\\n#include \\"/etc/passwd\\""', 1, true), err)
  assert(not err:find("root:", 1, true), err)
end)

T.test("a kernel file of the submission is checked as a source", function()
  if not rawget(_G, "cuda") then return end
  local f = assert(io.open(work .. "/bad.cu", "w"))
  f:write('const char *a = "/*";\n#include "/etc/passwd"\nconst char *b = "*/";\n' .. K)
  f:close()
  local ok, err = run("return cuda.kernel('bad.cu')")
  assert(not ok and tostring(err):find("line 2: #include \"/etc/passwd\" names a path", 1, true),
    tostring(err))
end)

T.test("every cuda function a lesson step shows is there when grading", function()
  if not rawget(_G, "cuda") then return end
  for _, name in ipairs({ "watch", "unwatch", "graph", "record", "export", "plot", "sanitize",
      "managed", "cache", "use", "dtypes", "version" }) do
    local ok, v = run("return cuda." .. name)
    assert(ok and v ~= nil, "cuda." .. name .. ": " .. tostring(v))
  end
  if cuda.backend() == "none" then return end
  -- lesson 12's who-overwrote: a watch on an element, its writes read back
  local ok, err = run([[
    local k = cuda.kernel("__global__ void w(float *a) { a[threadIdx.x % 4] = threadIdx.x; }")
    local a = cuda.zeros(4)
    local w = cuda.watch(a, 3)
    k[{1, 8}](a)
    local last = w.writes[#w.writes]
    w:close()
    assert(last.thread.x == 7, "the last writer was " .. tostring(last.thread.x))
    local g = cuda.graph(function() k[{1, 8}](a) end)
    g()]])
  assert(ok, tostring(err))
end)

-- A file the sandbox's functions wrote, or nil.
local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local SAXPY = [[
  dbl = cuda.kernel("__global__ void dbl(float *a, int n) { " ..
    "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }")
  cuda.record(true)
  x = cuda.ones(100)
  dbl[{1, 128}](x, 100)
]]
local CHART = "cuda.timeline(function() dbl[{1, 128}](x, 100) end)"

T.test("cuda.export writes into the submission's folder, by a plain name or workfile", function()
  if not rawget(_G, "cuda") or cuda.backend() == "none" then return end
  local e = env()
  local ok, err = run(SAXPY .. "cuda.export(workfile 'prog.cu'); cuda.export('plain.cu')", e)
  assert(ok, tostring(err))
  assert((slurp(work .. "/prog.cu") or ""):find("dbl<<<", 1, true), "no program by workfile")
  assert((slurp(work .. "/plain.cu") or ""):find("dbl<<<", 1, true), "no program by name")
  run("cuda.record(false)", e)
end)

T.test("cuda.export and cuda.plot refuse a path outside the submission's folder", function()
  if not rawget(_G, "cuda") or cuda.backend() == "none" then return end
  local outside = work .. "-outside.cu"
  local e = env()
  for _, call in ipairs({ "cuda.export(" .. string.format("%q", outside) .. ")",
      "cuda.export('../escape.cu')", "cuda.export(workfile '..' .. '/escape.cu')",
      "cuda.export('sub/prog.cu')", "cuda.export('.hidden.cu')",
      "cuda.plot(" .. CHART .. ", '/tmp/x.svg')", "cuda.plot(" .. CHART .. ", '../x.svg')" }) do
    local ok, err = run(SAXPY .. call, e)
    assert(not ok, call .. " wrote")
    assert(tostring(err):find("when grading a file may be written only in the submission's " ..
      "own folder", 1, true), call .. ": " .. tostring(err))
  end
  assert(not slurp(outside), "a program was written outside")
  assert(not slurp(work .. "/../escape.cu"), "a program was written in the folder above")
  run("cuda.record(false)", e)
end)

T.test("a symbolic link in the submission's folder is replaced, never written through", function()
  if not rawget(_G, "cuda") or cuda.backend() == "none" then return end
  local target = work .. "-target"
  local f = assert(io.open(target, "w"))
  f:write("the instructor's file\n")
  f:close()
  os.execute("ln -s " .. target .. " " .. work .. "/linked.cu")
  os.execute("ln -s " .. target .. " " .. work .. "/linked.data")
  os.execute("ln -s " .. target .. " " .. work .. "/linked.svg")
  local e = env()
  local ok, err = run(SAXPY .. "big = cuda.rand(5000); k2 = cuda.kernel('__global__ void " ..
    "z(float *a) { a[0] = 0; }'); k2[{1, 1}](big); cuda.export(workfile 'linked.cu')", e)
  assert(ok, tostring(err))
  ok, err = run("cuda.plot(" .. CHART .. ", 'linked.svg')", e)
  assert(ok, tostring(err))
  T.checkeq(slurp(target), "the instructor's file\n", "the link's target")
  assert((slurp(work .. "/linked.cu") or ""):find("dbl<<<", 1, true), "no program")
  assert(#(slurp(work .. "/linked.data") or "") >= 20000, "no data file")
  assert((slurp(work .. "/linked.svg") or ""):find("<svg", 1, true), "no chart")
  run("cuda.record(false)", e)
  os.remove(target)
end)

T.test("cuda.use moves between the simulator and the backend graded on, never to a GPU " ..
  "while grading on the simulator", function()
  if not rawget(_G, "cuda") or cuda.backend() ~= "sim" then return end
  local e = sandbox.new { workdir = work, backend = "sim" }
  local ok, prev = run("return cuda.use('cuda')", e)
  assert(ok and prev == "sim" and cuda.backend() == "sim", tostring(prev))
  ok, prev = run("return cuda.use('gpu')", e)
  assert(ok and prev == "sim" and cuda.backend() == "sim", tostring(prev))
  ok, prev = run("return cuda.use('sim')", e)
  assert(ok and prev == "sim", tostring(prev))
end)

T.test("with globals, the submission's names are the session's, as at the prompt", function()
  local g = { results = { 1, 2 }, N = 4 }
  local e = sandbox.new { workdir = work, globals = g, keep = { print = true, cuda = true } }
  assert(run("results = nil; answer = N * 2; rawset(_G, 'raw', 1); print = 7; " ..
    "assert(rawget(_G, 'answer') == 8)", e))
  T.checkeq(g.results, nil, "results = nil")
  T.checkeq(g.answer, 8, "answer")
  T.checkeq(g.raw, 1, "rawset(_G, ...)")
  T.checkeq(g.print, nil, "a kept name reached the globals")
  T.checkeq(rawget(e, "print"), 7, "a kept name is the submission's own")
  local ok, err = run("io = 1; return os", e)
  assert(not ok and tostring(err):find("os is not available", 1, true), tostring(err))
  T.checkeq(g.io, nil, "io reached the globals")
end)

T.test("own_headers names the quoted plain names a source includes, as NVRTC reads it", function()
  local guard = require "cudalab.sandbox"
  local got = guard.own_headers('#include "twice.h"\n#include <cuda_fp16.h>\n' ..
    '// #include "commented.h"\nconst char *s = "#include \\"string.h\\"";\n' ..
    '#inc\\\nlude "spliced.h"\n#include "../up.h"\n#include "/etc/passwd"\n' ..
    '#include ".hidden.h"\n#include "twice.h"\n#if __has_include("maybe.h")\n#endif\n')
  T.checkeq(table.concat(got, ","), "twice.h,spliced.h,maybe.h", "the headers")
  local none, why = guard.own_headers('#define H "x.h"\n#include H\n')
  assert(none == nil and why:find("through a macro", 1, true), tostring(why))
  T.checkerr("own_headers takes a kernel's source as a string, got nil", guard.own_headers, nil)
end)

T.test("a record carries the headers its kernels include from the folder, bounded, no links",
  function()
  local dir = work .. "/hdr"
  os.execute("mkdir -p " .. dir)
  local function put(name, text)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  put("twice.h", '#include "half.h"\n__device__ float twice(float v) { return 2 * half(v) * 2; }\n')
  put("half.h", "__device__ float half(float v) { return v / 2; }\n")
  put("big.h", string.rep("x", 300))
  put("outside.h", "int secret;\n")
  os.execute("ln -s " .. dir .. "/outside.h " .. dir .. "/linked.h")
  local add = require("submission_headers").add
  local kernel = '#include "twice.h"\n#include "linked.h"\n#include "big.h"\n#include "gone.h"\n'
  local files = add({ ["k.cu"] = kernel }, dir, { files = 16, file = 256 })
  local names = {}
  for name in pairs(files) do names[#names + 1] = name end
  table.sort(names)
  T.checkeq(table.concat(names, ","), "half.h,k.cu,twice.h", "the files (no link, none too large)")
  -- bounded: the kernel files first, headers only in what the count leaves
  local many = {}
  for i = 1, 20 do
    put("h" .. i .. ".h", "// " .. i .. "\n")
    many[#many + 1] = '#include "h' .. i .. '.h"'
  end
  files = add({ ["a.cu"] = table.concat(many, "\n"), ["b.cu"] = "// b\n" }, dir,
    { files = 16, file = 256 })
  local n = 0
  for _ in pairs(files) do n = n + 1 end
  T.checkeq(n, 16, "files in all")
  assert(files["a.cu"] and files["b.cu"] and files["h1.h"] and not files["h15.h"], "which files")
end)

-- Last: confine_saves holds for the rest of the process.
T.test("a:save writes only into the submission's folder, by a plain name, never through a link",
  function()
  if not rawget(_G, "cuda") or cuda.backend() == "none" then return end
  local guard = require "cudalab.sandbox"
  T.checkerr("cannot open the folder " .. work .. "/none", guard.confine_saves, work .. "/none")
  local target = work .. "-saved-target"
  local f = assert(io.open(target, "w"))
  f:write("the instructor's file\n")
  f:close()
  os.execute("ln -s " .. target .. " " .. work .. "/linked.npy")
  guard.confine_saves(work)
  T.checkerr("saves are already confined to " .. work, guard.confine_saves, "/tmp")
  local e = env()
  assert(run("a = cuda.arange(6, 'i32'); h = cuda.host(3)", e))
  local RULE = "when grading a file may be written only in the submission's own folder, by a " ..
    "plain name such as workfile \"out.npy\""
  for _, call in ipairs({ "a:save(" .. string.format("%q", target .. ".npy") .. ")",
      "a:save('../escape.npy')", "a:save(workfile 'x' .. '/../escape.npy')",
      "a:save('sub/x.npy')", "a:save('.hidden.npy')", "h:save('/tmp/h.csv')",
      "a:save('x\\27[2J.npy')", "a:save('a\\nb.csv')" }) do
    local ok, err = run(call, e)
    assert(not ok, call .. " wrote")
    assert(tostring(err):find(RULE, 1, true), call .. ": " .. tostring(err))
  end
  local ok, err = run("a:save('x\\27[2J.npy')", e)
  assert(tostring(err):find('a:save("x\\27[2J.npy")', 1, true), tostring(err))
  assert(not slurp(target .. ".npy") and not slurp(work .. "/../escape.npy"), "a file escaped")
  ok, err = run("a:save('plain.csv'); a:save(workfile 'by_workfile.npy'); " ..
    "h:save('host.csv'); a:save('linked.npy')", e)
  assert(ok, tostring(err))
  T.checkeq(slurp(work .. "/plain.csv"), "0\n1\n2\n3\n4\n5\n", "a plain name")
  assert((slurp(work .. "/by_workfile.npy") or ""):find("NUMPY", 1, true), "by workfile")
  T.checkeq(slurp(work .. "/host.csv"), "0\n0\n0\n", "a host buffer")
  T.checkeq(slurp(target), "the instructor's file\n", "the link's target")
  assert((slurp(work .. "/linked.npy") or ""):find("NUMPY", 1, true), "the link was not replaced")
  -- the folder swapped for a link under its name: the save still goes into the folder it was
  os.execute("mv " .. work .. " " .. work .. ".moved && ln -s " .. target .. "-dir " .. work ..
    " && mkdir " .. target .. "-dir")
  ok, err = run("a:save(workfile 'after.csv')", e)
  assert(ok, tostring(err))
  assert(slurp(work .. ".moved/after.csv") and not slurp(target .. "-dir/after.csv"),
    "a save followed the swapped folder")
  os.execute("rm -rf " .. work .. ".moved " .. target .. "-dir " .. target .. " " .. work)
end)

os.execute("rm -rf " .. work)
return T.done()
