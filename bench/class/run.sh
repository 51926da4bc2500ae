#!/bin/sh
# bench/class/run.sh BIN: the classroom figures of make bench. Writes bench/CLASS.md on a machine
# without a GPU (K = 8 and 16 learners on the simulator, and grading throughput), and
# bench/class/H200.md where there is a GPU (K = 8, 64 and 256 on it, then 64 and 256 under an
# MPS daemon started for the run). Needs root: every learner is a Unix account of its own.
BIN=${1:?usage: run.sh BIN}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "class bench: skipped (needs root to make the learners' accounts)" >&2
  exit 0
fi
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
if "$BIN" --gpu -e 'cuda.device() os.exit(cuda.backend() == "cuda" and 0 or 1)' >/dev/null 2>&1; then
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
  {
    echo "# Classroom load on the GPU"
    echo
    echo "Measured $(date -u +%Y-%m-%d) by \`bench/class/load.sh\` on: $gpu; $cpu, $(nproc) cores."
    echo "Goal: 256 learners, worst step p99 under 100 ms, no record lost."
    echo
    STEPS=300 sh "$here/load.sh" "$BIN" 8 64 256
    echo
    echo "Under MPS (a daemon started for the run):"
    echo
    CLASS_MPS=1 STEPS=300 sh "$here/load.sh" "$BIN" 64 256
  } >"$here/H200.md" 2>&1
  echo "wrote bench/class/H200.md"
else
  {
    echo "# Classroom figures"
    echo
    echo "Measured $(date -u +%Y-%m-%d) by \`make bench\` (bench/class/) on: no GPU; $cpu, $(nproc) cores."
    echo "The GPU's figures are in bench/class/H200.md."
    echo
    echo "K scripted learners at once, each its own Unix account, on the simulator: the class's task"
    echo "(record written), then 300 steps of a launch and a wait. Goals: no record lost, step p99"
    echo "under 100 ms."
    echo
    CLASS_BACKEND=sim STEPS=300 sh "$here/load.sh" "$BIN" 8 16
    echo
    echo "Grading (\`cudalab --grade\`), learner-tasks per second; -j 1 is the anchor of the others:"
    echo
    sh "$here/grade.sh" "$BIN" 24 | awk -F': ' '
      { split($2, v, " "); rate[$1] = v[1]; what[$1] = $2 }
      END {
        print "| figure | cudalab | anchor | anchor value | ratio |"
        print "|---|---|---|---|---|"
        a = rate["grade_tasks_per_s_j1"]
        print "| grading, -j 1 | " what["grade_tasks_per_s_j1"] " | | | |"
        if ("grade_tasks_per_s_j2" in rate)
          printf "| grading, -j 2 | %s | -j 1 | %s /s | %.2f |\n", what["grade_tasks_per_s_j2"], a, rate["grade_tasks_per_s_j2"] / a
        if ("grade_tasks_per_s_slurm" in rate)
          printf "| grading, Slurm array | %s | -j 1 | %s /s | %.2f |\n", what["grade_tasks_per_s_slurm"], a, rate["grade_tasks_per_s_slurm"] / a
      }'
    echo
    echo "Grading a course (\`bench/class/grade_course.sh\`): 40 learners who each passed the 7 tasks of"
    echo "lessons 1, 2, 3 and 5 by typing them, graded with -j 2 at the default limit of 30 s per task;"
    echo "then one hostile learner whose 7 tasks are all loops only the grader's deadline stops, at 5 s"
    echo "per task, against the most the design allows it (7 x (5 s + 2 s of grace)):"
    echo
    sh "$here/grade_course.sh" "$BIN" 40 | awk -F': ' '
      { split($2, v, " "); secs[$1] = v[1]; what[$1] = $2 }
      END {
        print "| figure | cudalab | anchor | anchor value | ratio |"
        print "|---|---|---|---|---|"
        r = secs["grade_course_root_j2"]
        print "| grading as root (each learner as their own account) | " what["grade_course_root_j2"] " | | | |"
        if ("grade_course_landlock_j2" in secs)
          printf "| grading as the instructor, under Landlock | %s | as root | %s s | %.2f |\n", what["grade_course_landlock_j2"], r, secs["grade_course_landlock_j2"] / r
        if ("grade_hostile_learner" in secs)
          printf "| one hostile learner | %s | 7 x (5 s + 2 s) | 49 s | %.2f |\n", what["grade_hostile_learner"], secs["grade_hostile_learner"] / 49
      }'
  } >bench/CLASS.md 2>&1
  echo "wrote bench/CLASS.md"
fi
