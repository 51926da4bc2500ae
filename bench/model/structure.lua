-- structure.lua: the calibration runs that fix the timing model's structural constants, the
-- ones no single rate gives: how long a block holds its slot beyond its warps' work
-- (block_cycles), how much a block of many warps waits for its slowest (drain), and how DRAM
-- latency grows as its bandwidth fills (queue). Also the integer atomic rates on one address and
-- on one line.
-- Loaded by calibrate.lua; bench/model/fit.lua fits the constants to these runs by replaying
-- the same kernels on the simulator.
--
-- The kernels are plain copies, deliberately unlike the validation set's (bench/model/points.lua):
--   copy_blocks: one float per thread over 64 MiB, blocks of 64 to 1024 threads;
--   copy_grids:  a grid-stride float copy with 256-thread blocks, from 1 block per SM to 16.
-- Each returns {sizes, ms} in raw; the kernel source is kept too, so fit.lua runs the same one.
return function(mb, meas, raw, Q)
  local ms, near = mb.ms, mb.near
  local SRC = [[
extern "C" __global__ void copy1(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }
extern "C" __global__ void copy_gs(const float *a, float *b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) b[i] = a[i]; }
extern "C" __global__ void same_int(int *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d, 1); }
extern "C" __global__ void one_line(const int *idx, int *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(d + (idx[i] & 31), 1); }
]]
  print("structure: block slots, drain and DRAM queueing (float copies), integer atomics")
  local m = cuda.module(SRC)
  local n = (1 << 24) // Q
  local a, b = cuda.rand(n, "f32", 11), cuda.array(n)
  local blocks, grids = { 64, 128, 256, 512, 1024 }, { 1, 2, 4, 8, 16 }
  raw.structure = { source = SRC, n = n, blocks = blocks, grids = grids, blocks_ms = {}, grids_ms = {} }
  for i, bs in ipairs(blocks) do
    raw.structure.blocks_ms[i] = ms(function() m.copy1[{(n + bs - 1) // bs, bs}](a, b, n) end)
  end
  near("structure", b[n - 1], a[n - 1])
  local sms = cuda.device().sm_count
  for i, g in ipairs(grids) do
    b:fill(0)
    raw.structure.grids_ms[i] = ms(function() m.copy_gs[{sms * g, 256}](a, b, n) end)
    near("structure", b[n - 1], a[n - 1])
  end
  print(string.format("  copy one per thread (64..1024): %s ms", table.concat(raw.structure.blocks_ms, " ")))
  print(string.format("  grid-stride copy (1..16 blocks per SM): %s ms", table.concat(raw.structure.grids_ms, " ")))
  local na = 10000000 // Q
  local d = cuda.zeros(1, "i32")
  local t = ms(function() m.same_int[{(na + 255) // 256, 256}](d, na) end)
  -- A warp's lanes on one address combine into one operation: na / 32 of them, one after another.
  meas.atom_same_int_ns = t * 1e6 / (na / 32)
  print(string.format("  integer atomicAdd, one address: %.3f ns per warp operation", meas.atom_same_int_ns))
  -- The 32 addresses of one line, each lane its own, taken from data (so the compiler cannot
  -- merge lanes): no operation follows one on its own address, so this is a line's rate.
  local idx, d4 = cuda.arange(na, "i32"), cuda.zeros(32, "i32")
  t = ms(function() m.one_line[{(na + 255) // 256, 256}](idx, d4, na) end)
  meas.atom_line_ns = t * 1e6 / na
  d4:fill(0)
  m.one_line[{(na + 255) // 256, 256}](idx, d4, na)
  near("atom_line_ns", d4[31], (na - 32) // 32 + 1)
  print(string.format("  integer atomicAdd, the 32 addresses of one line: %.3f ns per operation", meas.atom_line_ns))
  a:free(); b:free(); d:free(); idx:free(); d4:free()
end
