#!/bin/sh
# tests/class/as_live.sh BIN: work that passed at the prompt is graded passed. Real accounts (as
# root, as CI runs): learners type the lessons' own reference solutions at the prompt of a class
# session, see "Correct", and grading must agree:
#   - every function a lesson step uses is there when grading (cuda.watch in lesson 12,
#     cuda.record and cuda.export in 22, cuda.graph in 25); cuda.export writes only into the
#     submission's own folder (a forged record that aims it elsewhere is refused, nothing written);
#   - the learner's globals are the session's, as at the prompt (`results = nil` in lesson 14
#     frees the lesson's arrays; lesson 22's program names its arrays after the globals x, y);
#   - a name set before lesson(N) and read by the task's answer (the check at the prompt reruns
#     that line too) is set when grading: the record carries what was typed before the lesson;
#   - a task's grade does not depend on the learner's other tasks: a lesson whose example holds
#     200 MiB of Lua memory, graded first, leaves no less room to the next, whose example needs
#     400 MiB for a moment (the grader's cap is 512 MiB); graded alone it gives the same output.
#   - a kernel that includes the learner's own header ("twice.h", which includes "half.h") is
#     graded with them: the record carries the headers of the lesson's folder; one that is a
#     symbolic link to a file outside the workspace is not carried (nor its text).
#   - a grade's output holds no path of the grader's (a check's "there is no program at ..."
#     names the file alone), so grading as root and as the instructor give the same bytes.
#   - a submission's file named as one of cudalab's kernels (inc.cu) does not stand in for the
#     kernel a lesson's example compiles by that name;
#   - a record root made (a class session run as root) fails alone, saying why, as root and as
#     the instructor; so, as root, does the record of an account deleted since; the others are
#     graded (root's record once stopped the whole run with a Lua error).
# Grading runs as root (each learner's work as their own account) and, where the kernel has
# Landlock, as the instructor: the two give the same grades.
# Needs root (useradd, runuser); as anyone else every test is a skip.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
here=$(cd "$(dirname "$0")" && pwd)
lessons=$(cd "$here/../../lessons" && pwd)
N=20
plan $N
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
  for i in $(seq $N); do echo "ok - as-live test $i # SKIP needs root and runuser"; done
  exit 0
fi
. "$here/accounts.sh"
mkuser cllive_prof private
for u in cllive_ann cllive_bob cllive_cat cllive_dan cllive_eve cllive_fay cllive_gus cllive_hal \
    cllive_ivy cllive_jon; do
  mkuser "$u"
done
mkdir "$tmp/courses" && chown cllive_prof "$tmp/courses"
class=$tmp/courses/class
as cllive_prof "$BIN" --class-init "$class" --title "As live" >/dev/null 2>&1 || { bad "class-init"; exit 1; }
cp "$here/55-class-hog.md" "$here/56-class-room.md" "$here/58-class-shipped.md" "$class/lessons/"
chown cllive_prof "$class/lessons/"*.md
as cllive_prof sh -c "cat >'$class/class.lua'" <<'EOF'
return { title = "As live", lessons = {2, 12, 14, 22, 25}, lesson_dirs = {"lessons"},
         backend = "sim", kernel_time_limit = "2 s" }
EOF
cleanup_more='rm -f /tmp/cudalab-as-live-pwned.cu /tmp/cudalab-as-live-pwned.data'

# typed FILE TASK [LINES...]: what a learner types to pass TASK (a step id) of the lesson in FILE:
# the lesson opened, each task before it skipped, the task's reference solution as the lesson
# gives it (or LINES), then check()
cat >"$tmp/typed.lua" <<'LUA'
local file, id = arg[1], arg[2]
local l = require("lesson_parse").parse(io.open(file):read("a"), "x")
print("lesson(" .. tonumber(file:match("(%d%d)%-[^/]*$")) .. ")")
for _, s in ipairs(l.steps) do
  if s.id == id then
    print(#arg > 2 and table.concat(arg, "\n", 3) or s.solution.code)
    print("check()")
    return
  end
  if s.task then print("skip()") end
  print("next()")
end
error("no task " .. id .. " in " .. file)
LUA
typed() { "$BIN" --backend none "$tmp/typed.lua" "$@"; }
# session USER FILE TASK [LINES...]: USER passes TASK at the prompt of a class session, to
# $tmp/USER.out (appended)
session() {
  u=$1; shift
  typed "$@" >"$tmp/typed.txt" || { bad "cannot find the task $2 in $1"; return; }
  as "$u" env COLUMNS=200 "$BIN" --class "$class" <"$tmp/typed.txt" >>"$tmp/$u.out" 2>&1
}
session cllive_ann "$lessons/12-debugging.md" your-turn-who-overwrote-ys-511
session cllive_ann "$lessons/14-watching-the-device.md" your-turn-fix-the-leak
session cllive_ann "$lessons/22-from-repl-to-program.md" your-turn-saxpy-as-a-program
session cllive_ann "$lessons/25-cuda-graphs.md" your-turn-a-simulation-step-as-a-graph
# jon sets bw_bits before lesson(14) and computes the peak from it
{ echo 'bw_bits = cuda.device().bus_width'
  typed "$lessons/14-watching-the-device.md" your-turn-the-memory-s-peak-bandwidth \
    'peak_gbs = d.memory_clock_khz * 1000 * 2 * (bw_bits / 8) / 1e9'; } >"$tmp/jon.txt"
as cllive_jon env COLUMNS=200 "$BIN" --class "$class" <"$tmp/jon.txt" >"$tmp/cllive_jon.out" 2>&1
[ "$(grep -c '^Correct\.' "$tmp/cllive_jon.out")" = 1 ] &&
  ok "a peak computed from a name set before lesson(14) passes check() at the prompt" ||
  bad "jon at the prompt: $(grep -E '^Not yet|^Correct|rror' "$tmp/cllive_jon.out" | head -5)"
session cllive_bob "$class/lessons/55-class-hog.md" size
session cllive_bob "$class/lessons/56-class-room.md" size
session cllive_cat "$class/lessons/56-class-room.md" size
# dan and fay: lesson 2's kernel includes twice.h from the lesson's folder of their workspace;
# dan's includes half.h in turn, fay's is a link to a file of hers outside the workspace
DOUBLE='#include "twice.h"
__global__ void dbl(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = twice(a[i]);
}'
for u in cllive_dan cllive_fay; do
  as "$u" sh -c 'umask 077; mkdir -p "$XDG_DATA_HOME/cudalab/workspace/02-first-kernel"'
done
as cllive_dan sh -c 'cd "$XDG_DATA_HOME/cudalab/workspace/02-first-kernel" &&
  printf "#include \"half.h\"\n__device__ inline float twice(float v) { return 4.0f * half(v); }\n" >twice.h &&
  printf "__device__ inline float half(float v) { return 0.5f * v; }\n" >half.h'
as cllive_fay sh -c 'printf "__device__ inline float twice(float v) { return 2.0f * v; } // FAY-OUTSIDE\n" \
  >"$HOME/outside.h" && ln -s "$HOME/outside.h" "$XDG_DATA_HOME/cudalab/workspace/02-first-kernel/twice.h"'
for u in cllive_dan cllive_fay; do
  session "$u" "$lessons/02-first-kernel.md" your-turn-double-every-element "edit [[$DOUBLE]]"
done
# gus: lesson 22 without the export: its failure names the program's path
session cllive_gus "$lessons/22-from-repl-to-program.md" your-turn-saxpy-as-a-program \
  'cuda.record(true)' 'x, y = cuda.rand(10000, "f32", 1), cuda.ones(10000)' \
  'saxpy[{(10000 + 255) // 256, 256}](x, y, 2.5, 10000)'
# eve: lesson 22's export aimed outside her folder, by an absolute path and by ..
session cllive_eve "$lessons/22-from-repl-to-program.md" your-turn-saxpy-as-a-program \
  'cuda.record(true)' 'x, y = cuda.rand(10000, "f32", 1), cuda.ones(10000)' \
  'saxpy[{(10000 + 255) // 256, 256}](x, y, 2.5, 10000)' \
  'cuda.export("/tmp/cudalab-as-live-pwned.cu")' 'cuda.export(workfile "../escape.cu")' \
  'cuda.export(workfile "saxpy.cu")'

# ann answers lesson 58 at the prompt; ivy's record plants an inc.cu that adds 8, and answers 8
session cllive_ann "$class/lessons/58-class-shipped.md" adds
as cllive_ivy "$BIN" --backend none -e "
  local class, json = require 'cudalab.class', require 'json'
  local h = assert(class.open('$class'))
  local rec = { format = 'cudalab-class-record 1', updated = 1, lessons = {}, tasks = {
    ['58-class-shipped/adds'] = { lesson = '58-class-shipped', step = 2, attempts = 1,
      passed = true, failures = {}, hints = 0, skipped = false, first_seen = 1, passed_at = 2,
      submission = { at = 2, lua = { 'got = 8' }, files = { ['inc.cu'] = [[
__global__ void inc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 8.0f;
}]] } } } } }
  assert(h:write_record(json.encode(rec)))" || bad "forging ivy's record"
# root and hal pass lesson 14 at the prompt; root's record belongs to root, and hal's account is
# deleted before the last grading
session cllive_hal "$lessons/14-watching-the-device.md" your-turn-fix-the-leak
typed "$lessons/14-watching-the-device.md" your-turn-fix-the-leak >"$tmp/typed.txt"
(cd "$tmp" && HOME=$tmp XDG_DATA_HOME=$tmp/rootdata "$BIN" --class "$class" <"$tmp/typed.txt" \
  >"$tmp/root.out" 2>&1)
[ -f "$class/records/0.json" ] || bad "root's session made no record"
# at the prompt eve has her own rights and her export wrote there: grading must not
rm -f /tmp/cudalab-as-live-pwned.cu /tmp/cudalab-as-live-pwned.data
correct=$(cat "$tmp/cllive_ann.out" "$tmp/cllive_bob.out" "$tmp/cllive_cat.out" \
  "$tmp/cllive_dan.out" "$tmp/cllive_fay.out" "$tmp/cllive_hal.out" "$tmp/root.out" |
  grep -c "^Correct\.")
if [ "$correct" = 12 ]; then ok "the reference solutions pass check() at the prompt"
else bad "$correct of 12 reference solutions passed at the prompt"
  grep -E "^Not yet|^cudalab|^The lesson" "$tmp"/cllive_*.out | head -10 | sed 's/^/    /'; fi

hal_uid=$(id -u cllive_hal)
cd "$tmp/home/cllive_prof" || exit 1
# grade WHO: grades as root ("root") or as the instructor, to WHO.json and WHO.err
grade() {
  if [ "$1" = root ]; then "$BIN" --grade "$class" --json "$1.json" >"$1.txt" 2>"$1.err"
  else as cllive_prof "$BIN" --grade "$class" --json "$1.json" >"$1.txt" 2>"$1.err"; fi
}
# output WHO USER TASK: the grade's score and output for USER's TASK
output() { "$BIN" --backend none -e "
  local j = require('json').decode(io.open('$1.json'):read('a'))
  for _, t in ipairs(j['$2'].tests) do
    if t.name:find('$3', 1, true) == 1 then print(t.score .. ' ' .. t.output) end
  end"; }
# passed WHAT USER TASK: the test WHAT, that USER's TASK is graded passed as root
passed() {
  output root "$2" "$3" >o.txt
  if grep -q "^1 passed" o.txt; then ok "$1"; else bad "$1: $(cut -c1-600 o.txt)"; fi
}
grade root

passed "lesson 12: cuda.watch is there when grading" cllive_ann 12-debugging/your-turn-who-overwrote
passed "lesson 22: cuda.record and cuda.export are there; the program names x and y" cllive_ann \
  22-from-repl-to-program/your-turn-saxpy
passed "lesson 25: cuda.graph is there when grading" cllive_ann 25-cuda-graphs/your-turn-a-sim
passed "a name set before lesson(N) is set when grading, as the check at the prompt reran it" \
  cllive_jon 14-watching-the-device/your-turn-the-memory
passed "lesson 14: results = nil drops the lesson's global, as at the prompt" cllive_ann \
  14-watching-the-device/your-turn-fix-the-leak
output root cllive_eve 22-from-repl-to-program/your-turn-saxpy >o.txt
if grep -q "^1 passed" o.txt && [ ! -e /tmp/cudalab-as-live-pwned.cu ]; then
  ok "cuda.export aimed outside the submission's folder writes nothing there"
else bad "eve: $(cut -c1-300 o.txt); $(ls /tmp/cudalab-as-live-pwned.cu 2>&1)"; fi
# what the sandbox says to an export aimed outside the submission's folder
"$BIN" --backend sim -e "
  local e = require('grade_sandbox').new { workdir = '$tmp' }
  for _, p in ipairs({ '/tmp/cudalab-as-live-pwned.cu', '$tmp/../escape.cu' }) do
    local ok, err = pcall(e.cuda.export, p)
    print(err)
  end" >refused.txt 2>&1
n=$(grep -c "when grading a file may be written only in the submission's own folder" refused.txt)
[ "$n" = 2 ] && ok "cuda.export refuses an absolute path and .. when grading, saying why" ||
  bad "cuda.export's refusals: $(cat refused.txt)"

output root cllive_bob 56-class-room/size >bob.txt
output root cllive_cat 56-class-room/size >cat.txt
if grep -q "^1 passed" bob.txt && cmp -s bob.txt cat.txt; then
  ok "a task graded after one that holds 200 MiB gets what it gets graded alone"
else bad "after the memory-heavy task: $(cut -c1-300 bob.txt); alone: $(cut -c1-300 cat.txt)"; fi

passed "a kernel that includes the learner's own header is graded with it (and its own include)" \
  cllive_dan 02-first-kernel/your-turn-double
# files USER: the names of the files in USER's record's submission of lesson 2's task
files() { "$BIN" --backend none -e "
  local r = require('json').decode(io.open('$class/records/$(id -u "$1").json'):read('a'))
  local names = {}
  for n in pairs(r.tasks['02-first-kernel/your-turn-double-every-element'].submission.files) do
    names[#names + 1] = n
  end
  table.sort(names)
  print(table.concat(names, ' '))"; }
files cllive_dan >dan-files.txt
expect "dan's record carries the kernel and both headers" "double.cu half.h twice.h" dan-files.txt
output root cllive_fay 02-first-kernel/your-turn-double >o.txt
if [ "$(files cllive_fay)" = "double.cu" ] && ! grep -q FAY-OUTSIDE "$class/records/"*.json &&
   grep -q '^0 failed: ' o.txt && grep -q 'cannot open source file "twice.h"' o.txt; then
  ok "a header that links outside the workspace is not carried, and the kernel fails to compile"
else bad "fay's record: $(files cllive_fay); grade: $(cut -c1-300 o.txt)"; fi

output root cllive_gus 22-from-repl-to-program/your-turn-saxpy >o.txt
if grep -q '^0 failed: there is no program at saxpy.cu yet' o.txt &&
   ! grep -q "cudalab-grade" root.json root.txt; then
  ok "a grade's output names a file of the submission by its name, never the grader's folder"
else bad "gus: $(cut -c1-300 o.txt)"; grep -o '.\{40\}cudalab-grade.\{40\}' root.json | head -3; fi

passed "lesson 58's example compiles cudalab's inc.cu, and the answer it gives passes" cllive_ann \
  58-class-shipped/adds
output root cllive_ivy 58-class-shipped/adds >o.txt
if grep -q '^0 failed: got should be 1' o.txt; then
  ok "a submission's inc.cu does not stand in for the kernel the lesson's example compiles"
else bad "ivy: $(cut -c1-300 o.txt)"; fi

output root root 14-watching-the-device/your-turn-fix-the-leak >o.txt
if grep -q "^0 not graded: its record belongs to root" o.txt &&
   grep -q "^cudalab: root's work is not graded: its record belongs to root" root.err; then
  ok "root's record fails alone, saying why in its grade and on stderr"
else bad "root's record: $(cut -c1-300 o.txt); stderr: $(head -c 600 root.err)"; fi

abi=$("$BIN" --backend none -e 'io.write((require("cudalab.proc").landlock_abi()))')
if [ "$abi" -gt 0 ]; then
  grade prof
  if cmp -s root.json prof.json; then ok "as the instructor, under Landlock, the grades are the same"
  else bad "the grades differ as the instructor:"; diff root.txt prof.txt | head | sed 's/^/    /'; fi
else echo "ok - the grades as the instructor # SKIP this kernel has no Landlock"; fi

passed "hal's work is graded while the account exists" cllive_hal 14-watching-the-device/your-turn
userdel cllive_hal
grade root
output root "uid $hal_uid" 14-watching-the-device/your-turn-fix-the-leak >o.txt
output root cllive_ann 14-watching-the-device/your-turn-fix-the-leak >o2.txt
if grep -q "^0 not graded: no account has uid $hal_uid now" o.txt && grep -q "^1 passed" o2.txt
then ok "as root, the record of an account deleted since fails alone; the others are graded"
else bad "a deleted account's record: $(cut -c1-300 o.txt); $(head -c 300 root.err)"; fi
exit $status
