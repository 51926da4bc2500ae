#!/bin/sh
# bench/class/admit.sh BIN K... : a room logging in at once. For each K, K learners (accounts
# clbench001..., as in load.sh) start `cudalab --class DIR` at the same moment, on a class with
# backend = "auto" and no gpu_sessions_max, so the count of GPU sessions is the GPU's own
# (gpu_slots_default: its memory, up to 60 contexts). Each makes an array (its CUDA context) and
# holds it until all have started (bench/class/admit.lua). Prints, per K: sessions on the GPU,
# sessions sent to the simulator by admission (the class's message: "all N GPU sessions of this
# class are taken"), sessions that were admitted but could not make a context (must be 0: that is
# the race admission is there to prevent), errors, and the time until all had started.
#   GPU_SESSIONS=N: class.lua's gpu_sessions_max instead of the GPU's own count.
# Needs root (it creates the accounts and removes them at the end) and a GPU.
set -u
BIN=$(readlink -f "${1:?usage: admit.sh BIN K...}")
shift
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then echo "class_admit: needs root to create the learners' accounts" >&2; exit 1; fi
base=$(mktemp -d /tmp/cladmit.XXXXXX)
chmod 755 "$base"
maxk=0
for k in "$@"; do [ "$k" -gt "$maxk" ] && maxk=$k; done
users=""
cleanup() { for u in $users; do userdel "$u" 2>/dev/null; done; rm -rf "$base"; }
trap cleanup EXIT
i=1
while [ $i -le "$maxk" ]; do
  u=$(printf clbench%03d $i)
  id "$u" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$u" || exit 1
  users="$users $u"
  mkdir -p "$base/home/$u" && chown "$u" "$base/home/$u" && chmod 700 "$base/home/$u"
  i=$((i + 1))
done
echo "| learners | on the GPU | sent to the simulator | admitted, no context | errors | all started |"
echo "|---|---|---|---|---|---|"
for K in "$@"; do
  cls=$base/class-$K
  "$BIN" --class-init "$cls" --title "admit $K" >/dev/null || exit 1
  extra=""
  [ -n "${GPU_SESSIONS:-}" ] && extra="gpu_sessions_max = $GPU_SESSIONS,"
  cat >"$cls/class.lua" <<C
return { title = "admit $K", lessons = {1}, backend = "auto", memory_per_learner = "1 GiB", $extra }
C
  out=$base/out-$K; mkdir -p "$out"
  ready=$base/ready-$K; mkdir -p "$ready"; chmod 1777 "$ready"
  go=$base/go-$K; mkfifo "$go"; chmod 644 "$go"
  t0=$(date +%s.%N)
  pids=""
  i=1
  while [ $i -le "$K" ]; do
    u=$(printf clbench%03d $i)
    runuser -u "$u" -- env HOME="$base/home/$u" XDG_STATE_HOME="$base/home/$u/state" \
      XDG_CACHE_HOME="$base/home/$u/cache" XDG_DATA_HOME="$base/home/$u/data" \
      timeout "${SESSION_LIMIT:-600}" "$BIN" --class "$cls" "$here/admit.lua" "$ready" "$go" \
      >"$out/$i.txt" 2>"$out/$i.err" &
    pids="$pids $!"
    i=$((i + 1))
  done
  alive() { for p in $pids; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
  while [ "$(ls "$ready" | wc -l)" -lt "$K" ] && alive; do sleep 0.1; done
  started=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f s", b - a}')
  exec 4<>"$go"; sleep 2; exec 4>&-
  wait
  gpu=$(grep -l '^backend: cuda' "$out"/*.txt 2>/dev/null | wc -l)
  sent=$(grep -l 'GPU sessions of this class are taken' "$out"/*.txt "$out"/*.err 2>/dev/null |
    sed 's/\.\(txt\|err\)$//' | sort -u | wc -l)
  nocontext=$(grep -l 'is not usable' "$out"/*.txt "$out"/*.err 2>/dev/null |
    sed 's/\.\(txt\|err\)$//' | sort -u | wc -l)
  errors=$(grep -l '^error: ' "$out"/*.txt 2>/dev/null | wc -l)
  echo "| $K | $gpu | $sent | $nocontext | $errors | $started |"
  why=$(cat "$out"/*.txt "$out"/*.err | grep -i 'class:\|error' | sort | uniq -c | sort -rn | head -n 3)
  [ -n "$why" ] && echo "class_admit: K=$K, the most frequent messages:" >&2 && echo "$why" >&2
done
