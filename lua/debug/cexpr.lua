-- cexpr.lua: C expressions, as a learner types them at the debugger's prompt
-- (break 7 if threadIdx.x == 5 && i > 100, print y * width + x, print x[i], print *p),
-- compiled once into a Lua function and then evaluated per thread with C's meaning.
--
-- Used by debugger.lua. cexpr.compile(src) gives a function of one argument, a context
-- {get = function(name) -> value, type [, address], mem = function(address, bytes) -> string},
-- which returns the value, its C type (ctype.lua) and, when it lies in memory, its address. get
-- gives a variable's value for the thread being asked about, or raises with a message that says
-- why it has none; mem reads the device's memory as that thread sees it.
--
-- Design stance: a small recursive-descent parser that builds closures, not a rewrite of the
-- text into Lua source for load(): C and Lua disagree on too much for a textual rewrite to be
-- right (0 is false in C, / truncates between integers, ! and != and && and ~ mean other
-- things), and a parser names the place of a syntax error, which a learner needs. Values follow
-- C with its types: an int is 32 bits and wraps as the kernel's does (y * width + x of two large
-- ints is negative here too), the usual arithmetic conversions pick the type an operator works
-- in, float arithmetic rounds to single precision, comparisons and logic give an int 1 or 0, &&
-- and || do not evaluate what they need not, integer / and % truncate toward zero, and dividing
-- an integer by zero is an error rather than a crash. Pointers index and dereference memory
-- (x[i], *p, &x[i], x[0]@8, gdb's array of 8 elements from x[0] on).

local error, ipairs, math, string, tonumber, type = error, ipairs, math, string, tonumber, type
local setmetatable, table = setmetatable, table

local ctype = require "ctype"
local INT, UINT, LLONG, ULLONG, DOUBLE, FLOAT = ctype.INT, ctype.UINT, ctype.LLONG, ctype.ULLONG,
  ctype.DOUBLE, ctype.FLOAT

local cexpr = {}

-- What each closure the parser builds computes, by closure: {k = "num" | "name" | "member" |
-- "cast" | "un" | "and" | "or" | "bin" | "sel", ...}, its operands being closures too. Only the
-- forms a whole warp can compute at once are recorded (debugger_warp.lua lowers them for the
-- simulator); a closure with no entry (memory, @, sizeof of an expression) is one it cannot.
local NODES = setmetatable({}, { __mode = "k" })
local function node(f, n)
  NODES[f] = n
  return f
end

-- The form of a compiled expression or one of its operands, or nil (see NODES).
function cexpr.tree(f) return NODES[f] end

-- Operators of two operands by precedence, lowest first (C's own order; gdb's @ below them all).
local LEVELS = {
  { "@" }, { "||" }, { "&&" }, { "|" }, { "^" }, { "&" }, { "==", "!=" }, { "<", ">", "<=", ">=" },
  { "<<", ">>" }, { "+", "-" }, { "*", "/", "%" },
}
local PUNCT2 = { "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "->" }
local PUNCT1 = "+-*/%<>!~&|^()[].?:@"

local LIMIT = { INT = 0x7fffffff, UINT = 0xffffffff }

-- The digits of an integer literal in base `base` as the bits of an unsigned 64-bit integer,
-- or nil when they do not fit in 64 bits.
local function digits_value(digits, base)
  local v = 0
  for c in digits:gmatch(".") do
    local d = tonumber(c, 16)
    local most = ctype.udivmod(-1 - d, base) -- the largest v that v * base + d leaves in 64 bits
    if math.ult(most, v) then return nil end
    v = v * base + d
  end
  return v
end

-- An integer literal's type, as C gives it (long being 8 bytes, long long stands for both): the
-- first of int, long long that holds a decimal one, of int, unsigned int, long long, unsigned
-- long long an octal or hexadecimal one; u leaves the signed ones out and l the 4-byte ones. A
-- decimal one too large for long long is unsigned long long, as compilers make it.
local function int_type(v, decimal, u, l)
  local fits_ll = v >= 0
  if not l and not u and v >= 0 and v <= LIMIT.INT then return INT end
  if not l and (u or not decimal) and v >= 0 and v <= LIMIT.UINT then return UINT end
  if not u and fits_ll then return LLONG end
  return ULLONG
end

local INT_SUFFIX = { [""] = true, u = true, l = true, ll = true, ul = true, lu = true,
  ull = true, llu = true }

-- A numeric literal's value and type, as C has them: w the literal, suffix its letters.
local function literal(w, suffix)
  local bad = function(why) error(("'%s%s' is not a number%s"):format(w, suffix, why or ""), 0) end
  local s = suffix:lower()
  local hex = w:find("^0[xX]")
  if w:find("[%.eEpP]") and not (hex and not w:find("[pP]")) then -- a floating literal
    local v = tonumber(w)
    if not v or (s ~= "" and s ~= "f" and s ~= "l") then bad() end
    if s == "f" then return ctype.convert(v + 0.0, DOUBLE, FLOAT), FLOAT end
    return v + 0.0, DOUBLE
  end
  if s == "f" and not hex then bad((" (write %s.0f)"):format(w)) end
  if not INT_SUFFIX[s] then bad() end
  local base, digits = 10, w
  if hex then base, digits = 16, w:sub(3)
  elseif w:find("^0[bB]") then base, digits = 2, w:sub(3)
  elseif w:find("^0%d") then
    base, digits = 8, w:sub(2)
    if digits:find("[89]") then bad(": a 0 in front makes it octal, whose digits are 0 to 7") end
  end
  local v = digits_value(digits, base)
  if not v then error(("'%s%s' is too large for any integer type"):format(w, suffix), 0) end
  return v, int_type(v, base == 10, s:find("u"), s:find("l"))
end

-- The tokens of src: {k = "num" | "name" | "op" | "end", v = value, t = type, at = column}.
local function tokenize(src)
  local toks, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c:match("[%a_]") then
      local w = src:match("^[%w_]+", i)
      while src:match("^::[%a_]", i + #w) do -- a qualified name: Mode::ON, ns::x
        w = w .. src:match("^::[%w_]+", i + #w)
      end
      toks[#toks + 1] = { k = "name", v = w, at = i }
      i = i + #w
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local w = src:match("^0[xX]%x*%.?%x*[pP][%+%-]?%d+", i) or src:match("^0[xX]%x+", i)
        or src:match("^0[bB][01]+", i) or src:match("^%d*%.?%d*[eE][%+%-]?%d+", i)
        or src:match("^%d*%.?%d*", i)
      local suffix = src:match("^[%w_]*", i + #w) -- letters after a number are its suffix
      local v, t = literal(w, suffix)
      toks[#toks + 1] = { k = "num", v = v, t = t, at = i }
      i = i + #w + #suffix
    else
      local two = src:sub(i, i + 1)
      local op
      for _, p in ipairs(PUNCT2) do if two == p then op = p end end
      op = op or (PUNCT1:find(c, 1, true) and c)
      if c == "=" and not op then error("'=' assigns in C; a condition compares with ==", 0) end
      if not op then error(("'%s' cannot be part of an expression"):format(c), 0) end
      toks[#toks + 1] = { k = "op", v = op, at = i }
      i = i + #op
    end
  end
  toks[#toks + 1] = { k = "end", at = n + 1 }
  return toks
end

-- ---- values with C's meaning ----

local function scalar(t) return t.k == "i" or t.k == "b" or t.k == "f" or t.k == "p" end

local function need_scalar(v, t, what)
  if not scalar(t) then
    error(("%s is %s, not a number"):format(what, t.k == "a" and "an array" or "a " .. t.name), 0)
  end
  return v
end

local function truth(v, t)
  if t then need_scalar(v, t, "a condition") end
  if type(v) == "boolean" then return v end
  return v ~= 0
end
cexpr.truth = truth

-- The element type a pointer or array points to, and its size (which must be known).
local function target(t, what)
  local to = t.k == "p" and t.to or t.elem
  if to.k == "s" and to.size == 0 then
    error(("%s: the debugger does not know the layout of %s"):format(what, to.name), 0)
  end
  return to
end

-- How many elements of an array load shows: the first ones, as gdb's print elements limit does.
local SHOWN = 64

-- The scalars a value of type t holds: 1, or an array's or a structure's all.
local function scalars(t)
  if t.k == "a" then return t.n * scalars(t.elem) end
  if t.k == "s" and t.fields then
    local n = 0
    for _, nm in ipairs(t.order) do n = n + scalars(t.fields[nm].t) end
    return n
  end
  return 1
end

-- The value of type `to` at address a, read through the context's memory: a scalar; a
-- structure's members by name (members = their order); an array's elements, each a value of
-- its element type (rows of a two-dimensional one), as many as make up SHOWN scalars, n = how
-- many it has.
local function load(ctx, a, to)
  if to.k == "s" and to.fields then
    local out = { members = to.order }
    for _, nm in ipairs(to.order) do
      local f = to.fields[nm]
      out[nm] = load(ctx, a + f.off, f.t)
    end
    return out
  end
  if to.k == "a" then
    local e, out = to.elem, { n = to.n }
    if to.n == 0 then return out end
    local shown = math.min(to.n, math.max(1, SHOWN // math.max(1, scalars(e))))
    if e.k == "a" or (e.k == "s" and e.fields) then
      for i = 1, shown do out[i] = load(ctx, a + (i - 1) * e.size, e) end
      return out
    end
    local bytes = ctx.mem(a, shown * e.size)
    for i = 1, shown do out[i] = ctype.decode(bytes:sub((i - 1) * e.size + 1, i * e.size), e) end
    return out
  end
  return ctype.decode(ctx.mem(a, to.size), to)
end

cexpr.load = load

-- a / b or a % b of integers of type t as C computes them: truncated toward zero, an unsigned
-- long long's as unsigned (Lua's own // and % floor, and hold such a one as a negative number).
local function int_divide(op, a, b, t)
  if b == 0 then error("division by zero", 0) end
  if not t.signed and t.size == 8 then
    local q, r = ctype.udivmod(a, b)
    return op == "/" and q or r
  end
  if op == "%" then return math.fmod(a, b) end -- the sign of a, as in C
  local q = a // b
  if q < 0 and q * b ~= a then q = q + 1 end -- C truncates toward zero; // floors
  return q
end

local ARITH = {
  ["+"] = function(a, b) return a + b end,
  ["-"] = function(a, b) return a - b end,
  ["*"] = function(a, b) return a * b end,
  ["/"] = function(a, b, t)
    if t.k == "f" then return a / b end
    return int_divide("/", a, b, t)
  end,
  ["%"] = function(a, b, t)
    if t.k == "f" then error("% needs integers", 0) end
    return int_divide("%", a, b, t)
  end,
  ["&"] = function(a, b) return a & b end,
  ["|"] = function(a, b) return a | b end,
  ["^"] = function(a, b) return a ~ b end,
}
local BITWISE = { ["&"] = true, ["|"] = true, ["^"] = true, ["%"] = true, ["<<"] = true,
  [">>"] = true }

local function compare(op, a, b, t)
  if t.k == "f" then -- a NaN compares false with everything but !=, as in C
    local r = op == "==" and a == b or op == "!=" and a ~= b or op == "<" and a < b
      or op == ">" and a > b or op == "<=" and a <= b or op == ">=" and a >= b
    return r and 1 or 0
  end
  local lt, eq
  if t.k == "i" and not t.signed and t.size == 8 then lt = math.ult(a, b)
  else lt = a < b end
  eq = a == b
  local r
  if op == "==" then r = eq elseif op == "!=" then r = not eq
  elseif op == "<" then r = lt elseif op == ">" then r = not lt and not eq
  elseif op == "<=" then r = lt or eq else r = not lt end
  return r and 1 or 0
end

-- a op b with C's types: pointer arithmetic, the usual conversions, the result wrapped.
local function binop(op, a, ta, b, tb)
  need_scalar(a, ta, "an operand of " .. op)
  need_scalar(b, tb, "an operand of " .. op)
  if (op == "+" or op == "-") and (ta.k == "p" or tb.k == "p") then
    if ta.k == "p" and tb.k == "p" then
      if op == "+" then error("two pointers cannot be added", 0) end
      return (a - b) // math.max(1, target(ta, "-").size), LLONG
    end
    if tb.k == "p" and op == "-" then error("a pointer cannot be subtracted from a number", 0) end
    if tb.k == "p" then a, ta, b, tb = b, tb, a, ta end
    if tb.k == "f" then error("a pointer moves by whole elements, not by " .. tb.name, 0) end
    local step = target(ta, op).size * b
    return op == "+" and a + step or a - step, ta
  end
  if op == "<<" or op == ">>" then
    if ta.k == "f" or tb.k == "f" then error(op .. " needs integers", 0) end
    local t = ctype.promote(ta)
    local r = op == "<<" and a << b or (t.signed and a >> b | (a < 0 and ~(-1 >> b) or 0)
      or (t.size == 4 and (a & 0xffffffff) >> b or a >> b))
    return ctype.wrap(r, t), t
  end
  local t = (ta.k == "p" or tb.k == "p") and LLONG or ctype.common(ta, tb)
  if BITWISE[op] and t.k == "f" then error(op .. " needs integers", 0) end
  a, b = ctype.convert(a, ta, t), ctype.convert(b, tb, t)
  if ARITH[op] then
    local r = ARITH[op](a, b, t)
    if t.k == "f" then return ctype.convert(r, DOUBLE, t), t end
    return ctype.wrap(r, t), t
  end
  return compare(op, a, b, t), INT
end

-- ---- the parser: each parse_* returns a closure of the context ----

local P = {}
P.__index = P

function P:peek(k) return self.toks[self.pos + (k or 0)] end

function P:next()
  local t = self.toks[self.pos]
  self.pos = self.pos + 1
  return t
end

function P:fail(t, what)
  local rest = self.src:sub(t.at)
  if #rest > 40 then rest = rest:sub(1, 37) .. "..." end
  local near = t.k == "end" and "at the end" or ("at '%s'"):format(rest)
  error(("%s %s"):format(what, near), 0)
end

-- How deep operands may nest (parentheses, unary operators, casts, ?:): far past what a learner
-- types, and far short of what would overflow the stack of the parser or the evaluator.
local MAX_DEPTH = 200

-- One level deeper into the expression; raises past MAX_DEPTH.
function P:enter()
  self.depth = self.depth + 1
  if self.depth > MAX_DEPTH then
    error(("the expression nests more than %d deep"):format(MAX_DEPTH), 0)
  end
end

function P:is(v, k)
  local t = self:peek(k)
  return t.k == "op" and t.v == v
end

function P:expect(v, what)
  if not self:is(v) then self:fail(self:peek(), what) end
  self:next()
end

-- A type name at the cursor (for a cast or sizeof): its type, the cursor after it; or nil.
function P:type_name()
  local t = self:peek()
  if t.k ~= "name" or not ctype.is_type_word(t.v) then return nil end
  local words = {}
  while self:peek().k == "name" and (ctype.is_type_word(self:peek().v) or #words > 0 and
      self.toks[self.pos - 1].v == "struct") do
    words[#words + 1] = self:next().v
  end
  while self:is("*") do
    self:next()
    words[#words + 1] = "*"
  end
  return (ctype.parse(table.concat(words, " ")))
end

function P:primary()
  local t = self:next()
  if t.k == "num" then
    local v, ty = t.v, t.t
    return node(function() return v, ty end, { k = "num", v = v, t = ty })
  elseif t.k == "name" then
    local name = t.v
    return node(function(ctx) return ctx.get(name) end, { k = "name", name = name })
  elseif t.k == "op" and t.v == "(" then
    local e = self:expr()
    self:expect(")", "a ')' is missing")
    return e
  end
  self:fail(t, "an operand is missing")
end

-- e[i]: an element of an array (its elements, when the debugger has them) or through a pointer.
local function index(e, i)
  return function(ctx)
    local v, t, a = e(ctx)
    local k, kt = i(ctx)
    if kt.k ~= "i" and kt.k ~= "b" then error("an index must be an integer", 0) end
    if t.k == "p" then
      local to = target(t, "[]")
      local at = v + k * to.size
      return load(ctx, at, to), to, at
    end
    if t.k ~= "a" then
      error(("only an array or a pointer can be indexed, and this is %s %s"):format(
        t.name:find("^[aeiou]") and "an" or "a", t.name), 0)
    end
    if t.n == 0 then error(("index %d: the array has no elements"):format(k), 0) end
    if k < 0 or k >= t.n then
      error(("index %d is outside the array (0 to %d)"):format(k, t.n - 1), 0)
    end
    local elem = t.elem
    if a then return load(ctx, a + k * elem.size, elem), elem, a + k * elem.size end
    -- an array in registers: the elements the debugger was given
    if v[k + 1] == nil then error(("element %d is not shown by the debugger"):format(k), 0) end
    return v[k + 1], elem
  end
end

local function member(e, field, arrow)
  return node(function(ctx)
    local v, t = e(ctx)
    if arrow then
      if t.k ~= "p" then error(("'->' needs a pointer, and this is %s"):format(t.name), 0) end
      t = t.to
    end
    if t.k == "s" and t.name == "dim3" then
      if type(v) == "table" and v[field] ~= nil then return v[field], UINT end
      error(("'%s' is not a member of dim3 (its members are x, y and z)"):format(field), 0)
    end
    if t.k == "s" and t.fields then -- a structure the source declares, read from memory
      local f = t.fields[field]
      if not f then error(("'%s' is not a member of %s"):format(field, t.name), 0) end
      local a = v
      if not arrow then a = select(3, e(ctx)) end
      if not a then error(("%s: the structure is not in memory"):format(field), 0) end
      return load(ctx, a + f.off, f.t), f.t, a + f.off
    end
    if t.k == "s" then
      error(("%s: the debugger does not know the members of %s"):format(field, t.name), 0)
    end
    error(("'%s' is not a member of a %s"):format(field, t.name), 0)
  end, { k = "member", e = e, field = field, arrow = arrow })
end

-- a.x, a->x and a[i] after a primary.
function P:postfix()
  local e = self:primary()
  while self:is(".") or self:is("[") or self:is("->") do
    local op = self:next().v
    if op == "[" then
      local i = self:expr()
      self:expect("]", "a ']' is missing")
      e = index(e, i)
    else
      local t = self:next()
      if t.k ~= "name" then self:fail(t, "a member name is missing") end
      e = member(e, t.v, op == "->")
    end
  end
  return e
end

local function sizeof_of(e)
  return function(ctx)
    local _, t = e(ctx)
    return t.size, ctype.SIZE_T
  end
end

-- (T)e: e converted to T as C converts a scalar.
local function cast_to(ty, e)
  return node(function(ctx)
    local v, from = e(ctx)
    need_scalar(v, from, "what is cast")
    return ctype.convert(v, from, ty), ty
  end, { k = "cast", ty = ty, e = e })
end

-- -e, +e, !e and ~e, on the operand promoted as C promotes it (! gives an int, 0 or 1).
local function arith_unary(op, e)
  return node(function(ctx)
    local v, ty = e(ctx)
    need_scalar(v, ty, "the operand of " .. op)
    if op == "!" then return truth(v) and 0 or 1, INT end
    if ty.k == "p" then error(op .. " does not apply to a pointer", 0) end
    local pt = ctype.promote(ty)
    v = ctype.convert(v, ty, pt)
    if op == "+" then return v, pt end
    if op == "~" then
      if pt.k == "f" then error("~ needs integers", 0) end
      return ctype.wrap(~v, pt), pt
    end
    if pt.k == "f" then return -v, pt end
    return ctype.wrap(-v, pt), pt
  end, { k = "un", op = op, e = e })
end

-- *e: what the pointer e points at, read from memory, with its address (so that &*p works).
local function deref(e)
  return function(ctx)
    local v, ty = e(ctx)
    if ty.k ~= "p" then error(("* needs a pointer, and this is %s"):format(ty.name), 0) end
    local to = target(ty, "*")
    return load(ctx, v, to), to, v
  end
end

-- &e: the address of e, which only something read from memory has.
local function address_of(e)
  return function(ctx)
    local _, ty, a = e(ctx)
    if not a then
      error("& needs something in memory, and this is in a register (or is a value)", 0)
    end
    return a, ctype.pointer(ty)
  end
end

-- Whether a '(' that opens a type name comes next: a cast, or sizeof's operand.
function P:type_in_parens()
  return self:is("(") and self:peek(1).k == "name" and ctype.is_type_word(self:peek(1).v)
end

-- A parenthesised type name, its ')' included.
function P:paren_type()
  self:next()
  local ty = self:type_name()
  self:expect(")", "a ')' is missing after the type")
  return ty
end

-- sizeof(T) is a constant; sizeof e is the size of e's type, found when it is evaluated.
function P:sizeof()
  self:next()
  if self:type_in_parens() then
    local ty = self:paren_type()
    return node(function() return ty.size, ctype.SIZE_T end,
      { k = "num", v = ty.size, t = ctype.SIZE_T })
  end
  return sizeof_of(self:unary())
end

function P:unary()
  self:enter()
  local e = self:unary_operand()
  self.depth = self.depth - 1
  return e
end

function P:unary_operand()
  local t = self:peek()
  if t.k == "name" and t.v == "sizeof" then return self:sizeof() end
  if self:type_in_parens() then
    local ty = self:paren_type()
    return cast_to(ty, self:unary())
  end
  if t.k ~= "op" then return self:postfix() end
  local op = t.v
  if op == "-" or op == "+" or op == "!" or op == "~" then
    self:next()
    return arith_unary(op, self:unary())
  elseif op == "*" then
    self:next()
    return deref(self:unary())
  elseif op == "&" then
    self:next()
    return address_of(self:unary())
  end
  return self:postfix()
end

local function level_of(t, level)
  if t.k ~= "op" then return false end
  for _, op in ipairs(LEVELS[level]) do if t.v == op then return true end end
  return false
end

-- lhs@n: n elements from lhs on, as gdb shows an array of them.
local function repeat_of(lhs, rhs)
  return function(ctx)
    local _, t, a = lhs(ctx)
    local n, nt = rhs(ctx)
    if nt.k ~= "i" or n < 1 then error("after @ comes how many elements: x[0]@8", 0) end
    if not a then error("@ needs its left side in memory, as x[0]@8 of a pointer x is", 0) end
    if n > 1024 then error("@ shows at most 1024 elements", 0) end
    local arr = ctype.array(t, n)
    return load(ctx, a, arr), arr, a
  end
end

-- Operands joined by the operators of LEVELS[level] and those above, left to right.
function P:binary(level)
  if level > #LEVELS then return self:unary() end
  local e = self:binary(level + 1)
  while level_of(self:peek(), level) do
    local op, rhs, lhs = self:next().v, self:binary(level + 1), e
    if op == "@" then
      e = repeat_of(lhs, rhs)
    elseif op == "&&" then
      e = node(function(ctx) return (truth(lhs(ctx)) and truth(rhs(ctx))) and 1 or 0, INT end,
        { k = "and", a = lhs, b = rhs })
    elseif op == "||" then
      e = node(function(ctx) return (truth(lhs(ctx)) or truth(rhs(ctx))) and 1 or 0, INT end,
        { k = "or", a = lhs, b = rhs })
    else
      e = node(function(ctx)
        local a, ta = lhs(ctx)
        local b, tb = rhs(ctx)
        return binop(op, a, ta, b, tb)
      end, { k = "bin", op = op, a = lhs, b = rhs })
    end
  end
  return e
end

-- cond ? a : b, the lowest of all (as in C, right to left).
function P:expr()
  local c = self:binary(1)
  if not self:is("?") then return c end
  self:next()
  self:enter()
  local a = self:expr()
  self:expect(":", "a ':' is missing after '?'")
  local b = self:expr()
  self.depth = self.depth - 1
  return node(function(ctx)
    local v, t = c(ctx)
    need_scalar(v, t, "the condition of ?:")
    local r, rt
    if truth(v) then r, rt = a(ctx) else r, rt = b(ctx) end
    return r, rt
  end, { k = "sel", c = c, a = a, b = b })
end

-- A function of the context for the C expression src, or nil and a message that says what is wrong
-- with it and where.
function cexpr.compile(src)
  local ok, res = pcall(function()
    local p = setmetatable({ toks = tokenize(src), pos = 1, src = src, depth = 0 }, P)
    if p:peek().k == "end" then error("the expression is empty", 0) end
    local e = p:expr()
    local t = p:peek()
    if t.k ~= "end" then p:fail(t, "unexpected text") end
    return e
  end)
  if ok then return res end
  return nil, res
end

-- The names an expression reads (for messages and completion), in order.
function cexpr.names(src)
  local out, seen = {}, {}
  local ok, toks = pcall(tokenize, src)
  if not ok then return out end
  for i, t in ipairs(toks) do
    local after_dot = i > 1 and toks[i - 1].k == "op" and toks[i - 1].v == "."
    if t.k == "name" and not after_dot and not seen[t.v] then
      seen[t.v] = true
      out[#out + 1] = t.v
    end
  end
  return out
end

return cexpr
