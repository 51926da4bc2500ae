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
#     most the per-task limit per task; a line "typed before the lesson" (a forged record's)
#     that never ends is stopped within an allowance of its own, and the task is still graded
#     (one the time check cannot interrupt ends the grading process, as in a task, dan's);
#   - a helper defined a step before the task, a line that failed live, a computed answer (also
#     one through a name set a step before the task), a pass followed by a failed try, and a
#     prose step added to the lesson afterwards: all passed;
#   - values the lesson set and the learner replaced (`want_total`, `rows`) are refused live and
#     in grading, also where the check reads them through a function of the lesson's;
#   - a wrong answer with the libraries, cuda, expect, _G's metatable, the string metatable or
#     the lesson's own function replaced first still fails;
#   - #include of the instructor's file by a path, through .. or <..>, is refused and reaches no
#     output; a:save outside the submission's folder is refused, saying so, and writes nothing;
#   - a record whose texts are made to mislead (escape sequences, HTML, a fake row, a name of
#     another's shape, a long message) shows them as inert text in the report, text and HTML,
#     and in the grades; a submission that prints 64 MiB is graded as usual.
# CLASS_BACKEND=gpu grades on the GPU (make test-gpu sets it); the default is the simulator.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
backend=${CLASS_BACKEND:-sim}
graded_on=sim
[ "$backend" = gpu ] && graded_on=cuda
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=31
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - trust test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
mkuser cltrust_prof private
for u in cltrust_ann cltrust_bob cltrust_cat cltrust_dan cltrust_eve cltrust_fay cltrust_gil \
  cltrust_hal cltrust_ivy cltrust_jay; do
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
# jay: a record whose lines "typed before the lesson" never end, before a right answer that takes
# some time of its own: the task's time must be all there for it
as cltrust_jay "$BIN" --backend none -e "
  local class, json = require 'cudalab.class', require 'json'
  local h = assert(class.open('$class'))
  local before = require('class_record').BEFORE_LESSON
  local rec = { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {} }
  rec.tasks['51-class-trust/cells'] = { lesson = '51-class-trust', step = 3, attempts = 1,
    passed = true, failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = 2,
    submission = { files = {}, at = 2,
      lua = { 'while true do end', 'cells = 0',
              'n = 0; for i = 1, 300000 do n = n + 1 end; cells = rows * cols' },
      steps = { before, before, 'cells' } } }
  assert(h:write_record(json.encode(rec)))" >/dev/null 2>&1 || bad "forging cltrust_jay's record"
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
# hal: a wrong answer, with everything a check relies on replaced first (each in a pcall, so that
# the next one is tried too)
forge cltrust_hal 51-class-trust/use-helper '{ "function triple(x) return 3 * x end",
  "pcall(function() string.format = function() return \"\" end end)",
  "pcall(function() math.type = function() return \"integer\" end end)",
  "pcall(function() table.concat = function() return \"\" end end)",
  "pcall(function() cuda.kernel = function() end end)",
  "pcall(function() cuda.compare = function() return true, {} end end)",
  "pcall(function() expect.run = function() return true end end)",
  "pcall(function() lesson_check.expect.run = function() return true end end)",
  "pcall(function() setmetatable(_G, { __index = function() return 41 end }) end)",
  "pcall(function() getmetatable(\"\").__index = {} end)",
  "pcall(function() getmetatable(cuda.zeros(1)).__eq = function() return true end end)",
  "tostring = function() return \"42\" end", "type = function() return \"number\" end",
  "expect = { fail = function() return true end }",
  "lesson_total = function() return 41 end", "want_total = 41", "rawset(_G, \"want_total\", 41)",
  "pcall(require, \"lessons\")", "answer = 41" }' "$SQUARE"
# hal: the instructor's file by a path, through .., and <..>; and a:save outside the folder
up=../../../../../../../..
forge cltrust_hal 50-class-warmup/square-every-element '{}' "#include \"$up$secret\"
$SQUARE"
forge cltrust_hal 51-class-trust/cells "{ \"cuda.ones(4):save('/tmp/cudalab-trust-saved.npy')\",
  \"cuda.ones(4):save('inc.cu', {format = 'csv'})\",
  \"pcall(cuda.kernel, '#include <$up$secret>\\\\n$SQUARE')\",
  \"cells = 41\" }" "$SQUARE"
# ivy: a correct kernel after 64 MiB printed (a thousand pipe buffers, and under a sanitizer
# within the CPU limit), and a record whose texts are made
# to mislead whoever reads the report
forge cltrust_ivy 50-class-warmup/square-every-element \
  '{ "for i = 1, 64 do print(string.rep(\"x\", 2^20)) end" }' "$SQUARE"
as cltrust_ivy "$BIN" --backend none -e "
  local class, json = require 'cudalab.class', require 'json'
  local h = assert(class.open('$class'))
  local rec = json.decode(h:read_own_record())
  local mislead = { '\27[2J\27[Hcltrust_ann  51/1 passed', '<script>alert(1)</script>',
    'line one\nann,51-class-trust/cells,1\n=HYPERLINK(\"x\")', '\226\128\174evil',
    string.rep('long ', 4000) }
  for i = 1, 2 do table.move(mislead, 1, 2, #mislead + 1) end -- the first two, the most frequent
  rec.tasks['51-class-trust/cells'] = { lesson = '51-class-trust', step = 3, attempts = 9,
    passed = false, failures = mislead, hints = 0, skipped = false, first_seen = 1 }
  rec.tasks['51-class-trust/\"><img src=x onerror=alert(2)>\27]0;owned\7'] = {
    lesson = '\27[31m<b>lesson</b>', step = 1, attempts = 1, passed = false, failures = mislead,
    hints = 0, skipped = false, first_seen = 1 }
  assert(h:write_record(json.encode(rec)))" >/dev/null 2>&1 || bad "forging cltrust_ivy's texts"
cleanup_more='rm -f /tmp/cudalab-trust-pwned /tmp/cudalab-trust-saved.npy'
rm -f /tmp/cudalab-trust-saved.npy

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
output $as_prof cltrust_jay 51-class-trust/cells >o.txt
expect "lines typed before the lesson that never end are stopped, and the task is graded" \
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
  # three hostile tasks at 5 s each (and 2 s of grace), jay's lines before the lesson at 5 s,
  # and the others: never tasks x limit per task. 52 s on an idle machine; on a busy one the CPU
  # limits take longer to reach.
  most=$((52 * slow / 100))
  [ "$secs" -le "$most" ] &&
    ok "$who: grading with a hostile learner took $secs s (4 phases of 5 s; at most $most s here)" ||
    bad "$who: grading took $secs s, more than 4 hostile phases of 5 s allow ($most s at a slowdown of $slow/100)"
done
output $as_prof cltrust_fay 50-class-warmup/square-every-element >o.txt
expect "a task an older record knows by its step number is graded under the step's id" "1 passed" o.txt
as cltrust_prof "$BIN" --class-report "$class" >report.txt 2>&1
expect "the report names a task the records hold and the course no longer has" \
  "51-class-trust/a-step-since-removed (1 learner)" report.txt
wrong=""
for who in root $as_prof; do
  output $who cltrust_hal 51-class-trust/use-helper >o.txt
  grep -q "^0 failed: answer should be 42, it is 41" o.txt || wrong="$wrong; $who: $(cat o.txt)"
done
[ -z "$wrong" ] &&
  ok "a wrong answer fails with the libraries, cuda, expect, _G, the string metatable and the \
lesson's function replaced first" || bad "hal's replacements passed a wrong answer$wrong"
output $as_prof cltrust_hal 50-class-warmup/square-every-element >o.txt
expect "#include of the instructor's file through .. is refused" "names a path" o.txt
output root cltrust_hal 51-class-trust/cells >o.txt
refusal="a:save(\"/tmp/cudalab-trust-saved.npy\"): when grading a file may be written only"
if [ ! -e /tmp/cudalab-trust-saved.npy ] && grep -q "$refusal in the submission's own folder" o.txt
then
  ok "a:save outside the submission's folder is refused when grading, saying so, and writes nothing"
else bad "hal's a:save: $(cat o.txt); $(ls -l /tmp/cudalab-trust-saved.npy 2>&1)"; fi
output $as_prof cltrust_ivy 50-class-warmup/square-every-element >o.txt
expect "a submission that prints 64 MiB is graded as usual" "1 passed" o.txt
as cltrust_prof "$BIN" --class-report "$class" --html room.html >report.txt 2>&1
# inert: no escape, BEL or bidirectional override reaches the terminal's report or the grades;
# no element or attribute of the page comes from a record; a message stays one line
if LC_ALL=C grep -q "$(printf '[\033\007]')" report.txt root.txt root.csv prof.txt prof.csv ||
  grep -q "$(printf '\342\200\256')" report.txt || grep -q '<script>\|<img\|<b>lesson' room.html ||
  grep -q '^ann,51-class-trust' report.txt root.csv; then
  bad "a record's texts reached the report or the grades as more than text: $(grep -n \
    "$(printf '\033')\|<script>\|<img\|^ann," report.txt room.html root.csv | head -5)"
elif grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' room.html &&
  grep -q '?\[[0-9N]J' report.txt; then
  ok "a record's misleading texts show as inert text in the report, text and HTML, and the grades"
else bad "the misleading texts are not shown: $(grep -n '2J' report.txt | head -3)"; fi
# The instructor adds a prose step before the tasks: everyone's tasks keep their ids and grades.
as cltrust_prof sh -c "sed -i 's/^## A helper\$/## A word first\n\nRead on.\n\n## A helper/' '$class/lessons/51-class-trust.md'"
if [ "$as_prof" = prof ]; then grade edited; else grade root; cp root.json edited.json; fi
output edited cltrust_ann 51-class-trust/cells >o.txt
expect "a step added to the lesson afterwards keeps everyone's tasks and grades" "1 passed" o.txt
exit $status
