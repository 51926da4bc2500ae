-- dtypes.lua: the 16- and 8-bit element types (f16, bf16, i16, u16, i8): conversion from Lua
-- numbers (round to nearest even, once, as the GPU's cvt.rn), exact reads, ranges, printing,
-- compare, rand, and the kernel-signature checks for __half, nv_bfloat16, short, int8_t...;
-- u64, whose values above 2^63 - 1 read into Lua as the integers with the same bits; and
-- cuda.dtypes, the list the rest is derived from. Runs on any backend.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(17)

local function stored(dtype, v) return cuda.array({v}, dtype)[0] end

test("new dtypes: sizes, names, zero fill", function()
  for dt, size in pairs{f16 = 2, bf16 = 2, i16 = 2, u16 = 2, i8 = 1} do
    local a = cuda.array(7, dt)
    checkeq(a.dtype, dt); checkeq(a.nbytes, 7 * size, dt .. " nbytes")
    for i = 0, 6 do checkeq(a[i], math.type(a[i]) == "integer" and 0 or 0.0, dt) end
  end
end)

test("f16 rounds to nearest even, once, and reads back exactly", function()
  checkeq(stored("f16", 0.1), 0.0999755859375)
  checkeq(stored("f16", 1 + 2^-11), 1.0, "a tie goes to the even neighbour")
  checkeq(stored("f16", 1 + 3 * 2^-11), 1 + 2^-9, "and up when that is even")
  checkeq(stored("f16", 1 + 2^-11 + 2^-40), 1 + 2^-10, "one rounding: just above a tie goes up")
  checkeq(stored("f16", 65504), 65504.0)
  checkeq(stored("f16", 65519.99), 65504.0)
  checkeq(stored("f16", 65520), math.huge, "overflow gives inf, as cvt.rn does")
  checkeq(stored("f16", -1e6), -math.huge)
  checkeq(stored("f16", 2^-24), 2^-24, "smallest subnormal")
  checkeq(stored("f16", 2^-25), 0.0, "half of it ties to zero")
  checkeq(stored("f16", 2^-25 * 1.0001), 2^-24)
  checkeq(stored("f16", 3 * 2^-26), 2^-24 * 1, "0.75 of a subnormal step rounds up")
  checkeq(1 / stored("f16", -0.0), -math.huge, "negative zero keeps its sign")
  local nan = stored("f16", 0 / 0)
  check(nan ~= nan, "NaN stays NaN")
end)

test("bf16 rounds to nearest even, once, and reads back exactly", function()
  checkeq(stored("bf16", 0.1), 0.10009765625)
  checkeq(stored("bf16", 1 + 2^-8), 1.0)
  checkeq(stored("bf16", 1 + 3 * 2^-8), 1 + 2^-6)
  checkeq(stored("bf16", 1 + 2^-8 + 2^-30), 1 + 2^-7, "through a float it would round twice, to 1")
  checkeq(stored("bf16", 3.3895313892515355e38), 3.3895313892515355e38, "largest finite")
  checkeq(stored("bf16", 3.4e38), math.huge)
  checkeq(stored("bf16", 1e-40), 1e-40 // 2^-133 * 2^-133 + (1e-40 % 2^-133 >= 2^-134 and 2^-133 or 0),
          "subnormals")
  checkeq(stored("bf16", 16777217), 16777216.0)
end)

test("integer dtypes hold their full range and refuse the rest", function()
  for dt, r in pairs{i16 = {-32768, 32767}, u16 = {0, 65535}, i8 = {-128, 127}} do
    local a = cuda.array({r[1], r[2], 5}, dt)
    checkeq(a[0], r[1], dt); checkeq(a[1], r[2], dt); checkeq(math.type(a[2]), "integer")
    checkerr(string.format("does not fit in %s (%d..%d)", dt, r[1], r[2]), cuda.array, {r[2] + 1}, dt)
    checkerr(string.format("does not fit in %s (%d..%d)", dt, r[1], r[2]), cuda.array, {r[1] - 1}, dt)
    checkerr(dt .. " holds whole numbers", cuda.array, {1.5}, dt)
    checkerr("does not fit in " .. dt, function() a[0] = r[2] + 1 end)
    checkerr("does not fit in " .. dt, cuda.full, 4, r[1] - 1, dt)
  end
end)

test("unknown dtype lists the new ones", function()
  checkerr("unknown dtype 'f8' (choose one of f32, f64, i32, u32, i64, u8, f16, bf16, i16, u16, i8, u64)",
           cuda.array, 3, "f8")
  checkerr("f16, bf16, i16, u16, i8, u64", cuda.host, 3, "half2")
end)

test("C spellings name the same dtypes", function()
  checkeq(cuda.array(1, "__half").dtype, "f16")
  checkeq(cuda.array(1, "__nv_bfloat16").dtype, "bf16")
  checkeq(cuda.array(1, "short").dtype, "i16")
  checkeq(cuda.array(1, "uint16_t").dtype, "u16")
  checkeq(cuda.array(1, "int8_t").dtype, "i8")
end)

test("constructors, fill and host buffers", function()
  local o = cuda.ones(5, "f16"):tolist()
  for i = 1, 5 do checkeq(o[i], 1.0) end
  checkeq(cuda.full(9, 0.1, "bf16")[8], 0.10009765625)
  local r = cuda.arange(300, "i8"):tolist()
  checkeq(r[128], 127); checkeq(r[129], -128, "arange wraps as a C cast does")
  local f = cuda.arange(2100, "f16"):tolist()
  checkeq(f[2049], 2048.0); checkeq(f[2050], 2048.0, "2049 rounds to even in f16")
  local a = cuda.array(33, "u16"):fill(65535)
  checkeq(a[32], 65535)
  local h = cuda.host({1.5, -2, 1e5}, "f16", {pinned = true})
  checkeq(h[2], math.huge)
  local d = cuda.array(h)
  checkeq(d.dtype, "f16"); checkeq(d[0], 1.5)
  local back = cuda.host(3, "f16"); d:copyto(back)
  checkeq(back[1], -2.0)
  checkerr("length and dtype must match", function() d:copyto(cuda.host(3, "bf16")) end)
  checkeq(#a:tobytes(), 66)
end)

test("rand: f16 and bf16 are exact multiples of 2^-11 and 2^-8 in [0, 1)", function()
  for dt, step in pairs{f16 = 2^-11, bf16 = 2^-8} do
    local x, y = cuda.rand(4001, dt, 5):tolist(), cuda.rand(4001, dt, 5):tolist()
    local distinct, sum = {}, 0
    for i = 1, #x do
      checkeq(x[i], y[i], "same seed, same numbers")
      check(x[i] >= 0 and x[i] < 1, dt .. " out of [0, 1): " .. x[i])
      checkeq(x[i] % step, 0.0, dt .. " grid")
      distinct[x[i]] = true; sum = sum + x[i]
    end
    local n = 0
    for _ in pairs(distinct) do n = n + 1 end
    check(n > (dt == "f16" and 1500 or 200), dt .. ": only " .. n .. " distinct values")
    check(math.abs(sum / #x - 0.5) < 0.02, dt .. " mean " .. sum / #x)
    local z = cuda.array(4001, dt):rand(5):tolist()
    checkeq(z[4001], x[4001], "a:rand matches cuda.rand")
  end
  checkerr("use f32, f64, f16 or bf16, not i16", cuda.rand, 4, "i16")
end)

test("printing: fewest digits that read back, whole numbers as integers", function()
  local s = tostring(cuda.array({0.1, 65504, 1 / 0, -2.5, 2^-24}, "f16"))
  check(s:find("cuda.Array<f16>[5]", 1, true), s)
  check(s:find("[0.1, 65504, inf, -2.5, 5.96e-08]", 1, true), s)
  s = tostring(cuda.array({0.1, 3.0e38, 1 + 2^-7}, "bf16"))
  check(s:find("[0.1, 3e+38, 1.01]", 1, true), s) -- 1.01 reads back as 1 + 2^-7
  s = tostring(cuda.array({-128, 127}, "i8"))
  check(s:find("[-128, 127]", 1, true), s)
end)

test("compare with the new dtypes", function()
  local a = cuda.array({1, 2, 3}, "f16")
  check(cuda.compare(a, {1, 2, 3}))
  local _, r = cuda.compare(a, {1, 2, 3.01}, {rtol = 1e-3})
  check(not r.ok, "3 vs 3.01 differ beyond rtol 1e-3")
  check(cuda.compare(cuda.array({0.1}, "f16"), {0.1}, {rtol = 2^-11}), "within half an f16 ulp")
  local n = cuda.array({0 / 0}, "bf16")
  check(not cuda.compare(n, cuda.array({0 / 0}, "bf16")), "NaN never matches, not even NaN")
  check(cuda.compare(cuda.array({0.0}, "f16"), cuda.array({-0.0}, "f16")), "0 and -0 match")
  check(cuda.compare(cuda.arange(1000, "i16"), cuda.arange(1000, "i16")))
  check(not cuda.compare(cuda.array({1, 2}, "i8"), {1, 3}))
  local _, r16 = cuda.compare(cuda.array({0.1, 1000.3}, "f16"), {0.1, 1000.3})
  check(r16.ok and r16.rtol == 1e-3 and r16.atol == 1e-5, "f16's default tolerance: " .. tostring(r16))
  local _, rb = cuda.compare({0.1}, cuda.array({0.1}, "bf16"))
  check(rb.ok and rb.rtol == 1.6e-2, "bf16's default tolerance, on either side: " .. tostring(rb))
  checkeq(select(2, cuda.compare(cuda.array({1}, "f16"), cuda.array({1}, "bf16"))).rtol, 1.6e-2, "the looser wins")
  checkeq(select(2, cuda.compare(cuda.array({1}, "f32"), {1})).rtol, 1e-5, "f32 keeps its default")
  check(not cuda.compare(cuda.array({0.1}, "f16"), {0.1}, {rtol = 1e-6}), "an explicit rtol wins")
end)

local fp16 = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cstdint>\n"

-- A launch that passes the argument checks: it runs where kernels run, and on the backend without
-- a GPU stops only at "cannot run a kernel", after the checks this file is about.
local function launches(k, ...)
  local ok, err = pcall(k, ...)
  if not ok and not (cuda.backend() == "none" and tostring(err):find("cannot run a kernel", 1, true)) then
    error(err, 2)
  end
end

test("kernel signatures know the 16- and 8-bit pointee types", function()
  local cases = {
    {"__half *", "f16", "(__half)"}, {"half *", "f16", "(__half)"},
    {"const __nv_bfloat16 *", "bf16", "(__nv_bfloat16)"}, {"nv_bfloat16 *", "bf16", "(__nv_bfloat16)"},
    {"short *", "i16", "(short)"}, {"unsigned short *", "u16", "(unsigned short)"},
    {"uint16_t *", "u16", "(unsigned short)"}, {"int16_t *", "i16", "(short)"},
    {"signed char *", "i8", "(signed char)"}, {"int8_t *", "i8", "(signed char)"},
    {"const __half2 *", "f16", "(__half)"}, {"__nv_bfloat162 *", "bf16", "(__nv_bfloat16)"},
  }
  for _, c in ipairs(cases) do
    local k = cuda.kernel(fp16 .. "__global__ void k(" .. c[1] .. "p) { }")
    launches(k[{1, 1}], cuda.array(4, c[2])) -- the right dtype is accepted
    checkerr("the kernel expects an array of " .. c[2] .. " " .. c[3], function()
      k[{1, 1}](cuda.array(4, "f32"))
    end)
  end
  local k = cuda.kernel(fp16 .. "__global__ void k(unsigned short *p) { }")
  checkerr("got cuda.Array<f16>[4], but the kernel expects an array of u16", function()
    k[{1, 1}](cuda.array(4, "f16"))
  end)
  k = cuda.kernel(fp16 .. "__global__ void k(char *p) { }")
  launches(k[{1, 1}], cuda.array(4, "u8")); launches(k[{1, 1}], cuda.array(4, "i8")) -- char *: raw bytes, unchecked
end)

test("a __half or bf16 passed by value is converted from the Lua number", function()
  local k = cuda.kernel(fp16 .. [[
__global__ void bits(unsigned short *out, __half h, __nv_bfloat16 b, short s) {
  out[0] = __half_as_ushort(h); out[1] = __bfloat16_as_ushort(b); out[2] = (unsigned short)s;
}]])
  local out = cuda.array(3, "u16")
  launches(k[{1, 1}], out, 0.1, 0.1, -2)
  if cuda.backend() ~= "none" then checkeq(out[0], 0x2e66); checkeq(out[1], 0x3dcd); checkeq(out[2], 65534) end
  checkerr("expected a number, got string", function() k[{1, 1}](out, "x", 1, 1) end)
  checkerr("argument 4 (short s): 40000 does not fit in short (-32768..32767)", function() k[{1, 1}](out, 1, 1, 40000) end)
  checkerr("argument 4 (short s): 70000 does not fit in 16 bits", function() k[{1, 1}](out, 1, 1, 70000) end)
  local k8 = cuda.kernel("__global__ void k8(signed char c, unsigned char *out) { out[0] = c; }")
  checkerr("argument 1 (signed char c): -129 does not fit in 8 bits", function() k8[{1, 1}](-129, cuda.array(1, "u8")) end)
  checkerr("argument 1 (signed char c): 128 does not fit in signed char (-128..127)", function() k8[{1, 1}](128, cuda.array(1, "u8")) end)
end)

---------------------------------------------------------------- u64 --

local TOP = math.mininteger -- 2^63: the integer with its bits

test("cuda.dtypes lists every type in order, with what the messages and checks use", function()
  local names = {}
  for i, d in ipairs(cuda.dtypes) do
    names[i] = d.name
    checkeq(cuda.array(3, d.name).nbytes, 3 * d.size, d.name .. " size")
    checkeq(cuda.array(1, d.c_type).dtype, d.name, d.name .. "'s C spelling")
  end
  checkeq(table.concat(names, " "), "f32 f64 i32 u32 i64 u8 f16 bf16 i16 u16 i8 u64")
  local u = cuda.dtypes[12]
  checkeq(u.c_type, "unsigned long long"); checkeq(u.kind, "unsigned"); checkeq(u.size, 8)
  checkeq(cuda.dtypes[7].kind, "half"); checkeq(cuda.dtypes[1].digits, 7)
  checkerr("use f32, f64, f16 or bf16, not u64", cuda.rand, 4, "u64")
end)

test("u64 holds 0 .. 2^64 - 1; above 2^63 - 1 it reads as the integer with the same bits", function()
  local a = cuda.array({0, 1, math.maxinteger, 2^63, 2^64 - 2^11, -1}, "u64")
  checkeq(a[2], math.maxinteger); checkeq(a[3], TOP, "2^63 given as a float")
  checkeq(a[4], -2048, "2^64 - 2048: its bits"); checkeq(a[5], -1, "-1 stores 2^64 - 1")
  checkeq(math.type(a[3]), "integer")
  check(math.ult(a[2], a[3]), "math.ult orders them as the GPU does")
  checkeq(string.format("%u", a[5]), "18446744073709551615")
  local s = tostring(a)
  check(s:find("[0, 1, 9223372036854775807, 9223372036854775808, 18446744073709549568, " ..
    "18446744073709551615]", 1, true), s)
  checkeq(a:tobytes():sub(-8), string.rep("\xff", 8), "-1 is all ones")
  local back = cuda.array(a:tolist(), "u64")
  checkeq(back:tobytes(), a:tobytes(), "a:tolist() stores back bit for bit")
  a[0] = a[5]; checkeq(a[0], -1, "a[i] = a[j] keeps the bits")
  checkeq(cuda.array({"18"}, "u64")[0], 18, "a numeric string, as for every integer type")
end)

test("u64 refuses fractions and numbers past 2^64 - 1, naming the range", function()
  local range = "does not fit in u64 (0..18446744073709551615)"
  checkerr("element 0: 18446744073709551616 " .. range, cuda.array, {2^64}, "u64")
  checkerr("element 1: -9300000000000000000 " .. range, cuda.array, {1, -9.3e18}, "u64")
  checkerr("element 0: u64 holds whole numbers, got 1.5", cuda.array, {1.5}, "u64")
  checkerr("element 0: u64 holds whole numbers, got -0.5", cuda.full, 2, -0.5, "u64")
  checkerr("expected a number, got boolean", cuda.array, {true}, "u64")
  checkerr("element 0: 100000000000000000000 does not fit in i64", cuda.array, {1e20}, "i64")
  checkerr("element 0: 1e+300 does not fit in i8 (-128..127)", cuda.array, {1e300}, "i8")
  checkerr("element 0: 4294967296 does not fit in u32 (0..4294967295)", cuda.array, {2^32}, "u32")
end)

test("u64 on every path: constructors, fill, host buffers, copies, compare", function()
  checkeq(cuda.zeros(3, "u64")[2], 0); checkeq(cuda.ones(3, "u64")[2], 1)
  checkeq(cuda.full(5, 2^63, "u64")[4], TOP); checkeq(cuda.empty(2, "u64").dtype, "u64")
  local r = cuda.arange(70000, "u64"):tolist()
  checkeq(r[70000], 69999); checkeq(math.type(r[1]), "integer")
  local a = cuda.array(17, "u64"):fill(-2)
  checkeq(a[16], -2)
  local h = cuda.host({7, -1}, "u64", {pinned = true})
  local d = cuda.array(h); checkeq(d.dtype, "u64"); checkeq(d[1], -1)
  local back = cuda.host(2, "u64"); cuda.copy(back, d); checkeq(back[1], -1)
  checkerr("the dtypes differ", cuda.copy, cuda.array(2, "i64"), d)
  check(cuda.compare(d, {7, -1}), "a table's -1 is the array's 2^64 - 1")
  check(cuda.compare(d, h))
  local _, far = cuda.compare(cuda.array({-1}, "u64"), cuda.array({1}, "u64"))
  check(not far.ok and far.max_abs > 1e19, "2^64 - 1 and 1 are far apart: " .. tostring(far))
  local x, y = cuda.arange(1000, "u64"), cuda.arange(1000, "u64")
  y[999] = 0
  local _, c = cuda.compare(x, y)
  checkeq(c.mismatches, 1); checkeq(c.first[1], 999)
end)

test("kernels: unsigned long long * takes u64 arrays, and results come back unsigned", function()
  local k = cuda.kernel([[
#include <cstdint>
__global__ void k(unsigned long long *p, uint64_t *q, unsigned long long v, size_t n) {
  unsigned i = threadIdx.x;
  if (i < n) { p[i] = v * i; atomicAdd(&q[0], (unsigned long long)i); }
}]])
  local p, q = cuda.zeros(4, "u64"), cuda.zeros(1, "u64")
  launches(k[{1, 4}], p, q, -1, 4)
  if cuda.backend() ~= "none" then
    checkeq(p[1], -1); checkeq(p[3], -3); checkeq(q[0], 6)
    local s = tostring(p)
    check(s:find("[0, 18446744073709551615, 18446744073709551614, 18446744073709551613]", 1,
      true), s)
  end
  -- the same width of either signedness is accepted, as C's cast allows (atomicAdd has no
  -- signed 64-bit overload, so an i64 array goes to unsigned long long *)
  launches(k[{1, 4}], cuda.zeros(4, "i64"), q, 1, 4)
  checkerr("got cuda.Array<f64>[4], but the kernel expects an array of u64 (unsigned long long)",
    function() k[{1, 4}](cuda.zeros(4, "f64"), q, 1, 4) end)
  checkerr("argument 2 (uint64_t *q): got cuda.Array<u32>[1], but the kernel expects an array "
    .. "of u64", function() k[{1, 4}](p, cuda.zeros(1, "u32"), 1, 4) end)
  local s = cuda.kernel("__global__ void s(long long *p) { }")
  launches(s[{1, 1}], p)
  checkerr("the kernel expects an array of i64 (long long)", function() s[{1, 1}](cuda.zeros(4, "i32")) end)
end)

os.exit(T.done() and 0 or 1)
