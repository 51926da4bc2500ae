#!/bin/sh
# tests/output_kept.sh BIN: a script never loses its output, nor has it reordered, however it
# runs (piped: one process; at a terminal: console and engine) and however it ends:
#  - standard output that cannot be written (a full disk) is said on stderr and fails the run;
#  - finalizers (__gc) and to-be-closed variables print at the end, as lua.c runs them, and at
#    os.exit(code, true), whose close Lua's manual defines;
#  - a warning on stderr (a race, a compile warning) comes after what the script wrote to stdout
#    before it, in a log of both;
#  - device printf's lines never start after the progress bar's text at a terminal;
#  - an index run off an array in a kernel that prints is blamed on the array, not on printf's
#    format string.
# The device drain at os.exit and at a terminal run's end is tests/gpu/output_kept_gpu.sh's.
BIN=$1
. tests/shlib.sh
plan 13
export XDG_CACHE_HOME="$tmp/cache"
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
have_script() { command -v script >/dev/null 2>&1; }

# --- a full disk ---
"$BIN" --sim -e 'print("lost")' </dev/null >/dev/full 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && ok "piped, stdout on a full disk: status 1" || bad "piped, full disk: status $rc"
expect "piped, stdout on a full disk: said on stderr" \
  "cudalab: output was lost: standard output could not be written" \
  "$tmp/err"
if have_script; then
  script -qefc "$BIN --sim -e 'print(1)' >/dev/full 2>$tmp/tty_err; echo rc=\$?" /dev/null \
    </dev/null >"$tmp/tty_out" 2>&1
  if grep -q "rc=1" "$tmp/tty_out" && grep -q "output was lost" "$tmp/tty_err"; then
    ok "at a terminal, stdout on a full disk: said, status 1"
  else bad "at a terminal, full disk: $(tr -d '\r' <"$tmp/tty_out") / $(cat "$tmp/tty_err")"; fi
else ok "at a terminal, stdout on a full disk # SKIP no script(1)"; fi

# --- finalizers and to-be-closed variables ---
cat >"$tmp/gc.lua" <<'LUA'
keep = setmetatable({}, { __gc = function() print("gc of a global") end })
setmetatable({}, { __gc = function() print("gc of garbage") end })
print("end of script")
LUA
"$BIN" --sim "$tmp/gc.lua" </dev/null >"$tmp/out" 2>&1
if [ "$(sort "$tmp/out" | tr '\n' '|')" = "end of script|gc of a global|gc of garbage|" ] &&
   [ "$(head -n 1 "$tmp/out")" = "end of script" ]; then
  ok "piped: finalizers print at the script's end"
else bad "piped, finalizers: '$(tr '\n' '|' <"$tmp/out")'"; fi
if have_script; then
  script -qefc "$BIN --sim $tmp/gc.lua" /dev/null </dev/null >"$tmp/tty_out" 2>&1
  if grep -q "gc of a global" "$tmp/tty_out" && grep -q "gc of garbage" "$tmp/tty_out"; then
    ok "at a terminal: finalizers print at the script's end"
  else bad "at a terminal, finalizers: '$(tr -d '\r' <"$tmp/tty_out" | tr '\n' '|')'"; fi
else ok "at a terminal: finalizers print # SKIP no script(1)"; fi
cat >"$tmp/exit.lua" <<'LUA'
keep = setmetatable({}, { __gc = function() print("gc ran") end })
do
  local c <close> = setmetatable({}, { __close = function() print("close ran") end })
  print("before exit")
  os.exit(3, true)
end
LUA
"$BIN" --sim "$tmp/exit.lua" </dev/null >"$tmp/out" 2>&1
rc=$?
[ "$(tr '\n' '|' <"$tmp/out")" = "before exit|close ran|gc ran|" ] && [ $rc = 3 ] &&
  ok "os.exit(3, true): to-be-closed variables and finalizers run, status 3" ||
  bad "os.exit(3, true): status $rc, '$(tr '\n' '|' <"$tmp/out")'"
"$BIN" --sim -e 'keep = setmetatable({}, { __gc = function() print("gc ran") end }) os.exit(0)' \
  </dev/null >"$tmp/out" 2>&1
[ ! -s "$tmp/out" ] && ok "os.exit(0) without close: no finalizer runs, as in Lua" ||
  bad "os.exit(0) without close printed '$(cat "$tmp/out")'"

# --- stderr after the stdout written before it ---
cat >"$tmp/race.lua" <<'LUA'
io.write("A: before the launch\n")
local k = cuda.kernel [[
__global__ void k(float *o) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x;
  o[threadIdx.x] = s[63 - threadIdx.x];
}]]
cuda.simopts{race_check = "warn"}
k[{1, 64}](cuda.array(64))
io.write("B: after the launch\n")
LUA
"$BIN" --sim "$tmp/race.lua" </dev/null >"$tmp/out" 2>&1
first=$(grep -n "A: before" "$tmp/out" | cut -d: -f1)
warn=$(grep -n "warning: shared-memory race" "$tmp/out" | cut -d: -f1)
last=$(grep -n "B: after" "$tmp/out" | cut -d: -f1)
[ -n "$first" ] && [ -n "$warn" ] && [ -n "$last" ] && [ "$first" -lt "$warn" ] &&
  [ "$warn" -lt "$last" ] && ok "a race warning comes between what was written before and after" ||
  bad "race warning order: $(head -c 600 "$tmp/out")"
printf '%s\n' 'io.write("A: before the compile\n")' \
  'cuda.kernel "__global__ void k(float *a) { int unused = 3; a[0] = 1; }"' >"$tmp/cw.lua"
"$BIN" --sim "$tmp/cw.lua" </dev/null >"$tmp/out" 2>&1
[ "$(head -n 1 "$tmp/out")" = "A: before the compile" ] && grep -q "warning #177-D" "$tmp/out" &&
  ok "a compile warning comes after what was written before it" ||
  bad "compile warning order: $(head -c 400 "$tmp/out")"

# --- device printf and the progress bar at a terminal ---
cat >"$tmp/bar.lua" <<'LUA'
local k = cuda.kernel [[
#include <cstdio>
__global__ void k(float *a, int iters) {
  float x = threadIdx.x;
  for (int i = 0; i < iters; i++) x = x * 1.0001f + 0.5f;
  a[blockIdx.x * blockDim.x + threadIdx.x] = x;
  if (threadIdx.x == 0) printf("block %d done\n", blockIdx.x);
}]]
k[{64, 128}](cuda.array(64 * 128), 150000)
print("end")
LUA
if have_script; then
  script -qefc "$BIN --sim $tmp/bar.lua" /dev/null </dev/null >"$tmp/tty_out" 2>&1
  n=$(grep -ac "block [0-9]* done" "$tmp/tty_out")
  if [ "$n" -ge 1 ] && ! grep -aq "of [0-9]*block" "$tmp/tty_out"; then
    ok "device printf never follows the progress bar's text on its line"
  else bad "progress bar and printf: $n lines; $(grep -a "of [0-9]*block" "$tmp/tty_out" |
    head -n 2 | tr -d '\r')"; fi
  grep -aq "simulating \[" "$tmp/tty_out" && ok "the progress bar was drawn (the test saw one)" ||
    ok "the progress bar was drawn # SKIP this machine simulated it too fast for a bar"
else
  ok "device printf and the progress bar # SKIP no script(1)"
  ok "the progress bar was drawn # SKIP no script(1)"
fi

# --- a fault in a kernel that prints ---
cat >"$tmp/oob.lua" <<'LUA'
local k = cuda.kernel [[
#include <cstdio>
__global__ void k(float *a) {
  if (threadIdx.x == 0) printf("block %d\n", blockIdx.x);
  if (blockIdx.x == 1 && threadIdx.x == 0) a[1000000] = 1;
}]]
k[{2, 32}](cuda.array(16))
LUA
"$BIN" --sim "$tmp/oob.lua" </dev/null >"$tmp/out" 2>&1
expect "an index off an array in a kernel that prints: the array is named" \
  "index 1000000 of f32[16] (parameter 0, 'a') is 999985 elements" "$tmp/out"
if grep -q '\$str' "$tmp/out"; then bad "printf's format string named: $(grep '\$str' "$tmp/out")"
else ok "printf's format string is not named"; fi
exit $status
