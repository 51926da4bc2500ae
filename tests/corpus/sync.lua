-- sync.lua: corpus cases for the instructions where threads meet: barriers that reduce
-- (__syncthreads_count/_and/_or), warp matches and reductions (__match_any_sync, __match_all_sync,
-- __reduce_*_sync) and 16-bit atomics (atomicCAS on unsigned short, atomicAdd on __half, __half2,
-- __nv_bfloat16 and __nv_bfloat162, in global and shared memory). Every result here is independent
-- of the order in which threads arrive, so the GPU's bits are reproducible.
local C = dofile("tests/corpus/corpus.lua")
local blocks, map = C.blocks, C.map


C.case{
  name = "__syncthreads_count, _and and _or over blocks with a partial last warp",
  src = [[
__global__ void f(const int *v, int *count, int *all, int *any) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int p = v[t];
  int c = __syncthreads_count(p);
  int a = __syncthreads_and(p);
  int o = __syncthreads_or(p);
  count[t] = c; all[t] = a; any[t] = o;
}]],
  run = function(k)
    local B, G = 200, 37 -- 200 threads: six full warps and one of 8
    local vs = {}
    local _, us = C.uniform(B * G, 201, 0, 1, "f64")
    for b = 0, G - 1 do
      for t = 1, B do
        local i = b * B + t
        -- block b: all set when b % 5 == 0, none when b % 5 == 1, else about (b % 7) / 8 of them
        if b % 5 == 0 then vs[i] = 3 elseif b % 5 == 1 then vs[i] = 0 else vs[i] = us[i] < (b % 7) / 8 and t or 0 end
      end
    end
    local v = cuda.array(vs, "i32")
    local o = map(3, function() return cuda.array(B * G, "i32") end)
    k[{G, B}](v, o[1], o[2], o[3])
    C.s = {vs, B, G}
    return o
  end,
  check = function(o)
    local vs, B, G = table.unpack(C.s)
    local cnt, all, any = {}, {}, {}
    for b = 0, G - 1 do
      local n = 0
      for t = 1, B do if vs[b * B + t] ~= 0 then n = n + 1 end end
      for t = 1, B do
        cnt[b * B + t], all[b * B + t], any[b * B + t] = n, n == B and 1 or 0, n > 0 and 1 or 0
      end
    end
    C.same(o[1], cnt)
    C.same(o[2], all)
    C.same(o[3], any)
  end,
}

C.case{
  name = "__match_any_sync groups lanes by key; __match_all_sync with its predicate",
  src = [[
__global__ void f(const int *key, const long long *wide, unsigned *any, unsigned *any64, unsigned *all, int *pred, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int k = t < n ? key[t] : -1;
  any[t] = __match_any_sync(0xffffffffu, k);
  any64[t] = __match_any_sync(0xffffffffu, t < n ? wide[t] : -1ll);
  int p;
  all[t] = __match_all_sync(0xffffffffu, k / 2, &p);
  pred[t] = p;
}]],
  run = function(k)
    local n, T = 1000, 1024
    local key, ks = C.integers(n, 211, 0, 6)
    for i = 1, n, 64 do for j = i, math.min(i + 31, n) do ks[j] = 5 end end -- some warps of one key
    key = cuda.array(ks, "i32")
    local ws = map(n, function(i) return (ks[i] << 40) | (i % 3) end)
    local wide = cuda.array(ws, "i64")
    local o = {cuda.array(T, "u32"), cuda.array(T, "u32"), cuda.array(T, "u32"), cuda.array(T, "i32")}
    k[{T // 128, 128}](key, wide, o[1], o[2], o[3], o[4], n)
    C.s = {ks, ws, n, T}
    return o
  end,
  check = function(o)
    local ks, ws, n, T = table.unpack(C.s)
    local any, any64, all, pred = {}, {}, {}, {}
    local function key(t) return t < n and ks[t + 1] or -1 end
    local function wide(t) return t < n and ws[t + 1] or -1 end
    local function tdiv2(x) return x >= 0 and x // 2 or -((-x) // 2) end -- C's division truncates
    for w = 0, T // 32 - 1 do
      local same = true
      for l = 0, 31 do
        local t = w * 32 + l
        if tdiv2(key(t)) ~= tdiv2(key(w * 32)) then same = false end
        local m, m64 = 0, 0
        for j = 0, 31 do
          if key(w * 32 + j) == key(t) then m = m | 1 << j end
          if wide(w * 32 + j) == wide(t) then m64 = m64 | 1 << j end
        end
        any[t + 1], any64[t + 1] = m, m64
      end
      for l = 0, 31 do all[w * 32 + l + 1], pred[w * 32 + l + 1] = same and 0xffffffff or 0, same and 1 or 0 end
    end
    C.same(o[1], any)
    C.same(o[2], any64)
    C.same(o[3], all)
    C.same(o[4], pred)
  end,
}

C.case{
  name = "__reduce_add/min/max_sync (signed and unsigned) and __reduce_and/or/xor_sync, whole and half warps",
  src = [[
__global__ void f(const int *v, int *o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int x = v[t];
  unsigned u = (unsigned)x;
  o[9 * t] = __reduce_add_sync(0xffffffffu, x);
  o[9 * t + 1] = __reduce_min_sync(0xffffffffu, x);
  o[9 * t + 2] = __reduce_max_sync(0xffffffffu, x);
  o[9 * t + 3] = (int)__reduce_min_sync(0xffffffffu, u);
  o[9 * t + 4] = (int)__reduce_max_sync(0xffffffffu, u);
  o[9 * t + 5] = (int)__reduce_and_sync(0xffffffffu, u | 0x10000);
  o[9 * t + 6] = (int)__reduce_or_sync(0xffffffffu, u & 0xff00ff);
  o[9 * t + 7] = (int)__reduce_xor_sync(0xffffffffu, u);
  if ((threadIdx.x & 31) < 16) o[9 * t + 8] = __reduce_add_sync(0x0000ffffu, x);
  else o[9 * t + 8] = __reduce_max_sync(0xffff0000u, x);
}]],
  run = function(k)
    local n = 32 * 40
    local v, vs = C.integers(n, 221, -2000000000, 2000000000)
    local o = cuda.array(9 * n, "i32")
    k[{n // 64, 64}](v, o, n)
    C.s = {vs, n}
    return {o}
  end,
  check = function(o)
    local vs, n = table.unpack(C.s)
    local function s32(x) x = x & 0xffffffff return x >= 2 ^ 31 and x - (1 << 32) or x end
    local want = {}
    for w = 0, n // 32 - 1 do
      local add, mn, mx, umn, umx, a, r, x = 0, math.huge, -math.huge, math.huge, -1, 0xffffffff, 0, 0
      local lo, hi = 0, -math.huge
      for l = 0, 31 do
        local v = vs[w * 32 + l + 1]
        local u = v & 0xffffffff
        add = add + v
        mn, mx = math.min(mn, v), math.max(mx, v)
        umn, umx = math.min(umn, u), math.max(umx, u)
        a, r, x = a & (u | 0x10000), r | (u & 0xff00ff), x ~ u
        if l < 16 then lo = lo + v else hi = math.max(hi, v) end
      end
      for l = 0, 31 do
        local b = 9 * (w * 32 + l)
        want[b + 1], want[b + 2], want[b + 3] = s32(add), mn, mx
        want[b + 4], want[b + 5] = s32(math.tointeger(umn)), s32(umx)
        want[b + 6], want[b + 7], want[b + 8] = s32(a), s32(r), s32(x)
        want[b + 9] = l < 16 and s32(lo) or hi
      end
    end
    C.same(o[1], want)
  end,
}

C.case{
  name = "atomicCAS on unsigned short: 16-bit counters in global memory, neighbours untouched",
  src = [[
__global__ void f(const int *bucket, unsigned *counters, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned short *c = (unsigned short *)counters;
  int k = bucket[t];
  unsigned short *p = &c[2 * k];  /* even halves only: odd ones must stay 0xbeef */
  unsigned short old = *p, seen;
  do {
    seen = old;
    old = atomicCAS(p, seen, (unsigned short)(seen + 3));
  } while (old != seen);
}]],
  run = function(k)
    local n, nb = 5000, 37
    local bucket, bs = C.integers(n, 231, 0, nb - 1)
    local counters = cuda.array(map(nb, function() return 0xbeef0000 end), "u32")
    k[{blocks(n, 256), 256}](bucket, counters, n)
    C.s = {bs, nb}
    return {counters}
  end,
  check = function(o)
    local bs, nb = table.unpack(C.s)
    local want = map(nb, function() return 0xbeef0000 end)
    for _, b in ipairs(bs) do want[b + 1] = want[b + 1] + 3 end
    C.same(o[1], want)
  end,
}

-- Sums whose every partial sum is exact in the type, so the order of the additions cannot matter.
C.case{
  name = "atomicAdd on __half, __half2, __nv_bfloat16 and __nv_bfloat162 (and red.add.noftz.f16x2), exact sums",
  src = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void f(const int *bucket, unsigned *h, unsigned *h2, unsigned *b, unsigned *b2, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int k = bucket[t];
  atomicAdd((__half *)&h[k], __float2half(1.0f));
  atomicAdd((__half2 *)&h2[k], __halves2half2(__float2half(0.25f), __float2half(-2.0f)));
  atomicAdd((__nv_bfloat16 *)&b[k], __float2bfloat16(1.0f));
  atomicAdd((__nv_bfloat162 *)&b2[k], __floats2bfloat162_rn(-1.0f, 0.5f));
  unsigned one = 0x3c003c00u; /* {1, 1} */
  asm volatile("red.global.add.noftz.f16x2 [%0], %1;" :: "l"(&h2[64 + k]), "r"(one) : "memory");
}]],
  run = function(k)
    local n, nb = 4000, 40 -- at most about 150 per bucket: every partial sum is exact in bf16 too
    local bucket, bs = C.integers(n, 241, 0, nb - 1)
    local h, h2, b, b2 = cuda.array(64, "u32"), cuda.array(128, "u32"), cuda.array(64, "u32"), cuda.array(64, "u32")
    k[{blocks(n, 128), 128}](bucket, h, h2, b, b2, n)
    C.s = {bs, nb}
    return {h, h2, b, b2}
  end,
  check = function(o)
    local bs, nb = table.unpack(C.s)
    local cnt = map(64, function() return 0 end)
    for _, x in ipairs(bs) do cnt[x + 1] = cnt[x + 1] + 1 end
    -- Exact small values as f16 / bf16 bits.
    local function f16(x)
      if x == 0 then return 0 end
      local s = x < 0 and 0x8000 or 0
      local a = math.abs(x)
      local e = math.floor(math.log(a, 2) + 1e-9)
      return s | ((e + 15) << 10) | math.tointeger((a / 2.0 ^ e - 1) * 1024)
    end
    local function bf16(x)
      if x == 0 then return 0 end
      local s = x < 0 and 0x8000 or 0
      local a = math.abs(x)
      local e = math.floor(math.log(a, 2) + 1e-9)
      return s | ((e + 127) << 7) | math.tointeger((a / 2.0 ^ e - 1) * 128)
    end
    local wh, wh2, wb, wb2 = {}, {}, {}, {}
    for i = 1, 64 do
      local c = cnt[i]
      wh[i] = f16(c)
      wh2[i] = f16(-2.0 * c) << 16 | f16(0.25 * c)
      wh2[64 + i] = f16(c) << 16 | f16(c)
      wb[i] = bf16(c)
      wb2[i] = bf16(0.5 * c) << 16 | bf16(-1.0 * c)
    end
    C.same(o[1], wh)
    C.same(o[2], wh2)
    C.same(o[3], wb)
    C.same(o[4], wb2)
  end,
}

C.case{
  name = "16-bit atomics in shared memory: atomicCAS on unsigned short and atomicAdd on __half2",
  src = [[
#include <cuda_fp16.h>
__global__ void f(const int *v, unsigned *cnt, unsigned *sum) {
  __shared__ unsigned short c[64];
  __shared__ __half2 s[32];
  int t = threadIdx.x;
  if (t < 64) c[t] = 0;
  if (t < 32) s[t] = __float2half2_rn(0.0f);
  __syncthreads();
  int k = v[blockIdx.x * blockDim.x + t];
  unsigned short old = c[k], seen;
  do { seen = old; old = atomicCAS(&c[k], seen, (unsigned short)(seen + 1)); } while (old != seen);
  atomicAdd(&s[k & 31], __halves2half2(__float2half(1.0f), __float2half(0.5f)));
  __syncthreads();
  if (t < 64) cnt[blockIdx.x * 64 + t] = c[t];
  if (t < 32) sum[blockIdx.x * 32 + t] = *(unsigned *)&s[t];
}]],
  run = function(k)
    local G, B = 6, 512
    local v, vs = C.integers(G * B, 251, 0, 63)
    local cnt, sum = cuda.array(G * 64, "u32"), cuda.array(G * 32, "u32")
    k[{G, B}](v, cnt, sum)
    C.s = {vs, G, B}
    return {cnt, sum}
  end,
  check = function(o)
    local vs, G, B = table.unpack(C.s)
    local function f16(x) -- small non-negative multiples of 0.5, exact
      if x == 0 then return 0 end
      local e = math.floor(math.log(x, 2) + 1e-9)
      return ((e + 15) << 10) | math.tointeger((x / 2.0 ^ e - 1) * 1024)
    end
    local cnt, sum = {}, {}
    for g = 0, G - 1 do
      local c = map(64, function() return 0 end)
      for t = 1, B do local x = vs[g * B + t] c[x + 1] = c[x + 1] + 1 end
      for i = 1, 64 do cnt[g * 64 + i] = c[i] end
      for i = 1, 32 do
        local m = c[i] + c[i + 32]
        sum[g * 32 + i] = f16(0.5 * m) << 16 | f16(m)
      end
    end
    C.same(o[1], cnt)
    C.same(o[2], sum)
  end,
}

return C.done()
