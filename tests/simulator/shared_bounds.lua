-- shared_bounds.lua: an index past one static __shared__ array is reported even where another
-- array lies (the simulator lays them side by side, as the GPU does, so a[8] of float a[8] was
-- b[0], written in silence); correct kernels that reach their arrays through pointers, loops,
-- selections and the dynamic array still run, each checked against a CPU reference. And an
-- index past a __constant__ table is told as a constant load of that table.
local T = dofile("tests/lua/testlib.lua")
T.plan(7)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr

local function has_all(err, wants)
  for _, want in ipairs(wants) do
    check(err:find(want, 1, true), "'" .. want .. "' in: " .. err)
  end
end

local TWO = [[
__global__ void two(int j, float *o) {
  __shared__ float a[8];
  __shared__ float b[8];
  a[threadIdx.x] = 2.0f;
  b[threadIdx.x] = 3.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    a[j] = 1.0f;
    o[0] = a[j];
  }
  __syncthreads();
  o[1 + threadIdx.x] = b[threadIdx.x];
}]]

test("a store past one __shared__ array into the next is stopped and named", function()
  local k = cuda.kernel(TWO)
  local o = cuda.zeros(9)
  local ok, err = pcall(k[{1, 8}], 9, o)
  check(not ok, "the launch fails")
  has_all(err, {"out-of-bounds shared store of 4 bytes", "index 9 of a[8]",
                "2 elements (8 bytes) past the end of __shared__ a (32 bytes)",
                "__shared__ b: on a GPU this silently reads or overwrites b", "thread (0,0,0)",
                "kernel.cu:8"})
  -- in bounds the same kernel runs and b is untouched
  k[{1, 8}](5, o)
  local got = o:tolist()
  checkeq(got[1], 1.0, "o[0]")
  for i = 2, 9 do checkeq(got[i], 3.0, "b[" .. (i - 2) .. "]") end
end)

test("an index below a __shared__ array's start is named too, signed or wrapped", function()
  local k = cuda.kernel[[
__global__ void below(int j, float *o) {
  __shared__ float a[8];
  __shared__ float b[8];
  a[threadIdx.x] = 1.0f;
  b[threadIdx.x] = 2.0f;
  __syncthreads();
  o[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x + j];
}]]
  local o = cuda.zeros(8)
  local ok, err = pcall(k[{1, 8}], -1, o)
  check(not ok, "the launch fails")
  -- threadIdx.x + j is unsigned: -1 wraps to 4294967295
  has_all(err, {"out-of-bounds shared load of 4 bytes", "index 4294967295 of b[8]",
                "-1 as a 32-bit unsigned index"})
  k[{1, 8}](0, o)
  for i, v in ipairs(o:tolist()) do checkeq(v, 3.0, "o[" .. (i - 1) .. "]") end
  local s = cuda.kernel[[
__global__ void before(int j, float *o) {
  __shared__ float a[8];
  __shared__ float b[8];
  int t = threadIdx.x;
  a[t] = 1.0f;
  b[t] = 2.0f;
  __syncthreads();
  o[t] = b[t + j] + a[t];
}]]
  ok, err = pcall(s[{1, 8}], -1, o) -- b[-1]: a's last element, on a GPU read in silence
  check(not ok, "the launch fails")
  has_all(err, {"out-of-bounds shared load of 4 bytes", "index -1 of b[8] is 1 element (4 bytes) "
                .. "before the start of __shared__ b", "which is byte 28 of __shared__ a"})
  s[{1, 8}](0, o)
  for i, v in ipairs(o:tolist()) do checkeq(v, 3.0, "o[" .. (i - 1) .. "]") end
end)

test("correct kernels: a pointer walked in a loop, one chosen between two arrays, a 2-D tile",
  function()
  local k = cuda.kernel[[
__global__ void walk(const float *x, float *o, int pick) {
  __shared__ float a[64];
  __shared__ float b[64];
  __shared__ float tile[8][9];
  int t = threadIdx.x;
  a[t] = x[t];
  b[t] = 2.0f * x[t];
  for (int i = t; i < 72; i += blockDim.x) tile[i / 9][i % 9] = (float)i;
  __syncthreads();
  if (t == 0) {
    float s = 0.0f;
    for (const float *p = a; p < a + 64; p += 4) s += p[0] + p[3];
    o[0] = s;
    const float *q = pick ? b : a;   /* one of two arrays: checked against all of shared memory */
    float u = 0.0f;
    for (int i = 0; i < 64; i++) u += q[i];
    o[1] = u;
    float w = 0.0f;
    for (int r = 0; r < 8; r++) w += tile[r][8];
    o[2] = w;
  }
}]]
  local xs = {}
  for i = 1, 64 do xs[i] = (i * 7) % 11 - 3 end
  for _, pick in ipairs({0, 1}) do
    local o = cuda.zeros(3)
    k[{1, 64}](cuda.array(xs), o, pick)
    local s, u, w = 0, 0, 0
    for i = 1, 64, 4 do s = s + xs[i] + xs[i + 3] end
    for i = 1, 64 do u = u + (pick == 1 and 2 or 1) * xs[i] end
    for r = 0, 7 do w = w + r * 9 + 8 end
    local got = o:tolist()
    checkeq(got[1], s, "the walked sum")
    checkeq(got[2], u, "the chosen array's sum, pick " .. pick)
    checkeq(got[3], w, "the tile's last column")
  end
end)

test("a tile's halo index past its last row is stopped before the array after it", function()
  local k = cuda.kernel[[
#define T 8
__global__ void halo(const float *x, float *o, int n) {
  __shared__ float tile[T][T];
  __shared__ float weights[T];
  int r = threadIdx.y, c = threadIdx.x;
  tile[r][c] = x[r * T + c];
  if (r == 0) weights[c] = 1.0f;
  __syncthreads();
  o[r * T + c] = tile[r + 1][c] * weights[c];   /* the last row reads tile[8][c] */
}]]
  local o = cuda.zeros(64)
  local ok, err = pcall(k[{1, {8, 8}}], cuda.zeros(64), o, 64)
  check(not ok, "the launch fails")
  has_all(err, {"out-of-bounds shared load", "past the end of __shared__ tile (256 bytes)",
                "__shared__ weights", "thread (0,7,0)"})
end)

test("the dynamic array after static ones: in bounds it runs, past its bytes it is named",
  function()
  local k = cuda.kernel[[
__global__ void dyn(const float *x, float *o, int j) {
  __shared__ float fixed[4];
  extern __shared__ float d[];
  int t = threadIdx.x;
  if (t < 4) fixed[t] = 10.0f;
  d[t] = x[t];
  __syncthreads();
  o[t] = d[(t + j) % blockDim.x] + fixed[t % 4] + d[j == 99 ? blockDim.x : t];
}]]
  local xs = {}
  for i = 1, 32 do xs[i] = i end
  local o = cuda.zeros(32)
  k[{1, 32, 32 * 4}](cuda.array(xs), o, 3)
  local got = o:tolist()
  for t = 0, 31 do
    checkeq(got[t + 1], xs[(t + 3) % 32 + 1] + 10 + xs[t + 1], "o[" .. t .. "]")
  end
  local ok, err = pcall(k[{1, 32, 32 * 4}], cuda.array(xs), o, 99)
  check(not ok, "the launch fails")
  has_all(err, {"out-of-bounds shared load", "past the end of the dynamic (extern __shared__) array"})
end)

test("a tiled matrix multiply with two tiles runs as before", function()
  local k = cuda.kernel[[
#define T 16
__global__ void mm(const float *A, const float *B, float *C, int n) {
  __shared__ float As[T][T];
  __shared__ float Bs[T][T];
  int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
  float s = 0.0f;
  for (int t = 0; t < n / T; t++) {
    As[threadIdx.y][threadIdx.x] = A[r * n + t * T + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * T + threadIdx.y) * n + c];
    __syncthreads();
    for (int k = 0; k < T; k++) s += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[r * n + c] = s;
}]]
  local n = 32
  local as, bs = {}, {}
  for i = 1, n * n do as[i] = (i % 5) - 2; bs[i] = (i % 3) - 1 end
  local C = cuda.zeros(n * n)
  k[{{n // 16, n // 16}, {16, 16}}](cuda.array(as), cuda.array(bs), C, n)
  local got = C:tolist()
  for r = 0, n - 1 do
    for c = 0, n - 1 do
      local s = 0
      for t = 0, n - 1 do s = s + as[r * n + t + 1] * bs[t * n + c + 1] end
      checkeq(got[r * n + c + 1], s, ("C[%d][%d]"):format(r, c))
    end
  end
end)

test("an index past a __constant__ table is a constant load of that table", function()
  local m = cuda.module[[
__constant__ float tab[8];
__global__ void k(float *o, int j) { o[0] = tab[j]; }]]
  m:constant("tab", {1, 2, 3, 4, 5, 6, 7, 8})
  local o = cuda.zeros(1)
  m.k[{1, 1}](o, 6)
  checkeq(o[0], 7.0, "tab[6]")
  checkerr("out-of-bounds constant load of 4 bytes", m.k[{1, 1}], o, 9)
  local ok, err = pcall(m.k[{1, 1}], o, 9)
  check(not ok)
  has_all(err, {"index 9 of __constant__ tab is 2 elements (8 bytes) past the end"})
  check(not err:find("parameters", 1, true), "no parameter is compared: " .. err)
end)

T.done()
