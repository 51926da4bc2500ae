-- 03: sums of neighbouring pairs, out[j] = a[2j] + a[2j + 1], within one warp.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("03_pairs.cu")
a = cuda.arange(32, "i32")
out = cuda.zeros(16, "i32")
want = hunt.list(16, function(j) return 4 * j + 1 end)
function run()
  k[{1, 32}](a, out)
  return hunt.check("out", out, want)
end
run()
