#!/bin/sh
# tests/class/gradebook.sh BIN: the class's gradebook, with real accounts (as root, as CI runs):
# the roster (the class's group, or a roster file) gives every learner a row, those who never
# joined too, in the report and the grades (table, CSV with the roster's id and e-mail, JSON).
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=29
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - gradebook test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
room=clgb_room
cleanup_more='groupdel clgb_room 2>/dev/null'
groupadd "$room" 2>/dev/null
mkuser clgb_prof private
for u in clgb_ann clgb_bob clgb_cat clgb_dan clgb_eve; do mkuser "$u"; usermod -a -G "$room" "$u"; done
usermod -a -G "$room" clgb_prof
mkdir "$tmp/courses" && chown clgb_prof "$tmp/courses"
class=$tmp/courses/class
as clgb_prof "$BIN" --class-init "$class" --group "$room" --title "Gradebook" >/dev/null 2>&1 ||
  { bad "class-init"; exit 1; }
for l in 50-class-warmup.md 53-class-gradebook.md; do
  cp "$here/$l" "$class/lessons/" && chown clgb_prof "$class/lessons/$l"
done
# class LUA...: class.lua with the keys given added to the class's usual ones
class_lua() {
  as clgb_prof sh -c "cat >'$class/class.lua'" <<EOF2
return { title = "Gradebook", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim",
         memory_per_learner = "64 MiB", grade_time_limit = "10 s", $1 }
EOF2
}
class_lua ""
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'
DOUBLE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2 * a[i]; }'
printf 'lesson(50)\nedit [[%s]]\ncheck()\nlesson(53)\nsquares = {1, 4, 9, 16}\ncheck()\n' "$SQUARE" |
  as clgb_ann "$BIN" --class "$class" >"$tmp/ann.out" 2>&1
printf 'lesson(50)\nedit [[%s]]\ncheck()\nlesson(53)\nsquares = {1, 4, 9, 15}\ncheck()\n' "$DOUBLE" |
  as clgb_bob "$BIN" --class "$class" >"$tmp/bob.out" 2>&1
# forge USER PASSES: USER writes their own record (as any learner can), lesson 50's task passed
# at the times given: PASSES is a Lua list of {kernel, unix time}
forge() {
  as "$1" "$BIN" --backend none -e "
    local class, json = require 'cudalab.class', require 'json'
    local h = assert(class.open('$class'))
    local passes = {}
    for _, p in ipairs($2) do passes[#passes + 1] = { files = { ['square.cu'] = p[1] }, lua = {}, at = p[2] } end
    local rec = { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {
      ['50-class-warmup/square-every-element'] = { lesson = '50-class-warmup', step = 1, attempts = #passes,
        passed = true, failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = passes[1].at,
        submission = passes[#passes], passes = passes } } }
    assert(h:write_record(json.encode(rec)))"
}
jan9=$(date -d "2024-01-09 12:00" +%s); jan11=$(date -d "2024-01-11 13:00" +%s)
forge clgb_dan "{ { [==[$SQUARE]==], $jan9 }, { [==[$DOUBLE]==], $jan11 } }"
forge clgb_eve "{ { [==[$SQUARE]==], $jan11 } }"
cd "$tmp/home/clgb_prof" || exit 1
grade() { as clgb_prof "$BIN" --grade "$class" "$@"; }

# --- the roster: the class's group
grade --csv g.csv --json g.json >g.txt 2>g.err
row() { grep "^$1," "$2"; }
if row clgb_cat g.csv | grep -q ",0,0,0,2$" && row clgb_ann g.csv | grep -q ",1,1,2,2$"; then
  ok "a group member who never joined has a row in the CSV, scored 0"
else bad "no row for the absent learner"; cat g.csv g.err | sed 's/^/    /'; fi
"$BIN" --backend none -e "local j = require('json').decode(io.open('g.json'):read('a'))
  print(j.clgb_cat.tests[1].output)" >o.txt 2>&1
expect "the absent learner's JSON says why they scored 0" "on the roster but never joined" o.txt
as clgb_prof "$BIN" --class-report "$class" --html r.html >r.txt 2>&1
if grep -q "^clgb_cat *never" r.txt; then ok "the report lists the absent learner as never seen"
else bad "report: no absent row"; sed 's/^/    /' r.txt | head -20; fi
if grep -q '<tr data-user="clgb_cat"><th class="name" scope="row">clgb_cat</th><td class="seen">never joined</td>' r.html; then
  ok "the report's page has a row for the absent learner, never joined"
else bad "page: no absent row"; grep -o '.\{0,80\}clgb_cat.\{0,80\}' r.html | head -5 | sed 's/^/    /'; fi

# --- a roster file: account, name, id, e-mail
as clgb_prof sh -c "cat >'$class/roster.csv'" <<'EOF2'
account,name,id,email
clgb_ann,"Ann, the first",S001,ann@example.edu
clgb_cat,Cat,S003,cat@example.edu
clgb_nobody,No Account,S009,nobody@example.edu
EOF2
class_lua 'roster = "roster.csv"'
grade --csv f.csv >f.txt 2>f.err
if head -1 f.csv | grep -q '^user,uid,name,id,email,' &&
   row clgb_ann f.csv | grep -q '^clgb_ann,[0-9]*,"Ann, the first",S001,ann@example.edu,1,1,2,2$' &&
   row clgb_nobody f.csv | grep -q '^clgb_nobody,,No Account,S009,nobody@example.edu,0,0,0,2$'; then
  ok "the CSV carries the roster's name, id and e-mail, an account-less entry too"
else bad "roster columns"; sed 's/^/    /' f.csv; fi
expect "a learner with a record but not on the roster is kept and said" \
  \
  "3 accounts have a record but are not on the roster (kept, graded as usual): clgb_bob, clgb_dan" f.err
as clgb_prof sh -c "printf 'account,name\nclgb_ann,A\nclgb_ann,B\n' >'$class/roster.csv'"
grade >d.txt 2>d.err
expect "a roster naming an account twice is refused, with its line" \
  "roster.csv:3: clgb_ann is on the roster twice (line 2)" d.err

# --- points, weights and partial credit
class_lua 'points = { ["50-class-warmup/square-every-element"] = 5 }, weights = { [53] = 2 }'
grade --csv p.csv --json p.json >p.txt 2>p.err
if row clgb_ann p.csv | grep -q ',5,2,7,7$' && row clgb_bob p.csv | grep -q ',0,1.5,1.5,7$'; then
  ok "points per task, a lesson's weight and a check's partial credit make the score"
else bad "points"; sed 's/^/    /' p.csv p.err; fi
"$BIN" --backend none -e "local j = require('json').decode(io.open('p.json'):read('a'))
  local t = j.clgb_bob.tests[2]; print(t.score, t.max_score, t.output)" >o.txt 2>&1
expect "partial credit is explained in the output" \
  "1.5	2	partly right (75% of the points): 3 of 4 squares are right" o.txt
expect "the table shows points" "1.5/7" p.txt

# --- deadlines: lesson 50 due on 10 January at noon
class_lua 'due = { [50] = "2024-01-10 12:00" }, late = { per_day = 0.25, days = 3 }'
grade --csv due.csv --json due.json >due.txt 2>due.err
if row clgb_dan due.csv | grep -q ',1,0,1,2$'; then
  ok "the last passing submission before the due time is graded, not a later one"
else bad "due: dan"; sed 's/^/    /' due.csv due.err; fi
"$BIN" --backend none -e "local j = require('json').decode(io.open('due.json'):read('a'))
  local t = j.clgb_eve.tests[1]; print(t.score, t.output)" >o.txt 2>&1
expect "late work is graded, shown, and scored by the late policy" \
  "0.5	late by 1 d 1 h: 50% of the points taken; passed" o.txt
expect "grading by a due time with no snapshot after it says whose word the pass times are" \
  "no snapshot of the class was taken after 2024-01-10 12:00: the times of passes before it are the learners' own records' word" due.err
grade --csv u.csv --until "2024-01-08 00:00" >u.txt 2>u.err
if row clgb_dan u.csv | grep -q ',0,0,0,2$' && row clgb_ann u.csv | grep -q ',0,0,0,2$'; then
  ok "--until grades nothing made after it"
else bad "--until"; sed 's/^/    /' u.csv u.err; fi
class_lua 'due = { [50] = "2024-01-10 12:00" }, extensions = { clgb_eve = "2 days" }'
grade --csv x.csv >x.txt 2>x.err
if row clgb_eve x.csv | grep -q ',1,0,1,2$'; then ok "a learner's extension moves their due time"
else bad "extension"; sed 's/^/    /' x.csv x.err; fi
grade --until "2024-02-30 10:00" >b.txt 2>b.err
expect "--until with a date that does not exist is refused" '"2024-02-30 10:00" is not a date' b.err

# --- exports: Gradescope's results.json per learner, one learner regraded, overrides
class_lua 'points = { ["50-class-warmup/square-every-element"] = 5 }'
grade --gradescope gs >gs.txt 2>gs.err
"$BIN" --backend none -e "local j = require('json').decode(io.open('gs/clgb_bob/results.json'):read('a'))
  local keys = {}
  for k in pairs(j) do keys[#keys + 1] = k end
  table.sort(keys)
  local t = j.tests[2]
  print(table.concat(keys, ','), j.score, #j.tests, t.score, t.max_score, t.status)" >o.txt 2>&1
expect "Gradescope: one results.json per learner, only score and tests at its top level" \
  "score,tests	0.75	2	0.75	1	failed" o.txt
[ -f gs/clgb_cat/results.json ] && [ "$(ls gs | wc -l)" = 5 ] && ok "a folder for every learner, the absent too" ||
  { bad "gradescope folders"; ls gs | sed 's/^/    /'; }
grade --learner clgb_bob --csv one.csv >one.txt 2>one.err
if [ "$(grep -c '^clgb_' one.csv)" = 1 ] && row clgb_bob one.csv | grep -q ',0,0.75,0.75,6$'; then
  ok "--learner regrades one learner"; else bad "--learner"; sed 's/^/    /' one.csv one.err; fi
grade --learner clgb_zed >z.txt 2>z.err
expect "--learner with someone not in the class is refused" "clgb_zed is not a learner of this class" z.err
printf 'account,task,score,reason
clgb_bob,50-class-warmup/square-every-element,4,"kernel right, file misnamed"
' >ov.csv
grade --overrides ov.csv --csv ov.out.csv --json ov.json >ov.txt 2>ov.err
"$BIN" --backend none -e "local j = require('json').decode(io.open('ov.json'):read('a'))
  print(j.clgb_bob.score, j.clgb_bob.tests[1].output)" >o.txt 2>&1
expect "an override replaces the score, with its reason and the re-run's result" \
  "4.75	overridden by the instructor (4): kernel right, file misnamed; the re-run gave 0: failed:" o.txt
printf 'account,task,score,reason
clgb_bob,50-class-warmup/square-every-element,4,
' >ov2.csv
grade --overrides ov2.csv >ov2.txt 2>ov2.err
expect "an override without a reason is refused, naming its line" "ov2.csv:2: an override needs a reason" ov2.err

# --- snapshots: a pass's time is believed as far as the instructor's snapshots show it
as clgb_ann "$BIN" --class-snapshot "$class" >sa.txt 2>&1
expect "a learner cannot take a snapshot of the class" "only the class's instructor" sa.txt
as clgb_prof "$BIN" --class-snapshot "$class" >s.txt 2>s.err
snap=$(ls "$class/snapshots" 2>/dev/null)
if grep -q "^Kept [0-9]* passing submissions of [0-9]* learners in $class/snapshots/$snap\.$" s.txt &&
   [ "$(stat -c '%a %U' "$class/snapshots")" = "700 clgb_prof" ] &&
   [ "$(stat -c '%a %U' "$class/snapshots/$snap")" = "600 clgb_prof" ]; then
  ok "--class-snapshot keeps the passes where the instructor alone can read them"
else bad "--class-snapshot"; sed 's/^/    /' s.txt s.err; ls -la "$class/snapshots" | sed 's/^/    /'; fi
# after it, cat writes a pass dated 9 January, and dan changes the kernel of his 9 January pass
forge clgb_cat "{ { [==[$SQUARE]==], $jan9 } }"
forge clgb_dan "{ { [==[$SQUARE // tidied]==], $jan9 } }"
class_lua 'due = { [50] = "2024-01-10 12:00" }, late = { per_day = 0.25, days = 3 }'
grade --csv sn.csv --json sn.json >sn.txt 2>sn.err
"$BIN" --backend none -e "local j = require('json').decode(io.open('sn.json'):read('a'))
  for _, u in ipairs({ 'clgb_cat', 'clgb_dan', 'clgb_eve' }) do
    local t = j[u].tests[1]; print(u, t.score, t.output)
  end" >o.txt 2>&1
if grep -q "^clgb_cat	0	late by .*past the 3 days late work is accepted: no points (its record says it passed at 2024-01-09 12:00, but the class's snapshot of .* does not hold it); passed$" o.txt
then ok "a pass dated before the due time but made after a snapshot is graded as late, saying why"
else bad "backdated pass"; sed 's/^/    /' o.txt sn.err; fi
if grep -q "^clgb_dan	0	late by .*snapshot of .* does not hold it" o.txt; then
  ok "an on-time pass whose kernel was changed after the snapshot is not on time"
else bad "changed pass"; sed 's/^/    /' o.txt; fi
expect "a pass the snapshot holds keeps its time" \
  "clgb_eve	0.5	late by 1 d 1 h: 50% of the points taken; passed" o.txt
if grep -q "no snapshot of the class was taken" sn.err; then bad "the note stays with a snapshot"
else ok "with a snapshot after the due time, grading says nothing of the records' word"; fi
"$BIN" --class-snapshot "$class" >sr.txt 2>&1
if [ "$(stat -c '%U' "$class/snapshots" "$class/snapshots/"* | sort -u)" = clgb_prof ]; then
  ok "a snapshot taken as root (cron) is still the instructor's"
else bad "root's snapshot"; ls -la "$class/snapshots" | sed 's/^/    /'; sed 's/^/    /' sr.txt; fi
exit $status
