-- fit.lua: turns the calibration measured on the GPU (bench/model/calibrate.lua's output) into
-- the timing model's parameters, and writes them as the C header the simulator is built with.
--
--   build/cudalab --sim bench/model/fit.lua bench/model/calibration.lua sim/h200_params.h
--
-- Design stance: every rate comes straight from one microbenchmark (a DRAM copy gives the DRAM
-- bandwidth, a pointer chase the latencies, ...), and the few constants no single rate gives
-- (block_cycles, drain, queue: see structure.lua) are fitted by replaying the calibration's own
-- copy kernels on the simulator and pricing them under a grid of candidate values, keeping the
-- one with the least squared log error. Nothing from the validation set (points.lua) is used.
-- Values not measured (the issue width, the shared-memory latency, the L1 size) are the
-- architecture's and live in their rows of sim/perf_params.def, not in the header; a parameter
-- whose row says MEASURED must be set here.
local calfile, outfile = arg[1], arg[2]
if not calfile or not outfile then
  io.stderr:write("usage: cudalab --sim bench/model/fit.lua CALIBRATION.lua OUT.h\n")
  os.exit(2)
end
if cuda.backend() ~= "sim" then cuda.use("sim") end
local cal = dofile(calfile)
local m, raw = cal.measurements, cal.raw
local SMS = cuda.device().sm_count
local clk = cal.clock_khz / 1e6
local function need(k)
  if not m[k] then error("the calibration has no " .. k .. " (its check failed, or it is older)", 0) end
  return m[k]
end
-- warp instructions per second of the chip -> per cycle per SM
local function per_sm_cycle(ginst_s) return ginst_s / (SMS * clk) end

local before = cuda.simopts().perf -- NaN where a MEASURED row has no value yet
local P, why = {}, {}
local function set(k, v, src) P[k], why[k] = v, src end
set("clock_ghz", clk, "the SM clock under load")
set("launch_us", need("launch_us"), "empty kernel, events")
set("block_ns", need("block_ns_256"), "empty blocks of 256, slope of time against blocks")
set("warp_ns", math.max(0, (need("block_ns_1024") - need("block_ns_32")) / 31), "blocks of 1024 against 32")
set("dram_gbs", need("dram_copy_gbs"), "1 GiB float4 copy, read + write")
set("l2_gbs", need("l2_read_gbs"), "repeated reads of a 4 MiB set")
set("l2_bytes", need("l2_effective_mb") * 2 ^ 20, "working set where read bandwidth falls halfway to DRAM's")
set("lat_l1", raw.latency.l1.cycles, "pointer chase in 16 KiB")
set("lat_l2", raw.latency.l2.cycles, "pointer chase in 4 MiB")
set("lat_dram", raw.latency.dram.cycles, "pointer chase in 1 GiB")
set("ipc_fp32", per_sm_cycle(need("fp32_ginst_s")), "independent fmaf chains")
set("ipc_fp64", per_sm_cycle(need("fp64_ginst_s")), "independent fma chains on doubles")
set("ipc_sfu", per_sm_cycle(need("sfu_ginst_s")), "__sinf")
set("ipc_int", per_sm_cycle(need("int_ginst_s")), "integer multiply-add chains")
set("ipc_alu", per_sm_cycle(need("alu_ginst_s")), "integer xor, shift and add")
set("shared_wf_cycle", need("shared_wf_s") / 1e9 / (SMS * clk), "conflict-free shared loads")
set("l1_wf_cycle", need("l1_sector_s") / 4 / 1e9 / (SMS * clk), "L1-resident loads, a sector per lane (4 per line)")
set("atom_gops", need("atom_distinct_gops"), "atomicAdd on 10M distinct addresses")
-- Atomics per slice (contention.lua): a request costs its slice a pass per lane on the busiest
-- address of each sector it touches, a pass over a whole sector less than one over part of it.
-- Each a line through the origin: ns per request against passes, every request on one line.
do
  local r = raw.atomic_slices or error("the calibration has no atomic_slices (run calibrate.lua --only atomic_slices)", 0)
  local rep = raw.atomic_repeats or error("the calibration has no atomic_repeats (run calibrate.lua --only atomic_repeats)", 0)
  local function through_origin(points)
    local sxy, sxx = 0, 0
    for _, p in ipairs(points) do sxy, sxx = sxy + p[1] * p[2], sxx + p[1] * p[1] end
    return sxy / sxx
  end
  local function per_request(ms_, n) return ms_ * 1e6 / (n // 32) end
  local full, part = {}, {}
  for i, l in ipairs(r.lanes) do -- l adjacent ints: a part of one sector, or whole sectors
    local t = { l >= 8 and l // 8 or 1, per_request(r.lanes_one_ms[i], r.n) }
    if l >= 8 then full[#full + 1] = t else part[#part + 1] = t end
  end
  for i, l in ipairs(r.sector_lanes) do part[#part + 1] = { l, per_request(r.sector_ms[i], r.n) } end
  for i, m in ipairs(rep.m) do -- m lanes to an address: 32/m adjacent ints, whole sectors to m = 4
    if m <= 4 then full[#full + 1] = { 4, per_request(rep.int_ms[i], rep.n) } end
  end
  set("atom_sector_ns", through_origin(full), "int atomicAdd, whole sectors of one line, 1 to 4 passes")
  set("atom_partial_ns", through_origin(part), "int atomicAdd, 1 to 4 lanes in a sector of one line")
end
-- One float address per warp: its 32 lanes one pass after another, each waiting for the last
-- result; the slices share the requests.
set("atom_slices", math.max(32 * P.atom_partial_ns, P.atom_partial_ns + 31 * need("atom_same_ns")) /
  (32 * need("atom_warp_same_ns")), "one float address per warp, against one for all")
set("atom_same_ns", need("atom_same_ns"), "float atomicAdd, every thread on one address")
set("atom_same_int_ns", need("atom_same_int_ns"), "int atomicAdd, every thread on one address")
-- Dependent chains (chains.lua): each step's latency less the add that keeps the value in range.
do
  local cy = (raw.chains or error("the calibration has no chains (run calibrate.lua --only chains)", 0)).cycles
  set("lat_fp32", cy.fma32, "fmaf chain, one warp per SM")
  set("lat_fp64", cy.fma64, "fma chain on doubles")
  set("lat_sfu", cy.rsqrt32 - cy.fma32, "rsqrtf chain, less an f32 add")
  for _, k in ipairs({ "sqrt32", "rcp32", "div32" }) do
    set("lat_" .. k, cy[k] - cy.fma32, k .. " chain, less an f32 add")
  end
  for _, k in ipairs({ "sqrt64", "rcp64", "div64" }) do
    set("lat_" .. k, cy[k] - cy.fma64, k .. " chain, less an f64 add")
  end
  set("lat_idiv32", cy.udiv32 - cy.fma32, "unsigned division chain, less an add")
end
-- A warp's load waits for the slowest of its lanes' unrelated lines (contention.lua's chase of
-- k lanes): for an exponential spread s of latency, k of them take (1 + s H_k) / (1 + s) times
-- one's, H_k the k-th harmonic number, so s = (ratio - 1) / (H_k - ratio) for a measured ratio.
do
  local r = raw.scattered_loads or error("the calibration has no scattered_loads (run calibrate.lua --only scattered_loads)", 0)
  local function at(list, v)
    for i, x in ipairs(list) do if x == v then return i end end
    error("scattered_loads has no point " .. v, 0)
  end
  local function spread(ratio, k)
    local h = 0
    for i = 1, k do h = h + 1 / i end
    return math.max(0, (ratio - 1) / (h - ratio))
  end
  local launch, k16, k1 = need("launch_us") / 1e3, at(r.k, 16), at(r.k, 1)
  -- in L2: the 16 MiB ring, 16 lanes against one
  local l2 = r.ms[at(r.mib, 16)]
  set("spread_l2", spread((l2[k16] - launch) / (l2[k1] - launch), 16), "16 lanes chasing in 16 MiB, against 1")
  -- from DRAM: the rings far past the L2 (one lane's would stay in it), against lat_dram a step
  local one = r.steps * P.lat_dram / (clk * 1e6)
  local s = 0
  for _, mib in ipairs({ 256, 2048 }) do s = s + spread((r.ms[at(r.mib, mib)][k16] - launch) / one, 16) end
  set("spread_dram", s / 2, "16 lanes chasing in 256 MiB and 2 GiB, against lat_dram")
end
set("h2d_pageable_gbs", need("h2d_pageable_gbs"), "64 MiB copy")
set("d2h_pageable_gbs", need("d2h_pageable_gbs"), "64 MiB copy")
set("h2d_pinned_gbs", need("h2d_pinned_gbs"), "64 MiB copy")
set("d2h_pinned_gbs", need("d2h_pinned_gbs"), "64 MiB copy")
set("d2d_gbs", need("d2d_gbs"), "1 GiB device-to-device copy, read + write")
set("copy_us", need("copy_small_us"), "4 KiB pinned copy")

-- The structural constants: replay the calibration's copies and price each under every candidate.
local s = raw.structure
if not s then error("the calibration has no structure runs (calibrate.lua's structure.lua)", 0) end
local drains, queues, slots = { 0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0 },
  { 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2 }, { 0, 100, 200, 300, 400, 500, 600, 800, 1000, 1300 }
local warps = { 0, 5, 10, 15, 20, 30, 40, 60 }
set("drain", 0.3, "fitted: copy_blocks")
set("queue", 0.5, "fitted: copy_grids")
set("block_cycles", 300, "fitted: copy_blocks and copy_grids")
set("warp_cycles", 0, "fitted: copy_blocks")
cuda.simopts{ perf = P }
local mod = cuda.module(s.source)
local a, b = cuda.rand(s.n, "f32", 11), cuda.array(s.n)
local runs = {} -- {gpu ms, {candidate index -> model ms}}
local function replay(label, launch, gpu_ms)
  launch()
  local r = { label = label, gpu = gpu_ms, model = {} }
  for i, d in ipairs(drains) do
    for j, q in ipairs(queues) do
      for k, c in ipairs(slots) do
        for _, w in ipairs(warps) do
          r.model[#r.model + 1] = cuda.stats{ perf = { drain = d, queue = q, block_cycles = c, warp_cycles = w } }.model.time_ms
        end
      end
    end
  end
  runs[#runs + 1] = r
end
for i, bs in ipairs(s.blocks) do
  replay("copy, blocks of " .. bs, function() mod.copy1[{(s.n + bs - 1) // bs, bs}](a, b, s.n) end, s.blocks_ms[i])
end
for i, g in ipairs(s.grids) do
  replay("grid-stride copy, " .. g .. " blocks per SM", function() mod.copy_gs[{SMS * g, 256}](a, b, s.n) end,
    s.grids_ms[i])
end
local best, best_err, best_idx, idx = nil, math.huge, 0, 0
for i, d in ipairs(drains) do
  for j, q in ipairs(queues) do
    for k, c in ipairs(slots) do
      for _, w in ipairs(warps) do
        idx = idx + 1
        local err = 0
        for _, r in ipairs(runs) do err = err + math.log(r.model[idx] / r.gpu) ^ 2 end
        if err < best_err then best, best_err, best_idx = { d, q, c, w }, err, idx end
      end
    end
  end
end
P.drain, P.queue, P.block_cycles, P.warp_cycles = best[1], best[2], best[3], best[4]
local rms = math.sqrt(best_err / #runs)
print(string.format("structure fit: drain %g, queue %g, block_cycles %g, warp_cycles %g (rms log error %.3f over %d runs)",
  P.drain, P.queue, P.block_cycles, P.warp_cycles, rms, #runs))
for _, r in ipairs(runs) do
  print(string.format("  %-40s H200 %.4f ms, model %.4f ms (%.2f)", r.label, r.gpu, r.model[best_idx],
    r.model[best_idx] / r.gpu))
end

-- The header: X(name, value) for each parameter measured here, by name; every other keeps the
-- value its row gives. A row marked MEASURED that nothing here sets is an error.
local order = {}
for _, p in ipairs(cuda.perf_params) do
  if P[p.name] ~= nil then order[#order + 1] = p.name
  elseif before[p.name] ~= before[p.name] then
    error("fit.lua sets no value for " .. p.name .. ", which sim/perf_params.def marks MEASURED", 0)
  end
end
table.sort(order)
local f = assert(io.open(outfile, "w"))
f:write("/* h200_params.h: the timing model's measured parameters for the NVIDIA H200, as X(name, value)\n")
f:write(" * for each row of perf_params.def that fit.lua measures (the others keep their row's value).\n")
f:write(string.format(" * Written by bench/model/fit.lua from %s:\n * measured %s on %s.\n",
  calfile:match("[^/]*$"), cal.date, cal.machine))
f:write(" * Do not edit by hand: run make model-fit after recalibrating (see bench/MODEL.md). */\n")
f:write("#ifndef CUDALAB_H200_PARAMS_H\n#define CUDALAB_H200_PARAMS_H\n\n#define SIM_H200_PERF(X) \\\n")
for _, k in ipairs(order) do
  f:write(string.format("  X(%s, %.6g) /* %s */ \\\n", k, P[k], why[k]))
end
f:write("\n#endif\n")
f:close()
print("wrote " .. outfile)
