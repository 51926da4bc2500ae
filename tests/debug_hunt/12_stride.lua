-- 12: grid-stride partial sums: part[i] adds x[i], x[i + 128], ... (2 blocks of 64 threads).
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("12_stride.cu")
n = 1024
x = cuda.ones(n, "f32")
part = cuda.zeros(128, "f32")
want = hunt.list(128, function() return n // 128 end)
function run()
  k[{2, 64}](x, part, n)
  return hunt.check("part", part, want)
end
run()
