#!/bin/sh
# tests/reliability.sh BIN: hostile inputs that once crashed, hung or lost work, each a regression
# test: a script given a thousand arguments, a kernel "file" that is a FIFO or a folder, a block
# of 0 threads for cuda.occupancy and cuda.sweep, and reset() after skip() keeping every version
# of the learner's kernel, <assert.h> found, and edit() on a full disk keeping the kernel that
# was there; and a file a script writes and never closes kept whole when it ends (-e, a script,
# a pipe, os.exit).
. tests/shlib.sh
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
plan 9
printf 'print("args", select("#", ...), #arg, arg[1000], (select(1000, ...)))\n' >"$tmp/args.lua"
"$BIN" --backend none "$tmp/args.lua" $(seq 1 1000) >"$tmp/out" 2>&1
expect "a script gets all of a thousand arguments" "args	1000	1000	1000	1000" "$tmp/out"
mkfifo "$tmp/pipe.cu"
mkdir "$tmp/folder.cu"
(cd "$tmp" && timeout 20 "$BIN" --backend none -e 'print(pcall(cuda.kernel, "pipe.cu"))') >"$tmp/out" 2>&1
expect "a FIFO named like a kernel is refused, not waited on" "'pipe.cu' is not a regular file" "$tmp/out"
(cd "$tmp" && timeout 20 "$BIN" --backend none -e 'print(pcall(cuda.kernel, "folder.cu"))') >"$tmp/out" 2>&1
expect "a folder named like a kernel is refused" "'folder.cu' is not a regular file" "$tmp/out"
"$BIN" --sim -e 'k = cuda.kernel "inc.cu"; print(pcall(cuda.occupancy, k, 0))' >"$tmp/out" 2>&1
expect "cuda.occupancy of a block of 0 says so" "block must be a whole number of threads (1 or more)" "$tmp/out"
"$BIN" --sim -e 'k = cuda.kernel "inc.cu"; a = cuda.array(8); print(pcall(cuda.sweep, k, {0, 32}, a, #a))' >"$tmp/out" 2>&1
expect "cuda.sweep of a block of 0 says so" "is a block of 0 threads; a block has 1 or more" "$tmp/out"
"$BIN" --sim -e "
  local L = require 'lessons'
  L.configure { dir = 'tests/class', progress = false, workdir = '$tmp/work' }
  os.execute('mkdir -p $tmp/work')
  local C = L.commands
  C.lesson(50)
  C.edit('// my first try')
  C.skip()
  C.edit('// my second try')
  C.reset()
  local function read(n)
    local f = io.open('$tmp/work/' .. n)
    local t = f and f:read('a'):gsub('\\n', '') or 'none'
    if f then f:close() end
    return t
  end
  print('kept|' .. read('square.cu.mine') .. '|' .. read('square.cu.mine.1') .. '|')" >"$tmp/out" 2>&1
expect "reset() after skip() keeps both of the learner's versions" "kept|// my first try|// my second try|" "$tmp/out"
"$BIN" --sim -e 'k = cuda.kernel "#include <assert.h>\n#include <cassert>\n__global__ void k(const int *x) { assert(x[threadIdx.x] >= 0); }"
  print(pcall(function() k[{1, 3}](cuda.array({1, 2, -3}, "i32")); cuda.sync() end))' >"$tmp/out" 2>&1
expect "<assert.h> and <cassert> are found, and assert() fails the launch" "Assertion \`x[threadIdx.x] >= 0\` failed" "$tmp/out"
# edit() on a full disk: a tmpfs of 64 KiB as the workspace (root only), filled up
if [ "$(id -u)" = 0 ] && mkdir "$tmp/full" && mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
  "$BIN" --sim -e "
    local L = require 'lessons'
    L.configure { dir = 'tests/class', progress = false, workdir = '$tmp/full' }
    local C = L.commands
    C.lesson(50)
    C.edit('// the kernel I wrote')
    os.execute('dd if=/dev/zero of=$tmp/full/filler bs=1k count=1000 2>/dev/null')
    C.edit(string.rep('// a long kernel\\n', 4000))
    local f = io.open('$tmp/full/square.cu')
    print('kept|' .. f:read('a'):gsub('\\n', '') .. '|')
    f:close()" >"$tmp/out" 2>&1
  umount "$tmp/full"
  if grep -qF "kept|// the kernel I wrote|" "$tmp/out" && grep -qF "Cannot write" "$tmp/out"; then
    ok "edit() on a full disk says so and keeps the kernel that was there"
  else bad "edit() on a full disk:"; sed 's/^/    /' "$tmp/out" | tail -n 8 | cut -c1-200; fi
else
  echo "ok - edit() on a full disk keeps the kernel that was there # SKIP needs root to mount a small tmpfs"
fi
# a script's files are whole when it ends, however it ends: -e, a script file, a pipe, os.exit
"$BIN" --backend none -e "io.open('$tmp/w1.txt', 'w'):write(string.rep('a', 10000))" >/dev/null 2>&1
printf 'io.open("%s/w2.txt", "w"):write(string.rep("b", 70000)); os.exit(3)\n' "$tmp" >"$tmp/w.lua"
"$BIN" --backend none "$tmp/w.lua" >/dev/null 2>&1
printf 'f = io.open("%s/w3.txt", "w"); f:write(string.rep("c", 20000))\n' "$tmp" |
  "$BIN" --backend none >/dev/null 2>&1
sizes=$(cat "$tmp/w1.txt" "$tmp/w2.txt" "$tmp/w3.txt" 2>/dev/null | wc -c)
[ "$sizes" = 100000 ] && ok "a file a script leaves open is whole when it ends (-e, a script with os.exit, a pipe)" ||
  bad "files left open lost bytes: $(wc -c "$tmp"/w?.txt 2>&1 | tr '\n' ' ')"
exit $status
