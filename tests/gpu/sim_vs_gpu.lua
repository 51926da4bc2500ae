-- sim_vs_gpu.lua: the kernels in kernels/ run on the GPU and on the simulator from the same
-- inputs, and the results compared bit for bit. Exactness is the simulator's promise for
-- integer and .rn float arithmetic. The exceptions, each compared within a stated bound: float
-- atomicAdd across blocks (the order of additions differs from run to run, on the GPU too).
local T = dofile("tests/lua/testlib.lua")
T.plan(9)
local test, check, checkeq = T.test, T.check, T.checkeq

-- Runs body(backend) on the GPU and on the simulator; returns the two results as host buffers.
local function both(body)
  local out = {}
  for _, be in ipairs{"cuda", "sim"} do
    local old = cuda.use(be)
    out[be] = body():host()
    cuda.use(old)
  end
  return out.cuda, out.sim
end

local function same_bits(name, g, s, rtol)
  local _, r = cuda.compare(g, s, {rtol = rtol or 0, atol = 0})
  check(r.ok, name .. ": " .. tostring(r))
end

local function host_rand(n, dtype, seed, scale, offset)
  local h = cuda.host(n, dtype)
  local r = cuda.rand(n, dtype, seed):host()
  for i = 0, n - 1 do h[i] = r[i] * (scale or 1) + (offset or 0) end
  return h
end

test("inc, vector_add, saxpy: bitwise", function()
  local n = 50000
  local x, y = host_rand(n, "f32", 1, 100, -50), host_rand(n, "f32", 2, 3)
  same_bits("inc", both(function()
    local a = cuda.array(x); cuda.kernel("inc.cu")[{(n + 255) // 256, 256}](a, n); return a end))
  same_bits("vector_add", both(function()
    local c = cuda.array(n)
    cuda.kernel("vector_add.cu")[{(n + 127) // 128, 128}](cuda.array(x), cuda.array(y), c, n); return c end))
  same_bits("saxpy", both(function()
    local yy = cuda.array(y); cuda.kernel("saxpy.cu")[{32, 256}](n, 1.7, cuda.array(x), yy); return yy end))
end)

test("sin(x)*cos(x)+sqrt(|x|) in f64: bitwise", function()
  local n = 50000
  local x = host_rand(n, "f64", 3, 2000, -1000)
  same_bits("sincos", both(function()
    local o = cuda.array(n, "f64")
    cuda.kernel("sincos.cu")[{(n + 255) // 256, 256}](cuda.array(x), o, n); return o end))
end)

test("naive and tiled matmul: bitwise", function()
  local n = 96
  local A, B = host_rand(n * n, "f32", 4), host_rand(n * n, "f32", 5)
  for _, name in ipairs{"matmul_naive", "matmul_tiled"} do
    same_bits(name, both(function()
      local C = cuda.array(n * n)
      cuda.module("matmul.cu")[name][{{n // 16, n // 16}, {16, 16}}](cuda.array(A), cuda.array(B), C, n)
      return C end))
  end
end)

test("strided copy and transpose: bitwise", function()
  local n = 8192
  local a = host_rand(n * 8, "f32", 6)
  same_bits("strided", both(function()
    local b = cuda.array(n); cuda.kernel("strided.cu")[{n // 256, 256}](cuda.array(a), b, 8, n); return b end))
  for pad = 0, 1 do
    same_bits("transpose " .. pad, both(function()
      local b = cuda.array(1024)
      cuda.kernel("transpose.cu")[{1, {32, 32}}](cuda.array(host_rand(1024, "f32", 7)), b, pad)
      return b end))
  end
end)

test("cuda.rand and the built-in kernels give the host's numbers bit for bit", function()
  same_bits("rand f32", both(function() return cuda.rand(100003, "f32", 11) end))
  same_bits("rand f64", both(function() return cuda.rand(100003, "f64", 12) end))
  same_bits("arange i64", both(function() return cuda.arange(100003, "i64") end))
  for _, make in ipairs{function() return cuda.arange(100003, "u64") end,
                        function() return cuda.full(100003, -3, "u64") end} do
    local g, h = both(make) -- bytes, not compare: doubles would round 2^64 - 3 to 2^64
    checkeq(g:tobytes(), h:tobytes(), "u64 arange and full")
  end
  local ux, uy = cuda.host({1, -1, 2^63, 5, 7}, "u64"), cuda.host({1, 1, 0, 5, 8}, "u64")
  local old_be = cuda.use("cuda")
  local _, gu = cuda.compare(cuda.array(ux), cuda.array(uy))
  cuda.use(old_be)
  local _, hu = cuda.compare(ux, uy)
  checkeq(gu.mismatches, 3, "u64 compare on the GPU"); checkeq(gu.max_abs, hu.max_abs, "u64 max_abs")
  checkeq(gu.first[1], hu.first[1], "u64 first mismatch")
  same_bits("full u8", both(function() return cuda.full(100003, 200, "u8") end))
  local x, y = host_rand(100003, "f32", 13), host_rand(100003, "f32", 14)
  for i = 0, 100002, 7 do y[i] = x[i] end
  local old = cuda.use("cuda")
  local _, on_gpu = cuda.compare(cuda.array(x), cuda.array(y), {rtol = 0.5})
  cuda.use(old)
  local _, on_host = cuda.compare(x, y, {rtol = 0.5})
  checkeq(on_gpu.mismatches, on_host.mismatches, "mismatches")
  checkeq(on_gpu.max_abs, on_host.max_abs, "max_abs")
  checkeq(on_gpu.max_rel, on_host.max_rel, "max_rel")
  for k = 1, 5 do checkeq(on_gpu.first[k], on_host.first[k], "first mismatch " .. k) end
end)

test("16- and 8-bit dtypes: rand, arange, full and compare agree with the host bit for bit", function()
  for _, dt in ipairs{"f16", "bf16"} do
    local g, h = both(function() return cuda.rand(100003, dt, 15) end)
    checkeq(g:tobytes(), h:tobytes(), "rand " .. dt)
    g, h = both(function() return cuda.arange(70001, dt) end) -- f16 ties above 2048, inf past 65519
    checkeq(g:tobytes(), h:tobytes(), "arange " .. dt)
  end
  for _, dt in ipairs{"i16", "u16", "i8"} do
    local g, h = both(function() return cuda.arange(70001, dt) end)
    checkeq(g:tobytes(), h:tobytes(), "arange " .. dt)
  end
  local g, h = both(function() return cuda.full(100003, -3.5, "bf16") end)
  checkeq(g:tobytes(), h:tobytes(), "full bf16")
  -- Every f16 bit pattern against itself shifted by one: NaNs, infinities, subnormals, zeros.
  local x, y = cuda.host(65536 + 9, "u16"), cuda.host(65536 + 9, "u16")
  for i = 0, 65536 + 8 do x[i] = i % 65536; y[i] = (i * 7 + 1) % 65536 end
  for _, dt in ipairs{"f16", "bf16"} do
    local xa, ya = cuda.host(#x, dt), cuda.host(#x, dt)
    local old = cuda.use("cuda")
    local ax, ay = cuda.array(#x, dt), cuda.array(#x, dt)
    -- the bits go in through u16 arrays; a kernel copies them into the f16/bf16 arrays
    local cp = cuda.kernel("__global__ void cp(void *d, const unsigned short *s, int n) {" ..
      " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ((unsigned short *)d)[i] = s[i]; }")
    cp[{(#x + 255) // 256, 256}](ax, cuda.array(x), #x)
    cp[{(#x + 255) // 256, 256}](ay, cuda.array(y), #x)
    local _, on_gpu = cuda.compare(ax, ay, {rtol = 0.25, atol = 1e-3})
    ax:copyto(xa); ay:copyto(ya)
    cuda.use(old)
    checkeq(xa:tobytes(), x:tobytes(), "bits through the kernel")
    local _, on_host = cuda.compare(xa, ya, {rtol = 0.25, atol = 1e-3})
    checkeq(on_gpu.mismatches, on_host.mismatches, dt .. " mismatches")
    checkeq(on_gpu.max_abs, on_host.max_abs, dt .. " max_abs")
    checkeq(on_gpu.max_rel, on_host.max_rel, dt .. " max_rel")
    for k = 1, 5 do checkeq(on_gpu.first[k], on_host.first[k], dt .. " first mismatch " .. k) end
  end
end)

test("the built-in kernels over many strides of their grid, and each tail length", function()
  -- 2^24 + k elements: the compare kernel's steps of four loads, the loads after them, and the
  -- 0 to 3 elements past the last 16 bytes, on the grid that fills the GPU once
  for k = 0, 3 do
    local n = (1 << 24) + k
    local g, h = both(function() return cuda.rand(n, "f32", 20 + k) end)
    check(g:tobytes() == h:tobytes(), "rand f32 of 2^24 + " .. k .. " numbers")
    g, h = both(function() return cuda.arange(n, "f32") end)
    check(g:tobytes() == h:tobytes(), "arange f32 of 2^24 + " .. k .. " numbers")
  end
  local n = (1 << 24) + 3
  local old = cuda.use("cuda")
  local x = cuda.rand(n, "f32", 30)
  local y = cuda.array(n)
  x:copyto(y)
  for _, i in ipairs{n - 1, 9999999, (1 << 20) + 5, 70001, 7} do y[i] = y[i] * 1.5 + 0.25 end
  local _, on_gpu = cuda.compare(x, y, {rtol = 1e-6})
  local _, equal = cuda.compare(x, x, {rtol = 0, atol = 0})
  cuda.use(old)
  local _, on_host = cuda.compare(x:host(), y:host(), {rtol = 1e-6})
  checkeq(on_gpu.mismatches, 5, "mismatches")
  checkeq(on_gpu.max_abs, on_host.max_abs, "max_abs")
  checkeq(on_gpu.max_rel, on_host.max_rel, "max_rel")
  for k = 1, 5 do checkeq(on_gpu.first[k], on_host.first[k], "first mismatch " .. k) end
  check(equal.ok and equal.mismatches == 0 and equal.max_abs == 0, tostring(equal))
end)

-- vabsdiff4 in each form the PTX ISA has for a register (every signedness, .sat, .add) and the
-- SIMD intrinsics NVRTC builds on it, on random words: the simulator's semantics
-- (ptx_opcodes.def's row, sim_alu.c's sem_vabsdiff4) against the GPU's.
test("vabsdiff4 and __vabsdiffu4, __vsadu4, __vabsdiffs4, __vsads4: bitwise", function()
  local body = {}
  for _, form in ipairs{"u32.u32.u32", "s32.s32.s32", "u32.s32.u32", "s32.u32.s32"} do
    for _, tail in ipairs{"", ".sat", ".add"} do
      body[#body + 1] = string.format('asm("vabsdiff4.%s%s %%0, %%1, %%2, %%3;" : "=r"(r) : ' ..
        '"r"(x), "r"(y), "r"(z)); out[k++ * n + i] = r;', form, tail)
    end
  end
  for _, f in ipairs{"__vabsdiffu4", "__vsadu4", "__vabsdiffs4", "__vsads4"} do
    body[#body + 1] = "out[k++ * n + i] = " .. f .. "(x, y);"
  end
  local src = "__global__ void v(const unsigned *a, const unsigned *b, const unsigned *c, " ..
    "unsigned *out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x, k = 0;\n" ..
    "  if (i >= n) return;\n  unsigned x = a[i], y = b[i], z = c[i], r;\n  " ..
    table.concat(body, "\n  ") .. "\n}"
  local n, w = 8192, {}
  for j = 1, 3 do
    w[j] = cuda.host(n, "u32")
    local r = cuda.rand(n, "f64", 30 + j):host()
    for i = 0, n - 1 do w[j][i] = math.floor(r[i] * 2^32) end
  end
  same_bits("vabsdiff4", both(function()
    local out = cuda.zeros(#body * n, "u32")
    cuda.kernel(src)[{n // 128, 128}](cuda.array(w[1]), cuda.array(w[2]), cuda.array(w[3]), out, n)
    return out
  end))
end)

test("reductions: integer atomics exact, float sums within rounding of each other", function()
  local n = 1 << 16
  local ints = cuda.host(n, "i32")
  for i = 0, n - 1 do ints[i] = (i * 7919) % 1000 - 500 end
  same_bits("reduce_atomic (i32)", both(function()
    local o = cuda.array(1, "i32")
    cuda.module("reduce.cu").reduce_atomic[{n // 256, 256}](cuda.array(ints), o, n); return o end))
  local x = host_rand(n, "f32", 8)
  for _, name in ipairs{"reduce_shared", "reduce_shuffle"} do
    local g, s = both(function()
      local o = cuda.array(1)
      cuda.module("reduce.cu")[name][{n // 256, 256, shared = 1024}](cuda.array(x), o, n); return o end)
    same_bits(name, g, s, 1e-5)
  end
end)

return T.done()
