#!/bin/sh
# tests/architecture_recipes.sh BIN DIR: ARCHITECTURE.md's recipes, each made on a scratch copy
# of the tree in DIR (made here; it must not exist) touching only the files the recipe names,
# then built once and tried. Run by tests/architecture.sh; prints its own "ok"/"not ok" lines.
#   a type of element         one row of repl/common/dtypes.def
#   a function of `cuda`      repl/bind/bind_cuda.c and lua/help.lua (the overview's test then
#                             passes; without the help entry it names the function)
#   a timing-model parameter  one row of sim/perf_params.def
#   a lesson                  one Markdown file in lessons/ (--verify-lessons passes it; with a
#                             "wrong" answer that passes its check, it fails it)
#   a PTX instruction         its INST and ALU rows in sim/ptx_opcodes.def and its semantics in
#                             sim/sim_alu.c: made the other way round, taking brev's out, after
#                             which the simulator refuses brev by name and runs the rest (an
#                             instruction NVRTC does not emit cannot be added to be tried)
# BIN's folder is copied too, so the build recompiles only what the recipes touch. The build's
# flags come from the environment as make test passes them (SANITIZER).
BIN=${1:?usage: tests/architecture_recipes.sh BIN DIR}
DIR=${2:?usage: tests/architecture_recipes.sh BIN DIR}
echo "1..8"
root=$(pwd)
build=$(basename "$(dirname "$BIN")")
mkdir "$DIR" || exit 1
# The tree as the working copy has it (uncommitted changes too), without ignored files.
# (where this is no git checkout, every file but the builds')
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files -co --exclude-standard
else find . -type f ! -path './build/*' ! -path './build-*' ! -path './.gpu/*' ! -name '*.o' \
  ! -name '*.d' | sed 's|^\./||'; fi | tar -T - -cf - | tar -xf - -C "$DIR"
cp -a "$(dirname "$BIN")" "$DIR/$build"
cd "$DIR" || exit 1
export XDG_CACHE_HOME="$DIR/.cache" XDG_STATE_HOME="$DIR/.state"
status=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; status=1; }

# -- a type of element: one row at the end of the table. `char` has no row in the product (its
# signedness is the platform's); here it gets one, which no other spelling claims.
cat >>repl/common/dtypes.def <<'EOF'
DTYPE(C8,   "c8",   int8_t,   DK_SINT,  0,     0,    0,    0,      "char", "")
EOF

# -- a function of `cuda`: its C in bind_cuda.c, registered in that file's functions[] ...
awk '/^int luaopen_cudalab_cuda\(/ {
       print "static int cuda_recipe_probe(lua_State *L) {"
       print "  lua_pushinteger(L, 42);"
       print "  return 1;"
       print "}"
       print ""
     }
     { print }
     /static const luaL_Reg functions\[\] = \{/ && !done { print "      {\"recipe_probe\", cuda_recipe_probe},"; done = 1 }' \
  repl/bind/bind_cuda.c >"$DIR/bind_cuda.c" && mv "$DIR/bind_cuda.c" repl/bind/bind_cuda.c
# ... and its help: an entry and a place in the overview
cp lua/help.lua "$DIR/help.lua.without"
awk '/^def\("cuda.backend"/ {
       print "def(\"cuda.recipe_probe\", \"cuda.recipe_probe() -> 42\","
       print "  \"Answers 42: made by the architecture test to try the recipe.\","
       print "  \"print(cuda.recipe_probe())\")"
       print ""
     }
     { sub(/perf_params  use  backend/, "perf_params  recipe_probe  use  backend"); print }' \
  "$DIR/help.lua.without" >lua/help.lua

# -- a timing-model parameter: one row
cat >>sim/perf_params.def <<'EOF'
PERF(recipe_ns,        5,         "ns",                          1, SIM_PERF_MAX,
     "a parameter made by the architecture test")
EOF

# -- a PTX instruction, the other way round: brev's two rows and its semantics (the function and
# the helper only it calls) taken out
sed -i '/^INST(brev,/d; /^ALU(BREV,/d' sim/ptx_opcodes.def
awk '/^static uint64_t brev\(/ { skip = 1 } skip { if (/^}/) skip = 0; next }
     /^SEM\(sem_brev\)/ { next } { print }' sim/sim_alu.c >"$DIR/sim_alu.c" &&
  mv "$DIR/sim_alu.c" sim/sim_alu.c

# -- a lesson: one file
cat >lessons/99-recipe.md <<'EOF'
# A lesson in one file

Made by the architecture test, to try the recipe for a lesson.

## Double the numbers

Define `double(t)`, which returns a new list with every number of `t` twice as large.

```lua check
assert(type(double) == "function", "define a function double(t)")
local r = double({1, 2, 3})
assert(type(r) == "table" and r[1] == 2 and r[2] == 4 and r[3] == 6 and r[4] == nil,
  "double({1, 2, 3}) should be {2, 4, 6}")
return true
```

```lua solution
function double(t) local r = {} for i, v in ipairs(t) do r[i] = 2 * v end return r end
```

```lua wrong
function double(t) return t end
```

```lua wrong
function double(t) local r = {} for i, v in ipairs(t) do r[i] = v + 2 end return r end
```

```lua wrong
function double(t) local r = {} for i, v in ipairs(t) do r[i] = 2 * v end r[#r + 1] = 0 return r end
```

```hint
Make a new table and fill it in a loop over ipairs(t).
```

```hint
Each r[i] is 2 * v.
```

```hint
function double(t) local r = {} for i, v in ipairs(t) do r[i] = 2 * v end return r end
```
EOF

# "needs nothing else" includes the compiler's word: a switch over the types that misses the new
# one is a warning, and so a failure here
# a sanitizer build's folder is build-SANITIZER (the Makefile's naming): by hand, as make test
# passes it
san=${SANITIZER:-}
case $build in build-address | build-undefined) san=${san:-${build#build-}} ;; esac
# MAKEFLAGS emptied: under `make -j16 test-gpu` the outer jobserver would reach this make, which
# says "warning: -j2 forced in submake" (make's word, not the compiler's)
if ! MAKEFLAGS= MFLAGS= make -j2 BUILD="$build" SANITIZER="$san" all >build.log 2>&1; then
  bad "the scratch copy builds with the five recipes made:"; tail -n 20 build.log | sed 's/^/    /'
  for _ in 1 2 3 4 5 6 7; do echo "ok - # SKIP nothing built"; done
  exit 1
elif grep -q 'warning:' build.log; then
  bad "the scratch copy builds with the five recipes made, but the compiler warns:"
  grep -A3 'warning:' build.log | head -n 20 | sed 's/^/    /'
else
  ok "the scratch copy builds with the five recipes made, without a warning"
fi
B=$build/cudalab

# the new type: listed, converted with its range, made and filled by the built-in kernels, and
# taken by a kernel whose signature spells it
out=$("$B" --backend sim -e '
local names = {}
for _, d in ipairs(cuda.dtypes) do names[#names + 1] = d.name end
assert(names[#names] == "c8", "cuda.dtypes ends with " .. tostring(names[#names]))
local a = cuda.array({1, -2, 127}, "c8")
assert(a.dtype == "c8" and a[1] == -2, "c8 array (indexed from 0)")
local okr, err = pcall(cuda.array, {200}, "c8")
assert(not okr and err:find("200 does not fit in c8 (-128..127)", 1, true), tostring(err))
local r = cuda.arange(5, "c8"):tolist()
assert(#r == 5 and r[5] == 4, "arange")
local k = cuda.kernel[[__global__ void inc(char *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = p[i] + 1; }]]
k[{1, 32}](a, 3)
local t = a:tolist()
assert(t[1] == 2 and t[2] == -1 and t[3] == -128, "kernel: " .. table.concat(t, " "))
print("type ok")' 2>&1)
case $out in *"type ok"*) ok "a type of element: one row gives arrays, ranges, built-in kernels and signatures" ;;
  *) bad "a type of element: one row of dtypes.def is not enough:"; echo "$out" | sed 's/^/    /' ;; esac

# the new function, and help's own test holding it to an entry and an overview place
out=$("$B" --backend none -e 'print(cuda.recipe_probe())' 2>&1)
if [ "$out" = 42 ] && "$B" --backend none tests/lua/help_overview.lua >help.out 2>&1 &&
  ! grep -q '^not ok' help.out; then
  ok "a function of cuda: bind_cuda.c and help.lua; help's test passes"
else bad "a function of cuda: got '$out'; help's test:"; grep -A3 '^not ok' help.out | sed 's/^/    /'; fi
cp lua/help.lua "$DIR/help.lua.with" && cp "$DIR/help.lua.without" lua/help.lua
if ! "$B" --backend none tests/lua/help_overview.lua >help.out 2>&1 &&
  grep '^not ok' help.out | grep -q recipe_probe; then
  ok "without its help, help's test names the new function"
else bad "without its help, help's test does not name the new function:"; sed 's/^/    /' help.out | tail -n 5; fi
cp "$DIR/help.lua.with" lua/help.lua

# the new parameter: listed with its doc, its bounds checked
out=$("$B" --backend sim -e '
local found
for _, p in ipairs(cuda.perf_params) do if p.name == "recipe_ns" then found = p end end
assert(found and found.doc == "a parameter made by the architecture test" and found.unit == "ns",
  "cuda.perf_params has no recipe_ns")
cuda.simopts{perf = {recipe_ns = 7}}
assert(cuda.simopts().perf.recipe_ns == 7, "simopts did not keep it")
local okr, err = pcall(cuda.simopts, {perf = {recipe_ns = -1}})
assert(not okr and err:find("recipe_ns", 1, true), tostring(err))
print("param ok")' 2>&1)
case $out in *"param ok"*) ok "a timing-model parameter: one row; listed, set and checked" ;;
  *) bad "a timing-model parameter: one row of perf_params.def is not enough:"; echo "$out" | sed 's/^/    /' ;; esac

# the new lesson: verified end to end; and a wrong answer that passes fails the verification
if "$B" --backend sim --verify-lessons 99 >verify.out 2>&1; then
  ok "a lesson: one Markdown file, which --verify-lessons passes"
else bad "a lesson: --verify-lessons fails the recipe's lesson:"; tail -n 10 verify.out | sed 's/^/    /'; fi
sed -i 's/^function double(t) return t end$/function double(t) local r = {} for i, v in ipairs(t) do r[i] = v * 2 end return r end/' \
  lessons/99-recipe.md
if ! "$B" --backend sim --verify-lessons 99 >verify.out 2>&1 && grep -qi wrong verify.out; then
  ok "a lesson whose wrong answer passes its check fails --verify-lessons"
else bad "a lesson whose wrong answer passes its check is not failed:"; tail -n 10 verify.out | sed 's/^/    /'; fi
# the instruction taken out: refused by name at load; its neighbours in the table still run
out=$("$B" --backend sim -e '
local okr, err = pcall(cuda.kernel, [[__global__ void r(unsigned *a) { a[0] = __brev(a[0]); }]])
assert(not okr and tostring(err):find("brev", 1, true), "brev: " .. tostring(err))
local k = cuda.kernel[[__global__ void p(unsigned *a) { a[0] = __popc(a[0]) + __clz(a[1]); }]]
local a = cuda.array({0xF0F0, 1}, "u32")
k[{1, 1}](a)
assert(a[0] == 8 + 31, "popc and clz: " .. tostring(a[0]))
print("inst ok")' 2>&1)
case $out in *"inst ok"*) ok "a PTX instruction: without its rows and semantics, refused by name; the rest run" ;;
  *) bad "a PTX instruction: taking brev out of the files the recipe names:"; echo "$out" | sed 's/^/    /' ;; esac
cd "$root" || exit 1
exit $status
