-- complete.lua: tab completion for the console.
--
-- The console (readline, in C) sends the word under the cursor, e.g. "cuda.ar"
-- or "a:to", and gets back the full words that could replace it, sorted:
-- {"cuda.arange(", "cuda.array("}. Everything else (word breaks, listing the
-- choices, the common prefix) stays with readline.
--
-- Design stance:
--  * Completion runs on every Tab, often on half-typed code, so it must never
--    raise and never run the learner's code. Tables are read with rawget and
--    next; a metatable's __index is followed only when it is itself a table
--    (a function there could do anything, and a C __index on a device array
--    might touch the GPU). Chains are followed to a fixed depth, which also
--    stops cycles of __index tables.
--  * The suffix tells what comes next: "." after a table, "(" after a
--    function, ":" after an object (a value with methods). After "a:" only
--    methods are offered, since nothing else can follow a colon.
--  * Where the word stands decides what fits. Where any value may stand (an
--    argument, the right of "=" or of an operator, a table's field, after
--    return), the name alone is offered beside the name with its suffix, so
--    Tab after "print(a" does not force "a:" on an array; and of the
--    keywords only those that start a value (nil, true, not, function...).
--    At the start of a statement the suffix still comes with the name.
--    Inside a string or a comment nothing is offered.
--  * Names starting with "_" are internals (cuda._meta, _G) and are hidden
--    unless the learner has typed the "_" already.
--  * Only plain dotted names are completed (the text before them is kept as
--    it is); a word after a call or inside a string ("f().x", 't["cu') gets no
--    candidates rather than a wrong guess.

-- Standard functions are captured at load time: a learner may well name a
-- variable `table` or `type`, and this module must keep working when they do.
local _G, getmetatable, ipairs, math, next, pairs = _G, getmetatable, ipairs, math, next, pairs
local pcall, rawget, table, type = pcall, rawget, table, type

local complete = {}

-- How many __index tables to follow from one value.
local MAX_CHAIN = 8

-- The keywords a value may start with.
local VALUE_KEYWORDS = { "false", "function", "nil", "not", "true" }

-- Words after which a value comes (an expression), not a statement.
local BEFORE_VALUE = {
  ["return"] = true, ["and"] = true, ["or"] = true, ["not"] = true, ["in"] = true,
  ["if"] = true, ["elseif"] = true, ["while"] = true, ["until"] = true,
}

local KEYWORDS = {
  "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
  "true", "until", "while",
}
local IS_KEYWORD = {}
for _, k in ipairs(KEYWORDS) do IS_KEYWORD[k] = true end

local function is_name(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil and not IS_KEYWORD[s]
end

-- v's metatable when it is a readable table (not hidden by __metatable).
local function metatable(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and mt or nil
end

-- Field `key` of v as plain indexing would find it, without calling any
-- function: v's own raw field (tables only), then along __index tables, then
-- in a __methods table (how a C type with a function __index can still list
-- its methods).
local function lookup(v, key, depth)
  if type(v) == "table" then
    local x = rawget(v, key)
    if x ~= nil then return x end
  end
  local mt = depth < MAX_CHAIN and metatable(v)
  if not mt then return nil end
  local idx = rawget(mt, "__index")
  if type(idx) == "table" then
    local x = lookup(idx, key, depth + 1)
    if x ~= nil then return x end
  end
  local methods = rawget(mt, "__methods")
  return type(methods) == "table" and rawget(methods, key) or nil
end

-- A stand-in value for methods known only by name.
complete.METHOD = function() end

-- Adds the entries of a __methods table: either a map name -> function or a
-- list of method names (then we only know that they are methods).
local function add_methods(methods, out)
  for k, f in next, methods do
    if type(k) == "string" and out[k] == nil then
      out[k] = f
    elseif math.type(k) == "integer" and type(f) == "string" and out[f] == nil then
      out[f] = complete.METHOD
    end
  end
end

-- Collects into `out` (name -> value) every name v offers, own fields first
-- so that they shadow inherited ones, as indexing would.
local function collect(v, out, depth)
  if type(v) == "table" then
    for k, x in next, v do
      if out[k] == nil then out[k] = x end
    end
  end
  local mt = depth < MAX_CHAIN and metatable(v)
  if not mt then return out end
  local idx = rawget(mt, "__index")
  if type(idx) == "table" then collect(idx, out, depth + 1) end
  local methods = rawget(mt, "__methods")
  if type(methods) == "table" then add_methods(methods, out) end
  return out
end

-- Whether v has at least one method, i.e. whether "v:" can be completed.
-- A table's own functions do not count: that is a module (cuda.array), not
-- an object; an object gets its methods from its metatable.
local function has_methods(v)
  local mt = metatable(v)
  if not mt then return false end
  local inherited = {}
  local idx = rawget(mt, "__index")
  if type(idx) == "table" then collect(idx, inherited, 1) end
  local methods = rawget(mt, "__methods")
  if type(methods) == "table" then add_methods(methods, inherited) end
  for _, x in next, inherited do
    if type(x) == "function" then return true end
  end
  return false
end

-- The suffix that says what may follow a name whose value is v.
local function suffix(v)
  local t = type(v)
  if t == "function" then return "(" end
  if (t == "table" or t == "userdata") and has_methods(v) then return ":" end
  if t == "table" then return "." end
  return ""
end

-- Splits the trailing name expression of text: head (left alone), the path
-- of names before the last separator, the separator and the partial name.
-- Returns nil for anything that is not a plain dotted name.
local function parse(text)
  local head, expr = text:match("^(.-)([%w_%.:]*)$")
  if expr:find(":", 1, true) and not expr:match("^[^:]*:[%w_]*$") then return nil end
  local path_text, sep, partial = expr:match("^(.*)([%.:])([%w_]*)$")
  if not path_text then return head, {}, "", "", expr end
  local path = {}
  for seg in (path_text .. "."):gmatch("([^%.]*)%.") do
    if not is_name(seg) then return nil end
    path[#path + 1] = seg
  end
  if partial ~= "" and not partial:match("^[%a_]") then return nil end
  return head, path, path_text, sep, partial
end

-- Whether the end of `head` is inside a string literal or a comment, where
-- names make no sense: `t["`, `print("cu`, `x = 1 -- the a`. Long strings
-- ([[...]]) are not tracked; a wrong guess there only costs a useless list.
local function in_string(head)
  local quote, i = nil, 1
  while i <= #head do
    local ch = head:sub(i, i)
    if quote then
      if ch == "\\" then i = i + 1 elseif ch == quote then quote = nil end
    elseif ch == '"' or ch == "'" then
      quote = ch
    elseif ch == "-" and head:sub(i + 1, i + 1) == "-" then
      return true
    end
    i = i + 1
  end
  return quote ~= nil
end

-- Whether a name after `head` stands where a value goes: after an opening
-- bracket, a comma, "=" or another operator, or a word such as return.
local function at_value(head)
  local b = head:gsub("%s+$", "")
  if b:find("[%(%[{,=+%-*/%%^#<>~&|]$") or b:find("%.%.$") then return true end
  return BEFORE_VALUE[b:match("[%a_][%w_]*$") or ""] == true
end

-- The candidates proper; may raise on an unexpected value, which the
-- public function catches.
local function candidates(text, env, before)
  local head, path, path_text, sep, partial = parse(text)
  if not head then return {} end
  local context = before .. head
  if in_string(context) then return {} end
  local value = at_value(context)
  local v = env
  for _, seg in ipairs(path) do
    v = lookup(v, seg, 0)
    if v == nil then return {} end
  end
  local prefix = head .. path_text .. sep
  local hide = partial:sub(1, 1) ~= "_"
  local seen, out = {}, {}
  local function add(word)
    if not seen[word] then seen[word], out[#out + 1] = true, word end
  end
  for name, x in pairs(collect(v, {}, 0)) do
    if is_name(name) and name:sub(1, #partial) == partial
        and not (hide and name:sub(1, 1) == "_") then
      if sep == ":" then
        if type(x) == "function" then add(prefix .. name .. "(") end
      else
        if value then add(prefix .. name) end
        add(prefix .. name .. suffix(x))
      end
    end
  end
  if #path == 0 then
    for _, k in ipairs(value and VALUE_KEYWORDS or KEYWORDS) do
      if k:sub(1, #partial) == partial then add(head .. k) end
    end
  end
  table.sort(out)
  return out
end

-- complete.candidates(text [, env [, before]]) -> sorted list of replacement
-- strings. env is where top-level names are looked up (default _G); before is
-- the line's text in front of text (default ""), which says where it stands.
-- Never raises: on any error there is simply nothing to offer.
function complete.candidates(text, env, before)
  if type(text) ~= "string" then return {} end
  if type(before) ~= "string" then before = "" end
  local ok, list = pcall(candidates, text, env or _G, before)
  return ok and list or {}
end

return complete
