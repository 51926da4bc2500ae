-- kernel_args_vs_gpu.lua: kernels that take a struct by value (with padding and nested vector
-- types), CUDA's vector types, an array of pointers and views, run on the GPU and on the
-- simulator from the same arguments: each result against a CPU reference, and the two backends
-- bit for bit. What the GPU reads of a struct is what cudalab laid out, field by field, so a
-- layout that differed from the compiler's would show here as a wrong field.
local T = dofile("tests/lua/testlib.lua")
T.plan(4)
local test, check, checkeq = T.test, T.check, T.checkeq

-- Runs body() on the GPU and on the simulator; returns the two results as Lua lists.
local function both(body)
  local out = {}
  for _, be in ipairs{"cuda", "sim"} do
    local old = cuda.use(be)
    out[be] = body():tolist()
    cuda.use(old)
  end
  return out.cuda, out.sim
end

local function same(name, g, s, want, tol)
  checkeq(#g, #want, name .. ": length")
  for i = 1, #want do
    check(math.abs(g[i] - want[i]) <= (tol or 0), ("%s: GPU [%d] = %s, want %s"):format(name,
      i - 1, g[i], want[i]))
    checkeq(s[i], g[i], name .. ": simulator against GPU at " .. (i - 1))
  end
end

test("a struct with padding, a nested float3 and an array field: every field as the GPU reads it",
  function()
  local src = [[
struct Body { float3 pos; double mass; char tag; int id[3]; const float *w; };
__global__ void fields(Body b, float *out) {
  out[0] = b.pos.x; out[1] = b.pos.y; out[2] = b.pos.z; out[3] = (float)b.mass;
  out[4] = b.tag; out[5] = b.id[0]; out[6] = b.id[1]; out[7] = b.id[2];
  out[8] = b.w[0] + b.w[2];
  const char *base = (const char *)&b;
  out[9] = sizeof(Body); out[10] = (const char *)&b.mass - base;
  out[11] = (const char *)&b.id - base; out[12] = (const char *)&b.w - base;
}]]
  local g, s = both(function()
    local k, out = cuda.kernel(src), cuda.zeros(13)
    k[{1, 1}]({pos = {x = 1.5, y = -2, z = 3}, mass = 0.25, tag = -7, id = {10, 20, 30},
      w = cuda.array({100, 200, 300})}, out)
    return out
  end)
  same("fields", g, s, {1.5, -2, 3, 0.25, -7, 10, 20, 30, 400, 48, 16, 28, 40})
end)

test("float2, float4, int4, double2 by value", function()
  local src = [[
__global__ void vec(float2 a, float4 b, int4 c, double2 d, float *out) {
  int i = threadIdx.x;
  out[i] = a.x * i + a.y + b.x * b.w - b.y * b.z + c.x - c.w * i + (float)(d.x * d.y);
}]]
  local g, s = both(function()
    local out = cuda.zeros(64)
    cuda.kernel(src)[{1, 64}]({0.5, 2}, {x = 1, y = 2, z = 3, w = 4}, {5, 6, 7, 8}, {1.5, -2},
      out)
    return out
  end)
  local want = {}
  for i = 0, 63 do want[i + 1] = 0.5 * i + 2 + 4 - 6 + 5 - 8 * i - 3 end
  same("vec", g, s, want, 1e-4)
end)

test("float ** from cuda.ptrs: a row sum over arrays of different lengths", function()
  local src = [[
__global__ void rowsum(float **rows, const int *len, float *sum, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float s = 0;
  for (int j = 0; j < len[r]; j++) s += rows[r][j];
  sum[r] = s;
}]]
  local n, lens, want = 40, {}, {}
  for r = 1, n do
    lens[r] = r % 7 + 1
    want[r] = 0
    for j = 1, lens[r] do want[r] = want[r] + r + j end
  end
  local g, s = both(function()
    local rs = {}
    for r = 1, n do
      local v = {}
      for j = 1, lens[r] do v[j] = r + j end
      rs[r] = cuda.array(v)
    end
    local sum = cuda.zeros(n)
    cuda.kernel(src)[{2, 32}](cuda.ptrs(rs), cuda.array(lens, "i32"), sum, n)
    return sum
  end)
  same("rowsum", g, s, want)
end)

test("views and NULL: a kernel given a + 256 and a NULL optional output", function()
  local src = [[
__global__ void scale(float *a, float s, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { a[i] *= s; if (count) atomicAdd(count, 1); }
}]]
  local g, s = both(function()
    local a = cuda.arange(1024)
    local k = cuda.kernel(src)
    k[{4, 64}](a + 256, 2, nil, 256)
    k[{1, 128}](a:view(900, 100), -1, nil, 100)
    return a
  end)
  local want = {}
  for i = 0, 1023 do
    want[i + 1] = (i >= 256 and i < 512) and 2 * i or (i >= 900 and i < 1000) and -i or i
  end
  same("views", g, s, want)
end)

return T.done()
