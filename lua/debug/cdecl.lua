-- cdecl.lua: the types a kernel's source declares, learnt from its text for the debugger's
-- expressions (cexpr.lua): its structures with their layout (p->x, sizeof(*p)), its typedefs
-- (typedef unsigned int uint; using real = float;) and its enums with their values (RED, GREEN =
-- 5), which ctype.parse then knows by name and print shows by their names.
--
-- Used by debugger.lua once per debugged launch: cdecl.declare(source) sets ctype.structs,
-- ctype.aliases and ctype.enumerators for it.
--
-- Design stance: the debug information names a variable's type ("uint", "Color", "P") but not
-- what the name stands for, and a learner's casts and sizeof name types the kernel never gave a
-- variable; the source says both. What is read is what a kernel's file plainly declares at its
-- top level; a declaration this reader cannot follow (a member of a type it does not know, a
-- size or a value that is not a constant expression) leaves that type known by name only, or
-- that value unknown, never a wrong one. A constant expression is evaluated as the debugger's
-- expressions are (cexpr.lua), so GREEN = RED + 5 and 1 << 4 mean what they mean in C.

local ipairs, math, pairs, pcall, table = ipairs, math, pairs, pcall, table

local cexpr = require "cexpr"
local ctype = require "ctype"

local cdecl = {}

-- The value of a constant expression of the source (an enum's value, an array's size): its
-- numbers and the enumerators declared before it; nil when it is not one.
local function constant(text)
  local fn = cexpr.compile(text)
  if not fn then return nil end
  local ok, v, t = pcall(fn, {
    get = function(name)
      local e = ctype.enumerators[name]
      if not e then error("not a constant", 0) end
      return e.v, e.t
    end,
    mem = function() error("not a constant", 0) end,
  })
  if not ok or not t or t.k ~= "i" then return nil end
  return v
end

-- The type `spec` names with the array sizes `dims` after it ("[4][N + 1]"), or nil when a size
-- is not a constant.
local function sized(spec, dims)
  local parts = { spec }
  for d in dims:gmatch("%[(.-)%]") do
    local n = constant(d)
    if not n or n < 0 then return nil end
    parts[#parts + 1] = ("[%d]"):format(n)
  end
  return ctype.parse(table.concat(parts))
end

-- The members of one structure's body, "float x; int n[4];", laid out as C lays them out (see
-- ctype.struct). Nil when a member is of a type not known (then the structure stays one by name
-- only).
local function layout(name, body)
  local names, types = {}, {}
  for decl in body:gmatch("([^;]+);") do
    decl = decl:gsub("^%s+", ""):gsub("%s+$", "")
    local ty, list = decl:match("^(.-[%w_%*])%s+([%a_][%w_%s,%[%]%*%+%-/()]*)$")
    if not ty then return nil end
    for one in (list .. ","):gmatch("%s*([^,]+),") do
      local stars, nm, dims = one:match("^(%**)%s*([%a_][%w_]*)%s*(.*)$")
      if not nm then return nil end
      local t = sized(ty .. " " .. stars, dims)
      if not t or t.size == 0 then return nil end
      names[#names + 1], types[#types + 1] = nm, t
    end
  end
  return ctype.struct(name, names, types)
end

-- t under another name: a typedef of a scalar or a pointer is that type, spelled as the source
-- spells it; one of a structure or an array is the very same table.
local function alias(t, name)
  if t.k == "s" or t.k == "a" then return t end
  local copy = {}
  for k, v in pairs(t) do copy[k] = v end
  copy.name = name
  return copy
end

-- The statements of src, each as the text up to the next ; { or }, that character and its
-- place: (" typedef unsigned int uint", ";", 27). One pass over src, whatever it holds.
function cdecl.statements(src)
  local i, n = 1, #src
  return function()
    if i > n then return nil end
    local at = src:find("[;{}]", i)
    local text = src:sub(i, (at or n + 1) - 1)
    i = (at or n) + 1
    return text, at and src:sub(at, at) or "", at
  end
end

-- Where each { of src is closed: close[place of {] = place of its }.
local function brace_pairs(src)
  local close, open = {}, {}
  for at, c in src:gmatch("()([{}])") do
    if c == "{" then open[#open + 1] = at
    elseif #open > 0 then close[table.remove(open)] = at end
  end
  return close
end

-- typedef SPEC NAME[DIMS]; and using NAME = SPEC; (not those of a function's type).
local function typedef(text)
  local stmt = text:match("^%s*typedef%s+(.-)%s*$")
  if stmt and not stmt:find("[()]") then
    local body, dims = stmt:match("^(.-)%s*(%[.*)$")
    if not body then body, dims = stmt, "" end
    local spec, name = body:match("^(.-[%s%*])%s*([%a_][%w_]*)$")
    local t = spec and sized(spec, dims)
    if t and t.size > 0 then ctype.aliases[name] = alias(t, name) end
  end
  local name, spec = text:match("^%s*using%s+([%a_][%w_]*)%s*=%s*([^()]-)%s*$")
  local t = name and ctype.parse(spec)
  if t and t.size > 0 then ctype.aliases[name] = alias(t, name) end
end

-- One enum's body "{ RED, GREEN = 5, BLUE }": its enumerators, each with its value (the one
-- before it plus one where none is given) and the enum's type t, whose names it fills in.
local function enumerators(body, t)
  local next_value = 0
  for item in (body:sub(2, -2) .. ","):gmatch("([^,]*),") do
    local name, value = item:match("^%s*([%a_][%w_]*)%s*=%s*(.-)%s*$")
    if not name then name = item:match("^%s*([%a_][%w_]*)%s*$") end
    if name then
      local v = next_value
      if value then v = constant(value) end
      if v then
        v = ctype.wrap(v, t)
        ctype.enumerators[name] = { v = v, t = t }
        if t.name ~= "enum" then -- Mode::ON too
          ctype.enumerators[t.name .. "::" .. name] = ctype.enumerators[name]
        end
        if t.names[v] == nil then t.names[v] = name end
        next_value = v + 1
      else
        next_value = nil -- the ones after it are not known either
      end
    end
  end
end

-- What follows `word` (enum, struct) at the start of head, or after typedef there; and whether
-- typedef came first.
local function after_keyword(head, word)
  local rest = head:match("^%s*" .. word .. "%f[^%w_]%s*(.-)%s*$")
  if rest then return rest, false end
  rest = head:match("^%s*typedef%s+" .. word .. "%f[^%w_]%s*(.-)%s*$")
  return rest, rest ~= nil
end

-- enum [class] [NAME] [: TYPE] { ... } [NAME]; with typedef enum { ... } NAME; too: head the
-- text before its {, body the braces and what is in them, after the name after them.
local function enum(head, body, after)
  local rest, typedef = after_keyword(head, "enum")
  if not rest then return end
  rest = rest:gsub("^class%f[^%w_]%s*", ""):gsub("^struct%f[^%w_]%s*", "")
  local name, under = rest:match("^([%a_]?[%w_]*)%s*:?%s*(.-)$")
  if typedef and after ~= "" then name = after end
  local base = under ~= "" and ctype.parse(under) or ctype.INT
  if not base or base.k ~= "i" then return end
  local t = { name = name ~= "" and name or "enum", k = "i", size = base.size,
    signed = base.signed, base = base, names = {} }
  if name ~= "" then ctype.aliases[name] = t end
  enumerators(body, t)
end

-- struct [attributes] NAME { ... }; and typedef struct [NAME] { ... } NAME; (with the same head,
-- body and after as enum's). One with a base (struct P : Base) is left unknown: its layout
-- begins with the base's.
local function struct(head, body, after)
  local rest, typedef = after_keyword(head, "struct")
  if not rest or rest:find(":", 1, true) then return end
  local name = rest:match("([%a_][%w_]*)$") or ""
  if typedef and after ~= "" then name = after end
  if name ~= "" and not ctype.structs[name] then
    ctype.structs[name] = layout(name, body:sub(2, -2))
  end
end

-- Each declaration with a body in braces: head the text before its {, body the braces and
-- what they hold, after the name that follows them.
local function braced(src, close, each)
  for text, c, at in cdecl.statements(src) do
    if c == "{" and close[at] then
      each(text, src:sub(at, close[at]), src:match("^%s*([%a_]?[%w_]*)", close[at] + 1))
    end
  end
end

-- src with its comments blanked, in one pass (an unclosed /* ends it).
local function without_comments(src)
  local out, i = {}, 1
  while true do
    local at = src:find("/[/*]", i)
    if not at then break end
    out[#out + 1] = src:sub(i, at - 1)
    if src:sub(at + 1, at + 1) == "/" then
      i = src:find("\n", at, true) or #src + 1
    else
      local _, e = src:find("*/", at + 2, true)
      out[#out + 1] = " "
      i = (e or #src) + 1
    end
  end
  out[#out + 1] = src:sub(i)
  return table.concat(out)
end

-- Learns the types source declares (see the top of this file), forgetting those of the launch
-- before. Enums first, whose values a size may use; typedefs before and after the structures,
-- which may use one another.
function cdecl.declare(source)
  ctype.structs, ctype.aliases, ctype.enumerators = {}, {}, {}
  local src = without_comments("\n" .. source)
    :gsub("\n%s*#[^\n]*", "\n") -- #include and #define lines are no declarations
  local close = brace_pairs(src)
  local function typedefs()
    for text, c in cdecl.statements(src) do
      if c == ";" then typedef(text) end
    end
  end
  braced(src, close, enum)
  typedefs()
  braced(src, close, struct)
  typedefs()
end

return cdecl
