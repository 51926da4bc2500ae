#!/bin/sh
# tests/debugger.sh BIN: k:debug as a learner meets it: debugging at the real console in a
# pseudo-terminal (script(1)), with completion and history at the debugger's prompt, a
# conditional breakpoint, print, a step into a branch that splits the warp, where, and the
# launch's results checked at the Lua prompt afterwards; every bad command with its message;
# Ctrl-C at the prompt and while the kernel runs; quit; the debugger reading piped input; and
# what k:debug says where it cannot run. Prints ok / not ok lines.
BIN=$1
. tests/shlib.sh
export XDG_CACHE_HOME="$tmp/cache"
export COLUMNS=200 # whole sentences on one line, to look for
plan 137

# A branch that splits each warp: even threads double their element, odd ones add 100.
cat >"$tmp/split.cu" <<'EOF'
__global__ void split(int *a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int v = a[i];
    if (threadIdx.x % 2 == 0) {
      v = v * 2;
    } else {
      v = v + 100;
    }
    a[i] = v;
  }
}
EOF
SETUP="k = cuda.kernel('$tmp/split.cu') a = cuda.arange(128, 'i32')
want = {} for i = 0, 127 do want[i + 1] = i % 2 == 0 and i * 2 or i + 100 end
function same() for i = 0, 127 do if a[i] ~= want[i + 1] then return false end end return true end"

# dbg N LINE: once the debugger has shown its Nth prompt in $out, types LINE (a printf format).
dbg() { await "$out" "(cuda-debug) " "$1" && printf "$2\n"; }
# clean FILE: FILE without terminal escapes and carriage returns, for exact lines
clean() { sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r//g' "$1"; }

# --- debugging at the console ---
out="$tmp/tty"
rm -f "$out"
(await "$out" "Type lessons()"; printf '%s\n' "$SETUP" | tr '\n' ' '; printf 'print("set" .. "up")\n'
 await "$out" "setup"; printf 'k:debug{2, 64}(a, 128)\n'
 dbg 1 'break'
 dbg 2 'break 8'
 dbg 3 'break 6 if i >'
 dbg 4 'bre\t6 if threadIdx.x == 3'
 dbg 5 'thread 99999'
 dbg 6 'frobnicate'
 dbg 7 'print nosuchvar'
 await "$out" "(cuda-debug) " 8; printf 'xyz'; await "$out" "(cuda-debug) xyz"; printf '\003'
 dbg 9 'cont\t'
 dbg 10 'print i'
 dbg 11 'step'
 dbg 12 'where'
 dbg 13 'print threadIdx.x * 10 + blockIdx.x'
 dbg 14 '\033[A\033[A'
 dbg 15 'info break'
 dbg 16 'list'
 dbg 17 'delete 1'
 dbg 18 'continue'
 await "$out" "has finished"; printf 'print("results " .. (same() and "match" or "differ"))\n'
 await "$out" "results "; printf '\004') |
  script -qefc "$BIN --sim" /dev/null >"$out" 2>&1
expect "k:debug stops before the first instruction" "stopped before its first instruction" "$out"
expect "the debugger has its own prompt" "(cuda-debug) " "$out"
expect "break with no line says what it needs" "break needs a line number: break 7, or break 7 if threadIdx.x == 5" "$out"
expect "a line with no code is named, with the nearest lines that have some" "line 8 of split.cu has no code (a comment, a declaration or a brace?); the nearest lines that have some are 7 and 9" "$out"
expect "a bad condition is refused, saying where" "bad condition 'i >': an operand is missing at the end" "$out"
expect "Tab completes a command, and the breakpoint is set" "Breakpoint 1 at line 6 of split.cu if threadIdx.x == 3" "$out"
expect "a thread that does not exist is refused" "thread (99999,0,0) does not exist: blocks are (64,1,1)" "$out"
expect "an unknown command is named" "unknown command 'frobnicate': 'help' lists the commands" "$out"
expect "an unknown variable is named, with those in scope" "print: no variable 'nosuchvar' at line 1 (in scope here: a, n)" "$out"
clean "$out" | grep -qx '(cuda-debug) xyz^C' && ok "Ctrl-C at the debugger's prompt drops the line" ||
  bad "Ctrl-C at the debugger's prompt: no dropped line"
expect "the debugger went on after every bad command" "Breakpoint 1, line 6: block (0,0,0), thread (3,0,0) (warp 0, lanes 0x00000008)" "$out"
clean "$out" | grep -qx 'i = 3' && ok "print shows the variable for the thread in focus" ||
  bad "print i: no 'i = 3' in $(clean "$out" | grep 'i = ')"
clean "$out" | grep -Eq '^Line (7|9): block \(0,0,0\), thread \(3,0,0\)' &&
  ok "step runs the warp to the next line of the branch" || bad "step: $(clean "$out" | grep '^Line')"
clean "$out" | grep -Eq '^  warp 0 +line 7 +lanes 0x55555555 \(16\)' &&
  clean "$out" | grep -Eq '^ +line 9 +lanes 0xaaaaaaaa \(16\)' &&
  ok "where shows the warp split: even lanes at line 7, odd lanes at line 9" ||
  bad "where: $(clean "$out" | grep -A3 '^block (0,0,0):')"
expect "where marks the focus" "<- focus: thread (3,0,0)" "$out"
expect "print takes a C expression" "threadIdx.x * 10 + blockIdx.x = 30" "$out"
[ "$(clean "$out" | grep -c 'lanes 0xaaaaaaaa (16)')" -ge 2 ] &&
  ok "the up arrow brings back an earlier debugger command" || bad "history: where ran once"
expect "info break lists the breakpoint and its hits" "1  line 6    if threadIdx.x == 3  (hit 1 time)" "$out"
clean "$out" | grep -Eq '^=> +[79] \| ' && ok "list marks the line in focus" || bad "list: no => line"
expect "delete removes a breakpoint" "Deleted breakpoint 1." "$out"
expect "the end of the launch is announced" "The launch of split has finished: its 128 threads ran to the end." "$out"
expect "the debugged launch's results match the CPU's" "results match" "$out"
expect "history keeps the debugger's commands" "info break" "$XDG_STATE_HOME/cudalab/history"

# --- Ctrl-C while the kernel runs stops it at the debugger's prompt; quit abandons it ---
cat >"$tmp/long.cu" <<'EOF'
__global__ void long_sum(long long *out, long long n)
{
  long long s = 0;
  for (long long k = 0; k < n; k++)
    s += k;
  out[threadIdx.x] = s;
}
EOF
out="$tmp/tty2"
rm -f "$out"
(await "$out" "Type lessons()"
 printf "k = cuda.kernel('%s') o = cuda.full(32, 7, 'i64') print('set' .. 'up')\n" "$tmp/long.cu"
 await "$out" "setup"; printf 'k:debug{1, 32}(o, 1 << 40)\n'
 dbg 1 'continue'
 # once the line has gone to the kernel, and it runs (2^40 turns of its loop), Ctrl-C; again
 # should the key have come before the engine went on (then the kernel would run for hours)
 await "$out" "(cuda-debug) continue"; await "$out" "... running"
 for try in 1 2 3; do printf '\003'; poll 10 seen "$out" "Interrupted" && break; done
 dbg 2 'print k > 0'
 dbg 3 'quit'
 await "$out" "abandoned"; printf 'print("kept " .. o[0])\n'; await "$out" "kept "; printf '\004') |
  timeout 120 script -qefc "$BIN --sim" /dev/null >"$out" 2>&1
clean "$out" | grep -Eq 'Interrupted at line [45]: block \(0,0,0\), thread \(0,0,0\)' &&
  ok "Ctrl-C while the kernel runs stops it at the prompt" || bad "Ctrl-C while running: $(clean "$out" | tail -n 8)"
expect "a long continue says within seconds how far it is and where a warp is" \
  "... running: 0 of 1 blocks done; block (0,0,0), warp 0 is at line" "$out"
expect "and the kernel can be looked at there" "k > 0 = 1" "$out"
expect "quit abandons the launch and says what memory holds" "Launch of long_sum abandoned where it stood: its arrays keep what it wrote so far." "$out"
expect "the array keeps what it held (nothing was written)" "kept 7" "$out"
grep -q "engine stopped" "$out" && bad "the engine died" || ok "the engine lives on"

# dsession OUT LUA CMD...: at the console in a pseudo-terminal, runs the Lua chunk LUA (its
# newlines made spaces; it ends in a k:debug launch), types each CMD at the debugger's next prompt
# (a printf format), and once the launch is over (END, a regular expression, says how that
# shows), Ctrl-D.
dsession() {
  _o=$1 _lua=$2
  shift 2
  rm -f "$_o"
  (await "$_o" "Type lessons()"; printf '%s\n' "$_lua" | tr '\n' ' '; printf '\n'
   _k=1
   for _c in "$@"; do
     await "$_o" "(cuda-debug) " $_k && printf "$_c\n"
     _k=$((_k + 1))
   done
   poll 60 grep -qE "${END:-has finished|abandoned}" "$_o"
   printf 'print("after" .. "wards")\n'; await "$_o" "afterwards"; printf '\004') |
    timeout 300 script -qefc "$BIN --sim" /dev/null >"$_o" 2>&1
}
# warp_rows V0 ... V31: the four rows print EXPR @warp shows for these values of lanes 0 to 31.
warp_rows() {
  printf '%s\n' "$@" | awk '{ v[NR - 1] = $0; if (length($0) > w) w = length($0) }
    END { for (r = 0; r < 4; r++) { s = sprintf("  lanes %2d-%-2d:", r * 8, r * 8 + 7)
      for (l = r * 8; l < r * 8 + 8; l++) s = s sprintf(" %" w "s", v[l]); print s } }'
}
# has_rows NAME FILE ROWS: FILE holds the four lines of ROWS one after the other.
has_rows() {
  clean "$2" | grep -F -A3 -- "$(printf '%s\n' "$3" | head -n 1)" | head -n 4 >"$tmp/rows"
  if [ "$(cat "$tmp/rows")" = "$3" ]; then ok "$1"
  else bad "$1: want"; printf '%s\n' "$3" "got" | sed 's/^/    /'; sed 's/^/    /' "$tmp/rows"; fi
}

# --- every lane of a split warp: each reads its own value, whichever side it took ---
out="$tmp/lanes"
dsession "$out" "$SETUP k:debug{2, 64}(a, 128)" 'break 9' 'continue' 'print v @warp' 'break 11' \
  'continue' 'print v @warp' 'quit'
has_rows "at the else-side, every lane of the warp shows its v (odd lanes there, even ones waiting)" \
  "$out" "$(warp_rows $(seq 0 31))"
has_rows "where the sides join, every lane shows the v its side computed" "$out" \
  "$(warp_rows $(for l in $(seq 0 31); do [ $((l % 2)) = 0 ] && echo $((l * 2)) || echo $((l + 100)); done))"

# --- a launch that fails stops at the prompt, on the thread at fault, with the message ---
cat >"$tmp/oob.cu" <<'EOF'
__global__ void oob(float *x, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float y = 2.0f;
  x[i + 1] = x[i] * y;
}
EOF
out="$tmp/fault"
END='Error|error' dsession "$out" "k = cuda.kernel('$tmp/oob.cu') x = cuda.zeros(64, 'f32') k:debug{2, 32}(x, 64)" \
  'continue' 'print i' 'where' 'continue'
expect "an out-of-bounds store stops at the prompt, naming line, block and thread" \
  "The launch failed at line 5: block (1,0,0), thread (31,0,0) (warp 0)" "$out"
expect "the stop gives the check's message, with the array by its name" \
  "index 64 of f32[64] (parameter 0, 'x') is 1 element (4 bytes) past the end" "$out"
clean "$out" | grep -qx 'i = 63' && ok "the faulting thread is in focus: print i gives its i" ||
  bad "print at the fault: $(clean "$out" | grep '^i = ')"
expect "where shows the faulting thread as the focus" "<- focus: thread (31,0,0)" "$out"
clean "$out" | grep -q '^out-of-bounds global store' &&
  ok "going on ends the launch with the error at the Lua prompt" ||
  bad "no error at the Lua prompt after the fault"
expect "the engine lives on after a fault in the debugger" "afterwards" "$out"

cat >"$tmp/spin.cu" <<'EOF'
__global__ void spin(volatile int *flag, int *out)
{
  int me = threadIdx.x;
  while (flag[0] == 0) {
  }
  out[me] = 1;
}
EOF
out="$tmp/hang"
END='Error|error|spins at' dsession "$out" \
  "k = cuda.kernel('$tmp/spin.cu') f = cuda.zeros(1, 'i32') o = cuda.zeros(32, 'i32') k:debug{1, 32}(f, o)" \
  'continue' 'print me' 'quit'
expect "the never-finishes detector stops at the prompt on a spinning thread" \
  "The launch failed at line 4: block (0,0,0), thread (0,0,0) (warp 0)" "$out"
expect "with the detector's message" "kernel spin can never finish: its blocks wait for a flag" "$out"
clean "$out" | grep -qx 'me = 0' && ok "the spinning thread's variables can be read" ||
  bad "print me at the hang"

cat >"$tmp/inv.cu" <<'EOF'
__global__ void inv(float *a)
{
  float d = a[threadIdx.x];
  a[threadIdx.x] = 1.0f / d;
}
EOF
out="$tmp/nan"
END='Error|error|made from finite' dsession "$out" \
  "cuda.sanitize{nan = true} k = cuda.kernel('$tmp/inv.cu') a = cuda.arange(4, 'f32') k:debug{1, 4}(a)" \
  'continue' 'print d' 'quit'
expect "a sanitizer finding stops at the prompt" \
  "The launch failed at line 4: block (0,0,0), thread (0,0,0) (warp 0)" "$out"
expect "with the finding" "rcp.rn.f32 of 0.0 gave inf" "$out"
clean "$out" | grep -qx 'd = 0' && ok "the thread that made the infinity shows its operand" ||
  bad "print d at the NaN stop"

# --- print: C's types and widths, memory through pointers, __shared__ arrays ---
cat >"$tmp/grid2.cu" <<'EOF'
__global__ void grid2(const float *x, float *out, int width)
{
  __shared__ float s[4][8];
  int y = blockIdx.x * 65536;
  int col = threadIdx.x;
  const float *p = x + 2;
  s[col / 8][col % 8] = x[col];
  __syncthreads();
  out[col] = s[3 - col / 8][col % 8] + y * width + col + p[0];
}
EOF
out="$tmp/cexpr"
dsession "$out" "k = cuda.kernel('$tmp/grid2.cu') x = cuda.arange(32, 'f32') o = cuda.zeros(32, 'f32') k:debug{2, 32}(x, o, 32768)" \
  'break 9 if blockIdx.x == 1 && col == 0' 'continue' 'print y * width + col' \
  'print (long long)y * width + col' 'print x[3]' 'print *p' 'print x[0]@4' 'print s[2][1]' \
  'print &x[2] == p' 'print col > 0 ? 1.5f : sizeof(double)' 'print(col)' 'print nosuch' \
  'print x[100000000]' 'print &col' 'print 7 / 2 + 7.0f / 2' 'print 0u - 1' 'quit'
expect "an int expression overflows as the kernel's int does" "y * width + col = -2147483648" "$out"
expect "a cast to long long widens it" "(long long)y * width + col = 2147483648" "$out"
expect "x[i] reads global memory through a pointer" "x[3] = 3" "$out"
expect "*p dereferences a pointer" "*p = 2" "$out"
expect "x[0]@4 shows four elements from x[0] on" "x[0]@4 = {0, 1, 2, 3}" "$out"
expect "a __shared__ array is read by its name, with its two dimensions" "s[2][1] = 17" "$out"
expect "& takes an element's address, and pointers compare" "&x[2] == p = 1" "$out"
expect "?: and sizeof" "col > 0 ? 1.5f : sizeof(double) = 8" "$out"
clean "$out" | grep -qx 'col = 0' && ok "print(col), as a Lua user types it, prints col" ||
  bad "print(col): $(clean "$out" | grep '^col')"
expect "an unknown name lists those in scope, __shared__ ones included" "print: no variable 'nosuch' at line 9 (in scope here: col, out, p, s, width, x, y)" "$out"
expect "an address outside every array is refused, not read" "is not in any array of the launch" "$out"
expect "a register has no address, and & says so" "print: & needs something in memory, and this is in a register" "$out"
expect "int division truncates and a float operand makes float arithmetic" "7 / 2 + 7.0f / 2 = 6.5" "$out"
expect "unsigned arithmetic wraps at 32 bits" "0u - 1 = 4294967295" "$out"

# --- p->f and s.f: the members of a structure the source declares, read through a pointer ---
cat >"$tmp/pts.cu" <<'EOF2'
struct pt { float x; int n; double w; };
__global__ void pts(pt *p, float *o)
{
  int i = threadIdx.x;
  pt *q = p + i;
  o[i] = q->x * q->n + q->w;
}
EOF2
out="$tmp/pts"
dsession "$out" "k = cuda.module('$tmp/pts.cu').pts b = cuda.zeros(64, 'f64') for j = 0, 63 do b[j] = j end o = cuda.zeros(32) k:debug{1, 32}(b, o)" \
  'until 6' 'print q->w' 'print p[1].w' 'print *q' 'print q->nosuch' 'print sizeof(*q)' 'quit'
expect "p->f reads a member through a pointer, at its offset in C's layout" "q->w = 1" "$out"
expect "p[i].f reads one of an array of structures" "p[1].w = 3" "$out"
clean "$out" | grep -Eq '^\*q = \{x = 0, n = 0, w = 1\}$' && ok "a whole structure shows its members" ||
  bad "print *q: $(clean "$out" | grep '^\*q')"
expect "a member the structure lacks is named" "print: 'nosuch' is not a member of pt" "$out"
expect "and the structure has C's size, padding included" "sizeof(*q) = 16" "$out"

# --- the call stack: frames, up and down, finish, next over a call, step N, until, tbreak,
# breakpoints by FILE:LINE and by function, info locals, display, x ---
cat >"$tmp/calls.cu" <<'EOF'
__device__ float scale(float v, int k)
{
  float r = v * k;
  r = r + 1.0f;
  return r;
}

__global__ void calls(float *a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int k = 1; k <= 3; k++) {
    s += scale(a[i], k);
  }
  float t = sinf(s);
  a[i] = s + t * 0.0f;
}
EOF
out="$tmp/frames"
dsession "$out" "k = cuda.kernel('$tmp/calls.cu') a = cuda.arange(64, 'f32') k:debug{1, 64}(a, 64)" \
  'break scale' 'continue' 'thread 5' 'bt' 'print v' 'up' 'print i' 'print k' 'down' 'finish' \
  'delete 1' 'next' 'step 2' 'finish' 'info locals' 'display s' 'until' 'x/4f a' 'x/2xw a + 1' \
  'tbreak calls.cu:17' 'step' 'continue' 'info break' 'break other.cu:3' 'break nosuch' \
  'break sinf' 'finish' 'up' 'frame 9' 'x/4q a' 'step x' 'continue'
expect "break FUNCTION stops past its prologue" "Breakpoint 1 at line 3 of calls.cu (function scale)" "$out"
expect "a stop in a device function names it" "Breakpoint 1, line 3 in scale: block (0,0,0), thread (0,0,0)" "$out"
clean "$out" | grep -A2 '^Calls of thread (5,0,0)' | tail -n 2 | tr '\n' '|' |
  grep -qx '#0  scale at line 3 of calls.cu  <- selected|#1  calls (the kernel) at line 13 of calls.cu|' &&
  ok "bt shows the frames: the device function, then the kernel at the line of the call" ||
  bad "bt: $(clean "$out" | grep -A2 '^Calls of')"
clean "$out" | grep -qx 'v = 5' && ok "a parameter of the function reads for the thread in focus" ||
  bad "print v: $(clean "$out" | grep '^v = ')"
clean "$out" | grep -qx 'i = 5' && clean "$out" | grep -qx 'k = 1' &&
  ok "up selects the caller: print reads the kernel's i and k there" ||
  bad "up, print: $(clean "$out" | grep -E '^(i|k) = ')"
expect "down comes back to the function" "#0  scale at line 3 of calls.cu" "$out"
expect "finish runs until the function returns" "Run till exit from #0  scale at line 3 of calls.cu" "$out"
clean "$out" | grep -A3 '^Deleted breakpoint 1' | grep -q '^Line 12: block (0,0,0), thread (5,0,0)' &&
  ok "next steps over the call, to the loop's increment" || bad "next: $(clean "$out" | grep -A3 '^Deleted')"
expect "step 2 steps twice: into the call, past its prologue" "Line 3 in scale: block (0,0,0), thread (5,0,0)" "$out"
clean "$out" | grep -qx 's = 6' && clean "$out" | grep -qx 'n = 64' &&
  ok "info locals lists the variables with their values" || bad "info locals: $(clean "$out" | grep -E '^[a-z] = ')"
expect "display shows the expression at once" "1: s = 6" "$out"
clean "$out" | grep -A3 '^Line 15: block (0,0,0), thread (5,0,0)' | grep -qx '1: s = 33' &&
  ok "until leaves the loop, and display shows s at the stop" || bad "until: $(clean "$out" | grep -A3 '^Line 15')"
clean "$out" | grep -Eq '^0x[0-9a-f]+:  0  1  2  3$' && ok "x/4f shows four floats from where a points" ||
  bad "x/4f: $(clean "$out" | grep '^0x')"
clean "$out" | grep -Eq '^0x[0-9a-f]+:  0x3f800000  0x40000000$' && ok "x/2xw shows the bits, in hex" ||
  bad "x/2xw: $(clean "$out" | grep '^0x')"
clean "$out" | grep -q '^Line 16: block (0,0,0), thread (5,0,0)' &&
  ok "a step over a call of sinf (a function without source) goes to the next line, not the closing brace" ||
  bad "step over sinf: $(clean "$out" | grep '^Line 1[67]')"
expect "tbreak FILE:LINE stops once" "Temporary breakpoint 2, line 17: block (0,0,0)" "$out"
expect "and is gone after" "No breakpoints." "$out"
expect "break FILE:LINE of another file is refused" "break: the kernel's source is calls.cu, not other.cu" "$out"
expect "break of an unknown function is refused" "break: the kernel's module has no function 'nosuch'" "$out"
expect "break of a function without source says where to break" "break: sinf has no source lines (a library function): break at the line that calls it" "$out"
expect "finish in the kernel's frame is refused" "finish: frame #0 is the kernel, which no call returns from" "$out"
expect "up past the kernel is refused" "up: frame #0 is the kernel, the outermost; there is nothing above it" "$out"
expect "frame N past the stack is refused" "frame: there is no frame 9: the thread in focus has 1 (0 to 0; bt lists them)" "$out"
expect "a bad x format is named" "x: 'q' is not a format: f, d, u, x or c, and b, h, w or g for the size" "$out"
expect "a bad step count is named" "step: 'x' is not a count: step 3 runs it three times" "$out"
expect "the launch runs to the end after all that" "The launch of calls has finished: its 64 threads ran to the end." "$out"
clean "$out" | grep -q '^  \.\.\. running' && bad "a short launch printed progress lines" ||
  ok "a short launch prints no progress line"

# --- the race warning of a plain launch, and a note when the -G build's result differs ---
cat >"$tmp/race.cu" <<'EOF'
__global__ void race(int *out)
{
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  out[t] = s[63 - t];
}
EOF
out="$tmp/race"
dsession "$out" "k = cuda.kernel('$tmp/race.cu') o = cuda.zeros(64, 'i32') k:debug{1, 64}(o)" 'continue'
expect "k:debug warns of a race as a plain launch does, naming the array and lines" \
  "writes element 32 of __shared__ s (byte offset 128) at race.cu:5, which thread" "$out"
grep -q "Note: an ordinary launch" "$out" && bad "a note of a difference where there is none" ||
  ok "no note when the plain build gives the same results"
cat >"$tmp/wsum.cu" <<'EOF'
__global__ void wsum(int *out)
{
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = 1;
  __syncthreads();
  if (t < 32) {
    s[t] += s[t + 32];
    s[t] += s[t + 16];
    s[t] += s[t + 8];
    s[t] += s[t + 4];
    s[t] += s[t + 2];
    s[t] += s[t + 1];
  }
  if (t == 0) out[0] = s[0];
}
EOF
out="$tmp/wsum"
dsession "$out" "k = cuda.kernel('$tmp/wsum.cu') o = cuda.zeros(1, 'i32') k:debug{1, 64}(o) print('debugged ' .. o[0])" 'continue'
"$BIN" --sim -e "k = cuda.kernel('$tmp/wsum.cu') o = cuda.zeros(1, 'i32') k[{1, 64}](o) print('plain ' .. o[0])" >"$tmp/plain" 2>&1
plain=$(sed -n 's/^plain //p' "$tmp/plain")
expect "a warp-synchronous sum without volatile: the debugged launch's own result is kept" "debugged 64" "$out"
expect "the note names the element, both values and the likely causes" \
  "Note: an ordinary launch (without -G) gives other results: out[0] is $plain there, 64 under the debugger (1 of 1 elements differ). Code whose result depends on how the compiler arranges it differs so: a warp-synchronous reduction without volatile or __syncwarp()" "$out"

# --- the never-finishes detector says what it saw: a loop of registers alone is no "flag" ---
cat >"$tmp/fix.cu" <<'EOF'
__global__ void fix(float *out)
{
  float x = 2.0f;
  while (x * x != 2.0f) {
    x = 0.5f * (x + 2.0f / x);
  }
  out[threadIdx.x] = x;
}
EOF
out="$tmp/fixed"
END='Error|error|spins at' dsession "$out" \
  "k = cuda.kernel('$tmp/fix.cu') o = cuda.zeros(32) k:debug{1, 32}(o)" 'continue' 'print x' 'quit'
expect "a numeric loop that comes back to its values is told as such" \
  "kernel fix can never finish: every warp still running repeats a loop that reads no memory and comes back to the very values it started from" "$out"
grep -q "wait for a flag" "$out" && bad "a numeric loop is told it waits for a flag" ||
  ok "and is not told it waits for a flag"
clean "$out" | grep -qx 'x = 1.41421354' && ok "the loop's value can be read at the stop" ||
  bad "print x at the hang: $(clean "$out" | grep '^x = ')"

# --- conditions evaluated over a whole warp at once, with C's types, and the Lua evaluator
# where the compiled form cannot say (a division by zero in a lane that needs it) ---
cat >"$tmp/hotc.cu" <<'EOF'
__global__ void hotc(int *out, int n)
{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
  for (int k = 0; k < n; k++) {
    acc += t * 300000000 + k;
  }
  out[t] = acc;
}
EOF
HOTC="k = cuda.kernel('$tmp/hotc.cu') o = cuda.zeros(64, 'i32')"
out="$tmp/hotc"
printf 'break 6 if k == 7 && t %% 5 == 3\ncontinue\nprint k\ndelete\nbreak 6 if t * 300000000 < 0 && k == 2\ncontinue\nprint t * 300000000\nquit\n' |
  "$BIN" --sim -e "$HOTC" -e 'k:debug{2, 32}(o, 50)' >"$out" 2>&1
expect "a compiled condition stops the lanes it holds for, and no others" \
  "Breakpoint 1, line 6: block (0,0,0), thread (3,0,0) (warp 0, lanes 0x10842108)" "$out"
clean "$out" | grep -qx 'k = 7' && ok "at the turn the condition names" ||
  bad "print k: $(clean "$out" | grep '^k = ')"
expect "an int in a condition overflows as the kernel's does (block 0 is past k == 2)" \
  "Breakpoint 2, line 6: block (1,0,0), thread (4,0,0) (warp 0, lanes 0x03f807f0)" "$out"
expect "and print agrees" "t * 300000000 = -2084901888" "$out"
printf 'break 6 if t == 40 && 100 / (k - 3) > 0\ncontinue\nprint k\nquit\n' |
  "$BIN" --sim -e "$HOTC" -e 'k:debug{2, 32}(o, 50)' >"$out" 2>&1
expect "a division by zero in a lane the condition reaches stops there with the message" \
  "its condition could not be evaluated at thread (8,0,0): division by zero" "$out"
expect "at the lane where it happened (thread 8 of block 1 has t == 40)" \
  "Breakpoint 1, line 6: block (1,0,0), thread (8,0,0) (warp 0, lanes 0x00000100)" "$out"
clean "$out" | grep -qx 'k = 3' && ok "at the turn that divides by zero" ||
  bad "print k at the division: $(clean "$out" | grep '^k = ')"
# 64 threads x 40,000 turns: 2.56 million lanes' conditions, about half a minute in Lua lane by
# lane; over warps in C, a second or two even on a loaded machine.
t0=$(date +%s)
printf 'break 6 if acc == 12345 && k > 39998\ncontinue\n' |
  "$BIN" --sim -e "$HOTC" -e 'k:debug{2, 32}(o, 40000) print("o[1] = " .. o[1])' >"$out" 2>&1
t1=$(date +%s)
expect "a condition that never holds lets the launch run to its end" "The launch of hotc has finished" "$out"
[ $((t1 - t0)) -lt 12 ] && ok "a condition on a hot line costs little: $((t1 - t0)) s for 2.56 million lanes" ||
  bad "a condition on a hot line took $((t1 - t0)) s for 2.56 million lanes"

# --- the checks' messages: an index past a __shared__ or local array, an early return ---
cat >"$tmp/msgs.cu" <<'EOF'
__global__ void sh(float *o, int n) {
  __shared__ float s[256];
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  o[threadIdx.x] = s[threadIdx.x + n];
}
__global__ void lo(float *o, int n) {
  float t[8];
  for (int i = 0; i < 8; i++) t[i] = o[i];
  o[threadIdx.x] = t[n + threadIdx.x];
}
__global__ void er(float *o, int n) {
  __shared__ float s[64];
  int i = threadIdx.x;
  if (i >= n) return;
  s[i] = o[i];
  __syncthreads();
  o[i] = s[(i + 1) % n];
}
EOF
"$BIN" --sim -e "m = cuda.module('$tmp/msgs.cu') o = cuda.zeros(256)" \
  -e 'for _, k in ipairs({"sh", "lo", "er"}) do print(select(2, pcall(function() m[k][{1, k == "sh" and 256 or 64}](o, k == "er" and 40 or 8) cuda.sync() end))) end' \
  -e 'cuda.sanitize{sync = true} print(select(2, pcall(function() m.er[{1, 64}](o, 40) cuda.sync() end)))' >"$tmp/out" 2>&1
expect "a shared out-of-bounds read gives the index and the array's length" \
  "index 256 of s[256] (elements of 4 bytes) is 1 element (4 bytes) past the end of __shared__ s (1024 bytes)" "$tmp/out"
expect "a local one gives the element and the thread's local memory" \
  "element 8 of 4 bytes (byte 32) of the thread's local memory, 4 bytes past its end" "$tmp/out"
# the returned lanes leave the warp, as on a GPU, which lets the others through the barrier: the
# plain launch runs, and the sync check names the broken rule
expect "a return before __syncthreads() is named by the sync check, with the threads that returned" \
  "was reached by 40 of the 64 threads of block (0,0,0); 24 exited before reaching it" "$tmp/out"

# --- the checks around the debugger, as a learner meets them at the console's Lua prompt ---
cat >"$tmp/checks.cu" <<'EOF2'
__global__ void warned(float *o) {
  int b = 3;
  o[threadIdx.x] = 1.0f;
}
__global__ void uaf(int *o) {
  int *p = (int *)malloc(64);
  p[0] = 1;
  free(p);
  o[threadIdx.x] = p[0];
}
__global__ void nul(float *o, int n) {
  float *p = (float *)malloc(n * sizeof(float));
  p[threadIdx.x] = 1.0f;
  o[threadIdx.x] = p[threadIdx.x];
}
__global__ void wsync(int *o) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = 1;
  __syncthreads();
  if (t < 32) {
    s[t] += s[t + 32];
    s[t] += s[t + 16];
    s[t] += s[t + 8];
    s[t] += s[t + 4];
    s[t] += s[t + 2];
    s[t] += s[t + 1];
  }
  if (t == 0) o[0] = s[0];
}
__global__ void stride0(const float *x, float *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int j = i; j < n; j += blockDim.x * blockIdx.x)
    s += x[j];
  o[i] = s;
}
__global__ void noinit(const float *x, float *o, int n) {
  float acc;
  for (int j = 0; j < n; j++)
    acc += x[j];
  o[threadIdx.x] = acc;
}
EOF2
out="$tmp/checks"
rm -f "$out"
try() { printf 'print(select(2, pcall(function() %s cuda.sync() end)))' "$1"; }
typein "$out" "m = cuda.module('$tmp/checks.cu') o = cuda.zeros(64, 'i32') f = cuda.zeros(64)" \
  "$(try 'm.uaf[{1, 32}](o)')" "$(try 'm.nul[{1, 32}](f, 4000000)')" "m.wsync[{1, 64}](o)" \
  "$(try 'm.stride0[{2, 32}](cuda.ones(256), f, 256)')" "m.noinit[{2, 32}](cuda.ones(8), f, 8)" \
  "cuda.sanitize{init = true}" "$(try 'm.noinit[{2, 32}](cuda.ones(8), f, 8)')" |
  script -qefc "$BIN --sim" /dev/null >"$out" 2>&1
expect "NVRTC's warning of a compile that succeeds is shown, with its line" \
  'checks.cu:2: warning #177-D: variable "b" was declared but never referenced' "$out"
expect "a read of a freed device-heap block is a use after free, naming the free's line" \
  "use after free: global load of 4 bytes" "$out"
expect "and the free that released it" "freed by block (0,0,0), thread (0,0,0) at checks.cu:8" "$out"
expect "a store through the NULL a full heap's malloc returned is a null pointer, not an index" \
  "null pointer: global store of 4 bytes at address 0x" "$out"
expect "with the heap's refusals" "malloc or new in a kernel has returned NULL" "$out"
expect "a warp-synchronous reduction without volatile is warned of at a plain launch" \
  "checks.cu:22 with no __syncwarp() between them, and the array is not volatile" "$out"
expect "a loop whose step is 0 is told as a counter that never moves, not as a flag" \
  "spins at checks.cu:35, in a loop whose exit test reads only registers, and every turn leaves them as they were: a counter that never moves" "$out"
grep -q "wait for a flag" "$out" && bad "the stuck counter was told it waits for a flag" ||
  ok "and no flag is mentioned"
expect "the init check names the line that reads an uninitialised local" \
  "maybe an uninitialised read (init check): at checks.cu:41, kernel noinit may use a value that nothing has assigned" "$out"

# --- a fault in code without source (atomicAdd's body) selects the caller's frame ---
cat >"$tmp/hash.cu" <<'EOF2'
#define BUCKETS 64
__global__ void hash(const int *keys, int *counts)
{
  __shared__ int seen[BUCKETS / 8][8];
  int i = threadIdx.x;
  int h = keys[i] * 37 * 2654435;
  seen[i % 8][i % 8] = h;
  atomicAdd(&counts[h % BUCKETS], 1);
}
EOF2
out="$tmp/nosrc"
END='Error|error|abandoned' dsession "$out" \
  "k = cuda.kernel('$tmp/hash.cu') ks = cuda.arange(64, 'i32') c = cuda.zeros(64, 'i32') k:debug{1, 64}(ks, c)" \
  'break 8 if i == 1' 'continue' 'print seen[1][1]' 'print sizeof(seen)' 'delete' 'continue' 'print h' \
  'down' 'quit'
expect "a __shared__ array sized by a #define has its dimensions" "seen[1][1] = " "$out"
expect "and its size" "sizeof(seen) = 256" "$out"
expect "a fault inside atomicAdd's body says so" "The launch failed in __iAtomicAdd (no source)" "$out"
expect "and selects the kernel's frame, at the line of the call" "#2  hash (the kernel) at line 8 of hash.cu" "$out"
clean "$out" | grep -Eq '^h = -[0-9]+$' && ok "so print reads the thread's variables there" ||
  bad "print h at a fault in atomicAdd: $(clean "$out" | grep -E '^(h =|print)')"
expect "down goes back into the function without source" "#1  atomicAdd (no source)" "$out"

# --- a huge grid: the progress line estimates the time left ---
cat >"$tmp/many.cu" <<'EOF2'
__global__ void many(float *o)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < 64; k++)
    s += i * k;
  o[i % 1024] = s;
}
EOF2
out="$tmp/many"
rm -f "$out"
(await "$out" "Type lessons()"
 printf "k = cuda.kernel('%s') o = cuda.zeros(1024) k:debug{100000, 256}(o)\n" "$tmp/many.cu"
 dbg 1 'continue'
 poll 60 grep -q 'left; block' "$out"
 for try in 1 2 3; do printf '\003'; poll 10 seen "$out" "Interrupted" && break; done
 dbg 2 'quit'
 await "$out" "abandoned"; printf '\004') |
  timeout 120 script -qefc "$BIN --sim" /dev/null >"$out" 2>&1
clean "$out" | grep -Eq '^  \.\.\. running: [0-9]+ of 100000 blocks done, about [0-9.]+ (s|min|hours) left; block' &&
  ok "a long continue over a huge grid estimates the time left" ||
  bad "no estimate in the progress lines: $(clean "$out" | grep running | tail -n 2)"

# and the same messages at the console's prompt, as a learner types the launches
out="$tmp/msgs_tty"
rm -f "$out"
typein "$out" "m = cuda.module('$tmp/msgs.cu') o = cuda.zeros(256)" "$(try 'm.sh[{1, 256}](o, 8)')" \
  "$(try 'm.lo[{1, 64}](o, 8)')" "cuda.sanitize{sync = true}" "$(try 'm.er[{1, 64}](o, 40)')" |
  script -qefc "$BIN --sim" /dev/null >"$out" 2>&1
expect "at the console, a shared index past the end is counted as a global one is" \
  "index 256 of s[256] (elements of 4 bytes) is 1 element (4 bytes) past the end of __shared__ s" "$out"
expect "at the console, a local one gives the element" "element 8 of 4 bytes (byte 32) of the thread's local memory" "$out"
expect "at the console, a return before __syncthreads() is named with the threads that returned" \
  "24 exited before reaching it" "$out"

# --- piped input: commands come from standard input, and its end quits ---
printf 'break 11 if threadIdx.x == 5 && blockIdx.x == 1\ncontinue\nprint v\nprint a[i]\ncontinue\n' |
  "$BIN" --sim -e "$SETUP" -e 'k:debug{2, 64}(a, 128) print("piped " .. (same() and "match" or "differ"))' >"$tmp/out" 2>&1
expect "piped commands drive the debugger" "Breakpoint 1, line 11: block (1,0,0), thread (5,0,0)" "$tmp/out"
expect "print shows the thread's own value" "v = 169" "$tmp/out"
expect "indexing a pointer reads global memory: the element before the thread stores to it" "a[i] = 69" "$tmp/out"
expect "and the results are the kernel's" "piped match" "$tmp/out"
"$BIN" --sim -e "$SETUP" -e 'k:debug{2, 64}(a, 128) print("a[1] is " .. a[1])' </dev/null >"$tmp/out" 2>&1
expect "the end of input quits the launch" "quit (end of input): abandoning the launch" "$tmp/out"
expect "and the array is as it was" "a[1] is 1" "$tmp/out"

# --- where k:debug cannot run, and bad calls ---
"$BIN" --backend none -e "$SETUP" -e 'k:debug{2, 64}(a, 128)' >"$tmp/out" 2>&1
expect "the none backend runs nothing to debug, and says what to do" "k:debug runs the kernel, and the none backend runs nothing (it only compiles and checks launches): cuda.use(\"sim\") and compile the kernel again to debug it on the simulator" "$tmp/out"
"$BIN" --sim -e "$SETUP" -e 'k:debug(2)' >"$tmp/out" 2>&1
expect "a missing launch configuration is named" "k:debug needs a launch configuration, as a launch does: k:debug{blocks, threads}(args...)" "$tmp/out"
"$BIN" --sim -e "$SETUP" -e 'k:debug{2, 64}(a)' </dev/null >"$tmp/out" 2>&1
expect "arguments are checked as a launch checks them" "split(int *a, int n) takes 2 arguments, got 1" "$tmp/out"
"$BIN" --sim -e 'help "Kernel:debug"' >"$tmp/out" 2>&1
expect "help documents k:debug" "k:debug{grid, block [, shared = bytes] [, commands = {lines}]}(args...)" "$tmp/out"
exit $status
