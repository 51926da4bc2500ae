# tests/slurm/lib.sh: a private single-node Slurm cluster that a test starts and stops itself.
# Sourced by POSIX sh tests (after tests/shlib.sh, whose poll it uses when present).
#
#   slurm_available   0 when munged, mungekey (or dd), slurmctld, slurmd and the client
#                     commands are installed and we are root; else prints why (one line), 1.
#   slurm_start DIR   starts munged, slurmctld and slurmd, all three on files under DIR, exports
#                     SLURM_CONF=DIR/slurm.conf for the client commands (sbatch, sinfo, scontrol,
#                     squeue, scancel) and waits until the node is idle. On failure it prints the
#                     tail of the logs, stops whatever it started and returns 1.
#   slurm_stop DIR    cancels what is still queued, waits for the job steps to end, then stops the
#                     three daemons by the pids slurm_start recorded (TERM, then KILL after a
#                     bounded wait), never by name. 1 if one of them outlived the KILL.
#   slurm_pids DIR    prints the recorded pids, one a line.
#   slurm_running DIR prints those of them still alive (nothing once slurm_stop is done).
#
# What it starts, everything as root (as CI runs) and in the foreground (-F / -D, put in the
# background by the shell, so the pid is known at once, with no pid-file race):
#   munged     a fresh key DIR/munge/munge.key, its socket DIR/munge/munge.socket, pid and seed
#              files in DIR/munge. Slurm reaches it through AuthInfo=socket=... (read by
#              auth/munge and cred/munge alike), so the system's munged and key are never used.
#              munged refuses a socket below a folder that some user cannot search: slurm_start
#              makes DIR and DIR/munge mode 711, and every folder above DIR must be searchable
#              by all (a `mktemp -d` folder in /tmp is fine; one inside another mktemp folder,
#              mode 700, is not, and slurm_start says so).
#   slurmctld  state in DIR/state, log DIR/log/slurmctld.log.
#   slurmd     spool in DIR/spool, log DIR/log/slurmd.log; one node named $(hostname -s) whose
#              CPU layout is the one `slurmd -C` reports (a layout other than the hardware's,
#              such as CPUs=$(nproc) alone on a machine with hyperthreads, drains the node),
#              with RealMemory a tenth under what it reports.
# The ports (SlurmctldPort, SlurmdPort) are two free high ports picked at random, and the
# addresses are 127.0.0.1, so a system Slurm on this machine (ports 6817/6818, /etc/slurm) is
# never touched, two tests can each run their own at once, and no name lookup is needed.
# PlugStackConfig names an empty file, so no system SPANK plugin is loaded. No cgroups
# (proctrack/linuxproc, task/none), no mail (MailProg=/bin/true).
#
# Reading job results. There is no slurmdbd, so `sacct` does not work here (and `sacct -c`, on
# the job completion log, cannot read array tasks in 22.05). What does:
#   - `sbatch --wait` exits with the highest exit code of the array's tasks (1 for a task that
#     a signal ended), so 0 means every task succeeded;
#   - `scontrol -o show job JOBID` prints one line per array task, with ArrayTaskId, JobState
#     and ExitCode (CODE:SIGNAL), for MinJobAge seconds after the task ended: an hour here
#     (SLURM_MIN_JOB_AGE overrides it). Where MinJobAge is short (the default is 300 s) the
#     record of a task that ended early can be gone before its array's last task ends;
#   - DIR/jobcomp.txt (jobcomp/filetxt) keeps a line per finished job or task for good:
#     JobState=... ArrayJobId=... ArrayTaskId=... ExitCode=...
# sbatch --wait polls the controller 2 s after submitting, then waits 4 times longer each time
# (8 s, then 32 s) unless MinJobAge is short: MinJobAge=5 or less keeps it polling every 2 s.
# So a quick array returns after 2 s or 10 s, one of 10 to 42 s after 42 s. The scheduler
# starts a job as soon as a CPU frees (batch_sched_delay=0, sched_min_interval=0), so an array
# of quick tasks on a two-CPU machine ends in about a second a pair instead of three.
#
# Debugging: DIR/slurm.conf is the whole configuration; the logs are DIR/log/slurmctld.log and
# DIR/log/slurmd.log (SLURM_DEBUG=debug2 raises the daemons' level), DIR/log/munged.out (munged
# in the foreground logs to its stderr), and the Slurm daemons' own stdout/stderr in
# DIR/log/*.out. The "pmi/pmix: can not load PMIx library" and "Could not open ... state file"
# errors, and munged's "Unauthorized credential for client UID=0", are harmless (no PMIx
# installed; a first start). With SLURM_CONF exported, `sinfo`, `squeue` and
# `scontrol show node` talk to this cluster.

# _slurm_wait SECONDS COMMAND...: poll from tests/shlib.sh when sourced, else the same loop.
_slurm_wait() {
  if command -v poll >/dev/null 2>&1; then
    poll "$@"
    return
  fi
  _sw_n=$(($1 * 20))
  shift
  until "$@"; do
    _sw_n=$((_sw_n - 1))
    [ "$_sw_n" -gt 0 ] || return 1
    sleep 0.05
  done
}

slurm_available() {
  for _sa_c in munged slurmctld slurmd sbatch sinfo scontrol squeue scancel; do
    if ! command -v "$_sa_c" >/dev/null 2>&1; then
      echo "$_sa_c is not installed (Debian: apt-get install slurmctld slurmd slurm-client munge)"
      return 1
    fi
  done
  if ! command -v mungekey >/dev/null 2>&1 && ! command -v dd >/dev/null 2>&1; then
    echo "neither mungekey nor dd is installed to make a munge key"
    return 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "the private Slurm runs its daemons as root; this runs as $(id -un)"
    return 1
  fi
  return 0
}

# _slurm_alive PID: the process exists and is not a zombie (a daemon started by this shell
# stays a zombie until the shell reaps it, and kill -0 succeeds on a zombie).
_slurm_alive() {
  kill -0 "$1" 2>/dev/null || return 1
  _al_state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
  [ "$_al_state" != Z ] && [ "$_al_state" != X ]
}

# _slurm_port_used PORT: some socket on this machine is bound to TCP PORT.
_slurm_port_used() {
  _pu_hex=$(printf ':%04X' "$1")
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p="$_pu_hex" '
    substr($2, length($2) - 4) == p { found = 1 }
    END { exit !found }'
}

# _slurm_free_ports: prints a random high port P such that P and P+1 are both free.
_slurm_free_ports() {
  _fp_i=0
  while [ "$_fp_i" -lt 100 ]; do
    _fp_r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    _fp_p=$((20000 + _fp_r % 39000))
    if ! _slurm_port_used "$_fp_p" && ! _slurm_port_used $((_fp_p + 1)); then
      echo "$_fp_p"
      return 0
    fi
    _fp_i=$((_fp_i + 1))
  done
  return 1
}

# _slurm_node_line HOST: the NodeName line, from the layout `slurmd -C` reports.
_slurm_node_line() {
  _nl_c=$(SLURM_CONF=/dev/null slurmd -C 2>/dev/null | grep '^NodeName=' | head -n 1)
  _nl_mem=$(echo "$_nl_c" | sed -n 's/.*RealMemory=\([0-9][0-9]*\).*/\1/p')
  _nl_mem=$((${_nl_mem:-0} * 9 / 10))
  [ "$_nl_mem" -ge 1 ] || _nl_mem=1
  _nl_layout=$(echo "$_nl_c" | tr ' ' '\n' |
    grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')
  [ -n "$_nl_layout" ] || _nl_layout="CPUs=$(nproc) "
  echo "NodeName=$1 NodeAddr=127.0.0.1 ${_nl_layout}RealMemory=$_nl_mem State=UNKNOWN"
}

slurm_pids() {
  for _p_n in slurmd slurmctld munged; do
    [ -s "$1/pids/$_p_n" ] && cat "$1/pids/$_p_n"
  done
  return 0
}

slurm_running() {
  for _r_p in $(slurm_pids "$1"); do
    _slurm_alive "$_r_p" && echo "$_r_p"
  done
  return 0
}

# _slurm_logs DIR: the tail of every log, to the standard error, less the known harmless lines.
# A Slurm daemon's .out repeats its .log, so it is shown only where the .log is empty.
_slurm_logs() {
  for _lg_f in "$1"/log/*; do
    [ -s "$_lg_f" ] || continue
    case $_lg_f in
      *slurm*.out) [ -s "${_lg_f%.out}.log" ] && continue ;;
    esac
    echo "--- $_lg_f" >&2
    grep -vE 'pmix|PMIx|MPI: Cannot|state file|state save file|No .* state file|MailProg' "$_lg_f" |
      tail -n 20 >&2
  done
}

_slurm_fail() {
  echo "slurm_start: $2" >&2
  _slurm_logs "$1"
  slurm_stop "$1" >/dev/null 2>&1
  return 1
}

_slurm_node_idle() {
  [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]
}

# _slurm_settled DIR: the node is idle, or a daemon died (no use waiting then).
_slurm_settled() {
  for _st_n in munged slurmctld slurmd; do
    _slurm_alive "$(cat "$1/pids/$_st_n")" || return 0
  done
  _slurm_node_idle
}

# _slurm_munge_up DIR: munged made its socket, or died (no use waiting then).
_slurm_munge_up() {
  [ -S "$1/munge/munge.socket" ] || ! _slurm_alive "$(cat "$1/pids/munged")"
}

# _slurm_closed_parent DIR: prints the first folder above DIR that not every user can search.
_slurm_closed_parent() {
  _cp_p=$(dirname "$1")
  while :; do
    case $(stat -c %A "$_cp_p" 2>/dev/null) in
      ?????????[xt]) ;;
      *) echo "$_cp_p"; return 0 ;;
    esac
    [ "$_cp_p" = / ] && return 0
    _cp_p=$(dirname "$_cp_p")
  done
}

slurm_start() {
  _s_d=$1
  [ -n "$_s_d" ] || { echo "usage: slurm_start DIR" >&2; return 1; }
  mkdir -p "$_s_d" || return 1
  _s_d=$(cd "$_s_d" && pwd) || return 1
  _s_closed=$(_slurm_closed_parent "$_s_d")
  if [ -n "$_s_closed" ]; then
    echo "slurm_start: munged needs every folder above its socket searchable by all;" \
      "$_s_closed is not" >&2
    return 1
  fi
  for _s_sub in munge state spool log run pids; do
    mkdir -p "$_s_d/$_s_sub" || return 1
  done
  # munged wants every folder above its socket searchable by all (and writable by root alone)
  chmod 711 "$_s_d" "$_s_d/munge" || return 1
  _s_host=$(hostname -s)
  _s_port=$(_slurm_free_ports) || { echo "slurm_start: no free port" >&2; return 1; }
  _s_sock=$_s_d/munge/munge.socket

  # munged: its own key, socket, pid file and seed, all in DIR/munge.
  rm -f "$_s_d/munge/munge.key"
  if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --keyfile="$_s_d/munge/munge.key" || return 1
  else
    dd if=/dev/urandom of="$_s_d/munge/munge.key" bs=1024 count=1 2>/dev/null || return 1
  fi
  chmod 600 "$_s_d/munge/munge.key"
  munged --foreground --socket="$_s_sock" --key-file="$_s_d/munge/munge.key" \
    --pid-file="$_s_d/munge/munged.pid" \
    --seed-file="$_s_d/munge/munged.seed" \
    </dev/null >"$_s_d/log/munged.out" 2>&1 &
  echo $! >"$_s_d/pids/munged"
  _slurm_wait 10 _slurm_munge_up "$_s_d"
  [ -S "$_s_sock" ] || { _slurm_fail "$_s_d" "munged made no socket"; return 1; }

  : >"$_s_d/plugstack.conf"
  _s_level=${SLURM_DEBUG:-info}
  cat >"$_s_d/slurm.conf" <<EOF
# written by tests/slurm/lib.sh: a private one-node cluster, everything under $_s_d
ClusterName=cudalab
SlurmctldHost=$_s_host(127.0.0.1)
SlurmctldPort=$_s_port
SlurmdPort=$((_s_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$_s_sock
StateSaveLocation=$_s_d/state
SlurmdSpoolDir=$_s_d/spool
SlurmctldPidFile=$_s_d/run/slurmctld.pid
SlurmdPidFile=$_s_d/run/slurmd.pid
SlurmctldLogFile=$_s_d/log/slurmctld.log
SlurmdLogFile=$_s_d/log/slurmd.log
SlurmctldDebug=$_s_level
SlurmdDebug=$_s_level
PlugStackConfig=$_s_d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$_s_d/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
MinJobAge=${SLURM_MIN_JOB_AGE:-3600}
$(_slurm_node_line "$_s_host")
PartitionName=debug Nodes=$_s_host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$_s_d/slurm.conf"

  slurmctld -D -f "$SLURM_CONF" </dev/null >"$_s_d/log/slurmctld.out" 2>&1 &
  echo $! >"$_s_d/pids/slurmctld"
  slurmd -D -f "$SLURM_CONF" </dev/null >"$_s_d/log/slurmd.out" 2>&1 &
  echo $! >"$_s_d/pids/slurmd"

  _slurm_wait 30 _slurm_settled "$_s_d"
  for _s_n in munged slurmctld slurmd; do
    _slurm_alive "$(cat "$_s_d/pids/$_s_n")" || { _slurm_fail "$_s_d" "$_s_n died"; return 1; }
  done
  if ! _slurm_node_idle; then
    _slurm_fail "$_s_d" "the node is not idle after 30 s: $(sinfo -h -o '%T %E' 2>&1 | head -n 1)"
    return 1
  fi
  return 0
}

# _slurm_steps_gone DIR: no job is queued or running and no slurmstepd socket is left in the
# spool (each step's slurmstepd keeps one there while it lives).
_slurm_steps_gone() {
  [ -z "$(SLURM_CONF=$1/slurm.conf squeue -h -o %i 2>/dev/null)" ] || return 1
  for _sg_f in "$1"/spool/*_*.*; do
    [ -S "$_sg_f" ] && return 1
  done
  return 0
}

# _slurm_all_dead PID...: none of them is alive.
_slurm_all_dead() {
  for _ad_p in "$@"; do
    _slurm_alive "$_ad_p" && return 1
  done
  return 0
}

slurm_stop() {
  _t_d=$1
  [ -d "$_t_d/pids" ] || return 0
  _t_rc=0
  # The jobs first, while slurmctld and slurmd can still end them: a slurmstepd (it runs a job's
  # script, its parent is init) outlives slurmd, and has no pid recorded here.
  if [ -s "$_t_d/pids/slurmctld" ] && _slurm_alive "$(cat "$_t_d/pids/slurmctld")" &&
    [ -s "$_t_d/pids/slurmd" ] && _slurm_alive "$(cat "$_t_d/pids/slurmd")"; then
    # job ids such as 12, 12_3 or 12_[4-7]: no blank, no glob that matches a file name here
    _t_jobs=$(SLURM_CONF=$_t_d/slurm.conf squeue -h -o %i 2>/dev/null)
    # shellcheck disable=SC2086 # one argument per job id
    [ -z "$_t_jobs" ] || SLURM_CONF=$_t_d/slurm.conf scancel $_t_jobs 2>/dev/null
    _slurm_wait 15 _slurm_steps_gone "$_t_d" ||
      echo "slurm_stop: job steps still running after 15 s" >&2
  fi
  # slurmd, slurmctld, then munged (the other two use it until they are gone).
  for _t_n in slurmd slurmctld munged; do
    [ -s "$_t_d/pids/$_t_n" ] || continue
    _t_p=$(cat "$_t_d/pids/$_t_n")
    if _slurm_alive "$_t_p"; then
      kill -TERM "$_t_p" 2>/dev/null
      if ! _slurm_wait 10 _slurm_all_dead "$_t_p"; then
        echo "slurm_stop: $_t_n ($_t_p) ignored TERM for 10 s; killing it" >&2
        kill -KILL "$_t_p" 2>/dev/null
        if ! _slurm_wait 5 _slurm_all_dead "$_t_p"; then
          echo "slurm_stop: $_t_n ($_t_p) outlived KILL" >&2
          _t_rc=1
        fi
      fi
    fi
  done
  return $_t_rc
}
