-- samples_vs_gpu.lua: the cuda-samples corpus (tests/samples/cases.lua) on the GPU and on the
-- simulator from the same inputs. Each case's results are checked against the CPU reference on
-- both, and compared bit for bit where they do not depend on the order of atomics (the cases
-- return only such outputs). Then each launch is timed on both: the GPU's median of CUDA events
-- beside the simulator's modelled H200 time, printed as a table with their ratio.
--
-- The times are printed, not asserted: the launches are sized to run in seconds on the
-- simulator (tests/samples/README.md), so many last a few microseconds, where launch overhead
-- and clock ramp-up dominate; bench/MODEL.md holds the model to its validation set instead.
local T = dofile("tests/lua/testlib.lua")
local C = dofile("tests/samples/cases.lua")
T.plan(#C.cases)

-- Runs the case on one backend: its results (host copies of its outputs) and, for each launch,
-- the median time of that launch alone, run again on the arrays as they are after the case.
local function run(c, be)
  local old = cuda.use(be)
  local ok, res = pcall(function()
    local s = c.setup()
    for _, l in ipairs(c.launches) do l[2](s) end
    c.check(s)
    local out = {}
    for i, a in ipairs(c.outputs(s)) do out[i] = a:host() end
    local times = {}
    for i, l in ipairs(c.launches) do
      if c.once then -- one timed run, on arrays made afresh, as a second run would overflow
        local f = c.setup()
        for j = 1, i - 1 do c.launches[j][2](f) end
        times[i] = cuda.time(function() l[2](f) end, {warmup = 0, reps = 1}).median
      else
        times[i] = cuda.time(function() l[2](s) end).median
      end
    end
    return {out = out, times = times}
  end)
  cuda.use(old)
  if not ok then error(be .. ": " .. tostring(res), 0) end
  return res
end

local rows = {}
for _, c in ipairs(C.cases) do
  local name = c.sample .. ": " .. (c.kernel or c.launches[1][1])
  T.test(name .. ": right on both, the GPU's bits", function()
    local g, s = run(c, "cuda"), run(c, "sim")
    for i, l in ipairs(c.launches) do
      rows[#rows + 1] = {c.sample, l[1], g.times[i], s.times[i]}
    end
    for i = 1, #g.out do
      -- the bytes, so that a sign of zero or a NaN's payload counts; compare says where
      if g.out[i]:tobytes() ~= s.out[i]:tobytes() then
        error("output " .. i .. " differs: " .. tostring(select(2, cuda.compare(g.out[i],
          s.out[i], {rtol = 0, atol = 0}))), 0)
      end
    end
  end)
end

print(string.format("# %-24s %-40s %10s %12s %7s", "sample", "kernel", "GPU ms", "modelled ms",
  "ratio"))
local within = 0
for _, r in ipairs(rows) do
  local ratio = r[4] / r[3]
  if ratio <= 1.5 and ratio >= 1 / 1.5 then within = within + 1 end
  print(string.format("# %-24s %-40s %10.4f %12.4f %7.2f", r[1], r[2], r[3], r[4], ratio))
end
print(string.format("# %d of %d launches modelled within 1.5x of the GPU", within, #rows))
return T.done()
