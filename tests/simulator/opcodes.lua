-- opcodes.lua: instructions as sim/ptx_opcodes.def's rows describe them, from Lua: vabsdiff4
-- (the SIMD intrinsics __vabsdiffu4, __vsadu4, __vabsdiffs4 and __vsads4, and inline PTX with
-- each type and .sat and .add) against a CPU reference, and vote.sync.uni (__uni_sync), whose
-- .uni was once taken for bra's. Modifiers an instruction does not take never get this far (ptxas
-- refuses them first); tests/sim/test_errors.c loads such PTX into the simulator directly.
-- tests/gpu/sim_vs_gpu.lua runs the same vabsdiff4 forms on the GPU. Then the vector atomics of
-- sm_90 (atomicAdd on float2 and float4, and the .f16 / .bf16 vector forms in inline PTX), each
-- element an atomic of its own, against sums and maxima worked out here; isspacep on pointers
-- of each space; cache hints, which must change no result.
local T = dofile("tests/lua/testlib.lua")
local C = dofile("tests/simulator/sync_cases.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(8)

-- n 32-bit words from a small generator of its own, with bytes 0x00, 0x7f, 0x80 and 0xff first.
local function words(n, seed)
  local t, x = {0x00000000, 0x7f7f7f7f, 0x80808080, 0xffffffff, 0x7f80ff00, 0x00ff807f}, seed
  while #t < n do
    x = (x * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
    t[#t + 1] = (x >> 32) & 0xffffffff
  end
  return t
end

local function byte(v, i, signed)
  local b = (v >> 8 * i) & 0xff
  return signed and b >= 0x80 and b - 0x100 or b
end

-- vabsdiff4.dtype.atype.btype{.sat}{.add} as the PTX ISA defines it, default selectors and mask.
local function vabsdiff4(a, b, c, sa, sb, sd, sat, add)
  local sum, out = c, 0
  for i = 0, 3 do
    local t = math.abs(byte(a, i, sa) - byte(b, i, sb))
    sum = sum + t
    if sat then t = math.min(t, sd and 127 or 255) end
    out = out | (t & 0xff) << 8 * i
  end
  return (add and sum or out) & 0xffffffff
end

test("the SIMD intrinsics that become vabsdiff4 match a CPU reference", function()
  local k = cuda.kernel[[
__global__ void simd(const unsigned *a, const unsigned *b, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i] = __vabsdiffu4(a[i], b[i]);
  out[4 * i + 1] = __vsadu4(a[i], b[i]);
  out[4 * i + 2] = __vabsdiffs4(a[i], b[i]);
  out[4 * i + 3] = __vsads4(a[i], b[i]);
}]]
  check(k:ptx():find("vabsdiff4", 1, true), "NVRTC uses vabsdiff4 for these")
  local n = 1000
  local xs, ys = words(n, 7), words(n, 8)
  ys[1], ys[2], ys[3] = 0x80808080, 0x7f7f7f7f, 0x01010101
  local out = cuda.zeros(4 * n, "u32")
  k[{(n + 127) // 128, 128}](cuda.array(xs, "u32"), cuda.array(ys, "u32"), out, n)
  local got, bad = out:tolist(), {}
  for i = 1, n do
    local a, b = xs[i], ys[i]
    local want = {vabsdiff4(a, b, 0, false, false, false, false, false),
                  vabsdiff4(a, b, 0, false, false, false, false, true),
                  vabsdiff4(a, b, 0, true, true, false, false, false),
                  vabsdiff4(a, b, 0, true, true, false, false, true)}
    for j = 1, 4 do
      if got[4 * (i - 1) + j] ~= want[j] and #bad < 5 then
        bad[#bad + 1] = string.format("intrinsic %d of %08x, %08x: %08x, want %08x", j, a, b,
          got[4 * (i - 1) + j], want[j])
      end
    end
  end
  check(#bad == 0, table.concat(bad, "; "))
end)

test("vabsdiff4 in inline PTX: each signedness, .sat and .add", function()
  local forms = {
    {"u32.u32.u32", false, false, false}, {"s32.s32.s32", true, true, true},
    {"u32.s32.u32", true, false, false}, {"s32.u32.s32", false, true, true},
  }
  local src = {}
  for f, form in ipairs(forms) do
    for _, tail in ipairs({"", ".sat", ".add"}) do
      src[#src + 1] = string.format('  asm("vabsdiff4.%s%s %%0, %%1, %%2, %%3;" : "=r"(r) : ' ..
        '"r"(x), "r"(y), "r"(z)); out[k++ * n + i] = r;', form[1], tail)
    end
    forms[f].first = #src
  end
  local k = cuda.kernel(
    "__global__ void v(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out, " ..
    "int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x, k = 0;\n  if (i >= n) return;\n" ..
    "  unsigned x = a[i], y = b[i], z = c[i], r;\n" .. table.concat(src, "\n") .. "\n}")
  local n = 600
  local xs, ys, zs = words(n, 11), words(n, 12), words(n, 13)
  local out = cuda.zeros(#src * n, "u32")
  k[{(n + 127) // 128, 128}](cuda.array(xs, "u32"), cuda.array(ys, "u32"), cuda.array(zs, "u32"),
    out, n)
  local got, bad, at = out:tolist(), {}, 0
  for _, form in ipairs(forms) do
    for _, tail in ipairs({"", ".sat", ".add"}) do
      for i = 1, n do
        local want = vabsdiff4(xs[i], ys[i], zs[i], form[2], form[3], form[4], tail == ".sat",
          tail == ".add")
        local g = got[at * n + i]
        if g ~= want and #bad < 5 then
          bad[#bad + 1] = string.format("vabsdiff4.%s%s %08x %08x %08x: %08x, want %08x",
            form[1], tail, xs[i], ys[i], zs[i], g, want)
        end
      end
      at = at + 1
    end
  end
  check(#bad == 0, table.concat(bad, "; "))
end)

test("vote.sync.uni: __uni_sync says whether every active lane agrees", function()
  local k = cuda.kernel[[
__global__ void uni(const int *x, int *out) {
  out[threadIdx.x] = __uni_sync(0xffffffff, x[threadIdx.x] > 0);
}]]
  local out = cuda.zeros(64, "i32")
  local x = {}
  for i = 1, 64 do x[i] = i <= 32 and 1 or (i == 40 and 0 or 1) end
  k[{1, 64}](cuda.array(x, "i32"), out)
  checkeq(out[0], 1, "warp 0 agrees"); checkeq(out[31], 1)
  checkeq(out[32], 0, "warp 1 has one lane that differs"); checkeq(out[63], 0)
end)

-- The values threads add: small integers, so that every float sum is exact in any order.
local function small(i) return (i * 7) % 11 - 5 end

test("atomicAdd on float2 and float4: each element adds, old values come back", function()
  local k = cuda.module(C.vector_atomics)
  check(k.many:ptx():find("atom.global.add.v4.f32", 1, true), "NVRTC writes the vector atomic")
  local n, xs = 300, {}
  for i = 1, n do xs[i] = small(i - 1) end
  local f2, f4 = cuda.zeros(6), cuda.full(8, 1)
  k.many[{3, 128}](f2, f4, cuda.array(xs), n)
  local w2, w4 = {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 1}
  for i = 0, n - 1 do
    local v, s2, s4 = xs[i + 1], 2 * (i % 3), 4 * (i % 2)
    w2[s2 + 1], w2[s2 + 2] = w2[s2 + 1] + v, w2[s2 + 2] + 2 * v
    w4[s4 + 1], w4[s4 + 2] = w4[s4 + 1] + v, w4[s4 + 2] - v
    w4[s4 + 3], w4[s4 + 4] = w4[s4 + 3] + 0.5 * v, w4[s4 + 4] + 4
  end
  for j = 1, 6 do checkeq(f2[j - 1], w2[j], "float2 element " .. (j - 1)) end
  for j = 1, 8 do checkeq(f4[j - 1], w4[j], "float4 element " .. (j - 1)) end
  local a2, a4, old = cuda.arange(64), cuda.arange(128), cuda.zeros(6 * 32)
  k.own[{1, 32}](a2, a4, old)
  for i = 0, 31 do
    checkeq(old[6 * i], 2 * i, "old x of float2 " .. i); checkeq(old[6 * i + 1], 2 * i + 1)
    for e = 0, 3 do checkeq(old[6 * i + 2 + e], 4 * i + e, "old of float4 " .. i) end
    checkeq(a2[2 * i + 1], 2 * i + 3, "float2 " .. i .. " after"); checkeq(a4[4 * i + 3], 4 * i + 7)
  end
end)

test("vector atomics in inline PTX: red .v2.f32, .v8.f16 max, .v4.f16 min, .v2.bf16x2 add",
     function()
  local k = cuda.kernel[[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void v(float *f, __half *h, __half *m, __nv_bfloat16 *b, float *x) {
  int i = threadIdx.x;
  float v = x[i];
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" :: "l"(f), "f"(v), "f"(-v) : "memory");
  unsigned short s[8], o[8];
  for (int e = 0; e < 8; e++) s[e] = __half_as_ushort(__float2half(v * (e + 1)));
  asm volatile("atom.global.v8.f16.max.noftz {%0, %1, %2, %3, %4, %5, %6, %7}, [%8], "
               "{%9, %10, %11, %12, %13, %14, %15, %16};"
               : "=h"(o[0]), "=h"(o[1]), "=h"(o[2]), "=h"(o[3]), "=h"(o[4]), "=h"(o[5]),
                 "=h"(o[6]), "=h"(o[7])
               : "l"(h), "h"(s[0]), "h"(s[1]), "h"(s[2]), "h"(s[3]), "h"(s[4]), "h"(s[5]),
                 "h"(s[6]), "h"(s[7]) : "memory");
  asm volatile("atom.global.v4.f16.min.noftz {%0, %1, %2, %3}, [%4], {%5, %6, %7, %8};"
               : "=h"(o[0]), "=h"(o[1]), "=h"(o[2]), "=h"(o[3])
               : "l"(m), "h"(s[0]), "h"(s[1]), "h"(s[2]), "h"(s[3]) : "memory");
  unsigned r0, r1;
  __nv_bfloat162 q0 = __floats2bfloat162_rn(v, 1.f), q1 = __floats2bfloat162_rn(2.f, -v);
  asm volatile("atom.global.v2.bf16x2.add.noftz {%0, %1}, [%2], {%3, %4};"
               : "=r"(r0), "=r"(r1)
               : "l"(b), "r"(*(unsigned *)&q0), "r"(*(unsigned *)&q1) : "memory");
  x[64 + i] = (float)(r0 + r1 + o[0]) * 0.f;
}]]
  local n, xs = 64, {}
  for i = 1, n do xs[i] = small(i - 1) end
  for i = n + 1, 2 * n do xs[i] = 0 end
  local f, h, m, b = cuda.zeros(2), cuda.full(8, -100, "f16"), cuda.full(4, 100, "f16"),
    cuda.zeros(4, "bf16")
  k[{1, n}](f, h, m, b, cuda.array(xs))
  local sum, hi, lo = 0, -5, 5
  for i = 1, n do sum, hi, lo = sum + xs[i], math.max(hi, xs[i]), math.min(lo, xs[i]) end
  checkeq(f[0], sum, "red.v2.f32 element 0"); checkeq(f[1], -sum, "red.v2.f32 element 1")
  for e = 0, 7 do checkeq(h[e], (e + 1) * hi, "v8.f16 max " .. e) end
  for e = 0, 3 do checkeq(m[e], (e + 1) * lo, "v4.f16 min " .. e) end
  checkeq(b[0], sum, "bf16x2 add, element 0"); checkeq(b[1], n, "element 1")
  checkeq(b[2], 2 * n, "element 2"); checkeq(b[3], -sum, "element 3")
end)

test("a vector atomic checks the whole vector: misaligned, past the end, on shared memory",
     function()
  local k = cuda.module[[
__global__ void mis(float *f) { atomicAdd((float2 *)(f + 1), make_float2(1.f, 1.f)); }
__global__ void past(float *f) { atomicAdd((float2 *)(f + 2), make_float2(1.f, 1.f)); }
__global__ void sh(float *out) {
  __shared__ float2 s[2];
  s[threadIdx.x] = make_float2(0.f, 0.f);
  float2 *p = s + threadIdx.x;
  asm volatile("" : "+l"(p));
  atomicAdd(p, make_float2(1.f, 1.f));
  out[threadIdx.x] = s[threadIdx.x].x;
}]]
  checkerr("misaligned global atomic of 8 bytes", function() k.mis[{1, 1}](cuda.zeros(4)) end)
  local three = cuda.zeros(3)
  checkerr("out-of-bounds global atomic of 8 bytes",
           function() k.past[{1, 1}](three) end)
  checkeq(three[2], 0, "no element of a refused vector changed")
  checkerr("vector atomic (atomicAdd on a float2 or float4, or .v2 / .v4 / .v8 in PTX) on "
           .. "shared memory", function() k.sh[{1, 2}](cuda.zeros(2)) end)
end)

test("isspacep: __isGlobal, __isShared, __isLocal and __isConstant in a function of its own",
     function()
  local k = cuda.kernel[[
__device__ float dev[2];
__constant__ float con[4];
__device__ __noinline__ int where(const void *p) {
  unsigned c, r;
  asm("{ .reg .pred t; isspacep.shared::cluster t, %1; selp.u32 %0, 1, 0, t; }"
      : "=r"(c) : "l"(p));
  asm("{ .reg .pred t; isspacep.param t, %1; selp.u32 %0, 1, 0, t; }" : "=r"(r) : "l"(p));
  return __isGlobal(p) | __isShared(p) << 1 | __isLocal(p) << 2 | c << 3 | r << 4 |
         __isConstant(p) << 5;
}
__global__ void k(float *g, int *o) {
  __shared__ float sh[4];
  volatile float loc[4];
  int i = threadIdx.x;
  loc[i & 3] = i;
  o[6 * i] = where(g + i);
  o[6 * i + 1] = where(sh + (i & 3));
  o[6 * i + 2] = where((const void *)(loc + (i & 3)));
  o[6 * i + 3] = where(dev + (i & 1));
  o[6 * i + 4] = where((const char *)sh + 4096);
  o[6 * i + 5] = where(con + (i & 3)) + (int)loc[i & 3] * 0;
  o[6 * 64 + i] = where(nullptr);
}]]
  local ptx = k:ptx()
  check(ptx:find("isspacep.global", 1, true) and ptx:find("isspacep.const", 1, true),
        "NVRTC asks isspacep in the function")
  local o = cuda.zeros(7 * 64, "i32")
  k[{1, 64}](cuda.zeros(64), o)
  -- bits: 1 global, 2 shared, 4 local, 8 shared::cluster, 16 param, 32 const, as an H100
  -- answers them (a constant address is no global one; shared ones, past the block's bytes too,
  -- are the cluster's as well)
  local want = {1, 2 | 8, 4, 1, 2 | 8, 32}
  for i = 0, 63 do
    for j = 1, 6 do checkeq(o[6 * i + j - 1], want[j], ("thread %d, pointer %d"):format(i, j)) end
    checkeq(o[6 * 64 + i], 1, "NULL is a global address")
  end
end)

-- Every form here passes ptxas for sm_90; none changes a result.
test("cache hints run and change no result: policies, priorities, prefetch sizes, discard",
     function()
  local k = cuda.kernel[[
__global__ void hints(const float *in, float *out, float *scratch, unsigned *count, int n) {
  __shared__ float sh[128];
  int i = threadIdx.x;
  unsigned long long p1, p2, p3, p4;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p1));
  asm volatile("createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %0, 0.5;" : "=l"(p2));
  asm volatile("createpolicy.range.global.L2::evict_last.L2::evict_first.b64 %0, [%1], 256, 512;"
               : "=l"(p3) : "l"(in));
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0;" : "=l"(p4));
  float a, b, c, d, e;
  asm volatile("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(a) : "l"(in + i), "l"(p1));
  asm volatile("ld.global.L1::evict_first.L2::256B.f32 %0, [%1];" : "=f"(b) : "l"(in + i));
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.f32 %0, [%1], %2;"
               : "=f"(c) : "l"(in + i), "l"(p2));
  asm volatile("ld.L1::evict_unchanged.L2::64B.f32 %0, [%1];" : "=f"(d) : "l"(in + i));
  asm volatile("ld.global.nc.L2::128B.f32 %0, [%1];" : "=f"(e) : "l"(in + i));
  asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(in + i));
  asm volatile("prefetchu.L1 [%0];" :: "l"(in + i));
  asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(scratch));
  unsigned s = (unsigned)__cvta_generic_to_shared(sh + i);
  asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 4, %2;"
               :: "r"(s), "l"(in + i), "l"(p3) : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  asm volatile("st.global.L1::evict_last.L2::cache_hint.f32 [%0], %1, %2;"
               :: "l"(out + i), "f"(a + b), "l"(p4) : "memory");
  asm volatile("st.global.L1::no_allocate.f32 [%0], %1;" :: "l"(out + n + i), "f"(c + d + e)
               : "memory");
  unsigned old;
  asm volatile("atom.global.add.L2::cache_hint.u32 %0, [%1], 1, %2;"
               : "=r"(old) : "l"(count), "l"(p1) : "memory");
  asm volatile("red.global.add.L2::cache_hint.f32 [%0], %1, %2;"
               :: "l"(scratch + 32), "f"(1.0f), "l"(p2) : "memory");
  __syncthreads();
  out[2 * n + i] = sh[i] + (float)(old >= (unsigned)n);
  if (i == 0) asm volatile("discard.global.L2 [%0], 128;" :: "l"(scratch) : "memory");
}]]
  local n = 128
  local inp, out, scratch, count = cuda.arange(n), cuda.zeros(3 * n), cuda.full(64, 5),
    cuda.zeros(1, "u32")
  k[{1, n}](inp, out, scratch, count, n)
  for i = 0, n - 1 do
    checkeq(out[i], 2 * i, "ld with .L2::cache_hint and .L2::256B, st with a policy, " .. i)
    checkeq(out[n + i], 3 * i, "ld with .L1 priorities and prefetch sizes, ld.nc, " .. i)
    checkeq(out[2 * n + i], i, "cp.async with a policy, atom with a policy, " .. i)
  end
  checkeq(count[0], n, "atom.add.L2::cache_hint counted every thread")
  checkeq(scratch[32], 5 + n, "red.add.L2::cache_hint added every thread")
  checkeq(scratch[0], 5, "discard.L2 kept the line (one of the outcomes PTX allows)")
end)

os.exit(T.done() and 0 or 1)
