-- 19: square 2048 values with one block of 2048 threads.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("19_big_block.cu")
n = 2048
want = hunt.list(n, function(i) return i * i end)
x = cuda.zeros(n, "f32")
function run()
  for i = 0, n - 1 do x[i] = i end
  k[{1, n}](x, n)
  return hunt.check("x", x, want)
end
run()
