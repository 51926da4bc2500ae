-- 11: each thread copies the input to the device heap (64 threads x 256 KiB: past the 8 MiB heap).
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("11_heap_null.cu")
n = 65536
x = cuda.arange(n, "f32")
out = cuda.zeros(64, "f32")
want = hunt.list(64, function(i) return 2 * i end)
function run()
  k[{1, 64}](x, out, n)
  return hunt.check("out", out, want)
end
run()
