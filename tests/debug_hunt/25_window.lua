-- 25: the maximum of each window of 8.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("25_window.cu")
n, w = 64, 8
x = cuda.array(hunt.list(n, function(i) return (i * 5) % 17 end), "f32")
out = cuda.zeros(n, "f32")
want = hunt.list(n, function(i)
  if i + w > n then return 0 end
  local m = -math.huge
  for j = 0, w - 1 do m = math.max(m, (i + j) * 5 % 17) end
  return m
end)
function run()
  k[{1, 64}](x, out, n, w)
  return hunt.check("out", out, want)
end
run()
