#!/bin/sh
# bench/debugger_cond.sh BIN: what a conditional breakpoint on a hot line costs under k:debug,
# as a ratio to a plain launch of the same kernel on the simulator (wall time of each process,
# less that of a process that compiles the kernel and launches nothing); then less that of a
# debugged launch quit at its first stop, which leaves what the launch itself costs. The
# condition never holds, so the launch runs to its end: every turn of the loop evaluates it for
# 32 lanes.
# Each time is the least of REPS (3) runs. Prints the three times and the ratios.
BIN=${1:-build/cudalab}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache" XDG_STATE_HOME="$tmp/state"
cat >"$tmp/hot.cu" <<'EOF'
__global__ void hot(float *a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < n; k++) {
    s += a[i] * k;
  }
  a[i] = s;
}
EOF
SETUP="k = cuda.kernel('$tmp/hot.cu') a = cuda.ones(1024)"
N=${N:-400}
now() { date +%s.%N; }
REPS=${REPS:-3}
run() { # seconds of wall time of: BIN --sim -e LUA, fed STDIN; the least of REPS runs, since
  # other work on a shared machine only ever adds time
  best=
  for _ in $(seq "$REPS"); do
    t0=$(now); printf "$2" | "$BIN" --sim -e "$SETUP" -e "$1" >/dev/null 2>&1; t1=$(now)
    t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}
run "k:debug{1, 32}(a, 1)" 'continue\n' >/dev/null # both builds into the kernel cache
base=$(run "k:debug" "")
plain=$(run "for r = 1, 20 do k[{4, 256}](a, $N) end cuda.sync()" "")
free=$(run "k:debug{4, 256}(a, $N)" 'continue\n')
cond=$(run "k:debug{4, 256}(a, $N)" 'break 6 if s < 0\ncontinue\n')
setup=$(run "k:debug{4, 256}(a, $N)" 'quit\n') # the -G build loaded, nothing run
awk -v b="$base" -v p="$plain" -v f="$free" -v c="$cond" -v q="$setup" 'BEGIN {
  pl = (p - b) / 20; if (pl <= 0) pl = 1e-3
  printf "plain launch %.4f s; k:debug, no breakpoint %.3f s (%.1fx); conditional breakpoint on the hot line %.3f s (%.0fx)\n",
    pl, f - b, (f - b) / pl, c - b, (c - b) / pl
  printf "the same less the debugger'"'"'s set-up (the -G build loaded, %.3f s): no breakpoint %.3f s (%.1fx), conditional breakpoint %.3f s (%.1fx)\n",
    q - b, f - q, (f - q) / pl, c - q, (c - q) / pl }'
