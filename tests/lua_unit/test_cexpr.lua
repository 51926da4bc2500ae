-- test_cexpr.lua: the C expressions of the debugger's conditions and print,
-- evaluated with C's meaning (truth of 0, integer division toward zero, &&
-- that does not evaluate its right side), and the messages for expressions
-- that are wrong or ask for what is not there.

local cdecl = require "cdecl"
local cexpr = require "cexpr"
local ctype = require "ctype"

-- The C type a test's Lua value stands for: an integer an int, a float a float, a boolean a
-- bool, {x, y, z} a dim3, a list an int array; a table {v, "type"} says its type itself.
local function typed(v)
  if type(v) == "table" and v[2] and type(v[2]) == "string" then return v[1], ctype.parse(v[2]) end
  if type(v) == "boolean" then return v and 1 or 0, ctype.BOOL end
  if type(v) == "table" and v.x then return v, ctype.DIM3 end
  if type(v) == "table" then return v, ctype.array(ctype.INT, v.n or #v) end
  if math.type(v) == "float" then return v, ctype.FLOAT end
  return v, ctype.INT
end

-- Evaluates src with the variables of vars and memory mem (address -> byte string).
local function eval(src, vars, mem)
  local fn, err = cexpr.compile(src)
  if not fn then error("compile: " .. err, 0) end
  return (fn({
    get = function(name)
      local v = (vars or {})[name]
      if v == nil then error(("no variable '%s'"):format(name), 0) end
      return typed(v)
    end,
    mem = function(a, n)
      local bytes = (mem or {})[a]
      if not bytes or #bytes < n then error(("nothing at 0x%x"):format(a), 0) end
      return bytes:sub(1, n)
    end,
  }))
end

-- The value and the C type's name src gives.
local function typed_eval(src, vars)
  local fn, err = cexpr.compile(src)
  if not fn then error("compile: " .. err, 0) end
  local v, t = fn({ get = function(name) -- a variable, else an enum's value (as the debugger's)
      local e = ctype.enumerators[name]
      if (vars or {})[name] == nil and e then return e.v, e.t end
      return typed((vars or {})[name])
    end,
    mem = function() error("no memory", 0) end })
  return v, t.name
end

local function compile_error(src)
  local fn, err = cexpr.compile(src)
  check(fn == nil, src .. " compiled")
  return err
end

test("cexpr: arithmetic and precedence as in C", function()
  checkeq(eval("1 + 2 * 3"), 7)
  checkeq(eval("(1 + 2) * 3"), 9)
  checkeq(eval("1 << 2 + 1"), 8)
  checkeq(eval("6 & 3 | 8"), 10)
  checkeq(eval("5 ^ 1"), 4)
  checkeq(eval("-3 + +5"), 2)
  checkeq(eval("~0"), -1)
  checkeq(eval("0x1f + 010"), 39) -- 010 is octal, as in C
  checkeq(eval("1.5f * 2"), 3.0)
end)

test("cexpr: integer division and remainder truncate toward zero", function()
  checkeq(eval("7 / 2"), 3)
  checkeq(eval("-7 / 2"), -3)
  checkeq(eval("-7 % 2"), -1)
  checkeq(eval("7 % -2"), 1)
  checkeq(eval("7.0 / 2"), 3.5)
end)

test("cexpr: comparisons and logic give 1 or 0, and 0 is false", function()
  checkeq(eval("3 == 3"), 1)
  checkeq(eval("3 != 3"), 0)
  checkeq(eval("2 < 3 && 3 <= 3"), 1)
  checkeq(eval("0 || 0"), 0)
  checkeq(eval("!0"), 1)
  checkeq(eval("!5"), 0)
  checkeq(eval("i && 1", { i = 0 }), 0)
  checkeq(cexpr.truth(0), false)
  checkeq(cexpr.truth(0.5), true)
  checkeq(cexpr.truth(true), true)
end)

test("cexpr: && and || do not evaluate what they need not", function()
  checkeq(eval("0 && nosuch > 1"), 0)
  checkeq(eval("1 || nosuch > 1"), 1)
  checkerr("no variable 'nosuch'", eval, "1 && nosuch > 1")
end)

test("cexpr: variables, members and arrays", function()
  local vars = { i = 101, threadIdx = { x = 5, y = 0, z = 0 }, loc = { 4, 5, 6, n = 3 },
    flag = true, f = 0.25 }
  checkeq(eval("threadIdx.x == 5 && i > 100", vars), 1)
  checkeq(eval("loc[2] - loc[0]", vars), 2)
  checkeq(eval("flag + 1", vars), 2)
  checkeq(eval("f * 4", vars), 1.0)
  checkerr("index 3 is outside the array (0 to 2)", eval, "loc[3]", vars)
  checkerr("'w' is not a member of dim3 (its members are x, y and z)", eval, "threadIdx.w", vars)
  checkerr("only an array or a pointer can be indexed, and this is an int", eval, "i[0]", vars)
  checkerr("an operand of + is an array, not a number", eval, "loc + 1", vars)
end)

test("cexpr: C's integer widths: an int wraps, casts widen, unsigned wraps at 32 bits", function()
  local vars = { y = 65536, width = 32768, x = 0 }
  checkeq(eval("y * width + x", vars), -2147483648)
  checkeq(eval("(long long)y * width + x", vars), 2147483648)
  checkeq(eval("0u - 1"), 4294967295)
  checkeq(eval("-1 < 0u"), 0)
  checkeq(eval("(char)300"), 44)
  checkeq(eval("(int)2.9 + (int)-2.9"), 0)
  checkeq(eval("sizeof(double) + sizeof x", vars), 12)
  checkeq(eval("x ? 1 : 2", vars), 2)
  checkeq(eval("2147483647 + 1"), -2147483648)
  checkeq(eval("2147483648"), 2147483648)
end)

test("cexpr: pointers index and dereference memory", function()
  local vars = { p = { 0x1000, "float *" }, q = { 0x1008, "float *" }, r = { 7, "int" } }
  local mem = { [0x1000] = string.pack("<ffff", 1, 2, 3, 4), [0x1004] = string.pack("<fff", 2, 3, 4),
    [0x1008] = string.pack("<ff", 3, 4), [0x100c] = string.pack("<f", 4) }
  checkeq(eval("p[2]", vars, mem), 3.0)
  checkeq(eval("*q", vars, mem), 3.0)
  checkeq(eval("q - p", vars, mem), 2)
  checkeq(eval("&p[2] == q", vars, mem), 1)
  checkeq(eval("*(p + 3)", vars, mem), 4.0)
  local four = eval("p[0]@4", vars, mem)
  checkeq(four.n, 4)
  checkeq(four[4], 4.0)
  checkerr("nothing at 0x1010", eval, "p[4]", vars, mem)
  checkerr("& needs something in memory", eval, "&r", vars, mem)
  checkerr("* needs a pointer, and this is int", eval, "*r", vars, mem)
  checkerr("after @ comes how many elements", eval, "p[0]@0", vars, mem)
end)

test("cexpr: what cannot be computed says why", function()
  checkerr("division by zero", eval, "1 / 0")
  checkerr("division by zero", eval, "1 % 0")
  checkerr("% needs integers", eval, "1.5 % 2")
  checkerr("<< needs integers", eval, "1.5 << 2")
end)

test("cexpr: syntax errors name what is missing and where", function()
  checkeq(compile_error("i >"), "an operand is missing at the end")
  checkeq(compile_error("(i > 1"), "a ')' is missing at the end")
  checkeq(compile_error("i > 1 )"), "unexpected text at ')'")
  checkeq(compile_error("i = 1"), "'=' assigns in C; a condition compares with ==")
  checkeq(compile_error(""), "the expression is empty")
  checkeq(compile_error("a[1"), "a ']' is missing at the end")
  checkeq(compile_error("threadIdx."), "a member name is missing at the end")
  checkeq(compile_error("i $ 2"), "'$' cannot be part of an expression")
end)

test("cexpr: the names an expression reads", function()
  checkeq(cexpr.names("threadIdx.x == 5 && i > x"), { "threadIdx", "i", "x" })
end)

test("cexpr: a NaN compares false with everything but !=, as in C", function()
  local nan = { 0 / 0, "float" }
  checkeq(eval("x > 1.0f", { x = nan }), 0)
  checkeq(eval("x >= 1.0f", { x = nan }), 0)
  checkeq(eval("x < 1.0f", { x = nan }), 0)
  checkeq(eval("x == x", { x = nan }), 0)
  checkeq(eval("x != x", { x = nan }), 1)
end)

test("cexpr: literals as C reads them: octal, hex, binary, their suffixes and types", function()
  checkeq(eval("010"), 8)
  checkeq(eval("0777"), 511)
  checkeq(eval("0"), 0)
  checkeq(eval("0b1011"), 11)
  checkeq(eval("0x1p4"), 16.0)
  checkeq({ typed_eval("2147483647") }, { 2147483647, "int" })
  checkeq({ typed_eval("2147483648") }, { 2147483648, "long long" })
  checkeq({ typed_eval("0x7fffffff") }, { 2147483647, "int" })
  checkeq({ typed_eval("0xffffffff") }, { 4294967295, "unsigned int" }) -- hex: unsigned first
  checkeq({ typed_eval("4294967295") }, { 4294967295, "long long" })    -- decimal: signed
  checkeq({ typed_eval("4294967295u") }, { 4294967295, "unsigned int" })
  checkeq({ typed_eval("1ul") }, { 1, "unsigned long long" })
  checkeq({ typed_eval("1LL") }, { 1, "long long" })
  checkeq({ typed_eval("7llu") }, { 7, "unsigned long long" })
  -- 2^64 - 1: an unsigned long long, held as its bits
  checkeq({ typed_eval("18446744073709551615ull") }, { -1, "unsigned long long" })
  checkeq({ typed_eval("0xffffffffffffffff") }, { -1, "unsigned long long" })
  checkeq({ typed_eval("9223372036854775808") }, { math.mininteger, "unsigned long long" })
  checkeq(compile_error("08"), "'08' is not a number: a 0 in front makes it octal, whose digits "
    .. "are 0 to 7")
  checkeq(compile_error("18446744073709551616"), "'18446744073709551616' is too large for any "
    .. "integer type")
  checkeq(compile_error("0x1ffffffffffffffff"), "'0x1ffffffffffffffff' is too large for any "
    .. "integer type")
  checkeq(compile_error("12abc"), "'12abc' is not a number")
  checkeq(compile_error("1.5x"), "'1.5x' is not a number")
  checkeq(compile_error("10f"), "'10f' is not a number (write 10.0f)")
  checkeq(compile_error("1uu"), "'1uu' is not a number")
end)

-- a / b and a % b of unsigned 64-bit integers, one bit at a time (restoring division): the
-- reference udivmod is checked against.
local function slow_udivmod(a, b)
  local q, r = 0, 0
  for bit = 63, 0, -1 do
    local carry = r < 0 -- r << 1 would pass 2^64
    r = (r << 1) | ((a >> bit) & 1)
    q = q << 1
    if carry or not math.ult(r, b) then
      r = r - b
      q = q | 1
    end
  end
  return q, r
end

test("cexpr: unsigned long long is C's: / and % unsigned past 2^63, no refusal", function()
  local vars = { big = { -1, "unsigned long long" }, half = { math.mininteger, "uint64_t" } }
  checkeq(eval("big % 10", vars), 5)
  checkeq(eval("big % 10 == 5", vars), 1)
  checkeq(eval("big / 10", vars), 1844674407370955161)
  checkeq(eval("big / 3", vars), 6148914691236517205)
  checkeq(eval("(big - 5) % half", vars), 9223372036854775802)
  checkeq(eval("big / half", vars), 1)
  checkeq(eval("half / big", vars), 0)
  checkeq(eval("big / big", vars), 1)
  checkeq(eval("0xffffffffffffffffull % 10"), 5)
  checkeq(eval("big > 1", vars), 1)
  checkeq(eval("-1 / 2u"), 2147483647) -- -1 converted to unsigned int first
  checkeq(eval("-7 / 2ll"), -3)
  checkeq(eval("(long long)-9223372036854775807 - 1", vars), math.mininteger)
  checkeq(eval("((long long)-9223372036854775807 - 1) % -1"), 0)
  local seed = 12345
  local function rand64()
    seed = seed * 6364136223846793005 + 1442695040888963407
    return seed ~ (seed >> 29)
  end
  for i = 1, 2000 do
    local a, b = rand64(), rand64() >> (i % 64)
    if b == 0 then b = 7 end
    local q, r = ctype.udivmod(a, b)
    local wq, wr = slow_udivmod(a, b)
    check(q == wq and r == wr, ("%x / %x: %x r %x, want %x r %x"):format(a, b, q, r, wq, wr))
  end
end)

test("cexpr: integers become floats rounded once, to nearest, as C converts them", function()
  local vars = { big = { -1, "unsigned long long" },
    w = { -(1 << 39) - 2, "unsigned long long" }, -- 2^64 - 2^39 - 1
    v = { (1 << 53) + (1 << 29) + 1, "long long" } }
  checkeq(eval("(double)big", vars), 18446744073709551616.0)
  checkeq(eval("(float)big", vars), 18446744073709551616.0)
  -- through a double first, these would round twice and land on a tie's other side
  checkeq(eval("(float)w", vars), 18446742974197923840.0)
  checkeq(eval("(float)v", vars), 9007200328482816.0)
  checkeq(eval("(float)-v", vars), -9007200328482816.0)
  checkeq(eval("(double)v", vars), 9007199791611904.0)
  checkeq(eval("(unsigned long long)1.8e19"), -446744073709551616) -- 18000000000000000000
  checkerr("1.8e+19 is out of the range of long long", eval, "(long long)1.8e19")
end)

test("cexpr: an expression nested past what the stack holds is refused, with a short message",
  function()
    checkeq(compile_error(("("):rep(200000) .. "1" .. (")"):rep(200000)),
      "the expression nests more than 200 deep")
    checkeq(compile_error(("-"):rep(1000) .. "1"), "the expression nests more than 200 deep")
    checkeq(compile_error(("1 ? "):rep(300) .. "1" .. (" : 2"):rep(300)),
      "the expression nests more than 200 deep")
    checkeq(eval(("("):rep(150) .. "2" .. (")"):rep(150)), 2)
    checkeq(eval(("1 + "):rep(20000) .. "1"), 20001) -- a long flat one is fine
    checkeq(compile_error("1 + " .. ("x"):rep(100) .. " )"), "unexpected text at ')'")
    local long = compile_error("1 ) " .. ("x + "):rep(100))
    check(#long < 80, long)
  end)

test("cexpr: typedefs, enums and CUDA's vector types the source declares", function()
  cdecl.declare([[
typedef unsigned int uint;
typedef float real;
using idx = long long;
enum Color { RED, GREEN = 5, BLUE, PINK = GREEN * 4 };
enum class Mode : unsigned char { OFF, ON = 200 };
typedef enum { LOW = -1, HIGH = 1 } Level;
struct P { float x; uint n; double w; };
typedef struct { Color c; float4 f; } Q;
]])
  local vars = { q = { 99, "uint" }, r = { 1.5, "real" }, c = { 5, "Color" } }
  checkeq({ typed_eval("q + 1", vars) }, { 100, "uint" })
  checkeq(eval("r * 2", vars), 3.0)
  checkeq({ typed_eval("c + 1", vars) }, { 6, "int" }) -- an enum promotes to its type, int
  checkeq({ typed_eval("BLUE") }, { 6, "Color" })
  checkeq(typed_eval("PINK"), 20)
  checkeq(typed_eval("c == GREEN", vars), 1)
  checkeq(typed_eval("(int)Mode::ON"), 200)
  checkeq({ typed_eval("Mode::OFF") }, { 0, "Mode" })
  checkeq(typed_eval("LOW + HIGH"), 0)
  checkeq(eval("sizeof(uint) + sizeof(idx) + sizeof(Mode)"), 13)
  checkeq({ typed_eval("(uint)-1") }, { 4294967295, "uint" })
  checkeq(eval("sizeof(P)"), 16)
  checkeq(eval("sizeof(Q)"), 32) -- float4 is 16-byte aligned
  checkeq(eval("sizeof(float4) + sizeof(int2) + sizeof(double2) + sizeof(uchar3)"), 43)
  checkeq(eval("sizeof(__half) + sizeof(__half2)"), 6)
  cdecl.declare("")
  checkeq(compile_error("(uint)1"), "unexpected text at '1'") -- forgotten: a name again
end)

test("cexpr: __half and __nv_bfloat16 read as the floats they hold", function()
  local half, bf = ctype.parse("__half"), ctype.parse("__nv_bfloat16")
  checkeq(ctype.decode(string.pack("<I2", 0x3e00), half), 1.5)
  checkeq(ctype.decode(string.pack("<I2", 0x7bff), half), 65504.0)
  checkeq(ctype.decode(string.pack("<I2", 0x0001), half), 2.0 ^ -24)
  checkeq(ctype.decode(string.pack("<I2", 0xfc00), half), -math.huge)
  checkeq(ctype.decode(string.pack("<I2", 0x3fc0), bf), 1.5)
  checkeq(ctype.convert(1.0 + 2 ^ -11, ctype.DOUBLE, half), 1.0)          -- a tie: to even
  checkeq(ctype.convert(1.0 + 3 * 2 ^ -11, ctype.DOUBLE, half), 1.0 + 2 ^ -9)
  checkeq(ctype.convert(65520.0, ctype.DOUBLE, half), math.huge)
  checkeq(ctype.convert(1.0 + 2 ^ -8, ctype.DOUBLE, bf), 1.0)              -- a tie: to even
end)
