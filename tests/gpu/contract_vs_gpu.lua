-- contract_vs_gpu.lua: the cases of tests/simulator/contract_cases.lua on the GPU and on the
-- simulator, bit for bit: which products and divisions ptxas contracts into the adds that use
-- them, and which instructions of constants it evaluates itself (sim/sim_contract.c). Each case
-- also gives its reference's bits on the GPU, which confirms the reading of ptxas's code the
-- reference spells out.
local T = dofile("tests/lua/testlib.lua")
local K = dofile("tests/simulator/contract_cases.lua")
local N = 1 << 16
local groups = {{"f32", K.cases}, {"f64", K.cases64}, {"f16", K.cases16}}
local total = 0
for _, g in ipairs(groups) do total = total + #g[2] end
T.plan(total)

local function run(template, src, name, case, seed)
  local tp = K.templates[template]
  local x, y, z = K.inputs(template, N, seed, case.bf16)
  local d = cuda.array(N, tp.dtype)
  cuda.module(src)[name][{N // 256, 256}](cuda.array(x, tp.dtype), cuda.array(y, tp.dtype),
                                          cuda.array(z, tp.dtype), d, case.k or 0, N)
  return d:tolist(), x, y, z
end

local function on(be, f, ...)
  local old = cuda.use(be)
  local res = table.pack(pcall(f, ...))
  cuda.use(old)
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

for _, g in ipairs(groups) do
  local template, cases = g[1], g[2]
  local bodies = {}
  for i, c in ipairs(cases) do bodies["c" .. i], bodies["r" .. i] = c.body, c.ref end
  local src = K.source(template, bodies)
  for i, c in ipairs(cases) do
    T.test(c.name .. ": the GPU's bits", function()
      local gpu, x, y, z = on("cuda", run, template, src, "c" .. i, c, 7 + i)
      local sim = on("sim", run, template, src, "c" .. i, c, 7 + i)
      local ref = on("cuda", run, template, src, "r" .. i, c, 7 + i)
      local differ, first, ref_differ = 0, nil, 0
      for j = 1, N do
        if gpu[j] ~= sim[j] and not (gpu[j] ~= gpu[j] and sim[j] ~= sim[j]) then
          differ = differ + 1
          first = first or string.format("x=%.9g y=%.9g z=%.9g: GPU %.9g, simulator %.9g", x[j], y[j], z[j],
                                         gpu[j], sim[j])
        end
        if gpu[j] ~= ref[j] and not (gpu[j] ~= gpu[j] and ref[j] ~= ref[j]) then ref_differ = ref_differ + 1 end
      end
      T.check(differ == 0, string.format("%d of %d differ; first %s", differ, N, first))
      T.check(ref_differ == 0, string.format("the reference differs from the GPU in %d of %d", ref_differ, N))
    end)
  end
end
