/* confine.h: the operating system's walls around one child process, put up between fork and
 * exec: another uid, resource limits, no_new_privs, a Landlock domain. Used by bind_proc.c. */
#ifndef CUDALAB_CONFINE_H
#define CUDALAB_CONFINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The account a child becomes, resolved in the parent (confine_account). */
typedef struct confine_user {
  uid_t uid;      /* real, effective and saved uid after confine_become */
  gid_t gid;      /* the account's primary group */
  gid_t *groups;  /* its supplementary groups (the caller's memory, see confine_account) */
  size_t ngroups; /* how many */
} confine_user;

/* One resource limit: soft and hard both set to value. */
typedef struct confine_limit {
  int resource; /* RLIMIT_* */
  rlim_t value;
} confine_limit;

/* One Landlock rule, prepared in the parent (confine_open_rule). */
typedef struct confine_rule {
  int fd;          /* an O_PATH descriptor above 3; -1 when there is none */
  int err;         /* with fd -1: 0 when the path does not exist (skipped), else why it failed */
  uint64_t access; /* what the rule allows beneath it */
} confine_rule;

/* The step of confine_* in the child that failed (with errno), for the parent's message. */
enum {
  CONFINE_SETGROUPS = 1, /* confine_become */
  CONFINE_SETGID,
  CONFINE_SETUID,
  CONFINE_REGAIN, /* root could be regained afterwards: the change did not hold */
  CONFINE_CREATE, /* confine_ruleset */
  CONFINE_OPEN,   /* a rule's path could not be opened in the parent (its err) */
  CONFINE_RULE,   /* landlock_add_rule refused a rule */
  CONFINE_RESTRICT,
};

/* ---- in the parent (may allocate) ---- */

/* The Landlock ABI the running kernel offers (1, 2, ...), or 0 with *why set to the reason
 * (no Landlock in this kernel, or disabled at boot). Never fails otherwise. */
int confine_landlock_abi(const char **why);

/* What a ruleset handles at that ABI: every filesystem right the ABI knows, and from ABI 6 the
 * scopes (abstract unix sockets, signals). */
uint64_t confine_handled_fs(int abi);
uint64_t confine_scopes(int abi);

/* Opens path O_PATH|O_CLOEXEC above descriptor 3 into r, allowing read (READ_FILE, READ_DIR,
 * EXECUTE) or, with write, every handled right, cut to the file rights for a non-folder. A
 * path that does not exist leaves r->fd = -1, r->err = 0; another failure r->err = errno. The
 * caller closes r->fd. */
void confine_open_rule(const char *path, int write, uint64_t handled, confine_rule *r);

/* Resolves uid: its primary group into u, and its supplementary groups into groups, which
 * holds cap of them (u->groups points there). Returns how many groups the account has: when
 * that is more than cap, none were stored, and the caller calls again with room for them all.
 * -1 with a message in err: no account has that uid, or it could not be looked up. */
int confine_account(uid_t uid, confine_user *u, gid_t *groups, size_t cap, char *err,
                    size_t errlen);

/* ---- in the child, between fork and exec: async-signal-safe, no allocation ---- */

/* setgroups, setresgid, setresuid to u's, by raw system calls (the C library's wrappers would
 * broadcast to threads the child does not have), then checks that the ids hold and that
 * setuid(0) fails. 0, or -1 with errno and *step (CONFINE_SETGROUPS .. CONFINE_REGAIN). */
int confine_become(const confine_user *u, int *step);

/* Sets each limit soft = hard. 0, or -1 with errno and *which the index that failed. */
int confine_limits(const confine_limit *limits, int n, int *which);

/* Builds a Landlock ruleset from the rules (those with fd -1 and err 0 are skipped): returns
 * its descriptor, or -1 with errno, *step (CONFINE_OPEN, CONFINE_CREATE, CONFINE_RULE) and
 * *which (the rule). Built before the child lowers its limits, which could leave it no
 * descriptor to hold the ruleset in. */
int confine_ruleset(uint64_t handled, uint64_t scopes, const confine_rule *rules, int n,
                    int *step, int *which);

/* no_new_privs, then restricts the calling process to the ruleset (when fd >= 0) and closes it.
 * 0, or -1 with errno and *step (CONFINE_RESTRICT; 0 for no_new_privs). */
int confine_restrict(int ruleset_fd, int *step);

#endif
