-- lessons.lua: corpus cases for the kernels the lessons' checks judge learners by: each task's
-- reference kernel, read from its lesson file (so a lesson that changes its solution changes
-- what is run here), on the shapes the checks use (non-square, n not a multiple of the block,
-- other grids), plus shuffles with a per-half-warp mask, the pattern the simulator must accept
-- while it refuses a full warp shuffling with mask 0xffff. On the H200 the digests say the GPU
-- gives the bits the simulator gives, so a check's verdict holds on both.
local C = dofile("tests/corpus/corpus.lua")
local parse = require "lesson_parse"

-- The reference kernel for FILE in lesson NN.
local function solution(nn, file)
  local p = io.popen("ls lessons/" .. nn .. "-*.md")
  local path = p:read("l")
  p:close()
  local f = assert(io.open(path))
  local l = parse.parse(f:read("a"), path)
  f:close()
  for _, s in ipairs(l.steps) do
    if s.files[file] and s.files[file].solution then return s.files[file].solution end
  end
  error("lesson " .. nn .. " has no solution for " .. file)
end

local blocks = C.blocks

C.case{
  name = "lessons: scale2d on 64 x 32 and 32 x 64",
  src = solution("07", "scale2d.cu"),
  run = function(k)
    local outs = {}
    C.xs = {}
    for i, wh in ipairs({{64, 32}, {32, 64}, {33, 17}}) do
      local w, h = wh[1], wh[2]
      local m, xs = C.uniform(w * h, 70 + i, -10, 10)
      k[{{blocks(w, 32), blocks(h, 8)}, {32, 8}}](m, w, h, 2.5)
      outs[i], C.xs[i] = m, xs
    end
    return outs
  end,
  check = function(o)
    for i = 1, 3 do
      local want = {}
      for j, v in ipairs(C.xs[i]) do want[j] = 2.5 * v end
      C.same(o[i], want, {rtol = 1e-6})
    end
  end,
}

C.case{
  name = "lessons: grid-stride increment on odd grids",
  src = solution("08", "inc_gs.cu"),
  run = function(k)
    local outs = {}
    C.xs = {}
    for i, cfg in ipairs({{10007, 4, 64}, {5000, 13, 96}, {100, 2, 256}}) do
      local a, xs = C.uniform(cfg[1], 80 + i, -100, 100)
      k[{cfg[2], cfg[3]}](a, cfg[1])
      outs[i], C.xs[i] = a, xs
    end
    return outs
  end,
  check = function(o)
    for i = 1, 3 do
      local want = {}
      for j, v in ipairs(C.xs[i]) do want[j] = v + 1 end
      C.same(o[i], want, {rtol = 1e-6, atol = 1e-5})
    end
  end,
}

C.case{
  name = "lessons: padded tile transpose, 64 x 64",
  src = solution("09", "transpose_pad.cu"),
  run = function(k)
    local w = 64
    local a = C.uniform(w * w, 91, -10, 10)
    local b = cuda.zeros(w * w)
    k[{{w // 32, w // 32}, {32, 32}}](a, b, w)
    C.xs = a:tolist() -- the f32 values: a transpose moves bits, it rounds nothing
    return {b}
  end,
  check = function(o)
    local w, want = 64, {}
    for y = 0, w - 1 do
      for x = 0, w - 1 do want[y * w + x + 1] = C.xs[x * w + y + 1] end
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "lessons: atomic sum of random integers",
  src = solution("10", "sum_atomic.cu"),
  run = function(k)
    local n = 50000
    local x, xs = C.integers(n, 101, -1000, 1000)
    local out = cuda.zeros(1, "i32")
    k[{blocks(n, 256), 256}](x, out, n)
    C.xs = xs
    return {out}
  end,
  check = function(o)
    local s = 0
    for _, v in ipairs(C.xs) do s = s + v end
    C.same(o[1], {s})
  end,
}

C.case{
  name = "lessons: branchy_split against the loops on the CPU",
  src = solution("11", "branchy_split.cu"),
  run = function(k)
    local n = 2048
    local a, xs = C.uniform(n, 111, -100, 100)
    k[{n // 256, 256}](a, n, 50)
    C.xs = xs
    return {a}
  end,
  check = function(o)
    local want = {}
    for i, v in ipairs(C.xs) do
      if (i - 1) % 2 == 0 then for _ = 1, 50 do v = v * 0.99 + 1 end
      else for _ = 1, 50 do v = v * 0.98 - 1 end end
      want[i] = v
    end
    C.same(o[1], want, {rtol = 1e-5, atol = 1e-4})
  end,
}

C.case{
  name = "lessons: smooth leaves the ends alone",
  src = solution("12", "smooth.cu"),
  run = function(k)
    local n = 1000
    local x, xs = C.uniform(n, 121, -10, 10)
    local y = cuda.full(n, -1)
    k[{blocks(n, 256), 256}](x, y, n)
    C.xs = xs
    return {y}
  end,
  check = function(o)
    local n, want = #C.xs, {}
    for i = 1, n do
      want[i] = (i == 1 or i == n) and -1 or (C.xs[i - 1] + C.xs[i] + C.xs[i + 1]) / 3
    end
    C.same(o[1], want, {rtol = 1e-5, atol = 1e-5})
  end,
}

C.case{
  name = "shuffles: each half-warp with its own mask",
  src = [[
__global__ void halves(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  unsigned m = (threadIdx.x & 16) ? 0xffff0000u : 0x0000ffffu;
  for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(m, v, o);
  if (i < n) out[i] = v;
}]],
  run = function(k)
    local n = 4099
    local x, xs = C.integers(n, 131, -1000, 1000)
    local out = cuda.zeros(n, "i32")
    k[{blocks(n, 128), 128}](x, out, n)
    C.xs = xs
    return {out}
  end,
  check = function(o)
    local n, want = #C.xs, {}
    for h = 0, (n - 1) // 16 do
      local s = 0
      for l = 1, 16 do s = s + (C.xs[h * 16 + l] or 0) end
      for l = 1, 16 do if h * 16 + l <= n then want[h * 16 + l] = s end end
    end
    C.same(o[1], want)
  end,
}

return C.done()
