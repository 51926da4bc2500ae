/* bind_files.c: require "cudalab.files", the few file operations that Lua's io lacks and the
 * lesson progress file (lua/lessons/lesson_progress.lua) needs: reading a file that might be a FIFO
 * or someone else's without hanging or trusting it, an exclusive lock, an atomic private write,
 * and sweeping up the temporaries of saves that were killed.
 *
 * Stance: like io.open, a file that cannot be used is an answer (nil and a message that says
 * why and what to do), not an error; bad arguments raise. Every descriptor lives in a userdata
 * made before the file is opened, so an error (out of memory) half-way leaves it to __gc to
 * close, never leaked; a lock is such a descriptor, released by release(), __close or __gc. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "bindings.h"
#include "paths.h"

#define FHANDLE "cudalab.FileHandle"
#define DHANDLE "cudalab.DirHandle"
#define LOCK_WAIT_MS 5000 /* another REPL holds the lock for a millisecond; 5 s means it is stuck */

typedef struct fhandle {
  int fd; /* -1 once released */
} fhandle;

static fhandle *fh_new(lua_State *L) {
  fhandle *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->fd = -1;
  luaL_setmetatable(L, FHANDLE);
  return h;
}

static void fh_close(fhandle *h) {
  if (h->fd >= 0) close(h->fd);
  h->fd = -1;
}

static int fh_release(lua_State *L) {
  fh_close(luaL_checkudata(L, 1, FHANDLE));
  return 0;
}

/* nil and a message; for io.open-like returns. */
static int fail(lua_State *L, const char *fmt, const char *path, const char *detail) {
  lua_pushnil(L);
  lua_pushfstring(L, fmt, path, detail);
  return 2;
}

/* Whether the open file is a regular file of the user's that no one else can write (any
 * regular file with any_owner); else pushes nil and the reason with its fix, and returns 2 (the
 * caller returns that). */
static int refuse_untrusted(lua_State *L, int fd, const char *path, off_t *size, int any_owner) {
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(L, "cannot read %s (%s)", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(L, "%s is not a regular file%s; remove it", path,
                " (a FIFO, a device or a folder?)");
  *size = st.st_size;
  if (any_owner) return 0;
  if (st.st_uid != geteuid()) return fail(L, "%s is not yours%s; remove it", path, "");
  if (st.st_mode & 022) {
    char mode[8];
    snprintf(mode, sizeof mode, "%03o", (unsigned)(st.st_mode & 0777));
    lua_pushnil(L);
    lua_pushfstring(L, "%s can be written by others (mode %s); make it private with: chmod 600 %s",
                    path, mode, path);
    return 2;
  }
  return 0;
}

/* files.read(path, max [, any_owner]) -> text | nil, why, "missing". A FIFO in the file's place
 * must not hang start-up, where even Ctrl-C cannot reach: O_NONBLOCK opens it at once and fstat
 * refuses it. O_NOFOLLOW refuses a link that points elsewhere. The file must be the user's and
 * writable by no one else, unless any_owner is true (a file in a folder that is the user's
 * alone, such as a workspace, whose mode does not matter). */
static int files_read(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_checkinteger(L, 2);
  luaL_argcheck(L, max >= 0 && max <= (1 << 30), 2, "size out of range (0 to 1 GiB)");
  int any_owner = lua_toboolean(L, 3);
  fhandle *h = fh_new(L);
  h->fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (h->fd < 0) {
    int e = errno;
    if (e == ENOENT) {
      lua_pushnil(L);
      lua_pushfstring(L, "%s does not exist", path);
      lua_pushliteral(L, "missing");
      return 3;
    }
    if (e == ELOOP) return fail(L, "%s is a symbolic link%s; remove it", path, "");
    return fail(L, "cannot read %s (%s)", path, strerror(e));
  }
  off_t size;
  int r = refuse_untrusted(L, h->fd, path, &size, any_owner);
  if (r) {
    fh_close(h);
    return r;
  }
  if (size > max) {
    fh_close(h);
    return fail(L, "%s is larger than %s bytes", path, lua_pushfstring(L, "%I", max));
  }
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, (size_t)size);
  size_t got = 0;
  while (got < (size_t)size) {
    ssize_t n = read(h->fd, p + got, (size_t)size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  luaL_pushresultsize(&b, got);
  fh_close(h);
  return 1;
}

/* files.lock(path) -> lock | nil, why. An exclusive flock on path (created 0600), held until
 * lock:release() or the lock is collected; the kernel drops it when the process dies, so a
 * killed REPL never leaves the progress locked. Waits up to LOCK_WAIT_MS. */
static int files_lock(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  fhandle *h = fh_new(L);
  h->fd = open(path, O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (h->fd < 0) return fail(L, "cannot lock %s (%s)", path, strerror(errno));
  off_t size;
  int r = refuse_untrusted(L, h->fd, path, &size, 0);
  if (r) {
    fh_close(h);
    return r;
  }
  for (int waited = 0; flock(h->fd, LOCK_EX | LOCK_NB) != 0; waited += 10) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= LOCK_WAIT_MS) {
      int e = errno;
      fh_close(h);
      return fail(L, "cannot lock %s (%s)", path,
                  e == EWOULDBLOCK ? "another cudalab holds it" : strerror(e));
    }
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  return 1;
}

/* files.write_atomic(path, text [, "shared"]) -> true | nil, why. A temporary named
 * path.tmp.<pid>.<n>, then rename(): readers see the old file or the new one, a full disk
 * leaves the old one whole, and whatever sits under the name (a FIFO, a symbolic link) is
 * replaced, never opened: writing into a FIFO would wait for a reader for ever. The temporary
 * is private (0600) unless "shared" asks for a file others may read as the umask allows (a
 * program or a chart the user hands on). The pid in the name lets files.sweep tell a killed
 * save's leftover from a save in progress. */
static int files_write_atomic(lua_State *L) {
  static unsigned counter;
  static const char *const modes[] = {"private", "shared", NULL};
  const char *path = luaL_checkstring(L, 1);
  size_t len;
  const char *text = luaL_checklstring(L, 2, &len);
  mode_t mode = luaL_checkoption(L, 3, "private", modes) == 1 ? 0666 : 0600;
  const char *tmp = lua_pushfstring(L, "%s.tmp.%d.%d", path, (int)getpid(), (int)counter++);
  fhandle *h = fh_new(L);
  h->fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  /* the message names the file asked for: the temporary is ours, not the user's */
  if (h->fd < 0) return fail(L, "cannot write %s (%s)", path, strerror(errno));
  int ok = 1;
  for (size_t done = 0; ok && done < len;) {
    ssize_t w = write(h->fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = 0;
    else done += (size_t)w;
  }
  if (close(h->fd) != 0) ok = 0;
  h->fd = -1;
  if (ok && rename(tmp, path) == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  int e = errno;
  unlink(tmp);
  return fail(L, "cannot write %s (%s)", path, strerror(e));
}

/* Whether the temporary name (after "<base>.tmp.") names a process that is gone. */
static int of_dead_process(const char *rest) {
  char *end;
  long pid = strtol(rest, &end, 10);
  if (end == rest || *end != '.') return 0; /* not one of ours */
  return pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

/* files.sweep(path) -> n: removes path.tmp.<pid>.* left by processes that no longer exist (a
 * save killed between writing and renaming), which would otherwise stay forever. */
static int files_sweep(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *slash = strrchr(path, '/');
  const char *dir = ".";
  if (slash) dir = lua_pushlstring(L, path, (size_t)(slash - path + (slash == path)));
  const char *prefix = lua_pushfstring(L, "%s.tmp.", slash ? slash + 1 : path);
  size_t plen = strlen(prefix);
  int removed = 0;
  DIR *d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      if (strncmp(e->d_name, prefix, plen) != 0 || !of_dead_process(e->d_name + plen)) continue;
      if (unlinkat(dirfd(d), e->d_name, 0) == 0) removed++;
    }
    closedir(d);
  }
  lua_pushinteger(L, removed);
  return 1;
}

/* files.private_dir(dir) -> true | nil, why: makes dir (0700) if needed and checks that it is
 * the user's own and that no one else can write to it (paths_check_private says how to fix). */
static int files_private_dir(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  char why[4400];
  if (paths_mkdirs(dir) != 0)
    return fail(L, "cannot make the folder %s (%s)", dir, strerror(errno));
  if (paths_check_private(dir, why, sizeof why) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* files.mkdtemp([prefix]) -> path | nil, why: a fresh folder of this user's alone, made by
 * mkdtemp(3) (mode 0700, a name no one can guess or take first) in $TMPDIR, else /tmp, and
 * checked after the fact: a folder, not a link, owned by this user, mode 0700. The grader and
 * lesson verification make every folder of theirs this way; one made by name (os.tmpname, then
 * mkdir) could be made first by another account and its files swapped. */
static int files_mkdtemp(lua_State *L) {
  const char *prefix = luaL_optstring(L, 1, "cudalab");
  luaL_argcheck(L, *prefix && !strchr(prefix, '/') && strlen(prefix) <= 64, 1,
                "the prefix must be a plain name (no '/') of at most 64 bytes");
  const char *base = getenv("TMPDIR");
  if (!base || base[0] != '/') base = "/tmp";
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s-XXXXXX", base, prefix) >= (int)sizeof path)
    return fail(L, "cannot make a folder in %s (%s)", base, "the path is too long");
  if (!mkdtemp(path)) return fail(L, "cannot make a folder in %s (%s)", base, strerror(errno));
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 0777) != 0700) {
    rmdir(path);
    return fail(L, "the new folder %s is not this user's private folder (%s)", path,
                "its owner or mode changed as it was made");
  }
  lua_pushstring(L, path);
  return 1;
}

/* files.chown(path, uid [, gid]) -> true | nil, why: gives path (never a link's target) to
 * uid and gid (-1, the default, keeps the group).
 * The grader, as root, hands each learner's private folder to the learner's own account. */
static int files_chown(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer uid = luaL_checkinteger(L, 2);
  lua_Integer gid = luaL_optinteger(L, 3, -1);
  luaL_argcheck(L, uid >= 0 && uid < 0xFFFFFFFFLL, 2, "a user id from 0 to 4294967294");
  luaL_argcheck(L, gid >= -1 && gid < 0xFFFFFFFFLL, 3, "a group id from 0 to 4294967294, or -1");
  if (fchownat(AT_FDCWD, path, (uid_t)uid, gid < 0 ? (gid_t)-1 : (gid_t)gid,
               AT_SYMLINK_NOFOLLOW) != 0)
    return fail(L, "cannot give %s to its new owner (%s)", path, strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

/* files.mkdir(path [, mode]) -> true | nil, why: makes one folder (never an existing one: a
 * folder someone made first is refused, EEXIST) with mode (default 0700; the umask applies). */
static int files_mkdir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer mode = luaL_optinteger(L, 2, 0700);
  luaL_argcheck(L, mode >= 0 && mode <= 07777, 2, "a mode from 0 to 07777");
  if (mkdir(path, (mode_t)mode) != 0)
    return fail(L, "cannot make the folder %s (%s)", path, strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

/* files.chmod(path, mode) -> true | nil, why: sets a folder's or file's mode (no umask); a
 * link is refused rather than followed. */
static int files_chmod(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer mode = luaL_checkinteger(L, 2);
  luaL_argcheck(L, mode >= 0 && mode <= 07777, 2, "a mode from 0 to 07777");
  struct stat st;
  if (lstat(path, &st) != 0) return fail(L, "cannot change the mode of %s (%s)", path,
                                         strerror(errno));
  if (S_ISLNK(st.st_mode)) return fail(L, "cannot change the mode of %s (%s)", path,
                                       "it is a symbolic link");
  if (chmod(path, (mode_t)mode) != 0)
    return fail(L, "cannot change the mode of %s (%s)", path, strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

/* A folder being listed: closed by files.list itself, or by __gc if an error (out of memory
 * while the names are pushed) leaves the call half-way. */
typedef struct dhandle {
  DIR *d;
} dhandle;

static int dh_close(lua_State *L) {
  dhandle *h = luaL_checkudata(L, 1, DHANDLE);
  if (h->d) closedir(h->d);
  h->d = NULL;
  return 0;
}

/* files.list(dir) -> {name, ...} | nil, why, errno: the names in a folder, "." and ".." left
 * out, in no particular order. A folder that is a symbolic link is refused rather than followed;
 * errno lets a caller tell a folder not made yet (ENOENT, 2) from one it cannot use. */
static int files_list(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  dhandle *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->d = NULL;
  luaL_setmetatable(L, DHANDLE);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && !(h->d = fdopendir(fd))) {
    int e = errno;
    close(fd);
    errno = e;
  }
  if (!h->d) {
    int e = errno;
    struct stat st; /* a link gives ELOOP, or ENOTDIR where O_DIRECTORY is judged first */
    int link = e == ELOOP || (e == ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode));
    fail(L, "cannot list %s (%s)", dir, link ? "it is a symbolic link" : strerror(e));
    lua_pushinteger(L, e);
    return 3;
  }
  lua_newtable(L);
  lua_Integer n = 0;
  for (struct dirent *e; (e = readdir(h->d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    lua_pushstring(L, e->d_name);
    lua_rawseti(L, -2, ++n);
  }
  closedir(h->d);
  h->d = NULL;
  return 1;
}

int luaopen_cudalab_files(lua_State *L) {
  static const luaL_Reg handle[] = {{"release", fh_release}, {"__gc", fh_release},
                                    {"__close", fh_release}, {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"read", files_read}, {"lock", files_lock},
                                   {"write_atomic", files_write_atomic}, {"sweep", files_sweep},
                                   {"private_dir", files_private_dir}, {"mkdtemp", files_mkdtemp},
                                   {"chown", files_chown}, {"mkdir", files_mkdir},
                                   {"chmod", files_chmod}, {"list", files_list},
                                   {NULL, NULL}};
  if (luaL_newmetatable(L, FHANDLE)) {
    luaL_setfuncs(L, handle, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, DHANDLE)) {
    lua_pushcfunction(L, dh_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
