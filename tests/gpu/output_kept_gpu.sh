#!/bin/sh
# tests/gpu/output_kept_gpu.sh BIN: on a GPU, launches do not wait, so a script can end (or call
# os.exit) while its last kernel still runs. What that kernel prints and the error it meets are
# still the script's: the engine waits for the device at os.exit, at a piped run's end and at a
# terminal run's end (the console's finish request), prints what the kernel printed, and fails
# the run on its error. The kernels spin about 50 ms first, so they are still running at the end.
BIN=$1
. tests/shlib.sh
plan 6
export XDG_CACHE_HOME="$tmp/cache"
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac

cat >"$tmp/late.lua" <<'LUA'
local k = cuda.kernel [[
#include <cstdio>
__global__ void late(int *a, int bad) {
  long long t = clock64();
  while (clock64() - t < 100000000) {}
  if (threadIdx.x == 0) printf("late kernel printed %d\n", blockIdx.x);
  if (bad) a[threadIdx.x + (1ll << 40)] = 1;
}]]
local bad, how = tonumber(arg[1]), arg[2]
k[{2, 32}](cuda.zeros(64, "i32"), bad)
print("script ends")
if how == "exit" then os.exit(0) end
LUA

"$BIN" --gpu "$tmp/late.lua" 0 exit </dev/null >"$tmp/out" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(grep -c "late kernel printed" "$tmp/out")" = 2 ] &&
  ok "os.exit(0) after a launch: the kernel's printf is printed, status 0" ||
  bad "os.exit(0) after a launch: status $rc, '$(tr '\n' '|' <"$tmp/out")'"
"$BIN" --gpu "$tmp/late.lua" 1 exit </dev/null >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "waiting for the kernels still running at the end" "$tmp/out" &&
  ok "os.exit(0) after a faulting launch: status 1, the fault told as the wait's" ||
  bad "os.exit(0) after a faulting launch: status $rc, '$(tr '\n' '|' <"$tmp/out")'"
"$BIN" --gpu "$tmp/late.lua" 0 end </dev/null >"$tmp/out" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(grep -c "late kernel printed" "$tmp/out")" = 2 ] &&
  ok "piped, the script's end: the kernel's printf is printed" ||
  bad "piped, the end: status $rc, '$(tr '\n' '|' <"$tmp/out")'"
if command -v script >/dev/null 2>&1; then
  script -qefc "$BIN --gpu $tmp/late.lua 0 end; echo rc=\$?" /dev/null </dev/null \
    >"$tmp/tty" 2>&1
  [ "$(grep -c "late kernel printed" "$tmp/tty")" = 2 ] && grep -q "rc=0" "$tmp/tty" &&
    ok "at a terminal, the script's end: the kernel's printf is printed, status 0" ||
    bad "at a terminal, the end: '$(tr -d '\r' <"$tmp/tty" | tr '\n' '|')'"
  script -qefc "$BIN --gpu $tmp/late.lua 1 end; echo rc=\$?" /dev/null </dev/null \
    >"$tmp/tty" 2>&1
  grep -q "rc=1" "$tmp/tty" &&
    ok "at a terminal, a faulting launch at the end: status 1" ||
    bad "at a terminal, a fault at the end: '$(tr -d '\r' <"$tmp/tty" | tr '\n' '|')'"
  grep -qi "illegal memory access\|out-of-bounds\|waiting for the kernels" "$tmp/tty" &&
    ok "at a terminal, a faulting launch at the end: the error is told" ||
    bad "at a terminal, the fault's message: '$(tr -d '\r' <"$tmp/tty" | tr '\n' '|')'"
else
  for t in 1 2 3; do ok "at a terminal # SKIP no script(1)"; done
fi
exit $status
