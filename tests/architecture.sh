#!/bin/sh
# tests/architecture.sh [BIN]: what ARCHITECTURE.md says, held to the code.
#   - every path it names exists (a pattern such as bind_*.c matches a file; a placeholder such
#     as repl/bind/bind_CONCERN.c is a pattern for the reader, not a path, and is left alone);
#   - every file it names without its folder (engine.h, sim_model.c) is a file of the project
#     or a header of the toolkit or of Lua;
#   - every C or Lua name it quotes with an underscore in it (`rt_backend`, `sim_default_desc`)
#     is written somewhere in the sources;
#   - its recipes: each is made on a scratch copy of the tree, touching only the files the recipe
#     names (tests/architecture_recipes.sh), and the result is built and tried.
# Run from the repository root. BIN (default build/cudalab) is the build the scratch copy starts
# from, so that only what a recipe touches is compiled again.
BIN=${1:-${CUDALAB_TEST_BIN:-build/cudalab}}
. tests/shlib.sh
plan 12
doc=ARCHITECTURE.md
cuda=${CUDA_HOME:-/usr/local/cuda}

# stale_paths DOC: the paths DOC names that do not exist, one a line; the count named in $tmp/n.
stale_paths() {
  grep -oE '(^|[^A-Za-z0-9_./-])(repl|sim|lua|tests|bench|include|lessons|tools)/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*/]' \
    "$1" | sed 's/^[^a-z]//' | sort -u >"$tmp/found"
  wc -l <"$tmp/found" >"$tmp/n"
  while read -r p; do
    # a placeholder names what the reader chooses: two capitals in a row (NAME, CONCERN, NN)
    case $p in *[A-Z][A-Z]*) continue ;; esac
    # shellcheck disable=SC2086 # a pattern is meant to be expanded
    set -- $p
    [ -e "$1" ] || echo "$p"
  done <"$tmp/found"
}

# stale_files DOC: the files DOC names without a folder that are neither the project's nor a
# header the toolkit or Lua gives.
# The tree's files: git's list where this is a checkout, else every file but the builds'.
tree_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files -co --exclude-standard
  else find . -type f ! -path './build/*' ! -path './build-*' ! -path './.gpu/*' ! -name '*.o' \
    ! -name '*.d' | sed 's|^\./||'; fi
}
tree_files | sed 's|.*/||' | sort -u >"$tmp/basenames"
# the sources a quoted name may be written in (this test's own file holds the planted ones)
tree_files | grep -E '\.(c|h|def|lua|sh|mk)$|Makefile$' | grep -vx tests/architecture.sh \
  >"$tmp/sources"
stale_files() {
  grep -oE '(^|[^A-Za-z0-9_./-])[A-Za-z0-9_]+\.(c|h|def|lua)\b' "$1" | sed 's/^[^A-Za-z0-9_]//' |
    sort -u >"$tmp/found"
  wc -l <"$tmp/found" >"$tmp/n"
  while read -r f; do
    grep -qxF "$f" "$tmp/basenames" && continue
    # a file the page describes that a user writes: a class folder's settings
    case $f in class.lua) continue ;; esac
    [ -e "$cuda/include/$f" ] || [ -e "/usr/include/lua5.4/$f" ] || [ -e "/usr/include/$f" ] ||
      echo "$f"
  done <"$tmp/found"
}

# stale_names DOC: the identifiers with an underscore that DOC quotes (`...`) and no source
# writes; placeholders (luaopen_cudalab_X, bind_CONCERN) aside.
stale_names() {
  # file names are the other checks' business: taken out before the identifiers are picked
  grep -oE '`[^`]+`' "$1" | sed -E 's#[A-Za-z0-9_./-]+\.(c|h|def|lua|py|sh|md|cu|json)\b##g' |
    grep -oE '[A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]*' | sort -u |
    grep -vE '(^|_)[A-Z]+$|_[A-Z]+_|^[A-Z]+_$' >"$tmp/found"
  wc -l <"$tmp/found" >"$tmp/n"
  while read -r id; do
    tr '\n' '\0' <"$tmp/sources" | xargs -0 grep -lw -e "$id" -- 2>/dev/null | grep -q . ||
      echo "$id"
  done <"$tmp/found"
}

# claim WHAT CHECK MIN: CHECK on the page finds more than MIN things and nothing stale.
claim() {
  "$2" "$doc" >"$tmp/stale"
  n=$(cat "$tmp/n")
  if [ "$n" -gt "$3" ] && [ ! -s "$tmp/stale" ]; then ok "the $n $1 exist"
  else bad "the $1 exist ($n found), but not these:"; sed 's/^/    /' "$tmp/stale"; fi
}
claim "paths ARCHITECTURE.md names" stale_paths 40
claim "files ARCHITECTURE.md names without their folder" stale_files 30
claim "names ARCHITECTURE.md quotes in the code" stale_names 30

# The three checks can fail: a copy of the page with one stale path, file and name each.
sed 's|sim/perf_params\.def|sim/perf_params_gone.def|; s|`rt_backend`|`rt_backend_gone`|
     s|engine\.h|engine_gone.h|' "$doc" >"$tmp/stale.md"
got=$( (stale_paths "$tmp/stale.md"; stale_files "$tmp/stale.md"; stale_names "$tmp/stale.md") |
  paste -sd' ' -)
if [ "$got" = "sim/perf_params_gone.def engine_gone.h rt_backend_gone" ]; then
  ok "a stale path, file or name in the page is caught"
else bad "a stale path, file or name in the page is caught: found '$got'"; fi

# The recipes, on a scratch copy.
sh tests/architecture_recipes.sh "$BIN" "$tmp/recipes" >"$tmp/recipes.out" 2>&1
grep -E '^(not )?ok |^    ' "$tmp/recipes.out"
if ! grep -q "^ok - the scratch copy builds\|^not ok - the scratch copy builds.*warns" "$tmp/recipes.out"; then
  status=1
  sed 's/^/    /' "$tmp/recipes.out" | tail -n 30
fi
grep -q '^not ok' "$tmp/recipes.out" && status=1
exit $status
