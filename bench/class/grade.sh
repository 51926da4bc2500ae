#!/bin/sh
# bench/class/grade.sh BIN [LEARNERS]: grading throughput, in learner-tasks per second, of
# cudalab --grade on a class of LEARNERS scripted learners (default 24) who each passed the
# class's own task (tests/class/50-class-warmup.md), graded with -j 1, -j 2 and, where a
# single-node Slurm can be started here (tests/slurm/lib.sh, as root), as an array job of
# 2 shards. Prints "grade_tasks_per_s_j1: X /s" lines; all three grade the same tasks, so the
# -j 1 figure is the anchor of the others. Needs root (one Unix account per learner).
set -u
BIN=$(readlink -f "${1:?usage: grade.sh BIN [LEARNERS]}")
N=${2:-24}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ "$(id -u)" != 0 ]; then echo "grade_bench: needs root (one account per learner); skipped" >&2; exit 0; fi
base=$(mktemp -d /tmp/clgrade.XXXXXX)
chmod 755 "$base"
users=""
slurm_dir=""
. "$root/tests/slurm/lib.sh"
cleanup() {
  [ -n "$slurm_dir" ] && slurm_stop "$slurm_dir" >/dev/null 2>&1
  for u in $users; do userdel "$u" 2>/dev/null; done
  rm -rf "$base"
}
trap cleanup EXIT
cls=$base/class
"$BIN" --class-init "$cls" --title "grading bench" >/dev/null || exit 1
cp "$root/tests/class/50-class-warmup.md" "$cls/lessons/"
cat >"$cls/class.lua" <<'C'
return { title = "grading bench", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim" }
C
i=1
while [ "$i" -le "$N" ]; do
  u=$(printf clgb%03d "$i")
  id "$u" >/dev/null 2>&1 || useradd -M -N -s /bin/sh "$u" || exit 1
  users="$users $u"
  mkdir -p "$base/home/$u" && chown "$u" "$base/home/$u"
  runuser -u "$u" -- env HOME="$base/home/$u" XDG_STATE_HOME="$base/home/$u/s" \
    XDG_CACHE_HOME="$base/home/$u/c" XDG_DATA_HOME="$base/home/$u/d" \
    "$BIN" --class "$cls" "$here/learner.lua" 1 >/dev/null 2>&1 &
  [ $((i % 8)) = 0 ] && wait
  i=$((i + 1))
done
wait
cd "$base" || exit 1
# rate SECONDS: learner-tasks per second
rate() { awk -v n="$N" -v s="$1" 'BEGIN { printf "%.3g", n / s }'; }
secs() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); awk -v d=$((e - s)) 'BEGIN { printf "%.3f", d / 1e9 }'; }
t1=$(secs "$BIN" --grade "$cls" -j 1 --quiet)
t2=$(secs "$BIN" --grade "$cls" -j 2 --quiet)
echo "grade_tasks_per_s_j1: $(rate "$t1") /s ($N learner-tasks in $t1 s)"
echo "grade_tasks_per_s_j2: $(rate "$t2") /s ($N learner-tasks in $t2 s)"
if why=$(slurm_available); then
  slurm_dir=$base/slurm; mkdir -p "$slurm_dir"
  if slurm_start "$slurm_dir" >/dev/null 2>&1; then
    ts=$(secs "$BIN" --grade "$cls" --slurm --wait --shards 2 --cpus 1 --work "$base/job")
    echo "grade_tasks_per_s_slurm: $(rate "$ts") /s ($N learner-tasks in $ts s, 2 array tasks, submission to merged table)"
  else
    echo "grade_bench: a single-node Slurm did not start here" >&2
  fi
else
  echo "grade_bench: no Slurm array measured: $why" >&2
fi
