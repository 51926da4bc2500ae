-- ctype.lua: C's types as the debugger's expressions need them (cexpr.lua): what a type the
-- debug information names ("const float *", "unsigned int", "int[4][8]") is, the usual
-- arithmetic conversions, integers wrapped to their width, and values read from memory's bytes.
--
-- Design stance: a type is a small table, {name, k, size, signed, to, elem, n}, k being "i"
-- (integer), "b" (bool), "f" (floating), "p" (pointer), "a" (array) or "s" (a structure, with
-- its members when its layout is known: CUDA's vector types here, the source's own from
-- cdecl.lua; else known by name only, such as dim3). Widths are those of CUDA on a 64-bit host
-- (long is 8 bytes), so an int that overflows in the kernel overflows here the same way. An
-- enum is an integer type with the names of its values (names); __half and __nv_bfloat16 are
-- floating types of 2 bytes, which compute as float does.

local ipairs, math, pairs, string, table = ipairs, math, pairs, string, table
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

-- Words that may begin a type in a cast or sizeof (ctype.is_type_word adds the declared ones).
ctype.TYPE_WORDS = { const = true, volatile = true, struct = true, enum = true, union = true }
for words in pairs(BASE) do
  for w in words:gmatch("%S+") do ctype.TYPE_WORDS[w] = true end
end

-- What the kernel's source declares (cdecl.lua sets them for the launch being debugged): its
-- structures with their layout, { name =, k = "s", size =, align =, fields = { name = { off =,
-- t = } }, order = { names } }; its typedefs and enums, by name; its enums' values, by name:
-- { v =, t = }.
ctype.structs, ctype.aliases, ctype.enumerators = {}, {}, {}

-- A structure of members of types `types`, names `names`, laid out as C lays them out: each at
-- the next multiple of its alignment, the whole a multiple of the largest (or of `align`).
function ctype.struct(name, names, types, align)
  local st = { name = name, k = "s", fields = {}, order = {}, size = 0, align = align or 1 }
  local off = 0
  for i, nm in ipairs(names) do
    local t = types[i]
    local a = ctype.align_of(t)
    off = (off + a - 1) // a * a
    st.fields[nm] = { off = off, t = t }
    st.order[i] = nm
    off = off + t.size
    if a > st.align then st.align = a end
  end
  st.size = (off + st.align - 1) // st.align * st.align
  return st
end

function ctype.align_of(t)
  if t.k == "a" then return ctype.align_of(t.elem) end
  return t.align or math.max(1, t.size)
end

-- The types CUDA's headers declare that a kernel's variables often have: the vector types
-- (float4, int2, uchar3...) with their members x, y, z, w and the alignment vector_types.h
-- gives them, and the 16-bit floats with their pairs.
local BUILTIN = {}
do
  local XYZW = { "x", "y", "z", "w" }
  local function vectors(prefix, elem, aligns)
    for n = 1, 4 do
      local types = {}
      for i = 1, n do types[i] = elem end
      local names = table.move(XYZW, 1, n, 1, {})
      BUILTIN[prefix .. n] = ctype.struct(prefix .. n, names, types, aligns[n])
    end
  end
  local short, long = { 2, 4, 2, 8 }, { 8, 16, 8, 16 }
  vectors("char", BASE["char signed"], { 1, 2, 1, 4 })
  vectors("uchar", BASE["char unsigned"], { 1, 2, 1, 4 })
  vectors("short", BASE.short, short)
  vectors("ushort", BASE["short unsigned"], short)
  vectors("int", ctype.INT, { 4, 8, 4, 16 })
  vectors("uint", ctype.UINT, { 4, 8, 4, 16 })
  vectors("float", ctype.FLOAT, { 4, 8, 4, 16 })
  vectors("long", BASE.long, long)
  vectors("ulong", BASE["long unsigned"], long)
  vectors("longlong", ctype.LLONG, long)
  vectors("ulonglong", ctype.ULLONG, long)
  vectors("double", ctype.DOUBLE, long)
  local half = { name = "__half", k = "f", size = 2, half = true }
  local bf16 = { name = "__nv_bfloat16", k = "f", size = 2, bf16 = true }
  BUILTIN.__half, BUILTIN.half = half, half
  BUILTIN.__nv_bfloat16, BUILTIN.nv_bfloat16 = bf16, bf16
  BUILTIN.__half2 = ctype.struct("__half2", { "x", "y" }, { half, half }, 4)
  BUILTIN.half2 = BUILTIN.__half2
  BUILTIN.__nv_bfloat162 = ctype.struct("__nv_bfloat162", { "x", "y" }, { bf16, bf16 }, 4)
  BUILTIN.nv_bfloat162 = BUILTIN.__nv_bfloat162
end

-- Names of CUDA's headers' types that a kernel's variable may well have as its own name: no
-- cast begins with them unless the source declares them (print (half + 1) * 2 is no cast).
local NOT_CAST = { half = true, half2 = true, nv_bfloat16 = true, nv_bfloat162 = true }

-- Whether word w may begin a type: a word of C's own types, or a name of a type the source or
-- CUDA's headers declare.
function ctype.is_type_word(w)
  return ctype.TYPE_WORDS[w] or ctype.aliases[w] ~= nil or ctype.structs[w] ~= nil
    or (BUILTIN[w] ~= nil and not NOT_CAST[w])
end

function ctype.pointer(to)
  return { name = to.name .. (to.k == "p" and "*" or " *"), k = "p", size = 8, to = to }
end

function ctype.array(elem, n)
  return { name = elem.name .. "[" .. n .. "]", k = "a", size = elem.size * n, elem = elem, n = n }
end

-- Words of a spelling that say nothing of the type's layout.
local NOT_TYPE = { const = true, volatile = true, __restrict__ = true, restrict = true,
  struct = true, union = true, enum = true, class = true, static = true, extern = true }

-- The type a C spelling names, or nil and why. Arrays' sizes come last: "int[4][8]".
function ctype.parse(text)
  local dims = {}
  local base = text:gsub("%[(%d*)%]", function(n) dims[#dims + 1] = tonumber(n) or 0 return "" end)
  local stars = 0
  base = base:gsub("%*", function() stars = stars + 1 return " " end)
  local words = {}
  for w in base:gmatch("[%w_]+") do
    if not NOT_TYPE[w] then words[#words + 1] = w end
  end
  table.sort(words)
  local t = BASE[table.concat(words, " ")]
  if not t then
    if #words == 0 then return nil, ("'%s' is not a type"):format(text) end
    local name = table.concat(words, " ")
    -- a typedef or an enum, a structure with its layout when the kernel's source or CUDA's
    -- headers declare it, else a structure by name only
    t = ctype.aliases[name] or ctype.structs[name] or BUILTIN[name]
      or { name = name, k = "s", size = 0 }
  end
  for _ = 1, stars do t = ctype.pointer(t) end
  for i = #dims, 1, -1 do t = ctype.array(t, dims[i]) end
  return t
end

-- How a variable's bits read by the kind the debug information gives (bind_debugger.c's s:read),
-- for a type the source's text does not say: a typedef or an enum of a header's.
local KINDS = { int = "i", unsigned = "i", char = "i", float = "f", bool = "b" }

-- The type of a variable whose debug information spells its type `spelled` and says its bits
-- read as `kind`, `size` bytes an element: the spelling's type, where a name the debugger does
-- not know (a typedef of a header's) is taken for what its bits say; nil when nothing says how
-- to read it (a structure whose layout is not known).
function ctype.of_variable(spelled, kind, size)
  local t = ctype.parse(spelled)
  local dims = {}
  local leaf = t
  while leaf and leaf.k == "a" do
    dims[#dims + 1] = leaf.n
    leaf = leaf.elem
  end
  if not leaf or (leaf.k == "s" and leaf.size == 0) then
    local k = KINDS[kind]
    if not k or not size or size <= 0 then return nil end
    leaf = T(leaf and leaf.name or spelled, k, size, kind == "int" or (kind == "char"
      and not spelled:find("unsigned")))
    t = leaf
    for i = #dims, 1, -1 do t = ctype.array(t, dims[i]) end
  end
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

-- x rounded to a __half (to nearest, ties to even; past its largest, 65504, an infinity).
local function f16(x)
  if x ~= x or x == 0 or x == math.huge or x == -math.huge then return x end
  local a = math.abs(x)
  local e = -14 -- a's exponent, at least the smallest normal one (below it, subnormals)
  while e < 15 and 2.0 ^ (e + 1) <= a do e = e + 1 end
  local q = 2.0 ^ (e - 10) -- the spacing of halves there
  local y = a / q
  local r = math.floor(y)
  if y - r > 0.5 or (y - r == 0.5 and r % 2 == 1) then r = r + 1 end
  local h = r * q
  if h > 65504 then h = math.huge end
  return x < 0 and -h or h
end

-- x rounded to a __nv_bfloat16: a float's upper 16 bits, to nearest, ties to even.
local function bf16(x)
  if x ~= x then return x end
  local u = string.unpack("<I4", string.pack("<f", x))
  u = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) << 16
  return (string.unpack("<f", string.pack("<I4", u & 0xffffffff)))
end

-- x (a double) as a floating type t holds it.
local function narrow(x, t)
  if t.size == 4 then return f32(x) end
  if t.size == 2 then return t.bf16 and bf16(x) or f16(x) end
  return x
end

-- v of type from, converted to type to as C converts by assignment or cast.
function ctype.convert(v, from, to)
  if to.k == "f" then
    if math.type(v) == "integer" then
      v = int_to_float(v, from.k == "i" and not from.signed and from.size == 8,
        to.size == 8 and 53 or 24)
      return to.size == 2 and narrow(v, to) or v
    end
    return narrow(v, to)
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

-- Integer promotion: what is narrower than int computes as int, an enum as its underlying type.
function ctype.promote(t)
  if t.names then t = t.base end
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

-- The value of a __half's bits: a sign, 5 bits of exponent and 10 of fraction.
local function half_value(u)
  local sign = u & 0x8000 ~= 0 and -1 or 1
  local e, f = (u >> 10) & 0x1f, u & 0x3ff
  if e == 31 then return f == 0 and sign * math.huge or 0 / 0 end
  if e == 0 then return sign * f * 2.0 ^ -24 end
  return sign * (1024 + f) * 2.0 ^ (e - 25)
end

-- A value of type t from its little-endian bytes.
function ctype.decode(bytes, t)
  if t.k == "f" and t.size == 2 then
    local u = string.unpack("<I2", bytes)
    if t.bf16 then return (string.unpack("<f", string.pack("<I4", u << 16))) end
    return half_value(u)
  end
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
