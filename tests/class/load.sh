#!/bin/sh
# tests/class/load.sh BIN: a grade does not depend on how busy the machine is. Learners'
# submissions are graded under a task limit of 3 s while the grading child is held stopped three
# quarters of the time (SIGSTOP and SIGCONT to its process group, as a machine loaded four times
# over would hold it): one that computes for about 1 s of CPU time passes, though its phase takes
# about 4 s on the wall clock; one that computes for about 6 s fails on the limit, named in CPU
# time. The class's kernel time limit is 250 ms: a lesson whose example and check launch its own
# kernel for about a second is not stopped by it, at the prompt or in grading, nor is a learner's
# launch of 0.1 s of CPU time that the load stretches past it (on the simulator grading holds a
# launch to the task's CPU time instead); a learner's launch that never ends still fails on the
# task's limit, and at the prompt a learner's long launch is stopped at 250 ms.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=8
plan $N
names="the submission that computes for 1 s passes while held stopped 3/4 of the time
its phase took longer on the wall clock than the limit
the one that computes for 6 s fails on the limit of CPU time
the two are graded alike without the load
at the prompt the lesson's slow example and check are not stopped by the class's kernel limit
at the prompt a learner's long launch is stopped at the class's kernel limit
the lesson's slow example and a learner's launch the load stretches pass in grading
a learner's launch that never ends fails on the task's limit of CPU time"
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  echo "$names" | while IFS= read -r name; do echo "ok - $name # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
mkuser clload_prof private
mkuser clload_ann
mkuser clload_bob
mkuser clload_cara
mkuser clload_dora
mkdir "$tmp/courses" && chown clload_prof "$tmp/courses"
class=$tmp/courses/class
as clload_prof "$BIN" --class-init "$class" --title "Load" >/dev/null 2>&1 || { bad "class-init"; exit 1; }
cp "$here/50-class-warmup.md" "$here/57-class-slow.md" "$class/lessons/"
chown clload_prof "$class/lessons/"*.md
as clload_prof sh -c "cat >'$class/class.lua'" <<'EOF'
return { title = "Load", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim",
         grade_time_limit = "3 s", kernel_time_limit = "250 ms" }
EOF
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'

# Loop turns for one second of CPU time here, measured in CPU time (load does not change it).
per_s=$("$BIN" --backend none -e '
  local n, t = 2e7, os.clock()
  for _ = 1, n do end
  print(string.format("%.0f", n / math.max(os.clock() - t, 1e-3)))')

# forge USER SECONDS: USER's record, the right kernel and Lua that computes for SECONDS of CPU
forge() {
  turns=$(awk -v p="$per_s" -v s="$2" 'BEGIN { printf "%.0f", p * s }')
  as "$1" "$BIN" --backend none -e "
    local class, json = require 'cudalab.class', require 'json'
    local h = assert(class.open('$class'))
    local rec = { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {
      ['50-class-warmup/square-every-element'] = { lesson = '50-class-warmup', step = 1,
        attempts = 1, passed = true, failures = {}, hints = 0, skipped = false, first_seen = 1,
        passed_at = 2, submission = { files = { ['square.cu'] = [==[$SQUARE]==] },
        lua = { 'for _ = 1, $turns do end' }, at = 2 } } } }
    assert(h:write_record(json.encode(rec)))"
}
forge clload_ann 1
forge clload_bob 6
# cara passes lesson 57 at the prompt, then launches the lesson's kernel for about a second
printf '%s\n' 'lesson(57)' 'next()' 'mine = cuda.zeros(1, "i32")' 'busy[{1, 1}](mine, 300000)' \
  'total = mine[0]' 'check()' 'busy[{1, 1}](cuda.zeros(1, "i32"), 2500000)' |
  as clload_cara env COLUMNS=200 "$BIN" --class "$class" >"$tmp/cara.out" 2>&1
# dora's record: the lesson's kernel launched for ever (2^31 - 1 turns)
as clload_dora "$BIN" --backend none -e "
  local class, json = require 'cudalab.class', require 'json'
  local h = assert(class.open('$class'))
  local rec = { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {
    ['57-class-slow/little'] = { lesson = '57-class-slow', step = 2, attempts = 1, passed = true,
      failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = 2,
      submission = { files = {}, at = 2, lua = { 'mine = cuda.zeros(1, \"i32\")',
        'busy[{1, 1}](mine, 2147483647)', 'total = mine[0]' } } } } }
  assert(h:write_record(json.encode(rec)))"
cd "$tmp/home/clload_prof" || exit 1

# hold: until $tmp/stop exists, holds every grading child (the worker and its compiles) stopped
# 3/4 of the time; writes to $tmp/longest the most wall-clock seconds one of them lived
hold() {
  longest=0
  until [ -e "$tmp/stop" ]; do
    pids=$(pgrep -f grade_worker.lua 2>/dev/null)
    for p in $pids; do kill -STOP "$p" 2>/dev/null; done
    sleep 0.3
    for p in $pids; do
      kill -CONT "$p" 2>/dev/null
      age=$(ps -o etimes= -p "$p" 2>/dev/null | tr -d ' ')
      [ -n "$age" ] && [ "$age" -gt "$longest" ] && longest=$age
    done
    sleep 0.1
  done
  echo "$longest" >"$tmp/longest"
}
hold &
holder=$!
as clload_prof "$BIN" --grade "$class" -j 2 --json loaded.json >loaded.txt 2>loaded.err
touch "$tmp/stop"
wait $holder
longest=$(cat "$tmp/longest")
score() { # score FILE USER: the learner's score and their task's output
  "$BIN" --backend none -e "
    local j = require('json').decode(io.open('$1'):read('a'))
    local r = j['$2'] or {}
    print(r.score .. ' ' .. tostring(((r.tests or {})[1] or {}).output))"
}
score loaded.json clload_ann >ann.txt
if grep -q '^1 ' ann.txt; then ok "the submission that computes for 1 s passes while held stopped 3/4 of the time"
else bad "the submission that computes for 1 s fails under load: $(cat ann.txt)"; sed 's/^/    /' loaded.err | tail -5; fi
if [ "$longest" -gt 3 ]; then ok "its phase took longer on the wall clock than the limit ($longest s)"
else bad "the grading children lived at most $longest s: the load did not stretch them past 3 s"; fi
score loaded.json clload_bob >bob.txt
if grep -q '^0 ' bob.txt && grep -q 'time limit of 3 s of CPU time' bob.txt; then
  ok "the one that computes for 6 s fails on the limit of CPU time"
else bad "the one that computes for 6 s: $(cat bob.txt)"; fi
as clload_prof "$BIN" --grade "$class" -j 1 --json idle.json >idle.txt 2>idle.err
if cmp -s loaded.txt idle.txt; then ok "the two are graded alike without the load"
else bad "the grades differ without the load:"; diff loaded.txt idle.txt | sed 's/^/    /' | head; fi

if grep -q "^Correct\." "$tmp/cara.out" &&
   [ "$(grep -c "was stopped after" "$tmp/cara.out")" = 1 ]; then
  ok "at the prompt the lesson's slow example and check are not stopped by the class's kernel limit"
else bad "cara's session:"; grep -E "Correct|Not yet|stopped" "$tmp/cara.out" | sed 's/^/    /'; fi
expect "at the prompt a learner's long launch is stopped at the class's kernel limit" \
  "kernel busy was stopped after 250 ms: this class limits a launch to 250 ms" "$tmp/cara.out"
# task TASK FILE USER: USER's score and output for TASK
task() { "$BIN" --backend none -e "
  local j = require('json').decode(io.open('$2'):read('a'))
  for _, t in ipairs(j['$3'].tests) do
    if t.name:find('$1', 1, true) == 1 then print(t.score .. ' ' .. t.output) end
  end"; }
task 57-class-slow/little loaded.json clload_cara >cara.txt
if grep -q '^1 passed' cara.txt; then
  ok "the lesson's slow example and a learner's launch the load stretches pass in grading"
else bad "cara, graded under load: $(cut -c1-300 cara.txt)"; fi
task 57-class-slow/little loaded.json clload_dora >dora.txt
if grep -q '^0 ' dora.txt && grep -q 'time limit of 3 s' dora.txt; then
  ok "a learner's launch that never ends fails on the task's limit of CPU time"
else bad "dora: $(cut -c1-300 dora.txt)"; fi
exit $status
