-- spill48.lua: the register-spill kernel of the timing model's effect set (effects.lua) and of
-- its test (tests/simulator/model_effects.lua), written once: 48 live floats per thread, which
-- fit in the registers one block of 256 per SM allows and spill to local memory when
-- __launch_bounds__ asks for more blocks. Returns {source = fn(minBlocks, name), ref = fn}.
local M = {}

local function f32(v) return (string.unpack("f", string.pack("f", v))) end

-- The kernel named `name` under __launch_bounds__(256, minb).
function M.source(minb, name)
  return string.format([[
extern "C" __global__ void __launch_bounds__(256, %d)
%s(const float *x, float *y, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a[48];
#pragma unroll
  for (int j = 0; j < 48; j++) a[j] = x[(i + j * 977) %% n];
  for (int k = 0; k < iters; k++) {
#pragma unroll
    for (int j = 0; j < 48; j++) a[j] = fmaf(a[j], 0.999f, a[(j + 7) %% 48] * 0.001f);
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; j++) s = fmaf(a[j], (float)(j + 1), s);
  y[i] = s;
}
]], minb, name)
end

-- y[i] computed on the CPU in float arithmetic, from x (anything indexable from 0).
function M.ref(x, i, n, iters)
  local a = {}
  for j = 0, 47 do a[j] = x[(i + j * 977) % n] end
  for _ = 1, iters do
    for j = 0, 47 do a[j] = f32(a[j] * f32(0.999) + f32(a[(j + 7) % 48] * f32(0.001))) end
  end
  local s = 0
  for j = 0, 47 do s = f32(a[j] * (j + 1) + s) end
  return s
end

return M
