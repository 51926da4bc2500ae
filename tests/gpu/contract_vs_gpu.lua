-- contract_vs_gpu.lua: the cases of tests/simulator/contract_cases.lua on the GPU and on the
-- simulator, bit for bit: which products and divisions ptxas contracts into the adds that use
-- them, and which instructions of constants it evaluates itself (sim/sim_contract.c). Each case
-- also gives its reference's bits on the GPU, which confirms the reading of ptxas's code the
-- reference spells out.
local T = dofile("tests/lua/testlib.lua")
local K = dofile("tests/simulator/contract_cases.lua")
local N = 1 << 16
T.plan(K.count)

local on = T.on -- the launch with that backend in use

for _, g in ipairs(K.groups) do
  local template, cases = g[1], g[2]
  local bodies = {}
  for i, c in ipairs(cases) do bodies["c" .. i], bodies["r" .. i] = c.body, c.ref end
  local src = K.source(template, bodies)
  local gpu_module, sim_module = on("cuda", cuda.module, src), on("sim", cuda.module, src)
  for i, c in ipairs(cases) do
    T.test(c.name .. ": the GPU's bits", function()
      local gpu, x, y, z = on("cuda", K.run, template, gpu_module["c" .. i], c, N, 7 + i)
      local sim = on("sim", K.run, template, sim_module["c" .. i], c, N, 7 + i)
      local ref = on("cuda", K.run, template, gpu_module["r" .. i], c, N, 7 + i)
      local differ, j = K.differ(gpu, sim)
      T.check(differ == 0, string.format("%d of %d differ; first x=%.9g y=%.9g z=%.9g: GPU %.9g, simulator %.9g",
                                         differ, N, x[j or 1], y[j or 1], z[j or 1], gpu[j or 1], sim[j or 1]))
      local ref_differ = K.differ(gpu, ref)
      T.check(ref_differ == 0, string.format("the reference differs from the GPU in %d of %d", ref_differ, N))
    end)
  end
end
