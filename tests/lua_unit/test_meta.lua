-- test_meta.lua: the printed form of the tables the cuda module returns,
-- with complete fields (an H200 as the C side would describe it) and with
-- the few fields the simulator or a machine without a GPU can give.

local meta = require "meta"
local format = require "format"

-- A fresh cuda table holding only what meta.install looks at.
local function fake_cuda()
  return { _meta = { Device = {}, TimeResult = {}, CompareResult = {}, MemInfo = {},
                     KernelInfo = {}, Stats = {} } }
end

local H200 = {
  name = "NVIDIA H200", backend = "cuda", cc = "9.0", sm_count = 132,
  memory_total = 150754820096, memory_clock_khz = 3201000, clock_khz = 1980000,
  bus_width = 6144, l2_bytes = 62914560, max_threads_per_block = 1024,
  max_threads_per_sm = 2048, max_blocks_per_sm = 32, shared_per_block = 49152,
  shared_per_block_optin = 232448, shared_per_sm = 233472, regs_per_block = 65536,
  regs_per_sm = 65536, warp_size = 32, max_block_dim = { x = 1024, y = 1024, z = 64 },
  max_grid_dim = { x = 2147483647, y = 65535, z = 65535 }, driver_version = "13.0",
  runtime_version = "13.0",
}

test("meta.install sets __tostring and __name", function()
  local cuda = fake_cuda()
  checkeq(meta.install(cuda), cuda)
  for key, mt in pairs(cuda._meta) do
    checkeq(type(mt.__tostring), "function", key)
    checkeq(mt.__name, "cudalab." .. key)
  end
end)

test("meta.install tolerates a partial or missing _meta", function()
  local cuda = { _meta = { Device = {} } }
  meta.install(cuda)
  checkeq(cuda._meta.Device.__name, "cudalab.Device")
  checkeq(meta.install({}), {})
  checkeq(meta.install(nil), nil)
end)

test("device card of an H200", function()
  local cuda = meta.install(fake_cuda())
  local card = tostring(setmetatable(H200, cuda._meta.Device))
  checkeq(card, table.concat({
    "NVIDIA H200  (cuda backend; driver 13.0, runtime 13.0)",
    "  capability 9.0                Hopper; kernels are compiled for sm_90",
    "  SMs        132                streaming multiprocessors that run the blocks",
    "  memory     140 GiB            peak 4.92 TB/s, L2 cache 60 MiB",
    "  clock      1,980 MHz          memory 3,201 MHz, 6,144-bit bus",
    "  threads    1,024/block        2,048/SM, in warps of 32, scheduled together",
    "  blocks     32/SM              at once on one SM",
    "  shared     48 KiB/block       227 KiB opt-in, 228 KiB/SM (on-chip, fast)",
    "  registers  65,536/block       65,536/SM, divided among resident threads",
    "  block dims (1024, 1024, 64)   grid dims up to (2147483647, 65535, 65535)",
  }, "\n"))
  for line in card:gmatch("[^\n]+") do
    check(utf8.len(line) <= 78, "card line longer than 78 columns: " .. line)
  end
end)

test("device card with few fields (simulator, no GPU)", function()
  local cuda = meta.install(fake_cuda())
  local sim = setmetatable({ name = "NVIDIA H200 (simulated)", backend = "sim", cc = "9.0",
    sm_count = 132 }, cuda._meta.Device)
  checkeq(tostring(sim), table.concat({
    "NVIDIA H200 (simulated)  (on the CPU: its limits, and times from a model of it)",
    "  capability 9.0   Hopper; kernels are compiled for sm_90",
    "  SMs        132   streaming multiprocessors that run the blocks",
  }, "\n"))
  local none = setmetatable({ name = "no GPU", backend = "none" }, cuda._meta.Device)
  checkeq(tostring(none), "no GPU  (no GPU: arrays live in host memory; kernels compile but do not run)")
end)

test("time result, GPU clock", function()
  format.utf8 = true
  local cuda = meta.install(fake_cuda())
  local t = setmetatable({ median = 0.041, min = 0.040, max = 0.052, mean = 0.042, reps = 20,
    unit = "ms", samples = {}, clock = "gpu" }, cuda._meta.TimeResult)
  checkeq(tostring(t), "median 41.0 µs  (min 40.0 µs, max 52.0 µs, 20 reps, GPU events)")
  format.utf8 = nil
end)

test("time result shares the median's unit; sim and cpu clocks", function()
  local cuda = meta.install(fake_cuda())
  local t = setmetatable({ median = 12.5, min = 0.5, max = 1500, reps = 5, unit = "ms",
    clock = "sim" }, cuda._meta.TimeResult)
  checkeq(tostring(t),
    "median 12.5 ms  (min 0.50 ms, max 1500 ms, 5 reps, simulator time, not GPU time)")
  local one = setmetatable({ median = 2, min = 2, max = 2, reps = 1, unit = "ms", clock = "cpu" },
    cuda._meta.TimeResult)
  checkeq(tostring(one), "median 2.00 ms  (1 rep, CPU clock)")
end)

test("compare result, equal", function()
  local cuda = meta.install(fake_cuda())
  local c = setmetatable({ ok = true, n = 10000000, max_abs = 0, max_rel = 0, mismatches = 0,
    first = {}, rtol = 1e-5, atol = 1e-8 }, cuda._meta.CompareResult)
  checkeq(tostring(c),
    "equal within rtol=1e-05 atol=1e-08: 10,000,000 elements, max abs err 0, max rel err 0")
end)

test("compare result, mismatch lists the first ones", function()
  local cuda = meta.install(fake_cuda())
  local c = setmetatable({ ok = false, n = 1000, max_abs = 2.0, max_rel = 1.0, mismatches = 3,
    first = { 5, 6, 7 }, x_first = { 1.0, 3.0, 5.0 }, y_first = { 2.0, 4.0, 0 / 0 },
    rtol = 1e-5, atol = 1e-8 }, cuda._meta.CompareResult)
  checkeq(tostring(c), "MISMATCH: 3 of 1,000 elements differ beyond rtol=1e-05 atol=1e-08 " ..
    "(max abs err 2, max rel err 1); first at [5] 1.0 vs 2.0, [6] 3.0 vs 4.0, [7] 5.0 vs nan")
end)

test("compare result, more mismatches than shown", function()
  local cuda = meta.install(fake_cuda())
  local first, xs, ys = {}, {}, {}
  for i = 1, 10 do first[i], xs[i], ys[i] = i - 1, i, 0 end
  local c = setmetatable({ ok = false, n = 100, max_abs = 10, max_rel = 1, mismatches = 100,
    first = first, x_first = xs, y_first = ys, rtol = 0.001, atol = 0 }, cuda._meta.CompareResult)
  checkeq(tostring(c), "MISMATCH: 100 of 100 elements differ beyond rtol=0.001 atol=0 " ..
    "(max abs err 10, max rel err 1); first at [0] 1 vs 0, [1] 2 vs 0, [2] 3 vs 0, " ..
    "[3] 4 vs 0, [4] 5 vs 0, ...")
end)

test("meminfo", function()
  local cuda = meta.install(fake_cuda())
  local m = setmetatable({ free = 3 * 2^30, total = 4 * 2^30, used = 2^30 }, cuda._meta.MemInfo)
  checkeq(tostring(m), "1 GiB used of 4 GiB (25%), 3 GiB free")
  local no_used = setmetatable({ free = 2^30, total = 2^31 }, cuda._meta.MemInfo)
  checkeq(tostring(no_used), "1 GiB used of 2 GiB (50%), 1 GiB free")
  local sim = setmetatable({ free = 150754820096, total = 150754820096, used = 0,
    host_available = 16 * 2^30 }, cuda._meta.MemInfo)
  checkeq(tostring(sim), "0 B used of 140 GiB (0%), 140 GiB free\n"
    .. "(kept in this computer's memory: 16 GiB available)")
end)

test("kernel info, parameters as strings or tables", function()
  local cuda = meta.install(fake_cuda())
  local k = setmetatable({ name = "inc", registers = 8, shared_static = 0, local_bytes = 0,
    const_bytes = 0, max_threads_per_block = 1024, params = { "float *a", "int n" },
    spill_bytes = 0, spill_load_bytes = 0 },
    cuda._meta.KernelInfo)
  checkeq(tostring(k), table.concat({
    "kernel inc(float *a, int n)",
    "  registers 8/thread        more per thread, fewer threads fit on an SM",
    "  shared    0 B/block       static __shared__ arrays; dynamic comes on top",
    "  local     0 B/thread      none: nothing kept in local memory",
    "  spills    0 B             nothing spilled: the registers held every value",
    "  constant  0 B             __constant__ data",
    "  max block 1,024 threads   the largest block its resources allow",
  }, "\n"))
  local t = setmetatable({ name = "k", local_bytes = 16,
    params = { { type = "float *", name = "a" }, { size = 4 } } }, cuda._meta.KernelInfo)
  checkeq(tostring(t), table.concat({
    "kernel k(float *a, 4-byte value)",
    "  local 16 B/thread   local arrays or a call stack; slower than registers",
  }, "\n"))
  local s = setmetatable({ name = "s", registers = 32, local_bytes = 264, spill_bytes = 572,
    spill_load_bytes = 560, params = {} }, cuda._meta.KernelInfo)
  checkeq(tostring(s), table.concat({
    "kernel s()",
    "  registers 32/thread      more per thread, fewer threads fit on an SM",
    "  local     264 B/thread   stack frame, with the spills; slower than registers",
    "  spills    572 B          spill stores to local memory, 560 B of loads back",
  }, "\n"))
end)

test("printers tolerate an empty table", function()
  local cuda = meta.install(fake_cuda())
  for key, mt in pairs(cuda._meta) do
    local ok, s = pcall(tostring, setmetatable({}, mt))
    check(ok and type(s) == "string", key .. ": " .. tostring(s))
  end
end)

test("a watch shows each value as its array prints it: f32 short, u64 unsigned", function()
  local cuda = fake_cuda()
  cuda._meta.Watch = {}
  cuda.dtypes = { { name = "f32", size = 4, kind = "float", digits = 7 },
                  { name = "f16", size = 2, kind = "half", digits = 5 },
                  { name = "u64", size = 8, kind = "unsigned", digits = 0 } }
  meta.install(cuda)
  local function watch(dtype, old, new)
    return setmetatable({ index = 1, label = "cuda.Array<" .. dtype .. ">[4]", watching = true,
      count = 1, dtype = dtype, writes = { { thread = { x = 1, y = 0, z = 0 },
      block = { x = 0, y = 0, z = 0 }, where = "k.cu:1", op = "store", old = old, new = new } } },
      cuda._meta.Watch)
  end
  local s = tostring(watch("u64", 0, -2))
  check(s:find("0 -> 18446744073709551614", 1, true), s)
  s = tostring(watch("f32", 0.0, 0.10000000149011612))
  check(s:find("0 %-> 0%.1%f[^%d]"), s)
  s = tostring(watch("f16", 0.0, 0.0999755859375))
  check(s:find("0 %-> 0%.09998%f[^%d]"), s)
end)
