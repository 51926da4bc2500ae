/* console.h: the terminal side of cudalab, started by main.c with what the command line asked
 * for: chunks and a script to run first, then (maybe) the interactive loop. */
#ifndef CUDALAB_CONSOLE_H
#define CUDALAB_CONSOLE_H

typedef enum step_kind { STEP_EXEC, STEP_SCRIPT } step_kind;

typedef struct console_step {
  step_kind kind;
  const char *text; /* STEP_EXEC: the chunk */
  int argc;         /* STEP_SCRIPT: script and its arguments */
  char **argv;
} console_step;

typedef struct console_options {
  const char *backend; /* "cuda", "sim", "none" or NULL to choose */
  int interactive;     /* run the REPL after the steps */
  int tty;             /* standard input is a terminal */
  int nsteps;
  console_step *steps;
} console_options;

/* Returns the process exit status. */
int console_run(const console_options *o);

#endif
