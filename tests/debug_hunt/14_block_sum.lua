-- 14: per-block sums through a __shared__ total.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("14_block_sum.cu")
x = cuda.ones(512, "f32")
sums = cuda.zeros(4, "f32")
want = {128, 128, 128, 128}
function run()
  k[{4, 128}](x, sums)
  return hunt.check("sums", sums, want)
end
run()
