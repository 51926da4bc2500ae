#!/bin/sh
# tests/run.sh [--gpu]: runs every suite and ends with one line "N passed, M failed, K skipped".
#   without --gpu: what needs no GPU (the backend is forced to "none" or the simulator)
#   with --gpu:    the same API suites on the GPU, plus the GPU-only checks in tests/gpu/
# BUILD names the build folder; SANITIZER (address, undefined), which make test passes on, builds
# the simulator library's tests with that sanitizer too, so a sanitizer run covers every C test.
#
# The protocol every suite follows (a subset of TAP):
#   ok - name                 a test that passed
#   not ok - name: why        a test that failed; indented lines after it are its detail
#   ok - name # SKIP why      a test that could not run here: counted as a skip, never a pass
#   1..N                      the plan: how many tests the suite runs, printed once (or once per
#                             program, for a suite of several programs: the plans are summed)
# A suite is a failure of its own, counted once however many of these it shows, when it
#   - prints no plan, or runs a number of tests other than its plan ("ran 12 of 40 tests"), so
#     one that stops early with status 0 cannot pass;
#   - exits non-zero with no "not ok" line, or dies of a signal (even after a "not ok"), so a
#     crash after a failure is still reported;
#   - runs past its time limit (coreutils timeout; SUITE_TIMEOUT seconds, 900 by default, which
#     is generous for a sanitizer build on a busy machine): the message names the suite and the
#     limit;
#   - prints a sanitizer report (AddressSanitizer, LeakSanitizer, UBSan: tests/sanitizer_scan.sh
#     says what counts), even when every test passed: the message names the suite and quotes
#     the report's first line.
# Where the plan comes from, so that adding a test costs no bookkeeping elsewhere:
#   - Lua suites (tests/lua/testlib.lua): T.plan(n) at the top of the file, n being the number of
#     T.test and T.skip calls it makes; corpus files (tests/corpus/corpus.lua) need nothing, the
#     harness counts the file's C.case calls; tests/lua_unit/run.lua counts what it registered;
#     lesson verification plans one test per lesson.
#   - C tests: PLAN(n) (tests/unit/check.h, tests/sim/nvrtc_util.h) at the top of main.
#   - shell suites (tests/shlib.sh): plan N at the top.
BUILD=${BUILD:-build}
BIN=$BUILD/cudalab
export CUDALAB_TEST_BIN="$BIN" # for tests that start cudalab again
GPU=0
[ "$1" = "--gpu" ] && GPU=1
LIMIT=${SUITE_TIMEOUT:-900}
passed=0
failed=0
skipped=0
# Every suite gets a fresh cache and state folder, never the user's own.
scratch=$(mktemp -d)
export XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state"
# script(1) runs its command with $SHELL: the same shell on every machine, whoever runs the tests
# (a CI runner may have none set, and script falls back to /bin/sh, which forks where bash execs).
export SHELL=/bin/sh
log=$(mktemp)
trap 'rm -rf "$log" "$scratch"' EXIT
. "$(dirname "$0")/sanitizer_scan.sh"

# suite_problem NAME RC P F S: prints why the suite as a whole failed, or nothing.
suite_problem() {
  rc=$2
  ran=$(($3 + $4 + $5))
  plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | awk '{n += $1} END {print NR ? n : ""}')
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "$1 ran past its limit of $LIMIT s and was stopped (SUITE_TIMEOUT)"
  elif [ "$rc" -gt 128 ]; then
    echo "$1 died of signal $((rc - 128))"
  elif [ "$rc" -ne 0 ] && [ "$4" -eq 0 ]; then
    echo "$1 exited with status $rc"
  fi
  if [ -z "$plan" ]; then
    echo "$1 printed no plan line (1..N): declare its count (T.plan, PLAN, plan)"
  elif [ "$ran" -ne "$plan" ]; then
    echo "$1 ran $ran of $plan tests"
  fi
  report=$(sanitizer_report "$log")
  [ -z "$report" ] || echo "$1 printed a sanitizer report: $report"
}

# matches_any NAME PATTERNS: whether NAME matches one of PATTERNS (shell patterns joined by |).
matches_any() {
  _rest=$2
  while :; do
    _pat=${_rest%%|*}
    # shellcheck disable=SC2254 # the pattern is meant to match
    case $1 in $_pat) return 0 ;; esac
    [ "$_rest" != "$_pat" ] || return 1
    _rest=${_rest#*|}
  done
}

# suite_selected NAME: whether SUITES selects the suite (all when unset) and SKIP_SUITES, the same
# kind of list, does not leave it out.
suite_selected() {
  if [ -n "${SKIP_SUITES:-}" ] && matches_any "$1" "$SKIP_SUITES"; then return 1; fi
  [ -n "${SUITES:-}" ] || return 0
  matches_any "$1" "$SUITES"
}

# run_suite NAME COMMAND...: runs it under the time limit, shows failures, adds its counts.
# SUITES, a shell pattern, runs only the suites whose names match it (SUITES='gpu: *' for the
# GPU-only checks, SUITES='run (cuda): *|corpus (cuda): *' for two kinds): a run that must fit
# a time slot, or one that looks into a failure. Unset, every suite runs.
run_suite() {
  name=$1
  shift
  suite_selected "$name" || return 0
  started=$(date +%s)
  # stdin is /dev/null: timeout runs the suite outside the terminal's foreground group, where a
  # read from the terminal would stop it
  timeout -k 10 "$LIMIT" "$@" </dev/null >"$log" 2>&1
  rc=$?
  took=$(($(date +%s) - started))
  _s=$(grep -c '^ok .*# *[Ss][Kk][Ii][Pp]' "$log")
  _p=$(($(grep -c '^ok ' "$log") - _s))
  _f=$(grep -c '^not ok ' "$log")
  # each failure with the indented detail lines that follow it
  awk '/^not ok /{show=1; print; next} show && /^    /{print; next} {show=0}' "$log"
  why=$(suite_problem "$name" "$rc" "$_p" "$_f" "$_s")
  if [ -n "$why" ]; then
    echo "$why" | sed 's/^/not ok - /'
    tail -n 20 "$log" | sed 's/^/    /'
    _f=$((_f + 1))
  fi
  # the seconds it took, so that a suite that grows slow is seen before the run outgrows CI's limit
  printf '%-28s %4d passed, %d failed, %d skipped  (%d s)\n' "$name" "$_p" "$_f" "$_s" "$took"
  passed=$((passed + _p))
  failed=$((failed + _f))
  skipped=$((skipped + _s))
}

# JOBS=N (N > 1, with SUITES and SKIP_SUITES unset; by default the number of cores): the suites
# in lanes, N lanes at once, each lane this script again with a SUITES or SKIP_SUITES list. One
# suite after another make test takes 36 minutes on a 2-core machine and make test-gpu over 25
# on a GPU machine; most suites run one thread and many wait on a terminal or a service, so two
# lanes on two cores take little more than half of that. The lanes keep apart what must not
# share the machine: the class suites, which make and use the same Unix accounts, run in one
# lane, and the GPU suites that time the GPU against itself run alone once every lane is done.
# The longest lanes come first, so that no long one starts last and runs alone; the last lane is
# every suite no other lane names, so none is missed. Each lane's lines are printed in turn,
# then the one total line. JOBS=1 runs every suite in this process, one after another.
run_lanes() {
  lanes=$(mktemp -d)
  flag=$([ "$GPU" = 1 ] && echo --gpu)
  # the lessons time the GPU too (lesson 16's streams must beat one stream): beside other lanes'
  # kernels their overlap vanished on an H100 and the reference solution failed its check
  timed='gpu: streams_overlap|gpu: a class challenge timed on the GPU|run (cuda): lessons *'
  n=0
  named=$timed
  lane() { # lane SUITES [SKIP_SUITES]
    n=$((n + 1))
    printf '%s' "$1" >"$lanes/$n.suites"
    printf '%s' "${2:-}" >"$lanes/$n.skip"
    named="$named|$1"
  }
  # the longest first (seconds one after another, under AddressSanitizer on a 2-core machine
  # without a GPU: class 600, the three in the second lane 565, the lessons' verification 550,
  # each part of typed 250 to 400, the other run suites 330, simulator 250, api 150, the rest 300)
  big='run (*): code_as_written|run (*): check_verdicts|run (*): capstone'
  lane 'class: *|gpu: classroom|gpu: grades a class can trust'
  lane "$big" "$timed"
  lane 'run (*): lessons *' "$timed"
  lane 'lessons typed at the prompt 0x'
  lane 'lessons typed at the prompt 1x'
  lane 'run (*): *|samples (*)|corpus (*): *' "$timed|run (*): lessons *|$big"
  lane 'simulator: *'
  lane 'lessons typed at the prompt 2x|answers typed at the prompt'
  lane 'api (*): *'
  if [ "$GPU" = 1 ]; then
    lane 'gpu: lessons typed at the prompt'
    lane 'gpu: compute-sanitizer|gpu: race checkers agree|gpu: sanitizers agree'
    lane 'gpu: *' "$named"
  fi
  lane '*' "$named" # the rest
  seq "$n" | xargs -P "$JOBS" -I{} sh -c 'SUITES=$(cat "$1/$2.suites") SKIP_SUITES=$(cat "$1/$2.skip") \
    JOBS=1 sh "$3" $4 >"$1/$2.log" 2>&1' lane "$lanes" {} "$0" "$flag"
  if [ "$GPU" = 1 ]; then
    SUITES=$timed JOBS=1 sh "$0" --gpu >"$lanes/timed.log" 2>&1
  fi
  for f in $(seq "$n") timed; do
    [ -f "$lanes/$f.log" ] || continue
    total=$(tail -n 1 "$lanes/$f.log")
    case $total in
      *" passed, "*" failed, "*" skipped")
        sed '$d' "$lanes/$f.log"
        set -- $total
        passed=$((passed + $1)) failed=$((failed + $3)) skipped=$((skipped + $5)) ;;
      *)
        cat "$lanes/$f.log"
        echo "not ok - lane $f ($(cat "$lanes/$f.suites" 2>/dev/null)) ended without its total line"
        failed=$((failed + 1)) ;;
    esac
  done
  rm -rf "$lanes"
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit
}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
if [ "$JOBS" -gt 1 ] && [ -z "${SUITES:-}${SKIP_SUITES:-}" ]; then run_lanes; fi

BACKEND=none
[ "$GPU" = 1 ] && BACKEND=cuda

for t in "$BUILD"/tests/*; do
  [ -x "$t" ] && run_suite "unit: $(basename "$t")" "$t"
done
# the simulator library's own tests, built with the sanitizer the rest of the run uses
[ -f sim/sim.mk ] && run_suite "sim library" make --no-print-directory -s SANITIZER="${SANITIZER:-}" sim-test
run_suite "lua library" "$BIN" tests/lua_unit/run.lua
run_suite "layers" sh tests/layers.sh
run_suite "architecture: its claims and recipes" sh tests/architecture.sh "$BIN"
run_suite "style" sh tests/style.sh "$BIN"
run_suite "sanitizer scan" sh tests/sanitizer_scan_test.sh
# The API without running kernels; without a GPU also on the simulator, which runs them.
for be in $BACKEND $([ "$GPU" = 1 ] || echo sim); do
  for f in tests/lua/*.lua; do
    case $f in */testlib.lua) continue ;; esac
    run_suite "api ($be): $(basename "$f" .lua)" "$BIN" --backend "$be" "$f"
  done
done
# Suites that run kernels: on the simulator without a GPU, on the GPU with one.
EXEC=sim
[ "$GPU" = 1 ] && EXEC=cuda
if "$BIN" --backend "$EXEC" -e 'os.exit(cuda.backend() == "'$EXEC'" and 0 or 1)' >/dev/null 2>&1; then
  for f in tests/exec/*.lua; do
    case $f in
      */lessons.lua)
        # every lesson verified is the longest suite (seven minutes on the simulator on a
        # 2-core machine): in parts by lesson number, which lanes share, each well inside the
        # limit under a sanitizer
        for part in 1-8 9-17 18-99; do
          run_suite "run ($EXEC): lessons $part" env LESSONS="$part" "$BIN" --backend "$EXEC" "$f"
        done ;;
      *) run_suite "run ($EXEC): $(basename "$f" .lua)" "$BIN" --backend "$EXEC" "$f" ;;
    esac
  done
  for f in tests/corpus/*.lua; do
    case $f in */corpus.lua | */digests.lua) continue ;; esac
    run_suite "corpus ($EXEC): $(basename "$f" .lua)" "$BIN" --backend "$EXEC" "$f"
  done
  # NVIDIA's cuda-samples kernels, as their host code launches them (tests/samples/README.md)
  run_suite "samples ($EXEC)" "$BIN" --backend "$EXEC" tests/samples/samples.lua
  for f in tests/simulator/*.lua; do
    case $f in */*_cases.lua) continue ;; esac # shared data, not a suite
    run_suite "simulator: $(basename "$f" .lua)" "$BIN" --backend sim "$f"
  done
else
  echo "not ok - the $EXEC backend is not available: kernels were not run"
  failed=$((failed + 1))
fi
run_suite "transcripts" sh tests/transcripts.sh "$BIN"
run_suite "console" sh tests/console.sh "$BIN"
run_suite "a run with no console" sh tests/run_alone.sh "$BIN"
run_suite "start-up and the compiler's child" sh tests/startup.sh "$BIN"
run_suite "debugger" sh tests/debugger.sh "$BIN"
run_suite "bug hunt" sh tests/debug_hunt.sh "$BIN"
run_suite "export built with nvcc" sh tests/export_nvcc.sh "$BIN"
run_suite "kernel cache" sh tests/cache.sh "$BIN"
run_suite "faults" sh tests/faults.sh "$BIN"
run_suite "README examples" sh tests/readme.sh "$BIN"
run_suite "output kept" sh tests/output_kept.sh "$BIN"
# in parts, as the lessons' verification is: whole, it ran past its limit under a sanitizer
for part in 0 1 2; do
  run_suite "lessons typed at the prompt ${part}x" env TYPED_LESSONS="$part[0-9]" TYPED_ANSWERS=0 \
    sh tests/lessons_typed.sh "$BIN"
done
run_suite "answers typed at the prompt" env TYPED_LESSONS=none sh tests/lessons_typed.sh "$BIN"
run_suite "reliability" sh tests/reliability.sh "$BIN"
# Classroom: the class folder as several Unix accounts (as root), the report's page in headless
# Chromium, whole classes of scripted learners, grading, and grading as a Slurm array job.
run_suite "class: accounts" sh tests/class_accounts.sh "$BIN"
run_suite "class: report page" sh tests/class_report_html.sh "$BIN"
run_suite "class: command line" sh tests/class/cli.sh "$BIN"
run_suite "class: sessions" sh tests/class/sessions.sh "$BIN"
run_suite "class: grading" sh tests/class/grading.sh "$BIN"
run_suite "class: grades that do not depend on the load" sh tests/class/load.sh "$BIN"
run_suite "class: gradebook" sh tests/class/gradebook.sh "$BIN"
run_suite "class: published results" sh tests/class/feedback.sh "$BIN"
run_suite "class: challenge" sh tests/class/challenge.sh "$BIN"
run_suite "class: srun --pty on Slurm" sh tests/class/srun.sh "$BIN"
run_suite "class: junk in records/" sh tests/class/junk.sh "$BIN"
run_suite "class: grades a class can trust" sh tests/class/trust.sh "$BIN"
run_suite "class: graded as it passed at the prompt" sh tests/class/as_live.sh "$BIN"
run_suite "class: slurm" sh tests/slurm/smoke.sh
if [ "$GPU" = 1 ]; then
  for f in tests/gpu/*.lua; do
    run_suite "gpu: $(basename "$f" .lua)" "$BIN" --gpu "$f"
  done
  run_suite "gpu: recovery" sh tests/gpu/recovery.sh "$BIN"
  run_suite "gpu: output kept at the end" sh tests/gpu/output_kept_gpu.sh "$BIN"
  run_suite "gpu: debugger" sh tests/gpu/debugger_gpu.sh "$BIN"
  run_suite "gpu: an exported session run with nvcc" sh tests/gpu/export_gpu.sh "$BIN"
  run_suite "gpu: classroom" sh tests/gpu/class_gpu.sh "$BIN"
  run_suite "gpu: grades a class can trust" env CLASS_BACKEND=gpu sh tests/class/trust.sh "$BIN"
  run_suite "gpu: a class challenge timed on the GPU" env CLASS_BACKEND=gpu sh tests/class/challenge.sh "$BIN"
  run_suite "gpu: lessons typed at the prompt" env TYPED_BACKEND=cuda sh tests/lessons_typed.sh "$BIN"
  run_suite "gpu: compute-sanitizer" sh tests/gpu/sanitize.sh "$BIN" "${SANITIZE_LOGS:-$scratch}"
  run_suite "gpu: race checkers agree" sh tests/gpu/race_agree.sh "$BIN" "${SANITIZE_LOGS:-$scratch}"
  run_suite "gpu: sanitizers agree" sh tests/gpu/sanitize_compare.sh "$BIN" "${SANITIZE_LOGS:-$scratch}"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
