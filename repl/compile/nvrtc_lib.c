/* nvrtc_lib.c: where libnvrtc is, and loading it.
 *
 * cudalab does not link NVRTC. The library is over 100 MB, and mapping and relocating it when
 * the process started was about half of cudalab's start-up time, for a console and an engine
 * that never call it. Only the process that compiles, the child that
 * nvrtc_child.c forks for each compile, loads it, with dlopen; the cost (about 5 ms on a
 * cache miss) is small beside the compile's own tens.
 *
 * Which file, in order: $CUDALAB_NVRTC when set (a path, and nothing else is tried, so that a
 * typo shows instead of some other NVRTC being used); else libnvrtc.so.13, then libnvrtc.so, in
 * the lib folder of the toolkit cudalab was built with (CUDALAB_NVRTC_LIBDIR, from the
 * Makefile); else the same names through the dynamic loader's search (LD_LIBRARY_PATH,
 * ld.so.cache).
 *
 * The engine must know which NVRTC a compile will use without loading it: the version keys the
 * kernel cache and shows in the banner, and the folder is where the toolkit's headers and
 * cuBLAS are found. Both come from the file system: the path as above, the version from the
 * libnvrtc-builtins.so.MAJOR.MINOR beside it (NVRTC loads its builtins by that exact name, so
 * the two always match). Only where that cannot tell (the library left to the loader's search,
 * or no builtins beside it) does a probe child load NVRTC once and report both. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dl_sym.h"
#include "nvrtc_lib.h"

#ifndef CUDALAB_NVRTC_LIBDIR
#define CUDALAB_NVRTC_LIBDIR "/usr/local/cuda/lib64"
#endif

static const char *const sonames[] = {"libnvrtc.so.13", "libnvrtc.so"};
#define NSONAMES ((int)(sizeof sonames / sizeof *sonames))

enum { FROM_ENV, FROM_TOOLKIT, FROM_LOADER };

static struct {
  int located;          /* locate() has run */
  int probed;           /* probe() has run */
  int versioned;        /* nvrtc_lib_version has looked */
  int from;             /* FROM_*: how path was chosen, for messages */
  char path[PATH_MAX];  /* the file dlopen is given; "" leaves it to the loader's search */
  char version[16];     /* "13.0"; "" while unknown */
  void *handle;         /* dlopen's, in a process that loaded it */
} N;

/* Chooses the file by the order above, without opening it. */
static void locate(void) {
  if (N.located) return;
  N.located = 1;
  const char *env = getenv("CUDALAB_NVRTC");
  if (env && env[0]) {
    N.from = FROM_ENV;
    snprintf(N.path, sizeof N.path, "%s", env);
    return;
  }
  N.from = FROM_LOADER;
  for (int i = 0; i < NSONAMES; i++) {
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", CUDALAB_NVRTC_LIBDIR, sonames[i]);
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
      N.from = FROM_TOOLKIT;
      snprintf(N.path, sizeof N.path, "%s", p);
      return;
    }
  }
}

/* The version of the libnvrtc at lib, read from the libnvrtc-builtins.so.MAJOR.MINOR in its
 * folder (links followed), into out; out is left as it was when the folder holds no builtins,
 * or builtins of two versions. */
static void version_beside(const char *lib, char *out, size_t len) {
  static const char prefix[] = "libnvrtc-builtins.so.";
  char dir[PATH_MAX], seen[16] = "";
  if (!realpath(lib, dir) || !strrchr(dir, '/')) return;
  *strrchr(dir, '/') = '\0';
  DIR *d = opendir(dir);
  if (!d) return;
  int count = 0, clash = 0;
  for (struct dirent *e; (e = readdir(d));) {
    const char *v = e->d_name + sizeof prefix - 1;
    int major, minor, end = 0;
    if (strncmp(e->d_name, prefix, sizeof prefix - 1) != 0 ||
        sscanf(v, "%d.%d%n", &major, &minor, &end) != 2 || v[end])
      continue;
    char found[16];
    snprintf(found, sizeof found, "%d.%d", major, minor);
    if (count++ && strcmp(found, seen) != 0) clash = 1;
    snprintf(seen, sizeof seen, "%s", found);
  }
  closedir(d);
  if (count && !clash) snprintf(out, len, "%s", seen);
}

/* In a child, right after fork: the kernel kills it when parent dies, however it dies (a child
 * left behind would compile on as an orphan). The parent may have died between fork and prctl;
 * then the child has a new parent already and leaves at once. */
static void die_with(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* cannot fail: the signal is valid */
  if (getppid() != parent) _exit(1);
}

/* The probe's child: loads NVRTC as a compile would, writes "MAJOR.MINOR\tPATH" to fd, ends. */
static void probe_child(int fd) {
  typedef int (*version_fn)(int *, int *); /* nvrtcVersion; nvrtcResult is an int-sized enum */
  char *why = NULL;
  void *h = nvrtc_lib_open(&why); /* sets N.path to where the loader found it */
  version_fn version;
  int major = 0, minor = 0;
  if (!h || !dl_sym(h, "nvrtcVersion", &version) || version(&major, &minor) != 0 || !N.path[0])
    _exit(1);
  dprintf(fd, "%d.%d\t%s", major, minor, N.path);
  _exit(0);
}

/* Asks a child for the version and path of the NVRTC a compile would load: the library is
 * loaded there, never here. Leaves N as it was when the child finds none. */
static void probe(void) {
  int fd[2];
  if (N.probed || pipe(fd) != 0) return;
  N.probed = 1;
  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid(), pid = fork();
  if (pid == 0) {
    close(fd[0]);
    die_with(parent);
    probe_child(fd[1]);
  }
  close(fd[1]);
  char buf[PATH_MAX + 32];
  size_t n = 0;
  for (ssize_t r; pid > 0 && n < sizeof buf - 1;) {
    r = read(fd[0], buf + n, sizeof buf - 1 - n);
    if (r > 0) n += (size_t)r;
    else if (r == 0 || errno != EINTR) break;
  }
  close(fd[0]);
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  buf[n] = '\0';
  char *tab = strchr(buf, '\t');
  if (pid <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !tab) return;
  *tab = '\0';
  snprintf(N.version, sizeof N.version, "%.*s", (int)sizeof N.version - 1, buf);
  if (N.from == FROM_LOADER) snprintf(N.path, sizeof N.path, "%s", tab + 1);
}

const char *nvrtc_lib_path(void) {
  locate();
  if (!N.path[0] && !N.handle) probe();
  return N.path[0] ? N.path : NULL;
}

const char *nvrtc_lib_version(void) {
  if (!N.versioned) {
    N.versioned = 1;
    const char *path = nvrtc_lib_path();
    if (path) version_beside(path, N.version, sizeof N.version);
    if (!N.version[0]) probe();
  }
  return N.version[0] ? N.version : NULL;
}

/* The learner's message when nothing could be loaded: what the loader said (which names the
 * file, as "cannot open shared object file" did when NVRTC was linked and missing), where else
 * cudalab looked, and what to do. */
static char *open_failure(const char *loader_said) {
  char tried[PATH_MAX + 160];
  if (N.from == FROM_ENV)
    snprintf(tried, sizeof tried, "%s, as CUDALAB_NVRTC says", N.path);
  else if (N.from == FROM_TOOLKIT)
    snprintf(tried, sizeof tried, "%s", N.path);
  else
    snprintf(tried, sizeof tried, "%s and %s in %s, then on the library path", sonames[0],
             sonames[1], CUDALAB_NVRTC_LIBDIR);
  char *msg = NULL;
  if (asprintf(&msg, "NVRTC, the CUDA compiler, could not be loaded: %s (tried %s). NVRTC comes "
               "with the CUDA Toolkit: install it, or set CUDALAB_NVRTC to the path of its %s",
               loader_said ? loader_said : "no reason given", tried, sonames[0]) < 0)
    msg = NULL;
  return msg;
}

void *nvrtc_lib_open(char **why) {
  *why = NULL;
  if (N.handle) return N.handle;
  locate();
  char said[PATH_MAX + 200] = "";
  /* RTLD_LAZY: binding all of NVRTC's symbols up front (RTLD_NOW) took 3 ms more, in every
   * compile's child. */
  for (int i = 0; !N.handle && i < (N.path[0] ? 1 : NSONAMES); i++) {
    N.handle = dlopen(N.path[0] ? N.path : sonames[i], RTLD_LAZY | RTLD_LOCAL);
    const char *e = N.handle ? NULL : dlerror();
    if (e && !said[0]) snprintf(said, sizeof said, "%s", e); /* the first name's reason */
  }
  struct link_map *map = NULL;
  if (!N.handle)
    *why = open_failure(said[0] ? said : NULL);
  else if (!N.path[0] && dlinfo(N.handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
    snprintf(N.path, sizeof N.path, "%s", map->l_name); /* where the loader found it */
  return N.handle;
}
