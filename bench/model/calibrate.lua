-- calibrate.lua: the microbenchmarks that the simulator's H200 timing model is
-- fitted to. Run on the GPU machine:
--
--   build/cudalab bench/model/calibrate.lua OUTFILE [--quick]
--
-- OUTFILE gets a Lua chunk returning {date, machine, clock_khz, measurements,
-- raw, failed}; stdout gets progress lines and a table. --only GROUP,... runs
-- those groups alone and keeps the figures OUTFILE already holds for the
-- others (the date is then the newest group's). --quick shrinks every
-- size 100x and runs each timing once: on the simulator it proves that the
-- script runs, its numbers mean nothing.
--
-- Design stance: one kernel per quantity, shaped so that one limit binds
-- (launch, block scheduling, DRAM, L2, latency, one issue pipe, shared
-- wavefronts, L1 sectors, atomics, copies), every launch's result checked
-- against a CPU reference before it is timed, and sizes large enough that
-- the launch cost is a few percent at most. The counts that turn times into
-- rates (instructions, wavefronts, sectors) are those the simulator's
-- counters report for the same kernels, so the model is fitted in its own
-- units. Sizes in MiB (2^20 bytes) throughout.

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local mb = dofile(here .. "/microbench.lua")

local GROUPS = { "launches", "memory", "latency", "chains", "issue", "loads", "atomics", "structure",
  "atomic_slices", "atomic_repeats", "scattered_loads", "partial_writes", "copies" }
local outfile, quick, only
local i = 1
while arg[i] do
  local a = arg[i]
  if a == "--quick" then quick = true
  elseif a == "--only" then
    i = i + 1
    only = {}
    for g in (arg[i] or ""):gmatch("[^,]+") do
      local known = false
      for _, k in ipairs(GROUPS) do known = known or k == g end
      if not known then
        io.stderr:write("calibrate.lua: no group '", g, "'; the groups are ",
          table.concat(GROUPS, ", "), "\n")
        os.exit(2)
      end
      only[g] = true
    end
  else outfile = a end
  i = i + 1
end
if not outfile or (only and next(only) == nil) then
  io.stderr:write("usage: cudalab bench/model/calibrate.lua OUTFILE [--quick] [--only GROUP,...]\n",
    "  --only runs those groups and keeps OUTFILE's other figures\n")
  os.exit(2)
end
mb.set_quick(quick)

local Q = quick and 100 or 1 -- the size divisor
local MiB, GiB = 1 << 20, 1 << 30
local dev = cuda.device()
local SMS = dev.sm_count
local meas, raw = {}, {}
local ms, check, near = mb.ms, mb.check, mb.near

local function say(fmt, ...)
  print(string.format(fmt, ...))
  io.stdout:flush()
end

local function gbs(bytes, t) return bytes / (t * 1e6) end

-- Launch overhead and per-block cost ----------------------------------------

local function launches()
  say("launch overhead and block scheduling")
  local m = cuda.module[[
__global__ void empty() {}
__global__ void write_one(int *out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
]]
  -- Written the way a learner times a launch: the launch config is built inside fn.
  meas.launch_us = ms(function() m.empty[{1, 32}]() end) * 1000
  local bound = m.empty[{1, 32}]
  raw.launch_prebound_us = ms(function() bound() end) * 1000
  raw.launch_back_to_back_us = ms(function() for _ = 1, 100 do bound() end end) * 10
  say("  launch %.2f us (config made beforehand %.2f us, back to back %.2f us)",
    meas.launch_us, raw.launch_prebound_us, raw.launch_back_to_back_us)

  local grids = { 10000 // Q, 100000 // Q, 1000000 // Q }
  local out = cuda.array(grids[3] * 1024, "i32")
  raw.blocks = { grids = grids }
  for _, b in ipairs({ 32, 128, 256, 1024 }) do
    local te, tw = {}, {}
    for i, g in ipairs(grids) do
      te[i] = ms(function() m.empty[{g, b}]() end)
      tw[i] = ms(function() m.write_one[{g, b}](out) end)
    end
    local ae, be = mb.fit(grids, te)
    local aw, bw = mb.fit(grids, tw)
    meas["block_ns_" .. b] = be * 1e6
    raw.blocks["block_" .. b] = { empty_ms = te, write_ms = tw, empty_fixed_us = ae * 1000,
      write_fixed_us = aw * 1000, write_ns_per_block = bw * 1e6 }
    say("  block %4d: empty %.3g ns/block, writing %.3g ns/block", b, be * 1e6, bw * 1e6)
  end
  meas.block_ns = meas.block_ns_32
  out:fill(0)
  m.write_one[{grids[3], 1024}](out)
  local last = grids[3] * 1024 - 1
  check("block_ns", out[0] == 1 and out[last] == 1 and out[last // 2 + 7] == 1,
    "write_one left a zero")
  out:free()
end

-- DRAM and L2 bandwidth -----------------------------------------------------

local MEM = [[
#define F4(p) ((float4 *)(p))
#define SUM(v) ((v).x + (v).y + (v).z + (v).w)
#define INC(v) ((v).x += 1.0f, (v).y += 1.0f, (v).z += 1.0f, (v).w += 1.0f)
#define GRID_STRIDE int t = blockIdx.x * blockDim.x + threadIdx.x, s = gridDim.x * blockDim.x, i = t

__global__ void copy1(const float *in, float *out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) F4(out)[i] = ((const float4 *)in)[i];
}
__global__ void copy_gs(const float *in, float *out, int n4) {
  const float4 *a = (const float4 *)in;
  GRID_STRIDE;
  for (; i + 3 * s < n4; i += 4 * s) {
    float4 v0 = a[i], v1 = a[i + s], v2 = a[i + 2 * s], v3 = a[i + 3 * s];
    F4(out)[i] = v0; F4(out)[i + s] = v1; F4(out)[i + 2 * s] = v2; F4(out)[i + 3 * s] = v3;
  }
  for (; i < n4; i += s) F4(out)[i] = a[i];
}
// Reads only: the sum is stored when it is NaN (never, for our data) or when
// asked to (the check), so the loads cannot be optimised away.
__global__ void read1(const float *in, float *out, int n4, int always) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  float4 v = ((const float4 *)in)[i];
  float sum = SUM(v);
  if (always || sum != sum) out[i] = sum;
}
__global__ void read_gs(const float *in, float *out, int n4, int always) {
  const float4 *a = (const float4 *)in;
  GRID_STRIDE;
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; i + 3 * s < n4; i += 4 * s) {
    float4 v0 = a[i], v1 = a[i + s], v2 = a[i + 2 * s], v3 = a[i + 3 * s];
    s0 += SUM(v0); s1 += SUM(v1); s2 += SUM(v2); s3 += SUM(v3);
  }
  for (; i < n4; i += s) { float4 v = a[i]; s0 += SUM(v); }
  float sum = s0 + s1 + s2 + s3;
  if (always || sum != sum) out[t] = sum;
}
__global__ void fill1(float *out, float v, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) F4(out)[i] = make_float4(v, v, v, v);
}
__global__ void fill_gs(float *out, float v, int n4) {
  float4 f = make_float4(v, v, v, v);
  GRID_STRIDE;
  for (; i + 3 * s < n4; i += 4 * s) {
    F4(out)[i] = f; F4(out)[i + s] = f; F4(out)[i + 2 * s] = f; F4(out)[i + 3 * s] = f;
  }
  for (; i < n4; i += s) F4(out)[i] = f;
}
// The working set read `passes` times in one launch, so that launch overhead
// is small even for 2 MiB. __ldcg skips L1: each thread rereads its own
// slice, which L1 would otherwise serve for sets under ~30 MiB. The empty asm
// is a compiler barrier, so no pass can be merged into the next.
__global__ void read_l2(const float *in, float *out, int n4, int passes, int always) {
  const float4 *a = (const float4 *)in;
  int t = blockIdx.x * blockDim.x + threadIdx.x, s = gridDim.x * blockDim.x;
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int p = 0; p < passes; p++) {
    int i = t;
    for (; i + 3 * s < n4; i += 4 * s) {
      float4 v0 = __ldcg(a + i), v1 = __ldcg(a + i + s), v2 = __ldcg(a + i + 2 * s), v3 = __ldcg(a + i + 3 * s);
      s0 += SUM(v0); s1 += SUM(v1); s2 += SUM(v2); s3 += SUM(v3);
    }
    for (; i < n4; i += s) { float4 v = __ldcg(a + i); s0 += SUM(v); }
    asm volatile("" ::: "memory");
  }
  float sum = s0 + s1 + s2 + s3;
  if (always || sum != sum) out[t] = sum;
}
__global__ void rmw_l2(float *a, int n4, int passes) {
  float4 *b = F4(a);
  int t = blockIdx.x * blockDim.x + threadIdx.x, s = gridDim.x * blockDim.x;
  for (int p = 0; p < passes; p++) {
    int i = t;
    for (; i + 3 * s < n4; i += 4 * s) {
      float4 v0 = __ldcg(b + i), v1 = __ldcg(b + i + s), v2 = __ldcg(b + i + 2 * s), v3 = __ldcg(b + i + 3 * s);
      INC(v0); INC(v1); INC(v2); INC(v3);
      b[i] = v0; b[i + s] = v1; b[i + 2 * s] = v2; b[i + 3 * s] = v3;
    }
    for (; i < n4; i += s) { float4 v = __ldcg(b + i); INC(v); b[i] = v; }
    asm volatile("" ::: "memory");
  }
}
]]

-- How many of thread t's grid-stride indices fall below n4.
local function visits(t, s, n4) return t < n4 and (n4 - t + s - 1) // s or 0 end

local function samples_equal(key, x, want, idx)
  for _, i in ipairs(idx) do
    local w = type(want) == "number" and want or want[i]
    if x[i] ~= w then return check(key, false, string.format("element %d is %g, expected %g", i, x[i], w)) end
  end
  return true
end

local function dram(m)
  say("DRAM bandwidth (1 GiB)")
  local n = (GiB // 4 // Q) // 1024 * 1024
  local n4, bytes = n // 4, n * 4
  local A, B = cuda.rand(n, "f32", 7), cuda.array(n)
  local g1, gs = (n4 + 255) // 256, SMS * 8
  local idx = { 0, 1, n // 2 + 5, n - 1 }
  -- Times both shapes of one kernel pair, checking each one's result after it.
  local function both(key, k1, kgs, args, nbytes, verify)
    local t1 = ms(function() k1[{g1, 256}](table.unpack(args)) end)
    verify(k1, g1)
    local t2 = ms(function() kgs[{gs, 256}](table.unpack(args)) end)
    verify(kgs, gs)
    raw[key] = { per_element_gbs = gbs(nbytes, t1), grid_stride_gbs = gbs(nbytes, t2),
      grid_stride_blocks = gs }
    meas[key] = math.max(gbs(nbytes, t1), gbs(nbytes, t2))
    say("  %-15s %8.1f GB/s one thread per float4, %8.1f GB/s grid-stride", key,
      raw[key].per_element_gbs, raw[key].grid_stride_gbs)
  end
  both("dram_write_gbs", m.fill1, m.fill_gs, { B, 1, n4 }, bytes,
    function() samples_equal("dram_write_gbs", B, 1, idx) B:fill(0) end)
  local want = {}
  for _, i in ipairs(idx) do want[i] = A[i] end
  both("dram_copy_gbs", m.copy1, m.copy_gs, { A, B, n4 }, 2 * bytes,
    function() samples_equal("dram_copy_gbs", B, want, idx) B:fill(0) end)
  B:fill(1)
  both("dram_read_gbs", m.read1, m.read_gs, { B, A, n4, 0 }, bytes, function(k, g)
    k[{g, 256}](B, A, n4, 1) -- always = 1: store every thread's sum
    local s = g * 256
    near("dram_read_gbs", A[0], 4 * visits(0, s, n4))
    near("dram_read_gbs", A[s - 1], 4 * visits(s - 1, s, n4))
  end)
  A:free()
  return B, n4
end

local function l2(m, B, n4max)
  say("L2: read bandwidth against working set")
  local sizes = { 2, 4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256 }
  local gs, target = SMS * 8, GiB // Q
  local out = cuda.array(gs * 256)
  raw.l2_read = { size_mib = sizes, gbs = {}, passes = {} }
  for j, mib in ipairs(sizes) do
    local n4 = math.min(n4max, mib * MiB // 16 // Q)
    local passes = math.max(1, target // (n4 * 16))
    m.read_l2[{gs, 256}](B, out, n4, passes, 1)
    near("l2_read_gbs", out[0], 4 * passes * visits(0, gs * 256, n4))
    local t = ms(function() m.read_l2[{gs, 256}](B, out, n4, passes, 0) end)
    raw.l2_read.gbs[j], raw.l2_read.passes[j] = gbs(n4 * 16 * passes, t), passes
    say("  %4d MiB  %8.1f GB/s  (%d passes a launch)", mib, raw.l2_read.gbs[j], passes)
  end
  local plateau = 0
  for j, mib in ipairs(sizes) do
    if mib <= 16 then plateau = math.max(plateau, raw.l2_read.gbs[j]) end
  end
  meas.l2_read_gbs = plateau
  local level = (plateau + (meas.dram_read_gbs or 0)) / 2
  meas.l2_effective_mb = mb.crossing(sizes, raw.l2_read.gbs, level) or sizes[#sizes]
  check("l2_effective_mb", mb.crossing(sizes, raw.l2_read.gbs, level) ~= nil,
    "bandwidth never fell halfway to DRAM's")
  out:free()

  say("L2: read-modify-write (a[i] += 1)")
  local C = cuda.zeros(64 * MiB // 4 // Q + 4)
  local n4c = 4 * MiB // 16 // Q
  m.rmw_l2[{gs, 256}](C, n4c, 3)
  samples_equal("l2_rmw_gbs", C, { [0] = 3, [4 * n4c - 1] = 3, [4 * n4c] = 0 }, { 0, 4 * n4c - 1, 4 * n4c })
  raw.l2_rmw = { size_mib = { 4, 16, 32, 64 }, gbs = {} }
  for j, mib in ipairs(raw.l2_rmw.size_mib) do
    local n4 = mib * MiB // 16 // Q
    local passes = math.max(1, target // (2 * n4 * 16))
    local t = ms(function() m.rmw_l2[{gs, 256}](C, n4, passes) end)
    raw.l2_rmw.gbs[j] = gbs(2 * n4 * 16 * passes, t)
    say("  %4d MiB  %8.1f GB/s read + written", mib, raw.l2_rmw.gbs[j])
  end
  meas.l2_rmw_gbs = raw.l2_rmw.gbs[2]
  C:free()
end

-- Latency: a single thread chasing pointers -----------------------------------

local function latency()
  say("latency: pointer chase, one thread")
  -- pos carries the position from one launch to the next, so each timed launch
  -- walks lines the previous ones did not: 100,000 hops touch 12 MiB, which
  -- would otherwise stay in L2 and pass for DRAM.
  local k = cuda.kernel[[
__global__ void chase(const unsigned *next, unsigned *pos, int hops) {
  unsigned j = pos[0];
  for (int h = 0; h < hops; h++) j = next[j];
  pos[0] = j;
}]]
  local hops = 100000 // Q
  raw.latency = {}
  for _, c in ipairs({ { "l1", 16 * 1024 }, { "l2", 4 * MiB }, { "dram", GiB } }) do
    local name, bytes = c[1], math.max(4096, c[2] // (c[1] == "l1" and 1 or Q))
    local m = bytes // 128 -- one node per 128-byte line, 32 u32 apart
    local order = mb.random_order(m, 12345)
    local h = cuda.host(m * 32, "u32")
    for i = 1, m do h[order[i] * 32] = order[i % m + 1] * 32 end
    local nxt = cuda.array(m * 32, "u32")
    nxt:copyfrom(h)
    h:free()
    local pos = cuda.array({ order[1] * 32 }, "u32")
    k[{1, 1}](nxt, pos, hops)
    local key = "lat_" .. name .. "_ns"
    near(key, pos[0], order[hops % m + 1] * 32)
    order = nil
    collectgarbage()
    local t = ms(function() k[{1, 1}](nxt, pos, hops) end)
    meas[key] = t * 1e6 / hops
    raw.latency[name] = { bytes = bytes, hops = hops, ns = meas[key],
      cycles = meas[key] * dev.clock_khz / 1e6 }
    say("  %-5s %10d bytes  %7.1f ns  %6.0f cycles", name, bytes, meas[key], raw.latency[name].cycles)
    nxt:free()
  end
end

-- Issue rates of the arithmetic pipes -----------------------------------------

local ISSUE = [[
#define STEP(x) %s
__global__ void %s(%s *out, int iters, %s a, %s b) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  %s x0 = t, x1 = t + 1, x2 = t + 2, x3 = t + 3, x4 = t + 4, x5 = t + 5, x6 = t + 6, x7 = t + 7;
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int u = 0; u < 4; u++) { STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5); STEP(x6); STEP(x7); }
  }
  out[t] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}]]

local U32 = 0xffffffff
-- key, C type, dtype, C step, PTX instruction that must appear 32 times a
-- loop, counted ops per step, iterations, a, b, the step in Lua.
local PIPES = {
  { "fp32_ginst_s", "float", "f32", "x = fmaf(x, a, b)", "fma.rn.f32", 1, 2048, 0.999, 0.001,
    function(x, a, b) return mb.f32(x * a + b) end, 1e-5 },
  { "fp64_ginst_s", "double", "f64", "x = fma(x, a, b)", "fma.rn.f64", 1, 1024, 0.999, 0.001,
    function(x, a, b) return x * a + b end, 1e-12 },
  -- + b keeps x near sin's fixed point 1.93, where errors shrink each step.
  { "sfu_ginst_s", "float", "f32", "x = __sinf(x) + b", "sin.approx.f32", 1, 256, 0, 1,
    function(x, _, b) return mb.f32(math.sin(x) + b) end, 1e-4 },
  -- a and b are parameters: with literal constants the compiler folds two steps into one.
  { "int_ginst_s", "unsigned", "u32", "x = x * a + b", "mad.lo.s32", 1, 1024, 1664525, 1013904223,
    function(x, a, b) return (x * a + b) & U32 end, 0 },
  { "alu_ginst_s", "unsigned", "u32", "x = (x ^ (x >> 7)) + a", "xor.b32", 3, 1024, 2654435769, 0,
    function(x, a) return ((x ~ (x >> 7)) + a) & U32 end, 0 },
}

-- What thread t's out holds after `steps` steps of every accumulator.
local function issue_ref(p, t, steps)
  local step, a, b = p[10], p[8], p[9]
  if p[2] == "float" then a, b = mb.f32(a), mb.f32(b) end
  local sum
  for k = 0, 7 do
    local x = t + k
    if p[2] == "float" then x = mb.f32(x) end
    for _ = 1, steps do x = step(x, a, b) end
    if not sum then sum = x
    elseif p[2] == "unsigned" then sum = (sum + x) & U32
    elseif p[2] == "float" then sum = mb.f32(sum + x)
    else sum = sum + x end
  end
  return sum
end

local function issue()
  say("issue rates (%d blocks of 256)", SMS * 16)
  local grid, threads = SMS * 16, SMS * 16 * 256
  raw.issue = {}
  for _, p in ipairs(PIPES) do
    local key, T = p[1], p[2]
    local k = cuda.kernel(string.format(ISSUE, p[4], key:gsub("_ginst_s", "_issue"), T, T, T, T))
    local _, count = k:ptx():gsub(p[5]:gsub("%.", "%%."), "")
    check(key, count >= 32, string.format("%d %s in the PTX, expected at least 32", count, p[5]))
    local iters = math.max(4, p[7] // Q) -- 16 steps at least: sfu's x reaches its fixed point
    local out = cuda.array(threads, p[3])
    k[{grid, 256}](out, iters, p[8], p[9])
    for _, t in ipairs({ 0, threads - 1 }) do near(key, out[t], issue_ref(p, t, iters * 4), p[11]) end
    local ops = threads * iters * 32 * p[6]
    local tm = ms(function() k[{grid, 256}](out, iters, p[8], p[9]) end)
    meas[key] = ops / 32 / (tm * 1e6) -- G warp instructions a second
    raw.issue[key] = { ms = tm, warp_insts = ops / 32, ptx_count = count, iters = iters }
    say("  %-14s %8.1f G warp inst/s  (%s)", key, meas[key], p[4])
    out:free()
  end
end

-- Shared memory wavefronts and L1 sectors ------------------------------------

-- Each lane loads p[u * STRIDE], u = 0..LOADS-1, every iteration. The data
-- never changes, so ptxas hoists loads of a fixed address out of the loop (an
-- empty asm with a memory clobber stops NVVM, not ptxas: the first H200 run
-- measured 2.7 wavefronts a clock per SM, over the hardware's 1). Hence p
-- moves by a term that is always 0 but depends on the last iteration's sum,
-- which no compiler can hoist; it costs a few ALU instructions an iteration.
local LOADS_SRC = [[
__global__ void %s(const float *g, float *out, int iters) {
  __shared__ float s[2048];
  for (int j = threadIdx.x; j < 2048; j += blockDim.x) s[j] = j %% 5;
  __syncthreads();
  const float *p = %s;
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int u = 0; u < %d; u += 8) {
      c0 += p[u * %d]; c1 += p[(u + 1) * %d]; c2 += p[(u + 2) * %d]; c3 += p[(u + 3) * %d];
      c4 += p[(u + 4) * %d]; c5 += p[(u + 5) * %d]; c6 += p[(u + 6) * %d]; c7 += p[(u + 7) * %d];
    }
    p += __float_as_int(c7) >> 31; // 0: c7 sums non-negative numbers
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7;
}]]

-- key, base pointer, loads per iteration, stride, iterations, units per warp load,
-- the element index lane l's load u reads (for the check).
local LOADS = {
  { "shared_wf_s", "s + threadIdx.x", 32, 32, 512, 1, function(t, u) return t + 32 * u end },
  { "shared_conflict32_wf_s", "s + (threadIdx.x & 31) * 32", 32, 1, 16, 32,
    function(t, u) return (t & 31) * 32 + u end },
  -- Lanes 32 bytes apart: 32 sectors a request, all in a 16 KiB array that L1 keeps.
  { "l1_sector_s", "g + (threadIdx.x & 31) * 8", 16, 256, 128, 32,
    function(t, u) return (t & 31) * 8 + 256 * u end },
}

local function loads()
  say("shared-memory wavefronts and L1 sectors")
  local grid, threads = SMS * 16, SMS * 16 * 256
  local g = {}
  for j = 1, 4096 do g[j] = (j - 1) % 5 end
  local garr, out = cuda.array(g), cuda.array(threads)
  raw.loads = {}
  for _, l in ipairs(LOADS) do
    local key, n, st = l[1], l[3], l[4]
    local k = cuda.kernel(string.format(LOADS_SRC, key:gsub("_s$", ""), l[2], n, st, st, st, st, st, st, st, st))
    local iters = math.max(1, l[5] // Q)
    k[{grid, 256}](garr, out, iters)
    for _, t in ipairs({ 0, 37, threads - 1 }) do
      local want = 0
      for u = 0, n - 1 do want = want + (l[7](t % 256, u)) % 5 end
      near(key, out[t], want * iters)
    end
    local tm = ms(function() k[{grid, 256}](garr, out, iters) end)
    local units = threads / 32 * iters * n * l[6]
    meas[key] = units / (tm / 1000)
    raw.loads[key] = { ms = tm, units = units, iters = iters }
    say("  %-24s %10.4g /s", key, meas[key])
  end
  garr:free()
  out:free()
end

-- Atomics ---------------------------------------------------------------------

local function atomics()
  say("atomics")
  local m = cuda.module[[
__global__ void one(float *d, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d, 1.0f); }
__global__ void per_warp(float *d, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d + (i >> 5), 1.0f); }
__global__ void distinct(float *d, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d + i, 1.0f); }
__global__ void bins256(int *d, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d + (i & 255), 1); }
]]
  local n = 10000000 // Q
  local grid = (n + 255) // 256
  local function run(key, k, d, idx, want)
    k[{grid, 256}](d, n)
    for j, i in ipairs(idx) do near(key, d[i], want[j]) end
    local t = ms(function() k[{grid, 256}](d, n) end)
    d:free()
    return t
  end
  local lastw = (n - 1) >> 5
  meas.atom_same_ns = run("atom_same_ns", m.one, cuda.zeros(1), { 0 }, { n }) * 1e6 / n
  meas.atom_warp_same_ns = run("atom_warp_same_ns", m.per_warp, cuda.zeros(lastw + 1), { 0, lastw },
    { 32, n - 32 * lastw }) * 1e6 / n
  meas.atom_distinct_gops = n / (run("atom_distinct_gops", m.distinct, cuda.zeros(n), { 0, n - 1 }, { 1, 1 }) * 1e6)
  meas.atom_bins256_gops = n / (run("atom_bins256_gops", m.bins256, cuda.zeros(256, "i32"), { 0, 255 },
    { (n - 1) // 256 + 1, (n - 256) // 256 + 1 }) * 1e6)
  say("  one address %.3g ns/op, one per warp %.3g ns/op, distinct %.3g Gops/s, 256 bins %.3g Gops/s",
    meas.atom_same_ns, meas.atom_warp_same_ns, meas.atom_distinct_gops, meas.atom_bins256_gops)
end

-- Copies between host and device ----------------------------------------------

local function copies()
  say("copies (cudalab's copyfrom / copyto)")
  local n = 64 * MiB // Q
  local src, dst = cuda.rand(n, "f32", 3), cuda.array(n)
  local idx = { 0, 12345 % n, n - 1 }
  local want = {}
  for _, i in ipairs(idx) do want[i] = src[i] end
  for _, c in ipairs({ { "pageable", cuda.host(n) }, { "pinned", cuda.host(n, "f32", { pinned = true }) } }) do
    local h = c[2]
    local t = ms(function() src:copyto(h) end)
    samples_equal("d2h_" .. c[1] .. "_gbs", h, want, idx)
    meas["d2h_" .. c[1] .. "_gbs"] = gbs(n * 4, t)
    dst:fill(0)
    t = ms(function() dst:copyfrom(h) end)
    samples_equal("h2d_" .. c[1] .. "_gbs", dst, want, idx)
    meas["h2d_" .. c[1] .. "_gbs"] = gbs(n * 4, t)
    h:free()
  end
  -- Pageable copies go through the driver's staging buffers and their rate moves with the size
  -- and from run to run (9 to 14 GB/s host to device here); the model takes the median of three
  -- sizes, which are not the validation's 40 MB.
  for _, dir in ipairs({ "h2d", "d2h" }) do
    local rates = {}
    for _, mib in ipairs({ 8, 32, 128 }) do
      local k = mib * MiB // 4 // Q
      local dv, hv = cuda.array(k), cuda.host(k)
      local t = ms(function() if dir == "h2d" then dv:copyfrom(hv) else dv:copyto(hv) end end)
      rates[#rates + 1] = gbs(k * 4, t)
      dv:free(); hv:free()
    end
    raw[dir .. "_pageable_gbs_by_size"] = { sizes_mib = { 8, 32, 128 }, gbs = rates }
    table.sort(rates)
    meas[dir .. "_pageable_gbs"] = rates[2]
  end
  local small, hsmall = cuda.array(1024), cuda.host(1024, "f32", { pinned = true })
  meas.copy_small_us = ms(function() small:copyfrom(hsmall) end) * 1000
  src:free()
  dst:free()
  local nd = GiB // 4 // Q
  local a, b = cuda.rand(nd, "f32", 5), cuda.array(nd)
  local t = ms(function() b:copyfrom(a) end)
  samples_equal("d2d_gbs", b, { [0] = a[0], [nd - 1] = a[nd - 1] }, { 0, nd - 1 })
  meas.d2d_gbs = gbs(2 * nd * 4, t)
  say("  h2d %.1f / %.1f GB/s, d2h %.1f / %.1f GB/s (pageable / pinned), 4 KiB %.1f us, d2d %.0f GB/s",
    meas.h2d_pageable_gbs, meas.h2d_pinned_gbs, meas.d2h_pageable_gbs, meas.d2h_pinned_gbs,
    meas.copy_small_us, meas.d2d_gbs)
end

-- Main --------------------------------------------------------------------------

local machine = string.format("%s, %d SMs, driver %s", dev.name, SMS, tostring(dev.driver_version))
say("calibrating on %s (%s)%s", machine, cuda.backend(), quick and ", --quick: sizes / 100" or "")
local t0 = os.clock()
-- --only: start from what OUTFILE holds, so the groups not run keep their figures (and their
-- failed checks, unless this run measured the figure again).
local old_failed = {}
if only then
  local ok, old = pcall(dofile, outfile)
  if ok and type(old) == "table" then
    meas, raw, old_failed = old.measurements or {}, old.raw or {}, old.failed or {}
  end
end
local function run(g) return not only or only[g] end
if run("launches") then launches() end
if run("memory") then
  local mem = cuda.module(MEM)
  local B, n4 = dram(mem)
  l2(mem, B, n4)
  B:free()
end
if run("latency") then latency() end
if run("chains") then dofile(here .. "/chains.lua")(mb, meas, raw, Q) end
if run("issue") then issue() end
if run("loads") then loads() end
if run("atomics") then atomics() end
if run("structure") then dofile(here .. "/structure.lua")(mb, meas, raw, Q) end
local probes = {}
for _, g in ipairs({ "atomic_slices", "atomic_repeats", "scattered_loads", "partial_writes" }) do
  if run(g) then probes[#probes + 1] = g end
end
if #probes > 0 then dofile(here .. "/contention.lua")(mb, meas, raw, Q, probes) end
if run("copies") then copies() end

local kept_values = raw.failed_values or {}
raw.failed_values = {}
for k in pairs(mb.failed) do
  raw.failed_values[k], meas[k] = meas[k], nil
end
for k, why in pairs(old_failed) do
  if meas[k] == nil and not mb.failed[k] then
    mb.failed[k], raw.failed_values[k] = why, kept_values[k]
  end
end
mb.write(outfile, { date = os.date("%Y-%m-%d"), machine = machine, clock_khz = dev.clock_khz,
  backend = cuda.backend(), quick = quick or nil, measurements = meas, raw = raw, failed = mb.failed })
print()
mb.print_table(meas)
local nf = 0
for k, why in pairs(mb.failed) do nf = nf + 1 print("  FAILED " .. k .. ": " .. why) end
say("%d measurements, %d failed checks, written to %s (%.0f s of host CPU)", (function()
  local c = 0 for _ in pairs(meas) do c = c + 1 end return c end)(), nf, outfile, os.clock() - t0)
