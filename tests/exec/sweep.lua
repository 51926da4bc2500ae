-- sweep.lua: cuda.sweep, cuda.occupancy, cuda.versus and cuda.plot running real kernels: on
-- the simulator in make test (small arrays, few repetitions: only the shape of the results is
-- checked there, since simulator time is not GPU time), and on the GPU in make test-gpu, where
-- a block-size sweep of a 10,000,000-element vector add must show 32 threads per block several
-- times slower than 256 (0.195 ms against 0.041 ms on the H200, reference/h200-timings.md).
-- The SVG checks use xmllint and headless Chromium when installed and say SKIP otherwise.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local GPU = cuda.backend() == "cuda"
T.plan(GPU and 17 or 15) -- two tests run on the GPU only
local N = GPU and 10000000 or 20000
local REPS = GPU and 20 or 2
local term, progress = require "term", require "progress"
term.utf8_override, term.color_override, term.width_override = true, false, 100

local vadd = cuda.kernel("vector_add.cu")
local a, b, c = cuda.rand(N, "f32", 1), cuda.rand(N, "f32", 2), cuda.array(N)

local skip = T.skip

test("a block-size sweep gives a row per size with time, GB/s and occupancy", function()
  local s = cuda.sweep(vadd, { 32, 64, 128, 256, 512, 1024, reps = REPS }, a, b, c, N)
  checkeq(#s, 6)
  checkeq(cuda.last, s, "published as cuda.last")
  checkeq(s.partial, nil)
  for i, r in ipairs(s) do
    check(r.median > 0 and r.min <= r.median and r.median <= r.max, "row " .. i .. " timing")
    checkeq(r.grid, (N + r.block - 1) // r.block, "one thread per element")
    checkeq(r.bytes, 3 * 4 * N, "bytes of the three arrays")
    check(math.abs(r.gbps - r.bytes / r.median / 1e6) < 1e-6 * r.gbps, "GB/s from bytes and median")
  end
  checkeq(s[1].occupancy, 0.5, "32 threads: half the SM")
  checkeq(s[1].limit, "blocks")
  checkeq(s[4].occupancy, 1)
  checkeq(s.clock, GPU and "gpu" or "model")
  local fastest = s[1]
  for _, r in ipairs(s) do if r.median < fastest.median then fastest = r end end
  checkeq(s.best, fastest, "best is the fastest row")
  local text = tostring(s)
  check(text:find("◀ best", 1, true), text)
  check(text:find("vector_add over 6 block sizes", 1, true), text)
  -- the kernel really ran: c = a + b
  vadd[{(N + 255) // 256, 256}](c, c, c, N) -- c = 2(a + b)
  local _, r = cuda.compare(c, cuda.array(N), {atol = 0, rtol = 0})
  check(not r.ok, "c was written")
end)

test("a configuration that cannot launch becomes a row with its error", function()
  local s = cuda.sweep(vadd, { 256, 2048, reps = 1 }, a, b, c, N)
  checkeq(#s, 2)
  check(s[2].error:find("a block of 2048 threads", 1, true), s[2].error)
  checkeq(s[2].median, nil)
  checkeq(s.best, s[1])
  check(tostring(s):find("2048  failed: a block of 2048 threads", 1, true), tostring(s))
  checkeq(s[2].fault, nil, "refused before it ran: no thread to name")
end)

-- A kernel written for blocks of at most 128 threads: its shared tile has 128 elements.
local TILE = [[__global__ void tile(const float *x, float *y, int n) {
  __shared__ float s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0;
  __syncthreads();
  if (i < n) y[i] = 2 * s[threadIdx.x];
}]]

-- On a GPU an overrun of shared memory need not fault, and a fault names no thread: the simulator
-- is what names them.
local test_sim = GPU and function(name) skip(name, "the simulator names the faulting thread") end
  or test
test_sim("a row that faults keeps the kernel, block, thread and line of the fault", function()
  local tile, x = cuda.kernel(TILE), cuda.rand(3000, "f32", 5)
  local y = cuda.zeros(3000)
  local s = cuda.sweep(tile, { 128, 256, reps = 1 }, x, y, #x)
  checkeq(s[2].median, nil, "256 threads overrun the tile")
  check(s[2].error:find("^out%-of%-bounds shared store"), s[2].error)
  check(s[2].error:find("\n  in kernel tile, block (0,0,0), thread (128,0,0), at ", 1, true),
    "the message's second line is kept: " .. s[2].error)
  local f = s[2].fault
  checkeq(f.kernel, "tile"); checkeq(f.block.x, 0); checkeq(f.thread.x, 128); checkeq(f.line, 4)
  checkeq(f.thread.y, 0)
  local text = tostring(s)
  check(text:find("256  failed: out-of-bounds shared store", 1, true), text)
  check(text:find("\n         in kernel tile, block (0,0,0), thread (128,0,0), at ", 1, true), text)
  -- the row that ran is right: y = 2x, against the CPU
  local xs, want = x:tolist(), {}
  for i = 1, #xs do want[i] = 2 * xs[i] end
  tile[{(3000 + 127) // 128, 128}](x, y, #x)
  assert(cuda.compare(y, want))
  -- nothing ran: the error says where the first fault was, not only what it was
  checkerr("\n  in kernel tile, block (0,0,0), thread (128,0,0)", cuda.sweep, tile,
    { 256, reps = 1 }, x, y, #x)
end)

test("a thread count is printed only where the sweep chose the grids from it, as what it is",
  function()
  local count, bytes = require("format").count, require("format").bytes
  local heading = "vector_add over 2 block sizes, " .. bytes(3 * 4 * N) .. " of arrays per launch"
  local s = cuda.sweep(vadd, { 64, 128, reps = 1 }, a, b, c, N)
  local text = tostring(s)
  checkeq(text:match("^[^\n]*"), heading, "the heading counts no threads")
  check(text:find("\nGrids: one thread per element of the largest array (" .. count(N) ..
    "), rounded up to whole blocks.", 1, true), text)
  checkeq(s.n, N); checkeq(s.n_from, "array")
  s = cuda.sweep(vadd, { 64, 128, reps = 1, n = N // 2 }, a, b, c, N // 2)
  check(tostring(s):find("\nGrids: n = " .. count(N // 2) .. " threads, rounded up", 1, true),
    tostring(s))
  checkeq(s[1].grid, (N // 2 + 63) // 64)
  s = cuda.sweep(vadd, { {4, 64}, {2, 128}, reps = 1 }, a, b, c, N)
  checkeq(s.n, nil, "{grid, block} pairs: the grids are the caller's")
  checkeq(tostring(s):match("^[^\n]*"), heading)
  check(not tostring(s):find("Grids:", 1, true), tostring(s))
  s = cuda.sweep(vadd, { 64, reps = 1, grid = function() return 8 end }, a, b, c, N)
  checkeq(s.n, nil, "a grid function: the grids are the caller's")
  check(not tostring(s):find("Grids:", 1, true), tostring(s))
end)

test("{grid, block} pairs and a grid function set the grid", function()
  local s = cuda.sweep(vadd, { {4, 64}, {8, {32, 1, 1}}, reps = 1 }, a, b, c, N)
  checkeq(s[1].grid, 4)
  checkeq(s[2].label, "32x1x1")
  s = cuda.sweep(vadd, { 64, 128, reps = 1, grid = function(block) return 132 * 2048 // block end }, a, b, c, N)
  checkeq(s[1].grid, 132 * 32)
  checkeq(s[2].grid, 132 * 16)
end)

test("sweep errors say what is wrong", function()
  checkerr("cannot tell how many blocks to launch", cuda.sweep, vadd, { 64 }, 1, 2.0)
  checkerr("no configuration ran; the first failed with: vector_add(const float *a, const float *b, float *c, int n) takes 4 arguments, got 3",
    cuda.sweep, vadd, { 64, reps = 1 }, a, b, c)
  checkerr("configuration 2 must be a block size or {grid, block}, got x", cuda.sweep, vadd, { 64, "x" }, a, b, c, N)
  checkerr("the list is empty", cuda.sweep, vadd, {}, a, b, c, N)
  checkerr("argument 1 must be a kernel or a table, got number", cuda.sweep, 1, { 64 })
  checkerr("the third item must be the function to time", cuda.sweep, { "n", { 1 } })
end)

test("a sweep over any parameter takes bytes from setup's arrays", function()
  local sizes = { N // 4, N // 2, N }
  local s = cuda.sweep{ "n", sizes, function(n, x, y) vadd[{(n + 255) // 256, 256}](x, x, y, n) end,
    setup = function(n) return cuda.rand(n), cuda.array(n) end, reps = REPS }
  checkeq(#s, 3)
  checkeq(s.param, "n")
  for i, r in ipairs(s) do
    checkeq(r.value, sizes[i])
    checkeq(r.bytes, 8 * sizes[i], "two f32 arrays")
  end
  checkeq(s.rank, "gbps", "work differs per row: ranked by bandwidth")
  check(tostring(s):find("(bars: GB/s, longer is better)", 1, true))
end)

test("Ctrl-C keeps the rows so far in cuda.last, marked partial", function()
  local ok, err = pcall(cuda.sweep, { "step", { 1, 2, 3, 4 }, function(v)
    if v == 3 then error("interrupted", 0) end
  end, reps = 1, warmup = 0 })
  check(not ok)
  checkeq(err, "interrupted", "the interrupt is not swallowed")
  checkeq(#cuda.last, 2)
  checkeq(cuda.last.partial, true)
  check(tostring(cuda.last):find("(partial: 2 rows, the sweep was interrupted)", 1, true))
end)

test("progress is drawn on a terminal for long work and never when piped", function()
  checkeq(term.tty(), false, "the test's output is a file")
  local written = {}
  progress.write = function(s) written[#written + 1] = s end
  local saved = progress.threshold_ms
  local ok, err = pcall(function()
    cuda.sweep(vadd, { 64, 128, reps = 1 }, a, b, c, N)
    checkeq(#written, 0, "nothing when piped")
    term.tty_override, progress.threshold_ms = true, 0
    cuda.sweep(vadd, { 64, 128, 256, reps = 1 }, a, b, c, N)
  end)
  term.tty_override, progress.threshold_ms, progress.write = nil, saved, nil
  if not ok then error(err, 0) end
  check(#written >= 3, "drawn, redrawn, erased: " .. #written)
  check(written[1]:find("^sweep vector_add %[", 1), written[1])
  check(written[1]:find("Ctrl-C keeps the rows so far in cuda.last", 1, true))
  checkeq(written[#written], "\27[A\r\27[K")
end)

test("occupancy explains vector_add's figures", function()
  local info = vadd:info()
  local o = cuda.occupancy(vadd, 256)
  checkeq(o.registers, info.registers)
  checkeq(o.blocks_per_sm, 8)
  checkeq(o.occupancy, 1)
  local text = tostring(o)
  check(text:find("vector_add, 256 threads per block: 8 blocks per SM, 64 of 64 warps, 100% occupancy", 1, true), text)
  o = cuda.occupancy(vadd, {16, 16}, 100 * 1024)
  checkeq(o.limit, "shared")
  checkeq(o.blocks_per_sm, 2)
  checkerr("block must be a whole number of threads (1 or more) or {x, y, z}, got nil", cuda.occupancy, vadd)
  checkerr("argument 1 must be a kernel, got string", cuda.occupancy, "k", 256)
  checkerr("shared must be a whole number of bytes, got -1", cuda.occupancy, vadd, 256, -1)
end)

-- The same job on both sides: a[i] += 1 on n floats.
local function inc_versus(kernel_fn)
  local n = GPU and 10000000 or 20000
  local inc = cuda.kernel("inc.cu")
  local h, out = cuda.host(n, "f32", {pinned = true}), cuda.host(n, "f32", {pinned = true})
  for i = 0, n - 1, 97 do h[i] = i % 100 end
  local x = cuda.array(n)
  return cuda.versus{
    cpu = function()
      local r = cuda.host(n, "f32")
      for i = 0, n - 1 do r[i] = h[i] + 1 end
      return r
    end,
    h2d = function() x:copyfrom(h) end,
    kernel = kernel_fn or function() inc[{(n + 255) // 256, 256}](x, n) end,
    d2h = function() x:copyto(out); return out end,
    reps = REPS, cpu_reps = 1, check = {rtol = 0, atol = 0},
  }
end

test("versus times CPU and GPU, splits the GPU into stages and checks the result", function()
  local v = inc_versus()
  checkeq(cuda.last, v)
  checkeq(#v.stages, 3)
  checkeq(v.stages[2].name, "kernel")
  local sum = v.stages[1].median + v.stages[2].median + v.stages[3].median
  check(math.abs(v.gpu - sum) < 1e-12, "GPU total is the sum of the stages")
  check(v.compare.ok, tostring(v.compare))
  checkeq(v.speedup, v.cpu.median / v.gpu)
  local text = tostring(v)
  check(text:find("Results agree", 1, true), text)
  check(text:find("end to end", 1, true) and text:find("copy in", 1, true), text)
  if GPU then
    check(v.speedup_kernel > 10, "the kernel alone beats a Lua loop by far: " .. v.speedup_kernel)
    check(v.kernel < v.stages[1].median, "copying 40 MB in takes longer than adding 1 to it")
  end
end)

test("versus reports a GPU result that differs", function()
  local v = inc_versus(function() end) -- a "kernel" that does nothing
  checkeq(v.compare.ok, false)
  check(tostring(v):find("Results DIFFER: MISMATCH", 1, true), tostring(v))
  checkerr("cpu must be the CPU function, got nil", cuda.versus, { kernel = function() end })
  checkerr("h2d must be a function, got number", cuda.versus, { cpu = print, kernel = print, h2d = 1 })
end)

local function have(cmd) return os.execute("command -v " .. cmd .. " >/dev/null 2>&1") == true end
local size = T.file_size

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local files = {}

test("plot writes SVG files for a sweep, as bars and lines, and for versus", function()
  local s = cuda.sweep(vadd, { 32, 128, 256, reps = 1 }, a, b, c, N)
  files.bars = cuda.plot(s, dir .. "/bars.svg")
  files.lines = cuda.plot(s, dir .. "/lines.svg", {kind = "lines"})
  files.versus = cuda.plot(inc_versus(), dir .. "/versus.svg")
  for _, f in pairs(files) do check(size(f) > 1000, f .. " written") end
  checkerr("cannot write /nonexistent/x.svg", cuda.plot, s, "/nonexistent/x.svg")
end)

if have("xmllint") then
  test("the SVG files are well-formed XML", function()
    for name, f in pairs(files) do
      check(os.execute("xmllint --noout " .. f .. " 2>&1") == true, name .. " is not well-formed")
    end
  end)
else
  skip("the SVG files are well-formed XML", "xmllint not installed (Debian: libxml2-utils)")
end

local chromium = have("chromium") and "chromium" or have("chromium-browser") and "chromium-browser"
if chromium then
  test("the SVG files render to a non-blank picture in headless Chromium", function()
    local blank = dir .. "/blank.svg"
    local f = assert(io.open(blank, "w"))
    f:write('<svg xmlns="http://www.w3.org/2000/svg" width="720" height="420">' ..
      '<rect width="720" height="420" fill="#fff"/></svg>\n')
    f:close()
    local function shot(svg)
      local png = svg:gsub("%.svg$", ".png")
      os.execute(string.format("timeout 60 %s --headless --no-sandbox --disable-gpu " ..
        "--window-size=720,420 --screenshot=%s %s >/dev/null 2>&1", chromium, png, svg))
      return size(png)
    end
    local empty = shot(blank)
    check(empty > 0, "Chromium took no screenshot")
    for name, svg in pairs(files) do
      local n = shot(svg)
      -- a white page compresses to almost nothing; bars, text and gridlines do not
      check(n > 3 * empty, string.format("%s renders blank: %d bytes against %d for a white page",
        name, n, empty))
    end
  end)
else
  skip("the SVG files render to a non-blank picture in headless Chromium", "chromium not installed")
end
os.execute("rm -rf " .. dir)

if GPU then
  test("on the GPU, 32 threads per block is several times slower than 256", function()
    local s = cuda.sweep(vadd, { 32, 64, 128, 256, 512, 1024, reps = 50 }, a, b, c, N)
    print("# " .. tostring(s):gsub("\n", "\n# "))
    local ratio = s[1].median / s[4].median
    check(ratio > 3, string.format("32 threads: %.3f ms, 256: %.3f ms, only %.1fx", s[1].median,
      s[4].median, ratio))
    check(s[4].gbps > 1000, "256 threads reach over 1 TB/s: " .. s[4].gbps)
    check(s.best.block >= 128, "the best block size is 128 or more, got " .. s.best.block)
  end)

  test("on the GPU, the calculation matches the CUDA runtime's occupancy", function()
    -- k:occupancy is bound on the GPU: a missing figure is a failure, never a skip
    checkeq(math.type(vadd:occupancy(256, 0)), "integer", "k:occupancy(256, 0)")
    local o = cuda.occupancy(vadd, 256)
    check(o.gpu_blocks, "cuda.occupancy carries the runtime's figure (gpu_blocks)")
    for _, blk in ipairs({ 32, 96, 256, 768, 1024 }) do
      for _, sh in ipairs({ 0, 40000 }) do
        o = cuda.occupancy(vadd, blk, sh)
        checkeq(o.computed_blocks, o.gpu_blocks, blk .. " threads, " .. sh .. " bytes shared")
      end
    end
  end)
end

return T.done()
