#!/bin/sh
# tests/class/load.sh BIN: a grade does not depend on how busy the machine is. Two learners'
# submissions are graded under a task limit of 3 s while the grading child is held stopped three
# quarters of the time (SIGSTOP and SIGCONT to its process group, as a machine loaded four times
# over would hold it): one that computes for about 1 s of CPU time passes, though its phase takes
# about 4 s on the wall clock; one that computes for about 6 s fails on the limit, named in CPU
# time. Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=4
plan $N
names="the submission that computes for 1 s passes while held stopped 3/4 of the time
its phase took longer on the wall clock than the limit
the one that computes for 6 s fails on the limit of CPU time
the two are graded alike without the load"
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  echo "$names" | while IFS= read -r name; do echo "ok - $name # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
mkuser clload_prof private
mkuser clload_ann
mkuser clload_bob
mkdir "$tmp/courses" && chown clload_prof "$tmp/courses"
class=$tmp/courses/class
as clload_prof "$BIN" --class-init "$class" --title "Load" >/dev/null 2>&1 || { bad "class-init"; exit 1; }
cp "$here/50-class-warmup.md" "$class/lessons/" && chown clload_prof "$class/lessons/50-class-warmup.md"
as clload_prof sh -c "cat >'$class/class.lua'" <<'EOF'
return { title = "Load", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim",
         grade_time_limit = "3 s" }
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
exit $status
