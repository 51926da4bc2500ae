-- 08: transpose a 64 x 96 matrix (64 rows of 96).
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("08_transpose.cu")
rows, cols = 64, 96
inp = cuda.arange(rows * cols, "f32")
out = cuda.zeros(rows * cols, "f32")
want = {}
for r = 0, rows - 1 do
  for c = 0, cols - 1 do want[c * rows + r + 1] = r * cols + c end
end
function run()
  k[{{cols // 32, rows // 32}, {32, 32}}](inp, out, rows, cols)
  return hunt.check("out", out, want)
end
run()
