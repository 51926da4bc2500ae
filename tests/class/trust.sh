#!/bin/sh
# tests/class/trust.sh BIN: grades a class can trust, from a server no learner can take over.
# Real accounts (as root, as CI runs): an instructor, learners who work honestly, and learners
# who attack the grader by writing their own records by hand (as any learner can). Every attack
# must fail to leak a file or stall grading, with grading run both as root (each learner's work
# then runs as the learner's own account) and as the instructor (under Landlock), and correct
# work must be graded as it was live:
#   - inside the grading process (a probe lesson's check): the learner's uid as root; the
#     instructor's secret and another learner's record cannot be read either way;
#   - an #include hidden between "/*" and "*/" in two strings, and one in a kernel's name,
#     never reach the instructor's secret; a chunk replayed by expect.computed cannot reach os;
#   - a task that never ends in C (a pattern that backtracks for ever, pcall-in-a-loop) costs at
#     most the per-task limit per task;
#   - a helper defined a step before the task, a line that failed live, a computed answer (also
#     one through a name set a step before the task), a pass followed by a failed try, and a
#     prose step added to the lesson afterwards: all passed;
#   - values the lesson set and the learner replaced (`want_total`, `rows`) are refused live and
#     in grading.
# CLASS_BACKEND=gpu grades on the GPU (make test-gpu sets it); the default is the simulator.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
backend=${CLASS_BACKEND:-sim}
graded_on=sim
[ "$backend" = gpu ] && graded_on=cuda
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=25
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - trust test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
mkuser cltrust_prof private
for u in cltrust_ann cltrust_bob cltrust_cat cltrust_dan cltrust_eve cltrust_fay cltrust_gil; do
  mkuser "$u"
done
prof_home=$tmp/home/cltrust_prof
secret=$prof_home/secret.txt
echo "TOPSECRET-$$-7f3a" >"$secret"
chown cltrust_prof "$secret" && chmod 600 "$secret"
mkdir "$tmp/courses" && chown cltrust_prof "$tmp/courses"
class=$tmp/courses/class
as cltrust_prof "$BIN" --class-init "$class" --title "Trust" >/dev/null 2>&1 || { bad "class-init"; exit 1; }
ann_record=$class/records/$(id -u cltrust_ann).json
cp "$here/50-class-warmup.md" "$here/51-class-trust.md" "$class/lessons/"
sed -e "s|@SECRET@|$secret|" -e "s|@RECORD@|$ann_record|" "$here/52-class-probe.md.in" \
  >"$class/lessons/52-class-probe.md"
chown cltrust_prof "$class/lessons/"*.md
as cltrust_prof sh -c "cat >'$class/class.lua'" <<EOF
return { title = "Trust", lessons = {}, lesson_dirs = {"lessons"}, backend = "$backend",
         memory_per_learner = "64 MiB", kernel_time_limit = "2 s", grade_time_limit = "5 s" }
EOF
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'

# session USER LINE...: USER works through the class at the prompt, one line each
session() {
  u=$1; shift
  printf '%s\n' "$@" | as "$u" "$BIN" --class "$class" >"$tmp/$u.out" 2>&1
}
# ann: the helper a step early, a line that fails harmlessly, computed answers, a probe, then a
# failed try after her pass
session cltrust_ann 'lesson(51)' 'next()' 'function triple(x) return 3 * x end' \
  'no_such_table.x = 1' 'next()' 'answer = triple(14)' 'check()' 'next()' 'cells = rows * cols' \
  'check()' 'back()' 'answer = 1' 'check()' 'lesson(52)' 'next()' 'probe = 1' 'check()' 'lesson(50)' \
  "edit [[$SQUARE]]" 'check()'
# bob: replaces the lesson's values to make a wrong answer pass
session cltrust_bob 'lesson(51)' 'next()' 'function triple(x) return 3 * x end' 'next()' \
  'want_total = 7' 'answer = 7' 'check()' 'skip()' 'next()' 'rows, cols = 1, 1' 'cells = 1' 'check()'
# cat: types the figure in as a constant
session cltrust_cat 'lesson(51)' 'next()' 'next()' 'skip()' 'next()' 'cells = 42' 'check()'
# gil: computes the figure from a name of her own, set a step before the task
session cltrust_gil 'lesson(51)' 'next()' 'r = rows' 'next()' 'skip()' 'next()' 'cells = r * cols' \
  'check()'

# forge USER TASK LUA-LIST KERNEL: USER writes their own record by hand, saying "passed"
forge() {
  as "$1" "$BIN" --backend none -e "
    local class, json = require 'cudalab.class', require 'json'
    local h = assert(class.open('$class'))
    local rec = h:read_own_record()
    rec = rec and json.decode(rec) or { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {} }
    rec.tasks['$2'] = { lesson = '${2%%/*}', step = 1, attempts = 1, passed = true,
      failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = 2,
      submission = { files = { ['square.cu'] = [==[$4]==] }, lua = $3, at = 2 } }
    assert(h:write_record(json.encode(rec)))" >/dev/null 2>&1 || bad "forging $1's record"
}
# dan: tasks that never end, in C and in a pcall loop the Lua hook cannot stop
forge cltrust_dan 51-class-trust/use-helper \
  '{ "local s = (\"a\"):rep(3000); s:find((\"a-\"):rep(40) .. \"b\")" }' "$SQUARE"
forge cltrust_dan 51-class-trust/cells \
  '{ "while true do pcall(function() while true do end end) end" }' "$SQUARE"
forge cltrust_dan 50-class-warmup/square-every-element \
  '{ "s = string.rep(\"x\", 2^24); for i = 1, 1e9 do s:find(\".-.-.-.-y\") end" }' "$SQUARE"
# eve: an #include hidden between string literals, and one pasted in through a kernel's name
forge cltrust_eve 50-class-warmup/square-every-element '{}' "const char *a = \"/*\";
#define STR(x) #x
#include \"$secret\"
const char *b = \"*/\";
$SQUARE"
forge cltrust_eve 51-class-trust/cells "{ \"cells = select(2, pcall(cuda.kernel, [[$SQUARE]], {name = 'square\\\\n#include \\\"$secret\\\"'}))\" }" "$SQUARE"
# fay: a typed chunk that expect.computed replays, reaching for os
forge cltrust_fay 51-class-trust/cells \
  '{ "local ok, o = pcall(function() return os end); if ok and o then o.execute(\"touch /tmp/cudalab-trust-pwned\") end; cells = rows * cols" }' "$SQUARE"
# fay again: a record of an older cudalab knows a task by its step number, and one task is gone
forge cltrust_fay 50-class-warmup/1 '{}' "$SQUARE"
forge cltrust_fay 51-class-trust/a-step-since-removed '{}' "$SQUARE"
cleanup_more='rm -f /tmp/cudalab-trust-pwned'

grep -c 'Not yet' "$tmp/cltrust_bob.out" | grep -qx 2 &&
  ok "replacing the lesson's values is refused live" || { bad "bob's forged globals passed live"; sed 's/^/    /' "$tmp/cltrust_bob.out" | tail -20; }

cd "$prof_home" || exit 1
# slowdown: how many times longer than its CPU time a computing process takes here now, in
# hundredths (100 on an idle machine), from a short loop's own CPU clock against the wall clock.
# The grader's limits are CPU time and a child that gets less than a fifth of a CPU is stopped
# by the wall clock, so what a hostile learner may cost in wall time scales with this, up to 5.
slowdown() {
  _s=$(date +%s%N)
  _c=$("$BIN" --backend none -e 'local x = 0 for i = 1, 4e6 do x = x + i end io.write(os.clock())')
  _e=$(date +%s%N)
  awk -v w=$((_e - _s)) -v c="$_c" 'BEGIN { r = (c > 0) ? w / 1e9 / c : 5
    if (r < 1) r = 1; if (r > 5) r = 5; printf "%d", r * 100 }'
}
# grade WHO: grades as root ("root") or as the instructor, to WHO.json and WHO.txt; WHO.secs gets
# its wall-clock seconds and WHO.slow the machine's slowdown around it (the larger of before and
# after)
grade() {
  before=$(slowdown)
  start=$(date +%s)
  if [ "$1" = root ]; then "$BIN" --grade "$class" --json "$1.json" --csv "$1.csv" >"$1.txt" 2>"$1.err"
  else as cltrust_prof "$BIN" --grade "$class" --json "$1.json" --csv "$1.csv" >"$1.txt" 2>"$1.err"; fi
  echo $(($(date +%s) - start)) >"$1.secs"
  after=$(slowdown)
  echo $((before > after ? before : after)) >"$1.slow"
}
# output WHO USER TASK: the grade's output for USER's TASK
output() { "$BIN" --backend none -e "
  local j = require('json').decode(io.open('$1.json'):read('a'))
  for _, t in ipairs(j['$2'].tests) do
    if t.name:find('$3', 1, true) == 1 then print(t.score .. ' ' .. t.output) end
  end"; }
grade root
# As the instructor, the learners' work runs under Landlock; on a kernel without it, grading must
# refuse, saying why, and the instructor's cases are skips.
abi=$("$BIN" --backend none -e 'io.write((require("cudalab.proc").landlock_abi()))')
if [ "$abi" -gt 0 ]; then
  grade prof
  as_prof=prof
else
  grade prof
  as_prof=root
fi
for who in root prof; do
  if [ "$who" = prof ] && [ "$as_prof" = root ]; then
    expect "without Landlock, grading as the instructor refuses, saying what to do" \
      "pass --trust-submissions" prof.err
    echo "ok - prof: the probe # SKIP this kernel has no Landlock"
    continue
  fi
  if grep -q "TOPSECRET" "$who.json" "$who.txt" "$who.err" "$who.csv"; then
    bad "$who: the instructor's secret reached the grades"; else ok "$who: the instructor's secret reaches no grade, output or error"; fi
  output $who cltrust_ann 52-class-probe/look >o.txt
  if grep -q "secret=denied record=denied" o.txt; then ok "$who: inside grading, the secret and another learner's record cannot be read"
  else bad "$who: the probe read: $(cat o.txt)"; fi
done
output root cltrust_ann 52-class-probe/look >o.txt
expect "as root, a learner's work runs as the learner's own account (on $graded_on)" \
  "probe uid=$(id -u cltrust_ann) secret=denied record=denied backend=$graded_on" o.txt
expect "grading times a CPU function once, not warm-ups and repetitions" "timed_calls=1." o.txt
if [ "$as_prof" = prof ]; then
  expect "as the instructor, grading says its work runs under Landlock" "under Landlock" prof.err
else echo "ok - grading as the instructor under Landlock # SKIP this kernel has no Landlock"; fi
wrong=""
for who in root $as_prof; do
  for t in 51-class-trust/use-helper 51-class-trust/cells 50-class-warmup/square-every-element; do
    output $who cltrust_ann $t >o.txt
    grep -q "^1 passed" o.txt || wrong="$wrong; $who: ann's $t: $(cat o.txt)"
  done
done
[ -z "$wrong" ] && ok "a helper typed a step early, a line that failed live, a computed answer and a pass before a failed try are graded passed" || bad "correct work graded 0$wrong"
wrong=""
for t in use-helper cells; do output $as_prof cltrust_bob 51-class-trust/$t >o.txt
  grep -q "^0 failed: " o.txt || wrong="$wrong; $t: $(cat o.txt)"; done
[ -z "$wrong" ] && ok "replacing the lesson's values is refused in grading" || bad "bob's forged globals passed in grading$wrong"
output $as_prof cltrust_cat 51-class-trust/cells >o.txt; expect "a figure typed in as a constant fails in grading" "typed in as a number" o.txt
expect "a figure computed through a name set a step before the task passes live" "Correct." \
  "$tmp/cltrust_gil.out"
output $as_prof cltrust_gil 51-class-trust/cells >o.txt
expect "a figure computed through a name set a step before the task passes in grading" \
  "1 passed" o.txt
output $as_prof cltrust_eve 50-class-warmup/square-every-element >o.txt
expect "an #include hidden between string literals is refused" "#include" o.txt
output $as_prof cltrust_eve 51-class-trust/cells >o.txt
expect "an #include in a kernel's name is refused" "kernel's name" o.txt
output $as_prof cltrust_fay 51-class-trust/cells >o.txt
if [ ! -e /tmp/cudalab-trust-pwned ] && grep -q "^1 passed" o.txt; then
  ok "expect.computed replays a chunk in the sandbox: os is not there, and nothing ran"
else bad "fay: $(cat o.txt); pwned: $(ls /tmp/cudalab-trust-pwned 2>&1)"; fi
for who in root prof; do
  if [ "$who" = prof ] && [ "$as_prof" = root ]; then
    for k in 1 2 3; do echo "ok - prof: a hostile learner's cost $k # SKIP this kernel has no Landlock"; done
    continue
  fi
  output $who cltrust_dan 51-class-trust/use-helper >o.txt
  expect "$who: a pattern that never ends fails on the time limit" "time limit of 5 s" o.txt
  output $who cltrust_dan 51-class-trust/cells >o.txt
  expect "$who: pcall in an endless loop fails on the time limit" "time limit of 5 s" o.txt
  secs=$(cat "$who.secs")
  slow=$(cat "$who.slow")
  # three hostile tasks at 5 s each (and 2 s of grace), and the others: never tasks x limit per
  # task. 45 s on an idle machine; on a busy one the CPU limits take longer to reach.
  most=$((45 * slow / 100))
  [ "$secs" -le "$most" ] &&
    ok "$who: grading with a hostile learner took $secs s (3 tasks of 5 s; at most $most s here)" ||
    bad "$who: grading took $secs s, more than 3 hostile tasks of 5 s allow ($most s at a slowdown of $slow/100)"
done
output $as_prof cltrust_fay 50-class-warmup/square-every-element >o.txt
expect "a task an older record knows by its step number is graded under the step's id" "1 passed" o.txt
as cltrust_prof "$BIN" --class-report "$class" >report.txt 2>&1
expect "the report names a task the records hold and the course no longer has" \
  "51-class-trust/a-step-since-removed (1 learner)" report.txt
# The instructor adds a prose step before the tasks: everyone's tasks keep their ids and grades.
as cltrust_prof sh -c "sed -i 's/^## A helper\$/## A word first\n\nRead on.\n\n## A helper/' '$class/lessons/51-class-trust.md'"
if [ "$as_prof" = prof ]; then grade edited; else grade root; cp root.json edited.json; fi
output edited cltrust_ann 51-class-trust/cells >o.txt
expect "a step added to the lesson afterwards keeps everyone's tasks and grades" "1 passed" o.txt
exit $status
