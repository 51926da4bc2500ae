-- test_pretty.lua: exact output of lua/pretty.lua for the shapes learners
-- meet: scalars, sequences, records, nesting, long and cyclic tables, values
-- with __tostring, functions; and pretty.print's lua.c-like behaviour.

local pretty = require "pretty"
local f = pretty.format

test("pretty scalars", function()
  checkeq(f(1), "1")
  checkeq(f(1.0), "1.0")
  checkeq(f(-0.5), "-0.5")
  checkeq(f(0 / 0), "nan")
  checkeq(f(-math.huge), "-inf")
  checkeq(f(true), "true")
  checkeq(f(nil), "nil")
end)

test("pretty strings: raw at top level, quoted inside", function()
  checkeq(f("hi there"), "hi there")
  checkeq(f({ "hi" }), '{"hi"}')
  checkeq(f({ 'say "x"\n\tback\\slash' }), [[{"say \"x\"\n\tback\\slash"}]])
  checkeq(f({ "\1\127" }), [[{"\x01\x7f"}]])
  checkeq(f({ "µs" }), '{"µs"}')
  checkeq(f("x", { raw_strings = false }), '"x"')
end)

test("pretty cuts long nested strings", function()
  checkeq(f({ ("x"):rep(300) }, { string_max = 5 }), '{"xxxxx"... (300 bytes)}')
end)

test("pretty sequences and records", function()
  checkeq(f({}), "{}")
  checkeq(f({ 1, 2, 3 }), "{1, 2, 3}")
  checkeq(f({ 1.5, "a", true }), '{1.5, "a", true}')
  checkeq(f({ a = 1, ["odd key"] = 2 }), '{a = 1, ["odd key"] = 2}')
  checkeq(f({ ["end"] = 1 }), '{["end"] = 1}')
  checkeq(f({ 10, 20, x = 1 }), "{10, 20, x = 1}")
  checkeq(f({ 1, nil, 3 }), "{1, [3] = 3}")
end)

test("pretty sorts keys: numbers, then strings naturally, then others", function()
  local t = { b = 1, a = 2, [2.5] = 3, [-1] = 4, k10 = 5, k2 = 6, [true] = 7 }
  checkeq(f(t), "{[-1] = 4, [2.5] = 3, a = 2, b = 1, k2 = 6, k10 = 5, [true] = 7}")
end)

test("pretty depth limit", function()
  checkeq(f({ 1, { 2, { 3, { 4 } } } }), "{1, {2, {3, {...}}}}")
  checkeq(f({ 1, { 2 } }, { depth = 1 }), "{1, {...}}")
  checkeq(f({ { {} } }, { depth = 1 }), "{{...}}")
  checkeq(f({ {} }, { depth = 1 }), "{{}}")
end)

test("pretty cycles", function()
  local t = { name = "t" }
  t.self = t
  checkeq(f(t), '{name = "t", self = <cycle>}')
  local shared = { 1 }
  checkeq(f({ shared, shared }), "{{1}, {1}}")
end)

test("pretty summarises long sequences", function()
  local t = {}
  for i = 1, 1000 do t[i] = i end
  checkeq(f(t), "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ..., 999, 1000} -- 1,000 items")
  checkeq(f(t, { head = 2, tail = 1 }), "{1, 2, ..., 1000} -- 1,000 items")
  local short = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }
  checkeq(f(short), "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}")
end)

test("pretty puts a nested table's note at the end of its line", function()
  local t = {}
  for i = 1, 20 do t[i] = i end
  checkeq(f({ data = t, n = 20 }), table.concat({
    "{",
    "  data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ..., 19, 20}, -- 20 items",
    "  n = 20,",
    "}",
  }, "\n"))
end)

test("pretty summarises records with many keys", function()
  local t = {}
  for i = 1, 5 do t["k" .. i] = i end
  checkeq(f(t, { keys = 2 }), "{k1 = 1, k2 = 2, ...} -- 5 keys")
  t[1] = "seq"
  checkeq(f(t, { keys = 2 }), '{"seq", k1 = 1, k2 = 2, ...} -- 5 other keys')
end)

test("pretty picks the first keys of a big table without sorting it all", function()
  local t, names = {}, {}
  math.randomseed(7)
  for _ = 1, 500 do
    local n = math.random(1, 100000)
    if not t["k" .. n] then t["k" .. n] = n; names[#names + 1] = n end
  end
  table.sort(names)
  local want = {}
  for i = 1, 3 do want[i] = "k" .. names[i] .. " = " .. names[i] end
  checkeq(f(t, { keys = 3 }), "{" .. table.concat(want, ", ") .. ", ...} -- " .. #names .. " keys")
end)

test("pretty breaks lines that do not fit", function()
  local t = { alpha = ("a"):rep(30), beta = ("b"):rep(30), gamma = { 1, 2, 3 } }
  checkeq(f(t), table.concat({
    "{",
    '  alpha = "' .. ("a"):rep(30) .. '",',
    '  beta = "' .. ("b"):rep(30) .. '",',
    "  gamma = {1, 2, 3},",
    "}",
  }, "\n"))
  checkeq(f({ 1, 2, 3 }, { width = 8 }), "{\n  1,\n  2,\n  3,\n}")
  checkeq(f({ 1, 2, 3 }, { width = 10 }), "{1, 2, 3}")
end)

test("pretty counts the key's width when nesting", function()
  -- The inner table fits in 78 columns alone but not after a long key.
  local inner = { ("x"):rep(30), ("y"):rep(30) }
  local out = f({ [("k"):rep(20)] = inner })
  check(out:find("\n", 1, true), "expected a line break, got: " .. out)
  for line in out:gmatch("[^\n]+") do check(#line <= 78, "line too long: " .. line) end
end)

test("pretty uses __tostring and shows its failure", function()
  local v = setmetatable({}, { __tostring = function() return "custom!" end })
  checkeq(f(v), "custom!")
  checkeq(f({ v }), "{custom!}")
  local bad = setmetatable({}, { __tostring = function() error("boom", 0) end })
  checkeq(f(bad), "<__tostring failed: boom>")
end)

test("pretty does not run __index or __pairs", function()
  local touched = false
  local t = setmetatable({ a = 1 }, {
    __index = function() touched = true end,
    __pairs = function() touched = true; return next, {}, nil end,
  })
  checkeq(f(t), "{a = 1}")
  checkeq(touched, false)
end)

test("pretty respects a hidden metatable", function()
  local t = setmetatable({ 1 }, { __metatable = "locked" })
  checkeq(f(t), "{1}")
end)

test("pretty functions", function()
  checkeq(f(print), "function: builtin")
  local line = debug.getinfo(1, "l").currentline + 1
  local function mine() end
  checkeq(f(mine), "function: tests/lua_unit/test_pretty.lua:" .. line)
end)

test("pretty userdata shows its type name", function()
  check(f(io.stdout):match("^file %("), f(io.stdout))
end)

test("pretty.print prints like lua.c", function()
  checkeq(capture(pretty.print, 1, "a", nil, { x = "s" }), { '1\ta\tnil\t{x = "s"}' })
  checkeq(capture(pretty.print, nil), { "nil" })
  checkeq(capture(pretty.print), {})
end)

test("pretty.print survives a value that cannot be printed", function()
  local bad = setmetatable({}, { __tostring = function() return {} end })
  local out = capture(pretty.print, bad)
  checkeq(#out, 1)
  check(out[1]:find("__tostring"), out[1])
end)
