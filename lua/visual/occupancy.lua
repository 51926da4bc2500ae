-- occupancy.lua: cuda.occupancy(kernel, block [, shared]): how many blocks of
-- a kernel fit on one SM at once, which limit decides it, and why.
--
-- Used by learners directly and by cuda.sweep (one occupancy per row).
--
-- Design stance: the figure is computed here, in Lua, the way CUDA's own
-- occupancy calculator does it (cuda_occupancy.h, cudaOccMaxActiveBlocksPerMultiprocessor),
-- from the kernel's registers and static shared memory (k:info()) and the
-- device's limits (cuda.device()), so that it works on every backend and can
-- show its working: each of the four limits (threads, blocks, registers,
-- shared memory) with the numbers that produced it. On the GPU, when the
-- kernel offers k:occupancy (cudaOccupancyMaxActiveBlocksPerMultiprocessor
-- through the C side), the runtime's answer is reported as well and is the
-- one the result stands by; tests check that the two agree.
--
-- The rules, as cuda_occupancy.h applies them to compute capability 7.0 and up:
--  * warps:     max_threads_per_sm / 32 warps per SM; a block takes ceil(threads / 32).
--  * blocks:    max_blocks_per_sm (32 on Hopper).
--  * registers: per warp, registers/thread x 32 rounded up to 256; the register
--               file is split over 4 sub-partitions and a warp lives in one, so
--               warps per SM = 4 x floor(regs_per_sm / 4 / regs_per_warp).
--               A block whose registers exceed regs_per_block cannot launch.
--  * shared:    static + dynamic + 1 KiB the driver reserves per block (CC 8.0
--               and up), rounded up to 128 bytes; shared_per_sm / that.
-- Spills (k:info().spill_bytes) decide nothing here, but the explanation
-- names them: a register count that fits many blocks may be one ptxas reached
-- by spilling, and that cost is invisible in the four limits.

local ipairs, math, pcall, rawget, setmetatable, string = ipairs, math, pcall, rawget,
  setmetatable, string
local table, tonumber, tostring, type = table, tonumber, tostring, type

local format = require "format"

local occupancy = {}

local floor = math.floor

local function round_up(x, unit) return (x + unit - 1) // unit * unit end

-- Architecture constants that cudaDeviceProp does not carry; values from
-- cuda_occupancy.h for compute capability 7.0 and up.
local REG_UNIT = 256         -- registers are allocated per warp in units of 256
local SUB_PARTITIONS = 4     -- the register file is split in 4; a warp lives in one
local MAX_REGS_PER_THREAD = 255
local SHARED_UNIT = 128      -- shared memory granularity on CC 8.x and up (256 before)

-- The shared memory the driver keeps back per block: 1 KiB from Ampere on.
local function reserved_shared(d)
  if d.reserved_shared_per_block then return d.reserved_shared_per_block end
  local major = tonumber(tostring(d.cc or "9"):match("^(%d+)")) or 9
  return major >= 8 and 1024 or 0
end

-- threads in a block given as a number or {x, y, z}; nil if malformed.
local function block_threads(block)
  if math.type(block) == "integer" then return block end
  if type(block) == "number" and block == floor(block) then return floor(block) end
  if type(block) == "table" then
    local n = 1
    for i = 1, 3 do
      local v = block[i] or block[("xyz"):sub(i, i)] or 1
      if math.type(v) ~= "integer" then return nil end
      n = n * v
    end
    return n
  end
  return nil
end
occupancy.block_threads = block_threads

-- The register limit, into r: per warp, registers x 32 rounded up to REG_UNIT, warps placed
-- by sub-partition. A block over the per-block register file cannot launch at all (r.cannot,
-- unless an earlier limit already said why).
local function register_limit(r, d, warp)
  local regs, warps_per_block, threads = r.registers, r.warps_per_block, r.threads
  local regs_per_warp = round_up(regs * warp, REG_UNIT)
  r.regs_per_warp = regs_per_warp
  local per_sub = (d.regs_per_sm or 65536) // SUB_PARTITIONS
  local regs_block = regs_per_warp * warps_per_block
  local regs_assumed = regs_per_warp * round_up(warps_per_block, SUB_PARTITIONS)
  r.regs_per_block = regs_block
  if regs_per_warp == 0 then
    r.limits.registers = math.maxinteger
  elseif regs > MAX_REGS_PER_THREAD or regs_assumed > (d.regs_per_block or 65536)
      or regs_block > (d.regs_per_block or 65536) then
    r.limits.registers = 0
    r.cannot = r.cannot or string.format("%d registers per thread x %s threads need %s " ..
      "registers, " ..
      "more than the %s a block may use", regs, format.count(threads), format.count(regs_assumed),
      format.count(d.regs_per_block or 65536))
  else
    r.limits.registers = (per_sub // regs_per_warp) * SUB_PARTITIONS // warps_per_block
  end
end

-- The shared memory limit, into r: static + dynamic + the driver's reserve, rounded up to
-- SHARED_UNIT. A block over the opt-in maximum cannot launch (r.cannot, as above).
local function shared_limit(r, d)
  local reserved = reserved_shared(d)
  local smem = round_up(r.shared_static + r.shared_dynamic + reserved, SHARED_UNIT)
  r.shared_reserved, r.shared_per_block = reserved, smem
  local smem_limit = (d.shared_per_block_optin or d.shared_per_block or 49152) + reserved
  if smem > smem_limit then
    r.limits.shared = 0
    r.cannot = r.cannot or string.format("%s of shared memory per block is over the limit of %s",
      format.bytes(smem - reserved), format.bytes(smem_limit - reserved))
  else
    r.limits.shared = smem > 0 and (d.shared_per_sm or 233472) // smem or math.maxinteger
  end
end

-- The blocks that fit: the smallest of the four limits (none when the block cannot launch),
-- the occupancy they give, and every limit that binds, the first of them r.limit.
local function settle(r)
  local L = r.limits
  local blocks = math.min(L.warps, L.blocks, L.registers, L.shared)
  if r.cannot then blocks = 0 end
  r.blocks_per_sm = blocks
  r.active_warps = blocks * r.warps_per_block
  r.occupancy = r.max_warps > 0 and r.active_warps / r.max_warps or 0
  r.binding = {}
  for _, name in ipairs({ "warps", "blocks", "registers", "shared" }) do
    if L[name] == blocks then r.binding[#r.binding + 1] = name end
  end
  r.limit = r.binding[1]
end

-- The four limits for one configuration. info: {registers, shared_static,
-- name}; d: the device table; threads and dynamic shared bytes of a block.
-- Returns the result table (without metatable); never raises.
function occupancy.compute(info, d, threads, dyn_shared)
  local warp = d.warp_size or 32
  local warps_per_block = math.max(1, (threads + warp - 1) // warp) -- a block of 0 is r.cannot
  local max_warps = (d.max_threads_per_sm or 2048) // warp
  local r = {
    kernel = info.name, threads = threads, warps_per_block = warps_per_block,
    max_warps = max_warps, registers = info.registers or 0, shared_static = info.shared_static or 0,
    spill_bytes = info.spill_bytes or 0, spill_load_bytes = info.spill_load_bytes or 0,
    shared_dynamic = dyn_shared, device = d.name, limits = {}, why = {},
  }
  -- cannot launch at all: the block itself is over a per-block limit
  if threads < 1 or threads > (d.max_threads_per_block or 1024) then
    r.cannot = string.format("a block of %s threads is over the limit of %s threads per block",
      format.count(threads), format.count(d.max_threads_per_block or 1024))
  end
  r.limits.warps = max_warps // warps_per_block
  r.limits.blocks = d.max_blocks_per_sm or 32
  register_limit(r, d, warp)
  shared_limit(r, d)
  settle(r)
  return r
end

-------------------------------------------------------------- explaining --

local count, bytes = format.count, format.bytes

local NAMES = { warps = "threads", blocks = "blocks", registers = "registers",
  shared = "shared memory" }

local function limit_text(n)
  if n >= math.maxinteger then return "no limit" end
  return count(n)
end

-- One row per limit: name, blocks per SM it allows, the numbers behind it.
local function limit_rows(r, d)
  local warp = d.warp_size or 32
  local alloc = r.regs_per_warp // warp
  local parts = {}
  if r.shared_static > 0 then parts[#parts + 1] = bytes(r.shared_static) .. " static" end
  if r.shared_dynamic > 0 then parts[#parts + 1] = bytes(r.shared_dynamic) .. " dynamic" end
  parts[#parts + 1] = bytes(r.shared_reserved) .. " reserved"
  return {
    { "threads", limit_text(r.limits.warps), string.format("%s/SM, %s per block (%d %s)",
      count(r.max_warps * warp), count(r.threads), r.warps_per_block,
      r.warps_per_block == 1 and "warp" or "warps") },
    { "blocks", limit_text(r.limits.blocks), "at most " .. count(r.limits.blocks) .. "/SM" },
    { "registers", limit_text(r.limits.registers), r.registers == 0
      and "register count not known"
      or string.format("%d/thread%s = %s/warp; %s/SM", r.registers,
        alloc ~= r.registers and string.format(" (as %d)", alloc) or "",
        count(r.regs_per_warp), count(d.regs_per_sm or 65536)) },
    { "shared memory", limit_text(r.limits.shared), string.format("%s/block (%s); %s/SM",
      bytes(r.shared_per_block), table.concat(parts, " + "), bytes(d.shared_per_sm or 233472)) },
  }
end

-- The registers' other cost, when ptxas spilled: occupancy was bought with
-- local-memory traffic, which the table's figures do not show. nil without spills.
local function spill_note(r)
  if (r.spill_bytes or 0) == 0 then return nil end
  return string.format("Spills: at %d registers per thread ptxas moved values out to local " ..
    "memory (%s of spill stores, %s of loads, k:info().spill_bytes): each is a trip to " ..
    "memory. Fewer blocks per SM in __launch_bounds__, or a higher -maxrregcount, gives " ..
    "back registers at the cost of occupancy.", r.registers, bytes(r.spill_bytes),
    bytes(r.spill_load_bytes or 0))
end

-- What to do about the limit that binds, in a sentence.
local function advice(r, d)
  local warp = d.warp_size or 32
  if r.cannot then return "It cannot launch: " .. r.cannot .. "." end
  local lim = r.limit
  if lim == "warps" then
    if r.occupancy >= 1 then return "Threads bind: the SM is full, which is as good as it gets." end
    return string.format("Threads bind: %d blocks of %s threads leave %s of %s thread slots " ..
      "empty; a block size that divides %s fills the SM.", r.blocks_per_sm, count(r.threads),
      count((r.max_warps - r.active_warps) * warp), count(r.max_warps * warp),
      count(r.max_warps * warp))
  elseif lim == "blocks" then
    return string.format("Blocks bind: %s blocks of %s threads fill only %s of %s thread slots; " ..
      "use %s or more threads per block.", count(r.blocks_per_sm), count(r.threads),
      count(r.active_warps * warp), count(r.max_warps * warp),
      count(r.max_warps * warp // r.limits.blocks))
  elseif lim == "registers" then
    local full = (d.regs_per_sm or 65536) // (r.max_warps * warp)
    return string.format("Registers bind: at %d registers per thread only %s warps fit; at most " ..
      "%d per thread would fill the SM (simpler code, or __launch_bounds__).", r.registers,
      count(r.active_warps), full)
  else
    return string.format("Shared memory binds: each block takes %s of the SM's %s; less " ..
      "per block lets more blocks in.", bytes(r.shared_per_block), bytes(d.shared_per_sm or 233472))
  end
end

local chart -- loaded on first print

local function term_width() return require("term").width() end

local function tostring_result(r)
  chart = chart or require "chart"
  local d = r._device or {}
  local head = string.format("%s, %s threads per block: %s blocks per SM, %d of %d warps, " ..
    "%s occupancy",
    tostring(r.kernel or "kernel"), count(r.threads), count(r.blocks_per_sm), r.active_warps,
    r.max_warps, format.percent(r.occupancy))
  local rows = { { "limit", "blocks/SM", "from" } }
  local bind = {}
  for _, b in ipairs(r.binding) do bind[NAMES[b]] = true end
  for _, row in ipairs(limit_rows(r, d)) do
    if bind[row[1]] and not r.cannot then
      row[3] = row[3] .. (chart.best_mark("binds"):gsub("^ ", "  "))
    end
    rows[#rows + 1] = row
  end
  local lines = chart.columns(rows, "lrl")
  for i = 1, #lines do lines[i] = "  " .. lines[i] end
  local out = { head, table.concat(lines, "\n"), chart.wrap(advice(r, d), term_width()) }
  local spills = spill_note(r)
  if spills then out[#out + 1] = chart.wrap(spills, term_width()) end
  if r.gpu_blocks and r.gpu_blocks ~= r.computed_blocks then
    out[#out + 1] = string.format("(The CUDA runtime says %d blocks per SM; this " ..
      "calculation gave %d.)",
      r.gpu_blocks, r.computed_blocks)
  end
  return table.concat(out, "\n")
end

occupancy.mt = { __name = "cudalab.Occupancy", __tostring = tostring_result }

-- The runtime's own figure when the C side offers it (k:occupancy on the
-- cuda backend), else nil. Any failure there just leaves our calculation.
local function runtime_blocks(k, threads, shared)
  local ok, f = pcall(function() return k.occupancy end)
  if not ok or type(f) ~= "function" then return nil end
  local ok2, n = pcall(f, k, threads, shared)
  return ok2 and math.type(n) == "integer" and n or nil
end

-- cuda.occupancy(kernel, block [, shared]) -> result with blocks_per_sm,
-- occupancy (0..1), limit ("warps", "blocks", "registers" or "shared"),
-- limits (blocks per SM each allows) and the numbers behind them.
function occupancy.occupancy(k, block, shared)
  local cuda = rawget(_G, "cuda")
  local ok, info = pcall(function() return k:info() end)
  if not ok or type(info) ~= "table" then
    error("cuda.occupancy(kernel, block [, shared]): argument 1 must be a kernel, got " ..
      type(k), 2)
  end
  local threads = block_threads(block)
  if not threads or threads < 1 then
    error("cuda.occupancy(kernel, block [, shared]): block must be a whole number of threads " ..
      "(1 or more) or {x, y, z}, got " .. tostring(block), 2)
  end
  shared = shared or 0
  if math.type(shared) ~= "integer" or shared < 0 then
    error("cuda.occupancy(kernel, block [, shared]): shared must be a whole number of " ..
      "bytes, got " ..
      tostring(shared), 2)
  end
  local d = cuda.device()
  local r = occupancy.compute(info, d, threads, shared)
  r._device = d
  r.computed_blocks = r.blocks_per_sm
  r.gpu_blocks = runtime_blocks(k, threads, shared)
  if r.gpu_blocks then
    r.blocks_per_sm = r.gpu_blocks
    r.active_warps = r.gpu_blocks * r.warps_per_block
    r.occupancy = r.active_warps / r.max_warps
  end
  return setmetatable(r, occupancy.mt)
end

return occupancy
