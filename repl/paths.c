/* paths.c: locating cudalab's own files and the user's state. Nothing here is fatal: a missing
 * home or a read-only one leaves the caller to carry on without history or a cache. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

int paths_mkdirs(const char *path) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return errno = ENAMETOOLONG, -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static int has_init(const char *dir) {
  char p[PATH_MAX + 16];
  snprintf(p, sizeof p, "%s/lua/init.lua", dir);
  return access(p, R_OK) == 0;
}

int paths_data_dir(char *out, size_t len) {
  const char *env = getenv("CUDALAB_HOME");
  if (env && *env) return snprintf(out, len, "%s", env) < (int)len ? 0 : -1;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = '\0'; /* exe is now the binary's folder */
  const char *candidates[] = {"%s/..", "%s/../share/cudalab", "%s"};
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, candidates[i], exe);
    char real[PATH_MAX];
    if (realpath(dir, real) && has_init(real)) return snprintf(out, len, "%s", real) < (int)len ? 0 : -1;
  }
  return -1;
}

static int xdg_dir(const char *var, const char *fallback, char *out, size_t len) {
  const char *base = getenv(var);
  int n;
  if (base && base[0] == '/') {
    n = snprintf(out, len, "%s/cudalab", base);
  } else {
    const char *home = getenv("HOME");
    if (!home || !*home) return -1;
    n = snprintf(out, len, "%s/%s/cudalab", home, fallback);
  }
  if (n < 0 || (size_t)n >= len) return -1;
  return paths_mkdirs(out);
}

int paths_state_dir(char *out, size_t len) {
  return xdg_dir("XDG_STATE_HOME", ".local/state", out, len);
}

int paths_cache_dir(char *out, size_t len) { return xdg_dir("XDG_CACHE_HOME", ".cache", out, len); }
