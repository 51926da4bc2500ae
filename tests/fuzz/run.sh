#!/bin/sh
# tests/fuzz/run.sh BIN [SECONDS]: runs tests/fuzz/api_fuzz.lua in rounds of up to 10 seconds,
# each with its own seed, under BIN (built with AddressSanitizer and UBSan by make fuzz), and
# ends with "fuzz: N calls, M crashes". A crash is a round whose engine died, that printed a
# sanitizer report, that hung, or that did not reach its summary line. For each, the seed is
# replayed with FUZZ_TRACE=1, which names every call before making it, so the last "call"
# line printed before the report is the culprit; the log is kept under build*/fuzz/.
# Every fifth round is also a completion round: the console's own Tab path (the engine copies
# the candidates into C memory) through a terminal, over thousands of long names.
BIN=$1
TOTAL=${2:-60}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
SCRIPT=$(pwd)/tests/fuzz/api_fuzz.lua
LOGDIR=$(dirname "$BIN")/fuzz
mkdir -p "$LOGDIR"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The learner's files never: a scratch home, cache and state; edit() writes into the current
# folder and must not open an editor.
export HOME="$work/home" XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache" EDITOR=true VISUAL=true
# where api_fuzz.lua makes its FIFO, folders and links named like kernels
export FUZZ_SCRATCH="$work"
mkdir -p "$HOME" "$work/cwd"
# Leak checking is valgrind's job (make valgrind-test); here every report ends the round.
# allocator_may_return_null: a request for terabytes gets NULL, as from libc, not an ASan abort.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=86:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
seed=${FUZZ_SEED:-$(date +%s)}
calls=0
crashes=0
start=$(date +%s)
# one_round SEED SECONDS LOG [TRACE]: 0 when the round ended cleanly
one_round() {
  (cd "$work/cwd" && FUZZ_TRACE=${4:-0} timeout -s KILL $(($2 + 120)) "$BIN" --sim "$SCRIPT" "$2" "$1") >/dev/null 2>"$3"
  rc=$?
  [ $rc -eq 0 ] && grep -aq '^calls [0-9]' "$3" &&
    ! grep -aqE 'ERROR: AddressSanitizer|runtime error:|the engine stopped|did not answer' "$3"
}
# completion_round SEED LOG: 0 when the engine answered every Tab and lived on.
completion_round() {
  names=$(( $1 % 5 * 1000 + 200 )) width=$(( $1 % 7 * 30 + 1 ))
  (cd "$work/cwd" && {
    sleep 0.5
    printf 't = {} for i = 1, %d do t["field_" .. string.rep("x", %d) .. i] = i end\n' $names $width
    sleep 0.3
    for p in t.f t.field_x t. t.field_xx1 cuda. t.field_ "x = t.f"; do printf '%s\t\tn\025' "$p"; sleep 0.2; done
    printf 'print("al" .. "ive")\n'; sleep 0.5; printf '\004'
  } | timeout -s KILL 60 script -qefc "$BIN --sim" /dev/null) >"$2" 2>&1
  grep -aq 'alive' "$2" && ! grep -aqE 'ERROR: AddressSanitizer|runtime error:|the engine stopped' "$2"
}
round_no=0
while :; do
  now=$(date +%s)
  left=$((TOTAL - (now - start)))
  [ $left -le 0 ] && break
  round=$left
  [ $round -gt 10 ] && round=10
  log="$LOGDIR/round-$seed.log"
  if one_round "$seed" "$round" "$log"; then
    n=$(sed -n 's/^calls \([0-9]*\) .*/\1/p' "$log")
    calls=$((calls + n))
    rm -f "$log"
  else
    crashes=$((crashes + 1))
    echo "fuzz: crash with seed $seed (exit status $rc); log: $log"
    grep -aE 'ERROR: AddressSanitizer|runtime error:|the engine stopped|#[0-9] |^/.*lua:[0-9]' "$log" | head -n 12 | sed 's/^/    /'
    one_round "$seed" "$round" "$log.trace" 1
    grep -a '^call ' "$log.trace" | tail -n 1 | sed 's/^/    last: /'
    echo "    replay: FUZZ_TRACE=1 $BIN --sim tests/fuzz/api_fuzz.lua $round $seed"
  fi
  round_no=$((round_no + 1))
  if [ $((round_no % 5)) = 1 ] && command -v script >/dev/null; then
    log="$LOGDIR/complete-$seed.log"
    calls=$((calls + 7))
    if completion_round "$seed" "$log"; then rm -f "$log"
    else
      crashes=$((crashes + 1))
      echo "fuzz: completion round crashed with seed $seed; log: $log"
      grep -aE 'ERROR: AddressSanitizer|runtime error:|the engine stopped|#[0-9] ' "$log" | head -n 12 | sed 's/^/    /'
    fi
  fi
  seed=$((seed + 1))
done
secs=$(( $(date +%s) - start ))
[ $secs -gt 0 ] || secs=1
echo "fuzz: $calls calls, $crashes crashes ($((calls / secs)) calls per second)"
[ $crashes -eq 0 ]
