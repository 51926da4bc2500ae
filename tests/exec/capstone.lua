-- capstone.lua: the check of lesson 17's capstone (a row-wise softmax) against many wrong kernels,
-- each of which must fail it with a message that says what is wrong; the lesson itself can carry
-- only one wrong kernel, which lessons.verify runs. The check is taken from the lesson file and
-- run as the lesson engine runs it (race checker on), with workfile naming each kernel in turn.
-- Also the lesson's claims about where the course's kernels land on the roofline.
-- Everything here is about the simulator (its race checker, its model's times and counters), so
-- it runs there on a GPU machine too.
cuda.use("sim")
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(10)

local parse = require "lesson_parse"
local f = assert(io.open("lessons/17-roofline-and-capstone.md"))
local lesson = parse.parse(f:read("a"), "17")
f:close()
local step
for _, s in ipairs(lesson.steps) do if s.files["softmax.cu"] then step = s end end
assert(step and step.check, "lesson 17 has a softmax task")
local solution = step.files["softmax.cu"].solution

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)

-- Runs the lesson's check on `src` as softmax.cu; returns passed, why.
local function grade(src)
  local path = dir .. "/softmax.cu"
  local out = assert(io.open(path, "w"))
  out:write(src, "\n")
  out:close()
  local env = setmetatable({ workfile = function() return path end, expect = require "lesson_check" },
    { __index = _G })
  local chunk = assert(load(step.check.code, "=check", "t", env))
  local before = cuda.simopts().race_check
  cuda.simopts{ race_check = true }
  local ok, res, why = pcall(chunk)
  cuda.simopts{ race_check = before }
  if not ok then return false, tostring(res) end
  return res == true, why
end

-- The solution with `old` replaced by `new` (which must be there).
local function mutate(old, new)
  local s, n = solution:gsub(old:gsub("%p", "%%%0"), (new:gsub("%%", "%%%%")))
  assert(n > 0, "mutation not found: " .. old)
  return s
end

local function fails(name, src, needle)
  test(name, function()
    local ok, why = grade(src)
    if os.getenv("CAPSTONE_SHOW") then print("# " .. tostring(why)) end
    check(not ok, "the check passed it")
    check(tostring(why):find(needle, 1, true), "fails for the wrong reason: " .. tostring(why))
  end)
end

test("the reference solution passes", function()
  local ok, why = grade(solution)
  check(ok, why)
end)

fails("the file as the lesson hands it out: nothing written", step.files["softmax.cu"].edit,
  "is -1, want 0.1166581 (never written: y starts as -1)")
fails("no max subtraction: NaN where expf overflows", mutate("expf(in[j] - m)", "expf(in[j])"),
  "overflows a float; subtract the row's maximum first")
fails("a missing __syncthreads() before part is reused: a race",
  mutate("  __syncthreads(); // everyone has read the maximum before part is reused\n", ""),
  "shared-memory race")
fails("a thread per element, no loop: wrong when cols is above the block",
  mutate("j < cols; j += blockDim.x)", "j < cols && j < (int)blockDim.x; j += blockDim.x)"),
  "on 4 x 1000 (cols not a multiple of the block of 256)")
fails("one thread per row: right, but more than 2x the reference's modelled time", [[
#include <math_constants.h>
__global__ void softmax(const float *x, float *y, int rows, int cols) {
  if (threadIdx.x != 0) return;
  const float *in = x + (size_t)blockIdx.x * cols;
  float *out = y + (size_t)blockIdx.x * cols;
  float m = -CUDART_INF_F, sum = 0;
  for (int j = 0; j < cols; j++) m = fmaxf(m, in[j]);
  for (int j = 0; j < cols; j++) sum += expf(in[j] - m);
  for (int j = 0; j < cols; j++) out[j] = expf(in[j] - m) / sum;
}]], "right on every shape, but slow")
fails("every block does row 0", mutate("(size_t)blockIdx.x * cols", "(size_t)0 * cols"),
  "y[1000] (row 1, column 0) is -1")
fails("a reduction that drops the last partial result",
  mutate("for (int s = blockDim.x / 2; s > 0; s /= 2) {\n    if (t < s) part[t] += part[t + s];",
    "for (int s = blockDim.x / 2; s > 1; s /= 2) {\n    if (t < s) part[t] += part[t + s];"),
  "on 4 x 1000 (cols not a multiple of the block of 256), y[0] (row 0, column 0) is")
fails("a kernel of another name is not the task's", mutate("void softmax(", "void soft_max("),
  "softmax")

test("the lesson's roofline claims hold on the model", function()
  local N = 10000000
  local va = cuda.kernel "vector_add.cu"
  local a, b, c = cuda.rand(N, "f32", 1), cuda.rand(N, "f32", 2), cuda.array(N)
  local p_add = cuda.roofline.measure("va", function() va[{ (N + 255) // 256, 256 }](a, b, c, N) end)
  local mm = cuda.module "matmul.cu"
  local n = 512
  local A, B, C = cuda.rand(n * n, "f32", 4), cuda.rand(n * n, "f32", 5), cuda.zeros(n * n)
  local counts = { flops = 2 * n ^ 3, bytes = 12 * n ^ 2 }
  local grid = { n // 16, n // 16 }
  local naive = cuda.roofline.measure("naive", function() mm.matmul_naive[{ grid, { 16, 16 } }](A, B, C, n) end, counts)
  local tiled = cuda.roofline.measure("tiled", function() mm.matmul_tiled[{ grid, { 16, 16 } }](A, B, C, n) end, counts)
  local r = cuda.roofline({ p_add, naive, tiled })
  check(math.abs(r.ridge.fp32 - 15.3) < 0.05, "the FP32 ridge is about 15: " .. r.ridge.fp32)
  check(r.ridge.fp64 > 7 and r.ridge.fp64 < 9, "the FP64 ridge is about 8: " .. r.ridge.fp64)
  checkeq(r[1].bound, "memory")
  check(r[1].of_roof > 0.5, "the vector add reaches well over half its roof: " .. r[1].of_roof)
  checkeq(r[2].bound, "compute")
  check(r[2].of_roof < 0.25 and r[3].of_roof < 0.25, "the multiplies are far below their roof")
  check(r[3].gflops > r[2].gflops, "tiling moves the multiply up")
  local sc = cuda.kernel "sincos.cu"
  local NS = 5000000
  local xs, outs = cuda.rand(NS, "f64", 3), cuda.array(NS, "f64")
  local p = cuda.roofline.measure("sin", function() sc[{ (NS + 255) // 256, 256 }](xs, outs, NS) end)
  check(p.bytes == 16 * NS, "5M doubles in and out reach DRAM: " .. p.bytes)
  local q = cuda.roofline({ p })[1]
  check(q.intensity > 2.5 and q.intensity < 3.5 and q.bound == "memory", "about 3 FLOP/byte, memory bound")
  check(math.abs(p.flops / NS - 50) < 1, "about 50 FLOPs per element: " .. p.flops / NS)
end)

os.execute("rm -rf " .. dir)
return T.done()
