-- int_edges.lua: instructions whose edges NVRTC's own code seldom reaches but inline PTX does,
-- each against a CPU reference: testp's classes with lanes of mixed classes (a true answer
-- once set every higher lane too), mad.hi.sat.s32 and mad24.hi.sat.s32 (.sat was ignored: the
-- sum wrapped), and integer cvt to a signed type narrower than its register (the result was
-- zero-extended, where the ISA sign-extends).
local T = dofile("tests/lua/testlib.lua")
local test, checkeq = T.test, T.checkeq
T.plan(3)

local INF, NAN = 1 / 0, 0 / 0

test("testp: each lane's class alone, whatever the lanes beside it hold", function()
  local k = cuda.kernel[[
#define TESTP(kind, ty, c, v, out) \
  asm("{.reg .pred p; testp." kind "." ty " p, %1; selp.s32 %0, 1, 0, p;}" : "=r"(out) : c(v))
__global__ void classes(const float *x, const double *y, int *o, int n) {
  int i = threadIdx.x, r;
  if (i >= n) return;
  TESTP("finite", "f32", "f", x[i], r);    o[0 * n + i] = r;
  TESTP("infinite", "f32", "f", x[i], r);  o[1 * n + i] = r;
  TESTP("number", "f32", "f", x[i], r);    o[2 * n + i] = r;
  TESTP("notanumber", "f32", "f", x[i], r); o[3 * n + i] = r;
  TESTP("normal", "f32", "f", x[i], r);    o[4 * n + i] = r;
  TESTP("subnormal", "f32", "f", x[i], r); o[5 * n + i] = r;
  TESTP("finite", "f64", "d", y[i], r);    o[6 * n + i] = r;
  TESTP("infinite", "f64", "d", y[i], r);  o[7 * n + i] = r;
  TESTP("normal", "f64", "d", y[i], r);    o[8 * n + i] = r;
  TESTP("subnormal", "f64", "d", y[i], r); o[9 * n + i] = r;
}]]
  -- each class in several lanes, negative and positive, so that one lane's answer could leak
  -- into the lanes above it
  local v = {-INF, 1.0, INF, 0.0, -0.0, -2.5, NAN, 3e38, -INF, 5.0, -1e-40, 1e-40, -NAN, 7.0,
             -INF, -1e-300, 1e-300, INF, -1.0, 0.5, -INF, 2.0, 4.0, -INF, 8.0, 1e-45, -1e-45,
             INF, -3.0, -INF, 1.5, 9.0}
  local n = #v
  local o = cuda.zeros(10 * n, "i32")
  k[{1, 32}](cuda.array(v, "f32"), cuda.array(v, "f64"), o, n)
  local got = o:tolist()
  local function f32(x) return (string.unpack("f", string.pack("f", x))) end
  local function classes(x, min_normal)
    local finite = x == x and x ~= INF and x ~= -INF
    return {finite and 1 or 0, (x == INF or x == -INF) and 1 or 0, x == x and 1 or 0,
            x ~= x and 1 or 0, (finite and math.abs(x) >= min_normal) and 1 or 0,
            (finite and x ~= 0 and math.abs(x) < min_normal) and 1 or 0}
  end
  for i = 1, n do
    local c32 = classes(f32(v[i]), 2.0 ^ -126)
    local c64 = classes(v[i], 2.0 ^ -1022)
    local want = {c32[1], c32[2], c32[3], c32[4], c32[5], c32[6], c64[1], c64[2], c64[5], c64[6]}
    for row = 1, 10 do
      checkeq(got[(row - 1) * n + i], want[row], ("row %d, lane %d (%s)"):format(row, i - 1,
        tostring(v[i])))
    end
  end
end)

-- The s32 range and a CPU's 64-bit arithmetic, for the references below.
local function s32(x) x = x & 0xffffffff; return x >= 0x80000000 and x - 0x100000000 or x end
local function clamp32(x) return math.max(-0x80000000, math.min(0x7fffffff, x)) end
local function sx24(x) x = x & 0xffffff; return x >= 0x800000 and x - 0x1000000 or x end

test("mad.hi.sat.s32 and mad24.hi.sat.s32 clamp the sum, not wrap it", function()
  local k = cuda.kernel[[
__global__ void madsat(const int *a, const int *b, const int *c, int *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int r, s, w;
  asm("mad.hi.sat.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a[i]), "r"(b[i]), "r"(c[i]));
  asm("mad24.hi.sat.s32 %0, %1, %2, %3;" : "=r"(s) : "r"(a[i]), "r"(b[i]), "r"(c[i]));
  asm("mad.hi.s32 %0, %1, %2, %3;" : "=r"(w) : "r"(a[i]), "r"(b[i]), "r"(c[i]));
  o[3 * i] = r; o[3 * i + 1] = s; o[3 * i + 2] = w;
}]]
  local edges = {0, 1, -1, 255, 32767, 65536, 0x7fffffff, -0x80000000, 0x7fffff, -0x800000,
                 0x40000000, -0x40000000, 12345678, -987654321}
  local a, b, c = {}, {}, {}
  for _, x in ipairs(edges) do
    for _, y in ipairs(edges) do
      for _, z in ipairs({0x7fffffff, -0x80000000, 0, -1, 1, 0x7ffffff0}) do
        a[#a + 1], b[#b + 1], c[#c + 1] = x, y, z
      end
    end
  end
  local n = #a
  local o = cuda.zeros(3 * n, "i32")
  k[{(n + 127) // 128, 128}](cuda.array(a, "i32"), cuda.array(b, "i32"), cuda.array(c, "i32"),
    o, n)
  local got = o:tolist()
  for i = 1, n do
    -- the high 32 bits of the 64-bit product (Lua's integers are 64 bits: the product of two
    -- s32 fits), plus c, clamped; for mad24 the product of the low 24 bits' bits 47..16
    local hi = (a[i] * b[i]) >> 32
    hi = s32(hi)
    local p24 = sx24(a[i]) * sx24(b[i])
    local mid = s32(p24 >> 16)
    local what = ("a=%d b=%d c=%d"):format(a[i], b[i], c[i])
    checkeq(got[3 * i - 2], clamp32(hi + c[i]), "mad.hi.sat.s32 " .. what)
    checkeq(got[3 * i - 1], clamp32(mid + c[i]), "mad24.hi.sat.s32 " .. what)
    checkeq(got[3 * i], s32(hi + c[i]), "mad.hi.s32 (wraps) " .. what)
  end
end)

test("integer cvt to a narrower signed type sign-extends into a wider register", function()
  -- {instruction, destination register constraint and width, source constraint, source C
  -- type, array dtype, destination bits, signed}
  local forms = {
    {"cvt.s8.s16", "h", 16, "h", "short", "i16", 8},
    {"cvt.sat.s8.s16", "h", 16, "h", "short", "i16", 8},
    {"cvt.s8.s32", "r", 32, "r", "int", "i32", 8},
    {"cvt.sat.s8.s32", "r", 32, "r", "int", "i32", 8},
    {"cvt.s16.s32", "r", 32, "r", "int", "i32", 16},
    {"cvt.sat.s16.s32", "r", 32, "r", "int", "i32", 16},
    {"cvt.s8.s64", "l", 64, "l", "long long", "i64", 8},
    {"cvt.s16.s64", "l", 64, "l", "long long", "i64", 16},
    {"cvt.s32.s64", "l", 64, "l", "long long", "i64", 32},
    {"cvt.sat.s32.s64", "l", 64, "l", "long long", "i64", 32},
    {"cvt.s8.u32", "r", 32, "r", "int", "i32", 8},
    {"cvt.s16.s8", "r", 32, "r", "int", "i32", 16},
    {"cvt.u8.s32", "r", 32, "r", "int", "i32", -8},
    {"cvt.u16.s64", "l", 64, "l", "long long", "i64", -16},
  }
  local inputs = {-1, 0, 1, 0x7f, 0x80, 0xff, 0x180, -200, -1000, 0x7fff, 0x8000, 0xffff,
                  -0x80000000, 0x7fffffff, 0x12345678}
  for _, f in ipairs(forms) do
    local ins, dc, dbits, sc, cty, dtype, bits = table.unpack(f)
    local dty = ({[16] = "unsigned short", [32] = "unsigned", [64] = "unsigned long long"})[dbits]
    local k = cuda.kernel(([[
__global__ void conv(const %s *x, unsigned long long *y, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  %s d;
  asm("%s %%0, %%1;" : "=%s"(d) : "%s"(x[i]));
  y[i] = d;
}]]):format(cty, dty, ins, dc, sc))
    -- each input wrapped to the array's type, as C would store it
    local aw = ({i16 = 16, i32 = 32, i64 = 64})[dtype]
    local xs = {}
    for i, x in ipairs(inputs) do
      local u = aw == 64 and x or x & ((1 << aw) - 1)
      xs[i] = (aw < 64 and u >= 1 << (aw - 1)) and u - (1 << aw) or u
    end
    local n = #xs
    local y = cuda.zeros(n, "u64")
    k[{1, 32}](cuda.array(xs, dtype), y, n)
    local got = y:tolist()
    local src_signed = not ins:find("%.u32$")
    local sat = ins:find("%.sat") ~= nil
    for i, x in ipairs(xs) do
      -- the source as the instruction reads it: its own width and signedness ("s8" of cvt.s16.s8
      -- reads the low byte signed)
      local stype = ins:match("%.([su]%d+)$")
      local sw = tonumber(stype:sub(2))
      local v = x & ((1 << sw) - 1)
      if stype:sub(1, 1) == "s" and v >= 1 << (sw - 1) then v = v - (1 << sw) end
      if not src_signed then v = x & 0xffffffff end
      local w = math.abs(bits)
      local r
      if sat and bits > 0 then
        r = math.max(-(1 << (w - 1)), math.min((1 << (w - 1)) - 1, v))
      else
        r = v & ((1 << w) - 1)
        if bits > 0 and r >= 1 << (w - 1) then r = r - (1 << w) end
      end
      -- a signed result fills the register's width; an unsigned one is zero-extended
      local want = r & (dbits == 64 and -1 or ((1 << dbits) - 1))
      checkeq(got[i], want, ("%s of %d into a %d-bit register"):format(ins, x, dbits))
    end
  end
end)

T.done()
