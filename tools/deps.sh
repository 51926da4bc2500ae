#!/bin/sh
# Installs the system packages cudalab builds against (Lua 5.4 and GNU Readline development
# files, pkg-config) and the BLAS library cuda.blas uses on the simulator (loaded at run time),
# when they are missing. Quiet when everything is there already.
set -e
have_lua() { [ -f /usr/include/lua5.4/lua.h ] || [ -n "$LUA_CFLAGS" ]; }
have_readline() { [ -f /usr/include/readline/readline.h ] || [ -n "$READLINE_CFLAGS" ]; }
have_pkgconfig() { command -v pkg-config >/dev/null 2>&1 || [ -n "$LUA_CFLAGS" ]; }
have_blas() { ldconfig -p 2>/dev/null | grep -q 'libopenblas.so.0\|libblas.so.3'; }
if have_lua && have_readline && have_pkgconfig; then
  # Only the run-time BLAS may be missing: a try, never a failure (cudalab builds and runs
  # without it, and cuda.blas then says which package to install).
  have_blas && exit 0
  { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libblas3 >/tmp/cudalab-apt.log 2>&1; } ||
    echo "cudalab: note: no BLAS library (libblas3), so cuda.blas cannot run on the simulator" >&2
  exit 0
fi

pkgs="liblua5.4-dev libreadline-dev pkg-config libblas3"
echo "cudalab: installing $pkgs"
if [ "$(id -u)" = 0 ]; then sudo=""
elif command -v sudo >/dev/null 2>&1; then sudo="sudo"
else
  echo "cudalab: need $pkgs but cannot install them (not root, no sudo)." >&2
  echo "         Ask an administrator to run: apt-get install $pkgs" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "cudalab: need $pkgs, and this system has no apt-get." >&2
  echo "         Install Lua 5.4 and readline development files, then set LUA_CFLAGS/LUA_LIBS." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq $pkgs; } >/tmp/cudalab-apt.log 2>&1; then
  echo "cudalab: apt-get could not install $pkgs; its log is in /tmp/cudalab-apt.log" >&2
  exit 1
fi
