#!/bin/sh
# tests/lessons_typed.sh BIN: every task of every lesson passed the way a learner passes it, on
# the simulator (TYPED_BACKEND=cuda: on the GPU, as make test-gpu runs it), through the real
# console (a pseudo-terminal from script(1), with readline): the learner types lesson(N), next()
# up to each task, the task's Lua solution line by line or edit() (the editor puts the reference
# kernel in the learner's file), then check(). Not the path of --verify-lessons, which installs
# solutions itself. What is typed comes from the lesson file (tests/lessons/typed_plan.lua), so a
# new lesson or task is covered without editing this file.
. tests/shlib.sh
BIN=${1:-${CUDALAB_TEST_BIN:-build/cudalab}}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
# Each task's wrong answers are typed first, each followed by check(), which must refuse it: the
# console's path, not --verify-lessons's, must fail them too.
# TYPED_LESSONS=12 (a shell pattern for the number) types one lesson alone, to look into it, and
# TYPED_LESSONS=none none; TYPED_ANSWERS=0 leaves out the answers typed after the lessons (make
# test runs the suite in parts: under a sanitizer it takes over fifteen minutes whole).
only=${TYPED_LESSONS:-[0-9][0-9]}
answers=${TYPED_ANSWERS:-1}
backend=${TYPED_BACKEND:-sim}
n=0
[ "$only" = none ] || n=$(ls lessons/$only-*.md | wc -l)
ANSWERS=20
plan $((3 * n + (answers == 1 ? ANSWERS : 0)))

# at_prompt OUT: the REPL at OUT waits at a prompt ("> ", or ">> " inside an unfinished
# statement): its output ends with one. Counting prompts would not do: lesson examples echo their
# statements after "> " too, and a line typed while the engine is busy is lost to the terminal.
at_prompt() { [ "$(tail -c 2 "$1" 2>/dev/null)" = "> " ]; }
# typefile OUT FILE: types each line of FILE, as it is, once the REPL at OUT shows a prompt again
# (its output has grown since the last line and ends at a prompt), then Ctrl-D.
typefile() {
  _size=0
  while IFS= read -r _line; do
    poll 300 grown_to_prompt "$1" "$_size" || break
    _size=$(wc -c <"$1")
    printf '%s\n' "$_line"
  done <"$2"
  poll 300 grown_to_prompt "$1" "$_size"
  printf '\004'
}
grown_to_prompt() { [ "$(wc -c 2>/dev/null <"$1" || echo 0)" -gt "$2" ] && at_prompt "$1"; }

# The learner's editor: edit() opens the learner's copy; this one writes the next kernel of the
# plan (a wrong answer or the reference), taking the first folder named in $SOLUTIONS/edits.
cat >"$tmp/editor" <<'ED'
#!/bin/sh
dir=$(head -n 1 "$SOLUTIONS/edits")
sed 1d "$SOLUTIONS/edits" >"$SOLUTIONS/edits.rest" && mv "$SOLUTIONS/edits.rest" "$SOLUTIONS/edits"
cp "$SOLUTIONS/$dir/$(basename "$1")" "$1"
ED
chmod +x "$tmp/editor"

for file in lessons/$only-*.md; do
  [ -f "$file" ] || continue
  name=$(basename "$file" .md)
  d=$tmp/$name
  mkdir -p "$d"
  "$BIN" --backend none tests/lessons/typed_plan.lua "$file" "$d" >"$d/plan.log" 2>&1 ||
    { bad "$name: its typed solutions cannot be read: $(cat "$d/plan.log")"; bad "$name: skipped"; continue; }
  tasks=$(cat "$d/tasks")
  wrongs=$(cat "$d/wrongs")
  cp "$d/edits" "$d/solutions/edits"
  rm -f "$d/tty"
  typefile "$d/tty" "$d/lines" |
    COLUMNS=80 SOLUTIONS=$d/solutions EDITOR=$tmp/editor VISUAL= XDG_STATE_HOME="$d/state" XDG_CACHE_HOME="$d/cache" \
      CUDALAB_WORKSPACE="$d/ws" timeout 600 script -qefc "$BIN --backend $backend" /dev/null >"$d/tty" 2>&1
  passed=$(grep -c "Correct\. " "$d/tty")
  if [ "$passed" -eq "$tasks" ]; then ok "$name: its $tasks task(s) pass when their solutions are typed"
  else
    bad "$name: $passed of $tasks tasks passed when their solutions were typed:"
    # what a check refused, else where the transcript stopped
    if grep -q "Not yet" "$d/tty"; then grep -n -B6 -A6 "Not yet" "$d/tty" | head -n 60
    else tail -n 40 "$d/tty"; fi | sed 's/^/    /'
  fi
  refused=$(grep -c "Not yet: " "$d/tty")
  if [ "$refused" -eq "$wrongs" ]; then ok "$name: its $wrongs wrong answer(s) fail when typed"
  else bad "$name: $refused of $wrongs wrong answers failed their checks when typed"; fi
  expect "$name: the lesson is done" "Lesson $name is done." "$d/tty"
  # (That the engine's prose fits 80 columns and code is shown as written is checked by
  # tests/exec/code_as_written.lua, which can tell prose from what examples print: program
  # output, left for the terminal to wrap.)
done

[ "$answers" = 1 ] || exit $status

# Wrong answers typed at the prompt: LESSON, the lines typed after lesson(LESSON) (skip() passes an
# earlier task), then check(), whose output must hold WANT.
typed() {
  name=$1; lesson=$2; want=$3; shift 3
  typed_from "$name" "$want" "lesson($lesson)" "$@"
}
# typed_from NAME WANT LINES...: the lines typed from start-up (lesson(N) among them), then check().
typed_from() {
  name=$1; want=$2; shift 2
  { for line in "$@"; do echo "$line"; done; echo "check()"; } |
    COLUMNS=200 XDG_STATE_HOME="$tmp/state-typed" CUDALAB_WORKSPACE="$tmp/ws-typed" "$BIN" --backend "$backend" \
      >"$tmp/out" 2>&1
  rm -rf "$tmp/state-typed" "$tmp/ws-typed"
  expect "$name" "$want" "$tmp/out"
}
# Lesson 14's leak: the learner's own fix frees what the lesson's code made.
typed "lesson 14: the leak is fixed by dropping results and collecting" 14 "Correct. next() goes on." \
  "next()" "next()" "next()" "next()" "results = nil" "collectgarbage()"
typed "lesson 14: collecting alone does not fix the leak" 14 "Not yet: " \
  "next()" "next()" "next()" "next()" "collectgarbage()"
typed "lesson 1: the right number typed in as a constant is not computed" 1 \
  "typed in as a number: compute it from the fields of d" \
  "next()" "next()" "next()" "next()" "skip()" "next()" "next()" "resident = 132 * 2048"
# A formula may be typed as a learner writes it: over several lines, through a name of their own
# (set in the task or a step before it), in a multiple assignment, beside a comparison.
typed "lesson 1: a formula through a device named a step before the task" 1 \
  "Correct. next() goes on." \
  "next()" "next()" "next()" "next()" "skip()" "next()" "gpu = cuda.device()" "next()" \
  "resident = gpu.sm_count * gpu.max_threads_per_sm"
typed_from "lesson 1: a formula through a device named before lesson(1)" \
  "Correct. next() goes on." "gpu = cuda.device()" "lesson(1)" \
  "next()" "next()" "next()" "next()" "skip()" "next()" "next()" \
  "resident = gpu.sm_count * gpu.max_threads_per_sm"
typed_from "lesson 5: a formula through a device named before lesson(5)" \
  "Correct. next() goes on." "dev = cuda.device()" "lesson(5)" "next()" "next()" "next()" \
  "warps32 = math.min(dev.max_blocks_per_sm, dev.max_threads_per_sm // 32) * 32 // dev.warp_size"
# A name set inside a function the learner calls is set by no line kept: the check says so,
# rather than call the figure typed in.
typed_from "lesson 1: a device set inside a function is named, not called typed in" \
  "they read gpu, which none of the lines it keeps sets" \
  "function setup() gpu = cuda.device() end" "setup()" "lesson(1)" \
  "next()" "next()" "next()" "next()" "skip()" "next()" "next()" \
  "resident = gpu.sm_count * gpu.max_threads_per_sm"
typed "lesson 4: a formula over two lines" 4 "Correct. next() goes on." \
  "next()" "next()" "next()" "c = cuda.zeros(1000)" "n = #c" "grid = (n + 127) // 128" \
  "inc[{grid, 128}](c, 1000)"
typed "lesson 4: a formula in a multiple assignment, beside a comparison" 4 \
  "Correct. next() goes on." \
  "next()" "next()" "next()" "grid, block = (#c + 127) // 128, 128; print(grid == 8)" \
  "c = cuda.zeros(1000)" "inc[{grid, block}](c, 1000)"
typed "lesson 5: a formula through an intermediate" 5 "Correct. next() goes on." \
  "next()" "next()" "next()" "d = cuda.device()" \
  "blocks = math.min(d.max_blocks_per_sm, d.max_threads_per_sm // 32)" \
  "warps32 = blocks * 32 // d.warp_size"
typed "lesson 14: a formula in a multiple assignment" 14 "Correct. next() goes on." \
  "next()" "next()" "next()" "next()" "skip()" "next()" "next()" \
  "peak_gbs, bytes = d.memory_clock_khz * 1000 * 2 * (d.bus_width / 8) / 1e9, d.bus_width / 8"
typed "lesson 2: blocks of 128 where the task asks for 256" 2 "blocks of 128 threads; the task asks for blocks of 256" \
  "next()" "next()" "next()" "next()" "next()" "next()" "next()" "skip()" "next()" \
  'dbl = cuda.kernel(workfile "double.cu")' "b = cuda.ones(N)" "dbl[{(N + 127) // 128, 128}](b, N)"
# What the checks say of an answer right in one way and wrong in another.
typed "lesson 2: a dbl that reads a[i] twice is told so, not that it loops over others" 2 \
  "two a warp where one does: each thread" \
  "next()" "next()" "next()" "next()" "next()" "next()" "next()" \
  'edit [[__global__ void dbl(volatile float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = a[i] + a[i]; }]]'
typed "lesson 2: a dbl that one thread runs over the array is told to read its own element once" \
  2 "reading it once, not again and not in a loop over others" \
  "next()" "next()" "next()" "next()" "next()" "next()" "next()" \
  'edit [[__global__ void dbl(float *a, int n) { if (blockIdx.x == 0 && threadIdx.x == 0) for (int j = 0; j < n; j++) a[j] = 2.0f * a[j]; }]]'
typed "lesson 4: an inc_all that reads a[i] twice is told so" 4 \
  "load requests for 32 warps, two a warp where one does: each thread should read" \
  "next()" "next()" "next()" "skip()" "next()" "next()" "next()" \
  'edit [[__global__ void inc_all(volatile float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { float x = a[i]; a[i] = x + 1.0f + (a[i] - x); } }]]'
typed "lesson 2: a grid-stride dbl launched with too few blocks is told what the task asks" 2 \
  "fewer than the 10000000 elements: the task asks for one thread per element, enough blocks" \
  "next()" "next()" "next()" "next()" "next()" "next()" "next()" \
  'edit [[__global__ void dbl(float *a, int n) { for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) a[i] = 2.0f * a[i]; }]]' \
  "check()" "next()" 'dbl = cuda.kernel(workfile "double.cu")' "b = cuda.ones(N)" \
  "dbl[{1024, 256}](b, N)"
typed "lesson 2: a dbl that adds 1 makes twos of ones too, and is caught" 2 \
  "b holds twos, but 1 + 1 and a 2 written over the 1 are twos too: the dbl that ran" \
  "next()" "next()" "next()" "next()" "next()" "next()" "next()" "skip()" "next()" \
  'do local f = io.open(workfile "double.cu", "w"); f:write("__global__ void dbl(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }"); f:close() end' \
  'dbl = cuda.kernel(workfile "double.cu")' "b = cuda.ones(N)" "dbl[{(N + 255) // 256, 256}](b, N)"
typed "lesson 4: a grid formula wrong for one size names the size" 4 \
  "for an array of 1025 elements your formula gives 8 blocks of 128, want 9: round up" \
  "next()" "next()" "next()" "grid = math.floor(#c / 128 + 0.5)" "c = cuda.zeros(1000)" \
  "inc[{grid, 128}](c, 1000)"
typed "lesson 5: a block's threads for the SM's is named on the made-up GPU it fails" 5 \
  "on a GPU with 28 blocks and 768 threads per SM your formula gives 8 warps, not 24" \
  "next()" "next()" "next()" "d = cuda.device()" \
  "warps32 = math.min(d.max_blocks_per_sm, d.max_threads_per_block // 32)"
typed "lesson 6: a to_pinned that frees d is told so" 6 \
  "to_pinned freed d; it must leave d as it was" "next()" "next()" "next()" \
  "function to_pinned(d) local h = cuda.host(#d, d.dtype, {pinned = true}); d:copyto(h); d:free(); return h end" \
  "out_pinned = to_pinned(cuda.array(dx))"
exit $status
