-- calls.lua: corpus cases for calls beyond plain inlined device functions: recursion (each
-- activation with its own registers and local memory), calls through function pointers and
-- virtual functions, an assert that holds, and malloc / free / new / delete in kernels.
local C = dofile("tests/corpus/corpus.lua")
local blocks = C.blocks

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

C.case{
  name = "calls: recursive fibonacci, lanes at different depths",
  src = [[
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__global__ void f(const int *n, int *out, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = fib(n[i]);
}]],
  run = function(k)
    local n, xs = C.integers(300, 31, 0, 17)
    local out = cuda.array(300, "i32")
    k[{blocks(300, 64), 64}](n, out, 300)
    C.xs = xs
    return {out}
  end,
  check = function(o)
    local want = {}
    for i, x in ipairs(C.xs) do want[i] = fib(x) end
    C.same(o[1], want)
  end,
}

C.case{
  name = "calls: recursive factorial in u64 with a local array per activation",
  src = [[
__device__ unsigned long long fact(int n) {
  unsigned long long keep[3] = {(unsigned long long)n, 1ull, 2ull};  // one per activation
  if (n <= 1) return 1;
  unsigned long long r = fact(n - 1);
  volatile unsigned long long *k = keep;
  return r * k[n % 1];
}
__global__ void f(unsigned long long *out, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = fact(i % 21);
}]],
  run = function(k)
    local out = cuda.array(100, "u64")
    k[{2, 64}](out, 100)
    return {out}
  end,
  check = function(o)
    local want = {}
    for i = 0, 99 do
      local f = 1
      for j = 2, i % 21 do f = f * j end
      want[i + 1] = f
    end
    C.same(o[1], want)
  end,
}

-- A random binary tree by parent links: node i's children are l[i] and r[i] (-1 for none).
local function tree(n, seed)
  local u = cuda.rand(n, "f64", seed):tolist()
  local l, r = {}, {}
  for i = 1, n do l[i], r[i] = -1, -1 end
  for i = 2, n do
    local p = math.floor(u[i] * (i - 1)) + 1 -- a random earlier node with a free slot
    while l[p] ~= -1 and r[p] ~= -1 do p = p % (i - 1) + 1 end
    if l[p] == -1 then l[p] = i - 1 else r[p] = i - 1 end
  end
  return l, r
end

C.case{
  name = "calls: recursive tree depth and size from every node",
  src = [[
__device__ int depth(const int *l, const int *r, int v) {
  if (v < 0) return 0;
  int a = depth(l, r, l[v]), b = depth(l, r, r[v]);
  return 1 + (a > b ? a : b);
}
__device__ int size(const int *l, const int *r, int v) { return v < 0 ? 0 : 1 + size(l, r, l[v]) + size(l, r, r[v]); }
__global__ void f(const int *l, const int *r, int *d, int *s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { d[i] = depth(l, r, i); s[i] = size(l, r, i); }
}]],
  run = function(k)
    local n = 40
    local l, r = tree(n, 41)
    local d, s = cuda.array(n, "i32"), cuda.array(n, "i32")
    k[{1, 64}](cuda.array(l, "i32"), cuda.array(r, "i32"), d, s, n)
    C.l, C.r = l, r
    return {d, s}
  end,
  check = function(o)
    local function depth(v) if v < 0 then return 0 end return 1 + math.max(depth(C.l[v + 1]), depth(C.r[v + 1])) end
    local function size(v) if v < 0 then return 0 end return 1 + size(C.l[v + 1]) + size(C.r[v + 1]) end
    local d, s = {}, {}
    for v = 0, #C.l - 1 do d[v + 1], s[v + 1] = depth(v), size(v) end
    C.same(o[1], d)
    C.same(o[2], s)
  end,
}

C.case{
  name = "calls: recursive quicksort of each thread's own slice",
  src = [[
__device__ void qs(int *a, int lo, int hi) {
  if (lo >= hi) return;
  int p = a[(lo + hi) / 2], i = lo, j = hi;
  while (i <= j) {
    while (a[i] < p) i++;
    while (a[j] > p) j--;
    if (i <= j) { int t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
  }
  qs(a, lo, j);
  qs(a, i, hi);
}
__global__ void f(int *a, int per, int slices) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < slices) qs(a, t * per, t * per + per - 1);
}]],
  run = function(k)
    local per, slices = 24, 40
    local a, xs = C.integers(per * slices, 51, -1000, 1000)
    k[{1, 64}](a, per, slices)
    C.xs, C.per = xs, per
    return {a}
  end,
  check = function(o)
    local want = {}
    for s = 0, #C.xs // C.per - 1 do
      local part = table.move(C.xs, s * C.per + 1, s * C.per + C.per, 1, {})
      table.sort(part)
      table.move(part, 1, C.per, s * C.per + 1, want)
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "calls: each activation's locals stay put while deeper ones read them by pointer",
  src = [[
struct Node { int v; const Node *up; };
__device__ __noinline__ int walk(const Node *up, int n, int seed) {
  Node me = {seed * 31 + n, up};            // on this activation's own frame
  if (n == 0) {                             // read every caller's frame through the chain
    int s = 0, k = 1;
    for (const Node *p = &me; p; p = p->up, k++) s += k * p->v;
    return s;
  }
  int r = walk(&me, n - 1, seed);
  return r + me.v;                          // still this activation's value after the call
}
__global__ void f(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = walk(0, i % 9, i);
}]],
  run = function(k)
    local out = cuda.array(200, "i32")
    k[{blocks(200, 64), 64}](out, 200)
    return {out}
  end,
  check = function(o)
    local want = {}
    for i = 0, 199 do
      local d = i % 9
      local vs = {} -- vs[1] is the deepest activation's value
      for n = 0, d do vs[#vs + 1] = i * 31 + n end
      local s = 0
      for k, v in ipairs(vs) do s = s + k * v end
      for n = 1, d do s = s + i * 31 + n end
      want[i + 1] = s
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "calls: a table of function pointers, lanes calling different functions",
  src = [=[
__device__ float twice(float x) { return 2.0f * x; }
__device__ float square(float x) { return x * x; }
__device__ float negate(float x) { return -x; }
typedef float (*op)(float);
__device__ op ops[3] = {twice, square, negate};
__global__ void f(const float *x, const int *which, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ops[which[i]](x[i]);
}]=],
  run = function(k)
    local n = 500
    local x, xs = C.uniform(n, 61, -4, 4)
    local w, ws = C.integers(n, 62, 0, 2)
    local out = cuda.array(n)
    k[{blocks(n, 128), 128}](x, w, out, n)
    C.xs, C.ws = xs, ws
    return {out}
  end,
  check = function(o)
    local want = {}
    for i = 1, #C.xs do
      local x, w = C.xs[i], C.ws[i]
      want[i] = w == 0 and 2 * x or w == 1 and x * x or -x
    end
    C.same(o[1], want, {rtol = 1e-6})
  end,
}

C.case{
  name = "calls: virtual functions through base pointers, objects made with new",
  src = [[
struct Shape { __device__ virtual float area() const = 0; __device__ virtual ~Shape() {} };
struct Square : Shape { float s; __device__ Square(float x) : s(x) {} __device__ float area() const override { return s * s; } };
struct Tri : Shape { float b, h; __device__ Tri(float x) : b(x), h(x + 1) {} __device__ float area() const override { return 0.5f * b * h; } };
__global__ void f(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Shape *s = (i % 3 == 0) ? (Shape *)new Tri(x[i]) : (Shape *)new Square(x[i]);
  out[i] = s ? s->area() : -1.0f;
  delete s;
}]],
  run = function(k)
    local n = 300
    local x, xs = C.uniform(n, 71, 0, 10)
    local out = cuda.array(n)
    k[{blocks(n, 64), 64}](x, out, n)
    C.xs = xs
    return {out}
  end,
  check = function(o)
    local want = {}
    for i = 1, #C.xs do
      local x = C.xs[i]
      want[i] = (i - 1) % 3 == 0 and 0.5 * x * (x + 1) or x * x
    end
    C.same(o[1], want, {rtol = 1e-6})
  end,
}

C.case{
  name = "calls: an assert that holds changes nothing",
  src = [[
__global__ void f(const int *x, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  assert(x[i] >= 0 && x[i] < 1000);
  out[i] = x[i] * 3;
}]],
  run = function(k)
    local n = 777
    local x, xs = C.integers(n, 81, 0, 999)
    local out = cuda.array(n, "i32")
    k[{blocks(n, 256), 256}](x, out, n)
    C.xs = xs
    return {out}
  end,
  check = function(o)
    local want = {}
    for i, x in ipairs(C.xs) do want[i] = 3 * x end
    C.same(o[1], want)
  end,
}

C.case{
  name = "calls: per-thread malloc, fill, sum and free",
  src = [[
__global__ void f(const int *len, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int m = len[i];
  int *buf = (int *)malloc(m * sizeof(int));
  if (!buf) { out[i] = -1; return; }
  for (int k = 0; k < m; k++) buf[k] = k * k + i;
  int s = 0;
  for (int k = m - 1; k >= 0; k--) s += buf[k];
  free(buf);
  out[i] = s;
}]],
  run = function(k)
    local n = 400
    local len, ls = C.integers(n, 91, 1, 50)
    local out = cuda.array(n, "i32")
    k[{blocks(n, 128), 128}](len, out, n)
    C.ls = ls
    return {out}
  end,
  check = function(o)
    local want = {}
    for i, m in ipairs(C.ls) do
      local s = 0
      for k = 0, m - 1 do s = s + k * k + (i - 1) end
      want[i] = s
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "calls: new[] and delete[] of a struct with a constructor",
  src = [[
struct P { float x, y; int id; __device__ P() : x(1.5f), y(-2.0f), id(7) {} };
__global__ void f(const int *len, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int m = len[i];
  P *ps = new P[m];
  if (!ps) { out[i] = -1; return; }
  for (int k = 0; k < m; k++) { ps[k].x += k; ps[k].id += i; }
  float s = 0;
  for (int k = 0; k < m; k++) s += ps[k].x * ps[k].y + ps[k].id;
  delete[] ps;
  out[i] = s;
}]],
  run = function(k)
    local n = 300
    local len, ls = C.integers(n, 101, 1, 20)
    local out = cuda.array(n)
    k[{blocks(n, 64), 64}](len, out, n)
    C.ls = ls
    return {out}
  end,
  check = function(o)
    local want = {}
    for i, m in ipairs(C.ls) do
      local s = 0.0
      for k = 0, m - 1 do s = s + (1.5 + k) * -2.0 + (7 + i - 1) end
      want[i] = s
    end
    C.same(o[1], want, {rtol = 1e-6})
  end,
}

C.case{
  name = "calls: heap blocks outlive the launch that made them",
  src = [[
__global__ void f(long long *slot, int *out, int n, int make) {
  int i = threadIdx.x;
  if (make) {
    if (i == 0) {
      int *p = (int *)malloc(n * sizeof(int));
      for (int k = 0; p && k < n; k++) p[k] = 10 * k;
      slot[0] = (long long)p;
    }
    return;
  }
  const int *p = (const int *)slot[0];
  if (i < n) out[i] = p ? p[i] + i : -1;
  __syncthreads();
  if (i == 0) free((void *)p);
}]],
  run = function(k)
    local n = 100
    local slot, out = cuda.array(1, "i64"), cuda.array(n, "i32")
    k[{1, 128}](slot, out, n, 1)
    k[{1, 128}](slot, out, n, 0)
    return {out}
  end,
  check = function(o)
    local want = {}
    for i = 0, 99 do want[i + 1] = 11 * i end
    C.same(o[1], want)
  end,
}

return C.done()
