-- api_fuzz.lua SECONDS SEED: calls every function and method a learner can reach (the cuda
-- module, arrays, host buffers, kernels, modules, launch objects, result tables, cpu.time,
-- help, pp, the lesson commands) with random and hostile arguments, each call under pcall,
-- for SECONDS seconds. Errors are expected and ignored; what must never happen is the
-- process dying or a sanitizer report, which tests/fuzz/run.sh watches for from outside.
--
-- Design stance: a seeded generator, so that a seed that kills the engine replays the same
-- calls (run.sh replays it with FUZZ_TRACE=1, which names each call on stderr before making
-- it). Sizes stay small or far over the device, never in between: a valid 4 GiB array is not
-- a bug, only a slow round. Launches whose configuration asks for more than 64 Ki threads
-- are built (that checks the limits) but not run, for the same reason.
-- The summary line "calls N" goes to stderr; stdout (help texts, printed arrays) is noise.
--
-- Hostile tables: besides the fixed ones below, hostile() makes a fresh table each time whose
-- __len lies (huge, negative, fractional, not a number, or raises), whose __index and
-- __newindex return odd values, raise, or free an array or host buffer of the pool (often the
-- very one being copied) while C is in the middle of a copy. Their other metamethods (__tostring,
-- __eq, __lt, __concat, __call, __close, __gc) do the same mischief whenever C or the Lua library
-- happens to call them. Completion: the completer is asked about prefixes over a namespace of
-- thousands of long names, hostile entries among them (the console's own Tab path through a
-- terminal is run.sh's completion round).
--
-- Finalizers: a C function may call into Lua wherever it allocates, since the allocation may
-- run a collection and with it any pending __gc. gc_round leaves finalizers behind (objects
-- already dropped) that free the array a call is about to use, free every array on the stack
-- (found through debug.getlocal, which reaches a C function's own values too: a constructor's
-- new array), close a coroutine that holds it in a <close> variable, collect, or refresh the
-- pool (dropping references); it tunes the collector so that the call's own allocation is the
-- one that runs them. Compiler option tables make each option afresh in __index and collect
-- between reads, so an option C keeps a pointer to without a reference is freed under it.
-- Argument lists are sometimes thousands long (table.unpack), and kernel paths name a FIFO, a
-- folder, /dev/zero, dangling and looping links.
local seconds = tonumber(arg and arg[1]) or 10
local seed = tonumber(arg and arg[2]) or os.time()
local trace = os.getenv("FUZZ_TRACE") == "1"
math.randomseed(seed)
local R = math.random
local errw = io.stderr
local calls, errors = 0, 0

local function pick(t) return t[R(#t)] end

-- ---- kernels to launch: every parameter kind the argument checker knows --------------------
local SOURCES = {
  [[__global__ void inc(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1; }]],
  [[__global__ void mix(double *o, const int *x, unsigned char *b, long long s, double d, unsigned u) {
  int i = threadIdx.x; if (i < 4) { o[i] = x[i] + d + s + u; b[i] = (unsigned char)i; } }]],
  [[__global__ void empty() {}]],
  [[__global__ void sh(float *a, int n) { extern __shared__ float s[]; int i = threadIdx.x;
  s[i] = i < n ? a[i] : 0; __syncthreads(); if (i < n) a[i] = s[blockDim.x - 1 - i]; }]],
  [[struct P { float x; int y; };
__global__ void byval(P p, float *a) { if (threadIdx.x == 0) a[0] = p.x + p.y; }]],
  [[template <typename T> __global__ void tk(T *a) { a[threadIdx.x] = T(1); }
template __global__ void tk<float>(float *);]],
  [[__global__ void oob(int *a, int n) { a[threadIdx.x + n] = 1; }]],
}
local FILES = { "inc.cu", "saxpy.cu", "vector_add.cu", "reduce.cu", "transpose.cu", "sincos.cu" }

-- Kernel paths that are no regular file: opening one as a kernel must be refused, never waited
-- on (a FIFO with no writer) or read forever (/dev/zero). They go in FUZZ_SCRATCH (run.sh's
-- scratch folder, removed even after a crash), else in a temporary folder removed at the end.
local SPECIAL_DIR = os.getenv("FUZZ_SCRATCH")
if SPECIAL_DIR then
  SPECIAL_DIR = SPECIAL_DIR .. "/special"
else
  SPECIAL_DIR = os.tmpname()
  os.remove(SPECIAL_DIR)
end
local SPECIAL = {}
if os.execute("rm -rf '" .. SPECIAL_DIR .. "' && mkdir -p '" .. SPECIAL_DIR .. "'") then
  local d = SPECIAL_DIR .. "/"
  os.execute("cd '" .. d .. "' && { mkfifo fifo.cu; mkdir folder.cu folder.cuh; " ..
             "ln -s /dev/zero zero.cu; ln -s fifo.cu fifo_link.cu; ln -s gone.cu dangling.cu; " ..
             "ln -s loop.cu loop.cu; ln -s /dev/null null.cuh; } 2>/dev/null")
  for _, f in ipairs({ "fifo.cu", "folder.cu", "folder.cuh", "zero.cu", "fifo_link.cu",
                       "dangling.cu", "loop.cu", "null.cuh" }) do
    SPECIAL[#SPECIAL + 1] = d .. f
  end
end
for _, f in ipairs({ "/dev/zero", "/dev/null", "/", "/proc/self/mem", "/dev/stdin" }) do
  SPECIAL[#SPECIAL + 1] = f
end

local kernels, modules = {}, {}
for _, src in ipairs(SOURCES) do
  local ok, m = pcall(cuda.module, src)
  if ok then
    modules[#modules + 1] = m
    for _, name in ipairs(m:kernels()) do kernels[#kernels + 1] = m[name] end
  end
end
for _, f in ipairs(FILES) do
  local ok, k = pcall(cuda.kernel, f)
  if ok then kernels[#kernels + 1] = k end
end

-- ---- values ----------------------------------------------------------------------------
local recursive = {}
recursive[1] = recursive
recursive.self = recursive
local deep = {}
do local t = deep for _ = 1, 200 do t[1] = {} t = t[1] end end
local evil = setmetatable({}, {
  __index = function() error("evil __index") end,
  __newindex = function() error("evil __newindex") end,
  __len = function() return -1 end,
  __tostring = function() error("evil __tostring") end,
  __name = "Evil",
  __eq = function() return true end,
  __lt = function() error("evil __lt") end,
  __call = function() error("evil __call") end,
  __pairs = function() error("evil __pairs") end,
})
local lying = setmetatable({1, 2, 3}, { __len = function() return 1 << 40 end })
local huge_len = setmetatable({}, { __len = function() return math.maxinteger end, __index = function() return 1 end })
local weird_tostring = setmetatable({}, { __tostring = function() return {} end })

local NUMBERS = { 0, 1, 2, 3, 4, 7, 31, 32, 33, 100, 255, 256, 257, 1000, 1024, 1025, 4096, 65535, 65536, 100000,
  -1, -2, -256, -2147483648, math.mininteger, math.maxinteger, 1 << 40, 1 << 62, 2^64, -2^63,
  0.5, -0.5, 1.5, 1e-310, 1e308, -1e308, 0/0, -(0/0), math.huge, -math.huge, -0.0, 3.0, 1e15 }
-- (2^31, 2^32 and 2^34 are left out: as sizes they are real multi-GiB buffers, slow to fill; as
-- launch dimensions they come from dim() below)
local STRINGS = { "", "f32", "f64", "i32", "u32", "i64", "u8", "f16", "x\0y", "\0", "%s%n%d", "inc.cu", "../../etc/passwd",
  "nope.cu", "sim", "none", "cuda", "-DN=4", "-use_fast_math", "--bogus-option", string.rep("a", 5000),
  "\255\254", "Array.copyto", "cuda.array", "1", "0x10", "-1", "nan", "inf", "__global__ void k(){}", "lessons",
  "  ", "\n", "01", "99", "intro", "out.npy", "out.csv", "format", "npy", "csv" }
for _, f in ipairs(SPECIAL) do STRINGS[#STRINGS + 1] = f end
local FUNCS = {
  function() end,
  function() error("boom") end,
  function() error({}) end,
  function(...) return ... end,
  function() return 1, 2, 3 end,
  function() coroutine.yield() end,
  function() return 0/0 end,
  print, tostring, error, pcall, collectgarbage,
}

local objects -- filled by refresh()

-- An array or host buffer of the pool to free from inside a callback, or nil.
local function victim()
  local pool = {}
  for _, o in ipairs(objects or {}) do
    local mt = type(o) == "userdata" and getmetatable(o)
    local name = type(mt) == "table" and rawget(mt, "__name")
    if name == "cudalab.Array" or name == "cudalab.HostBuffer" then pool[#pool + 1] = o end
  end
  return #pool > 0 and pick(pool) or nil
end

local refresh -- defined below: a fresh pool, the old one dropped

-- Frees every array and host buffer on the stack of the calls under this one, C functions'
-- own values included (debug.getlocal sees those too): what a finalizer run by a binding's
-- allocation can reach that the learner's code holds nowhere else.
local function free_on_stack()
  for level = 2, 40 do
    if not debug.getinfo(level, "S") then break end
    for k = 1, 200 do
      local name, v = debug.getlocal(level, k)
      if not name then break end
      local mt = type(v) == "userdata" and getmetatable(v)
      local kind = type(mt) == "table" and rawget(mt, "__name")
      if kind == "cudalab.Array" or kind == "cudalab.HostBuffer" then pcall(v.free, v) end
    end
  end
end

-- v (an array, a host buffer) in a <close> variable of a suspended coroutine: closing the
-- coroutine frees it through __close.
local function closing(v)
  local co = coroutine.create(function(x) local _ <close> = x coroutine.yield() end)
  return coroutine.resume(co, v) and co or nil
end

-- What a metamethod or finalizer does to the objects C may be using: frees v (or what the
-- pool offers), frees everything on the stack, closes v through a coroutine, collects, drops
-- the pool's references, replaces one of its objects, or raises.
local function mischief(kind, v)
  v = v or victim()
  local r = R(10)
  if r <= 3 and v then pcall(v.free, v)
  elseif r == 4 then free_on_stack()
  elseif r == 5 and v then
    local co = closing(v)
    if co then coroutine.close(co) end
  elseif r == 6 then collectgarbage(R(2) == 1 and "step" or "collect")
  elseif r == 7 then pcall(refresh)
  elseif r == 8 and objects and #objects > 0 then objects[R(#objects)] = victim() or {}
  elseif r == 9 then error("mischief in " .. kind)
  end
end

local DTYPES_ALL = { "f32", "f64", "i32", "u32", "i64", "u8" }
local HOSTILE_LENS = { 0, 1, 3, 4, 100, 1 << 18, (1 << 18) + 1, 1 << 40, 1 << 61, 1 << 62, math.maxinteger,
  -1, -4, math.mininteger, 2.5, -0.0, 0/0, math.huge, "4", "x", {}, true }

-- A fresh table whose metamethods lie, raise or free arrays; see the header.
local function hostile(v)
  local len = pick(HOSTILE_LENS)
  v = v or victim()
  local every = R(1, 8) -- how often a callback does its trick
  local calls_made = 0
  local function trick(kind)
    calls_made = calls_made + 1
    if calls_made % every ~= 0 then return false end
    local r = R(7)
    if r == 1 then error("hostile " .. kind) end
    if r <= 3 and v then pcall(v.free, v) end
    if r == 4 then collectgarbage("step") end -- a full collection per element of a 2^18 copy would stall the round
    if r == 6 then mischief(kind, v) end
    return r == 5
  end
  local mt = {}
  if R(4) > 1 then mt.__len = function() if trick("__len") then error("hostile __len") end return len end end
  if R(4) > 1 then
    mt.__index = function(_, i)
      local odd = trick("__index")
      if odd then return pick({ "x", {}, 0/0, math.huge, true, 1 << 62 }) end
      return type(i) == "number" and (i % 7) * 0.5 or nil
    end
  end
  if R(3) > 1 then mt.__newindex = function(t, k, x) if not trick("__newindex") then rawset(t, k, x) end end end
  -- the metamethods C and the library call on the side (messages, comparisons, printing)
  if R(3) == 1 then mt.__tostring = function() trick("__tostring") return "hostile" end end
  if R(4) == 1 then mt.__eq = function() trick("__eq") return R(2) == 1 end end
  if R(4) == 1 then mt.__lt = function() trick("__lt") return R(2) == 1 end end
  if R(5) == 1 then mt.__concat = function() trick("__concat") return "hostile" end end
  if R(5) == 1 then mt.__call = function() trick("__call") end end
  if R(5) == 1 then mt.__close = function() mischief("__close", v) end end
  if R(4) == 1 then mt.__gc = function() mischief("__gc", v) end end
  if R(6) == 1 then mt.__name = pick({ "cudalab.Array", "cuda.Array", "", "\0" }) end
  local t = {}
  for i = 1, pick({ 0, 1, 3, 8 }) do t[i] = i end
  return setmetatable(t, mt)
end

-- A namespace for the completer: thousands of long names, and entries whose metamethods
-- raise or whose __index chain loops.
local function big_namespace()
  local ns = {}
  local n = pick({ 10, 120, 1000, 5000 })
  local len = pick({ 1, 8, 40, 200 })
  for i = 1, n do ns["field_" .. string.rep("x", len) .. i] = (i % 3 == 0) and {} or i end
  local loop = setmetatable({}, {})
  getmetatable(loop).__index = loop
  ns.loop = loop
  ns.evil = evil
  ns.hostile = hostile()
  ns.fn = print
  ns.arr = victim()
  return ns
end

local PREFIXES = { "", "f", "field_", "field_x", "t.", "t.f", "t.field_", "t:", "t.loop.", "t.loop.loop.",
  "t.evil.", "t.hostile.", "t.arr:", "t.arr.", "t.fn.", "\"t.f", "t.f[", "cuda.", "cuda.ar", "x = t.fi" }
-- The copies that read or write a table while C holds an array: each with a table that frees
-- that very array from its callbacks (the use-after-free class of bugs).
local COPIES = {
  function(a, t) return a:copyfrom(t) end,
  function(a, t) return a:copyto(t) end,
  function(a, t) return cuda.compare(t, a) end,
  function(a, t) return cuda.compare(a, t, { rtol = 0.1 }) end,
  function(_, t) return cuda.array(t, pick(DTYPES_ALL)) end,
  function(_, t) return cuda.host(t, pick(DTYPES_ALL)) end,
  function(_, t) return cuda.host(t, "f32", { pinned = true }) end,
}
local function hostile_round()
  local a = victim()
  if not a then return end
  local f = pick(COPIES)
  if trace then errw:write(string.format("call %d: hostile copy\n", calls + 1)) errw:flush() end
  calls = calls + 1
  if not pcall(f, a, hostile(R(3) > 1 and a or nil)) then errors = errors + 1 end
  pcall(tostring, a)
end

local complete_mod = (pcall(require, "complete")) and require("complete") or nil
local function completion_round()
  if not complete_mod then return end
  local env = setmetatable({ t = big_namespace() }, { __index = _G })
  for _ = 1, R(1, 4) do
    local text = pick(PREFIXES)
    if R(4) == 1 then text = text .. pick(STRINGS):sub(1, 50) end
    if trace then errw:write(string.format("call %d: complete.candidates(%q)\n", calls + 1, text)) errw:flush() end
    calls = calls + 1
    local ok, list = pcall(complete_mod.candidates, text, env)
    if not ok then error("the completer raised: " .. tostring(list)) end -- a Tab must never raise
    if type(list) ~= "table" then error("the completer returned " .. type(list)) end
  end
end

local function table_of(depth, gen)
  local t = {}
  local n = pick({ 0, 1, 2, 3, 4, 10 })
  for i = 1, n do t[i] = gen(depth + 1) end
  if R(4) == 1 then t[pick(STRINGS)] = gen(depth + 1) end
  if R(6) == 1 then t.n = pick(NUMBERS) end
  return t
end

-- Compiler options made afresh by __index on every read, with a collection before each read
-- (so the option read before is garbage by then, unless C keeps it referenced), sometimes
-- behind an `options` field that __index makes too; now and then an odd value or mischief.
local function fresh_options(depth)
  local count = R(0, 5)
  local function fresh()
    local r = R(12)
    if r == 1 then return pick({ {}, 42, true }) end
    if r == 2 then mischief("options __index") end
    -- never a literal: Lua keeps one copy of each short string, and a literal would keep it
    return pick({ "-DFZ", "-D", "-I" }) .. R(1, 1 << 30) .. pick({ "", "=" .. R(0, 99) })
  end
  return setmetatable({}, { __index = function(_, k)
    if k == "options" then return (depth or 0) < 1 and R(3) == 1 and fresh_options(1) or nil end
    if type(k) ~= "number" or k > count then return nil end
    if R(3) > 1 then collectgarbage(R(3) == 1 and "step" or "collect") end
    return fresh()
  end, __len = function() mischief("options __len") return count end })
end

local value
-- A launch configuration, often well-formed, sometimes subtly not.
local function dim()
  local r = R(10)
  if r <= 4 then return pick({ 1, 2, 4, 32, 64, 128, 256, 1024, 2048, 0, -1, 65535, 65536, 2147483647, 2147483648 }) end
  if r <= 7 then return { pick({ 1, 2, 32, 0, 65, 1025 }), pick({ 1, 2, 32, 65535, 65536 }), pick({ 1, 64, 65, 0 }) } end
  return value(3)
end
local function config()
  local c = { dim(), dim() }
  if R(4) == 1 then c.shared = pick({ 0, 16, 4096, 49152, 49153, 300000, -1, 0/0, "x" }) end
  if R(10) == 1 then c[3] = value(3) end
  if R(20) == 1 then return value(2) end
  return c
end

-- Threads a configuration would run, or nil when it is not plain numbers.
local function threads_of(c)
  if type(c) ~= "table" then return nil end
  local total = 1
  for i = 1, 2 do
    local d = rawget(c, i)
    if type(d) == "number" then total = total * d
    elseif type(d) == "table" then
      for j = 1, 3 do
        local v = rawget(d, j) or 1
        if type(v) ~= "number" then return nil end
        total = total * v
      end
    else return nil end
  end
  return total
end

function value(depth)
  depth = depth or 0
  local r = R(depth > 2 and 8 or 11)
  if r == 1 then return nil
  elseif r == 2 then return pick({ true, false })
  elseif r <= 4 then return pick(NUMBERS)
  elseif r == 5 then return pick(STRINGS)
  elseif r <= 7 then return pick(objects)
  elseif r == 8 and R(3) == 1 then return R(4) == 1 and fresh_options() or hostile()
  elseif r == 8 then return pick({ recursive, deep, evil, lying, huge_len, weird_tostring, io.stdout, coroutine.create(print),
                                   {}, { 1, 2, 3 }, { 1, "x", 3 }, { 0/0, math.huge }, { pinned = true },
                                   { rtol = -1 }, { warmup = 0, reps = 2 }, { name = "inc" }, { lines = true },
                                   { race_check = true }, { threads = 1 }, { 1.5, 2.5 } })
  elseif r == 9 then return pick(FUNCS)
  elseif r == 10 then return table_of(depth, value)
  else return config() end
end

-- Fresh objects of every kind; the old ones are left to the collector (and to fuzzed free()).
local DTYPES = { "f32", "f64", "i32", "u32", "i64", "u8" }
function refresh()
  objects = {}
  local function add(f, ...)
    local ok, o = pcall(f, ...)
    if ok and o ~= nil then objects[#objects + 1] = o end
  end
  for _ = 1, 3 do add(cuda.array, pick({ 0, 1, 4, 33, 1000 }), pick(DTYPES)) end
  add(cuda.arange, 64, "i32")
  add(cuda.rand, 100, "f64", 1)
  add(cuda.host, pick({ 0, 1, 4, 100 }), pick(DTYPES))
  add(cuda.host, 8, "f32", { pinned = true })
  for _ = 1, 2 do objects[#objects + 1] = pick(kernels) end
  objects[#objects + 1] = pick(modules)
  add(function() return pick(kernels)[{ 1, 32 }] end)
  add(cuda.device)
  add(cuda.meminfo)
  add(cuda.compare, { 1, 2 }, { 1, 3 })
  add(cpu.time, function() end, { warmup = 0, reps = 1 })
  add(cuda.cache)
  local a = cuda.array(4); a:free()
  objects[#objects + 1] = a
end

-- ---- targets ---------------------------------------------------------------------------
local targets = {} -- { name, function, self-kind }

local function add_functions(prefix, t, seen)
  seen = seen or {}
  if seen[t] then return end
  seen[t] = true
  for k, v in pairs(t) do
    -- cuda.limits only ever lowers a limit for the rest of the process: one random call would
    -- starve every later round of memory. Its bad arguments are tested in tests/lua/limits.lua.
    if prefix .. tostring(k) == "cuda.limits" then
    elseif type(v) == "function" then targets[#targets + 1] = { prefix .. tostring(k), v }
    elseif type(v) == "table" and type(k) == "string" and not k:match("^_") then add_functions(prefix .. k .. ".", v, seen) end
  end
end

-- Methods and metamethods of every kind of object: called with a matching self most of the
-- time, and with a random one (another kind of userdata, a table, nil) otherwise.
local function add_methods(name, sample)
  local mt = getmetatable(sample)
  if type(mt) ~= "table" then return end
  for k, v in pairs(mt) do
    if type(v) == "function" then targets[#targets + 1] = { name .. "." .. k, v, sample } end
  end
  local methods = type(mt.__index) == "table" and mt.__index or mt.__methods
  if type(methods) == "table" then
    for k, v in pairs(methods) do
      if type(v) == "function" then targets[#targets + 1] = { name .. ":" .. k, v, sample } end
    end
  end
end

add_functions("cuda.", cuda)
add_functions("cpu.", cpu)
local bench = require "cudalab_bench" -- benchmark hooks: C code that takes input from Lua too
add_functions("cudalab_bench.", bench)
for _, g in ipairs({ "help", "pp", "lessons", "lesson", "next", "back", "hint", "check", "skip", "reset", "bye", "edit" }) do
  if type(_G[g]) == "function" then targets[#targets + 1] = { g, _G[g] } end
end
refresh()
local samples = {
  Array = cuda.array(4), HostBuffer = cuda.host(4), Kernel = kernels[1], Module = modules[1],
  Launch = kernels[1][{ 1, 32 }], Device = cuda.device(), MemInfo = cuda.meminfo(),
  CompareResult = select(2, cuda.compare({ 1 }, { 1 })), TimeResult = cpu.time(function() end, { warmup = 0, reps = 1 }),
  CacheInfo = cuda.cache(),
}
for name, s in pairs(samples) do add_methods(name, s) end

-- Is this call one that would run a big launch? (see the design note at the top)
local function too_big(t, args)
  local f = t[2]
  if f == bench.c_launch_loop then
    local n = tonumber(args[2]) -- a string of digits counts too: luaL_checkinteger converts it
    return n ~= nil and n > 16
  end
  for _, k in ipairs(kernels) do
    if f == getmetatable(k).__call or f == getmetatable(k).__index then
      return (threads_of(args[2]) or 0) > 65536
    end
  end
  return false
end

-- ---- one call --------------------------------------------------------------------------
local function describe(v)
  local ok, s = pcall(function()
    if type(v) == "string" then return string.format("%q", #v > 40 and v:sub(1, 40) .. "..." or v) end
    if type(v) == "table" then return "table#" .. rawlen(v) end
    return type(v) == "userdata" and (getmetatable(v) and rawget(getmetatable(v), "__name") or "userdata") or tostring(v)
  end)
  return ok and tostring(s) or type(v)
end

local function one()
  local t = pick(targets)
  local args, n = {}, R(0, 5)
  if t[3] ~= nil and R(5) > 1 then
    -- self of the right kind: a fresh one of the same type where the pool has one
    local want = getmetatable(t[3])
    local same = {}
    for _, o in ipairs(objects) do if getmetatable(o) == want then same[#same + 1] = o end end
    args[1] = #same > 0 and pick(same) or t[3]
    for i = 2, n + 1 do args[i] = value() end
    n = n + 1
  else
    for i = 1, n do args[i] = value() end
  end
  -- now and then thousands of arguments: every C function must make room on its stack
  if R(25) == 1 then
    for i = n + 1, R(1000, 6000) do args[i] = R(4) == 1 and pick(objects) or pick(NUMBERS) end
    n = #args
  end
  -- launching: k[cfg] then the launch object with arguments
  local fn = t[2]
  if t[1]:match("^Kernel%.__index$") and R(2) == 1 then args[2] = config() end
  if too_big(t, args) then return end
  if trace then
    local d = {}
    for i = 1, math.min(n, 12) do d[i] = describe(args[i]) end
    if n > 12 then d[#d + 1] = string.format("... %d arguments in all", n) end
    errw:write(string.format("call %d: %s(%s)\n", calls + 1, t[1], table.concat(d, ", ")))
    errw:flush()
  end
  calls = calls + 1
  local ok, res = pcall(fn, table.unpack(args, 1, n))
  if not ok then errors = errors + 1 end
  -- a launch object just made: call it with fuzzed arguments when small enough
  if ok and type(res) == "function" and t[1]:match("^Kernel%.__index$")
     and (threads_of(args[2]) or 0) <= 65536 then
    local la = {}
    for i = 1, R(0, 6) do la[i] = R(3) == 1 and pick(objects) or value() end
    local nla = 6
    if R(20) == 1 then
      nla = R(1000, 6000)
      for i = 1, nla do la[i] = R(2) == 1 and pick(objects) or pick(NUMBERS) end
    end
    calls = calls + 1
    pcall(res, table.unpack(la, 1, nla))
  end
  -- tostring of whatever came back (printers are a favourite place for bugs)
  if ok and res ~= nil then pcall(tostring, res) end
end

-- Mutated CUDA source: compile errors are fine, crashes are not.
local function mutate(s)
  local b = { s:byte(1, -1) }
  for _ = 1, R(1, 6) do
    local op, pos = R(5), R(math.max(#b, 1))
    if op == 1 then table.remove(b, pos)
    elseif op == 2 then table.insert(b, pos, pick({ 40, 41, 123, 125, 59, 42, 38, 60, 62, 34, 35, 0, 255, R(0, 255) }))
    elseif op == 3 then b[pos] = R(32, 126)
    elseif op == 4 then
      local piece = {}
      for i = pos, math.min(pos + R(1, 20) - 1, #b) do piece[#piece + 1] = b[i] end
      for i = #piece, 1, -1 do table.insert(b, pos, piece[i]) end
    else
      local t = pick({ "template<int N> struct F { enum { v = F<N+1>::v }; };", "#include <nope.h>",
                       "__shared__ float big[20000];", "__constant__ float c[100000];", "asm(\"trap;\");",
                       "#pragma unroll 1000000", "extern \"C\"", "\\", "/*", "\"", "#define X X X", "#if 1" })
      for i = #t, 1, -1 do table.insert(b, pos, t:byte(i)) end
    end
  end
  local out = {}
  for i = 1, #b, 4096 do out[#out + 1] = string.char(table.unpack(b, i, math.min(i + 4095, #b))) end
  return table.concat(out)
end

local function compile_round()
  local src = R(6) == 1 and pick(SPECIAL) or mutate(pick(SOURCES))
  local r, opts = R(6), nil
  if r == 1 then opts = { pick(STRINGS) }
  elseif r == 2 then opts = fresh_options()
  elseif r == 3 then opts = { options = fresh_options() }
  elseif r == 4 then opts = setmetatable({}, { __index = function(_, k)
    if k == "options" then return fresh_options(1) end
  end }) end
  if trace then
    local what = ({ "one string", "fresh", "fresh opts.options", "__index opts.options" })[r]
    local shown = #src < 60 and string.format("%q", src) or "mutated " .. #src .. " bytes"
    errw:write(string.format("call %d: cuda.module(%s, %s options)\n", calls + 1, shown,
                             what or "no"))
    errw:flush()
  end
  calls = calls + 1
  local ok, m = pcall(R(2) == 1 and cuda.module or cuda.kernel, src, opts)
  if ok and m then pcall(tostring, m) end
end

-- ---- finalizers that run inside a call --------------------------------------------------
-- The calls whose own allocations (a staging block, a result table, a new array) may run the
-- collector while they hold an array: `a` is the array, n a size for constructors.
local GC_CALLS = {
  { "a:fill", function(a) return a:fill(pick({ 0, 1, -2.5, 255 })) end },
  { "a:arange", function(a) return a:arange() end },
  { "a:rand", function(a) return a:rand(R(0, 99)) end },
  { "a:tolist", function(a) return a:tolist() end },
  { "a:tobytes", function(a) return a:tobytes() end },
  { "a:host", function(a) return a:host(R(2) == 1 and { pinned = true } or nil) end },
  { "a:copyfrom(table)", function(a) return a:copyfrom(hostile(a)) end },
  { "a:copyto(table)", function(a) return a:copyto({}) end },
  { "tostring(a)", function(a) return tostring(a) end },
  { "cuda.array(a)", function(a) return cuda.array(a) end },
  { "cuda.host(a)", function(a) return cuda.host(a) end },
  { "cuda.copy", function(a)
    return cuda.copy(a, victim() or a, R(2) == 1 and hostile(a) or nil)
  end },
  { "cuda.compare", function(a) return cuda.compare(a, R(2) == 1 and a or a:tolist()) end },
  { "cuda.arange(n)", function(_, n) return cuda.arange(n, pick({ "f32", "i32", "u8" })) end },
  { "cuda.rand(n)", function(_, n) return cuda.rand(n, pick({ "f32", "f64" }), R(0, 9)) end },
  { "cuda.ones(n)", function(_, n) return cuda.ones(n) end },
  { "cuda.full(n)", function(_, n) return cuda.full(n, 7, pick({ "f32", "i64" })) end },
  { "cuda.zeros(n):fill", function(_, n) return cuda.zeros(n):fill(3) end },
  { "cuda.array(table)", function(_, n) return cuda.array(hostile()), n end },
  { "launch", function(a)
    local k = pick(kernels)
    return k and k[{ 1, 32 }](a, #a)
  end },
}

-- The collector set so that the call's own allocation is likely the one that runs the pending
-- finalizers: a minor collection after every 1% of the heap (the array is sized to stage
-- more than that), or the incremental collector stepping at every allocation; or as it was.
local function gc_tune()
  local r = R(3)
  if r == 1 then
    collectgarbage("generational", 1, 1000)
    collectgarbage("step") -- a fresh minor cycle: the call allocates first
  elseif r == 2 then
    collectgarbage("incremental", 0, 1000, 0)
  end
end

local function gc_round()
  local call = pick(GC_CALLS)
  -- a size that stages more than 1% of the heap (a fill stages up to 2^18 elements at a time)
  local n = math.min(math.max(math.floor(collectgarbage("count") * 1024 / 100), 4096), 1 << 18)
  if R(4) == 1 then n = pick({ 0, 1, 33, 1000 }) end
  local ok, a = pcall(cuda.zeros, n, pick({ "f32", "f64", "i32", "u8" }))
  if not ok then return end
  if R(3) == 1 then a = cuda.host(n) end
  if trace then
    errw:write(string.format("call %d: gc round: %s (%d)\n", calls + 1, call[1], n))
    errw:flush()
  end
  calls = calls + 1
  gc_tune()
  for _ = 1, R(1, 3) do
    local v = R(4) > 1 and a or nil -- nil: the pool's, or all on the stack
    setmetatable({}, { __gc = function() mischief("__gc", v) end })
  end
  if not pcall(call[2], a, n) then errors = errors + 1 end
  collectgarbage("generational", 20, 100) -- as the engine runs: Lua's defaults
  pcall(tostring, a)
end

-- ---- the timing model's parameters: named fields with hostile values --------------------
local PERF_NAMES = {}
do
  local ok, o = pcall(cuda.simopts)
  if ok and type(o.perf) == "table" then for k in pairs(o.perf) do PERF_NAMES[#PERF_NAMES + 1] = k end end
  table.sort(PERF_NAMES)
end
local PERF_VALUES = { 0, -1, 1e-300, 1e300, 0 / 0, math.huge, -math.huge, 1, 0.5, 1e9, "2", "x", true, {}, 2 ^ 63 }
local function perf_round()
  if #PERF_NAMES == 0 then return end
  local perf = {}
  for _ = 1, R(3) do perf[pick(PERF_NAMES)] = pick(PERF_VALUES) end
  if R(5) == 1 then perf[pick({ "bogus", 1, true })] = 1 end
  local before = cuda.simopts().perf
  calls = calls + 2
  if not pcall(cuda.stats, { perf = perf }) then errors = errors + 1 end
  if not pcall(cuda.simopts, { perf = perf }) then errors = errors + 1 end
  -- a valid but odd device may stay a while (it is a what-if), then the H200 comes back
  if R(2) == 1 then pcall(cuda.simopts, { perf = before }) end
end

-- ---- the loop --------------------------------------------------------------------------
local H200 = (pcall(cuda.simopts) and cuda.simopts().perf) or nil
local t0 = os.time()
local clock0 = os.clock()
while os.time() - t0 < seconds do
  for _ = 1, 50 do one() end
  if R(3) == 1 then compile_round() end
  if R(4) == 1 then refresh() end
  if R(10) == 1 then collectgarbage() end
  if R(3) == 1 then perf_round() end
  if R(4) == 1 then completion_round() end
  for _ = 1, R(0, 5) do hostile_round() end
  for _ = 1, R(0, 4) do gc_round() end
  -- whatever the calls did, the backend is put back: cuda.use("none") would stop launches
  pcall(cuda.use, "sim")
  pcall(cuda.simopts, { race_check = false, threads = 0 })
  if R(5) == 1 and H200 then pcall(cuda.simopts, { perf = H200 }) end
end
collectgarbage()
os.execute("rm -rf '" .. SPECIAL_DIR .. "'")
errw:write(string.format("calls %d errors %d seed %d cpu %.1f\n", calls, errors, seed, os.clock() - clock0))
