#!/bin/sh
# tests/class/sessions.sh BIN: a class end to end, as real Unix accounts: an instructor makes the
# class, learners join it and work on its own lesson (tests/class/50-class-warmup.md), and the
# instructor's report shows who passed and who is failing, with the messages. Then a bad and a
# hostile class.lua, the class's limits on the simulator, and 16 learners at once.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
plan 24
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq 24); do echo "ok - class session test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
mkuser cltest_prof private
mkuser cltest_ann
mkuser cltest_ben
chmod 755 "$tmp/home"
mkdir "$tmp/courses" && chown cltest_prof "$tmp/courses"
class=$tmp/courses/class

as cltest_prof "$BIN" --class-init "$class" --title "Session test" >"$tmp/init.out" 2>&1
expect "the instructor makes a class" "Created the class \"Session test\"" "$tmp/init.out"
cp "$here/50-class-warmup.md" "$class/lessons/" && chown cltest_prof "$class/lessons/50-class-warmup.md"
write_class() { as cltest_prof sh -c "cat >'$class/class.lua'"; }
write_class <<'EOF'
return {
  title = "Session test",
  lessons = {1},
  lesson_dirs = {"lessons"},
  backend = "sim",
  memory_per_learner = "64 MiB",
  kernel_time_limit = "1 s",
}
EOF

# ann passes the class's own task; ben fails it twice, with USER set to ann's name
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'
DOUBLE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2 * a[i]; }'
printf 'lessons()\nlesson(50)\nedit [[%s]]\ncheck()\n' "$SQUARE" |
  as cltest_ann "$BIN" --class "$class" >"$tmp/ann.out" 2>&1
expect "lessons() lists the class's own lesson" "A warm-up of the class's own" "$tmp/ann.out"
if grep -q "Arithmetic intensity\|03-arithmetic" "$tmp/ann.out"; then
  bad "lessons() lists only the class's lessons: lesson 3 is not one"; else ok "lessons() lists only the class's lessons"; fi
expect "ann passes the task" "Correct. next() goes on." "$tmp/ann.out"
# at join, a learner at a terminal is told what the class records for the instructor
rm -f "$tmp/banner.out"
typein "$tmp/banner.out" 'x = 1' |
  as cltest_ann script -qefc "'$BIN' --class '$class'" /dev/null >"$tmp/banner.out" 2>&1
expect "at join, the learner is told what the class records for the instructor" \
  "The class records, for the instructor: the Lua you type during a lesson" "$tmp/banner.out"
printf 'lesson(50)\nedit [[%s]]\ncheck()\nhint()\nx = 41 + 1\ncheck()\n' "$DOUBLE" |
  as cltest_ben env USER=cltest_ann LOGNAME=cltest_ann CUDALAB_CLASS="$class" "$BIN" >"$tmp/ben.out" 2>&1
expect "ben's check fails with the lesson's message" "Not yet: a[i] should be the square" "$tmp/ben.out"

as cltest_prof "$BIN" --class-report "$class" >"$tmp/report.out" 2>&1
expect "the report shows ann" "cltest_ann" "$tmp/report.out"
expect "the report shows ben, recorded as ben whatever USER said" "cltest_ben" "$tmp/report.out"
expect "the report shows ben's failure message" "a[i] should be the square" "$tmp/report.out"
ben_uid=$(id -u cltest_ben)
as cltest_prof "$BIN" --backend none -e "
  local class_load = require 'class_load'
  local recs = assert(class_load.records(assert(class_load.class('$class'))))
  for _, r in ipairs(recs) do
    local t = r.tasks['50-class-warmup/square-every-element']
    print(r.user, r.uid, t.attempts, t.passed, t.hints, #t.submission.lua, t.submission.lua[#t.submission.lua])
  end" >"$tmp/recs.out" 2>&1
expect "ann's record: one attempt, passed" "cltest_ann	$(id -u cltest_ann)	1	true	0	1	edit [[" "$tmp/recs.out"
expect "ben's record: two attempts, a hint, and the Lua he typed in the step" \
  "cltest_ben	$ben_uid	2	false	1	2	x = 41 + 1" "$tmp/recs.out"
as cltest_prof timeout -s INT 3 "$BIN" --class-report "$class" --watch 0.5 >"$tmp/watch.out" 2>&1
if [ "$(grep -o "Session test" "$tmp/watch.out" | wc -l)" -ge 2 ] && grep -q "cltest_ben" "$tmp/watch.out"; then
  ok "--watch redraws the report"; else bad "--watch did not redraw the report"; head -n 5 "$tmp/watch.out" | sed 's/^/    /'; fi
as cltest_ann "$BIN" --class-report "$class" >"$tmp/annrep.out" 2>&1
expect "a learner cannot read the class's records" "only the class's instructor" "$tmp/annrep.out"

as cltest_prof "$BIN" --class-report "$class" --html "$tmp/home/cltest_prof/room.html" >/dev/null 2>&1
expect "--html writes a page naming the learners" "cltest_ben" "$tmp/home/cltest_prof/room.html"

# the class's limits hold on the simulator
printf 'a = cuda.array(32 * 2^20)\nspin = cuda.kernel "__global__ void spin(volatile int *x) { while (x[0] == 0) { x[1] = x[1] + 1; } }"\nspin[{1, 1}](cuda.zeros(2, "i32"))\nb = cuda.arange(5)\nprint("after", b[4])\n' |
  as cltest_ann timeout 120 "$BIN" --class "$class" >"$tmp/limits.out" 2>&1
expect "an array over memory_per_learner is refused, naming the cap" "64 MiB" "$tmp/limits.out"
expect "the refusal speaks of the class's allowance" "this class allows 64 MiB of device memory per learner" "$tmp/limits.out"
expect "a launch over kernel_time_limit is stopped" "kernel_time_limit" "$tmp/limits.out"
expect "the session goes on after the stopped launch" "after	4.0" "$tmp/limits.out"

# a bad or hostile class.lua: a clear message with its line, and the session starts without it
write_class <<'EOF'
return {
  title = "Session test",
  backend = "gpus",
}
EOF
echo 'print("alive", 1 + 1)' | as cltest_ann "$BIN" --class "$class" >"$tmp/bad.out" 2>&1
expect "a bad value is named with its line" 'class.lua:3: backend must be "auto", "gpu" or "sim", not "gpus"' "$tmp/bad.out"
expect "the session starts without the class" "alive	2" "$tmp/bad.out"
write_class <<'EOF'
local t = {}
while true do t[#t % 10 + 1] = 1 end
EOF
echo 'print("alive", 2 + 2)' | as cltest_ann "$BIN" --class "$class" >"$tmp/loop.out" 2>&1
expect "an endless class.lua is stopped" "runs too long" "$tmp/loop.out"
write_class <<'EOF'
local t = {}
for i = 1, 1e9 do t[i] = tostring(i) .. "-" .. tostring(i) end
EOF
echo 'print("alive", 3 + 3)' | as cltest_ann "$BIN" --class "$class" >"$tmp/mem.out" 2>&1
if grep -q "memory" "$tmp/mem.out" && grep -q "alive	6" "$tmp/mem.out"; then
  ok "a class.lua that wants all memory is refused, and the session goes on"
else bad "a class.lua that wants all memory"; sed 's/^/    /' "$tmp/mem.out"; fi

# 16 learners at once: every record intact
write_class <<'EOF'
return { title = "Crowd", lessons = {1}, lesson_dirs = {"lessons"}, backend = "sim" }
EOF
for i in $(seq -w 1 16); do mkuser "cltest_l$i"; done
for i in $(seq -w 1 16); do
  as "cltest_l$i" "$BIN" --class "$class" "$here/../../bench/class/learner.lua" 20 \
    >"$tmp/crowd-$i.out" 2>&1 &
done
wait
as cltest_prof "$BIN" --backend none -e "
  local class_load = require 'class_load'
  local recs, problems = class_load.records(assert(class_load.class('$class')))
  local n = 0
  for _, r in ipairs(recs) do
    local t = r.tasks['50-class-warmup/square-every-element']
    if r.user:match('^cltest_l') and t and t.passed and t.attempts == 1 and
       t.submission.files['square.cu'] then n = n + 1 end
  end
  print('intact', n, #problems)" >"$tmp/crowd.out" 2>&1
expect "16 learners at once: 16 records intact, none refused" "intact	16	0" "$tmp/crowd.out"
steps=$(cat "$tmp"/crowd-*.out | grep -c '^steps: ')
if [ "$steps" = 16 ]; then ok "16 learners at once: every session made its steps"
else bad "16 learners at once: $steps of 16 sessions made their steps"; cat "$tmp"/crowd-01.out | head -5; fi
exit $status
