-- test_debugger_warp.lua: conditions lowered to the program the simulator evaluates over a whole
-- warp: typed as cexpr's evaluator types them (the usual conversions written out, constants
-- converted here), and nil for whatever a warp cannot compute in one pass.

local cexpr = require "cexpr"
local ctype = require "ctype"
local warp = require "debugger_warp"

local VARS = { s = "float", t = "int", y = "int", width = "int", n = "unsigned int",
  d = "double", p = "float *", u = "unsigned long long", c = "char", b = "bool" }

local function lower(src)
  local fn = assert(cexpr.compile(src))
  return warp.lower(fn, { info = { block = { x = 64, y = 1, z = 1 }, grid = { x = 2, y = 1, z = 1 } },
    type_of = function(name)
      if not VARS[name] then return nil end
      return ctype.parse(VARS[name]), VARS[name]
    end })
end

-- The program as one line: "var:f4:s float:f4:0 lt:f4".
local function text(ops)
  if not ops then return "nil" end
  local out = {}
  for _, o in ipairs(ops) do
    local w = o.op .. (o.from and (":" .. o.from) or "") .. ":" .. o.t
    if o.op == "var" then w = w .. ":" .. o.name
    elseif o.v ~= nil then w = w .. ":" .. tostring(o.v) end
    out[#out + 1] = w
  end
  return table.concat(out, " ")
end

test("a float compared with an int constant: the constant is converted here", function()
  checkeq(text(lower("s < 0")), "var:f4:s float:f4:0.0 lt:f4")
end)

test("an int expression stays an int, and wraps there", function()
  checkeq(text(lower("t * 300000000 < 0")), "var:i4:t int:i4:300000000 mul:i4 int:i4:0 lt:i4")
end)

test("a cast widens before the arithmetic, and the other operand follows", function()
  checkeq(text(lower("(long long)y * width")), "var:i4:y cvt:i4:i8 var:i4:width cvt:i4:i8 mul:i8")
end)

test("threadIdx and blockIdx are read per lane; blockDim is a constant of the launch", function()
  checkeq(text(lower("threadIdx.x == 5 && blockIdx.y != blockDim.x")),
    "tid:u4:0 int:u4:5 eq:u4 bid:u4:1 int:u4:64 ne:u4 land:i4")
end)

test("the usual conversions: int and unsigned meet in unsigned, float and double in double",
  function()
    checkeq(text(lower("t < n")), "var:i4:t cvt:i4:u4 var:u4:n lt:u4")
    checkeq(text(lower("s + d")), "var:f4:s cvt:f4:f8 var:f8:d add:f8")
    checkeq(text(lower("-c")), "var:i1:c cvt:i1:i4 neg:i4")
    checkeq(text(lower("!b || u >> 3")), "var:b1:b lnot:i4 var:u8:u int:i4:3 shr:u8 lor:i4")
  end)

test("?: of one type is a select; of two types it is left to the Lua evaluator", function()
  checkeq(text(lower("t > 0 ? t : -t")), "var:i4:t int:i4:0 gt:i4 var:i4:t var:i4:t neg:i4 sel:i4")
  checkeq(text(lower("t > 0 ? t : 1.5")), "nil")
end)

test("memory, pointers, arrays, @ and unknown names are not compiled", function()
  for _, src in ipairs({ "*p > 0", "p[3] > 0", "p != 0", "s@2", "nosuch == 1", "threadIdx == 1",
    "sizeof(t) == 4", "s % 2 == 0" }) do
    checkeq(text(lower(src)), "nil", src)
  end
end)

test("a constant that cannot be converted is left to the Lua evaluator, which says why", function()
  checkeq(text(lower("t == (int)1e300")), "nil")
end)

test("an enum's value is a constant of its type, and an enum compares as its integer", function()
  require("cdecl").declare("enum Color { RED, GREEN = 5 };\ntypedef unsigned int uint;")
  VARS.col, VARS.q = "Color", "uint"
  checkeq(text(lower("col == GREEN")), "var:i4:col int:i4:5 eq:i4")
  checkeq(text(lower("q % 10 == 9")), "var:u4:q int:u4:10 mod:u4 int:u4:9 eq:u4")
  checkeq(text(lower("u % 10 == 5")), "var:u8:u int:u8:10 mod:u8 int:u8:5 eq:u8")
  VARS.col, VARS.q = nil, nil
  require("cdecl").declare("")
end)
