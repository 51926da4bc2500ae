#!/bin/sh
# tests/style.sh [cudalab]: every line of the Lua library and of the C sources is within 100
# columns, counted in characters ("µs" and "─" are one column each). mawk, the usual awk, counts
# bytes, so the count is done by cudalab's own Lua (utf8.len). One test per set of files; a
# failure lists each long line with its file, line number and width. Run from the repository
# root: sh tests/style.sh build/cudalab
. "$(dirname "$0")/shlib.sh"
BIN=${1:-build/cudalab}
plan 2
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
# within NAME FILES...: one test, NAME, that no line of FILES is over 100 columns
within() {
  name=$1
  shift
  if ! "$BIN" --backend none "$tmp/width.lua" "$@" >"$tmp/long" 2>&1; then
    bad "$name: the width check did not run:"; sed 's/^/    /' "$tmp/long"
  elif [ -s "$tmp/long" ]; then
    bad "$name: lines over 100 columns:"; sed 's/^/    /' "$tmp/long"
  else ok "$name"; fi
}
within "Lua library lines within 100 columns" lua/*.lua lua/*/*.lua
within "C lines within 100 columns" repl/*/*.c repl/*/*.h repl/*/*.def repl/main.c sim/*.c sim/*.h \
  sim/*.def include/*.h
exit $status
