-- json.lua: JSON text to Lua values and back (RFC 8259), for the class
-- records (class_record.lua) and anything else that writes files other tools
-- read.
--
--   json.encode(value [, {indent = true | n, max_depth = 64}]) -> text
--   json.decode(text [, {max_depth = 64, keep_null = false}]) -> value | nil, why
--   json.null, json.array(t), json.empty_array, json.is_array(t)
--
-- Design stance:
--  * decode() reads hostile text (a record any learner can edit), so it is
--    strict and cheap to refuse: it never recurses (an explicit stack, so
--    10^6 opening brackets cost one error, not a C stack), stops at
--    max_depth nested containers, and answers nil plus a message naming the
--    byte, line and column instead of raising. Only a bad argument raises.
--  * Strict means RFC 8259 with no extensions: no comments, no trailing
--    commas, no NaN or Infinity, no leading zeros or '+', no byte order mark,
--    no raw control characters in strings, strings valid UTF-8 and lone
--    surrogates refused. Duplicate keys in one object are refused too (the
--    RFC leaves them unpredictable; a record that says "passed" twice is
--    either a bug or a trick). Numbers that are integral and fit in a Lua
--    integer become integers (3, 1e3, 2.0); the rest become floats; a number
--    too large for a double (1e400) is refused rather than read as inf.
--  * null: in an array it is json.null, so that #t and ipairs stay right; in
--    an object the member is left out (nil), so `if t.passed_at then` works
--    on a record that wrote "passed_at": null. keep_null = true keeps
--    json.null in objects too, for a lossless round trip.
--  * encode() writes deterministic text, byte for byte: object keys sorted by
--    byte value (not strcoll, which depends on the locale), integers as
--    integers, floats in the shortest form of %.14g..%.17g that reads back
--    to the same double (0.1, not 0.10000000000000001). A table is an array
--    when its keys are exactly 1..n; an empty table is an object, {}, unless
--    it is json.array(t) or json.empty_array. Bad input raises and names
--    where it is ("$.tasks[2].name"): non-string keys, sparse arrays, cycles,
--    NaN and inf, functions.
--  * Strings are written as UTF-8 with only '"', '\' and control characters
--    escaped. Invalid UTF-8 is replaced, one U+FFFD per bad byte, rather
--    than refused: a failed check's message can hold whatever bytes a
--    learner's program printed, and losing a whole record to one bad byte
--    would be worse than a visible replacement character. (Turned down:
--    raising, or writing the bytes through, which makes the file invalid
--    JSON that decode() and every other reader then refuse.)
--  * Arrays are marked with a metatable rather than a side table, so marking
--    every decoded array costs nothing and encode(decode("[]")) is "[]".

local error, getmetatable, ipairs, math, next, pcall, setmetatable = error, getmetatable,
  ipairs, math, next, pcall, setmetatable
local string, table, tonumber, tostring, type, utf8 = string, table, tonumber, tostring, type, utf8

local byte, char, find, format, sub = string.byte, string.char, string.find, string.format,
  string.sub

local json = {}

json.MAX_DEPTH = 64

-- The value that stands for null where nil cannot (array elements).
json.null = setmetatable({}, {
  __name = "json.null",
  __tostring = function() return "json.null" end,
  __newindex = function() error("json.null is read-only", 2) end,
})

local ARRAY = { __name = "json.array" }
local EMPTY = { __name = "json.array",
  __newindex = function() error("json.empty_array is read-only; use json.array({})", 2) end }

-- Marks t as an array, so that it is written as [] even when empty. Returns t.
function json.array(t)
  if type(t) ~= "table" then
    error("json.array: expected a table, got " .. type(t), 2)
  end
  local mt = getmetatable(t)
  if mt ~= nil and mt ~= ARRAY and mt ~= EMPTY then
    error("json.array: the table already has a metatable", 2)
  end
  return setmetatable(t, ARRAY)
end

json.empty_array = setmetatable({}, EMPTY)

-- Whether t is marked as an array (by json.array or by decode).
function json.is_array(t)
  local mt = type(t) == "table" and getmetatable(t)
  return mt == ARRAY or mt == EMPTY
end

---------------------------------------------------------------------------
-- Encoding
---------------------------------------------------------------------------

local ESCAPES = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
for c = 0, 31 do
  local ch = char(c)
  ESCAPES[ch] = ESCAPES[ch] or format("\\u%04x", c)
end

-- s with every byte that is not part of valid UTF-8 replaced by U+FFFD.
-- utf8.len (strict: no surrogates, no overlong forms, nothing past
-- U+10FFFF) finds each bad byte, so valid text costs one call.
local function valid_utf8(s)
  if utf8.len(s) then return s end
  local parts, i = {}, 1
  while true do
    local ok, bad = utf8.len(s, i)
    if ok then parts[#parts + 1] = sub(s, i); break end
    parts[#parts + 1] = sub(s, i, bad - 1)
    parts[#parts + 1] = "\u{FFFD}"
    i = bad + 1
  end
  return table.concat(parts)
end

local function quote(s)
  if not find(s, '[\0-\31"\\\128-\255]') then return '"' .. s .. '"' end
  return '"' .. valid_utf8(s):gsub('[\0-\31"\\]', ESCAPES) .. '"'
end

-- The shortest of %.14g .. %.17g that reads back as x. The decimal point is
-- forced to '.', in case a host program set a locale that writes ','.
local function float_text(x)
  local s
  for digits = 14, 17 do
    s = format("%." .. digits .. "g", x):gsub(",", ".")
    if tonumber(s) == x then break end
  end
  return s
end

-- Byte order for keys; Lua's < on strings uses strcoll.
local function bytes_less(a, b)
  local n = #a < #b and #a or #b
  for i = 1, n do
    local x, y = byte(a, i), byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- Encoding state: options, output parts, and the path to the value being
-- written (for messages), kept as a stack and joined only on error.
local Enc = {}
Enc.__index = Enc

local function path_text(path, n)
  local parts = { "$" }
  for i = 1, n do
    local k = path[i]
    if type(k) == "string" and find(k, "^[%a_][%w_]*$") then
      parts[#parts + 1] = "." .. k
    elseif type(k) == "string" then
      parts[#parts + 1] = "[" .. quote(k) .. "]"
    else
      parts[#parts + 1] = "[" .. tostring(k) .. "]"
    end
  end
  return table.concat(parts)
end

-- Raises an encoding error; json.encode adds its name and the caller's line.
function Enc:fail(msg)
  error({ json_error = msg .. " at " .. path_text(self.path, self.depth) }, 0)
end

-- The number of elements if t is to be written as an array, else nil.
function Enc:array_length(t)
  local marked = json.is_array(t)
  local n, max = 0, 0
  for k in next, t do
    if math.type(k) == "integer" and k >= 1 then
      n = n + 1
      if k > max then max = k end
    elseif marked then
      self:fail("json.array table has the key " .. (type(k) == "string" and quote(k) or
        tostring(k)))
    else
      return nil
    end
  end
  if marked then return max end
  if n == 0 then return nil end
  if max ~= n then
    self:fail(format("sparse array: key %d in a table of %d elements (use json.null for holes)",
      max, n))
  end
  return n
end

function Enc:newline(depth)
  if self.indent then
    local parts = self.parts
    parts[#parts + 1] = "\n" .. self.indent:rep(depth)
  end
end

function Enc:value(v, depth)
  local parts, t = self.parts, type(v)
  if v == nil or v == json.null then
    parts[#parts + 1] = "null"
  elseif t == "boolean" then
    parts[#parts + 1] = v and "true" or "false"
  elseif t == "string" then
    parts[#parts + 1] = quote(v)
  elseif math.type(v) == "integer" then
    parts[#parts + 1] = format("%d", v)
  elseif t == "number" then
    if v ~= v then self:fail("cannot write nan in JSON") end
    if v - v ~= 0 then self:fail("cannot write " .. (v > 0 and "inf" or "-inf") .. " in JSON") end
    parts[#parts + 1] = float_text(v)
  elseif t == "table" then
    if depth >= self.max_depth then self:fail("nesting deeper than " .. self.max_depth) end
    if self.open[v] then self:fail("cycle: the table contains itself") end
    self.open[v] = true
    local n = self:array_length(v)
    if n then self:array(v, n, depth + 1) else self:object(v, depth + 1) end
    self.open[v] = nil
  else
    self:fail("cannot write a " .. t .. " in JSON")
  end
end

function Enc:array(t, n, depth)
  local parts, path = self.parts, self.path
  if n == 0 then parts[#parts + 1] = "[]"; return end
  parts[#parts + 1] = "["
  for i = 1, n do
    if i > 1 then parts[#parts + 1] = "," end
    self:newline(depth)
    path[depth], self.depth = i, depth
    self:value(t[i], depth)
  end
  self.depth = depth - 1
  self:newline(depth - 1)
  parts[#parts + 1] = "]"
end

function Enc:object(t, depth)
  local parts, path = self.parts, self.path
  local keys = {}
  for k in next, t do
    if type(k) ~= "string" then
      self:fail("key " .. tostring(k) .. " (a " .. type(k) .. ") is not a string; a table is " ..
        "either an array (keys 1..n) or an object (string keys)")
    end
    keys[#keys + 1] = k
  end
  if #keys == 0 then parts[#parts + 1] = "{}"; return end
  table.sort(keys, bytes_less)
  parts[#parts + 1] = "{"
  local colon = self.indent and ": " or ":"
  local written = {} -- two keys that differ only in invalid bytes must not become one
  for i, k in ipairs(keys) do
    if i > 1 then parts[#parts + 1] = "," end
    self:newline(depth)
    local q = quote(k)
    if written[q] then
      self:fail("keys " .. written[q] .. " and " .. string.format("%q", k) ..
        " are the same once invalid UTF-8 is replaced")
    end
    written[q] = string.format("%q", k)
    parts[#parts + 1] = q .. colon
    path[depth], self.depth = k, depth
    self:value(t[k], depth)
  end
  self.depth = depth - 1
  self:newline(depth - 1)
  parts[#parts + 1] = "}"
end

-- JSON text for value; see the design stance for what is written how.
-- Raises "json.encode: <what> at <path>" on a value JSON cannot hold.
function json.encode(value, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("json.encode: options must be a table, got " .. type(opts), 2)
  end
  opts = opts or {}
  local indent = opts.indent
  if indent == true then indent = "  "
  elseif math.type(indent) == "integer" and indent > 0 then indent = (" "):rep(indent)
  else indent = nil end
  local enc = setmetatable({ parts = {}, path = {}, depth = 0, open = {}, indent = indent,
    max_depth = opts.max_depth or json.MAX_DEPTH }, Enc)
  local ok, err = pcall(enc.value, enc, value, 0)
  if not ok then
    if type(err) == "table" and err.json_error then error("json.encode: " .. err.json_error, 2) end
    if type(err) == "string" and find(err, "stack overflow", 1, true) then
      error("json.encode: nesting too deep for Lua's stack (max_depth " .. enc.max_depth ..
        " is more than it can hold)", 2)
    end
    error(err, 0)
  end
  return table.concat(enc.parts)
end

---------------------------------------------------------------------------
-- Decoding
---------------------------------------------------------------------------

-- A byte as a message shows it: 'x' when printable ASCII, else 0xNN.
local function show_byte(c)
  if c >= 32 and c < 127 then return "'" .. char(c) .. "'" end
  return format("byte 0x%02X", c)
end

-- "at byte 12 (line 2, column 5)": bytes and columns count from 1.
local function where(text, pos)
  local line, last = 1, 0
  local i = find(text, "\n", 1, true)
  while i and i < pos do
    line, last = line + 1, i
    i = find(text, "\n", i + 1, true)
  end
  return format("at byte %d (line %d, column %d)", pos, line, pos - last)
end

-- Raised inside the decoder and turned into nil, message by json.decode.
local function fail(text, pos, msg)
  error({ json_error = msg .. " " .. where(text, pos) }, 0)
end

local function skip_ws(text, pos)
  local _, e = find(text, "^[ \t\n\r]*", pos)
  return e + 1
end

local SIMPLE = { [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [102] = "\f",
  [110] = "\n", [114] = "\r", [116] = "\t" }

-- The four hex digits of a \u escape whose backslash is at pos.
local function hex4(text, pos)
  local h = find(text, "^%x%x%x%x", pos + 2) and sub(text, pos + 2, pos + 5)
  if not h then fail(text, pos, "invalid \\u escape (it needs 4 hex digits)") end
  return tonumber(h, 16)
end

-- The code point of the \u escape at pos (a pair when it is a surrogate),
-- and the position after it.
local function unicode_escape(text, pos)
  local cp = hex4(text, pos)
  if cp >= 0xDC00 and cp <= 0xDFFF then
    fail(text, pos, format("lone low surrogate \\u%04X", cp))
  end
  if cp < 0xD800 or cp > 0xDBFF then return cp, pos + 6 end
  if sub(text, pos + 6, pos + 7) ~= "\\u" then
    fail(text, pos, format("lone high surrogate \\u%04X (a \\uDC00-\\uDFFF must follow)", cp))
  end
  local lo = hex4(text, pos + 6)
  if lo < 0xDC00 or lo > 0xDFFF then
    fail(text, pos, format("high surrogate \\u%04X followed by \\u%04X, not \\uDC00-\\uDFFF",
      cp, lo))
  end
  return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00), pos + 12
end

-- A raw stretch of a string, which must be valid UTF-8.
local function raw_chunk(text, i, j, parts)
  if j < i then return end
  local s = sub(text, i, j)
  local ok, bad = utf8.len(s)
  if not ok then fail(text, i + bad - 1, "invalid UTF-8 in a string") end
  parts[#parts + 1] = s
end

-- The string whose opening quote is at pos, and the position after it.
local function read_string(text, pos)
  local i = pos + 1
  local j = find(text, '[\0-\31"\\]', i)
  if j and byte(text, j) == 34 then -- the common case: no escapes
    local s = sub(text, i, j - 1)
    if find(s, "[\128-\255]") and not utf8.len(s) then raw_chunk(text, i, j - 1, {}) end
    return s, j + 1
  end
  local parts = {}
  while true do
    local j = find(text, '[\0-\31"\\]', i)
    if not j then fail(text, pos, "unterminated string") end
    raw_chunk(text, i, j - 1, parts)
    local c = byte(text, j)
    if c == 34 then
      return table.concat(parts), j + 1
    elseif c == 92 then
      local e = byte(text, j + 1)
      if e == 117 then
        local cp
        cp, i = unicode_escape(text, j)
        parts[#parts + 1] = utf8.char(cp)
      elseif e and SIMPLE[e] then
        parts[#parts + 1], i = SIMPLE[e], j + 2
      elseif e == nil then
        fail(text, pos, "unterminated string")
      else
        fail(text, j, "invalid escape \\" .. (e >= 32 and e < 127 and char(e) or
          format("<0x%02X>", e)) .. " in a string")
      end
    else
      fail(text, j, format("unescaped control character U+%04X in a string", c))
    end
  end
end

-- The number at pos (RFC 8259's grammar exactly), and the position after it.
local function read_number(text, pos)
  local p = pos
  if byte(text, p) == 45 then p = p + 1 end
  local _, e = find(text, "^0", p)
  if not e then _, e = find(text, "^[1-9]%d*", p) end
  local ok = e ~= nil
  if ok then
    p = e + 1
    if byte(text, p) == 46 then
      _, e = find(text, "^%d+", p + 1)
      ok, p = e ~= nil, (e or p) + 1
    end
  end
  if ok and (byte(text, p) == 101 or byte(text, p) == 69) then
    _, e = find(text, "^[-+]?%d+", p + 1)
    ok, p = e ~= nil, (e or p) + 1
  end
  if not ok or find(text, "^[%w.+-]", p) then
    local tok = text:match("^[-+.%w]*", pos)
    if #tok > 24 then tok = sub(tok, 1, 24) .. "..." end
    fail(text, pos, "invalid number '" .. tok .. "'")
  end
  local s = sub(text, pos, p - 1)
  local n = tonumber(s)
  if math.type(n) == "float" then
    if n - n ~= 0 then
      fail(text, pos, "number out of range '" .. (#s > 24 and sub(s, 1, 24) .. "..." or s) .. "'")
    end
    n = math.tointeger(n) or n
  end
  return n, p
end

local LITERALS = { [116] = { "true", true }, [102] = { "false", false }, [110] = { "null" } }

-- A value that is not a container: string, number or literal at pos.
local function read_scalar(text, pos, c)
  if c == 34 then return read_string(text, pos) end
  if c == 45 or (c >= 48 and c <= 57) then return read_number(text, pos) end
  local lit = LITERALS[c]
  if lit then
    if sub(text, pos, pos + #lit[1] - 1) ~= lit[1] or find(text, "^[%w_]", pos + #lit[1]) then
      fail(text, pos, "invalid literal (expected " .. lit[1] .. ")")
    end
    if lit[1] == "null" then return json.null, pos + 4 end
    return lit[2], pos + #lit[1]
  end
  fail(text, pos, "unexpected " .. show_byte(c) .. ", expected a value")
end

-- The key of an object member at pos and the position after its ':'.
local function read_key(text, pos)
  if byte(text, pos) ~= 34 then
    if byte(text, pos) == 125 then fail(text, pos, "trailing comma in an object") end
    if pos > #text then fail(text, pos, "unexpected end of input in an object") end
    fail(text, pos, "expected a string key in an object, got " .. show_byte(byte(text, pos)))
  end
  local key, p = read_string(text, pos)
  p = skip_ws(text, p)
  if byte(text, p) ~= 58 then fail(text, p, "expected ':' after the key") end
  return key, skip_ws(text, p + 1)
end

-- The decoder proper. The stack of open containers lives in parallel arrays of the state d
-- (table, key awaiting a value, element count, whether a null was stored, where the key
-- began) indexed by depth; no Lua or C recursion, whatever the input. d.pos is where reading
-- goes on.
local function new_decoder(text, max_depth, keep_null)
  return { text = text, max_depth = max_depth, keep_null = keep_null, depth = 0,
    pos = skip_ws(text, 1), tables = {}, keys = {}, counts = {}, has_null = {}, key_pos = {} }
end

-- Opens the array or object (c is its bracket) at d.pos. Returns false when a value must be
-- read next (its first element, or its first member's after the key), or true and the
-- container when it is empty and so already a whole value.
local function open_container(d, c)
  local text = d.text
  if d.depth >= d.max_depth then fail(text, d.pos, "nesting deeper than " .. d.max_depth) end
  local depth = d.depth + 1
  d.depth = depth
  d.tables[depth], d.keys[depth], d.counts[depth], d.has_null[depth] = {}, nil, 0, false
  local pos = skip_ws(text, d.pos + 1)
  d.pos = pos
  local close = byte(text, pos)
  if c == 91 and close ~= 93 then return false end
  if c == 123 and close ~= 125 then
    d.key_pos[depth] = pos
    d.keys[depth], d.pos = read_key(text, pos)
    return false
  end
  d.pos = pos + 1
  local value = d.tables[depth]
  if c == 91 then setmetatable(value, ARRAY) end
  d.depth = depth - 1
  return true, value
end

-- The value starting at d.pos: true and the value when it is whole (a scalar, an empty
-- container), false when it opened a container whose contents come next.
local function read_value(d)
  local c = byte(d.text, d.pos)
  if c == nil then fail(d.text, d.pos, "unexpected end of input, expected a value") end
  if c == 91 or c == 123 then return open_container(d, c) end
  local value
  value, d.pos = read_scalar(d.text, d.pos, c)
  return true, value
end

-- Stores a whole value in the innermost open container: the next element of an array, or the
-- member of the key read before it.
local function store(d, value)
  local depth = d.depth
  local t, key = d.tables[depth], d.keys[depth]
  if key == nil then
    d.counts[depth] = d.counts[depth] + 1
    t[d.counts[depth]] = value
  else
    if t[key] ~= nil then
      fail(d.text, d.key_pos[depth], "duplicate key " .. quote(key) .. " in an object")
    end
    t[key] = value
    if value == json.null then d.has_null[depth] = true end
  end
end

-- What may follow a value inside a container: a comma, or the bracket that closes it.
local function expect_close(text, pos, c, key)
  if key == nil and c ~= 93 then
    fail(text, pos, c and "expected ',' or ']' in an array, got " .. show_byte(c) or
      "unexpected end of input in an array")
  elseif key ~= nil and c ~= 125 then
    fail(text, pos, c and "expected ',' or '}' in an object, got " .. show_byte(c) or
      "unexpected end of input in an object")
  end
end

-- Closes the innermost container t: an array gets its metatable, an object loses its nulls
-- unless they are kept (they were stored so that a duplicate key is still caught).
local function close_container(d, t, key)
  if key == nil then
    setmetatable(t, ARRAY)
  elseif d.has_null[d.depth] and not d.keep_null then
    for k, v in next, t do
      if v == json.null then t[k] = nil end
    end
  end
  d.tables[d.depth] = nil
  d.depth = d.depth - 1
end

-- After a value stored in the innermost container: returns nil when a comma says another
-- value comes (its key read, for an object), or the container, closed, when its bracket does.
local function after_member(d)
  local text, depth = d.text, d.depth
  local t, key = d.tables[depth], d.keys[depth]
  local pos = skip_ws(text, d.pos)
  local c = byte(text, pos)
  if c == 44 then
    pos = skip_ws(text, pos + 1)
    d.pos = pos
    if key == nil then
      if byte(text, pos) == 93 then fail(text, pos, "trailing comma in an array") end
    else
      d.key_pos[depth] = pos
      d.keys[depth], d.pos = read_key(text, pos)
    end
    return nil
  end
  expect_close(text, pos, c, key)
  d.pos = pos + 1
  close_container(d, t, key)
  return t
end

-- The top-level value, once nothing but white space follows it.
local function end_of_text(d, value)
  local pos = skip_ws(d.text, d.pos)
  if pos <= #d.text then
    fail(d.text, pos, "unexpected " .. show_byte(byte(d.text, pos)) .. " after the value")
  end
  return value
end

local function decode(text, max_depth, keep_null)
  local d = new_decoder(text, max_depth, keep_null)
  if find(text, "^\239\187\191") then fail(text, 1, "byte order mark (JSON text has none)") end
  while true do
    local whole, value = read_value(d)
    -- A whole value ended before d.pos: store it, then close containers until one wants
    -- another value.
    while whole do
      if d.depth == 0 then return end_of_text(d, value) end
      store(d, value)
      value = after_member(d)
      whole = value ~= nil
    end
  end
end

-- The value of the JSON text, or nil and a message ("unexpected ']' at byte
-- 7 (line 1, column 7)"). Raises only when text is not a string.
function json.decode(text, opts)
  if type(text) ~= "string" then
    error("json.decode: expected a string, got " .. type(text), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("json.decode: options must be a table, got " .. type(opts), 2)
  end
  opts = opts or {}
  local max_depth = opts.max_depth or json.MAX_DEPTH
  if math.type(max_depth) ~= "integer" or max_depth < 1 then
    error("json.decode: max_depth must be a positive integer", 2)
  end
  local ok, res = pcall(decode, text, max_depth, opts.keep_null)
  if ok then return res end
  if type(res) == "table" and res.json_error then return nil, res.json_error end
  error(res, 0)
end

return json
