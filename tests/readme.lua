-- tests/readme.lua BIN TMP: the README's examples, run as a newcomer runs them, their output
-- compared with the README's text. Run by tests/readme.sh.
--
-- An example is a ```lua block, typed (or pasted) at the prompt, whose output is the plain ```
-- block right after it (only blank lines between), or nothing when none follows; or a plain ```
-- block that starts with "> ", a transcript: its lines after "> ", ">> " or "(cuda-debug) " are
-- typed, the rest is the output. All run in one session on the simulator, in the README's order,
-- as a reader following it would, so an example may use what an earlier one made.
--
-- The output must be the README's text, line for line (trailing spaces aside), but for the
-- README's one way of leaving text out: "..." (or "[...]") within a line stands for any text,
-- and a line that is "..." alone for any number of lines. Nothing else varies: on the simulator
-- times are the timing model's, the same on every run. A block after the line
-- "<!-- not run by tests/readme.sh: REASON -->" is skipped, with its reason.
local BIN, TMP = arg[1], arg[2]
assert(BIN and TMP, "usage: readme.lua BIN TMP")

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function lines_of(text)
  local t = {}
  for l in (text .. "\n"):gmatch("(.-)\r?\n") do t[#t + 1] = l end
  return t
end

-- The fenced blocks: {info =, first = line number, lines = {...}, skip = reason or nil}.
local function blocks(readme)
  local out, cur, note = {}, nil, nil
  for n, l in ipairs(lines_of(readme)) do
    if cur then
      if l:match("^```") then out[#out + 1], cur = cur, nil else cur.lines[#cur.lines + 1] = l end
    elseif l:match("^```") then
      cur = { info = l:match("^```(.*)$"), first = n, lines = {}, skip = note }
    else
      if l:match("%S") then note = l:match("^<!%-%- not run by tests/readme%.sh: (.-) %-%->$") end
    end
  end
  return out
end

local PROMPTS = { "> ", ">> ", "(cuda-debug) " }
local function typed(l)
  for _, p in ipairs(PROMPTS) do
    if l:sub(1, #p) == p then return l:sub(#p + 1) end
  end
end

-- The examples: {name =, input = {...}, expect = {...}, skip =}.
local function examples(list)
  local out = {}
  for i, b in ipairs(list) do
    local name = ("README line %d"):format(b.first)
    if b.info == "lua" then
      local nxt, expect = list[i + 1], {}
      if nxt and nxt.info == "" and not typed(nxt.lines[1] or "") and nxt.after_blank_of == b then
        expect = nxt.lines
      end
      out[#out + 1] = { name = name, input = b.lines, expect = expect, skip = b.skip }
    elseif b.info == "" and b.lines[1] and b.lines[1]:sub(1, 2) == "> " then
      local input, expect = {}, {}
      for _, l in ipairs(b.lines) do
        local t = typed(l)
        if t then input[#input + 1] = t else expect[#expect + 1] = l end
      end
      out[#out + 1] = { name = name, input = input, expect = expect, skip = b.skip }
    end
  end
  return out
end

-- Whether a line of output matches a line of the README, "..." standing for any text.
local function line_matches(got, want)
  got, want = got:gsub("%s+$", ""), want:gsub("%s+$", "")
  want = want:gsub("%[%.%.%.%]", "...")
  local pat, at = "^", 1
  while true do
    local s, e = want:find("...", at, true)
    if not s then break end
    pat = pat .. want:sub(at, s - 1):gsub("%p", "%%%0") .. ".-"
    at = e + 1
  end
  pat = pat .. want:sub(at):gsub("%p", "%%%0") .. "$"
  return got:find(pat) ~= nil
end

-- Whether got (lines from i) matches want (lines from j), a "..." line standing for any number
-- of lines. Returns true, or false and the first README line that did not match.
local function matches(got, want, i, j)
  i, j = i or 1, j or 1
  if j > #want then return i > #got, want[#want] or "(end of output)" end
  if want[j]:match("^%s*%.%.%.%s*$") then
    for k = i, #got + 1 do
      if matches(got, want, k, j + 1) then return true end
    end
    return false, want[j + 1] or "(end)"
  end
  if i <= #got and line_matches(got[i], want[j]) then return matches(got, want, i + 1, j + 1) end
  return false, want[j]
end

local list = examples((function()
  local b = blocks(read("README.md"))
  -- a block's output block is the next one only when nothing but blank lines lie between
  local text = lines_of(read("README.md"))
  for i = 2, #b do
    local prev, between = b[i - 1], true
    for n = prev.first + #prev.lines + 2, b[i].first - 1 do
      if text[n]:match("%S") then between = false end
    end
    if between then b[i].after_blank_of = prev end
  end
  return b
end)())

local MARK = "@@readme-example "
local input = {}
for k, ex in ipairs(list) do
  if not ex.skip then
    input[#input + 1] = ("print(%q .. %d)"):format(MARK, k)
    for _, l in ipairs(ex.input) do input[#input + 1] = l end
  end
end
local infile, outfile = TMP .. "/readme_input.lua", TMP .. "/readme_output.txt"
local f = assert(io.open(infile, "wb"))
f:write(table.concat(input, "\n"), "\n")
f:close()
os.execute(("%q --sim <%q >%q 2>&1"):format(BIN, infile, outfile))

local outputs, current = {}, nil
for _, l in ipairs(lines_of(read(outfile))) do
  local k = l:match("^" .. MARK:gsub("%p", "%%%0") .. "(%d+)$")
  if k then
    current = tonumber(k)
    outputs[current] = {}
  elseif current then
    outputs[current][#outputs[current] + 1] = l
  end
end

print("1.." .. (#list + 1))
local failed = false
for k, ex in ipairs(list) do
  if ex.skip then
    print(("ok - %s # SKIP %s"):format(ex.name, ex.skip))
  else
    local got = outputs[k] or {}
    while #got > 0 and got[#got] == "" do got[#got] = nil end
    local ok, where = matches(got, ex.expect)
    if ok then
      print(("ok - %s prints what the README shows"):format(ex.name))
    else
      failed = true
      print(("not ok - %s: output differs from the README at %q; it printed:"):format(ex.name, where))
      for n = 1, math.min(#got, 40) do print("    " .. got[n]) end
    end
  end
end
print((#list > 0 and "ok" or "not ok") .. (" - README has %d examples"):format(#list))
os.exit((failed or #list == 0) and 1 or 0)
