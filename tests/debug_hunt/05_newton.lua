-- 05: y[i] after 50 damped turns toward sqrt(x[i] - 0.1 k).
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("05_newton.cu")
n = 64
x = cuda.array(hunt.list(n, function(i) return i + 1 end), "f32")
y = cuda.zeros(n, "f32")
-- the CPU's version clamps the gap at zero, as the author meant to
want = {}
for i = 0, n - 1 do
  local v = 1
  for t = 0, 49 do v = 0.5 * (v + math.sqrt(math.max(0, (i + 1) - 0.1 * t))) end
  want[i + 1] = v
end
function run()
  k[{1, 64}](x, y, n)
  return hunt.check("y", y, want, 1e-4)
end
run()
