#!/bin/sh
# bench/sim_ab.sh BASE [ROUNDS]: the simulator's own speed (build/sim/bench_speed: thread
# instructions per second on a vector add and a 16x16 tiled matmul, 1 and 2 host threads) for
# this tree and for BASE, a git revision or the folder of another checkout.
#
# Two `make bench` runs are no way to compare commits: on a shared host the rates move by a third
# from one run to the next. Here the two builds run in interleaved rounds, pinned to the same
# cores, so whatever slows the machine slows both; the table gives each one's best and median.
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
( cd "$basedir" && make -s -j"$jobs" -f sim/sim.mk build/sim/bench_speed >/dev/null )
make -s -j"$jobs" -f sim/sim.mk build/sim/bench_speed >/dev/null
# Two cores the same for both builds: the last two, away from whatever the system runs on core 0.
last=$(($(nproc) - 1))
one=$last
two=$((last > 0 ? last - 1 : 0)),$last
for i in $(seq "$rounds"); do
  for side in base this; do
    bin=build/sim/bench_speed
    [ $side = base ] && bin=$basedir/build/sim/bench_speed
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
