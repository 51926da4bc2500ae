#!/bin/sh
# tests/class/srun.sh BIN: an interactive class session on a cluster, `srun --pty cudalab --class
# DIR` as a learner on the private one-node Slurm of tests/slurm/lib.sh (munged, slurmctld and
# slurmd of its own): the session runs under the learner's account on the node, with a terminal,
# joins the class, passes a task, and its record lands in the class folder, the learner's own;
# the instructor's report sees it. Skipped where Slurm is not installed or we are not root.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../shlib.sh"
. "$here/../slurm/lib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
N=6
plan $N
names="slurm starts and its node is idle
srun --pty gives the session a terminal on the node
the session joins the class and passes the task
at join, the learner is told what the class records for the instructor
the record lands in the class folder, the learner's own
the instructor's report shows the learner's pass"
skip_all() { echo "$names" | while IFS= read -r name; do echo "ok - $name # SKIP $1"; done; exit 0; }
[ "$(id -u)" = 0 ] && command -v runuser >/dev/null 2>&1 || skip_all "needs root and runuser"
if ! why=$(slurm_available); then
  if [ "${CUDALAB_REQUIRE_SLURM:-0}" = 1 ]; then
    echo "$names" | while IFS= read -r name; do echo "not ok - $name: no Slurm here: $why"; done
    exit 1
  fi
  skip_all "$why"
fi
. "$here/accounts.sh"
# not inside $tmp: munged wants every folder above its socket searchable by all
sd=$(mktemp -d)
cleanup_more='slurm_stop "$sd"; rm -rf "$sd"'
if slurm_start "$sd" 2>"$tmp/start.err"; then ok "slurm starts and its node is idle"
else bad "slurm starts"; sed 's/^/    /' "$tmp/start.err"; exit 1; fi

mkuser clgb3s_prof private
mkuser clgb3s_ann
mkdir "$tmp/courses" && chown clgb3s_prof "$tmp/courses"
class=$tmp/courses/class
as clgb3s_prof "$BIN" --class-init "$class" --title "On the cluster" >/dev/null 2>&1 ||
  { bad "class-init"; exit 1; }
cp "$here/50-class-warmup.md" "$class/lessons/" && chown clgb3s_prof "$class/lessons/50-class-warmup.md"
as clgb3s_prof sh -c "cat >'$class/class.lua'" <<'EOF2'
return { title = "On the cluster", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim",
         memory_per_learner = "64 MiB" }
EOF2
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'
# the learner's own srun, typed at a terminal (script), as they would; the job's terminal is a
# pseudo-terminal on the node, which what they type reaches through srun
rm -f "$tmp/srun.out"
# Every wait here is bounded, KILL after TERM included: srun can ignore TERM while its step is
# being set up, and a plain `timeout` then waits for it for ever. --immediate: a node that cannot
# take the job now is a failure to report, not a queue to wait in.
# The inner timeout runs in the foreground: without --foreground it moves itself and srun into a
# process group of their own, which is a background group of script's terminal wherever the shell
# script starts does not exec its command (dash, /bin/sh, where SHELL is unset); srun --pty then
# stops on SIGTTOU when it puts that terminal in raw mode, before it launches anything. SHELL is
# set so the test meets that case on every machine, not only where root's shell is sh.
typein "$tmp/srun.out" \
  'print("tty", os.execute("test -t 0") and "yes" or "no", os.getenv("SLURM_JOB_ID") ~= nil)' \
  'lesson(50)' "edit [[$SQUARE]]" 'check()' |
  as clgb3s_ann env SHELL=/bin/sh timeout -k 5 150 script -qefc "env SLURM_CONF='$SLURM_CONF' \
    timeout --foreground -k 5 120 srun --immediate=60 --pty --chdir='$tmp/home/clgb3s_ann' \
    '$BIN' --class '$class'" /dev/null >"$tmp/srun.out" 2>&1
srun_rc=$?
if grep -qF "tty	yes	true" "$tmp/srun.out"; then
  ok "srun --pty gives the session a terminal on the node"
else
  bad "srun --pty gives the session a terminal on the node: srun's session ended with status $srun_rc"
  sed 's/^/    /' "$tmp/srun.out" | tail -n 20
  { SLURM_CONF=$SLURM_CONF sinfo -N -o '%N %T %E' 2>&1; _slurm_logs "$sd" 2>&1; } |
    tail -n 30 | sed 's/^/    /'
fi
expect "the session joins the class and passes the task" "Correct" "$tmp/srun.out"
expect "at join, the learner is told what the class records for the instructor" \
  "The class records, for the instructor: the Lua you type during a lesson" "$tmp/srun.out"
uid=$(id -u clgb3s_ann)
if [ "$(stat -c '%U %a' "$class/records/$uid.json" 2>/dev/null)" = "clgb3s_ann 640" ] &&
   grep -q '"passed": *true' "$class/records/$uid.json"; then
  ok "the record lands in the class folder, the learner's own"
else bad "no record of the learner's"; ls -la "$class/records" | sed 's/^/    /'; sed 's/^/    /' "$tmp/srun.out" | tail -n 15; fi
as clgb3s_prof "$BIN" --class-report "$class" >"$tmp/report.txt" 2>&1
if grep -q "^clgb3s_ann .*1/1" "$tmp/report.txt"; then ok "the instructor's report shows the learner's pass"
else bad "report"; sed 's/^/    /' "$tmp/report.txt" | head -n 20; fi
exit $status
