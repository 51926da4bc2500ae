-- opcodes.lua: instructions as sim/ptx_opcodes.def's rows describe them, from Lua: vabsdiff4
-- (the SIMD intrinsics __vabsdiffu4, __vsadu4, __vabsdiffs4 and __vsads4, and inline PTX with
-- each type and .sat and .add) against a CPU reference, and vote.sync.uni (__uni_sync), whose
-- .uni was once taken for bra's. Modifiers an instruction does not take never get this far (ptxas
-- refuses them first); tests/sim/test_errors.c loads such PTX into the simulator directly.
-- tests/gpu/sim_vs_gpu.lua runs the same vabsdiff4 forms on the GPU.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(3)

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

os.exit(T.done() and 0 or 1)
