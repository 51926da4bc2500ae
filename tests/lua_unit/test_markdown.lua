-- test_markdown.lua: the terminal rendering of lesson Markdown (lua/lessons/markdown.lua):
-- inline code keeps its brackets, lines never break inside a word, tables
-- line up, code is left as written, colour only when asked.

local md = require "markdown"
require("term").utf8_override = false -- "-" bullets and "> " quotes, whatever the locale

local function render(text, width, color) return md.render(text, { width = width or 80, color = color or false }) end

test("inline code with brackets is not taken for a link", function()
  checkeq(render("Launch with `inc[{blocks, threads}](args)` now."),
          "Launch with `inc[{blocks, threads}](args)` now.")
end)

test("links outside code become text (url)", function()
  checkeq(render("See [the guide](https://x.org/g) and <b>."), "See the guide (https://x.org/g) and <b>.")
end)

test("bold and italics lose their markers without colour; snake_case stays", function()
  checkeq(render("A **kernel** is *fast*, and some_name_here stays."), "A kernel is fast, and some_name_here stays.")
end)

test("with colour, bold, italics and code get SGR escapes", function()
  checkeq(render("**b** *i* `c`", 80, true), "\27[1mb\27[0m \27[3mi\27[0m \27[36mc\27[0m")
end)

test("paragraphs reflow to the width and never break inside a word", function()
  local text = "The quick brown fox jumps over the lazy dog and keeps running far beyond the fence\n" ..
               "until it reaches the river."
  local out = render(text, 30)
  for line in out:gmatch("[^\n]+") do check(#line <= 30, "line too long: " .. line) end
  local words = {}
  for w in text:gmatch("%S+") do words[#words + 1] = w end
  local got = {}
  for w in out:gmatch("%S+") do got[#got + 1] = w end
  checkeq(table.concat(got, " "), table.concat(words, " "), "the words, in order, unbroken")
end)

test("a code span is kept on one line when it fits", function()
  local out = render("aaaa bbbb cccc `x[{1, 2}](y, z)` dddd", 20)
  check(out:find("`x[{1, 2}](y, z)`", 1, true), out)
end)

test("lists get hanging indents", function()
  checkeq(render("- one two three four five six\n  seven eight", 20),
          "  - one two three\n    four five six\n    seven eight")
  checkeq(render("1. alpha beta gamma delta", 16), "  1. alpha beta\n     gamma delta")
end)

test("tables get aligned columns, numbers to the right", function()
  checkeq(render("| stride | time (ms) |\n|---|---|\n| 1 | 0.033 |\n| 32 | 0.308 |"),
          "  stride  time (ms)\n  ------  ---------\n       1      0.033\n      32      0.308")
end)

test("a table wider than the terminal fits: long cells break at spaces, rows part with a blank line", function()
  local long = "| command | what it does |\n|---|---|\n| `hint()` | the next hint for the current task, " ..
    "first the one for what the check found, then the others in order |\n| `bye()` | leaves |"
  local out = render(long, 40)
  checkeq(out, table.concat({
    "  command   what it does",
    "  --------  ----------------------------",
    "  `hint()`  the next hint for the",
    "            current task, first the one",
    "            for what the check found,",
    "            then the others in order",
    "",
    "  `bye()`   leaves" }, "\n"))
  for line in out:gmatch("[^\n]+") do check(#line <= 40, "too wide: " .. line) end
  checkeq(render(long, 200):match("^[^\n]*"), "  command   what it does", "a table that fits is left on one line a row")
end)

test("a pipe inside inline code does not split a table cell", function()
  checkeq(render("| op | meaning |\n|---|---|\n| `a | b` | or |"),
          "  op       meaning\n  -------  -------\n  `a | b`  or")
end)

test("fenced and indented code are left exactly as written", function()
  checkeq(render("Text.\n\n```cuda\nint  x =   1;   // spaced\n```\n"), "Text.\n\n    int  x =   1;   // spaced")
  checkeq(render("Text.\n\n    keep   this\n"), "Text.\n\n    keep   this")
end)

test("block quotes keep a marker on every line", function()
  checkeq(render("> one two three four\n> five", 14), "> one two\n> three four\n> five")
end)

test("headings drop their hashes", function()
  checkeq(render("## Timing the GPU\n\nText."), "Timing the GPU\n\nText.")
end)

test("an unmatched backtick is plain text", function()
  checkeq(render("it's a ` stray"), "it's a ` stray")
end)
