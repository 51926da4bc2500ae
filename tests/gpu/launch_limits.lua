-- launch_limits.lua: shared memory per block and a kernel's launch bounds on the GPU, beside the
-- simulator. 1 KiB of static shared memory with 48 KiB dynamic is over the 48 KiB a block has
-- without an opt-in, so the launch must opt in (it once opted in only when the dynamic size
-- alone was over 48 KiB, and the GPU refused with a bare cudaErrorInvalidValue); 1 KiB + 227 KiB
-- is over the opt-in limit and is refused naming both sizes. A launch outside __launch_bounds__
-- or __cluster_dims__ gets one message on both backends, and the cluster special registers read
-- the same on both. tests/simulator/launch_bounds.lua holds the simulator alone to the same.
local T = dofile("tests/lua/testlib.lua")
T.plan(6)
local test, check, checkeq = T.test, T.check, T.checkeq

-- f(backend) on the GPU and on the simulator, the GPU first; the backend in use is restored.
local function both(f)
  local old = cuda.use("cuda")
  local ok, err = pcall(f, "cuda")
  if ok then
    cuda.use("sim")
    ok, err = pcall(f, "sim")
  end
  cuda.use(old)
  if not ok then error(err, 0) end
end

local function exact(a, ref, what)
  local _, r = cuda.compare(a, ref, {rtol = 0, atol = 0})
  check(r.ok, what .. ": " .. tostring(r))
end

-- The error message of f(...), with the "file:line: " Lua puts before it taken off.
local function message(f, ...)
  local ok, err = pcall(f, ...)
  check(not ok, "expected an error")
  return (tostring(err):gsub("^[^:]*:%d+: ", ""))
end

local SHARED = [[
__global__ void both(float *out, int n) {
  __shared__ float fixed[256];
  extern __shared__ float more[];
  int t = threadIdx.x;
  fixed[t] = t;
  for (int i = t; i < n; i += blockDim.x) more[i] = 2.0f * i;
  __syncthreads();
  out[t] = fixed[255 - t] + more[n - 1 - t];
}]]

local function shared_ref(n)
  local ref = {}
  for t = 0, 255 do ref[t + 1] = (255 - t) + 2 * (n - 1 - t) end
  return ref
end

test("1 KiB static + 48 KiB dynamic shared memory runs on the GPU, and computes right", function()
  both(function(be)
    local k = cuda.kernel(SHARED)
    checkeq(k:info().shared_static, 1024, be .. ": static shared memory")
    local n = 48 * 1024 // 4
    local out = cuda.zeros(256)
    k[{1, 256, 48 * 1024}](out, n)
    exact(out, shared_ref(n), be .. ": 1 KiB + 48 KiB")
    if be == "cuda" then
      local blocks = k:occupancy(256, 48 * 1024)
      check(math.type(blocks) == "integer" and blocks >= 1, "occupancy with 1 KiB + 48 KiB: " ..
        tostring(blocks))
    end
  end)
end)

test("1 KiB static + 226 KiB dynamic, the opt-in limit exactly, runs and computes right", function()
  both(function(be)
    local k = cuda.kernel(SHARED)
    local n = 226 * 1024 // 4
    local out = cuda.zeros(256)
    k[{1, 256, 226 * 1024}](out, n)
    exact(out, shared_ref(n), be .. ": 1 KiB + 226 KiB")
  end)
end)

test("1 KiB static + 227 KiB dynamic is refused naming both, in one message", function()
  local said = {}
  both(function(be)
    local k = cuda.kernel(SHARED)
    local m = message(k[{1, 256, 227 * 1024}], cuda.zeros(256), 227 * 256)
    check(m:find("the launch needs 233472 bytes of shared memory per block (1024 static + " ..
      "232448 dynamic)", 1, true) and m:find("at most 232448 (227 KiB) per block", 1, true),
      be .. ": " .. m)
    said[be] = m:gsub("; the .- allows", "; the device allows")
  end)
  checkeq(said.cuda, said.sim, "the GPU's message and the simulator's")
end)

test("__launch_bounds__: within runs, over it is refused in one message on both", function()
  local said = {}
  both(function(be)
    local k = cuda.kernel[[
__global__ void __launch_bounds__(128) twice(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2.0f * a[i] + 1.0f;
}]]
    checkeq(k:info().max_threads_per_block, 128, be .. ": the kernel's largest block")
    local n = 1000
    local a = cuda.arange(n)
    k[{8, 128}](a, n)
    local ref = {}
    for i = 1, n do ref[i] = 2 * (i - 1) + 1 end
    exact(a, ref, be .. ": a block of 128")
    said[be] = message(k[{4, 256}], a, n)
  end)
  check(said.cuda:find("kernel twice was declared with __launch_bounds__(128): a block of 256 " ..
    "threads (256 x 1 x 1) is over that bound", 1, true), said.cuda)
  checkeq(said.cuda, said.sim, "the GPU's message and the simulator's")
end)

local CLUSTER = [[
__global__ void __cluster_dims__(2, 3, 1) where(unsigned *o) {
  unsigned r[8];
  asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(r[0]));
  asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(r[1]));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(r[2]));
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(r[3]));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(r[4]));
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r[5]));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(r[6]));
  asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(r[7]));
  unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x < 8) o[b * 8 + threadIdx.x] = r[threadIdx.x];
}]]

test("__cluster_dims__: the cluster registers read alike on the GPU and the simulator", function()
  local gx, gy = 4, 6
  local ref = {}
  for y = 0, gy - 1 do
    for x = 0, gx - 1 do
      for _, v in ipairs{x % 2, y % 3, x // 2, y // 3, gx // 2, x % 2 + (y % 3) * 2, 6, 1} do
        ref[#ref + 1] = v
      end
    end
  end
  both(function(be)
    local k = cuda.kernel(CLUSTER)
    local o = cuda.zeros(gx * gy * 8, "u32")
    k[{{gx, gy}, 32}](o)
    exact(o, ref, be .. ": cluster registers")
  end)
end)

test("__cluster_dims__: a grid that is not a whole number of clusters, one message", function()
  local said = {}
  both(function(be)
    local k = cuda.kernel(CLUSTER)
    said[be] = message(k[{{2, 4}, 32}], cuda.zeros(64 * 8, "u32"))
  end)
  check(said.cuda:find("but grid.y = 4 is not a multiple of 3", 1, true), said.cuda)
  checkeq(said.cuda, said.sim, "the GPU's message and the simulator's")
end)

return T.done()
