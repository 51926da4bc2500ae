-- 01: a row sum. Expected: each sums[r] is the sum of row r.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("01_row_sum.cu")
rows, n = 64, 16
m = cuda.arange(rows * n, "f32")
sums = cuda.zeros(rows, "f32")
want = {}
for r = 0, rows - 1 do
  local s = 0
  for c = 0, n - 1 do s = s + r * n + c end
  want[r + 1] = s
end
function run()
  k[{1, 64}](m, sums, rows, n)
  return hunt.check("sums", sums, want)
end
run()
