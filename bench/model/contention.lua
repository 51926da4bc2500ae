-- contention.lua: calibration runs for what queues inside the memory system rather than what
-- streams through it: how the L2 spreads atomics over its slices, how a warp's load waits for
-- the slowest of its lanes' DRAM accesses, and what a partly written sector costs.
-- Loaded by calibrate.lua (group names "atomic_slices", "atomic_repeats", "scattered_loads",
-- "partial_writes");
-- bench/model/fit.lua reads the figures from raw.
--
-- The kernels are the project's own probes, each varying one thing:
--   lines:   every warp sends one request to one of nlines lines `stride` ints apart, with
--            `lanes` active lanes `step` ints apart in it. Two lines at a growing distance show
--            the granule the L2 hashes to a slice; a growing run of adjacent lines shows how
--            many slices work at once; the lanes show what one request costs a slice.
--   fanout:  every lane its own line (32 requests per warp instruction) over nlines lines.
--   repeats: every request on one line, its lanes m to an address (32/m addresses): what each
--            further lane on an address costs when there are 2, 4, ... 32 of them.
--   chase:   k lanes of one warp per SM each follow a pseudo-random cycle (an LCG stored as a
--            table), so each step is a dependent load of k unrelated addresses.
--   strided: 4M int stores `stride` ints apart: from whole sectors to one int per sector.
return function(mb, meas, raw, Q, want)
  local ms, near = mb.ms, mb.near
  local SRC = [[
extern "C" __global__ void lines(int *base, int nlines, long long stride, int lanes, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = i & 31;
  if (lane >= lanes) return;
  atomicAdd(base + (long long)((i >> 5) % nlines) * stride + lane * step, 1);
}
extern "C" __global__ void fanout(int *base, int nlines, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(base + (long long)(i % nlines) * stride, 1);
}
extern "C" __global__ void repeats(int *base, int m, int fp) {
  int lane = threadIdx.x & 31;
  if (fp) atomicAdd((float *)base + lane / m, 1.0f);
  else atomicAdd(base + lane / m, 1);
}
extern "C" __global__ void lcg_init(unsigned *next, unsigned mask) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i <= mask;
       i += (long long)gridDim.x * blockDim.x)
    next[i] = ((unsigned)i * 1103515245u + 12345u) & mask;
}
extern "C" __global__ void chase(const unsigned *next, unsigned *end, unsigned mask, int k,
                                 int steps) {
  if (threadIdx.x >= k) return;
  unsigned p = (blockIdx.x * 32 + threadIdx.x) * 2654435761u & mask;
  for (int s = 0; s < steps; s++) p = next[p];
  end[blockIdx.x * 32 + threadIdx.x] = p;
}
extern "C" __global__ void strided(int *out, long long stride, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[(long long)i * stride] = i;
}
]]
  local m = cuda.module(SRC)
  local N = (1 << 22) // Q // 256 * 256 -- threads per atomic probe: 131072 warps
  local WARPS = N // 32

  local function lines(nlines, stride, lanes, step)
    local bins = cuda.zeros((nlines - 1) * stride + 32, "i32")
    local k = m.lines[{ N // 256, 256 }]
    local t = ms(function() bins:fill(0) k(bins, nlines, stride, lanes, step) end)
    near("atomic_slices", bins[0], (WARPS + nlines - 1) // nlines)
    bins:free()
    return t
  end

  local function list(t)
    local out = {}
    for i, v in ipairs(t) do out[i] = string.format("%.4g", v) end
    return table.concat(out, " ")
  end

  local groups = {}

  function groups.atomic_slices()
    print("atomic slices: two lines apart, runs of adjacent lines, lanes per request, fan-out")
    local r = { n = N, source = SRC }
    r.one_line_ms = lines(1, 32, 32, 1)
    r.pair_bytes, r.pair_ms = { 128, 256, 512, 1024, 2048, 4096, 16384, 65536, 1 << 20 }, {}
    for i, d in ipairs(r.pair_bytes) do r.pair_ms[i] = lines(2, d // 4, 32, 1) end
    r.run_lines, r.run_ms = { 1, 2, 4, 8, 16, 32, 64, 128, 512, 2048, 8192 }, {}
    for i, l in ipairs(r.run_lines) do r.run_ms[i] = lines(l, 32, 32, 1) end
    r.lanes, r.lanes_one_ms, r.lanes_spread_ms = { 1, 2, 4, 8, 16, 32 }, {}, {}
    for i, l in ipairs(r.lanes) do
      r.lanes_one_ms[i] = lines(1, 32, l, 1)
      r.lanes_spread_ms[i] = lines(1024, 32 * 64, l, 1) -- 1024 lines 8 KiB apart
    end
    r.sector_lanes, r.sector_ms = { 1, 2, 4 }, {} -- lanes in different sectors of one line
    for i, l in ipairs(r.sector_lanes) do r.sector_ms[i] = lines(1, 32, l, 8) end
    r.fanout_lines, r.fanout_ms = { 32, 256, 1024, 8192, 65536 }, {}
    for i, l in ipairs(r.fanout_lines) do
      local bins = cuda.zeros(l * 32, "i32")
      local k = m.fanout[{ N // 256, 256 }]
      r.fanout_ms[i] = ms(function() bins:fill(0) k(bins, l, 32) end)
      near("atomic_slices", bins[0], (N + l - 1) // l)
      bins:free()
    end
    raw.atomic_slices = r
    print(string.format("  one line %.4g ms; pairs %s ms", r.one_line_ms, list(r.pair_ms)))
    print(string.format("  runs of lines %s ms", list(r.run_ms)))
    print(string.format("  lanes on one line %s; on 1024 lines %s; sectors %s ms",
      list(r.lanes_one_ms), list(r.lanes_spread_ms), list(r.sector_ms)))
    print(string.format("  fan-out %s ms", list(r.fanout_ms)))
  end

  function groups.atomic_repeats()
    print("atomic repeats: one line, m lanes of a request on each address")
    local r = { n = N, m = { 1, 2, 4, 8, 16, 32 }, int_ms = {}, float_ms = {} }
    local bins = cuda.zeros(32, "i32")
    for i, mm in ipairs(r.m) do
      for fp, out in pairs({ [0] = r.int_ms, [1] = r.float_ms }) do
        local k = m.repeats[{ N // 256, 256 }]
        out[i] = ms(function() bins:fill(0) k(bins, mm, fp) end)
        if fp == 0 then near("atomic_repeats", bins[0], WARPS * mm) end
      end
    end
    bins:free()
    raw.atomic_repeats = r
    print(string.format("  int %s ms; float %s ms", list(r.int_ms), list(r.float_ms)))
  end

  function groups.scattered_loads()
    print("scattered loads: k lanes of a warp chase unrelated addresses")
    local r = { mib = { 16, 256, 2048 }, k = { 1, 2, 4, 16 }, steps = 1024 // Q, ms = {} }
    local sms = cuda.device().sm_count
    local ends = cuda.zeros(sms * 32, "u32")
    for i, mib in ipairs(r.mib) do
      local n = mib * (1 << 18) // Q
      local next_ = cuda.zeros(n, "u32")
      m.lcg_init[{ 1024, 256 }](next_, n - 1)
      r.ms[i] = {}
      for j, k in ipairs(r.k) do
        r.ms[i][j] = ms(function() m.chase[{ sms, 32 }](next_, ends, n - 1, k, r.steps) end)
        local p = (32 * 2654435761) & (n - 1) -- block 1's lane 0
        for _ = 1, r.steps do p = (p * 1103515245 + 12345) & (n - 1) end
        near("scattered_loads", ends[32], p)
      end
      next_:free()
    end
    ends:free()
    raw.scattered_loads = r
    for i, mib in ipairs(r.mib) do
      print(string.format("  %d MiB, k = 1 2 4 16: %s ms", mib, list(r.ms[i])))
    end
  end

  function groups.partial_writes()
    print("partial writes: 4M int stores, stride 1 to 256 ints")
    local n = (1 << 22) // Q
    local r = { n = n, strides = { 1, 2, 8, 16, 32, 128, 256 }, ms = {} }
    for i, s in ipairs(r.strides) do
      local out = cuda.zeros(n * s, "i32")
      r.ms[i] = ms(function() m.strided[{ (n + 255) // 256, 256 }](out, s, n) end)
      near("partial_writes", out[(n - 1) * s], n - 1)
      out:free()
    end
    raw.partial_writes = r
    print(string.format("  %s ms", list(r.ms)))
  end

  for _, g in ipairs(want) do
    if groups[g] then groups[g]() end
  end
end
