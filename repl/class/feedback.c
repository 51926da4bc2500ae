/* feedback.c: each learner's published results (feedback.h), DIR/feedback/<uid>.json.
 *
 * Design stance: no learner can write in feedback/ at all. It is the instructor's, mode 0711:
 * learners pass through it to their own file but can neither list it nor make a name in it, so
 * no link, FIFO or file a learner plants can be where a write lands (the hazard of writing into
 * a folder another account controls, which is what records/ is, is not taken on here). Each
 * file is written as a temporary with a random name (O_EXCL, O_NOFOLLOW), given its owner, mode
 * and ACL on the descriptor before its content is complete, and renamed into place: a reader
 * sees the old results or the new, and the new are never readable by anyone else, not even for
 * a moment. Who may read is said by the file itself: the instructor owns it and a POSIX ACL
 * names the one learner (the learner cannot change that, not owning it). Turned down: making
 * the file the learner's own, which needs root and lets them open it to others by chmod; it is
 * the fallback only where the filesystem has no ACLs and root publishes. The reader checks the
 * folder and the file again, by descriptor, before it believes them. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "feedback.h"

#define FOLDER "feedback"
#define FOLDER_MODE 0711
#define ACL_XATTR "system.posix_acl_access"
/* linux/posix_acl_xattr.h's layout, which glibc does not install */
#define ACL_VERSION 2
#define ACL_USER_OBJ 0x01
#define ACL_USER 0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_MASK 0x10
#define ACL_OTHER 0x20
#define ACL_UNDEFINED 0xffffffffu
#define ACL_ENTRIES 5

static void say(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t len, const char *fmt, ...) {
  if (!msg || len == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
}

static int write_all(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* The extended attribute of the ACL u::rw-, u:uid:r--, g::---, m::r--, o::--- in the kernel's
 * little-endian layout (a 4-byte version, then 8-byte entries sorted by tag), into buf. */
static size_t acl_for(uid_t uid, unsigned char *buf) {
  static const struct { unsigned tag, perm; int named; } e[ACL_ENTRIES] = {
      {ACL_USER_OBJ, 6, 0}, {ACL_USER, 4, 1}, {ACL_GROUP_OBJ, 0, 0}, {ACL_MASK, 4, 0},
      {ACL_OTHER, 0, 0}};
  uint32_t v = ACL_VERSION;
  for (int b = 0; b < 4; b++) buf[b] = (unsigned char)(v >> (8 * b));
  for (int i = 0; i < ACL_ENTRIES; i++) {
    unsigned char *p = buf + 4 + 8 * i;
    uint32_t id = e[i].named ? (uint32_t)uid : ACL_UNDEFINED;
    p[0] = (unsigned char)e[i].tag, p[1] = (unsigned char)(e[i].tag >> 8);
    p[2] = (unsigned char)e[i].perm, p[3] = 0;
    for (int b = 0; b < 4; b++) p[4 + b] = (unsigned char)(id >> (8 * b));
  }
  return 4 + 8 * ACL_ENTRIES;
}

/* feedback/, opened for writing in: made when missing, the instructor's (root hands it over),
 * mode 0711, checked by descriptor. Returns the descriptor or -1. */
static int open_folder_for_writing(const classdir *cd, char *msg, size_t msglen) {
  if (mkdirat(cd->dir, FOLDER, 0700) != 0 && errno != EEXIST) {
    say(msg, msglen, "cannot make %s/" FOLDER " (%s)", cd->path, strerror(errno));
    return -1;
  }
  int fd = openat(cd->dir, FOLDER, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    say(msg, msglen, "cannot open %s/" FOLDER " (%s); it must be a folder, not a link",
        cd->path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (getuid() == 0 && fstat(fd, &st) == 0 && st.st_uid == 0 && fchown(fd, cd->owner, -1) != 0) {
    say(msg, msglen, "cannot give %s/" FOLDER " to the class's owner (%s)", cd->path,
        strerror(errno));
    close(fd);
    return -1;
  }
  if (fchmod(fd, FOLDER_MODE) != 0 || fstat(fd, &st) != 0 || st.st_uid != cd->owner ||
      (st.st_mode & 07777) != FOLDER_MODE) {
    say(msg, msglen, "%s/" FOLDER " must be the class owner's folder, mode 711 (no one else "
        "may make a name in it); fix or remove it", cd->path);
    close(fd);
    return -1;
  }
  return fd;
}

/* A new temporary in the folder at, "<uid>.<random>.tmp", O_EXCL: the caller's alone. */
static int make_temp(int at, uid_t uid, char *name, size_t len) {
  for (int tries = 0; tries < 8; tries++) {
    unsigned long long r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
      r = ((unsigned long long)time(NULL) << 24) ^ (unsigned long long)clock() ^ (unsigned)tries;
    say(name, len, ".%lu.%016llx.tmp", (unsigned long)uid, r);
    int fd = openat(at, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/* Makes the open temporary fd readable by uid and the instructor alone, before it holds
 * anything: the ACL (read back to be sure the filesystem kept it), else, as root on a
 * filesystem without ACLs, uid's own file, mode 0400. */
static int make_private(const classdir *cd, int fd, uid_t uid, char *msg, size_t msglen) {
  unsigned char want[4 + 8 * ACL_ENTRIES], got[sizeof want + 8];
  size_t n = acl_for(uid, want);
  int root = getuid() == 0;
  if (root && fchown(fd, cd->owner, cd->reader_gid) != 0) {
    say(msg, msglen, "cannot give the results file to the class's owner (%s)", strerror(errno));
    return -1;
  }
  if (fchmod(fd, 0640) == 0 && fsetxattr(fd, ACL_XATTR, want, n, 0) == 0) {
    ssize_t k = fgetxattr(fd, ACL_XATTR, got, sizeof got);
    if (k == (ssize_t)n && memcmp(got, want, n) == 0) return 0;
    errno = EOPNOTSUPP;
  }
  int e = errno;
  if (root && (e == EOPNOTSUPP || e == ENOTSUP) && fchown(fd, uid, (gid_t)-1) == 0 &&
      fchmod(fd, 0400) == 0)
    return 0;
  if (e == EOPNOTSUPP || e == ENOTSUP)
    say(msg, msglen, "the filesystem of %s has no POSIX ACLs, so a file there cannot be made "
        "readable by one learner; publish as root (each file is then the learner's own)",
        cd->path);
  else say(msg, msglen, "cannot make the results file private to uid %lu (%s)",
           (unsigned long)uid, strerror(e));
  return -1;
}

int feedback_publish(const classdir *cd, uid_t uid, const char *text, size_t len, char *msg,
                     size_t msglen) {
  if (getuid() != 0 && getuid() != cd->owner) {
    say(msg, msglen, "only the class's owner (or root) can publish results in %s", cd->path);
    return -1;
  }
  if (len > FEEDBACK_MAX) {
    say(msg, msglen, "the results of uid %lu are larger than 4 MiB", (unsigned long)uid);
    return -1;
  }
  int dir = open_folder_for_writing(cd, msg, msglen);
  if (dir < 0) return -1;
  char tmp[64], final[32];
  say(final, sizeof final, "%lu.json", (unsigned long)uid);
  int fd = make_temp(dir, uid, tmp, sizeof tmp);
  if (fd < 0) {
    say(msg, msglen, "cannot write in %s/" FOLDER " (%s)", cd->path, strerror(errno));
    close(dir);
    return -1;
  }
  int ok = make_private(cd, fd, uid, msg, msglen) == 0;
  if (ok && (write_all(fd, text, len) != 0 || fsync(fd) != 0)) {
    say(msg, msglen, "cannot write %s/" FOLDER "/%s (%s)", cd->path, final, strerror(errno));
    ok = 0;
  }
  if (close(fd) != 0 && ok) {
    say(msg, msglen, "cannot write %s/" FOLDER "/%s (%s)", cd->path, final, strerror(errno));
    ok = 0;
  }
  if (ok && renameat(dir, tmp, dir, final) != 0) {
    say(msg, msglen, "cannot put %s/" FOLDER "/%s in place (%s)", cd->path, final,
        strerror(errno));
    ok = 0;
  }
  if (!ok) unlinkat(dir, tmp, 0);
  close(dir);
  return ok ? 0 : -1;
}

/* Reads at most FEEDBACK_MAX bytes of fd into a new buffer. */
static int read_all(int fd, size_t size, char **text, size_t *len) {
  char *buf = malloc(size + 1);
  if (!buf) return -1;
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      free(buf);
      return -1;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  buf[got] = '\0';
  *text = buf;
  *len = got;
  return 0;
}

int feedback_read(const classdir *cd, char **text, size_t *len, char *msg, size_t msglen) {
  *text = NULL;
  *len = 0;
  uid_t me = getuid();
  int dir = openat(cd->dir, FOLDER, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0 && errno == ENOENT) return 0;
  struct stat st;
  if (dir < 0 || fstat(dir, &st) != 0 || (st.st_uid != cd->owner && st.st_uid != 0) ||
      (st.st_mode & 022)) {
    say(msg, msglen, "%s/" FOLDER " is not the instructor's own folder; its results are not "
        "read", cd->path);
    if (dir >= 0) close(dir);
    return -1;
  }
  char name[32];
  say(name, sizeof name, "%lu.json", (unsigned long)me);
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  int e = errno;
  close(dir);
  if (fd < 0 && e == ENOENT) return 0;
  if (fd < 0) {
    say(msg, msglen, "cannot read your results in %s/" FOLDER " (%s); ask the instructor to "
        "publish them again", cd->path, strerror(e));
    return -1;
  }
  int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
           (st.st_uid == cd->owner || (st.st_uid == me && (st.st_mode & 077) == 0)) &&
           (st.st_mode & 022) == 0 && (size_t)st.st_size <= FEEDBACK_MAX;
  if (!ok) {
    say(msg, msglen, "%s/" FOLDER "/%s is not a results file the instructor published; it is "
        "not read", cd->path, name);
    close(fd);
    return -1;
  }
  int rc = read_all(fd, (size_t)st.st_size, text, len);
  close(fd);
  if (rc != 0) {
    say(msg, msglen, "cannot read your results (%s)", strerror(errno));
    return -1;
  }
  return 1;
}
