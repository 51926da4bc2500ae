-- 09: per-block scratch lists on the device heap.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("09_heap_uaf.cu")
n = 32
sums = cuda.zeros(4, "i32")
want = hunt.list(4, function(b) return n * (n - 1) // 2 + n * b end)
function run()
  k[{4, n}](sums, n)
  return hunt.check("sums", sums, want)
end
run()
