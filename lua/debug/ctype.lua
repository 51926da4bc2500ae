-- ctype.lua: C's types as the debugger's expressions need them (cexpr.lua): what a type the
-- debug information names ("const float *", "unsigned int", "int[4][8]") is, the usual
-- arithmetic conversions, integers wrapped to their width, and values read from memory's bytes.
--
-- Design stance: a type is a small table, {name, k, size, signed, to, elem, n}, k being "i"
-- (integer), "b" (bool), "f" (floating), "p" (pointer), "a" (array) or "s" (a structure
-- the debugger knows only by name, such as dim3). Widths are those of CUDA on a 64-bit host
-- (long is 8 bytes), so an int that overflows in the kernel overflows here the same way.

local math, pairs, string, table = math, pairs, string, table
local tonumber, tostring = tonumber, tostring

local ctype = {}

local function T(name, k, size, signed)
  return { name = name, k = k, size = size, signed = signed }
end

ctype.INT = T("int", "i", 4, true)
ctype.UINT = T("unsigned int", "i", 4, false)
ctype.LLONG = T("long long", "i", 8, true)
ctype.ULLONG = T("unsigned long long", "i", 8, false)
ctype.SIZE_T = T("unsigned long", "i", 8, false)
ctype.FLOAT = T("float", "f", 4)
ctype.DOUBLE = T("double", "f", 8)
ctype.BOOL = T("bool", "b", 1, false)
ctype.DIM3 = { name = "dim3", k = "s", size = 12 }

-- The base types, by the words a declaration spells them with (sorted, qualifiers dropped).
local BASE = {
  int = ctype.INT, ["signed"] = ctype.INT, ["int signed"] = ctype.INT,
  unsigned = ctype.UINT, ["int unsigned"] = ctype.UINT,
  long = T("long", "i", 8, true), ["int long"] = T("long", "i", 8, true),
  ["long unsigned"] = T("unsigned long", "i", 8, false),
  ["int long unsigned"] = T("unsigned long", "i", 8, false),
  ["long long"] = ctype.LLONG, ["int long long"] = ctype.LLONG,
  ["long long unsigned"] = ctype.ULLONG, ["int long long unsigned"] = ctype.ULLONG,
  short = T("short", "i", 2, true), ["int short"] = T("short", "i", 2, true),
  ["short unsigned"] = T("unsigned short", "i", 2, false),
  ["int short unsigned"] = T("unsigned short", "i", 2, false),
  char = T("char", "i", 1, true), ["char signed"] = T("signed char", "i", 1, true),
  ["char unsigned"] = T("unsigned char", "i", 1, false),
  bool = ctype.BOOL, float = ctype.FLOAT, double = ctype.DOUBLE,
  size_t = ctype.SIZE_T,
  int8_t = T("int8_t", "i", 1, true), uint8_t = T("uint8_t", "i", 1, false),
  int16_t = T("int16_t", "i", 2, true), uint16_t = T("uint16_t", "i", 2, false),
  int32_t = T("int32_t", "i", 4, true), uint32_t = T("uint32_t", "i", 4, false),
  int64_t = T("int64_t", "i", 8, true), uint64_t = T("uint64_t", "i", 8, false),
}

-- Words that may begin a type in a cast or sizeof.
ctype.TYPE_WORDS = { const = true, volatile = true, struct = true }
for words in pairs(BASE) do
  for w in words:gmatch("%S+") do ctype.TYPE_WORDS[w] = true end
end

-- The structures the kernel's source declares, by name: { name =, k = "s", size =, align =,
-- fields = { name = { off =, t = } } }; set by ctype.declare for the launch being debugged.
ctype.structs = {}

local function align_of(t)
  if t.k == "a" then return align_of(t.elem) end
  return t.align or math.max(1, t.size)
end

-- The members of one structure's body, "float x; int n[4];", laid out as C lays them out: each
-- at the next multiple of its alignment, the whole a multiple of the largest. Nil when a member
-- is of a type not known (then the structure stays one by name only).
local function layout(name, body)
  local st = { name = name, k = "s", fields = {}, order = {}, size = 0, align = 1 }
  local off = 0
  for decl in body:gmatch("([^;]+);") do
    decl = decl:gsub("^%s+", ""):gsub("%s+$", "")
    local ty, names = decl:match("^(.-[%w_%*])%s+([%a_][%w_%s,%[%]%*]*)$")
    if not ty then return nil end
    for one in (names .. ","):gmatch("%s*([^,]+),") do
      local stars, nm, dims = one:match("^(%**)%s*([%a_][%w_]*)%s*(.*)$")
      if not nm then return nil end
      local t = ctype.parse(ty .. " " .. stars .. dims:gsub("%s", ""))
      if not t or t.size == 0 then return nil end
      local a = align_of(t)
      off = (off + a - 1) // a * a
      st.fields[nm] = { off = off, t = t }
      st.order[#st.order + 1] = nm
      off = off + t.size
      if a > st.align then st.align = a end
    end
  end
  st.size = (off + st.align - 1) // st.align * st.align
  return st
end

-- Learns the structures source declares (struct NAME { ... }; and typedef struct { ... } NAME;),
-- in order, so that a member may be one declared before it.
function ctype.declare(source)
  ctype.structs = {}
  local src = source:gsub("//[^\n]*", ""):gsub("/%*.-%*/", "")
  for kw, name, body, after in src:gmatch("(%a+)%s+struct%s*([%w_]*)%s*(%b{})%s*([%w_]*)") do
    local nm = kw == "typedef" and after ~= "" and after or name
    if nm ~= "" then ctype.structs[nm] = layout(nm, body:sub(2, -2)) end
  end
  for name, body in ("\n" .. src):gmatch("[^%w_]struct%s+([%a_][%w_]*)%s*(%b{})") do
    if not ctype.structs[name] then ctype.structs[name] = layout(name, body:sub(2, -2)) end
  end
end

function ctype.pointer(to)
  return { name = to.name .. (to.k == "p" and "*" or " *"), k = "p", size = 8, to = to }
end

function ctype.array(elem, n)
  return { name = elem.name .. "[" .. n .. "]", k = "a", size = elem.size * n, elem = elem, n = n }
end

-- The type a C spelling names, or nil and why. Arrays' sizes come last: "int[4][8]".
function ctype.parse(text)
  local dims = {}
  local base = text:gsub("%[(%d*)%]", function(n) dims[#dims + 1] = tonumber(n) or 0 return "" end)
  local stars = 0
  base = base:gsub("%*", function() stars = stars + 1 return " " end)
  local words = {}
  for w in base:gmatch("[%w_]+") do
    if w ~= "const" and w ~= "volatile" and w ~= "__restrict__" and w ~= "restrict"
        and w ~= "struct" then
      words[#words + 1] = w
    end
  end
  table.sort(words)
  local t = BASE[table.concat(words, " ")]
  if not t then
    if #words == 0 then return nil, ("'%s' is not a type"):format(text) end
    local name = table.concat(words, " ")
    -- a structure: its layout when the kernel's source declares it (ctype.structs), else by
    -- name only
    t = ctype.structs[name] or { name = name, k = "s", size = 0 }
  end
  for _ = 1, stars do t = ctype.pointer(t) end
  for i = #dims, 1, -1 do t = ctype.array(t, dims[i]) end
  return t
end

-- v (a Lua integer) as an integer of type t: wrapped to its width, as the GPU's registers hold it.
function ctype.wrap(v, t)
  if t.k == "b" then return v ~= 0 and 1 or 0 end
  if t.size >= 8 then return v end
  local bits = 8 * t.size
  v = v & ((1 << bits) - 1)
  if t.signed and v >= 1 << (bits - 1) then v = v - (1 << bits) end
  return v
end

-- x rounded to single precision, as a float holds it.
local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- a / b and a % b of two unsigned 64-bit integers, each held in a Lua integer as its bits (so
-- one of 2^63 or more is negative there): Lua's // and % are signed. b must not be 0.
function ctype.udivmod(a, b)
  if b < 0 then -- b is 2^63 or more: the quotient is 0 or 1
    if math.ult(a, b) then return 0, a end
    return 1, a - b
  end
  local q = ((a >> 1) // b) << 1 -- a >> 1 is positive, so // is the true quotient here
  local r = a - q * b             -- less than 2b, which is below 2^64
  if not math.ult(r, b) then q, r = q + 1, r - b end
  return q, r
end

-- Integer v (unsigned: its bits, as an unsigned 64-bit integer's) as the nearest float of
-- `bits` significant bits (24 for float, 53 for double), rounded once, to nearest even, as C
-- converts it. Lua converts an integer below 2^63 to a double as C does; a float from that
-- double would be rounded twice, so past 2^53 the bits below the 53rd are first folded into one
-- sticky bit, which keeps the float's rounding and makes the double exact.
local function int_to_float(v, unsigned, bits)
  local neg = not unsigned and v < 0
  local m = neg and -v or v -- -math.mininteger is itself: as bits, 2^63, the magnitude
  local x
  if m >= 0 and (m < 1 << 53 or bits == 53) then
    x = m + 0.0
  elseif bits == 53 then -- 2^63 or more: half of it, the lost bit kept as a sticky one
    x = ((m >> 1) | (m & 1)) * 2.0
  else
    local top = 63
    while (m >> top) & 1 == 0 do top = top - 1 end
    local shift = top - 52
    local sticky = m & ((1 << shift) - 1) ~= 0 and 1 or 0
    x = ((m >> shift) | sticky) * 2.0 ^ shift
  end
  if bits == 24 then x = f32(x) end
  return neg and -x or x
end

-- v of type from, converted to type to as C converts by assignment or cast.
function ctype.convert(v, from, to)
  if to.k == "f" then
    if math.type(v) == "integer" then
      return int_to_float(v, from.k == "i" and not from.signed and from.size == 8,
        to.size == 8 and 53 or 24)
    end
    return to.size == 4 and f32(v) or v
  end
  if to.k == "b" then return v ~= 0 and 1 or 0 end
  if from.k == "f" then
    if v ~= v or v == math.huge or v == -math.huge then
      error(("%s cannot be converted to %s"):format(tostring(v), to.name), 0)
    end
    local t = v >= 0 and math.floor(v) or math.ceil(v)
    local i = math.tointeger(t)
    if not i and to.k == "i" and not to.signed and to.size >= 8 and t >= 2.0 ^ 63
        and t < 2.0 ^ 64 then
      i = math.tointeger(t - 2.0 ^ 63) + math.mininteger -- the bits of an unsigned one
    end
    if not i then error(("%g is out of the range of %s"):format(v, to.name), 0) end
    v = i
  end
  if to.k == "p" then return v end
  return ctype.wrap(v, to)
end

-- Integer promotion: what is narrower than int computes as int.
function ctype.promote(t)
  if (t.k == "i" or t.k == "b") and t.size < 4 then return ctype.INT end
  return t
end

-- The usual arithmetic conversions: the type two operands meet in.
function ctype.common(a, b)
  if a.k == "f" or b.k == "f" then
    if (a.k == "f" and a.size == 8) or (b.k == "f" and b.size == 8) then return ctype.DOUBLE end
    return ctype.FLOAT
  end
  a, b = ctype.promote(a), ctype.promote(b)
  if a.size ~= b.size then return a.size > b.size and a or b end
  if not a.signed then return a end
  return b
end

-- A value of type t from its little-endian bytes.
function ctype.decode(bytes, t)
  if t.k == "f" then return (string.unpack(t.size == 4 and "<f" or "<d", bytes)) end
  if t.k == "p" then return (string.unpack("<i8", bytes)) end
  if t.k == "b" then return bytes:byte(1) ~= 0 and 1 or 0 end
  return (string.unpack((t.signed and "<i" or "<I") .. t.size, bytes)) -- Lua wraps <I8 itself
end

-- The text of an unsigned 64-bit integer held in a Lua integer.
function ctype.unsigned_text(v)
  if v >= 0 then return tostring(v) end
  local q = (v >> 1) // 5
  return tostring(q) .. tostring(v - q * 10)
end

return ctype
