#!/bin/sh
# tests/class/junk.sh BIN: a class whose records/ drop box a hostile learner has filled: 100,000
# junk files (mostly empty; files named as other learners' records, links, FIFOs, a folder,
# names holding terminal escape sequences) and one 8 MB record full of failure messages. The
# report must finish in seconds, list every real learner, sum the junk up in one line and print
# no escape sequence; grading must list every learner too. Every name a learner's record could
# have (<uid>.json, <uid>.1.json .. <uid>.63.json, hex names) planted for a victim must not stop
# the victim being recorded, and the report names the planted files and who planted them. An
# account added to the instructor's group after the class was made is warned about at report,
# grading and join, where the joining learner's record is not written.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=21
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1 || ! command -v gpasswd >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - junk test $i # SKIP needs root, runuser and gpasswd"; done
  exit 0
fi
. "$here/accounts.sh"
ESC=$(printf '\033')
mkuser cljunk_prof private
mkdir "$tmp/courses" && chown cljunk_prof "$tmp/courses"
class=$tmp/courses/class
as cljunk_prof "$BIN" --class-init "$class" --title "Junk test" >/dev/null 2>&1 || { bad "class-init"; exit 1; }
cp "$here/50-class-warmup.md" "$class/lessons/" && chown cljunk_prof "$class/lessons/50-class-warmup.md"
as cljunk_prof sh -c "cat >'$class/class.lua'" <<'EOF'
return { title = "Junk test", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim",
         memory_per_learner = "64 MiB", kernel_time_limit = "2 s", grade_time_limit = "10 s" }
EOF
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'
for u in cljunk_a cljunk_b cljunk_c cljunk_vic cljunk_big cljunk_mal cljunk_spy cljunk_late; do mkuser $u; done
session() { printf 'lesson(50)\nedit [[%s]]\ncheck()\n' "$SQUARE" | as "$1" "$BIN" --class "$class"; }
vic=$(id -u cljunk_vic)
R=$class/records

# The victim's every fixed name, and a few hex ones, planted before the victim ever joins.
as cljunk_mal sh -c "cd '$R' && touch $vic.json && i=1 && while [ \$i -le 63 ]; do echo x >$vic.\$i.json; i=\$((i + 1)); done && touch $vic.0000000000000000.json $vic.ffffffffffffffff.json"
planted=$(find "$R" -user cljunk_mal -name "$vic.*" | wc -l)
[ "$planted" = 66 ] && ok "66 names of the victim's are planted" || bad "$planted names planted, not 66"
for u in cljunk_a cljunk_b cljunk_c cljunk_vic; do session $u >"$tmp/$u.out" 2>&1; done
session cljunk_vic >"$tmp/vic2.out" 2>&1
mine=$(find "$R" -user cljunk_vic -name "$vic.*.json" | wc -l)
if [ "$mine" = 1 ] && ! grep -q "cannot be recorded" "$tmp/cljunk_vic.out" "$tmp/vic2.out"; then
  ok "the victim is recorded, in one file over two sessions"
else bad "the victim has $mine record files"; sed 's/^/    /' "$tmp/vic2.out" | tail -5; fi
# One learner's 8 MB record: 240,000 failure messages on the task, written as any learner can.
as cljunk_big "$BIN" --backend none -e "
  local parts = {}
  for i = 1, 240000 do parts[i] = '\"the check failed at index ' .. i .. '\"' end
  local text = '{\"format\": \"cudalab-class-record 1\", \"updated\": 5, \"lessons\": {}, ' ..
    '\"tasks\": {\"50-class-warmup/1\": {\"lesson\": \"50-class-warmup\", \"step\": 1, ' ..
    '\"attempts\": 240000, \"failures\": [' .. table.concat(parts, ',') .. ']}}}'
  assert(#text > 8000000, #text)
  assert(assert(require('cudalab.class').open('$class')):write_record(text))" >"$tmp/big.out" 2>&1
size=$(find "$R" -user cljunk_big -name '*.json' -size +7800k | wc -l)
[ "$size" = 1 ] && ok "an 8 MB record is written" || { bad "no 8 MB record"; sed 's/^/    /' "$tmp/big.out"; }

# 100,000 junk files: 99,950 empty ones, files named as learner a's records, links, FIFOs, a
# folder and names holding escape sequences.
a=$(id -u cljunk_a)
as cljunk_mal sh -c "cd '$R' && seq 1 99950 | sed 's/^/junk-/' | xargs touch &&
  i=1 && while [ \$i -le 20 ]; do echo '{}' >$a.1\$i.json; i=\$((i + 1)); done &&
  for i in 1 2 3 4 5 6 7 8 9 10; do ln -s /etc/shadow link-\$i; done &&
  for i in 1 2 3 4 5; do mkfifo fifo-\$i; done && mkdir folder.json &&
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do echo x >\"esc-\$i-\$(printf '\033[2J\033]0;pwned\007\233')\"; done &&
  echo x >\"$a.\$(printf '\033[31m').json\" &&
  dd if=/dev/zero of=\$(id -u).json bs=1M count=9 2>/dev/null"
# Another account plants under five names of accounts that do not exist: one line for it all.
as cljunk_spy sh -c "cd '$R' && for u in 70001 70002 70003 70004 70005; do echo x >\$u.json; done"
count=$(ls -A "$R" | wc -l)
[ "$count" -ge 100060 ] && ok "records/ holds $count entries" || bad "records/ holds only $count entries"

cd "$tmp/home/cljunk_prof" || exit 1
start=$(date +%s.%N)
as cljunk_prof "$BIN" --class-report "$class" >report.txt 2>report.err
rc=$?
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "# the report took $secs s"
if [ "$rc" = 0 ] && awk -v s="$secs" 'BEGIN {exit !(s < 15)}'; then ok "the report finishes in under 15 s ($secs s)"
else bad "the report took $secs s, status $rc"; sed 's/^/    /' report.err | head -5; fi
missing=""
for u in cljunk_a cljunk_b cljunk_c cljunk_vic cljunk_big; do grep -q "$u" report.txt || missing="$missing $u"; done
[ -z "$missing" ] && ok "the report lists every learner" || { bad "the report misses:$missing"; head -20 report.txt | sed 's/^/    /'; }
grep -q "learners\?, " report.txt && grep -q "5 learners" report.txt && ok "the report counts 5 learners" ||
  bad "the report's count: $(head -1 report.txt)"
if cat report.txt report.err | grep -qF "$ESC"; then bad "an ESC byte reached the report's output"
else ok "no ESC byte in the report's output"; fi
expect "the junk is summed up in one line" "records/: skipped 99979 files that are not records (99950 empty, 10 symbolic links, 1 folder, 5 FIFOs, sockets or devices, 13 not named <uid>.json), made by cljunk_mal" report.txt
lines=$(grep -c "junk-\|link-\|fifo-" report.txt)
[ "$lines" = 0 ] && ok "no line per junk file" || bad "$lines lines name junk files"
expect "the planted names of the victim are named, with who planted them" \
  "planted: 66 files named as the record of uid $vic (cljunk_vic) belong to uid $(id -u cljunk_mal) (cljunk_mal)" report.txt
expect "files planted under many names are one line" \
  "planted: 5 files named as the records of 5 other accounts belong to uid $(id -u cljunk_spy) (cljunk_spy), who planted them: 70001.json" report.txt
expect "the files planted for learner a too, escape sequences shown" "\\x1b[31m.json" report.txt
expect "a record over 8 MiB is refused in one line naming its owner" \
  "refused: $(id -u cljunk_mal).json (uid $(id -u cljunk_mal) (cljunk_mal)): larger than 8 MiB (9437184 bytes): ignored" report.txt
grep -q "^cljunk_vic.* 1/1" report.txt || grep "cljunk_vic" report.txt | grep -q "✓\|passed\|1/1" &&
  ok "the victim's pass is in the report" || { bad "the victim's row"; grep cljunk_vic report.txt | sed 's/^/    /'; }

as cljunk_prof "$BIN" --grade "$class" --csv grades.csv >grade.txt 2>grade.err
missing=""
for u in cljunk_a cljunk_b cljunk_c cljunk_vic cljunk_big; do grep -q "^$u" grade.txt || missing="$missing $u"; done
[ -z "$missing" ] && ok "grading lists every learner" || { bad "grading misses:$missing"; sed 's/^/    /' grade.err | tail -5; }
[ "$(awk -F, '$1 == "cljunk_vic" {print $(NF - 1)}' grades.csv)" = 1 ] && ok "the victim's work is graded: 1" ||
  bad "the victim's grade: $(grep cljunk_vic grades.csv)"
if cat grade.txt grade.err | grep -qF "$ESC"; then bad "an ESC byte reached grading's output"
else ok "no ESC byte in grading's output"; fi

# An account added to the instructor's group after the class was made can read every record.
gpasswd -a cljunk_spy cljunk_prof >/dev/null 2>&1
cleanup_more="gpasswd -d cljunk_spy cljunk_prof >/dev/null 2>&1; $cleanup_more"
as cljunk_prof "$BIN" --class-report "$class" >r2.txt 2>&1
expect "the report warns of the group's new member, with the fix" \
  "can be read by cljunk_spy, through the group cljunk_prof that records/ gives every record, not by you alone; have an administrator run: gpasswd -d cljunk_spy cljunk_prof" r2.txt
as cljunk_prof "$BIN" --grade "$class" >g2.txt 2>g2.err
expect "grading warns too" "have an administrator run: gpasswd -d cljunk_spy cljunk_prof" g2.err
echo 'print(1)' | as cljunk_late "$BIN" --class "$class" >late.out 2>&1
late=$(find "$R" -user cljunk_late | wc -l)
if grep -qF "your record would be readable by another account (cljunk_spy" late.out && [ "$late" = 0 ]; then
  ok "a learner joining is told, and their record is not written"
else bad "join with a shared group: $late files"; sed 's/^/    /' late.out | head -5; fi
exit $status
