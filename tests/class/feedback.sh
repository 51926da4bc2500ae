#!/bin/sh
# tests/class/feedback.sh BIN: published results, with real accounts (as root, as CI runs):
# cudalab --grade DIR --publish leaves each learner their own results in DIR/feedback/, which
# they see with grades() at the class's prompt and no other learner can read; no learner can
# make a name in feedback/ to redirect the instructor's write.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=11
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - feedback test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
mkuser clgb2_prof private
mkuser clgb2_ann
mkuser clgb2_bob
mkdir "$tmp/courses" && chown clgb2_prof "$tmp/courses"
class=$tmp/courses/class
as clgb2_prof "$BIN" --class-init "$class" --title "Feedback" >/dev/null 2>&1 ||
  { bad "class-init"; exit 1; }
for l in 50-class-warmup.md 53-class-gradebook.md; do
  cp "$here/$l" "$class/lessons/" && chown clgb2_prof "$class/lessons/$l"
done
as clgb2_prof sh -c "cat >'$class/class.lua'" <<'EOF2'
return { title = "Feedback", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim",
         memory_per_learner = "64 MiB", grade_time_limit = "10 s" }
EOF2
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'
printf 'grades()\nlesson(50)\nedit [[%s]]\ncheck()\nlesson(53)\nsquares = {1, 4, 9, 16}\ncheck()\n' "$SQUARE" |
  as clgb2_ann "$BIN" --class "$class" >"$tmp/ann.out" 2>&1
printf 'lesson(53)\nsquares = {1, 4, 9, 15}\ncheck()\n' |
  as clgb2_bob "$BIN" --class "$class" >"$tmp/bob.out" 2>&1
expect "grades() before anything is published says so" \
  "No results yet: the instructor has not published grades for you in this class." "$tmp/ann.out"
cd "$tmp/home/clgb2_prof" || exit 1
ann=$(id -u clgb2_ann); bob=$(id -u clgb2_bob)

# --- publishing, as the instructor (not root)
as clgb2_prof "$BIN" --grade "$class" --publish >g.txt 2>g.err
expect "--publish says where the results went" "published the results of 2 of 2 learners in" g.err
if [ "$(stat -c '%a %U' "$class/feedback")" = "711 clgb2_prof" ] &&
   [ "$(stat -c '%a %U' "$class/feedback/$ann.json")" = "640 clgb2_prof" ]; then
  ok "feedback/ is the instructor's (711); each file theirs, mode 640 with an ACL for its learner"
else bad "owner and mode"; stat -c '%n %a %U' "$class/feedback" "$class/feedback"/* | sed 's/^/    /'; fi
printf 'grades()\n' | as clgb2_ann "$BIN" --class "$class" >ann2.out 2>&1
printf 'grades()\n' | as clgb2_bob "$BIN" --class "$class" >bob2.out 2>&1
expect "a learner sees their score with grades()" "Your results in Feedback, published" ann2.out
expect "... and each task's points" "2 of 2 points." ann2.out
if grep -q "53-class-gradebook/four-squares  0.75/1" bob2.out &&
   grep -q "partly right (75% of the points): 3 of 4 squares are right" bob2.out &&
   grep -q "no submission: the learner never reached this task" bob2.out; then
  ok "the other learner sees their own scores and each task's output"
else bad "bob's grades()"; sed 's/^/    /' bob2.out; fi
if as clgb2_bob cat "$class/feedback/$ann.json" >x.out 2>&1; then bad "bob read ann's results"
elif as clgb2_ann cat "$class/feedback/$ann.json" | grep -q '"user":"clgb2_ann"'; then
  ok "a learner cannot read another's results, and can read their own"
else bad "ann cannot read her own file"; fi
if as clgb2_bob ls "$class/feedback" >x.out 2>&1; then bad "a learner lists feedback/"
else ok "a learner cannot list feedback/"; fi
if as clgb2_bob ln -s "$class/feedback/$ann.json" "$class/feedback/.$bob.0000000000000000.tmp" \
    2>/dev/null || as clgb2_bob touch "$class/feedback/$bob.json.new" 2>/dev/null; then
  bad "a learner made a name in feedback/"
else ok "a learner cannot plant a link or a name in feedback/"; fi

# --- root publishes too (the file stays the instructor's), and a planted feedback/ is refused
"$BIN" --grade "$class" --learner clgb2_bob --publish >r.txt 2>r.err
if [ "$(stat -c '%a %U' "$class/feedback/$bob.json")" = "640 clgb2_prof" ] &&
   ! as clgb2_ann cat "$class/feedback/$bob.json" >/dev/null 2>&1; then
  ok "published by root, a learner's file is still the instructor's and theirs alone"
else bad "root publish"; cat r.err | sed 's/^/    /'; fi
as clgb2_prof sh -c "rm -r '$class/feedback' && ln -s /tmp '$class/feedback'"
as clgb2_prof "$BIN" --grade "$class" --publish >l.txt 2>l.err
expect "a feedback/ that is a link is refused, not followed" "it must be a folder, not a link" l.err
exit $status
