-- 24: the sum of 20 values by a warp's shuffles (n = 20 of the 32 lanes).
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("24_shfl.cu")
x = cuda.ones(32, "f32")
out = cuda.zeros(1, "f32")
function run()
  k[{1, 32}](x, out, 20)
  return hunt.check("out", out, {20})
end
run()
