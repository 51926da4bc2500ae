#!/bin/sh
# tests/readme.sh BIN: the README's examples run as a newcomer types or pastes them, on the
# simulator, and print what the README shows (tests/readme.lua says how an example is found and
# compared), so the examples a newcomer copies first keep working and keep telling the truth.
BIN=$1
. tests/shlib.sh
export XDG_CACHE_HOME="$tmp/cache" # kernels compiled afresh, as on a newcomer's machine
"$BIN" --backend none tests/readme.lua "$BIN" "$tmp"
