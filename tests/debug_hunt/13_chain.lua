-- 13: suffix sums chained from block to block.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("13_chain.cu")
nb = 600 -- blocks of 1024 threads: more than the GPU holds at once
x = cuda.array(hunt.list(nb, function(i) return i + 1 end), "i32")
suffix = cuda.zeros(nb, "i32")
want = hunt.list(nb, function(i) return (nb * (nb + 1) - i * (i + 1)) // 2 end)
function run()
  ready = cuda.zeros(nb, "i32")
  k[{nb, 1024}](x, suffix, ready, nb)
  return hunt.check("suffix", suffix, want)
end
run()
