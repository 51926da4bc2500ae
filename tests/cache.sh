#!/bin/sh
# tests/cache.sh BIN: the kernel cache: hits, privacy, a damaged entry, a read-only folder, two
# REPLs filling the same cache at once, and headers: an edited header is never served stale.
BIN=$1
. tests/shlib.sh
plan 57
export XDG_CACHE_HOME="$tmp/cache"
dir="$XDG_CACHE_HOME/cudalab"
run() { "$BIN" --sim "$@" >"$tmp/out" 2>&1; }

run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().misses, cuda.cache().hits)'
[ "$(cat "$tmp/out")" = "$(printf '1\t0')" ] && ok "a first compile is a miss" || bad "first compile: $(cat "$tmp/out")"
run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().misses, cuda.cache().hits)'
[ "$(cat "$tmp/out")" = "$(printf '0\t1')" ] && ok "the next process hits the disk cache" || bad "second process: $(cat "$tmp/out")"
entry=$(ls "$dir"/*.kc | head -n 1)
[ "$(stat -c %a "$dir")" = 700 ] && ok "cache folder is private (0700)" || bad "cache folder mode $(stat -c %a "$dir")"
[ "$(stat -c %a "$entry")" = 600 ] && ok "cache entries are private (0600)" || bad "entry mode $(stat -c %a "$entry")"
run -e 'src = "__global__ void k(int *a) { a[0] = X; }"' -e 'print(cuda.kernel(src, {"-DX=1"}):ptx() ~= cuda.kernel(src, {"-DX=2"}):ptx())'
expect "options are part of the key" "true" "$tmp/out"

printf 'garbage' | dd of="$entry" bs=1 seek=40 conv=notrunc 2>/dev/null
run -e 'k = cuda.kernel "inc.cu"; a = cuda.zeros(10); k[{1, 32}](a, 10); print(a[9])'
expect "a damaged entry is reported" "was damaged, or not sealed with your key; compiling again" "$tmp/out"
expect "and the kernel still works" "1.0" "$tmp/out"
run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().hits)'
[ "$(cat "$tmp/out")" = "1" ] && ok "the damaged entry was replaced" || bad "after repair: $(cat "$tmp/out")"
rm "$entry"; mkfifo "$entry" # opening a FIFO to read waits for a writer that never comes
# a hang never ends, so the bound only has to outlast a compile on a loaded machine
timeout 120 "$BIN" --sim -e 'k = cuda.kernel "inc.cu"; a = cuda.zeros(10); k[{1, 32}](a, 10); print(a[9])' >"$tmp/out" 2>&1; rc=$?
[ $rc = 0 ] && ok "a FIFO in place of an entry does not hang the compile" || bad "FIFO entry: exited $rc"
expect "and the kernel still works" "1.0" "$tmp/out"
[ -f "$entry" ] && [ ! -p "$entry" ] && ok "the FIFO was replaced by an entry" || bad "the FIFO is still there"

chmod 500 "$dir"
if [ "$(id -u)" = 0 ]; then
  # root writes anywhere; a path through a regular file cannot be created by anyone
  export XDG_CACHE_HOME="$tmp/file-not-folder"; : >"$XDG_CACHE_HOME"
fi
run -e 'cuda.kernel "vector_add.cu"; cuda.kernel "saxpy.cu"; print(cuda.cache().disk)'
expect "an unwritable cache is said once" "kept in memory for this session only" "$tmp/out"
[ "$(grep -c 'kept in memory' "$tmp/out")" = 1 ] && ok "only once" || bad "notice repeated"
expect "and compiling goes on" "false" "$tmp/out"
chmod 700 "$dir"
export XDG_CACHE_HOME="$tmp/cache"

# Two processes compiling the same and different kernels at once.
cat >"$tmp/many.lua" <<'LUA'
local me = ...
for i = 1, 12 do
  cuda.kernel(string.format("__global__ void same%d(int *a) { a[0] = %d; }", i, i))
  cuda.kernel(string.format("__global__ void own_%s_%d(int *a) { a[0] = %d; }", me, i, i))
end
LUA
"$BIN" --sim "$tmp/many.lua" p1 >"$tmp/p1" 2>&1 & p1=$!
"$BIN" --sim "$tmp/many.lua" p2 >"$tmp/p2" 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
[ $r1 = 0 ] && [ $r2 = 0 ] && ok "two REPLs fill one cache at once" || bad "concurrent compiles failed: $(cat "$tmp/p1" "$tmp/p2")"
cat "$tmp/many.lua" >"$tmp/check.lua"
printf 'local c = cuda.cache() print(c.misses, c.hits)\n' >>"$tmp/check.lua"
"$BIN" --sim "$tmp/check.lua" p1 >"$tmp/out" 2>&1
[ "$(tail -n 1 "$tmp/out")" = "$(printf '0\t24')" ] && ok "and every entry they wrote reads back whole" || bad "after concurrent fill: $(cat "$tmp/out")"
ls "$dir" | grep -q tmp && bad "temporary files left behind" || ok "no temporary files left behind"

# Headers. The value a kernel stores comes from a header; after each edit of the header the
# next process must see the new value, and an unchanged header must still hit.
mkdir -p "$tmp/work/sub" "$tmp/home/kernels"
ln -s "$PWD/lua" "$tmp/home/lua"
cat >"$tmp/hdr.lua" <<'LUA'
local src = ...
local k = cuda.kernel(src)
local a = cuda.zeros(1, "i32")
k[{1, 1}](a)
local c = cuda.cache()
print(a[0], c.misses, c.hits)
LUA
abs_bin="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
hdr() { (cd "$tmp/work" && CUDALAB_HOME="$tmp/home" "$abs_bin" --sim "$tmp/hdr.lua" "$1" >"$tmp/out" 2>&1); }
quoted='#include "value.h"
__global__ void k(int *a) { a[0] = VALUE; }'
echo '#define VALUE 1' >"$tmp/work/value.h"
hdr "$quoted"; hdr "$quoted"
[ "$(cat "$tmp/out")" = "$(printf '1\t0\t1')" ] && ok "a kernel with an unchanged header hits" || bad "unchanged header: $(cat "$tmp/out")"
echo '#define VALUE 2' >"$tmp/work/value.h"
hdr "$quoted"
[ "$(cat "$tmp/out")" = "$(printf '2\t1\t0')" ] && ok "an edited header in the current folder recompiles" || bad "edited header: $(cat "$tmp/out")"
printf '#include "sub/inner.h"\n' >"$tmp/work/value.h"; echo '#define VALUE 3' >"$tmp/work/sub/inner.h"
hdr "$quoted"; echo '#define VALUE 4' >"$tmp/work/sub/inner.h"; hdr "$quoted"
[ "$(cat "$tmp/out")" = "$(printf '4\t1\t0')" ] && ok "an edited header included by a header recompiles" || bad "nested header: $(cat "$tmp/out")"
kern='#include <lesson_value.h>
__global__ void k(int *a) { a[0] = LESSON_VALUE; }'
echo '#define LESSON_VALUE 5' >"$tmp/home/kernels/lesson_value.h"
hdr "$kern"; echo '#define LESSON_VALUE 6' >"$tmp/home/kernels/lesson_value.h"; hdr "$kern"
[ "$(cat "$tmp/out")" = "$(printf '6\t1\t0')" ] && ok "an edited header in the kernels folder recompiles" || bad "kernels-folder header: $(cat "$tmp/out")"
rm "$tmp/home/kernels/lesson_value.h"; echo '#define LESSON_VALUE 7' >"$tmp/work/lesson_value.h"
hdr "$kern"
expect "a header that went missing is a compile error, not a stale hit" 'cannot open source file "lesson_value.h"' "$tmp/out"
printf '#ifndef LOOP_H\n#define LOOP_H\n#include "loop.h"\n#include "loop2.h"\n#define VALUE 9\n#endif\n' >"$tmp/work/loop.h"
printf '#include "loop.h"\n' >"$tmp/work/loop2.h"
loop='#include "loop.h"
__global__ void k(int *a) { a[0] = VALUE; }'
hdr "$loop"; hdr "$loop"
[ "$(cat "$tmp/out")" = "$(printf '9\t0\t1')" ] && ok "headers that include each other are followed once, and hit" || bad "include cycle: $(cat "$tmp/out")"
macro='#define HDR "value.h"
#include HDR
__global__ void k(int *a) { a[0] = VALUE; }'
echo '#define VALUE 8' >"$tmp/work/value.h"; hdr "$macro"; hdr "$macro"
[ "$(cat "$tmp/out")" = "$(printf '8\t1\t0')" ] && ok "an #include the cache cannot follow is compiled every time" || bad "macro include: $(cat "$tmp/out")"
# Every way of writing an include that the compiler reads as one: the header is edited between
# compiles, and the kernel's whole result is checked against the CPU's with the header's value.
# Each spelling must hit while the header is unchanged (the cache is in play) and recompile,
# right, once it changes.
cat >"$tmp/ref.lua" <<'LUA'
local src, value = ...
value = tonumber(value)
local k = cuda.kernel(src)
local n = 64
local a = cuda.zeros(n, "i32")
k[{1, n}](a, n)
local wrong = 0
for i = 0, n - 1 do
  if a[i] ~= i * value + 1 then wrong = wrong + 1 end
end
local c = cuda.cache()
print(wrong == 0 and "right" or "wrong", c.misses, c.hits)
LUA
ref() { (cd "$tmp/work" && CUDALAB_HOME="$tmp/home" "$abs_bin" --sim "$tmp/ref.lua" "$1" "$2" >"$tmp/out" 2>&1); }
body='__global__ void k(int *a, int n) { int i = threadIdx.x; if (i < n) a[i] = i * VALUE + 1; }'
# spelled NAME SOURCE: value 3 twice (a hit the second time), then value 5 (a miss, and right).
spelled() {
  echo '#define VALUE 3' >"$tmp/work/value.h"; ref "$2" 3; ref "$2" 3
  hit=$(cat "$tmp/out")
  echo '#define VALUE 5' >"$tmp/work/value.h"; ref "$2" 5
  [ "$hit" = "$(printf 'right\t0\t1')" ] && [ "$(cat "$tmp/out")" = "$(printf 'right\t1\t0')" ] &&
    ok "an edited header included with $1 recompiles" || bad "$1: $hit, then $(cat "$tmp/out")"
}
spelled "a comment between # and include" "$(printf '# /*x*/ include "value.h"\n%s' "$body")"
spelled "an empty comment for the space" "$(printf '#/**/include "value.h"\n%s' "$body")"
spelled "the %: digraph" "$(printf '%%:include "value.h"\n%s' "$body")"
spelled "form feeds and vertical tabs" "$(printf '\f#\vinclude\f"value.h"\n%s' "$body")"
spelled "splices in the word and the name" "$(printf '#inc\\\nlude "val\\\nue.h"\n%s' "$body")"
spelled "a comment across lines before the name" "$(printf '#include /*\n*/ "value.h"\n%s' "$body")"
printf '%%:include "sub/inner.h"\n' >"$tmp/work/outer.h"
echo '#define VALUE 3' >"$tmp/work/sub/inner.h"; ref "$(printf '#include "outer.h"\n%s' "$body")" 3
echo '#define VALUE 5' >"$tmp/work/sub/inner.h"; ref "$(printf '#include "outer.h"\n%s' "$body")" 5
[ "$(cat "$tmp/out")" = "$(printf 'right\t1\t0')" ] && ok "a header's own %:include is followed too" || bad "nested digraph: $(cat "$tmp/out")"
digraph_macro="$(printf '#define HDR "value.h"\n%%: /**/ include HDR\n%s' "$body")"
echo '#define VALUE 3' >"$tmp/work/value.h"; ref "$digraph_macro" 3; ref "$digraph_macro" 3
[ "$(cat "$tmp/out")" = "$(printf 'right\t1\t0')" ] && ok "a macro include spelled with %: and a comment is compiled every time" || bad "digraph macro include: $(cat "$tmp/out")"
# Headers resolved as nvcc resolves them: a kernel file's quoted include first beside the file,
# then the -I folders in their order; the key follows the header actually used.
mkdir -p "$tmp/work/src" "$tmp/work/ia" "$tmp/work/ib"
printf '#include "stencil.h"\n__global__ void k(int *a) { a[0] = RADIUS; }\n' >"$tmp/work/src/st.cu"
echo '#define RADIUS 3' >"$tmp/work/src/stencil.h"; echo '#define RADIUS 7' >"$tmp/work/stencil.h"
hdr "src/st.cu"
[ "$(cat "$tmp/out")" = "$(printf '3\t1\t0')" ] && ok "a kernel file's own header is used, not the current folder's" || bad "header beside the file: $(cat "$tmp/out")"
echo '#define RADIUS 9' >"$tmp/work/stencil.h"; hdr "src/st.cu"
[ "$(cat "$tmp/out")" = "$(printf '3\t0\t1')" ] && ok "editing a same-named header elsewhere keeps the hit" || bad "unused header edited: $(cat "$tmp/out")"
echo '#define RADIUS 4' >"$tmp/work/src/stencil.h"; hdr "src/st.cu"
[ "$(cat "$tmp/out")" = "$(printf '4\t1\t0')" ] && ok "editing the header used recompiles" || bad "used header edited: $(cat "$tmp/out")"
echo '#define W 1' >"$tmp/work/ia/w.h"; echo '#define W 2' >"$tmp/work/ib/w.h"
(cd "$tmp/work" && CUDALAB_HOME="$tmp/home" "$abs_bin" --sim -e 'src = "#include \"w.h\"\n__global__ void k(int *a) { a[0] = W; }"
for _, o in ipairs{{"-Iia", "-Iib"}, {"-Iib", "-Iia"}} do
  local a = cuda.zeros(1, "i32") cuda.kernel(src, o)[{1, 1}](a) io.write(a[0], " ")
end' >"$tmp/out" 2>&1)
[ "$(cat "$tmp/out")" = "1 2 " ] && ok "-I folders are searched in their order" || bad "-I order: $(cat "$tmp/out")"
printf '#include "nope.h"\n__global__ void k(int *a) {}\n' >"$tmp/work/src/bad.cu"
hdr "src/bad.cu"
expect "a missing header names the kernel file's folder first" "src/bad.cu:1: catastrophic error: cannot open source file \"nope.h\"" "$tmp/out"
# --- what another user could plant: entries sealed with another key, files or folders others
# can write. Each is compiled again, never loaded.
key="$XDG_STATE_HOME/cudalab/cache.key"
[ "$(stat -c %a "$key")" = 600 ] && [ "$(stat -c %s "$key")" = 16 ] && ok "the cache key is 16 private bytes (0600)" || bad "key: $(stat -c '%a %s' "$key")"
XDG_STATE_HOME="$tmp/other-state" XDG_CACHE_HOME="$tmp/other-cache" "$BIN" --sim -e 'cuda.kernel "inc.cu"' >/dev/null 2>&1
planted=$(ls "$tmp/other-cache/cudalab/"*.kc | head -n 1)

run -e 'print(cuda.cache.clear())'
cp "$planted" "$dir/"
run -e 'k = cuda.kernel "inc.cu"; a = cuda.zeros(10); k[{1, 32}](a, 10); print(a[9], cuda.cache().hits)'
expect "an entry sealed with someone else's key is not loaded" "not sealed with your key; compiling again" "$tmp/out"
expect "and is compiled again (no hit)" "$(printf '1.0\t0')" "$tmp/out"
chmod 666 "$entry"
run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().hits)'
expect "an entry others can write is not loaded" "is writable by others; compiling again" "$tmp/out"
[ "$(tail -n 1 "$tmp/out")" = 0 ] && [ "$(stat -c %a "$entry")" = 600 ] && ok "and is replaced by a private one" || bad "writable entry: $(cat "$tmp/out"), mode $(stat -c %a "$entry")"
chmod 777 "$dir"
run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().hits, cuda.cache().disk)'
expect "a cache folder anyone can write is refused, with the fix" "$dir can be written by anyone (mode 777); make it private with: chmod 700 $dir" "$tmp/out"
[ "$(tail -n 1 "$tmp/out")" = "$(printf '0\tfalse')" ] && ok "and nothing is loaded from it" || bad "0777 folder: $(cat "$tmp/out")"
chmod 770 "$dir"
run -e 'k = cuda.kernel "inc.cu"'
expect "one its group can write is refused too" "$dir can be written by its group (mode 770)" "$tmp/out"
chmod 700 "$dir"
chmod 644 "$key"
run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().hits)'
expect "a cache key others can read is refused" "the cache key $key is not a private file of yours (mode 0600); remove it" "$tmp/out"
[ "$(tail -n 1 "$tmp/out")" = 0 ] && ok "and the cache is not trusted with it" || bad "readable key: $(cat "$tmp/out")"
chmod 600 "$key"
chmod 777 "$XDG_STATE_HOME/cudalab"
run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().hits)'
expect "a state folder anyone can write is refused (it holds the key)" "$XDG_STATE_HOME/cudalab can be written by anyone (mode 777); make it private with: chmod 700" "$tmp/out"
chmod 700 "$XDG_STATE_HOME/cudalab"
run -e 'k = cuda.kernel "inc.cu"' -e 'print(cuda.cache().hits)'
[ "$(tail -n 1 "$tmp/out")" = 1 ] && ok "once fixed, the cache hits again" || bad "after the fixes: $(cat "$tmp/out")"

# NVRTC's warnings about the learner's own file, shown once a session, from the cache too.
cat >"$tmp/warn.lua" <<'LUA'
local src = [[
#include <cuda_fp16.h>
__global__ void unused_b(int *out) {
  int b = 3;
  out[threadIdx.x] = 1;
}]]
cuda.kernel(src); cuda.kernel(src)
cuda.kernel("__global__ void quiet(int *out) { int c = 4; out[0] = 1; }", {warnings = false})
print("hits " .. cuda.cache().hits)
print(pcall(cuda.kernel, "__global__ void w(int *o) { o[0] = 1; }", {warnings = "no"}))
LUA
run "$tmp/warn.lua"
expect "a compile's warning about the learner's own line is shown" 'kernel.cu:3: warning #177-D: variable "b" was declared but never referenced' "$tmp/out"
expect "with its line quoted" '    int b = 3;' "$tmp/out"
[ "$(grep -c 'declared but never referenced' "$tmp/out")" = 1 ] && ok "once, though the kernel was built twice" || bad "warning count: $(cat "$tmp/out")"
! grep -q '"c" was declared' "$tmp/out" && ok "{warnings = false} hides them" || bad "warnings = false: $(cat "$tmp/out")"
expect "a bad warnings option is refused" "opts.warnings must be true or false, got string" "$tmp/out"
run "$tmp/warn.lua"
[ "$(grep -c 'variable "b" was declared but never referenced' "$tmp/out")" = 1 ] && ! grep -q '^hits 0' "$tmp/out" && ok "a compile from the disk cache shows them too" || bad "cached: $(cat "$tmp/out")"
run -e 'k = cuda.kernel "inc.cu"' -e 'print("done")'
[ "$(cat "$tmp/out")" = done ] && ok "a clean kernel compiles silently" || bad "clean compile: $(cat "$tmp/out")"

run -e 'print(cuda.cache.clear())' -e 'print(cuda.cache().entries)'
[ "$(tail -n 1 "$tmp/out")" = "0" ] && ok "cuda.cache.clear() empties it" || bad "clear: $(cat "$tmp/out")"
exit $status
