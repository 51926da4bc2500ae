-- hostile_tables.lua: tables whose metamethods lie (__len), raise, return non-numbers or free
-- the very array being copied, passed to every function of bind_array.c and bind_compare.c
-- that takes a table. Each must raise a clear error (or do the right thing); none may touch
-- freed or unallocated memory (run under build-address/cudalab to see the difference).
local T = dofile("tests/lua/testlib.lua")
T.plan(13)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

local STAGE = 1 << 18 -- bind_array.c's STAGE_ELEMS: copies longer than this go block by block

-- A table that claims length `len` and whose every element is `value`.
local function lying(len, value)
  return setmetatable({}, {__len = function() return len end, __index = function() return value end})
end

-- A table of n elements whose __index frees `victim` when element `at` is read.
local function freeing_reader(n, victim, at)
  return setmetatable({}, {__len = function() return n end,
                           __index = function(_, i) if i == at then victim:free() end return 1 end})
end

-- The array `a` is freed, says so, and may be freed again.
local function check_freed(a)
  check(a.freed, "array is marked freed")
  check(tostring(a):find("(freed)", 1, true), tostring(a))
  a:free()
end

-- 1. lengths from __len pass the checks a numeric size does

test("__len far too large is refused before allocating", function()
  checkerr("table length 4611686018427387904 is larger than any device's memory",
           cuda.host, lying(1 << 62, 1.5))
  checkerr("table length 2305843009213693952 is larger than any device's memory",
           cuda.array, lying(1 << 61, 1.5), "f64")
  checkerr("table length 2305843009213693952 is larger than any device's memory",
           cuda.host, lying(1 << 61, 1.5), "f64", {pinned = true})
  checkerr("table length 2199023255552 is larger than any device's memory",
           cuda.array, lying(1 << 41, 1), "u8")
  checkerr("table length 9223372036854775807 is larger", cuda.array, lying(math.maxinteger, 1))
end)

test("negative or fractional __len is refused", function()
  checkerr("table length must not be negative, got -1", cuda.array, lying(-1, 1))
  checkerr("table length must not be negative, got -1", cuda.host, lying(-1, 1))
  checkerr("table length must not be negative, got " .. math.mininteger, cuda.host, lying(math.mininteger, 1), "f64")
  checkerr("table length must be a whole number of elements, got 2.5", cuda.array, lying(2.5, 1))
  checkerr("table length must be a whole number of elements, got table", cuda.array, lying({}, 1))
end)

test("a small lying __len is believed, and only that many elements are read", function()
  local reads = 0
  local t = setmetatable({1, 2, 3, 4, 5}, {__len = function() return 2 end,
                                           __index = function() reads = reads + 1 end})
  local a = cuda.array(t, "i32")
  checkeq(#a, 2); checkeq(a[0], 1); checkeq(a[1], 2); checkeq(reads, 0)
  checkeq(#cuda.host(lying(0, 1)), 0)
  checkeq(#cuda.host(lying(1.0, 7), "i64"), 1)
end)

test("copyfrom, copyto and compare check __len as well", function()
  local a = cuda.array(3)
  checkerr("table length must not be negative, got -1", function() a:copyfrom(lying(-1, 1)) end)
  checkerr("table length 4611686018427387904 is larger", function() a:copyfrom(lying(1 << 62, 1)) end)
  checkerr("cannot copy a table of 4 values into cuda.Array<f32>[3]", function() a:copyfrom(lying(4, 1)) end)
  -- two tables that both lie about a negative length used to agree on 2^64 - 1 elements
  checkerr("table length must not be negative, got -1", cuda.compare, lying(-1, 1), lying(-1, 1))
  checkerr("table length 4611686018427387904 is larger", cuda.compare, lying(1 << 62, 1), lying(1 << 62, 1))
  checkerr("lengths differ (1099511627776 and 3 elements)", cuda.compare, lying(1 << 40, 1), a)
  check(cuda.compare(lying(3, 0), a), "a lying __len that tells the truth compares")
  checkeq(a:copyfrom(lying(3, 2))[2], 2.0)
end)

-- 2. __index and __newindex that raise or return non-numbers

test("__index raising leaves nothing broken", function()
  local boom = setmetatable({}, {__len = function() return 5 end,
                                 __index = function(_, i) if i == 3 then error("boom at " .. i) end return i end})
  checkerr("boom at 3", cuda.array, boom)
  checkerr("boom at 3", cuda.host, boom, "i32")
  local a, h = cuda.array(5):fill(9), cuda.host(5, "f64"):fill(9)
  checkerr("boom at 3", function() a:copyfrom(boom) end)
  checkerr("boom at 3", function() h:copyfrom(boom) end)
  checkeq(a[0], 9.0); checkeq(h[0], 9.0) -- nothing is written until a whole block is read
  checkerr("boom at 3", cuda.compare, boom, a)
  checkerr("boom at 3", cuda.compare, h, boom)
  a[4] = 3; checkeq(a[4], 3.0)
  check(cuda.compare(a, {9, 9, 9, 9, 3}), "array still usable")
end)

test("__newindex raising during copyto and tolist targets", function()
  local a = cuda.arange(4, "i32")
  local t = setmetatable({}, {__newindex = function(_, i) if i == 2 then error("no room at " .. i) end end})
  checkerr("no room at 2", function() a:copyto(t) end)
  checkeq(a:tolist()[4], 3)
  local h = cuda.host({5, 6}, "u8")
  checkerr("no room at 2", function() h:copyto(t) end)
  checkeq(h[1], 6)
end)

test("__index returning non-numbers or out-of-range numbers", function()
  local function gives(v) return lying(3, v) end
  checkerr("element 0: expected a number, got string", cuda.array, gives("x"))
  checkerr("element 0: expected a number, got nil", cuda.host, gives(nil))
  checkerr("element 0: i32 holds whole numbers, got 0.5", cuda.array, gives(0.5), "i32")
  checkerr("element 0: 256 does not fit in u8 (0..255)", cuda.host, gives(256), "u8")
  local a = cuda.array(3)
  checkerr("element 0: expected a number, got table", function() a:copyfrom(gives({})) end)
  checkerr("element 1 of the table is boolean, not a number", cuda.compare, gives(true), a)
  checkerr("element 1 of the table is function, not a number", cuda.compare, a, gives(print))
  -- the element in the message is the array's, not the staging block's
  local late = setmetatable({}, {__len = function() return STAGE + 2 end,
                                 __index = function(_, i) return i == STAGE + 2 and "late" or 0 end})
  checkerr("element " .. (STAGE + 1) .. ": expected a number, got string", cuda.array, late)
end)

-- 3. metamethods that free the array being copied

test("h:copyfrom(t) whose __index frees h", function()
  local h = cuda.host(4)
  checkerr("cuda.HostBuffer<f32>[4] was freed during a copy from a table",
           function() h:copyfrom(freeing_reader(4, h, 2)) end)
  check_freed(h)
  local a = cuda.array(4, "i64")
  checkerr("cuda.Array<i64>[4] was freed during a copy from a table",
           function() a:copyfrom(freeing_reader(4, a, 4)) end)
  check_freed(a)
  local big = cuda.host(STAGE + 10, "u8")
  checkerr("was freed during a copy from a table", function() big:copyfrom(freeing_reader(#big, big, STAGE + 5)) end)
  check_freed(big)
end)

test("a:copyto(t) whose __newindex frees a", function()
  for _, make in ipairs{cuda.array, cuda.host} do
    for _, n in ipairs{3, STAGE + 3} do
      local a = make(n, "i32")
      local t = setmetatable({}, {__newindex = function(t, i, v) a:free() rawset(t, i, v) end})
      checkerr("was freed during a copy to a table", function() a:copyto(t) end)
      checkeq(rawget(t, 1), 0) -- the element read before the free arrived
      checkeq(rawget(t, 2), nil)
      check_freed(a)
    end
  end
end)

test("cuda.compare(t, a) and cuda.compare(a, t) whose __index frees a", function()
  for _, make in ipairs{cuda.array, cuda.host} do
    local a = make(5)
    checkerr("was freed during cuda.compare", cuda.compare, freeing_reader(5, a, 1), a)
    check_freed(a)
    local b = make(5)
    checkerr("was freed during cuda.compare", cuda.compare, b, freeing_reader(5, b, 5))
    check_freed(b)
    local c = make(70000) -- more than one of compare's blocks
    checkerr("was freed during cuda.compare", cuda.compare, freeing_reader(70000, c, 66000), c)
    check_freed(c)
  end
  -- a __len that frees the array on the other side
  local d = cuda.host(2)
  local t = setmetatable({1, 2}, {__len = function() d:free() return 2 end})
  checkerr("was freed during cuda.compare", cuda.compare, d, t)
  check_freed(d)
end)

test("cuda.array(t) whose __index frees the new array through debug.getlocal", function()
  for _, make in ipairs{cuda.array, cuda.host} do
    local t = setmetatable({}, {__len = function() return 3 end, __index = function()
      for k = 1, 20 do
        local name, v = debug.getlocal(2, k)
        if not name then break end
        if type(v) == "userdata" then pcall(function() v:free() end) end
      end
      return 1
    end})
    checkerr("was freed during a copy from a table", make, t)
  end
end)

test("option tables whose __index frees the source", function()
  local a = cuda.array{1, 2, 3}
  local opts = setmetatable({}, {__index = function() a:free() return true end})
  checkerr("self is a cuda.Array<f32>[3] that has been freed", function() return a:host(opts) end)
  check_freed(a)
  local h = cuda.host{1, 2}
  checkerr("source is a cuda.HostBuffer<f32>[2] that has been freed", cuda.host, h, nil,
           setmetatable({}, {__index = function() h:free() return false end}))
  local b = cuda.array{1, 2}
  checkerr("cuda.Array<f32>[2] was freed during cuda.compare (by a metamethod or a finalizer "
           .. "that ran meanwhile)", cuda.compare, b, {1, 2},
           setmetatable({}, {__index = function() b:free() end}))
end)

test("honest tables still copy both ways and compare", function()
  local n = STAGE + 7
  local t = {}
  for i = 1, n do t[i] = i % 251 end
  local a, h = cuda.array(t, "u8"), cuda.host(t, "i32")
  checkeq(a[n - 1], (n) % 251); checkeq(h[STAGE], (STAGE + 1) % 251)
  local back = a:tolist()
  checkeq(#back, n); checkeq(back[n], n % 251)
  local out = {}
  h:copyto(out)
  checkeq(out[STAGE + 1], (STAGE + 1) % 251)
  check(cuda.compare(t, a) and cuda.compare(h, t), "compare agrees")
  checkeq(h:copyfrom(back)[0], 1)
end)

return T.done()
