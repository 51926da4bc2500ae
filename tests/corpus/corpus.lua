-- corpus.lua: the harness of the kernel corpus (tests/corpus/*.lua). Each case compiles a kernel,
-- runs it on random inputs, checks its outputs against a CPU reference, then checks their bits
-- against a digest recorded on an NVIDIA H200 (digests.lua). The same files run on the GPU in
-- `make test-gpu`, so a digest that both backends match means the simulator gives the GPU's bits.
--
--   local C = dofile("tests/corpus/corpus.lua")
--   C.case{
--     name = "bfind: __ffs of random u32",   -- unique: the digest's key
--     src = [[ __global__ void ffs(...) {...} ]],
--     kernel = "ffs",                        -- optional: which kernel, when src has several
--     run = function(k) ... return {out} end, -- launches; returns the output arrays
--     check = function(outs) ... end,         -- compares with a CPU reference; errors on mismatch
--   }
--   return C.done()
--
-- The plan line tests/run.sh checks is the number of lines of the corpus file that begin with
-- `C.case{` or `C.case(`: write one case per call, or, for a file that makes its cases in loops,
-- declare the count with C.plan(n) before the first case.
--
-- Recording (on the GPU only): CUDALAB_CORPUS_RECORD=file appends `["name"] = "digest",` lines
-- to file; `make corpus-record` gathers them into digests.lua.
local T = dofile("tests/lua/testlib.lua")

-- The plan: as many tests as the file that loads this one has C.case calls, counted in its
-- source, so adding a case needs no count kept by hand.
local function plan_from_caller()
  local me, src = debug.getinfo(1, "S").source, nil
  for level = 2, 8 do
    local info = debug.getinfo(level, "S")
    if not info then break end
    if info.source:sub(1, 1) == "@" and info.source ~= me then src = info.source; break end
  end
  local f = src and io.open(src:sub(2))
  if not f then error("corpus.lua must be loaded with dofile from a corpus file") end
  local n = 0
  for line in f:lines() do
    if line:find("^%s*C%.case%s*[{(]") then n = n + 1 end
  end
  f:close()
  T.plan(n)
end

local C = {check = T.check, checkeq = T.checkeq, checkerr = T.checkerr}

-- C.plan(n): the count, for a file whose cases are made in loops; otherwise the first case or
-- test counts the C.case lines of its file.
local planned = false
function C.plan(n)
  planned = true
  T.plan(n)
end

local function ensure_plan()
  if planned then return end
  planned = true
  plan_from_caller()
end

function C.test(...)
  ensure_plan()
  return T.test(...)
end

local digests = dofile("tests/corpus/digests.lua")
local record = os.getenv("CUDALAB_CORPUS_RECORD")
local seen = {}

-- FNV-1a over 64 bits: Lua's integers wrap on overflow, which is the arithmetic FNV wants.
local function fnv1a(h, s)
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end

-- One digest over every output: its dtype, its length and its raw bytes.
function C.digest(outs)
  local h = -3750763034362895579 -- 0xcbf29ce484222325, the FNV offset basis
  for i, a in ipairs(outs) do
    h = fnv1a(h, string.format("%d:%s:%d:", i, a.dtype, #a))
    h = fnv1a(h, a:tobytes())
  end
  return string.format("%016x", h)
end

-- Blocks of b threads that cover n.
function C.blocks(n, b) return (n + b - 1) // b end

-- The sequence f(1) .. f(n).
function C.map(n, f)
  local t = {}
  for i = 1, n do t[i] = f(i) end
  return t
end

-- x rounded to f32 (round to nearest even), as a Lua number.
function C.f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- ---- 16-bit floats in Lua, independent of the product's own conversions ----

local HALF = {f16 = {m = 10, bias = 15, emask = 31}, bf16 = {m = 7, bias = 127, emask = 255}}

-- The exact value of half bits h; kind "f16" (default) or "bf16".
function C.half_value(h, kind)
  local f = HALF[kind or "f16"]
  local e, m = (h >> f.m) & f.emask, h & ((1 << f.m) - 1)
  local v
  if e == f.emask then v = m ~= 0 and 0 / 0 or math.huge
  elseif e == 0 then v = m * 2.0 ^ (1 - f.bias - f.m)
  else v = (m + (1 << f.m)) * 2.0 ^ (e - f.bias - f.m) end
  if h & 0x8000 ~= 0 then v = -v end
  return v
end

-- x rounded to half bits: mode "rn" (default, ties to even), "rz", "rd" or "ru"; NaN is 0x7fff.
function C.half_bits(x, kind, mode)
  local f = HALF[kind or "f16"]
  mode = mode or "rn"
  if x ~= x then return 0x7fff end
  local s = (x < 0 or (x == 0 and 1 / x < 0)) and 0x8000 or 0
  local a = math.abs(x)
  local inf = f.emask << f.m
  local up = (mode == "ru" and s == 0) or (mode == "rd" and s ~= 0)
  local over = s | ((mode == "rn" or up) and inf or inf - 1)
  if a == 0 then return s end
  if a == math.huge then return s | inf end -- an infinity is exact in every mode
  local emin = 1 - f.bias
  local e = math.max(emin, math.floor(math.log(a, 2)) - 1)
  while e <= f.bias and a >= 2.0 ^ (e + 1) do e = e + 1 end
  if e > f.bias then return over end
  local n = a / 2.0 ^ (e - f.m)
  local fl = math.floor(n)
  local fr = n - fl
  if mode == "rn" then
    if fr > 0.5 or (fr == 0.5 and fl % 2 == 1) then fl = fl + 1 end
  elseif up and fr > 0 then
    fl = fl + 1
  end
  local bits = a < 2.0 ^ emin and fl or ((e + f.bias) << f.m) + fl - (1 << f.m)
  if bits >= inf then return over end
  return s | bits
end

-- A device array of n uniform numbers in [lo, hi) and the same numbers as a Lua sequence.
-- cuda.rand gives the same numbers for the same seed on every backend.
function C.uniform(n, seed, lo, hi, dtype)
  dtype = dtype or "f32"
  local xs = cuda.rand(n, dtype, seed):tolist()
  for i = 1, n do xs[i] = lo + (hi - lo) * xs[i] end
  return cuda.array(xs, dtype), xs
end

-- A device array of n random integers in [lo, hi] (Lua integers), and the same as a sequence.
function C.integers(n, seed, lo, hi, dtype)
  local u = cuda.rand(n, "f64", seed):tolist()
  local xs = {}
  for i = 1, n do xs[i] = lo + math.floor(u[i] * (hi - lo + 1)) end
  return cuda.array(xs, dtype or "i32"), xs
end

-- Compares a device array with a sequence: exact unless {ulp = n} or {rtol =, atol =} allow.
function C.same(got, want, opts)
  local _, r = cuda.compare(got, want, {rtol = opts and opts.rtol or 0, atol = opts and opts.atol or 0})
  if not r.ok then error(tostring(r), 2) end
end

local function compile(c)
  if c.kernel then return cuda.module(c.src, c.opts)[c.kernel] end
  return cuda.kernel(c.src, c.opts)
end

-- On a GPU with CUDALAB_CORPUS_DIFF=1: runs the case on the simulator too and prints where the
-- outputs' bits differ, element by element, for finding what the simulator does differently.
local diff = os.getenv("CUDALAB_CORPUS_DIFF") == "1" and cuda.backend() == "cuda"

local function print_diff(c, outs)
  local old = cuda.use("sim")
  local ok, sim = pcall(function() return c.run(compile(c)) end)
  cuda.use(old)
  if not ok then return print("# diff " .. c.name .. ": the simulator failed: " .. tostring(sim)) end
  for i, a in ipairs(outs) do
    local g, s, w = a:tobytes(), sim[i]:tobytes(), #a > 0 and a.nbytes // #a or 1
    local n, shown = 0, {}
    for j = 0, #g // w - 1 do
      local gb, sb = g:sub(j * w + 1, (j + 1) * w), s:sub(j * w + 1, (j + 1) * w)
      if gb ~= sb then
        n = n + 1
        if #shown < 6 then
          shown[#shown + 1] = string.format("[%d] gpu %s sim %s", j, (gb:reverse():gsub(".", function(ch)
            return string.format("%02x", ch:byte()) end)), (sb:reverse():gsub(".", function(ch)
            return string.format("%02x", ch:byte()) end)))
        end
      end
    end
    if n > 0 then
      print(string.format("# diff %s, output %d: %d of %d differ: %s", c.name, i, n, #a, table.concat(shown, ", ")))
    end
  end
end

function C.case(c)
  ensure_plan()
  assert(type(c.name) == "string" and c.run and c.check, "a case needs name, run and check")
  assert(not seen[c.name], "two corpus cases are named '" .. c.name .. "'")
  seen[c.name] = true
  local ok, err = pcall(function()
    local outs = c.run(compile(c))
    if diff then print_diff(c, outs) end
    c.check(outs)
    local d = C.digest(outs)
    if record then
      local f = assert(io.open(record, "a"))
      f:write(string.format("  [%q] = %q,\n", c.name, d))
      f:close()
    end
    local want = digests[c.name]
    T.check(want, "no digest recorded on the H200 for this case (make corpus-record on a GPU)")
    T.checkeq(d, want, "the outputs' bits differ from the H200's")
  end)
  T.test(c.name, function() if not ok then error(err, 0) end end)
end

C.done = T.done
return C
