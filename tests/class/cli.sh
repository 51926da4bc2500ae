#!/bin/sh
# tests/class/cli.sh BIN: the instructor's commands and --class given bad arguments: each gets
# a message that says what is wrong and a non-zero status, and nothing is made.
. "$(dirname "$0")/../shlib.sh"
BIN=${1:-${CUDALAB_TEST_BIN:-build/cudalab}}
plan 15
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
  "class.lua: lessons names lesson 42, which no lesson has" "$BIN" --class-report "$tmp/c2"
exit $status
