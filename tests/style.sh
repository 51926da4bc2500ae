#!/bin/sh
# tests/style.sh [cudalab]: every line of the Lua library and of the C sources is within 100
# columns, counted in characters ("µs" and "─" are one column each). mawk, the usual awk, counts
# bytes, so the count is done by cudalab's own Lua (utf8.len). One test per set of files; a
# failure lists each long line with its file, line number and width. And no function of the Lua
# library is over 60 lines (a failure names each with its file, line and length), a check shown
# to catch a planted 61-line function. Run from the repository root: sh tests/style.sh build/cudalab
. "$(dirname "$0")/shlib.sh"
BIN=${1:-build/cudalab}
plan 5
cat >"$tmp/width.lua" <<'LUA'
-- prints "file:line: N columns" for each line of the files in arg wider than 100 characters
for _, path in ipairs(arg) do
  local n = 0
  for line in io.lines(path) do
    n = n + 1
    local w = utf8.len(line) or #line
    if w > 100 then print(string.format("%s:%d: %d columns", path, n, w)) end
  end
end
LUA
# lint NAME SCRIPT WHAT FILES...: one test, NAME, that the Lua SCRIPT finds nothing in FILES (it
# prints one line a finding); a failure says WHAT was found, or that the check did not run
lint() {
  name=$1 script=$2 what=$3
  shift 3
  if ! "$BIN" --backend none "$script" "$@" >"$tmp/found" 2>&1; then
    bad "$name: the check did not run:"; sed 's/^/    /' "$tmp/found"
  elif [ -s "$tmp/found" ]; then
    bad "$name: $what:"; sed 's/^/    /' "$tmp/found"
  else ok "$name"; fi
}
within() { n=$1; shift; lint "$n" "$tmp/width.lua" "lines over 100 columns" "$@"; }
within "Lua library lines within 100 columns" lua/*.lua lua/*/*.lua
within "C lines within 100 columns" repl/*/*.c repl/*/*.h repl/*/*.def repl/main.c sim/*.c sim/*.h \
  sim/*.def include/*.h
cat >"$tmp/funclen.lua" <<'LUA'
-- prints "file:line: NAME is N lines (over 60)" for each function of the Lua files in arg longer
-- than 60 lines, counted lastline - line + 1. The spans come from the compiler itself: each file
-- is loaded and its string.dump read, which holds linedefined and lastlinedefined for every
-- function prototype, nested and anonymous ones included. A pattern over the text would miss
-- "end"s inside strings and one-line functions; luac -l would add a package to every machine.
-- The reader follows Lua 5.4's ldump.c; a file that does not load is reported, never skipped.
local LIMIT = 60
local r = { s = "", pos = 1 }  -- the dump being read and the next byte's position
local function byte()
  local b = r.s:byte(r.pos)
  r.pos = r.pos + 1
  return b
end
local function skip(n) r.pos = r.pos + n end
local function size()  -- ldump.c's dumpSize: 7 bits a byte, most significant first, last marked
  local x, b = 0, 0
  repeat b = byte(); x = x * 128 + (b & 0x7f) until b & 0x80 ~= 0
  return x
end
local function skip_string() local n = size(); if n > 0 then skip(n - 1) end end
local function skip_constants()
  for _ = 1, size() do
    local t = byte()
    if t == 3 or t == 19 then skip(8)  -- an integer or a float (8 bytes: checked in the header)
    elseif t == 4 or t == 20 then skip_string() end  -- nil, false and true have no payload
  end
end
local function skip_debug()
  skip(size())                                            -- lineinfo: one byte a instruction
  for _ = 1, size() do size(); size() end                 -- abslineinfo: pc, line
  for _ = 1, size() do skip_string(); size(); size() end  -- locvars: name, startpc, endpc
  for _ = 1, size() do skip_string() end                  -- upvalue names
end
-- function_spans(out): reads one prototype and those nested in it, appending {first, last}
local function function_spans(out)
  skip_string()  -- source
  local first, last = size(), size()
  if first > 0 then out[#out + 1] = { first, last } end  -- 0 is the main chunk
  skip(3)                                    -- numparams, is_vararg, maxstacksize
  skip(4 * size())                           -- code
  skip_constants()
  skip(3 * size())                           -- upvalues: instack, idx, kind
  for _ = 1, size() do function_spans(out) end
  skip_debug()
end
local HEADER = "\x1bLua\x54\0\x19\x93\r\n\x1a\n\4\8\8"
local function spans_of(path)
  local f, err = loadfile(path)
  if not f then return nil, err end
  r.s, r.pos = string.dump(f, true), 1
  if r.s:sub(1, #HEADER) ~= HEADER then return nil, "not a Lua 5.4 dump with 8-byte numbers" end
  skip(#HEADER + 16 + 1)                     -- LUAC_INT, LUAC_NUM, the main's upvalue count
  local out = {}
  function_spans(out)
  return out
end
-- the name a report gives: the declaration's name, or the first line's text for an anonymous one
local function name_at(lines, n)
  local text = lines[n] or ""
  return text:match("function%s+([%w_.:]+)%s*%(") or text:match("^%s*(.-)%s*$")
end
local failed = false
for _, path in ipairs(arg) do
  local spans, err = spans_of(path)
  if not spans then print(path .. ": cannot measure: " .. err); failed = true
  else
    local lines = {}
    for line in io.lines(path) do lines[#lines + 1] = line end
    for _, s in ipairs(spans) do
      local n = s[2] - s[1] + 1
      if n > LIMIT then
        print(string.format("%s:%d: %s is %d lines", path, s[1], name_at(lines, s[1]), n))
      end
    end
  end
end
os.exit(failed and 1 or 0)
LUA
# short NAME FILES...: one test, NAME, that no function in FILES is over 60 lines
short() { n=$1; shift; lint "$n" "$tmp/funclen.lua" "functions over 60 lines" "$@"; }
short "Lua library functions within 60 lines" lua/*.lua lua/*/*.lua
# The check itself, on a planted file: a local function of 61 lines (line 2 to 62) with a nested
# one, and an anonymous one of exactly 60, which must pass. The report names the first alone.
planted=$tmp/planted.lua
{
  echo "local M = {}"
  echo "local function too_long()"
  echo "  local function inner() return 1 end"
  i=0; while [ $i -lt 58 ]; do echo "  local x$i = $i"; i=$((i + 1)); done
  echo "end"
  echo "M.fits = function()"
  i=0; while [ $i -lt 58 ]; do echo "  local y$i = $i"; i=$((i + 1)); done
  echo "end"
  echo "return M"
} >"$planted"
"$BIN" --backend none "$tmp/funclen.lua" "$planted" >"$tmp/planted.out" 2>&1
if [ "$(cat "$tmp/planted.out")" = "$planted:2: too_long is 61 lines" ]; then
  ok "the length check names a planted 61-line function and passes a 60-line one"
else bad "the length check on a planted 61-line function said:"; sed 's/^/    /' "$tmp/planted.out"; fi
# A file the compiler rejects is reported, never passed as having no long function.
echo "local function broken(" >"$tmp/broken.lua"
if "$BIN" --backend none "$tmp/funclen.lua" "$tmp/broken.lua" >"$tmp/broken.out" 2>&1; then
  bad "the length check passed a file that does not compile:"; sed 's/^/    /' "$tmp/broken.out"
else expect "the length check reports a file that does not compile" "cannot measure" "$tmp/broken.out"; fi
exit $status
