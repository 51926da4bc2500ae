-- managed_graphs.lua: managed (unified) arrays and CUDA graphs running real kernels: on the
-- simulator in make test, on the GPU in make test-gpu. Results are checked against CPU
-- references; the costs' direction is asserted on both (a prefetch before a kernel costs less
-- than the kernel's page faults, a graph of 100 small launches less than 100 launches), and on
-- the simulator the page record itself (where each 64 KiB group is, the faults counted).
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local GPU = cuda.backend() == "cuda"
T.plan(15)

local inc = cuda.kernel("inc.cu")
local saxpy = cuda.kernel("saxpy.cu")
local reader = cuda.kernel[[
__global__ void total(const float *a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, a[i]);
}]]
local GROUP = 64 * 1024
-- large enough on a GPU for faults to dominate a launch; 4 MiB (two 2 MiB blocks) here
local N = GPU and (1 << 24) or (1 << 20)
local function blocks(n) return (n + 255) // 256 end
local function median(f) return cuda.time(f, {warmup = 0, reps = 1}).median end

test("a managed array is an array: made from a table, used by a kernel, read in place", function()
  local x = cuda.managed({1, 2, 3, 4, 5})
  local y = cuda.managed({10, 20, 30, 40, 50}, "f32")
  checkeq(x.managed, true)
  checkeq(cuda.array(2).managed, false)
  checkeq(x.dtype, "f32")
  check(tostring(x):find("(managed)", 1, true), tostring(x))
  saxpy[{1, 32}](5, 2.0, x, y)
  local want = {12, 24, 36, 48, 60}
  for i = 0, 4 do checkeq(y[i], want[i + 1], "y[" .. i .. "]") end
  y[2] = -1 -- written by the host in place, then read by a kernel
  saxpy[{1, 32}](5, 1.0, x, y)
  checkeq(y[2], 2.0, "the kernel saw the host's write")
  local v = y + 3 -- a view keeps the array's kind
  checkeq(v.managed, true)
  checkeq(v[0], 52.0)
end)

test("cuda.managed(n) is zero-filled and copies arrays and host buffers", function()
  local z = cuda.managed(1000, "i32")
  checkeq(#z, 1000)
  checkeq(z[0] + z[999], 0)
  local src = cuda.arange(10, "f64")
  local m = cuda.managed(src)
  checkeq(m.dtype, "f64")
  inc[{1, 32}](cuda.managed(0), 0) -- an empty one launches too
  local h = cuda.host({7, 8, 9}, "f32")
  local mh = cuda.managed(h)
  checkeq(mh[2], 9.0)
  local sum = 0
  for i = 0, 9 do sum = sum + m[i] end
  checkeq(sum, 45.0)
end)

test("a kernel on a large managed array matches the CPU", function()
  local a = cuda.managed(N)
  a:arange()
  inc[{blocks(N), 256}](a, N)
  local out = cuda.managed(1)
  reader[{blocks(4096), 256}](a, out, 4096)
  checkeq(out[0], 4096 * 4095 / 2 + 4096, "sum of 1 .. 4096")
  for _, i in ipairs({0, 1, N // 2, N - 1}) do checkeq(a[i], i + 1.0, "a[" .. i .. "]") end
end)

test("prefetching before a kernel costs less than the kernel's page faults", function()
  local cold, warm = cuda.managed(N), cuda.managed(N)
  local faulting = median(function() inc[{blocks(N), 256}](cold, N) end)
  local prefetched = median(function()
    warm:prefetch("gpu")
    inc[{blocks(N), 256}](warm, N)
  end)
  check(prefetched < faulting,
    string.format("prefetch + kernel %.3f ms, faulting kernel %.3f ms", prefetched, faulting))
  local again = median(function() inc[{blocks(N), 256}](cold, N) end)
  check(again < faulting, string.format("resident %.3f ms, faulting %.3f ms", again, faulting))
  checkeq(cold[7], 2.0)
  checkeq(warm[7], 1.0)
end)

if GPU then
  test("the page record and fault counts are the simulator's", function()
    checkerr("needs the simulator", function() cuda.managed(4):residency() end)
  end)
  for _, name in ipairs({"page groups move", "host faults", "read-mostly", "preferred cpu"}) do
    T.skip(name, "the simulator's page record (a:residency, cuda.stats)")
  end
else
  test("page groups move to the device when a kernel touches them", function()
    local a = cuda.managed(N)
    local r = a:residency()
    checkeq(r.group, GROUP)
    checkeq(r.cpu, N * 4 // GROUP, "a new array lives on the host")
    checkeq(r.gpu, 0)
    inc[{1, 256}](a, 256) -- touches the first group only
    r = a:residency()
    checkeq(r.gpu, 1, "one group touched")
    local s = cuda.stats()
    checkeq(s.managed.faults, 1)
    checkeq(s.managed.groups, 1)
    checkeq(s.managed.migrated_bytes, GROUP)
    check(s.managed.us > 0)
    check(s.managed.estimate:find("um_fault_us", 1, true), s.managed.estimate)
    inc[{blocks(N), 256}](a, N)
    s = cuda.stats()
    checkeq(s.managed.groups, N * 4 // GROUP - 1, "the rest")
    checkeq(s.managed.faults, N * 4 // (2 << 20), "a batch per 2 MiB block")
    inc[{blocks(N), 256}](a, N)
    checkeq(cuda.stats().managed.faults, 0, "resident now")
    check(tostring(cuda.stats()):find("estimates, not measured", 1, true))
  end)

  test("the host faults groups back, and a prefetch moves them all", function()
    local a = cuda.managed(N)
    a:prefetch("gpu")
    checkeq(a:residency().gpu, N * 4 // GROUP)
    local before = cuda.stats().managed_session.cpu_faults
    checkeq(a[N - 1], 0.0)
    checkeq(cuda.stats().managed_session.cpu_faults, before + 1, "one group came back")
    checkeq(a:residency().cpu, 1)
    a:prefetch("cpu")
    checkeq(a:residency().cpu, N * 4 // GROUP)
  end)

  test("read-mostly data is copied to the device and stays on the host too", function()
    local a = cuda.managed(N):fill(1)
    a:advise("read_mostly")
    local out = cuda.managed(1)
    reader[{blocks(N), 256}](a, out, N)
    checkeq(out[0], N * 1.0)
    local r = a:residency()
    checkeq(r.both, N * 4 // GROUP)
    local before = cuda.stats().managed_session.cpu_faults
    checkeq(a[5], 1.0)
    checkeq(cuda.stats().managed_session.cpu_faults, before, "the host's copy is still there")
    a[5] = 2 -- a write drops the device's copy of that group
    checkeq(a:residency().cpu, 1)
    a:advise("read_mostly", false)
  end)

  test("preferred on the cpu: kernels read the pages where they are", function()
    local a = cuda.managed(N):fill(2)
    a:advise("preferred", "cpu")
    local out = cuda.array(1) -- not managed: only a's pages are counted
    reader[{blocks(N), 256}](a, out, N)
    checkeq(out[0], 2.0 * N)
    local s = cuda.stats()
    checkeq(s.managed.faults, 0)
    checkeq(s.managed.remote_bytes, N * 4)
    checkeq(a:residency().cpu, N * 4 // GROUP, "nothing moved")
    a:advise("preferred", false)
    reader[{blocks(N), 256}](a, out, N)
    checkeq(a:residency().gpu, N * 4 // GROUP, "without the advice they migrate")
  end)
  T.skip("the page record and fault counts are the simulator's", "a GPU's refusal of them")
end

test("a graph replays its launches, and matches the CPU", function()
  local x = cuda.array(256)
  local g = cuda.graph(function()
    for _ = 1, 100 do inc[{1, 256}](x, 256) end
  end)
  checkeq(g.launches, 100)
  checkeq(x[0], 0.0, "capturing runs nothing")
  g()
  checkeq(x[0], 100.0)
  g:launch()
  for _, i in ipairs({0, 128, 255}) do checkeq(x[i], 200.0, "x[" .. i .. "]") end
  check(tostring(g):find("cuda.Graph of 100 kernel launches", 1, true), tostring(g))
  local m = cuda.managed({1, 2, 3})
  local y = cuda.managed(3)
  local g2 = cuda.graph(function() saxpy[{1, 32}](3, 3.0, m, y) end)
  g2()
  checkeq(y[2], 9.0, "a graph on managed arrays")
end)

test("a graph of 100 small launches costs less than 100 launches", function()
  local x = cuda.array(256)
  local g = cuda.graph(function() for _ = 1, 100 do inc[{1, 256}](x, 256) end end)
  g() -- instantiated graphs upload on first launch
  local graph = median(function() g() end)
  local separate = median(function() for _ = 1, 100 do inc[{1, 256}](x, 256) end end)
  check(graph < separate, string.format("graph %.4f ms, separate %.4f ms", graph, separate))
  checkeq(x[0], 300.0)
end)

test("a graph keeps its arrays and kernels alive", function()
  local g
  do
    local x = cuda.array(64)
    local k = cuda.kernel("inc.cu")
    g = cuda.graph(function() k[{1, 64}](x, 64) end)
  end
  collectgarbage()
  collectgarbage()
  g()
  cuda.sync()
  g:free()
  checkeq(g.freed, true)
  checkerr("has been freed", function() g() end)
end)

test("what a graph cannot hold is refused, naming it", function()
  local x = cuda.array(8)
  local m = cuda.managed(8)
  local function refused(what, f)
    checkerr(what, cuda.graph, f)
    checkerr(" cannot be captured in cuda.graph: a graph holds kernel launches only", cuda.graph, f)
  end
  refused("reading a device array on the host", function() return x[0] end)
  refused("reading a device array on the host", function() print(m) end)
  refused("writing a device array from the host", function() m[0] = 1 end)
  refused("cuda.sync()", function() cuda.sync() end)
  refused("making an array", function() cuda.array(4) end)
  refused("making a managed array", function() cuda.managed(4) end)
  refused("a copy of a device array", function() cuda.copy(x, cuda.host(8)) end)
  refused("a:prefetch", function() m:prefetch("gpu") end)
  refused("a launch on a cuda.Stream", function() inc[{1, 8, stream = cuda.stream()}](x, 8) end)
  local g0 = cuda.graph(function() inc[{1, 8}](x, 8) end)
  refused("replaying a graph", function() g0() end)
  -- a grid sync needs the launch's own grid workspace, which a replayed node would not have
  local coop = cuda.kernel[[
#include <cooperative_groups.h>
__global__ void twice(float *a, int n) {
  cooperative_groups::this_grid().sync();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2.0f;
}]]
  checkerr("a cooperative launch cannot be captured in cuda.graph: its grid sync needs a " ..
    "launch of its own; launch it before or after the graph", cuda.graph,
    function() coop[{1, 8, cooperative = true}](x, 8) end)
  checkerr("cuda.graph cannot be called inside cuda.graph", cuda.graph,
    function() cuda.graph(function() end) end)
  checkerr("my own error", cuda.graph, function() inc[{1, 8}](x, 8); error("my own error") end)
  -- after a refused capture, launches run again
  inc[{1, 8}](x, 8)
  checkeq(x[0], 1.0)
  checkerr("bad argument #1 to 'cuda.graph' (function expected, got number)", cuda.graph, 42)
end)

test("managed arrays refuse what does not apply, naming it", function()
  local m = cuda.managed(16)
  checkerr("is not managed memory; make the array with cuda.managed(n)",
    function() cuda.array(4):prefetch("gpu") end)
  checkerr("is not managed memory", function() cuda.host(4):advise("read_mostly") end)
  checkerr('the place is "gpu" or "cpu", got \'moon\'', function() m:prefetch("moon") end)
  checkerr('the place is "gpu" or "cpu", got no value', function() m:prefetch() end)
  checkerr("unknown advice 'fast'", function() m:advise("fast") end)
  checkerr('a:advise("preferred", ...): the place is "gpu" or "cpu", got number',
    function() m:advise("preferred", 3) end)
  checkerr("boolean expected", function() m:advise("read_mostly", "yes") end)
  checkerr("a:prefetch's stream", function() m:prefetch("gpu", {}) end)
  checkerr("cuda.managed: expected a size, a table of values or an array as argument 1, got string",
    function() cuda.managed("ten") end)
  checkerr("size must not be negative, got -1", function() cuda.managed(-1) end)
  checkerr("unknown dtype 'f17'", function() cuda.managed(4, "f17") end)
  checkerr("cannot convert cuda.Array<f32>[3] to i32 while copying",
    function() cuda.managed(cuda.array(3), "i32") end)
  m:free()
  checkerr("has been freed", function() m:prefetch("gpu") end)
end)

test("the launch log records prefetches, advice and replays, and marks captured launches",
  function()
    local m, x = cuda.managed(64), cuda.zeros(64)
    cuda.launches(true)
    m:prefetch("gpu")
    m:advise("read_mostly")
    m:advise("preferred", "cpu")
    inc[{1, 64}](m, 64)
    local g = cuda.graph(function() inc[{1, 64}](x, 64) end)
    g()
    g:launch()
    local l = cuda.launches()
    cuda.launches(false)
    local rows = {}
    for i, r in ipairs(l) do
      rows[i] = string.format("%s %s %s %s n=%d grid=%d captured=%s", r.name,
        tostring(r.args[2]), tostring(r.args[3]), r.kernel and "kernel" or "-", r.n, r.grid.x,
        tostring(r.captured))
    end
    checkeq(table.concat(rows, "\n"), table.concat({
      "Array:prefetch gpu nil - n=2 grid=0 captured=false",
      "Array:advise read_mostly nil - n=3 grid=0 captured=false",
      "Array:advise preferred cpu - n=3 grid=0 captured=false",
      "inc 64 nil kernel n=2 grid=1 captured=false",
      "inc 64 nil kernel n=2 grid=1 captured=true",
      "Graph:launch nil nil - n=1 grid=0 captured=false",
      "Graph:launch nil nil - n=1 grid=0 captured=false"}, "\n"))
    check(rawequal(l[1].args[1], m) and rawequal(l[4].args[1], m), "the managed array")
    check(rawequal(l[6].args[1], g) and rawequal(l[7].args[1], g), "the graph replayed")
    checkeq(x[0], 2.0, "the captured launch ran once for each replay, not when captured")
  end)
