-- arith.lua: corpus cases for the arithmetic the simulator has long run: IEEE f32 and f64 with
-- every rounding mode NVRTC emits, integer multiply-high and division, and warp shuffles.
local C = dofile("tests/corpus/corpus.lua")
local N = 4099 -- not a multiple of any block size
local blocks = C.blocks

C.case{
  name = "f32 a*b+c as one fma, division and sqrt, correctly rounded",
  src = [[
__global__ void f(const float *a, const float *b, float *fm, float *dv, float *sq, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  fm[i] = fmaf(a[i], b[i], -a[i]);
  dv[i] = a[i] / b[i];
  sq[i] = sqrtf(fabsf(a[i]) * 1000.0f);
}]],
  run = function(k)
    local a, xs = C.uniform(N, 11, -8, 8)
    local b, ys = C.uniform(N, 12, 0.5, 4)
    local fm, dv, sq = cuda.array(N), cuda.array(N), cuda.array(N)
    k[{blocks(N, 128), 128}](a, b, fm, dv, sq, N)
    C.xs, C.ys = xs, ys
    return {fm, dv, sq}
  end,
  check = function(o)
    local fm, dv, sq = {}, {}, {}
    for i = 1, N do
      fm[i] = C.xs[i] * C.ys[i] - C.xs[i]
      dv[i] = C.xs[i] / C.ys[i]
      sq[i] = math.sqrt(math.abs(C.xs[i]) * 1000)
    end
    C.same(o[1], fm, {rtol = 1e-6, atol = 1e-6})
    C.same(o[2], dv, {rtol = 1e-6})
    C.same(o[3], sq, {rtol = 1e-6})
  end,
}

C.case{
  name = "i32 and u64 multiply-high, division and remainder",
  src = [[
__global__ void f(const int *a, const int *b, int *q, int *r, long long *hi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
  hi[i] = (long long)__umul64hi((unsigned long long)a[i] * 2654435761u, 0x9E3779B97F4A7C15ull);
}]],
  run = function(k)
    local a, xs = C.integers(N, 21, -2000000000, 2000000000)
    local b, ys = C.integers(N, 22, 1, 70000)
    local q, r, hi = cuda.array(N, "i32"), cuda.array(N, "i32"), cuda.array(N, "i64")
    k[{blocks(N, 256), 256}](a, b, q, r, hi, N)
    C.xs, C.ys = xs, ys
    return {q, r, hi}
  end,
  check = function(o)
    local q, r = {}, {}
    for i = 1, N do
      local x, y = C.xs[i], C.ys[i]
      local t = x // y
      if t < 0 and t * y ~= x then t = t + 1 end -- C truncates toward zero
      q[i], r[i] = t, x - t * y
    end
    C.same(o[1], q)
    C.same(o[2], r)
  end,
}

C.case{
  name = "warp shuffles: butterfly sum and prefix sum in f32",
  src = [[
__global__ void f(const float *x, float *sum, float *scan, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f, s = v, p = v;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  for (int o = 1; o < 32; o <<= 1) {
    float t = __shfl_up_sync(0xffffffffu, p, o);
    if ((threadIdx.x & 31) >= o) p += t;
  }
  if (i < n) { sum[i] = s; scan[i] = p; }
}]],
  run = function(k)
    local x, xs = C.uniform(N, 31, -1, 1)
    local sum, scan = cuda.array(N), cuda.array(N)
    k[{blocks(N, 64), 64}](x, sum, scan, N)
    C.xs = xs
    return {sum, scan}
  end,
  check = function(o)
    local sum, scan = {}, {}
    for w = 0, (N - 1) // 32 do
      local acc = 0
      for l = 1, 32 do
        local i = w * 32 + l
        if i <= N then acc = acc + C.xs[i]; scan[i] = acc end
      end
      for l = 1, 32 do if w * 32 + l <= N then sum[w * 32 + l] = acc end end
    end
    C.same(o[1], sum, {atol = 1e-5})
    C.same(o[2], scan, {atol = 1e-5})
  end,
}

-- f64 library functions seed their divisions and logarithms with rcp.approx.ftz.f64 (the SFU's
-- 20-bit reciprocal) and refine it with fmas, so their last bits follow the seed's.
C.case{
  name = "f64 log1p, exp, atan, acosh, pow and cbrt (rcp.approx.ftz.f64 seeds)",
  src = [[
__global__ void f(const double *x, double *l, double *e, double *a, double *h, double *p, double *c,
                  int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  l[i] = log1p(v);
  e[i] = exp(-v);
  a[i] = atan(v);
  h[i] = acosh(1.0 + v);
  p[i] = pow(v, 1.5);
  c[i] = cbrt(v);
}]],
  run = function(k)
    local x, xs = C.uniform(N, 41, 0.01, 8, "f64")
    local o = C.map(6, function() return cuda.array(N, "f64") end)
    k[{blocks(N, 128), 128}](x, o[1], o[2], o[3], o[4], o[5], o[6], N)
    C.xs = xs
    return o
  end,
  check = function(o)
    local fns = {
      function(v) return math.log(1 + v) end, function(v) return math.exp(-v) end, math.atan,
      function(v) return math.log(1 + v + math.sqrt((1 + v) * (1 + v) - 1)) end,
      function(v) return v ^ 1.5 end, function(v) return v ^ (1 / 3) end,
    }
    for j, fn in ipairs(fns) do
      local want = {}
      for i = 1, N do want[i] = fn(C.xs[i]) end
      C.same(o[j], want, {rtol = 1e-13})
    end
  end,
}

-- -use_fast_math turns sinf, cosf, expf, logf, 1/sqrtf, sqrtf and x / y into the special-function
-- unit's .approx instructions (and div.approx), whose bits the simulator reproduces; the
-- reference only bounds their error, the GPU's digest pins the bits. Angles up to 100 radians
-- (sin and cos of a large angle are far from the true ones on the GPU too).
C.case{
  name = "-use_fast_math: sinf, cosf, expf, logf, rsqrtf, sqrtf and division (.approx)",
  opts = {"-use_fast_math"},
  src = [[
__global__ void f(const float *x, float *s, float *c, float *e, float *l, float *r, float *q,
                  float *d, float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  s[i] = sinf(v);
  c[i] = cosf(v);
  e[i] = expf(v * 0.1f);
  l[i] = logf(v);
  r[i] = rsqrtf(v);
  q[i] = sqrtf(v);
  d[i] = 1.0f / (v + 0.5f);
  /* stored alone; tests/corpus/ptxas.lua has a division followed by an add, which ptxas fuses */
  g[i] = v / (v * 0.25f + 3.0f);
}]],
  run = function(k)
    local x, xs = C.uniform(N, 43, 0.001, 100)
    local o = C.map(8, function() return cuda.array(N) end)
    k[{blocks(N, 128), 128}](x, o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], N)
    C.xs = xs
    return o
  end,
  check = function(o)
    local fns = {
      {math.sin, 1e-4}, {math.cos, 1e-4}, {function(v) return math.exp(v * 0.1) end, 1e-5},
      {math.log, 1e-5}, {function(v) return 1 / math.sqrt(v) end, 1e-5}, {math.sqrt, 1e-5},
      {function(v) return 1 / (v + 0.5) end, 1e-5}, {function(v) return v / (v * 0.25 + 3) end, 1e-5},
    }
    for j, f in ipairs(fns) do
      local want = {}
      for i = 1, N do want[i] = f[1](C.xs[i]) end
      C.same(o[j], want, {rtol = f[2], atol = f[2]})
    end
  end,
}

-- The forms without .ftz (the intrinsics, compiled without -use_fast_math), whose code scales
-- subnormal operands around the special-function unit: inputs from 2^-140 to 2^20.
C.case{
  name = "__sinf, __expf, __logf, __fdividef and rsqrt / sqrt / div.full without .ftz, subnormals included",
  src = [[
__global__ void f(const float *x, float *s, float *e, float *l, float *q, float *r, float *d,
                  float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], t;
  s[i] = __sinf(fminf(v, 50.0f)); /* far from sin beyond, as on the GPU */
  e[i] = __expf(-v);
  l[i] = __logf(v);
  q[i] = __fdividef(1.5f, v);
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(t) : "f"(v));
  r[i] = t;
  asm("sqrt.approx.f32 %0, %1;" : "=f"(t) : "f"(v));
  d[i] = t;
  asm("div.full.f32 %0, %1, %2;" : "=f"(t) : "f"(v), "f"(v * 0.75f + 1e-30f));
  g[i] = t;
}]],
  run = function(k)
    local u = cuda.rand(N, "f64", 44):tolist()
    local xs = {}
    for i = 1, N do xs[i] = C.f32(2.0 ^ (u[i] * 160 - 140)) end
    local o = C.map(7, function() return cuda.array(N) end)
    k[{blocks(N, 128), 128}](cuda.array(xs), o[1], o[2], o[3], o[4], o[5], o[6], o[7], N)
    C.xs = xs
    return o
  end,
  check = function(o)
    local fns = {
      function(v) return math.sin(math.min(v, 50)) end, function(v) return math.exp(-v) end, math.log,
      function(v) return 1.5 / v end, function(v) return 1 / math.sqrt(v) end, math.sqrt,
      function(v) return v / (C.f32(v * 0.75) + 1e-30) end,
    }
    for j, fn in ipairs(fns) do
      local want = {}
      for i = 1, N do
        local w = fn(C.xs[i])
        want[i] = math.abs(w) < 3.4e38 and w or w / 0 -- infinity where the exact value overflows f32
      end
      C.same(o[j], want, {rtol = 1e-5, atol = j == 1 and 1e-5 or 1e-6})
    end
  end,
}

return C.done()
