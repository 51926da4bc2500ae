/* backend_names.h: the names a backend answers to, one list for the command line (--backend),
 * cuda.use and every message that names the choices. "gpu" is another name for "cuda", so a
 * learner who types either gets the GPU, on the command line as at the prompt. */
#ifndef CUDALAB_BACKEND_NAMES_H
#define CUDALAB_BACKEND_NAMES_H

#include <stddef.h>
#include <string.h>

#define CL_BACKEND_CHOICES "cuda (or gpu), sim or none"

/* The backend's own name for a name it answers to ("gpu" -> "cuda"), or NULL for none. */
static inline const char *cl_backend_canonical(const char *name) {
  static const char *const names[][2] = {
      {"cuda", "cuda"}, {"gpu", "cuda"}, {"sim", "sim"}, {"none", "none"}};
  for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i][0]) == 0) return names[i][1];
  return NULL;
}

#endif
