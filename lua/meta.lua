-- meta.lua: how the plain tables that the cuda module returns describe
-- themselves when printed.
--
-- The C bindings return device properties, timings, comparisons, memory
-- figures and kernel resource usage as ordinary Lua tables, so a learner can
-- read any field (t.median, d.sm_count). C gives each kind of table an empty
-- metatable in cuda._meta; meta.install fills in __tostring and __name.
--
-- Design stance: printing such a table shows a short summary in words, with
-- units and, for the device card, one line on what each number means; the
-- exact numbers stay in the fields. Text lives here rather than in C because
-- wording changes often and Lua strings are cheaper to edit and test. Every
-- __tostring tolerates missing fields (the simulator and a machine without a
-- GPU know less than a real device): a row with nothing to show is left out,
-- and a printer never raises on its own account.

-- Standard functions are captured at load time: a learner may well name a
-- variable `table` or `type`, and this module must keep working when they do.
local ipairs, math, pairs, rawget, select, string = ipairs, math, pairs, rawget, select, string
local table, tostring, type, utf8 = table, tostring, type, utf8

local format = require "format"
local model = require "model"

local meta = {}

local count, bytes = format.count, format.bytes

-- Architecture names by compute capability: the name a learner finds in
-- articles and data sheets. Looked up by "major.minor", then by major.
local ARCH = {
  ["3"] = "Kepler", ["5"] = "Maxwell", ["6"] = "Pascal", ["7.0"] = "Volta",
  ["7.2"] = "Volta", ["7.5"] = "Turing", ["8"] = "Ampere", ["8.9"] = "Ada Lovelace",
  ["9"] = "Hopper", ["10"] = "Blackwell", ["11"] = "Blackwell", ["12"] = "Blackwell",
}

local function arch_name(cc)
  if type(cc) ~= "string" then return nil end
  return ARCH[cc] or ARCH[cc:match("^(%d+)")]
end

-- "(1024, 1024, 64)" from a {x, y, z} table, or nil.
local function dim3(d)
  if type(d) ~= "table" or d.x == nil then return nil end
  return string.format("(%s, %s, %s)", tostring(d.x), tostring(d.y), tostring(d.z))
end

-- Megahertz from kilohertz, as clocks are usually quoted.
local function mhz(khz)
  return khz and count(math.floor(khz / 1000 + 0.5)) .. " MHz" or nil
end

-- Theoretical peak memory bandwidth: two transfers per clock (DDR) over the
-- whole bus. The figure data sheets quote; kernels reach 80-90% of it.
local function peak_bandwidth(d)
  if not (d.memory_clock_khz and d.bus_width) then return nil end
  local bytes_per_s = 2 * d.memory_clock_khz * 1000 * d.bus_width / 8
  return format.rate(bytes_per_s, 1000)
end

-- Formats rows of {label, value, note} in aligned columns, leaving out rows
-- whose value is nil. Alignment lets the eye run down the numbers.
local function rows_text(rows)
  local lw, vw, out = 0, 0, {}
  for _, r in ipairs(rows) do
    if r[2] then lw, vw = math.max(lw, #r[1]), math.max(vw, utf8.len(r[2]) or #r[2]) end
  end
  for _, r in ipairs(rows) do
    if r[2] then
      local pad = (" "):rep(vw - (utf8.len(r[2]) or #r[2]))
      local line = "  " .. r[1] .. (" "):rep(lw - #r[1] + 1) .. r[2]
      if r[3] then line = line .. pad .. "   " .. r[3] end
      out[#out + 1] = line
    end
  end
  return table.concat(out, "\n")
end

-- The non-empty, non-nil arguments joined by sep (table.concat stops at the first nil).
local function join(sep, ...)
  local out = {}
  for i = 1, select("#", ...) do
    local s = select(i, ...)
    if s and s ~= "" then out[#out + 1] = s end
  end
  return table.concat(out, sep)
end

-- "x/unit" when x is known, for "1,024/block"-style values.
local function per(x, unit)
  return x and count(x) .. unit or nil
end

-- The first line of the device card: name, backend and versions.
local function device_title(d)
  local name = d.name or "unknown device"
  if d.backend == "none" then
    return name .. "  (no GPU: arrays live in host memory; kernels compile but do not run)"
  end
  local where = d.backend == "sim"
    and "simulated on the CPU: its limits, and times from a model of it"
    or d.backend and d.backend .. " backend"
  local versions = {}
  if d.driver_version then versions[#versions + 1] = "driver " .. d.driver_version end
  if d.runtime_version then versions[#versions + 1] = "runtime " .. d.runtime_version end
  where = join("; ", where, table.concat(versions, ", "))
  return where == "" and name or name .. "  (" .. where .. ")"
end

-- The notes column: compute capability decides the instruction set.
local function cc_note(cc)
  local arch = arch_name(cc)
  local sm = type(cc) == "string" and "sm_" .. cc:gsub("%.", "") or nil
  if arch and sm then return arch .. "; kernels are compiled for " .. sm end
  return sm and "kernels are compiled for " .. sm or nil
end

-- The device card: the numbers that decide how to launch a kernel, each with
-- a few words on what it limits.
local function device_tostring(d)
  local bw = peak_bandwidth(d)
  -- the roof that cuda.stats and the roofline measure against, where it is known: no program
  -- reaches the data sheet's peak
  if bw and type(d.copy_gbs) == "number" and d.copy_gbs > 0 then
    bw = bw .. " (a copy reaches " .. format.rate(d.copy_gbs * 1e9, 1000):gsub(" .*", "") .. ")"
  end
  local shared = d.shared_per_block and bytes(d.shared_per_block) .. "/block"
  local optin = d.shared_per_block_optin and bytes(d.shared_per_block_optin) .. " opt-in"
  local sm_shared = d.shared_per_sm and bytes(d.shared_per_sm) .. "/SM"
  local rows = {
    { "capability", d.cc, cc_note(d.cc) },
    { "SMs", d.sm_count and count(d.sm_count), "streaming multiprocessors that run the blocks" },
    { "memory", d.memory_total and bytes(d.memory_total),
      bw and ("peak " .. bw .. (d.l2_bytes and ", L2 cache " .. bytes(d.l2_bytes) or "")) },
    { "clock", mhz(d.clock_khz), d.memory_clock_khz and "memory " .. mhz(d.memory_clock_khz)
      .. (d.bus_width and ", " .. count(d.bus_width) .. "-bit bus" or "") },
    { "threads", per(d.max_threads_per_block, "/block"),
      join(", ", per(d.max_threads_per_sm, "/SM"), "in warps of " .. (d.warp_size or 32),
        "scheduled together") },
    { "blocks", per(d.max_blocks_per_sm, "/SM"), "at once on one SM" },
    { "shared", shared, join(" ", join(", ", optin, sm_shared), "(on-chip, fast)") },
    { "registers", per(d.regs_per_block, "/block"),
      join(", ", per(d.regs_per_sm, "/SM"), "divided among resident threads") },
    { "block dims", dim3(d.max_block_dim),
      dim3(d.max_grid_dim) and "grid dims up to " .. dim3(d.max_grid_dim) },
  }
  return join("\n", device_title(d), rows_text(rows))
end

local CLOCKS = {
  gpu = "GPU events",
  cpu = "CPU clock",
  sim = "simulator time, not GPU time",
}

-- "bound by DRAM bandwidth" for a modelled timing whose fn launched a kernel.
-- The explanation is the last launch's: when that launch is not most of the
-- time (fn also copied, or launched other kernels), say "last kernel", so the
-- limit is not read as the whole timing's.
local function bound_words(t)
  local m = t.model
  local what = model.bound(m)
  if not what then return nil end
  if type(m.time_ms) == "number" and type(t.median) == "number" and m.time_ms < 0.95 * t.median then
    return "last kernel bound by " .. what
  end
  return "bound by " .. what
end

-- "simulated in 69 ms": the simulator's own CPU time, in its own unit and
-- after a semicolon, so it never reads as part of the modelled figures.
local function simulated_words(t, reps)
  local sim = type(t.sim_ms) == "table" and t.sim_ms.median
  if type(sim) ~= "number" then return nil end
  return "simulated in " .. format.time_ms(sim) .. (reps > 1 and " each" or "")
end

-- "median 41.0 µs  (min 40.0 µs, max 52.0 µs, 20 reps, GPU events)". All three
-- figures share the unit the median reads best in, so they compare at a glance.
-- On the model clock: "median 41.2 µs  (modelled H200 time, bound by DRAM
-- bandwidth; simulated in 69 ms)": one rep (the default there) has no min,
-- max or rep count, since the model is deterministic.
local function time_tostring(t)
  local ms = t.unit == "s" and 1000 or t.unit == "us" and 1e-3 or 1
  local median = (t.median or 0) * ms
  local unit = format.time_unit(median)
  local reps = t.reps or (t.samples and #t.samples) or 0
  local parts = {}
  if reps > 1 and t.min and t.max then
    parts[#parts + 1] = "min " .. format.time_ms(t.min * ms, unit)
    parts[#parts + 1] = "max " .. format.time_ms(t.max * ms, unit)
  end
  if t.clock ~= "model" or reps > 1 then
    parts[#parts + 1] = count(reps) .. (reps == 1 and " rep" or " reps")
  end
  local text = "median " .. format.time_ms(median, unit) .. "  ("
  if t.clock == "model" then
    parts[#parts + 1] = model.clock_words(t.device)
    parts[#parts + 1] = bound_words(t)
    return text .. join("; ", table.concat(parts, ", "), simulated_words(t, reps)) .. ")"
  end
  parts[#parts + 1] = CLOCKS[t.clock] or t.clock
  return text .. table.concat(parts, ", ") .. ")"
end

-- Tolerances as a learner typed them: 1e-05, 0.001.
local function tolerances(c)
  return string.format("rtol=%s atol=%s", format.short(c.rtol or 0), format.short(c.atol or 0))
end

-- "[5] 1.0 vs 2.0, [6] 3.0 vs 4.0" for the first mismatches C reported.
local function first_mismatches(c, limit)
  local idx, out = c.first or {}, {}
  for i = 1, math.min(#idx, limit) do
    local x = c.x_first and c.x_first[i]
    local y = c.y_first and c.y_first[i]
    out[i] = string.format("[%s] %s vs %s", tostring(idx[i]), format.number(x), format.number(y))
  end
  if (c.mismatches or 0) > #out and #out > 0 then out[#out + 1] = "..." end
  return table.concat(out, ", ")
end

-- One line, starting with the verdict: equal within the tolerances, or
-- MISMATCH with how many elements differ and where the first ones are.
local function compare_tostring(c)
  local errs = string.format("max abs err %s, max rel err %s",
    format.short(c.max_abs or 0), format.short(c.max_rel or 0))
  if c.ok then
    return string.format("equal within %s: %s elements, %s", tolerances(c), count(c.n or 0), errs)
  end
  local s = string.format("MISMATCH: %s of %s elements differ beyond %s (%s)",
    count(c.mismatches or 0), count(c.n or 0), tolerances(c), errs)
  local first = first_mismatches(c, 5)
  if first ~= "" then s = s .. "; first at " .. first end
  return s
end

-- "1.2 GiB used of 140 GiB (0.9%), 138.8 GiB free"; on the simulator, whose
-- device memory is this computer's, a second line says how much of that there
-- is, since a 140 GiB device on a 16 GiB machine cannot be filled.
local function meminfo_tostring(m)
  local total, used = m.total or 0, m.used or ((m.total or 0) - (m.free or 0))
  local share = total > 0 and " (" .. format.percent(used / total) .. ")" or ""
  local s = string.format("%s used of %s%s, %s free",
    bytes(used), bytes(total), share, bytes(m.free or 0))
  if m.host_available then
    s = s .. "\n(kept in this computer's memory: " .. bytes(m.host_available) .. " available)"
  end
  return s
end

-- A parameter as "float *a" whether C describes it as a string or as a
-- table {type = "float *", name = "a", size = 8}.
local function param_text(p)
  if type(p) ~= "table" then return tostring(p) end
  local ty = p.type and tostring(p.type) or (p.size and p.size .. "-byte value") or "?"
  if not p.name then return ty end
  return ty .. (ty:sub(-1) == "*" and "" or " ") .. p.name
end

-- Resource usage of a compiled kernel, which is what limits how many of its
-- threads fit on an SM at once.
local function kernel_info_tostring(k)
  local params = {}
  for i, p in ipairs(k.params or {}) do params[i] = param_text(p) end
  local local_note = (k.local_bytes or 0) > 0
    and "spills or local arrays, slower than registers"
    or "none: nothing spilled out of registers"
  local rows = {
    { "registers", k.registers and count(k.registers) .. "/thread",
      "more per thread, fewer threads fit on an SM" },
    { "shared", k.shared_static and bytes(k.shared_static) .. "/block",
      "static __shared__ arrays; dynamic comes on top" },
    { "local", k.local_bytes and bytes(k.local_bytes) .. "/thread", local_note },
    { "constant", k.const_bytes and bytes(k.const_bytes), k.const_bytes and "__constant__ data" },
    { "max block", k.max_threads_per_block and count(k.max_threads_per_block) .. " threads",
      "the largest block its resources allow" },
  }
  local title = "kernel " .. tostring(k.name or "?") .. "(" .. table.concat(params, ", ") .. ")"
  return join("\n", title, rows_text(rows))
end

-- "4.0 per request" where there were requests.
local function per_request(sectors, requests)
  if not requests or requests == 0 then return "" end
  return string.format(" (%.1f per request)", (sectors or 0) / requests)
end

-- The simulator's counters for one launch, in the words Nsight Compute uses,
-- then (when the performance model ran) the modelled time and why: the
-- section model.lua lays out, last, where the prompt leaves the eye.
local function stats_tostring(s)
  local warp, thread = s.warp_insts or 0, s.thread_insts or 0
  local lines = {
    string.format("%s warp instructions (%s thread instructions, %.1f threads each)",
      count(warp), count(thread), warp > 0 and thread / warp or 0),
    string.format("global loads   %s requests, %s sectors%s", count(s.ld_requests or 0),
      count(s.ld_sectors or 0), per_request(s.ld_sectors, s.ld_requests)),
    string.format("global stores  %s requests, %s sectors%s", count(s.st_requests or 0),
      count(s.st_sectors or 0), per_request(s.st_sectors, s.st_requests)),
    string.format("shared memory  %s wavefronts, %s bank conflicts",
      count(s.shared_wavefronts or 0),
      count(s.bank_conflicts or 0)),
    string.format("divergent branches  %s", count(s.divergent_branches or 0)),
  }
  if type(s.lines) == "table" then
    lines[#lines + 1] = "per line of " .. tostring(s.file) .. " (in s.lines): warp insts, " ..
      "ld/st sectors"
    local keys = {}
    for k in pairs(s.lines) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local l = s.lines[k]
      lines[#lines + 1] = string.format("  line %-4d %10s  %s / %s", k, count(l.warp_insts),
        count(l.ld_sectors), count(l.st_sectors))
    end
  end
  if type(s.managed) == "table" then
    local m, t = s.managed, s.managed_session or {}
    lines[#lines + 1] = string.format("managed memory  %s fault batches, %s groups of %s " ..
      "migrated (%s), %s read in place: %.1f us", count(m.faults or 0), count(m.groups or 0),
      bytes(m.group_bytes or 0), bytes(m.migrated_bytes or 0), bytes(m.remote_bytes or 0),
      m.us or 0)
    lines[#lines + 1] = string.format("  this session: %s GPU fault batches, %s host faults, " ..
      "%s migrated, %s prefetched", count(t.faults or 0), count(t.cpu_faults or 0),
      bytes(t.migrated_bytes or 0), bytes(t.prefetch_bytes or 0))
    lines[#lines + 1] = "  times use " .. tostring(m.estimate)
  end
  if type(s.model) == "table" then lines[#lines + 1] = model.section(s.model, s.device) end
  return table.concat(lines, "\n")
end

-- The kernel cache: where, how much, and how often it saved a compile this session.
local function cache_tostring(c)
  local where = c.disk and ("in " .. c.dir) or "in memory only (the cache folder cannot be written)"
  return string.format("kernel cache %s: %s entries, %s; this session %s hits, %s compiles",
    where, count(c.entries), bytes(c.bytes), count(c.hits), count(c.misses))
end

-- The rows of cuda.dtypes by name, taken at meta.install: how each element type prints.
local DTYPES = {}

-- An element's value as its array shows it: a float narrower than f64 with the digits its type
-- holds (0.1, not 0.10000000149012; a 16-bit one with 4, short of the 5 that always read back,
-- which the array printer finds by rounding in C), an unsigned integer as unsigned (a u64 above
-- 2^63 - 1 reads into Lua as the negative integer with its bits), anything else as Lua writes it.
local function element_text(v, dtype)
  local d = DTYPES[dtype]
  if d and math.type(v) == "float" and d.size < 8 then
    return format.short(v, d.kind == "half" and 4 or d.digits)
  end
  if d and math.type(v) == "integer" and d.kind == "unsigned" then
    return string.format("%u", v)
  end
  return format.number(v)
end

-- One write a watch recorded, as a row: who, where, what, and the values.
local function watch_row(r, dtype)
  local t, b = r.thread or {}, r.block or {}
  local who = string.format("thread (%s,%s,%s) block (%s,%s,%s)", tostring(t.x), tostring(t.y),
    tostring(t.z), tostring(b.x), tostring(b.y), tostring(b.z))
  -- columns narrow enough that two 7-digit floats still fit 80 (a lesson prints such rows)
  return string.format("  %-30s %-12s %-6s %s -> %s", who, tostring(r.where), tostring(r.op),
    element_text(r.old, dtype), element_text(r.new, dtype))
end

-- A watch (cuda.watch): what it watches and how many writes it saw, then every write it kept,
-- in order; past 60 of them the first 50 and the last 5, so that a hot element does not bury
-- the prompt (w.writes has them all).
local function watch_tostring(w)
  local writes, n = w.writes or {}, w.count or 0
  local lines = { string.format("watch on element %s of %s%s: %s", tostring(w.index),
    tostring(w.label), w.watching and "" or " (closed)",
    n == 0 and "no writes yet" or count(n) .. (n == 1 and " write" or " writes")) }
  local first, last = #writes, 0
  if #writes > 60 then first, last = 50, 5 end
  for i = 1, first do lines[#lines + 1] = watch_row(writes[i], w.dtype) end
  if last > 0 then
    lines[#lines + 1] = string.format("  ... %s more (w.writes has them)",
      count(#writes - first - last))
    for i = #writes - last + 1, #writes do lines[#lines + 1] = watch_row(writes[i], w.dtype) end
  end
  if n > #writes then
    lines[#lines + 1] = string.format("  (the first %s writes are kept; the other %s were only "
      .. "counted)", count(#writes), count(n - #writes))
  end
  return table.concat(lines, "\n")
end

-- What each cuda._meta entry gets. The names appear in error messages
-- ("bad argument #1 (cudalab.TimeResult expected)") and in help.
meta.printers = {
  Device = { "cudalab.Device", device_tostring },
  TimeResult = { "cudalab.TimeResult", time_tostring },
  CompareResult = { "cudalab.CompareResult", compare_tostring },
  MemInfo = { "cudalab.MemInfo", meminfo_tostring },
  KernelInfo = { "cudalab.KernelInfo", kernel_info_tostring },
  Stats = { "cudalab.Stats", stats_tostring },
  CacheInfo = { "cudalab.CacheInfo", cache_tostring },
  Watch = { "cudalab.Watch", watch_tostring },
}

-- Fills cuda._meta.* with __tostring and __name. Entries C did not create are
-- skipped, so a build without some feature still starts. Returns cuda.
function meta.install(cuda)
  local metas = type(cuda) == "table" and rawget(cuda, "_meta")
  if type(metas) ~= "table" then return cuda end
  local dtypes = rawget(cuda, "dtypes")
  for _, d in ipairs(type(dtypes) == "table" and dtypes or {}) do DTYPES[d.name] = d end
  for key, p in pairs(meta.printers) do
    local mt = rawget(metas, key)
    if type(mt) == "table" then
      mt.__name, mt.__tostring = p[1], p[2]
    end
  end
  return cuda
end

return meta
