/* nvrtc_child.c: runs each NVRTC compile in a child process (fork), and brings its result back
 * through a pipe.
 *
 * Why: NVRTC itself can crash on some malformed sources (the API fuzzer finds segfaults inside
 * libnvrtc), and a crash in the engine loses the learner's arrays and variables. In a child, a
 * crash fails that one compile with a message, and the engine goes on. The child is also the
 * only process that loads NVRTC (nvrtc_lib.c says why). The cost is one fork and one dlopen per
 * cache miss, a few milliseconds against the tens NVRTC takes to compile; hits in the kernel
 * cache never get here. The child runs NVRTC alone: no CUDA, no Lua, and it ends with
 * _exit, so nothing of the parent's (atexit handlers, stdio buffers) runs twice. Where no child
 * can be made (out of processes), the compile runs in this process as before.
 *
 * The child never outlives the compile it was made for. The kernel kills it when the engine
 * dies, however it dies (PR_SET_PDEATHSIG), so a REPL killed mid-compile leaves no orphan
 * compiling on. Ctrl-C stops it: a terminal's SIGINT reaches the child too and ends it (the
 * child takes SIGINT's default action, not the engine's handler), and one sent to the engine
 * alone is seen here while waiting, and the child killed and reaped. The compile then fails
 * with "compile interrupted", and the engine keeps its state, as after Ctrl-C in Lua code.
 *
 * The result travels as records: a tag byte, a 64-bit length, and that many bytes. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvrtc.h"
#include "proto.h"

enum { R_RC, R_ERR, R_PTX, R_CUBIN, R_LOG, R_NAME, R_END };

static volatile sig_atomic_t *interrupt; /* the engine's Ctrl-C flag, read only; NULL: none */

void nvrtc_attach_interrupt(volatile sig_atomic_t *flag) { interrupt = flag; }

#define INTERRUPTED "compile interrupted (Ctrl-C): the kernel was not compiled"

static int put(int fd, int tag, const void *data, size_t len) {
  unsigned char t = (unsigned char)tag;
  uint64_t n = len;
  return proto_write_all(fd, &t, 1) || proto_write_all(fd, &n, sizeof n) ||
         (len && proto_write_all(fd, data, len));
}

static int put_str(int fd, int tag, const char *s) {
  return put(fd, tag, s, s ? strlen(s) + 1 : 0);
}

/* In the child, first: dies with parent (see the top of the file). The parent may have died
 * between fork and prctl; then the child has a new parent already and leaves at once. */
static void die_with(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* cannot fail: the signal is valid */
  if (getppid() != parent) _exit(1);
}

/* In the child: compile, send, end. */
static void child(int fd, const char *src, const char *file_name, const char *arch,
                  const char *const *options, int noptions, const char *const *names, int nnames) {
  /* A fault ends the child plainly, whatever handlers the parent had (a sanitizer's would report
   * NVRTC's own crash as cudalab's): the parent reads the signal from its status. So does
   * Ctrl-C, which the engine's handler would only note in a Lua state the child never runs. */
  static const int plain[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT};
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) signal(plain[i], SIG_DFL);
  if (getenv("CUDALAB_TEST_NVRTC_CRASH")) raise(SIGSEGV); /* tests: a compiler that crashes */
  /* Where a GPU driver is installed, NVRTC keeps ptxas's results in the driver's compute cache
   * (~/.nv/ComputeCache) and, on a hit, skips ptxas and its -v report: k:info() then knew no
   * registers and the timing model no occupancy, for any kernel compiled twice on that machine.
   * cudalab's own kernel cache keeps the report with the code, so NVRTC's is not needed. Set
   * before NVRTC is loaded, which happens in this child alone. */
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  nvrtc_output o;
  char *err = NULL;
  memset(&o, 0, sizeof o);
  int rc = nvrtc_compile_here(src, file_name, arch, options, noptions, names, nnames, &o, &err);
  int bad = put(fd, R_RC, &rc, sizeof rc) || put_str(fd, R_ERR, err);
  if (rc == 0) {
    bad = bad || put(fd, R_PTX, o.ptx, o.ptx_len) ||
          put(fd, R_CUBIN, o.cubin, o.cubin ? o.cubin_len : 0) || put_str(fd, R_LOG, o.ptxas_log);
    for (int i = 0; i < o.nnames && !bad; i++) bad = put_str(fd, R_NAME, o.lowered[i]);
  }
  bad = bad || put(fd, R_END, NULL, 0);
  _exit(bad ? 2 : 0);
}

/* Reads one record into a new buffer (NUL-terminated, one byte beyond its length). */
static int get(int fd, int *tag, char **data, size_t *len) {
  unsigned char t;
  uint64_t n;
  if (proto_read_all(fd, &t, 1) || proto_read_all(fd, &n, sizeof n) || n > ((uint64_t)1 << 34))
    return -1;
  char *d = malloc((size_t)n + 1);
  if (!d) return -1;
  if (n && proto_read_all(fd, d, (size_t)n)) {
    free(d);
    return -1;
  }
  d[n] = '\0';
  *tag = t;
  *data = d;
  *len = (size_t)n;
  return 0;
}

/* A record's buffer when it holds something; an empty one is freed and reads as none. */
static char *nonempty(char *d, size_t n) {
  if (n) return d;
  free(d);
  return NULL;
}

/* In the parent: the child's records into out / errmsg. Returns the compile's rc, or -2 when
 * the records did not arrive whole (the child died). */
static int receive(int fd, nvrtc_output *out, char **errmsg) {
  int rc = -2, tag;
  char *d;
  size_t n;
  char **names = NULL;
  int nnames = 0;
  while (get(fd, &tag, &d, &n) == 0) {
    if (tag == R_END) {
      free(d);
      out->lowered = names;
      out->nnames = nnames;
      return rc;
    }
    if (tag == R_RC && n == sizeof rc) {
      memcpy(&rc, d, sizeof rc);
      free(d);
    } else if (tag == R_ERR) {
      *errmsg = nonempty(d, n);
    } else if (tag == R_PTX) {
      out->ptx = d;
      out->ptx_len = n;
    } else if (tag == R_CUBIN) {
      out->cubin = nonempty(d, n);
      out->cubin_len = n;
    } else if (tag == R_LOG) {
      out->ptxas_log = d;
    } else if (tag == R_NAME) {
      char **t = realloc(names, sizeof *t * (size_t)(nnames + 1));
      if (!t) {
        free(d);
        break;
      }
      names = t;
      names[nnames++] = d;
    } else {
      free(d);
    }
  }
  out->lowered = names;
  out->nnames = nnames;
  nvrtc_output_free(out);
  free(*errmsg);
  *errmsg = NULL;
  return -2;
}

/* The caps a compile runs under (the grader sets them for the sources of hostile learners: a
 * template that expands without end takes gigabytes and minutes), read from the environment in
 * the parent, applied in the child; 0: none. */
typedef struct compile_caps {
  unsigned long long memory;  /* bytes of address space: CUDALAB_COMPILE_MEMORY */
  unsigned long long seconds; /* seconds of CPU time: CUDALAB_COMPILE_SECONDS */
} compile_caps;

static unsigned long long env_count(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 18) return 0;
  return strtoull(v, NULL, 10);
}

static compile_caps caps_from_env(void) {
  compile_caps c = {env_count("CUDALAB_COMPILE_MEMORY"), env_count("CUDALAB_COMPILE_SECONDS")};
  return c;
}

/* The address space the process holds now, to within a MiB, found without /proc (which a
 * confined grading process may not read): the smallest soft RLIMIT_AS under which one more page
 * can still be mapped. A child forked from an engine with a CUDA context inherits its
 * reservations, tens of GiB that it never touches, so a cap must count from here. */
static rlim_t address_space_now(void) {
  struct rlimit old;
  if (getrlimit(RLIMIT_AS, &old) != 0) return 0;
  rlim_t lo = 0, hi = (rlim_t)1 << 47;
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < hi) hi = old.rlim_max;
  while (hi - lo > ((rlim_t)1 << 20)) {
    rlim_t mid = lo + (hi - lo) / 2;
    struct rlimit r = {mid, old.rlim_max};
    void *p = MAP_FAILED;
    if (setrlimit(RLIMIT_AS, &r) == 0)
      p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      munmap(p, 4096);
      hi = mid;
    } else {
      lo = mid;
    }
  }
  setrlimit(RLIMIT_AS, &old);
  return hi;
}

/* In the child: RLIMIT_AS and RLIMIT_CPU as the caps say. The memory cap is counted from the
 * address space the child inherited (address_space_now); one above the hard limit it already
 * has leaves that limit as it is. */
static void apply_caps(compile_caps c) {
  if (c.memory) {
    rlim_t cap = address_space_now() + (rlim_t)c.memory;
    struct rlimit r = {cap, cap};
    setrlimit(RLIMIT_AS, &r);
  }
  if (c.seconds) {
    struct rlimit r = {(rlim_t)c.seconds, (rlim_t)c.seconds + 1};
    setrlimit(RLIMIT_CPU, &r);
  }
}

static void crash_message(char **errmsg, int status, compile_caps caps) {
  char buf[400];
  if (WIFSIGNALED(status) && caps.seconds &&
      (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL))
    snprintf(buf, sizeof buf, "the compile was stopped after %llu s of CPU time, the limit a "
             "compile has here: a template or macro that expands without end?", caps.seconds);
  else if (WIFSIGNALED(status) && caps.memory && WTERMSIG(status) == SIGABRT)
    snprintf(buf, sizeof buf, "the compile was stopped at %llu MiB of memory, the limit a "
             "compile has here: a template or macro that expands without end?", caps.memory >> 20);
  else if (WIFSIGNALED(status))
    snprintf(buf, sizeof buf, "NVRTC crashed while compiling this source (%s). This is a bug in "
             "NVRTC, not a mistake the compiler found: change the source around where you last "
             "edited it (an unfinished template or macro is a common trigger) and compile again",
             strsignal(WTERMSIG(status)));
  else
    snprintf(buf, sizeof buf, "NVRTC's process ended without a result (exit status %d): the "
             "source was not compiled; try again", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  *errmsg = strdup(buf);
}

static int interrupt_pending(void) { return interrupt && *interrupt; }

/* Waits until the child's result (or its end) can be read from fd: 0; or -1 when Ctrl-C came
 * first. SIGINT is blocked but while ppoll sleeps, so one that arrives between the check of the
 * flag and the sleep wakes the sleep instead of being missed until the compile ends. */
static int await_child(int fd) {
  sigset_t sigint, old;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  sigprocmask(SIG_BLOCK, &sigint, &old);
  int rc = 0;
  for (;;) {
    if (interrupt_pending()) {
      rc = -1;
      break;
    }
    struct pollfd p = {fd, POLLIN, 0};
    int n = ppoll(&p, 1, NULL, &old);
    if (n > 0 || (n < 0 && errno != EINTR)) break; /* a failed wait: the read will tell */
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return rc;
}

/* The compile failed because of Ctrl-C, and says so. */
static int interrupted(char **errmsg) {
  free(*errmsg);
  *errmsg = strdup(INTERRUPTED);
  return -1;
}

/* After Ctrl-C came first: the child is killed and reaped. */
static int stop_child(pid_t pid, int fd, char **errmsg) {
  kill(pid, SIGKILL);
  close(fd);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
  return interrupted(errmsg);
}

int nvrtc_compile(const char *src, const char *file_name, const char *arch,
                  const char *const *options, int noptions, const char *const *names, int nnames,
                  nvrtc_output *out, char **errmsg) {
  int fd[2];
  memset(out, 0, sizeof *out);
  *errmsg = NULL;
  if (pipe(fd) != 0)
    return nvrtc_compile_here(src, file_name, arch, options, noptions, names, nnames, out, errmsg);
  fflush(stdout);
  fflush(stderr);
  compile_caps caps = caps_from_env();
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return nvrtc_compile_here(src, file_name, arch, options, noptions, names, nnames, out, errmsg);
  }
  if (pid == 0) {
    die_with(parent);
    apply_caps(caps);
    close(fd[0]);
    child(fd[1], src, file_name, arch, options, noptions, names, nnames);
  }
  close(fd[1]);
  if (await_child(fd[0]) != 0) return stop_child(pid, fd[0], errmsg);
  int rc = receive(fd[0], out, errmsg);
  close(fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (rc != -2) return rc;
  /* The child ended without a result. A terminal's Ctrl-C reaches it as well as this process,
   * and may end it before this process sees its own SIGINT: either says it was Ctrl-C. */
  if (interrupt_pending() || (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT))
    return interrupted(errmsg);
  crash_message(errmsg, status, caps);
  return -1;
}
