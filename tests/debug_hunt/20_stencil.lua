-- 20: 3-point averages within blocks of 128 (an edge repeats its own value).
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("20_stencil.cu")
n = 256
x = cuda.arange(n, "f32")
y = cuda.zeros(n, "f32")
want = hunt.list(n, function(i)
  local t = i % 128
  local l = t > 0 and i - 1 or i
  local r = t < 127 and i + 1 or i
  return (l + i + r) / 3
end)
function run()
  k[{2, 128}](x, y)
  return hunt.check("y", y, want, 1e-6)
end
run()
