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
