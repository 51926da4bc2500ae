/* engine.h: the engine process: one Lua state and all CUDA work, serving requests from the
 * console over two pipes (proto.h). Started by console.c with fork() before the console touches
 * anything CUDA, and replaced when a sticky CUDA error poisons it or it dies. */
#ifndef CUDALAB_ENGINE_H
#define CUDALAB_ENGINE_H

typedef struct engine_config {
  const char *backend; /* forced backend name, or NULL to choose */
  int banner;          /* print the start-up banner (first engine of an interactive session) */
  int quiet_fallback;  /* don't announce the simulator when no GPU is found */
} engine_config;

/* Never returns: serves requests on req_fd, replies on rep_fd, then _exit()s. */
void engine_main(int req_fd, int rep_fd, const engine_config *cfg) __attribute__((noreturn));

/* One step of a run: a chunk (-e), or a script with its arguments (argv[0] the script). */
typedef struct engine_step {
  const char *chunk; /* the chunk, or NULL for a script */
  int argc;
  char **argv;
} engine_step;

/* Runs the steps in this process, with no console and no second process, as the console runs
 * them through an engine when no prompt follows: the global arg set first, each step's output
 * flushed before the next, the first step that fails ending the run with status 1, os.exit(n)
 * with n. Never returns. For a run with no REPL after its steps and no terminal on standard
 * input (console.c says why). */
void engine_run_alone(const engine_config *cfg, const engine_step *steps, int nsteps)
    __attribute__((noreturn));

#endif
