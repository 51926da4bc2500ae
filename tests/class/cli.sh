#!/bin/sh
# tests/class/cli.sh BIN: the instructor's commands and --class given bad arguments: each gets
# a message that says what is wrong and a non-zero status, and nothing is made.
. "$(dirname "$0")/../shlib.sh"
BIN=${1:-${CUDALAB_TEST_BIN:-build/cudalab}}
plan 25
# fails NAME STATUS NEEDLE CMD...: CMD exits with STATUS and says NEEDLE
fails() {
  name=$1; want=$2; needle=$3; shift 3
  "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" = "$want" ] && grep -qF -- "$needle" "$tmp/out"; then ok "$name"
  else bad "$name: status $got (want $want)"; sed 's/^/    /' "$tmp/out" | head -n 5; fi
}
fails "--class-init without a folder" 2 "usage: cudalab --class-init" "$BIN" --class-init
fails "--class-init with an unknown option" 2 "unknown option '--gruop'" "$BIN" --class-init "$tmp/c" --gruop x
fails "--class-init with a group that does not exist" 1 "no group named 'no-such-group-here'" \
  "$BIN" --class-init "$tmp/c" --group no-such-group-here
[ -e "$tmp/c" ] && bad "a failed --class-init left $tmp/c behind" || ok "a failed --class-init leaves nothing"
fails "--class-init with a title of two lines" 2 "--title must be one line" "$BIN" --class-init "$tmp/c" --title "a
b"
fails "--class-report of a folder that is not a class" 1 "no class folder" "$BIN" --class-report "$tmp/none"
fails "--class-snapshot without a folder" 2 "usage: cudalab --class-snapshot DIR" "$BIN" --class-snapshot
fails "--class-snapshot of a folder that is not a class" 1 "no class folder" "$BIN" --class-snapshot "$tmp/none"
fails "--class-report with --watch too fast" 2 "at least 0.5 seconds" sh -c "'$BIN' --class-init '$tmp/c2' >/dev/null && '$BIN' --class-report '$tmp/c2' --watch 0.1"
fails "--grade with -j 0" 2 "'-j' needs a whole number of 1 or more" "$BIN" --grade "$tmp/c2" -j 0
fails "--grade with a bad shard" 2 "--shard takes I/N" "$BIN" --grade "$tmp/c2" --shard 4/3 --out x
fails "--grade --shard without --out" 2 "--shard needs --out FILE" "$BIN" --grade "$tmp/c2" --shard 1/2
fails "--grade --merge with nothing to merge" 2 "--merge needs the partial results" "$BIN" --grade --merge
echo '{"format": "something else"}' >"$tmp/p.json"
fails "--grade --merge of a file that is not a partial result" 1 "is not a partial grading result" \
  "$BIN" --grade --merge "$tmp/p.json"
fails "--grade --backend with an unknown backend" 2 "--backend takes sim or cuda" "$BIN" --grade "$tmp/c2" --backend gpu9
fails "--class with an empty path" 2 "--class needs the class folder's path" "$BIN" --class ""
echo 'return { lessons = {1, 2, 4, 42} }' >"$tmp/c2/class.lua"
fails "an unknown lesson number in class.lua is an error naming it" 1 \
  "class.lua: lessons names lesson 42, which no lesson has (the built-in lessons and the class's own are numbered 1, 2, 3, 4, 5," \
  "$BIN" --class-report "$tmp/c2"
fails "--verify-lessons --class of a class that cannot be joined verifies nothing and fails" 1 \
  "the class could not be joined (said above): no lesson verified" "$BIN" --verify-lessons --class "$tmp/c2" 1
# --verify-lessons --class DIR [N]: the class's own lessons, and no record (not a learner)
"$BIN" --class-init "$tmp/c4" >/dev/null 2>&1
cp "$(dirname "$0")/50-class-warmup.md" "$tmp/c4/lessons/"
echo 'return { lessons = {}, lesson_dirs = {"lessons"}, backend = "sim" }' >"$tmp/c4/class.lua"
"$BIN" --verify-lessons --class "$tmp/c4" 50 >"$tmp/v.out" 2>&1
got=$?
if [ "$got" = 0 ] && grep -q "^ok - lesson 50-class-warmup" "$tmp/v.out"; then
  ok "--verify-lessons --class DIR N runs the class's own lesson"
else bad "--verify-lessons --class: status $got"; sed 's/^/    /' "$tmp/v.out" | head -n 5; fi
# a number is a lesson's number: "1" is lesson 1, not every lesson whose name holds a 1
"$BIN" --verify-lessons 1 >"$tmp/v1.out" 2>&1
got=$?
if [ "$got" = 0 ] && grep -q "^ok - lesson 01-welcome$" "$tmp/v1.out"; then
  ok "--verify-lessons 1 runs lesson 1"
else bad "--verify-lessons 1: status $got"; sed 's/^/    /' "$tmp/v1.out" | head -n 5; fi
n=$(ls -A "$tmp/c4/records" | wc -l)
[ "$n" = 0 ] && ok "--verify-lessons --class writes no record" ||
  bad "--verify-lessons --class wrote $n records"

# --watch: Ctrl-C is its way out (status 0); with --html the page is rewritten every round
"$BIN" --class-init "$tmp/c3" >/dev/null 2>&1
# a terminal's Ctrl-C reaches every process of the foreground group once: so does this kill
setsid "$BIN" --class-report "$tmp/c3" --watch 0.5 >"$tmp/w.out" 2>&1 &
wpid=$!
await "$tmp/w.out" "0 learners" 2
kill -INT -"$wpid"
wait "$wpid"
got=$?
if [ "$got" = 0 ] && grep -q "0 learners" "$tmp/w.out"; then ok "Ctrl-C ends --watch with status 0"
else bad "Ctrl-C ends --watch: status $got"; sed 's/^/    /' "$tmp/w.out" | head -n 5; fi
"$BIN" --class-report "$tmp/c3" --watch 0.5 --html "$tmp/w.html" >/dev/null 2>&1 &
wpid=$!
inode() { stat -c %i "$tmp/w.html" 2>/dev/null; }
if poll 20 test -s "$tmp/w.html" && first=$(inode) && poll 20 sh -c "[ \"\$(stat -c %i '$tmp/w.html')\" != '$first' ]"
then ok "--watch --html rewrites the page each round"; else bad "--watch --html wrote the page once"; fi
kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
expect "the page says when it was made" " — made 20" "$tmp/w.html"
# the page's temporary is made new: a link planted where an older cudalab put it is not followed
echo "the instructor's own file" >"$tmp/own.txt"
ln -s "$tmp/own.txt" "$tmp/p.html.tmp"
"$BIN" --class-report "$tmp/c3" --html "$tmp/p.html" >/dev/null 2>&1
if [ "$(cat "$tmp/own.txt")" = "the instructor's own file" ] && grep -q "<!DOCTYPE html>" "$tmp/p.html" &&
   [ "$(stat -c %a "$tmp/p.html")" = 600 ]; then
  ok "--html writes its page through no planted link, readable by the instructor alone"
else bad "--html followed a planted link or left the page readable"; ls -l "$tmp" | sed 's/^/    /'; fi
exit $status
