#!/bin/sh
# tests/lessons_typed.sh BIN: lesson tasks passed the way a learner passes them, by typing the
# solution at the prompt of the real console (piped), not through --verify-lessons' path, on the
# simulator. Each case: the lesson, how many next() reach the task, the lines typed, and the
# check's verdict expected.
. tests/shlib.sh
BIN=${1:-${CUDALAB_TEST_BIN:-build/cudalab}}
plan 2
# typed NAME LESSON NEXTS WANT LINE...: a fresh learner opens LESSON, goes NEXTS steps on, types
# the LINEs and check(); the output must hold WANT
typed() {
  name=$1; lesson=$2; nexts=$3; want=$4; shift 4
  {
    echo "lesson($lesson)"
    i=0; while [ $i -lt "$nexts" ]; do echo "next()"; i=$((i + 1)); done
    for line in "$@"; do echo "$line"; done
    echo "check()"
  } | XDG_STATE_HOME="$tmp/state-$lesson-$#" CUDALAB_WORKSPACE="$tmp/ws-$lesson-$#" \
      "$BIN" --sim >"$tmp/out" 2>&1
  expect "$name" "$want" "$tmp/out"
}
typed "lesson 14: the leak is fixed by dropping results and collecting" 14 4 "Correct. next() goes on." \
  "results = nil" "collectgarbage()"
typed "lesson 14: collecting alone does not fix the leak" 14 4 "Not yet: " "collectgarbage()"
exit $status
