-- 23: a[i] + 1 for 1024 elements, 4 blocks of 64 threads in a grid-stride loop.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("23_grid_stride.cu")
n = 1024
want = hunt.list(n, function(i) return i + 1 end)
a = cuda.zeros(n, "i32")
function run()
  for i = 0, n - 1 do a[i] = i end
  k[{4, 64}](a, n)
  return hunt.check("a", a, want)
end
run()
