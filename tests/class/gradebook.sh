#!/bin/sh
# tests/class/gradebook.sh BIN: the class's gradebook, with real accounts (as root, as CI runs):
# the roster (the class's group, or a roster file) gives every learner a row, those who never
# joined too, in the report and the grades (table, CSV with the roster's id and e-mail, JSON).
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=9
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
for u in clgb_ann clgb_bob clgb_cat; do mkuser "$u"; usermod -a -G "$room" "$u"; done
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
as clgb_prof "$BIN" --class-report "$class" >r.txt 2>&1
if grep -q "^clgb_cat *never" r.txt; then ok "the report lists the absent learner as never seen"
else bad "report: no absent row"; sed 's/^/    /' r.txt | head -20; fi

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
  "1 account has a record but is not on the roster (kept, graded as usual): clgb_bob" f.err
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
exit $status
