#!/bin/sh
# tests/faults.sh BIN: the parts of the fault matrix (issue 7) that need a whole process: a
# kernel that never ends on the simulator, stopped by a SIGINT from another process; damaged,
# unreadable and unwritable history, progress and cache files; a read-only home; output into
# a closed pipe from the REPL. Each case checks the message and that the next command works.
# (Lua loops and Ctrl-C, engine death and the -e pipe case are in tests/console.sh; the cases
# inside one engine are in tests/simulator/faults_more.lua.)
BIN=$1
. tests/shlib.sh
plan 23
export XDG_CACHE_HOME="$tmp/cache"

# --- a kernel that never ends: SIGINT (as a test or kill sends it) reaches the console, which
# forwards it; the simulator polls the flag and the launch stops with a message. The loop writes
# memory on every turn, so the simulator's watchdog (which ends loops that change nothing) cannot
# tell it from one that will end ---
# (the test sends SIGINT half a second after the line before the launch has printed its marker,
# and the next line once the launch has been stopped. Sent at once, it could land while the
# engine was still reading the launch's line, where Ctrl-C belongs to the prompt and is dropped,
# and the kernel then ran for ever; a launch still running 30 s after it is killed, so the case
# fails rather than hangs)
rm -f "$tmp/out"
(printf 'k = cuda.kernel[[__global__ void spin(volatile int *a) { while (a[0] == 0) { a[1]++; } }]]\n'
 printf 'a = cuda.array(2, "i32") print("laun" .. "ching") io.stdout:flush()\nk[{4, 256}](a)\n'
 await "$tmp/out" "interrupted"; printf 'print("after", #a, 1 + 1)\n') | "$BIN" --sim >"$tmp/out" 2>&1 &
pid=$!
await "$tmp/out" "launching"
sleep 0.5
kill -INT $pid
await "$tmp/out" "interrupted" || kill -KILL $pid
wait $pid
expect "a kernel that never ends is stopped by SIGINT" "interrupted" "$tmp/out"
expect "the engine is kept: variables and the array survive" "after	2	2" "$tmp/out"
if grep -q "started a fresh engine" "$tmp/out"; then bad "one SIGINT was enough (no restart)"; else ok "one SIGINT was enough (no restart)"; fi

# --- history: damaged, unreadable, unwritable ---
state="$XDG_STATE_HOME/cudalab"
mkdir -p "$state"
head -c 3000 /dev/urandom >"$state/history"
printf 'print("hist ok")\n' | script -qefc "$BIN --backend none" /dev/null >"$tmp/tty" 2>&1
expect "a damaged history file does not stop the REPL" "hist ok" "$tmp/tty"
rm -f "$state/history"
mkdir "$state/history" # a folder where the file should be: cannot be read or written
rm -f "$tmp/tty"
typein "$tmp/tty" 'print("hist dir ok")' | script -qefc "$BIN --backend none" /dev/null >"$tmp/tty" 2>&1
expect "an unreadable history file does not stop the REPL" "hist dir ok" "$tmp/tty"
rmdir "$state/history"

# --- a read-only home: HOME and every XDG folder under a path through a regular file, which
# no one (root included) can create folders in ---
: >"$tmp/file"
ro="$tmp/file/home"
rm -f "$tmp/tty"
typein "$tmp/tty" 'print("ro ok", 6 * 7)' \
  'k = cuda.kernel "inc.cu"; a = cuda.zeros(4); k[{1, 32}](a, 4); print("ro kernel", a[3])' \
  'lessons()' 'print("ro after lessons")' |
  HOME="$ro" XDG_STATE_HOME="$ro/state" XDG_CACHE_HOME="$ro/cache" XDG_CONFIG_HOME="$ro/config" \
  XDG_DATA_HOME="$ro/data" script -qefc "$BIN --sim" /dev/null >"$tmp/tty" 2>&1
expect "read-only home: the REPL starts and answers" "ro ok	42" "$tmp/tty"
expect "read-only home: kernels compile and run" "ro kernel	1.0" "$tmp/tty"
expect "read-only home: the cache says it is in memory only" "kept in memory for this session only" "$tmp/tty"
expect "read-only home: lessons() says why progress is not kept" "cannot read your lesson progress" "$tmp/tty"
expect "read-only home: the lessons list" "Welcome" "$tmp/tty"
expect "read-only home: the REPL goes on after lessons()" "ro after lessons" "$tmp/tty"
grep -qE 'engine stopped|Segmentation|Aborted' "$tmp/tty" && bad "read-only home: no crash" || ok "read-only home: no crash"

# --- lesson progress: damaged (checked in depth by tests/lua_unit/test_lessons.lua) and a
# folder in place of the file ---
mkdir -p "$state"
head -c 500 /dev/urandom >"$state/lessons"
"$BIN" --sim -e 'lessons()' -e 'print("progress ok")' >"$tmp/out" 2>&1
expect "damaged lesson progress: lessons() still lists" "progress ok" "$tmp/out"
rm -f "$state/lessons" "$state"/lessons.*
mkdir "$state/lessons"
"$BIN" --sim -e 'lessons()' -e 'print("progress dir ok")' >"$tmp/out" 2>&1
expect "unreadable lesson progress: lessons() still lists" "progress dir ok" "$tmp/out"
rm -rf "$state/lessons"

# --- the kernel cache: an entry that cannot be read (a folder in its place) ---
"$BIN" --sim -e 'cuda.kernel "inc.cu"' >/dev/null 2>&1
entry=$(ls "$XDG_CACHE_HOME"/cudalab/*.kc | head -n 1)
rm -f "$entry"; mkdir "$entry"
"$BIN" --sim -e 'k = cuda.kernel "inc.cu"; a = cuda.zeros(4); k[{1, 32}](a, 4); print("cache", a[0])' >"$tmp/out" 2>&1
expect "an unreadable cache entry: the kernel compiles again and runs" "cache	1.0" "$tmp/out"
rmdir "$entry"
# a truncated entry
"$BIN" --sim -e 'cuda.kernel "inc.cu"' >/dev/null 2>&1
entry=$(ls "$XDG_CACHE_HOME"/cudalab/*.kc | head -n 1)
head -c 10 "$entry" >"$tmp/short" && cat "$tmp/short" >"$entry"
"$BIN" --sim -e 'k = cuda.kernel "inc.cu"; a = cuda.zeros(4); k[{1, 32}](a, 4); print("cache", a[0])' >"$tmp/out" 2>&1
expect "a truncated cache entry: the kernel compiles again and runs" "cache	1.0" "$tmp/out"
[ "$(stat -c %a "$XDG_CACHE_HOME/cudalab")" = 700 ] && ok "the cache folder stays private (0700)" || bad "cache folder mode"

# --- output into a closed pipe, from the REPL (piped input) and from a kernel's printf ---
printf 'for i = 1, 100000 do print(i) end\n' | "$BIN" --backend none 2>"$tmp/err" | head -n 2 >"$tmp/out"
[ "$(cat "$tmp/out")" = "$(printf '1\n2')" ] && [ ! -s "$tmp/err" ] && ok "REPL output into a closed pipe ends quietly" ||
  bad "REPL SIGPIPE: $(cat "$tmp/out" "$tmp/err")"
"$BIN" --sim -e 'cuda.kernel[[#include <cstdio>
__global__ void p() { printf("line %d\n", threadIdx.x); }]][{64, 1024}]()' 2>"$tmp/err" | head -n 1 >"$tmp/out"
expect "device printf into a closed pipe" "line" "$tmp/out"
grep -qE 'engine stopped|Segmentation|Sanitizer' "$tmp/err" && bad "device printf into a closed pipe: $(head -c 300 "$tmp/err")" ||
  ok "device printf into a closed pipe ends quietly"

# --- NVRTC crashing inside a compile (CUDALAB_TEST_NVRTC_CRASH makes the compiler's child
# process crash): the compile fails with a message, and the engine and its variables live on ---
CUDALAB_TEST_NVRTC_CRASH=1 "$BIN" --sim -e 'x = 41
print(pcall(cuda.kernel, "__global__ void k(int *a) { a[0] = 1; }"))
print("x is", x + 1)' >"$tmp/out" 2>&1
grep -q "NVRTC crashed while compiling this source\|NVRTC's process ended without a result" "$tmp/out" &&
  grep -q "x is	42" "$tmp/out" && ! grep -q "engine stopped" "$tmp/out" &&
  ok "a crash inside NVRTC fails that compile and keeps the engine" || bad "NVRTC crash: $(cat "$tmp/out")"

# --- privacy of everything written under the state folder (history: console.sh; cache:
# cache.sh; progress: test_lessons.lua): check all three again in one session ---
rm -rf "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
rm -f "$tmp/tty"
typein "$tmp/tty" 'cuda.kernel "inc.cu"' 'lesson(1)' 'next()' |
  script -qefc "$BIN --sim" /dev/null >"$tmp/tty" 2>&1
bad_modes=$(find "$XDG_STATE_HOME" "$XDG_CACHE_HOME" \( -type d ! -perm 700 \) -o \( -type f ! -perm 600 \) 2>/dev/null | grep cudalab)
files=$(find "$XDG_STATE_HOME" "$XDG_CACHE_HOME" -type f 2>/dev/null | wc -l)
[ -z "$bad_modes" ] && [ "$files" -ge 3 ] && ok "history, progress and cache: 0700 folders, 0600 files ($files files)" ||
  bad "private modes: $files files; wrong: $bad_modes"
# --- a race warning, like an error, names the first racing block in hand-out order, whatever
# the host threads' timing: every block races on its shared word, and block 0 first spins a
# while, so that with 8 host threads later blocks race first in time (a warning is given once per
# session, so each run is a process of its own) ---
cat >"$tmp/race_all.lua" <<'EOF'
cuda.simopts{threads = 8}
k = cuda.kernel[[
__global__ void race_all(int *out, int spin) {
  __shared__ int s;
  int acc = 0;
  if (blockIdx.x == 0) for (int j = 0; j < spin; j++) acc += out[(threadIdx.x + j) % 64] & 1;
  s = threadIdx.x + acc;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}]]
out = cuda.zeros(64 * 64, "i32")
k[{64, 64}](out, 20000)
EOF
: >"$tmp/out"
for run in 1 2 3 4 5; do "$BIN" --sim "$tmp/race_all.lua" >>"$tmp/out" 2>&1; done
named=$(grep -o "in kernel race_all, block ([0-9,]*)" "$tmp/out" | sort | uniq -c | tr -s ' ')
[ "$named" = " 5 in kernel race_all, block (0,0,0)" ] &&
  ok "five runs' race warnings all name block (0,0,0)" ||
  bad "race warnings named: $named; output: $(head -c 600 "$tmp/out")"

exit $status
