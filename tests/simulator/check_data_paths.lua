-- check_data_paths.lua: what lesson checks (lua/lessons/lesson_check.lua, `expect`) can tell of
-- how a kernel moves its data, where values alone cannot: expect.through_shared (every value a
-- kernel stores to global memory came to it through shared memory) and expect.barrier_needed
-- (without its __syncthreads() the kernel races on shared memory). A reverse or a product read
-- straight from global memory gives the right values with shared memory and a barrier touched
-- for show; these must tell it from the real exchange. Simulator only.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq = T.test, T.check, T.checkeq
T.plan(5)

local expect = require "lesson_check"
local run = require "lesson_run"

local EXCHANGE = [[
__global__ void reverse(const float *a, float *b, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? a[i] : 0.0f;
  __syncthreads();
  if (i < n) b[i] = s[blockDim.x - 1 - t];
}
]]
-- shared memory and a barrier for show; b[] read in reverse from global memory
local FOR_SHOW = [[
__global__ void reverse(const float *a, float *b, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = 0.0f;
  __syncthreads();
  int j = blockIdx.x * blockDim.x + blockDim.x - 1 - t;
  if (i < n) b[i] = (j < n ? a[j] : 0.0f) + s[blockDim.x - 1 - t];
}
]]
-- through shared memory, but each thread reads back the element it wrote itself
local OWN_SLOT = [[
__global__ void reverse(const float *a, float *b, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int j = blockIdx.x * blockDim.x + blockDim.x - 1 - t;
  s[t] = j < n ? a[j] : 0.0f;
  __syncthreads();
  if (i < n) b[i] = s[t];
}
]]
-- the barrier of cooperative groups, which taking out __syncthreads() leaves
local CG = [[
#include <cooperative_groups.h>
__global__ void reverse(const float *a, float *b, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? a[i] : 0.0f;
  cooperative_groups::this_thread_block().sync();
  if (i < n) b[i] = s[blockDim.x - 1 - t];
}
]]
local MATMUL = [[
#define TILE 16
__global__ void naive(const float *A, const float *B, float *C, int n) {
  int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n && c < n) {
    float s = 0;
    for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
    C[r * n + c] = s;
  }
}
__global__ void tiled(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float s = 0;
  for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
    int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (br < n && col < n) ? B[br * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; k++) s += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = s;
}
// tiles loaded for show; the product read from global memory
__global__ void tiles_for_show(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE];
  int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;
  As[threadIdx.y][threadIdx.x] = r < n && c < n ? A[r * n + c] : 0.0f;
  __syncthreads();
  if (r < n && c < n) {
    float s = As[threadIdx.y][threadIdx.x] * 0.0f;
    for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
    C[r * n + c] = s;
  }
}
]]

local function reverse_of(src) return cuda.kernel(src, {name = "reverse"}) end

test("through_shared: an exchange through shared memory, not a read from global for show",
     function()
  checkeq(expect.through_shared(reverse_of(EXCHANGE)), true)
  checkeq(expect.through_shared(reverse_of(OWN_SLOT)), true, "through s[], whoever wrote it")
  checkeq(expect.through_shared(reverse_of(CG)), true)
  local ok, why = expect.through_shared(reverse_of(FOR_SHOW))
  checkeq(ok, false)
  checkeq(why, "reverse stores to global memory a value it read from global memory without " ..
    "going through shared memory")
end)

test("through_shared: a tiled product, not a naive one, looks at its own kernel of the module",
     function()
  local m = cuda.module(MATMUL)
  checkeq(expect.through_shared(m.tiled), true, "the naive kernel beside it is not looked at")
  checkeq(expect.through_shared(m.naive), false)
  checkeq(expect.through_shared(m.tiles_for_show), false)
end)

-- barrier_needed on SRC written to a file, the launch on two blocks of 256
local function needed(src)
  local dir = assert(run.tempdir())
  local path = dir .. "/reverse.cu"
  assert(run.write_file(path, src))
  local r = expect.barrier_needed{file = path, name = "reverse", launch = function(k)
    k[{2, 256}](expect.rand(512, 5, -1, 1), cuda.zeros(512), 512)
  end}
  run.rmdir(dir)
  return r
end

test("barrier_needed: an exchange races without its barrier; a read of one's own slot does not",
     function()
  checkeq(needed(EXCHANGE), true)
  checkeq(needed(FOR_SHOW), true, "another thread's element read, whatever it carries")
  checkeq(needed(OWN_SLOT), false)
  checkeq(needed(CG), nil, "a barrier of another form: cannot be told")
  checkeq(needed("__global__ void reverse(const float *a, float *b, int n) { x; }"), nil,
    "a source that does not compile: cannot be told")
end)

test("barrier_needed puts back the learner's race checking and checks", function()
  local race, checks = cuda.simopts().race_check, cuda.sanitize()
  cuda.simopts{race_check = "warn"}
  cuda.sanitize{}
  checkeq(needed(EXCHANGE), true, "it raced under the checks it turned on")
  checkeq(cuda.simopts().race_check, "warn")
  checkeq(cuda.sanitize().init, false)
  checkeq(cuda.sanitize().sync, false)
  cuda.simopts{race_check = race}
  cuda.sanitize(checks)
end)

test("expect.run refuses a kernel that writes an input it takes as const", function()
  local dir = assert(run.tempdir())
  local path = dir .. "/scale.cu"
  local function judged(src, values)
    assert(run.write_file(path, src))
    return expect.run{file = path, name = "scale", shapes = {{n = 100, label = "n = 100"}},
      case = function(_, s)
        local x, y = cuda.array(values or expect.rand(s.n, 9, -1, 1):tolist()), cuda.zeros(s.n)
        local want = {}
        for i, v in ipairs(x:tolist()) do want[i] = 2 * v end
        return {grid = 1, block = 128, args = {x, y, s.n},
                outputs = {{y, want, name = "y", rtol = 0, atol = 0}}}
      end}
  end
  local KEEPS = [[
__global__ void scale(const float *x, float *y, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}]]
  checkeq(judged(KEEPS), true)
  local ok, why = judged((KEEPS:gsub("y%[i%] = 2.0f %* x%[i%];",
    "{ y[i] = 2.0f * x[i]; const_cast<float *>(x)[i] = 0.0f; }")))
  checkeq(ok, false)
  check(why:find("on n = 100 (grid 1, blocks of 128), the kernel wrote to argument 1 " ..
    "(const float *x), which it takes as const: element 0 was ", 1, true), why)
  check(why:find(" and is 0. An input is only read, whatever a cast allows", 1, true), why)
  local nan = {}
  for i = 1, 100 do nan[i] = i % 7 == 0 and 0 / 0 or i end
  local y_nan = select(2, judged(KEEPS, nan))
  check(not tostring(y_nan):find("takes as const", 1, true),
    "a NaN input read and left as it was is kept: " .. tostring(y_nan))
  run.rmdir(dir)
end)
