/* main.c: the command line, shaped like lua's own:
 *   cudalab [options] [script [args...]]
 * Options are handled in order; -e chunks and the script run first, then the REPL when asked
 * for (-i) or when nothing else was given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>

#include "bindings.h"
#include "console.h"
#include "nvrtc.h"

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
          "  --backend B   cuda, sim or none\n"
          "  --verify-lessons [name]\n"
          "                run every lesson (or one) end to end with its reference solutions and\n"
          "                a wrong answer that must fail: one line per lesson, then a summary\n"
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

int main(int argc, char **argv) {
  static char verify_chunk[512];
  console_options o = {0};
  console_step *steps = calloc((size_t)argc + 1, sizeof *steps);
  if (!steps) return 1;
  o.steps = steps;
  int force_interactive = 0, i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
      version();
      return 0;
    }
    if (strcmp(a, "-i") == 0) {
      force_interactive = 1;
      continue;
    }
    if (strcmp(a, "--sim") == 0) {
      o.backend = "sim";
      continue;
    }
    if (strcmp(a, "--gpu") == 0) {
      o.backend = "cuda";
      continue;
    }
    if (strcmp(a, "--verify-lessons") == 0) {
      /* The lesson engine (lua/lessons.lua) does the work; its exit status is the verdict. */
      const char *name = i + 1 < argc && argv[i + 1][0] != '-' ? argv[++i] : NULL;
      if (name && strpbrk(name, "\"\\\n")) {
        fprintf(stderr, "cudalab: '%s' is not a lesson name\n", name);
        return 2;
      }
      snprintf(verify_chunk, sizeof verify_chunk,
               "os.exit(require('lessons').verify(%s%s%s) and 0 or 1)", name ? "\"" : "",
               name ? name : "nil", name ? "\"" : "");
      steps[o.nsteps++] = (console_step){STEP_EXEC, verify_chunk, 0, NULL};
      continue;
    }
    if (strcmp(a, "--backend") == 0) {
      if (++i == argc) return missing_arg(a);
      o.backend = argv[i];
      continue;
    }
    if (strncmp(a, "-e", 2) == 0) {
      const char *chunk = a[2] ? a + 2 : (++i < argc ? argv[i] : NULL);
      if (!chunk) return missing_arg("-e");
      steps[o.nsteps++] = (console_step){STEP_EXEC, chunk, 0, NULL};
      continue;
    }
    fprintf(stderr, "cudalab: unknown option '%s'\n", a);
    usage(stderr);
    return 2;
  }
  if (o.backend && strcmp(o.backend, "cuda") && strcmp(o.backend, "sim") &&
      strcmp(o.backend, "none")) {
    fprintf(stderr, "cudalab: unknown backend '%s' (choose cuda, sim or none)\n", o.backend);
    return 2;
  }
  int has_script = i < argc;
  if (has_script) steps[o.nsteps++] = (console_step){STEP_SCRIPT, NULL, argc - i, argv + i};
  o.tty = isatty(STDIN_FILENO);
  o.interactive = force_interactive || o.nsteps == 0;
  int status = console_run(&o);
  free(steps);
  return status;
}
