#!/bin/sh
# tests/gpu/sanitize.sh BIN OUTDIR: the GPU kernels under compute-sanitizer: memcheck over the
# workloads (every kernel in kernels/ and the built-in ones), racecheck over the kernels that
# use shared memory. Prints ok / not ok lines; full logs go to OUTDIR.
BIN=$1
OUT=${2:-.}
. tests/shlib.sh
if ! command -v compute-sanitizer >/dev/null 2>&1; then
  plan 1; echo "ok - # SKIP compute-sanitizer is not installed"; exit 0
fi
plan 2
export CUDALAB_CLEAN_EXIT=1
# API errors are left out: the workloads provoke out-of-memory on purpose (and recover).
compute-sanitizer --tool memcheck --target-processes all --leak-check full --report-api-errors no \
  --error-exitcode 9 \
  "$BIN" --gpu tests/exec/workloads.lua >"$OUT/memcheck.log" 2>&1
rc=$?
grep -q "ERROR SUMMARY: 0 errors" "$OUT/memcheck.log" && [ $rc = 0 ] && ok "memcheck: no errors in the workloads" ||
  { bad "memcheck (exit $rc)"; grep -E "ERROR SUMMARY|Invalid|not ok" "$OUT/memcheck.log" | head -n 10 | sed 's/^/    /'; }
cat >"$tmp/race.lua" <<'LUA'
local m, r = cuda.module("matmul.cu"), cuda.module("reduce.cu")
local n = 128
local A, B, C = cuda.rand(n * n, "f32", 1), cuda.rand(n * n, "f32", 2), cuda.array(n * n)
m.matmul_tiled[{{n // 16, n // 16}, {16, 16}}](A, B, C, n)
for pad = 0, 1 do cuda.kernel("transpose.cu")[{1, {32, 32}}](cuda.arange(1024), cuda.array(1024), pad) end
r.reduce_shared[{64, 256, shared = 1024}](cuda.rand(16384, "f32", 3), cuda.array(1), 16384)
cuda.sync()
print("race kernels ran")
LUA
compute-sanitizer --tool racecheck --target-processes all --error-exitcode 9 \
  "$BIN" --gpu "$tmp/race.lua" >"$OUT/racecheck.log" 2>&1
rc=$?
grep -q "RACECHECK SUMMARY: 0 hazards" "$OUT/racecheck.log" && [ $rc = 0 ] && ok "racecheck: no hazards in the shared-memory kernels" ||
  { bad "racecheck (exit $rc)"; grep -E "SUMMARY|Error|hazard" "$OUT/racecheck.log" | head -n 10 | sed 's/^/    /'; }
exit $status
