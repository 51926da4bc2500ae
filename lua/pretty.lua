-- pretty.lua: the REPL's value printer.
--
-- The engine hands every expression result to pretty.print, and `pp` is the
-- same function for learners. The aim is a summary a person can read at a
-- glance, never a dump: deep tables stop at a depth limit, long sequences show
-- their first and last items and a count, cycles print as <cycle>, and values
-- that know how to describe themselves (__tostring, as device arrays do) are
-- left to do so.
--
-- Design stance:
--  * Reading a value must not change it. Tables are walked with next/rawget,
--    never through __index or __pairs, whose code could do anything; only
--    __tostring is called, because that is its whole purpose, and under pcall.
--  * Output looks like Lua source where it can ({a = 1, ["odd key"] = 2}), so
--    learners can copy what they see. Top-level strings print raw, as lua.c's
--    REPL prints them; strings inside tables are quoted so "1" and 1 differ.
--  * A table goes on one line when it fits in the width, else one item per
--    line. Deciding bottom-up (children first) keeps it one pass per table.

-- Standard functions are captured at load time: a learner may well name a
-- variable `table` or `type`, and this module must keep working when they do.
local _G, debug, getmetatable, io, ipairs, math = _G, debug, getmetatable, io, ipairs, math
local next, pairs, pcall, rawget, select, string = next, pairs, pcall, rawget, select, string
local table, tostring, type, utf8 = table, tostring, type, utf8

local format = require "format"

local pretty = {}

-- Defaults for pretty.format's opts; each can be overridden per call.
pretty.defaults = {
  depth = 3,        -- tables nested deeper than this print as {...}
  width = 78,       -- a table is put on one line only if it fits in this
  head = 10,        -- long sequences: how many items from the front ...
  tail = 2,         -- ... and from the back
  keys = 24,        -- at most this many non-sequence keys are shown
  string_max = 200, -- nested strings longer than this are cut
  indent = "  ",
}

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in
  local nil not or repeat return then true until while]]):gmatch("%a+") do
  KEYWORDS[w] = true
end

-- Whether s can be written as a bare field name (t.s rather than t["s"]).
local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil and not KEYWORDS[s]
end

local ESCAPES = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t",
                  ["\r"] = "\\r", ["\0"] = "\\0" }

-- A string quoted for reading. %q would be exact but writes a newline as a
-- backslash followed by a real line break, which wrecks a one-line table; we
-- use \n instead, \xNN for other control bytes, and keep UTF-8 text as it is.
local function quote(s, max)
  local cut = max and #s > max
  local body = cut and s:sub(1, max) or s
  body = body:gsub('[%c"\\]', function(c)
    return ESCAPES[c] or string.format("\\x%02x", c:byte())
  end)
  if cut then
    return '"' .. body .. '"... (' .. format.count(#s) .. " bytes)"
  end
  return '"' .. body .. '"'
end

-- The metatable of v, or nil when there is none or it is hidden behind a
-- __metatable field (then we must not look inside it).
local function metatable(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and mt or nil
end

-- The result of v's __tostring, if it has one. An error inside it is shown
-- rather than raised: a broken __tostring must not make the value unprintable.
local function custom_tostring(v)
  local mt = metatable(v)
  if not (mt and rawget(mt, "__tostring")) then return nil end
  local ok, s = pcall(tostring, v)
  if ok and type(s) == "string" then return s end
  return "<__tostring failed: " .. tostring(s) .. ">"
end

-- A function as "function: builtin" (C) or "function: file.lua:12" (Lua),
-- which tells a learner where to look instead of printing an address.
local function function_text(f)
  if not (debug and debug.getinfo) then return tostring(f) end -- no debug library
  local info = debug.getinfo(f, "S")
  if info.what == "C" then return "function: builtin" end
  return "function: " .. info.short_src .. ":" .. info.linedefined
end

-- A string's sort key in "natural" order, so that k2 comes before k10:
-- every run of digits is left-padded to a common length.
local function natural(s)
  return (s:gsub("%d+", function(d) return #d < 20 and ("0"):rep(20 - #d) .. d or d end))
end

-- The display order of keys: numbers first by value, then strings in
-- natural order, then everything else by type name and text. A total order
-- that never compares across types, so sorting cannot raise. Natural sort
-- keys are computed once per key, not once per comparison.
local TYPE_RANK = { number = 1, string = 2 }
local function key_order(keys)
  local nat = {}
  for _, k in ipairs(keys) do
    if type(k) == "string" then nat[k] = natural(k) end
  end
  return function(a, b)
    local ta, tb = type(a), type(b)
    local ra, rb = TYPE_RANK[ta] or 3, TYPE_RANK[tb] or 3
    if ra ~= rb then return ra < rb end
    if ra == 1 then return a < b end
    if ra == 2 then
      if nat[a] ~= nat[b] then return nat[a] < nat[b] end
      return a < b
    end
    if ta ~= tb then return ta < tb end
    return tostring(a) < tostring(b)
  end
end

-- The first `limit` keys in display order. A big table is not sorted whole,
-- to show a couple of dozen keys: each key is inserted into a short sorted
-- list instead, which keeps printing a table of a million keys quick.
local function first_keys(keys, limit)
  local less = key_order(keys)
  if #keys <= 4 * limit then
    table.sort(keys, less)
    return keys
  end
  local best = {}
  for _, k in ipairs(keys) do
    if #best < limit or less(k, best[#best]) then
      local i = math.min(#best, limit - 1)
      while i >= 1 and less(k, best[i]) do best[i + 1] = best[i]; i = i - 1 end
      best[i + 1] = k
    end
  end
  return best
end

-- Display width of s: UTF-8 characters, or bytes if s is not valid UTF-8.
local function width(s)
  return utf8.len(s) or #s
end

local render -- forward: render(value, state, level, col) -> text, note

-- How a key is written in front of its value: "name = ", "[2] = ", ["a b"] = .
local function key_text(k, st)
  if is_identifier(k) then return k .. " = " end
  if type(k) == "string" then return "[" .. quote(k, st.string_max) .. "] = " end
  local text = render(k, st, st.depth + 1, 0) -- tables as keys: never expanded
  return "[" .. text .. "] = "
end

-- Collects what to show of table t as a list of {key = prefix, value = v} in
-- display order, plus a note ("1000 items") when part of it was left out.
-- The sequence part 1..n prints without keys; the rest sorted, with keys.
local function entries(t, st)
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  local list, note = {}, nil
  local head = n > st.head + st.tail and st.head or n
  for i = 1, head do list[#list + 1] = { value = rawget(t, i) } end
  if head < n then
    list[#list + 1] = { ellipsis = true }
    for i = n - st.tail + 1, n do list[#list + 1] = { value = rawget(t, i) } end
    note = format.count(n) .. " items"
  end
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  local total, shown_keys = #keys, first_keys(keys, st.keys)
  local shown = math.min(total, st.keys)
  for i = 1, shown do
    local k = shown_keys[i]
    list[#list + 1] = { key = k, value = rawget(t, k) }
  end
  if shown < total then
    list[#list + 1] = { ellipsis = true }
    local what = n > 0 and " other keys" or " keys"
    note = (note and note .. ", " or "") .. format.count(total) .. what
  end
  return list, note
end

-- Lays out rendered items: on one line when it fits in what is left of the
-- line after column `col` (keeping room for a ","), and nothing inside needs
-- its own line; else one item per line, each ending in "," and its note.
-- A note may run past the width: it is a comment, and breaking a short table
-- over many lines to fit one would make it harder to read, not easier.
local function layout(items, st, level, col)
  local one_line, fits = {}, true
  local pad = st.indent:rep(level - 1)
  local budget = st.width - col - 1
  for i, it in ipairs(items) do
    one_line[i] = it.text
    if it.note or it.text:find("\n", 1, true) then fits = false end
  end
  local flat = "{" .. table.concat(one_line, ", ") .. "}"
  if fits and width(flat) <= budget then return flat end
  local lines, inner = { "{" }, pad .. st.indent
  for _, it in ipairs(items) do
    local comma = it.ellipsis and "" or ","
    local line = inner .. it.text .. comma
    if it.note then line = line .. " -- " .. it.note end
    lines[#lines + 1] = line
  end
  lines[#lines + 1] = pad .. "}"
  return table.concat(lines, "\n")
end

-- Renders table t at nesting level `level` (1 = top), starting at column
-- `col` of the current line. Returns its text and its note, if any.
local function render_table(t, st, level, col)
  if st.seen[t] then return "<cycle>" end
  if next(t) == nil then return "{}" end
  if level > st.depth then return "{...}" end
  st.seen[t] = true
  local list, note = entries(t, st)
  local items, inner_col = {}, #st.indent * level
  for i, e in ipairs(list) do
    if e.ellipsis then
      items[i] = { text = "...", ellipsis = true }
    else
      local prefix = e.key ~= nil and key_text(e.key, st) or ""
      local text, inner_note = render(e.value, st, level + 1, inner_col + width(prefix))
      items[i] = { text = prefix .. text, note = inner_note }
    end
  end
  st.seen[t] = nil
  return layout(items, st, level, col), note
end

-- Renders any value. `level` is the nesting level of tables, `col` the column
-- it starts at; strings are quoted except at level 1 when st.raw_strings is set.
function render(v, st, level, col)
  local tv = type(v)
  if tv == "number" then return format.number(v) end
  if tv == "string" then
    if level == 1 and st.raw_strings then return v end
    return quote(v, st.string_max)
  end
  if tv == "function" then return function_text(v) end
  if tv == "table" or tv == "userdata" then
    local s = custom_tostring(v)
    if s then return s end
    if tv == "table" then return render_table(v, st, level, col) end
  end
  return tostring(v) -- nil, booleans, threads; userdata shows its __name
end

-- Copies opts over the defaults into a fresh per-call state.
local function new_state(opts)
  local st = { seen = {}, raw_strings = true }
  for k, v in pairs(pretty.defaults) do st[k] = v end
  for k, v in pairs(opts or {}) do st[k] = v end
  return st
end

-- pretty.format(value, opts) -> string. opts: depth, width, head, tail, keys,
-- string_max, raw_strings (top-level strings unquoted; default true).
-- A note about elided items is appended as a trailing Lua comment.
function pretty.format(value, opts)
  local st = new_state(opts)
  local text, note = render(value, st, 1, 0)
  if note then text = text .. " -- " .. note end
  return text
end

-- Like lua.c's print of expression results: every value, tab-separated, on
-- one line. Nothing at all for zero values (a statement); `nil` for a nil
-- that was returned. Goes through the global print at call time, as lua.c
-- does, so an engine that redirects print also redirects results.
-- text(...) -> the line pretty.print prints for these values, or nil for none.
function pretty.text(...)
  local n = select("#", ...)
  if n == 0 then return nil end
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    local ok, s = pcall(pretty.format, v)
    parts[i] = ok and s or ("<cannot print: " .. tostring(s) .. ">")
  end
  return table.concat(parts, "\t")
end

-- fitted(...): as print, but a line longer than the terminal is broken at
-- spaces (term.fit), so the terminal never splits a word: what the prompt
-- uses for the values of what the learner types.
function pretty.fitted(...)
  local text = pretty.text(...)
  if text then rawget(_G, "print")(require("term").fit(text)) end
end

function pretty.print(...)
  local n = select("#", ...)
  if n == 0 then return end
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    local ok, s = pcall(pretty.format, v)
    parts[i] = ok and s or ("<cannot print: " .. tostring(s) .. ">")
  end
  local out = rawget(_G, "print")
  if type(out) == "function" then
    out(table.concat(parts, "\t"))
  else
    io.stdout:write(table.concat(parts, "\t"), "\n")
  end
end

return pretty
