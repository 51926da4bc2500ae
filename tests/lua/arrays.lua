-- arrays.lua: device arrays and host buffers, with every bad input the bindings check.
-- Runs on any backend (make test runs it without a GPU; make test-gpu on the H200).
local T = dofile("tests/lua/testlib.lua")
T.plan(18)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

test("zeros, length and dtype", function()
  local a = cuda.array(10)
  checkeq(#a, 10); checkeq(a.dtype, "f32"); checkeq(a.nbytes, 40)
  for i = 0, 9 do checkeq(a[i], 0.0) end
end)

test("every dtype round-trips its values", function()
  local cases = {f32 = {1.5, -2.25, 1e30}, f64 = {1.5, 1e300, -0.1}, i32 = {-2147483648, 0, 2147483647},
                 u32 = {0, 4294967295, 7}, i64 = {math.mininteger, 0, math.maxinteger}, u8 = {0, 255, 17}}
  for dt, vals in pairs(cases) do
    local a = cuda.array(vals, dt)
    checkeq(a.dtype, dt)
    local back = a:tolist()
    for i = 1, #vals do
      local want = dt == "f32" and string.unpack("f", string.pack("f", vals[i])) or vals[i]
      checkeq(back[i], want, dt .. " element " .. i)
    end
  end
end)

test("element get and set are 0-based", function()
  local a = cuda.array{10, 20, 30}
  checkeq(a[0], 10.0); checkeq(a[2], 30.0)
  a[1] = 5
  checkeq(a[1], 5.0)
end)

test("constructors: ones, full, arange, rand", function()
  checkeq(cuda.ones(4, "i32"):tolist()[4], 1)
  checkeq(cuda.full(3, 2.5, "f64")[2], 2.5)
  local r = cuda.arange(1000, "i64"):tolist()
  for i = 1, 1000 do checkeq(r[i], i - 1) end
  local x, y = cuda.rand(1000, "f32", 7):tolist(), cuda.rand(1000, "f32", 7):tolist()
  local z = cuda.rand(1000, "f32", 8):tolist()
  local same, lo, hi, sum = true, 1, 0, 0
  for i = 1, 1000 do
    same = same and x[i] == y[i]
    lo, hi, sum = math.min(lo, x[i]), math.max(hi, x[i]), sum + x[i]
  end
  check(same, "same seed gives the same numbers")
  check(x[1] ~= z[1] or x[2] ~= z[2], "another seed gives other numbers")
  check(lo >= 0 and hi < 1, "values lie in [0, 1)")
  check(math.abs(sum / 1000 - 0.5) < 0.05, "mean near 0.5")
end)

test("a:arange() and a:rand(seed) refill in place as the constructors fill", function()
  local a = cuda.array(1000, "f64")
  checkeq(a:arange()[999], 999.0)
  a:rand(5)
  check(cuda.compare(a, cuda.rand(1000, "f64", 5), {rtol = 0, atol = 0}), "same numbers as cuda.rand")
end)

test("fill, copies between arrays, host buffers and tables", function()
  local a = cuda.array(5, "i32"):fill(7)
  checkeq(a[4], 7)
  local h = cuda.host(5, "i32")
  a:copyto(h)
  checkeq(h[3], 7)
  h[0] = 1
  local b = cuda.array(h)
  checkeq(b[0], 1); checkeq(b[1], 7)
  local p = cuda.host({1, 2, 3}, "f64", {pinned = true})
  check(p.pinned, "pinned buffer says so")
  local d = cuda.array(3, "f64"):copyfrom(p)
  checkeq(d[2], 3.0)
  local t = {}
  d:copyto(t)
  checkeq(t[3], 3.0)
  checkeq(#a:host(), 5)
end)

test("printing summarises without listing everything", function()
  local a = cuda.arange(1000000, "i32")
  local s = tostring(a)
  check(s:find("cuda.Array<i32>[1000000]", 1, true), s)
  check(s:find("[0, 1, 2, ..., 999997, 999998, 999999]", 1, true), s)
  checkeq(tostring(cuda.host({1, 2}, "u8")):match("^cuda.HostBuffer<u8>%[2%] on host: %[1, 2%]$") ~= nil, true)
end)

test("free and <close> release; a freed array is refused", function()
  local a = cuda.array(4)
  a:free()
  a:free() -- twice is fine
  checkerr("has been freed", function() return a[0] end)
  check(tostring(a):find("(freed)", 1, true))
  local b
  do
    local c <close> = cuda.array(4)
    b = c
  end
  checkerr("has been freed", function() return b:tolist() end)
end)

test("bad sizes, dtypes and values", function()
  checkerr("size must not be negative, got -1", cuda.array, -1)
  checkerr("whole number of elements", cuda.zeros, 2.5)
  checkerr("larger than any device's memory", cuda.array, 1 << 50)
  checkerr("unknown dtype 'f8' (choose one of f32, f64, i32, u32, i64, u8, f16, bf16, i16, u16, i8, u64)", cuda.array, 4, "f8")
  checkerr("expected a size, a table of values or an array", cuda.array, "ten")
  checkerr("element 1: expected a number, got string", cuda.array, {1, "x"})
  checkerr("i32 holds whole numbers, got 1.5", cuda.array, {1.5}, "i32")
  checkerr("300 does not fit in u8 (0..255)", cuda.array, {300}, "u8")
  checkerr("cuda.rand makes floats", cuda.rand, 4, "i32")
  checkerr("cuda.rand makes floats in [0, 1): use f32, f64, f16 or bf16, not i32", function() cuda.array(4, "i32"):rand(1) end)
  checkerr("expected options like {pinned = true}", cuda.host, 4, "f32", 3)
end)

test("bad indices", function()
  local a = cuda.array(3)
  checkerr("index 3 out of range for cuda.Array<f32>[3] (valid: 0..2); indices start at 0", function() return a[3] end)
  checkerr("index -1 out of range", function() a[-1] = 1 end)
  checkerr("index must be a whole number", function() return a[0.5] end)
  checkerr("cannot set field 'x'", function() a.x = 1 end)
  checkerr("expected a number, got table", function() a[0] = {} end)
end)

test("bad copies", function()
  local a, b = cuda.array(3), cuda.array(4)
  checkerr("length and dtype must match", function() a:copyto(b) end)
  checkerr("length and dtype must match", function() a:copyto(cuda.array(3, "i32")) end)
  checkerr("cannot copy a table of 2 values into cuda.Array<f32>[3]", function() a:copyfrom({1, 2}) end)
  checkerr("destination must be a cuda.Array or cuda.HostBuffer, got number", function() a:copyto(5) end)
  checkerr("cannot convert cuda.Array<f32>[3] to i32", cuda.array, a, "i32")
end)

test("compare: equal, within tolerance, mismatches, NaN, lengths", function()
  local _, r = cuda.compare(cuda.array{1, 2, 3}, {1, 2, 3})
  check(r.ok); checkeq(r.mismatches, 0); checkeq(r.n, 3)
  _, r = cuda.compare(cuda.host({1, 2, 3.0001}, "f64"), {1, 2, 3}, {rtol = 1e-3})
  check(r.ok, "within rtol")
  _, r = cuda.compare({1, 5, 3, 0/0}, {1, 2, 3, 0/0})
  check(not r.ok); checkeq(r.mismatches, 2); checkeq(r.first[1], 1); checkeq(r.first[2], 3)
  checkeq(r.max_abs, 3.0)
  checkerr("lengths differ (2 and 3 elements)", cuda.compare, {1, 2}, {1, 2, 3})
  checkerr("rtol must be a non-negative number", cuda.compare, {1}, {1}, {rtol = -1})
  checkerr("atol must be a non-negative number", cuda.compare, {1}, {1}, {atol = 0/0})
  checkerr("atol must be a non-negative number", cuda.compare, {1}, {1}, {atol = "x"})
  check(cuda.compare({1}, {1.5}, {atol = "0.5"}), "a numeric string is a number, as before")
  checkerr("element 2 of the table is string", cuda.compare, {1, "a"}, {1, 2})
end)

test("compare: true or false first, so assert fails on a mismatch with the report", function()
  local ok, r = cuda.compare(cuda.array{1, 2, 3}, {1, 2, 3})
  checkeq(ok, true); checkeq(r.ok, true)
  check(tostring(r):find("equal within", 1, true), tostring(r))
  ok, r = cuda.compare(cuda.array{1, 5, 3, 7}, {1, 2, 3, 8})
  checkeq(ok, false, "a mismatch is false, not a table that is always true")
  checkeq(r.mismatches, 2)
  checkeq(select("#", cuda.compare({1}, {1})), 2, "two values: the verdict and the report")
  check(pcall(function() assert(cuda.compare({1, 2}, {1, 2})) end), "assert passes when equal")
  local passed, err = pcall(function() assert(cuda.compare(cuda.array{1, 5, 3}, {1, 2, 3})) end)
  checkeq(passed, false, "assert fails on a mismatch")
  -- the error object is the report, which prints itself: the first mismatch, where and what
  checkeq(tostring(err), "MISMATCH: 1 of 3 elements differ beyond rtol=1e-05 atol=1e-08 " ..
    "(max abs err 3, max rel err 1.5); first at [1] 5.0 vs 2.0")
end)

test("a script's assert(cuda.compare(...)) stops it with status 1 and the first mismatch", function()
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write("assert(cuda.compare(cuda.array{1, 2, 3, 4}, {1, 2, 9, 4}))\nprint('not reached')\n")
  f:close()
  local p = io.popen(T.self_command() .. " --backend " .. cuda.backend() .. " " .. script ..
    " 2>&1; echo status=$?")
  local out = p:read("a")
  p:close()
  os.remove(script)
  check(out:find("MISMATCH: 1 of 4 elements differ", 1, true), out)
  check(out:find("first at [2] 3.0 vs 9.0", 1, true), out)
  check(not out:find("not reached", 1, true), out)
  check(out:find("status=1", 1, true), out)
end)

test("cpu.time measures and validates its options", function()
  local t = cpu.time(function() local s = 0 for i = 1, 1000 do s = s + i end end, {warmup = 1, reps = 3})
  checkeq(t.reps, 3); checkeq(#t.samples, 3); checkeq(t.clock, "cpu")
  check(t.min <= t.median and t.median <= t.max)
  checkerr("reps must be between 1 and 1000000, got 0", cpu.time, function() end, {reps = 0})
  checkerr("bad argument #1", cpu.time, 42)
end)

-- An empty buffer has no memory (a NULL pointer); its bytes once reached memmove with it, which
-- the undefined-behaviour sanitizer reports (make fuzz found it).
test("empty arrays and host buffers give empty bytes and lists", function()
  for _, b in ipairs({cuda.array(0), cuda.array(0, "u8"), cuda.host(0), cuda.host(0, "f64", {pinned = true})}) do
    checkeq(b:tobytes(), "")
    checkeq(#b:tolist(), 0)
  end
end)

-- Lua sees an array as a few bytes, so without help its collector would never run for arrays:
-- the same name assigned a fresh array again and again kept every one until memory ran out.
test("arrays dropped one after another are collected as they go", function()
  collectgarbage()
  local before = cuda.limits().memory_in_use
  local n, most = 16 * 2^20, 0 -- 64 MiB of f32 each: 40 of them would hold 2.5 GiB
  for i = 1, 40 do
    local a = cuda.zeros(n)
    a[i] = i
    most = math.max(most, cuda.limits().memory_in_use - before)
  end
  check(most <= 640 * 2^20, "at most about 640 MiB held at once, got " .. most / 2^20 .. " MiB")
  local b = cuda.zeros(n)
  checkeq(b[1], 0.0, "an array made after the collections starts as zeros")
  checkeq(b[n - 1], 0.0)
end)

test("meminfo().arrays counts this session's arrays exactly, whatever else uses the device", function()
  if cuda.backend() == "none" then -- nothing to report; it says why
    checkerr("cannot report device memory: no GPU found on this machine", cuda.meminfo)
    return
  end
  collectgarbage(); collectgarbage()
  local before = cuda.meminfo().arrays
  check(math.type(before) == "integer" and before >= 0, tostring(before))
  local a = cuda.array(1000, "f64")
  local b = cuda.array(3, "u8")
  checkeq(cuda.meminfo().arrays - before, 8003)
  a:free()
  checkeq(cuda.meminfo().arrays - before, 3)
  b = nil
  collectgarbage(); collectgarbage()
  checkeq(cuda.meminfo().arrays, before)
  checkeq(cuda.limits().memory_in_use, before, "the same count cuda.limits gives")
end)

return T.done()
