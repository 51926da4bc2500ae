-- 18: y = 3 x over 1000 elements, 256 threads a block.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("18_tail.cu")
n = 1000
x = cuda.arange(n, "f32")
y = cuda.zeros(n, "f32")
want = hunt.list(n, function(i) return 3 * i end)
function run()
  k[{n // 256, 256}](x, y, 3, n)
  return hunt.check("y", y, want)
end
run()
