/* bind_proc.c: require "cudalab.proc", running child processes N at a time with limits. The
 * grader re-runs every learner's work in a child cudalab, several at once, and a hostile or
 * endless submission must fail its own task and nothing else.
 *
 *   proc.run(jobs, opts) -> results   proc.self() -> path of this binary   proc.nproc() -> CPUs
 *   proc.mark([text]) -> boolean   proc.cpu_budget(seconds) -> soft limit
 *   proc.landlock_abi() -> ABI version, or 0 and why there is none
 *
 * A hostile submission meets the operating system, not only the Lua sandbox: a job may be
 * confined, by its parent between fork and exec (confine.c), before it reads a byte:
 *   become = uid        run as that account, with its primary and supplementary groups; only
 *                       when cudalab runs as root, and never as uid 0
 *   limits = {cpu = s, memory = bytes (RLIMIT_AS), file_size = bytes, processes = n,
 *             open_files = n}       soft = hard. RLIMIT_NPROC counts every process of the uid,
 *                       not the job's own (give each learner a uid), and does not bind root
 *   landlock = {read = {paths}, write = {paths}}   beneath a read path: read files, list
 *                       folders, execute; beneath a write path: every right the kernel handles.
 *                       Nothing else of the filesystem is reachable, no signal reaches a process
 *                       outside the job, nor a connection an abstract unix socket outside it
 *                       (from Landlock ABI 6). A path that does not exist is skipped: the lists
 *                       name places that may exist (a toolkit's folders). Implies no_new_privs
 *   no_new_privs = true no set-uid gains through exec
 *   mark_timeout = s    descriptor 3 (and CUDALAB_MARK_FD=3) is a pipe to the parent; every byte
 *                       written there (proc.mark) moves the job's deadline to now + s, while
 *                       timeout still bounds the whole run: the earlier wins
 * A result then has timeout_kind ("mark" or "total") when it timed out, and marks (bytes read)
 * and mark_data (what was read, up to max_output) with mark_timeout; a failure to confine is its
 * error, as a failure to exec is.
 *
 * Stance: one thread and one poll(2) loop over the pipes of every running child, writing stdin
 * as the child drains it and reading stdout and stderr as they fill, so that neither a big input
 * nor a big output can deadlock; no helper thread and no SIGCHLD handler, so the engine's signal
 * state is left as it was. Children are waited for by pid, never waitpid(-1), so other children
 * of the engine are not ours to reap. Each child leads a process group of its own, and a group
 * is killed whole: at a timeout, at Ctrl-C, at an error, and also as soon as its leader exits,
 * so that a job's background processes cannot outlive it (a grader wants the job over, where a
 * shell's $(...) would wait for whoever still holds the pipe).
 *
 * Everything a run holds (children, descriptors, buffers) lives in one userdata made in a
 * released state before the first fork. The loop runs under lua_pcall and the userdata is
 * released the moment it returns, error or not (a Lua error in on_done, out of memory, Ctrl-C),
 * before the error travels on. A to-be-closed slot was turned down for that: after Ctrl-C the
 * REPL's interrupt hook stays armed and fires on the call of the __close method itself, which
 * would then never run. __gc and __close remain, as the last resort. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "bindings.h"
#include "confine.h"
#include "runtime.h"

#define PROC_RUN "cudalab.ProcRun"
#define MAX_PARALLEL 1024            /* opts.jobs: more would only queue on descriptors */
#define DEFAULT_MAX_OUTPUT (1 << 20) /* bytes kept per stream */
#define MAX_MAX_OUTPUT (1 << 30)
#define GRACE_S 0.5      /* after a job's group is killed, how long escapees may hold its pipes */
#define POLL_IDLE_MS 100 /* longest sleep: how late an exit with the pipes still held is seen */
#define POLL_REAP_MS 5   /* a job's pipes are closed but its leader is not yet a zombie */
#define MARK_FD 3        /* the child's end of the mark pipe (mark_timeout) */
#define FIRST_FREE_FD 4  /* the lowest descriptor the parent hands a child: 0..3 are taken */
#define NLIMITS 5        /* the fields of a job's limits */
#define MARK_ENV "CUDALAB_MARK_FD"

extern char **environ;

/* What the child writes to the report pipe when it cannot become the program: the stage, then
 * errno, then the confine.c step and the index of the limit or Landlock path, where they apply. */
enum {
  REPORT_FDS = 1,
  REPORT_CWD,
  REPORT_EXEC,
  REPORT_BECOME,    /* step: CONFINE_SETGROUPS .. CONFINE_REGAIN */
  REPORT_PDEATHSIG, /* setting it again once the child became the user */
  REPORT_LIMIT,     /* index: which of the job's limits */
  REPORT_NNP,       /* no_new_privs */
  REPORT_LANDLOCK,  /* step: CONFINE_OPEN .. CONFINE_RESTRICT; index: which path */
};

/* A job's limits field: its names, in the order they are applied and listed in messages, and
 * the resource of each. */
static const char *const limit_names[NLIMITS + 1] = {"cpu", "memory", "file_size", "processes",
                                                     "open_files", NULL};
static const int limit_resources[NLIMITS] = {RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC,
                                             RLIMIT_NOFILE};

typedef struct pout {
  int fd;          /* the parent's read end; -1 before the start and after end of file */
  char *data;      /* what was kept (malloc'd, at most max_output bytes); freed once pushed */
  size_t len, cap; /* bytes kept, bytes allocated */
} pout;

typedef struct pjob {
  /* what to run, checked before anything starts; the strings are anchored (see anchor()) */
  const char *name;      /* argv[1] as given, for messages */
  const char *path;      /* what execve runs; NULL when argv[1] was not found in PATH */
  const char **argv;     /* NULL-terminated */
  char **envp;           /* NULL: the engine's environment as it is */
  const char *cwd;       /* NULL: the engine's current folder */
  const char *in;        /* stdin's text; NULL: /dev/null */
  size_t in_len, in_off; /* its length, and how much the child has taken */
  double timeout;        /* seconds; 0: no limit */
  double mark_timeout;   /* seconds without a mark before the job is killed; 0: no marks */
  /* its confinement (confine.c), applied in the child in that order */
  int become;            /* whether the child changes its uid to user's */
  confine_user user;     /* the account; user.groups is anchored (a userdata) */
  confine_limit limits[NLIMITS]; /* soft = hard, in limit_names' order, those given */
  int limit_field[NLIMITS];      /* each one's index in limit_names, for messages */
  int nlimits;           /* how many */
  int no_new_privs;      /* asked for, or implied by landlock */
  int landlock;          /* whether the job has a Landlock domain */
  int nrules;            /* its paths, read ones first */
  const char **rule_path;  /* anchored; the names, for opening and for messages */
  confine_rule *rules;   /* anchored; descriptors open only from job_start to the fork */
  int nread;             /* rules[0..nread-1] are read rules, the rest write rules */
  /* while it runs */
  pid_t pid;             /* leader and process group; 0 before the start and once reaped */
  pid_t shown_pid;       /* the pid for the result, kept after reaping */
  int in_fd;             /* the parent's write end of stdin; -1 when closed */
  int report_fd;         /* read end of the report pipe (CLOEXEC in the child); -1 at EOF */
  int report[4];         /* what the child reported: REPORT_*, errno, step, index */
  size_t report_len;     /* bytes of it read so far */
  pout out, err;         /* stdout and stderr */
  pout said;             /* what came through the mark pipe (proc.mark's texts), as mark_data */
  double started;        /* monotonic seconds at the fork */
  double deadline;       /* started + timeout; HUGE_VAL without one */
  int mark_fd;           /* the parent's read end of the mark pipe; -1 without, or at EOF */
  double mark_deadline;  /* the last mark (or the start) + mark_timeout; HUGE_VAL without */
  lua_Integer marks;     /* bytes read from the mark pipe */
  int mark_killed;       /* timed out because the mark deadline came first */
  double ended;          /* when the leader was reaped */
  double grace_end;      /* ended + GRACE_S: the pipes are closed then, held or not */
  int wstatus;           /* the leader's wait status, when have_status */
  int have_status;       /* 0 when someone else reaped it (SIGCHLD ignored) */
  int reaped;            /* the leader has been waited for */
  int done;              /* its result has been pushed */
  int timed_out;         /* killed at its deadline */
  int truncated;         /* stdout or stderr went past max_output */
} pjob;

typedef struct prun {
  int njobs;          /* jobs[] entries, in the caller's order */
  int parallel;       /* opts.jobs: how many run at once */
  size_t max_output;  /* bytes kept per stream */
  int anchored;       /* values in the anchor table (the user value) */
  long maxfd;         /* highest descriptor a child closes when close_range is missing */
  int landlock_abi;   /* the kernel's, once a job asks for Landlock; 0 before that */
  uint64_t handled_fs, scopes; /* what every Landlock ruleset handles at that ABI */
  pjob jobs[];        /* njobs of them */
} prun;

typedef struct pslot {
  pjob *j;    /* the job a polled descriptor belongs to */
  int which;  /* 'i' stdin, 'o' stdout, 'e' stderr, 'r' report, 'm' marks */
} pslot;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* ---- release: the one way a run ends, from the loop, __gc or __close ------------------------- */

/* Kills every group still running, then reaps each leader (SIGKILL cannot be caught, so the
 * blocking wait is short), closes every descriptor and frees the buffers. Idempotent. */
static void run_release(prun *s) {
  for (int i = 0; i < s->njobs; i++)
    if (s->jobs[i].pid > 0) kill(-s->jobs[i].pid, SIGKILL);
  for (int i = 0; i < s->njobs; i++) {
    pjob *j = &s->jobs[i];
    if (j->pid > 0)
      while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR) {}
    j->pid = 0;
    close_fd(&j->in_fd);
    close_fd(&j->report_fd);
    close_fd(&j->out.fd);
    close_fd(&j->err.fd);
    close_fd(&j->mark_fd);
    free(j->out.data);
    free(j->err.data);
    free(j->said.data);
    j->out.data = j->err.data = j->said.data = NULL;
  }
}

static int run_gc(lua_State *L) {
  run_release(luaL_checkudata(L, 1, PROC_RUN));
  return 0;
}

/* ---- checking the arguments ------------------------------------------------------------------ */

/* How a bad value reads in a message where a number is wanted: numbers and booleans as
 * themselves ("got -1"), else the type. Where a string is wanted, the type is enough. */
static const char *shown(lua_State *L, int idx) {
  int t = lua_type(L, idx);
  if (t == LUA_TNUMBER || t == LUA_TBOOLEAN) return luaL_tolstring(L, idx, NULL);
  return luaL_typename(L, idx);
}

/* Raises "bad argument #1 to 'cudalab.proc.run' (job N: <fmt>)". */
static int job_error(lua_State *L, int jobno, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *why = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return luaL_argerror(L, 1, lua_pushfstring(L, "job %d: %s", jobno, why));
}

/* t[k] without metamethods: jobs are plain data, and a lying __index must not reach the fork. */
static int rawfield(lua_State *L, int t, const char *k) {
  lua_pushstring(L, k);
  return lua_rawget(L, t);
}

/* Keeps the value on top alive as long as the run (it pops it): a pointer into a string of the
 * caller's tables must survive on_done emptying those tables. */
static void anchor(lua_State *L, prun *s, int anchors) {
  lua_rawseti(L, anchors, ++s->anchored);
}

/* Refuses any key of table t that is not in names: a misspelt field would otherwise be a
 * silently ignored limit. */
static void check_fields(lua_State *L, int t, const char *const *names, int arg,
                         const char *what) {
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    int known = 0;
    for (int k = 0; names[k] && !known; k++)
      known = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), names[k]) == 0;
    if (!known) {
      const char *key = luaL_tolstring(L, -1, NULL);
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (int k = 0; names[k]; k++) {
        if (k) luaL_addstring(&b, ", ");
        luaL_addstring(&b, names[k]);
      }
      luaL_pushresult(&b);
      luaL_argerror(L, arg, lua_pushfstring(L, "%s: unknown field '%s' (%s)", what, key,
                                            lua_tostring(L, -1)));
    }
  }
}

/* The string at idx, for a field that goes to a system call: no NUL inside. */
static const char *check_cstring(lua_State *L, int idx, int jobno, const char *field) {
  if (lua_type(L, idx) != LUA_TSTRING)
    job_error(L, jobno, "%s must be a string, got %s", field, luaL_typename(L, idx));
  size_t len;
  const char *str = lua_tolstring(L, idx, &len);
  if (strlen(str) != len) job_error(L, jobno, "%s contains a NUL byte", field);
  return str;
}

static void check_argv(lua_State *L, prun *s, pjob *j, int jt, int anchors, int jobno) {
  if (rawfield(L, jt, "argv") != LUA_TTABLE || lua_rawlen(L, -1) == 0)
    job_error(L, jobno, "argv must be a non-empty list of strings, got %s",
              lua_istable(L, -1) ? "an empty table" : luaL_typename(L, -1));
  int at = lua_gettop(L);
  size_t n = lua_rawlen(L, at);
  j->argv = lua_newuserdatauv(L, (n + 1) * sizeof *j->argv, 0);
  anchor(L, s, anchors);
  for (size_t k = 1; k <= n; k++) {
    lua_rawgeti(L, at, (lua_Integer)k);
    const char *field = lua_pushfstring(L, "argv[%d]", (int)k);
    j->argv[k - 1] = check_cstring(L, -2, jobno, field);
    lua_pop(L, 1);
    anchor(L, s, anchors);
  }
  j->argv[n] = NULL;
  j->name = j->argv[0];
  if (!j->name[0]) job_error(L, jobno, "argv[1] is empty");
  lua_pop(L, 1);
}

/* Whether environ's entry e sets a name that the env table at et sets too. */
static int env_overridden(lua_State *L, int et, const char *e) {
  const char *eq = strchr(e, '=');
  lua_pushlstring(L, e, eq ? (size_t)(eq - e) : strlen(e));
  int set = lua_rawget(L, et) != LUA_TNIL;
  lua_pop(L, 1);
  return set;
}

/* The job's environment: the engine's, with the env table's names added or replaced (false
 * removes one). Built here because the child may not allocate between fork and exec. Sets
 * *path to the job's own PATH when it sets one. */
static void check_env(lua_State *L, prun *s, pjob *j, int et, int anchors, int jobno,
                      const char **path) {
  size_t m = 0, n0 = 0;
  for (lua_pushnil(L); lua_next(L, et); lua_pop(L, 1), m++) {
    if (lua_type(L, -2) != LUA_TSTRING)
      job_error(L, jobno, "env names must be strings, got %s", luaL_typename(L, -2));
    size_t nl;
    const char *name = lua_tolstring(L, -2, &nl);
    if (nl == 0 || strlen(name) != nl || strchr(name, '='))
      job_error(L, jobno, "env name '%s' is not valid (empty, or with '=' or NUL)", name);
    if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) continue;
    size_t vl;
    const char *value = lua_tolstring(L, -1, &vl);
    if (lua_type(L, -1) != LUA_TSTRING)
      job_error(L, jobno, "env.%s must be a string or false, got %s", name, shown(L, -1));
    if (strlen(value) != vl) job_error(L, jobno, "env.%s contains a NUL byte", name);
  }
  while (environ[n0]) n0++;
  j->envp = lua_newuserdatauv(L, (n0 + m + 1) * sizeof *j->envp, 0);
  anchor(L, s, anchors);
  size_t k = 0;
  for (size_t i = 0; i < n0; i++) {
    if (env_overridden(L, et, environ[i])) continue;
    j->envp[k++] = (char *)lua_pushstring(L, environ[i]); /* a copy: setenv may replace it */
    anchor(L, s, anchors);
  }
  for (lua_pushnil(L); lua_next(L, et); lua_pop(L, 1)) {
    if (lua_type(L, -1) != LUA_TSTRING) continue; /* false: removed */
    if (strcmp(lua_tostring(L, -2), "PATH") == 0) *path = lua_tostring(L, -1);
    j->envp[k++] = (char *)lua_pushfstring(L, "%s=%s", lua_tostring(L, -2), lua_tostring(L, -1));
    anchor(L, s, anchors);
  }
  j->envp[k] = NULL;
}

/* Pushes the file execve runs for name: name itself when it holds a '/', else the first
 * executable regular file of that name in the folders of path, as a shell searches (here in
 * the parent, since the child may not allocate); nil when there is none. */
static void push_program(lua_State *L, const char *name, const char *path) {
  if (strchr(name, '/')) {
    lua_pushstring(L, name);
    return;
  }
  for (const char *p = path; *p;) {
    const char *colon = strchrnul(p, ':');
    if (colon > p) {
      lua_pushlstring(L, p, (size_t)(colon - p));
      const char *file = lua_pushfstring(L, "%s/%s", lua_tostring(L, -1), name);
      struct stat st;
      if (stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0) {
        lua_remove(L, -2);
        return;
      }
      lua_pop(L, 2);
    }
    p = *colon ? colon + 1 : colon;
  }
  lua_pushnil(L);
}

/* ---- checking the confinement fields ---- */

/* A positive number of seconds (timeout, mark_timeout) from the value on top, or raises. */
static double check_seconds(lua_State *L, int jobno, const char *field) {
  double t = lua_tonumber(L, -1);
  if (lua_type(L, -1) != LUA_TNUMBER || !(t > 0))
    job_error(L, jobno, "%s must be a positive number of seconds, got %s", field, shown(L, -1));
  return t;
}

/* become = uid, the value on top: only when the engine runs as root, never 0, and an account
 * that exists, whose groups are looked up here into an anchored userdata (the child may not
 * allocate, nor read /etc/group). */
static void check_become(lua_State *L, prun *s, pjob *j, int anchors, int jobno) {
  int ok;
  lua_Integer uid = lua_tointegerx(L, -1, &ok);
  if (lua_type(L, -1) != LUA_TNUMBER || !ok || uid < 0 || uid >= (lua_Integer)UINT32_MAX)
    job_error(L, jobno, "become must be a uid (an integer from 1 to %I), got %s",
              (lua_Integer)UINT32_MAX - 1, shown(L, -1));
  if (geteuid() != 0)
    job_error(L, jobno, "become needs root (cudalab runs as uid %I)", (lua_Integer)geteuid());
  if (uid == 0) job_error(L, jobno, "become = 0 would keep root's rights: give the learner's uid");
  char err[160];
  size_t cap = 32;
  for (;;) {
    gid_t *groups = lua_newuserdatauv(L, cap * sizeof *groups, 0);
    int n = confine_account((uid_t)uid, &j->user, groups, cap, err, sizeof err);
    if (n < 0) job_error(L, jobno, "become: %s", err);
    if ((size_t)n <= cap) break;
    lua_pop(L, 1);
    cap = (size_t)n;
  }
  anchor(L, s, anchors);
  j->become = 1;
}

/* limits = {cpu = s, memory = bytes, ...}, the table on top: integers above 0, known names. */
static void check_limits(lua_State *L, pjob *j, int jobno) {
  int lt = lua_gettop(L);
  if (lua_type(L, lt) != LUA_TTABLE)
    job_error(L, jobno, "limits must be a table (%s), got %s",
              "cpu, memory, file_size, processes, open_files", luaL_typename(L, lt));
  check_fields(L, lt, limit_names, 1, lua_pushfstring(L, "job %d: limits", jobno));
  lua_pop(L, 1);
  for (int k = 0; k < NLIMITS; k++) {
    if (rawfield(L, lt, limit_names[k]) != LUA_TNIL) {
      int ok;
      lua_Integer v = lua_tointegerx(L, -1, &ok);
      if (lua_type(L, -1) != LUA_TNUMBER || !ok || v <= 0)
        job_error(L, jobno, "limits.%s must be a positive integer, got %s", limit_names[k],
                  shown(L, -1));
      j->limits[j->nlimits] = (confine_limit){limit_resources[k], (rlim_t)v};
      j->limit_field[j->nlimits++] = k;
    }
    lua_pop(L, 1);
  }
}

/* Checks landlock.read or landlock.write (field) of the table at lt and, once j->rule_path is
 * allocated, stores its paths from j->rule_path[*n] on; returns how many there are. */
static int landlock_list(lua_State *L, prun *s, pjob *j, int lt, const char *field, int *n,
                         int anchors, int jobno) {
  int t = rawfield(L, lt, field);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (t != LUA_TTABLE)
    job_error(L, jobno, "landlock.%s must be a list of paths, got %s", field, luaL_typename(L, -1));
  int at = lua_gettop(L);
  int len = (int)lua_rawlen(L, at);
  for (int k = 1; j->rule_path && k <= len; k++) {
    lua_rawgeti(L, at, k);
    const char *name = lua_pushfstring(L, "landlock.%s[%d]", field, k);
    j->rule_path[(*n)++] = check_cstring(L, -2, jobno, name);
    lua_pop(L, 1);
    anchor(L, s, anchors);
  }
  lua_pop(L, 1);
  return len;
}

/* landlock = {read = {...}, write = {...}}, the table on top: the paths are kept for job_start,
 * which opens them; the kernel's ABI is asked once per run. */
static void check_landlock(lua_State *L, prun *s, pjob *j, int anchors, int jobno) {
  static const char *const names[] = {"read", "write", NULL};
  int lt = lua_gettop(L);
  if (lua_type(L, lt) != LUA_TTABLE)
    job_error(L, jobno, "landlock must be a table {read = {paths}, write = {paths}}, got %s",
              luaL_typename(L, lt));
  check_fields(L, lt, names, 1, lua_pushfstring(L, "job %d: landlock", jobno));
  lua_pop(L, 1);
  int n = landlock_list(L, s, j, lt, "read", NULL, anchors, jobno) +
          landlock_list(L, s, j, lt, "write", NULL, anchors, jobno);
  j->rule_path = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *j->rule_path, 0);
  anchor(L, s, anchors);
  j->rules = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *j->rules, 0);
  anchor(L, s, anchors);
  landlock_list(L, s, j, lt, "read", &j->nrules, anchors, jobno);
  j->nread = j->nrules;
  landlock_list(L, s, j, lt, "write", &j->nrules, anchors, jobno);
  if (!s->landlock_abi) {
    const char *why = NULL;
    s->landlock_abi = confine_landlock_abi(&why);
    if (!s->landlock_abi) job_error(L, jobno, "landlock: %s", why);
    s->handled_fs = confine_handled_fs(s->landlock_abi);
    s->scopes = confine_scopes(s->landlock_abi);
  }
  j->landlock = j->no_new_privs = 1;
}

/* become, limits, no_new_privs, landlock, mark_timeout of the job table at jt. */
static void check_confine(lua_State *L, prun *s, pjob *j, int jt, int anchors, int jobno) {
  if (rawfield(L, jt, "become") != LUA_TNIL) check_become(L, s, j, anchors, jobno);
  lua_settop(L, jt);
  if (rawfield(L, jt, "limits") != LUA_TNIL) check_limits(L, j, jobno);
  lua_settop(L, jt);
  if (rawfield(L, jt, "no_new_privs") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      job_error(L, jobno, "no_new_privs must be a boolean, got %s", luaL_typename(L, -1));
    j->no_new_privs = lua_toboolean(L, -1);
  }
  lua_settop(L, jt);
  if (rawfield(L, jt, "landlock") != LUA_TNIL) check_landlock(L, s, j, anchors, jobno);
  lua_settop(L, jt);
  if (rawfield(L, jt, "mark_timeout") != LUA_TNIL)
    j->mark_timeout = check_seconds(L, jobno, "mark_timeout");
  lua_settop(L, jt);
}

/* Pushes the environment table check_env is to build from: the job's env table at et (or an
 * empty one) with MARK_ENV set to the mark pipe's descriptor, or removed for a job without
 * one, so that a child never trusts a number it inherited from the engine. Pushes nothing and
 * returns 0 when the job's env is to be used as it is. */
static int push_mark_env(lua_State *L, const pjob *j, int et) {
  if (!j->mark_timeout && !getenv(MARK_ENV)) return 0;
  lua_newtable(L);
  if (lua_type(L, et) == LUA_TTABLE)
    for (lua_pushnil(L); lua_next(L, et);) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -4);
    }
  if (j->mark_timeout) lua_pushfstring(L, "%d", MARK_FD);
  else lua_pushboolean(L, 0);
  lua_setfield(L, -2, MARK_ENV);
  return 1;
}

/* Checks job number jobno (its table at jt) and fills j from it. Raises on a bad field. */
static void check_job(lua_State *L, prun *s, pjob *j, int jt, int anchors, int jobno) {
  static const char *const fields[] = {"argv",   "stdin",    "timeout",      "env",
                                       "cwd",    "become",   "limits",       "no_new_privs",
                                       "landlock", "mark_timeout", NULL};
  if (lua_type(L, jt) != LUA_TTABLE)
    job_error(L, jobno, "a table expected, got %s", luaL_typename(L, jt));
  check_fields(L, jt, fields, 1, lua_pushfstring(L, "job %d", jobno));
  lua_pop(L, 1);
  check_argv(L, s, j, jt, anchors, jobno);
  if (rawfield(L, jt, "stdin") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING)
      job_error(L, jobno, "stdin must be a string, got %s", luaL_typename(L, -1));
    j->in = lua_tolstring(L, -1, &j->in_len);
    anchor(L, s, anchors);
  } else lua_pop(L, 1);
  if (rawfield(L, jt, "timeout") != LUA_TNIL) j->timeout = check_seconds(L, jobno, "timeout");
  lua_pop(L, 1);
  if (rawfield(L, jt, "cwd") != LUA_TNIL) {
    j->cwd = check_cstring(L, -1, jobno, "cwd");
    anchor(L, s, anchors);
  } else lua_pop(L, 1);
  check_confine(L, s, j, jt, anchors, jobno);
  const char *path = getenv("PATH");
  int et = lua_gettop(L) + 1;
  int t = rawfield(L, jt, "env");
  if (t != LUA_TTABLE && t != LUA_TNIL)
    job_error(L, jobno, "env must be a table of NAME = \"value\", got %s", luaL_typename(L, et));
  if (push_mark_env(L, j, et)) check_env(L, s, j, et + 1, anchors, jobno, &path);
  else if (t == LUA_TTABLE) check_env(L, s, j, et, anchors, jobno, &path);
  push_program(L, j->name, path ? path : "/usr/bin:/bin"); /* path may be in env, still here */
  j->path = lua_tostring(L, -1);
  if (j->path) anchor(L, s, anchors);
  lua_settop(L, et - 1);
}

/* opts.jobs, opts.max_output; leaves opts.on_done (a function or nil) on the stack. */
static void check_opts(lua_State *L, prun *s, int ot) {
  static const char *const fields[] = {"jobs", "max_output", "on_done", NULL};
  s->parallel = 1;
  s->max_output = DEFAULT_MAX_OUTPUT;
  if (lua_isnoneornil(L, ot)) {
    lua_pushnil(L);
    return;
  }
  luaL_checktype(L, ot, LUA_TTABLE);
  check_fields(L, ot, fields, 2, "opts");
  int ok = 1;
  if (rawfield(L, ot, "jobs") != LUA_TNIL) {
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (lua_type(L, -1) != LUA_TNUMBER || !ok || n < 1 || n > MAX_PARALLEL)
      luaL_argerror(L, 2, lua_pushfstring(L, "jobs must be an integer from 1 to %d, got %s",
                                          MAX_PARALLEL, shown(L, -1)));
    s->parallel = (int)n;
  }
  if (rawfield(L, ot, "max_output") != LUA_TNIL) {
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (lua_type(L, -1) != LUA_TNUMBER || !ok || n < 0 || n > MAX_MAX_OUTPUT)
      luaL_argerror(L, 2, lua_pushfstring(L, "max_output must be an integer from 0 to %d "
                                             "(bytes per stream), got %s",
                                          MAX_MAX_OUTPUT, shown(L, -1)));
    s->max_output = (size_t)n;
  }
  lua_pop(L, 2);
  int t = rawfield(L, ot, "on_done");
  if (t != LUA_TNIL && t != LUA_TFUNCTION)
    luaL_argerror(L, 2, lua_pushfstring(L, "on_done must be a function, got %s",
                                        luaL_typename(L, -1)));
}

/* ---- the child, between fork and exec: async-signal-safe calls only -------------------------- */

/* The parent's descriptors a child starts from: all above MARK_FD (pipe_high), so that moving
 * them onto 0..3 never overwrites one with another. -1 where a job has none. */
typedef struct child_fds {
  int in, out, err; /* become 0, 1, 2 (in -1: /dev/null) */
  int rep;          /* the report pipe, closed by exec */
  int mark;         /* becomes MARK_FD */
} child_fds;

static void child_fail(int fd, int stage, int step, int index) __attribute__((noreturn));
static void child_fail(int fd, int stage, int step, int index) {
  int rep[4] = {stage, errno, step, index};
  ssize_t w = write(fd, rep, sizeof rep); /* 16 bytes to a pipe: atomic */
  (void)w;
  _exit(127);
}

/* Makes src the child's descriptor dst, open across exec. */
static int move_fd(int src, int dst) {
  if (src == dst) return fcntl(dst, F_SETFD, 0);
  return dup2(src, dst) < 0 ? -1 : 0;
}

/* Closes every descriptor from lo to hi: close_range where the kernel has it, else one by one
 * up to maxfd (from the parent: sysconf may not be called here). */
static void close_from(unsigned lo, unsigned hi, long maxfd) {
  if (lo > hi) return;
#ifdef SYS_close_range
  if (syscall(SYS_close_range, lo, hi, 0) == 0) return;
#endif
  for (long fd = lo; fd <= (long)hi && fd < maxfd; fd++) close((int)fd);
}

/* The child's own group, killed with the engine; default signals; the pipes as 0/1/2 (and the
 * mark pipe as 3). */
static void child_setup(child_fds *f, pid_t parent) {
  setpgid(0, 0);
  /* The direct child dies with the engine even if the engine is killed; the group kill covers
   * the rest in every case the engine lives to see. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL); /* SIGPIPE included */
  if (f->in < 0) f->in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (f->in < 0 || move_fd(f->in, 0) || move_fd(f->out, 1) || move_fd(f->err, 2) ||
      (f->mark >= 0 && move_fd(f->mark, MARK_FD)))
    child_fail(f->rep, REPORT_FDS, 0, 0);
}

/* The job's confinement, in the order the stance of confine.c wants: the Landlock ruleset is
 * built first (before the limits could leave no descriptor for it; it restricts nothing until
 * restrict_self), then the uid (and the parent-death signal again, which a change of
 * credentials clears), the folder as the new user (one they cannot enter fails clearly), the
 * limits, no_new_privs and Landlock's restriction. */
static void child_confine(const prun *s, const pjob *j, int rep, pid_t parent) {
  int step = 0, index = 0, ruleset = -1;
  if (j->landlock) {
    ruleset = confine_ruleset(s->handled_fs, s->scopes, j->rules, j->nrules, &step, &index);
    if (ruleset < 0) child_fail(rep, REPORT_LANDLOCK, step, index);
  }
  if (j->become) {
    if (confine_become(&j->user, &step) != 0) child_fail(rep, REPORT_BECOME, step, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(rep, REPORT_PDEATHSIG, 0, 0);
    if (getppid() != parent) _exit(127);
  }
  if (j->cwd && chdir(j->cwd) != 0) child_fail(rep, REPORT_CWD, 0, 0);
  if (confine_limits(j->limits, j->nlimits, &index) != 0) child_fail(rep, REPORT_LIMIT, 0, index);
  if ((j->no_new_privs || ruleset >= 0) && confine_restrict(ruleset, &step) != 0)
    child_fail(rep, step ? REPORT_LANDLOCK : REPORT_NNP, step, 0);
}

/* In the child: set up, confined, nothing open but 0..2 (and the mark pipe) and the report
 * pipe, which exec closes; then the program. */
static void child_start(const prun *s, const pjob *j, child_fds f, pid_t parent)
    __attribute__((noreturn));
static void child_start(const prun *s, const pjob *j, child_fds f, pid_t parent) {
  child_setup(&f, parent);
  child_confine(s, j, f.rep, parent);
  close_from(f.mark >= 0 ? MARK_FD + 1 : MARK_FD, (unsigned)f.rep - 1, s->maxfd);
  close_from((unsigned)f.rep + 1, ~0U, s->maxfd);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (!j->path) errno = ENOENT;
  else execve(j->path, (char *const *)j->argv, j->envp ? j->envp : environ);
  child_fail(f.rep, REPORT_EXEC, 0, 0);
}

/* ---- the parent's side of one job ------------------------------------------------------------ */

/* pipe2 with both ends CLOEXEC and above MARK_FD, so that the child's dup2 onto 0..3 can never
 * overwrite one pipe with another (an engine started with a closed stdin would hand out 0). */
static int pipe_high(int p[2]) {
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  for (int k = 0; k < 2; k++) {
    if (p[k] >= FIRST_FREE_FD) continue;
    int hi = fcntl(p[k], F_DUPFD_CLOEXEC, FIRST_FREE_FD);
    if (hi < 0) {
      int e = errno;
      close(p[0]);
      close(p[1]);
      errno = e;
      return -1;
    }
    close(p[k]);
    p[k] = hi;
  }
  return 0;
}

static void set_nonblock(int fd) {
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Opens j's Landlock paths for the child to build its ruleset from (confine_open_rule): here,
 * at its start, so that a run of many jobs holds the descriptors of the running ones only. */
static void open_rules(const prun *s, pjob *j) {
  for (int k = 0; k < j->nrules; k++)
    confine_open_rule(j->rule_path[k], k >= j->nread, s->handled_fs, &j->rules[k]);
}

static void close_rules(pjob *j) {
  for (int k = 0; k < j->nrules; k++) close_fd(&j->rules[k].fd);
}

/* Takes the parent's ends of a started child's pipes. */
static void job_keep_fds(pjob *j, int in[2], int out[2], int err[2], int rep[2], int mark[2]) {
  int *child_ends[] = {&in[0], &out[1], &err[1], &rep[1], &mark[1]};
  for (int k = 0; k < 5; k++) close_fd(child_ends[k]);
  j->in_fd = in[1];
  j->out.fd = out[0];
  j->err.fd = err[0];
  j->report_fd = rep[0];
  j->mark_fd = mark[0];
  set_nonblock(j->in_fd);
  set_nonblock(j->out.fd);
  set_nonblock(j->err.fd);
  set_nonblock(j->report_fd);
  set_nonblock(j->mark_fd);
  if (j->in && j->in_len == 0) close_fd(&j->in_fd);
}

/* Starts j: its pipes, the fork, the child's exec. 0, or -1 with errno (out of descriptors or
 * processes) with nothing left open. Signals are blocked across the fork so that the engine's
 * SIGINT handler never runs in the child before it has reset its handlers. */
static int job_start(prun *s, pjob *j) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, rep[2] = {-1, -1};
  int mark[2] = {-1, -1};
  if ((j->in && pipe_high(in)) || pipe_high(out) || pipe_high(err) || pipe_high(rep) ||
      (j->mark_timeout > 0 && pipe_high(mark)))
    goto fail;
  open_rules(s, j);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid();
  double started = now_s();
  pid_t pid = fork();
  if (pid == 0) child_start(s, j, (child_fds){in[0], out[1], err[1], rep[1], mark[1]}, parent);
  int e = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close_rules(j);
  if (pid < 0) {
    errno = e;
    goto fail;
  }
  setpgid(pid, pid); /* here too, so that a kill of the group can never miss the child */
  j->pid = j->shown_pid = pid;
  job_keep_fds(j, in, out, err, rep, mark);
  j->started = started;
  j->deadline = j->timeout > 0 ? started + j->timeout : HUGE_VAL;
  j->mark_deadline = j->mark_timeout > 0 ? started + j->mark_timeout : HUGE_VAL;
  return 0;
fail:
  e = errno;
  int *fds[] = {in, out, err, rep, mark};
  for (int k = 0; k < 5; k++) {
    close_fd(&fds[k][0]);
    close_fd(&fds[k][1]);
  }
  errno = e;
  return -1;
}

/* write() that cannot kill the engine with SIGPIPE when the child has stopped reading: the
 * signal is blocked for the call and a SIGPIPE it raised is taken back (the engine leaves
 * SIGPIPE at its default so that `| head` ends it quietly, which rules out ignoring it). */
static ssize_t write_nosigpipe(int fd, const char *p, size_t n) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  int was_pending = sigismember(&pending, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = write(fd, p, n);
  int e = errno;
  if (w < 0 && e == EPIPE && !was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {}
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return w;
}

static void feed_stdin(pjob *j) {
  ssize_t w = write_nosigpipe(j->in_fd, j->in + j->in_off, j->in_len - j->in_off);
  if (w > 0) j->in_off += (size_t)w;
  else if (w < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (w <= 0 || j->in_off == j->in_len) close_fd(&j->in_fd); /* EOF, or the child stopped reading */
}

/* Keeps what fits of n more bytes of o under max; the rest is dropped and flagged. Raises on
 * out of memory (the run's release then frees everything). */
static void keep(lua_State *L, pjob *j, pout *o, const char *p, size_t n, size_t max) {
  size_t room = max - o->len;
  if (n > room) {
    j->truncated = 1;
    n = room;
  }
  if (n == 0) return;
  if (o->len + n > o->cap) {
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + n) cap *= 2;
    if (cap > max) cap = max;
    char *grown = realloc(o->data, cap);
    if (!grown) luaL_error(L, "not enough memory for the output of %s", j->name);
    o->data = grown;
    o->cap = cap;
  }
  memcpy(o->data + o->len, p, n);
  o->len += n;
}

/* Marks read from the mark pipe: each byte moves the job's mark deadline on, unless it was
 * already killed. */
static void marked(pjob *j, ssize_t n) {
  j->marks += n;
  if (!j->timed_out) j->mark_deadline = now_s() + j->mark_timeout;
}

/* One read from a readable stdout, stderr, report or mark pipe; closes it at EOF or on an
 * error. */
static void drain(lua_State *L, prun *s, pjob *j, int which) {
  static char chunk[1 << 16]; /* one Lua state per engine; never re-entered during a read */
  int *fd = which == 'o'   ? &j->out.fd
            : which == 'e' ? &j->err.fd
            : which == 'm' ? &j->mark_fd
                           : &j->report_fd;
  ssize_t n = read(*fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    close_fd(fd);
    return;
  }
  if (which == 'm') {
    marked(j, n);
    keep(L, j, &j->said, chunk, (size_t)n, s->max_output);
  } else if (which == 'r') {
    size_t room = sizeof j->report - j->report_len;
    size_t take = (size_t)n < room ? (size_t)n : room;
    memcpy((char *)j->report + j->report_len, chunk, take);
    j->report_len += take;
  } else {
    keep(L, j, which == 'o' ? &j->out : &j->err, chunk, (size_t)n, s->max_output);
  }
}

/* The earlier of the job's deadlines: its timeout, and its mark_timeout since the last mark. */
static double job_deadline(const pjob *j) {
  return j->mark_deadline < j->deadline ? j->mark_deadline : j->deadline;
}

/* Whether every pipe the job's processes write to is at EOF. */
static int pipes_closed(const pjob *j) {
  return j->out.fd < 0 && j->err.fd < 0 && j->report_fd < 0 && j->mark_fd < 0;
}

/* Notices the leader's exit without reaping it (so its pid, the group's id, cannot be reused
 * yet), kills what is left of its group, then reaps it. Kills a job past its deadline. */
static void job_watch(pjob *j, double now) {
  if (j->reaped) return;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int r = waitid(P_PID, (id_t)j->pid, &si, WEXITED | WNOHANG | WNOWAIT);
  if (r == 0 && si.si_pid == j->pid) {
    kill(-j->pid, SIGKILL);
    pid_t w;
    while ((w = waitpid(j->pid, &j->wstatus, 0)) < 0 && errno == EINTR) {}
    j->have_status = w == j->pid;
  } else if (!(r < 0 && errno == ECHILD)) { /* ECHILD: reaped behind our back; it is over */
    if (now >= job_deadline(j) && !j->timed_out) {
      kill(-j->pid, SIGKILL);
      j->timed_out = 1;
      j->mark_killed = j->mark_deadline < j->deadline;
    }
    return;
  }
  j->pid = 0;
  j->reaped = 1;
  j->ended = now_s();
  j->grace_end = j->ended + GRACE_S;
  close_fd(&j->in_fd);
}

/* Whether j is over: its leader reaped, and its pipes at EOF or their grace spent. */
static int job_over(pjob *j, double now) {
  if (!j->reaped) return 0;
  return pipes_closed(j) || now >= j->grace_end;
}

/* How long poll may sleep for j, in seconds. */
static double job_wait(const pjob *j, double now) {
  if (j->reaped) return j->grace_end - now;
  double w = job_deadline(j) - now;
  if (pipes_closed(j) && w > POLL_REAP_MS / 1000.0)
    w = POLL_REAP_MS / 1000.0;
  return w;
}

/* ---- results --------------------------------------------------------------------------------- */

static const char *signal_name(int sig, char *buf, size_t len) {
  static const struct {
    int sig;
    const char *name;
  } names[] = {
#define SIGNAME(s) {s, #s}
      SIGNAME(SIGHUP),  SIGNAME(SIGINT),    SIGNAME(SIGQUIT),   SIGNAME(SIGILL),
      SIGNAME(SIGTRAP), SIGNAME(SIGABRT),   SIGNAME(SIGBUS),    SIGNAME(SIGFPE),
      SIGNAME(SIGKILL), SIGNAME(SIGUSR1),   SIGNAME(SIGSEGV),   SIGNAME(SIGUSR2),
      SIGNAME(SIGPIPE), SIGNAME(SIGALRM),   SIGNAME(SIGTERM),   SIGNAME(SIGCHLD),
      SIGNAME(SIGCONT), SIGNAME(SIGSTOP),   SIGNAME(SIGTSTP),   SIGNAME(SIGTTIN),
      SIGNAME(SIGTTOU), SIGNAME(SIGURG),    SIGNAME(SIGXCPU),   SIGNAME(SIGXFSZ),
      SIGNAME(SIGVTALRM), SIGNAME(SIGPROF), SIGNAME(SIGWINCH),  SIGNAME(SIGIO),
      SIGNAME(SIGSYS),
#ifdef SIGSTKFLT
      SIGNAME(SIGSTKFLT),
#endif
#ifdef SIGPWR
      SIGNAME(SIGPWR),
#endif
#undef SIGNAME
  };
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (names[k].sig == sig) return names[k].name;
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
  else snprintf(buf, len, "SIG%d", sig);
  return buf;
}

/* Why the child could not become uid, from the step of confine_become that failed. */
static const char *become_error(lua_State *L, const pjob *j, int step, const char *why) {
  lua_Integer uid = (lua_Integer)j->user.uid;
  const char *call = step == CONFINE_SETGROUPS ? "setgroups"
                     : step == CONFINE_SETGID  ? "setgid"
                                               : "setuid";
  if (step == CONFINE_REGAIN)
    return lua_pushfstring(L, "cannot become uid %I: the change did not hold (root could be "
                              "regained)", uid);
  return lua_pushfstring(L, "cannot become uid %I: %s: %s", uid, call, why);
}

/* Why the child could not confine itself with Landlock, from the step of confine.c. */
static const char *landlock_error(lua_State *L, const pjob *j, int step, int k, const char *why) {
  const char *path = k >= 0 && k < j->nrules ? j->rule_path[k] : "?";
  switch (step) {
  case CONFINE_OPEN:
    return lua_pushfstring(L, "cannot confine %s with Landlock (opening %s: %s)", j->name, path,
                           why);
  case CONFINE_RULE:
    return lua_pushfstring(L, "cannot confine %s with Landlock (the rule for %s: %s)", j->name,
                           path, why);
  case CONFINE_CREATE:
    return lua_pushfstring(L, "cannot confine %s with Landlock (landlock_create_ruleset: %s)",
                           j->name, why);
  default:
    return lua_pushfstring(L, "cannot confine %s with Landlock (landlock_restrict_self: %s)",
                           j->name, why);
  }
}

/* Why the child could not set limit number k of the job. */
static const char *limit_error(lua_State *L, const pjob *j, int k, const char *why) {
  if (k < 0 || k >= j->nlimits) k = 0;
  return lua_pushfstring(L, "cannot run %s with limits.%s = %I (%s)", j->name,
                         limit_names[j->limit_field[k]], (lua_Integer)j->limits[k].value,
                         why);
}

/* Why the child could not become the program, from its report; NULL when it did. */
static const char *start_error(lua_State *L, const pjob *j) {
  if (j->report_len < sizeof j->report) return NULL;
  const char *why = strerror(j->report[1]);
  int step = j->report[2], index = j->report[3];
  switch (j->report[0]) {
  case REPORT_BECOME: return become_error(L, j, step, why);
  case REPORT_LANDLOCK: return landlock_error(L, j, step, index, why);
  case REPORT_LIMIT: return limit_error(L, j, index, why);
  case REPORT_NNP: return lua_pushfstring(L, "cannot run %s (no_new_privs: %s)", j->name, why);
  case REPORT_PDEATHSIG:
    return lua_pushfstring(L, "cannot run %s (the parent-death signal, as uid %I: %s)", j->name,
                           (lua_Integer)j->user.uid, why);
  case REPORT_CWD:
    if (j->become)
      return lua_pushfstring(L, "cannot run %s in %s as uid %I (%s)", j->name, j->cwd,
                             (lua_Integer)j->user.uid, why);
    return lua_pushfstring(L, "cannot run %s in %s (%s)", j->name, j->cwd, why);
  case REPORT_FDS:
    return lua_pushfstring(L, "cannot run %s (setting up its standard streams: %s)", j->name, why);
  default:
    if (!j->path) return lua_pushfstring(L, "cannot run %s (not found in PATH)", j->name);
    return lua_pushfstring(L, "cannot run %s (%s)", j->name, why);
  }
}

/* Pushes the result table of a finished job and frees its buffers. */
static void push_result(lua_State *L, pjob *j) {
  lua_createtable(L, 0, 12);
  const char *why = start_error(L, j);
  if (why) {
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "error");
    lua_pushfstring(L, "%s\n", why);
    lua_setfield(L, -3, "stderr");
    lua_pop(L, 1);
  } else {
    lua_pushlstring(L, j->err.data ? j->err.data : "", j->err.len);
    lua_setfield(L, -2, "stderr");
  }
  if (j->have_status && WIFEXITED(j->wstatus)) bind_set_int(L, "status", WEXITSTATUS(j->wstatus));
  if (j->have_status && WIFSIGNALED(j->wstatus)) {
    char buf[32];
    bind_set_int(L, "signal", WTERMSIG(j->wstatus));
    bind_set_str(L, "signame", signal_name(WTERMSIG(j->wstatus), buf, sizeof buf));
  }
  bind_set_bool(L, "timed_out", j->timed_out);
  if (j->timed_out) bind_set_str(L, "timeout_kind", j->mark_killed ? "mark" : "total");
  if (j->mark_timeout > 0) {
    bind_set_int(L, "marks", j->marks);
    lua_pushlstring(L, j->said.data ? j->said.data : "", j->said.len);
    lua_setfield(L, -2, "mark_data");
  }
  bind_set_num(L, "seconds", j->ended - j->started);
  lua_pushlstring(L, j->out.data ? j->out.data : "", j->out.len);
  lua_setfield(L, -2, "stdout");
  bind_set_bool(L, "truncated", j->truncated);
  bind_set_int(L, "pid", j->shown_pid);
  free(j->out.data);
  free(j->err.data);
  free(j->said.data);
  j->out.data = j->err.data = j->said.data = NULL;
}

/* ---- the loop -------------------------------------------------------------------------------- */

/* Starts jobs from *next while fewer than s->parallel run. A start that fails for want of
 * descriptors or processes waits for a running job to end; with none running it raises. */
static void start_more(lua_State *L, prun *s, int *next, int *running) {
  while (*running < s->parallel && *next < s->njobs) {
    if (job_start(s, &s->jobs[*next]) != 0) {
      int e = errno;
      if (*running > 0 && (e == EMFILE || e == ENFILE || e == EAGAIN || e == ENOMEM)) return;
      luaL_error(L, "cannot start job %d (%s)", *next + 1, strerror(e));
    }
    ++*next;
    ++*running;
  }
}

/* Fills fds/slots with the open pipes of the started, unfinished jobs first..next-1 and sleeps
 * in poll until one is ready, the nearest deadline, or a signal; then moves the data. */
static void wait_io(lua_State *L, prun *s, int next, struct pollfd *fds, pslot *slots) {
  nfds_t n = 0;
  double now = now_s(), wait = POLL_IDLE_MS / 1000.0;
  for (int i = 0; i < next; i++) {
    pjob *j = &s->jobs[i];
    if (j->done) continue;
    struct { int fd; int which; short events; } ends[] = {
        {j->in_fd, 'i', POLLOUT}, {j->out.fd, 'o', POLLIN}, {j->err.fd, 'e', POLLIN},
        {j->report_fd, 'r', POLLIN}, {j->mark_fd, 'm', POLLIN}};
    for (int k = 0; k < 5; k++) {
      if (ends[k].fd < 0) continue;
      fds[n] = (struct pollfd){ends[k].fd, ends[k].events, 0};
      slots[n++] = (pslot){j, ends[k].which};
    }
    double w = job_wait(j, now);
    if (w < wait) wait = w;
  }
  int ms = wait <= 0 ? 0 : (int)ceil(wait * 1000);
  if (poll(fds, n, ms) <= 0) return; /* timeout, or EINTR: the caller looks at the clock and rt */
  for (nfds_t k = 0; k < n; k++) {
    if (!fds[k].revents) continue;
    if (slots[k].which == 'i') feed_stdin(slots[k].j);
    else drain(L, s, slots[k].j, slots[k].which);
  }
}

/* run_loop(run, on_done) -> results, under lua_pcall from proc_run, which releases the run
 * whatever happens here. A finished job's result goes into results and then to on_done. */
static int run_loop(lua_State *L) {
  prun *s = lua_touserdata(L, 1);
  int has_cb = lua_isfunction(L, 2);
  int running = 0, next = 0, finished = 0;
  size_t slots_max = 5 * (size_t)(s->parallel < s->njobs ? s->parallel : s->njobs);
  struct pollfd *fds = lua_newuserdatauv(L, slots_max * sizeof *fds, 0);
  pslot *slots = lua_newuserdatauv(L, slots_max * sizeof *slots, 0);
  lua_createtable(L, s->njobs, 0);
  int results = lua_gettop(L);
  while (finished < s->njobs) {
    if (rt.interrupted) {
      lua_pushliteral(L, "interrupted"); /* as the REPL's own hook says it: no position */
      return lua_error(L);
    }
    start_more(L, s, &next, &running);
    wait_io(L, s, next, fds, slots);
    double now = now_s();
    for (int i = 0; i < next; i++) {
      pjob *j = &s->jobs[i];
      if (j->done) continue;
      job_watch(j, now);
      if (!job_over(j, now)) continue;
      close_fd(&j->out.fd);
      close_fd(&j->err.fd);
      close_fd(&j->report_fd);
      close_fd(&j->mark_fd);
      j->done = 1;
      running--;
      finished++;
      push_result(L, j);
      lua_pushvalue(L, -1);
      lua_rawseti(L, results, i + 1);
      if (has_cb) {
        lua_pushvalue(L, 2);
        lua_pushinteger(L, i + 1);
        lua_rotate(L, -3, -1); /* on_done, i, result */
        lua_call(L, 2, 0);
      } else lua_pop(L, 1);
    }
  }
  lua_settop(L, results);
  return 1;
}

/* proc.run(jobs, opts) -> results: checks everything, then runs the loop protected and releases
 * the run before returning or re-raising. */
static int proc_run(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  size_t n = lua_rawlen(L, 1);
  if (n > INT_MAX / 2) luaL_argerror(L, 1, "too many jobs");
  prun *s = lua_newuserdatauv(L, sizeof *s + n * sizeof s->jobs[0], 1);
  memset(s, 0, sizeof *s);
  s->njobs = (int)n;
  for (size_t i = 0; i < n; i++) {
    pjob *j = &s->jobs[i];
    memset(j, 0, sizeof *j);
    j->in_fd = j->report_fd = j->out.fd = j->err.fd = j->mark_fd = -1;
  }
  luaL_setmetatable(L, PROC_RUN);
  lua_newtable(L);
  lua_setiuservalue(L, 3, 1);
  lua_getiuservalue(L, 3, 1); /* 4: anchors */
  check_opts(L, s, 2);        /* 5: on_done */
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, 1, (lua_Integer)i + 1);
    check_job(L, s, &s->jobs[i], lua_gettop(L), 4, (int)i + 1);
    lua_settop(L, 5);
  }
  long maxfd = sysconf(_SC_OPEN_MAX);
  s->maxfd = maxfd > 0 ? maxfd : 1 << 16;
  lua_pushcfunction(L, run_loop);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 5);
  int status = lua_pcall(L, 2, 1, 0);
  run_release(s);
  if (status != LUA_OK) return lua_error(L);
  return 1;
}

/* proc.self() -> the absolute path of the running cudalab, so that the grader can start
 * copies of itself. A binary rebuilt while it runs reads as "PATH (deleted)"; the new one at
 * PATH is then the one to start, as the learner would if they typed the command again. */
static int proc_self(lua_State *L) {
  static const char deleted[] = " (deleted)";
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n < 0 || (size_t)n >= sizeof buf - 1)
    return luaL_error(L, "cannot find the running program (/proc/self/exe: %s)",
                      n < 0 ? strerror(errno) : "path too long");
  buf[n] = '\0';
  size_t dl = sizeof deleted - 1;
  if ((size_t)n > dl && strcmp(buf + n - dl, deleted) == 0) {
    buf[n - dl] = '\0';
    if (access(buf, X_OK) == 0) n -= (ssize_t)dl;
    else buf[n - dl] = ' ';
  }
  lua_pushlstring(L, buf, (size_t)n);
  return 1;
}

/* proc.nproc() -> the number of online CPUs (at least 1). */
static int proc_nproc(lua_State *L) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  lua_pushinteger(L, n > 0 ? n : 1);
  return 1;
}

/* proc.landlock_abi() -> the kernel's Landlock ABI (1, 2, ...), or 0 and why there is none. */
static int proc_landlock_abi(lua_State *L) {
  const char *why = NULL;
  int abi = confine_landlock_abi(&why);
  lua_pushinteger(L, abi);
  if (abi > 0) return 1;
  lua_pushstring(L, why);
  return 2;
}

/* The mark pipe named by MARK_ENV, looked at once: a descriptor open for writing to a pipe, or
 * -1. Read once so that code the job runs later cannot point it elsewhere by changing the
 * environment, and checked to be a pipe so that a stale number never writes into a file. */
static int mark_fd(void) {
  static int fd = -2; /* -2: not looked at yet */
  if (fd != -2) return fd;
  fd = -1;
  const char *v = getenv(MARK_ENV);
  if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9) return fd;
  int n = atoi(v);
  struct stat st;
  int fl = fcntl(n, F_GETFL);
  if (fl >= 0 && (fl & O_ACCMODE) == O_WRONLY && fstat(n, &st) == 0 && S_ISFIFO(st.st_mode))
    fd = n;
  return fd;
}

/* proc.mark([text]) -> true when text (default one newline) went whole to the mark pipe of
 * the job this process runs as: its deadline moves on, and the parent keeps the text as the
 * result's mark_data. That is the channel a grading child reports its results on: only C code
 * reaches the descriptor, so nothing the graded code prints can pass for a result. False when
 * there is no mark pipe or its reader is gone. */
static int proc_mark(lua_State *L) {
  size_t len;
  const char *text = luaL_optlstring(L, 1, "\n", &len);
  luaL_argcheck(L, len > 0, 1, "the text to mark with must not be empty");
  int fd = mark_fd();
  size_t done = 0;
  while (fd >= 0 && done < len) {
    ssize_t w = write_nosigpipe(fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += (size_t)w;
  }
  lua_pushboolean(L, fd >= 0 && done == len);
  return 1;
}

/* proc.cpu_budget(seconds) -> the new soft RLIMIT_CPU: the CPU time this process has used
 * (user and system, rounded up to the second) plus seconds, never above the hard limit. Past
 * it the kernel sends SIGXCPU, whose default action ends the process. A budget and not a wall:
 * the process may raise its soft limit again, up to the hard one (limits.cpu of its job). */
static int proc_cpu_budget(lua_State *L) {
  int ok;
  lua_Integer secs = lua_tointegerx(L, 1, &ok);
  if (lua_type(L, 1) != LUA_TNUMBER || !ok || secs <= 0)
    return luaL_argerror(L, 1, lua_pushfstring(L, "seconds must be a positive integer, got %s",
                                               lua_isnone(L, 1) ? "no value" : shown(L, 1)));
  struct rusage ru;
  struct rlimit rl;
  if (getrusage(RUSAGE_SELF, &ru) != 0 || getrlimit(RLIMIT_CPU, &rl) != 0)
    return luaL_error(L, "cpu_budget: cannot read this process's CPU time (%s)", strerror(errno));
  long long us = ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
                 ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  rlim_t soft = (rlim_t)((us + 999999) / 1000000) + (rlim_t)secs;
  if (rl.rlim_max != RLIM_INFINITY && soft > rl.rlim_max) soft = rl.rlim_max;
  rl.rlim_cur = soft;
  if (setrlimit(RLIMIT_CPU, &rl) != 0)
    return luaL_error(L, "cpu_budget: cannot set RLIMIT_CPU (%s)", strerror(errno));
  lua_pushinteger(L, (lua_Integer)soft);
  return 1;
}

/* proc.exit_on_interrupt(status): from now on Ctrl-C ends this process with status (0 to 255),
 * as the way out of a command that runs until it is stopped (--class-report --watch). Raising
 * "interrupted" would end it with 1, and no Lua code can run after the interrupt to say
 * otherwise: the engine's hook stays armed so that no pcall swallows it. */
static int proc_exit_on_interrupt(lua_State *L) {
  lua_Integer status = luaL_checkinteger(L, 1);
  luaL_argcheck(L, status >= 0 && status <= 255, 1, "an exit status is 0 to 255");
  rt.interrupt_status = (int)status;
  rt.interrupt_exits = 1;
  return 0;
}

int luaopen_cudalab_proc(lua_State *L) {
  static const luaL_Reg run_meta[] = {{"__gc", run_gc}, {"__close", run_gc}, {NULL, NULL}};
  static const luaL_Reg funcs[] = {
      {"run", proc_run},     {"self", proc_self},       {"nproc", proc_nproc},
      {"mark", proc_mark},   {"cpu_budget", proc_cpu_budget},
      {"landlock_abi", proc_landlock_abi}, {"exit_on_interrupt", proc_exit_on_interrupt},
      {NULL, NULL}};
  if (luaL_newmetatable(L, PROC_RUN)) luaL_setfuncs(L, run_meta, 0);
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  /* proc.address_sanitizer: this build's programs reserve terabytes of shadow address space at
   * start, so a job running one cannot have limits.memory (RLIMIT_AS); the grader asks. */
#if defined(__SANITIZE_ADDRESS__)
  lua_pushboolean(L, 1);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  lua_pushboolean(L, 1);
#else
  lua_pushboolean(L, 0);
#endif
#else
  lua_pushboolean(L, 0);
#endif
  lua_setfield(L, -2, "address_sanitizer");
  return 1;
}
