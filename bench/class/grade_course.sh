#!/bin/sh
# bench/class/grade_course.sh BIN [LEARNERS] [LESSONS]: the time cudalab --grade takes for a class
# of LEARNERS (default 40) who each passed every task of the built-in LESSONS (default "1 2 3 5",
# 7 tasks) by typing the solutions at the prompt as a learner does (tests/lessons/typed_plan.lua
# says what), on the simulator, graded with -j 2: as root (each learner's work as their own
# account) and, where the kernel has Landlock, as the instructor, at the default time limit. Then
# what one hostile learner costs: a learner whose every task is a loop the Lua hook cannot stop,
# graded alone, against a time limit of 5 s per task. Prints "grade_course_root_j2: S s (N learner-tasks)"
# lines. Needs root (one Unix account per learner). PREFIX (default clcb) starts every account's
# name, so that two runs (two builds compared) can go at once; ROOT_ONLY=1 stops after grading as
# root.
set -u
P=${PREFIX:-clcb}
BIN=$(readlink -f "${1:?usage: grade_course.sh BIN [LEARNERS] [LESSONS]}")
N=${2:-40}
LESSONS=${3:-1 2 3 5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ "$(id -u)" != 0 ]; then echo "grade_course: needs root (one account per learner); skipped" >&2; exit 0; fi
base=$(mktemp -d /tmp/clcourse.XXXXXX)
chmod 755 "$base"
users=""
cleanup() {
  for u in $users; do userdel "$u" 2>/dev/null; done
  rm -rf "$base"
}
[ -n "${KEEP:-}" ] && echo "kept: $base" >&2 && cleanup() { :; }
trap cleanup EXIT
mkuser() { # mkuser NAME [private]
  if [ -n "${2:-}" ]; then g=-U; else g=-N; fi
  id "$1" >/dev/null 2>&1 || useradd -M $g -s /bin/sh "$1" || exit 1
  users="$users $1"
  mkdir -p "$base/home/$1" && chown "$1" "$base/home/$1"
}
as() { u=$1; shift; runuser -u "$u" -- env HOME="$base/home/$u" XDG_STATE_HOME="$base/home/$u/s" \
  XDG_CACHE_HOME="$base/home/$u/c" XDG_DATA_HOME="$base/home/$u/d" "$@"; }
mkuser ${P}_prof private
mkdir "$base/courses" && chown ${P}_prof "$base/courses"
cls=$base/courses/class
as ${P}_prof "$BIN" --class-init "$cls" --title "grading bench" >/dev/null || exit 1
list=$(echo "$LESSONS" | tr ' ' ',')
as ${P}_prof sh -c "cat >'$cls/class.lua'" <<C
return { title = "grading bench", lessons = {$list}, backend = "sim" }
C
# what a learner types: every lesson's solutions, one after another; edit() puts the reference
mkdir -p "$base/plan/solutions"
tasks=0
for n in $LESSONS; do
  f=$(ls "$root"/lessons/$(printf %02d "$n")-*.md)
  d=$base/plan/$n
  "$BIN" --backend none "$root/tests/lessons/typed_plan.lua" "$f" "$d" >/dev/null || exit 1
  cat "$d/lines" >>"$base/plan/lines"
  cp "$d"/solutions/* "$base/plan/solutions/" 2>/dev/null
  tasks=$((tasks + $(cat "$d/tasks")))
done
chmod -R a+rX "$base/plan"
printf '#!/bin/sh\ncp "%s/plan/solutions/$(basename "$1")" "$1"\n' "$base" >"$base/editor"
chmod 755 "$base/editor"
i=1
while [ "$i" -le "$N" ]; do
  u=$(printf "${P}%03d" "$i")
  mkuser "$u"
  as "$u" env EDITOR="$base/editor" VISUAL= "$BIN" --class "$cls" <"$base/plan/lines" \
    >"$base/$u.out" 2>&1 &
  [ $((i % 4)) = 0 ] && wait
  i=$((i + 1))
done
wait
secs() { s=$(date +%s%N); "$@" >"$base/last.out" 2>&1; e=$(date +%s%N)
  awk -v d=$((e - s)) 'BEGIN { printf "%.1f", d / 1e9 }'; }
cd "$base" || exit 1
t=$(secs "$BIN" --grade "$cls" -j 2 --csv "$base/root.csv")
passed=$(awk -F, 'NR > 1 {s += $(NF - 1)} END {print s + 0}' "$base/root.csv")
echo "grade_course_root_j2: $t s ($N learners x $tasks tasks, $passed passed)"
[ "${ROOT_ONLY:-}" = 1 ] && exit 0
abi=$("$BIN" --backend none -e 'io.write((require("cudalab.proc").landlock_abi()))')
if [ "$abi" -gt 0 ]; then
  t=$(secs as ${P}_prof "$BIN" --grade "$cls" -j 2 --csv "$base/home/${P}_prof/prof.csv")
  passed=$(awk -F, 'NR > 1 {s += $(NF - 1)} END {print s + 0}' "$base/home/${P}_prof/prof.csv")
  echo "grade_course_landlock_j2: $t s ($N learners x $tasks tasks, $passed passed)"
fi
# one hostile learner: every task a loop that only the grader's deadline stops
mkuser ${P}_evil
as ${P}_evil "$BIN" --backend none -e "
  local class, json = require 'cudalab.class', require 'json'
  local h = assert(class.open('$cls'))
  local rec = { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {} }
  local ids = {}
  for _, e in ipairs(require('classroom').catalog(h, { lessons = {$list}, lesson_dirs = {} })) do
    local l = require('lessons').load(e)
    for _, s in ipairs(l.steps) do
      if s.task then rec.tasks[require('lessons').task_id(l, s)] = { lesson = l.name, passed = true,
        attempts = 1, failures = {}, hints = 0, submission = { files = {}, at = 1,
        lua = { 'while true do pcall(function() while true do end end) end' } } } end
    end
  end
  assert(h:write_record(json.encode(rec)))" || exit 1
# the honest learners' records are set aside, so that the hostile one is graded alone, with a
# limit of 5 s per task
as ${P}_prof sh -c "cat >'$cls/class.lua'" <<C
return { title = "grading bench", lessons = {$list}, backend = "sim", grade_time_limit = "5 s" }
C
mkdir "$base/aside" && for u in $(printf "${P}%03d " $(seq "$N")); do
  mv "$cls/records/$(id -u "$u")".* "$base/aside/" 2>/dev/null; done
t=$(secs "$BIN" --grade "$cls" -j 1)
echo "grade_hostile_learner: $t s ($tasks tasks, 5 s per task)"
