#!/bin/sh
# tests/class_accounts.sh [BIN]: classroom mode's class folder with real Unix accounts: an
# instructor (cltest_teach) and two learners (cltest_ann, cltest_ben), ben playing the attacker
# with cudalab and with the shell. Shows that each learner's record is private and theirs
# alone, that what ben plants in the drop box (a file in ann's name, links, a FIFO) is flagged
# and never followed, that identity is the account and not $USER, and that class.open refuses
# a class.lua that others can change.
#
# Needs root (to make the accounts, which are removed at exit); otherwise every test is
# reported as skipped. Run from the repository root: sh tests/class_accounts.sh build/cudalab
BIN=${1:-${CUDALAB_TEST_BIN:-build/cudalab}}
. tests/shlib.sh
N=32
plan $N
skip_all() {
  i=1
  while [ $i -le $N ]; do
    echo "ok - class accounts test $i # SKIP $1"
    i=$((i + 1))
  done
  exit 0
}
[ "$(id -u)" = 0 ] || skip_all "not root"
for t in useradd userdel groupadd groupdel usermod runuser; do
  command -v $t >/dev/null 2>&1 || skip_all "no $t here"
done

# A strict umask for everything below, cudalab included: the modes the class folder and the
# records get must not depend on it.
umask 077
TEACH=cltest_teach ANN=cltest_ann BEN=cltest_ben CARA=cltest_cara GRP=cltest_grp
ACCOUNTS="$TEACH $ANN $BEN $CARA"
# Removes the accounts and groups made here (each has a group of its own name).
cleanup() {
  for u in $ACCOUNTS; do
    id -u "$u" >/dev/null 2>&1 && userdel "$u" >/dev/null 2>&1
    getent group "$u" >/dev/null 2>&1 && groupdel "$u" >/dev/null 2>&1
  done
  getent group "$GRP" >/dev/null 2>&1 && groupdel "$GRP" >/dev/null 2>&1
  rm -rf "$tmp" "$base"
}
trap cleanup EXIT
# account NAME [PRIMARY GROUP]: the account, with a private group of its name unless told
# otherwise; one left by an earlier run is taken as it is.
account() {
  id -u "$1" >/dev/null 2>&1 && return 0
  g=${2:-$1}
  getent group "$g" >/dev/null 2>&1 || groupadd "$g" || return 1
  useradd -M -s /bin/sh -g "$g" "$1"
}
for u in $TEACH $ANN $BEN; do account "$u" || skip_all "cannot make the account $u"; done
groupadd "$GRP" 2>/dev/null
usermod -aG "$GRP" "$TEACH" && usermod -aG "$GRP" "$ANN"
ANN_UID=$(id -u $ANN) BEN_UID=$(id -u $BEN)

# Everything lives in a fresh folder that other accounts may traverse; the class is made in a
# folder of the instructor's.
base=$(mktemp -d)
chmod 755 "$base"
for u in $TEACH $ANN $BEN; do
  mkdir -p "$base/home/$u" && chown "$u" "$base/home/$u" && chmod 700 "$base/home/$u"
done
mkdir "$base/teach" && chown $TEACH "$base/teach" && chmod 755 "$base/teach"
class=$base/teach/class
R=$class/records

# as USER OUT LUA: runs LUA as USER in cudalab (C is cudalab.class, D the class folder), with
# what it prints (and any error) in OUT. The account's state and cache are its own.
as() {
  _u=$1 _out=$2
  shift 2
  runuser -u "$_u" -- env HOME="$base/home/$_u" XDG_STATE_HOME="$base/home/$_u/state" \
    XDG_CACHE_HOME="$base/home/$_u/cache" "$BIN" --backend none \
    -e "C = require 'cudalab.class'; D = '$class'; $*" >"$_out" 2>&1
}
# ben_fails NAME COMMAND: COMMAND, run by ben's shell, must fail (on ann's record, which must
# be there for the failure to mean anything).
ben_fails() {
  if [ ! -f "$R/$ANN_UID.1.json" ]; then bad "$1: ann's record is not there to attack"
  elif runuser -u $BEN -- sh -c "$2" >/dev/null 2>&1; then bad "$1"
  else ok "$1"; fi
}
# same NAME FILE TEXT: FILE (read as root) holds exactly TEXT.
same() {
  if [ "$(cat "$2" 2>/dev/null)" = "$3" ]; then ok "$1"
  else bad "$1: $2 holds '$(cat "$2" 2>&1)'"; fi
}
o=$tmp/out

# 1. init: refused while the instructor's group is shared, then made

account $CARA $TEACH
as $TEACH "$o" 'print(C.init(D, nil, "return {title = \"t\"}"))'
expect "init refuses an instructor's primary group that another account has" \
  "but $CARA is in it too, so learners could read each other's records" "$o"
expect "and says how to get a private group" "groupadd ${TEACH}_class" "$o"
userdel $CARA
as $TEACH "$o" 'print(C.init(D, nil, "return {title = \"t\"}"))'
expect "init by the instructor" "true" "$o"
if [ "$(stat -c '%a %U %G' "$R")" = "3773 $TEACH $TEACH" ] &&
   [ "$(stat -c '%a %U %G' "$class")" = "755 $TEACH $TEACH" ]; then
  ok "records/ is 3773 and the instructor's, with their group"
else
  bad "records/ is $(stat -c '%a %U %G' "$R"), the folder $(stat -c '%a %U %G' "$class")"
fi
as $TEACH "$o" 'print(C.init(D .. "-root", "root", "return {}"))'
expect "init refuses a group the instructor is not in" "you ($TEACH) are not a member of the group root" "$o"

# 2. ben plants things in the drop box before ann's first record

runuser -u $BEN -- sh -c "echo 'ben pretends to be ann' > $R/$ANN_UID.json"
runuser -u $BEN -- ln -s /etc/shadow "$R/$ANN_UID.2.json"
runuser -u $BEN -- ln -s "$ANN_UID.1.json" "$R/$ANN_UID.3.json"
runuser -u $BEN -- mkfifo "$R/$ANN_UID.4.json"

# 3. the learners record

as $ANN "$o" 'local h = assert(C.open(D)) print(h:read_own_record()) print(h:write_record("ann 1")) print(h:write_record("ann 2")) print(h:read_own_record())'
expect "ann's first read_own_record: none yet (the squatted file is not hers)" "false" "$o"
expect "ann records, and reads her record back" "ann 2" "$o"
same "ann's record went to <uid>.1.json, past ben's file in her name" "$R/$ANN_UID.1.json" "ann 2"
if [ "$(stat -c '%a %U %G' "$R/$ANN_UID.1.json")" = "640 $ANN $TEACH" ]; then
  ok "ann's record is 0640, hers, in the instructor's group"
else
  bad "ann's record is $(stat -c '%a %U %G' "$R/$ANN_UID.1.json")"
fi
as $BEN "$o" 'local h = assert(C.open(D)) print(h:write_record("ben 1"))'
same "ben records into his own <uid>.json" "$R/$BEN_UID.json" "ben 1"
if ls -A "$R" | grep -q '\.tmp$'; then bad "temporaries left in records/: $(ls -A "$R")"
else ok "no temporaries are left behind"; fi

# 4. ben against ann's record, with the shell

ben_fails "ben cannot read ann's record (cat)" "cat $R/$ANN_UID.1.json"
ben_fails "ben cannot overwrite it (cp over)" "cp /etc/hostname $R/$ANN_UID.1.json"
ben_fails "ben cannot write into it" "echo evil > $R/$ANN_UID.1.json"
ben_fails "ben cannot rename it (mv)" "mv -f $R/$ANN_UID.1.json $R/$BEN_UID.9.json"
ben_fails "ben cannot replace it by renaming his own over it" "mv -f $R/$BEN_UID.json $R/$ANN_UID.1.json"
ben_fails "ben cannot delete it (rm)" "rm -f $R/$ANN_UID.1.json"
ben_fails "ben cannot list records/" "ls $R"
same "ann's record is unchanged after all that" "$R/$ANN_UID.1.json" "ann 2"

# 5. identity is the account, not $USER

runuser -u $BEN -- env USER=$ANN LOGNAME=$ANN HOME="$base/home/$BEN" \
  XDG_STATE_HOME="$base/home/$BEN/state" XDG_CACHE_HOME="$base/home/$BEN/cache" "$BIN" \
  --backend none -e "C = require 'cudalab.class' print('whoami', C.whoami().user, C.whoami().uid)
    print(assert(C.open('$class')):write_record('ben says he is ann'))" >"$o" 2>&1
expect "USER=$ANN in ben's session: whoami still says ben" "whoami	$BEN	$BEN_UID" "$o"
same "and his record goes to his own file" "$R/$BEN_UID.json" "ben says he is ann"
same "ann's record is untouched" "$R/$ANN_UID.1.json" "ann 2"

# 6. who may read the records

as $ANN "$o" 'print(assert(C.open(D)):records())'
expect "ann's records() is refused" "only the class's instructor can read its records" "$o"
as $TEACH "$o" 'for _, r in ipairs(assert(assert(C.open(D)):records())) do
  print(r.file, r.uid, r.user, r.text or ("PROBLEM " .. r.problem)) end'
expect "the instructor reads ann's record, with her uid" "$ANN_UID.1.json	$ANN_UID	$ANN	ann 2" "$o"
expect "and ben's, with his" "$BEN_UID.json	$BEN_UID	$BEN	ben says he is ann" "$o"
expect "ben's file in ann's name is flagged as forged" \
  "$ANN_UID.json	$BEN_UID	$BEN	PROBLEM owned by uid $BEN_UID ($BEN), not uid $ANN_UID ($ANN): ignored" "$o"
expect "ben's link to /etc/shadow is reported, not followed" \
  "$ANN_UID.2.json	$BEN_UID	$BEN	PROBLEM a symbolic link made by uid $BEN_UID ($BEN): not followed" "$o"
if grep -q "^$ANN_UID.3.json	$BEN_UID	$BEN	PROBLEM a symbolic link" "$o" &&
   [ "$(grep -c 'ann 2' "$o")" = 1 ]; then
  ok "ben's link to ann's record is reported, and her text is shown once, as hers"
else
  bad "ben's link to ann's record:"; sed 's/^/    /' "$o"
fi
expect "ben's FIFO is reported without hanging" "$ANN_UID.4.json	$BEN_UID	$BEN	PROBLEM not a regular file" "$o"

# 7. a class.lua that others can change is refused

chmod o+w "$class/class.lua"
as $ANN "$o" 'print(C.open(D))'
expect "a world-writable class.lua is refused by class.open, naming it and the fix" \
  "$class/class.lua can be written by anyone (mode 0646), so anyone could change the class; the instructor should run: chmod go-w $class/class.lua" "$o"
chmod o-w "$class/class.lua"

# 8. a class for one group: its members get in, others do not

as $TEACH "$o" "print(C.init(D .. '-grp', '$GRP', 'return {}'))"
expect "init of a class for the group $GRP" "true" "$o"
as $ANN "$o" "print(assert(C.open(D .. '-grp')):info().restricted)"
as $BEN "$tmp/ben" "print(C.open(D .. '-grp'))"
if grep -q "^true" "$o" && grep -q "cannot be entered (permission denied): the class is open to the members of the group $GRP only" "$tmp/ben"; then
  ok "a group class opens for a member (ann) and not for ben"
else
  bad "group class:"; sed 's/^/    /' "$o" "$tmp/ben"
fi

exit $status
