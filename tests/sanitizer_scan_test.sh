#!/bin/sh
# tests/sanitizer_scan_test.sh: tests/run.sh's check for sanitizer reports in a suite's output
# (tests/sanitizer_scan.sh). Logs with a report planted among passing tests must be caught, with
# the report's first line quoted; logs that only mention the words (a Lua error saying "runtime
# error:", a test named after AddressSanitizer) must not. Then the reports of real ASan and
# UBSan builds of two small faulty programs, where the compiler has the sanitizers, so that the
# patterns follow what the sanitizers print rather than what we remember of it.
# Run from the repository root: sh tests/sanitizer_scan_test.sh
. tests/shlib.sh
. tests/sanitizer_scan.sh
plan 13

# caught NAME WANT LOG: sanitizer_report finds WANT (the whole first report line) in LOG.
caught() {
  got=$(sanitizer_report "$3")
  if [ "$got" = "$2" ]; then ok "$1"
  else bad "$1: got '$got', want '$2'"; fi
}
# clean NAME LOG: sanitizer_report finds nothing in LOG.
clean() {
  got=$(sanitizer_report "$2")
  if [ -z "$got" ]; then ok "$1"
  else bad "$1: took '$got' for a report"; fi
}
# passing LOG LINE...: a log of a suite whose tests all pass, LINEs among its output.
passing() {
  out=$1
  shift
  { echo "1..2"; echo "ok - first"; printf '%s\n' "$@"; echo "ok - second"; } >"$out"
}

ASAN='==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x1'
passing "$tmp/asan" "$ASAN" "READ of size 4 at 0x602000000010 thread T0" \
  "    #0 0x55d in fill_with repl/bind/bind_array.c:306" \
  "SUMMARY: AddressSanitizer: heap-use-after-free repl/bind/bind_array.c:306 in fill_with"
caught "an ASan report between passing tests: its first line" "$ASAN" "$tmp/asan"

LSAN='==77==ERROR: LeakSanitizer: detected memory leaks'
passing "$tmp/lsan" "$LSAN" "Direct leak of 64 byte(s) in 1 object(s) allocated from:" \
  "SUMMARY: AddressSanitizer: 64 byte(s) leaked in 1 allocation(s)."
caught "a LeakSanitizer report at exit" "$LSAN" "$tmp/lsan"

UBSAN='sim/sim_alu.c:212:17: runtime error: signed integer overflow: 2147483647 + 1'
passing "$tmp/ubsan" "$UBSAN"
caught "a UBSan finding (file:line:column: runtime error:), recovered, no summary" \
  "$UBSAN" "$tmp/ubsan"

passing "$tmp/ubsan-summary" \
  "   SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior a.c:3:9 in "
caught "a UBSan summary alone, blanks trimmed" \
  "SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior a.c:3:9 in" "$tmp/ubsan-summary"

passing "$tmp/unknown" "<unknown>: runtime error: load of misaligned address 0x1 for type 'int'"
caught "a UBSan finding with no source position" \
  "<unknown>: runtime error: load of misaligned address 0x1 for type 'int'" "$tmp/unknown"

passing "$tmp/two" "$UBSAN" "$ASAN"
caught "of two reports, the first" "$UBSAN" "$tmp/two"

passing "$tmp/late" "ok - third" "ok - fourth"
echo "$ASAN" >>"$tmp/late"
caught "a report after the last test line" "$ASAN" "$tmp/late"

passing "$tmp/lua" "not ok - copy: tests/lua/foo.lua:12: runtime error: boom" \
  "cudalab: x.lua:3: runtime error: attempt to index a nil value" "error: runtime error: none" \
  "    [string \"kernel\"]:7: runtime error: raised on purpose"
clean "Lua errors that say 'runtime error:' are no report" "$tmp/lua"

passing "$tmp/words" "ok - the build uses AddressSanitizer" "# LeakSanitizer is off here" \
  "ok - SUMMARY line parsed: UBSan" "note: ERROR: is a word learners see"
clean "the sanitizers' names in ordinary output are no report" "$tmp/words"

clean "a missing log: nothing, and no error" "$tmp/none"

# Real reports, from small programs built with the sanitizers.
cat >"$tmp/uaf.c" <<'EOF'
#include <stdlib.h>
int main(void) {
  int *p = malloc(4 * sizeof *p);
  free(p);
  return p[1];
}
EOF
cat >"$tmp/overflow.c" <<'EOF'
#include <limits.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int x = INT_MAX - 1 + argc;
  (void)argv;
  printf("%d\n", x + 1);
  return 0;
}
EOF
CC=${CC:-cc}
if $CC -g -fsanitize=address -o "$tmp/uaf" "$tmp/uaf.c" 2>/dev/null; then
  ASAN_OPTIONS=detect_leaks=0 "$tmp/uaf" >"$tmp/uaf.log" 2>&1
  got=$(sanitizer_report "$tmp/uaf.log")
  case $got in
    ==*==ERROR:\ AddressSanitizer:\ heap-use-after-free*) ok "a real ASan report is caught" ;;
    *) bad "a real ASan report is caught: got '$got'"; sed 's/^/    /' "$tmp/uaf.log" | head ;;
  esac
else
  ok "a real ASan report is caught # SKIP $CC cannot build with -fsanitize=address"
fi
if $CC -g -fsanitize=undefined -o "$tmp/overflow" "$tmp/overflow.c" 2>/dev/null; then
  "$tmp/overflow" >"$tmp/overflow.log" 2>&1
  got=$(sanitizer_report "$tmp/overflow.log")
  case $got in
    *overflow.c:6:*:\ runtime\ error:\ signed\ integer\ overflow*)
      ok "a real UBSan finding is caught" ;;
    *)
      bad "a real UBSan finding is caught: got '$got'"
      sed 's/^/    /' "$tmp/overflow.log" | head ;;
  esac
  # the same program, its output in a log of passing tests: still caught
  passing "$tmp/mixed" "$(cat "$tmp/overflow.log")"
  case $(sanitizer_report "$tmp/mixed") in
    *runtime\ error:*) ok "a real UBSan finding among passing tests is caught" ;;
    *) bad "a real UBSan finding among passing tests is caught" ;;
  esac
else
  ok "a real UBSan finding is caught # SKIP $CC cannot build with -fsanitize=undefined"
  ok "a real UBSan finding among passing tests is caught # SKIP no UBSan"
fi
exit $status
