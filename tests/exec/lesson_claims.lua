-- lesson_claims.lua: the timing claims the lessons make, asserted on the simulator's performance
-- model of the H200. The model is deterministic, so what a lesson tells the learner to look for
-- ("32 threads per block take several times as long as 256", "stride 32 several times stride 1")
-- can be checked in make test, where a GPU's times could only be eyeballed.
--
-- Design stance: the test runs the lessons' own code. It parses lessons/NN-*.md and runs the
-- example blocks of the steps that time something, statement by statement as the prompt would
-- (print silenced), in an environment of its own; then it asserts on the variables those steps
-- leave (sw, times, v, t_naive, ...). So a lesson that changes its kernel or its sizes changes
-- what is tested, and a claim that no longer holds fails here. A failure's message gives the
-- modelled figures, and where the H200 measured the same kernels, bench/MODEL.md, so that a miss
-- can be told from a model that is off. Each test also checks the kernel's result against a CPU
-- reference, on a sample where the arrays are large.
--
-- It always runs on the simulator (cuda.use("sim")), also in make test-gpu: the claims are about
-- the model, and a GPU's run-to-run noise would make exact ones (the best block size) flaky.
local T = dofile("tests/lua/testlib.lua")
T.plan(15)
local test, check, checkeq = T.test, T.check, T.checkeq
local parse = require "lesson_parse"
local run = require "lesson_run"

cuda.use("sim")

-- The lesson file whose name starts with NN-.
local function lesson_text(nn)
  local p = io.popen("ls lessons/" .. nn .. "-*.md")
  local path = p:read("l")
  p:close()
  assert(path, "no lessons/" .. nn .. "-*.md")
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  return parse.parse(text, path)
end

-- Runs one statement of lesson code in env, as the prompt does: a statement, or else an
-- expression whose values are dropped.
local function run_statement(text, env)
  local f = load(text, "=lesson", "t", env) or assert(load("return " .. text, "=lesson", "t", env))
  f()
end

-- lesson(nn, {title = true | {example indices}, ...}) -> env: runs the example blocks of the
-- named steps, in the lesson's order, in a fresh environment over _G. A title that is missing is
-- an error, so a renamed step fails the test instead of skipping its claims.
local function lesson(nn, steps)
  local l = lesson_text(nn)
  local env = setmetatable({ print = function() end }, { __index = _G })
  local found = {}
  for _, s in ipairs(l.steps) do
    local which = steps[s.title]
    if which then
      found[s.title] = true
      local k = 0
      for _, item in ipairs(s.items) do
        if item.kind == "example" then
          k = k + 1
          if which == true or which[k] then
            for _, st in ipairs(run.statements(item.code)) do run_statement(st.text, env) end
          end
        end
      end
    end
  end
  for title in pairs(steps) do
    if not found[title] then error("lesson " .. nn .. " has no step '" .. title .. "'", 2) end
  end
  return env
end

local function us(ms) return string.format("%.1f µs", ms * 1000) end

-- Elements of a device array at 0-based indices, read one by one (no copy of the whole array).
local function sample(n, count)
  local idx = {}
  for k = 0, count - 1 do idx[#idx + 1] = (k * 7919 * 104729) % n end
  idx[#idx + 1] = n - 1
  return idx
end

-- Lesson 2: the kernel's time against the CPU loop, and the launch overhead the model charges.
test("lesson 2: a[i] += 1 over ten million floats takes tens of microseconds, a few of them launch", function()
  local e = lesson("02", { ["The kernel"] = true, ["Ten million additions"] = true, ["Timing the GPU"] = true })
  checkeq(e.N, 10000000, "the GPU's size on the simulator too")
  -- a started at 1 and had 1 added by the first launch; cuda.time's launch added one more
  for _, i in ipairs(sample(e.N, 20)) do checkeq(e.a[i], 3.0, "a[" .. i .. "]") end
  checkeq(e.gpu.clock, "model")
  check(e.gpu.median >= 0.010 and e.gpu.median < 0.100, "tens of microseconds, got " .. us(e.gpu.median))
  local launch = cuda.stats().model.launch_us
  check(launch >= 1 and launch <= 10, "a few microseconds of launch overhead, got " .. tostring(launch) ..
    " µs (bench/RESULTS.md has what launches took on an H200)")
end)

-- Lesson 3: the sin/cos/sqrt kernel (f64) against a[i] += 1 (f32).
test("lesson 3: sin*cos+sqrt (f64) takes longer than a[i] += 1 (f32), but far less than its instructions", function()
  local e = lesson("03", { ["The kernel"] = true, ["Work per byte, counted"] = true,
    ["What that does to the CPU against the GPU"] = { true } })
  -- the kernel's result against the C library, on a sample
  for _, i in ipairs(sample(e.N, 50)) do
    local v = e.x[i]
    local want = math.sin(v) * math.cos(v) + math.sqrt(math.abs(v))
    check(math.abs(e.out[i] - want) <= 1e-12 * math.abs(want), "out[" .. i .. "]")
  end
  local ratio = e.gpu_sc.median / e.gpu_inc.median
  local insts = e.sincos_per_element / e.inc_per_element
  check(ratio > 1, string.format("sincos %s is not slower than inc %s", us(e.gpu_sc.median), us(e.gpu_inc.median)))
  check(ratio < 2, string.format("at the simulator's %d elements the ratio should be under the 2 of ten " ..
    "million (fixed costs weigh on both): sincos %s / inc %s = %.2f", e.N, us(e.gpu_sc.median),
    us(e.gpu_inc.median), ratio))
  check(ratio < insts / 2, string.format("time ratio %.2f against %.1f times the instructions", ratio, insts))
end)

test("lesson 3: over ten million elements sin*cos+sqrt takes about twice as long as a[i] += 1", function()
  local e = lesson("03", { ["The kernel"] = true })
  local n = 10000000
  local inc = cuda.kernel "inc.cu"
  local a, x, out = cuda.ones(n), cuda.rand(n, "f64", 1), cuda.array(n, "f64")
  local ti = cuda.time(function() inc[{(n + 255) // 256, 256}](a, n) end)
  local ts = cuda.time(function() e.sc[{(n + 255) // 256, 256}](x, out, n) end)
  checkeq(a[n - 1], 2.0, "inc ran once")
  local v = x[n - 1]
  check(math.abs(out[n - 1] - (math.sin(v) * math.cos(v) + math.sqrt(math.abs(v)))) < 1e-12,
    "sincos's last element")
  local ratio = ts.median / ti.median
  check(ratio >= 1.6 and ratio <= 2.5, string.format("sincos %s / inc %s = %.2f, want about 2 (twice the " ..
    "bytes, as on a GPU)", us(ts.median), us(ti.median), ratio))
end)

-- Lesson 5: the block-size sweep of vector_add over ten million floats.
test("lesson 5: the sweep names 256 threads per block best, and 32 at least 3x slower", function()
  local e = lesson("05", { ["A sweep"] = true })
  local sw = e.sw
  checkeq(e.N, 10000000, "the GPU's size on the simulator too")
  for _, i in ipairs(sample(e.N, 20)) do
    local want = e.x[i] + e.y[i]
    check(math.abs(e.z[i] - want) <= 1e-6 * want, "z[" .. i .. "] = x + y")
  end
  local rows = {}
  for _, r in ipairs(sw) do rows[#rows + 1] = r.block .. ": " .. us(r.median) end
  local table_text = table.concat(rows, ", ") ..
    " (bench/MODEL.md has the H200's times for this sweep)"
  checkeq(sw.clock, "model")
  checkeq(sw.best.block, 256, "the best block size; " .. table_text)
  check(sw[1].block == 32 and sw[1].median >= 3 * sw.best.median,
    string.format("32 threads: %s, only %.2fx the best; %s", us(sw[1].median), sw[1].median / sw.best.median,
      table_text))
  check(sw[1].median > sw[2].median and sw[2].median > sw[3].median, "32 > 64 > 128: " .. table_text)
end)

-- Lesson 6: copies against the kernel, pageable and pinned, and the size below which the CPU wins.
local six
local function lesson6()
  six = six or lesson("06", { ["Copies against the kernel"] = true, ["Pinned memory"] = true,
    ["When the CPU wins"] = true })
  return six
end

test("lesson 6: end to end the GPU beats the Lua loop, with copies most of its time, pageable and pinned", function()
  local e = lesson6()
  checkeq(e.N, 10000000, "the GPU's size on the simulator too")
  for name, v in pairs({ pageable = e.v, pinned = e.vp }) do
    check(v.compare.ok, name .. ": the GPU's result against the CPU's: " .. tostring(v.compare))
    checkeq(v.clock, "model")
    local copies = v.gpu - v.kernel
    check(v.speedup > 1, string.format("%s: the GPU should win end to end: CPU %.1f ms, GPU %.3f ms",
      name, v.cpu.median, v.gpu))
    check(copies / v.gpu > 0.5, string.format("%s: copies take %.0f%% of the GPU side, want most", name,
      100 * copies / v.gpu))
  end
  local pageable = e.v.gpu - e.v.kernel
  check(pageable >= 100 * e.v.kernel, string.format("pageable copies %.3f ms, a hundred times the " ..
    "kernel's %s? %.0fx", pageable, us(e.v.kernel), pageable / e.v.kernel))
  for k = 1, 3, 2 do
    local a, b = e.v.stages[k], e.vp.stages[k]
    check(b.median < a.median, string.format("%s: pinned %.3f ms not faster than pageable %.3f ms",
      a.label, b.median, a.median))
  end
  -- "a fraction of the time": pinned copies run several times faster (bench/MODEL.md)
  check(e.v.gpu >= 2 * e.vp.gpu, string.format("pinned: the GPU side a fraction of pageable's? %.3f ms " ..
    "against %.3f ms", e.vp.gpu, e.v.gpu))
end)

test("lesson 6: the CPU wins end to end at a hundred elements, the GPU at a million", function()
  local e = lesson6()
  local small, big = e.by_size[100], e.by_size[1000000]
  check(small.compare.ok and big.compare.ok, "results agree with the CPU's")
  check(small.speedup < 1, string.format("100 elements: CPU %s, GPU %s: the CPU should win",
    us(small.cpu.median), us(small.gpu)))
  check(big.speedup > 1, string.format("a million elements: CPU %.2f ms, GPU %.3f ms: the GPU should win",
    big.cpu.median, big.gpu))
end)

-- Lesson 7: a[(i * stride) % n] += 1 over ten million floats.
test("lesson 7: stride 32 takes at least 4x as long as stride 1", function()
  local e = lesson("07", { ["What it costs in time"] = true })
  checkeq(e.N, 10000000, "the GPU's size on the simulator too")
  local t = e.times
  local row = {}
  for _, s in ipairs({ 1, 2, 4, 8, 16, 32 }) do row[#row + 1] = s .. ": " .. us(t[s].median) end
  local ratio = t[32].median / t[1].median
  check(ratio >= 4, string.format("stride 32 is %.2fx stride 1 (about 9x on the H200, bench/MODEL.md); %s", ratio,
    table.concat(row, ", ")))
  for _, s in ipairs({ 2, 4, 8 }) do
    check(t[s].median > t[s // 2].median, "the time grows with the stride: " .. table.concat(row, ", "))
  end
  -- the kernel itself, on a size a CPU reference can follow: stride 7 visits every element once
  local n, a = 1000, cuda.zeros(1000)
  e.stride_inc[{4, 256}](a, 7, n)
  local _, r = cuda.compare(a, cuda.ones(n), { rtol = 0, atol = 0 })
  check(r.ok, "stride_inc with stride 7 adds 1 to each element once: " .. tostring(r))
end)

-- Lesson 9: naive against tiled matrix multiply.
-- Checks 16 elements of a lesson's n x n product e.C = e.A * e.B against the CPU.
local function check_product(e, n)
  local A, B = e.A:tolist(), e.B:tolist()
  for k = 0, 15 do
    local r, c = (k * 37) % n, (k * 101 + 5) % n
    local s = 0
    for j = 0, n - 1 do s = s + A[r * n + j + 1] * B[j * n + c + 1] end
    check(math.abs(e.C[r * n + c] - s) <= 1e-4 * math.abs(s), string.format("C[%d][%d]", r, c))
  end
end

test("lesson 9: the tiled matmul is faster than the naive one, by less than 16x", function()
  local e = lesson("09", { ["The naive multiply"] = true, ["What it costs in time"] = true })
  local n = e.n
  check_product(e, n) -- C holds the tiled kernel's product (the last launch)
  local ratio = e.t_naive.median / e.t_tiled.median
  check(ratio > 1, string.format("%d x %d: naive %s, tiled %s: tiled is not faster", n, n,
    us(e.t_naive.median), us(e.t_tiled.median)))
  check(ratio < 16, string.format("naive / tiled = %.1f, the lesson says less than sixteen", ratio))
  -- (bench/MODEL.md has the H200's naive and tiled times at 1024 x 1024)
end)

test("lesson 15: cuBLAS beats the tiled kernel, which beats the naive one, in GFLOP/s", function()
  local e = lesson("15", { ["A multiply from the library"] = true, ["Counting the work"] = true,
                           ["Three multiplies, one scale"] = true })
  local n = e.n
  check_product(e, n) -- C holds cuBLAS's product (the last call)
  local naive, tiled, blas = e.gflops(n, e.t_naive), e.gflops(n, e.t_tiled), e.gflops(n, e.t_blas)
  check(naive < tiled and tiled < blas, string.format("%d x %d: naive %.0f, tiled %.0f, cuBLAS %.0f GFLOP/s",
    n, n, naive, tiled, blas))
end)

-- Lesson 10: one atomic per element, per warp (shuffles) and per block (shared memory).
test("lesson 10: the shuffle and shared reductions beat one atomic per element, shared the fastest", function()
  local e = lesson("10", { ["Correct first"] = true, ["Then speed"] = true })
  checkeq(e.N, 10000000, "the GPU's size on the simulator too")
  local _, r = cuda.compare({ e.shuffle_sum, e.shared_sum }, { e.cpu_sum, e.cpu_sum }, { rtol = 1e-4 })
  check(r.ok, "the sums against the CPU's: " .. tostring(r))
  local a, w, b = e.t_atomic.median, e.t_shuffle.median, e.t_shared.median
  local figures = string.format("atomic %s, shuffle %s, shared %s (bench/MODEL.md has the H200's)",
    us(a), us(w), us(b))
  check(w < a, "shuffle not faster than one atomic per element: " .. figures)
  check(b < a, "shared not faster than one atomic per element: " .. figures)
  check(b < w, "the per-block version is not the fastest: " .. figures)
end)

-- Lesson 11: the divergent kernel against one that branches per warp.
test("lesson 11: the divergent kernel takes clearly longer than the uniform one, at most twice", function()
  local e = lesson("11", { ["A divergent kernel"] = true, ["What it costs in time"] = true })
  local ratio = e.t_div.median / e.t_uni.median
  check(ratio >= 1.2 and ratio <= 2.0, string.format("%d elements, %d iterations: divergent %s, uniform " ..
    "%s, ratio %.2f", e.N, e.ITERS,
    us(e.t_div.median), us(e.t_uni.median), ratio))
  -- both kernels against a CPU reference, on a small array (f32 arithmetic, so a tolerance)
  local n, iters = 512, 5
  local x = cuda.rand(n, "f32", 4)
  local h = x:tolist()
  local d, u = cuda.array(h), cuda.array(h)
  e.branchy[{2, 256}](d, n, iters)
  e.by_warp[{2, 256}](u, n, iters)
  local want_d, want_u = {}, {}
  for i = 0, n - 1 do
    local function loop(v, even)
      for _ = 1, iters do v = even and v * 0.99 + 1 or v * 0.98 - 1 end
      return v
    end
    want_d[i + 1] = loop(h[i + 1], i % 2 == 0)
    want_u[i + 1] = loop(h[i + 1], (i // 32) % 2 == 0)
  end
  local rd = select(2, cuda.compare(d, want_d, { rtol = 1e-5 }))
  local ru = select(2, cuda.compare(u, want_u, { rtol = 1e-5 }))
  check(rd.ok, "branchy: " .. tostring(rd))
  check(ru.ok, "by_warp: " .. tostring(ru))
end)

-- The model is deterministic: the same launch, or copy, timed twice gives the same figure.
test("the same launch timed twice gives the identical modelled time", function()
  local va = cuda.kernel "vector_add.cu"
  local n = 1000000
  local x, y, z = cuda.rand(n, "f32", 1), cuda.rand(n, "f32", 2), cuda.zeros(n)
  local function once() return cuda.time(function() va[{(n + 255) // 256, 256}](x, y, z, n) end) end
  local t1, t2 = once(), once()
  checkeq(t1.clock, "model")
  checkeq(t1.reps, 1, "one launch by default on the model clock (cuda.sweep relies on it)")
  checkeq(t2.median, t1.median, "vector_add timed twice")
  local m = cuda.stats().model.time_ms
  check(math.abs(m - t2.median) <= 1e-6 * t2.median, string.format("cuda.stats().model.time_ms %.9g " ..
    "is the timed figure %.9g", m, t2.median))
  local three = cuda.time(function() va[{(n + 255) // 256, 256}](x, y, z, n) end, { reps = 3 })
  checkeq(three.min, three.max, "three reps")
  checkeq(three.median, t1.median, "three reps against one")
  for _, i in ipairs(sample(n, 20)) do
    check(math.abs(z[i] - (x[i] + y[i])) <= 1e-6, "z[" .. i .. "] = x + y")
  end
  local h, d = cuda.host(n, "f32"), cuda.array(n)
  local c1 = cuda.time(function() d:copyfrom(h) end)
  local c2 = cuda.time(function() d:copyfrom(h) end)
  checkeq(c2.median, c1.median, "a copy timed twice")
end)

-- Lesson 16: streams. The claims are about the model's schedule: a chunked pipeline on three
-- streams beats one stream, pageable copies do not overlap, and pinned memory crosses sooner.
test("lesson 16: the pipeline on streams beats one stream, pageable ones do not overlap, pinned crosses sooner", function()
  local e = lesson("16", { ["One stream, one thing at a time"] = true, ["A chunked pipeline"] = { 1 },
                           ["Pageable memory does not overlap"] = true, ["When the GPU starts to win"] = true })
  local serial, piped, paged = e.serial.total, e.piped.total, e.paged.total
  local figures = string.format("one stream %s, pipeline %s, pageable pipeline %s", us(serial), us(piped), us(paged))
  check(piped < 0.8 * serial, "the pipeline does not beat one stream by a fifth: " .. figures)
  check(paged > piped, "pageable is not slower than pinned: " .. figures)
  -- pageable: each operation starts after every copy queued before it ended (the host waited)
  local last = 0
  for _, op in ipairs(e.paged.ops) do
    check(op.start >= last - 1e-9, "a pageable copy overlapped later work: " .. figures)
    if op.kind == "copy" then last = op.stop end
  end
  -- the pipeline's result against the CPU, on a sample
  for _, i in ipairs(sample(e.N, 200)) do
    local x, y = e.hin[i], 0.0
    for _ = 1, e.ITERS do y = y * x + 1.0 end
    check(math.abs(e.hout[i] - y) <= 1e-4 * math.abs(y), string.format("hout[%d] is %g, want %g", i, e.hout[i], y))
  end
  for kind, c in pairs(e.crossover) do
    if c.pageable then
      check(c.pinned and c.pinned <= c.pageable, string.format("against the %s loop pinned crosses at %s, pageable at %s",
        kind, tostring(c.pinned), tostring(c.pageable)))
    end
  end
  check(e.crossover.lua.pinned, "the GPU never beat the Lua loop up to N elements")
end)

-- Lesson 18: floats on one address against integers there, and against many addresses.
test("lesson 18: float atomics on one address take longer than integer ones and than many addresses", function()
  local e = lesson("18", { ["One address: integers and floats"] = true })
  checkeq(e.oi[0], e.N, "the integer count: the model is deterministic, so cuda.time runs it once")
  local i, f, m = e.t_int.median, e.t_float.median, e.t_many.median
  local figures = string.format("int %s, float %s, many addresses %s", us(i), us(f), us(m))
  check(f > 2 * i, "floats on one address not clearly slower than integers: " .. figures)
  check(f > 2 * m, "one address not clearly slower than many: " .. figures)
end)

-- Lesson 25: a hundred launches replayed from a graph against one by one.
test("lesson 25: a graph of a hundred small launches replays in less time than the launches one by one", function()
  local e = lesson("25", { ["The cost of a launch"] = true, ["Capture once, replay"] = true })
  check(e.t_graph.median < e.t_100.median, string.format("graph %s, one by one %s",
    us(e.t_graph.median), us(e.t_100.median)))
  check(e.per_launch_us >= 1 and e.per_launch_us <= 10, "a few µs a launch, got " ..
    tostring(e.per_launch_us))
end)

return T.done()
