#!/bin/sh
# tests/fuzz/valgrind.sh BIN: a representative subset of the tests under valgrind's memcheck
# (make valgrind-test): two Lua API files, the simulator's fault files and every transcript.
# Each valgrind process (the console, and the engine it forks) writes its own log; a log with
# an error or a definite leak fails the run. The engine normally leaves with _exit(), which
# hides its leaks: CUDALAB_CLEAN_EXIT=1 makes it close Lua and exit() instead. The kernel cache
# is filled first without valgrind, so NVRTC (slow under valgrind, and not ours) runs only for
# sources that do not compile. Prints ok / not ok lines and "valgrind: N runs, M with errors".
BIN=$1
. tests/shlib.sh
export XDG_CACHE_HOME="$tmp/cache" CUDALAB_CLEAN_EXIT=1
export CUDALAB_TEST_BIN="$BIN" # tests that start cudalab again start it, not valgrind
VG="valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 --trace-children=yes
    --trace-children-skip=/bin/*,/usr/bin/*,*/sh --suppressions=tools/valgrind.supp"
if ! command -v valgrind >/dev/null 2>&1; then
  bad "valgrind is not installed (apt-get install valgrind)"
  exit 1
fi
runs=0
failed=0
# check NAME CMD...: runs CMD under valgrind; reads every log it left
check() {
  name=$1
  shift
  rm -rf "$tmp/vg" && mkdir -p "$tmp/vg"
  "$@" >/dev/null 2>&1 # warm the cache
  $VG --log-file="$tmp/vg/%p.log" "$@" >"$tmp/out" 2>&1
  runs=$((runs + 1))
  problems=$(grep -lE 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]' "$tmp"/vg/*.log 2>/dev/null)
  if [ -z "$problems" ] && ! grep -q '^not ok' "$tmp/out"; then
    ok "valgrind: $name"
  else
    failed=$((failed + 1))
    bad "valgrind: $name"
    for f in $problems; do grep -E '^==[0-9]+== (   (at|by)|[A-Z].*(Invalid|uninitialised|definitely|SUMMARY))' "$f" | head -n 25; done
    grep '^not ok' "$tmp/out" | head -n 5
    cp -r "$tmp/vg" "${BIN%/*}/valgrind-logs" 2>/dev/null
  fi
}
check "api (sim): arrays" "$BIN" --backend sim tests/lua/arrays.lua
check "api (sim): kernels" "$BIN" --backend sim tests/lua/kernels.lua
check "simulator: faults" "$BIN" --backend sim tests/simulator/faults.lua
for t in tests/transcripts/*.lua; do
  check "transcript $(basename "$t" .lua)" sh -c "\"$BIN\" --backend none <\"$t\""
done
echo "valgrind: $runs runs, $failed with errors"
exit $status
