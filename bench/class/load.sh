#!/bin/sh
# bench/class/load.sh BIN K... : the classroom load benchmark. For each K, K scripted learners
# (bench/class/learner.lua), each a Unix account of its own, join one class at once, do its
# warm-up task (their records go to the class folder) and then make 300 steps each, a launch of
# a small kernel and a wait for it. Prints, per K: the backend, the GPU memory per session (from
# nvidia-smi, on a GPU), the median and worst 99th percentile of a step's time, and the records
# lost (learners whose passed task is not in the class folder afterwards: must be 0).
# "set-up" is the time from the start of the sessions until all of them had joined, passed the task
# and were ready to step (they then start their steps together).
#   CLASS_BACKEND=sim|auto (default auto)  STEPS=300  CLASS_MPS=1: run under an MPS daemon
#   started here with its own pipe and log folders, and stopped afterwards.
# Needs root (it creates the accounts clbench001... and removes them at the end).
set -u
BIN=$(readlink -f "${1:?usage: load.sh BIN K...}")
shift
STEPS=${STEPS:-300}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ "$(id -u)" != 0 ]; then echo "class_load: needs root to create the learners' accounts" >&2; exit 1; fi
base=$(mktemp -d /tmp/clbench.XXXXXX)
chmod 755 "$base"
maxk=0
for k in "$@"; do [ "$k" -gt "$maxk" ] && maxk=$k; done
users=""
cleanup() {
  [ -n "${mps_pipe:-}" ] && CUDA_MPS_PIPE_DIRECTORY=$mps_pipe nvidia-cuda-mps-control -q 2>/dev/null <<Q
quit
Q
  for u in $users; do userdel "$u" 2>/dev/null; done
  rm -rf "$base"
}
trap cleanup EXIT
i=1
while [ $i -le "$maxk" ]; do
  u=$(printf clbench%03d $i)
  id "$u" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$u" || exit 1
  users="$users $u"
  mkdir -p "$base/home/$u" && chown "$u" "$base/home/$u" && chmod 700 "$base/home/$u"
  i=$((i + 1))
done
if [ "${CLASS_MPS:-0}" = 1 ]; then
  mps_pipe=$base/mps-pipe; mkdir -p "$mps_pipe" "$base/mps-log"; chmod 755 "$mps_pipe"
  CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$base/mps-log nvidia-cuda-mps-control -d ||
    { echo "class_load: cannot start an MPS daemon" >&2; exit 1; }
  export CUDA_MPS_PIPE_DIRECTORY=$mps_pipe
fi
gpu_mem() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null; }
echo "| learners | backend | GPU memory per session | step p50 | worst step p99 | records lost | set-up |"
echo "|---|---|---|---|---|---|---|"
for K in "$@"; do
  cls=$base/class-$K
  "$BIN" --class-init "$cls" --title "load $K" >/dev/null || exit 1
  cp "$root/tests/class/50-class-warmup.md" "$cls/lessons/"
  cat >"$cls/class.lua" <<C
return { title = "load $K", lessons = {1}, lesson_dirs = {"lessons"},
         backend = "${CLASS_BACKEND:-auto}", memory_per_learner = "1 GiB", kernel_time_limit = "2 s" }
C
  out=$base/out-$K; mkdir -p "$out"
  # The start line: each learner, once set up, leaves a file in ready/ and opens the FIFO go to
  # read it, which blocks until this script opens it; so every session's steps start together.
  ready=$base/ready-$K; mkdir -p "$ready"; chmod 1777 "$ready"
  go=$base/go-$K; mkfifo "$go"; chmod 644 "$go"
  pids=""
  i=1
  while [ $i -le "$K" ]; do
    u=$(printf clbench%03d $i)
    runuser -u "$u" -- env HOME="$base/home/$u" XDG_STATE_HOME="$base/home/$u/state" \
      XDG_CACHE_HOME="$base/home/$u/cache" XDG_DATA_HOME="$base/home/$u/data" \
      timeout "${SESSION_LIMIT:-600}" "$BIN" --class "$cls" "$here/learner.lua" "$STEPS" "$ready" "$go" \
      >"$out/$i.txt" 2>"$out/$i.err" &
    pids="$pids $!"
    i=$((i + 1))
  done
  alive() { for p in $pids; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
  # all ready (or gone), within 5 minutes
  t0=$(date +%s)
  while [ "$(ls "$ready" | wc -l)" -lt "$K" ] && alive && [ $(($(date +%s) - t0)) -lt "${SETUP_LIMIT:-300}" ]; do
    sleep 0.2
  done
  setup_s=$(($(date +%s) - t0))
  exec 4<>"$go"; sleep 2; exec 4>&-
  # GPU memory per session: sampled while the steps run (the most sessions seen at once)
  : >"$base/mem-$K"
  while alive; do
    if command -v nvidia-smi >/dev/null 2>&1; then
      s=$(gpu_mem); n=$(echo "$s" | grep -c .)
      seen=$(head -n 1 "$base/mem-$K")
      [ "$n" -gt "${seen:-0}" ] && { echo "$n"; echo "$s"; } >"$base/mem-$K"
    fi
    sleep 0.5
  done
  wait
  backend=$(sed -n 's/^backend: //p' "$out"/*.txt | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
  mem=$(tail -n +2 "$base/mem-$K" | awk -F', *' 'NF == 2 {s += $2; n++} END {if (n) printf "%.0f MiB (%d sessions seen)", s / n, n; else print "none on the GPU"}')
  # the median of every step of every session, and the worst session's 99th percentile
  worst=0; runs=0
  : >"$base/all-$K"
  for f in "$out"/*.txt; do
    sed -n 's/^steps: //p' "$f" | tr ',' '\n' | grep . >"$base/one" || continue
    runs=$((runs + 1))
    cat "$base/one" >>"$base/all-$K"
    p=$(sort -g "$base/one" | awk '{v[NR] = $1} END {i = int(0.99 * NR + 0.5); if (i < 1) i = 1; print v[i]}')
    worst=$(awk -v a="$worst" -v b="$p" 'BEGIN {print (b > a) ? b : a}')
  done
  p50=$(sort -g "$base/all-$K" | awk '{v[NR] = $1} END {if (NR) printf "%.3g ms", v[int(NR / 2 + 0.5)]; else print "n/a"}')
  p99=$(awk -v w="$worst" 'BEGIN {printf "%.3g ms", w}')
  failed=$((K - runs))
  lost=$(cd "$root" && "$BIN" --backend none -e "
    local class_load = require 'class_load'
    local cls = assert(class_load.class('$cls'))
    local recs = assert(class_load.records(cls))
    local n = 0
    for _, r in ipairs(recs) do
      local t = r.tasks['50-class-warmup/1']
      if t and t.passed and t.submission then n = n + 1 end
    end
    print($K - n)")
  why=$(cat "$out"/*.err | grep -v '^ *$' | sort | uniq -c | sort -rn | head -n 1 | sed 's/^ *//')
  echo "| $K | $backend | $mem | $p50 | $p99 | $lost | ${setup_s} s |"
  [ -n "$why" ] && echo "class_load: K=$K, most frequent message ($why)" >&2
  if [ "$failed" != 0 ]; then
    echo "class_load: $failed of $K sessions made no steps; the first error:" >&2
    cat "$out"/*.err | head -n 5 >&2
  fi
done
