-- 10: per-thread buffers from the device heap.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("10_double_free.cu")
n = 4
out = cuda.zeros(32 * n, "i32")
want = hunt.list(32 * n, function(i) return (i // n) * (i % n) end)
function run()
  k[{1, 32}](out, n)
  return hunt.check("out", out, want)
end
run()
