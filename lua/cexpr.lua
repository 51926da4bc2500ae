-- cexpr.lua: C expressions, as a learner types them at the debugger's prompt
-- (break 7 if threadIdx.x == 5 && i > 100, print i * 2), compiled once into a
-- Lua function and then evaluated per thread with C's meaning.
--
-- Used by debugger.lua. cexpr.compile(src) gives a function of one argument,
-- `get(name)`, which returns a variable's value for the thread being asked
-- about (an integer, a float, a boolean, a table for an array or for
-- threadIdx and its kin) or raises with a message that says why it has none.
--
-- Design stance: a small recursive-descent parser that builds closures, not a
-- rewrite of the text into Lua source for load(): C and Lua disagree on too
-- much for a textual rewrite to be right (0 is false in C, / truncates
-- between integers, ! and != and && and ~ mean other things), and a parser
-- names the place of a syntax error, which a learner needs. Values follow
-- C: comparisons and logic give 1 or 0, && and || do not evaluate what they
-- need not, integer / and % truncate toward zero, and dividing an integer by
-- zero is an error rather than a crash. Integers are Lua's 64-bit ones.

local error, ipairs, math, string, tonumber, type = error, ipairs, math, string, tonumber, type

local cexpr = {}

-- Operators of two operands by precedence, lowest first (C's own order).
local LEVELS = {
  { "||" }, { "&&" }, { "|" }, { "^" }, { "&" }, { "==", "!=" }, { "<", ">", "<=", ">=" },
  { "<<", ">>" }, { "+", "-" }, { "*", "/", "%" },
}
local PUNCT2 = { "||", "&&", "==", "!=", "<=", ">=", "<<", ">>" }
local PUNCT1 = "+-*/%<>!~&|^()[]."

-- The tokens of src: {k = "num" | "name" | "op" | "end", v = value, at = column}.
local function tokenize(src)
  local toks, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c:match("[%a_]") then
      local w = src:match("^[%w_]+", i)
      toks[#toks + 1] = { k = "name", v = w, at = i }
      i = i + #w
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local w = src:match("^0[xX]%x+", i) or src:match("^%d*%.?%d*[eE][%+%-]?%d+", i)
        or src:match("^%d*%.?%d*", i)
      local suffix = src:match("^[uUlLfF]*", i + #w)
      local v = tonumber(w)
      if v == nil then error(("'%s' is not a number"):format(w), 0) end
      if suffix:find("[fF]") or (w:find("[%.eE]") and not w:find("^0[xX]")) then
        v = v + 0.0
      end
      toks[#toks + 1] = { k = "num", v = v, at = i }
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

local function number(v, what)
  if v == true then return 1 elseif v == false then return 0 end
  if type(v) ~= "number" then
    error(("%s is %s, not a number"):format(what, type(v) == "table" and "an array" or "nothing"),
      0)
  end
  return v
end

local function truth(v) return number(v, "a condition") ~= 0 end
cexpr.truth = truth

local function integer(v, op)
  v = number(v, "an operand of " .. op)
  if math.type(v) ~= "integer" then error(("%s needs integers"):format(op), 0) end
  return v
end

local function both_int(a, b) return math.type(a) == "integer" and math.type(b) == "integer" end

local BINARY = {
  ["+"] = function(a, b) return a + b end,
  ["-"] = function(a, b) return a - b end,
  ["*"] = function(a, b) return a * b end,
  ["/"] = function(a, b)
    if not both_int(a, b) then return a / b end
    if b == 0 then error("division by zero", 0) end
    local q = a // b
    if q < 0 and q * b ~= a then q = q + 1 end -- C truncates toward zero; // floors
    return q
  end,
  ["%"] = function(a, b)
    if not both_int(a, b) then error("% needs integers", 0) end
    if b == 0 then error("division by zero", 0) end
    return math.fmod(a, b) -- the sign of a, as in C
  end,
  ["<<"] = function(a, b) return integer(a, "<<") << integer(b, "<<") end,
  [">>"] = function(a, b) return integer(a, ">>") >> integer(b, ">>") end,
  ["&"] = function(a, b) return integer(a, "&") & integer(b, "&") end,
  ["|"] = function(a, b) return integer(a, "|") | integer(b, "|") end,
  ["^"] = function(a, b) return integer(a, "^") ~ integer(b, "^") end,
  ["=="] = function(a, b) return a == b and 1 or 0 end,
  ["!="] = function(a, b) return a ~= b and 1 or 0 end,
  ["<"] = function(a, b) return a < b and 1 or 0 end,
  [">"] = function(a, b) return a > b and 1 or 0 end,
  ["<="] = function(a, b) return a <= b and 1 or 0 end,
  [">="] = function(a, b) return a >= b and 1 or 0 end,
}

-- ---- the parser: each parse_* returns a closure of get ----

local P = {}
P.__index = P

function P:peek() return self.toks[self.pos] end

function P:next()
  local t = self.toks[self.pos]
  self.pos = self.pos + 1
  return t
end

function P:fail(t, what)
  local near = t.k == "end" and "at the end" or ("at '%s'"):format(self.src:sub(t.at))
  error(("%s %s"):format(what, near), 0)
end

function P:is(v)
  local t = self:peek()
  return t.k == "op" and t.v == v
end

function P:primary()
  local t = self:next()
  if t.k == "num" then
    local v = t.v
    return function() return v end
  elseif t.k == "name" then
    local name = t.v
    return function(get) return get(name) end
  elseif t.k == "op" and t.v == "(" then
    local e = self:binary(1)
    if not self:is(")") then self:fail(self:peek(), "a ')' is missing") end
    self:next()
    return e
  end
  self:fail(t, "an operand is missing")
end

-- a.x and a[i] after a primary.
function P:postfix()
  local e = self:primary()
  while self:is(".") or self:is("[") do
    if self:next().v == "." then
      local t = self:next()
      if t.k ~= "name" then self:fail(t, "a member name is missing") end
      local inner, field = e, t.v
      e = function(get)
        local v = inner(get)
        if type(v) ~= "table" or v[field] == nil then
          error(("'%s' is not a member of that value"):format(field), 0)
        end
        return v[field]
      end
    else
      local inner, index = e, self:binary(1)
      if not self:is("]") then self:fail(self:peek(), "a ']' is missing") end
      self:next()
      e = function(get)
        local v, i = inner(get), integer(index(get), "an index")
        if type(v) ~= "table" then
          error("only an array can be indexed here (memory a pointer points to is not shown)", 0)
        end
        if i < 0 or i >= (v.n or #v) then
          error(("index %d is outside the array (0 to %d)"):format(i, (v.n or #v) - 1), 0)
        end
        if v[i + 1] == nil then error(("element %d is not shown by the debugger"):format(i), 0) end
        return v[i + 1]
      end
    end
  end
  return e
end

function P:unary()
  local t = self:peek()
  if t.k == "op" and (t.v == "-" or t.v == "+" or t.v == "!" or t.v == "~") then
    self:next()
    local e, op = self:unary(), t.v
    if op == "-" then return function(get) return -number(e(get), "the operand of -") end end
    if op == "+" then return function(get) return number(e(get), "the operand of +") end end
    if op == "!" then return function(get) return truth(e(get)) and 0 or 1 end end
    return function(get) return ~integer(e(get), "~") end
  end
  return self:postfix()
end

local function level_of(t, level)
  if t.k ~= "op" then return false end
  for _, op in ipairs(LEVELS[level]) do if t.v == op then return true end end
  return false
end

-- Operands joined by the operators of LEVELS[level] and those above, left to right.
function P:binary(level)
  if level > #LEVELS then return self:unary() end
  local e = self:binary(level + 1)
  while level_of(self:peek(), level) do
    local op, rhs, lhs = self:next().v, self:binary(level + 1), e
    if op == "&&" then
      e = function(get) return (truth(lhs(get)) and truth(rhs(get))) and 1 or 0 end
    elseif op == "||" then
      e = function(get) return (truth(lhs(get)) or truth(rhs(get))) and 1 or 0 end
    else
      local f = BINARY[op]
      e = function(get)
        local what = "an operand of " .. op
        return f(number(lhs(get), what), number(rhs(get), what))
      end
    end
  end
  return e
end

-- A function of get for the C expression src, or nil and a message that says what is wrong
-- with it and where.
function cexpr.compile(src)
  local ok, res = pcall(function()
    local p = setmetatable({ toks = tokenize(src), pos = 1, src = src }, P)
    if p:peek().k == "end" then error("the expression is empty", 0) end
    local e = p:binary(1)
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
