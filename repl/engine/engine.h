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

#endif
