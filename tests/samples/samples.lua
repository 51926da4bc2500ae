-- samples.lua: NVIDIA's cuda-samples kernels (tests/samples/README.md) launched as each sample's
-- host code launches them, each result checked against a CPU reference. make test runs it on
-- the simulator, make test-gpu on the GPU; tests/gpu/samples_vs_gpu.lua compares the two.
local T = dofile("tests/lua/testlib.lua")
local C = dofile("tests/samples/cases.lua")
T.plan(#C.cases)

for _, c in ipairs(C.cases) do
  T.test(c.sample .. ": " .. (c.kernel or c.launches[1][1]), function()
    local s = c.setup()
    for _, l in ipairs(c.launches) do l[2](s) end
    c.check(s)
  end)
end
return T.done()
