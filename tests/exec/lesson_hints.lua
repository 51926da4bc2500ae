-- lesson_hints.lua: a failed check() at the prompt says what it found, never a hint's text, and
-- the hint() after it gives the hint that answers it, on the lessons' own tasks and with their
-- own wrong kernels: the transpose without __syncthreads() gets the race hint (not the padding
-- one), the unpadded one the bank-conflict hint, a shuffle mask of 0xffff the mask hint, a
-- hard-coded grid stride the grid hint, a missing bounds check the bounds hint; a wrong value
-- with no tagged hint gets the first generic hint. Also a file that does not compile, and one
-- without the kernel's name.
--
-- It drives the engine's own check command on the real backend (the checks run the learner's
-- kernel on the simulator whatever the backend), with kernel files in a temporary folder and no
-- progress saved.
local T = dofile("tests/lua/testlib.lua")
-- The first words of a hint as the terminal shows them (rendered, so no backticks).
local function words(h) return (h:gsub("`", "")):sub(1, 40) end
local test, check = T.test, T.check
T.plan(14)
local L = require "lessons"
local run = require "lesson_run"

-- Wide enough that no message is broken across lines: the tests look for whole sentences.
require("term").width_override = 200
local tmp = assert(run.tempdir(), "a temporary folder")
L.configure({ progress = false, workdir = tmp, quiet = true })

-- The step of lesson nn whose title contains `title`.
local function task(nn, title)
  local l = L.load(assert(L.find(nn)))
  for i, s in ipairs(l.steps) do
    if s.title:find(title, 1, true) then return l, i, s end
  end
  error("no step '" .. title .. "' in lesson " .. nn)
end

-- Runs the command `cmd` of the engine; returns what it printed.
local function printed(cmd)
  local out = {}
  local saved = print
  print = function(...) out[#out + 1] = table.concat({ ... }, "\t") end
  local ok, err = pcall(L.commands[cmd])
  print = saved
  if not ok then error(err, 0) end
  return table.concat(out, "\n")
end

-- Installs `src` as the learner's FILE and runs check(), then hint(); returns what each printed.
local function check_with(nn, title, file, src)
  local l, i, s = task(nn, title)
  L._S.cur, L._S.step, L._S.hint_i, L._S.found, L._S.tags_given = l, i, 0, nil, {}
  run.write_file(tmp .. "/" .. file, src .. "\n")
  local out = printed("check")
  return out, s, printed("hint")
end

-- No hint's text, tagged or not, is in what a failed check printed.
local function no_hint_text(s, out)
  for _, h in ipairs(s.hints) do
    check(not out:find(words(h), 1, true), "a failed check gives no hint: " .. out)
  end
  for tag, h in pairs(s.hint_for) do
    check(not out:find(words(h), 1, true), "a failed check gives no hint (" .. tag .. "): " .. out)
  end
  check(out:find("hint() gives a hint", 1, true), "the failure says hint() gives one: " .. out)
end

-- The wrong kernel of a step whose source contains `needle`.
local function wrong(s, needle)
  for _, w in ipairs(s.wrongs) do
    if w.kind == "cuda" and w.code:find(needle, 1, true) then return w.code end
  end
  error("no wrong kernel with '" .. needle .. "'")
end


local function expect_hint(nn, title, file, needle, tag, said)
  local _, _, s = task(nn, title)
  local out, _, hint = check_with(nn, title, file, wrong(s, needle))
  check(out:find("Not yet: ", 1, true), out)
  check(out:find(said, 1, true), "the failure says what it found (" .. said .. "): " .. out)
  no_hint_text(s, out)
  check(hint:find("Hint, for what the check found: " .. words(s.hint_for[tag]), 1, true),
    "hint() gives the " .. tag .. " hint: " .. hint)
  check(not hint:find("Hint 1 of", 1, true), "not the generic hint: " .. hint)
  return out, hint
end

test("the transpose without __syncthreads() gets the race hint, not the padding hint", function()
  local _, _, s = task(9, "pad the tile")
  local _, out = expect_hint(9, "pad the tile", "transpose_pad.cu", "tile[32][33];\n  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;\n  tile[threadIdx.y][threadIdx.x] = a[y * w + x];\n  int tx",
    "race", "__shared__ tile")
  check(not out:find(words(s.hints[2]), 1, true), "the padding hint is not given: " .. out)
end)

test("the unpadded transpose gets the bank-conflict hint", function()
  expect_hint(9, "pad the tile", "transpose_pad.cu", "tile[32][32]", "conflicts", "bank conflicts")
end)

test("a shuffle mask of 0xffff gets the mask hint", function()
  expect_hint(10, "the warp sum", "warp_sum.cu", "0xffff,", "shuffle", "without their own bit in the mask")
end)

test("a hard-coded grid stride fails on another grid and gets the grid hint", function()
  expect_hint(8, "grid-stride increment", "inc_gs.cu", "i += 256", "grid", "13 blocks of 96")
end)

test("a kernel without its bounds check gets the bounds hint, naming the shape", function()
  expect_hint(2, "double every element", "double.cu", "  a[i] = 2.0f * a[i];", "bounds",
    "on n = 1000, not a multiple of the block (grid 4, blocks of 256): out-of-bounds")
  expect_hint(12, "fix the average", "smooth.cu", "i < n - 1)", "bounds", "index -1 of f32[1000]")
end)

test("a non-square matrix shows the kernel that only works on a square one", function()
  expect_hint(7, "coalesced 2D", "scale2d.cu", "if (row < w && col < h)", "nonsquare", "on a 64 x 32 matrix")
  expect_hint(7, "coalesced 2D", "scale2d.cu", "m[col * h + row]", "sectors", "sectors")
end)

test("a wrong value with no tagged hint names the index, and hint() gives the first hint", function()
  local _, _, s = task(12, "fix the average")
  local out, _, hint = check_with(12, "fix the average", "smooth.cu", wrong(s, "b[i] = a[i];"))
  check(out:find("b[1] is ", 1, true) and out:find("want ", 1, true) and out:find("the average of a[0..2]", 1, true), out)
  no_hint_text(s, out)
  check(out:find(string.format("hint() gives a hint (1 of %d", #s.hints), 1, true), out)
  check(hint:find("Hint 1 of " .. #s.hints .. ": " .. words(s.hints[1]), 1, true), hint)
end)

test("a file that does not compile, and one without the kernel's name, say so", function()
  local out = check_with(2, "double every element", "double.cu", "__global__ void dbl(float *a, int n) { a[0] = x; }")
  check(out:find("double.cu does not compile", 1, true) and out:find('identifier "x" is undefined', 1, true), out)
  local _, _, s = task(2, "double every element")
  local hint
  out, _, hint = check_with(2, "double every element", "double.cu", wrong(s, "void twice"))
  check(out:find("double.cu has no kernel named dbl", 1, true), out)
  no_hint_text(s, out)
  check(hint:find(words(s.hint_for.name), 1, true), "hint() gives the name hint: " .. hint)
end)

test("a kernel template instantiated once is the task's kernel; twice, says so", function()
  local tmpl = [[
template <typename T>
__global__ void dbl(T *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = T(2) * a[i];
}
template __global__ void dbl<float>(float *, int);]]
  local out = check_with(2, "double every element", "double.cu", tmpl)
  check(out:find("Correct.", 1, true), out)
  out = check_with(2, "double every element", "double.cu",
    tmpl .. "\ntemplate __global__ void dbl<double>(double *, int);")
  check(out:find("double.cu instantiates the template dbl more than once (dbl<double>, " ..
    "dbl<float>): the check launches one kernel dbl, so instantiate it once, for the type the " ..
    "task's arrays hold", 1, true), out)
end)

-- Right answers in forms the lessons' solutions do not take: each must pass its check.
local OTHER_FORMS = {
  {8, "a grid-stride increment", "inc_gs.cu", "a grid-stride loop over float4s, then the tail", [[
__global__ void inc_gs(float *a, int n) {
  int T = blockDim.x * gridDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
  float4 *a4 = reinterpret_cast<float4 *>(a);
  for (int i = t; i < n / 4; i += T) {
    float4 v = a4[i];
    v.x += 1.0f; v.y += 1.0f; v.z += 1.0f; v.w += 1.0f;
    a4[i] = v;
  }
  for (int i = 4 * (n / 4) + t; i < n; i += T) a[i] += 1.0f;
}]]},
  {12, "add the missing barrier", "reverse.cu", "each thread writes the mirrored slot", [[
__global__ void reverse(const float *a, float *b, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[blockDim.x - 1 - t] = i < n ? a[i] : 0.0f;
  __syncthreads();
  if (i < n) b[i] = s[t];
}]]},
  {12, "add the missing barrier", "reverse.cu", "the barrier of cooperative groups", [[
#include <cooperative_groups.h>
__global__ void reverse(const float *a, float *b, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? a[i] : 0.0f;
  cooperative_groups::this_thread_block().sync();
  if (i < n) b[i] = s[blockDim.x - 1 - t];
}]]},
  {23, "a blur that reads outside", "blur.cu", "a grid-stride loop", [[
__global__ void blur(const float *x, float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    if (i == 0 || i == n - 1) y[i] = x[i];
    else y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3;
  }
}]]},
  {23, "a blur that reads outside", "blur.cu", "clamped loads, the ends selected", [[
__global__ void blur(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float l = x[max(i - 1, 0)], c = x[i], r = x[min(i + 1, n - 1)];
    y[i] = (i == 0 || i == n - 1) ? c : (l + c + r) * (1.0f / 3.0f);
  }
}]]},
  {23, "a blur that reads outside", "blur.cu", "the sum in double precision", [[
__global__ void blur(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (i == 0 || i == n - 1) ? x[i] :
    (float)(((double)x[i - 1] + x[i] + x[i + 1]) / 3.0);
}]]},
  {19, "a block scan", "scan_block.cu", "a work-efficient scan over a block padded to 2^k", [[
__global__ void scan_block(const int *in, int *out, int *sums, int n) {
  __shared__ int s[1024];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int m = 1;
  while (m < blockDim.x) m <<= 1;
  int v = i < n ? in[i] : 0;
  for (int k = t; k < m; k += blockDim.x) s[k] = 0;
  __syncthreads();
  s[t] = v;
  __syncthreads();
  for (int d = 1; d < m; d <<= 1) {
    for (int k = t; k < m / (2 * d); k += blockDim.x) {
      int b = (k + 1) * 2 * d - 1;
      s[b] += s[b - d];
    }
    __syncthreads();
  }
  if (t == 0) s[m - 1] = 0;
  __syncthreads();
  for (int d = m / 2; d >= 1; d >>= 1) {
    for (int k = t; k < m / (2 * d); k += blockDim.x) {
      int b = (k + 1) * 2 * d - 1;
      int x = s[b - d];
      s[b - d] = s[b];
      s[b] += x;
    }
    __syncthreads();
  }
  int incl = s[t] + v;
  if (i < n) out[i] = incl;
  if (t == blockDim.x - 1) sums[blockIdx.x] = incl;
}]]},
}

test("right answers in other forms pass their checks", function()
  for _, f in ipairs(OTHER_FORMS) do
    local out = check_with(f[1], f[2], f[3], f[5])
    check(out:find("Correct.", 1, true), "lesson " .. f[1] .. ", " .. f[4] .. ": " .. out)
  end
  -- lesson 26: the division as a product with the reciprocal, or __fdividef
  local _, _, s = task(26, "normalize in one launch")
  local sol = s.files["normalize.cu"].solution
  for _, form in ipairs({"x[i] * (1.0f / total)", "__fdividef(x[i], total)"}) do
    local src = sol:gsub("y%[i%] = x%[i%] / total", function() return "y[i] = " .. form end)
    check(src ~= sol, "the solution divides as expected")
    local out = check_with(26, "normalize in one launch", "normalize.cu", src)
    check(out:find("Correct.", 1, true), "lesson 26, " .. form .. ": " .. out)
  end
end)

-- Reads lesson nn up to its step titled `title` (each step's examples run, as next() runs them),
-- then types `code` at the prompt and runs check(); returns what the check printed.
local function typed_check(nn, title, code)
  local l, i = task(nn, title)
  local restore = L.verify_begin(tmp)
  L.verify_open(l)
  local saved = print
  print = function() end
  local ok, err = pcall(function()
    for j = 1, i do assert(L.verify_step(j)) end
  end)
  print = saved
  if not ok then restore(); error(err, 0) end
  L._S.hint_i, L._S.found, L._S.tags_given = 0, nil, {}
  local lc = require "lesson_check"
  lc.watch(true)
  lc.typed(code)
  local out = {}
  ok, err = pcall(function()
    assert(run.run(code, L.env(), { echo = false, show = function() end }))
    out = printed("check")
  end)
  lc.watch(false)
  restore()
  if not ok then error(err, 0) end
  return out
end

-- Right answers typed at the prompt that build on what the lesson defined: each must pass.
local TYPED_FORMS = {
  {16, "right and fast", "a pipeline that calls the lesson's pipeline()", [[
function my_pipeline(h_in, h_out, dev, chunks, streams)
  pipeline(h_in, h_out, dev, chunks, streams)
end]]},
  {16, "right and fast", "a pipeline that kept ITERS's value when it was made", [[
function make_pipeline(iters)
  return function(h_in, h_out, dev, chunks, streams)
    local n = #dev
    local size = (n + chunks - 1) // chunks
    for i = 0, chunks - 1 do
      local s, first = streams[i % #streams + 1], i * size
      local count = math.min(size, n - first)
      if count > 0 then
        cuda.copy(dev, h_in, {stream = s, offset = first, count = count})
        poly[{(count + 255) // 256, 256, stream = s}](dev, first, count, iters)
        cuda.copy(h_out, dev, {stream = s, offset = first, count = count})
      end
    end
  end
end
my_pipeline = make_pipeline(ITERS)]]},
}

test("right answers built on the lesson's own functions pass their checks", function()
  for _, f in ipairs(TYPED_FORMS) do
    local out = typed_check(f[1], f[2], f[4])
    check(out:find("Correct.", 1, true), "lesson " .. f[1] .. ", " .. f[3] .. ": " .. out)
  end
end)

-- Lesson 22's saxpy, recorded and exported, with x and y under other names than the
-- solution's: an alias, locals of a one-line chunk, arrays made before the record.
local SAXPY = "saxpy[{40, 256}](x, y, 2.5, 10000)\ncuda.export(workfile \"saxpy.cu\")\n"
local SAXPY_FORMS = {
  { "an alias of x", "cuda.record(true)\nx, y = cuda.rand(10000, \"f32\", 1), " ..
    "cuda.ones(10000)\norig = x\n" .. SAXPY },
  { "six aliases of x", "cuda.record(true)\nx, y = cuda.rand(10000, \"f32\", 1), " ..
    "cuda.ones(10000)\nxa, xb, xc, xd, xe, xf = x, x, x, x, x, x\n" .. SAXPY },
  { "locals", "cuda.record(true); local x, y = cuda.rand(10000, \"f32\", 1), " ..
    "cuda.ones(10000); " .. SAXPY:gsub("\n", "; ") },
  { "arrays made before the record", "x, y = cuda.rand(10000, \"f32\", 1), cuda.ones(10000)\n" ..
    "cuda.record(true)\n" .. SAXPY },
  { "a dim3 configuration", "cuda.record(true)\nx, y = cuda.rand(10000, \"f32\", 1), " ..
    "cuda.ones(10000)\n" .. SAXPY:gsub("{40, 256}", "{{40, 1, 1}, {256, 1, 1}}") },
}

test("lesson 22: saxpy's arrays pass under any names, an alias's or a local's", function()
  for _, f in ipairs(SAXPY_FORMS) do
    local out = typed_check(22, "saxpy as a program", f[2])
    check(out:find("Correct.", 1, true), "lesson 22, " .. f[1] .. ": " .. out)
  end
end)

-- Wrong saxpy sessions (the arrays made, then SAXPY), each with what the check must say.
local SAXPY_WRONG = {
  { "x, y = cuda.rand(20000, \"f32\", 1), cuda.ones(20000)", "x and y must hold 10000 " ..
    "elements each, of f32, and saxpy must get them whole: the array passed as x has 20000 " ..
    "elements of f32" },
  { "x, y = cuda.rand(10000, \"f32\", 1), cuda.zeros(10000)", "y must start as " ..
    "cuda.ones(10000), but the array passed as y held 0 at [0]" },
  { "x, y = cuda.rand(10000, \"f32\", 7), cuda.ones(10000)", "x must be cuda.rand(10000, " ..
    "\"f32\", 1), but the array passed as x held 0.721508 at [0], where that gives 0.36819" },
  { "y, x = cuda.rand(10000, \"f32\", 1), cuda.ones(10000)", "saxpy got y's ones as x and " ..
    "x's random numbers as y: pass x, then y" },
  { "x = cuda.rand(10000, \"f32\", 1)\ny = x", "saxpy got one array as both x and y" },
}

test("lesson 22: the check says what is wrong with saxpy's arrays, or with a stale program",
    function()
  for _, w in ipairs(SAXPY_WRONG) do
    local out = typed_check(22, "saxpy as a program", "cuda.record(true)\n" .. w[1] .. "\n" ..
      SAXPY)
    check(out:find("Not yet: " .. w[2], 1, true), w[1] .. ": " .. out)
  end
  -- exported, then recorded again with a second launch that is never exported
  local out = typed_check(22, "saxpy as a program", "cuda.record(true)\nx, y = " ..
    "cuda.rand(10000, \"f32\", 1), cuda.ones(10000)\n" .. SAXPY .. "cuda.record(true)\n" ..
    "y = cuda.ones(10000)\nsaxpy[{40, 256}](x, y, 2, 10000)")
  check(out:find("is not the session recorded now: export again", 1, true), "stale: " .. out)
end)

test("a kernel with other parameters is refused before it runs, in the learner's terms", function()
  local out = check_with(2, "double every element", "double.cu",
    "__global__ void dbl(float *a, int n, int m) { int i = threadIdx.x; if (i < n) a[i] *= 2; }")
  check(out:find("dbl(float *a, int n, int m) takes 3 arguments, got 2", 1, true), out)
  check(not out:find("lesson_check", 1, true), "no position in the engine's files: " .. out)
end)

run.rmdir(tmp)
return T.done()
