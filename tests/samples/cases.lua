-- cases.lua: NVIDIA's cuda-samples kernels (tests/samples/*/, README.md there) launched as each
-- sample's host code launches them, from inputs made here deterministically, with a CPU
-- reference for every result. Shared by tests/samples/samples.lua (the simulator, or the GPU
-- under make test-gpu) and tests/gpu/samples_vs_gpu.lua (both, bit for bit and in time).
--
-- A sample's .cu file keeps its host code (main, cudaMalloc, <<<...>>>): every file is loaded
-- unchanged with {device_only = true}, which sets that code aside (m:set_aside() lists it) and
-- keeps every other line where it was, so that messages name the file's own line numbers. A
-- template kernel is instantiated by name, as the sample's host launch instantiates it.
--
-- A case is {sample, kernel, setup(), launches, outputs(st), check(st), ordered}: setup makes
-- the inputs, launches is a list of {kernel name, fn(st)} run in order, outputs gives the
-- arrays compared bit for bit with the GPU (only what does not depend on the order of
-- atomics), and check raises unless the results match the CPU reference.
local C = {}
local DIR = "tests/samples/"

local modules = {}
-- The module of a sample file (or the kernel `name` instantiates), one per backend, as
-- tests/gpu/ switches between them. device_only sets the file's host code aside (its host
-- functions and variables; empty stand-ins for helper_cuda.h and the C library's host
-- headers) and compiles the rest with -default-device, for the host declarations in the
-- samples' headers; -I names the file's folder for its own "x.h" includes.
function C.load(path, name)
  local key = cuda.backend() .. ":" .. path .. (name or "")
  if modules[key] then return modules[key] end
  local opts = {options = {"-I" .. DIR .. path:match("^(.*)/")}, name = name, device_only = true}
  local m = name and cuda.kernel(DIR .. path, opts) or cuda.module(DIR .. path, opts)
  modules[key] = m
  return m
end

-- Deterministic inputs: a 32-bit LCG (Numerical Recipes), so every backend and run sees the
-- same numbers without the host's libc.
local function lcg(seed)
  local s = seed & 0xffffffff
  return function()
    s = (s * 1664525 + 1013904223) & 0xffffffff
    return s
  end
end

-- n floats in [lo, hi) as an f32 host buffer (so reading it back gives the rounded values).
local function floats(n, seed, lo, hi)
  local r, h = lcg(seed), cuda.host(n, "f32")
  for i = 0, n - 1 do h[i] = lo + (hi - lo) * (r() / 4294967296.0) end
  return h
end

-- n unsigned integers below `limit` (2^32 when nil) as a u32 host buffer.
local function uints(n, seed, limit)
  local r, h = lcg(seed), cuda.host(n, "u32")
  for i = 0, n - 1 do h[i] = limit and r() % limit or r() end
  return h
end

local function fail(fmt, ...) error(string.format(fmt, ...), 2) end

-- Exact comparison of an integer array with a Lua table (0-based indices in messages).
local function same_ints(what, got, want)
  local g = got:tolist()
  if #g ~= #want then fail("%s: %d elements, want %d", what, #g, #want) end
  for i = 1, #want do
    if g[i] ~= want[i] then fail("%s[%d] = %s, want %s", what, i - 1, g[i], want[i]) end
  end
end

-- Relative L2 error of a float array against a reference table, as the samples' checks use.
local function rel_l2(got, want)
  local g = got:tolist()
  local num, den = 0, 0
  for i = 1, #want do
    num = num + (g[i] - want[i]) ^ 2
    den = den + want[i] ^ 2
  end
  return math.sqrt(num / math.max(den, 1e-300))
end

local function close(what, got, want, tol)
  local e = rel_l2(got, want)
  if not (e <= tol) then fail("%s: relative L2 error %.3g, over %.3g", what, e, tol) end
end

C.cases = {}
-- A case: sample, kernel, setup(), launches {{name, fn(s)}, ...}, outputs(s), check(s),
-- ordered (false where atomics decide where values land), and once = true where a launch must
-- not be run again on the arrays it left (a counter it advances decides where it writes, so a
-- second run writes past the end): samples_vs_gpu.lua times such launches on fresh arrays.
local function case(t) C.cases[#C.cases + 1] = t end

-- vectorAdd: 50,000 elements as the sample, 256 threads a block.
do
  local n = 50000
  case{sample = "vectorAdd", ordered = true,
    setup = function()
      local m = C.load("vectorAdd/vectorAdd.cu")
      local a, b = floats(n, 1, 0, 1), floats(n, 2, 0, 1)
      return {k = m.vectorAdd, ha = a, hb = b, a = cuda.array(a), b = cuda.array(b),
        c = cuda.array(n)}
    end,
    launches = {{"vectorAdd", function(s) s.k[{(n + 255) // 256, 256}](s.a, s.b, s.c, n) end}},
    outputs = function(s) return {s.c} end,
    check = function(s)
      local c = s.c:host()
      for i = 0, n - 1 do
        local want = cuda.host({s.ha[i] + s.hb[i]}, "f32")[0] -- the sum rounded to f32
        if c[i] ~= want then fail("C[%d] = %.9g, want %.9g", i, c[i], want) end
      end
    end}
end

-- simpleAtomicIntrinsics: 64 blocks of 256 threads on 11 counters, the header unchanged.
-- atomicExch and atomicCAS leave a value that depends on the order (the sample checks only that
-- it is a thread index); the other nine are the same in every order.
do
  local len = 64 * 256
  case{sample = "simpleAtomicIntrinsics", ordered = false,
    setup = function()
      local m = C.load("simpleAtomicIntrinsics/simpleAtomicIntrinsics_kernel.cuh")
      local init = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0xff}
      return {k = m.testKernel, d = cuda.array(init, "i32")}
    end,
    launches = {{"testKernel", function(s) s.k[{64, 256}](s.d) end}},
    outputs = function(s)
      local g = s.d:tolist()
      table.remove(g, 8); table.remove(g, 3) -- CAS (7) and Exch (2)
      return {cuda.host(g, "i32")}
    end,
    check = function(s)
      local g = s.d:tolist()
      local inc, dec, xor, band = 0, 0, 0xff, 0xff
      for i = 0, len - 1 do
        band = band & (2 * i + 7)
        inc = inc >= 17 and 0 or inc + 1
        dec = (dec == 0 or dec > 137) and 137 or dec - 1
        xor = xor ~ i
      end
      local want = {10 * len, -10 * len, nil, len - 1, 0, inc, dec, nil, band, -1, xor}
      for i = 1, 11 do
        if i == 3 or i == 8 then
          if not (g[i] >= 0 and g[i] < len) then
            fail("g_odata[%d] = %d: not a thread index", i - 1, g[i])
          end
        elseif g[i] ~= want[i] then
          fail("g_odata[%d] = %d, want %d", i - 1, g[i], want[i])
        end
      end
    end}
end

-- simpleVoteIntrinsics: the sample's pattern over 4 warps, one block; the header unchanged.
do
  local size = 4 * 32
  local function pattern()
    local p = {}
    for i = 0, size - 1 do
      if i < size // 4 then p[i + 1] = 0
      elseif i < 4 * size // 8 then p[i + 1] = (i & 1) == 1 and i or 0
      elseif i < 3 * size // 4 then p[i + 1] = (i & 1) == 1 and 0 or i
      else p[i + 1] = 0xffffffff end
    end
    return p
  end
  local function warps(fn)
    local p, want = pattern(), {}
    for w = 0, 3 do
      local v = fn(p, w * 32)
      for l = 1, 32 do want[w * 32 + l] = v and 1 or 0 end
    end
    return want
  end
  local function vote(kernel, fn)
    case{sample = "simpleVoteIntrinsics", kernel = kernel, ordered = true,
      setup = function()
        local m = C.load("simpleVoteIntrinsics/simpleVote_kernel.cuh")
        return {k = m[kernel], input = cuda.array(pattern(), "u32"),
          result = cuda.array(size, "u32")}
      end,
      launches = {{kernel, function(s) s.k[{1, size}](s.input, s.result, size) end}},
      outputs = function(s) return {s.result} end,
      check = function(s) same_ints("result", s.result, warps(fn)) end}
  end
  vote("VoteAnyKernel1", function(p, b)
    for l = 1, 32 do if p[b + l] ~= 0 then return true end end
    return false
  end)
  vote("VoteAllKernel2", function(p, b)
    for l = 1, 32 do if p[b + l] == 0 then return false end end
    return true
  end)
  case{sample = "simpleVoteIntrinsics", kernel = "VoteAnyKernel3", ordered = true,
    setup = function()
      local m = C.load("simpleVoteIntrinsics/simpleVote_kernel.cuh")
      return {k = m.VoteAnyKernel3, info = cuda.array(32 * 3 * 3, "u8")}
    end,
    launches = {{"VoteAnyKernel3", function(s) s.k[{1, 32 * 3}](s.info, 32) end}},
    outputs = function(s) return {s.info} end,
    check = function(s)
      -- the sample's checkResultsVoteAnyKernel3, over the first 3 x 96 flags
      local want = {}
      for i = 0, 3 * 96 - 1 do
        local tx, j = i // 3, i % 3
        local v
        if j == 0 then v = tx >= 32 -- any: warps 2 and 3
        elseif j == 1 then v = tx >= 48
        else v = tx >= 64 end -- all: warp 3 only
        want[i + 1] = v and 1 or 0
      end
      same_ints("info", s.info, want)
    end}
end

-- BlackScholes: the header unchanged; 2 x 40,000 options (the sample: 2 x 4,000,000), 128
-- threads a block, checked as the sample checks, in double precision.
do
  local optN = 80000
  local R, V = 0.02, 0.30
  local function cnd(d)
    local A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    local K = 1.0 / (1.0 + 0.2316419 * math.abs(d))
    local c = 0.39894228040143267793994605993438 * math.exp(-0.5 * d * d) *
      (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return d > 0 and 1.0 - c or c
  end
  case{sample = "BlackScholes", ordered = true,
    setup = function()
      local m = C.load("BlackScholes/BlackScholes_kernel.cuh")
      local S, X, T = floats(optN, 3, 5, 30), floats(optN, 4, 1, 100), floats(optN, 5, 0.25, 10)
      return {k = m.BlackScholesGPU, hS = S, hX = X, hT = T, S = cuda.array(S), X = cuda.array(X),
        T = cuda.array(T), call = cuda.array(optN), put = cuda.array(optN)}
    end,
    launches = {{"BlackScholesGPU", function(s)
      s.k[{(optN // 2 + 127) // 128, 128}](s.call, s.put, s.S, s.X, s.T, R, V, optN)
    end}},
    outputs = function(s) return {s.call, s.put} end,
    check = function(s)
      local call, sum_d, sum_r = s.call:host(), 0, 0
      for i = 0, optN - 1 do
        local S, X, T = s.hS[i], s.hX[i], s.hT[i]
        local sqrtT = math.sqrt(T)
        local d1 = (math.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
        local d2 = d1 - V * sqrtT
        local want = S * cnd(d1) - X * math.exp(-R * T) * cnd(d2)
        sum_d, sum_r = sum_d + math.abs(want - call[i]), sum_r + math.abs(want)
      end
      -- the sample passes at an L1 norm below 1e-6
      if not (sum_d / sum_r < 1e-6) then
        fail("call prices: L1 norm %.3g, over 1e-6", sum_d / sum_r)
      end
    end}
end

-- matrixMul: MatrixMulCUDA<32> as the sample launches it, on 128 x 128 by 128 x 256 (the
-- sample's default: 320 x 320 by 320 x 640, which -wA= -hA= -wB= -hB= change).
do
  local bs, hA, wA, wB = 32, 128, 128, 256
  case{sample = "matrixMul", kernel = "MatrixMulCUDA<32>", ordered = true,
    setup = function()
      local k = C.load("matrixMul/matrixMul.cu", "MatrixMulCUDA<32>")
      local A, B = floats(hA * wA, 6, -1, 1), floats(wA * wB, 7, -1, 1)
      return {k = k, hA = A, hB = B, A = cuda.array(A), B = cuda.array(B), C = cuda.array(hA * wB)}
    end,
    launches = {{"MatrixMulCUDA<32>", function(s)
      s.k[{{wB // bs, hA // bs}, {bs, bs}}](s.C, s.A, s.B, wA, wB)
    end}},
    outputs = function(s) return {s.C} end,
    check = function(s)
      local want = {}
      for r = 0, hA - 1 do
        for c = 0, wB - 1 do
          local acc = 0
          for k = 0, wA - 1 do acc = acc + s.hA[r * wA + k] * s.hB[k * wB + c] end
          want[r * wB + c + 1] = acc
        end
      end
      close("C", s.C, want, 1e-6)
    end}
end

-- transpose: every kernel of the sample on a 256 x 256 matrix (the sample: 1024 x 1024), grid
-- 8 x 8 of 32 x 16 threads as its host code computes them.
do
  local n, TILE, ROWS = 256, 32, 16
  local kernels = {"copy", "copySharedMem", "transposeNaive", "transposeCoalesced",
    "transposeNoBankConflicts", "transposeDiagonal", "transposeFineGrained",
    "transposeCoarseGrained"}
  for _, name in ipairs(kernels) do
    case{sample = "transpose", kernel = name, ordered = true,
      setup = function()
        local m = C.load("transpose/transpose.cu")
        local h = floats(n * n, 8, 0, 1000)
        return {k = m[name], h = h, i = cuda.array(h), o = cuda.array(n * n)}
      end,
      launches = {{name, function(s)
        s.k[{{n // TILE, n // TILE}, {TILE, ROWS}}](s.o, s.i, n, n)
      end}},
      outputs = function(s) return {s.o} end,
      check = function(s)
        local o, h = s.o:host(), s.h
        for y = 0, n - 1 do
          for x = 0, n - 1 do
            -- copy kernels copy; the fine- and coarse-grained ones transpose within or move
            -- whole tiles only, as the sample documents (it checks them against their own gold)
            local src
            if name == "copy" or name == "copySharedMem" then src = y * n + x
            elseif name == "transposeFineGrained" then
              src = (y // TILE * TILE + x % TILE) * n + (x // TILE * TILE + y % TILE)
            elseif name == "transposeCoarseGrained" then
              src = (x // TILE * TILE + y % TILE) * n + (y // TILE * TILE + x % TILE)
            else src = x * n + y end
            if o[y * n + x] ~= h[src] then
              fail("out[%d][%d] = %g, want %g", y, x, o[y * n + x], h[src])
            end
          end
        end
      end}
  end
end

-- reduction: the int kernels of the sample's default run (256 threads, the sample's grid for
-- each kernel), on 2^16 elements (the sample: 2^24) of (rand() & 0xFF); one pass, each block's
-- partial sum checked. Each template is instantiated by name, as reduce()'s switch does.
do
  local n, threads = 1 << 16, 256
  local function blocks(which)
    if which < 3 then return (n + threads - 1) // threads end
    return math.min(which >= 6 and 64 or math.huge, (n + threads * 2 - 1) // (threads * 2))
  end
  local kernels = {
    {"reduce0<int>", 0}, {"reduce1<int>", 1}, {"reduce2<int>", 2}, {"reduce3<int>", 3},
    {"reduce4<int, 256>", 4}, {"reduce5<int, 256>", 5}, {"reduce6<int, 256, true>", 6},
    {"reduce7<int, 256, true>", 7, ((threads // 32) + 1) * 4}, {"cg_reduce<int>", 8},
    {"multi_warp_cg_reduce<int, 256, 128>", 9, 2 * 4}}
  for _, kk in ipairs(kernels) do
    local name, which, smem = kk[1], kk[2], kk[3] or threads * 4
    local nb = blocks(which)
    case{sample = "reduction", kernel = name, ordered = true,
      setup = function()
        local k = C.load("reduction/reduction_kernel.cu", name)
        local h = uints(n, 9, 256)
        local d = cuda.array(n, "i32")
        d:copyfrom(cuda.host(h:tolist(), "i32"))
        return {k = k, h = h, i = d, o = cuda.array(nb, "i32")}
      end,
      launches = {{name, function(s) s.k[{nb, threads, smem}](s.i, s.o, n) end}},
      outputs = function(s) return {s.o} end,
      check = function(s)
        -- each block's share: kernels 0-2 one element a thread; 3-5 two; 6-9 a grid-stride
        -- loop; every element belongs to one block, so checking the blocks' shares is exact
        local want = {}
        for b = 1, nb do want[b] = 0 end
        local per = which < 3 and threads or 2 * threads
        for i = 0, n - 1 do
          local b
          if which < 6 then b = i // per
          elseif which == 8 then b = (i // threads) % nb -- cg_reduce strides by whole blocks
          elseif which == 9 then b = (i // (2 * threads)) % nb
          else b = (i // (2 * threads)) % nb end
          want[b + 1] = want[b + 1] + s.h[i]
        end
        same_ints("g_odata", s.o, want)
      end}
  end
end

-- histogram: histogram64 and histogram256 (partial histograms, then their merge) on 256 KiB of
-- random bytes (the sample: 64 MiB), with the sample's grids: 240 blocks of 192 threads for
-- 256 bins, one block of 64 threads per 64 x 252 words for 64 bins; merges of 256 threads.
do
  local bytes = 256 * 1024
  local function counts(h, bins)
    local want = {}
    for b = 1, bins do want[b] = 0 end
    for i = 0, bytes // 4 - 1 do
      local w = h[i]
      for j = 0, 3 do
        local v = (w >> (8 * j)) & 0xff
        if bins == 64 then v = v >> 2 end
        want[v + 1] = want[v + 1] + 1
      end
    end
    return want
  end
  local function hist(bins, file, kernel, merge, nparts, block)
    case{sample = "histogram", kernel = kernel .. " + " .. merge, ordered = true,
      setup = function()
        local m = C.load(file)
        local h = uints(bytes // 4, 10 + bins)
        return {k = m[kernel], mk = m[merge], h = h, d = cuda.array(h),
          part = cuda.array(nparts * bins, "u32"), out = cuda.array(bins, "u32")}
      end,
      launches = {
        {kernel, function(s)
          s.k[{nparts, block}](s.part, s.d, bytes // (bins == 64 and 16 or 4))
        end},
        {merge, function(s) s.mk[{bins, 256}](s.out, s.part, nparts) end}},
      outputs = function(s) return {s.out} end,
      check = function(s) same_ints("histogram", s.out, counts(s.h, bins)) end}
  end
  hist(256, "histogram/histogram256.cu", "histogram256Kernel",
    "mergeHistogram256Kernel", 240, 6 * 32)
  hist(64, "histogram/histogram64.cu", "histogram64Kernel",
    "mergeHistogram64Kernel", (bytes + 64 * 252 - 1) // (64 * 252), 64)
end

-- scan: scanExclusiveLarge's three kernels on 4 arrays of 8,192 uints (the sample: up to
-- 262,144 each), 256 threads a block.
do
  local batch, len, TB = 4, 8192, 256
  local total = batch * len
  case{sample = "scan", kernel = "scanExclusiveShared + scanExclusiveShared2 + uniformUpdate",
    ordered = true,
    setup = function()
      local m = C.load("scan/scan.cu")
      local h = uints(total, 11, 1024)
      return {m = m, h = h, src = cuda.array(h), dst = cuda.array(total, "u32"),
        buf = cuda.array(total // (4 * TB), "u32")}
    end,
    launches = {
      {"scanExclusiveShared", function(s)
        s.m.scanExclusiveShared[{total // (4 * TB), TB}](s.dst, s.src, 4 * TB) end},
      {"scanExclusiveShared2", function(s)
        s.m.scanExclusiveShared2[{(total // (4 * TB) + TB - 1) // TB, TB}](s.buf, s.dst, s.src,
          total // (4 * TB), len // (4 * TB)) end},
      {"uniformUpdate", function(s) s.m.uniformUpdate[{total // (4 * TB), TB}](s.dst, s.buf) end}},
    outputs = function(s) return {s.dst} end,
    check = function(s)
      local want = {}
      for a = 0, batch - 1 do
        local acc = 0
        for i = 0, len - 1 do
          want[a * len + i + 1] = acc
          acc = (acc + s.h[a * len + i]) & 0xffffffff
        end
      end
      same_ints("d_Dst", s.dst, want)
    end}
end

-- sortingNetworks: bitonicSort's kernels on 2 arrays of 4,096 keys with values (the sample:
-- 1 to 2^20 keys), ascending, 512 threads a block: bitonicSortShared1, then for size 2048 and
-- 4096 the global merges down to stride 1024 and a shared merge.
do
  local batch, len, LIMIT = 2, 4096, 1024
  local total = batch * len
  local launches = {{"bitonicSortShared1", function(s)
    s.m.bitonicSortShared1[{total // LIMIT, LIMIT // 2}](s.dk, s.dv, s.sk, s.sv) end}}
  local size = 2 * LIMIT
  while size <= len do
    local stride = size // 2
    while stride > 0 do
      local sz, st = size, stride
      if st >= LIMIT then
        launches[#launches + 1] = {"bitonicMergeGlobal", function(s)
          s.m.bitonicMergeGlobal[{total // 512, 256}](s.dk, s.dv, s.dk, s.dv, len, sz, st, 1) end}
      else
        launches[#launches + 1] = {"bitonicMergeShared", function(s)
          s.m.bitonicMergeShared[{total // LIMIT, LIMIT // 2}](s.dk, s.dv, s.dk, s.dv, len, sz, 1)
        end}
        break
      end
      stride = stride // 2
    end
    size = size * 2
  end
  case{sample = "sortingNetworks", kernel = "bitonicSort", ordered = true,
    setup = function()
      local m = C.load("sortingNetworks/bitonicSort.cu")
      local keys, vals = uints(total, 12), cuda.host(total, "u32")
      for i = 0, total - 1 do vals[i] = i end
      return {m = m, keys = keys, sk = cuda.array(keys), sv = cuda.array(vals),
        dk = cuda.array(total, "u32"), dv = cuda.array(total, "u32")}
    end,
    launches = launches,
    outputs = function(s) return {s.dk, s.dv} end,
    check = function(s)
      local k, v = s.dk:tolist(), s.dv:tolist()
      for a = 0, batch - 1 do
        local want = {}
        for i = 0, len - 1 do want[i + 1] = s.keys[a * len + i] end
        table.sort(want)
        for i = 1, len do
          local j = a * len + i
          if k[j] ~= want[i] then fail("array %d key %d = %d, want %d", a, i - 1, k[j], want[i]) end
          if s.keys[v[j]] ~= k[j] then
            fail("array %d value %d does not go with its key", a, i - 1)
          end
        end
      end
    end}
end

-- fastWalshTransform: fwtBatchGPU's kernels on 2^15 floats (the sample: 2^23): two radix-4
-- passes of fwtBatch2Kernel, then fwtBatch1Kernel on 2^11 elements a block; and modulateKernel
-- with the sample's grid of 128 x 256.
do
  local log2N, TN = 15, 256
  local N = 1 << log2N
  local launches, l2, M = {}, log2N, 1
  while l2 > 11 do
    local stride = (1 << l2) // 4
    launches[#launches + 1] = {"fwtBatch2Kernel", function(s)
      s.m.fwtBatch2Kernel[{{N // (4 * TN), 1}, TN}](s.d, s.d, stride) end}
    l2, M = l2 - 2, M * 4
  end
  launches[#launches + 1] = {"fwtBatch1Kernel", function(s)
    s.m.fwtBatch1Kernel[{M, (1 << l2) // 4, (1 << l2) * 4}](s.d, s.d, l2) end}
  case{sample = "fastWalshTransform", kernel = "fwtBatch2Kernel + fwtBatch1Kernel", ordered = true,
    setup = function()
      local m = C.load("fastWalshTransform/fastWalshTransform_kernel.cuh")
      local h = floats(N, 13, 0, 1)
      return {m = m, h = h, d = cuda.array(h)}
    end,
    launches = launches,
    outputs = function(s) return {s.d} end,
    check = function(s)
      local a = {}
      for i = 0, N - 1 do a[i] = s.h[i] end
      local half = 1
      while half < N do
        for base = 0, N - 1, 2 * half do
          for j = base, base + half - 1 do
            local x, y = a[j], a[j + half]
            a[j], a[j + half] = x + y, x - y
          end
        end
        half = half * 2
      end
      local want = {}
      for i = 0, N - 1 do want[i + 1] = a[i] end
      close("d_Data", s.d, want, 1e-6)
    end}
  case{sample = "fastWalshTransform", kernel = "modulateKernel", ordered = true,
    setup = function()
      local m = C.load("fastWalshTransform/fastWalshTransform_kernel.cuh")
      local a, b = floats(N, 14, -1, 1), floats(N, 15, -1, 1)
      return {m = m, ha = a, hb = b, a = cuda.array(a), b = cuda.array(b)}
    end,
    launches = {{"modulateKernel", function(s) s.m.modulateKernel[{128, 256}](s.a, s.b, N) end}},
    outputs = function(s) return {s.a} end,
    check = function(s)
      -- d_A[i] *= d_B[i] * (1 / N), each product rounded to f32 as the kernel rounds it
      local got, rN = s.a:host(), cuda.host({1.0 / N}, "f32")[0]
      for i = 0, N - 1 do
        local want = cuda.host({s.ha[i] * cuda.host({s.hb[i] * rN}, "f32")[0]}, "f32")[0]
        if got[i] ~= want then fail("d_A[%d] = %.9g, want %.9g", i, got[i], want) end
      end
    end}
end

-- convolutionSeparable: convolutionRowsKernel then convolutionColumnsKernel on a 256 x 128
-- image (the sample: 3072 x 3072), radius 8, grids of 2 x 32 blocks of 16 x 4 and 16 x 2 of
-- 16 x 8 as convolutionRowsGPU and convolutionColumnsGPU compute them. Kernel and image are
-- whole numbers below 16 as the sample's (rand() % 16), so every sum is exact in f32 and the
-- check is exact (the sample's: a relative L2 error below 1e-6).
do
  local W, H, R = 256, 128, 8
  local function digits(n, seed)
    local r, t = lcg(seed), {}
    for i = 1, n do t[i] = (r() >> 16) % 16 end
    return t
  end
  case{sample = "convolutionSeparable", kernel = "convolutionRowsKernel + convolutionColumnsKernel",
    ordered = true,
    setup = function()
      local m = C.load("convolutionSeparable/convolutionSeparable.cu")
      local kern, img = digits(2 * R + 1, 16), digits(W * H, 17)
      m:constant("c_Kernel", kern)
      return {m = m, kern = kern, img = img, src = cuda.array(img, "f32"),
        buf = cuda.array(W * H), dst = cuda.array(W * H)}
    end,
    launches = {
      {"convolutionRowsKernel", function(s)
        s.m.convolutionRowsKernel[{{W // (8 * 16), H // 4}, {16, 4}}](s.buf, s.src, W, H, W) end},
      {"convolutionColumnsKernel", function(s)
        s.m.convolutionColumnsKernel[{{W // 16, H // (8 * 8)}, {16, 8}}](s.dst, s.buf, W, H, W)
      end}},
    outputs = function(s) return {s.buf, s.dst} end,
    check = function(s)
      -- the sample's convolutionRowCPU and convolutionColumnCPU: taps outside the image are 0
      local k, rows, want = s.kern, {}, {}
      for y = 0, H - 1 do
        for x = 0, W - 1 do
          local acc = 0
          for j = -R, R do
            local d = x + j
            if d >= 0 and d < W then acc = acc + s.img[y * W + d + 1] * k[R - j + 1] end
          end
          rows[y * W + x + 1] = acc
        end
      end
      for y = 0, H - 1 do
        for x = 0, W - 1 do
          local acc = 0
          for j = -R, R do
            local d = y + j
            if d >= 0 and d < H then acc = acc + rows[d * W + x + 1] * k[R - j + 1] end
          end
          want[y * W + x + 1] = acc
        end
      end
      same_ints("rows", s.buf, rows)
      same_ints("d_Output", s.dst, want)
    end}
end

-- shfl_scan: shuffle_simple_test's three launches on 8,192 ints (the sample: 65,536 ones):
-- shfl_scan_test over 32 blocks of 256 with 32 bytes of shared memory, again over the 32
-- partial sums with partial_sums NULL, and uniform_add on d_data + blockSize.
do
  local n, bs = 8192, 256
  local nparts = n // bs
  case{sample = "shfl_scan", kernel = "shfl_scan_test + uniform_add", ordered = true,
    setup = function()
      local m = C.load("shfl_scan/shfl_scan.cu")
      local h = uints(n, 18, 1024)
      return {m = m, h = h, d = cuda.array(h:tolist(), "i32"), p = cuda.array(nparts, "i32")}
    end,
    launches = {
      {"shfl_scan_test", function(s)
        s.m.shfl_scan_test[{nparts, bs, bs // 32 * 4}](s.d, 32, s.p) end},
      {"shfl_scan_test", function(s)
        s.m.shfl_scan_test[{1, math.min(nparts, bs), bs // 32 * 4}](s.p, 32, nil) end},
      {"uniform_add", function(s) s.m.uniform_add[{nparts - 1, bs}](s.d + bs, s.p, n) end}},
    outputs = function(s) return {s.d, s.p} end,
    check = function(s)
      local want, parts, acc = {}, {}, 0
      for i = 0, n - 1 do
        acc = acc + s.h[i]
        want[i + 1] = acc
        if i % bs == bs - 1 then parts[#parts + 1] = acc end
      end
      same_ints("d_data", s.d, want)
      same_ints("d_partial_sums", s.p, parts)
    end}
end

-- shfl_scan: shuffle_integral_image_test's kernels. shfl_intimage_rows fixes a row at 1,920
-- bytes (120 uint4 a block) and shfl_vertical_shfl at 1,080 rows (135 steps of 8): rows on 8
-- rows of random bytes, one block of 120 threads a row (the sample: 1,080 rows of ones); the
-- columns on a 64-wide image of 1,080 rows of random uints, 2 blocks of 32 x 8 (the sample:
-- 1,920 wide, the rows' output).
do
  local w, h = 1920, 8
  case{sample = "shfl_scan", kernel = "shfl_intimage_rows", ordered = true,
    setup = function()
      local m = C.load("shfl_scan/shfl_scan.cu")
      local bytes = uints(w * h, 19, 256)
      return {k = m.shfl_intimage_rows, b = bytes, d = cuda.array(bytes:tolist(), "u8"),
        o = cuda.array(w * h, "u32")}
    end,
    launches = {{"shfl_intimage_rows", function(s)
      s.k[{h, (w + 15) // 16}](s.d, s.o) end}},
    outputs = function(s) return {s.o} end,
    check = function(s)
      local want = {}
      for y = 0, h - 1 do
        local acc = 0
        for x = 0, w - 1 do
          acc = acc + s.b[y * w + x]
          want[y * w + x + 1] = acc
        end
      end
      same_ints("integral_image", s.o, want)
    end}
  local cw, ch = 64, 1080
  case{sample = "shfl_scan", kernel = "shfl_vertical_shfl", ordered = true,
    setup = function()
      local m = C.load("shfl_scan/shfl_scan.cu")
      local img = uints(cw * ch, 20, 1 << 20)
      return {k = m.shfl_vertical_shfl, img = img, d = cuda.array(img)}
    end,
    launches = {{"shfl_vertical_shfl", function(s) s.k[{{cw // 32, 1}, {32, 8}}](s.d, cw, ch) end}},
    outputs = function(s) return {s.d} end,
    check = function(s)
      local want = {}
      for x = 0, cw - 1 do
        local acc = 0
        for y = 0, ch - 1 do
          acc = (acc + s.img[y * cw + x]) & 0xffffffff
          want[y * cw + x + 1] = acc
        end
      end
      same_ints("img", s.d, want)
    end}
end

-- warpAggregatedAtomicsCG: its three kernels on 16,384 elements (the sample: 10,000,000) in 5
-- buckets, 512 threads a block, n / 512 blocks (one more for filter_arr), as main() launches
-- them. Where the atomics' order decides where a value lands, the outputs compared with the GPU
-- are the counts and each bucket's indices sorted.
do
  local n, nb, TPB = 16384, 5, 512
  local function sorted(t, i, j)
    local r = {}
    for k = i, j do r[#r + 1] = t[k] end
    table.sort(r)
    return r
  end
  local function setup()
    local m = C.load("warpAggregatedAtomicsCG/warpAggregatedAtomicsCG.cu")
    local src = uints(n, 21, nb)
    return {m = m, src = src, d_src = cuda.array(src:tolist(), "i32")}
  end
  case{sample = "warpAggregatedAtomicsCG", kernel = "filter_arr", ordered = false, once = true,
    setup = function()
      local s = setup()
      s.dst, s.nres = cuda.array(n, "i32"), cuda.array(1, "i32")
      return s
    end,
    launches = {{"filter_arr", function(s)
      s.m.filter_arr[{n // TPB + 1, TPB}](s.dst, s.nres, s.d_src, n) end}},
    outputs = function(s)
      local k = s.nres:tolist()[1]
      return {s.nres, cuda.host(sorted(s.dst:tolist(), 1, k), "i32")}
    end,
    check = function(s)
      local want = {}
      for i = 0, n - 1 do if s.src[i] > 0 then want[#want + 1] = s.src[i] end end
      table.sort(want)
      same_ints("nres", s.nres, {#want})
      local got = sorted(s.dst:tolist(), 1, #want)
      same_ints("filtered", cuda.host(got, "i32"), want)
    end}
  case{sample = "warpAggregatedAtomicsCG", kernel = "mapToBuckets", ordered = false, once = true,
    setup = function()
      local s = setup()
      local init = {}
      for b = 0, nb - 1 do init[b + 1] = b * n end
      s.idx, s.cnt = cuda.array(n * nb, "i32"), cuda.array(init, "i32")
      return s
    end,
    launches = {{"mapToBuckets", function(s)
      s.m.mapToBuckets[{n // TPB, TPB}](s.d_src, s.idx, s.cnt, n, nb) end}},
    outputs = function(s)
      local idx, out = s.idx:tolist(), {}
      for b = 0, nb - 1 do
        for _, v in ipairs(sorted(idx, b * n + 1, s.cnt:tolist()[b + 1])) do out[#out + 1] = v end
      end
      return {s.cnt, cuda.host(out, "i32")}
    end,
    check = function(s)
      local lists, cnt = {}, {}
      for b = 1, nb do lists[b] = {} end
      for i = 0, n - 1 do table.insert(lists[s.src[i] + 1], i) end
      for b = 0, nb - 1 do cnt[b + 1] = b * n + #lists[b + 1] end
      same_ints("bucketCounters", s.cnt, cnt)
      local idx = s.idx:tolist()
      for b = 0, nb - 1 do
        same_ints("bucket " .. b, cuda.host(sorted(idx, b * n + 1, cnt[b + 1]), "i32"),
          lists[b + 1])
      end
    end}
  case{sample = "warpAggregatedAtomicsCG", kernel = "calculateMaxInEachBuckets", ordered = true,
    setup = function()
      local s = setup()
      s.vals = uints(n, 22, 1 << 31) -- rand(): 0 to RAND_MAX
      s.d_vals, s.max = cuda.array(s.vals:tolist(), "i32"), cuda.array(nb, "i32")
      return s
    end,
    launches = {{"calculateMaxInEachBuckets", function(s)
      s.m.calculateMaxInEachBuckets[{n // TPB, TPB}](s.d_src, s.d_vals, s.max, n, nb) end}},
    outputs = function(s) return {s.max} end,
    check = function(s)
      local want = {}
      for b = 1, nb do want[b] = 0 end
      for i = 0, n - 1 do
        local b = s.src[i] + 1
        if s.vals[i] > want[b] then want[b] = s.vals[i] end
      end
      same_ints("bucketsMax", s.max, want)
    end}
end

-- MonteCarlo (MonteCarloMultiGPU's kernels, one GPU): rngSetupStates then
-- MonteCarloOneBlockPerOption for 8 options of 4,096 paths (the sample: 256 options of 262,144
-- paths), one block of 256 threads an option (adjustGridSize keeps optionCount). curand's
-- XORWOW with its subsequence skip-ahead is not rewritten here: the check is the sample's, on
-- statistics. closeMonteCarloGPU's price and 95% confidence width for each option against the
-- analytic Black-Scholes price: the sample passes when the mean of confidence / |error| is over
-- 1; every option must also lie within 4 standard errors.
do
  local optN, pathN, R, V = 8, 4096, 0.06, 0.10
  local function cnd(d)
    local A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    local K = 1.0 / (1.0 + 0.2316419 * math.abs(d))
    local c = 0.39894228040143267793994605993438 * math.exp(-0.5 * d * d) *
      (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return d > 0 and 1.0 - c or c
  end
  case{sample = "MonteCarlo", kernel = "rngSetupStates + MonteCarloOneBlockPerOption",
    ordered = true,
    setup = function()
      local m = C.load("MonteCarlo/MonteCarlo_kernel.cu")
      local S, X, T = floats(optN, 23, 5, 50), floats(optN, 24, 10, 25), floats(optN, 25, 1, 5)
      local od = {}
      for i = 0, optN - 1 do -- MonteCarloGPU's __TOptionData: S, X, MuByT, VBySqrtT as floats
        od[#od + 1] = S[i]
        od[#od + 1] = X[i]
        od[#od + 1] = (R - 0.5 * V * V) * T[i]
        od[#od + 1] = V * math.sqrt(T[i])
      end
      return {m = m, S = S, X = X, T = T, od = cuda.array(od, "f32"),
        states = cuda.array(optN * 256 * 48, "u8"), cv = cuda.array(2 * optN, "f32")}
    end,
    launches = {
      {"rngSetupStates", function(s) s.m.rngSetupStates[{optN, 256}](s.states, 0) end},
      {"MonteCarloOneBlockPerOption", function(s)
        s.m.MonteCarloOneBlockPerOption[{optN, 256}](s.states, s.od, s.cv, pathN, optN) end}},
    outputs = function(s) return {s.cv} end,
    check = function(s)
      local cv, reserve = s.cv:host(), 0
      for i = 0, optN - 1 do
        local S, X, T = s.S[i], s.X[i], s.T[i]
        local sum, sum2 = cv[2 * i], cv[2 * i + 1]
        local price = math.exp(-R * T) * sum / pathN
        local sd = math.sqrt((pathN * sum2 - sum * sum) / (pathN * (pathN - 1)))
        local conf = math.exp(-R * T) * 1.96 * sd / math.sqrt(pathN)
        local sqrtT = math.sqrt(T)
        local d1 = (math.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
        local bs = S * cnd(d1) - X * math.exp(-R * T) * cnd(d1 - V * sqrtT)
        local delta = math.abs(bs - price)
        if delta > 1e-6 then reserve = reserve + conf / delta end
        if not (delta <= 4 * conf / 1.96) then
          fail("option %d: %.6g, Black-Scholes %.6g, over 4 standard errors (%.3g)", i, price, bs,
            conf / 1.96)
        end
      end
      if not (reserve / optN > 1) then fail("average reserve %.3g, not over 1", reserve / optN) end
    end}
end

-- quasirandomGenerator: quasirandomGeneratorKernel over 16,384 points of 3 dimensions (the
-- sample: 1,048,576), 128 blocks of 128 x 3 as quasirandomGeneratorGPU, seed 0; and
-- inverseCNDKernel on 3 x 16,384 uniform points (d_Input NULL), 128 blocks of 128. The
-- direction table c_Table is 3 x 31 numbers below 2^31 from the LCG rather than the sample's
-- Niederreiter table (its gold code is not here): the kernel XORs whichever it is given.
do
  local N, DIMS, RES = 16384, 3, 31
  case{sample = "quasirandomGenerator", kernel = "quasirandomGeneratorKernel", ordered = true,
    setup = function()
      local m = C.load("quasirandomGenerator/quasirandomGenerator_kernel.cu")
      local tab = uints(DIMS * RES, 26, 1 << 31):tolist()
      m:constant("c_Table", tab)
      return {m = m, tab = tab, o = cuda.array(DIMS * N)}
    end,
    launches = {{"quasirandomGeneratorKernel", function(s)
      s.m.quasirandomGeneratorKernel[{128, {128, DIMS}}](s.o, 0, N) end}},
    outputs = function(s) return {s.o} end,
    check = function(s)
      local o = s.o:host()
      for d = 0, DIMS - 1 do
        for pos = 0, N - 1 do
          local r, data = 0, pos
          for bit = 0, RES - 1 do
            if data & 1 == 1 then r = r ~ s.tab[d * RES + bit + 1] end
            data = data >> 1
          end
          -- (float)(result + 1) rounded to f32, times INT_SCALE = 2^-31 (exact)
          local want = cuda.host({r + 1}, "f32")[0] * 2.0 ^ -31
          local got = o[d * N + pos]
          if got ~= want then fail("d_Output[%d][%d] = %.9g, want %.9g", d, pos, got, want) end
        end
      end
    end}
  local pathN = DIMS * N
  local function moro(x) -- the sample's MoroInvCNDcpu, in double
    local a = {2.50662823884, -18.61500062529, 41.39119773534, -25.44106049637}
    local b = {-8.4735109309, 23.08336743743, -21.06224101826, 3.13082909833}
    local c = {0.337475482272615, 0.976169019091719, 0.160797971491821, 2.76438810333863E-02,
      3.8405729373609E-03, 3.951896511919E-04, 3.21767881768E-05, 2.888167364E-07,
      3.960315187E-07}
    local negate = false
    if x >= 0x80000000 then x, negate = 0xffffffff - x, true end
    local x1 = 1.0 / 0xffffffff
    local p1 = x * x1 + x1 / 2.0
    local p2 = p1 - 0.5
    local z
    if p2 > -0.42 then
      z = p2 * p2
      z = p2 * (((a[4] * z + a[3]) * z + a[2]) * z + a[1]) /
        ((((b[4] * z + b[3]) * z + b[2]) * z + b[1]) * z + 1.0)
    else
      z = math.log(-math.log(p1))
      local acc = c[9]
      for i = 8, 1, -1 do acc = c[i] + z * acc end
      z = -acc
    end
    return negate and -z or z
  end
  case{sample = "quasirandomGenerator", kernel = "inverseCNDKernel", ordered = true,
    setup = function()
      local m = C.load("quasirandomGenerator/quasirandomGenerator_kernel.cu")
      return {m = m, o = cuda.array(pathN)}
    end,
    launches = {{"inverseCNDKernel", function(s)
      s.m.inverseCNDKernel[{128, 128}](s.o, nil, pathN) end}},
    outputs = function(s) return {s.o} end,
    check = function(s)
      local o, dist, sd, sr = s.o:host(), 0xffffffff // (pathN + 1), 0, 0
      for pos = 0, pathN - 1 do
        local ref = moro(((pos + 1) * dist) & 0xffffffff)
        sd, sr = sd + math.abs(o[pos] - ref), sr + math.abs(ref)
      end
      -- the sample passes at an L1 norm below 1e-6
      if not (sd / sr < 1e-6) then fail("L1 norm %.3g, over 1e-6", sd / sr) end
    end}
end

-- reductionMultiBlockCG: reduceSinglePassMultiBlockCG, a cooperative launch, on 2^16 floats
-- of (rand() & 0xFF) / RAND_MAX (the sample: 2^25), 16 blocks of 256 threads with 256 doubles
-- of shared memory (the sample asks the occupancy API: on an H200 up to 264 blocks); d_odata
-- starts as the input's first 16 values, as the sample copies them. The sample's threshold:
-- 1e-8 x n from the CPU's sum.
do
  local n, threads, blocks = 1 << 16, 256, 16
  case{sample = "reductionMultiBlockCG", kernel = "reduceSinglePassMultiBlockCG", ordered = true,
    setup = function()
      local k = C.load("reductionMultiBlockCG/reductionMultiBlockCG.cu").reduceSinglePassMultiBlockCG
      local r, h = lcg(27), cuda.host(n, "f32")
      for i = 0, n - 1 do h[i] = (r() & 0xff) / 2147483647.0 end
      local first = {}
      for i = 0, blocks - 1 do first[i + 1] = h[i] end
      return {k = k, h = h, i = cuda.array(h), o = cuda.array(first, "f32")}
    end,
    launches = {{"reduceSinglePassMultiBlockCG", function(s)
      s.k[{blocks, threads, threads * 8, cooperative = true}](s.i, s.o, n) end}},
    outputs = function(s) return {s.o} end,
    check = function(s)
      local want = 0
      for i = 0, n - 1 do want = want + s.h[i] end
      local got = s.o:tolist()[1]
      if not (math.abs(got - want) < 1e-8 * n) then
        fail("g_odata[0] = %.9g, want %.9g within %.3g", got, want, 1e-8 * n)
      end
    end}
end


-- dct8x8: WrapperCUDA1's three launches on a 64 x 32 image (the sample: the 512 x 512 teapot),
-- grids of 8 x 4 blocks of 8 x 8 as its host code computes them, each its own case so that
-- each is checked against its own reference. The texture is the sample's: an f32 CUDA array
-- read with linear filtering, wrap addressing and unnormalized coordinates; the kernels read
-- texel centres (x + 0.5), where the filter's weight is 0, so each reads its texel exactly.
-- The sample copies the quantized coefficients back into the same CUDA array for the inverse
-- transform; a second texture of them (same options) is the same thing here. DstStride is the
-- width (the sample's cudaMallocPitch pitch; any stride above it would do).
do
  local W, H = 64, 32
  local grid, block = {W // 8, H // 8}, {8, 8}
  -- the sample's DCTv8matrix, as the f32 constants the kernel reads: M[r * 8 + c]
  local M = {}
  do
    local t = {}
    for line in io.lines(DIR .. "dct8x8/dct8x8_kernel1.cuh") do
      if line:find("DCTv8matrix%[%] =") then t.on = true end
      if t.on then
        for num in line:gmatch("(%-?%d+%.%d+)f") do
          M[#M + 1] = string.unpack("f", string.pack("f", tonumber(num)))
        end
        if line:find("};") then break end
      end
    end
    assert(#M == 64, "DCTv8matrix: " .. #M .. " constants")
  end
  local function m(r, c) return M[r * 8 + c + 1] end
  -- The sample's gold (DCT8x8_Gold.cpp's computeDCT8x8Gold1 / computeIDCT8x8Gold1): per 8 x 8
  -- block, C = M^T A M forward and C = M A M^T inverse, here in double. The kernels sum the
  -- same products in f32 with fused multiply-adds, 8 per output per pass: with |A| <= 128 and
  -- |M| <= 0.5, the first pass's sums stay below 512 and err by at most 8 x 2^-24 x 512 =
  -- 2.4e-4; the second pass multiplies that by at most sum |M| = 2.83 and adds its own
  -- 8 x 2^-24 x 2048 = 9.8e-4. So 2e-3 bounds the difference; a wrong coefficient, texel or
  -- block is off by units.
  local function transform(img, inverse)
    local out = {}
    for by = 0, H // 8 - 1 do
      for bx = 0, W // 8 - 1 do
        local function a(y, x) return img[(by * 8 + y) * W + bx * 8 + x + 1] end
        for v = 0, 7 do
          for u = 0, 7 do
            local acc = 0
            for y = 0, 7 do
              for x = 0, 7 do
                local w = inverse and m(v, y) * m(u, x) or m(y, v) * m(x, u)
                acc = acc + w * a(y, x)
              end
            end
            out[(by * 8 + v) * W + bx * 8 + u + 1] = acc
          end
        end
      end
    end
    return out
  end
  local function near(what, got, want, tol)
    local g = got:tolist()
    for i = 1, #want do
      if not (math.abs(g[i] - want[i]) <= tol) then
        fail("%s[%d] = %.9g, want %.9g within %g", what, i - 1, g[i], want[i], tol)
      end
    end
  end
  local function texture_of(values)
    return cuda.texture(cuda.array(values, "f32"), {width = W, height = H, filter = "linear",
      address = "wrap"})
  end
  local function dct_case(kernel, inverse, seed, make)
    case{sample = "dct8x8", kernel = kernel, ordered = true,
      setup = function()
        local md = C.load("dct8x8/dct8x8.cu")
        local r, vals = lcg(seed), {}
        for i = 1, W * H do vals[i] = make(r) end
        return {k = md[kernel], vals = vals, tex = texture_of(vals), dst = cuda.array(W * H)}
      end,
      launches = {{kernel, function(s) s.k[{grid, block}](s.dst, W, 0, 0, s.tex) end}},
      outputs = function(s) return {s.dst} end,
      check = function(s) near("Dst", s.dst, transform(s.vals, inverse), 2e-3) end}
  end
  -- pixels as CopyByte2Float and AddFloatPlane(-128) leave them: whole numbers in [-128, 127]
  dct_case("CUDAkernel1DCT", false, 28, function(r) return (r() >> 24) - 128 end)
  -- coefficients as quantization leaves them: multiples of small steps, here whole numbers in
  -- [-64, 63] (the inverse's sums stay within the bound above)
  dct_case("CUDAkernel1IDCT", true, 29, function(r) return (r() >> 25) - 64 end)
  -- CUDAkernelQuantizationFloat: roundf(c / q) * q with the sample's table Q. Coefficients are
  -- whole numbers in [-1024, 1023]: c / q (div.rn) is then never within a rounding of a half
  -- unless exactly on one, so the reference, computed in double and rounded to f32, is exact.
  case{sample = "dct8x8", kernel = "CUDAkernelQuantizationFloat", ordered = true,
    setup = function()
      local md = C.load("dct8x8/dct8x8.cu")
      local r, vals = lcg(30), {}
      for i = 1, W * H do vals[i] = (r() >> 21) - 1024 end
      local q = {}
      for line in io.lines(DIR .. "dct8x8/dct8x8_kernel_quantization.cuh") do
        if line:find("short Q%[%]") then q.on = true end
        if q.on then
          for num in line:gmatch("%d+") do q[#q + 1] = tonumber(num) end
          if line:find("};") then break end
        end
      end
      assert(#q == 64, "Q: " .. #q .. " values")
      return {k = md.CUDAkernelQuantizationFloat, vals = vals, q = q,
        d = cuda.array(vals, "f32")}
    end,
    launches = {{"CUDAkernelQuantizationFloat", function(s) s.k[{grid, block}](s.d, W) end}},
    outputs = function(s) return {s.d} end,
    check = function(s)
      local want = {}
      for i = 1, W * H do
        local y, x = (i - 1) // W, (i - 1) % W
        local q = s.q[(y % 8) * 8 + x % 8 + 1]
        local c = string.unpack("f", string.pack("f", s.vals[i] / q))
        local k = c >= 0 and math.floor(c + 0.5) or -math.floor(-c + 0.5) -- roundf: halves away
        want[i] = k * q
      end
      same_ints("SrcDst", s.d, want)
    end}
end

return C
