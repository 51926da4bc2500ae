/* classdir.c: the class folder's filesystem layer (classdir.h): making a class folder, opening
 * one as a learner, reading its course and lessons, and writing and reading the learners'
 * records in its drop box, on a shared Unix machine where the other accounts may be hostile.
 *
 * Design stance:
 *  - Every file is the attacker's until the descriptor actually read says otherwise. Names are
 *    resolved from directory descriptors one component at a time with O_NOFOLLOW (a planted
 *    link is never followed), files are opened O_NONBLOCK (a planted FIFO cannot hang a read)
 *    and judged by fstat of that descriptor, with bounded sizes. A path checked earlier and
 *    opened later would let someone swap the file in between, so nothing is checked by path.
 *  - Who someone is comes from the kernel: the caller from getuid(), a file's author from its
 *    owner. A uid in a file's name, like a name in the environment, is only a claim to check.
 *  - The drop box (records/, mode 3773) leans on the kernel too: the sticky bit stops learners
 *    removing or replacing each other's files, the setgid bit gives every record the
 *    instructor's private group, and others have -wx so that no learner can list it.
 *  - No locks: each record is one account's own file, replaced by rename() of a temporary with
 *    a random name (O_EXCL makes two writers never share one), so a reader sees the old or the
 *    new record whole, on NFS as well. Locks on NFS are the less reliable part, and a killed
 *    REPL would leave one held. The price is a temporary left behind by a save killed between
 *    create and rename; classdir_records sweeps those (learners cannot list records/ to).
 *  - Nothing a learner plants can hide or block anyone else. The instructor's reader looks at
 *    every entry of records/ (a cap is what junk would use up), judges each by its name and
 *    lstat before opening anything, counts what is not a record instead of listing it, and
 *    reads one file per learner, the newest of theirs. A learner's record is named from their
 *    uid; when someone planted that name, the record moves to a name of its own (see "the
 *    names of records" below) and the planted file is reported, naming who planted it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "classdir.h"
#include "paths.h"

#define RECORD_SLOTS 64               /* <uid>.json, then <uid>.1.json .. <uid>.63.json */
#define RECORD_TAG_MAX 32             /* hex digits of the k in <uid>.<k>.json */
#define PLACE_TRIES 4                 /* renames of a finished record, each onto a fresh name */
#define LESSON_FILES_MAX 1000         /* lesson files read from one folder */
#define PLANTED_LISTED 1000           /* planted files listed one by one; the rest are counted */
#define RECORDS_TOTAL_MAX ((size_t)256 << 20) /* bytes of records read by one classdir_records */
#define TEMP_DEAD_AGE 60              /* a dead process' temporary is removed after a minute ... */
#define TEMP_OLD_AGE (24 * 3600)      /* ... and anyone's after a day: saves take milliseconds */
#define RECORDS_MODE 03773            /* setgid, sticky, rwxrwx-wx */
#define FIRST_PERSON_UID 1000         /* login.defs' UID_MIN: below it, system accounts */
#define NOBODY_UID 65534

static void say(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t len, const char *fmt, ...) {
  if (!msg || len == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
}

void classdir_user_name(uid_t uid, char *out, size_t len) {
  struct passwd *pw = getpwuid(uid);
  if (pw && pw->pw_name) say(out, len, "%s", pw->pw_name);
  else say(out, len, "uid %lu", (unsigned long)uid);
}

void classdir_group_name(gid_t gid, char *out, size_t len) {
  struct group *gr = getgrgid(gid);
  if (gr && gr->gr_name) say(out, len, "%s", gr->gr_name);
  else say(out, len, "gid %lu", (unsigned long)gid);
}

/* "uid 1002 (ben)", or "uid 1002" for an account without a name. */
static void who(uid_t uid, char *out, size_t len) {
  struct passwd *pw = getpwuid(uid);
  if (pw && pw->pw_name) say(out, len, "uid %lu (%s)", (unsigned long)uid, pw->pw_name);
  else say(out, len, "uid %lu", (unsigned long)uid);
}

/* "64 KiB", "8 MiB": the limits, as messages give them. */
static void size_text(size_t n, char *out, size_t len) {
  if (n % ((size_t)1 << 20) == 0) say(out, len, "%zu MiB", n >> 20);
  else say(out, len, "%zu KiB", n >> 10);
}

/* Copies path without its trailing slashes (a trailing slash would make the kernel follow a
 * link that O_NOFOLLOW should refuse); "/" stays "/". -1 when it is empty or too long. */
static int strip_path(const char *path, char *out, size_t len) {
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--;
  if (n == 0 || n >= len) return -1;
  memcpy(out, path, n);
  out[n] = '\0';
  return 0;
}

void classdir_list_free(classdir_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i].text);
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

/* A new zeroed entry named name at the end of l, or NULL when memory runs out. */
static classdir_file *list_add(classdir_list *l, const char *name) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    classdir_file *v = realloc(l->v, cap * sizeof *v);
    if (!v) return NULL;
    l->v = v;
    l->cap = cap;
  }
  classdir_file *f = &l->v[l->n++];
  memset(f, 0, sizeof *f);
  say(f->name, sizeof f->name, "%s", name);
  return f;
}

static int write_all(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

/* Reads fd to its end into *text (malloc'd, NUL-terminated) and *len. size (fstat's) is only a
 * hint: the file may grow while read, so at most max + 1 bytes are read and more than max fails
 * with EFBIG. -1 with errno on failure, *text untouched. */
static int read_all(int fd, size_t max, off_t size, char **text, size_t *len) {
  size_t cap = (size >= 0 && (uintmax_t)size <= max ? (size_t)size : max) + 1;
  char *buf = malloc(cap + 1), *grown;
  size_t got = 0;
  if (!buf) return -1;
  for (;;) {
    if (got == cap) {
      if (got > max) break;
      size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
      if (!(grown = realloc(buf, ncap + 1))) goto fail;
      buf = grown;
      cap = ncap;
    }
    ssize_t n = read(fd, buf + got, cap - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) goto fail;
    if (n == 0) break;
    got += (size_t)n;
  }
  if (got > max) {
    free(buf);
    errno = EFBIG;
    return -1;
  }
  buf[got] = '\0';
  *text = buf;
  *len = got;
  return 0;
fail:;
  int e = errno;
  free(buf);
  errno = e;
  return -1;
}

/* Opens name in the folder at for reading, without following a link or blocking on a FIFO, and
 * checks that what was opened is a regular file of at most max bytes, the very one lstat saw
 * (a device or FIFO is refused before open() can touch it). The descriptor with its status in
 * *st, or -1 with a sentence about shown (the name as the reader knows it) and errno ENOENT
 * when it does not exist. */
static int open_regular(int at, const char *name, const char *shown, size_t max, struct stat *st,
                        char *msg, size_t msglen) {
  struct stat lst;
  if (fstatat(at, name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
    int e = errno;
    if (e == ENOENT) say(msg, msglen, "%s does not exist", shown);
    else say(msg, msglen, "%s cannot be read (%s)", shown, strerror(e));
    errno = e;
    return -1;
  }
  if (S_ISLNK(lst.st_mode)) {
    say(msg, msglen, "%s is a symbolic link, which is never followed inside a class folder; the "
        "instructor should put the file itself there", shown);
    errno = ELOOP;
    return -1;
  }
  if (!S_ISREG(lst.st_mode)) {
    say(msg, msglen, "%s is not a regular file (a FIFO, a device or a folder?)", shown);
    errno = EINVAL;
    return -1;
  }
  int fd = openat(at, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == EACCES) say(msg, msglen, "%s cannot be read by you (permission denied)", shown);
    else say(msg, msglen, "%s cannot be read (%s)", shown, strerror(e));
    errno = e;
    return -1;
  }
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_dev != lst.st_dev ||
      st->st_ino != lst.st_ino) {
    close(fd);
    say(msg, msglen, "%s was replaced while it was being opened; try again", shown);
    errno = EAGAIN;
    return -1;
  }
  if ((uintmax_t)st->st_size > max) {
    char lim[32];
    size_text(max, lim, sizeof lim);
    close(fd);
    say(msg, msglen, "%s is larger than %s (%jd bytes)", shown, lim, (intmax_t)st->st_size);
    errno = EFBIG;
    return -1;
  }
  return fd;
}

/* Whether st (of shown) may be taken as the instructor's: owned by DIR's owner or root, and
 * writable by no one else. 0, or -1 with what is wrong and the fix. */
static int check_trusted(const classdir *cd, const struct stat *st, const char *shown, char *msg,
                         size_t msglen) {
  if (st->st_uid != cd->owner && st->st_uid != 0) {
    char owner[160], teacher[160];
    who(st->st_uid, owner, sizeof owner);
    who(cd->owner, teacher, sizeof teacher);
    say(msg, msglen, "%s belongs to %s, not to the class's instructor (%s) or root, so it is not "
        "part of the class; the instructor should remove it", shown, owner, teacher);
    return -1;
  }
  if (st->st_mode & 022) {
    say(msg, msglen, "%s can be written by %s (mode %04o), so anyone could change the class; the "
        "instructor should run: chmod go-w %s", shown,
        (st->st_mode & 002) ? "anyone" : "its group", (unsigned)(st->st_mode & 07777), shown);
    return -1;
  }
  return 0;
}

/* Reads name in the folder at, a file of the instructor's (open_regular, check_trusted). */
static int read_trusted(const classdir *cd, int at, const char *name, const char *shown,
                        size_t max, char **text, size_t *len, char *msg, size_t msglen) {
  struct stat st;
  int fd = open_regular(at, name, shown, max, &st, msg, msglen);
  if (fd < 0) return -1;
  int rc = check_trusted(cd, &st, shown, msg, msglen);
  if (rc == 0 && read_all(fd, max, st.st_size, text, len) != 0) {
    if (errno == EFBIG) say(msg, msglen, "%s grew past its size limit while it was read", shown);
    else say(msg, msglen, "%s cannot be read (%s)", shown, strerror(errno));
    rc = -1;
  }
  close(fd);
  return rc;
}

/* ---- init ---- */

/* Whether the calling process may use group g (it is among its groups). */
static int in_my_groups(gid_t g) {
  if (getegid() == g || getgid() == g) return 1;
  int n = getgroups(0, NULL);
  if (n <= 0) return 0;
  gid_t *v = malloc((size_t)n * sizeof *v);
  int found = 0;
  if (v && (n = getgroups(n, v)) > 0)
    for (int i = 0; i < n && !found; i++) found = v[i] == g;
  free(v);
  return found;
}

/* Appends "sep item" to out (len bytes), or nothing when it would not fit whole. */
static void add_item(char *out, size_t len, const char *sep, const char *item) {
  size_t used = strlen(out);
  if (used + strlen(sep) + strlen(item) + 1 > len) return;
  say(out + used, len - used, "%s%s", used ? sep : "", item);
}

/* Who group_others is looking for, and what it found so far. */
typedef struct others {
  gid_t gid;          /* the group */
  char gname[128];    /* its name, for the commands */
  uid_t skip1, skip2; /* the accounts that do not count (the instructor, the caller) */
  int people_only;    /* primary-group accounts count only from FIRST_PERSON_UID on */
  int n;              /* the accounts found */
  char *who, *fix;    /* their names, and the commands that fix it (fix may be NULL) */
  size_t wlen, flen;  /* the sizes of who and fix */
} others;

static void found_other(others *o, const char *name, const char *cmd) {
  o->n++;
  add_item(o->who, o->wlen, ", ", name);
  if (o->fix) add_item(o->fix, o->flen, " && ", cmd);
}

/* The listed members of the group. They are copied first: getpwnam, asked of each, may reuse
 * the storage getgrgid answered in. */
static void other_members(others *o) {
  struct group *gr = getgrgid(o->gid);
  size_t nmem = 0;
  char **mem = NULL, cmd[400];
  if (gr && gr->gr_mem) {
    while (gr->gr_mem[nmem]) nmem++;
    mem = calloc(nmem + 1, sizeof *mem);
    for (size_t i = 0; mem && i < nmem; i++) mem[i] = strdup(gr->gr_mem[i]);
  }
  for (size_t i = 0; mem && i < nmem; i++) {
    struct passwd *pw = mem[i] ? getpwnam(mem[i]) : NULL;
    if (!mem[i] || (pw && (pw->pw_uid == o->skip1 || pw->pw_uid == o->skip2))) continue;
    say(cmd, sizeof cmd, "gpasswd -d %s %s", mem[i], o->gname);
    found_other(o, mem[i], cmd);
  }
  for (size_t i = 0; mem && i < nmem; i++) free(mem[i]);
  free(mem);
}

/* The accounts whose primary group it is. */
static void other_primaries(others *o) {
  char cmd[400];
  setpwent();
  for (struct passwd *pw; (pw = getpwent());) {
    uid_t u = pw->pw_uid;
    if (u == o->skip1 || u == o->skip2 || pw->pw_gid != o->gid ||
        (o->people_only && (u < FIRST_PERSON_UID || u == NOBODY_UID)))
      continue;
    say(cmd, sizeof cmd, "usermod -g GROUP %s (GROUP being a group of %s's own)", pw->pw_name,
        pw->pw_name);
    found_other(o, pw->pw_name, cmd);
  }
  endpwent();
}

/* The accounts other than skip1 and skip2 that have gid as their primary group or are listed as
 * members of it: how many, their names in who ("ben, carl") and, when fix is not NULL, the
 * commands that take them out of it. With people_only, an account below FIRST_PERSON_UID (or
 * nobody) counts only when listed as a member: Debian gives sync, _apt and nobody the primary
 * group nogroup, and they are no learner. Only what NSS enumerates is seen (a directory service
 * may list no accounts), which is the best a program can do; messages say why a private group
 * matters. */
static int group_others(gid_t gid, uid_t skip1, uid_t skip2, int people_only, char *who,
                        size_t wlen, char *fix, size_t flen) {
  others o = {.gid = gid, .skip1 = skip1, .skip2 = skip2, .people_only = people_only,
              .who = who, .wlen = wlen, .fix = fix, .flen = flen};
  who[0] = '\0';
  if (fix) fix[0] = '\0';
  classdir_group_name(gid, o.gname, sizeof o.gname);
  other_members(&o);
  other_primaries(&o);
  return o.n;
}

/* Who makes the class and with which groups: the caller's uid and name, the reader group (their
 * primary group, which must be theirs alone) and the class's group (the reader group when no
 * group is given). 0, or -1 with why. */
typedef struct init_who {
  uid_t me;         /* the instructor */
  char name[128];   /* their account's name */
  gid_t reader;     /* their primary group: records/'s group */
  gid_t group;      /* DIR's group: the named group, else the reader group */
  int restricted;   /* a group was named: DIR is 0750, class.lua 0640 */
} init_who;

static int init_identity(const char *group, init_who *w, char *msg, size_t msglen) {
  w->me = getuid();
  struct passwd *pw = getpwuid(w->me);
  w->reader = pw ? pw->pw_gid : getgid();
  classdir_user_name(w->me, w->name, sizeof w->name);
  w->group = w->reader;
  w->restricted = group != NULL;
  if (group) {
    struct group *gr = getgrnam(group);
    if (!gr) {
      say(msg, msglen, "there is no group named '%s' (see getent group; an administrator makes "
          "one with: groupadd %s)", group, group);
      return -1;
    }
    w->group = gr->gr_gid;
    if (w->me != 0 && !in_my_groups(w->group)) {
      say(msg, msglen, "you (%s) are not a member of the group %s, so the class cannot be given "
          "to it; an administrator can add you with: usermod -aG %s %s (then log in again)",
          w->name, group, group, w->name);
      return -1;
    }
  }
  char other[512], gname[128];
  int n = group_others(w->reader, w->me, w->me, 0, other, sizeof other, NULL, 0);
  if (n > 0) {
    classdir_group_name(w->reader, gname, sizeof gname);
    say(msg, msglen, "the records would be readable by your primary group %s (gid %lu), but %s "
        "%s in it too, so learners could read each other's records; your account needs a "
        "group of its own (an administrator can run: groupadd %s_class && usermod -g %s_class "
        "%s, or create accounts with USERGROUPS_ENAB yes in /etc/login.defs)",
        gname, (unsigned long)w->reader, other, n == 1 ? "is" : "are", w->name, w->name,
        w->name);
    return -1;
  }
  return 0;
}

/* Opens the folder path that init fills: made new (0700 while it is filled), or an existing
 * empty folder of the caller's. The descriptor, *made when init made it, or -1 with why. */
static int init_open_dir(const char *path, uid_t me, int *made, char *msg, size_t msglen) {
  *made = mkdir(path, 0700) == 0;
  if (!*made && errno != EEXIST) {
    say(msg, msglen, "cannot make the folder %s (%s)", path, strerror(errno));
    return -1;
  }
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP || e == ENOTDIR)
      say(msg, msglen, "%s exists and is not a folder (a symbolic link or a file?); give init a "
          "new folder's path", path);
    else say(msg, msglen, "cannot open the folder %s (%s)", path, strerror(e));
    return -1;
  }
  struct stat st;
  char owner[160];
  if (fstat(fd, &st) != 0) {
    say(msg, msglen, "cannot read the folder %s (%s)", path, strerror(errno));
    close(fd);
    return -1;
  }
  if (st.st_uid != me) {
    who(st.st_uid, owner, sizeof owner);
    say(msg, msglen, "%s exists and belongs to %s; init makes a class in a new folder, or in an "
        "empty folder of your own", path, owner);
    close(fd);
    return -1;
  }
  if (!*made) {
    int dup_fd = dup(fd), empty = 1;
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
      if (dup_fd >= 0) close(dup_fd);
      empty = 0;
    } else {
      for (struct dirent *e; empty && (e = readdir(d));)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
      closedir(d);
    }
    if (!empty) {
      say(msg, msglen, "%s exists and is not empty; init makes a class in a new folder, or in "
          "an empty one", path);
      close(fd);
      return -1;
    }
  }
  if (fchmod(fd, 0700) != 0) {
    say(msg, msglen, "cannot change the mode of %s (%s)", path, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

/* Makes the file name in the folder at, holding data, with group gid and mode: created 0600 and
 * given its mode by fchmod once its content is there, so the umask plays no part. */
static int make_file_at(int at, const char *name, const char *data, size_t len, gid_t gid,
                        mode_t mode) {
  int fd = openat(at, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  int ok = write_all(fd, data, len) == 0 && fchown(fd, (uid_t)-1, gid) == 0 &&
           fchmod(fd, mode) == 0 && fsync(fd) == 0;
  int e = errno;
  if (close(fd) != 0 && ok) return -1;
  errno = e;
  return ok ? 0 : -1;
}

/* Makes the folder name in at (or, with name NULL, sets up at itself) with group gid and mode,
 * and checks the kernel kept them: the setgid bit is silently dropped for a group the caller is
 * not in, and NFS may squash an owner. */
static int make_dir_at(int at, const char *name, gid_t gid, mode_t mode) {
  if (name && mkdirat(at, name, 0700) != 0) return -1;
  int fd = name ? openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(at);
  if (fd < 0) return -1;
  struct stat st;
  int ok = fchown(fd, (uid_t)-1, gid) == 0 && fchmod(fd, mode) == 0 && fstat(fd, &st) == 0;
  int e = errno;
  close(fd);
  if (ok && (st.st_gid != gid || (st.st_mode & 07777) != mode)) {
    e = EPERM;
    ok = 0;
  }
  errno = e;
  return ok ? 0 : -1;
}

/* Removes what a failed init made in at (and the folder itself when made). */
static void init_undo(int at, const char *path, int made) {
  unlinkat(at, "class.lua", 0);
  unlinkat(at, "lessons", AT_REMOVEDIR);
  unlinkat(at, "records", AT_REMOVEDIR);
  if (made) rmdir(path);
}

int classdir_init(const char *dir, const char *group, const char *config, size_t len, char *msg,
                  size_t msglen) {
  char path[4096];
  init_who w;
  if (strip_path(dir, path, sizeof path) != 0) {
    say(msg, msglen, "the class folder's path is empty or too long");
    return -1;
  }
  if (len > CLASSDIR_CONFIG_MAX) {
    say(msg, msglen, "class.lua's text is larger than 64 KiB (%zu bytes)", len);
    return -1;
  }
  if (init_identity(group, &w, msg, msglen) != 0) return -1;
  int made, fd = init_open_dir(path, w.me, &made, msg, msglen);
  if (fd < 0) return -1;
  const char *step = "class.lua";
  int ok = make_file_at(fd, "class.lua", config, len, w.group, w.restricted ? 0640 : 0644) == 0;
  if (ok) step = "lessons";
  if (ok) ok = make_dir_at(fd, "lessons", w.group, w.restricted ? 0750 : 0755) == 0;
  if (ok) step = "records";
  if (ok) ok = make_dir_at(fd, "records", w.reader, RECORDS_MODE) == 0;
  if (ok) step = NULL;
  /* the folder opens up last, once everything in it is in place */
  if (ok) ok = make_dir_at(fd, NULL, w.group, w.restricted ? 0750 : 0755) == 0;
  if (ok) fsync(fd);
  else {
    int e = errno;
    if (step)
      say(msg, msglen, "cannot make %s/%s (%s)", path, step, strerror(e));
    else
      say(msg, msglen, "cannot give %s its group and mode (%s)", path, strerror(e));
    init_undo(fd, path, made);
  }
  close(fd);
  return ok ? 0 : -1;
}

/* ---- open ---- */

void classdir_clear(classdir *cd) {
  memset(cd, 0, sizeof *cd);
  cd->dir = cd->records = -1;
}

void classdir_close(classdir *cd) {
  if (cd->dir >= 0) close(cd->dir);
  if (cd->records >= 0) close(cd->records);
  cd->dir = cd->records = -1;
}

/* Opens DIR itself (links in the path the learner was given are followed: it is theirs to
 * choose) and checks that no one but its owner can change what is in it. */
static int open_top(classdir *cd, char *msg, size_t msglen) {
  const char *p = cd->path;
  cd->dir = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cd->dir < 0) {
    int e = errno;
    if (e == ENOENT) say(msg, msglen, "there is no class folder at %s (check the path)", p);
    else if (e == ENOTDIR) say(msg, msglen, "%s is not a folder", p);
    else if (e == EACCES)
      say(msg, msglen, "%s cannot be entered (permission denied): the class may be open to "
          "the members of its group only; ask the instructor to add you", p);
    else say(msg, msglen, "cannot open the class folder %s (%s)", p, strerror(e));
    return -1;
  }
  struct stat st;
  if (fstat(cd->dir, &st) != 0) {
    say(msg, msglen, "cannot read the class folder %s (%s)", p, strerror(errno));
    return -1;
  }
  if (st.st_mode & 022) {
    say(msg, msglen, "%s can be written by %s (mode %04o), so anyone could replace the class's "
        "files; the instructor should run: chmod go-w %s", p,
        (st.st_mode & 002) ? "anyone" : "its group", (unsigned)(st.st_mode & 07777), p);
    return -1;
  }
  cd->owner = st.st_uid;
  cd->gid = st.st_gid;
  cd->restricted = (st.st_mode & 07) == 0;
  return 0;
}

/* class.lua must be a readable regular file of the instructor's that only they can change. */
static int check_config(const classdir *cd, char *msg, size_t msglen) {
  char shown[4200];
  struct stat st;
  say(shown, sizeof shown, "%s/class.lua", cd->path);
  int fd = open_regular(cd->dir, "class.lua", shown, CLASSDIR_CONFIG_MAX, &st, msg, msglen);
  if (fd < 0) {
    char group[128];
    if (errno == ENOENT) {
      say(msg, msglen, "%s has no class.lua, so it is not a class folder (the instructor makes "
          "one with cudalab --class-init)", cd->path);
    } else if (errno == EACCES && cd->restricted) { /* O_PATH opened DIR without searching it */
      classdir_group_name(cd->gid, group, sizeof group);
      say(msg, msglen, "%s cannot be entered (permission denied): the class is open to the "
          "members of the group %s only; ask the instructor to add you", cd->path, group);
    }
    return -1;
  }
  close(fd);
  return check_trusted(cd, &st, shown, msg, msglen);
}

/* lessons/, when there is such a folder, must be one only the instructor can change. */
static int check_lessons(const classdir *cd, char *msg, size_t msglen) {
  char shown[4200];
  struct stat st;
  if (fstatat(cd->dir, "lessons", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
    return 0; /* none, or something classdir_lessons refuses with its reason when it is used */
  say(shown, sizeof shown, "%s/lessons", cd->path);
  return check_trusted(cd, &st, shown, msg, msglen);
}

/* records/ must be a real folder of the instructor's with the sticky bit, which stops learners
 * from removing or replacing each other's records. Opened O_PATH: learners may only search it. */
static int open_records(classdir *cd, char *msg, size_t msglen) {
  const char *p = cd->path;
  struct stat st;
  cd->records = openat(cd->dir, "records", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cd->records < 0) {
    int e = errno;
    if (e == ENOENT)
      say(msg, msglen, "%s/records is missing; the instructor should make the class folder "
          "again (cudalab --class-init)", p);
    else if (e == ENOTDIR || e == ELOOP)
      say(msg, msglen, "%s/records is not a folder (a symbolic link?); the instructor should "
          "remove it and make the class folder again", p);
    else say(msg, msglen, "cannot open %s/records (%s)", p, strerror(e));
    return -1;
  }
  if (fstat(cd->records, &st) != 0 || !S_ISDIR(st.st_mode)) {
    say(msg, msglen, "cannot read %s/records (%s)", p, strerror(errno));
    return -1;
  }
  if (st.st_uid != cd->owner) {
    char owner[160];
    who(st.st_uid, owner, sizeof owner);
    say(msg, msglen, "%s/records belongs to %s, not to the class's instructor; the instructor "
        "should make the class folder again", p, owner);
    return -1;
  }
  if (!(st.st_mode & S_ISVTX)) {
    say(msg, msglen, "%s/records has no sticky bit (mode %04o), so learners could remove or "
        "replace each other's records; the instructor should run: chmod +t %s/records", p,
        (unsigned)(st.st_mode & 07777), p);
    return -1;
  }
  cd->reader_gid = st.st_gid;
  cd->records_dev = st.st_dev;
  cd->records_ino = st.st_ino;
  return 0;
}

int classdir_open(classdir *cd, const char *dir, char *msg, size_t msglen) {
  classdir_clear(cd);
  if (strip_path(dir, cd->path, sizeof cd->path) != 0) {
    say(msg, msglen, "the class folder's path is empty or too long");
    return -1;
  }
  if (open_top(cd, msg, msglen) != 0 || check_config(cd, msg, msglen) != 0 ||
      check_lessons(cd, msg, msglen) != 0 || open_records(cd, msg, msglen) != 0) {
    classdir_close(cd);
    return -1;
  }
  return 0;
}

static int closed(const classdir *cd, char *msg, size_t msglen) {
  if (cd->dir >= 0 && cd->records >= 0) return 0;
  say(msg, msglen, "the class folder is closed");
  return 1;
}

int classdir_read_config(const classdir *cd, char **text, size_t *len, char *msg,
                         size_t msglen) {
  char shown[4200];
  *text = NULL;
  *len = 0;
  if (closed(cd, msg, msglen)) return -1;
  say(shown, sizeof shown, "%s/class.lua", cd->path);
  return read_trusted(cd, cd->dir, "class.lua", shown, CLASSDIR_CONFIG_MAX, text, len, msg,
                      msglen);
}

/* ---- lessons ---- */

/* Whether s is a lesson file's name: two digits, '-', letters, digits, '_' or '-', ".md"
 * (the pattern ^%d%d%-[%w_%-]+%.md$, in the C locale). */
static int lesson_name(const char *s) {
  size_t n = strlen(s);
  if (n < 7 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2] != '-' ||
      strcmp(s + n - 3, ".md") != 0)
    return 0;
  for (size_t i = 3; i < n - 3; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

/* One step of a relative lesson path: the folder comp inside at, never through a link, which
 * must be the instructor's and unwritable by others. An O_PATH descriptor, or -1 with why. */
static int lesson_step(const classdir *cd, int at, const char *comp, const char *shown, char *msg,
                       size_t msglen) {
  struct stat st;
  int fd = openat(at, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) say(msg, msglen, "%s does not exist", shown);
    else if ((e == ENOTDIR || e == ELOOP) && fstatat(at, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
             S_ISLNK(st.st_mode))
      say(msg, msglen, "%s is a symbolic link, which is never followed inside a class folder "
          "(give lesson_dirs an absolute path to use another folder)", shown);
    else if (e == ENOTDIR) say(msg, msglen, "%s is not a folder", shown);
    else say(msg, msglen, "cannot open %s (%s)", shown, strerror(e));
    return -1;
  }
  if (fstat(fd, &st) != 0 || check_trusted(cd, &st, shown, msg, msglen) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Resolves a relative lesson path inside DIR, component by component: "." is skipped, ".."
 * and empty components are refused (they would leave DIR or hide a typo). The last folder is
 * opened for listing. The descriptor, with the path as the learner sees it in shown, or -1. */
static int lesson_dir_relative(const classdir *cd, const char *path, char *shown, size_t slen,
                               char *msg, size_t msglen) {
  int cur = openat(cd->dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  const char *p = path;
  say(shown, slen, "%s", cd->path);
  while (cur >= 0 && *p) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char comp[256];
    if (n == 0 || n >= sizeof comp || (n == 2 && p[0] == '.' && p[1] == '.')) {
      say(msg, msglen, "the lesson folder '%s' %s", path,
          n == 0 ? "has an empty component (a doubled or trailing '/')"
          : n >= sizeof comp ? "has a component that is too long"
          : "goes up with '..'; it is resolved inside the class folder");
      close(cur);
      return -1;
    }
    memcpy(comp, p, n);
    comp[n] = '\0';
    p += n + (end != NULL);
    if (end && !*p) { /* "lessons/" ends with an empty component */
      say(msg, msglen, "the lesson folder '%s' has an empty component (a doubled or trailing "
          "'/')", path);
      close(cur);
      return -1;
    }
    if (strcmp(comp, ".") == 0) continue;
    size_t used = strlen(shown);
    say(shown + used, slen - used, "/%s", comp);
    int next = lesson_step(cd, cur, comp, shown, msg, msglen);
    close(cur);
    cur = next;
  }
  if (cur < 0) {
    if (msg && !*msg) say(msg, msglen, "cannot open %s (%s)", shown, strerror(errno));
    return -1;
  }
  int fd = openat(cur, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) say(msg, msglen, "%s cannot be listed by you (%s)", shown, strerror(errno));
  close(cur);
  return fd;
}

/* An absolute lesson path is the instructor's to choose (it may lead through links, to a shared
 * folder of lessons); the folder it ends at is checked like any other lesson folder. */
static int lesson_dir_absolute(const classdir *cd, const char *path, char *shown, size_t slen,
                               char *msg, size_t msglen) {
  struct stat st;
  if (strip_path(path, shown, slen) != 0) {
    say(msg, msglen, "the lesson folder's path is too long");
    return -1;
  }
  int fd = open(shown, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) say(msg, msglen, "%s does not exist", shown);
    else say(msg, msglen, "%s cannot be listed by you (%s)", shown, strerror(e));
    return -1;
  }
  if (fstat(fd, &st) != 0 || check_trusted(cd, &st, shown, msg, msglen) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const classdir_file *)a)->name, ((const classdir_file *)b)->name);
}

/* Reads each lesson file listed in out from the folder at (shown): its text or its problem. */
static void read_lessons(const classdir *cd, int at, const char *shown, classdir_list *out) {
  char file[4500];
  for (size_t i = 0; i < out->n; i++) {
    classdir_file *f = &out->v[i];
    if (f->problem[0]) continue;
    say(file, sizeof file, "%s/%s", shown, f->name);
    if (read_trusted(cd, at, f->name, file, CLASSDIR_LESSON_MAX, &f->text, &f->len, f->problem,
                     sizeof f->problem) != 0) {
      f->text = NULL;
      if (!f->problem[0]) say(f->problem, sizeof f->problem, "%s cannot be read", file);
    }
  }
}

int classdir_lessons(const classdir *cd, const char *path, classdir_list *out, char *msg,
                     size_t msglen) {
  char shown[4200];
  if (msg && msglen) msg[0] = '\0';
  if (closed(cd, msg, msglen)) return -1;
  if (!*path) {
    say(msg, msglen, "the lesson folder's path is empty");
    return -1;
  }
  int fd = path[0] == '/' ? lesson_dir_absolute(cd, path, shown, sizeof shown, msg, msglen)
                          : lesson_dir_relative(cd, path, shown, sizeof shown, msg, msglen);
  if (fd < 0) return -1;
  DIR *d = fdopendir(fd);
  if (!d) {
    say(msg, msglen, "%s cannot be listed (%s)", shown, strerror(errno));
    close(fd);
    return -1;
  }
  size_t taken = 0, more = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (!lesson_name(e->d_name)) continue;
    if (taken == LESSON_FILES_MAX) {
      more++;
      continue;
    }
    if (!list_add(out, e->d_name)) {
      say(msg, msglen, "out of memory listing %s", shown);
      closedir(d);
      classdir_list_free(out);
      return -1;
    }
    taken++;
  }
  if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, by_name);
  read_lessons(cd, dirfd(d), shown, out);
  closedir(d);
  classdir_file *f;
  if (more && (f = list_add(out, "")))
    say(f->problem, sizeof f->problem, "%s holds more than %d lesson files; %zu were left out",
        shown, LESSON_FILES_MAX, more);
  return 0;
}

/* ---- records ---- */

/* Parses a temporary's name, ".<uid>.<pid>.<hex>.tmp": 1 with its uid and pid, else 0. */
static int temp_name(const char *s, unsigned long *uid, long *pid) {
  size_t n = strlen(s);
  if (n < 10 || s[0] != '.' || strcmp(s + n - 4, ".tmp") != 0) return 0;
  char *end;
  if (s[1] < '0' || s[1] > '9') return 0;
  *uid = strtoul(s + 1, &end, 10);
  if (*end != '.' || end[1] < '0' || end[1] > '9') return 0;
  *pid = strtol(end + 1, &end, 10);
  if (*end != '.') return 0;
  const char *h = end + 1;
  for (; *h && *h != '.'; h++)
    if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'))) return 0;
  return h > end + 1 && strcmp(h, ".tmp") == 0;
}

/* Whether process pid is gone (on this machine: a temporary may come from another NFS client,
 * which is why its age counts too). */
static int process_gone(long pid) {
  return pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

/* Removes the temporary name in the listed folder at when a killed save left it: the caller's
 * own once its process is gone (and a minute has passed), anyone's after a day. The folder's
 * owner (the instructor) may remove anyone's file in a sticky folder; for others the kernel
 * refuses what is not theirs, which is right. */
static void sweep_temp(int at, const char *name, uid_t me, time_t now) {
  unsigned long uid;
  long pid;
  struct stat st;
  if (!temp_name(name, &uid, &pid) || fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  double age = difftime(now, st.st_mtime);
  int mine = st.st_uid == me && uid == (unsigned long)me;
  if ((mine && age > TEMP_DEAD_AGE && process_gone(pid)) || age > TEMP_OLD_AGE)
    unlinkat(at, name, 0);
}

/* The caller's own leftovers, when the caller can list records/ (the instructor can; learners
 * cannot, and theirs wait for the instructor's classdir_records). */
static void sweep_own(const classdir *cd, uid_t me) {
  int rd = openat(cd->records, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = rd >= 0 ? fdopendir(rd) : NULL;
  if (!d) {
    if (rd >= 0) close(rd);
    return;
  }
  time_t now = time(NULL);
  char prefix[32];
  say(prefix, sizeof prefix, ".%lu.", (unsigned long)me);
  for (struct dirent *e; (e = readdir(d));)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) sweep_temp(dirfd(d), e->d_name, me, now);
  closedir(d);
}

/* Eight random bytes: getrandom, or (when it cannot answer) the clock mixed with a counter. */
static unsigned long long random64(void) {
  static unsigned long long counter;
  unsigned long long r;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
    r = ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)clock() ^ ++counter;
  return r;
}

/* Creates the temporary ".<uid>.<pid>.<random>.tmp" in records/: O_EXCL, so it is a new file
 * of the caller's and no one else's, with a name no one can guess to plant it first. */
static int make_temp(const classdir *cd, uid_t me, char *tmp, size_t len, char *msg,
                     size_t msglen) {
  for (int tries = 0; tries < 8; tries++) {
    say(tmp, len, ".%lu.%ld.%016llx.tmp", (unsigned long)me, (long)getpid(), random64());
    int fd = openat(cd->records, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
    if (fd >= 0) return fd;
    if (errno != EEXIST) break;
  }
  if (errno == EACCES)
    say(msg, msglen, "you cannot write in %s/records (permission denied); ask the instructor "
        "to run: chmod 3773 %s/records", cd->path, cd->path);
  else say(msg, msglen, "cannot write in %s/records (%s)", cd->path, strerror(errno));
  return -1;
}

/* Fills the temporary fd with text and makes it the record it will become: group-readable by the
 * instructor only. The group is checked before the mode opens it: were records/'s setgid bit
 * missing, the file would have the learner's own group, which others may share. */
static int fill_temp(const classdir *cd, int fd, const char *text, size_t len, char *msg,
                     size_t msglen) {
  struct stat st;
  if (write_all(fd, text, len) != 0 || fstat(fd, &st) != 0) {
    say(msg, msglen, "cannot write your record in %s/records (%s)", cd->path, strerror(errno));
    return -1;
  }
  if (st.st_gid != cd->reader_gid) {
    char got[128], want[128];
    classdir_group_name(st.st_gid, got, sizeof got);
    classdir_group_name(cd->reader_gid, want, sizeof want);
    say(msg, msglen, "a new file in %s/records gets the group %s, not the folder's group %s "
        "(its setgid bit is missing?), so your record would not be private; the instructor "
        "should run: chmod g+s %s/records", cd->path, got, want, cd->path);
    return -1;
  }
  if (fchmod(fd, 0640) != 0 || fsync(fd) != 0) {
    say(msg, msglen, "cannot write your record in %s/records (%s)", cd->path, strerror(errno));
    return -1;
  }
  return 0;
}

/* ---- the names of records ----
 * A learner's record is <uid>.json, named from their uid alone. Anyone may plant a file of that
 * name first (records/ is a drop box), and the sticky bit then keeps the learner from replacing
 * it; the learner's record goes elsewhere and the planted file is reported to the instructor.
 * Elsewhere is the first free <uid>.<k>.json (k = 1..63, the names earlier versions used) and,
 * when those are planted too, <uid>.<16 random hex digits>.json, which cannot be planted
 * without guessing 64 bits. Since learners cannot list records/, the name is kept in their
 * state folder (one small file per class); the instructor, who can list it, takes every file
 * owned by U and named U.json or U.<hex>.json as U's, the newest winning. (Turned down: a fixed
 * list of fallback names, which one learner can fill, as happened with the 64 slots; a name
 * derived from a secret, which needs the same state folder and a keyed hash besides.) */

/* The uid a name claims: it starts with "<uid>." (digits, no leading zero). 0 with *uid and
 * *rest (what follows that dot), or -1. */
static int claimed_uid(const char *s, unsigned long *uid, const char **rest) {
  const char *p = s;
  if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '.')) return -1;
  unsigned long v = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (0xffffffffUL - 9) / 10) return -1;
    v = v * 10 + (unsigned long)(*p - '0');
  }
  if (*p != '.') return -1;
  *uid = v;
  *rest = p + 1;
  return 0;
}

/* Whether rest (a name after "<uid>.") is one the writer makes: "json", or "<k>.json" with k of
 * 1 to RECORD_TAG_MAX lower-case hex digits (the slots 1..63 and random names alike). */
static int record_rest(const char *rest) {
  if (strcmp(rest, "json") == 0) return 1;
  size_t n = 0;
  while ((rest[n] >= '0' && rest[n] <= '9') || (rest[n] >= 'a' && rest[n] <= 'f')) n++;
  return n >= 1 && n <= RECORD_TAG_MAX && strcmp(rest + n, ".json") == 0;
}

/* Whether name in records/ is a regular file of me's (by lstat: a link never is). */
static int is_mine(const classdir *cd, const char *name, uid_t me) {
  struct stat st;
  return fstatat(cd->records, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
         st.st_uid == me;
}

/* Whether nothing in records/ has that name. */
static int is_free(const classdir *cd, const char *name) {
  struct stat st;
  return fstatat(cd->records, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
}

/* The file in the caller's state folder that keeps their record's name in this class, named by
 * records/'s device and inode (whatever path led to the class). -1 without a usable state
 * folder (no HOME): a record under another name is then found again only in this session. */
static int saved_path(const classdir *cd, char *out, size_t len) {
  char dir[4096], why[512];
  if (paths_state_dir(dir, sizeof dir, why, sizeof why) != 0) return -1;
  say(out, len, "%s/class-record-%lx-%lx", dir, (unsigned long)cd->records_dev,
      (unsigned long)cd->records_ino);
  return 0;
}

/* The record name saved for me in this class: 0 with name when it is one of me's names, else
 * -1. The state folder is private (paths_state_dir checks it), but the name is checked all the
 * same: it decides which file the learner's record goes to. */
static int saved_name(const classdir *cd, uid_t me, char *name, size_t len) {
  char path[4200], buf[80];
  unsigned long uid;
  const char *rest;
  if (saved_path(cd, path, sizeof path) != 0) return -1;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  if (claimed_uid(buf, &uid, &rest) != 0 || uid != (unsigned long)me || !record_rest(rest))
    return -1;
  say(name, len, "%s", buf);
  return 0;
}

/* Keeps name as the caller's record's name in this class (a temporary renamed into place). A
 * failure only costs the next session its history, which then starts a record anew. */
static void save_name(const classdir *cd, const char *name) {
  char path[4200], tmp[4300];
  if (saved_path(cd, path, sizeof path) != 0) return;
  say(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  int ok = write_all(fd, name, strlen(name)) == 0 && write_all(fd, "\n", 1) == 0;
  if (close(fd) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

/* The caller's existing record: <uid>.json when it is theirs, else the name saved in their
 * state, else the first <uid>.<k>.json of theirs (as earlier versions wrote). 1 with its name,
 * or 0 when they have none yet. */
static int own_name(const classdir *cd, uid_t me, char *name, size_t len) {
  say(name, len, "%lu.json", (unsigned long)me);
  if (is_mine(cd, name, me)) return 1;
  if (saved_name(cd, me, name, len) == 0 && is_mine(cd, name, me)) return 1;
  for (int k = 1; k < RECORD_SLOTS; k++) {
    say(name, len, "%lu.%d.json", (unsigned long)me, k);
    if (is_mine(cd, name, me)) return 1;
  }
  return 0;
}

/* A name for the caller's first record: <uid>.json when free, else the first free slot, else
 * (or with fresh, after a planted name won a race) a random one. A name other than <uid>.json
 * is saved, so that the next session finds it. */
static void new_name(const classdir *cd, uid_t me, int fresh, char *name, size_t len) {
  if (!fresh) {
    say(name, len, "%lu.json", (unsigned long)me);
    if (is_free(cd, name)) return;
    for (int k = 1; k < RECORD_SLOTS; k++) {
      say(name, len, "%lu.%d.json", (unsigned long)me, k);
      if (is_free(cd, name)) {
        save_name(cd, name);
        return;
      }
    }
  }
  say(name, len, "%lu.%016llx.json", (unsigned long)me, random64());
  save_name(cd, name);
}

/* Whether rename() failed because something not the caller's has the name: the sticky bit
 * refuses to replace another account's file, and a folder or the like cannot be replaced. */
static int name_taken(int e) {
  return e == EPERM || e == EACCES || e == EISDIR || e == ENOTEMPTY || e == EEXIST ||
         e == ENOTDIR || e == EBUSY;
}

/* Puts the finished temporary in place as the caller's record: over their own record, or under
 * a new name. A file planted between choosing a name and the rename makes the rename fail (the
 * sticky bit); then a random name is taken, PLACE_TRIES times at most. 0, or -1 with why. */
static int place_temp(const classdir *cd, uid_t me, const char *tmp, char *msg, size_t msglen) {
  char name[64];
  for (int i = 0; i < PLACE_TRIES; i++) {
    if (!own_name(cd, me, name, sizeof name)) new_name(cd, me, i > 0, name, sizeof name);
    if (renameat(cd->records, tmp, cd->records, name) == 0) return 0;
    int e = errno;
    if (!name_taken(e)) {
      say(msg, msglen, "cannot put your record in place as %s/records/%s (%s)", cd->path, name,
          strerror(e));
      return -1;
    }
  }
  say(msg, msglen, "another account took every name tried for your record in %s/records as it "
      "was tried (%d times); try again, and tell the instructor", cd->path, PLACE_TRIES);
  return -1;
}

int classdir_readers(const classdir *cd, char *who, size_t wlen, char *fix, size_t flen) {
  return group_others(cd->reader_gid, cd->owner, getuid(), 1, who, wlen, fix, flen);
}

/* 0 when no account but the instructor and the caller can read the records; else -1 with
 * what the learner is told: their record is not written until the group is fixed. */
static int check_readers(const classdir *cd, char *msg, size_t msglen) {
  char who_[512], fix[1024], group[128];
  if (classdir_readers(cd, who_, sizeof who_, fix, sizeof fix) == 0) return 0;
  classdir_group_name(cd->reader_gid, group, sizeof group);
  say(msg, msglen, "your record would be readable by another account (%s, through the group %s "
      "that %s/records gives every record), so it is not written until that is fixed; tell the "
      "instructor, who can have an administrator run: %s", who_, group, cd->path, fix);
  return -1;
}

int classdir_write_record(const classdir *cd, const char *text, size_t len, char *msg,
                          size_t msglen) {
  char tmp[96];
  if (closed(cd, msg, msglen)) return -1;
  if (len > CLASSDIR_RECORD_MAX) {
    say(msg, msglen, "a record is at most 8 MiB (this one is %zu bytes)", len);
    return -1;
  }
  if (check_readers(cd, msg, msglen) != 0) return -1;
  uid_t me = getuid();
  sweep_own(cd, me);
  int fd = make_temp(cd, me, tmp, sizeof tmp, msg, msglen);
  if (fd < 0) return -1;
  int rc = fill_temp(cd, fd, text, len, msg, msglen);
  if (close(fd) != 0 && rc == 0) { /* NFS reports a failed write here */
    say(msg, msglen, "cannot write your record in %s/records (%s)", cd->path, strerror(errno));
    rc = -1;
  }
  if (rc == 0) rc = place_temp(cd, me, tmp, msg, msglen);
  if (rc != 0) unlinkat(cd->records, tmp, 0);
  return rc;
}

int classdir_read_own_record(const classdir *cd, char **text, size_t *len, char *msg,
                             size_t msglen) {
  char name[64], shown[4200];
  struct stat st;
  *text = NULL;
  *len = 0;
  if (closed(cd, msg, msglen)) return -1;
  uid_t me = getuid();
  if (!own_name(cd, me, name, sizeof name)) return 0;
  say(shown, sizeof shown, "%s/records/%s", cd->path, name);
  int fd = open_regular(cd->records, name, shown, CLASSDIR_RECORD_MAX, &st, msg, msglen);
  if (fd < 0) return -1;
  int rc = 1;
  if (st.st_uid != me) {
    say(msg, msglen, "%s was replaced while it was being opened; try again", shown);
    rc = -1;
  } else if (read_all(fd, CLASSDIR_RECORD_MAX, st.st_size, text, len) != 0) {
    say(msg, msglen, "cannot read %s (%s)", shown, strerror(errno));
    rc = -1;
  }
  close(fd);
  return rc;
}

/* ---- the instructor's view of records/ ---- */

/* A file that may be a learner's record, as listed: few bytes each, since a learner can make as
 * many as the disk holds. */
typedef struct candidate {
  uid_t uid;             /* its owner, whose uid its name starts with */
  struct timespec mtime; /* when it was written last: the newest of a uid's wins */
  char name[64];         /* its name (record_rest keeps it short) */
} candidate;

/* One pass over records/: the candidates, the list being filled and the counts. */
typedef struct scan {
  candidate *v;          /* the candidates (malloc'd) */
  size_t n, cap;         /* how many, and room for */
  classdir_list *out;    /* the caller's list: planted files, then the chosen records */
  classdir_skips *skips; /* what was passed over */
} scan;

/* Counts an entry passed over in *kind, and notes its owner (the first four met). */
static void skip(classdir_skips *k, size_t *kind, uid_t owner) {
  (*kind)++;
  k->total++;
  for (size_t i = 0; i < k->nowners; i++)
    if (k->owners[i] == owner) return;
  if (k->nowners < sizeof k->owners / sizeof *k->owners) k->owners[k->nowners++] = owner;
  else k->more_owners = 1;
}

/* Lists a file named as uid claimed's record but owned by another account (st): planted. Past
 * PLANTED_LISTED of them, only counted. 0, or -1 when memory runs out. */
static int add_planted(scan *sc, const char *name, const struct stat *st, unsigned long claimed) {
  if (sc->skips->planted > 0 || sc->out->n >= PLANTED_LISTED) {
    skip(sc->skips, &sc->skips->planted, st->st_uid);
    return 0;
  }
  classdir_file *f = list_add(sc->out, name);
  if (!f) return -1;
  char owner[160], named[160];
  who(st->st_uid, owner, sizeof owner);
  who((uid_t)claimed, named, sizeof named);
  f->uid = st->st_uid;
  f->planted = 1;
  f->claimed = (uid_t)claimed;
  if (S_ISLNK(st->st_mode))
    say(f->problem, sizeof f->problem, "a symbolic link made by %s: not followed (its name "
        "claims %s)", owner, named);
  else if (!S_ISREG(st->st_mode))
    say(f->problem, sizeof f->problem, "not a regular file (a FIFO, a device or a folder?) made "
        "by %s: ignored (its name claims %s)", owner, named);
  else say(f->problem, sizeof f->problem, "owned by %s, not %s: ignored", owner, named);
  return 0;
}

static int add_candidate(scan *sc, const char *name, const struct stat *st) {
  if (sc->n == sc->cap) {
    size_t cap = sc->cap ? sc->cap * 2 : 64;
    candidate *v = realloc(sc->v, cap * sizeof *v);
    if (!v) return -1;
    sc->v = v;
    sc->cap = cap;
  }
  candidate *c = &sc->v[sc->n++];
  c->uid = st->st_uid;
  c->mtime = st->st_mtim;
  say(c->name, sizeof c->name, "%s", name);
  return 0;
}

/* Judges the entry n of records/ (at) by its name and lstat alone, in this order: a temporary
 * (swept when dead), a name claiming another uid than its owner's (planted, whatever it is), a
 * link, folder or special file, an empty file, a name that is not a record's; what is left is
 * a candidate. 0, or -1 when memory runs out. */
static int scan_entry(scan *sc, int at, const char *n, uid_t me, time_t now) {
  unsigned long tuid, claimed;
  long tpid;
  const char *rest;
  struct stat st;
  classdir_skips *k = sc->skips;
  if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0) return 0;
  if (temp_name(n, &tuid, &tpid)) {
    sweep_temp(at, n, me, now);
    return 0;
  }
  if (fstatat(at, n, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0; /* gone since it was listed */
  int claims = claimed_uid(n, &claimed, &rest) == 0;
  if (claims && claimed != (unsigned long)st.st_uid) return add_planted(sc, n, &st, claimed);
  if (S_ISLNK(st.st_mode)) skip(k, &k->links, st.st_uid);
  else if (S_ISDIR(st.st_mode)) skip(k, &k->folders, st.st_uid);
  else if (!S_ISREG(st.st_mode)) skip(k, &k->special, st.st_uid);
  else if (st.st_size == 0) skip(k, &k->empty, st.st_uid);
  else if (!claims || !record_rest(rest)) skip(k, &k->names, st.st_uid);
  else return add_candidate(sc, n, &st);
  return 0;
}

/* Candidates by owner, the newest first (ties by name). */
static int by_newest(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->uid != y->uid) return x->uid < y->uid ? -1 : 1;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Lists each uid's newest candidate; the others are counted as older copies. 0 or -1. */
static int choose_newest(scan *sc) {
  if (sc->n > 1) qsort(sc->v, sc->n, sizeof *sc->v, by_newest);
  for (size_t i = 0; i < sc->n; i++) {
    if (i > 0 && sc->v[i].uid == sc->v[i - 1].uid) {
      sc->skips->older++;
      continue;
    }
    classdir_file *f = list_add(sc->out, sc->v[i].name);
    if (!f) return -1;
    f->uid = sc->v[i].uid;
  }
  return 0;
}

/* Reads the chosen record f of records/ (at): its text, or the problem that keeps it unread.
 * What lstat said while listing is checked again on the descriptor read. *total counts the
 * bytes read so far. */
static void read_record(int at, classdir_file *f, size_t *total) {
  struct stat lst, st;
  if (fstatat(at, f->name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
    say(f->problem, sizeof f->problem, "vanished while it was being read (%s)", strerror(errno));
  } else if (!S_ISREG(lst.st_mode) || lst.st_uid != f->uid) {
    say(f->problem, sizeof f->problem, "replaced while it was being read: ignored");
  } else if ((uintmax_t)lst.st_size > CLASSDIR_RECORD_MAX) {
    say(f->problem, sizeof f->problem, "larger than 8 MiB (%jd bytes): ignored",
        (intmax_t)lst.st_size);
  } else if (lst.st_mode & 002) {
    say(f->problem, sizeof f->problem, "writable by anyone (mode %04o), so anyone may have "
        "changed it: ignored", (unsigned)(lst.st_mode & 07777));
  } else if (*total + (size_t)lst.st_size > RECORDS_TOTAL_MAX) {
    say(f->problem, sizeof f->problem, "not read: the records before it already take 256 MiB");
  } else {
    int fd = openat(at, f->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      say(f->problem, sizeof f->problem, "unreadable (%s)", strerror(errno));
      return;
    }
    if (fstat(fd, &st) != 0 || st.st_dev != lst.st_dev || st.st_ino != lst.st_ino)
      say(f->problem, sizeof f->problem, "replaced while it was being read: ignored");
    else if (read_all(fd, CLASSDIR_RECORD_MAX, st.st_size, &f->text, &f->len) != 0)
      say(f->problem, sizeof f->problem, "unreadable (%s)",
          errno == EFBIG ? "it grew past 8 MiB" : strerror(errno));
    else *total += f->len;
    close(fd);
  }
}

static int by_owner(const void *a, const void *b) {
  const classdir_file *x = a, *y = b;
  if (x->uid != y->uid) return x->uid < y->uid ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* records/ opened for listing, or NULL with why (only the instructor may list it). */
static DIR *open_listing(const classdir *cd, char *msg, size_t msglen) {
  int rd = openat(cd->records, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = rd >= 0 ? fdopendir(rd) : NULL;
  if (d) return d;
  int e = errno;
  char name[128];
  if (rd >= 0) close(rd);
  classdir_user_name(getuid(), name, sizeof name);
  if (e == EACCES)
    say(msg, msglen, "only the class's instructor can read its records (%s/records cannot be "
        "listed by %s)", cd->path, name);
  else say(msg, msglen, "cannot list %s/records (%s)", cd->path, strerror(e));
  return NULL;
}

int classdir_records(const classdir *cd, classdir_list *out, classdir_skips *skips, char *msg,
                     size_t msglen) {
  memset(skips, 0, sizeof *skips);
  if (closed(cd, msg, msglen)) return -1;
  DIR *d = open_listing(cd, msg, msglen);
  if (!d) return -1;
  scan sc = {.out = out, .skips = skips};
  uid_t me = getuid();
  time_t now = time(NULL);
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d));)
    rc = scan_entry(&sc, dirfd(d), e->d_name, me, now);
  if (rc == 0) rc = choose_newest(&sc);
  free(sc.v);
  if (rc != 0) {
    say(msg, msglen, "out of memory listing %s/records", cd->path);
    closedir(d);
    classdir_list_free(out);
    return -1;
  }
  size_t total = 0;
  for (size_t i = 0; i < out->n; i++)
    if (!out->v[i].planted) read_record(dirfd(d), &out->v[i], &total);
  closedir(d);
  if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, by_owner);
  return 0;
}
