/* confine.c: the operating system's walls around one child process, for the grader's runs of
 * learners' work (bind_proc.c's become, limits, no_new_privs and landlock fields).
 *
 * Stance: the wall is put up from outside, by the parent's fork between fork and exec, before
 * the untrusted program has read a byte; a sandbox that the confined code would have to set up
 * itself was turned down, since it could be skipped. The work is split in two: what allocates
 * or may block on the system's databases (looking up an account, opening the Landlock paths,
 * asking the kernel's ABI) runs in the parent; what runs in the child is raw system calls only,
 * async-signal-safe and allocation-free, because a fork of a Lua engine may not call malloc.
 *
 * Landlock is spoken to by raw system calls with the constants and structs written out here, not
 * through liblandlock or the installed linux/landlock.h alone: that header is often older than
 * the kernel, and what the kernel offers is asked at run time (LANDLOCK_CREATE_RULESET_VERSION),
 * so that a ruleset handles every right the running kernel knows, and a right left unhandled
 * is never silently allowed by a newer kernel. Network rights (ABI 4) are not handled: the grader
 * confines files, processes and signals, and a job's network is left as it was. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "confine.h"

/* The kernel's ABI, written out for headers that predate it (linux/landlock.h). */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_EXECUTE (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_V1_ALL ((1ULL << 13) - 1) /* the 13 rights of ABI 1: EXECUTE .. MAKE_SYM */
#define LL_REFER (1ULL << 13)        /* ABI 2 */
#define LL_TRUNCATE (1ULL << 14)     /* ABI 3 */
#define LL_IOCTL_DEV (1ULL << 15)    /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */
/* The rights Landlock accepts on a rule for a file that is not a folder. */
#define LL_FILE_RIGHTS (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

/* struct landlock_ruleset_attr as of ABI 6. The kernel takes a shorter size from older callers
 * and a longer one whose tail is zero, so the size passed is the shortest that says it all. */
typedef struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
} ll_ruleset_attr;

typedef struct __attribute__((packed)) ll_path_beneath {
  uint64_t allowed_access;
  int32_t parent_fd;
} ll_path_beneath;

#define FIRST_FREE_FD 4 /* 0, 1, 2: the standard streams; 3: the mark pipe (bind_proc.c) */

/* ---- in the parent ------------------------------------------------------------------------- */

int confine_landlock_abi(const char **why) {
#ifdef SYS_landlock_create_ruleset
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi > 0) return (int)abi;
  if (errno == ENOSYS)
    *why = "this kernel has no Landlock: Linux 5.13 or later, with landlock in the lsm= boot list";
  else if (errno == EOPNOTSUPP) *why = "Landlock is disabled at boot";
  else *why = "the Landlock system calls are refused here (a seccomp filter?)";
#else
  *why = "cudalab was built without Landlock's system call numbers";
#endif
  return 0;
}

uint64_t confine_handled_fs(int abi) {
  uint64_t fs = 0;
  if (abi >= 1) fs |= LL_V1_ALL;
  if (abi >= 2) fs |= LL_REFER;
  if (abi >= 3) fs |= LL_TRUNCATE;
  if (abi >= 5) fs |= LL_IOCTL_DEV;
  return fs;
}

uint64_t confine_scopes(int abi) {
  return abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL : 0;
}

void confine_open_rule(const char *path, int write, uint64_t handled, confine_rule *r) {
  r->fd = -1;
  r->err = 0;
  r->access = 0;
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) r->err = errno;
    return;
  }
  if (fd < FIRST_FREE_FD) { /* an engine started with a closed stdin hands out 0 */
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, FIRST_FREE_FD);
    int e = errno;
    close(fd);
    if (hi < 0) {
      r->err = e;
      return;
    }
    fd = hi;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    r->err = errno;
    close(fd);
    return;
  }
  uint64_t access = write ? handled : LL_READ_FILE | LL_READ_DIR | LL_EXECUTE;
  if (!S_ISDIR(st.st_mode)) access &= LL_FILE_RIGHTS; /* Landlock refuses folder rights here */
  r->fd = fd;
  r->access = access & handled;
}

/* getpwuid_r into a buffer grown until it fits. Returns the malloc'd buffer (pw points into it),
 * or NULL with *err 0 when the uid has no account, else an errno value. */
static char *lookup_uid(uid_t uid, struct passwd *pw, int *err) {
  for (size_t len = 1024;; len *= 2) {
    char *buf = malloc(len);
    if (!buf) {
      *err = ENOMEM;
      return NULL;
    }
    struct passwd *res = NULL;
    int e = getpwuid_r(uid, pw, buf, len, &res);
    if (e == 0 && res) return buf;
    free(buf);
    if (e != ERANGE || len >= (1 << 20)) {
      *err = e == ENOENT || e == ESRCH || e == EBADF || e == EPERM ? 0 : e; /* "not found" */
      return NULL;
    }
  }
}

int confine_account(uid_t uid, confine_user *u, gid_t *groups, size_t cap, char *err,
                    size_t errlen) {
  struct passwd pw;
  int e;
  char *buf = lookup_uid(uid, &pw, &e);
  if (!buf) {
    if (e) snprintf(err, errlen, "cannot look up uid %lu (%s)", (unsigned long)uid, strerror(e));
    else snprintf(err, errlen, "no account has uid %lu", (unsigned long)uid);
    return -1;
  }
  u->uid = uid;
  u->gid = pw.pw_gid;
  u->groups = groups;
  int n = cap > 65536 ? 65536 : (int)cap;
  int r = getgrouplist(pw.pw_name, pw.pw_gid, groups, &n);
  if (r < 0 && (size_t)n <= cap) { /* glibc says how many it wants; a library that does not */
    snprintf(err, errlen, "cannot list the groups of %s", pw.pw_name);
    n = -1;
  }
  free(buf);
  if (n >= 0) u->ngroups = (size_t)n;
  return n;
}

/* ---- in the child ---------------------------------------------------------------------------- */

int confine_become(const confine_user *u, int *step) {
  *step = CONFINE_SETGROUPS;
  if (syscall(SYS_setgroups, u->ngroups, u->groups) != 0) return -1;
  *step = CONFINE_SETGID;
  if (syscall(SYS_setresgid, u->gid, u->gid, u->gid) != 0) return -1;
  *step = CONFINE_SETUID;
  if (syscall(SYS_setresuid, u->uid, u->uid, u->uid) != 0) return -1;
  *step = CONFINE_REGAIN;
  if (getuid() != u->uid || geteuid() != u->uid || getgid() != u->gid || getegid() != u->gid ||
      syscall(SYS_setuid, 0) == 0) {
    errno = EPERM;
    return -1;
  }
  *step = 0;
  return 0;
}

int confine_limits(const confine_limit *limits, int n, int *which) {
  for (int k = 0; k < n; k++) {
    struct rlimit rl = {limits[k].value, limits[k].value};
    if (setrlimit(limits[k].resource, &rl) != 0) { /* a bare system call in the C library */
      *which = k;
      return -1;
    }
  }
  return 0;
}

int confine_ruleset(uint64_t handled, uint64_t scopes, const confine_rule *rules, int n,
                    int *step, int *which) {
  for (int k = 0; k < n; k++)
    if (rules[k].err) {
      *step = CONFINE_OPEN;
      *which = k;
      errno = rules[k].err;
      return -1;
    }
#ifdef SYS_landlock_create_ruleset
  ll_ruleset_attr attr = {handled, 0, scopes};
  size_t size = scopes ? sizeof attr : sizeof attr.handled_access_fs;
  *step = CONFINE_CREATE;
  int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) return -1;
  *step = CONFINE_RULE;
  for (int k = 0; k < n; k++) {
    if (rules[k].fd < 0) continue;
    ll_path_beneath pb = {rules[k].access, rules[k].fd};
    if (syscall(SYS_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &pb, 0) != 0) {
      int e = errno;
      close(fd);
      *which = k;
      errno = e;
      return -1;
    }
  }
  /* The process's own /proc entries, opened here in the child (the parent's would be its own):
   * the pid stays the same across exec, and what the program reads and writes there (its maps,
   * its threads' names; CUDA's driver fails with cudaErrorOperatingSystem without it) is its
   * own. Other processes' entries stay out of reach. */
  int self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (self >= 0) {
    ll_path_beneath pb = {handled & ~(uint64_t)LL_REFER, self};
    syscall(SYS_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &pb, 0); /* without it, less works */
    close(self);
  }
  *step = 0;
  return fd;
#else
  (void)handled, (void)scopes, (void)n, (void)which;
  *step = CONFINE_CREATE;
  errno = ENOSYS;
  return -1;
#endif
}

int confine_restrict(int ruleset_fd, int *step) {
  *step = 0;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  if (ruleset_fd < 0) return 0;
  *step = CONFINE_RESTRICT;
#ifdef SYS_landlock_restrict_self
  long r = syscall(SYS_landlock_restrict_self, ruleset_fd, 0);
#else
  long r = -1;
  errno = ENOSYS;
#endif
  int e = errno;
  close(ruleset_fd);
  errno = e;
  return r == 0 ? 0 : -1;
}
