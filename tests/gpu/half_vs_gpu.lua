-- half_vs_gpu.lua: 16-bit float instructions on the GPU and on the simulator, from the same random
-- bit patterns (NaN payloads, subnormals and infinities included, which no CPU reference in the
-- corpus dares to predict), compared bit for bit. A mismatch names the operation, its operands and
-- both results, which is what the simulator needs to learn the GPU's rule (NaN payloads, the
-- sign of zero, .sat of -0).
local T = dofile("tests/lua/testlib.lua")
T.plan(1)
local test, check = T.test, T.check

local SRC = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define H(u) __ushort_as_half((unsigned short)(u))
#define B(u) __ushort_as_bfloat16((unsigned short)(u))
#define HU(h) __half_as_ushort(h)
#define BU(h) __bfloat16_as_ushort(h)
__global__ void ops(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i];
  float fx = __uint_as_float(x * 2654435761u);
  unsigned *r = o + 24 * i;
  r[0] = HU(__hadd(H(x), H(y)));
  r[1] = HU(__hmul(H(x), H(y)));
  r[2] = HU(__hfma(H(x), H(y), H(z)));
  r[3] = HU(__hmin(H(x), H(y)));
  r[4] = HU(__hmax(H(x), H(y)));
  r[5] = HU(__hmin_nan(H(x), H(y)));
  r[6] = HU(__hneg(H(x)));
  r[7] = HU(__habs(H(x)));
  r[8] = HU(__hadd_sat(H(x), H(y)));
  r[9] = HU(__hfma_relu(H(x), H(y), H(z)));
  r[10] = BU(__hadd(B(x), B(y)));
  r[11] = BU(__hfma(B(x), B(y), B(z)));
  r[12] = BU(__hmax_nan(B(x), B(y)));
  r[13] = BU(__hneg(B(x)));
  r[14] = HU(__float2half_rn(fx));
  r[15] = HU(__float2half_rz(fx));
  r[16] = HU(__float2half_rd(fx));
  r[17] = HU(__float2half_ru(fx));
  r[18] = BU(__float2bfloat16_rn(fx));
  r[19] = BU(__float2bfloat16_rz(fx));
  r[20] = __float_as_uint(__half2float(H(x)));
  r[21] = __float_as_uint(__bfloat162float(B(x)));
  r[22] = (unsigned)__half2int_rn(H(x));
  r[23] = __hlt(H(x), H(y)) | __hequ(H(x), H(y)) << 1 | __hgt(B(x), B(y)) << 2;
}
]]
local NAMES = {"add.f16", "mul.f16", "fma.f16", "min.f16", "max.f16", "min.NaN.f16", "neg.f16", "abs.f16",
               "add.sat.f16", "fma.relu.f16", "add.bf16", "fma.bf16", "max.NaN.bf16", "neg.bf16",
               "cvt.rn.f16.f32", "cvt.rz.f16.f32", "cvt.rm.f16.f32", "cvt.rp.f16.f32", "cvt.rn.bf16.f32",
               "cvt.rz.bf16.f32", "cvt.f32.f16", "cvt.f32.bf16", "cvt.rni.s32.f16", "setp f16/bf16"}

test("f16 and bf16 instructions on random bit patterns: the simulator gives the GPU's bits", function()
  local n = 200000
  local function bits(seed)
    local u = cuda.rand(n, "f64", seed):tolist()
    local t = {}
    for i = 1, n do t[i] = math.floor(u[i] * 65536) end
    return t
  end
  local xs, ys, zs = bits(1), bits(2), bits(3)
  local out = {}
  for _, be in ipairs{"cuda", "sim"} do
    local old = cuda.use(be)
    local o = cuda.array(24 * n, "u32")
    cuda.kernel(SRC)[{(n + 255) // 256, 256}](cuda.array(xs, "u32"), cuda.array(ys, "u32"), cuda.array(zs, "u32"), o, n)
    out[be] = o:tolist()
    cuda.use(old)
  end
  -- per operation: how many differ, and the first two examples
  local bad, count, shown = 0, {}, {}
  for j = 1, 24 * n do
    if out.cuda[j] ~= out.sim[j] then
      bad = bad + 1
      local i, k = (j - 1) // 24 + 1, (j - 1) % 24 + 1
      count[k] = (count[k] or 0) + 1
      if count[k] <= 2 then
        shown[#shown + 1] = string.format("%s(0x%04x, 0x%04x, 0x%04x): gpu 0x%x, sim 0x%x", NAMES[k], xs[i], ys[i], zs[i],
                                          out.cuda[j], out.sim[j])
      end
    end
  end
  for k = 1, 24 do
    if count[k] then shown[#shown + 1] = string.format("%s: %d of %d differ", NAMES[k], count[k], n) end
  end
  check(bad == 0, bad .. " results differ:\n  " .. table.concat(shown, "\n  "))
end)

return T.done()
