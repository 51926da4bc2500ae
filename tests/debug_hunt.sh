#!/bin/sh
# tests/debug_hunt.sh BIN: the bug hunt of tests/debug_hunt/, replayed. Each bug is a kernel
# (NN_name.cu) and a driver (NN_name.lua) whose check against the CPU shows a wrong result; its
# NN_name.hunt lists the commands a learner typed after seeing it ("lua CHUNK" at the Lua prompt,
# "dbg LINE" at the debugger's) and, as "expect TEXT", what cudalab said that named the bug: its
# line, and the variable, thread or block where there is one. Every bug's commands are typed
# again into cudalab reading standard input, as at the prompt, and each expected text must be in
# what it prints, so that a message which stops naming the bug fails here; and no bug may take
# more than 3 commands.
BIN=$1
. tests/shlib.sh
export XDG_CACHE_HOME="$tmp/cache"
export COLUMNS=200 # whole sentences on one line, to look for
dir=tests/debug_hunt
bugs=$(ls "$dir"/*.hunt | wc -l)
expects=$(cat "$dir"/*.hunt | grep -c '^expect ')
plan $((1 + 2 * bugs + expects))

[ "$bugs" -eq 25 ] && ok "the hunt has its 25 bugs" || bad "the hunt has $bugs bugs, not 25"
for spec in "$dir"/*.hunt; do
  bug=$(basename "$spec" .hunt)
  # what is typed: the driver first (which shows the wrong result), then the bug's commands
  { printf 'dofile("%s/%s.lua")\n' "$dir" "$bug"; sed -n 's/^lua //p; s/^dbg //p' "$spec"; } >"$tmp/in"
  typed=$(grep -cE '^(lua|dbg) ' "$spec")
  timeout 120 "$BIN" --sim -i <"$tmp/in" >"$tmp/out" 2>&1
  grep -qE 'WRONG|warning|out-of-bounds|use after free|double free|null pointer|over the limit|never finish' "$tmp/out" &&
    ok "$bug: the driver's launch shows something is wrong" ||
    bad "$bug: the driver's launch looks right: $(head -n 5 "$tmp/out")"
  [ "$typed" -le 3 ] && ok "$bug: found in $typed commands" ||
    bad "$bug: $typed commands, more than 3"
  sed -n 's/^expect //p' "$spec" >"$tmp/want"
  while IFS= read -r text; do
    expect "$bug: cudalab says '$text'" "$text" "$tmp/out"
  done <"$tmp/want"
done
exit $status
