-- debugger_warp.lua: a breakpoint's condition (cexpr.lua) lowered to the program the simulator
-- evaluates over a whole warp at once (sim.h's sim_debug_cop), so that `break 6 if s < 0` on a
-- line a loop runs costs a few operations per warp in C instead of a call into Lua and a read of
-- every variable per lane.
--
-- Used by debugger.lua, once per breakpoint, when it is first reached (the variables' types at
-- its line are known then). lower(fn, cx) gives a list of operations {op, t, from, v, name,
-- type}, t and from spelled "i4" (a signed int), "u8", "f4", "b1", or nil when the condition
-- uses what a warp cannot compute in one pass (memory through a pointer, an array, a structure,
-- @, sizeof of an expression): the Lua evaluator then goes on alone, which is always right.
--
-- Design stance: the typing is done here, with ctype.lua's rules, exactly as cexpr's evaluator
-- types each operation (the usual conversions, integer promotion, the shifts' left operand's
-- type), and written into the program as conversions, so the simulator only computes and never
-- decides a type. Constants are converted here rather than per lane.

local error, pcall, type = error, pcall, type

local cexpr = require "cexpr"
local ctype = require "ctype"
local INT, UINT = ctype.INT, ctype.UINT

local warp = {}

local NOPE = {} -- raised where the compiled form cannot follow the Lua evaluator

local function nope() error(NOPE, 0) end

local function scalar(t)
  if not t then return false end
  if t.k == "f" then return t.size == 4 or t.size == 8 end
  if t.k == "b" then return t.size == 1 end
  return t.k == "i" and (t.size == 1 or t.size == 2 or t.size == 4 or t.size == 8)
end

local function code(t)
  if not scalar(t) then nope() end
  if t.k == "f" then return "f" .. t.size end
  if t.k == "b" then return "b1" end
  return (t.signed and "i" or "u") .. t.size
end

local function same(a, b) return code(a) == code(b) end

local BINOPS = { ["+"] = "add", ["-"] = "sub", ["*"] = "mul", ["/"] = "div", ["%"] = "mod",
  ["&"] = "and", ["|"] = "or", ["^"] = "xor", ["<<"] = "shl", [">>"] = "shr", ["<"] = "lt",
  ["<="] = "le", [">"] = "gt", [">="] = "ge", ["=="] = "eq", ["!="] = "ne" }
local COMPARES = { lt = true, le = true, gt = true, ge = true, eq = true, ne = true }
local INTEGER_ONLY = { mod = true, ["and"] = true, ["or"] = true, xor = true }
local XYZ = { x = 0, y = 1, z = 2 }

-- out with list's operations and then op appended (Lua leaves the order in which `f()[k] = v`
-- evaluates f and k open, so this is one call).
local function append(out, list, op)
  for i = 1, #list do out[#out + 1] = list[i] end
  if op then out[#out + 1] = op end
  return out
end

-- Appends to ops what converts the value on top from type `from` to type `to`: nothing when they
-- are one type, a constant converted here, else a cvt.
local function convert(ops, from, to)
  if same(from, to) then return end
  local last = ops[#ops]
  if last and (last.op == "int" or last.op == "float") then
    local ok, v = pcall(ctype.convert, last.v, from, to)
    if not ok then nope() end
    ops[#ops] = { op = to.k == "f" and "float" or "int", t = code(to), v = v }
    return
  end
  ops[#ops + 1] = { op = "cvt", from = code(from), t = code(to) }
end

local lower

local function lower_name(n, cx)
  if n.name == "warpSize" then return { { op = "int", t = "i4", v = 32 } }, INT end
  if n.name == "threadIdx" or n.name == "blockIdx" or n.name == "blockDim"
      or n.name == "gridDim" then
    nope() -- a dim3 on its own is no number
  end
  local t, spelled = cx.type_of(n.name)
  local e = not t and ctype.enumerators[n.name] -- an enum's value, where no variable hides it
  if e then return { { op = "int", t = code(e.t), v = e.v } }, e.t end
  if not scalar(t) then nope() end
  return { { op = "var", t = code(t), name = n.name, type = spelled } }, t
end

local function lower_member(n, cx)
  local inner = cexpr.tree(n.e)
  if n.arrow or not inner or inner.k ~= "name" or XYZ[n.field] == nil then nope() end
  local which = XYZ[n.field]
  if inner.name == "threadIdx" then return { { op = "tid", t = "u4", v = which } }, UINT end
  if inner.name == "blockIdx" then return { { op = "bid", t = "u4", v = which } }, UINT end
  local dims = inner.name == "blockDim" and cx.info.block or inner.name == "gridDim"
    and cx.info.grid
  if not dims then nope() end
  return { { op = "int", t = "u4", v = dims[n.field] } }, UINT
end

local function lower_unary(n, cx)
  local ops, t = lower(n.e, cx)
  if not scalar(t) then nope() end
  if n.op == "!" then
    ops[#ops + 1] = { op = "lnot", t = "i4" }
    return ops, INT
  end
  local pt = ctype.promote(t)
  convert(ops, t, pt)
  if n.op == "~" then
    if pt.k == "f" then nope() end
    ops[#ops + 1] = { op = "bnot", t = code(pt) }
  elseif n.op == "-" then
    ops[#ops + 1] = { op = "neg", t = code(pt) }
  end
  return ops, pt
end

local function lower_binary(n, cx)
  local a, ta = lower(n.a, cx)
  local b, tb = lower(n.b, cx)
  if not scalar(ta) or not scalar(tb) then nope() end
  if n.k == "and" or n.k == "or" then
    append(a, b, { op = n.k == "and" and "land" or "lor", t = "i4" })
    return a, INT
  end
  local op = BINOPS[n.op] or nope()
  if op == "shl" or op == "shr" then
    if ta.k == "f" or tb.k == "f" then nope() end
    local t = ctype.promote(ta)
    convert(a, ta, t)
    append(a, b, { op = op, t = code(t) })
    return a, t
  end
  local t = ctype.common(ta, tb)
  if INTEGER_ONLY[op] and t.k == "f" then nope() end
  convert(a, ta, t)
  convert(b, tb, t)
  append(a, b, { op = op, t = code(t) })
  return a, COMPARES[op] and INT or t
end

local function lower_select(n, cx)
  local c, tc = lower(n.c, cx)
  local a, ta = lower(n.a, cx)
  local b, tb = lower(n.b, cx)
  if not scalar(tc) or not scalar(ta) or not same(ta, tb) then nope() end -- one type per lane
  append(append(c, a), b, { op = "sel", t = code(ta) })
  return c, ta
end

-- The operations that compute closure f over a warp, and the C type they give.
function lower(f, cx)
  local n = cexpr.tree(f)
  if not n then nope() end
  if n.k == "num" then
    return { { op = n.t.k == "f" and "float" or "int", t = code(n.t), v = n.v } }, n.t
  elseif n.k == "name" then return lower_name(n, cx)
  elseif n.k == "member" then return lower_member(n, cx)
  elseif n.k == "cast" then
    local ops, from = lower(n.e, cx)
    if not scalar(from) or not scalar(n.ty) then nope() end
    convert(ops, from, n.ty)
    return ops, n.ty
  elseif n.k == "un" then return lower_unary(n, cx)
  elseif n.k == "sel" then return lower_select(n, cx)
  end
  return lower_binary(n, cx)
end

-- The program for condition fn (a cexpr.compile result), or nil. cx: {type_of = function(name)
-- -> a ctype type and its spelling in the debug information, or nil; info = {block, grid}}.
function warp.lower(fn, cx)
  local ok, ops, t = pcall(lower, fn, cx)
  if not ok then
    if ops == NOPE then return nil end
    error(ops, 0)
  end
  if not scalar(t) or type(ops) ~= "table" then return nil end
  return ops
end

return warp
