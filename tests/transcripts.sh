#!/bin/sh
# tests/transcripts.sh BIN: pipes each tests/transcripts/NAME.lua into the REPL (no terminal,
# so no prompts or banner) and compares everything it prints with NAME.expected.
BIN=$1
status=0
set -- tests/transcripts/*.lua
echo "1..$#" # one test per transcript
for input in tests/transcripts/*.lua; do
  name=$(basename "$input" .lua)
  expected=tests/transcripts/$name.expected
  actual=$("$BIN" --backend none <"$input" 2>&1; echo "[exit $?]")
  if [ "$actual" = "$(cat "$expected")" ]; then
    echo "ok - transcript $name"
  else
    echo "not ok - transcript $name"
    printf '%s\n' "$actual" | diff "$expected" - | sed 's/^/    /' | head -n 30
    status=1
  fi
done
exit $status
