-- 15: matrix-vector product, one row per thread, 32 rows a block.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("15_dot.cu")
n = 8
a = cuda.ones(128 * n, "f32")
v = cuda.arange(n, "f32")
out = cuda.zeros(128, "f32")
want = hunt.list(128, function() return n * (n - 1) / 2 end)
function run()
  k[{4, 32}](a, v, out, n)
  return hunt.check("out", out, want)
end
run()
