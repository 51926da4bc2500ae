/* paths.c: locating cudalab's own files and the user's state. Nothing here is fatal: a missing
 * home or a read-only one leaves the caller to carry on without history or a cache.
 *
 * The state and cache folders hold what cudalab later trusts (history, lesson progress, the
 * cache key, compiled kernels that it loads and runs), so a folder found there already is used
 * only when it is the user's own and no one else can write to it. One made 0777 by a careless
 * umask or script, or left by another user, is refused with the command that fixes it; fixing
 * it silently was turned down, since a folder someone else can write may already hold their
 * files. */
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
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
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

int paths_check_private(const char *path, char *why, size_t whylen) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(why, whylen, "%s cannot be read (%s)", path, strerror(errno));
    return -1;
  }
  if (st.st_uid != geteuid()) {
    snprintf(why, whylen, "%s is not yours (it belongs to user %ld); remove it or rename it, and "
             "cudalab will make its own", path, (long)st.st_uid);
    return -1;
  }
  if (st.st_mode & 022) {
    snprintf(why, whylen, "%s can be written by %s (mode %03o); make it private with: chmod %s %s",
             path, (st.st_mode & 002) ? "anyone" : "its group", (unsigned)(st.st_mode & 0777),
             S_ISDIR(st.st_mode) ? "700" : "600", path);
    return -1;
  }
  return 0;
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
  const char *candidates[] = {"/..", "/../share/cudalab", ""}; /* after the binary's folder */
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s%s", exe, candidates[i]);
    char real[PATH_MAX];
    if (realpath(dir, real) && has_init(real))
      return snprintf(out, len, "%s", real) < (int)len ? 0 : -1;
  }
  return -1;
}

static int xdg_dir(const char *var, const char *fallback, char *out, size_t len, char *why,
                   size_t whylen) {
  const char *base = getenv(var);
  int n;
  if (base && base[0] == '/') {
    n = snprintf(out, len, "%s/cudalab", base);
  } else {
    const char *home = getenv("HOME");
    if (!home || !*home) {
      snprintf(why, whylen, "there is no HOME");
      return -1;
    }
    n = snprintf(out, len, "%s/%s/cudalab", home, fallback);
  }
  if (n < 0 || (size_t)n >= len) {
    snprintf(why, whylen, "its path is too long");
    return -1;
  }
  if (paths_mkdirs(out) != 0) {
    snprintf(why, whylen, "%s: %s", out, strerror(errno));
    return -1;
  }
  return paths_check_private(out, why, whylen);
}

int paths_state_dir(char *out, size_t len, char *why, size_t whylen) {
  return xdg_dir("XDG_STATE_HOME", ".local/state", out, len, why, whylen);
}

int paths_cache_dir(char *out, size_t len, char *why, size_t whylen) {
  return xdg_dir("XDG_CACHE_HOME", ".cache", out, len, why, whylen);
}
