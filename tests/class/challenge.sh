#!/bin/sh
# tests/class/challenge.sh BIN: a class's challenge, with real accounts (as root, as CI runs):
# three learners pass one task with kernels of different speed, a fourth (a forged record) with
# the same kernel as one of them but an earlier pass; grading re-runs each passing kernel and
# ranks them by modelled H200 time, the tie to the earlier pass; the report (text and HTML) shows
# the leaderboard; a learner's best is kept when a later grading times a slower kernel.
# CLASS_BACKEND=gpu grades on the GPU (make test-gpu sets it): the ranking by measured time is
# checked too; the default is the simulator.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=12
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - challenge test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
backend=${CLASS_BACKEND:-sim}
mkuser clgb3_prof private
for u in clgb3_ann clgb3_bob clgb3_cat clgb3_dan; do mkuser "$u"; done
mkdir "$tmp/courses" && chown clgb3_prof "$tmp/courses"
class=$tmp/courses/class
as clgb3_prof "$BIN" --class-init "$class" --title "Challenge" >/dev/null 2>&1 ||
  { bad "class-init"; exit 1; }
cp "$here/54-class-challenge.md" "$class/lessons/" && chown clgb3_prof "$class/lessons/54-class-challenge.md"
TASK=54-class-challenge/double-every-element-fast
class_lua() {
  as clgb3_prof sh -c "cat >'$class/class.lua'" <<EOF2
return { title = "Challenge", lessons = {}, lesson_dirs = {"lessons"}, backend = "$backend",
         memory_per_learner = "256 MiB", grade_time_limit = "60 s", $1 }
EOF2
}
class_lua 'challenge = { task = "54-class-challenge/no-such-task" }'
cd "$tmp/home/clgb3_prof" || exit 1
grade() { as clgb3_prof "$BIN" --grade "$class" "$@"; }
grade >x.txt 2>x.err
expect "a challenge naming a task the lessons lack is refused, naming it and the tasks" \
  "challenge names the task \"54-class-challenge/no-such-task\", which the class's lessons do not have (its tasks: $TASK)" x.err
class_lua "challenge = { task = \"$TASK\" }"

# each thread doubles four elements: consecutive ones (each warp's loads strided, 4 times the
# sectors), one a grid's width apart (coalesced), or a float4 (coalesced, a quarter of the loads)
STRIDED='__global__ void scale(const float *in, float *out, int n) { int t = blockIdx.x * blockDim.x + threadIdx.x; for (int j = 0; j < 4; j++) { int i = 4 * t + j; if (i < n) out[i] = 2.0f * in[i]; } }'
COALESCED='__global__ void scale(const float *in, float *out, int n) { int t = blockIdx.x * blockDim.x + threadIdx.x, s = gridDim.x * blockDim.x; for (int j = 0; j < 4; j++) { int i = t + j * s; if (i < n) out[i] = 2.0f * in[i]; } }'
VECTOR='__global__ void scale(const float *in, float *out, int n) { int t = blockIdx.x * blockDim.x + threadIdx.x; if (4 * t + 3 < n) { float4 v = reinterpret_cast<const float4 *>(in)[t]; v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f; reinterpret_cast<float4 *>(out)[t] = v; } else for (int i = 4 * t; i < n; i++) out[i] = 2.0f * in[i]; }'
session() { # session USER KERNEL: the learner passes the task at the prompt
  printf 'lesson(54)\nedit [[%s]]\ncheck()\n' "$2" | as "$1" "$BIN" --class "$class" >"$tmp/$1.out" 2>&1
}
session clgb3_ann "$STRIDED"
session clgb3_bob "$VECTOR"
session clgb3_cat "$COALESCED"
# dan's record, written by dan (as any learner can): cat's kernel, passed in 2024, before cat's
as clgb3_dan "$BIN" --backend none -e "
  local class, json = require 'cudalab.class', require 'json'
  local h = assert(class.open('$class'))
  local sub = { files = { ['scale.cu'] = [==[$COALESCED]==] }, lua = {}, at = 1704067200 }
  assert(h:write_record(json.encode({ format = 'cudalab-class-record 1', updated = 1, lessons = {},
    tasks = { ['$TASK'] = { lesson = '54-class-challenge', step = 1, attempts = 1, passed = true,
      failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = sub.at,
      submission = sub, passes = { sub } } } })))" >dan.out 2>&1
if grep -q "^Correct" "$tmp/clgb3_ann.out" && grep -q "^Correct" "$tmp/clgb3_bob.out" &&
   grep -q "^Correct" "$tmp/clgb3_cat.out"; then ok "three learners pass the task with their kernels"
else bad "the sessions did not pass"; tail -n 5 "$tmp"/clgb3_*.out | sed 's/^/    /'; fi

grade -j 2 --csv g.csv >g.txt 2>g.err
# the places in the grading's own table: "  1  clgb3_bob ..."
places() { sed -n '/^Challenge:/,$p' "$1" | awk '$1 ~ /^[0-9]+$/ { printf "%s ", $2 }'; }
got=$(places g.txt)
if [ "$got" = "clgb3_bob clgb3_dan clgb3_cat clgb3_ann " ]; then
  ok "grading ranks the re-run kernels by modelled time: float4, coalesced (the earlier pass first), strided"
else bad "grading's order: '$got'"; sed 's/^/    /' g.txt g.err | head -30; fi
# on a GPU, each passing kernel is also timed there (cuda.time's median) and ranked on its own
if [ "$backend" = gpu ]; then
  "$BIN" --backend none -e "
    local ch = require 'grade_challenge'
    local l = ch.ranked(ch.decode(io.open('$class/leaderboard.json'):read('a')), 'gpu_ms')
    local ok = #l == 4
    for _, e in ipairs(l) do ok = ok and e.gpu_ms > 0 and e.gpu_ms < 1000 end
    print(#l, ok)" >gpu.txt 2>&1
  if grep -q "^4	true$" gpu.txt && sed -n '/^Challenge:/,$p' g.txt | grep -q " GPU "; then
    ok "on the GPU, every passing kernel has a measured time, ranked on its own"
  else bad "no measured GPU times"; sed 's/^/    /' gpu.txt g.txt | tail -12; fi
else
  echo "ok - on the GPU, every passing kernel has a measured time # SKIP grades on the simulator (CLASS_BACKEND=gpu)"
fi
"$BIN" --backend none -e "
  local ch = require 'grade_challenge'
  local b = ch.decode(io.open('$class/leaderboard.json'):read('a'))
  local l = ch.ranked(b)
  print(#l, l[1].user, l[1].model_ms < l[2].model_ms, l[2].model_ms == l[3].model_ms,
    l[3].model_ms < l[4].model_ms, l[2].at < l[3].at)" >lb.txt 2>&1
expect "leaderboard.json keeps the four times: faster first, a tie by pass time" \
  "4	clgb3_bob	true	true	true	true" lb.txt
mode=$(stat -c '%a %U' "$class/leaderboard.json")
[ "$mode" = "600 clgb3_prof" ] && ok "the leaderboard is the instructor's alone (0600)" ||
  bad "leaderboard mode: $mode"
as clgb3_ann cat "$class/leaderboard.json" >/dev/null 2>&1 && bad "a learner reads the leaderboard file" ||
  ok "a learner cannot read the leaderboard file"

as clgb3_prof "$BIN" --class-report "$class" --html "$tmp/home/clgb3_prof/r.html" >r.txt 2>&1
got=$(places r.txt)
if [ "$got" = "clgb3_bob clgb3_dan clgb3_cat clgb3_ann " ]; then ok "the report shows the leaderboard"
else bad "report's order: '$got'"; sed 's/^/    /' r.txt | tail -15; fi
if grep -q '<table class="leaderboard">' r.html &&
   [ "$(grep -o '<tr><td>[0-9]</td><td>[a-z0-9_]*' r.html | sed 's/.*<td>//' | tr '\n' ' ')" = \
     "clgb3_bob clgb3_dan clgb3_cat clgb3_ann " ]; then
  ok "the HTML page shows the leaderboard, in the same order"
else bad "no leaderboard in the HTML"; grep -i challenge r.html | sed 's/^/    /' | head; fi

# bob passes again with the strided kernel: his submission is now slower, his best stays
session clgb3_bob "$STRIDED"
grade >g2.txt 2>g2.err
got=$(places g2.txt)
case "$got" in
  "clgb3_dan clgb3_cat clgb3_ann clgb3_bob ")
    ok "the second grading times bob's slower kernel, a tie with ann's going to her earlier pass" ;;
  *) bad "second grading's order: '$got'"; sed 's/^/    /' g2.txt g2.err | tail -12 ;;
esac
as clgb3_prof "$BIN" --class-report "$class" >r2.txt 2>&1
got=$(places r2.txt)
[ "$got" = "clgb3_bob clgb3_dan clgb3_cat clgb3_ann " ] &&
  ok "the leaderboard keeps bob's best across gradings" ||
  { bad "best not kept: '$got'"; sed 's/^/    /' r2.txt | tail -8; }

# after a snapshot, ann writes cat's kernel into her record with a pass dated 2023: the tie goes
# by the time the snapshot proves (after it), not the one she wrote
as clgb3_prof "$BIN" --class-snapshot "$class" >snap.txt 2>&1
as clgb3_ann "$BIN" --backend none -e "
  local class, json = require 'cudalab.class', require 'json'
  local h = assert(class.open('$class'))
  local sub = { files = { ['scale.cu'] = [==[$COALESCED]==] }, lua = {}, at = 1672531200 }
  assert(h:write_record(json.encode({ format = 'cudalab-class-record 1', updated = 2^40, lessons = {},
    tasks = { ['$TASK'] = { lesson = '54-class-challenge', step = 1, attempts = 1, passed = true,
      failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = sub.at,
      submission = sub, passes = { sub } } } })))" >ann.out 2>&1
grade >g3.txt 2>g3.err
got=$(places g3.txt)
[ "$got" = "clgb3_dan clgb3_cat clgb3_ann clgb3_bob " ] &&
  ok "a tie-breaking pass dated before a snapshot it is missing from counts from the snapshot on" ||
  { bad "backdated tie: '$got'"; sed 's/^/    /' snap.txt ann.out g3.txt g3.err | tail -12; }
exit $status
