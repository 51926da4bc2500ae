-- buffers.lua: messages built from many or long pieces, past the 1 KiB a luaL_Buffer keeps
-- inline (once it spills it pushes onto the Lua stack, where misuse corrupted it), and launch
-- dimensions up to 2^32 - 1, which are unsigned. Needs no GPU: every check here fails before a
-- launch. Completion over more than 1 KiB of candidates is in tests/console.sh (it needs a
-- terminal).
local T = dofile("tests/lua/testlib.lua")
T.plan(8)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

-- Twelve kernels whose names are 100 characters: over 1 KiB of names in all.
local function long_name(i) return string.format("k%s%02d", string.rep("x", 97), i) end
local MANY = {}
for i = 1, 12 do
  MANY[i] = string.format("__global__ void %s(float *a) { a[0] = %d; }", long_name(i), i)
end
MANY = table.concat(MANY, "\n")
local SORTED = {}
for i = 1, 12 do SORTED[i] = long_name(i) end

test("cuda.kernel names every kernel of a source with over 1 KiB of names", function()
  checkeq(#SORTED[1], 100)
  checkerr("this source defines 12 kernels (" .. table.concat(SORTED, ", ") .. "): pick one",
           cuda.kernel, MANY)
end)

test("and picks one of them by name", function()
  checkeq(cuda.kernel(MANY, {name = long_name(7)}).name, long_name(7))
  checkerr("no kernel named '" .. long_name(13) .. "'", cuda.kernel, MANY, {name = long_name(13)})
end)

test("a module of them lists its kernels, sorted", function()
  local m = cuda.module(MANY)
  local names = m:kernels()
  checkeq(#names, 12)
  for i = 1, 12 do checkeq(names[i], SORTED[i]) end
  check(tostring(m):find(table.concat(SORTED, ", "), 1, true), tostring(m))
end)

local K = cuda.kernel("__global__ void f(float *a) {}")
local MAX = 2^32 - 1

-- The message of launching K with block b (and grid g, 1 when nil); it must hold no negative
-- number.
local function launch_error(g, b)
  local ok, err = pcall(function() return K[{g or 1, b}] end)
  if ok then ok, err = pcall(K[{g or 1, b}], cuda.array(1)) end
  check(not ok, "the launch was refused")
  err = tostring(err)
  check(not err:find("%-%d"), "a negative number in: " .. err)
  return err
end

test("a block of 2^32 - 1 threads is reported unsigned", function()
  local err = launch_error(1, {MAX, 1, 1})
  check(err:find("a block of 4294967295 threads (4294967295 x 1 x 1) is over the limit of 1024",
                 1, true), err)
  err = launch_error(1, MAX)
  check(err:find("(4294967295 x 1 x 1)", 1, true), err)
end)

test("a block whose threads pass 2^63 is reported unsigned", function()
  local err = launch_error(1, {MAX, MAX, 1})
  check(err:find("a block of 18446744065119617025 threads (4294967295 x 4294967295 x 1)", 1, true), err)
end)

test("a block whose threads pass 2^64 says so rather than wrapping", function()
  local err = launch_error(1, {MAX, MAX, MAX})
  check(err:find("a block of more than 18446744073709551615 threads (4294967295 x 4294967295 x "
                 .. "4294967295)", 1, true), err)
  -- 2^22 * 2^22 * 2^20 is 2^64, which wraps to 0 threads in 64 bits
  err = launch_error(1, {1 << 22, 1 << 22, 1 << 20})
  check(err:find("a block of more than 18446744073709551615 threads (4194304 x 4194304 x 1048576)",
                 1, true), err)
end)

test("a grid of 2^32 - 1 blocks is reported unsigned", function()
  local err = launch_error({MAX, 1, 1}, 32)
  check(err:find("grid.x = 4294967295 is over the limit of 2147483647", 1, true), err)
end)

test("a dimension of 2^32 is refused as too large", function()
  checkerr("block.y = 4294967296 is too large", function() return K[{1, {1, 1 << 32}}] end)
end)

return T.done()
