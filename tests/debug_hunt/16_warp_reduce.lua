-- 16: block sums of 256 values, the last warp unrolled.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("16_warp_reduce.cu")
x = cuda.array(hunt.list(512, function(i) return i % 10 end), "i32")
out = cuda.zeros(2, "i32")
want = {0, 0}
for i = 0, 511 do want[i // 256 + 1] = want[i // 256 + 1] + i % 10 end
function run()
  k[{2, 256}](x, out)
  return hunt.check("out", out, want)
end
run()
