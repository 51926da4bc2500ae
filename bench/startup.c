/* startup.c: make bench's start-up figures.
 *
 *   startup RUNS EMPTY BIN [ARGS...]
 *
 * Starts EMPTY (bench/empty.c, a C program that does nothing) and BIN ARGS... RUNS times each,
 * taking turns, the same way (fork, exec, wait, with stdin and stdout on /dev/null), and prints
 * the median wall time of each and their ratio. Then it starts BIN ARGS... RUNS times more with
 * CUDALAB_STARTUP_TRACE=1: the phase marks cudalab writes to stderr (repl/common/trace.c) are on
 * CLOCK_MONOTONIC, as this program's clock is, so each phase's median is measured from this
 * side of the fork, the start of the process included. The traced runs give only the
 * breakdown; the total and the ratio come from runs without the trace. Every figure is printed
 * as "name: value unit", as bench/run.sh reads them. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 1001

/* The marks cudalab writes, in order, and the name each phase ending at that mark is given
 * here: a phase runs from the mark before it (the fork, for the first) to its own. */
static const char *const marks[] = {"process", "engine fork", "backend", "lua state",
                                    "modules", "ready", "exit"};
static const char *const phases[] = {"process", "console", "backend", "lua_state",
                                     "modules", "banner", "run"};
#define NMARKS ((int)(sizeof marks / sizeof *marks))

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* In the child: stdin and stdout on /dev/null, stderr on err_fd (or /dev/null), then exec. */
static void start(char **argv, int err_fd) {
  int null = open("/dev/null", O_RDWR);
  if (null < 0) _exit(127);
  dup2(null, STDIN_FILENO);
  dup2(null, STDOUT_FILENO);
  dup2(err_fd >= 0 ? err_fd : null, STDERR_FILENO);
  if (err_fd >= 0) setenv("CUDALAB_STARTUP_TRACE", "1", 1);
  execv(argv[0], argv);
  _exit(127);
}

/* The marks' times in stderr's text, in ms, into at[]; 0 when every mark was found. */
static int parse_marks(const char *text, double *at) {
  int found = 0;
  for (const char *line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    for (int i = 0; i < NMARKS; i++) {
      char want[64];
      int n = snprintf(want, sizeof want, "cudalab-startup: %s ", marks[i]);
      if (strncmp(line, want, (size_t)n) == 0) {
        at[i] = strtod(line + n, NULL) * 1e3;
        found++;
      }
    }
  }
  return found == NMARKS ? 0 : -1;
}

/* Runs argv once and returns its wall time in ms (-1 when it failed). With at != NULL the run
 * is traced and the marks' times go to at[]. */
static double run_once(char **argv, double *at) {
  int fd[2] = {-1, -1};
  if (at && pipe(fd) != 0) return -1;
  double t0 = now_ms();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (at) close(fd[0]);
    start(argv, fd[1]);
  }
  static char text[16384];
  size_t len = 0;
  if (at) {
    close(fd[1]);
    for (ssize_t r; (r = read(fd[0], text + len, sizeof text - 1 - len)) > 0;) len += (size_t)r;
    close(fd[0]);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  double t1 = now_ms();
  text[len] = '\0';
  if (at) {
    if (parse_marks(text, at) != 0) return -1;
    for (int i = 0; i < NMARKS; i++) at[i] -= t0;
  }
  return t1 - t0;
}

int main(int argc, char **argv) {
  int runs = argc > 3 ? atoi(argv[1]) : 0;
  if (runs < 1 || runs > MAX_RUNS) {
    fprintf(stderr, "usage: startup RUNS(1-%d) EMPTY BIN [ARGS...]\n", MAX_RUNS);
    return 2;
  }
  unsetenv("CUDALAB_STARTUP_TRACE");
  char *empty[] = {argv[2], NULL};
  char **bin = argv + 3;
  static double t_empty[MAX_RUNS], t_bin[MAX_RUNS], phase[NMARKS][MAX_RUNS];
  for (int r = 0; r < runs; r++) {
    t_empty[r] = run_once(empty, NULL);
    t_bin[r] = run_once(bin, NULL);
    double at[NMARKS];
    if (t_empty[r] < 0 || t_bin[r] < 0 || run_once(bin, at) < 0) {
      fprintf(stderr, "startup: %s did not start and end cleanly (exit status 0, every mark)\n",
              t_empty[r] < 0 ? argv[2] : argv[3]);
      return 1;
    }
    for (int i = 0; i < NMARKS; i++) phase[i][r] = at[i] - (i ? at[i - 1] : 0);
  }
  double e = median(t_empty, runs), b = median(t_bin, runs);
  printf("startup_exec_ms: %.3f ms\n", b);
  printf("startup_empty_c_ms: %.3f ms\n", e);
  printf("startup_ratio: %.3f x (median of %d runs each)\n", b / e, runs);
  for (int i = 0; i < NMARKS; i++)
    printf("startup_phase_%s_ms: %.3f ms\n", phases[i], median(phase[i], runs));
  return 0;
}
