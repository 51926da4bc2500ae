#!/bin/sh
# bench/sim_ab.sh BASE [ROUNDS]: the simulator's own speed (build/sim/bench_speed: thread
# instructions per second of a learner's default launch, on a vector add and a 16x16 tiled
# matmul, 1 and 2 host threads) for this tree and for BASE, a git revision or the folder of
# another checkout.
#
# Two `make bench` runs are no way to compare commits: on a shared host the rates move by a third
# from one run to the next. Here the two builds run in interleaved rounds, pinned to the same
# cores, so whatever slows the machine slows both; the table gives each one's best and median.
# Both sides run this tree's tests/sim/bench_speed.c, built against each side's simulator (its
# library and headers), so that they measure the same launches even when BASE's copy of the
# program measured something else (before it measured a learner's default launch, it measured
# the bare simulator).
set -e
base=${1:?usage: bench/sim_ab.sh BASE-REVISION-OR-FOLDER [ROUNDS]}
rounds=${2:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -d "$base" ]; then
  basedir=$base
else
  git archive "$base" | tar -x -C "$work"
  basedir=$work
fi
jobs=$(nproc)
( cd "$basedir" && make -s -j"$jobs" -f sim/sim.mk build/sim/libcudalab_sim.a >/dev/null )
make -s -j"$jobs" -f sim/sim.mk build/sim/bench_speed >/dev/null
# sim.mk's recipe for bench_speed, with BASE's headers and library
cuda=${CUDA_HOME:-/usr/local/cuda}
${CC:-cc} -std=c11 -O2 -g -D_GNU_SOURCE -pthread -I"$basedir/sim" -I"$basedir/include" \
  -Itests/sim tests/sim/bench_speed.c tests/sim/nvrtc_util.c "$basedir/build/sim/libcudalab_sim.a" \
  -I"$cuda/include" -L"$cuda/lib64" -lnvrtc -Wl,-rpath,"$cuda/lib64" -lm -pthread \
  -o "$work/bench_base"
# Two cores the same for both builds: the last two, away from whatever the system runs on core 0.
last=$(($(nproc) - 1))
one=$last
two=$((last > 0 ? last - 1 : 0)),$last
for i in $(seq "$rounds"); do
  for side in base this; do
    bin=build/sim/bench_speed
    [ $side = base ] && bin=$work/bench_base
    taskset -c "$one" "$bin" 5 both 1 1 | sed "s/^/$side /"
    taskset -c "$two" "$bin" 5 both 2 2 | sed "s/^/$side /"
  done
done > "$work/runs"
# "this vadd threads=1 best 1.5e+09/s (0.06 s)" -> best and median of $5 per side, kernel, threads
echo "| build | kernel | host threads | best /s | median /s | rounds |"
echo "|---|---|---|---|---|---|"
sort -k2,2 -k3,3 -k1,1 "$work/runs" | awk '
  { key = $1 " | " $2 " | " substr($3, 9); v = $5 + 0
    n[key]++; vals[key, n[key]] = v; if (v > best[key]) best[key] = v
    if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  END {
    for (i = 1; i <= k; i++) {
      key = order[i]; m = n[key]
      for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++)
        if (vals[key, b] < vals[key, a]) { t = vals[key, a]; vals[key, a] = vals[key, b]; vals[key, b] = t }
      printf "| %s | %.3g | %.3g | %d |\n", key, best[key], vals[key, int((m + 1) / 2)], m
    }
  }'
