-- warp_masks_vs_gpu.lua: the cases of tests/simulator/warp_masks_cases.lua on the GPU and on the
-- simulator: lanes of one warp passing different membermasks to shfl/vote/match/redux/bar.warp
-- .sync (one group per lane % 3 or per key, tiles, cg::labeled_partition). Each case on the GPU
-- must give its CPU reference (which confirms the reading of the PTX ISA the reference spells
-- out), and the simulator the GPU's bits.
local T = dofile("tests/lua/testlib.lua")
local K = dofile("tests/simulator/warp_masks_cases.lua")
T.plan(#K.cases)

local on = T.on -- the launch with that backend in use

for i, c in ipairs(K.cases) do
  T.test(c.name .. ": the GPU's answer, and the simulator's", function()
    local gpu, want = on("cuda", function() return K.run(c, K.kernel(c), 40 + i) end)
    local d = K.differ(gpu, want)
    T.check(not d, "the GPU against the reference: " .. tostring(d))
    local sim = on("sim", function() return K.run(c, K.kernel(c), 40 + i) end)
    d = K.differ(sim, gpu)
    T.check(not d, "the simulator against the GPU: " .. tostring(d))
  end)
end

T.done()
