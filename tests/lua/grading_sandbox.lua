-- grading_sandbox.lua: what a submission may use when it is graded (lua/grade_sandbox.lua), and
-- the checks on its kernels' #include lines and compiler options. Runs on every backend.
package.path = "tests/lua/?.lua;" .. package.path
local T = require "testlib"
local sandbox = require "grade_sandbox"
T.plan(9)

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
    ok2, err = run("return cuda.plot")
    assert(not ok2 and tostring(err):find("cuda.plot is not available", 1, true), tostring(err))
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

T.test("#include MACRO, #include_next and #embed are refused", function()
  for _, src in ipairs({ "#define F \"/etc/passwd\"\n#include F", "#include_next <x.h>",
                         "#embed \"/etc/passwd\"" }) do
    local ok, why = sandbox.check_source(src)
    assert(not ok and why:find("may be used when grading", 1, true), src .. ": " .. tostring(why))
  end
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

os.execute("rm -rf " .. work)
return T.done()
