-- managed_graphs_vs_sim.lua: on the GPU, managed arrays and CUDA graphs behave as the simulator
-- says they do, and the figures the simulator's estimates stand in for are measured beside its
-- model ("# managed: ..." and "# graphs: ..." lines): the first kernel on a managed array that
-- lives on the host (page faults), the same kernel after a prefetch, a kernel on pages already
-- on the GPU, 100 small launches one by one and as one graph. These are what um_fault_us,
-- um_migrate_gbs, um_prefetch_gbs, graph_launch_us and graph_node_us should be fitted to.
-- Runs on the cuda backend only.
local T = dofile("tests/lua/testlib.lua")
T.plan(4)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

if cuda.backend() ~= "cuda" then
  for _, name in ipairs({"managed results agree", "managed costs go the model's way",
                         "graph results agree", "graph costs go the model's way"}) do
    T.skip(name, "needs the cuda backend")
  end
  return T.done()
end

local SIZES = {1 << 18, 1 << 22, 1 << 24} -- 1 MiB, 16 MiB, 64 MiB of f32

-- Times on the active backend: {faulting, prefetched, resident} ms per size, and a managed
-- array's result for the comparison.
local function managed_costs()
  local inc = cuda.kernel("inc.cu")
  local out = {}
  for _, n in ipairs(SIZES) do
    local g = (n + 255) // 256
    local cold, warm = cuda.managed(n), cuda.managed(n)
    local t = {}
    t.faulting = cuda.time(function() inc[{g, 256}](cold, n) end, {warmup = 0, reps = 1}).median
    t.resident = cuda.time(function() inc[{g, 256}](cold, n) end, {warmup = 0, reps = 5}).median
    t.prefetched = cuda.time(function() warm:prefetch("gpu"); inc[{g, 256}](warm, n) end,
                             {warmup = 0, reps = 1}).median
    t.host_read = cpu.time(function() local _ = cold[n - 1] end, {warmup = 0, reps = 1}).median
    t.check = {cold[0], cold[n - 1], warm[n // 2]}
    out[n] = t
  end
  return out
end

local function graph_costs()
  local inc = cuda.kernel("inc.cu")
  local x = cuda.array(256)
  local g = cuda.graph(function() for _ = 1, 100 do inc[{1, 256}](x, 256) end end)
  g()
  local r = {graph = cuda.time(function() g() end, {warmup = 1, reps = 10}).median,
             separate = cuda.time(function() for _ = 1, 100 do inc[{1, 256}](x, 256) end end,
                                  {warmup = 1, reps = 10}).median}
  cuda.sync()
  r.x0 = x[0]
  return r
end

local gm, gg = managed_costs(), graph_costs()
local old = cuda.use("sim")
local sm, sg = managed_costs(), graph_costs()
cuda.use(old)
for _, n in ipairs(SIZES) do
  print(string.format("# managed %d MiB: GPU faulting %.3f ms, prefetched %.3f, resident %.3f, " ..
    "host read of one element after %.3f ms; model %.3f, %.3f, %.3f", n * 4 >> 20,
    gm[n].faulting, gm[n].prefetched, gm[n].resident, gm[n].host_read, sm[n].faulting,
    sm[n].prefetched, sm[n].resident))
end
print(string.format("# graphs: 100 launches of 256 threads: GPU separate %.4f ms, graph %.4f ms;" ..
  " model %.4f, %.4f", gg.separate, gg.graph, sg.separate, sg.graph))

test("managed results agree", function()
  for _, n in ipairs(SIZES) do
    checkeq(gm[n].check[1], 6.0, "six launches added 1 each: cold[0]")
    for i = 1, 3 do checkeq(gm[n].check[i], sm[n].check[i], "result " .. i .. " at " .. n) end
  end
  checkerr("needs the simulator", function() cuda.managed(4):residency() end)
end)

test("managed costs go the model's way", function()
  local n = SIZES[#SIZES]
  check(gm[n].prefetched < gm[n].faulting, "prefetch + kernel is not cheaper than faulting")
  check(gm[n].resident < gm[n].faulting, "resident pages are not cheaper than faulting")
end)

test("graph results agree", function()
  checkeq(gg.x0, sg.x0)
  checkeq(gg.x0, 100.0 * (1 + 1 + 10 + 1 + 10))
end)

test("graph costs go the model's way", function()
  check(gg.graph < gg.separate, string.format("graph %.4f ms, separate %.4f ms", gg.graph,
    gg.separate))
end)

return T.done()
