#!/bin/sh
# tests/class/grading.sh BIN: cudalab --grade on a class of 40 learners, each a Unix account of
# its own: some pass the class's task, some fail it, some skip it, one only joined, and some are
# hostile, writing their own record by hand (as any learner can): a forged "passed", Lua that
# reads another learner's file, loops for ever, allocates too much, calls os.execute, replaces
# cuda.compare for the check (each beside a wrong kernel, so that the grade shows why the line
# failed: a chunk that fails is replayed and its error ignored, as at the prompt), and a kernel
# that includes a file by its path. Every grade must be what it should; -j 4 and shards merged
# must give the bytes of one -j 1 run; and with a real single-node Slurm (tests/slurm/lib.sh)
# --slurm --wait must give them too.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
N=18
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - grading test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
slurm_dir=""
cleanup_more='[ -n "$slurm_dir" ] && slurm_stop "$slurm_dir" >/dev/null 2>&1; rm -f /tmp/cudalab-grading-pwned'
mkuser clgrade_prof private
chmod 755 "$tmp/home"
mkdir "$tmp/courses" && chown clgrade_prof "$tmp/courses"
class=$tmp/courses/class
as clgrade_prof "$BIN" --class-init "$class" --title "Grading test" >/dev/null 2>&1 || { bad "class-init"; exit 1; }
cp "$here/50-class-warmup.md" "$class/lessons/" && chown clgrade_prof "$class/lessons/50-class-warmup.md"
as clgrade_prof sh -c "cat >'$class/class.lua'" <<'EOF'
return { title = "Grading test", lessons = {}, lesson_dirs = {"lessons"}, backend = "sim",
         memory_per_learner = "64 MiB", kernel_time_limit = "2 s", grade_time_limit = "5 s" }
EOF
SQUARE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] * a[i]; }'
DOUBLE='__global__ void square(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2 * a[i]; }'

# forge USER LUA-LIST-SOURCE KERNEL: USER writes their own record by hand, saying "passed"
forge() {
  as "$1" "$BIN" --backend none -e "
    local class, json = require 'cudalab.class', require 'json'
    local h = assert(class.open('$class'))
    local rec = { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {
      ['50-class-warmup/square-every-element'] = { lesson = '50-class-warmup', step = 1, attempts = 1, passed = true,
        failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = 2,
        submission = { files = { ['square.cu'] = [==[$3]==] }, lua = $2, at = 2 } } } }
    assert(h:write_record(json.encode(rec)))"
}

i=1
while [ $i -le 40 ]; do
  u=$(printf clgrade_%02d $i)
  mkuser "$u"
  i=$((i + 1))
done
run_learner() { # run_learner N: learner N's session, by the part they play
  n=$1; u=$(printf clgrade_%02d "$n")
  if [ "$n" -le 20 ]; then
    printf 'lesson(50)\nedit [[%s]]\ncheck()\n' "$SQUARE" | as "$u" "$BIN" --class "$class"
  elif [ "$n" -le 28 ]; then
    printf 'lesson(50)\nedit [[%s]]\ncheck()\n' "$DOUBLE" | as "$u" "$BIN" --class "$class"
  elif [ "$n" -le 32 ]; then
    printf 'lesson(50)\nskip()\n' | as "$u" "$BIN" --class "$class"
  elif [ "$n" = 33 ]; then
    forge "$u" "{ \"s = io.open('$class/records/$(id -u clgrade_01).json'):read('a')\" }" "$DOUBLE"
  elif [ "$n" = 34 ]; then forge "$u" '{ "while true do end" }' "$SQUARE"
  elif [ "$n" = 35 ]; then forge "$u" '{ "big = cuda.array(2^28)" }' "$DOUBLE"
  elif [ "$n" = 36 ]; then forge "$u" '{}' "$DOUBLE"
  elif [ "$n" = 37 ]; then forge "$u" '{ "os.execute(\"touch /tmp/cudalab-grading-pwned\")" }' "$DOUBLE"
  elif [ "$n" = 38 ]; then forge "$u" '{}' '#include "/etc/passwd"
'"$SQUARE"
  elif [ "$n" = 39 ]; then echo 'print(1)' | as "$u" "$BIN" --class "$class"
  else forge "$u" '{ "cuda.compare = function() return {ok = true} end" }' "$DOUBLE"
  fi
}
i=1
while [ $i -le 40 ]; do
  run_learner $i >"$tmp/learner-$i.out" 2>&1 &
  [ $((i % 8)) = 0 ] && wait
  i=$((i + 1))
done
wait

grade() { as clgrade_prof "$BIN" --grade "$class" "$@"; }
cd "$tmp/home/clgrade_prof" || exit 1
grade -j 1 --csv one.csv --json one.json >one.txt 2>one.err
score() { awk -F, -v u="$1" '$1 == u {print $(NF - 1)}' one.csv; }
passing=0; i=1
while [ $i -le 20 ]; do [ "$(score "$(printf clgrade_%02d $i)")" = 1 ] && passing=$((passing + 1)); i=$((i + 1)); done
if [ "$passing" = 20 ]; then ok "the 20 learners who passed get 1"; else bad "$passing of 20 passing learners got 1"; sed 's/^/    /' one.err | tail -5; fi
zeros=0; i=21
while [ $i -le 40 ]; do [ "$(score "$(printf clgrade_%02d $i)")" = 0 ] && zeros=$((zeros + 1)); i=$((i + 1)); done
if [ "$zeros" = 20 ]; then ok "the 20 others get 0"; else bad "$zeros of 20 failing, skipping or hostile learners got 0"; fi
rows=$(grep -c '^clgrade_' one.csv)
[ "$rows" = 40 ] && ok "the CSV has a row per learner" || bad "the CSV has $rows rows, not 40"
# output NAME: the Gradescope output of learner NAME's task
output() { "$BIN" --backend none -e "
  local j = require('json').decode(io.open('one.json'):read('a'))
  for _, t in ipairs(j['$1'].tests) do
    if t.name:find('50-class-warmup/square-every-element', 1, true) == 1 then print(j['$1'].score, t.output) end
  end"; }
output clgrade_21 >o.txt; expect "a failed check gives its message" "failed: a[i] should be the square" o.txt
output clgrade_29 >o.txt; expect "a skip without a check gives 0 with a reason" "no submission: the task was skipped" o.txt
output clgrade_39 >o.txt; expect "a learner who only joined gets 0 with a reason" "no submission: the learner never reached" o.txt
output clgrade_33 >o.txt; expect "reading another learner's file fails, saying why" "io is not available when grading" o.txt
output clgrade_34 >o.txt; expect "an endless loop fails on the time limit" "time limit of 5 s" o.txt
output clgrade_35 >o.txt; expect "a huge allocation fails on the class's cap" "64 MiB" o.txt
output clgrade_36 >o.txt; expect "a forged \"passed\" is re-run and fails" "failed: a[i] should be the square" o.txt
output clgrade_37 >o.txt
if grep -q "os is not available when grading" o.txt && [ ! -e /tmp/cudalab-grading-pwned ]; then
  ok "os.execute fails, and ran nothing"; else bad "os.execute: $(cat o.txt)"; fi
output clgrade_38 >o.txt; expect "a kernel including a file by its path fails" "names a path" o.txt
output clgrade_40 >o.txt; expect "replacing cuda.compare for the check is refused" "cannot change cuda.compare" o.txt

grade -j 4 --csv four.csv --json four.json >four.txt 2>/dev/null
if cmp -s one.txt four.txt && cmp -s one.csv four.csv && cmp -s one.json four.json; then
  ok "-j 4 gives the bytes of -j 1"; else bad "-j 4 differs from -j 1"; diff one.csv four.csv | head -5; fi
for s in 1 2 3; do grade --shard $s/3 --out part$s.json 2>/dev/null; done
as clgrade_prof "$BIN" --grade --merge part1.json part2.json part3.json --csv m.csv --json m.json >m.txt 2>/dev/null
if cmp -s one.txt m.txt && cmp -s one.csv m.csv && cmp -s one.json m.json; then
  ok "three shards merged give the bytes of one run"; else bad "shards merged differ from one run"; diff one.txt m.txt | head -5; fi
as clgrade_prof "$BIN" --grade --merge part1.json part3.json >m2.txt 2>m2.err
expect "the merge refuses a missing shard, naming it" "shard 2 of 3 is missing" m2.err

# The same class graded as a Slurm array job, on a single-node Slurm started here.
. "$here/../slurm/lib.sh"
if why=$(slurm_available); then
  slurm_dir=$tmp/slurm
  mkdir -p "$slurm_dir"
  if slurm_start "$slurm_dir" >"$tmp/slurm.log" 2>&1; then
    "$BIN" --grade "$class" --slurm --wait --shards 3 --cpus 1 --work "$tmp/sjob" \
      --csv s.csv --json s.json >s.txt 2>s.err
    if cmp -s one.txt s.txt && cmp -s one.csv s.csv && cmp -s one.json s.json; then
      ok "--slurm --wait (3 array tasks) gives the bytes of the local run"
    else bad "--slurm --wait differs from the local run"; sed 's/^/    /' s.err | tail -8; diff one.txt s.txt | head; fi
    # the job's id first, before any shard ends; then each shard once, with that id
    job=$(sed -n '1s/^submitted array job \([0-9][0-9]*\): 3 shards; script, logs and results in .*/\1/p' s.err)
    said=$(grep -c "^shard [123] of 3 ended (array task ${job:-none}_[123]): [123] of 3 done$" s.err)
    if [ -n "$job" ] && [ "$said" = 3 ] && grep -q "3 of 3 done$" s.err; then
      ok "--slurm --wait says the job's id at once and each shard as it ends"
    else bad "--slurm --wait's progress (job '$job', $said shards said)"; sed 's/^/    /' s.err | head; fi
  else
    bad "a single-node Slurm did not start"; tail -n 15 "$tmp/slurm.log" | sed 's/^/    /'
    bad "--slurm --wait's progress: no Slurm"
  fi
elif [ "${CUDALAB_REQUIRE_SLURM:-0}" = 1 ]; then
  bad "--slurm --wait: no Slurm here, and CI requires one: $why"
  bad "--slurm --wait's progress: no Slurm here, and CI requires one"
else
  echo "ok - --slurm --wait gives the bytes of the local run # SKIP $why"
  echo "ok - --slurm --wait says the job's id at once and each shard as it ends # SKIP $why"
fi
exit $status
