# tests/shlib.sh: sourced by the shell test scripts. Gives them a private temporary folder
# ($tmp, with XDG_STATE_HOME inside it) and the ok / bad / expect helpers that print the
# "ok - name" / "not ok - name" lines tests/run.sh counts. $status is 1 once anything failed.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp/state"
status=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; status=1; }
# expect NAME NEEDLE FILE: FILE contains NEEDLE (a fixed string)
expect() {
  if grep -qF -- "$2" "$3"; then ok "$1"
  else bad "$1: no '$2' in output:"; sed 's/^/    /' "$3" | head -n 20; fi
}
# plan N: declares how many ok / not ok lines the script prints; tests/run.sh fails a script that
# prints another number, so one that stops early cannot pass.
plan() { echo "1..$1"; }

# Tests wait for the event they need (a line in a file, a process gone), never for a guessed
# time: a sleep is too short on a busy machine and wasted on an idle one. The waits poll every
# 50 ms and give up after a bound, so a missing event fails its test instead of hanging.
# poll SECONDS COMMAND...: runs COMMAND until it succeeds; 1 if it never does in SECONDS.
poll() {
  _n=$(($1 * 20))
  shift
  until "$@"; do
    _n=$((_n - 1))
    [ "$_n" -gt 0 ] || return 1
    sleep 0.05
  done
}
# seen FILE NEEDLE [N]: FILE holds NEEDLE (a fixed string) at least N times (default 1).
seen() { [ "$(grep -oF -- "$2" "$1" 2>/dev/null | wc -l)" -ge "${3:-1}" ]; }
# await FILE NEEDLE [N]: waits (30 s at most) until seen FILE NEEDLE N.
await() { poll 30 seen "$@"; }
# typein OUT LINE...: types each LINE (a printf format: \t is Tab) into a REPL whose terminal
# output goes to OUT, each once the REPL shows its next prompt, then Ctrl-D once the last line
# has been answered. Pipe it into script(1). OUT must not exist before (rm -f it): the prompts
# are counted in it. A LINE is a printf format, so a % is written %%.
typein() {
  _out=$1
  shift
  _k=1
  for _line in "$@"; do
    await "$_out" "> " $_k || break
    printf "$_line\n"
    _k=$((_k + 1))
  done
  await "$_out" "> " $_k
  printf '\004'
}
