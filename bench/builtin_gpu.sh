#!/bin/sh
# bench/builtin_gpu.sh: make bench's builtin_bw_ratio rows alone, on a GPU (make bench-builtin
# builds what it needs and runs it). Each built-in operation on 1 GiB, in GB/s of memory
# touched, beside a device-to-device copy of the same bytes from plain C (bench/launch_c.c),
# measured ROUNDS times (default 3) in turn; each ratio is the median over the rounds. Every
# figure is printed as "name: value unit", as bench/run.sh prints them; the goal is 0.95 or more.
BUILD=${BUILD:-build}
BIN=$BUILD/cudalab
ROUNDS=${ROUNDS:-3}
OPS="fill arange rand copy compare compare_rounded"
if ! "$BIN" -e 'os.exit(cuda.backend() == "cuda" and 0 or 1)' >/dev/null 2>&1; then
  echo "bench/builtin_gpu.sh needs a GPU: $BIN does not find one" >&2
  exit 1
fi
out=$(mktemp)
scratch=$(mktemp -d)
trap 'rm -rf "$out" "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache" # the built-in kernels as this build compiles them

for r in $(seq "$ROUNDS"); do
  "$BUILD/bench/launch_c" 1000 | grep '^c_d2d_copy_GBps:' | sed "s/^/round $r /"
  "$BIN" bench/bench.lua builtin | sed "s/^/round $r /"
done | tee "$out"

# median VALUES...: the middle one (the lower of the two middle ones for an even count)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# per_round NAME: NAME's value in each round
per_round() { awk -v k="$1:" '$3 == k { print $4 }' "$out"; }
anchor=$(per_round c_d2d_copy_GBps | tr '\n' ' ')
worst=
for op in $OPS; do
  set -- $anchor
  ratios=
  for v in $(per_round "${op}_GBps"); do
    [ $# -gt 0 ] || break
    ratios="$ratios $(awk -v a="$v" -v b="$1" 'BEGIN { if (b > 0) printf "%.3f", a / b }')"
    shift
  done
  m=$(median $ratios)
  echo "builtin_bw_ratio_$op: $m x (GB/s: $(per_round "${op}_GBps" | tr '\n' ' ')against$(printf ' %s' $anchor))"
  if awk -v m="$m" 'BEGIN { exit !(m < 0.95) }'; then worst="$worst $op"; fi
done
if [ -n "$worst" ]; then echo "below 0.95:$worst"; else echo "every built-in operation at 0.95 or more"; fi
