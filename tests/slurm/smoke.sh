#!/bin/sh
# tests/slurm/smoke.sh: starts the private one-node Slurm of tests/slurm/lib.sh, runs two array
# jobs on it with `sbatch --wait` (one whose tasks all succeed, one whose task 2 exits 3), reads
# each task's state back, and stops it. Skipped (never passed) where Slurm is not installed or
# we are not root.
here=$(dirname "$0")
. "$here/../shlib.sh"
. "$here/lib.sh"
plan 7
names="slurm starts and its node is idle
each array task writes its own id
sbatch --wait exits 0 when every task succeeds
sbatch --wait exits with a failed task's code
scontrol show job names the failed task and its exit code
the job completion log names the failed task and its exit code
slurm_stop leaves no daemon alive"

if ! why=$(slurm_available); then
  # CI installs Slurm (.ci/run) and sets CUDALAB_REQUIRE_SLURM: there a missing Slurm is a failure
  if [ "${CUDALAB_REQUIRE_SLURM:-0}" = 1 ]; then
    echo "$names" | while IFS= read -r name; do echo "not ok - $name: no Slurm here: $why"; done
    exit 1
  fi
  echo "$names" | while IFS= read -r name; do echo "ok - $name # SKIP $why"; done
  exit 0
fi

# Not inside $tmp: munged wants every folder above its socket searchable by all, and $tmp is 700.
sd=$(mktemp -d)
good_pid='' bad_pid=''
cleanup() {
  for p in $good_pid $bad_pid; do kill "$p" 2>/dev/null; done
  slurm_stop "$sd"
  rm -rf "$sd" "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if slurm_start "$sd" 2>"$tmp/start.err"; then
  ok "slurm starts and its node is idle"
else
  bad "slurm starts and its node is idle"
  sed 's/^/    /' "$tmp/start.err"
  echo "$names" | sed 1d | while IFS= read -r name; do bad "$name: slurm did not start"; done
  exit 1
fi

# Both arrays at once: sbatch --wait polls the controller 2 s after submitting, then 8 s later,
# so each call takes 2 or 10 s however quick its tasks are; run side by side they cost one wait.
sbatch --array=0-3 --wait --parsable --chdir="$sd" --output="$sd/good-%a.txt" \
  --wrap 'echo task $SLURM_ARRAY_TASK_ID' >"$tmp/good" 2>&1 &
good_pid=$!
sbatch --array=0-3 --wait --parsable --chdir="$sd" --output="$sd/bad-%a.txt" \
  --wrap 'echo task $SLURM_ARRAY_TASK_ID; [ "$SLURM_ARRAY_TASK_ID" != 2 ] || exit 3' \
  >"$tmp/bad" 2>&1 &
bad_pid=$!
wait "$good_pid"
good_rc=$?
wait "$bad_pid"
bad_rc=$?

for i in 0 1 2 3; do echo "task $i"; done >"$tmp/want"
cat "$tmp/want" "$tmp/want" >"$tmp/want2"
for a in good bad; do for i in 0 1 2 3; do cat "$sd/$a-$i.txt"; done; done >"$tmp/got" 2>&1
if cmp -s "$tmp/want2" "$tmp/got"; then ok "each array task writes its own id"
else
  bad "each array task writes its own id:"
  sed 's/^/    /' "$tmp/got" "$tmp/good" "$tmp/bad"
fi
if [ "$good_rc" -eq 0 ]; then ok "sbatch --wait exits 0 when every task succeeds"
else
  bad "sbatch --wait exits 0 when every task succeeds: status $good_rc"
  sed 's/^/    /' "$tmp/good"
fi
if [ "$bad_rc" -eq 3 ]; then ok "sbatch --wait exits with a failed task's code"
else
  bad "sbatch --wait exits with a failed task's code: status $bad_rc, not 3"
  sed 's/^/    /' "$tmp/bad"
fi

# --parsable prints "JOBID" (or "JOBID;CLUSTER"). `scontrol -o show job JOBID` prints one line
# per array task while the records are kept (MinJobAge): ArrayTaskId, JobState, ExitCode.
job=$(head -n 1 "$tmp/bad" | cut -d';' -f1)
printf '0 COMPLETED 0:0\n1 COMPLETED 0:0\n2 FAILED 3:0\n3 COMPLETED 0:0\n' >"$tmp/states_want"
task='\([0-9]*\)' state='\([A-Z_]*\)' code='\([0-9]*:[0-9]*\)'
scontrol -o show job "$job" 2>&1 |
  sed -n "s/.* ArrayTaskId=$task .* JobState=$state .* ExitCode=$code.*/\1 \2 \3/p" |
  sort -n >"$tmp/states"
if cmp -s "$tmp/states_want" "$tmp/states"; then
  ok "scontrol show job names the failed task and its exit code"
else
  bad "scontrol show job names the failed task and its exit code:"
  sed 's/^/    /' "$tmp/states"
  scontrol -o show job "$job" 2>&1 | head -n 8 | sed 's/^/    /'
fi
# The job completion log (jobcomp/filetxt) keeps a line per task for good: JobState, ArrayJobId,
# ArrayTaskId and ExitCode.
sed -n "s/.* JobState=$state .* ArrayJobId=$job ArrayTaskId=$task .* ExitCode=$code.*/\2 \1 \3/p" \
  "$sd/jobcomp.txt" 2>&1 | sort -n >"$tmp/comp"
if cmp -s "$tmp/states_want" "$tmp/comp"; then
  ok "the job completion log names the failed task and its exit code"
else
  bad "the job completion log names the failed task and its exit code:"
  sed 's/^/    /' "$tmp/comp"
  head -n 8 "$sd/jobcomp.txt" | sed 's/^/    /'
fi

pids=$(slurm_pids "$sd" | tr '\n' ' ')
slurm_stop "$sd" 2>"$tmp/stop.err"
alive=$(slurm_running "$sd" | tr '\n' ' ')
if [ "$(echo "$pids" | wc -w)" -eq 3 ] && [ -z "$alive" ]; then ok "slurm_stop leaves no daemon alive"
else
  bad "slurm_stop leaves no daemon alive: pids $pids, alive: $alive"
  sed 's/^/    /' "$tmp/stop.err"
fi
exit $status
