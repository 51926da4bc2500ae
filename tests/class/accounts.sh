# tests/class/accounts.sh: sourced by the classroom tests after tests/shlib.sh. Real Unix
# accounts for the parts of a class (the tests run as root, as CI does), each with a home of its
# own under $tmp, removed again when the test ends (add what else to clean up to $cleanup_more).
#   mkuser NAME [private]   an account; with "private", a group of its own (an instructor's)
#   as USER CMD...          runs CMD as USER, with their own home, state, cache and data
chmod 755 "$tmp"
users=""
cleanup_more=":"
class_cleanup() {
  eval "$cleanup_more"
  for u in $users; do userdel "$u" 2>/dev/null; done
  rm -rf "$tmp"
}
trap class_cleanup EXIT
mkuser() {
  if [ -n "${2:-}" ]; then group=-U; else group=-N; fi
  id "$1" >/dev/null 2>&1 || useradd -M $group -s /bin/sh "$1" || exit 1
  users="$users $1"
  mkdir -p "$tmp/home/$1" && chown "$1" "$tmp/home/$1" && chmod 700 "$tmp/home/$1"
  chmod 755 "$tmp/home"
}
as() {
  u=$1; shift
  runuser -u "$u" -- env HOME="$tmp/home/$u" XDG_STATE_HOME="$tmp/home/$u/state" \
    XDG_CACHE_HOME="$tmp/home/$u/cache" XDG_DATA_HOME="$tmp/home/$u/data" "$@"
}
