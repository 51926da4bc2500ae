-- test_json.lua: json.lua both ways: exact text out (sorted keys, numbers,
-- escapes, indentation), values back, round trips, every error of encode
-- and decode with its message, and hostile input (deep nesting, huge
-- numbers, bad escapes and UTF-8, trailing garbage) refused cheaply.

local json = require "json"

-- decode's failure: nil and the message; fails the test when text decodes.
local function refused(text, opts)
  local v, err = json.decode(text, opts)
  check(v == nil, "decoded " .. string.format("%q", text:sub(1, 40)) .. " instead of refusing it")
  check(type(err) == "string", "a message comes with nil")
  return err
end

test("json: scalars encode as JSON writes them", function()
  checkeq(json.encode(nil), "null")
  checkeq(json.encode(json.null), "null")
  checkeq(json.encode(true), "true")
  checkeq(json.encode(false), "false")
  checkeq(json.encode(0), "0")
  checkeq(json.encode(-17), "-17")
  checkeq(json.encode(math.maxinteger), "9223372036854775807")
  checkeq(json.encode(math.mininteger), "-9223372036854775808")
  checkeq(json.encode("hi"), '"hi"')
end)

test("json: floats are the shortest text that reads back exactly", function()
  checkeq(json.encode(0.1), "0.1")
  checkeq(json.encode(1.5), "1.5")
  checkeq(json.encode(2.0), "2")
  checkeq(json.encode(1 / 3), "0.3333333333333333")
  checkeq(json.encode(0.1 + 0.2), "0.30000000000000004")
  checkeq(json.encode(1e300), "1e+300")
  checkeq(json.encode(-0.0), "-0")
  for _, x in ipairs({ 0.1, 1 / 3, math.pi, 1e-300, 5e-324, 1.7976931348623157e308, 123456.789 }) do
    checkeq(json.decode(json.encode(x)), x, "round trip of " .. string.format("%.17g", x))
  end
end)

test("json: strings escape quotes, backslashes and control characters only", function()
  checkeq(json.encode('a"b\\c/d'), '"a\\"b\\\\c/d"')
  checkeq(json.encode("\b\f\n\r\t"), '"\\b\\f\\n\\r\\t"')
  checkeq(json.encode("\0\1\31\127"), '"\\u0000\\u0001\\u001f\127"')
  checkeq(json.encode("µs ✓ 😀"), '"µs ✓ 😀"', "valid UTF-8 is written as it is")
end)

test("json: invalid UTF-8 becomes U+FFFD, one per bad byte", function()
  checkeq(json.encode("a\255b"), '"a\u{FFFD}b"')
  checkeq(json.encode("\xC3"), '"\u{FFFD}"', "a sequence cut short")
  checkeq(json.encode("\xC0\xAF"), '"\u{FFFD}\u{FFFD}"', "an overlong form")
  checkeq(json.encode("\xED\xA0\x80"), '"\u{FFFD}\u{FFFD}\u{FFFD}"', "an encoded surrogate")
  local v = json.decode(json.encode("ok\255"))
  checkeq(v, "ok\u{FFFD}", "what was written is valid JSON")
  checkeq(json.encode({ ["k\255"] = 1 }), '{"k\u{FFFD}":1}', "in keys too")
  checkerr("are the same once invalid UTF-8 is replaced at $", json.encode,
    { ["a\254"] = 1, ["a\255"] = 2 })
end)

test("json: arrays are tables with keys 1..n; the empty table is an object", function()
  checkeq(json.encode({ 1, 2, 3 }), "[1,2,3]")
  checkeq(json.encode({ "a", { true, json.null } }), '["a",[true,null]]')
  checkeq(json.encode({}), "{}")
  checkeq(json.encode(json.array({})), "[]")
  checkeq(json.encode(json.empty_array), "[]")
  checkeq(json.encode({ list = json.empty_array }), '{"list":[]}')
  check(json.is_array(json.array({ 1 })) and not json.is_array({ 1 }), "marks are visible")
  checkerr("json.empty_array is read-only", function() json.empty_array[1] = 1 end)
  checkerr("json.array: the table already has a metatable", json.array, setmetatable({}, {}))
  checkerr("json.array: expected a table, got number", json.array, 3)
end)

test("json: a marked array writes holes as null", function()
  checkeq(json.encode(json.array({ 1, nil, 3 })), "[1,null,3]")
  checkerr('json.encode: json.array table has the key "x" at $', json.encode,
    json.array({ 1, x = 2 }))
end)

test("json: object keys are sorted by byte, so the text is deterministic", function()
  checkeq(json.encode({ b = 1, a = 2, B = 3, ["a b"] = 4, [""] = 5, ["é"] = 6 }),
    '{"":5,"B":3,"a":2,"a b":4,"b":1,"é":6}')
  local t = {}
  for i = 1, 50 do t["k" .. (i * 7919 % 50)] = i end
  checkeq(json.encode(t), json.encode(json.decode(json.encode(t))), "same text after a round trip")
end)

test("json: indent puts one member per line", function()
  checkeq(json.encode({ a = { 1, { b = true } }, c = {}, d = json.empty_array }, { indent = true }),
    '{\n  "a": [\n    1,\n    {\n      "b": true\n    }\n  ],\n  "c": {},\n  "d": []\n}')
  checkeq(json.encode({ 1 }, { indent = 4 }), "[\n    1\n]")
  checkeq(json.encode({ a = 1 }, { indent = false }), '{"a":1}')
end)

test("json: encode names what it cannot write and where", function()
  checkerr("json.encode: cannot write nan in JSON at $.x", json.encode, { x = 0 / 0 })
  checkerr("json.encode: cannot write inf in JSON at $[2]", json.encode, { 1, 1 / 0 })
  checkerr("json.encode: cannot write -inf in JSON at $", json.encode, -1 / 0)
  checkerr("json.encode: cannot write a function in JSON at $.f", json.encode, { f = print })
  checkerr("json.encode: key 1 (a number) is not a string; a table is either an array (keys " ..
    "1..n) or an object (string keys) at $.tasks", json.encode, { tasks = { 1, x = 2 } })
  checkerr("json.encode: key true (a boolean) is not a string", json.encode, { [true] = 1 })
  checkerr("json.encode: sparse array: key 4 in a table of 3 elements (use json.null for holes) " ..
    "at $", json.encode, { 1, 2, nil, 4 })
  checkerr('json.encode: cannot write a function in JSON at $["a b"][1].c', json.encode,
    { ["a b"] = { { c = print } } })
  checkerr("json.encode: options must be a table, got string", json.encode, 1, "indent")
end)

test("json: encode refuses cycles and nesting past max_depth", function()
  local t = { a = {} }
  t.a.back = t
  checkerr("json.encode: cycle: the table contains itself at $.a.back", json.encode, t)
  local deep = {}
  local cur = deep
  for _ = 1, 70 do cur[1] = {}; cur = cur[1] end
  checkerr("json.encode: nesting deeper than 64 at $" .. ("[1]"):rep(64), json.encode, deep)
  checkeq(#json.encode(deep, { max_depth = 100 }), 2 * 71)
  local shared = { 1 }
  checkeq(json.encode({ shared, shared }), "[[1],[1]]", "a table seen twice is not a cycle")
end)

test("json: encode errors point at the caller's line", function()
  local ok, err = pcall(json.encode, { x = print })
  check(not ok)
  check(not tostring(err):find("json.lua", 1, true), "no internal position: " .. tostring(err))
end)

test("json: decode reads every kind of value", function()
  checkeq(json.decode("null"), json.null)
  checkeq(json.decode(" true "), true)
  checkeq(json.decode("false"), false)
  checkeq(json.decode('"x"'), "x")
  checkeq(json.decode("[]"), {})
  checkeq(json.decode("{}"), {})
  checkeq(json.decode('{"a":[1,2,{"b":"c"}],"d":{}}'), { a = { 1, 2, { b = "c" } }, d = {} })
  checkeq(json.decode(' \t\r\n[ 1 , 2 ]\n'), { 1, 2 }, "all four kinds of white space")
  check(json.is_array(json.decode("[]")), "decoded arrays are marked")
  checkeq(json.encode(json.decode('{"a":[],"b":{}}')), '{"a":[],"b":{}}', "[] stays []")
end)

test("json: numbers become integers when integral and in range", function()
  local cases = {
    { "0", 0, "integer" }, { "-0", 0, "integer" }, { "42", 42, "integer" },
    { "1e3", 1000, "integer" }, { "2.0", 2, "integer" }, { "1E+2", 100, "integer" },
    { "1.5", 1.5, "float" }, { "-2.5e-3", -0.0025, "float" }, { "1e-400", 0, "integer" },
    { "9223372036854775807", math.maxinteger, "integer" },
    { "-9223372036854775808", math.mininteger, "integer" },
    { "9223372036854775808", 9223372036854775808.0, "float" },
    { "1e300", 1e300, "float" },
    { "123456789012345678901234567890", 1.2345678901234568e29, "float" },
  }
  for _, c in ipairs(cases) do
    local v = json.decode(c[1])
    checkeq(v, c[2], c[1])
    checkeq(math.type(v), c[3], c[1] .. " type")
  end
end)

test("json: strings decode escapes and surrogate pairs", function()
  checkeq(json.decode([["\"\\\/\b\f\n\r\t"]]), '"\\/\b\f\n\r\t')
  checkeq(json.decode([["\u0041\u00e9\u20AC\u0000"]]), "Aé€\0")
  checkeq(json.decode([["\ud83d\ude00 \uD834\uDD1E"]]), "😀 𝄞")
  checkeq(json.decode('"µs ✓"'), "µs ✓", "raw UTF-8")
end)

test("json: null is json.null in arrays and left out of objects unless kept", function()
  local v = json.decode('[1,null,3]')
  checkeq(#v, 3)
  check(v[2] == json.null)
  checkeq(json.decode('{"a":null,"b":1}'), { b = 1 })
  local kept = json.decode('{"a":null,"b":1}', { keep_null = true })
  check(kept.a == json.null)
  checkeq(json.encode(kept), '{"a":null,"b":1}')
  checkeq(tostring(json.null), "json.null")
  checkerr("json.null is read-only", function() json.null.x = 1 end)
end)

test("json: round trips keep values and text", function()
  local record = {
    format = "cudalab-class-record 1", uid = 1001, user = "alice", updated = 1764640000,
    tasks = { ["03-compute-density/4"] = {
      lesson = "03-compute-density", step = 4, attempts = 3, passed = true, ratio = 0.25,
      failures = { "max rel error 0.5 at index 7", "quote \" and \\ and \n" },
      submission = { files = { ["double.cu"] = "__global__ void f() {}\n" }, lua = json.empty_array },
    } },
  }
  local text = json.encode(record, { indent = true })
  local back = json.decode(text)
  checkeq(json.encode(back, { indent = true }), text)
  checkeq(back.tasks["03-compute-density/4"].failures[2], "quote \" and \\ and \n")
  checkeq(back.tasks["03-compute-density/4"].ratio, 0.25)
  local s = {}
  for c = 0, 255 do s[#s + 1] = string.char(c) end
  s = table.concat(s, "", 1, 128)
  checkeq(json.decode(json.encode(s)), s, "every ASCII byte")
end)

test("json: syntax errors name the byte, line and column", function()
  checkeq(refused(""), "unexpected end of input, expected a value at byte 1 (line 1, column 1)")
  checkeq(refused("   "), "unexpected end of input, expected a value at byte 4 (line 1, column 4)")
  checkeq(refused("["), "unexpected end of input, expected a value at byte 2 (line 1, column 2)")
  checkeq(refused("[1"), "unexpected end of input in an array at byte 3 (line 1, column 3)")
  checkeq(refused('{"a":1'), "unexpected end of input in an object at byte 7 (line 1, column 7)")
  checkeq(refused("{"), "unexpected end of input in an object at byte 2 (line 1, column 2)")
  checkeq(refused("[1,]"), "trailing comma in an array at byte 4 (line 1, column 4)")
  checkeq(refused('{"a":1,}'), "trailing comma in an object at byte 8 (line 1, column 8)")
  checkeq(refused("[1 2]"), "expected ',' or ']' in an array, got '2' at byte 4 (line 1, column 4)")
  checkeq(refused('{"a":1 "b":2}'),
    "expected ',' or '}' in an object, got '\"' at byte 8 (line 1, column 8)")
  checkeq(refused('{"a" 1}'), "expected ':' after the key at byte 6 (line 1, column 6)")
  checkeq(refused("{a:1}"), "expected a string key in an object, got 'a' at byte 2 (line 1, column 2)")
  checkeq(refused("[\n\n  }"), "unexpected '}', expected a value at byte 6 (line 3, column 3)")
  checkeq(refused("[1]x"), "unexpected 'x' after the value at byte 4 (line 1, column 4)")
  checkeq(refused("1 2"), "unexpected '2' after the value at byte 3 (line 1, column 3)")
  checkeq(refused('{"a":1}\n\0'), "unexpected byte 0x00 after the value at byte 9 (line 2, column 1)")
  checkeq(refused('{"a":1,"a":2}'), 'duplicate key "a" in an object at byte 8 (line 1, column 8)')
  checkeq(refused("\239\187\191[]"), "byte order mark (JSON text has none) at byte 1 (line 1, column 1)")
end)

test("json: extensions other parsers allow are refused", function()
  checkeq(refused("NaN"), "unexpected 'N', expected a value at byte 1 (line 1, column 1)")
  checkeq(refused("-Infinity"), "invalid number '-Infinity' at byte 1 (line 1, column 1)")
  checkeq(refused("[1] // note"), "unexpected '/' after the value at byte 5 (line 1, column 5)")
  checkeq(refused("'a'"), "unexpected ''', expected a value at byte 1 (line 1, column 1)")
  checkeq(refused("True"), "unexpected 'T', expected a value at byte 1 (line 1, column 1)")
  checkeq(refused("tru"), "invalid literal (expected true) at byte 1 (line 1, column 1)")
  checkeq(refused("nulls"), "invalid literal (expected null) at byte 1 (line 1, column 1)")
  checkeq(refused("[\v1]"), "unexpected byte 0x0B, expected a value at byte 2 (line 1, column 2)")
end)

test("json: numbers outside RFC 8259's grammar are refused", function()
  for _, bad in ipairs({ "01", "-01", "1.", ".5", "+1", "-", "1e", "1e+", "0x10", "1.5.3", "1a",
    "--1", "1.e3" }) do
    local err = refused(bad)
    if bad == ".5" then
      checkeq(err, "unexpected '.', expected a value at byte 1 (line 1, column 1)")
    elseif bad == "+1" then
      checkeq(err, "unexpected '+', expected a value at byte 1 (line 1, column 1)")
    else
      checkeq(err, "invalid number '" .. bad .. "' at byte 1 (line 1, column 1)", bad)
    end
  end
end)

test("json: numbers too large for a double are refused, not read as inf", function()
  checkeq(refused("1e400"), "number out of range '1e400' at byte 1 (line 1, column 1)")
  checkeq(refused("[-1e99999]"), "number out of range '-1e99999' at byte 2 (line 1, column 2)")
  local huge = ("9"):rep(100000)
  checkeq(refused(huge), "number out of range '" .. ("9"):rep(24) ..
    "...' at byte 1 (line 1, column 1)", "a long message is cut")
  checkeq(json.decode(("9"):rep(300)), 1e300, "300 digits still fit a double")
end)

test("json: bad strings are refused with the place of the fault", function()
  checkeq(refused('"abc'), "unterminated string at byte 1 (line 1, column 1)")
  checkeq(refused('"abc\\'), "unterminated string at byte 1 (line 1, column 1)")
  checkeq(refused('"a\nb"'), "unescaped control character U+000A in a string at byte 3 (line 1, column 3)")
  checkeq(refused('"a\tb"'), "unescaped control character U+0009 in a string at byte 3 (line 1, column 3)")
  checkeq(refused('"\\x"'), "invalid escape \\x in a string at byte 2 (line 1, column 2)")
  checkeq(refused('"\\\1"'), "invalid escape \\<0x01> in a string at byte 2 (line 1, column 2)")
  checkeq(refused('"\\u12"'), "invalid \\u escape (it needs 4 hex digits) at byte 2 (line 1, column 2)")
  checkeq(refused('"\\u12G4"'), "invalid \\u escape (it needs 4 hex digits) at byte 2 (line 1, column 2)")
  checkeq(refused('"\255"'), "invalid UTF-8 in a string at byte 2 (line 1, column 2)")
  checkeq(refused('"ok \xC3("'), "invalid UTF-8 in a string at byte 5 (line 1, column 5)")
  checkeq(refused('"a\\n\xED\xA0\x80"'), "invalid UTF-8 in a string at byte 5 (line 1, column 5)")
  checkeq(refused('{"\255":1}'), "invalid UTF-8 in a string at byte 3 (line 1, column 3)")
end)

test("json: lone and mismatched surrogates are refused", function()
  checkeq(refused('"\\ud800"'),
    "lone high surrogate \\uD800 (a \\uDC00-\\uDFFF must follow) at byte 2 (line 1, column 2)")
  checkeq(refused('"\\ud800x"'),
    "lone high surrogate \\uD800 (a \\uDC00-\\uDFFF must follow) at byte 2 (line 1, column 2)")
  checkeq(refused('"\\udc00"'), "lone low surrogate \\uDC00 at byte 2 (line 1, column 2)")
  checkeq(refused('"\\ud800\\u0041"'),
    "high surrogate \\uD800 followed by \\u0041, not \\uDC00-\\uDFFF at byte 2 (line 1, column 2)")
  checkeq(refused('"\\ud800\\ud800"'),
    "high surrogate \\uD800 followed by \\uD800, not \\uDC00-\\uDFFF at byte 2 (line 1, column 2)")
end)

test("json: 10^6 opening brackets are refused at max_depth, at once", function()
  local t0 = os.clock()
  checkeq(refused(("["):rep(1000000)), "nesting deeper than 64 at byte 65 (line 1, column 65)")
  checkeq(refused(('{"a":'):rep(1000000)), "nesting deeper than 64 at byte 321 (line 1, column 321)")
  check(os.clock() - t0 < 1, "refusing costs no more than the prefix it read")
  checkeq(refused("[[[]]]", { max_depth = 2 }), "nesting deeper than 2 at byte 3 (line 1, column 3)")
  checkeq(json.decode("[[]]", { max_depth = 2 }), { {} })
  checkerr("json.decode: max_depth must be a positive integer", json.decode, "1", { max_depth = 0 })
end)

test("json: deep nesting within max_depth needs no recursion", function()
  local n = 100000
  local v = json.decode(("["):rep(n) .. ("]"):rep(n), { max_depth = n })
  local depth = 0
  while type(v) == "table" and v[1] ~= nil do v, depth = v[1], depth + 1 end
  checkeq(depth, n - 1)
  local deep, cur = {}, nil
  cur = deep
  for _ = 1, 100000 do cur[1] = {}; cur = cur[1] end
  checkerr("json.encode: nesting too deep for Lua's stack", json.encode, deep, { max_depth = 200000 })
end)

test("json: large inputs decode in linear time", function()
  local parts = {}
  for i = 1, 20000 do parts[i] = string.format('{"i":%d,"s":"x\\n%d","f":%d.5}', i, i, i) end
  local text = "[" .. table.concat(parts, ",") .. "]"
  local t0 = os.clock()
  local v = json.decode(text)
  checkeq(#v, 20000)
  checkeq(v[20000], { i = 20000, s = "x\n20000", f = 20000.5 })
  -- CPU time, about 0.3 s here; a decoder quadratic in the text's 800 KB would take minutes, so
  -- the bound leaves room for a loaded or instrumented build without letting that pass
  check(os.clock() - t0 < 10, ("20000 objects in under 10 s of CPU (took %.2f)"):format(os.clock() - t0))
  local long = json.decode('"' .. ("ab\\n"):rep(100000) .. '"')
  checkeq(#long, 300000)
end)

test("json: decode raises only on bad arguments", function()
  checkerr("json.decode: expected a string, got nil", json.decode, nil)
  checkerr("json.decode: expected a string, got table", json.decode, {})
  checkerr("json.decode: options must be a table, got number", json.decode, "1", 5)
end)
