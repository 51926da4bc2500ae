-- finalizers.lua: Lua code that runs in the middle of a binding (a finalizer run by an
-- allocation, an options table's __index) and frees or drops what C is using. Each case must
-- raise a clear error or do the right thing; none may touch freed memory. Before the checks
-- these cover, a fill crashed writing through a NULL pointer, and a compile read option strings
-- the collector had freed (run under build-address/cudalab to see the reads as reports).
local T = dofile("tests/lua/testlib.lua")
local RUNS = cuda.backend() ~= "none"
T.plan(9)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

-- A fill stages through a host block only where device memory is neither the GPU's (cudalab's
-- own kernels fill it) nor the simulator's (written in place): with no device at all (--backend
-- none), where these run.
local function staged_test(name, f)
  if cuda.backend() == "cuda" or cuda.backend() == "sim" then
    T.skip(name, "a fill on the " .. cuda.backend() .. " backend stages nothing, so no finalizer runs inside it")
  else test(name, f) end
end

local N = (1 << 14) + 3 -- a fill of this stages all of it: a 64 KiB block for f32

-- A minor collection after every allocation of 1% of the heap (a few KiB here), a major one
-- only once the heap has grown tenfold: so the staging block's allocation runs a minor
-- collection, and with it the finalizers of what died since the last.
collectgarbage("generational", 1, 1000)

-- Frees every array of N elements on the stack of the calls under the finalizer that runs
-- this: a constructor's new array, which Lua holds nowhere else.
local function free_arrays_on_stack()
  for level = 2, 12 do
    if not debug.getinfo(level, "S") then return end
    for k = 1, 30 do
      local name, v = debug.getlocal(level, k)
      if not name then break end
      local mt = type(v) == "userdata" and getmetatable(v)
      if mt and rawget(mt, "__name") == "cudalab.Array" and #v == N then v:free() end
    end
  end
end

-- Calls f(...) while a finalizer is pending that frees an array: with `make`, a fresh array
-- make() returns, passed first; without, those on the stack (free_arrays_on_stack). When the
-- finalizer runs is the collector's choice, so this tries until it runs inside the call, which
-- must then raise `needle`; a call it did not run inside must succeed.
local function freed_during(needle, make, f, ...)
  for _ = 1, 20 do
    local victim = make and make()
    local inside, ran = false, false
    collectgarbage("step") -- a fresh minor cycle: little is allocated before the call's own
    setmetatable({}, {__gc = function()
      if not inside then return end
      ran = true
      if victim then victim:free() else free_arrays_on_stack() end
    end})
    inside = true
    local ok, err
    if victim then ok, err = pcall(f, victim, ...) else ok, err = pcall(f, ...) end
    inside = false
    if ran then
      check(not ok, "the call raised")
      check(tostring(err):find(needle, 1, true), tostring(err))
      if victim then
        check(victim.freed, "the array is marked freed")
        check(tostring(victim):find("(freed)", 1, true), tostring(victim))
      end
      return
    end
    check(ok, "a call with no finalizer inside it works: " .. tostring(err))
  end
  error("the finalizer never ran inside the call")
end

local function zeros(dtype) return function() return cuda.zeros(N, dtype) end end

staged_test("a:fill, a:arange and a:rand whose allocation runs a finalizer that frees a", function()
  local needle = "cuda.Array<f32>[" .. N .. "] was freed during a fill"
  freed_during(needle, zeros(), function(a) return a:fill(1) end)
  freed_during(needle, zeros(), function(a) return a:fill(-2.5) end)
  freed_during(needle, zeros(), function(a) return a:arange() end)
  freed_during(needle, zeros(), function(a) return a:rand(7) end)
  freed_during("cuda.Array<f64>[" .. N .. "] was freed during a fill", zeros("f64"),
               function(a) return a:rand() end)
  freed_during("cuda.Array<u8>[" .. N .. "] was freed during a fill", zeros("u8"),
               function(a) return a:fill(200) end)
end)

staged_test("cuda.zeros(n):fill(v), the array on the stack alone", function()
  freed_during("was freed during a fill", nil, function() return cuda.zeros(N):fill(3) end)
end)

staged_test("constructors whose new array a finalizer frees through debug.getlocal", function()
  freed_during("was freed during a fill", nil, cuda.arange, N)
  freed_during("was freed during a fill", nil, cuda.rand, N, "f32", 5)
  freed_during("was freed during a fill", nil, cuda.ones, N)
  freed_during("was freed during a fill", nil, cuda.full, N, 4)
end)

test("fills with no finalizer pending still fill", function()
  local a = cuda.zeros(N):fill(2)
  checkeq(a[0], 2.0); checkeq(a[N - 1], 2.0)
  checkeq(cuda.arange(N, "i32")[N - 1], N - 1)
  checkeq(a:arange()[N - 2], N - 2.0)
  local r = cuda.rand(N, "f64", 9)
  check(r[N - 1] >= 0 and r[N - 1] < 1, "rand in [0, 1)")
end)

-- Compiler options made on the spot, each popped before the next is read: the define must
-- still reach the compiler when a collection runs between the reads.
local SRC = [[
__global__ void affine(int *a) { int i = threadIdx.x; a[i] = N * i + M; }
]]
local DEFS = {{"N", 7}, {"M", 3}}

-- Fresh strings: built from numbers each call, referenced by nothing once returned. No literal
-- in this file spells an option: Lua keeps one copy of each short string, which the literal
-- would keep alive.
local function fresh_option(i)
  local d = DEFS[i]
  return d and ("-D" .. d[1] .. "=" .. d[2]) or nil
end

-- An __index that collects, then makes many strings of the option's size (which would take
-- the memory of a freed option), then returns a fresh option.
local function collecting_index(_, i)
  if type(i) ~= "number" then return nil end
  collectgarbage()
  local filler = {}
  for j = 1, 2000 do filler[j] = "-DQ=" .. (j % 10) end
  return fresh_option(i)
end

-- Compiles with opts and checks a[i] = 7 * i + 3 on a backend that runs kernels.
local function check_affine(opts)
  local ok, k = pcall(cuda.kernel, SRC, opts)
  check(ok, "compiled with both defines: " .. tostring(k))
  if not RUNS then return end
  local a = cuda.array(32, "i32")
  k[{1, 32}](a)
  local got = a:tolist()
  for i = 0, 31 do checkeq(got[i + 1], 7 * i + 3, "a[" .. i .. "]") end
end

test("options from an __index that returns fresh strings and collects", function()
  check_affine(setmetatable({}, {__index = collecting_index}))
end)

test("opts.options itself from __index, its strings fresh too", function()
  check_affine(setmetatable({}, {__index = function(_, key)
    if key == "options" then return setmetatable({}, {__index = collecting_index}) end
  end}))
end)

test("plain option tables compile as before", function()
  check_affine({fresh_option(1), fresh_option(2)})
  check_affine({options = {fresh_option(1), fresh_option(2)}})
end)

test("options from __index: bad values and endless lists are refused", function()
  checkerr("compiler option 2 must be a string like \"-use_fast_math\", got table", cuda.kernel,
           SRC, setmetatable({}, {__index = function(_, i)
             if type(i) == "number" then return i == 1 and "-DN=1" or {} end
           end}))
  checkerr("too many compiler options (at most 48)", cuda.kernel, SRC,
           setmetatable({}, {__index = function(_, i)
             return type(i) == "number" and "-DX" .. i or nil
           end}))
end)

test("an __index that raises leaves the next compile working", function()
  checkerr("no options today", cuda.kernel, SRC,
           setmetatable({}, {__index = function() error("no options today") end}))
  check_affine({fresh_option(1), fresh_option(2)})
end)

collectgarbage("generational", 20, 100) -- Lua's defaults, as the engine starts with

return T.done()
