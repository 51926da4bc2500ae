-- 04: the total of 1 .. 256.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("04_total.cu")
n = 256
x = cuda.array(hunt.list(n, function(i) return i + 1 end), "i32")
tot = cuda.zeros(1, "i32")
function run()
  tot[0] = 0
  k[{4, 64}](x, tot, n)
  return hunt.check("tot", tot, {n * (n + 1) // 2})
end
run()
