# tests/sanitizer_scan.sh: sourced by tests/run.sh. sanitizer_report LOG prints the first line of
# LOG that a sanitizer writes when it finds something, or nothing.
#
# A suite run on a sanitizer build can pass while a report went by: the report may come from a
# child process whose death the suite took for an expected error, from a test that only checks
# that a call raised, or from LeakSanitizer at exit. So run.sh reads every suite's output, and
# a report fails the suite whatever its tests said.
#
# What counts as a report, and why each pattern is as narrow as it is:
#   ERROR: AddressSanitizer / ERROR: LeakSanitizer   the first line of an ASan or LSan report
#   SUMMARY: AddressSanitizer / UndefinedBehaviorSanitizer / LeakSanitizer   the last line
#   FILE:LINE:COLUMN: runtime error:   UBSan's line for each finding; where UBSan recovers (a
#       plain -fsanitize=undefined, without -fno-sanitize-recover) no SUMMARY follows it.
#       "runtime error:" alone would not do: a Lua message may say those words, but with no
#       column ("x.lua:3: runtime error: ..."), where UBSan's position always has one, debug
#       information or not.
#   <unknown>: runtime error:   UBSan's line where it knows no source position.
SANITIZER_PATTERN='ERROR: (AddressSanitizer|LeakSanitizer)'
SANITIZER_PATTERN="$SANITIZER_PATTERN|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer"
SANITIZER_PATTERN="$SANITIZER_PATTERN|[^ :]+:[0-9]+:[0-9]+: runtime error: "
SANITIZER_PATTERN="$SANITIZER_PATTERN|<unknown>: runtime error: "

# sanitizer_report LOG: the first report line in LOG, without surrounding blanks; nothing when
# there is none (or LOG is missing). -a: a log is text with the odd binary byte.
sanitizer_report() {
  grep -aE -m 1 -- "$SANITIZER_PATTERN" "$1" 2>/dev/null |
    sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}
