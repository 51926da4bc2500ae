/* main.c: the command line, shaped like lua's own:
 *   cudalab [options] [script [args...]]
 * Options are handled in order; -e chunks and the script run first, then the REPL when asked
 * for (-i) or when nothing else was given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>

#include "backend_names.h"
#include "bindings.h"
#include "console.h"
#include "nvrtc.h"
#include "paths.h"
#include "trace.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: cudalab [options] [script [args...]]\n"
          "Learn CUDA from a terminal: a Lua 5.4 REPL with device arrays, kernels compiled at run\n"
          "time, launches and timing, on the GPU or on a built-in simulator.\n"
          "\n"
          "  -e chunk      run the Lua chunk (may be repeated)\n"
          "  -i            enter the interactive REPL after the script or chunks\n"
          "  -v            print version information and exit\n"
          "  --sim         run kernels on the simulator even if a GPU is present\n"
          "  --gpu         use the GPU (fail clearly if there is none)\n"
          "  --backend B   " CL_BACKEND_CHOICES "\n"
          "  --verify-lessons [--class DIR] [name]\n"
          "                run every lesson (or one) end to end with its reference solutions and\n"
          "                a wrong answer that must fail: one line per lesson, then a summary;\n"
          "                with --class DIR, the class's lessons (your own among them, by name\n"
          "                or number), and no record is written: you are not made a learner\n"
          "  --class DIR   join the class in DIR (as CUDALAB_CLASS=DIR does): its lessons, its\n"
          "                limits, and your work recorded in its folder\n"
          "\n"
          "For instructors (each takes the rest of the command line; --help after it says more):\n"
          "  --class-init DIR [--group G] [--title T]\n"
          "                create a class folder that learners join with --class DIR\n"
          "  --class-report DIR [--watch [SECONDS]] [--html FILE]\n"
          "                learners x lessons: passed, attempts, skipped, stuck; "
          "where the room is\n"
          "                stuck; --watch redraws it, --html writes one self-contained page\n"
          "  --class-snapshot DIR\n"
          "                keep what every learner has passed now (run it at each due time)\n"
          "  --grade DIR [-j N] [--csv FILE] [--json FILE] [--shard I/N] [--merge FILES...]\n"
          "        [--slurm [--wait] ...]\n"
          "                grade every learner by re-running their recorded work\n"
          "  -h, --help    show this help and exit\n"
          "  --            stop handling options\n"
          "  -             run standard input as a script\n"
          "\n"
          "With no script, cudalab starts the REPL; from a pipe it reads one chunk after another\n"
          "and prints results without prompts. In the REPL, help() shows the API and lessons()\n"
          "the lessons.\n");
}

static void version(void) {
  printf("cudalab %s (%s, NVRTC %s)\n", CUDALAB_VERSION, LUA_RELEASE, nvrtc_version_string());
}

static int missing_arg(const char *opt) {
  fprintf(stderr, "cudalab: '%s' needs an argument\n", opt);
  usage(stderr);
  return 2;
}

/* The command line as parsed: what console_run needs, plus whether -i asked for the REPL. */
typedef struct {
  console_options console;
  int force_interactive;
  int first_arg; /* argv index of the script, or argc when there is none */
  int class_command; /* an instructor's command: first_arg is lua/class/class_cli.lua */
} command_line;

/* -1 when parsing goes on; otherwise the exit status (0 after --help or --version). */
enum { PARSE_GO_ON = -1 };

/* --verify-lessons [--class DIR] [name]: the lesson engine (lua/lessons/lessons.lua) does the work;
 * its exit status is the verdict. With a class (--class DIR before or after it), the class's
 * lessons are verified, and the session joins it read-only (CUDALAB_CLASS_READONLY): the instructor
 * checking a course is not made a learner, so no record is written. Advances *i past what it
 * takes. */
static int verify_lessons(int argc, char **argv, int *i, console_step *step) {
  static char chunk[640];
  setenv("CUDALAB_CLASS_READONLY", "1", 1);
  if (*i + 1 < argc && strcmp(argv[*i + 1], "--class") == 0) {
    if (*i + 2 >= argc || !argv[*i + 2][0]) {
      fprintf(stderr, "cudalab: --class needs the class folder's path\n");
      return 2;
    }
    setenv("CUDALAB_CLASS", argv[*i + 2], 1);
    *i += 2;
  }
  const char *name = *i + 1 < argc && argv[*i + 1][0] != '-' ? argv[++*i] : NULL;
  if (name && strpbrk(name, "\"\\\n")) {
    fprintf(stderr, "cudalab: '%s' is not a lesson name\n", name);
    return 2;
  }
  /* A class that could not be joined (said at start-up) fails the run: verifying the built-in
   * lessons in its place would pass a course that cannot start. The class may be named by
   * --class before or after this option, or by the environment, so the engine asks. */
  snprintf(chunk, sizeof chunk,
           "if (os.getenv('CUDALAB_CLASS') or '') ~= '' and not require('classroom').current() "
           "then io.stderr:write('cudalab: the class could not be joined (said above): no "
           "lesson verified\\n') os.exit(1) end "
           "os.exit(require('lessons').verify(%s%s%s) and 0 or 1)",
           name ? "\"" : "", name ? name : "nil", name ? "\"" : "");
  *step = (console_step){STEP_EXEC, chunk, 0, NULL};
  return PARSE_GO_ON;
}

/* The instructor's commands: lua/class/class_cli.lua parses the rest of the command line, run as a
 * script with those arguments. They need no GPU and join no class. */
static int is_class_command(const char *a) {
  return strcmp(a, "--class-init") == 0 || strcmp(a, "--class-report") == 0 ||
         strcmp(a, "--class-snapshot") == 0 || strcmp(a, "--grade") == 0;
}

static int class_command(char **argv, int i, command_line *cl) {
  static char script[4096 + 32];
  char data[4096];
  if (paths_data_dir(data, sizeof data) != 0) {
    fprintf(stderr, "cudalab: cannot find cudalab's lua/ folder (set CUDALAB_HOME)\n");
    return 2;
  }
  snprintf(script, sizeof script, "%s/lua/class/class_cli.lua", data);
  argv[i - 1] = script; /* the script takes the slot before its arguments */
  unsetenv("CUDALAB_CLASS");
  cl->first_arg = i - 1;
  cl->class_command = 1;
  return PARSE_GO_ON;
}

/* One option at argv[*i] (which starts with '-'); may consume the argument after it. */
static int parse_option(int argc, char **argv, int *i, command_line *cl) {
  const char *a = argv[*i];
  console_options *o = &cl->console;
  if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
    version();
    return 0;
  }
  if (strcmp(a, "-i") == 0) {
    cl->force_interactive = 1;
  } else if (strcmp(a, "--sim") == 0) {
    o->backend = "sim";
  } else if (strcmp(a, "--gpu") == 0) {
    o->backend = "cuda";
  } else if (strcmp(a, "--class") == 0) {
    if (++*i == argc) return missing_arg(a);
    if (!argv[*i][0]) {
      fprintf(stderr, "cudalab: --class needs the class folder's path\n");
      return 2;
    }
    setenv("CUDALAB_CLASS", argv[*i], 1);
  } else if (strcmp(a, "--verify-lessons") == 0) {
    return verify_lessons(argc, argv, i, &o->steps[o->nsteps++]);
  } else if (strcmp(a, "--backend") == 0) {
    if (++*i == argc) return missing_arg(a);
    o->backend = argv[*i];
  } else if (strncmp(a, "-e", 2) == 0) {
    const char *chunk = a[2] ? a + 2 : (++*i < argc ? argv[*i] : NULL);
    if (!chunk) return missing_arg("-e");
    o->steps[o->nsteps++] = (console_step){STEP_EXEC, chunk, 0, NULL};
  } else {
    fprintf(stderr, "cudalab: unknown option '%s'\n", a);
    usage(stderr);
    return 2;
  }
  return PARSE_GO_ON;
}

/* Options up to the script's name, "--" or "-"; then checks the backend's name. */
static int parse_command_line(int argc, char **argv, command_line *cl) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    if (is_class_command(argv[i])) break; /* it and the rest are class_cli.lua's */
    int rc = parse_option(argc, argv, &i, cl);
    if (rc != PARSE_GO_ON) return rc;
  }
  const char *be = cl->console.backend;
  if (be && !cl_backend_canonical(be)) {
    fprintf(stderr, "cudalab: unknown backend '%s' (choose " CL_BACKEND_CHOICES ")\n", be);
    return 2;
  }
  if (i < argc && is_class_command(argv[i])) {
    /* argv[i] itself stays an argument of the script: class_cli dispatches on it */
    if (!be) cl->console.backend = "none";
    return class_command(argv, i, cl);
  }
  cl->first_arg = i;
  return PARSE_GO_ON;
}

int main(int argc, char **argv) {
  trace_mark("process"); /* exec and the dynamic loader: since the parent's fork */
  command_line cl = {0};
  /* one step per argument at most, plus the script */
  console_step *steps = calloc((size_t)argc + 1, sizeof *steps);
  if (!steps) return 1;
  cl.console.steps = steps;
  int status = parse_command_line(argc, argv, &cl);
  if (status == PARSE_GO_ON) {
    console_options *o = &cl.console;
    int nargs = argc - cl.first_arg;
    if (nargs > 0)
      steps[o->nsteps++] = (console_step){STEP_SCRIPT, NULL, nargs, argv + cl.first_arg};
    o->tty = isatty(STDIN_FILENO);
    o->interactive = cl.force_interactive || o->nsteps == 0;
    status = console_run(o);
  }
  trace_mark("exit"); /* the steps and the REPL, and the engine's end */
  free(steps);
  return status;
}
