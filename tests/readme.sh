#!/bin/sh
# tests/readme.sh BIN: every ```lua block of README.md runs on the simulator without an error,
# so the examples a newcomer copies first keep working.
BIN=$1
. tests/shlib.sh
awk '/^```lua$/{n++; on=1; next} /^```/{on=0} on{print > (dir "/block" n ".lua")}' dir="$tmp" README.md
set -- "$tmp"/block*.lua
[ -f "$1" ] || set -- # no block
plan $(($# + 1)) # one test per block, and one that there are blocks
count=0
for f in "$tmp"/block*.lua; do
  [ -f "$f" ] || continue
  count=$((count + 1))
  if "$BIN" --sim "$f" >"$tmp/out" 2>&1; then ok "README example $(basename "$f" .lua) runs"
  else bad "README example $(basename "$f" .lua):"; sed 's/^/    /' "$tmp/out" | head -n 20; fi
done
[ $count -gt 0 ] && ok "README has $count runnable examples" || bad "no lua examples found in README.md"
exit $status
