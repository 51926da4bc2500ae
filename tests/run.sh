#!/bin/sh
# tests/run.sh [--gpu]: runs every suite and ends with one line "N passed, M failed".
# Each suite prints "ok - name" / "not ok - name: why" lines; this script counts them. A suite
# that exits non-zero without a "not ok" line counts as one failure, so a crash never passes.
#   without --gpu: what needs no GPU (the backend is forced to "none" or the simulator)
#   with --gpu:    the same API suites on the GPU, plus the GPU-only checks in tests/gpu/
BUILD=${BUILD:-build}
BIN=$BUILD/cudalab
GPU=0
[ "$1" = "--gpu" ] && GPU=1
passed=0
failed=0
# Every suite gets a fresh cache and state folder, never the user's own.
scratch=$(mktemp -d)
export XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state"
log=$(mktemp)
trap 'rm -rf "$log" "$scratch"' EXIT

# run_suite NAME COMMAND...: runs it, shows failures, adds its counts.
run_suite() {
  name=$1
  shift
  "$@" >"$log" 2>&1
  rc=$?
  p=$(grep -c '^ok ' "$log")
  f=$(grep -c '^not ok ' "$log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    echo "not ok - $name exited with status $rc"
    tail -n 20 "$log" | sed 's/^/    /'
  fi
  # each failure with the indented detail lines that follow it
  awk '/^not ok /{show=1; print; next} show && /^    /{print; next} {show=0}' "$log"
  printf '%-28s %4d passed, %d failed\n' "$name" "$p" "$f"
  passed=$((passed + p))
  failed=$((failed + f))
}

BACKEND=none
[ "$GPU" = 1 ] && BACKEND=cuda

for t in "$BUILD"/tests/*; do
  [ -x "$t" ] && run_suite "unit: $(basename "$t")" "$t"
done
[ -f sim/sim.mk ] && run_suite "sim library" make --no-print-directory -s sim-test
run_suite "lua library" "$BIN" tests/lua_unit/run.lua
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
    run_suite "run ($EXEC): $(basename "$f" .lua)" "$BIN" --backend "$EXEC" "$f"
  done
  for f in tests/corpus/*.lua; do
    case $f in */corpus.lua | */digests.lua) continue ;; esac
    run_suite "corpus ($EXEC): $(basename "$f" .lua)" "$BIN" --backend "$EXEC" "$f"
  done
  for f in tests/simulator/*.lua; do
    run_suite "simulator: $(basename "$f" .lua)" "$BIN" --backend sim "$f"
  done
else
  echo "not ok - the $EXEC backend is not available: kernels were not run"
  failed=$((failed + 1))
fi
run_suite "transcripts" sh tests/transcripts.sh "$BIN"
run_suite "console" sh tests/console.sh "$BIN"
run_suite "kernel cache" sh tests/cache.sh "$BIN"
run_suite "faults" sh tests/faults.sh "$BIN"
run_suite "README examples" sh tests/readme.sh "$BIN"
if [ "$GPU" = 1 ]; then
  for f in tests/gpu/*.lua; do
    run_suite "gpu: $(basename "$f" .lua)" "$BIN" --gpu "$f"
  done
  run_suite "gpu: recovery" sh tests/gpu/recovery.sh "$BIN"
  run_suite "gpu: compute-sanitizer" sh tests/gpu/sanitize.sh "$BIN" "${SANITIZE_LOGS:-$scratch}"
  run_suite "gpu: race checkers agree" sh tests/gpu/race_agree.sh "$BIN" "${SANITIZE_LOGS:-$scratch}"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
